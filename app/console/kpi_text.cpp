#include "kpi_text.hpp"

#include <cmath>

#include "spillway/view/time_format.hpp"

namespace spillway::console {
namespace {

// The smallest change each unit shows; anything smaller reads as no change.
double resolution(const std::string& unit) {
  if (unit == "share") return 0.0005;  // 0.05 pp
  if (unit == "s") return 0.05;
  if (unit == "ms" || unit == "count") return 0.5;
  return 0.005;
}

}  // namespace

QString kpiValue(const std::optional<double>& v, const std::string& unit) {
  if (!v) return "n/a";
  if (std::isinf(*v)) return *v > 0 ? "∞" : "-∞";  // a TTD never reached (kpis.md)
  if (unit == "share") return QString::number(*v * 100, 'f', 1) + " %";
  if (unit == "s")
    return QString::fromStdString(view::durationText(static_cast<Micros>(std::llround(*v * 1e6))));
  if (unit == "ms") return QString::number(*v, 'f', 0) + " ms";
  if (unit == "count") return QString::number(*v, 'f', 0);
  if (unit == "/h") return QString::number(*v, 'f', 1) + " /h";
  if (unit == "cost") return QString::number(*v, 'f', 2);
  return QString::number(*v, 'f', 2) + "×";
}

QString kpiWithInterval(const std::optional<double>& v, const std::optional<sim::SeedInterval>& i,
                        const std::string& unit) {
  if (!i) return kpiValue(v, unit);
  return kpiValue(v, unit) + "  [" + kpiValue(i->lo, unit) + ", " + kpiValue(i->hi, unit) + "]";
}

QString kpiDelta(double d, const std::string& unit) {
  if (std::isnan(d) || std::abs(d) < resolution(unit)) return "±0";  // NaN: ∞ against ∞
  const QString sign = d > 0 ? "+" : "-";
  if (unit == "share") return sign + QString::number(std::abs(d) * 100, 'f', 1) + " pp";
  return sign + kpiValue(std::abs(d), unit);
}

QColor deltaColor(double d, const std::string& unit, bool higherIsBetter) {
  if (std::abs(d) < resolution(unit)) return {};
  return (d > 0) == higherIsBetter ? QColor(30, 130, 60) : QColor(190, 40, 40);
}

}  // namespace spillway::console
