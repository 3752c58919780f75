#include "spillway/dialect_replay.hpp"

#include <algorithm>

namespace spillway {

DialectReplayer::DialectReplayer(DialectCluster& dialect, DialectReplayOptions options)
    : d_(dialect),
      options_(options),
      previousSink_(dialect.sink()),
      tee_(events_, previousSink_),
      buffer_(options.reorderWindow),
      truth_(options.truth) {
  d_.setSink(&tee_);
}

DialectReplayer::~DialectReplayer() {
  d_.setSink(previousSink_);
}

void DialectReplayer::feed(const CallRecord& rec) {
  const InstanceId id = d_.addInstance(rec.instance, rec.model);
  if (id >= stats_.size()) {
    stats_.resize(id + 1);
    waiting_.resize(id + 1);
  }
  ++fed_;
  if (first_ == kNever || rec.ts < first_) first_ = rec.ts;
  // A late call (beyond the reorder window) is applied at "now" (the dialect clamps).
  late_ += buffer_.push(
      {{rec.ts, rec.latency, 0, id, rec.status, rec.outcome, options_.truth.sloFor(rec.tenant)},
       rec.ttfb});
  drainUntil(buffer_.watermark());
}

void DialectReplayer::complete(const Completion& c) {
  d_.record(c.id, c.decision, c.end, c.latency, c.status, c.outcome);
  last_ = std::max(last_, c.end);
  releaseWaiters(c.id, c.end);
}

// cockatiel's waiting callers retry once the half-open trial has decided.
void DialectReplayer::releaseWaiters(InstanceId id, Micros at) {
  if (waiting_[id].empty() || d_.state(id) == BreakerState::HalfOpen) return;
  std::vector<Call> w;
  w.swap(waiting_[id]);
  for (const Call& p : w) admit(p, at, true);  // a waiter asking again: counted once
}

void DialectReplayer::admit(const Call& p, Micros at, bool retry) {
  ReplayInstanceStats& st = stats_[p.id];
  const bool would = truth_.wouldSucceed(p.status, p.outcome, p.latency, p.slo);
  if (!retry) {
    ++st.records;
    st.recordedSucceeded += would;
    truth_.onCall(p.id, p.ts, would);
    d_.observe(p.id, p.ts, d_.succeeded(p.status, p.outcome, p.latency));
  }
  const DialectDecision dec = d_.admit(p.id, at);
  switch (dec.kind) {
    case Admission::Admit:
    case Admission::Probe: {
      // The target's own timeout cuts a call short, as a failure — also one that would end just
      // as it expires: the timer armed before the call runs fires first (opossum).
      const Micros cut = d_.callTimeout();
      const bool timedOut = p.latency >= cut;
      const Micros lat = timedOut ? cut : p.latency;
      // A gateway counts the answer when its headers arrive: two answers 1 ms apart can reach
      // it in the other order than they end (a ttfb past the end is rounding: the end).
      const Micros judged =
          !timedOut && p.ttfb >= 0 && d_.judgesAtHeaders() ? std::min(p.ttfb, lat) : lat;
      buffer_.schedule(Completion{at + judged, p.seq, p.id, lat, p.status,
                                  timedOut ? Outcome::Timeout : p.outcome, dec});
      break;
    }
    case Admission::Reject:
      d_.noteBlocked(p.id, would);
      truth_.onBlock(p.id, at, would);
      break;
    case Admission::Wait:
      waiting_[p.id].push_back(p);
      break;
  }
  last_ = std::max(last_, at);
}

void DialectReplayer::drainUntil(Micros upTo) {
  buffer_.drain(
      upTo, [this](const Call& p) { admit(p, p.ts, false); },
      [this](const Completion& c) { complete(c); });
}

void DialectReplayer::finish() {
  drainUntil(kForever);
  buffer_.completeUntil(kForever, [this](const Completion& c) { complete(c); });
  // Callers still waiting when the trace ends never ran: count them as blocked.
  for (InstanceId id = 0; id < waiting_.size(); ++id) {
    for (const Call& p : waiting_[id]) {
      const bool would = truth_.wouldSucceed(p.status, p.outcome, p.latency, p.slo);
      d_.noteBlocked(id, would);
      truth_.onBlock(id, p.ts, would);
    }
    waiting_[id].clear();
  }
  if (last_ != kNever) d_.finish(last_);
}

namespace {

using FindInstance = std::function<std::optional<InstanceId>(const std::string&)>;

// Real faults that overlap on one instance clear together: each is restored only after the
// last of them ends.
void scoreAll(std::vector<FaultKpis>& out, const std::vector<FaultInterval>& intervals,
              const std::vector<std::size_t>& at, const std::vector<Event>& events) {
  const std::vector<Micros> clear = clearTimes(intervals);
  for (std::size_t k = 0; k < intervals.size(); ++k)
    out[at[k]].score = scoreFault(intervals[k], events, clear[k]);
}

void scoreFaults(ReplayKpis& k, const std::vector<NamedFault>& faults,
                 const std::vector<Event>& events, const FindInstance& find) {
  std::vector<FaultInterval> intervals;
  std::vector<std::size_t> at;
  for (const NamedFault& f : faults) {
    if (f.benign) continue;  // not a real fault: nothing to detect
    FaultKpis fk;
    fk.fault = f;
    if (const auto id = find(f.instance)) {
      fk.found = true;
      intervals.push_back({*id, f.start, f.end, f.kind});
      at.push_back(k.faults.size());
    }
    k.faults.push_back(fk);
  }
  scoreAll(k.faults, intervals, at, events);
}

// Block classes against the annotated faults, or without annotations the recording's own.
void judgeBlocks(ReplayKpis& k, const ReplayGroundTruth& truth,
                 const std::vector<NamedFault>& faults, const std::vector<Event>& events,
                 const FindInstance& find) {
  k.faultsFromRecording = faults.empty();
  if (k.faultsFromRecording) {
    // Scored like annotations, so TTD and the recalibration guard see what was judged real.
    k.realFaults = truth.recordedFaults();
    std::vector<FaultInterval> intervals;
    std::vector<std::size_t> at;
    for (const TruthFault& f : k.realFaults) {
      FaultKpis fk;
      fk.fault = {k.instances[f.instance].name, f.start, f.end, "from the recording", false};
      fk.found = true;
      intervals.push_back({f.instance, f.start, f.end, fk.fault.kind});
      at.push_back(k.faults.size());
      k.faults.push_back(std::move(fk));
    }
    scoreAll(k.faults, intervals, at, events);
  } else {
    for (const NamedFault& f : faults)
      if (!f.benign)
        if (const auto id = find(f.instance)) k.realFaults.push_back({*id, f.start, f.end});
  }
  const BlockClassifier c = truth.classify(k.realFaults, events);
  k.blocks = c.tally();
  for (InstanceId id = 0; id < k.instances.size(); ++id) k.instances[id].blocks = c.tallyOf(id);
}

void collectOuts(ReplayKpis& k, const std::vector<Event>& events) {
  for (const Event& e : events) {
    if (e.kind != EventKind::Transition || e.instance >= k.instances.size()) continue;
    std::vector<OutPeriod>& outs = k.instances[e.instance].outs;
    const bool out = !outs.empty() && outs.back().up == kNever;
    if (e.to == BreakerState::Open && !out)
      outs.push_back({e.ts, kNever, 0});
    else if (e.to == BreakerState::Open && e.from == BreakerState::HalfOpen)
      ++outs.back().failedTrials;
    else if (e.to == BreakerState::Closed && out)
      outs.back().up = e.ts;
  }
}

void total(ReplayKpis& k) {
  for (const InstanceKpis& i : k.instances) {
    k.rejected += i.counters.rejected;
    k.blockedWouldSucceed += i.counters.blockedWouldSucceed;
    k.opens += i.counters.opens;
  }
}

}  // namespace

ReplayKpis DialectReplayer::kpis(const std::vector<NamedFault>& faults) const {
  ReplayKpis k;
  k.engine = std::string(dialectName(d_.kind()));
  k.records = fed_;
  k.late = late_;
  k.first = first_;
  k.last = last_;
  for (InstanceId id = 0; id < d_.size(); ++id) {
    InstanceKpis i;
    i.name = d_.name(id);
    i.group = d_.group(id);
    if (id < stats_.size()) i.stats = stats_[id];
    i.counters = d_.counters(id);
    i.finalState = d_.state(id);
    k.instances.push_back(std::move(i));
  }
  total(k);
  collectOuts(k, events_);
  const FindInstance find = [&](const std::string& n) { return d_.find(n); };
  scoreFaults(k, faults, events_, find);
  judgeBlocks(k, truth_, faults, events_, find);
  return k;
}

ReplayKpis replayUnderDialect(DialectKind kind, std::string_view configText,
                              const std::string& configSource, JsonlReader& records,
                              const std::vector<NamedFault>& faults, std::uint64_t seed,
                              DialectReplayOptions options, std::string_view select) {
  auto d = makeDialect(kind, configText, configSource, seed, nullptr, select);
  DialectReplayer r(*d, options);
  CallRecord rec;
  while (records.next(rec)) r.feed(rec);
  r.finish();
  return r.kpis(faults);
}

ReplayKpis nativeReplayKpis(const Replayer& replayer, const std::vector<NamedFault>& faults) {
  const Engine& eng = replayer.engine();
  ReplayKpis k;
  k.engine = "native";
  k.records = replayer.fed();
  k.late = replayer.late();
  k.first = replayer.firstTime();
  k.last = replayer.lastTime();
  for (InstanceId id = 0; id < eng.size(); ++id) {
    InstanceKpis i;
    i.name = eng.name(id);
    i.group = eng.model(id);
    i.stats = replayer.instanceStats(id);
    const BreakerSnapshot s = eng.breaker(id).snapshot(replayer.lastTime());
    i.counters = s.counters;
    i.finalState = s.state;
    k.instances.push_back(std::move(i));
  }
  total(k);
  collectOuts(k, replayer.events());
  const FindInstance find = [&](const std::string& n) { return eng.find(n); };
  scoreFaults(k, faults, replayer.events(), find);
  judgeBlocks(k, replayer.truth(), faults, replayer.events(), find);
  return k;
}

}  // namespace spillway
