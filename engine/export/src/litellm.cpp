// Policy → LiteLLM proxy `router_settings`: allowed_fails (v1 failure counter) standing in for
// the error rate, cooldown_time for the open period, fallbacks from the degrade chains.
#include <algorithm>
#include <cmath>

#include "mapping.hpp"

namespace spillway::exporter::detail {

namespace {

// The degrade chains LiteLLM can hold: explicit chains, else the automatic order of
// docs/policy.md (profiled models by quality, tier, name) within max_quality_drop.
std::vector<std::pair<std::string, std::vector<std::string>>> chains(const Policy& p, Notes& n) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  if (!p.degrade.enabled) return out;
  for (const auto& [primary, chain] : p.degrade.chains) out.emplace_back(primary, chain);
  for (const auto& [primary, prof] : p.models) {
    if (p.degrade.chains.count(primary)) continue;
    std::vector<std::pair<std::string, const ModelProfile*>> c;
    for (const auto& [m, q] : p.models)
      if (m != primary && q.quality >= prof.quality - p.degrade.maxQualityDrop - 1e-12)
        c.emplace_back(m, &q);
    std::sort(c.begin(), c.end(), [](const auto& a, const auto& b) {
      if (a.second->quality != b.second->quality) return a.second->quality > b.second->quality;
      if (a.second->tier != b.second->tier) return a.second->tier < b.second->tier;
      return a.first < b.first;
    });
    if (c.empty()) continue;
    std::vector<std::string> names;
    for (const auto& x : c) names.push_back(x.first);
    out.emplace_back(primary, names);
    n.approx(Topic::Degrade,
             "fallbacks for " + primary +
                 ": the automatic order (quality, tier, name) within "
                 "max_quality_drop; per-request tag and context matching is not "
                 "expressible in LiteLLM fallbacks",
             primary);
  }
  return out;
}

}  // namespace

ExportResult exportLitellm(const Policy& policy, const ExportContext& ctx) {
  ExportResult r;
  r.target = DialectKind::Litellm;
  r.fileName = "litellm-config.yaml";
  Notes n;
  const Plan plan = makePlan(policy, ctx);
  const BreakerConfig& c = plan.base;
  const std::uint32_t k = failuresToTrip(c);
  const std::uint32_t allowed = k > 0 ? k - 1 : 0;
  n.approx(Topic::Threshold,
           "LiteLLM counts failures per deployment, not a rate: error_rate " +
               num(c.trip.errorRate) + " over min_calls " + std::to_string(effectiveMinCalls(c)) +
               " → allowed_fails " + std::to_string(allowed) + " (cool down on failure " +
               std::to_string(k) + "; the counter lives cooldown_time after its last failure)");
  if (allowed == 3)
    n.gap(Topic::Threshold,
          "allowed_fails 3 is LiteLLM's default, which selects its v2 rule instead (> 50 % "
          "failures with >= 5 requests in the current minute, multi-deployment groups only)");
  n.approx(Topic::Window,
           "no sliding window: the v1 counter expires cooldown_time after the last "
           "failure (" +
               windowText(c) + " dropped)");
  n.gap(Topic::Slow,
        "LiteLLM has no slow-call cooldown (timeouts, 408, count as failures), so "
        "slow_rate " +
            num(c.trip.slowRate) + " is not exported");
  noteSustain(n, "LiteLLM", c);
  const double cool = std::max(1.0, std::round(static_cast<double>(c.open.duration) / 1e5) / 10);
  n.approx(Topic::Open, "open.duration " + formatDuration(c.open.duration) + " → cooldown_time " +
                            num(cool) + " (seconds)");
  if (c.open.backoffMultiplier > 1)
    n.gap(Topic::Backoff, "LiteLLM has no backoff: every cooldown lasts cooldown_time (× " +
                              num(c.open.backoffMultiplier) + " up to " +
                              formatDuration(c.open.maxDuration) + " dropped)");
  noteJitterDecay(n, "LiteLLM", c);
  n.gap(Topic::HalfOpen,
        "LiteLLM has no half-open state: a deployment returns with full traffic "
        "when its cooldown expires (probe_share " +
            num(c.halfOpen.probeShare) + ", success_streak " +
            std::to_string(c.halfOpen.successStreak) + " not expressible)");
  noteRamp(n, "LiteLLM", c);
  // LiteLLM decides what may cool a deployment itself (_is_cooldown_required), not from config.
  n.gap(Topic::Classify,
        "LiteLLM counts 429, 401, 404, 408 and every 5xx (and other non-4xx) toward a cooldown "
        "whatever the policy's classify says; other 4xx never");
  // Which rule the file selects decides whether a group's only deployment can cool down.
  n.gap(Topic::Scope,
        std::string(allowed == 3 ? "LiteLLM's v2 rule never cools the only deployment of a model "
                                   "group"
                                 : "the v1 counter (allowed_fails " + std::to_string(allowed) +
                                       ") cools even a group's only deployment, leaving the "
                                       "group without one") +
            "; connection errors never cool a deployment");
  for (const Entry& e : plan.models)
    if (std::find_if(policy.modelOverrides.begin(), policy.modelOverrides.end(),
                     [&](const auto& o) { return o.first == e.name; }) !=
        policy.modelOverrides.end())
      n.gap(Topic::Scope,
            "model override " + e.name +
                " is not expressible in router_settings (per-deployment "
                "model_info.allowed_fails / cooldown_time exist only in LiteLLM "
                "releases after mid-2026)",
            e.name);
  for (const InstanceOverride& o : plan.instances)
    n.gap(Topic::Scope, "instance override " + o.instance + " is not expressible", o.instance);

  const auto fb = chains(policy, n);
  const int retries = policy.degrade.enabled && policy.degrade.retryBudget > 0 ? 1 : 0;
  n.approx(Topic::Degrade,
           retries ? "num_retries 1: one re-pick within the model group per request (Spillway "
                     "bounds its re-routes by retry_budget " +
                         num(policy.degrade.retryBudget) + " of the traffic instead)"
                   : "num_retries 0: the policy has no degrade section (no gateway re-routes)");
  if (!policy.degrade.enabled) n.approx(Topic::Degrade, "no degrade section: no fallbacks");
  std::string t =
      "# LiteLLM proxy config.yaml router_settings, exported by Spillway.\n"
      "# Mapping notes and gaps: spillway-cli export --target litellm (docs/export.md).\n"
      "router_settings:\n";
  t += "  allowed_fails: " + std::to_string(allowed) + "\n";
  t += "  cooldown_time: " + num(cool) + "\n";
  t += "  num_retries: " + std::to_string(retries) + "\n";
  if (!fb.empty()) {
    t += "  fallbacks:\n";
    for (const auto& [primary, backups] : fb) {
      t += "    - " + quoted(primary) + ": [";
      for (std::size_t i = 0; i < backups.size(); ++i) t += (i ? ", " : "") + quoted(backups[i]);
      t += "]\n";
    }
  }
  (void)ctx;
  r.text = std::move(t);
  r.notes = n.take();
  return r;
}

}  // namespace spillway::exporter::detail
