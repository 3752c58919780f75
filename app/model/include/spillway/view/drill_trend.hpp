#pragma once
// The trend of drill runbooks across their stored runs (seed 003's "度量"): per runbook, per
// expectation, what each run measured against the bound. Toolkit-neutral; the console's drill
// board draws it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spillway::view {

// One stored run, as the library keeps it (drill_runs).
struct DrillRunRow {
  std::int64_t id = 0;
  std::string runbook;
  std::uint32_t revision = 0;
  std::string version, created;
  std::string resultJson;  // spillway-cli drill --json
  bool passed = false;
};

struct DrillPoint {
  std::int64_t run = 0;
  std::uint32_t revision = 0;
  std::optional<double> measured;  // n/a: not measured in that run (the mean over its seeds)
  bool passed = false;             // this expectation, in that run
  // Over several seeds: their 95 % interval, and whether it crossed the bound (the seeds could
  // not tell: not a pass, not a clear failure either).
  std::optional<double> lo, hi;
  bool unsure = false;
};

struct DrillKpiTrend {
  std::string kpi;
  std::optional<double> min, max;  // the bound of the newest run that checked it
  std::vector<DrillPoint> points;  // oldest first
};

struct DrillTrend {
  std::string runbook;
  std::size_t runs = 0, passedRuns = 0;
  std::vector<DrillKpiTrend> kpis;  // in the order the newest run checks them
};

// Runs of any runbooks, any order → one trend per runbook (by name), runs oldest first (by
// id). A run whose result is not readable JSON counts as a run with nothing measured.
std::vector<DrillTrend> drillTrends(std::vector<DrillRunRow> runs);

}  // namespace spillway::view
