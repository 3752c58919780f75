#pragma once
// "What moves what" (issue 23): each tunable breaker parameter stepped once down and once up
// around the current policy, the incident re-run under each step, and the change in 误伤, TTD
// and availability against the current policy — so the SRE sees which knob matters on this
// incident before sweeping a grid. Toolkit-neutral: the console's SensitivityPanel draws it.
//
// A simulated scenario runs the simulator (the run report's own KPI fields, as the KPI table
// shows them); recorded incidents run through the sweep engine (runSweep, the sweep's scores).
// Runs spread over threads and land by index: the same inputs give the same result whatever
// the thread count. A cancel flag is polled between runs and every 10 s of simulated time.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/policy.hpp"
#include "spillway/sim/scenario.hpp"
#include "spillway/sweep.hpp"

namespace spillway::view {

// The KPIs a step is judged by; nullopt: n/a (nothing blocked, no real fault detected).
struct SensitivityKpis {
  std::optional<double> falsePositive;  // 误伤, a share
  std::optional<double> ttdSeconds;     // mean onset → first OPEN
  std::optional<double> availability;   // a share
  std::uint32_t missed = 0;             // real faults never opened on
};

struct SensitivityStep {
  double value = 0;  // the parameter's value stepped to (seconds, share, count, factor)
  SensitivityKpis kpis;
  // Against the current policy; nullopt when either side is n/a.
  std::optional<double> falsePositivePp;  // Δ误伤 in percentage points
  std::optional<double> ttdSeconds;       // ΔTTD in seconds
  std::optional<double> availabilityPp;   // Δavailability in percentage points
  int missed = 0;                         // Δ missed real faults
};

struct SensitivityRow {
  std::string key;   // the policy file's key, e.g. "trip.slow_rate"
  std::string unit;  // "s", "share", "count", "factor" (policy_params.hpp)
  double current = 0;
  // nullopt: the current value sits on that edge of the valid range; nothing to step to.
  std::optional<SensitivityStep> down, up;
  double impact = 0;  // the sort key: see computeImpacts in sensitivity.cpp
};

struct Sensitivity {
  std::string source;     // the scenario's name, or the incidents' names
  bool simulated = true;  // false: replayed through the sweep engine
  SensitivityKpis current;
  std::vector<SensitivityRow> rows;  // by impact, largest first (ties: parameter order)
  std::size_t runs = 0;              // (the current policy + one per step) × seeds
  std::uint32_t seeds = 1;
  bool cancelled = false;  // stopped early: rows are incomplete, do not show them
};

struct SensitivityOptions {
  unsigned threads = 0;                       // 0 = every core
  const std::atomic<bool>* cancel = nullptr;  // polled between runs and inside a simulation
  std::function<void(std::size_t done, std::size_t total)> progress;  // from worker threads
  std::vector<std::string> keys;                                      // empty: sensitivityKeys()
  // Simulations only: each policy runs seeds scenario.seed … + seeds − 1 and each KPI is the
  // mean over the runs where it is defined (missed: the total), as `sweep --sim-seeds` does —
  // one seed is an anecdote, and a step's change can be that seed's luck.
  std::uint32_t seeds = 1;
  std::uint64_t seed = 1;    // replays only (the sweep's seed)
  ReplayTruthOptions truth;  // replays only (SLO, fault rules)
};

// The parameters the console's policy editor tunes and the chart shows, in editor order.
const std::vector<std::string>& sensitivityKeys();

// One step down and one step up from the breaker's current value of `key`: ×0.8 and ×1.25,
// at least one step of the key's own grain (1 s of sustain, one call, 0.01 of a share, …) so a
// zero or a small count still moves; clamped to the valid range (policy_params.hpp) and whole
// for counts. nullopt on a side where the value cannot move.
struct StepValues {
  std::optional<double> down, up;
};
StepValues sensitivitySteps(const BreakerConfig& breaker, std::string_view key);

// `policy` with the default breaker's `key` set to `value` (setBreakerParam: the config stays
// consistent, as expandSweep builds a sweep's candidates).
Policy steppedPolicy(const Policy& policy, std::string_view key, double value);

// The run report's KPIs of the scenario under `policy` (scenario.policy replaced); all n/a
// when cancelled.
SensitivityKpis simulatedKpis(const sim::Scenario& scenario, const Policy& policy,
                              const std::atomic<bool>* cancel = nullptr);

Sensitivity computeSensitivity(const sim::Scenario& scenario, const Policy& policy,
                               const SensitivityOptions& options = {});
// Recorded incidents: the same one-step grid replayed by runSweep, scored as a sweep scores.
Sensitivity computeSensitivity(const std::vector<IncidentTrace>& incidents, const Policy& policy,
                               const SensitivityOptions& options = {});

// "0.36", "8 s", "16", "2.4": a stepped value as the chart labels it.
std::string formatParamValue(double value, std::string_view unit);

}  // namespace spillway::view
