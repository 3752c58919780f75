#include "spillway/replay.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

namespace spillway {

Replayer::Replayer(Policy policy, ReplayOptions options, EventSink* sink)
    : tee_(events_, sink, &eventSteps_, &step_),
      engine_(std::move(policy), options.seed, &tee_),
      options_(options),
      truth_(options.truth),
      buffer_(options.reorderWindow) {}

Replayer::Replayer(const Replayer& from, Policy policy)
    : events_(from.events_),
      eventSteps_(from.eventSteps_),
      tee_(events_, nullptr, &eventSteps_, &step_),
      engine_(from.engine_, std::move(policy), &tee_),
      options_(from.options_),
      truth_(from.truth_),
      buffer_(from.buffer_),
      stats_(from.stats_),
      late_(from.late_),
      fed_(from.fed_),
      first_(from.first_),
      last_(from.last_),
      started_(from.started_),
      step_(from.step_),
      sent_(from.sent_) {}

InstanceId Replayer::instanceOf(const CallRecord& rec) {
  const auto at = reinterpret_cast<std::uintptr_t>(rec.instance.data());
  NameSlot& slot = names_[(at * 0x9E3779B97F4A7C15ull) >> 54];
  if (slot.data == rec.instance.data() && slot.size == rec.instance.size() &&
      engine_.name(slot.id) == rec.instance)
    return slot.id;
  const InstanceId id = engine_.addInstance(rec.instance, rec.model);
  slot = {rec.instance.data(), static_cast<std::uint32_t>(rec.instance.size()), id};
  return id;
}

void Replayer::feed(const CallRecord& rec) {
  const InstanceId id = instanceOf(rec);
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
  const bool succeeded = truth_.wouldSucceed(p.status, p.outcome, p.latency, p.slo);
  const Decision d = decide(p.id, p.ts, succeeded);
  if (d.admitted)
    buffer_.schedule(
        Completion{p.ts + p.latency, p.seq, p.id, p.latency, p.status, p.outcome, d.probe});
  if (observer_) observer_->onDecided(p, d.admitted, succeeded);
}

Decision Replayer::decide(InstanceId id, Micros ts, bool succeeded) {
  Breaker& b = engine_.breaker(id);
  ReplayInstanceStats& st = stats_[id];
  ++st.records;
  truth_.onCall(id, ts, succeeded);
  st.recordedSucceeded += succeeded;
  const Decision d = b.admit(ts);
  if (!d.admitted) {
    b.noteBlocked(succeeded);
    truth_.onBlock(id, ts, succeeded, static_cast<std::uint32_t>(step_));
  }
  last_ = std::max(last_, ts);
  return d;
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

namespace {

// What the schedule needs of a completion: when, and which call.
struct Due {
  Micros end;
  std::uint64_t seq;
};

}  // namespace

ReplaySchedule ReplaySchedule::build(const std::vector<CallRecord>& calls,
                                     const ReplayOptions& options) {
  // Steps hold seq << 1 in 32 bits.
  if (calls.size() >= (std::size_t{1} << 31))
    throw std::length_error("replay schedule: more than 2^31 calls");
  ReplaySchedule s;
  s.calls.reserve(calls.size());
  s.steps.reserve(2 * calls.size());
  std::unordered_map<std::string_view, InstanceId> ids;
  ReorderBuffer<Due> buffer(options.reorderWindow);
  const ReplayGroundTruth truth(options.truth);
  // Every call scheduled as if admitted: the order Replayer::feed and finish would take.
  auto admit = [&](const PendingCall& p) {
    s.steps.push_back(static_cast<std::uint32_t>(p.seq << 1));
    buffer.schedule(Due{p.ts + p.latency, p.seq});
  };
  auto complete = [&](const Due& d) {
    s.steps.push_back(static_cast<std::uint32_t>(d.seq << 1 | 1));
  };
  for (const CallRecord& rec : calls) {
    const auto [it, added] = ids.try_emplace(rec.instance, static_cast<InstanceId>(ids.size()));
    if (added) s.instances.push_back({std::string(rec.instance), std::string(rec.model)});
    if (s.first == kNever || rec.ts < s.first) s.first = rec.ts;
    const PendingCall p{rec.ts,
                        rec.latency,
                        s.calls.size(),
                        it->second,
                        rec.status,
                        rec.outcome,
                        options.truth.sloFor(rec.tenant)};
    s.calls.push_back({p.ts, p.latency, p.id, p.status, p.outcome,
                       truth.wouldSucceed(p.status, p.outcome, p.latency, p.slo)});
    s.late += buffer.push(p);
    buffer.drain(buffer.watermark(), admit, complete);
  }
  buffer.drain(kForever, admit, complete);
  buffer.completeUntil(kForever, complete);
  return s;
}

void Replayer::start(const ReplaySchedule& s) {
  for (const ReplaySchedule::Instance& i : s.instances) engine_.addInstance(i.name, i.model);
  stats_.resize(engine_.size());
  late_ += s.late;
  first_ = s.first;
  sent_.assign(s.calls.size(), 0);
  if (tripLog_) engine_.setTripLog(tripLog_);
  started_ = true;
}

void Replayer::setTripLog(TripLog* log) {
  tripLog_ = log;
  engine_.setTripLog(log);
}

void Replayer::replay(const ReplaySchedule& s, const std::atomic<bool>* cancel) {
  if (replaySteps(s, s.steps.size(), cancel)) finishSchedule();
}

bool Replayer::replaySteps(const ReplaySchedule& s, std::size_t until,
                           const std::atomic<bool>* cancel, const std::vector<std::uint8_t>* only) {
  if (!started_) start(s);
  std::size_t n = 0;
  for (; step_ < until; ++step_) {
    const std::uint32_t seq = s.steps[step_] >> 1;
    const ReplaySchedule::Call& c = s.calls[seq];
    if (only && !(*only)[c.id]) continue;
    if (tripLog_) tripLog_->step = static_cast<std::uint32_t>(step_);
    if (s.steps[step_] & 1) {
      if (sent_[seq])
        complete({c.ts + c.latency, seq, c.id, c.latency, c.status, c.outcome, sent_[seq] == 3});
      continue;
    }
    if (cancel && ++n % 4096 == 0 && cancel->load(std::memory_order_relaxed)) return false;
    ++fed_;
    const Decision d = decide(c.id, c.ts, c.succeeded);
    sent_[seq] = d.admitted ? (d.probe ? 3 : 1) : 0;
  }
  return true;
}

void Replayer::adoptOthers(const Replayer& reference, const std::vector<std::uint8_t>& only,
                           Micros lastOfOthers) {
  for (InstanceId id = 0; id < engine_.size(); ++id)
    if (!only[id]) engine_.adoptBreaker(id, reference.engine_.breaker(id));
  stats_ = reference.stats_;
  fed_ = reference.fed_;
  truth_.adoptOthers(reference.truth_, only);
  last_ = std::max(last_, lastOfOthers);
  // Events: this replay's on its instances, the reference's on the others, by step (one step
  // is one call, so no step holds events of both).
  std::vector<Event> events;
  std::vector<std::uint32_t> steps;
  std::size_t a = 0, b = 0;
  const std::vector<Event>& theirs = reference.events_;
  auto skip = [&] {
    while (a < events_.size() && !only[events_[a].instance]) ++a;
    while (b < theirs.size() && only[theirs[b].instance]) ++b;
  };
  for (skip(); a < events_.size() || b < theirs.size(); skip()) {
    const bool mine =
        b == theirs.size() || (a < events_.size() && eventSteps_[a] < reference.eventSteps_[b]);
    events.push_back(mine ? events_[a] : theirs[b]);
    steps.push_back(mine ? eventSteps_[a++] : reference.eventSteps_[b++]);
  }
  events_ = std::move(events);
  eventSteps_ = std::move(steps);
}

void Replayer::finishSchedule() {
  if (last_ != kNever) engine_.advanceAll(last_);
}

}  // namespace spillway
