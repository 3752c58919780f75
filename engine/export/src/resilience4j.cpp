// Policy → Resilience4j Spring `application.yml`: resilience4j.circuitbreaker.configs.default
// plus instances.<model> (baseConfig: default and only the keys that differ) for overrides.
#include <algorithm>
#include <cmath>

#include "mapping.hpp"

namespace spillway::exporter::detail {

namespace {

using Props = std::vector<std::pair<std::string, std::string>>;

std::string yamlName(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  return plain ? s : quoted(s);
}

// The properties of one effective breaker config, in a fixed order; notes for what moved.
Props props(const BreakerConfig& c, const std::string& model, const ExportContext& ctx, Notes& n,
            const std::string& scope) {
  Props p;
  if (c.window.type == WindowType::Time) {
    const Micros secs =
        std::max<Micros>(1, (c.window.length + kMicrosPerSecond - 1) / kMicrosPerSecond);
    p.emplace_back("slidingWindowType", "TIME_BASED");
    p.emplace_back("slidingWindowSize", std::to_string(secs));
    if (c.window.bucket != seconds(1) || c.window.length % kMicrosPerSecond != 0)
      n.approx(Topic::Window,
               "TIME_BASED windows are whole 1-second buckets: window " +
                   formatDuration(c.window.length) + " / bucket " +
                   formatDuration(c.window.bucket) + " → slidingWindowSize " + std::to_string(secs),
               scope);
  } else {
    p.emplace_back("slidingWindowType", "COUNT_BASED");
    p.emplace_back("slidingWindowSize", std::to_string(c.window.calls));
  }
  p.emplace_back("minimumNumberOfCalls", std::to_string(c.minCalls));
  p.emplace_back("failureRateThreshold", pct(c.trip.errorRate));
  const SlowChoice s = chooseSlow(c, model, ctx);
  if (s.threshold > 0) {
    p.emplace_back("slowCallRateThreshold", pct(c.trip.slowRate));
    p.emplace_back("slowCallDurationThreshold", dur(s.threshold));
  } else {
    // Resilience4j's own defaults: only an all-slow window over 60 s trips.
    p.emplace_back("slowCallRateThreshold", "100");
    p.emplace_back("slowCallDurationThreshold", dur(seconds(60)));
  }
  n.approx(Topic::Slow, slowNote("slowCallDurationThreshold", s, c), scope);
  if (s.threshold == 0)
    n.gap(Topic::Slow,
          "Resilience4j cannot switch the slow rule off: slowCallRateThreshold 100 with "
          "slowCallDurationThreshold 1m (its defaults) still opens when every call in the "
          "window takes a minute or more (>=), which long reasoning calls can",
          scope);
  p.emplace_back("waitDurationInOpenState", dur(c.open.duration));
  if (c.open.backoffMultiplier > 1) {
    p.emplace_back("enableExponentialBackoff", "true");
    p.emplace_back("exponentialBackoffMultiplier", num(c.open.backoffMultiplier));
    p.emplace_back("exponentialMaxWaitDurationInOpenState", dur(c.open.maxDuration));
  } else {
    p.emplace_back("enableExponentialBackoff", "false");
  }
  p.emplace_back("permittedNumberOfCallsInHalfOpenState",
                 std::to_string(std::max<std::uint32_t>(1, c.halfOpen.successStreak)));
  // Spillway leaves OPEN when the period is over, not on the next call.
  p.emplace_back("automaticTransitionFromOpenToHalfOpenEnabled", "true");
  switch (c.mode) {
    case BreakerMode::Normal:
      break;
    case BreakerMode::MetricsOnly:
      p.emplace_back("initialState", "METRICS_ONLY");
      break;
    case BreakerMode::Disabled:
      p.emplace_back("initialState", "DISABLED");
      break;
    case BreakerMode::ForcedOpen:
      p.emplace_back("initialState", "FORCED_OPEN");
      break;
  }
  return p;
}

void commonNotes(Notes& n, const BreakerConfig& c) {
  n.approx(Topic::Threshold,
           "Resilience4j trips when a rate is >= its threshold (Spillway: strictly above): at "
           "exactly " +
               pct(c.trip.errorRate) + " % failures Resilience4j opens, Spillway does not");
  noteSustain(n, "Resilience4j", c);
  if (c.open.backoffMultiplier > 1)
    n.approx(Topic::Backoff,
             "backoff: waitDurationInOpenState × exponentialBackoffMultiplier^(attempt-1), capped "
             "by exponentialMaxWaitDurationInOpenState; Resilience4j resets the attempts on close "
             "(Spillway forgets one open per open.decay_after " +
                 formatDuration(c.open.decayAfter) + " healthy)");
  noteJitterDecay(
      n, "Resilience4j (Spring cannot combine randomized wait with exponential backoff)", c);
  n.approx(Topic::HalfOpen,
           "HALF_OPEN admits exactly permittedNumberOfCallsInHalfOpenState calls (a count, not "
           "probe_share " +
               num(c.halfOpen.probeShare) +
               " of traffic) and closes when their rates are below the thresholds, not only "
               "after a streak: success_streak " +
               std::to_string(c.halfOpen.successStreak) + " → " +
               std::to_string(std::max<std::uint32_t>(1, c.halfOpen.successStreak)) + " permits");
  noteRamp(n, "Resilience4j", c);
  noteClassify(n, "Resilience4j (recordExceptions / recordResultPredicate in code)", c);
  n.gap(Topic::Classify,
        "Resilience4j records every exception as a failure unless told otherwise: WebClient and "
        "RestTemplate throw on 4xx too, while the policy counts only what its classify lists — "
        "set recordExceptions / ignoreExceptions in application.yml or code to match it");
}

// What Resilience4j holds as it is (the default entry's values).
void exactNotes(Notes& n, const BreakerConfig& c) {
  if (c.window.type == WindowType::Count)
    n.exact(Topic::Window, "window.calls " + std::to_string(c.window.calls) +
                               " → slidingWindowType COUNT_BASED, slidingWindowSize " +
                               std::to_string(c.window.calls));
  else if (c.window.bucket == seconds(1) && c.window.length % kMicrosPerSecond == 0)
    n.exact(Topic::Window, "window " + formatDuration(c.window.length) +
                               " → slidingWindowType TIME_BASED, slidingWindowSize " +
                               std::to_string(c.window.length / kMicrosPerSecond));
  n.exact(Topic::Threshold, "min_calls " + std::to_string(c.minCalls) + " → minimumNumberOfCalls " +
                                std::to_string(c.minCalls));
  n.exact(Topic::Open, "open.duration " + formatDuration(c.open.duration) +
                           " → waitDurationInOpenState " + dur(c.open.duration));
}

}  // namespace

ExportResult exportResilience4j(const Policy& policy, const ExportContext& ctx) {
  ExportResult r;
  r.target = DialectKind::Resilience4j;
  r.fileName = "application.yml";
  Notes n;
  const Plan plan = makePlan(policy, ctx);
  const Props base = props(plan.base, "default", ctx, n, "");
  commonNotes(n, plan.base);
  exactNotes(n, plan.base);

  std::string t =
      "# Resilience4j CircuitBreaker (Spring Boot application.yml), exported by Spillway.\n"
      "# Mapping notes and gaps: spillway-cli export --target resilience4j (docs/export.md).\n"
      "resilience4j:\n"
      "  circuitbreaker:\n"
      "    configs:\n"
      "      default:\n";
  for (const auto& [k, v] : base) t += "        " + k + ": " + v + "\n";

  // instances.<name>: baseConfig default plus the keys that differ (all of them listed once).
  std::string inst;
  auto instance = [&](const std::string& name, const BreakerConfig& cfg, const std::string& model) {
    Props p = props(cfg, model, ctx, n, name);
    // An enforcing instance under a default that is not: initialState has CLOSED to say so.
    if (cfg.mode == BreakerMode::Normal &&
        std::any_of(base.begin(), base.end(),
                    [](const auto& kv) { return kv.first == "initialState"; }))
      p.emplace_back("initialState", "CLOSED");
    inst += "      " + yamlName(name) + ":\n        baseConfig: default\n";
    for (const auto& kv : p)
      if (std::find(base.begin(), base.end(), kv) == base.end())
        inst += "        " + kv.first + ": " + kv.second + "\n";
    // A key the default has and this one does not (e.g. initialState) cannot be unset.
    for (const auto& kv : base)
      if (std::none_of(p.begin(), p.end(), [&](const auto& q) { return q.first == kv.first; }))
        n.gap(Topic::Mode,
              "instances." + name + " inherits " + kv.first + ": " + kv.second +
                  " from configs.default (Spring cannot unset a key)",
              name);
  };
  for (const Entry& e : plan.models) instance(e.name, e.cfg, e.name);
  for (const InstanceOverride& o : plan.instances) {
    instance(o.instance, o.cfg, o.model);
    n.approx(Topic::Scope,
             "instance override " + o.instance + " → instances." + o.instance +
                 " (name the CircuitBreaker after the instance in code)",
             o.instance);
  }
  if (!inst.empty()) t += "    instances:\n" + inst;
  r.text = std::move(t);
  r.notes = n.take();
  return r;
}

}  // namespace spillway::exporter::detail
