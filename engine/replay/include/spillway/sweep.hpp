#pragma once
// Threshold sweeps and calibration over recorded incidents. A sweep expands a parameter space
// (grid, or seeded random samples) into candidate policies, replays every incident under each
// (in parallel; results land in candidate order, so the output does not depend on the thread
// count), scores them on three axes — FP rate, TTD, availability — and marks the Pareto
// front. Calibration picks the candidate that meets the SRE's targets, or says which target
// cannot be met and what the closest policy achieves.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "spillway/dialect_replay.hpp"
#include "spillway/policy.hpp"
#include "spillway/telemetry.hpp"

namespace spillway {

// ---- the space ----------------------------------------------------------------------------

struct SweepParamRange {
  std::string key;             // a breakerParams() key, e.g. "trip.slow_rate"
  std::vector<double> values;  // grid points (explicit list, or from..to by step)
  double lo = 0, hi = 0;       // random search draws uniformly from [lo, hi]
};

// The most candidates one random search draws (a spec's `samples`, `--random`).
inline constexpr std::uint32_t kMaxSweepSamples = 1'000'000;

struct SweepSpec {
  enum class Mode { Grid, Random } mode = Mode::Grid;
  std::uint32_t samples = 100;  // random mode
  std::uint64_t seed = 1;
  std::vector<SweepParamRange> params;
};

// from, from + step, …, to: `to` is included when it lies a whole number of steps from `from`
// within 1e-9 of a step (0.2:0.8:0.1 has 7 values despite binary rounding). Empty when step
// <= 0 or to < from. The one grid of the CLI, the console and the knee.
std::vector<double> gridSteps(double from, double to, double step);

// "trip.slow_rate=0.2:0.8:0.1" (from:to:step), "trip.sustain=2s,5s,10s" (a list; durations
// take units), for the CLI. Throws InputError naming `source` and the bad part.
SweepParamRange parseSweepParam(std::string_view text, const std::string& source);
// A YAML spec: {mode: grid|random, samples: N, seed: N, params: {key: {from, to, step} | [v…]}}.
SweepSpec parseSweepSpec(std::string_view yaml, const std::string& source);

struct SweepCandidate {
  std::vector<std::pair<std::string, double>> values;  // the swept parameters' values
  Policy policy;
};

// Grid: the cartesian product in spec order (last parameter fastest). Random: `samples`
// draws from the spec's seed. Each candidate is `base` with the values set on the default
// breaker; `max` guards against a grid that explodes (InputError past it).
std::vector<SweepCandidate> expandSweep(const Policy& base, const SweepSpec& spec,
                                        std::size_t max = 100000);

// ---- the incidents ------------------------------------------------------------------------

// A recorded incident held in memory for repeated replays: calls in file order, names
// interned (the records' views point into the trace), and its fault annotations.
class IncidentTrace {
 public:
  // `next` yields the calls (a JsonlReader's or a library source's next()).
  static IncidentTrace read(const std::function<bool(CallRecord&)>& next, std::string name,
                            std::vector<NamedFault> faults);
  const std::string& name() const { return name_; }
  const std::vector<CallRecord>& calls() const { return calls_; }
  const std::vector<NamedFault>& faults() const { return faults_; }

 private:
  std::string_view intern(std::string_view s);
  std::string name_;
  std::vector<CallRecord> calls_;
  std::vector<NamedFault> faults_;
  // Shared, so copies and moves keep the records' views valid.
  std::shared_ptr<std::unordered_set<std::string>> strings_ =
      std::make_shared<std::unordered_set<std::string>>();
};

// One policy on one incident, as native replay scores it. With `cancel` set the replay stops
// within 4096 calls and what it returns is partial: the caller drops it.
ReplayKpis replayIncident(const Policy& policy, const IncidentTrace& incident,
                          std::uint64_t seed = 1, const ReplayTruthOptions& truth = {},
                          const std::atomic<bool>* cancel = nullptr);

// ---- scores -------------------------------------------------------------------------------

struct SweepScore {
  std::uint64_t records = 0, succeeded = 0, rejected = 0, blockedWouldSucceed = 0;
  BlockTally blocks;   // every breaker block by class (docs/kpis.md)
  Micros traffic = 0;  // the incidents' spans, for false trips per hour
  std::uint32_t faults = 0, detected = 0, restored = 0;
  Micros ttdSum = 0, mttrSum = 0;  // a missed fault counts its whole length (never caught)
  Micros ttdMax = 0;
  // Simulated runs only (sweep --scenario; docs/kpis.md): the limiter's mis-kills, resource
  // waste (slot µs) and model cost. A replay holds none of them.
  bool simulated = false, costed = false;
  std::uint64_t limitRefusals = 0, misKills = 0, slotTime = 0, wastedSlotTime = 0, originals = 0;
  double cost = 0;
  std::optional<double> misKillRate() const;
  std::optional<double> wasteShare() const;
  std::optional<double> costPer1k() const;
  void add(const ReplayKpis& k);
  void add(const SweepScore& o);  // another incident's or run's score
  // The headline 误伤 (avoidable would-succeed blocks ÷ all blocks); 0 when none was blocked
  // (for plots and ordering). fpRateOrNa: n/a then — a candidate that blocks nothing has not
  // shown it avoids harm, and never meets an `fp` target.
  double fpRate() const;
  std::optional<double> fpRateOrNa() const;
  std::optional<double> falseTripsPerHour() const { return blocks.falseTripsPerHour(traffic); }
  std::optional<double> meanTtdSeconds() const;   // nullopt without faults
  std::optional<double> meanMttrSeconds() const;  // over restored faults
  // Calls answered: recorded successes the policy did not block ÷ all calls.
  double availability() const;
};

struct SweepResult {
  std::vector<SweepCandidate> candidates;
  std::vector<SweepScore> scores;  // per candidate, summed over the incidents
  std::vector<bool> pareto;        // on the front of (FP ↓, TTD ↓, availability ↑)
  bool cancelled = false;
};

struct SweepRunOptions {
  unsigned threads = 0;  // 0 = every core
  std::uint64_t seed = 1;
  ReplayTruthOptions truth;  // the SLO and fault rules every candidate is judged by
  std::function<void(std::size_t done, std::size_t total)> progress;  // from worker threads
  const std::atomic<bool>* cancel = nullptr;
};

// Scores one candidate policy (replays of incidents, simulated runs); called from the worker
// threads, so it must not share mutable state between calls.
using CandidateScorer = std::function<SweepScore(const Policy&)>;

SweepResult runSweep(std::vector<SweepCandidate> candidates, const CandidateScorer& score,
                     const SweepRunOptions& options);
// Every candidate replayed over the incidents (options.seed, options.truth).
SweepResult runSweep(std::vector<SweepCandidate> candidates,
                     const std::vector<IncidentTrace>& incidents, const SweepRunOptions& options);

// Marks the non-dominated candidates.
std::vector<bool> paretoFront(const std::vector<SweepScore>& scores);

// ---- calibration --------------------------------------------------------------------------

struct Target {
  enum class Metric {
    Fp,
    Ttd,
    Mttr,
    Availability,
    Missed,
    FalseTrips,
    Collateral,
    MisKill,  // simulated only (--scenario): the limiter's mis-kill rate
    Waste,    // resource waste (slot time)
    Cost,     // cost per 1k requests
  } metric;
  bool simulatedOnly() const {
    return metric == Metric::MisKill || metric == Metric::Waste || metric == Metric::Cost;
  }
  bool atMost = true;  // "<=" (all but availability) or ">=" (availability)
  double value = 0;    // share, seconds or a count
  std::string text;    // as written, for messages
};

// "fp<=0.03,ttd<=30s,mttr<=2m,availability>=0.99,missed<=0,false_trips<=0.5,collateral<=0.5"
// (false_trips per hour of traffic, collateral a share of blocks); on simulated runs also
// "mis_kill<=0.05,waste<=0.05,cost<=2.5" (shares; cost per 1k requests). Throws InputError on
// a bad term.
std::vector<Target> parseTargets(std::string_view text, const std::string& source);
bool meets(const SweepScore& s, const Target& t);
std::string formatMetric(const SweepScore& s, Target::Metric m);

struct Calibration {
  std::optional<std::size_t> chosen;  // index into the sweep's candidates
  std::vector<std::string> findings;  // why: which targets bind, which cannot be met
};

// Among candidates meeting every target — and `missed<=0` unless a target bounds missed
// faults itself — the lowest TTD, then the lowest FP rate, then the highest availability. None: for
// each target, whether any candidate meets it alone and what the best candidate meeting all the
// others achieves on it.
Calibration calibrate(const SweepResult& sweep, const std::vector<Target>& targets);

}  // namespace spillway
