#include "spillway/library/time_text.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "spillway/telemetry.hpp"

namespace spillway::library {

std::string formatUtc(Micros t) {
  const std::int64_t secs =
      t >= 0 ? t / kMicrosPerSecond : -((-t + kMicrosPerSecond - 1) / kMicrosPerSecond);
  const auto ms = static_cast<int>((t - secs * kMicrosPerSecond) / 1000);
  std::int64_t z = (secs >= 0 ? secs : secs - 86399) / 86400;
  const auto sod = static_cast<int>(secs - z * 86400);
  z += 719468;  // civil_from_days (Howard Hinnant)
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  char buf[96];  // sized for any int64 year: GCC checks the worst case
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<long long>(y),
                m, d, sod / 3600, sod / 60 % 60, sod % 60, ms);
  return buf;
}

std::optional<Micros> parseTimePoint(std::string_view s, std::optional<Micros> end) {
  if (s.empty()) return std::nullopt;
  if (end && s == "end") return *end + 1;
  if (end && s.size() > 1 && s[0] == '-' && !std::isdigit(static_cast<unsigned char>(s.back()))) {
    const auto d = parseDuration(s.substr(1));  // "-15m": a unit is required, "-15" is epoch ms
    if (!d || *d < 0) return std::nullopt;
    return *end - *d;
  }
  double ms = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), ms);
  if (ec == std::errc() && ptr == s.data() + s.size()) return instantFromMillis(ms);
  return parseInstant(s);
}

}  // namespace spillway::library
