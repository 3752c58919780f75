#pragma once
// A policy names models and instances (profiles, overrides, degrade chains, SLA classes' steps,
// model limits); against a scenario that lacks one, that part is dropped without a word — a
// typo in a backup's name silently removes the backup. Tools print these as warnings: a
// policy written for a whole fleet may name models one scenario does not have.
#include <string>
#include <vector>

#include "spillway/sim/scenario.hpp"

namespace spillway::sim {

// One line per name the scenario has no model or instance of: "degrade.chains.chat-72b: the
// scenario has no model 'chat-33b' (a backup it cannot route to)".
std::vector<std::string> unmatchedPolicyNames(const Scenario& scenario, const Policy& policy);
// The scenario's own policy.
inline std::vector<std::string> unmatchedPolicyNames(const Scenario& scenario) {
  return unmatchedPolicyNames(scenario, scenario.policy);
}

}  // namespace spillway::sim
