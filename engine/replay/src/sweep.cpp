#include "spillway/sweep.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/kpi_terms.hpp"
#include "spillway/next_grid.hpp"
#include "spillway/parallel.hpp"
#include "spillway/policy_params.hpp"
#include "spillway/rng.hpp"
#include "spillway/sweep_prefix.hpp"
#include "spillway/time.hpp"
#include "spillway/yaml_reader.hpp"

namespace spillway {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0;;) {
    const std::size_t next = s.find(sep, at);
    out.push_back(trim(s.substr(at, next == std::string_view::npos ? next : next - at)));
    if (next == std::string_view::npos) return out;
    at = next + 1;
  }
}

// A number in the parameter's own unit: durations ("500ms", "2s", or bare seconds) for "s".
std::optional<double> parseValue(const BreakerParam& p, std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  if (p.unit == "s" && !std::isdigit(static_cast<unsigned char>(text.back()))) {
    const auto d = parseDuration(text);
    if (!d) return std::nullopt;
    return static_cast<double>(*d) / 1e6;
  }
  try {
    std::size_t used = 0;
    const double v = std::stod(std::string(text), &used);
    if (used != text.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

const BreakerParam& needParam(std::string_view key, const std::string& source, long line) {
  const BreakerParam* p = findBreakerParam(key);
  if (!p) {
    std::string list;
    for (const BreakerParam& q : breakerParams())
      list += (list.empty() ? "" : ", ") + std::string(q.key);
    throw InputError(source, line, std::string(key),
                     "unknown parameter (expected one of: " + list + ")");
  }
  return *p;
}

void checkRange(const BreakerParam& p, double v, const std::string& source, long line) {
  if (v < p.min || v > p.max) {
    std::ostringstream m;
    m << "value " << v << " is outside [" << p.min << ", " << p.max << "]";
    throw InputError(source, line, std::string(p.key), m.str());
  }
}

std::vector<double> steps(double from, double to, double step, const std::string& source, long line,
                          const std::string& key) {
  if (!(step > 0) || to < from)
    throw InputError(source, line, key, "expected from <= to and a step > 0");
  if (std::floor((to - from) / step) > 1e6) throw InputError(source, line, key, "too many steps");
  return gridSteps(from, to, step);
}

}  // namespace

std::vector<double> gridSteps(double from, double to, double step) {
  if (!(step > 0) || to < from) return {};
  const double n = std::floor((to - from) / step + 1e-9);
  std::vector<double> out;
  for (int i = 0; i <= static_cast<int>(n); ++i) out.push_back(from + step * i);
  return out;
}

SweepParamRange parseSweepParam(std::string_view text, const std::string& source) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos)
    throw InputError(source, 0, std::string(text), "expected KEY=FROM:TO:STEP or KEY=V1,V2,…");
  SweepParamRange r;
  r.key = std::string(trim(text.substr(0, eq)));
  const BreakerParam& p = needParam(r.key, source, 0);
  const std::string_view rhs = text.substr(eq + 1);
  auto value = [&](std::string_view s) {
    const auto v = parseValue(p, s);
    if (!v) throw InputError(source, 0, r.key, "not a value: '" + std::string(s) + "'");
    // A count is whole, as in a policy file: 1.5 ran as 2 while the table said 1.5.
    if (p.unit == "count" && *v != std::floor(*v))
      throw InputError(source, 0, r.key, "a count is a whole number, got '" + std::string(s) + "'");
    checkRange(p, *v, source, 0);
    return *v;
  };
  const auto parts = split(rhs, ':');
  if (parts.size() == 3) {
    const auto step = parseValue(p, parts[2]);  // a step is a difference: no range check
    if (!step) throw InputError(source, 0, r.key, "not a step: '" + std::string(parts[2]) + "'");
    if (p.unit == "count" && *step != std::floor(*step))
      throw InputError(source, 0, r.key,
                       "a count steps by whole numbers, got '" + std::string(parts[2]) + "'");
    r.values = steps(value(parts[0]), value(parts[1]), *step, source, 0, r.key);
  } else if (parts.size() == 1) {
    for (std::string_view v : split(rhs, ',')) r.values.push_back(value(v));
  } else {
    throw InputError(source, 0, r.key, "expected FROM:TO:STEP or a comma-separated list");
  }
  r.lo = *std::min_element(r.values.begin(), r.values.end());
  r.hi = *std::max_element(r.values.begin(), r.values.end());
  return r;
}

SweepSpec parseSweepSpec(std::string_view yaml, const std::string& source) {
  YamlReader r(source);
  checkInputSize(yaml, source, input_limits::kSweepSpec, "sweep spec");
  const YAML::Node root = loadYamlText(yaml, source);
  if (!root || root.IsNull()) throw InputError(source, 1, "", "empty sweep spec");
  r.requireMap(root, "sweep");
  r.checkKeys(root, "", {"mode", "samples", "seed", "params"});
  SweepSpec spec;
  if (auto m = root["mode"]) {
    const std::string mode = r.scalar(m, "mode");
    if (mode == "grid")
      spec.mode = SweepSpec::Mode::Grid;
    else if (mode == "random")
      spec.mode = SweepSpec::Mode::Random;
    else
      r.fail(m.Mark(), "mode", "expected grid or random");
  }
  if (auto s = root["samples"]) {
    spec.samples = r.count(s, "samples", 1, kMaxSweepSamples);
  }
  if (auto s = root["seed"]) {
    std::uint64_t seed = 0;
    if (!YAML::convert<std::uint64_t>::decode(s, seed))
      r.fail(s.Mark(), "seed", "expected a whole number, got '" + r.scalar(s, "seed") + "'");
    spec.seed = seed;
  }
  const YAML::Node params = r.need(root, "params", "");
  r.requireMap(params, "params");
  std::set<std::string> seen;  // yaml-cpp keeps both of a duplicated key; the second must fail
  for (auto it = params.begin(); it != params.end(); ++it) {
    const std::string key = r.keyOf(it->first, "params");
    const long line = it->first.Mark().line + 1;
    if (!seen.insert(key).second) r.fail(it->first.Mark(), "params." + key, "duplicate key");
    const BreakerParam& p = needParam(key, source, line);
    SweepParamRange range;
    range.key = key;
    const bool count = p.unit == "count";
    auto value = [&](const YAML::Node& n, const std::string& field) {
      const auto v = n.IsScalar() ? parseValue(p, n.Scalar()) : std::nullopt;
      if (!v) r.fail(n.Mark(), "params." + key + field, "not a value");
      if (count && *v != std::floor(*v))
        r.fail(n.Mark(), "params." + key + field, "a count is a whole number");
      checkRange(p, *v, source, n.Mark().line + 1);
      return *v;
    };
    const YAML::Node v = it->second;
    if (v.IsSequence()) {
      for (std::size_t i = 0; i < v.size(); ++i)
        range.values.push_back(value(v[i], "[" + std::to_string(i) + "]"));
      if (range.values.empty()) r.fail(v.Mark(), "params." + key, "empty list");
    } else if (v.IsMap()) {
      r.checkKeys(v, "params." + key, {"from", "to", "step"});
      const double from = value(r.need(v, "from", "params." + key), ".from");
      const double to = value(r.need(v, "to", "params." + key), ".to");
      double step = count ? std::max(1.0, std::round((to - from) / 4)) : (to - from) / 4;
      if (const YAML::Node st = v["step"]) {
        const auto x = st.IsScalar() ? parseValue(p, st.Scalar()) : std::nullopt;
        if (!x || *x <= 0) r.fail(st.Mark(), "params." + key + ".step", "expected a step > 0");
        if (count && *x != std::floor(*x))
          r.fail(st.Mark(), "params." + key + ".step", "a count steps by whole numbers");
        step = *x;
      }
      range.values = spec.mode == SweepSpec::Mode::Grid || v["step"]
                         ? steps(from, to, step > 0 ? step : 1, source, line, key)
                         : std::vector<double>{from, to};
    } else {
      r.fail(v.Mark(), "params." + key, "expected {from, to, step} or a list of values");
    }
    range.lo = *std::min_element(range.values.begin(), range.values.end());
    range.hi = *std::max_element(range.values.begin(), range.values.end());
    spec.params.push_back(std::move(range));
  }
  if (spec.params.empty()) r.fail(params.Mark(), "params", "no parameter to sweep");
  return spec;
}

std::vector<SweepCandidate> expandSweep(const Policy& base, const SweepSpec& spec,
                                        std::size_t max) {
  std::vector<std::vector<double>> points;
  if (spec.mode == SweepSpec::Mode::Grid) {
    double total = 1;
    for (const SweepParamRange& p : spec.params) total *= static_cast<double>(p.values.size());
    if (total > static_cast<double>(max))
      throw InputError("sweep", 0, "params",
                       "the grid has " + std::to_string(static_cast<long long>(total)) +
                           " points, more than " + std::to_string(max));
    std::vector<std::size_t> at(spec.params.size(), 0);
    for (std::size_t n = 0; n < static_cast<std::size_t>(total); ++n) {
      std::vector<double> v;
      for (std::size_t i = 0; i < spec.params.size(); ++i)
        v.push_back(spec.params[i].values[at[i]]);
      points.push_back(std::move(v));
      for (std::size_t i = spec.params.size(); i-- > 0;) {  // odometer, last fastest
        if (++at[i] < spec.params[i].values.size()) break;
        at[i] = 0;
      }
    }
  } else {
    if (spec.samples > max)
      throw InputError("sweep", 0, "samples", "more than " + std::to_string(max) + " samples");
    std::mt19937_64 rng(spec.seed);  // its output sequence is fixed by the standard
    for (std::uint32_t n = 0; n < spec.samples; ++n) {
      std::vector<double> v;
      for (const SweepParamRange& p : spec.params) {
        const double x = p.lo + unitInterval(rng()) * (p.hi - p.lo);
        // A count is drawn whole: the table showed 4.37 where the policy ran 4.
        const BreakerParam* bp = findBreakerParam(p.key);
        v.push_back(bp && bp->unit == "count" ? std::round(x) : x);
      }
      points.push_back(std::move(v));
    }
  }
  std::vector<SweepCandidate> out;
  out.reserve(points.size());
  for (const std::vector<double>& v : points) {
    SweepCandidate c;
    c.policy = base;
    for (std::size_t i = 0; i < v.size(); ++i) {
      setBreakerParam(c.policy.breaker, spec.params[i].key, v[i]);
      c.values.emplace_back(spec.params[i].key, v[i]);
    }
    out.push_back(std::move(c));
  }
  return out;
}

// ---- incidents ----------------------------------------------------------------------------

std::string_view IncidentTrace::intern(std::string_view s) {
  return *strings_->emplace(s).first;
}

IncidentTrace IncidentTrace::read(const std::function<bool(CallRecord&)>& next, std::string name,
                                  std::vector<NamedFault> faults) {
  IncidentTrace t;
  t.name_ = std::move(name);
  t.faults_ = std::move(faults);
  CallRecord rec;
  while (next(rec)) {
    CallRecord keep = rec;  // only what replay reads; the rest would dangle
    keep.instance = t.intern(rec.instance);
    keep.model = t.intern(rec.model);
    keep.tenant = t.intern(rec.tenant);  // its SLO (ReplayTruthOptions::tenantSlo)
    keep.route = keep.session = {};
    t.calls_.push_back(keep);
  }
  return t;
}

namespace {

ReplayOptions replayOptions(std::uint64_t seed, const ReplayTruthOptions& truth) {
  ReplayOptions opt;
  opt.seed = seed;
  opt.truth = truth;
  return opt;
}

ReplayKpis replaySchedule(const Policy& policy, const ReplaySchedule& schedule,
                          const IncidentTrace& incident, const ReplayOptions& options,
                          const std::atomic<bool>* cancel) {
  Replayer replayer(policy, options);
  replayer.replay(schedule, cancel);
  return nativeReplayKpis(replayer, incident.faults());
}

}  // namespace

ReplayKpis replayIncident(const Policy& policy, const IncidentTrace& incident, std::uint64_t seed,
                          const ReplayTruthOptions& truth, const std::atomic<bool>* cancel) {
  const ReplayOptions opt = replayOptions(seed, truth);
  return replaySchedule(policy, ReplaySchedule::build(incident.calls(), opt), incident, opt,
                        cancel);
}

// ---- scores -------------------------------------------------------------------------------

void SweepScore::add(const ReplayKpis& k) {
  records += k.records;
  rejected += k.rejected;
  blockedWouldSucceed += k.blockedWouldSucceed;
  blocks += k.blocks;
  if (k.first != kNever) traffic += k.last - k.first;
  for (const InstanceKpis& i : k.instances) succeeded += i.stats.recordedSucceeded;
  for (const FaultKpis& f : k.faults) {
    if (!f.found) continue;
    ++faults;
    const Micros length = std::max<Micros>(0, f.fault.end - f.fault.start);
    const Micros ttd = f.score.detected ? f.score.ttd : length;
    detected += f.score.detected;
    ttdSum += ttd;
    ttdMax = std::max(ttdMax, ttd);
    if (f.score.restored) {
      ++restored;
      mttrSum += f.score.mttr;
    }
  }
}

void SweepScore::add(const SweepScore& o) {
  records += o.records;
  succeeded += o.succeeded;
  rejected += o.rejected;
  blockedWouldSucceed += o.blockedWouldSucceed;
  blocks += o.blocks;
  traffic += o.traffic;
  faults += o.faults;
  detected += o.detected;
  restored += o.restored;
  ttdSum += o.ttdSum;
  mttrSum += o.mttrSum;
  ttdMax = std::max(ttdMax, o.ttdMax);
  simulated = simulated || o.simulated;
  costed = costed || o.costed;
  limitRefusals += o.limitRefusals;
  misKills += o.misKills;
  slotTime += o.slotTime;
  wastedSlotTime += o.wastedSlotTime;
  originals += o.originals;
  cost += o.cost;
}

std::optional<double> SweepScore::misKillRate() const {
  if (limitRefusals == 0) return std::nullopt;
  return static_cast<double>(misKills) / static_cast<double>(limitRefusals);
}

std::optional<double> SweepScore::wasteShare() const {
  if (slotTime == 0) return std::nullopt;
  return static_cast<double>(wastedSlotTime) / static_cast<double>(slotTime);
}

std::optional<double> SweepScore::costPer1k() const {
  if (!costed || originals == 0) return std::nullopt;
  return cost / static_cast<double>(originals) * 1000.0;
}

double SweepScore::fpRate() const {
  return blocks.falsePositiveRate().value_or(0.0);
}

std::optional<double> SweepScore::fpRateOrNa() const {
  return blocks.falsePositiveRate();
}

std::optional<double> SweepScore::meanTtdSeconds() const {
  if (!faults) return std::nullopt;
  return static_cast<double>(ttdSum) / faults / 1e6;
}

std::optional<double> SweepScore::meanMttrSeconds() const {
  if (!restored) return std::nullopt;
  return static_cast<double>(mttrSum) / restored / 1e6;
}

double SweepScore::availability() const {
  if (!records) return 0;
  // A replay cannot rescue a recorded success the policy blocked; a simulated run's successes
  // are already what the policy let through.
  const double served =
      static_cast<double>(succeeded) - (simulated ? 0.0 : static_cast<double>(blockedWouldSucceed));
  return std::max(0.0, served) / static_cast<double>(records);
}

std::vector<bool> paretoFront(const std::vector<SweepScore>& scores) {
  // Lower is better on all four: FP, TTD, 1 − availability and real faults missed. A miss
  // counts only its fault's length in the mean TTD, so without its own axis a candidate that
  // misses a fault but catches the others sooner would push one that catches them all off
  // the front.
  struct P {
    double fp, ttd, unavail;
    std::uint64_t missed;
  };
  std::vector<P> pts;
  for (const SweepScore& s : scores)
    // 误伤 n/a (nothing blocked) is not the best 误伤: a breaker that never trips would top
    // that axis while it misses every fault. It is no better than any measured rate.
    pts.push_back({s.fpRateOrNa().value_or(std::numeric_limits<double>::infinity()),
                   s.meanTtdSeconds().value_or(0), 1 - s.availability(), s.faults - s.detected});
  std::vector<bool> front(pts.size(), true);
  for (std::size_t i = 0; i < pts.size(); ++i)
    for (std::size_t j = 0; j < pts.size() && front[i]; ++j) {
      if (i == j) continue;
      const P &a = pts[i], &b = pts[j];
      const bool noWorse =
          b.fp <= a.fp && b.ttd <= a.ttd && b.unavail <= a.unavail && b.missed <= a.missed;
      const bool better =
          b.fp < a.fp || b.ttd < a.ttd || b.unavail < a.unavail || b.missed < a.missed;
      if (noWorse && better) front[i] = false;
    }
  return front;
}

SweepResult runSweep(std::vector<SweepCandidate> candidates,
                     const std::vector<IncidentTrace>& incidents, const SweepRunOptions& options) {
  // Each incident's steps are worked out once, and the prefix candidates share replayed once.
  const ReplayOptions opt = replayOptions(options.seed, options.truth);
  std::vector<const Policy*> policies;
  for (const SweepCandidate& c : candidates) policies.push_back(&c.policy);
  std::vector<ReplaySchedule> schedules;
  schedules.reserve(incidents.size());  // each SharedPrefix points at its schedule
  std::vector<std::unique_ptr<SharedPrefix>> prefixes;
  for (const IncidentTrace& inc : incidents) {
    schedules.push_back(ReplaySchedule::build(inc.calls(), opt));
    prefixes.push_back(SharedPrefix::build(policies, schedules.back(), opt, options.cancel));
  }
  return runSweep(
      std::move(candidates),
      [&](const Policy& policy) {
        SweepScore s;
        for (std::size_t i = 0; i < incidents.size(); ++i) {
          const SharedPrefix* prefix = prefixes[i].get();
          s.add(prefix && prefix->covers(policy)
                    ? prefix->replay(policy, incidents[i].faults(), options.cancel)
                    : replaySchedule(policy, schedules[i], incidents[i], opt, options.cancel));
        }
        return s;
      },
      options);
}

SweepResult runSweep(std::vector<SweepCandidate> candidates, const CandidateScorer& score,
                     const SweepRunOptions& options) {
  SweepResult r;
  r.candidates = std::move(candidates);
  r.scores.assign(r.candidates.size(), SweepScore{});
  const std::size_t total = r.candidates.size();
  std::atomic<std::size_t> done{0};
  forEachJob(total, options.threads, [&](std::size_t i) {
    if (options.cancel && options.cancel->load(std::memory_order_relaxed)) return;
    // Each candidate's score is independent of scheduling: deterministic.
    r.scores[i] = score(r.candidates[i].policy);
    // Cancelled during the candidate: its score is partial, not done.
    if (options.cancel && options.cancel->load(std::memory_order_relaxed)) return;
    const std::size_t d = done.fetch_add(1) + 1;
    if (options.progress) options.progress(d, total);
  });
  r.cancelled = done.load() < total;
  r.pareto = paretoFront(r.scores);
  return r;
}

// ---- calibration --------------------------------------------------------------------------

std::vector<Target> parseTargets(std::string_view text, const std::string& source) {
  using M = Target::Metric;
  // Availability is the one bound from below; durations are kept in seconds here.
  auto m = [](std::string_view name, M metric, KpiKind kind, bool upper = true) {
    return KpiMetric{name, static_cast<int>(metric), kind, upper, !upper};
  };
  static const KpiMetric kMetrics[] = {m("fp", M::Fp, KpiKind::Share),
                                       m("ttd", M::Ttd, KpiKind::Duration),
                                       m("mttr", M::Mttr, KpiKind::Duration),
                                       m("availability", M::Availability, KpiKind::Share, false),
                                       m("missed", M::Missed, KpiKind::Count),
                                       m("false_trips", M::FalseTrips, KpiKind::PerHour),
                                       m("collateral", M::Collateral, KpiKind::Share),
                                       m("mis_kill", M::MisKill, KpiKind::Share),
                                       m("waste", M::Waste, KpiKind::Share),
                                       m("cost", M::Cost, KpiKind::Number)};
  std::vector<Target> out;
  for (KpiTerm& k : parseKpiTerms(text, source, {kMetrics, false})) {
    Target t;
    t.metric = static_cast<M>(k.id);
    t.atMost = k.op == KpiOp::Le;
    t.value = t.metric == M::Ttd || t.metric == M::Mttr ? k.value / 1e6 : k.value;
    t.text = std::move(k.text);
    out.push_back(std::move(t));
  }
  if (out.empty()) throw InputError(source, 0, "", "no target given");
  return out;
}

namespace {

std::optional<double> metric(const SweepScore& s, Target::Metric m) {
  switch (m) {
    case Target::Metric::Fp:
      return s.fpRateOrNa();
    case Target::Metric::Ttd:
      return s.meanTtdSeconds();
    case Target::Metric::Mttr:
      return s.meanMttrSeconds();
    case Target::Metric::Availability:
      return s.availability();
    case Target::Metric::Missed:
      return static_cast<double>(s.faults - s.detected);
    case Target::Metric::FalseTrips:
      return s.falseTripsPerHour();
    case Target::Metric::Collateral:
      return s.blocks.collateralShare();
    case Target::Metric::MisKill:
      return s.misKillRate();
    case Target::Metric::Waste:
      return s.wasteShare();
    case Target::Metric::Cost:
      return s.costPer1k();
  }
  return std::nullopt;
}

}  // namespace

bool meets(const SweepScore& s, const Target& t) {
  const auto v = metric(s, t.metric);
  // No fault restored: MTTR undefined; nothing blocked: FP n/a (kpis.md) — both fail. Nothing
  // blocked meets a collateral bound: there was no collateral. A replay measures no mis-kill,
  // waste or cost (fails); a simulated run that refused nothing has no mis-kill (meets); no
  // priced model: no cost (fails).
  if (!v && t.simulatedOnly()) return s.simulated && t.metric == Target::Metric::MisKill;
  if (!v) return t.metric != Target::Metric::Mttr && t.metric != Target::Metric::Fp;
  return t.atMost ? *v <= t.value + 1e-12 : *v >= t.value - 1e-12;
}

std::string formatMetric(const SweepScore& s, Target::Metric m) {
  const auto v = metric(s, m);
  if (!v) return "n/a";
  std::ostringstream o;
  o.precision(3);
  switch (m) {
    case Target::Metric::Fp:
    case Target::Metric::Availability:
    case Target::Metric::Collateral:
    case Target::Metric::MisKill:
    case Target::Metric::Waste:
      o << std::fixed << std::setprecision(2) << *v * 100 << " %";
      break;
    case Target::Metric::Cost:
      o << std::fixed << std::setprecision(3) << *v << " per 1k";
      break;
    case Target::Metric::Ttd:
    case Target::Metric::Mttr:
      o << std::fixed << std::setprecision(1) << *v << " s";
      break;
    case Target::Metric::Missed:
      o << static_cast<long>(*v);
      break;
    case Target::Metric::FalseTrips:
      o << std::fixed << std::setprecision(2) << *v << " /h";
      break;
  }
  return o.str();
}

Calibration calibrate(const SweepResult& sweep, const std::vector<Target>& given) {
  // Detection is never traded away (seed 000's loop): unless the targets bound `missed`
  // themselves, a candidate that misses a real fault does not qualify.
  std::vector<Target> targets = given;
  if (std::none_of(given.begin(), given.end(),
                   [](const Target& t) { return t.metric == Target::Metric::Missed; }))
    targets.push_back({Target::Metric::Missed, true, 0, "missed<=0 (implied)"});
  Calibration c;
  auto better = [&](std::size_t a, std::size_t b) {  // a strictly preferred over b
    const SweepScore &x = sweep.scores[a], &y = sweep.scores[b];
    const double tx = x.meanTtdSeconds().value_or(0), ty = y.meanTtdSeconds().value_or(0);
    if (tx != ty) return tx < ty;
    if (x.fpRate() != y.fpRate()) return x.fpRate() < y.fpRate();
    return x.availability() > y.availability();
  };
  for (std::size_t i = 0; i < sweep.scores.size(); ++i) {
    bool all = true;
    for (const Target& t : targets) all = all && meets(sweep.scores[i], t);
    if (all && (!c.chosen || better(i, *c.chosen))) c.chosen = i;
  }
  if (c.chosen) {
    const SweepScore& s = sweep.scores[*c.chosen];
    for (const Target& t : targets)
      c.findings.push_back(t.text + ": " + formatMetric(s, t.metric) + " — met");
    return c;
  }
  // Nothing meets all: explain each target against the others.
  for (std::size_t k = 0; k < targets.size(); ++k) {
    const Target& t = targets[k];
    std::optional<std::size_t> alone, withOthers;
    auto closer = [&](std::size_t a, std::optional<std::size_t> b) {
      if (!b) return true;
      const double va = metric(sweep.scores[a], t.metric).value_or(t.atMost ? 1e300 : -1e300);
      const double vb = metric(sweep.scores[*b], t.metric).value_or(t.atMost ? 1e300 : -1e300);
      return t.atMost ? va < vb : va > vb;
    };
    for (std::size_t i = 0; i < sweep.scores.size(); ++i) {
      if (meets(sweep.scores[i], t) && closer(i, alone)) alone = i;
      bool others = true;
      for (std::size_t j = 0; j < targets.size(); ++j)
        if (j != k) others = others && meets(sweep.scores[i], targets[j]);
      if (others && closer(i, withOthers)) withOthers = i;
    }
    std::string f = t.text + ": ";
    if (!alone) {
      std::optional<std::size_t> best;
      for (std::size_t i = 0; i < sweep.scores.size(); ++i)
        if (closer(i, best)) best = i;
      f += "cannot be met by any candidate";
      if (best) f += " (best " + formatMetric(sweep.scores[*best], t.metric) + ")";
    } else if (withOthers) {
      f += "met alone (best " + formatMetric(sweep.scores[*alone], t.metric) +
           "), but with the other targets met the best is " +
           formatMetric(sweep.scores[*withOthers], t.metric);
    } else {
      f += "met alone (best " + formatMetric(sweep.scores[*alone], t.metric) +
           "); the other targets are not met together either";
    }
    c.findings.push_back(f);
  }
  return c;
}

// ---- the next grid ------------------------------------------------------------------------

namespace {

// How far a candidate is from one target, as a share of the bound (0: met). A metric that is
// n/a (nothing blocked, no fault restored) counts one whole bound short.
double shortfall(const SweepScore& s, const Target& t) {
  if (meets(s, t)) return 0;
  const std::optional<double> v = metric(s, t.metric);
  if (!v) return 1;
  const double scale = std::max(std::abs(t.value), t.metric == Target::Metric::Missed ? 1.0 : 1e-9);
  return std::abs(*v - t.value) / scale;
}

std::vector<Target> withImpliedMissed(const std::vector<Target>& given) {
  std::vector<Target> targets = given;
  if (std::none_of(given.begin(), given.end(),
                   [](const Target& t) { return t.metric == Target::Metric::Missed; }))
    targets.push_back({Target::Metric::Missed, true, 0, "missed<=0 (implied)"});
  return targets;
}

std::size_t closestCandidate(const SweepResult& sweep, const std::vector<Target>& targets) {
  std::size_t best = 0;
  double bestGap = 0;
  for (std::size_t i = 0; i < sweep.scores.size(); ++i) {
    double gap = 0;
    for (const Target& t : targets) gap += shortfall(sweep.scores[i], t);
    if (i == 0 || gap < bestGap) best = i, bestGap = gap;  // ties: the first, deterministic
  }
  return best;
}

// One parameter's next range around `at`, given the values the sweep tried (sorted, unique).
NextGridAxis nextAxis(const std::string& key, const std::vector<double>& tried, double at) {
  NextGridAxis a{key, at, at, 0};
  const std::size_t n = tried.size();
  if (n < 2) return a;
  const BreakerParam* p = findBreakerParam(key);
  const double lo = p ? p->min : -1e300, hi = p ? p->max : 1e300;
  const bool count = p && p->unit == "count";
  const double step = (tried.back() - tried.front()) / static_cast<double>(n - 1);
  const double room = static_cast<double>(std::max<std::size_t>(n, 3) - 2);  // points past the edge
  const double eps = step * 1e-9;
  if (at <= tried.front() + eps && at - step >= lo - eps) {
    const double m = std::min(room, std::floor((at - lo) / step + 1e-9));
    a.from = at - m * step, a.to = at + step, a.step = step;
    a.move = NextGridAxis::Move::ExtendedDown;
  } else if (at >= tried.back() - eps && at + step <= hi + eps) {
    const double m = std::min(room, std::floor((hi - at) / step + 1e-9));
    a.from = at - step, a.to = at + m * step, a.step = step;
    a.move = NextGridAxis::Move::ExtendedUp;
  } else {
    a.step = count ? std::max(1.0, std::round(step / 2)) : step / 2;
    a.from = std::max(lo, at - step), a.to = std::min(hi, at + step);
    a.move = NextGridAxis::Move::Refined;
  }
  return a;
}

// Recovery lag, not false trips, is most of the closest candidate's 误伤 and an fp target is
// missed: the recovery parameters the sweep did not touch, toward a faster return.
void addRecoveryAxes(NextGrid& g, const SweepResult& sweep, const std::vector<Target>& targets) {
  const SweepScore& s = sweep.scores[g.around];
  const bool fpMissed = std::any_of(targets.begin(), targets.end(), [&](const Target& t) {
    return t.metric == Target::Metric::Fp && !meets(s, t);
  });
  const std::uint64_t lag = s.blocks.part(BlockClass::RecoveryLag);
  if (!fpMissed || lag <= s.blocks.part(BlockClass::FalseTrip)) return;
  const BreakerConfig& b = sweep.candidates[g.around].policy.breaker;
  auto add = [&](const char* key, double from, double to) {
    const bool swept = std::any_of(g.axes.begin(), g.axes.end(),
                                   [&](const NextGridAxis& a) { return a.key == key; });
    if (swept || !(to > from)) return;
    g.axes.push_back({key, from, to, (to - from) / 3, NextGridAxis::Move::Added});
  };
  const double open = getBreakerParam(b, "open.duration").value_or(0);
  add("open.duration", open / 4, open);
  add("ramp.duration", 0, getBreakerParam(b, "ramp.duration").value_or(0));
  add("half_open.probe_share", getBreakerParam(b, "half_open.probe_share").value_or(1), 1);
  if (g.axes.back().move == NextGridAxis::Move::Added)
    g.why = "recovery lag is " + std::to_string(lag) + " of the " +
            std::to_string(s.blocks.avoidable()) +
            " avoidable blocks of the closest candidate: recovery parameters added";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", std::abs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

}  // namespace

std::optional<NextGrid> proposeNextGrid(const SweepResult& sweep,
                                        const std::vector<Target>& given) {
  if (sweep.scores.empty() || calibrate(sweep, given).chosen) return std::nullopt;
  NextGrid g;
  g.around = closestCandidate(sweep, withImpliedMissed(given));
  bool varied = false;
  for (std::size_t k = 0; k < sweep.candidates[g.around].values.size(); ++k) {
    const auto& [key, at] = sweep.candidates[g.around].values[k];
    std::vector<double> tried;
    for (const SweepCandidate& c : sweep.candidates)
      if (k < c.values.size()) tried.push_back(c.values[k].second);
    std::sort(tried.begin(), tried.end());
    tried.erase(std::unique(tried.begin(), tried.end()), tried.end());
    g.axes.push_back(nextAxis(key, tried, at));
    varied = varied || tried.size() > 1;
  }
  if (!varied) return std::nullopt;
  addRecoveryAxes(g, sweep, given);
  return g;
}

std::string formatNextGrid(const NextGrid& grid) {
  std::string out;
  for (const NextGridAxis& a : grid.axes) {
    if (!out.empty()) out += ", ";
    out += a.key + " " + number(a.from);
    if (a.step > 0) out += ".." + number(a.to) + " step " + number(a.step);
  }
  return out;
}

std::string nextGridArgs(const NextGrid& grid) {
  std::string out;
  for (const NextGridAxis& a : grid.axes) {
    if (!out.empty()) out += " ";
    out += "--param " + a.key + "=" + number(a.from);
    if (a.step > 0) out += ":" + number(a.to) + ":" + number(a.step);
  }
  return out;
}

}  // namespace spillway
