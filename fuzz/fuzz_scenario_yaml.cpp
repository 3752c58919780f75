// libFuzzer: the scenario YAML reader (sim parseScenario), as `simulate FILE`, `knee` and the
// console read a scenario. Any input must end in a scenario within the run budget or an
// InputError. A `policy:` path is resolved against a directory that does not exist; an
// absolute one is read through the bounded reader like any policy file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "spillway/input_error.hpp"
#include "spillway/sim/scenario_yaml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  try {
    const spillway::sim::Scenario s =
        spillway::sim::parseScenario(in, "fuzz.yaml", "/nonexistent-fuzz-dir");
    // What read is within the documented limits.
    if (s.duration > spillway::sim::kMaxDuration || s.models.empty() || s.clients.empty())
      std::abort();
  } catch (const spillway::InputError&) {
  }
  return 0;
}
