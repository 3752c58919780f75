#include "spillway/replay.hpp"

#include <algorithm>

namespace spillway {

Replayer::Replayer(Policy policy, ReplayOptions options, EventSink* sink)
    : tee_(events_, sink),
      engine_(std::move(policy), options.seed, &tee_),
      options_(options),
      truth_(options.truth),
      buffer_(options.reorderWindow) {}

void Replayer::feed(const CallRecord& rec) {
  const InstanceId id = engine_.addInstance(rec.instance, rec.model);
  if (id >= stats_.size()) stats_.resize(id + 1);
  ++fed_;
  if (first_ == kNever || rec.ts < first_) first_ = rec.ts;
  // A late call (beyond the reorder window) is applied at "now".
  late_ += buffer_.push(
      {rec.ts, rec.latency, 0, id, rec.status, rec.outcome, options_.truth.sloFor(rec.tenant)});
  drainUntil(buffer_.watermark());
}

void Replayer::feedAggregate(std::string_view instance, std::string_view model, Micros end,
                             std::uint32_t calls, std::uint32_t failures, std::int64_t slow) {
  const InstanceId id = engine_.addInstance(instance, model);
  if (id >= stats_.size()) stats_.resize(id + 1);
  fed_ += calls;
  if (first_ == kNever || end < first_) first_ = end;
  drainUntil(end);
  buffer_.completeUntil(end, [this](const Completion& c) { complete(c); });
  ReplayInstanceStats& st = stats_[id];
  st.records += calls;
  const std::uint64_t bad = std::min<std::uint64_t>(
      calls, std::uint64_t{failures} + static_cast<std::uint64_t>(std::max<std::int64_t>(slow, 0)));
  st.recordedSucceeded += calls - bad;
  engine_.recordAggregate(id, end, calls, failures, slow);
  buffer_.noteAdmitted(end);
  last_ = std::max(last_, end);
}

void Replayer::complete(const Completion& c) {
  engine_.breaker(c.id).record(c.end, c.latency, c.status, c.outcome, c.probe);
  last_ = std::max(last_, c.end);
}

void Replayer::admit(const PendingCall& p) {
  Breaker& b = engine_.breaker(p.id);
  ReplayInstanceStats& st = stats_[p.id];
  ++st.records;
  const bool succeeded = truth_.wouldSucceed(p.status, p.outcome, p.latency, p.slo);
  truth_.onCall(p.id, p.ts, succeeded);
  st.recordedSucceeded += succeeded;
  const Decision d = b.admit(p.ts);
  if (d.admitted) {
    buffer_.schedule(
        Completion{p.ts + p.latency, p.seq, p.id, p.latency, p.status, p.outcome, d.probe});
  } else {
    b.noteBlocked(succeeded);
    truth_.onBlock(p.id, p.ts, succeeded);
  }
  if (observer_) observer_->onDecided(p, d.admitted, succeeded);
  last_ = std::max(last_, p.ts);
}

void Replayer::drainUntil(Micros upTo) {
  buffer_.drain(
      upTo, [this](const PendingCall& p) { admit(p); },
      [this](const Completion& c) { complete(c); });
}

void Replayer::finish() {
  drainUntil(kForever);
  buffer_.completeUntil(kForever, [this](const Completion& c) { complete(c); });
  if (last_ != kNever) engine_.advanceAll(last_);
}

}  // namespace spillway
