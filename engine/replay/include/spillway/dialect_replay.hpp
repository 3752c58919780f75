#pragma once
// Replaying a recorded call stream under a dialect, with the same ordering rules as the native
// Replayer (admit at the call's start, the outcome at its completion, a reorder window for
// logs written at completion), and the same KPIs: per-instance BreakerCounters (admitted,
// rejected, false positives, opens, time in state), ReplayInstanceStats, and FaultScores from
// scoreFault over the events. ReplayKpis is also built from a native Replayer, so export and
// validate compare a policy with its emulation on one footing.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spillway/dialect.hpp"
#include "spillway/kpi.hpp"
#include "spillway/replay.hpp"
#include "spillway/telemetry.hpp"

namespace spillway {

struct DialectReplayOptions {
  Micros reorderWindow = seconds(10);  // as ReplayOptions::reorderWindow
  ReplayTruthOptions truth;
};

// A known fault, by instance name (ids differ between engines).
struct NamedFault {
  std::string instance;
  Micros start = 0;
  Micros end = 0;
  std::string kind;
  bool benign = false;  // a known benign event (a blip, a burst): not a real fault
};

// A server out of rotation: from a mark-down (CLOSED → OPEN) to its mark-up (→ CLOSED); failed
// trials in between (HALF_OPEN → OPEN) stay in the same period. `up` is kNever when the
// replay ended first.
struct OutPeriod {
  Micros down = 0;
  Micros up = kNever;
  std::uint32_t failedTrials = 0;
};

struct InstanceKpis {
  std::string name;
  std::string group;
  ReplayInstanceStats stats;  // records, recordedSucceeded
  BreakerCounters counters;   // admitted, rejected, verdicts, FP, opens, timeIn, ...
  BreakerState finalState = BreakerState::Closed;
  BlockTally blocks;  // this instance's blocks by class
  std::vector<OutPeriod> outs;
};

struct FaultKpis {
  NamedFault fault;
  bool found = false;  // the instance appears in the trace
  FaultScore score;
};

struct ReplayKpis {
  std::string engine;  // "native" or the dialect's name
  std::uint64_t records = 0, late = 0;
  Micros first = kNever, last = kNever;
  std::vector<InstanceKpis> instances;
  std::vector<FaultKpis> faults;
  std::uint64_t rejected = 0, opens = 0;
  // Every breaker block by class against the real faults (docs/kpis.md): the annotations, or
  // without any, the faults read from the recording (faultsFromRecording).
  BlockTally blocks;
  bool faultsFromRecording = false;
  std::vector<TruthFault> realFaults;
  // Blocks of any class that the recording answered within the SLO (availability's loss).
  std::uint64_t blockedWouldSucceed = 0;
  // The headline 误伤: avoidable (false-trip + recovery-lag) would-succeed blocks ÷ all blocks.
  std::optional<double> fpRate() const { return blocks.falsePositiveRate(); }
  std::uint64_t falsePositives() const { return blocks.avoidable(); }
  std::uint64_t blocked() const { return blocks.total(); }
  std::optional<double> falseTripsPerHour() const {
    return first == kNever ? std::nullopt : blocks.falseTripsPerHour(last - first);
  }
};

class DialectReplayer {
 public:
  DialectReplayer(DialectCluster& dialect, DialectReplayOptions options = {});
  ~DialectReplayer();
  DialectReplayer(const DialectReplayer&) = delete;
  DialectReplayer& operator=(const DialectReplayer&) = delete;

  void feed(const CallRecord& rec);
  void finish();  // drains everything; the replay ends at the last completion

  DialectCluster& dialect() { return d_; }
  const std::vector<Event>& events() const { return events_; }
  const ReplayInstanceStats& instanceStats(InstanceId id) const { return stats_[id]; }
  std::uint64_t late() const { return late_; }
  std::uint64_t fed() const { return fed_; }
  Micros firstTime() const { return first_; }
  Micros lastTime() const { return last_; }

  ReplayKpis kpis(const std::vector<NamedFault>& faults = {}) const;

 private:
  // A waiting call and its ttfb: a gateway dialect counts the answer when its headers arrive.
  struct Call : PendingCall {
    Micros ttfb = -1;  // -1 when the record has none
  };
  struct Completion {
    Micros end;
    std::uint64_t seq;
    InstanceId id;
    Micros latency;
    int status;
    Outcome outcome;
    DialectDecision decision;
  };

  void drainUntil(Micros upTo);
  void complete(const Completion& c);
  void admit(const Call& p, Micros at, bool retry);
  void releaseWaiters(InstanceId id, Micros at);

  DialectCluster& d_;
  DialectReplayOptions options_;
  std::vector<Event> events_;
  EventSink* previousSink_;
  EventTee tee_;
  ReorderBuffer<Completion, Call> buffer_;
  std::vector<std::vector<Call>> waiting_;  // per instance: callers awaiting a verdict
  std::vector<ReplayInstanceStats> stats_;
  ReplayGroundTruth truth_;
  std::uint64_t late_ = 0, fed_ = 0;
  Micros first_ = kNever, last_ = kNever;
};

// Builds the dialect from native config text and replays `records` under it.
ReplayKpis replayUnderDialect(DialectKind kind, std::string_view configText,
                              const std::string& configSource, JsonlReader& records,
                              const std::vector<NamedFault>& faults = {}, std::uint64_t seed = 1,
                              DialectReplayOptions options = {}, std::string_view select = {});

// The same KPIs from a finished native replay.
ReplayKpis nativeReplayKpis(const Replayer& replayer, const std::vector<NamedFault>& faults = {});

}  // namespace spillway
