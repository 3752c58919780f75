// HAProxy JSON access log → one CallRecord per line that reached a server.
//
// Timing: the accept date (%Ts%ms) of a request on a kept-alive connection is when the previous
// one ended, and the wait for this one is its idle time (%Ti), after the handshake (%Th); the
// request itself starts at accept + Th + Ti and is active for %Ta (to the last byte of the
// answer); its answer's headers came TR + Tw + Tc + Tr after its start (the ttfb). Lines without a
// server (%s is <NOSRV>: a request HAProxy could not parse, a client that never sent one, no server
// up) describe no instance call and are ignored.
#include "spillway/formats/haproxy.hpp"

#include <cmath>
#include <optional>

#include "internal.hpp"

namespace spillway::formats {

Outcome haproxyOutcome(std::string_view termination, int status) {
  const char cause = termination.empty() ? '-' : termination[0];
  const char phase = termination.size() < 2 ? '-' : termination[1];
  if (cause == 's') return Outcome::Timeout;
  if (cause == 'S' && phase == 'C') return Outcome::Error;
  if (cause == 'S' && (phase == 'H' || phase == 'D' || phase == 'L')) return Outcome::Reset;
  return status == 0 ? Outcome::Error : Outcome::Ok;
}

namespace detail {
namespace {

class HaproxySource final : public PerLineJsonSource {
 public:
  HaproxySource(std::unique_ptr<LineReader> r, const ImportOptions& opt)
      : PerLineJsonSource(std::move(r), Format::Haproxy, opt) {}

 private:
  // A timer in ms, as µs; nullopt when absent or -1 (the phase never happened), which a
  // `required` one may not be.
  std::optional<Micros> timer(simdjson::dom::object o, const char* field, bool required = false) {
    std::string scratch;
    const auto t = text(o, field, scratch);
    if (!t) {
      if (required) fail(map_.at(field), "missing required field");
      return std::nullopt;
    }
    const auto ms = parseNumber(*t);
    if (!required && ms && *ms == -1) return std::nullopt;
    if (!ms || *ms < 0 || *ms >= 9.0e12 || std::floor(*ms) != *ms)
      fail(map_.at(field), "expected milliseconds, got '" + std::string(*t) + "'");
    return static_cast<Micros>(*ms) * 1000;
  }
  // The answer's headers reached HAProxy TR + Tw + Tc + Tr after the request's start; nullopt
  // when they never did (Tr is -1).
  std::optional<Micros> ttfb(simdjson::dom::object o) {
    const auto response = timer(o, "response");
    if (!response) return std::nullopt;
    return timer(o, "request").value_or(0) + timer(o, "queue").value_or(0) +
           timer(o, "connect").value_or(0) + *response;
  }

  bool parse(std::string_view line, CallRecord& rec) override {
    const simdjson::dom::object o = object(line);
    rec = CallRecord{};
    std::string s1, s2, s3;
    const auto server = text(o, "server", hostScratch_);
    if (!server || isDash(*server) || *server == "<NOSRV>") {
      ++ignored_;
      return false;
    }
    rec.instance = *server;
    const auto accept = text(o, "accept", s1);
    if (!accept) fail(map_.at("accept"), "missing required field");
    const auto acceptUs = parseTime(*accept, 1e3);  // %Ts%ms: epoch milliseconds
    if (!acceptUs)
      fail(map_.at("accept"), "expected epoch milliseconds " + std::string(kInstantRange) +
                                  ", got '" + std::string(*accept) + "'");
    rec.ts = *acceptUs + timer(o, "handshake").value_or(0) + timer(o, "idle").value_or(0);
    rec.latency = *timer(o, "active", true);
    rec.ttfb = ttfb(o).value_or(-1);
    const auto code = text(o, "status", s2);
    if (!code) fail(map_.at("status"), "missing required field");
    const auto st = *code == "-1" ? std::optional(0) : parseHttpStatus(*code);  // -1: no answer
    if (!st) fail(map_.at("status"), "expected an HTTP status, got '" + std::string(*code) + "'");
    rec.status = *st;
    const auto term = text(o, "termination", s3);
    rec.outcome = haproxyOutcome(term ? *term : std::string_view("--"), rec.status);
    rec.hasOutcome = term && !isDash(*term) && *term != "--";
    labels(o, rec);
    rec.line = r_->lineNo();
    return true;
  }
};

}  // namespace

std::unique_ptr<RecordSource> makeHaproxy(std::unique_ptr<LineReader> r, const ImportOptions& opt) {
  return std::make_unique<HaproxySource>(std::move(r), opt);
}

}  // namespace detail
}  // namespace spillway::formats
