#pragma once
// KPIs over several seeds (docs/kpis.md, "Reporting"): one seed is an anecdote. A scenario runs
// with seeds s, s+1, …, s+n−1, baseline and protected, on every core; each KPI is reported as
// its mean and a 95 % interval (Student's t over the seeds where it is defined).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/sim/report.hpp"
#include "spillway/sim/scenario.hpp"

namespace spillway::sim {

struct SeedRuns {
  std::vector<RunReport> baseline, protectedRuns;  // by seed index
};

// The reports are in seed order whatever the number of threads (0 = every core): the same
// bytes for the same scenario and n.
SeedRuns runSeeds(const Scenario& scenario, std::uint32_t n, unsigned threads = 0);

struct SeedInterval {
  double mean = 0, lo = 0, hi = 0;
  std::uint32_t n = 0;  // seeds where the KPI is defined (a rate over nothing is not)
};
// nullopt when no value; one value: an interval of zero width around it.
std::optional<SeedInterval> seedInterval(const std::vector<double>& values);
// A KPI's interval over the runs where it is defined: never below 0, a share within [0, 1].
// An interval of KPI values over seeds, cut where the KPI cannot go: never below 0 (shares,
// times and rates), a share never above 1.
std::optional<SeedInterval> intervalInRange(const std::vector<double>& values, bool share);
std::optional<SeedInterval> intervalOver(const std::vector<RunReport>& runs,
                                         std::optional<double> (*get)(const RunReport&),
                                         bool share);
// One value by unit — "share" 98.1 % (99.97 % near 1), "s" 86 s, "/h" 1.5/h, "x" 0.89x,
// "cost" 12.34, "count" 5 — and with its interval: "98.1 % [97.8 %, 98.3 %]" (n/a: none).
std::string formatKpi(double v, std::string_view unit);
std::string formatInterval(const std::optional<SeedInterval>& i, std::string_view unit);

std::string seedsTable(const SeedRuns& runs, const Scenario& scenario);
std::string seedsJson(const SeedRuns& runs, const Scenario& scenario, int indent = 2);

}  // namespace spillway::sim
