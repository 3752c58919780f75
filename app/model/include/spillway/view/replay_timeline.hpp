#pragma once
// A recorded incident replayed under a policy, as the console draws it — toolkit-neutral (no
// Qt), tested without widgets. The engine's own Replayer decides (so the KPIs are exactly those
// of `spillway-cli replay` and of the sweep's replayIncident); this builder only watches it
// (ReplayObserver, each call as decided):
// per instance and per second the recording's calls, failures and slow calls, the p99 of the
// recorded latencies, the calls the policy blocked and of those the false positives, the
// decision window's error and slow rates and the learned P99 baseline; breaker state bands
// from the replay's events, and fault annotations with their detection and restore as markers.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "spillway/dialect_replay.hpp"
#include "spillway/formats/source.hpp"
#include "spillway/replay.hpp"
#include "spillway/view/timeline.hpp"

namespace spillway::view {

struct ReplayView {
  RunTimeline timeline;       // t = 0 at `origin`, one tick per second
  Micros origin = 0;          // epoch µs of t = 0 (a whole second)
  ReplayKpis kpis;            // nativeReplayKpis of the replay
  std::vector<Event> events;  // the replay's breaker events (epoch µs)
  std::vector<NamedFault> faults;
  bool protection = true;  // false: the breakers only watched (METRICS_ONLY)
};

class ReplayTimelineBuilder final : ReplayObserver {
 public:
  // `origin`: epoch µs of t = 0, floored to a second; kNever = the earliest call's second (the
  // first the Replayer decides; a call later than its reorder window counts in second 0).
  // A policy whose default breaker is METRICS_ONLY builds a watch-only (baseline) timeline.
  ReplayTimelineBuilder(Policy policy, std::vector<NamedFault> faults, ReplayOptions options = {},
                        Micros origin = kNever);
  ReplayTimelineBuilder(const ReplayTimelineBuilder&) = delete;  // the Replayer watches `this`
  ReplayTimelineBuilder& operator=(const ReplayTimelineBuilder&) = delete;
  void feed(const CallRecord& rec);
  void feedAggregate(const formats::AggregateSample& s);
  ReplayView finish();
  std::uint64_t fed() const { return replayer_.fed(); }

 private:
  struct Acc {  // one instance's per-second accumulators
    std::vector<double> calls, failures, slow, blocked, fp;
    std::vector<std::vector<float>> latencyMs;
    std::vector<double> errorRate, slowRate, baselineMs;  // sampled once a second
  };
  std::size_t bucket(Micros ts) const;
  Acc& acc(InstanceId id);
  void onDecided(const PendingCall& call, bool admitted, bool wouldSucceed) override;
  void sampleUntil(Micros watermark);
  // One instance's series over n seconds, its state bands and would-open markers.
  void fillInstance(InstanceTimeline& it, InstanceId id, std::size_t n, Micros end,
                    const std::vector<Event>& shifted, BreakerState initial);

  Policy policy_;
  std::vector<NamedFault> faults_;
  ReplayOptions options_;
  Replayer replayer_;
  Micros origin_;
  Micros nextSample_ = kNever;
  std::uint64_t decided_ = 0;  // calls the Replayer has admitted or blocked
  std::vector<Acc> acc_;
};

// Streams a library source (calls or aggregate samples) through a builder. Returns nullopt
// when `cancel` was set (polled every 4096 records); `progress` gets the records read.
std::optional<ReplayView> replayTimeline(formats::RecordSource& source, const Policy& policy,
                                         std::vector<NamedFault> faults, Micros origin = kNever,
                                         const std::atomic<bool>* cancel = nullptr,
                                         const std::function<void(std::uint64_t)>& progress = {});

// The policy with every breaker watching only: the recording as it happened, with the marks
// where the policy would have opened (the replay's baseline, as the unprotected run is the
// simulator's).
Policy watchOnly(Policy p);

// The replay's KPI rows, scored as the sweep scores (SweepScore): availability (recorded
// successes not blocked ÷ calls), FP rate, blocked share, interception, TTD (a missed fault
// counts its whole length), MTTR, opens, missed faults.
std::vector<KpiRow> replayKpiRows(const ReplayKpis& current, const ReplayKpis* baseline,
                                  const ReplayKpis* previous);

}  // namespace spillway::view
