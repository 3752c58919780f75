#include "spillway/time.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

namespace spillway {

std::optional<Micros> parseDuration(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == 0 || i == text.size()) return std::nullopt;  // no number, or no unit
  double value = 0;
  const auto num = text.substr(0, i);
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), value);
  if (ec != std::errc{} || p != num.data() + num.size()) return std::nullopt;
  const auto unit = text.substr(i);
  double scale;
  if (unit == "us")
    scale = 1;
  else if (unit == "ms")
    scale = 1e3;
  else if (unit == "s")
    scale = 1e6;
  else if (unit == "m" || unit == "min")
    scale = 60e6;
  else if (unit == "h")
    scale = 3600e6;
  else
    return std::nullopt;
  const double us = value * scale;
  if (!std::isfinite(us) || us > 9.0e18) return std::nullopt;
  return static_cast<Micros>(std::llround(us));
}

std::string formatDuration(Micros d) {
  if (d == kForever) return "inf";
  const bool neg = d < 0;
  const Micros a = neg ? -d : d;
  std::string s;
  auto fmt = [](Micros v, Micros unit, const char* name) {
    const Micros whole = v / unit;
    Micros frac = v % unit;
    std::string out = std::to_string(whole);
    if (frac) {
      std::string f = std::to_string(frac);
      const int width = unit == 1000 ? 3 : unit == 1000000 ? 6 : 8;
      while (static_cast<int>(f.size()) < width) f.insert(f.begin(), '0');
      while (!f.empty() && f.back() == '0') f.pop_back();
      out += "." + f;
    }
    return out + name;
  };
  if (a == 0)
    s = "0s";
  else if (a % (3600 * kMicrosPerSecond) == 0)
    s = std::to_string(a / (3600 * kMicrosPerSecond)) + "h";
  else if (a % (60 * kMicrosPerSecond) == 0)
    s = std::to_string(a / (60 * kMicrosPerSecond)) + "m";
  else if (a >= kMicrosPerSecond)
    s = fmt(a, kMicrosPerSecond, "s");
  else if (a >= kMicrosPerMilli)
    s = fmt(a, kMicrosPerMilli, "ms");
  else
    s = std::to_string(a) + "us";
  return neg ? "-" + s : s;
}

}  // namespace spillway
