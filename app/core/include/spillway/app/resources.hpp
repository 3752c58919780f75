#pragma once
// What both front ends load the same way: the built-in resources (default policy, sample trace,
// seed scenarios, compiled in as Qt resources) and files given by path, each read with the
// input limits of docs/limits.md.
#include <cstddef>
#include <string>
#include <string_view>

#include "spillway/policy.hpp"
#include "spillway/sim/scenario.hpp"

namespace spillway::app {

inline constexpr const char* kDefaultPolicy = ":/spillway/policies/default.yaml";
inline constexpr const char* kSampleTrace = ":/spillway/traces/seed000-sample.jsonl";
inline constexpr const char* kSampleFaults = ":/spillway/traces/seed000-sample.faults.jsonl";
inline constexpr const char* kBuiltinScenarioDir = ":/spillway/scenarios/";

// A file ("-" = stdin) or a built-in resource (":/spillway/…"), at most `limit` bytes; throws
// InputError naming the path.
std::string readWhole(const std::string& path, std::size_t limit, std::string_view what);
// A policy file, or the built-in default when `path` is empty.
Policy loadPolicy(const std::string& path);
// A built-in scenario by name (seed-000 … seed-003) or a scenario file.
sim::Scenario loadScenario(const std::string& nameOrPath);

}  // namespace spillway::app
