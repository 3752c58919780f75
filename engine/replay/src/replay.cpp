#include "spillway/replay.hpp"

#include <algorithm>

namespace spillway {

Replayer::Replayer(Policy policy, ReplayOptions options, EventSink* sink)
    : tee_(events_, sink),
      engine_(std::move(policy), options.seed, &tee_),
      options_(options),
      truth_(options.truth) {}

void Replayer::feed(const CallRecord& rec) {
  const InstanceId id = engine_.addInstance(rec.instance, rec.model);
  if (id >= stats_.size()) stats_.resize(id + 1);
  ++fed_;
  if (first_ == kNever || rec.ts < first_) first_ = rec.ts;
  Pending p{
      rec.ts, rec.latency, seq_++, id, rec.status, rec.outcome, options_.truth.sloFor(rec.tenant)};
  if (rec.ts < lastAdmit_) ++late_;  // beyond the reorder window: applied at "now"
  if (pending_.empty() || pending_.back().ts <= rec.ts) {
    pending_.push_back(p);
  } else {
    auto at = std::upper_bound(pending_.begin(), pending_.end(), p,
                               [](const Pending& a, const Pending& b) { return a.ts < b.ts; });
    pending_.insert(at, p);
  }
  if (rec.ts > maxTs_) maxTs_ = rec.ts;
  drainUntil(maxTs_ - options_.reorderWindow);
}

void Replayer::feedAggregate(std::string_view instance, std::string_view model, Micros end,
                             std::uint32_t calls, std::uint32_t failures, std::int64_t slow) {
  const InstanceId id = engine_.addInstance(instance, model);
  if (id >= stats_.size()) stats_.resize(id + 1);
  fed_ += calls;
  if (first_ == kNever || end < first_) first_ = end;
  drainUntil(end);
  completeUntil(end);
  ReplayInstanceStats& st = stats_[id];
  st.records += calls;
  const std::uint64_t bad = std::min<std::uint64_t>(
      calls, std::uint64_t{failures} + static_cast<std::uint64_t>(std::max<std::int64_t>(slow, 0)));
  st.recordedSucceeded += calls - bad;
  engine_.recordAggregate(id, end, calls, failures, slow);
  lastAdmit_ = std::max(lastAdmit_, end);
  last_ = std::max(last_, end);
}

void Replayer::completeUntil(Micros t) {
  while (!inflight_.empty() && inflight_.top().end <= t) {
    const Completion c = inflight_.top();
    inflight_.pop();
    engine_.breaker(c.id).record(c.end, c.latency, c.status, c.outcome, c.probe);
    last_ = std::max(last_, c.end);
  }
}

void Replayer::admit(const Pending& p) {
  completeUntil(p.ts);  // outcomes known by now come first
  lastAdmit_ = std::max(lastAdmit_, p.ts);
  Breaker& b = engine_.breaker(p.id);
  ReplayInstanceStats& st = stats_[p.id];
  ++st.records;
  const bool succeeded = truth_.wouldSucceed(p.status, p.outcome, p.latency, p.slo);
  truth_.onCall(p.id, p.ts, succeeded);
  st.recordedSucceeded += succeeded;
  const Decision d = b.admit(p.ts);
  if (d.admitted) {
    inflight_.push(
        Completion{p.ts + p.latency, p.seq, p.id, p.latency, p.status, p.outcome, d.probe});
  } else {
    b.noteBlocked(succeeded);
    truth_.onBlock(p.id, p.ts, succeeded);
  }
  last_ = std::max(last_, p.ts);
}

void Replayer::drainUntil(Micros watermark) {
  while (!pending_.empty() && pending_.front().ts <= watermark) {
    const Pending p = pending_.front();
    pending_.pop_front();
    admit(p);
  }
}

void Replayer::finish() {
  drainUntil(kForever);
  completeUntil(kForever);
  if (last_ != kNever) engine_.advanceAll(last_);
}

}  // namespace spillway
