#include "spillway/view/replay_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kpi_table.hpp"
#include "per_second.hpp"
#include "spillway/outcome.hpp"
#include "spillway/sweep.hpp"

namespace spillway::view {
namespace {

using detail::floorSecond;
using detail::kSecond;
using detail::p99;

template <class T>
void grow(std::vector<T>& v, std::size_t n) {
  if (v.size() < n) v.resize(n);
}

// Each fault's start and end, its detection and restore, on its instance's timeline (t = 0 at
// the origin), every instance's markers then in time order.
void addFaultMarkers(std::vector<InstanceTimeline>& out, const std::vector<FaultKpis>& faults,
                     const Engine& eng, Micros origin) {
  for (const FaultKpis& f : faults) {
    const auto id = eng.find(f.fault.instance);
    if (!id) continue;
    const std::string kind = f.fault.kind.empty() ? std::string("fault") : f.fault.kind;
    auto& m = out[*id].markers;
    const Micros start = f.fault.start - origin;
    m.push_back({start, Marker::Kind::FaultStart, kind + " starts"});
    m.push_back({f.fault.end - origin, Marker::Kind::FaultEnd, kind + " ends"});
    if (f.score.detected)
      m.push_back({start + f.score.ttd, Marker::Kind::Detected, "detected", start});
    if (f.score.restored)
      m.push_back({start + f.score.mttr, Marker::Kind::Restored, "full traffic back", start});
  }
  for (InstanceTimeline& it : out)
    std::stable_sort(it.markers.begin(), it.markers.end(),
                     [](const Marker& a, const Marker& b) { return a.at < b.at; });
}

}  // namespace

ReplayTimelineBuilder::ReplayTimelineBuilder(Policy policy, std::vector<NamedFault> faults,
                                             ReplayOptions options, Micros origin)
    : policy_(policy),
      faults_(std::move(faults)),
      options_(options),
      replayer_(std::move(policy), options),
      origin_(origin == kNever ? kNever : floorSecond(origin)) {
  replayer_.setObserver(this);
  if (origin_ != kNever) nextSample_ = origin_ + kSecond;
}

std::size_t ReplayTimelineBuilder::bucket(Micros ts) const {
  return ts <= origin_ ? 0 : static_cast<std::size_t>((ts - origin_) / kSecond);
}

ReplayTimelineBuilder::Acc& ReplayTimelineBuilder::acc(InstanceId id) {
  if (acc_.size() <= id) acc_.resize(id + 1);
  return acc_[id];
}

void ReplayTimelineBuilder::feed(const CallRecord& rec) {
  const std::uint64_t decided = decided_;
  replayer_.feed(rec);                          // onDecided() counts the calls it admits or blocks
  acc(*replayer_.engine().find(rec.instance));  // registered by feed()
  if (decided_ != decided) sampleUntil(replayer_.watermark());
}

void ReplayTimelineBuilder::feedAggregate(const formats::AggregateSample& s) {
  if (origin_ == kNever) {
    origin_ = floorSecond(s.end - s.step);
    nextSample_ = origin_ + kSecond;
  }
  replayer_.feedAggregate(s.instance, s.model, s.end, s.calls, s.failures, s.slow);
  Acc& a = acc(*replayer_.engine().find(s.instance));
  // Counts over (end - step, end], spread evenly over its seconds.
  const Micros from = std::max(origin_, s.end - std::max<Micros>(s.step, kSecond));
  const std::size_t k0 = bucket(from), k1 = std::max(k0 + 1, bucket(s.end - 1) + 1);
  const double share = 1.0 / static_cast<double>(k1 - k0);
  for (auto* v : {&a.calls, &a.failures, &a.slow, &a.blocked, &a.fp}) grow(*v, k1);
  grow(a.latencyMs, k1);
  for (std::size_t k = k0; k < k1; ++k) {
    a.calls[k] += s.calls * share;
    a.failures[k] += s.failures * share;
    a.slow[k] += static_cast<double>(std::max<std::int64_t>(0, s.slow)) * share;
  }
  sampleUntil(s.end);
}

// One recorded call as its breaker decided it: its second's calls, failures and slow calls (by
// the breaker's own classification and current slow threshold), its latency, and whether it
// was blocked and, blocked, answered within the client's SLO in the recording (a false
// positive).
void ReplayTimelineBuilder::onDecided(const PendingCall& call, bool admitted, bool wouldSucceed) {
  // Without a given origin, t = 0 is the first call *decided*, not the first fed: the Replayer
  // decides in start order, so a log whose first line is not its earliest call still starts
  // at its earliest call's second.
  if (origin_ == kNever) {
    origin_ = floorSecond(call.ts);
    nextSample_ = origin_ + kSecond;
  }
  ++decided_;
  Acc& a = acc(call.id);
  const std::size_t k = bucket(call.ts);
  for (auto* v : {&a.calls, &a.failures, &a.slow, &a.blocked, &a.fp}) grow(*v, k + 1);
  grow(a.latencyMs, k + 1);
  const Breaker& b = replayer_.engine().breaker(call.id);
  a.calls[k] += 1;
  a.failures[k] += classify(b.config().classify, call.status, call.outcome) == Verdict::Failure;
  a.slow[k] += call.latency > b.slowThreshold();
  a.latencyMs[k].push_back(static_cast<float>(static_cast<double>(call.latency) / 1e3));
  a.blocked[k] += !admitted;
  a.fp[k] += !admitted && wouldSucceed;
}

// The decision window and the learned baseline at each whole second the replay has reached.
void ReplayTimelineBuilder::sampleUntil(Micros watermark) {
  if (origin_ == kNever) return;
  const Engine& eng = replayer_.engine();
  for (; nextSample_ <= watermark; nextSample_ += kSecond) {
    const std::size_t k = bucket(nextSample_ - 1);
    for (InstanceId id = 0; id < eng.size(); ++id) {
      const BreakerSnapshot s = eng.breaker(id).snapshot(nextSample_);
      Acc& a = acc(id);
      for (auto* v : {&a.errorRate, &a.slowRate, &a.baselineMs}) grow(*v, k + 1);
      a.errorRate[k] = s.errorRate;
      a.slowRate[k] = s.slowRate;
      a.baselineMs[k] = s.baselineLearned ? s.baselineP99 / 1e3 : 0;
    }
  }
}

void ReplayTimelineBuilder::fillInstance(InstanceTimeline& it, InstanceId id, std::size_t n,
                                         Micros end, const std::vector<Event>& shifted,
                                         BreakerState initial) {
  const Engine& eng = replayer_.engine();
  Acc& a = acc(id);
  it.name = eng.name(id);
  it.model = eng.model(id);
  for (auto* s : {&a.calls, &a.failures, &a.slow, &a.blocked, &a.fp, &a.errorRate, &a.slowRate,
                  &a.baselineMs})
    grow(*s, n);
  grow(a.latencyMs, n);
  it.t.resize(n);
  it.p99Ms.resize(n);
  it.throughput.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    it.t[k] = static_cast<double>(k + 1);
    it.p99Ms[k] = p99(a.latencyMs[k]);
    it.throughput[k] = a.calls[k] - a.blocked[k];
  }
  a.latencyMs = {};
  it.calls.assign(a.calls.begin(), a.calls.begin() + static_cast<std::ptrdiff_t>(n));
  it.failures.assign(a.failures.begin(), a.failures.begin() + static_cast<std::ptrdiff_t>(n));
  it.slow.assign(a.slow.begin(), a.slow.begin() + static_cast<std::ptrdiff_t>(n));
  it.rejected.assign(a.blocked.begin(), a.blocked.begin() + static_cast<std::ptrdiff_t>(n));
  it.blockedJudged = it.rejected;  // replay judges every block against the recording
  it.blockedWouldSucceed.assign(a.fp.begin(), a.fp.begin() + static_cast<std::ptrdiff_t>(n));
  it.errorRate.assign(a.errorRate.begin(), a.errorRate.begin() + static_cast<std::ptrdiff_t>(n));
  it.slowRate.assign(a.slowRate.begin(), a.slowRate.begin() + static_cast<std::ptrdiff_t>(n));
  it.baselineP99Ms.assign(a.baselineMs.begin(),
                          a.baselineMs.begin() + static_cast<std::ptrdiff_t>(n));
  it.queueFull.assign(n, 0);
  it.overflow.assign(n, 0);
  it.busy.assign(n, 0);
  it.queued.assign(n, 0);
  it.bands = bandsFromEvents(shifted, id, initial, end);
  for (const Event& e : shifted)
    if (e.instance == id && e.kind == EventKind::WouldOpen)
      it.markers.push_back({e.ts, Marker::Kind::WouldOpen, "would open"});
}

ReplayView ReplayTimelineBuilder::finish() {
  replayer_.finish();

  ReplayView v;
  v.protection = policy_.breaker.mode != BreakerMode::MetricsOnly;
  v.faults = faults_;
  v.kpis = nativeReplayKpis(replayer_, faults_);
  v.events = replayer_.events();
  if (origin_ == kNever || replayer_.lastTime() == kNever) {
    v.timeline = RunTimeline::fromInstances({}, kSecond, 0);
    return v;
  }
  v.origin = origin_;
  const std::size_t n = bucket(replayer_.lastTime() - 1) + 1;
  const Micros end = static_cast<Micros>(n) * kSecond;
  sampleUntil(origin_ + end);

  // Bands and markers on the timeline's axis (t = 0 at the origin).
  std::vector<Event> shifted = v.events;
  for (Event& e : shifted) e.ts -= origin_;
  const Engine& eng = replayer_.engine();
  const BreakerState initial = v.protection ? BreakerState::Closed : BreakerState::MetricsOnly;
  std::vector<InstanceTimeline> out(eng.size());
  for (InstanceId id = 0; id < eng.size(); ++id)
    fillInstance(out[id], id, n, end, shifted, initial);
  addFaultMarkers(out, v.kpis.faults, eng, origin_);
  v.timeline = RunTimeline::fromInstances(std::move(out), kSecond, end);
  return v;
}

std::optional<ReplayView> replayTimeline(formats::RecordSource& source, const Policy& policy,
                                         std::vector<NamedFault> faults, Micros origin,
                                         const std::atomic<bool>* cancel,
                                         const std::function<void(std::uint64_t)>& progress) {
  ReplayTimelineBuilder b(policy, std::move(faults), ReplayOptions{}, origin);
  std::uint64_t n = 0;
  auto tick = [&] {
    if ((++n & 4095) != 0) return true;
    if (progress) progress(n);
    return !(cancel && cancel->load(std::memory_order_relaxed));
  };
  if (source.aggregates()) {
    formats::AggregateSample s;
    while (source.nextAggregate(s)) {
      b.feedAggregate(s);
      if (!tick()) return std::nullopt;
    }
  } else {
    CallRecord rec;
    while (source.next(rec)) {
      b.feed(rec);
      if (!tick()) return std::nullopt;
    }
  }
  if (cancel && cancel->load()) return std::nullopt;
  return b.finish();
}

Policy watchOnly(Policy p) {
  p.breaker.mode = BreakerMode::MetricsOnly;
  return p;
}

namespace {

SweepScore score(const ReplayKpis& k) {
  SweepScore s;
  s.add(k);
  return s;
}

struct ReplayKpiDef {
  const char* name;
  const char* unit;
  bool higherIsBetter;
  std::optional<double> (*get)(const ReplayKpis&);
};

const ReplayKpiDef kReplayKpis[] = {
    {"availability (answered within SLO, not blocked)", "share", true,
     [](const ReplayKpis& k) -> std::optional<double> {
       if (!k.records) return std::nullopt;
       return score(k).availability();
     }},
    {"false-positive rate (误伤)", "share", false, [](const ReplayKpis& k) { return k.fpRate(); }},
    {"  of which false trips", "share", false,
     [](const ReplayKpis& k) { return k.blocks.partRate(BlockClass::FalseTrip); }},
    {"  of which recovery lag", "share", false,
     [](const ReplayKpis& k) { return k.blocks.partRate(BlockClass::RecoveryLag); }},
    {"collateral share (correct trips)", "share", false,
     [](const ReplayKpis& k) { return k.blocks.collateralShare(); }},
    {"false trips per hour", "/h", false,
     [](const ReplayKpis& k) { return k.falseTripsPerHour(); }},
    {"blocked calls", "share", false,
     [](const ReplayKpis& k) -> std::optional<double> {
       if (!k.records) return std::nullopt;
       return static_cast<double>(k.rejected) / static_cast<double>(k.records);
     }},
    {"real faults detected", "share", true,
     [](const ReplayKpis& k) -> std::optional<double> {
       const SweepScore s = score(k);
       if (!s.faults) return std::nullopt;
       return static_cast<double>(s.detected) / s.faults;
     }},
    {"TTD (mean; a miss counts the fault's length)", "s", false,
     [](const ReplayKpis& k) { return score(k).meanTtdSeconds(); }},
    {"TTD (worst)", "s", false,
     [](const ReplayKpis& k) -> std::optional<double> {
       const SweepScore s = score(k);
       if (!s.faults) return std::nullopt;
       if (s.detected < s.faults) return std::numeric_limits<double>::infinity();  // kpis.md
       return static_cast<double>(s.ttdMax) / 1e6;
     }},
    {"MTTR (mean, restored faults)", "s", false,
     [](const ReplayKpis& k) { return score(k).meanMttrSeconds(); }},
    {"missed faults", "count", false,
     [](const ReplayKpis& k) -> std::optional<double> {
       const SweepScore s = score(k);
       if (!s.faults) return std::nullopt;
       return static_cast<double>(s.faults - s.detected);
     }},
    {"breaker opens", "count", false,
     [](const ReplayKpis& k) -> std::optional<double> { return static_cast<double>(k.opens); }},
};

}  // namespace

std::vector<KpiRow> replayKpiRows(const ReplayKpis& current, const ReplayKpis* baseline,
                                  const ReplayKpis* previous) {
  std::vector<KpiRow> rows = detail::kpiTable(kReplayKpis, current, baseline, previous);
  // The baseline replays with every breaker watching only: it detects nothing by design.
  for (KpiRow& r : rows)
    if (r.name == "TTD (worst)") r.baseline.reset();
  return rows;
}

}  // namespace spillway::view
