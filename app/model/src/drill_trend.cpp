#include "spillway/view/drill_trend.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace spillway::view {
namespace {

std::optional<double> number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// One check of a stored result (spillway-cli drill --json).
DrillPoint pointOf(const DrillRunRow& r, const nlohmann::json& c) {
  DrillPoint pt{r.id, r.revision, number(c, "measured"), false, std::nullopt, std::nullopt, false};
  const auto passed = c.find("passed");
  pt.passed = passed != c.end() && passed->is_boolean() && passed->get<bool>();
  const auto verdict = c.find("verdict");
  pt.unsure = verdict != c.end() && verdict->is_string() && verdict->get<std::string>() == "unsure";
  const auto interval = c.find("interval");
  if (interval != c.end() && interval->is_object() && number(*interval, "n").value_or(0) > 1) {
    pt.lo = number(*interval, "lo");
    pt.hi = number(*interval, "hi");
    if (!pt.lo || !pt.hi) pt.lo = pt.hi = std::nullopt;
  }
  return pt;
}

DrillKpiTrend& trendFor(DrillTrend& t, const std::string& kpi) {
  for (DrillKpiTrend& k : t.kpis)
    if (k.kpi == kpi) return k;
  t.kpis.push_back({kpi, std::nullopt, std::nullopt, {}});
  return t.kpis.back();
}

}  // namespace

std::vector<DrillTrend> drillTrends(std::vector<DrillRunRow> runs) {
  std::stable_sort(runs.begin(), runs.end(),
                   [](const DrillRunRow& a, const DrillRunRow& b) { return a.id < b.id; });
  std::map<std::string, DrillTrend> byName;
  for (const DrillRunRow& r : runs) {
    DrillTrend& t = byName[r.runbook];
    t.runbook = r.runbook;
    ++t.runs;
    t.passedRuns += r.passed;
    const nlohmann::json j = nlohmann::json::parse(r.resultJson, nullptr, false);
    if (!j.is_object() || !j.contains("checks") || !j["checks"].is_array()) continue;
    for (const nlohmann::json& c : j["checks"]) {
      if (!c.is_object() || !c.contains("kpi") || !c["kpi"].is_string()) continue;
      DrillKpiTrend& k = trendFor(t, c["kpi"].get<std::string>());
      k.min = number(c, "min");  // the newest run's bound wins: runs are in order
      k.max = number(c, "max");
      k.points.push_back(pointOf(r, c));
    }
  }
  std::vector<DrillTrend> out;
  for (auto& [name, t] : byName) out.push_back(std::move(t));
  return out;
}

}  // namespace spillway::view
