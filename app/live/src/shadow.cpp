#include "spillway/live/shadow.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>

#include "spillway/input_error.hpp"
#include "spillway/outcome.hpp"

namespace spillway::live {
namespace {

constexpr std::size_t kMaxErrors = 20;

Policy metricsOnly(Policy p) {
  p.breaker.mode = BreakerMode::MetricsOnly;
  return p;
}

std::string rateText(const char* what, double rate, double threshold) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s %.2f > %.2f", what, rate, threshold);
  return buf;
}

}  // namespace

std::string clockTime(Micros t) {
  const std::time_t s = static_cast<std::time_t>(t / kMicrosPerSecond);
  std::tm tm{};
  localtime_r(&s, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

ShadowMonitor::ShadowMonitor(Policy policy, ShadowOptions opt)
    : opt_(std::move(opt)), engine_(metricsOnly(std::move(policy)), opt_.seed, this) {}

ShadowMonitor::~ShadowMonitor() = default;

void ShadowMonitor::addLine(std::string_view line) {
  ++lines_;
  pending_.emplace_back(line);
  if (pending_.size() >= 4096) flush();  // bounded memory whatever the caller does
}

void ShadowMonitor::flush() {
  // One importer source per batch. A bad line throws out of the source: it is reported with
  // its line number in the whole stream, and parsing resumes after it.
  std::size_t from = 0;
  formats::ImportOptions io;
  io.map = opt_.map;
  while (from < pending_.size()) {
    std::string text;
    for (std::size_t i = from; i < pending_.size(); ++i) text.append(pending_[i]).append("\n");
    std::unique_ptr<formats::RecordSource> src;
    try {
      src = formats::sourceFromMemory(opt_.format, opt_.sourceName, text, io);
      CallRecord rec;
      while (src->next(rec)) process(rec);
      ignored_ += src->ignored();
      break;
    } catch (const InputError& e) {
      if (src) ignored_ += src->ignored();
      ++badLines_;
      const long rel = e.line() > 0 ? e.line() : 1;  // 1-based in this batch
      if (errors_.size() < kMaxErrors)
        errors_.push_back(InputError(opt_.sourceName, static_cast<long>(lineBase_ + from) + rel,
                                     e.field(), e.detail())
                              .what());
      from += static_cast<std::size_t>(rel);
    }
  }
  lineBase_ += pending_.size();
  pending_.clear();
}

void ShadowMonitor::process(const CallRecord& rec) {
  ++records_;
  std::string_view name = rec.instance;
  if (auto it = opt_.aliases.find(name); it != opt_.aliases.end()) name = it->second;
  const bool known = engine_.find(name).has_value();
  const InstanceId id = engine_.addInstance(name, rec.model);
  const Micros end = rec.end();
  // A per-instance override may set another mode: shadow mode never blocks, whatever it says.
  if (!known && engine_.breaker(id).state() != BreakerState::MetricsOnly)
    engine_.breaker(id).force(BreakerState::MetricsOnly, end);
  // The outcome is what the log knows, at the call's end; there is nothing to admit.
  const Decision d = engine_.admit(id, end);
  const Breaker& b = engine_.breaker(id);
  const bool slow = rec.latency > b.slowThreshold();  // the threshold record() applies
  engine_.record(id, d, end, rec.latency, rec.status, rec.outcome);
  if (end > last_) last_ = end;
  if (onRecorded)
    onRecorded(RecordedCall{
        id, &rec, engine_.name(id),
        classify(b.config().classify, rec.status, rec.outcome) == Verdict::Failure, slow});
}

void ShadowMonitor::addAggregate(const formats::AggregateSample& s, double p99Ms) {
  ++aggregates_;
  records_ += s.calls;
  std::string_view name = s.instance;
  if (auto it = opt_.aliases.find(name); it != opt_.aliases.end()) name = it->second;
  const bool known = engine_.find(name).has_value();
  const InstanceId id = engine_.addInstance(name, s.model);
  if (!known && engine_.breaker(id).state() != BreakerState::MetricsOnly)
    engine_.breaker(id).force(BreakerState::MetricsOnly, s.end);
  engine_.recordAggregate(id, s.end, s.calls, s.failures, s.slow);
  if (p99Ms >= 0) reportedP99_[id] = p99Ms;
  if (s.end > last_) last_ = s.end;
  if (onAggregated) onAggregated(id, s);
}

void ShadowMonitor::onEvent(const Event& e) {
  if (onEngineEvent) onEngineEvent(e);
  if (e.kind != EventKind::WouldOpen) return;
  const TripConfig& trip = engine_.breaker(e.instance).config().trip;
  WouldOpenVerdict v;
  v.event = e;
  v.instance = engine_.name(e.instance);
  v.errorThreshold = trip.errorRate;
  v.slowThreshold = trip.slowRate;
  std::string why;
  if (e.reason == Reason::ErrorRate || e.reason == Reason::ErrorAndSlow)
    why = rateText("error rate", e.errorRate, trip.errorRate);
  if (e.reason == Reason::SlowRate || e.reason == Reason::ErrorAndSlow) {
    if (!why.empty()) why += " and ";
    why += rateText("slow rate", e.slowRate, trip.slowRate);
  }
  char held[32];
  std::snprintf(held, sizeof held, " for %.3g s", static_cast<double>(e.sustained) / 1e6);
  v.text = clockTime(e.ts) + " " + v.instance + " would open (" + why + held + ")";
  firstWouldOpen_.try_emplace(e.instance, e.ts);
  verdicts_.push_back(v);
  if (onWouldOpen) onWouldOpen(v);
}

std::vector<InstanceSummary> ShadowMonitor::summary() const {
  std::vector<InstanceSummary> out;
  for (InstanceId id = 0; id < engine_.size(); ++id) {
    const Breaker& b = engine_.breaker(id);
    const BreakerSnapshot s = b.snapshot(last_ == kNever ? 0 : last_);
    InstanceSummary r;
    r.instance = engine_.name(id);
    r.calls = s.counters.recorded;
    r.failures = s.counters.failures;
    r.slow = s.counters.slow;
    r.wouldOpens = s.counters.wouldOpens;
    r.errorRate = s.errorRate;
    r.slowRate = s.slowRate;
    r.p99Ms = s.p99 / 1e3;
    r.slowThresholdUs = s.slowThreshold;
    if (auto it = firstWouldOpen_.find(id); it != firstWouldOpen_.end())
      r.firstWouldOpen = it->second;
    if (auto it = reportedP99_.find(id); it != reportedP99_.end()) r.reportedP99Ms = it->second;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace spillway::live
