#include "spillway/policy.hpp"

#include "spillway/input_error.hpp"

namespace spillway {

ClassifyConfig::ClassifyConfig() {
  failureStatus.fill(false);
  failureStatus[0] = true;
  for (int i = 500; i < 600; ++i) failureStatus[i] = true;
  failureStatus[429] = true;
}

void applyOverride(const BreakerOverride& o, BreakerConfig& b) {
  forEachBreakerField([&](auto get) {
    if (const auto& v = get(o)) get(b) = *v;
  });
}

BreakerOverride overrideBetween(const BreakerConfig& base, const BreakerConfig& changed) {
  BreakerOverride o;
  forEachBreakerField([&](auto get) {
    if (!(get(base) == get(changed))) get(o) = get(changed);
  });
  return o;
}

bool isEmpty(const BreakerOverride& o) {
  bool any = false;
  forEachBreakerField([&](auto get) { any = any || get(o).has_value(); });
  return !any;
}

bool operator==(const BreakerOverride& a, const BreakerOverride& b) {
  bool same = true;
  forEachBreakerField([&](auto get) { same = same && get(a) == get(b); });
  return same;
}

bool operator==(const BreakerConfig& a, const BreakerConfig& b) {
  bool same = true;
  forEachBreakerField([&](auto get) { same = same && get(a) == get(b); });
  return same;
}

std::optional<BreakerFlaw> breakerFlaw(const BreakerConfig& b) {
  if (b.window.bucket > b.window.length)
    return BreakerFlaw{"window.bucket", "window.length",
                       "window.bucket must not be longer than window.length"};
  if (b.window.length / b.window.bucket > 3600)
    return BreakerFlaw{"window.bucket", "window.length",
                       "window.length / bucket must be at most 3600 buckets"};
  if (b.open.maxDuration < b.open.duration)
    return BreakerFlaw{"open.max_duration", "open.duration",
                       "open.max_duration must not be shorter than open.duration"};
  for (std::size_t i = 0; i < b.halfOpen.release.size(); ++i)
    if (b.halfOpen.release[i].probes > b.halfOpen.maxProbes)
      return BreakerFlaw{"half_open.release[" + std::to_string(i) + "].probes",
                         "half_open.max_probes", "must not exceed half_open.max_probes",
                         static_cast<int>(i)};
  return std::nullopt;
}

BreakerConfig resolveBreaker(const Policy& policy, const std::string& model,
                             const std::string& instance) {
  BreakerConfig b = policy.breaker;
  const BreakerOverride* last = nullptr;
  std::string where;
  auto apply = [&](const std::map<std::string, BreakerOverride>& m, const std::string& key,
                   const char* scope) {
    if (key.empty()) return;
    if (auto it = m.find(key); it != m.end()) {
      applyOverride(it->second, b);
      last = &it->second;
      where = std::string("overrides.") + scope + "." + key;
    }
  };
  apply(policy.modelOverrides, model, "models");
  apply(policy.instanceOverrides, instance, "instances");
  if (last)
    if (auto flaw = breakerFlaw(b))
      throw InputError(
          "policy '" + policy.name + "'", last->line, where + "." + flaw->field,
          flaw->what + " (with the overrides of " + model + " and " + instance + " together)");
  return b;
}

}  // namespace spillway
