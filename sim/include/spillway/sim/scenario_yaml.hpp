#pragma once
// Scenario files (YAML, docs/scenario.md). Every error names file:line: key.
#include <string>
#include <string_view>
#include <vector>

#include "spillway/input_error.hpp"
#include "spillway/sim/scenario.hpp"

namespace spillway::sim {

// Throws InputError. `source` names the file in messages; `baseDir` resolves a policy path
// written in the scenario (empty: the current directory).
Scenario parseScenario(std::string_view yamlText, const std::string& source,
                       const std::string& baseDir = {});
Scenario loadScenarioFile(const std::string& path);

// Puts `policy` into the scenario (simulate --policy, sweep --policy, a runbook's policy). A
// breaker-only policy — no models, degrade, limits or SLA classes — replaces the breaker
// alone: the scenario's models, degrade chain, limits and SLA classes stay in force.
void usePolicy(Scenario& scenario, Policy policy);

// The list under `key` of a YAML document (a drill runbook's `faults`) in the scenario file's
// fault syntax, checked against `scenario`'s instances and duration. Errors name
// `source`:line: key[i].field. An absent key gives no faults.
std::vector<FaultSpec> parseFaultsOf(std::string_view yamlText, const std::string& source,
                                     const std::string& key, const Scenario& scenario);

// What one simulation may cost (docs/limits.md): a week of simulated time covers a weekly
// cycle of diurnal load (the longest pattern a scenario describes); beyond that a run is a
// capacity study for another tool. The request budget keeps one run to minutes (the simulator
// makes ~1 M requests per second of CPU), the tick budget bounds the per-tick work and series.
inline constexpr Micros kMaxDuration = Micros{7} * 24 * 3600 * 1000000;
inline constexpr Micros kMaxDrain = Micros{3600} * 1000000;
inline constexpr Micros kMaxTick = Micros{3600} * 1000000;
inline constexpr double kMaxTicks = 10e6;
inline constexpr double kMaxRequests = 1e9;
// Instances over all model groups (each ~8 KB of simulator and breaker state), instances ×
// ticks (each instance's breaker rolls and is judged every tick, ~1 µs), and cache keys over
// all clients (each ~30 bytes of popularity table and last-answer time).
inline constexpr double kMaxInstances = 100000;
inline constexpr double kMaxInstanceTicks = 1e9;
inline constexpr double kMaxCacheKeys = 1e7;

// Checks a scenario against those limits (parseScenario does; call it again after changing the
// duration, e.g. --duration). Throws InputError(source, 0, field, ...), field "duration",
// "tick", "models", "clients[i].rate" or "clients[i].cache.keys".
void checkScenarioBudget(const Scenario& s);

// "must be at most 7d (docs/limits.md), got 104166d16h".
std::string tooLong(Micros d, Micros max);

}  // namespace spillway::sim
