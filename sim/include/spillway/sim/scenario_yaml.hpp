#pragma once
// Scenario files (YAML, docs/scenario.md). Every error names file:line: key.
#include <string>
#include <string_view>

#include "spillway/input_error.hpp"
#include "spillway/sim/scenario.hpp"

namespace spillway::sim {

// Throws InputError. `source` names the file in messages; `baseDir` resolves a policy path
// written in the scenario (empty: the current directory).
Scenario parseScenario(std::string_view yamlText, const std::string& source,
                       const std::string& baseDir = {});
Scenario loadScenarioFile(const std::string& path);

}  // namespace spillway::sim
