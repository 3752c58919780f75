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
#include "spillway/input_error.hpp"

namespace spillway::formats::detail {

// The effective mapping: defaults overridden by the user's.
FieldMap effectiveMap(Format f, const FieldMap& user);

std::unique_ptr<RecordSource> makeCsv(std::unique_ptr<LineReader> r, const ImportOptions& opt);
std::unique_ptr<RecordSource> makeNginx(std::unique_ptr<LineReader> r, const ImportOptions& opt);
std::unique_ptr<RecordSource> makeEnvoy(std::unique_ptr<LineReader> r, const ImportOptions& opt);
std::unique_ptr<RecordSource> makeHaproxy(std::unique_ptr<LineReader> r, const ImportOptions& opt);
std::unique_ptr<RecordSource> makeOtlp(std::string name, std::string text,
                                       const ImportOptions& opt);
std::unique_ptr<RecordSource> makePrometheus(std::string name, std::string text,
                                             const ImportOptions& opt);

// A JSON value as text: strings as they are, numbers in their shortest form, null → nullopt
// (Envoy's typed JSON writes null for a missing value). Other types → nullopt + `bad` = true.
std::optional<std::string_view> jsonText(simdjson::dom::element e, std::string& scratch, bool& bad);
// Parses a decimal number (optionally fractional, optionally signed) exactly as written.
std::optional<double> parseNumber(std::string_view s);
// An HTTP status, 0–999 (0: no answer); nullopt for anything else.
std::optional<int> parseHttpStatus(std::string_view s);
// "-" or empty: the log's way of saying "no value".
inline bool isDash(std::string_view s) {
  return s.empty() || s == "-";
}
// Seconds (fraction allowed) → µs, rounded; nullopt when not a finite non-negative number.
std::optional<Micros> secondsToMicros(std::string_view s);
// A timestamp: epoch seconds (`epochUnit` = 1e6) / milliseconds (1e3) as a number or numeric
// string, or an RFC 3339 string; nullopt outside plausibleInstant's range.
std::optional<Micros> parseTime(std::string_view s, double microsPerUnit);

// A JSON-per-line access log (nginx escape=json, Envoy's JSON format, HAProxy's log-format) read
// through the user's field map: the line reader, the map, a parser, and the accessors these formats
// need.
class JsonLogSource : public RecordSource {
 protected:
  JsonLogSource(std::unique_ptr<LineReader> r, Format f, const ImportOptions& opt)
      : RecordSource(r->name(), opt.skipBadLines),
        r_(std::move(r)),
        map_(effectiveMap(f, opt.map)) {}
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(source_, r_->lineNo(), field, what);
  }
  // The line as a JSON object, or an error naming the line.
  simdjson::dom::object object(std::string_view line) {
    simdjson::dom::element doc;
    if (auto e = parser_.parse(line.data(), line.size(), false).get(doc))
      fail("", std::string("invalid JSON: ") + simdjson::error_message(e));
    simdjson::dom::object o;
    if (doc.get_object().get(o)) fail("", "expected a JSON object per line");
    return o;
  }
  // The mapped key's value as text; nullopt when absent or null.
  std::optional<std::string_view> text(simdjson::dom::object o, const char* field,
                                       std::string& scratch) const {
    const std::string& key = map_.at(field);
    auto v = o.at_key(key);
    if (v.error()) return std::nullopt;
    bool bad = false;
    auto t = jsonText(v.value_unsafe(), scratch, bad);
    if (bad) fail(key, "expected a string or a number");
    return t;
  }
  // An optional string field: left as it is when absent, null or "-".
  void optString(simdjson::dom::object o, const char* field, std::string_view& out) const {
    const std::string& key = map_.at(field);
    auto v = o.at_key(key);
    if (v.error() || v.value_unsafe().is_null()) return;
    std::string_view sv;
    if (v.value_unsafe().get_string().get(sv)) fail(key, "expected a string");
    if (!isDash(sv)) out = sv;
  }
  // The optional model, tenant, route and session every access log may carry.
  void labels(simdjson::dom::object o, CallRecord& rec) const {
    optString(o, "model", rec.model);
    optString(o, "tenant", rec.tenant);
    optString(o, "route", rec.route);
    optString(o, "session", rec.session);
  }

  std::unique_ptr<LineReader> r_;
  FieldMap map_;
  simdjson::dom::parser parser_;
  std::string hostScratch_;  // outlives a record: its instance may point here
};

// A JSON log with one call per line (Envoy, HAProxy): `parse` reads a line into `rec`, or
// returns false for one that describes no instance call (counted in ignored_).
class PerLineJsonSource : public JsonLogSource {
 public:
  bool next(CallRecord& rec) final {
    std::string_view line;
    while (r_->next(line)) {
      if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
      try {
        if (parse(line, rec)) return true;
      } catch (const InputError& e) {
        reject(e);
      }
    }
    return false;
  }

 protected:
  using JsonLogSource::JsonLogSource;
  virtual bool parse(std::string_view line, CallRecord& rec) = 0;
};

}  // namespace spillway::formats::detail
