// nginx JSON access log → one CallRecord per upstream attempt.
//
// Timing: $msec is when the log line was written (the request's end) and $request_time the
// whole request's duration, so the request began at msec - request_time. nginx tries upstreams
// one after another, so attempt i starts when attempt i-1 ended: start + Σ earlier
// $upstream_response_time. A line without an upstream ($upstream_addr empty or "-": served
// from cache, a return, a 4xx before proxying) describes no instance call and is ignored.
#include "spillway/formats/nginx.hpp"

#include <cmath>

#include "internal.hpp"

namespace spillway::formats {

std::vector<std::string_view> splitUpstreamList(std::string_view v) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  // The next separator of each kind: ", " (next attempt) or " : " (internal redirect). Each is
  // looked for again only once passed: a kind that no longer occurs is not searched for on
  // every item (a line of 40,000 attempts and no redirect took 12 s that way).
  std::size_t comma = v.find(", "), colon = v.find(" : ");
  for (;;) {
    if (comma < pos) comma = v.find(", ", pos);
    if (colon < pos) colon = v.find(" : ", pos);
    const std::size_t at = std::min(comma, colon);
    std::string_view item = v.substr(pos, at == std::string_view::npos ? v.npos : at - pos);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    out.push_back(item);
    if (at == std::string_view::npos) break;
    pos = at + (at == comma ? 2 : 3);
  }
  return out;
}

namespace detail {
namespace {

class NginxSource final : public JsonLogSource {
 public:
  NginxSource(std::unique_ptr<LineReader> r, const ImportOptions& opt)
      : JsonLogSource(std::move(r), Format::Nginx, opt) {}

  bool next(CallRecord& rec) override {
    for (;;) {
      if (cur_ < attempts_.size()) {
        rec = attempts_[cur_++];
        return true;
      }
      std::string_view line;
      if (!r_->next(line)) return false;
      if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
      attempts_.clear();
      cur_ = 0;
      try {
        parse(line);
      } catch (const InputError& e) {
        attempts_.clear();
        reject(e);
      }
    }
  }

 private:
  void parse(std::string_view line) {
    const simdjson::dom::object o = object(line);

    std::string s2, s3, s4, s5;
    const auto addr = text(o, "upstream_addr", hostScratch_);
    if (!addr || isDash(*addr)) {
      ++ignored_;
      return;
    }
    const auto time = text(o, "time", s2);
    if (!time) fail(map_.at("time"), "missing required field");
    const auto end = parseTime(*time, 1e6);  // $msec: epoch seconds with milliseconds
    if (!end)
      fail(map_.at("time"),
           std::string("expected epoch seconds ($msec) or an RFC 3339 time, ") + kInstantRange);

    const auto addrs = splitUpstreamList(*addr);
    const auto statusText = text(o, "upstream_status", s3);
    const auto timeText = text(o, "upstream_response_time", s4);
    std::vector<std::string_view> statuses, times;
    if (statusText && !statusText->empty()) statuses = splitUpstreamList(*statusText);
    if (timeText && !timeText->empty()) times = splitUpstreamList(*timeText);
    if (statuses.empty()) {
      // Without $upstream_status only a single attempt can take the request's $status.
      const auto st = text(o, "status", s5);
      if (!st || addrs.size() != 1) fail(map_.at("upstream_status"), "missing required field");
      statuses.push_back(*st);
    }
    if (statuses.size() != addrs.size())
      fail(map_.at("upstream_status"), std::to_string(statuses.size()) + " entries for " +
                                           std::to_string(addrs.size()) + " upstream addresses");
    if (!times.empty() && times.size() != addrs.size())
      fail(map_.at("upstream_response_time"), std::to_string(times.size()) + " entries for " +
                                                  std::to_string(addrs.size()) +
                                                  " upstream addresses");

    std::vector<Micros> lat(addrs.size(), 0);
    Micros sum = 0;
    for (std::size_t i = 0; i < times.size(); ++i) {
      if (isDash(times[i])) continue;  // no response time recorded for this attempt
      auto us = secondsToMicros(times[i]);
      if (!us)
        fail(map_.at("upstream_response_time"),
             "expected seconds, got '" + std::string(times[i]) + "'");
      lat[i] = *us;
      sum += *us;
    }
    Micros start = *end - sum;
    if (auto rt = text(o, "request_time", s5); rt && !isDash(*rt)) {
      auto us = secondsToMicros(*rt);
      if (!us) fail(map_.at("request_time"), "expected seconds, got '" + std::string(*rt) + "'");
      start = *end - std::max(*us, sum);
    }

    if (!plausibleInstant(start))
      fail(map_.at("request_time"), "longer than the time since 1970 ($msec minus it)");
    CallRecord base;
    labels(o, base);

    Micros t = start;
    for (std::size_t i = 0; i < addrs.size(); ++i) {
      CallRecord rec = base;
      if (addrs[i].empty() || addrs[i] == "-")
        fail(map_.at("upstream_addr"), "empty upstream entry " + std::to_string(i + 1));
      rec.instance = addrs[i];
      if (isDash(statuses[i])) {
        rec.status = 0;  // no answer from this upstream
      } else {
        const auto st = parseHttpStatus(statuses[i]);
        if (!st)
          fail(map_.at("upstream_status"),
               "expected an HTTP status, got '" + std::string(statuses[i]) + "'");
        rec.status = *st;
      }
      rec.outcome = rec.status == 0 ? Outcome::Error : Outcome::Ok;
      rec.ts = t;
      rec.latency = lat[i];
      rec.line = r_->lineNo();
      t += lat[i];
      attempts_.push_back(rec);
    }
  }

  std::vector<CallRecord> attempts_;
  std::size_t cur_ = 0;
};

}  // namespace

std::unique_ptr<RecordSource> makeNginx(std::unique_ptr<LineReader> r, const ImportOptions& opt) {
  return std::make_unique<NginxSource>(std::move(r), opt);
}

}  // namespace detail
}  // namespace spillway::formats
