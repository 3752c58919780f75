#pragma once
// Sweeps over a simulated scenario: each candidate policy runs the scenario under several
// seeds and is scored on the same axes as a replay (docs/kpis.md) — 误伤 and false trips from
// the block classes, TTD and MTTR over the real (not benign) faults, availability of the
// original requests — so `sweep`/`calibrate --scenario` and their replay forms read alike.
#include <cstdint>

#include "spillway/sim/report.hpp"
#include "spillway/sim/scenario.hpp"
#include "spillway/sweep.hpp"

namespace spillway::sim {

// One run's score. A real fault never detected counts its whole length as TTD.
SweepScore scoreRun(const RunReport& r);

// Runs `scenario` with the candidate as its policy under seeds scenario.seed … + seeds − 1 and
// sums the scores. Copies the scenario: safe from the sweep's worker threads.
CandidateScorer scenarioScorer(const Scenario& scenario, std::uint32_t seeds);

}  // namespace spillway::sim
