#pragma once
// Seed 001's comparison of defence modes ("仅限流 / 熔断+降级 / 三重协同"): one scenario run with
// different layers of defence, over several seeds, side by side with the seed's table.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/sim/report.hpp"
#include "spillway/sim/scenario.hpp"
#include "spillway/sim/simulator.hpp"

namespace spillway::sim {

struct Mode {
  std::string name;  // as modeName() spells it
  SimOptions options;
};

// "limits,breaker+degrade,all": modes separated by commas, layers by '+'; "off" and "all" are
// modes of their own. Throws std::invalid_argument naming the bad word.
std::vector<Mode> parseModes(std::string_view list);

struct ModeRuns {
  std::vector<Mode> modes;
  std::vector<std::vector<RunReport>> runs;  // [mode][seed]
};

// Seeds s … s+n−1 for every mode, on `threads` threads (0 = every core); the reports come out
// in order whatever the threads, so the same input gives the same bytes.
ModeRuns runModes(const Scenario& scenario, std::vector<Mode> modes, std::uint32_t seeds,
                  unsigned threads = 0);

// The comparison as rows of text, for the table and the console: per KPI its cell per mode
// ("98.2 % [98.1 %, 98.3 %]", or the value alone with one seed) and the seed document's
// figure per mode ("" where the seed has none).
struct ModesRow {
  std::string kpi;
  std::vector<std::string> cells, seedFigures;
};
std::vector<ModesRow> modesRows(const ModeRuns& runs, const Scenario& scenario);

std::string modesTable(const ModeRuns& runs, const Scenario& scenario);
std::string modesJson(const ModeRuns& runs, const Scenario& scenario, int indent = 2);

}  // namespace spillway::sim
