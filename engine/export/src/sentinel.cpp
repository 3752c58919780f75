// Policy → Sentinel DegradeRule JSON (1.8+): per resource an exception-ratio rule (grade 1) for
// the error rate and a slow-request-ratio rule (grade 0) for the slow rate.
#include <cmath>

#include "mapping.hpp"

namespace spillway::exporter::detail {

namespace {

std::string rule(const std::string& resource, int grade, const std::string& count,
                 const std::string& slowRatio, std::int64_t timeWindow, std::uint32_t minRequests,
                 std::int64_t statIntervalMs) {
  std::string s = "  {\"resource\": " + quoted(resource) + ", \"grade\": " + std::to_string(grade) +
                  ", \"count\": " + count;
  if (!slowRatio.empty()) s += ", \"slowRatioThreshold\": " + slowRatio;
  s += ", \"timeWindow\": " + std::to_string(timeWindow) +
       ", \"minRequestAmount\": " + std::to_string(minRequests) +
       ", \"statIntervalMs\": " + std::to_string(statIntervalMs) + "}";
  return s;
}

}  // namespace

ExportResult exportSentinel(const Policy& policy, const ExportContext& ctx) {
  ExportResult r;
  r.target = DialectKind::Sentinel;
  r.fileName = "degrade-rules.json";
  Notes n;
  const Plan plan = makePlan(policy, ctx);
  std::vector<std::string> rules;
  bool first = true;
  for (const Entry& e : plan.entries()) {
    const BreakerConfig& c = e.cfg;
    const std::string scope = first ? std::string() : e.name;
    if (first) r.select = e.name;
    first = false;
    // timeWindow is whole seconds (> 0); statIntervalMs whole milliseconds.
    const std::int64_t tw =
        std::max<std::int64_t>(1, (c.open.duration + kMicrosPerSecond - 1) / kMicrosPerSecond);
    if (c.open.duration % kMicrosPerSecond != 0)
      n.approx(Topic::Open,
               "timeWindow is whole seconds: open.duration " + formatDuration(c.open.duration) +
                   " → " + std::to_string(tw) + " s",
               scope);
    else
      n.exact(Topic::Open,
              "open.duration " + formatDuration(c.open.duration) + " → timeWindow " +
                  std::to_string(tw),
              scope);
    n.exact(Topic::Threshold,
            "min_calls " + std::to_string(c.minCalls) + " → minRequestAmount " +
                std::to_string(c.minCalls),
            scope);
    const std::int64_t stat = std::max<std::int64_t>(1, c.window.length / 1000);
    if (c.window.type == WindowType::Count)
      n.gap(Topic::Window,
            "Sentinel has no count-based window: window.calls " + std::to_string(c.window.calls) +
                " → statIntervalMs " + std::to_string(stat) + " of time",
            scope);
    n.approx(Topic::Window,
             "one tumbling bucket of statIntervalMs " + std::to_string(stat) +
                 " aligned to the epoch, not a sliding " + formatDuration(c.window.length) +
                 " window: a burst split "
                 "across two buckets is judged as two halves",
             scope);
    rules.push_back(rule(e.name, 1, num(c.trip.errorRate), "", tw, c.minCalls, stat));
    n.approx(Topic::Threshold,
             "error_rate " + num(c.trip.errorRate) + " → exception-ratio rule (grade 1) count " +
                 num(c.trip.errorRate) + " (strictly above, as Spillway) with minRequestAmount " +
                 std::to_string(c.minCalls),
             scope);
    const SlowChoice s = chooseSlow(c, e.name, ctx);
    n.approx(Topic::Slow, slowNote("slow-ratio rule (grade 0) count", s, c), scope);
    if (s.threshold > 0)
      rules.push_back(rule(e.name, 0, num(static_cast<double>(s.threshold / 1000)),
                           num(c.trip.slowRate), tw, c.minCalls, stat));
    noteSustain(n, "Sentinel", c);
    if (c.open.backoffMultiplier > 1 || c.open.maxDuration > c.open.duration)
      n.gap(Topic::Backoff,
            "Sentinel re-arms the same timeWindow on every reopen: no backoff "
            "(× " +
                num(c.open.backoffMultiplier) + " up to " + formatDuration(c.open.maxDuration) +
                " dropped)",
            scope);
    noteJitterDecay(n, "Sentinel", c);
    n.gap(Topic::HalfOpen,
          "Sentinel half-open admits exactly one probe and blocks the rest; "
          "success_streak " +
              std::to_string(c.halfOpen.successStreak) + " → 1, probe_share " +
              num(c.halfOpen.probeShare) + " → one request",
          scope);
    noteRamp(n, "Sentinel", c);
    noteClassify(n, "Sentinel (Tracer.trace / the integration's exception mapping)", c);
  }
  if (plan.models.empty())
    n.approx(Topic::Scope,
             "no model known: the rules name the resource \"default\" — rename "
             "it to your Sentinel resource");
  if (plan.models.size() > 1)
    n.approx(Topic::Scope,
             "rules per model resource; a validation replay emulates every model "
             "with the first resource's rules");
  for (const InstanceOverride& o : plan.instances)
    n.gap(Topic::Scope,
          "instance override " + o.instance +
              " is not expressible: DegradeRules are per resource (model)",
          o.instance);
  std::string t = "[\n";
  for (std::size_t i = 0; i < rules.size(); ++i)
    t += rules[i] + (i + 1 < rules.size() ? ",\n" : "\n");
  t += "]\n";
  r.text = std::move(t);
  r.notes = n.take();
  return r;
}

}  // namespace spillway::exporter::detail
