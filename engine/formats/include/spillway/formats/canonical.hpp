#pragma once
// The canonical JSONL writer (docs/telemetry.md): what `library export` writes and what every
// importer's records mean. One fixed field order, times in epoch milliseconds with up to three
// decimals (exact µs), absent optional fields left out, `outcome` always written:
//   {"ts":…,"instance":…,"model":…,"latency_ms":…,"status":…,"outcome":…,"tenant":…,
//    "route":…,"session":…,"critical":…,"tokens_in":…,"tokens_out":…,"ttfb_ms":…}
// Reading a canonical line with JsonlReader and writing it again gives the same bytes.
#include <string>

#include "spillway/formats/source.hpp"
#include "spillway/telemetry.hpp"

namespace spillway::formats {

// Appends one line (with its '\n').
void appendCallJson(std::string& out, const CallRecord& r);
// {"end":…,"step_ms":…,"instance":…,"model":…,"calls":…,"failures":…,"slow":…}
void appendSampleJson(std::string& out, const AggregateSample& s);
// µs as milliseconds: "1764480000153.807", "50", "-0.5".
void appendMillis(std::string& out, Micros us);
// A JSON string literal with its quotes.
void appendJsonString(std::string& out, std::string_view s);

}  // namespace spillway::formats
