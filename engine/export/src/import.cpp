// Native configuration → Spillway policy: Resilience4j application.yml, Envoy outlier detection,
// Sentinel DegradeRules. The dialect's own parser reads the file (same keys, same errors); the
// importer maps its config to the closest native breaker and notes what has no equivalent.
// The values an exporter writes map back to the values it was given, so export → import →
// export reproduces the text.
#include <array>
#include <cmath>

#include "mapping.hpp"
#include "spillway/dialects/envoy.hpp"
#include "spillway/dialects/native_config.hpp"
#include "spillway/dialects/resilience4j.hpp"
#include "spillway/dialects/sentinel.hpp"
#include "spillway/policy_yaml.hpp"

namespace spillway::exporter::detail {

namespace {

using dialects::NativeReader;

// Percent written as a float (Resilience4j) → a share with the binary noise removed.
double share(double percent) {
  return std::round(percent * 1e4) / 1e6;
}

// Every instance / cluster / resource after the first that differs becomes a model override.
void addOverride(Policy& p, const std::string& name, const BreakerConfig& cfg, Notes& n) {
  BreakerOverride o = overrideBetween(p.breaker, cfg);
  if (isEmpty(o)) {
    n.approx(Topic::Scope, name + " has the default values: no override", name);
    return;
  }
  p.modelOverrides[name] = std::move(o);
  n.approx(Topic::Scope, name + " → overrides.models." + name, name);
}

// One-second buckets, coarser for a window so long it would need more than a policy allows
// (3600), finer for one shorter than a second.
Micros bucketFor(Micros length) {
  if (length <= seconds(3600)) return std::min(seconds(1), length);
  return seconds((length + seconds(3600) - 1) / seconds(3600));  // whole seconds, rounded up
}

// `ramp`: whether the source has no ramp at all (Envoy's slow start is read apart).
void commonImportNotes(Notes& n, const std::string& from, const std::string& scope,
                       bool ramp = true) {
  n.approx(Topic::Sustain, from + " trips at once: trip.sustain 0s", scope);
  if (ramp) n.approx(Topic::Ramp, from + " has no ramp: ramp off (full traffic on close)", scope);
}

// ---- Resilience4j ----------------------------------------------------------------------------

BreakerConfig fromR4j(const dialects::Resilience4jConfig& c, Notes& n, const std::string& scope) {
  using W = dialects::Resilience4jConfig::Window;
  BreakerConfig b;
  if (c.slidingWindowType == W::TimeBased) {
    b.window.type = WindowType::Time;
    b.window.length = seconds(c.slidingWindowSize);
    b.window.bucket = bucketFor(b.window.length);
  } else {
    b.window.type = WindowType::Count;
    b.window.calls = c.slidingWindowSize;
  }
  b.minCalls = c.minimumNumberOfCalls;
  b.trip.errorRate = share(c.failureRateThreshold);
  b.trip.slowRate = share(c.slowCallRateThreshold);
  b.trip.sustain = 0;
  n.approx(
      Topic::Threshold,
      "Resilience4j trips at >= the threshold, Spillway strictly above: failureRateThreshold " +
          num(c.failureRateThreshold) + " → trip.error_rate " + num(b.trip.errorRate),
      scope);
  b.slow.absolute = c.slowCallDurationThreshold;
  n.approx(Topic::Slow,
           "slowCallDurationThreshold " + formatDuration(c.slowCallDurationThreshold) +
               " → slow.absolute (a fixed threshold; switch to slow.k × the learned "
               "P99 to follow each instance)",
           scope);
  b.open.duration = c.waitDurationInOpenState;
  if (c.enableExponentialBackoff) {
    b.open.backoffMultiplier = c.exponentialBackoffMultiplier;
    b.open.maxDuration = c.exponentialMaxWaitDurationInOpenState;
    if (b.open.maxDuration == kForever) {
      b.open.maxDuration = std::max(b.open.duration, seconds(3600));
      n.gap(Topic::Backoff,
            "no exponentialMaxWaitDurationInOpenState: open.max_duration capped "
            "at 1h",
            scope);
    }
  } else {
    b.open.backoffMultiplier = 1;
    b.open.maxDuration = b.open.duration;
  }
  b.halfOpen.successStreak = c.permittedNumberOfCallsInHalfOpenState;
  n.approx(Topic::HalfOpen,
           "permittedNumberOfCallsInHalfOpenState " +
               std::to_string(c.permittedNumberOfCallsInHalfOpenState) +
               " → half_open.success_streak (Spillway closes on a streak of good probes, not on "
               "the rates of N calls); probe_share stays " +
               num(b.halfOpen.probeShare),
           scope);
  b.ramp.duration = 0;
  commonImportNotes(n, "Resilience4j", scope);
  switch (c.initialState) {
    case BreakerState::MetricsOnly:
      b.mode = BreakerMode::MetricsOnly;
      break;
    case BreakerState::ForcedOpen:
      b.mode = BreakerMode::ForcedOpen;
      break;
    case BreakerState::Disabled:
      b.mode = BreakerMode::Disabled;
      break;
    default:
      break;
  }
  if (!c.automaticTransitionFromOpenToHalfOpenEnabled)
    n.approx(Topic::HalfOpen,
             "Resilience4j leaves OPEN on the first call after the wait; Spillway "
             "when the period ends",
             scope);
  if (c.maxWaitDurationInHalfOpenState > 0)
    n.gap(Topic::HalfOpen,
          "maxWaitDurationInHalfOpenState has no Spillway equivalent (half-open "
          "ends on probes)",
          scope);
  for (const std::string& k : c.ignoredKeys)
    n.gap(Topic::Classify, k + " is not imported (exception predicates, health indicators)", scope);
  return b;
}

YAML::Node r4jInstances(std::string_view text, const std::string& source) {
  const YAML::Node root = dialects::loadNative(text, source);
  YAML::Node cb = NativeReader::get(root, "resilience4j.circuitbreaker");
  if (!cb) cb = NativeReader::get(NativeReader::get(root, "resilience4j"), "circuitbreaker");
  return NativeReader::get(cb, "instances");
}

}  // namespace

ImportResult importResilience4j(std::string_view text, const std::string& source) {
  ImportResult r;
  Notes n;
  r.policy.name = "imported-resilience4j";
  r.policy.breaker = fromR4j(dialects::parseResilience4jConfig(text, source), n, "");
  if (const YAML::Node inst = r4jInstances(text, source); inst && inst.IsMap()) {
    // With configs.default present it is the default; else the only instance was.
    for (auto it = inst.begin(); it != inst.end(); ++it) {
      const std::string name =
          NativeReader(source).keyOf(it->first, "resilience4j.circuitbreaker.instances");
      Notes scratch;  // per-instance notes repeat the default's
      addOverride(r.policy, name,
                  fromR4j(dialects::parseResilience4jConfig(text, source, name), scratch, name), n);
    }
  }
  r.notes = n.take();
  return r;
}

// ---- Envoy -----------------------------------------------------------------------------------

namespace {

// What an Envoy cluster enforces that one Spillway breaker does not hold: said, not dropped.
void envoyDroppedNotes(const dialects::EnvoyOutlierConfig& c, Notes& n, const std::string& scope) {
  const bool percentage = c.enforcingFailurePercentage > 0;
  if (percentage && c.enforcingConsecutive5xx > 0)
    n.gap(Topic::Threshold,
          "consecutive_5xx " + std::to_string(c.consecutive5xx) + " (enforcing " +
              std::to_string(c.enforcingConsecutive5xx) +
              ") is not imported: one error rule per breaker, the failure percentage is",
          scope);
  if ((percentage || c.enforcingConsecutive5xx > 0) && c.enforcingConsecutiveGatewayFailure > 0)
    n.gap(Topic::Threshold,
          "consecutive_gateway_failure " + std::to_string(c.consecutiveGatewayFailure) +
              " (enforcing " + std::to_string(c.enforcingConsecutiveGatewayFailure) +
              ") is not imported: one error rule per breaker",
          scope);
  if (percentage && c.failurePercentageMinimumHosts > 1)
    n.gap(Topic::Scope,
          "failure_percentage_minimum_hosts " + std::to_string(c.failurePercentageMinimumHosts) +
              ": Envoy judges no host while fewer are healthy; Spillway judges each instance "
              "alone",
          scope);
  if (c.maxEjectionPercent < 100)
    n.gap(Topic::Scope,
          "max_ejection_percent " + std::to_string(c.maxEjectionPercent) +
              ": Envoy keeps at most that share of hosts out; Spillway opens any number",
          scope);
  if (c.healthyPanicThreshold > 0)
    n.gap(Topic::Scope,
          "healthy_panic_threshold " + num(c.healthyPanicThreshold) +
              " %: below it Envoy routes to ejected hosts too (panic); Spillway never does",
          scope);
}

BreakerConfig fromEnvoy(const dialects::EnvoyOutlierConfig& c, Notes& n, const std::string& scope) {
  BreakerConfig b;
  b.window.type = WindowType::Time;
  b.window.length = c.interval;
  b.window.bucket = bucketFor(b.window.length);
  // Every detector at enforcing 0: Envoy judges and logs, ejects nothing — a shadow breaker,
  // judged on the failure percentage (what Spillway's own shadow export writes).
  const bool shadow = c.enforcingFailurePercentage == 0 && c.enforcingConsecutive5xx == 0 &&
                      c.enforcingConsecutiveGatewayFailure == 0 && c.enforcingSuccessRate == 0;
  if (shadow) {
    b.mode = BreakerMode::MetricsOnly;
    n.exact(Topic::Mode,
            "every detector at enforcing 0 → mode metrics_only (judged, never ejected)", scope);
  }
  if (c.enforcingFailurePercentage > 0 && c.enforcingFailurePercentage < 100)
    n.gap(Topic::Mode,
          "enforcing_failure_percentage " + std::to_string(c.enforcingFailurePercentage) +
              ": Envoy ejects that share of the hosts it finds failing; Spillway opens every one",
          scope);
  // Envoy's failure percentage counts 5xx and local-origin failures (no answer), never 429.
  b.classify.failureStatus[429] = false;
  n.approx(Topic::Classify,
           "Envoy counts 5xx and local-origin failures, not 429: classify.failure_statuses "
           "without 429",
           scope);
  if (c.enforcingFailurePercentage > 0 || shadow) {
    b.trip.errorRate = c.failurePercentageThreshold / 100.0;
    b.minCalls = std::max<std::uint32_t>(1, c.failurePercentageRequestVolume);
    n.approx(Topic::Threshold,
             "failure_percentage_threshold " + std::to_string(c.failurePercentageThreshold) +
                 " (>=, per interval) → trip.error_rate " + num(b.trip.errorRate) +
                 " (strictly above, sliding window of interval length)",
             scope);
  } else if (c.enforcingConsecutive5xx > 0 || c.enforcingConsecutiveGatewayFailure > 0) {
    const std::uint32_t k =
        c.enforcingConsecutive5xx > 0 ? c.consecutive5xx : c.consecutiveGatewayFailure;
    b.minCalls = std::max<std::uint32_t>(1, k);
    b.trip.errorRate = k > 1 ? static_cast<double>(k - 1) / k : 0.5;
    n.approx(Topic::Threshold,
             "consecutive " + std::to_string(k) + " errors → more than " + num(b.trip.errorRate) +
                 " failing of at least " + std::to_string(b.minCalls) +
                 " calls (Spillway has no consecutive-error rule)",
             scope);
  } else {
    b.trip.errorRate = 1.0;
    n.gap(Topic::Threshold,
          "no enforcing error detector: trip.error_rate 1 (never trips on errors)", scope);
  }
  if (c.enforcingSuccessRate > 0)
    n.gap(Topic::Threshold,
          "success-rate ejection (peers' mean − stdev) has no Spillway "
          "equivalent: not imported",
          scope);
  envoyDroppedNotes(c, n, scope);
  b.trip.sustain = 0;
  b.trip.slowRate = 1.0;  // strictly above 1: never
  n.approx(Topic::Slow,
           "Envoy has no slow-call ejection: trip.slow_rate 1 (off); consider "
           "enabling Spillway's k × P99 rule",
           scope);
  b.open.duration = c.baseEjectionTime;
  b.open.maxDuration = std::max(c.maxEjection(), c.baseEjectionTime);
  b.open.backoffMultiplier = 2;
  n.approx(Topic::Backoff,
           "ejection time base × n (linear) → open.backoff_multiplier 2 (equal on "
           "the second ejection, faster after), capped by open.max_duration",
           scope);
  if (c.maxEjectionTimeJitter > 0)
    b.open.jitter = std::min(0.99, static_cast<double>(c.maxEjectionTimeJitter) /
                                       static_cast<double>(c.baseEjectionTime));
  b.halfOpen.probeShare = 1.0;
  b.halfOpen.successStreak = 1;
  n.approx(Topic::HalfOpen, "Envoy returns a host fully: half_open probe_share 1, success_streak 1",
           scope);
  b.ramp.duration = 0;
  commonImportNotes(n, "Envoy", scope, false);
  for (const std::string& k : c.ignoredKeys) n.gap(Topic::Classify, k + " is not imported", scope);
  return b;
}

}  // namespace

ImportResult importEnvoy(std::string_view text, const std::string& source) {
  ImportResult r;
  Notes n;
  r.policy.name = "imported-envoy";
  const YAML::Node root = dialects::loadNative(text, source);
  YAML::Node list = NativeReader::get(root, "clusters");
  if (!list) list = NativeReader::get(NativeReader::get(root, "static_resources"), "clusters");
  std::vector<std::string> names;
  if (list && list.IsSequence())
    for (std::size_t i = 0; i < list.size(); ++i)
      if (const YAML::Node nm = NativeReader::get(list[i], "name"); nm && nm.IsScalar())
        names.push_back(nm.Scalar());
  // Slow start lives beside outlier detection, in each cluster's load-balancer config.
  auto slowStart = [&](std::size_t i, BreakerConfig& b, Notes& notes) {
    const YAML::Node cl = list && list.IsSequence() && list.size() > i ? list[i] : root;
    if (const YAML::Node w = NativeReader::get(
            NativeReader::get(NativeReader::get(cl, "round_robin_lb_config"), "slow_start_config"),
            "slow_start_window")) {
      const NativeReader rd(source);
      b.ramp.duration = rd.dur(w, "slow_start_window", dialects::BareUnit::None);
      notes.approx(Topic::Ramp,
                   "slow_start_window → ramp.duration (Envoy applies it to joining "
                   "hosts only)");
    } else {
      notes.approx(Topic::Ramp, "Envoy has no slow start here: ramp off (full traffic on close)");
    }
  };
  r.policy.breaker = fromEnvoy(dialects::parseEnvoyConfig(text, source), n, "");
  slowStart(0, r.policy.breaker, n);
  const YAML::Node cl = list && list.IsSequence() && list.size() > 0 ? list[0] : root;
  if (const YAML::Node th =
          NativeReader::get(NativeReader::get(cl, "circuit_breakers"), "thresholds");
      th && th.IsSequence() && th.size() > 0) {
    if (const YAML::Node bp =
            NativeReader::get(NativeReader::get(th[0], "retry_budget"), "budget_percent")) {
      const NativeReader rd(source);
      r.policy.degrade.retryBudget =
          rd.num(bp, "circuit_breakers.thresholds[0].retry_budget.budget_percent", 0, 100) / 100;
      n.approx(Topic::Degrade,
               "retry_budget.budget_percent → degrade.retry_budget (used when a "
               "degrade section is enabled)");
    }
    n.gap(Topic::Limits, "circuit_breakers concurrency limits are not imported (limits section)");
  }
  for (std::size_t i = 1; i < names.size(); ++i) {
    Notes scratch;
    BreakerConfig b =
        fromEnvoy(dialects::parseEnvoyConfig(text, source, names[i]), scratch, names[i]);
    slowStart(i, b, scratch);
    addOverride(r.policy, names[i], b, n);
  }
  if (!names.empty()) n.approx(Topic::Scope, "cluster " + names[0] + " → the default breaker");
  if (!names.empty() && names[0] != "default")
    n.gap(Topic::Scope, "the name " + names[0] +
                            " is not kept: the default breaker has none, and an export without "
                            "incidents names its cluster \"default\" — rename it back, or "
                            "validate on incidents that hold " +
                            names[0]);
  r.notes = n.take();
  return r;
}

// ---- Sentinel --------------------------------------------------------------------------------

namespace {

// `n` takes the mapping notes every resource repeats; `own` what only this resource's rules
// say (for the default resource, the same).
BreakerConfig fromSentinel(const std::vector<dialects::SentinelRule>& rules, Notes& n,
                           const std::string& scope, Notes& own) {
  BreakerConfig b;
  b.trip.errorRate = 1.0;
  b.trip.slowRate = 1.0;
  b.trip.sustain = 0;
  bool haveWindow = false;
  std::array<bool, 2> ruled{};  // a slow rule, an error rule (ratio or count) seen
  for (const dialects::SentinelRule& rule : rules) {
    if (!haveWindow) {
      b.window.type = WindowType::Time;
      b.window.length = millis(rule.statIntervalMs);
      b.window.bucket = bucketFor(b.window.length);
      b.minCalls = static_cast<std::uint32_t>(rule.minRequestAmount);
      b.open.duration = seconds(rule.timeWindow);
      haveWindow = true;
    } else if (millis(rule.statIntervalMs) != b.window.length ||
               seconds(rule.timeWindow) != b.open.duration ||
               static_cast<std::uint32_t>(rule.minRequestAmount) != b.minCalls) {
      own.gap(Topic::Window,
              "rules of " + rule.resource +
                  " differ in statIntervalMs, timeWindow "
                  "or minRequestAmount: the first rule's values are used",
              scope);
    }
    // Sentinel trips on any of a resource's rules; one breaker holds one slow rule and one
    // error rule.
    const bool known = rule.grade >= 0 && rule.grade <= 2;
    const std::size_t slot = rule.grade == 0 ? 0 : 1;
    if (known && ruled[slot]) {
      if (rule.grade == 0) {
        own.gap(Topic::Slow,
                "a second slow-ratio rule of " + rule.resource + " (count " + num(rule.count) +
                    " ms, slowRatioThreshold " + num(rule.slowRatioThreshold) +
                    ") is not imported: one slow rule per breaker, the first is used",
                scope);
        continue;
      }
      const double was = b.trip.errorRate;
      const double now =
          rule.grade == 1 ? rule.count : rule.count / std::max<double>(1, rule.minRequestAmount);
      b.trip.errorRate = std::min(was, now);
      own.approx(Topic::Threshold,
                 "two error rules of " + rule.resource + " (error_rate " + num(was) + " and " +
                     num(now) + "): the stricter, " + num(b.trip.errorRate) +
                     ", is used (Sentinel trips on either)",
                 scope);
      continue;
    }
    if (known) ruled[slot] = true;
    switch (rule.grade) {
      case 0:
        b.slow.absolute = millis(static_cast<std::int64_t>(std::llround(rule.count)));
        b.trip.slowRate = rule.slowRatioThreshold;
        n.approx(Topic::Slow,
                 "slow-ratio rule: count " + num(rule.count) +
                     " ms → slow.absolute, slowRatioThreshold → trip.slow_rate",
                 scope);
        break;
      case 1:
        b.trip.errorRate = rule.count;
        break;
      case 2: {
        // More than `count` errors per interval, read as a share of the fewest calls judged.
        // At or above all of them no rate can trip (Spillway trips strictly above): keep the
        // error rule as it was and say so, rather than import a breaker that never opens.
        // count 0 is "more than no error": any error trips (the least rate Spillway holds).
        const double rate = std::max(1e-6, rule.count / std::max<double>(1, rule.minRequestAmount));
        if (rate >= 1) {
          own.gap(Topic::Threshold,
                  "exception-count rule of " + rule.resource + " (more than " + num(rule.count) +
                      " errors per " + std::to_string(rule.statIntervalMs) +
                      " ms) has no error-rate equivalent: " + num(rule.count) +
                      " of minRequestAmount " + std::to_string(rule.minRequestAmount) +
                      " is a rate of " + num(rate) +
                      ": imported so, the breaker would never trip on errors (Sentinel's rule "
                      "does); error_rate stays " +
                      num(b.trip.errorRate) + " — set it by hand",
                  scope);
          break;
        }
        b.trip.errorRate = rate;
        own.approx(Topic::Threshold,
                   "exception-count rule of " + rule.resource + ": more than " + num(rule.count) +
                       " errors → error_rate " + num(rate) + " of minRequestAmount " +
                       std::to_string(rule.minRequestAmount),
                   scope);
        break;
      }
      default:
        break;
    }
  }
  n.approx(Topic::Window, "statIntervalMs (one tumbling bucket) → a sliding window.length", scope);
  b.open.backoffMultiplier = 1;
  b.open.maxDuration = b.open.duration;
  b.halfOpen.successStreak = 1;
  n.approx(Topic::HalfOpen, "Sentinel's single probe → half_open.success_streak 1", scope);
  b.ramp.duration = 0;
  commonImportNotes(n, "Sentinel", scope);
  return b;
}

}  // namespace

ImportResult importSentinel(std::string_view text, const std::string& source) {
  ImportResult r;
  Notes n;
  r.policy.name = "imported-sentinel";
  const dialects::SentinelConfig all = dialects::parseSentinelConfig(text, source);
  std::vector<std::string> resources;
  for (const auto& rule : all.rules)
    if (std::find(resources.begin(), resources.end(), rule.resource) == resources.end())
      resources.push_back(rule.resource);
  if (resources.empty()) throw InputError(source, 0, "", "no DegradeRule to import");
  auto rulesOf = [&](const std::string& res) {
    std::vector<dialects::SentinelRule> v;
    for (const auto& rule : all.rules)
      if (rule.resource == res) v.push_back(rule);
    return v;
  };
  r.policy.breaker = fromSentinel(rulesOf(resources[0]), n, "", n);
  n.approx(Topic::Scope, "resource " + resources[0] + " → the default breaker");
  if (resources[0] != "default")
    n.gap(Topic::Scope, "the name " + resources[0] +
                            " is not kept: the default breaker has none, and an export without "
                            "incidents writes resource \"default\" — rules for a resource that "
                            "does not exist guard nothing: rename it back");
  for (std::size_t i = 1; i < resources.size(); ++i) {
    Notes scratch;
    addOverride(r.policy, resources[i],
                fromSentinel(rulesOf(resources[i]), scratch, resources[i], n), n);
  }
  r.notes = n.take();
  return r;
}

}  // namespace spillway::exporter::detail
