#pragma once
// The headline strip: the few KPIs an SRE decides on — availability, core availability in
// faults, 误伤 with its parts, interception, TTD, self-healing, service restoration, opens —
// each against its target with a pass / fail verdict. Built from the KPI rows (simulated or
// replayed), so it shows exactly the figures the table does.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "spillway/view/timeline.hpp"

namespace spillway::view {

// Bounds by tile key ("availability", "fp", "ttd", …): a floor for a KPI where higher is
// better, a ceiling otherwise. A key without a bound has no verdict.
struct HeadlineTargets {
  std::map<std::string, double> bounds;
  // Seed 000's published figures (core availability in faults 92 %, 误伤 3 %, interception
  // 95 %, self-healing 90 s), seed 001's detection (3 windows of 10 s) and seed 002's 99.9 %.
  static HeadlineTargets defaults();
  std::optional<double> of(const std::string& key) const;
};

struct HeadlineTile {
  // Unsure: over several seeds, the 95 % interval straddles the target.
  enum class Verdict { Pass, Fail, Unsure, NoTarget, NoData };
  std::string key, label, unit;  // unit as KpiRow's: "share", "s", "count"
  bool higherIsBetter = true;
  std::optional<double> value;
  std::optional<sim::SeedInterval> interval;  // over several seeds: what the verdict reads
  std::optional<double> reference;  // the row's `previous`: the reference run (pinned or previous)
  std::optional<double> target;
  std::string detail;   // e.g. 误伤's two parts
  std::string warning;  // always shown: e.g. one client fell while the total held
  Verdict verdict = Verdict::NoData;
};

// A value against its bound; with an interval over several seeds, Pass only when the whole
// interval meets it, Fail when none of it does, Unsure otherwise (docs/kpis.md).
HeadlineTile::Verdict judgeTarget(const std::optional<double>& value,
                                  const std::optional<sim::SeedInterval>& interval,
                                  const std::optional<double>& target, bool higherIsBetter);

// The tiles present in `rows` (a replay has no core availability or self-healing), in a fixed
// order; each compared with its row's reference value.
std::vector<HeadlineTile> headline(const std::vector<KpiRow>& rows, const HeadlineTargets& targets);

// The keys a target can be set for, with their labels, in strip order.
std::vector<std::pair<std::string, std::string>> headlineKeys();

}  // namespace spillway::view
