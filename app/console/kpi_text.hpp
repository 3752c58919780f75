#pragma once
// How a KPI value and its deltas read, the same in the table, the headline strip and the
// chart: shares in %, their deltas in percentage points ("pp"), durations by
// view::durationText, counts whole.
#include <QColor>
#include <QString>

#include <optional>
#include <string>

#include "spillway/sim/seeds.hpp"

namespace spillway::console {

QString kpiValue(const std::optional<double>& v, const std::string& unit);
// "98.8 %  [98.3 %, 99.3 %]": a value and its interval over the seeds.
QString kpiWithInterval(const std::optional<double>& v, const std::optional<sim::SeedInterval>& i,
                        const std::string& unit);
// A signed delta: "+1.2 pp", "-4.0 s", "+3"; one that rounds to zero is "±0".
QString kpiDelta(double d, const std::string& unit);
// Green when the change goes the KPI's desired way, red when against it; invalid (no colour)
// when it rounds to nothing.
QColor deltaColor(double d, const std::string& unit, bool higherIsBetter);

}  // namespace spillway::console
