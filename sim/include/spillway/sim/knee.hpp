#pragma once
// Capacity-knee search (seed 003): stepped load from 30 % to 300 % of the scenario's base load,
// each step on a fresh simulation without faults, run until its P99 and error rate settle. The
// knee is the first step whose P99 is > 1.8 × the base step's P99 and whose error rate > 1 %.
#include <functional>
#include <optional>
#include <vector>

#include "spillway/sim/report.hpp"
#include "spillway/sim/scenario.hpp"

namespace spillway::sim {

struct KneeOptions {
  double from = 0.3, to = 3.0, step = 0.3;  // load factors
  Micros maxStep = seconds(600);            // each step runs at most this long (seed: 10 min)
  Micros minStep = seconds(120);            // ... and at least this long
  Micros chunk = seconds(30);               // stability is judged chunk by chunk
  double tolerance = 0.10;                  // P99 of two chunks within 10 %, error rate ±1 pt
  double p99Ratio = 1.8;                    // knee rule (seed 003)
  double errorRate = 0.01;
  bool protection = true;
  // Seed 003 calibrates capacity per degrade level: by default the primary path alone (its
  // overflow is an error, not a backup's answer); true keeps the scenario's degrade chain.
  bool degrade = false;
  // Capacity per degrade level (seed 003: "在不同降级等级下的容量基线"; seed 001's full /
  // quantized / cached): 0 the primary path alone, 1 + the capability-matched backups,
  // 2 + the cache. −1: `degrade` decides (false = 0, true = the chain as written).
  int level = -1;
};

inline constexpr int kDegradeLevels = 3;
const char* degradeLevelName(int level);  // "primary", "backups", "backups+cache"
// The scenario's degrade section cut down to `level`; throws std::invalid_argument when a level
// above 0 is asked of a scenario without one.
void applyDegradeLevel(Scenario& scenario, int level);

struct KneeStep {
  double factor = 0;
  double offeredRps = 0;        // original requests per second asked for
  Micros ran = 0;               // simulated time of the step
  bool stable = false;          // settled before maxStep
  double p99Ms = 0, p50Ms = 0;  // end-to-end, answered requests, measured part
  // Failed originals (and those unanswered past their timeout at the end) ÷ finished
  // originals (and those), measured part.
  Ratio errors;
  std::uint64_t backlog = 0, overdue = 0;  // unanswered at the end; ... past their timeout
  double throughput = 0;                   // answered within SLO per second, measured part
  double utilization = 0;                  // busy slots ÷ slots, mean over the measured part
};

struct KneeResult {
  std::vector<KneeStep> steps;
  std::optional<std::size_t> knee;  // index into steps
};

// `progress` (optional) is called after each step.
KneeResult findKnee(const Scenario& scenario, const KneeOptions& options,
                    const std::function<void(const KneeStep&)>& progress = {});

std::string kneeTable(const KneeResult& r, const KneeOptions& o);

// One knee per degrade level, and the elastic-scaling threshold each implies: scale out before
// the offered load passes the last step below the knee (or its slot utilization).
struct LevelKnee {
  int level = 0;
  KneeResult result;
};
std::string levelsTable(const std::vector<LevelKnee>& levels, const KneeOptions& o);
std::string levelsJson(const std::vector<LevelKnee>& levels, const KneeOptions& o, int indent = 2);
std::string kneeJson(const KneeResult& r, const KneeOptions& o, int indent = 2);

}  // namespace spillway::sim
