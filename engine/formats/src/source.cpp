// Format names, field maps, the skip-or-throw rule and the factory shared by every importer.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "internal.hpp"

namespace spillway::formats {

std::string_view formatName(Format f) {
  switch (f) {
    case Format::Jsonl:
      return "jsonl";
    case Format::Csv:
      return "csv";
    case Format::Nginx:
      return "nginx";
    case Format::Envoy:
      return "envoy";
    case Format::Otlp:
      return "otlp";
    case Format::Prometheus:
      return "prometheus";
    case Format::Haproxy:
      return "haproxy";
  }
  return "?";
}

bool parseFormat(std::string_view s, Format& out) {
  for (Format f : kFormats) {
    if (formatName(f) == s) {
      out = f;
      return true;
    }
  }
  return false;
}

bool isTailFormat(Format f) {
  return std::find(std::begin(kTailFormats), std::end(kTailFormats), f) != std::end(kTailFormats);
}

std::string formatChoices(std::span<const Format> formats) {
  std::string out;
  for (std::size_t i = 0; i < formats.size(); ++i) {
    if (i > 0) out += i + 1 == formats.size() ? " or " : ", ";
    out += formatName(formats[i]);
  }
  return out;
}

const FieldMap& defaultFieldMap(Format f) {
  // Canonical JSONL and OTLP have fixed names (the spec's); the others are user-configured logs.
  static const FieldMap none;
  static const FieldMap csv = {{"ts", "ts"},
                               {"instance", "instance"},
                               {"latency_ms", "latency_ms"},
                               {"status", "status"},
                               {"outcome", "outcome"},
                               {"model", "model"},
                               {"tenant", "tenant"},
                               {"route", "route"},
                               {"session", "session"},
                               {"critical", "critical"},
                               {"tokens_in", "tokens_in"},
                               {"tokens_out", "tokens_out"},
                               {"ttfb_ms", "ttfb_ms"}};
  static const FieldMap nginx = {{"time", "msec"},
                                 {"request_time", "request_time"},
                                 {"status", "status"},
                                 {"upstream_addr", "upstream_addr"},
                                 {"upstream_status", "upstream_status"},
                                 {"upstream_response_time", "upstream_response_time"},
                                 {"model", "model"},
                                 {"tenant", "tenant"},
                                 {"route", "route"},
                                 {"session", "session"}};
  static const FieldMap envoy = {{"start_time", "start_time"},
                                 {"upstream_host", "upstream_host"},
                                 {"response_code", "response_code"},
                                 {"duration", "duration"},
                                 {"response_flags", "response_flags"},
                                 {"model", "model"},
                                 {"tenant", "tenant"},
                                 {"route", "route"},
                                 {"session", "session"}};
  // The keys of the export's log-format (exporter::haproxyLogFormat).
  static const FieldMap haproxy = {{"request", "TR"},
                                   {"queue", "Tw"},
                                   {"connect", "Tc"},
                                   {"response", "Tr"},
                                   {"accept", "accept_ms"},
                                   {"handshake", "Th"},
                                   {"idle", "Ti"},
                                   {"active", "Ta"},
                                   {"server", "server"},
                                   {"status", "status"},
                                   {"termination", "termination"},
                                   {"model", "backend"},
                                   {"tenant", "tenant"},
                                   {"route", "route"},
                                   {"session", "session"}};
  static const FieldMap prom = {{"series", "__name__"},   {"instance", "instance"},
                                {"model", "model"},       {"calls", "calls"},
                                {"failures", "failures"}, {"slow", "slow"}};
  switch (f) {
    case Format::Csv:
      return csv;
    case Format::Nginx:
      return nginx;
    case Format::Envoy:
      return envoy;
    case Format::Haproxy:
      return haproxy;
    case Format::Prometheus:
      return prom;
    case Format::Jsonl:
    case Format::Otlp:
      return none;
  }
  return none;
}

FieldMap parseFieldMap(std::string_view text, Format f, const std::string& origin) {
  FieldMap out;
  const FieldMap& known = defaultFieldMap(f);
  std::size_t pos = 0;
  while (pos <= text.size() && !text.empty()) {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = text.substr(pos, comma - pos);
    pos = comma + 1;
    if (item.empty()) {
      if (comma == text.size()) break;
      continue;
    }
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
      throw InputError(origin, 0, std::string(item), "expected field=name");
    const std::string field(item.substr(0, eq));
    if (!known.count(field)) {
      std::string list;
      for (const auto& [k, v] : known) list.append(list.empty() ? "" : ", ").append(k);
      throw InputError(origin, 0, field,
                       std::string("not a field of the ") + std::string(formatName(f)) + " format" +
                           (list.empty() ? " (it takes no mapping)" : " (" + list + ")"));
    }
    out[field] = std::string(item.substr(eq + 1));
    if (comma == text.size()) break;
  }
  return out;
}

void RecordSource::reject(const InputError& e) {
  if (!skipBad_) throw e;
  ++skipped_;
  if (skippedMessages_.size() < 20) skippedMessages_.emplace_back(e.what());
}

namespace {
// Canonical JSONL: the existing reader, behind the common interface.
class JsonlSource final : public RecordSource {
 public:
  explicit JsonlSource(std::unique_ptr<JsonlReader> r)
      : RecordSource(r->source(), false), r_(std::move(r)) {}
  bool next(CallRecord& rec) override { return r_->next(rec); }
  std::uint64_t skipped() const override { return r_->skipped(); }
  const std::vector<std::string>& skippedMessages() const override { return r_->skippedMessages(); }

 private:
  std::unique_ptr<JsonlReader> r_;
};
}  // namespace

std::unique_ptr<RecordSource> sourceFromJsonl(std::unique_ptr<JsonlReader> r) {
  return std::make_unique<JsonlSource>(std::move(r));
}

namespace detail {

FieldMap effectiveMap(Format f, const FieldMap& user) {
  FieldMap m = defaultFieldMap(f);
  for (const auto& [k, v] : user) m[k] = v;
  return m;
}

std::optional<std::string_view> jsonText(simdjson::dom::element e, std::string& scratch,
                                         bool& bad) {
  using simdjson::dom::element_type;
  bad = false;
  switch (e.type()) {
    case element_type::STRING:
      return std::string_view(e.get_string().value_unsafe());
    case element_type::INT64:
      scratch = std::to_string(e.get_int64().value_unsafe());
      return std::string_view(scratch);
    case element_type::UINT64:
      scratch = std::to_string(e.get_uint64().value_unsafe());
      return std::string_view(scratch);
    case element_type::DOUBLE: {
      char buf[64];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, e.get_double().value_unsafe());
      if (ec != std::errc()) {
        bad = true;
        return std::nullopt;
      }
      scratch.assign(buf, end);
      return std::string_view(scratch);
    }
    case element_type::NULL_VALUE:
      return std::nullopt;
    default:
      bad = true;
      return std::nullopt;
  }
}

std::optional<double> parseNumber(std::string_view s) {
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int> parseHttpStatus(std::string_view s) {
  const auto v = parseNumber(s);
  if (!v || *v < 0 || *v > 999 || std::floor(*v) != *v) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<Micros> secondsToMicros(std::string_view s) {
  auto v = parseNumber(s);
  if (!v || *v < 0 || *v >= 9.0e12) return std::nullopt;
  return static_cast<Micros>(std::llround(*v * 1e6));
}

std::optional<Micros> parseTime(std::string_view s, double microsPerUnit) {
  if (auto v = parseNumber(s)) return instantFromNumber(*v, microsPerUnit);
  return parseInstant(s);
}

}  // namespace detail

std::unique_ptr<RecordSource> openSource(Format f, const std::string& path,
                                         const ImportOptions& opt) {
  switch (f) {
    case Format::Jsonl:
      return sourceFromJsonl(JsonlReader::openFile(path, opt.skipBadLines));
    case Format::Csv:
      return detail::makeCsv(LineReader::openFile(path), opt);
    case Format::Nginx:
      return detail::makeNginx(LineReader::openFile(path), opt);
    case Format::Envoy:
      return detail::makeEnvoy(LineReader::openFile(path), opt);
    case Format::Haproxy:
      return detail::makeHaproxy(LineReader::openFile(path), opt);
    case Format::Otlp:
      return detail::makeOtlp(path, readWholeFile(path), opt);
    case Format::Prometheus:
      return detail::makePrometheus(path, readWholeFile(path), opt);
  }
  throw InputError(path, 0, "", "unknown format");
}

std::unique_ptr<RecordSource> sourceFromMemory(Format f, std::string name, std::string_view data,
                                               const ImportOptions& opt) {
  switch (f) {
    case Format::Jsonl:
      return sourceFromJsonl(JsonlReader::fromMemory(name, data, opt.skipBadLines));
    case Format::Csv:
      return detail::makeCsv(LineReader::fromMemory(name, data), opt);
    case Format::Nginx:
      return detail::makeNginx(LineReader::fromMemory(name, data), opt);
    case Format::Envoy:
      return detail::makeEnvoy(LineReader::fromMemory(name, data), opt);
    case Format::Haproxy:
      return detail::makeHaproxy(LineReader::fromMemory(name, data), opt);
    case Format::Otlp:
      return detail::makeOtlp(std::move(name), std::string(data), opt);
    case Format::Prometheus:
      return detail::makePrometheus(std::move(name), std::string(data), opt);
  }
  throw InputError(name, 0, "", "unknown format");
}

}  // namespace spillway::formats
