#pragma once
// Policy files (YAML, docs/policy.md). Every error names file:line: key.
#include <string>
#include <string_view>
#include <vector>

#include "spillway/input_error.hpp"
#include "spillway/policy.hpp"

namespace spillway {

// Throws InputError. `source` is the name used in messages (a path, or "<inline>").
Policy parsePolicy(std::string_view yamlText, const std::string& source);
Policy loadPolicyFile(const std::string& path);

// Writes a policy that parsePolicy reads back to an equal policy. Numbers are the shortest
// text that reads back as the same double (0.45, not 0.45000000000000001).
std::string policyToYaml(const Policy& policy);

// The shortest decimal text that reads back as exactly `v` (std::to_chars): 0.45, 0.001, 1e-07,
// 0.30000000000000004 for 0.1 + 0.2.
std::string yamlNumber(double v);

// What changed from `base` to `changed`, one line per key in the policy file's own spelling:
// "breaker.trip.slow_rate: 0.4 → 0.45", "overrides.models.chat-72b.min_calls: (unset) → 30".
// Compares the written files, so every section and override counts and nothing else does.
std::vector<std::string> policyChanges(const Policy& base, const Policy& changed);

// Provenance for a reviewer, written as a `#` comment block above the policy.
struct PolicyHeader {
  std::string source;              // where the policy came from (a file, a scenario, a sweep)
  const Policy* base = nullptr;    // "what changed" is against this; null: not stated
  std::string baseName;            // how to name the base ("the built-in default"); "" = its name
  std::vector<std::string> kpis;   // headline KPI lines, already formatted
  std::vector<std::string> notes;  // anything else (the tool and version, the command line)
};
// policyToYaml with the header comment on top; parsePolicy reads it back to the same policy.
std::string policyToYamlWithHeader(const Policy& policy, const PolicyHeader& header);

}  // namespace spillway
