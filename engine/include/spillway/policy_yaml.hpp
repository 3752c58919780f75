#pragma once
// Policy files (YAML, docs/policy.md). Every error names file:line: key.
#include <string>
#include <string_view>

#include "spillway/input_error.hpp"
#include "spillway/policy.hpp"

namespace spillway {

// Throws InputError. `source` is the name used in messages (a path, or "<inline>").
Policy parsePolicy(std::string_view yamlText, const std::string& source);
Policy loadPolicyFile(const std::string& path);

// Effective breaker config of an instance: default ← model override ← instance override.
BreakerConfig resolveBreaker(const Policy& policy, const std::string& model,
                             const std::string& instance);

// A partial `breaker` section holding only what `changed` sets differently from `base` (for
// a per-model or per-instance override); "{}" when they agree.
std::string breakerOverrideYaml(const BreakerConfig& base, const BreakerConfig& changed);

// Writes a policy that parsePolicy reads back to an equal policy.
std::string policyToYaml(const Policy& policy);

}  // namespace spillway
