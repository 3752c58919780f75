#include "spillway/sim/runbook.hpp"

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "spillway/input_limits.hpp"
#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/seeds.hpp"
#include "spillway/yaml_reader.hpp"

namespace spillway::sim {
namespace {

// The drill KPIs that are shares of something (0 … 1).
bool isShare(const std::string& kpi) {
  return kpi.ends_with("_rate") || kpi.starts_with("availability") ||
         kpi.starts_with("core_availability") || kpi == "sla_attainment_in_quota" ||
         kpi == "collateral_share" || kpi == "resource_waste";
}

class RunbookReader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  Expectation expectation(const YAML::Node& n, const std::string& path) const {
    requireMap(n, path);
    checkKeys(n, path, {"kpi", "min", "max"});
    Expectation e;
    e.line = n.Mark().is_null() ? 0 : n.Mark().line + 1;
    const YAML::Node k = need(n, "kpi", path);
    e.kpi = scalar(k, join(path, "kpi"));
    const auto& known = drillKpis();
    if (std::find(known.begin(), known.end(), e.kpi) == known.end())
      fail(k.Mark(), join(path, "kpi"), "unknown KPI '" + e.kpi + "' (docs/drills.md lists them)");
    if (auto v = n["min"]) e.min = number(v, join(path, "min"), -1e12, 1e12, false);
    if (auto v = n["max"]) e.max = number(v, join(path, "max"), -1e12, 1e12, false);
    if (!e.min && !e.max) fail(n.Mark(), path, "expected min, max or both");
    // A bound no run can meet is a runbook error (exit 2), not a failed drill (exit 1): every
    // KPI is 0 or more, and a share is at most 1.
    if (e.max && *e.max < 0)
      fail(keyMark(n, "max"), join(path, "max"), e.kpi + " is never below 0");
    if (e.min && *e.min > 1 && isShare(e.kpi))
      fail(keyMark(n, "min"), join(path, "min"), e.kpi + " is a share from 0 to 1");
    if (e.min && e.max && *e.max < *e.min)
      fail(keyMark(n, "max"), join(path, "max"), "must not be below min");
    return e;
  }
};

// The worst TTD and the worst service restoration are ∞ for a fault never detected or a service
// never back (kpis.md), which JSON cannot hold: they are read from the run itself.
std::optional<double> kpiOf(const nlohmann::json& kpis, const std::string& key);
std::optional<double> drillValue(const RunReport& run, const nlohmann::json& kpis,
                                 const std::string& key) {
  if (key == "ttd_worst_s") return worstTtdSeconds(run);
  if (key == "service_restoration_worst_s") return worstRestorationSeconds(run);
  return kpiOf(kpis, key);
}

// A KPI's value in one run's JSON report: a rate's value, a number, or nothing (n/a).
std::optional<double> kpiOf(const nlohmann::json& kpis, const std::string& key) {
  const auto it = kpis.find(key);
  if (it == kpis.end()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  if (it->is_object()) {
    const auto v = it->find("value");
    if (v != it->end() && v->is_number()) return v->get<double>();
  }
  return std::nullopt;
}

std::string show(const std::optional<double>& v) {
  if (!v) return "n/a";
  if (std::isinf(*v)) return *v > 0 ? "never" : "-never";  // a fault never detected, never back
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", *v);
  return buf;
}

// A file the runbook names that cannot be read is reported where the runbook names it (an
// error inside that file keeps its own file:line).
template <class Load>
auto referenced(const YamlReader& r, const YAML::Node& n, const char* field, Load load) {
  try {
    return load();
  } catch (const InputError& e) {
    if (e.line() != 0) throw;
    r.fail(n.Mark(), field, e.what());
  }
}

}  // namespace

const std::vector<std::string>& drillKpis() {
  static const std::vector<std::string> keys = {
      "availability",
      "core_availability",
      "availability_during_faults",
      "core_availability_during_faults",
      "sla_attainment_in_quota",
      "degrade_success_rate",
      "degrade_switch_rate",
      "false_positive_rate",
      "collateral_share",
      "false_trips_per_hour",
      "fault_interception_rate",
      "cascade_rate",
      "resource_waste",
      "limiter_mis_kill_rate",
      "cost_per_1k_requests",
      "ttd_s",
      "ttd_worst_s",
      "self_healing_s",
      "service_restoration_s",
      "service_restoration_worst_s",
      "recovery_after_fault_s",
      "retry_amplification",
      "p99_ms",
  };
  return keys;
}

Runbook parseRunbook(std::string_view text, const std::string& source, const std::string& baseDir,
                     const RunbookLoaders& loaders) {
  checkInputSize(text, source, input_limits::kScenario, "runbook");
  const YAML::Node root = loadYamlText(text, source);
  const RunbookReader r(source);
  if (!root || root.IsNull()) throw InputError(source, 0, "", "empty runbook");
  r.requireMap(root, "runbook");
  r.checkKeys(root, "",
              {"version", "name", "revision", "description", "scenario", "policy", "mode", "seeds",
               "traffic", "faults", "expect"});
  if (r.count(r.need(root, "version", ""), "version", 1, 1) != 1)
    throw InputError(source, 0, "version", "expected 1");
  Runbook rb;
  rb.source = source;
  rb.name = r.text(r.need(root, "name", ""), "name");
  if (rb.name.empty()) r.fail(root["name"].Mark(), "name", "must not be empty");
  if (auto v = root["revision"]) rb.revision = r.count(v, "revision", 1, 1000000);
  if (auto v = root["description"]) rb.description = r.text(v, "description");
  const YAML::Node scenarioNode = r.need(root, "scenario", "");
  rb.scenario = referenced(r, scenarioNode, "scenario", [&] {
    return loaders.scenario(r.scalar(scenarioNode, "scenario"), baseDir);
  });
  if (auto v = root["policy"]) {
    std::filesystem::path p = r.scalar(v, "policy");
    if (p.is_relative() && !baseDir.empty()) p = std::filesystem::path(baseDir) / p;
    const std::string name = rb.scenario.policy.name;
    // As simulate --policy: a breaker-only file keeps the scenario's other sections.
    usePolicy(rb.scenario, referenced(r, v, "policy", [&] { return loaders.policy(p.string()); }));
    if (rb.scenario.policy.name.empty()) rb.scenario.policy.name = name;
  }
  if (auto v = root["mode"]) {
    std::vector<Mode> m;
    try {
      m = parseModes(r.scalar(v, "mode"));
    } catch (const std::invalid_argument& e) {
      r.fail(v.Mark(), "mode", e.what());
    }
    if (m.size() != 1) r.fail(v.Mark(), "mode", "one mode per runbook");
    rb.mode = m.front();
  } else {
    rb.mode = parseModes("all").front();
  }
  if (auto v = root["seeds"]) rb.seeds = r.count(v, "seeds", 1, 100);
  if (auto t = root["traffic"]) {
    r.requireMap(t, "traffic");
    r.checkKeys(t, "traffic", {"scale", "duration"});
    if (auto v = t["duration"]) {
      rb.scenario.duration = r.duration(v, "traffic.duration", seconds(1), false, true);
      std::erase_if(rb.scenario.faults,
                    [&](const FaultSpec& f) { return f.at >= rb.scenario.duration; });
    }
    if (auto v = t["scale"]) {
      const double k = r.number(v, "traffic.scale", 0, 100, true);
      for (ClientSpec& c : rb.scenario.clients) c.rate *= k;
    }
  }
  // The drill's faults replace the scenario's: a runbook says exactly what it injects.
  if (root["faults"]) rb.scenario.faults = parseFaultsOf(text, source, "faults", rb.scenario);
  try {
    checkScenarioBudget(rb.scenario);
  } catch (const InputError& e) {
    r.fail(root["traffic"] ? root["traffic"].Mark() : scenarioNode.Mark(), "traffic", e.detail());
  }
  const YAML::Node expect = r.need(root, "expect", "");
  if (!expect.IsSequence() || expect.size() == 0)
    r.fail(expect.Mark(), "expect", "expected a list of {kpi, min, max}");
  for (std::size_t i = 0; i < expect.size(); ++i)
    rb.expectations.push_back(r.expectation(expect[i], "expect[" + std::to_string(i) + "]"));
  return rb;
}

bool Runbook::needsBaseline() const {
  return std::any_of(expectations.begin(), expectations.end(),
                     [](const Expectation& e) { return e.kpi == "fault_interception_rate"; });
}

namespace {

// Interception is paired (kpis.md): each seed's protected run against the same seed without
// protection, as `simulate --seeds` pairs them.
void pairWithBaseline(const Runbook& rb, std::vector<RunReport>& runs, unsigned threads) {
  const ModeRuns off = runModes(rb.scenario, parseModes("off"), rb.seeds, threads);
  for (std::size_t i = 0; i < runs.size(); ++i)
    runs[i].pairedInterception = pairedInterception(off.runs.front()[i], runs[i]);
}

}  // namespace

DrillResult runDrill(const Runbook& rb, unsigned threads) {
  ModeRuns runs = runModes(rb.scenario, {rb.mode}, rb.seeds, threads);
  if (rb.needsBaseline()) pairWithBaseline(rb, runs.runs.front(), threads);
  const std::vector<RunReport>& reps = runs.runs.front();
  std::vector<nlohmann::json> reports;
  for (const RunReport& run : reps)
    reports.push_back(nlohmann::json::parse(reportJson(run, -1))["kpis"]);
  auto interval = [&](const std::string& key) {
    std::vector<double> v;
    for (std::size_t s = 0; s < reps.size(); ++s)
      if (const auto x = drillValue(reps[s], reports[s], key)) v.push_back(*x);
    return intervalInRange(v, isShare(key));
  };
  std::vector<std::pair<std::string, std::optional<double>>> kpis;
  std::map<std::string, SeedInterval> intervals;
  for (const std::string& key : drillKpis()) {
    const auto i = interval(key);
    kpis.emplace_back(key, i ? std::optional(i->mean) : std::nullopt);
    if (i) intervals.emplace(key, *i);
  }
  return judgeDrill(rb, std::move(kpis), intervals);
}

namespace {

CheckVerdict judgeCheck(const Expectation& e, const std::optional<double>& measured,
                        const std::optional<SeedInterval>& interval, std::uint32_t seeds) {
  if (!measured) return CheckVerdict::NotMeasured;
  auto meets = [&](double v) { return (!e.min || v >= *e.min) && (!e.max || v <= *e.max); };
  // A worst that is ∞ in some seed (a fault never detected, a service never back) is that
  // seed's verdict, not an interval to be unsure about.
  if (std::isinf(*measured)) return meets(*measured) ? CheckVerdict::Pass : CheckVerdict::Fail;
  // Defined in one seed of several (a TTD where only one seed detected anything): one seed is
  // an anecdote — it can break the bound, not establish it.
  if (interval && interval->n == 1 && seeds > 1)
    return meets(*measured) ? CheckVerdict::Unsure : CheckVerdict::Fail;
  if (!interval || interval->n <= 1)
    return meets(*measured) ? CheckVerdict::Pass : CheckVerdict::Fail;
  if (meets(interval->lo) && meets(interval->hi)) return CheckVerdict::Pass;
  // None of it meets: all below the floor or all above the ceiling.
  if ((e.min && interval->hi < *e.min) || (e.max && interval->lo > *e.max))
    return CheckVerdict::Fail;
  return CheckVerdict::Unsure;
}

}  // namespace

DrillResult judgeDrill(const Runbook& rb,
                       std::vector<std::pair<std::string, std::optional<double>>> kpis,
                       const std::map<std::string, SeedInterval>& intervals) {
  DrillResult out;
  out.kpis = std::move(kpis);
  out.passed = true;
  for (const Expectation& e : rb.expectations) {
    CheckResult c;
    c.expectation = e;
    for (const auto& [key, v] : out.kpis)
      if (key == e.kpi) c.measured = v;
    if (const auto it = intervals.find(e.kpi); it != intervals.end()) c.interval = it->second;
    c.verdict = judgeCheck(e, c.measured, c.interval, intervals.empty() ? 1 : rb.seeds);
    c.passed = c.verdict == CheckVerdict::Pass;
    c.straddles = c.verdict == CheckVerdict::Unsure;
    out.passed = out.passed && c.passed;
    out.checks.push_back(std::move(c));
  }
  return out;
}

namespace {

// "pass", "FAIL", "FAIL (not measured)" or "UNSURE (the interval crosses the bound)".
std::string resultText(const CheckResult& c) {
  switch (c.verdict) {
    case CheckVerdict::Pass:
      return "pass";
    case CheckVerdict::Fail:
      return "FAIL";
    case CheckVerdict::NotMeasured:
      return "FAIL (not measured)";
    case CheckVerdict::Unsure:
      break;
  }
  return "UNSURE (the interval crosses the bound)";
}

// The mean, and over several seeds their 95 % interval: "0.9241 [0.8913, 0.957]"; when the KPI
// was defined in fewer seeds than ran (a TTD where nothing was detected), how many: "n=1/10".
std::string measuredText(const CheckResult& c, std::uint32_t seeds) {
  std::string m = show(c.measured);
  if (c.measured && c.interval && c.interval->n > 1)
    m += " [" + show(c.interval->lo) + ", " + show(c.interval->hi) + "]";
  if (c.measured && c.interval && c.interval->n < seeds)
    m += " n=" + std::to_string(c.interval->n) + "/" + std::to_string(seeds);
  return m;
}

// A value as drill --json writes it: a number, null (not measured) or "never" (a worst that is
// ∞: a fault never detected, a service never back), which JSON numbers cannot hold.
nlohmann::ordered_json measuredJson(const std::optional<double>& v) {
  if (!v) return nullptr;
  if (std::isinf(*v)) return "never";
  return *v;
}

const char* verdictKey(CheckVerdict v) {
  switch (v) {
    case CheckVerdict::Pass:
      return "pass";
    case CheckVerdict::Fail:
      return "fail";
    case CheckVerdict::Unsure:
      return "unsure";
    case CheckVerdict::NotMeasured:
      break;
  }
  return "not_measured";
}

}  // namespace

std::string drillTable(const Runbook& rb, const DrillResult& d) {
  std::ostringstream os;
  os << "Drill " << rb.name << " (revision " << rb.revision << "): scenario " << rb.scenario.name;
  if (d.target.empty())
    os << ", mode " << rb.mode.name << ", seeds " << rb.scenario.seed << " … "
       << rb.scenario.seed + rb.seeds - 1 << "\n\n";
  else
    os << ", against " << d.target << " (measured at the callers)\n\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-34s %-16s %-28s %s\n", "expectation", "bound",
                rb.seeds > 1 && d.target.empty() ? "measured [95 % interval]" : "measured",
                "result");
  os << buf;
  for (const CheckResult& c : d.checks) {
    const Expectation& e = c.expectation;
    std::string bound;
    if (e.min) bound += ">= " + show(e.min);
    if (e.min && e.max) bound += ", ";
    if (e.max) bound += "<= " + show(e.max);
    std::snprintf(buf, sizeof buf, "  %-34s %-16s %-28s %s\n", e.kpi.c_str(), bound.c_str(),
                  measuredText(c, d.target.empty() ? rb.seeds : 1).c_str(), resultText(c).c_str());
    os << buf;
  }
  os << "\n"
     << (d.passed ? "PASSED" : "FAILED")
     << (d.target.empty() && rb.seeds > 1
             ? " (each check on the seeds' 95 % interval; line numbers: "
             : " (line numbers: ")
     << rb.source << ")\n";
  if (std::any_of(d.checks.begin(), d.checks.end(),
                  [](const CheckResult& c) { return c.straddles; }))
    os << "UNSURE: the interval crosses the bound, so the seeds cannot tell; more seeds (the\n"
          "runbook's `seeds:`, now "
       << rb.seeds << ") narrow it.\n";
  return os.str();
}

std::string drillJson(const Runbook& rb, const DrillResult& d, int indent) {
  nlohmann::ordered_json j;
  j["runbook"] = rb.name;
  j["revision"] = rb.revision;
  j["scenario"] = rb.scenario.name;
  j["mode"] = rb.mode.name;
  j["first_seed"] = rb.scenario.seed;
  j["seeds"] = rb.seeds;
  j["passed"] = d.passed;
  j["target"] = d.target.empty() ? "simulator" : d.target;
  auto checks = nlohmann::ordered_json::array();
  for (const CheckResult& c : d.checks) {
    nlohmann::ordered_json cj;
    cj["kpi"] = c.expectation.kpi;
    cj["min"] = c.expectation.min ? nlohmann::ordered_json(*c.expectation.min) : nullptr;
    cj["max"] = c.expectation.max ? nlohmann::ordered_json(*c.expectation.max) : nullptr;
    cj["measured"] = measuredJson(c.measured);
    cj["passed"] = c.passed;
    cj["verdict"] = verdictKey(c.verdict);
    cj["interval"] = c.interval ? nlohmann::ordered_json{{"lo", c.interval->lo},
                                                         {"hi", c.interval->hi},
                                                         {"n", c.interval->n}}
                                : nlohmann::ordered_json(nullptr);
    cj["straddles"] = c.straddles;
    cj["line"] = c.expectation.line;
    checks.push_back(cj);
  }
  j["checks"] = checks;
  nlohmann::ordered_json k;
  for (const auto& [key, v] : d.kpis) k[key] = measuredJson(v);
  j["kpis"] = k;
  return j.dump(indent);
}

}  // namespace spillway::sim
