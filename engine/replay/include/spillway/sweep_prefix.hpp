#pragma once
// A sweep's shared prefix. Candidates that differ only in the trip thresholds
// (trip.error_rate, trip.slow_rate, trip.sustain) replay an incident identically until a trip
// evaluation first finds one of them over a threshold: before that every breaker takes the
// same path whatever the thresholds (evaluateTrip reads them nowhere else). Breakers of
// different instances never interact, so that holds per instance. One reference replay, whose
// thresholds nothing can exceed, runs the incident once, logs every trip evaluation and keeps
// snapshots of its state; a candidate finds, per instance, its first over-threshold
// evaluation in the log, resumes from the snapshot before the earliest, replays only the
// instances that cross a threshold and takes the others as the reference left them. Its
// result is the one a replay of it alone gives (tested).
#include <atomic>
#include <memory>
#include <vector>

#include "spillway/dialect_replay.hpp"
#include "spillway/replay.hpp"

namespace spillway {

class SharedPrefix {
 public:
  // Null when the shortcut does not apply: the policies differ in more than the trip
  // thresholds, the reference itself went over a threshold, or `cancel` was set.
  static std::unique_ptr<SharedPrefix> build(const std::vector<const Policy*>& policies,
                                             const ReplaySchedule& schedule,
                                             const ReplayOptions& options,
                                             const std::atomic<bool>* cancel);
  // Whether `policy` is one the prefix was built for (else replay it alone).
  bool covers(const Policy& policy) const;
  // The candidate's replay; `covers(policy)` must hold. Thread-safe.
  ReplayKpis replay(const Policy& policy, const std::vector<NamedFault>& faults,
                    const std::atomic<bool>* cancel) const;

  // The reference's policy: `p` with thresholds no window can exceed.
  static Policy reference(Policy p);

 private:
  // One instance's trip evaluations, and per block of kBlock of them the highest failure and
  // slow-call share among those with enough calls: a candidate whose thresholds are above both
  // skips the block unread.
  struct InstanceLog {
    std::vector<TripSample> samples;
    std::vector<double> blockErr, blockSlow;
    Micros last = kNever;  // its latest admit or admitted outcome in the reference
  };
  static constexpr std::size_t kBlock = 256;
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  SharedPrefix(Policy reference, const ReplaySchedule& schedule)
      : reference_(std::move(reference)), schedule_(&schedule) {}
  void summarize(const TripLog& log);
  // The step of the instance's first evaluation over `cfg`'s thresholds, kNone when none is.
  std::size_t firstOver(const InstanceLog& log, const BreakerConfig& cfg) const;
  // Per instance, where the candidate's path leaves the reference's (kNone: never).
  std::vector<std::size_t> divergence(const Policy& policy) const;

  Policy reference_;
  const ReplaySchedule* schedule_;
  std::vector<InstanceLog> logs_;
  std::size_t fullAt_ = kNone;  // the log filled up within this step: later ones are unknown
  std::size_t interval_ = 0;    // steps between snapshots
  std::vector<std::unique_ptr<Replayer>> snapshots_;  // before step k × interval_
  std::unique_ptr<Replayer> end_;                     // after the last step, not finished
};

}  // namespace spillway
