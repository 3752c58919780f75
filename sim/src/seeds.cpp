#include "spillway/sim/seeds.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>
#include <thread>

#include "spillway/parallel.hpp"
#include "spillway/sim/simulator.hpp"

namespace spillway::sim {
namespace {

struct SeedKpi {
  const char* name;
  const char* key;   // JSON
  const char* unit;  // "share", "s", "/h", "x"
  bool higherIsBetter;
  std::optional<double> (*get)(const RunReport&);
  std::optional<double> seed000;  // the seed document's figure, protected
  // What one run's figure is over (requests, blocks, faults), summed over the seeds for the
  // table's n (kpis.md: every rate with its sample size); null: a count or a ratio of totals.
  std::uint64_t (*over)(const RunReport&) = nullptr;
};

std::uint64_t realFaults(const RunReport& r, bool (*counts)(const FaultReport&)) {
  std::uint64_t n = 0;
  for (const FaultReport& f : r.faults) n += !f.benign && counts(f);
  return n;
}

std::optional<double> secondsOf(const std::optional<Micros>& d) {
  if (!d) return std::nullopt;
  return static_cast<double>(*d) / 1e6;
}

const SeedKpi kKpis[] = {
    {"availability (within SLO)", "availability", "share", true,
     [](const RunReport& r) { return r.availability.value(); }, std::nullopt,
     [](const RunReport& r) { return r.availability.den; }},
    {"core availability during faults", "core_availability_during_faults", "share", true,
     [](const RunReport& r) { return r.coreAvailabilityInFault.value(); }, 0.92,
     [](const RunReport& r) { return r.coreAvailabilityInFault.den; }},
    {"degrade success rate", "degrade_success_rate", "share", true,
     [](const RunReport& r) { return r.degradeSuccess.value(); }, 0.97,
     [](const RunReport& r) { return r.degradeSuccess.den; }},
    {"fault interception rate (paired)", "fault_interception_rate", "share", true,
     [](const RunReport& r) { return r.pairedInterception.value(); }, 0.95,
     [](const RunReport& r) { return r.pairedInterception.den; }},
    {"false-positive rate (误伤)", "false_positive_rate", "share", false,
     [](const RunReport& r) { return r.falsePositive.value(); }, 0.03,
     [](const RunReport& r) { return r.falsePositive.den; }},
    {"collateral share", "collateral_share", "share", false,
     [](const RunReport& r) { return r.collateral.value(); }, std::nullopt,
     [](const RunReport& r) { return r.collateral.den; }},
    {"false trips per hour", "false_trips_per_hour", "/h", false,
     [](const RunReport& r) { return r.falseTripsPerHour; }, std::nullopt},
    {"TTD (mean, detected faults)", "ttd_s", "s", false,
     [](const RunReport& r) { return secondsOf(r.meanTtd); }, std::nullopt,
     [](const RunReport& r) {
       return realFaults(r, [](const FaultReport& f) { return f.detected; });
     }},
    {"TTD (worst; inf: one missed)", "ttd_worst_s", "s", false, worstTtdSeconds, std::nullopt,
     [](const RunReport& r) { return realFaults(r, [](const FaultReport&) { return true; }); }},
    {"self-healing time", "self_healing_s", "s", false,
     [](const RunReport& r) { return secondsOf(r.meanSelfHealing); }, 90.0,
     [](const RunReport& r) { return r.selfHealed; }},
    {"service restoration (worst; inf: one never back)", "service_restoration_worst_s", "s", false,
     worstRestorationSeconds, 90.0,
     [](const RunReport& r) { return r.serviceRestored + r.serviceNotRestored; }},
    {"retry amplification", "retry_amplification", "x", false,
     [](const RunReport& r) { return r.retryAmplification.value(); }, std::nullopt},
};

std::uint64_t eventsOver(const std::vector<RunReport>& runs, const SeedKpi& k) {
  std::uint64_t n = 0;
  if (k.over)
    for (const RunReport& r : runs) n += k.over(r);
  return n;
}

// "98.1 % [97.8 %, 98.3 %] n=290412": the events the seeds' figures are over, summed.
std::string withCount(std::string text, const std::vector<RunReport>& runs, const SeedKpi& k) {
  if (!k.over || text == "n/a") return text;
  return text + " n=" + std::to_string(eventsOver(runs, k));
}

std::optional<SeedInterval> over(const std::vector<RunReport>& runs, const SeedKpi& k) {
  return intervalOver(runs, k.get, std::string_view(k.unit) == "share");
}

// Where the seed's figure lies against the protected interval.
// `events`: what the figure is over, all seeds together. A verdict on a handful of faults (three
// seeds with one fault each give a zero-width interval) is said with its n.
std::string verdict(const std::optional<SeedInterval>& i, const SeedKpi& k, double seed,
                    std::uint64_t events) {
  if (!i) return "n/a";
  std::string v = "inside";
  if (seed < i->lo || seed > i->hi) {
    const bool above = i->lo > seed;  // the whole interval is above the seed's figure
    v = above == k.higherIsBetter ? "better" : "worse";
  }
  if (k.over && events < 10) v += " (only n=" + std::to_string(events) + ")";
  return v;
}

bool isSeed000(const Scenario& sc) {
  return sc.name.rfind("seed-000", 0) == 0;
}

}  // namespace

SeedRuns runSeeds(const Scenario& scenario, std::uint32_t n, unsigned threads) {
  std::vector<Scenario> scs(n, scenario);
  for (std::uint32_t i = 0; i < n; ++i) scs[i].seed = scenario.seed + i;
  SeedRuns out;
  out.baseline.resize(n);
  out.protectedRuns.resize(n);
  forEachJob(2 * std::size_t{n}, threads, [&](std::size_t job) {
    const std::size_t i = job / 2;
    SimOptions opt;
    opt.protection = job % 2 == 1;
    (opt.protection ? out.protectedRuns : out.baseline)[i] = simulate(scs[i], opt);
  });
  for (std::uint32_t i = 0; i < n; ++i) {
    out.protectedRuns[i].pairedInterception =
        pairedInterception(out.baseline[i], out.protectedRuns[i]);
  }
  return out;
}

std::optional<SeedInterval> seedInterval(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  SeedInterval i;
  i.n = static_cast<std::uint32_t>(values.size());
  // A TTD of ∞ (a fault some seed never detected): the mean is ∞ and no t interval exists;
  // the interval spans the seeds' values, so the finite ones still show.
  if (std::any_of(values.begin(), values.end(), [](double v) { return std::isinf(v); })) {
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    i.lo = *lo;
    i.hi = *hi;
    i.mean = *hi > 0 && std::isinf(*hi) ? *hi : *lo;
    return i;
  }
  for (double v : values) i.mean += v;
  i.mean /= static_cast<double>(i.n);
  if (i.n == 1) {
    i.lo = i.hi = i.mean;
    return i;
  }
  double ss = 0;
  for (double v : values) ss += (v - i.mean) * (v - i.mean);
  const double sd = std::sqrt(ss / static_cast<double>(i.n - 1));
  const boost::math::students_t t(static_cast<double>(i.n - 1));
  const double half =
      boost::math::quantile(boost::math::complement(t, 0.025)) * sd / std::sqrt(double(i.n));
  i.lo = i.mean - half;
  i.hi = i.mean + half;
  return i;
}

std::optional<SeedInterval> intervalOver(const std::vector<RunReport>& runs,
                                         std::optional<double> (*get)(const RunReport&),
                                         bool share) {
  std::vector<double> v;
  for (const RunReport& r : runs)
    if (const auto x = get(r)) v.push_back(*x);
  return intervalInRange(v, share);
}

std::optional<SeedInterval> intervalInRange(const std::vector<double>& values, bool share) {
  auto i = seedInterval(values);
  if (i) i->lo = std::max(0.0, i->lo);
  if (i && share) i->hi = std::min(1.0, i->hi);
  return i;
}

std::string formatKpi(double v, std::string_view u) {
  char buf[48];
  if (u == "share")
    std::snprintf(buf, sizeof buf, v >= 0.999 && v < 1 ? "%.2f %%" : "%.1f %%", v * 100);
  else if (u == "s")
    std::snprintf(buf, sizeof buf, "%.0f s", v);
  else if (u == "/h")
    std::snprintf(buf, sizeof buf, "%.1f/h", v);
  else if (u == "cost")
    std::snprintf(buf, sizeof buf, "%.2f", v);
  else if (u == "count")
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.2fx", v);
  return buf;
}

std::string formatInterval(const std::optional<SeedInterval>& i, std::string_view unit) {
  if (!i) return "n/a";
  if (i->n == 1) return formatKpi(i->mean, unit);
  return formatKpi(i->mean, unit) + " [" + formatKpi(i->lo, unit) + ", " + formatKpi(i->hi, unit) +
         "]";
}

std::string seedsTable(const SeedRuns& runs, const Scenario& sc) {
  std::ostringstream os;
  const std::size_t n = runs.protectedRuns.size();
  os << "Scenario " << sc.name << ", seeds " << sc.seed << " … " << sc.seed + n - 1 << " (" << n
     << "): mean [95 % interval]\n\n";
  char buf[400];
  std::snprintf(buf, sizeof buf, "  %-34s %-40s %-40s %-8s %s\n", "KPI", "baseline (off)",
                "protected (on)", "seed", "seed vs interval");
  os << buf;
  for (const SeedKpi& k : kKpis) {
    const auto b = over(runs.baseline, k), p = over(runs.protectedRuns, k);
    std::string seed, where;
    if (isSeed000(sc) && k.seed000) {
      seed = formatKpi(*k.seed000, k.unit);
      where = verdict(p, k, *k.seed000, eventsOver(runs.protectedRuns, k));
    }
    // The KPI names hold one CJK pair (two columns, six bytes): pad by what the eye sees.
    const std::string name = k.name;
    const int extra = name.find("误伤") != std::string::npos ? 2 : 0;
    std::snprintf(buf, sizeof buf, "  %-*s %-40s %-40s %-8s %s", 34 + extra, k.name,
                  withCount(formatInterval(b, k.unit), runs.baseline, k).c_str(),
                  withCount(formatInterval(p, k.unit), runs.protectedRuns, k).c_str(), seed.c_str(),
                  where.c_str());
    std::string line = buf;
    while (!line.empty() && line.back() == ' ') line.pop_back();  // noise in a diff
    os << line << '\n';
  }
  os << "\n(interval: Student's t over the seeds where the KPI is defined; a rate over nothing is "
        "n/a\n and is left out; n: the requests, blocks or faults it is over, all seeds "
        "together.\n \"better\"/\"worse\": the whole interval is on that side of the seed's "
        "figure.)\n";
  return os.str();
}

std::string seedsJson(const SeedRuns& runs, const Scenario& sc, int indent) {
  nlohmann::ordered_json j;
  j["scenario"] = sc.name;
  j["first_seed"] = sc.seed;
  j["seeds"] = runs.protectedRuns.size();
  auto side = [](const std::vector<RunReport>& rs) {
    nlohmann::ordered_json o;
    for (const SeedKpi& k : kKpis) {
      const auto i = over(rs, k);
      o[k.key] =
          i ? nlohmann::ordered_json{{"mean", i->mean}, {"lo", i->lo}, {"hi", i->hi}, {"n", i->n}}
            : nlohmann::ordered_json(nullptr);
    }
    return o;
  };
  j["baseline"] = side(runs.baseline);
  j["protected"] = side(runs.protectedRuns);
  return j.dump(indent);
}

}  // namespace spillway::sim
