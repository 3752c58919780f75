#pragma once
// Telling a telemetry file's format from its first line, for `import` without --format
// (docs/formats.md, "Which format"). Only what the formats' default keys make certain is
// guessed; anything else is "unknown" with the reason, so the caller can name --format.
#include <optional>
#include <string>
#include <string_view>

#include "spillway/formats/source.hpp"

namespace spillway::formats {

struct Sniffed {
  std::optional<Format> format;  // nullopt: cannot tell
  long line = 0;                 // the line looked at (1-based), 0 when none
  std::string why;               // "keys msec, upstream_addr" / "no line to look at"
};

// Looks at the first non-empty line of `head` (the first bytes of a file):
// - a JSON object with `resourceSpans` → otlp; with `resultType` or `status` + `data` →
//   prometheus; with nginx's keys (msec, request_time, upstream_addr, upstream_status,
//   upstream_response_time) → nginx; with Envoy's (start_time, upstream_host, response_code,
//   response_flags) → envoy; with HAProxy's `Ta` (and Ti, Th or accept_ms, as the export's
//   log-format writes) → haproxy; with `instance` and `latency_ms` → jsonl (canonical);
// - a JSON document spread over lines → otlp or prometheus by the same keys in `head`;
// - a line with commas naming a canonical column (instance, status, latency_ms) → csv.
// Keys of two formats at once, or of none, → unknown.
Sniffed sniffFormat(std::string_view head);

// Reads up to 64 KiB of `path` and sniffs them. Not for "-" or anything but a regular file
// (a pipe could not be read twice): unknown, with the reason.
Sniffed sniffFile(const std::string& path);
// The format `path`'s first line tells when it is not canonical JSONL (an access log, CSV,
// OTLP …): commands that read a trace open those with their importer, and anything else as
// canonical JSONL, whose reader names what is wrong.
std::optional<Format> nonCanonicalFormat(const std::string& path);

}  // namespace spillway::formats
