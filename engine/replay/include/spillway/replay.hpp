#pragma once
// Replay: recorded calls go through the engine in time order — admit at the call's start, the
// outcome at start + latency. A replay cannot change what happened: a call the replayed breaker
// rejects is counted as rejected, judged against the recording by ReplayGroundTruth (the
// client's SLO, never the policy), and its outcome is not fed to the windows, as in production
// it would not have been sent.
#include <string>
#include <vector>

#include "spillway/engine.hpp"
#include "spillway/event_tee.hpp"
#include "spillway/kpi.hpp"
#include "spillway/reorder_buffer.hpp"
#include "spillway/replay_truth.hpp"
#include "spillway/telemetry.hpp"

namespace spillway {

struct ReplayOptions {
  // Records may arrive up to this much out of start-time order (logs are written at
  // completion); later ones are counted as late and applied at the current time.
  Micros reorderWindow = seconds(10);
  std::uint64_t seed = 1;
  ReplayTruthOptions truth;
};

struct ReplayInstanceStats {
  std::uint64_t records = 0;            // calls in the recording
  std::uint64_t recordedSucceeded = 0;  // answered within the SLO (ReplayGroundTruth)
};

// Watches a replay call by call (the console's timeline): each recorded call as its breaker
// decides it, in admission order, with whether it was admitted and whether the recording
// answered it within the client's SLO.
class ReplayObserver {
 public:
  virtual ~ReplayObserver() = default;
  virtual void onDecided(const PendingCall& call, bool admitted, bool wouldSucceed) = 0;
};

class Replayer {
 public:
  Replayer(Policy policy, ReplayOptions options, EventSink* sink = nullptr);
  void setObserver(ReplayObserver* o) { observer_ = o; }

  void feed(const CallRecord& rec);
  // An aggregate sample (calls, failures, slow over an interval ending at `end`, e.g. from
  // Prometheus): pending calls up to `end` go first, then Engine::recordAggregate. Aggregates
  // are outcomes only: nothing is admitted or blocked, so they drive detection (trips, TTD),
  // not false positives. slow = -1: unknown (counted as not slow).
  void feedAggregate(std::string_view instance, std::string_view model, Micros end,
                     std::uint32_t calls, std::uint32_t failures, std::int64_t slow);
  // Drains every pending call; the replay ends at the last completion.
  void finish();

  Engine& engine() { return engine_; }
  const Engine& engine() const { return engine_; }
  const std::vector<Event>& events() const { return events_; }
  const ReplayInstanceStats& instanceStats(InstanceId id) const { return stats_[id]; }
  const ReplayGroundTruth& truth() const { return truth_; }
  std::uint64_t late() const { return late_; }
  std::uint64_t fed() const { return fed_; }
  Micros firstTime() const { return first_; }
  Micros lastTime() const { return last_; }
  // Calls that start at or before this time have all been admitted.
  Micros watermark() const { return buffer_.watermark(); }

 private:
  struct Completion {
    Micros end;
    std::uint64_t seq;
    InstanceId id;
    Micros latency;
    int status;
    Outcome outcome;
    bool probe;
  };

  void admit(const PendingCall& p);
  void complete(const Completion& c);
  void drainUntil(Micros upTo);

  std::vector<Event> events_;
  EventTee tee_;
  Engine engine_;
  ReplayOptions options_;
  ReplayGroundTruth truth_;
  ReorderBuffer<Completion> buffer_;
  ReplayObserver* observer_ = nullptr;
  std::vector<ReplayInstanceStats> stats_;
  std::uint64_t late_ = 0;
  std::uint64_t fed_ = 0;
  Micros first_ = kNever;
  Micros last_ = kNever;
};

}  // namespace spillway
