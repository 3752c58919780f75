// Policy → Istio DestinationRule (networking.istio.io/v1): trafficPolicy.outlierDetection with
// consecutive 5xx errors standing in for the error rate (Istio exposes no rate detector),
// connectionPool from the concurrency limits, loadBalancer.warmup from the ramp.
#include <cmath>

#include "mapping.hpp"

namespace spillway::exporter::detail {

namespace {

void istioNotes(Notes& n, const BreakerConfig& c, const std::string& scope) {
  const std::uint32_t k = failuresToTrip(c);
  n.approx(Topic::Threshold,
           "Istio has no failure-rate detector (pilot forces success-rate ejection off): "
           "error_rate " +
               num(c.trip.errorRate) + " over min_calls " + std::to_string(effectiveMinCalls(c)) +
               " → consecutive5xxErrors " + std::to_string(k) +
               " (the fewest failures that can trip it, but in a row: interleaved successes "
               "reset the count, so a partly failing instance may never be ejected)",
           scope);
  n.approx(Topic::Window,
           "interval " + protoDur(c.window.length) +
               " (the sweep that returns ejected hosts and decays the backoff)" +
               (c.window.type == WindowType::Count
                    ? "; " + windowText(c) + " dropped: consecutive errors need no window"
                    : ""),
           scope);
  n.gap(Topic::Slow,
        "Istio has no slow-call ejection: latency counts only through timeouts, so "
        "slow_rate " +
            num(c.trip.slowRate) + " is not exported",
        scope);
  noteSustain(n, "Istio", c);
  n.gap(Topic::Backoff,
        "Istio does not expose max_ejection_time: Envoy's 300 s cap applies (open.max_duration " +
            formatDuration(c.open.maxDuration) +
            " dropped), and ejections grow linearly "
            "(baseEjectionTime × n, Spillway: × " +
            num(c.open.backoffMultiplier) + ")",
        scope);
  noteJitterDecay(n, "Istio", c);
  n.gap(Topic::HalfOpen,
        "Istio has no half-open probe: an ejected host returns at the first sweep after "
        "baseEjectionTime × n (probe_share " +
            num(c.halfOpen.probeShare) + ", success_streak " +
            std::to_string(c.halfOpen.successStreak) + " not expressible)",
        scope);
  if (c.ramp.duration > 0)
    n.gap(Topic::Ramp,
          "loadBalancer.warmup " + protoDur(c.ramp.duration) +
              " is written, but warm-up applies to new endpoints, not to hosts "
              "returning from an outlier ejection",
          scope);
  n.approx(Topic::Scope,
           "maxEjectionPercent 100 and minHealthPercent 0 (no panic routing): "
           "Spillway opens any number of instances",
           scope);
  noteClassify(n, "Istio (outlierDetectionHttpErrorCodes / retryOn)", c);
  noteUncountedStatuses(
      n, "Istio's consecutive5xxErrors", c, [](int s) { return s >= 500; }, scope);
}

}  // namespace

ExportResult exportIstio(const Policy& policy, const ExportContext& ctx) {
  ExportResult r;
  r.target = DialectKind::Istio;
  r.fileName = "destination-rules.yaml";
  Notes n;
  const Plan plan = makePlan(policy, ctx);
  noteOpenAtSweeps(n, "Istio", "baseEjectionTime", plan.base);
  std::string t =
      "# Istio DestinationRules with outlier detection, exported by Spillway.\n"
      "# Mapping notes and gaps: spillway-cli export --target istio (docs/export.md).\n";
  bool first = true;
  for (const Entry& e : plan.entries()) {
    const BreakerConfig& c = e.cfg;
    istioNotes(n, c, first ? std::string() : e.name);
    if (!first) t += "---\n";
    first = false;
    const std::string host = e.name == "default" ? "*.svc.cluster.local" : e.name;
    t += "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  name: " +
         quoted(e.name) + "\nspec:\n  host: " + quoted(host) + "  # " + std::string(kTodoAddress) +
         " (the service's host)\n  trafficPolicy:\n";
    if (auto it = policy.limits.models.find(e.name);
        it != policy.limits.models.end() && it->second.maxConcurrent > 0) {
      const std::uint32_t maxc = it->second.maxConcurrent;
      const auto retries =
          static_cast<std::uint32_t>(std::max(1.0, std::ceil(policy.degrade.retryBudget * maxc)));
      t += "    connectionPool:\n      http:\n        http2MaxRequests: " + std::to_string(maxc) +
           "\n        maxRetries: " + std::to_string(retries) + "\n";
      n.approx(Topic::Limits,
               "limits.models." + e.name + ".max_concurrent " + std::to_string(maxc) +
                   " → connectionPool.http.http2MaxRequests; retry_budget " +
                   num(policy.degrade.retryBudget) + " of it → maxRetries " +
                   std::to_string(retries),
               e.name);
    } else {
      n.approx(Topic::Limits,
               "no concurrency limit in the policy: connectionPool is left at "
               "Istio's defaults");
    }
    if (c.ramp.duration > 0)
      t += "    loadBalancer:\n      simple: ROUND_ROBIN\n      warmup:\n        duration: " +
           protoDur(c.ramp.duration) + "\n";
    t += "    outlierDetection:\n";
    t += "      consecutive5xxErrors: " + std::to_string(failuresToTrip(c)) + "\n";
    t += "      interval: " + protoDur(c.window.length) + "\n";
    t += "      baseEjectionTime: " + protoDur(c.open.duration) + "\n";
    t += "      maxEjectionPercent: 100\n      minHealthPercent: 0\n";
  }
  if (plan.models.size() > 1)
    n.approx(Topic::Scope,
             "one DestinationRule per model (YAML documents); a validation replay "
             "emulates every model with the first rule's values");
  if (plan.models.empty())
    n.approx(Topic::Scope,
             "no model known: one rule for host *.svc.cluster.local — set "
             "spec.host to your service");
  else
    n.approx(Topic::Scope,
             "spec.host is the model's name, as a service in the rule's namespace would be "
             "called: set it to the model's service (marked TODO: address)");
  for (const InstanceOverride& o : plan.instances)
    n.gap(Topic::Scope,
          "instance override " + o.instance +
              " is not expressible: outlier detection is per host group",
          o.instance);
  r.text = std::move(t);
  r.notes = n.take();
  return r;
}

}  // namespace spillway::exporter::detail
