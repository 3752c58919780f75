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
      {"ttd", "TTD (worst)", {"TTD (worst)"}},
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

// The TTD tile's line under it: the misses (their TTD is ∞, kpis.md) and the mean. A replay's
// mean counts a miss at the fault's length (sweeps rank by it); a simulated one skips misses.
std::string ttdDetail(const std::vector<KpiRow>& rows) {
  const KpiRow* never = find(rows, {"real faults never detected", "missed faults"});
  const KpiRow* mean = find(rows, {"TTD (mean)", "TTD (mean; a miss counts the fault's length)"});
  const bool misses = never && never->current && *never->current > 0;
  std::string text =
      misses ? std::to_string(std::llround(*never->current)) + " never detected · " : std::string();
  if (!mean || !mean->current) return text + "mean n/a";
  text += durationText(static_cast<Micros>(std::llround(*mean->current * 1e6))) + " mean";
  if (misses && mean->name != "TTD (mean)") text += " (misses at their length)";
  return text;
}

// An overall availability that held can hide a client that fell: the worst fall of one
// client against the reference run, when it shows at the table's resolution (0.05 pp).
std::string clientFall(const std::vector<KpiRow>& rows) {
  const KpiRow* worst = nullptr;
  double fall = 0.0005;
  for (const KpiRow& r : rows)
    if (r.perClient && r.current && r.previous && *r.previous - *r.current >= fall) {
      fall = *r.previous - *r.current;
      worst = &r;
    }
  if (!worst) return {};
  std::string name = worst->name;
  if (const auto dot = name.find("· "); dot != std::string::npos) name = name.substr(dot + 3);
  char buf[48];
  std::snprintf(buf, sizeof buf, " %.1f pp", -fall * 100);
  return "▼ " + name + buf;
}

}  // namespace

HeadlineTile::Verdict judgeTarget(const std::optional<double>& value,
                                  const std::optional<sim::SeedInterval>& interval,
                                  const std::optional<double>& target, bool higherIsBetter) {
  if (!value) return HeadlineTile::Verdict::NoData;
  if (!target) return HeadlineTile::Verdict::NoTarget;
  auto meets = [&](double v) { return higherIsBetter ? v >= *target : v <= *target; };
  // Over several seeds the interval decides (kpis.md): a mean that meets the target while
  // the interval crosses it is not a pass.
  if (interval && interval->n > 1) {
    const double worse = higherIsBetter ? interval->lo : interval->hi;
    const double better = higherIsBetter ? interval->hi : interval->lo;
    if (meets(worse)) return HeadlineTile::Verdict::Pass;
    if (!meets(better)) return HeadlineTile::Verdict::Fail;
    return HeadlineTile::Verdict::Unsure;
  }
  return meets(*value) ? HeadlineTile::Verdict::Pass : HeadlineTile::Verdict::Fail;
}

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
    t.interval = row->currentInterval;
    t.reference = row->previous;
    t.target = targets.of(d.key);
    if (t.key == "fp") t.detail = fpParts(rows);
    if (t.key == "ttd") t.detail = ttdDetail(rows);
    if (t.key == "availability") t.warning = clientFall(rows);
    if (const KpiRow* would = find(rows, {"would open (watching only)"});
        t.key == "opens" && would && would->baseline)
      t.detail = "unprotected: " + std::to_string(std::llround(*would->baseline)) + " would open";
    t.verdict = judgeTarget(t.value, t.interval, t.target, t.higherIsBetter);
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
