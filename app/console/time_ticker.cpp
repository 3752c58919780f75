#include "time_ticker.hpp"

#include <cmath>

#include "spillway/view/time_format.hpp"

namespace spillway::console {

void TimeTicker::setMode(Mode mode, Micros origin, bool utc) {
  mode_ = mode;
  origin_ = origin;
  utc_ = utc;
}

QString TimeTicker::label(double seconds) const {
  const auto t = static_cast<Micros>(std::llround(seconds * 1e6));
  if (mode_ == Mode::Clock) return QString::fromStdString(view::formatClock(origin_ + t, utc_));
  return QString::fromStdString(view::formatOffset(t));
}

// The round step nearest to a sixth of the range: whole seconds, then minutes, then hours —
// never a fraction, since the labels do not show one.
double TimeTicker::getTickStep(const QCPRange& range) {
  static constexpr double kSteps[] = {1,   2,   5,    10,   15,   30,    60,    120,   300,
                                      600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400};
  const double want = range.size() / std::max(1, tickCount());
  for (double s : kSteps)
    if (s >= want) return s;
  return kSteps[std::size(kSteps) - 1] * std::ceil(want / kSteps[std::size(kSteps) - 1]);
}

QString TimeTicker::getTickLabel(double tick, const QLocale&, QChar, int) {
  return label(tick);
}

}  // namespace spillway::console
