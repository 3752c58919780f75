// Envoy JSON access log → one CallRecord per line that reached an upstream host. Envoy logs the
// downstream request, so a retried request appears once, with the last upstream host; lines
// without a host (no healthy upstream, local rate limit, no route) are ignored.
#include "spillway/formats/envoy.hpp"

#include <cmath>

#include "internal.hpp"

namespace spillway::formats {

Outcome envoyOutcome(std::string_view flags, int status) {
  auto has = [&](std::string_view f) {
    std::size_t pos = 0;
    while (pos <= flags.size()) {
      std::size_t comma = flags.find(',', pos);
      if (comma == std::string_view::npos) comma = flags.size();
      if (flags.substr(pos, comma - pos) == f) return true;
      pos = comma + 1;
    }
    return false;
  };
  if (has("UT")) return Outcome::Timeout;
  if (has("UR") || has("UC") || has("DC")) return Outcome::Reset;
  if (has("UF") || has("UH") || has("UO") || has("URX") || has("LH")) return Outcome::Error;
  return status == 0 ? Outcome::Error : Outcome::Ok;
}

namespace detail {
namespace {

class EnvoySource final : public PerLineJsonSource {
 public:
  EnvoySource(std::unique_ptr<LineReader> r, const ImportOptions& opt)
      : PerLineJsonSource(std::move(r), Format::Envoy, opt) {}

 private:
  bool parse(std::string_view line, CallRecord& rec) override {
    const simdjson::dom::object o = object(line);
    rec = CallRecord{};
    std::string s1, s2, s3, s4, s5;
    const auto host = text(o, "upstream_host", hostScratch_);
    if (!host || isDash(*host)) {
      ++ignored_;
      return false;
    }
    rec.instance = *host;
    const auto start = text(o, "start_time", s2);
    if (!start) fail(map_.at("start_time"), "missing required field");
    // %START_TIME% is RFC 3339 by default; a number is epoch seconds (%START_TIME(%s)%) when
    // below 1e11, else epoch milliseconds.
    std::optional<Micros> ts;
    if (auto n = parseNumber(*start))
      ts = parseTime(*start, *n < 1e11 ? 1e6 : 1e3);
    else
      ts = parseInstant(*start);
    if (!ts)
      fail(map_.at("start_time"),
           std::string("expected an RFC 3339 time or epoch seconds/ms, ") + kInstantRange);
    rec.ts = *ts;
    const auto code = text(o, "response_code", s3);
    if (!code) fail(map_.at("response_code"), "missing required field");
    const auto st = parseHttpStatus(*code);
    if (!st)
      fail(map_.at("response_code"), "expected an HTTP status, got '" + std::string(*code) + "'");
    rec.status = *st;
    const auto dur = text(o, "duration", s4);
    if (!dur) fail(map_.at("duration"), "missing required field");
    auto ms = parseNumber(*dur);
    if (!ms || *ms < 0 || *ms >= 9.0e12)
      fail(map_.at("duration"), "expected milliseconds, got '" + std::string(*dur) + "'");
    rec.latency = static_cast<Micros>(std::llround(*ms * 1000.0));
    const auto flags = text(o, "response_flags", s5);
    rec.outcome = envoyOutcome(flags ? *flags : std::string_view("-"), rec.status);
    rec.hasOutcome = flags && !isDash(*flags);
    labels(o, rec);
    rec.line = r_->lineNo();
    return true;
  }
};

}  // namespace

std::unique_ptr<RecordSource> makeEnvoy(std::unique_ptr<LineReader> r, const ImportOptions& opt) {
  return std::make_unique<EnvoySource>(std::move(r), opt);
}

}  // namespace detail
}  // namespace spillway::formats
