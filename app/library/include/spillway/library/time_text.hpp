#pragma once
// Times as text for the library's messages and commands: one rendering (RFC 3339 UTC with
// milliseconds) and one parser (epoch ms, RFC 3339, or relative to a recording's end), so an
// error names a time the way the user typed one.
#include <optional>
#include <string>
#include <string_view>

#include "spillway/time.hpp"

namespace spillway::library {

// µs since the epoch as "2025-11-30T05:20:17.000Z".
std::string formatUtc(Micros t);

// "1764480000000" (epoch ms), "2025-11-30T05:20:17Z" (RFC 3339), and, when `end` is given,
// "end" (just past the newest record: end + 1 µs, so [x, end) holds it) and "-15m" / "-90s" /
// "-1.5h" (end minus a duration). Relative times count in data time, the recording's own
// clock, not the wall clock. nullopt on anything else.
std::optional<Micros> parseTimePoint(std::string_view text, std::optional<Micros> end = {});

}  // namespace spillway::library
