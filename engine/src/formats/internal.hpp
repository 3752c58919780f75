#pragma once
// Private to the importers: the per-format factories behind openSource and small helpers for
// reading loosely typed JSON log values (nginx and Envoy write numbers as strings or numbers,
// depending on the user's log format).
#include <simdjson.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "line_reader.hpp"
#include "spillway/formats/source.hpp"

namespace spillway::formats::detail {

// The effective mapping: defaults overridden by the user's.
FieldMap effectiveMap(Format f, const FieldMap& user);

std::unique_ptr<RecordSource> makeJsonl(std::unique_ptr<JsonlReader> r);
std::unique_ptr<RecordSource> makeCsv(std::unique_ptr<LineReader> r, const ImportOptions& opt);
std::unique_ptr<RecordSource> makeNginx(std::unique_ptr<LineReader> r, const ImportOptions& opt);
std::unique_ptr<RecordSource> makeEnvoy(std::unique_ptr<LineReader> r, const ImportOptions& opt);
std::unique_ptr<RecordSource> makeOtlp(std::string name, std::string text,
                                       const ImportOptions& opt);
std::unique_ptr<RecordSource> makePrometheus(std::string name, std::string text,
                                             const ImportOptions& opt);

// A JSON value as text: strings as they are, numbers in their shortest form, null → nullopt
// (Envoy's typed JSON writes null for a missing value). Other types → nullopt + `bad` = true.
std::optional<std::string_view> jsonText(simdjson::dom::element e, std::string& scratch, bool& bad);
// Parses a decimal number (optionally fractional, optionally signed) exactly as written.
std::optional<double> parseNumber(std::string_view s);
// "-" or empty: the log's way of saying "no value".
inline bool isDash(std::string_view s) {
  return s.empty() || s == "-";
}
// Seconds (fraction allowed) → µs, rounded; nullopt when not a finite non-negative number.
std::optional<Micros> secondsToMicros(std::string_view s);
// A timestamp: epoch seconds (`epochUnit` = 1e6) / milliseconds (1e3) as a number or numeric
// string, or an RFC 3339 string.
std::optional<Micros> parseTime(std::string_view s, double microsPerUnit);

}  // namespace spillway::formats::detail
