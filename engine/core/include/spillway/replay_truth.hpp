#pragma once
// Replay's ground truth (docs/kpis.md): whether a blocked call "would have succeeded" is read
// from the recording against the client's SLO — never from the policy under test — and each
// block gets its class (false trip, recovery lag, collateral) from the real faults: the fault
// annotations when there are any, else the faults read from the recording itself by a fixed
// reference rule. Native and dialect replays feed the same object, so a policy and its
// emulation are judged on one footing.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spillway/block_class.hpp"
#include "spillway/events.hpp"
#include "spillway/outcome.hpp"

namespace spillway {

struct ReplayTruthOptions {
  // The clients' SLO latency: an answer later than this is not a success. `slo` for every
  // call, `tenantSlo` for the calls of a named tenant (the record's `tenant`); `--slo` sets
  // both ("5s" or "code-assist=3s,report-gen=20s,5s").
  Micros slo = seconds(5);
  std::vector<std::pair<std::string, Micros>> tenantSlo;
  Micros sloFor(std::string_view tenant) const;
  GroundTruthRules rules;
  // The reference rule for faults read from a recording without annotations: 1 s slices; a
  // slice is bad when at least `badShare` of its calls failed or missed the SLO; bad slices
  // less than a window (rules.minFault) apart form one run; a run lasting ≥ rules.minFault
  // with ≥ minCalls calls in its bad slices is a real fault. Jitter, single spikes and blips
  // shorter than a window are not.
  double badShare = 0.5;
  std::uint32_t minCalls = 10;
};

// "5s", "code-assist=3s,report-gen=20s,5s": a bare duration is the default SLO, NAME=D a
// tenant's. Throws InputError naming `source` and the bad part.
void parseSloSpec(std::string_view text, const std::string& source, ReplayTruthOptions& out);

// A real fault of one instance, [start, end).
struct TruthFault {
  InstanceId instance = 0;
  Micros start = 0, end = 0;
};

// The blocks of one review period [start, start + period) (episodes are counted whole-run).
struct PeriodTally {
  Micros start = 0;
  BlockTally blocks;
};

class ReplayGroundTruth {
 public:
  explicit ReplayGroundTruth(ReplayTruthOptions options = {}) : options_(options) {}

  // The policy-independent bar: a non-failure answer (default classification: 5xx, 429, no
  // answer, timeout, reset fail) within the SLO.
  bool wouldSucceed(int status, Outcome outcome, Micros latency, Micros slo) const;
  bool wouldSucceed(int status, Outcome outcome, Micros latency) const {
    return wouldSucceed(status, outcome, latency, options_.slo);
  }
  // Every recorded call once, in admit order (late records fold into the current slice).
  void onCall(InstanceId id, Micros ts, bool succeeded);
  // `step`: its place in a scheduled replay (Replayer::replaySteps), for adoptOthers.
  void onBlock(InstanceId id, Micros ts, bool wouldSucceed, std::uint32_t step = 0);
  // `from`'s calls (they do not depend on the policy), and its blocks on the instances `mine`
  // does not mark beside this one's on those it does, in step order.
  void adoptOthers(const ReplayGroundTruth& from, const std::vector<std::uint8_t>& mine);

  // The faults read from the recording (closes the open runs; call after the last call).
  std::vector<TruthFault> recordedFaults() const;
  // Classifies every block against `faults` (benign ones already left out), walking `events`
  // (one instance's or all, in time order) for the episodes. With `byPeriod`, also the blocks
  // of each review period of length `period` (aligned to the epoch) that holds any.
  BlockClassifier classify(const std::vector<TruthFault>& faults, const std::vector<Event>& events,
                           Micros period = 0, std::vector<PeriodTally>* byPeriod = nullptr) const;
  const ReplayTruthOptions& options() const { return options_; }

 private:
  struct Run {
    Micros start = kNever, lastBad = kNever;
    std::uint64_t calls = 0;
  };
  struct PerInstance {
    Micros slice = kNever;  // the current 1 s slice's start
    std::uint32_t calls = 0, bad = 0;
    Run run;
    std::vector<TruthFault> faults;
  };
  struct Block {
    Micros ts;
    InstanceId id;
    bool wouldSucceed;
    std::uint32_t step;
  };
  void foldSlice(InstanceId id, PerInstance& p, std::vector<TruthFault>& out) const;
  void closeRun(InstanceId id, PerInstance& p, std::vector<TruthFault>& out) const;

  ReplayTruthOptions options_;
  std::vector<PerInstance> inst_;
  std::vector<Block> blocks_;
};

}  // namespace spillway
