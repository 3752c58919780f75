#include "spillway/sim/knee.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>

#include "spillway/sim/simulator.hpp"
#include "spillway/sweep.hpp"

namespace spillway::sim {
namespace {

// Busy-slot samples per tick, for the utilization of a step.
class UtilizationSink final : public SeriesSink {
 public:
  UtilizationSink() = default;
  void begin(const std::vector<std::string>&, const std::vector<std::string>&) override {}
  void onInstance(const InstanceTick& r) override { busy_ += r.busy; }
  void onClient(const ClientTick&) override {}
  void end() override {}
  double busyTotal() const { return busy_; }

 private:
  double busy_ = 0;
};

struct Snapshot {
  LatencyHistogram hist;
  std::uint64_t finished = 0, failed = 0, available = 0;
  std::uint64_t backlog = 0, overdue = 0;  // unanswered originals; ... past their timeout
};

Snapshot take(const Simulator& s) {
  Snapshot out;
  out.hist = s.answeredLatency();
  const RunReport r = s.report();
  for (int k = 0; k < kEndCount; ++k) out.finished += r.ends[k];
  out.failed = out.finished - r.ends[static_cast<int>(End::Success)];
  out.available = r.availability.num;
  out.backlog = s.unanswered();
  out.overdue = s.overdue();
  return out;
}

struct Chunk {
  double p50 = 0, p99 = 0;
  Ratio errors;
  std::uint64_t available = 0;
  std::int64_t backlogGrowth = 0;
};

Chunk between(const Snapshot& a, const Snapshot& b) {
  LatencyHistogram h = b.hist;
  h.subtract(a.hist);
  Chunk c;
  c.p50 = h.total() ? h.quantile(0.5) / 1000.0 : 0;
  c.p99 = h.total() ? h.quantile(0.99) / 1000.0 : 0;
  // Requests still waiting past their timeout are errors that have not been counted yet: an
  // overload whose queue grows must not look like 0 % errors (docs/kpis.md, knee).
  c.errors = Ratio{b.failed - a.failed + b.overdue, b.finished - a.finished + b.overdue};
  c.available = b.available - a.available;
  c.backlogGrowth = static_cast<std::int64_t>(b.backlog) - static_cast<std::int64_t>(a.backlog);
  return c;
}

// A step has settled when two chunks agree on P99 and errors and the backlog is not growing
// (more than 2 % of the chunk's answers, and more than a handful).
bool settled(const Chunk& last, const Chunk& prev, const KneeOptions& o) {
  const double le = last.errors.value().value_or(0), pe = prev.errors.value().value_or(0);
  const auto growth = static_cast<double>(last.backlogGrowth);
  const bool growing = growth > std::max(5.0, 0.02 * static_cast<double>(last.errors.den));
  return !growing && std::abs(last.p99 - prev.p99) <= o.tolerance * std::max(prev.p99, 1.0) &&
         std::abs(le - pe) <= 0.01;
}

KneeStep runStep(const Scenario& base, double factor, const KneeOptions& o) {
  Scenario sc = base;
  sc.faults.clear();
  if (o.level >= 0)
    applyDegradeLevel(sc, o.level);
  else if (!o.degrade)
    sc.policy.degrade.enabled = false;
  sc.duration = o.maxStep;
  sc.drain = 0;
  double offered = 0, slots = 0;
  for (ClientSpec& c : sc.clients) {
    c.rate *= factor;
    // A session client's rate is in conversations; each brings `turns` requests on average.
    offered += c.rate * std::max(1.0, c.sessions.turns);
  }
  for (const ModelSpec& m : sc.models)
    slots += static_cast<double>(m.slotCount * m.instances.size());
  UtilizationSink util;
  SimOptions opt;
  opt.protection = o.protection;
  opt.series = &util;
  Simulator sim(sc, opt);
  KneeStep st;
  st.factor = factor;
  st.offeredRps = offered;
  std::vector<Snapshot> marks;
  marks.push_back(take(sim));
  std::vector<double> busyMarks{0};
  const Micros tickLen = sc.tick;
  for (Micros t = o.chunk; t <= o.maxStep; t += o.chunk) {
    sim.runUntil(t);
    marks.push_back(take(sim));
    busyMarks.push_back(util.busyTotal());
    const std::size_t n = marks.size();
    if (t < o.minStep || n < 4) continue;
    if (settled(between(marks[n - 2], marks[n - 1]), between(marks[n - 3], marks[n - 2]), o)) {
      st.stable = true;
      break;
    }
  }
  const std::size_t n = marks.size();
  // Measure over the last two chunks (the settled part).
  const std::size_t from = n >= 3 ? n - 3 : 0;
  const Chunk m = between(marks[from], marks[n - 1]);
  const Micros measured = static_cast<Micros>(n - 1 - from) * o.chunk;
  st.ran = static_cast<Micros>(n - 1) * o.chunk;
  st.p50Ms = m.p50;
  st.p99Ms = m.p99;
  st.errors = m.errors;
  st.backlog = marks[n - 1].backlog;
  st.overdue = marks[n - 1].overdue;
  st.throughput = static_cast<double>(m.available) / (static_cast<double>(measured) / 1e6);
  const double ticks = static_cast<double>(measured) / static_cast<double>(tickLen);
  st.utilization = ticks > 0 ? (busyMarks[n - 1] - busyMarks[from]) / (slots * ticks) : 0;
  return st;
}

}  // namespace

const char* degradeLevelName(int level) {
  static const char* const names[kDegradeLevels] = {"primary", "backups", "backups+cache"};
  return level >= 0 && level < kDegradeLevels ? names[level] : "?";
}

void applyDegradeLevel(Scenario& sc, int level) {
  if (level < 0 || level >= kDegradeLevels)
    throw std::invalid_argument("degrade level " + std::to_string(level) + ": expected 0 … " +
                                std::to_string(kDegradeLevels - 1));
  DegradeConfig& d = sc.policy.degrade;
  if (level == 0) {
    d.enabled = false;
    return;
  }
  if (!d.enabled)
    throw std::invalid_argument("degrade level " + std::to_string(level) +
                                " needs a `degrade` section in the scenario's policy");
  // The resorts that answer without capacity (static answer, fast-fail) are not capacity.
  d.staticAnswer = false;
  d.fastFailNonCritical = false;
  d.cache = d.cache && level >= 2;
}

KneeResult findKnee(const Scenario& scenario, const KneeOptions& o,
                    const std::function<void(const KneeStep&)>& progress) {
  KneeResult r;
  const std::vector<double> levels = gridSteps(o.from, o.to, o.step);
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const double f = levels[i];
    r.steps.push_back(runStep(scenario, f, o));
    if (progress) progress(r.steps.back());
    const KneeStep& s = r.steps.back();
    if (!r.knee && i > 0 && s.p99Ms > o.p99Ratio * r.steps.front().p99Ms &&
        s.errors.value().value_or(0) > o.errorRate)
      r.knee = r.steps.size() - 1;
  }
  return r;
}

std::string kneeTable(const KneeResult& r, const KneeOptions& o) {
  std::ostringstream os;
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-7s %-10s %-10s %-10s %-20s %-12s %-7s %-9s %s\n", "load",
                "offered/s", "p50", "p99", "errors", "good/s", "util", "backlog", "settled");
  os << buf;
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const KneeStep& s = r.steps[i];
    const auto e = s.errors.value();
    char err[48];  // with its sample size (kpis.md): the requests the step finished
    if (e) {
      std::snprintf(err, sizeof err, "%.2f %% (n=%llu)", *e * 100,
                    static_cast<unsigned long long>(s.errors.den));
    } else {
      std::snprintf(err, sizeof err, "n/a");
    }
    std::snprintf(buf, sizeof buf,
                  "  %-7.0f %-10.1f %-10.0f %-10.0f %-20s %-12.1f %-7.0f %-9llu %s%s\n",
                  s.factor * 100, s.offeredRps, s.p50Ms, s.p99Ms, err, s.throughput,
                  s.utilization * 100, static_cast<unsigned long long>(s.backlog),
                  s.stable ? "yes" : "no", r.knee && *r.knee == i ? "   <- knee" : "");
    os << buf;
  }
  os << "\n("
     << (o.level >= 0 ? std::string("degrade level ") + degradeLevelName(o.level)
         : o.degrade  ? std::string("with the degrade chain")
                      : std::string("primary path, degrade off"))
     << "; load in % of the scenario's base load; p50/p99 in ms, end to end; util in % of "
        "slots;\n backlog: requests unanswered at the step's end, those past their timeout counted "
        "as errors)\n";
  if (r.knee) {
    const KneeStep& k = r.steps[*r.knee];
    std::snprintf(buf, sizeof buf,
                  "Knee at %.0f %% load (%.1f req/s): p99 %.0f ms > %.1f x base %.0f ms and "
                  "errors > %.0f %%. Safe capacity: the step below, %.0f %% (%.1f req/s).\n",
                  k.factor * 100, k.offeredRps, k.p99Ms, o.p99Ratio, r.steps.front().p99Ms,
                  o.errorRate * 100, *r.knee ? r.steps[*r.knee - 1].factor * 100 : 0.0,
                  *r.knee ? r.steps[*r.knee - 1].offeredRps : 0.0);
    os << buf;
  } else {
    os << "No knee up to " << static_cast<int>(o.to * 100) << " % load.\n";
  }
  return os.str();
}

namespace {

const KneeStep* safeStep(const KneeResult& r) {
  if (!r.knee) return r.steps.empty() ? nullptr : &r.steps.back();
  return *r.knee ? &r.steps[*r.knee - 1] : nullptr;
}

nlohmann::ordered_json kneeObject(const KneeResult& r, const KneeOptions& o);

}  // namespace

std::string levelsTable(const std::vector<LevelKnee>& levels, const KneeOptions& o) {
  std::ostringstream os;
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-16s %-12s %-12s %-12s %-14s %s\n", "degrade level", "knee",
                "knee req/s", "safe req/s", "safe good/s", "scale out above");
  os << buf;
  for (const LevelKnee& l : levels) {
    const KneeResult& r = l.result;
    const KneeStep* safe = safeStep(r);
    char knee[32] = "none", kneeRps[32] = "-", safeRps[32] = "-", good[32] = "-", scale[64] = "-";
    if (r.knee) {
      std::snprintf(knee, sizeof knee, "%.0f %%", r.steps[*r.knee].factor * 100);
      std::snprintf(kneeRps, sizeof kneeRps, "%.1f", r.steps[*r.knee].offeredRps);
    } else {
      std::snprintf(knee, sizeof knee, "> %.0f %%", o.to * 100);
    }
    if (safe) {
      std::snprintf(safeRps, sizeof safeRps, "%.1f", safe->offeredRps);
      std::snprintf(good, sizeof good, "%.1f", safe->throughput);
      std::snprintf(scale, sizeof scale, "%.1f req/s or %.0f %% slots", safe->offeredRps,
                    safe->utilization * 100);
    }
    std::snprintf(buf, sizeof buf, "  %-16s %-12s %-12s %-12s %-14s %s\n",
                  degradeLevelName(l.level), knee, kneeRps, safeRps, good, scale);
    os << buf;
  }
  os << "\n(Each level: a knee search on fresh runs without faults. primary: degrade off; "
        "backups: + the\n capability-matched backup models; backups+cache: + cached answers. "
        "Safe: the last step below\n the knee; scale out before the offered load or the slot "
        "utilization passes it.)\n";
  return os.str();
}

std::string levelsJson(const std::vector<LevelKnee>& levels, const KneeOptions& o, int indent) {
  auto arr = nlohmann::ordered_json::array();
  for (const LevelKnee& l : levels) {
    nlohmann::ordered_json j = kneeObject(l.result, o);
    const KneeStep* safe = safeStep(l.result);
    nlohmann::ordered_json out;
    out["level"] = l.level;
    out["name"] = degradeLevelName(l.level);
    out["scale_out_above_rps"] = safe ? nlohmann::ordered_json(safe->offeredRps) : nullptr;
    out["scale_out_above_utilization"] = safe ? nlohmann::ordered_json(safe->utilization) : nullptr;
    out.update(j);
    arr.push_back(out);
  }
  return nlohmann::ordered_json{{"levels", arr}}.dump(indent);
}

std::string kneeJson(const KneeResult& r, const KneeOptions& o, int indent) {
  return kneeObject(r, o).dump(indent);
}

namespace {

nlohmann::ordered_json kneeObject(const KneeResult& r, const KneeOptions& o) {
  nlohmann::ordered_json j;
  j["rule"] = {{"p99_ratio", o.p99Ratio}, {"error_rate", o.errorRate}};
  auto steps = nlohmann::ordered_json::array();
  for (const KneeStep& s : r.steps) {
    nlohmann::ordered_json sj;
    sj["factor"] = s.factor;
    sj["offered_rps"] = s.offeredRps;
    sj["ran_s"] = s.ran / 1e6;
    sj["stable"] = s.stable;
    sj["p50_ms"] = s.p50Ms;
    sj["p99_ms"] = s.p99Ms;
    const auto e = s.errors.value();
    sj["error_rate"] = e ? nlohmann::ordered_json(*e) : nlohmann::ordered_json(nullptr);
    sj["finished"] = s.errors.den;
    sj["backlog"] = s.backlog;
    sj["overdue"] = s.overdue;
    sj["good_per_s"] = s.throughput;
    sj["utilization"] = s.utilization;
    steps.push_back(sj);
  }
  j["steps"] = steps;
  j["knee_index"] = r.knee ? nlohmann::ordered_json(*r.knee) : nlohmann::ordered_json(nullptr);
  j["knee_factor"] =
      r.knee ? nlohmann::ordered_json(r.steps[*r.knee].factor) : nlohmann::ordered_json(nullptr);
  return j;
}

}  // namespace

}  // namespace spillway::sim
