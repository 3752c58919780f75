#include "spillway/view/sensitivity.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "spillway/policy_params.hpp"
#include "spillway/sim/simulator.hpp"

namespace spillway::view {
namespace {

// The smallest move of each parameter: the policy editor's grain, coarser where the editor's
// step would not change a run (half a second of sustain, one second of ramp).
double grain(std::string_view key) {
  if (key == "slow.k") return 0.1;
  if (key == "slow.floor") return 0.05;
  if (key == "trip.error_rate" || key == "trip.slow_rate" || key == "half_open.probe_share")
    return 0.01;
  if (key == "ramp.duration") return 5;
  return 1;  // seconds of window, sustain and open; calls and probes
}

bool isCount(std::string_view unit) {
  return unit == "count";
}

std::optional<double> pp(std::optional<double> a, std::optional<double> b) {
  if (!a || !b) return std::nullopt;
  return (*a - *b) * 100;
}

std::optional<double> diff(std::optional<double> a, std::optional<double> b) {
  if (!a || !b) return std::nullopt;
  return *a - *b;
}

SensitivityStep stepAgainst(double value, const SensitivityKpis& k, const SensitivityKpis& cur) {
  SensitivityStep s;
  s.value = value;
  s.kpis = k;
  s.falsePositivePp = pp(k.falsePositive, cur.falsePositive);
  s.ttdSeconds = diff(k.ttdSeconds, cur.ttdSeconds);
  s.availabilityPp = pp(k.availability, cur.availability);
  s.missed = static_cast<int>(k.missed) - static_cast<int>(cur.missed);
  return s;
}

// Both KPIs weigh alike: each step's |Δ误伤| and |ΔTTD| as a share of the largest move of that
// KPI over every row, so "which knob matters" does not depend on pp being worth more than s.
void computeImpacts(std::vector<SensitivityRow>& rows) {
  double maxFp = 0, maxTtd = 0;
  auto each = [&](auto fn) {
    for (SensitivityRow& r : rows)
      for (std::optional<SensitivityStep>* s : {&r.down, &r.up})
        if (*s) fn(r, **s);
  };
  each([&](SensitivityRow&, const SensitivityStep& s) {
    maxFp = std::max(maxFp, std::abs(s.falsePositivePp.value_or(0)));
    maxTtd = std::max(maxTtd, std::abs(s.ttdSeconds.value_or(0)));
  });
  each([&](SensitivityRow& r, const SensitivityStep& s) {
    if (maxFp > 0) r.impact += std::abs(s.falsePositivePp.value_or(0)) / maxFp;
    if (maxTtd > 0) r.impact += std::abs(s.ttdSeconds.value_or(0)) / maxTtd;
    r.impact += std::abs(s.missed);  // a fault missed or newly caught outweighs any shift
  });
  std::stable_sort(rows.begin(), rows.end(), [](const SensitivityRow& a, const SensitivityRow& b) {
    return a.impact > b.impact;
  });
}

// The runs of one computation: the current policy first, then each row's down and up steps.
struct Plan {
  std::vector<SensitivityRow> rows;
  std::vector<Policy> policies;
  struct Slot {
    std::size_t row;
    bool up;
  };
  std::vector<Slot> slots;  // policies[i + 1] is the step slots[i]
};

Plan planSteps(const Policy& policy, const std::vector<std::string>& keys) {
  Plan p;
  p.policies.push_back(policy);
  for (const std::string& key : keys.empty() ? sensitivityKeys() : keys) {
    const BreakerParam* param = findBreakerParam(key);
    const std::optional<double> cur = getBreakerParam(policy.breaker, key);
    if (!param || !cur) continue;
    SensitivityRow row;
    row.key = key;
    row.unit = std::string(param->unit);
    row.current = *cur;
    const StepValues v = sensitivitySteps(policy.breaker, key);
    for (const auto& [value, up] : {std::pair{v.down, false}, std::pair{v.up, true}}) {
      if (!value) continue;
      p.slots.push_back({p.rows.size(), up});
      p.policies.push_back(steppedPolicy(policy, key, *value));
      SensitivityStep step;
      step.value = *value;
      (up ? row.up : row.down) = step;
    }
    p.rows.push_back(std::move(row));
  }
  return p;
}

// The mean of each KPI over the runs where it is defined; missed faults add up.
SensitivityKpis meanOf(const SensitivityKpis* runs, std::uint32_t n) {
  SensitivityKpis k;
  auto mean = [&](std::optional<double> SensitivityKpis::*field) -> std::optional<double> {
    double sum = 0;
    int defined = 0;
    for (std::uint32_t i = 0; i < n; ++i)
      if (const auto v = runs[i].*field) sum += *v, ++defined;
    if (!defined) return std::nullopt;
    return sum / defined;
  };
  k.falsePositive = mean(&SensitivityKpis::falsePositive);
  k.ttdSeconds = mean(&SensitivityKpis::ttdSeconds);
  k.availability = mean(&SensitivityKpis::availability);
  for (std::uint32_t i = 0; i < n; ++i) k.missed += runs[i].missed;
  return k;
}

Sensitivity finish(Plan plan, const std::vector<SensitivityKpis>& kpis, bool cancelled) {
  Sensitivity s;
  s.runs = plan.policies.size();
  s.cancelled = cancelled;
  s.current = kpis.front();
  for (std::size_t i = 0; i < plan.slots.size(); ++i) {
    SensitivityRow& row = plan.rows[plan.slots[i].row];
    std::optional<SensitivityStep>& step = plan.slots[i].up ? row.up : row.down;
    step = stepAgainst(step->value, kpis[i + 1], s.current);
  }
  computeImpacts(plan.rows);
  s.rows = std::move(plan.rows);
  return s;
}

bool stopped(const std::atomic<bool>* cancel) {
  return cancel && cancel->load(std::memory_order_relaxed);
}

// Runs job(i) for i in [0, n) on `threads` threads, by index; false when cancelled.
bool runAll(std::size_t n, const SensitivityOptions& o,
            const std::function<void(std::size_t)>& job) {
  std::atomic<std::size_t> next{0}, done{0};
  auto work = [&] {
    for (std::size_t i; !stopped(o.cancel) && (i = next.fetch_add(1)) < n;) {
      job(i);
      if (stopped(o.cancel)) return;  // the run was cut short: not done
      const std::size_t d = done.fetch_add(1) + 1;
      if (o.progress) o.progress(d, n);
    }
  };
  unsigned threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(n, 1)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return done.load() == n;
}

}  // namespace

const std::vector<std::string>& sensitivityKeys() {
  static const std::vector<std::string> keys = {"window.length",
                                                "min_calls",
                                                "slow.k",
                                                "slow.floor",
                                                "trip.error_rate",
                                                "trip.slow_rate",
                                                "trip.sustain",
                                                "open.duration",
                                                "half_open.probe_share",
                                                "half_open.success_streak",
                                                "ramp.duration"};
  return keys;
}

StepValues sensitivitySteps(const BreakerConfig& breaker, std::string_view key) {
  const BreakerParam* p = findBreakerParam(key);
  const std::optional<double> cur = getBreakerParam(breaker, key);
  if (!p || !cur) return {};
  const double g = grain(key), v = *cur;
  auto fit = [&](double x) -> std::optional<double> {
    x = std::clamp(x, p->min, p->max);
    if (isCount(p->unit)) x = std::clamp(std::round(x), std::ceil(p->min), std::floor(p->max));
    if (std::abs(x - v) < 1e-9) return std::nullopt;
    return x;
  };
  return {fit(v - std::max(v - v / 1.25, g)), fit(v + std::max(v * 0.25, g))};
}

Policy steppedPolicy(const Policy& policy, std::string_view key, double value) {
  Policy p = policy;
  setBreakerParam(p.breaker, key, value);
  return p;
}

SensitivityKpis simulatedKpis(const sim::Scenario& scenario, const Policy& policy,
                              const std::atomic<bool>* cancel) {
  sim::Scenario sc = scenario;
  sc.policy = policy;
  sim::Simulator s(sc);
  for (Micros t = seconds(10); s.runUntil(t); t += seconds(10))
    if (stopped(cancel)) return {};
  const sim::RunReport r = s.report();
  SensitivityKpis k;
  k.falsePositive = r.falsePositive.value();
  if (r.meanTtd) k.ttdSeconds = static_cast<double>(*r.meanTtd) / 1e6;
  k.availability = r.availability.value();
  for (const sim::FaultReport& f : r.faults) k.missed += !f.benign && !f.detected;
  return k;
}

Sensitivity computeSensitivity(const sim::Scenario& scenario, const Policy& policy,
                               const SensitivityOptions& options) {
  Plan plan = planSteps(policy, options.keys);
  const std::uint32_t seeds = std::max<std::uint32_t>(options.seeds, 1);
  // Job i runs policy i / seeds under seed scenario.seed + i % seeds.
  std::vector<SensitivityKpis> runs(plan.policies.size() * seeds);
  const bool complete = runAll(runs.size(), options, [&](std::size_t i) {
    sim::Scenario sc = scenario;
    sc.seed = scenario.seed + i % seeds;
    runs[i] = simulatedKpis(sc, plan.policies[i / seeds], options.cancel);
  });
  std::vector<SensitivityKpis> kpis;
  for (std::size_t p = 0; p < plan.policies.size(); ++p)
    kpis.push_back(meanOf(&runs[p * seeds], seeds));
  Sensitivity s = finish(std::move(plan), kpis, !complete);
  s.runs = runs.size();
  s.seeds = seeds;
  s.source = scenario.name;
  return s;
}

Sensitivity computeSensitivity(const std::vector<IncidentTrace>& incidents, const Policy& policy,
                               const SensitivityOptions& options) {
  Plan plan = planSteps(policy, options.keys);
  std::vector<SweepCandidate> candidates;
  for (const Policy& p : plan.policies) candidates.push_back({{}, p});
  SweepRunOptions run;
  run.threads = options.threads;
  run.seed = options.seed;
  run.truth = options.truth;
  run.progress = options.progress;
  run.cancel = options.cancel;
  const SweepResult r = runSweep(std::move(candidates), incidents, run);
  std::vector<SensitivityKpis> kpis;
  for (const SweepScore& sc : r.scores)
    kpis.push_back(
        {sc.fpRateOrNa(), sc.meanTtdSeconds(), sc.availability(), sc.faults - sc.detected});
  Sensitivity s = finish(std::move(plan), kpis, r.cancelled);
  s.simulated = false;
  for (const IncidentTrace& inc : incidents)
    s.source += (s.source.empty() ? "" : ", ") + inc.name();
  return s;
}

std::string formatParamValue(double value, std::string_view unit) {
  char buf[32];
  if (unit == "count")
    std::snprintf(buf, sizeof buf, "%.0f", value);
  else if (unit == "s")
    std::snprintf(buf, sizeof buf, "%g s", std::round(value * 1000) / 1000);
  else
    std::snprintf(buf, sizeof buf, "%g", std::round(value * 1000) / 1000);
  return buf;
}

}  // namespace spillway::view
