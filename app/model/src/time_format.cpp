#include "spillway/view/time_format.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace spillway::view {

std::string durationText(Micros d) {
  if (d < 0) return "-" + durationText(-d);
  char buf[48];
  const double s = static_cast<double>(d) / 1e6;
  if (d < kMicrosPerSecond) {
    std::snprintf(buf, sizeof buf, "%.0f ms", static_cast<double>(d) / 1e3);
  } else if (s < 9.95) {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  } else if (s < 59.5) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else {
    const auto whole = static_cast<long long>(std::llround(s));
    if (whole < 3600)
      std::snprintf(buf, sizeof buf, "%lldm %02llds", whole / 60, whole % 60);
    else
      std::snprintf(buf, sizeof buf, "%lldh %02lldm", (whole + 30) / 3600, (whole + 30) / 60 % 60);
  }
  return buf;
}

std::string formatOffset(Micros t) {
  const bool before = t < 0;
  const long long s = (before ? -t + kMicrosPerSecond - 1 : t) / kMicrosPerSecond;
  char buf[48];
  std::snprintf(buf, sizeof buf, "T%c%02lld:%02lld:%02lld", before ? '-' : '+', s / 3600,
                s / 60 % 60, s % 60);
  return buf;
}

std::string formatClock(Micros epochMicros, bool utc) {
  const auto secs = static_cast<std::time_t>(
      epochMicros >= 0 ? epochMicros / kMicrosPerSecond
                       : -((-epochMicros + kMicrosPerSecond - 1) / kMicrosPerSecond));
  std::tm tm{};
  if (utc)
    gmtime_r(&secs, &tm);
  else
    localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

}  // namespace spillway::view
