#pragma once
// One interface over every telemetry importer (docs/formats.md): a pull stream of CallRecords
// (per-call formats) or of AggregateSamples (per-interval counts, e.g. Prometheus). The library
// stores either kind and replays it through the same Replayer, so every format reaches the
// engine the same way.
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/input_error.hpp"
#include "spillway/telemetry.hpp"
#include "spillway/time.hpp"

namespace spillway::formats {

// Calls, failures and slow calls of one instance over (end - step, end]: what a metrics system
// knows when it does not have the calls themselves. Fed to Engine::recordAggregate.
struct AggregateSample {
  Micros end = 0;
  Micros step = 0;
  std::string_view instance;  // views are valid until the next read
  std::string_view model;
  std::uint32_t calls = 0;
  std::uint32_t failures = 0;
  std::int64_t slow = -1;  // -1: not known
  long line = 0;
};

// Haproxy last: the console keeps a format in its settings by number.
enum class Format { Jsonl, Csv, Nginx, Envoy, Otlp, Prometheus, Haproxy };

// "jsonl", "csv", "nginx", "envoy", "otlp", "prometheus", "haproxy".
std::string_view formatName(Format f);
bool parseFormat(std::string_view s, Format& out);
// Every format, in the order help texts and errors list them.
inline constexpr Format kFormats[] = {Format::Jsonl,     Format::Csv,     Format::Nginx,
                                      Format::Envoy,     Format::Haproxy, Format::Otlp,
                                      Format::Prometheus};
// The access logs a live tail follows line by line (listen, the console's Live mode).
inline constexpr Format kTailFormats[] = {Format::Nginx, Format::Envoy, Format::Haproxy,
                                          Format::Jsonl};
bool isTailFormat(Format f);
// "nginx, envoy, haproxy or jsonl": the names for a help text or an error.
std::string formatChoices(std::span<const Format> formats);

// Canonical field → key (JSON formats), column (CSV) or label (Prometheus) in the input.
using FieldMap = std::map<std::string, std::string, std::less<>>;

// Parses "field=key,field=key". Keys may not contain ','. Fields are checked against the
// format's known fields (fieldsOf). Throws InputError(origin, 0, field, ...).
FieldMap parseFieldMap(std::string_view text, Format f, const std::string& origin = "--map");
// The canonical fields a format's mapping accepts, with their default keys.
const FieldMap& defaultFieldMap(Format f);

struct ImportOptions {
  bool skipBadLines = false;
  FieldMap map;  // overrides of defaultFieldMap(format)
};

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // True when this source yields AggregateSamples (nextAggregate) instead of calls (next).
  virtual bool aggregates() const { return false; }
  // Next call; false at the end. Throws InputError on a bad record unless skipping.
  virtual bool next(CallRecord& rec) = 0;
  virtual bool nextAggregate(AggregateSample&) { return false; }

  virtual const std::string& source() const { return source_; }
  virtual std::uint64_t skipped() const { return skipped_; }
  virtual const std::vector<std::string>& skippedMessages() const { return skippedMessages_; }
  // Well-formed records that describe no upstream call (nginx/Envoy/HAProxy without one, spans
  // that are not GenAI calls): not errors, not imported.
  std::uint64_t ignored() const { return ignored_; }

 protected:
  RecordSource(std::string source, bool skipBad) : source_(std::move(source)), skipBad_(skipBad) {}
  // Throws `e` unless skipping bad lines; then counts it and keeps the first 20 messages.
  void reject(const InputError& e);

  std::string source_;
  bool skipBad_;
  std::uint64_t skipped_ = 0;
  std::uint64_t ignored_ = 0;
  std::vector<std::string> skippedMessages_;
};

// Opens `path` ('-' = stdin where the format streams) in format `f`. Throws InputError.
std::unique_ptr<RecordSource> openSource(Format f, const std::string& path,
                                         const ImportOptions& opt);
// The same over text in memory (tests, the live receiver); `name` appears in errors.
std::unique_ptr<RecordSource> sourceFromMemory(Format f, std::string name, std::string_view data,
                                               const ImportOptions& opt);
// Canonical JSONL from a reader already made (any ReadFn), behind the common interface.
std::unique_ptr<RecordSource> sourceFromJsonl(std::unique_ptr<JsonlReader> r);

}  // namespace spillway::formats
