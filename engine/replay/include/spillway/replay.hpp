#pragma once
// Replay: recorded calls go through the engine in time order — admit at the call's start, the
// outcome at start + latency. A replay cannot change what happened: a call the replayed breaker
// rejects is counted as rejected, judged against the recording by ReplayGroundTruth (the
// client's SLO, never the policy), and its outcome is not fed to the windows, as in production
// it would not have been sent.
#include <array>
#include <atomic>
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

// A recorded trace compiled once for many replays of it (a sweep): its instances in the order
// a replay registers them, its calls as the reorder buffer queues them, and the steps — admit a
// call, apply its outcome — in the order a replay takes them. That order does not depend on the
// policy: a blocked call only drops its outcome step. So every candidate walks the same steps
// without re-sorting calls or looking names up.
struct ReplaySchedule {
  struct Instance {
    std::string name, model;
  };
  std::vector<Instance> instances;
  // What a replay reads of a call, judged once against the client's SLO (ReplayGroundTruth).
  struct Call {
    Micros ts, latency;
    InstanceId id;
    int status;
    Outcome outcome;
    bool succeeded;
  };
  std::vector<Call> calls;           // by arrival
  std::vector<std::uint32_t> steps;  // seq << 1, | 1 for its outcome
  std::uint64_t late = 0;
  Micros first = kNever;

  // The same calls and options as Replayer::feed and finish would see.
  static ReplaySchedule build(const std::vector<CallRecord>& calls, const ReplayOptions& options);
};

class Replayer {
 public:
  Replayer(Policy policy, ReplayOptions options, EventSink* sink = nullptr);
  // `from`'s replay so far under another policy, without sink or observer: a sweep candidate
  // resuming from a shared prefix.
  Replayer(const Replayer& from, Policy policy);
  Replayer(const Replayer&) = delete;
  Replayer& operator=(const Replayer&) = delete;
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
  // In place of feed and finish on a new Replayer: the same replay from a schedule built with
  // this replayer's options, for its scores (the observer is not called). With `cancel` set it
  // stops within 4096 calls (a partial replay).
  void replay(const ReplaySchedule& schedule, const std::atomic<bool>* cancel = nullptr);
  // The same in parts: the schedule's steps from stepsDone() up to `until`; false when
  // cancelled (within 4096 calls). finishSchedule() after the last step ends the replay.
  // With `only`, just the calls of the instances it marks (adoptOthers brings the others).
  bool replaySteps(const ReplaySchedule& schedule, std::size_t until,
                   const std::atomic<bool>* cancel = nullptr,
                   const std::vector<std::uint8_t>* only = nullptr);
  // After replaySteps with `only`, before finishSchedule: the other instances as `reference`
  // left them after every step — their calls, decisions, events and blocks, merged in step
  // order — which is theirs here too when their breakers never took a different path.
  // `lastOfOthers`: the latest admit or admitted outcome among those instances' calls.
  void adoptOthers(const Replayer& reference, const std::vector<std::uint8_t>& only,
                   Micros lastOfOthers);
  void finishSchedule();
  std::size_t stepsDone() const { return step_; }
  // Whether the schedule's call `seq` was admitted (once its admit step is done).
  bool admitted(std::size_t seq) const { return sent_[seq] != 0; }
  // Logs every trip evaluation, stamped with its schedule step (Breaker::setTripLog).
  void setTripLog(TripLog* log);

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

  // Recent instance names by address: a reader that keeps one copy of a name for many records
  // (parallel_jsonl.hpp) saves the engine's lookup; a hit is checked against the name itself.
  struct NameSlot {
    const char* data = nullptr;
    std::uint32_t size = 0;
    InstanceId id = 0;
  };
  InstanceId instanceOf(const CallRecord& rec);

  void admit(const PendingCall& p);
  Decision decide(InstanceId id, Micros ts, bool succeeded);
  void start(const ReplaySchedule& schedule);
  void complete(const Completion& c);
  void drainUntil(Micros upTo);

  std::vector<Event> events_;
  std::vector<std::uint32_t> eventSteps_;  // the schedule step of each event
  EventTee tee_;
  Engine engine_;
  ReplayOptions options_;
  ReplayGroundTruth truth_;
  ReorderBuffer<Completion> buffer_;
  ReplayObserver* observer_ = nullptr;
  std::vector<ReplayInstanceStats> stats_;
  std::array<NameSlot, 1024> names_{};
  std::uint64_t late_ = 0;
  std::uint64_t fed_ = 0;
  Micros first_ = kNever;
  Micros last_ = kNever;
  // A schedule's replay: steps done, and per call 0 blocked, 1 admitted, 3 admitted as a probe.
  bool started_ = false;
  std::size_t step_ = 0;
  std::vector<std::uint8_t> sent_;
  TripLog* tripLog_ = nullptr;
};

}  // namespace spillway
