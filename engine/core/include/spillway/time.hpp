#pragma once
// Time is an input everywhere in the engine: integer microseconds since an arbitrary epoch
// (replay uses the Unix epoch). Nothing here reads a clock.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace spillway {

using Micros = std::int64_t;

inline constexpr Micros kMicrosPerMilli = 1000;
inline constexpr Micros kMicrosPerSecond = 1000 * kMicrosPerMilli;
inline constexpr Micros kNever = std::numeric_limits<Micros>::min();
inline constexpr Micros kForever = std::numeric_limits<Micros>::max();

constexpr Micros millis(std::int64_t ms) {
  return ms * kMicrosPerMilli;
}
constexpr Micros seconds(std::int64_t s) {
  return s * kMicrosPerSecond;
}

// Parses "10s", "800ms", "250us", "1.5s", "5m", "1h". A bare number is rejected: a policy
// must say its unit. Returns nullopt on anything else.
std::optional<Micros> parseDuration(std::string_view text);

// Shortest exact rendering: 10s, 800ms, 1.5s, 5m.
std::string formatDuration(Micros d);

}  // namespace spillway
