// Names a policy gives to models and instances, against the scenario it runs on.
#include "spillway/sim/policy_match.hpp"

#include <algorithm>
#include <set>

namespace spillway::sim {

std::vector<std::string> unmatchedPolicyNames(const Scenario& sc, const Policy& p) {
  std::set<std::string> models, instances;
  for (const ModelSpec& m : sc.models) {
    models.insert(m.name);
    for (const InstanceSpec& i : m.instances) instances.insert(i.name);
  }
  std::vector<std::string> out;
  auto model = [&](const std::string& name, const std::string& where, const char* lost) {
    if (!models.count(name))
      out.push_back(where + ": the scenario has no model '" + name + "' (" + lost + ")");
  };
  for (const auto& [name, profile] : p.models)
    model(name, "models." + name, "its profile is unused");
  for (const auto& [name, o] : p.modelOverrides)
    model(name, "overrides.models." + name, "the override is unused");
  for (const auto& [name, o] : p.instanceOverrides)
    if (!instances.count(name))
      out.push_back("overrides.instances." + name + ": the scenario has no instance '" + name +
                    "' (the override is unused)");
  for (const auto& [primary, chain] : p.degrade.chains) {
    model(primary, "degrade.chains." + primary, "the chain is unused");
    for (const std::string& backup : chain)
      model(backup, "degrade.chains." + primary, "a backup it cannot route to");
  }
  for (const auto& [name, cls] : p.slaClasses)
    for (const std::string& to : cls.degradeTo)
      if (to != kSlaCache) model(to, "sla_classes." + name + ".degrade_to", "a step it skips");
  for (const auto& [name, rule] : p.limits.models)
    model(name, "limits.models." + name, "the limit is unused");
  return out;
}

}  // namespace spillway::sim
