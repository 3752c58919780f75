// libFuzzer: the policy YAML reader (engine parsePolicy), as `replay --policy`, `export` and
// the console read a policy file. Any input must end in a policy or an InputError — never in
// another exception (a YAML::TypedBadConversion from a complex key `? [a]` was one). A policy
// that reads must write back (policyToYaml) to text that reads again, and its overrides must
// resolve.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "spillway/input_error.hpp"
#include "spillway/policy_yaml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  spillway::Policy p;
  try {
    p = spillway::parsePolicy(in, "fuzz.yaml");
  } catch (const spillway::InputError&) {
    return 0;
  }
  for (const auto& [name, o] : p.modelOverrides) (void)spillway::resolveBreaker(p, name, "");
  for (const auto& [name, o] : p.instanceOverrides) (void)spillway::resolveBreaker(p, "", name);
  const std::string text = spillway::policyToYaml(p);
  try {
    (void)spillway::parsePolicy(text, "written.yaml");
  } catch (const spillway::InputError& e) {
    std::fprintf(stderr, "a policy that read does not read back: %s\n%s\n", e.what(), text.c_str());
    std::abort();
  }
  return 0;
}
