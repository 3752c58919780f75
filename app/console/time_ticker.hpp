#pragma once
// The time axis' tick labels: "T+00:05:00" on a simulated or replayed run's own axis, or the
// wall clock (UTC or local) of a recording or Live mode; steps at round seconds and minutes.
#include <qcustomplot.h>

#include "spillway/time.hpp"

namespace spillway::console {

class TimeTicker : public QCPAxisTicker {
 public:
  enum class Mode { Offset, Clock };
  void setMode(Mode mode, Micros origin, bool utc);
  Mode mode() const { return mode_; }
  bool utc() const { return utc_; }
  // What a tick at `seconds` on the axis reads.
  QString label(double seconds) const;

 protected:
  double getTickStep(const QCPRange& range) override;
  QString getTickLabel(double tick, const QLocale& locale, QChar formatChar,
                       int precision) override;

 private:
  Mode mode_ = Mode::Offset;
  Micros origin_ = 0;
  bool utc_ = true;
};

}  // namespace spillway::console
