#include "spillway/view/headline.hpp"

#include "spillway/view/time_format.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace spillway::view {
namespace {

// A tile and the KPI rows it reads: the simulated run's name first, then the replay's.
struct TileDef {
  const char* key;
  const char* label;
  std::vector<const char*> rows;
};

const std::vector<TileDef>& tileDefs() {
  static const std::vector<TileDef> defs = {
      {"availability",
       "availability",
       {"availability", "availability (answered within SLO, not blocked)"}},
      {"core_in_faults", "core in faults", {"core availability during faults"}},
      {"fp", "误伤 (FP)", {"false-positive rate (误伤)"}},
      {"interception", "interception", {"fault interception rate", "real faults detected"}},
      {"ttd", "TTD", {"TTD (mean)", "TTD (mean; a miss counts the fault's length)"}},
      {"self_healing", "self-healing", {"self-healing (trip → full traffic)"}},
      {"mttr", "MTTR", {"MTTR (mean, restored faults)"}},
      {"service_restoration", "service back (worst)", {"service restoration (worst)"}},
      {"opens", "opens", {"breaker opens"}},
  };
  return defs;
}

const KpiRow* find(const std::vector<KpiRow>& rows, const std::vector<const char*>& names) {
  for (const char* n : names)
    for (const KpiRow& r : rows)
      if (r.name == n) return &r;
  return nullptr;
}

std::string percent(const std::optional<double>& v) {
  if (!v) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", *v * 100);
  return buf;
}

// 误伤's two parts, as the KPI table lists them under it.
std::string fpParts(const std::vector<KpiRow>& rows) {
  const KpiRow* trips = find(rows, {"  of which false trips"});
  const KpiRow* lag = find(rows, {"  of which recovery lag"});
  if (!trips || !lag) return {};
  std::string parts = "trips " + percent(trips->current) + " · lag " + percent(lag->current);
  // Beside it, not in it (kpis.md): blocks of good calls during real faults. A low 误伤 over a
  // high collateral share is a policy that blocks the healthy calls of faulty instances.
  if (const KpiRow* c = find(rows, {"collateral share (correct trips)"}); c && c->current)
    parts += "\ncollateral " + percent(c->current);
  return parts;
}

HeadlineTile::Verdict judge(const HeadlineTile& t) {
  if (!t.value) return HeadlineTile::Verdict::NoData;
  if (!t.target) return HeadlineTile::Verdict::NoTarget;
  const bool pass = t.higherIsBetter ? *t.value >= *t.target : *t.value <= *t.target;
  return pass ? HeadlineTile::Verdict::Pass : HeadlineTile::Verdict::Fail;
}

}  // namespace

HeadlineTargets HeadlineTargets::defaults() {
  HeadlineTargets t;
  t.bounds = {{"availability", 0.999},
              {"core_in_faults", 0.92},
              {"fp", 0.03},
              {"interception", 0.95},
              {"ttd", 30.0},
              {"self_healing", 90.0},
              {"service_restoration", 90.0}};
  return t;
}

std::optional<double> HeadlineTargets::of(const std::string& key) const {
  const auto it = bounds.find(key);
  if (it == bounds.end()) return std::nullopt;
  return it->second;
}

std::vector<HeadlineTile> headline(const std::vector<KpiRow>& rows,
                                   const HeadlineTargets& targets) {
  std::vector<HeadlineTile> tiles;
  for (const TileDef& d : tileDefs()) {
    const KpiRow* row = find(rows, d.rows);
    if (!row) continue;
    HeadlineTile t;
    t.key = d.key;
    t.label = d.label;
    t.unit = row->unit;
    t.higherIsBetter = row->higherIsBetter;
    t.value = row->current;
    t.reference = row->previous;
    t.target = targets.of(d.key);
    if (t.key == "fp") t.detail = fpParts(rows);
    // A mean over the faults detected hides the ones never detected: their TTD is ∞
    // (kpis.md), and so is the tile's.
    if (const KpiRow* never = find(rows, {"real faults never detected"});
        t.key == "ttd" && never && never->current && *never->current > 0) {
      t.value = std::numeric_limits<double>::infinity();
      const auto n = std::llround(*never->current);
      t.detail =
          std::to_string(n) + " never detected · the rest " +
          (row->current
               ? durationText(static_cast<Micros>(std::llround(*row->current * 1e6))) + " mean"
               : std::string("none"));
    }
    if (const KpiRow* would = find(rows, {"would open (watching only)"});
        t.key == "opens" && would && would->baseline)
      t.detail = "unprotected: " + std::to_string(std::llround(*would->baseline)) + " would open";
    t.verdict = judge(t);
    tiles.push_back(std::move(t));
  }
  return tiles;
}

std::vector<std::pair<std::string, std::string>> headlineKeys() {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const TileDef& d : tileDefs())
    if (std::string_view(d.key) != "opens") keys.emplace_back(d.key, d.label);
  return keys;
}

}  // namespace spillway::view
