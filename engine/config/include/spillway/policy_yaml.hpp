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

// Writes a policy that parsePolicy reads back to an equal policy.
std::string policyToYaml(const Policy& policy);

}  // namespace spillway
