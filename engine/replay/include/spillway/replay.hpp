#pragma once
// Replay: recorded calls go through the engine in time order — admit at the call's start, the
// outcome at start + latency. A replay cannot change what happened: a call the replayed breaker
// rejects is counted as rejected, judged against the recording by ReplayGroundTruth (the
// client's SLO, never the policy), and its outcome is not fed to the windows, as in production
// it would not have been sent.
#include <deque>
#include <queue>
#include <string>
#include <vector>

#include "spillway/engine.hpp"
#include "spillway/kpi.hpp"
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

class Replayer {
 public:
  Replayer(Policy policy, ReplayOptions options, EventSink* sink = nullptr);

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

 private:
  struct Pending {
    Micros ts;
    Micros latency;
    std::uint64_t seq;
    InstanceId id;
    int status;
    Outcome outcome;
    Micros slo;  // its tenant's
  };
  struct Completion {
    Micros end;
    std::uint64_t seq;
    InstanceId id;
    Micros latency;
    int status;
    Outcome outcome;
    bool probe;
    bool operator>(const Completion& o) const { return end != o.end ? end > o.end : seq > o.seq; }
  };
  class Tee final : public EventSink {
   public:
    Tee(std::vector<Event>& keep, EventSink* next) : keep_(keep), next_(next) {}
    void onEvent(const Event& e) override {
      keep_.push_back(e);
      if (next_) next_->onEvent(e);
    }

   private:
    std::vector<Event>& keep_;
    EventSink* next_;
  };

  void drainUntil(Micros watermark);
  void completeUntil(Micros t);
  void admit(const Pending& p);

  std::vector<Event> events_;
  Tee tee_;
  Engine engine_;
  ReplayOptions options_;
  ReplayGroundTruth truth_;
  std::deque<Pending> pending_;  // sorted by (ts, seq); appends are the common case
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> inflight_;
  std::vector<ReplayInstanceStats> stats_;
  std::uint64_t seq_ = 0;
  std::uint64_t late_ = 0;
  std::uint64_t fed_ = 0;
  Micros maxTs_ = kNever;
  Micros lastAdmit_ = kNever;
  Micros first_ = kNever;
  Micros last_ = kNever;
};

}  // namespace spillway
