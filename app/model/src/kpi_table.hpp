#pragma once
// One KPI row per definition {name, unit, higherIsBetter, get}, for a run's or a replay's
// reports: the current value and, where given, the baseline's and the previous policy's.
#include <vector>

#include "spillway/view/timeline.hpp"

namespace spillway::view::detail {

template <class Def, std::size_t N, class Report>
std::vector<KpiRow> kpiTable(const Def (&defs)[N], const Report& current, const Report* baseline,
                             const Report* previous) {
  std::vector<KpiRow> rows;
  for (const Def& d : defs) {
    KpiRow row;
    row.name = d.name;
    row.unit = d.unit;
    row.higherIsBetter = d.higherIsBetter;
    row.current = d.get(current);
    if (baseline) row.baseline = d.get(*baseline);
    if (previous) row.previous = d.get(*previous);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace spillway::view::detail
