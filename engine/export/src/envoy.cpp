// Policy → Envoy clusters (config.cluster.v3.Cluster): outlier_detection with the
// failure-percentage detector standing in for the error-rate rule, circuit_breakers from the
// retry budget and concurrency limits, slow start from the ramp.
#include <algorithm>
#include <cmath>

#include "mapping.hpp"

namespace spillway::exporter::detail {

namespace {

// Envoy ejects when the failure percentage >= the threshold, a whole percent: 0 would eject
// every host (100 − success rate >= 0 always holds), so the least is 1.
int failurePercentage(const BreakerConfig& c) {
  return std::max(1, static_cast<int>(std::lround(c.trip.errorRate * 100)));
}

// Modes a target cannot hold never get here (exportPolicy refuses them); Envoy holds the
// shadow and the disabled breaker as enforcing 0.
void noteMode(Notes& n, const BreakerConfig& cfg) {
  const std::string target = "Envoy";
  switch (cfg.mode) {
    case BreakerMode::Normal:
    case BreakerMode::ForcedOpen:
      return;
    case BreakerMode::MetricsOnly:
      n.exact(Topic::Mode, "mode metrics_only → " + target +
                               " enforcing_failure_percentage 0: hosts are judged and the "
                               "ejections logged (enforced: false), none ejected");
      return;
    case BreakerMode::Disabled:
      n.approx(Topic::Mode, "mode disabled → " + target +
                                " enforcing_failure_percentage 0: nothing is ejected, but Envoy "
                                "still judges and logs (Spillway records nothing)");
      return;
  }
}

void envoyNotes(Notes& n, const BreakerConfig& c, const ExportContext& ctx) {
  n.approx(Topic::Threshold,
           "error_rate " + num(c.trip.errorRate) + " over min_calls " + std::to_string(c.minCalls) +
               " → failure_percentage_threshold " + std::to_string(failurePercentage(c)) +
               " (whole percent, at least 1: 0 ejects every host; >= instead of strictly "
               "above) with "
               "failure_percentage_request_volume " +
               std::to_string(c.minCalls) +
               " and failure_percentage_minimum_hosts 1 (Spillway judges each instance alone); "
               "consecutive_5xx, gateway and success-rate detectors are disabled (enforcing 0): "
               "the policy has no such rules");
  if (c.window.type == WindowType::Count)
    n.gap(Topic::Window, "Envoy has no count-based window: " + windowText(c) +
                             " → the calls of each interval " + protoDur(c.window.length) +
                             " (window.length, unused by the policy)");
  n.approx(Topic::Window, "the failure percentage is judged per interval " +
                              protoDur(c.window.length) +
                              " at Envoy's sweeps (a tumbling window read every interval), not "
                              "over a sliding " +
                              formatDuration(c.window.length) + " window");
  const SlowChoice s = chooseSlow(c, "default", ctx);
  n.gap(Topic::Slow,
        "Envoy has no slow-call ejection: latency counts only through timeouts "
        "(reported as 504), so slow_rate " +
            num(c.trip.slowRate) +
            (s.threshold > 0 ? " above " + formatDuration(s.threshold) : std::string()) +
            " is not exported (envoyproxy/envoy#288)");
  noteSustain(n, "Envoy", c);
  n.approx(Topic::Backoff,
           "ejection time grows linearly, base_ejection_time × n (Spillway: × " +
               num(c.open.backoffMultiplier) +
               " per open), capped by max_ejection_time; the multiplier decays by one per "
               "interval while healthy (Spillway: one open per decay_after " +
               formatDuration(c.open.decayAfter) + ")");
  if (c.open.jitter > 0)
    n.approx(Topic::Backoff, "open.jitter ± " + num(c.open.jitter) +
                                 " → max_ejection_time_jitter (Envoy only adds, 0 … jitter)");
  n.gap(Topic::HalfOpen,
        "Envoy has no half-open probe: an ejected host simply returns to the load balancer at "
        "the first sweep after its ejection time (probe_share " +
            num(c.halfOpen.probeShare) + ", success_streak " +
            std::to_string(c.halfOpen.successStreak) + " not expressible)");
  if (c.ramp.duration > 0)
    n.gap(Topic::Ramp, "slow_start_window " + protoDur(c.ramp.duration) +
                           " is written, but Envoy re-enters slow start only when a host joins or "
                           "passes an active health check, not after an outlier ejection");
  n.approx(Topic::Scope,
           "max_ejection_percent 100 (Envoy's default 10 % would keep most sick instances in) "
           "and healthy_panic_threshold 0 (no panic routing to ejected hosts): Spillway opens "
           "any number of instances");
  noteMode(n, c);
  noteClassify(n, "Envoy (retry_on / HttpProtocolOptions.outlier_detection)", c);
  // Outlier detection's failure percentage counts 5xx (and local-origin failures) only.
  noteUncountedStatuses(n, "Envoy's outlier detection", c, [](int s) { return s >= 500; });
}

}  // namespace

ExportResult exportEnvoy(const Policy& policy, const ExportContext& ctx) {
  ExportResult r;
  r.target = DialectKind::Envoy;
  r.fileName = "envoy-clusters.yaml";
  Notes n;
  const Plan plan = makePlan(policy, ctx);
  envoyNotes(n, plan.base, ctx);
  // What Envoy holds as it is (the default entry's values).
  n.exact(Topic::Threshold, "min_calls " + std::to_string(plan.base.minCalls) +
                                " → failure_percentage_request_volume " +
                                std::to_string(plan.base.minCalls));
  noteOpenAtSweeps(n, "Envoy", "base_ejection_time", plan.base);
  if (plan.base.open.maxDuration >= plan.base.open.duration)
    n.exact(Topic::Backoff, "open.max_duration " + formatDuration(plan.base.open.maxDuration) +
                                " → max_ejection_time " + protoDur(plan.base.open.maxDuration));
  std::string t =
      "# Envoy clusters (config.cluster.v3.Cluster) with outlier detection, exported by Spillway.\n"
      "# Mapping notes and gaps: spillway-cli export --target envoy (docs/export.md).\n"
      "clusters:\n";
  std::size_t addr = 0;
  for (const Entry& e : plan.entries()) {
    const BreakerConfig& c = e.cfg;
    if (e.name != "default") envoyNotes(n, c, ctx);
    t += "- name: " + quoted(e.name) + "\n";
    t += "  type: STATIC\n  connect_timeout: 5s\n  lb_policy: ROUND_ROBIN\n";
    if (c.ramp.duration > 0)
      t += "  round_robin_lb_config:\n    slow_start_config:\n      slow_start_window: " +
           protoDur(c.ramp.duration) + "\n";
    t += "  common_lb_config:\n    healthy_panic_threshold:\n      value: 0\n";
    // Concurrency limits, not a state machine: the retry budget and the model's cap.
    t += "  circuit_breakers:\n    thresholds:\n    - priority: DEFAULT\n";
    if (auto it = policy.limits.models.find(e.name);
        it != policy.limits.models.end() && it->second.maxConcurrent > 0) {
      t += "      max_requests: " + std::to_string(it->second.maxConcurrent) + "\n";
      n.approx(Topic::Limits, "limits.models." + e.name + ".max_concurrent → max_requests", e.name);
    }
    t += "      retry_budget:\n        budget_percent:\n          value: " +
         pct(policy.degrade.retryBudget) + "\n        min_retry_concurrency: 3\n";
    // Without a degrade section the budget is the policy's default, not a choice: said.
    if (!policy.degrade.enabled)
      n.approx(Topic::Degrade,
               "retry_budget " + pct(policy.degrade.retryBudget) +
                   " % is degrade.retry_budget's default: the policy has no degrade section, "
                   "and Envoy will refuse retries beyond it (remove it to keep Envoy's "
                   "max_retries 3)",
               e.name);
    t += "      track_remaining: true\n";
    t += "  outlier_detection:\n";
    t += "    interval: " + protoDur(c.window.length) + "\n";
    t += "    consecutive_5xx: 5\n    enforcing_consecutive_5xx: 0\n";
    t += "    enforcing_consecutive_gateway_failure: 0\n    enforcing_success_rate: 0\n";
    t += "    failure_percentage_threshold: " + std::to_string(failurePercentage(c)) + "\n";
    // A shadow or disabled breaker judges without ejecting (noteMode).
    t += std::string("    enforcing_failure_percentage: ") +
         (c.mode == BreakerMode::Normal ? "100" : "0") + "\n";
    t += "    failure_percentage_minimum_hosts: 1\n";
    t += "    failure_percentage_request_volume: " + std::to_string(c.minCalls) + "\n";
    t += "    base_ejection_time: " + protoDur(c.open.duration) + "\n";
    t += "    max_ejection_time: " + protoDur(std::max(c.open.maxDuration, c.open.duration)) + "\n";
    if (c.open.jitter > 0)
      t += "    max_ejection_time_jitter: " +
           protoDur(static_cast<Micros>(c.open.jitter * static_cast<double>(c.open.duration))) +
           "\n";
    t += "    max_ejection_percent: 100\n";
    t += "  load_assignment:\n    cluster_name: " + quoted(e.name) + "\n    endpoints:\n";
    t += "    - lb_endpoints:\n";
    const std::vector<std::string> members =
        e.instances.empty() ? std::vector<std::string>{""} : e.instances;
    for (const std::string& m : members) {
      const std::size_t placeholders = addr;
      const std::string a = m.empty() ? placeholderAddress(addr++) : serverAddress(ctx, m, addr);
      const std::string todo = addr > placeholders ? "  # " + std::string(kTodoAddress) : "";
      const auto colon = a.find(':');
      t += "      - endpoint:\n";
      if (!m.empty()) t += "          hostname: " + quoted(m) + "\n";
      t += "          address:\n            socket_address:\n              address: " +
           a.substr(0, colon) + todo + "\n              port_value: " + a.substr(colon + 1) + "\n";
    }
  }
  if (addr > 0)
    n.approx(Topic::Scope,
             "endpoint addresses are placeholders (127.0.0.1:8001, ...): replace them "
             "with the instances' addresses");
  if (plan.models.size() > 1)
    n.approx(Topic::Scope,
             "one cluster per model; a validation replay emulates every model with "
             "the first cluster's values");
  for (const InstanceOverride& o : plan.instances)
    n.gap(Topic::Scope,
          "instance override " + o.instance +
              " is not expressible: outlier detection is configured per cluster, not per host",
          o.instance);
  r.text = std::move(t);
  r.notes = n.take();
  return r;
}

}  // namespace spillway::exporter::detail
