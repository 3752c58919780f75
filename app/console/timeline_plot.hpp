#pragma once
// The synchronized timelines of one instance: breaker state bands, error and slow-call rate
// against the trip thresholds, p99 against the learned baseline, answers and blocks per
// second — one time axis, zoom and pan together, the protected run drawn over a faint ghost
// of the baseline, fault markers, and the replay cursor.
#include <qcustomplot.h>

#include <memory>

#include "run_controller.hpp"

namespace spillway::console {

class TimelinePlot : public QCustomPlot {
  Q_OBJECT
 public:
  explicit TimelinePlot(QWidget* parent = nullptr);
  void show(std::shared_ptr<const Comparison> c, std::size_t instance, const Policy& policy);
  void setCursorTime(Micros t);
  // For tests: points drawn in the rate graph, and bands drawn.
  int ratePoints() const;
  int bandCount() const { return bandCount_; }

 private:
  QCPAxisRect* addRect(const QString& label);
  QCPItemStraightLine* straightLine(QCPAxisRect* r, const QPen& pen);
  void addGraph(QCPAxisRect* r, const std::vector<double>& x, const std::vector<double>& y,
                const QColor& c, const QString& name, bool ghost = false);
  QCPMarginGroup* margins_ = nullptr;  // keeps the rects' left edges aligned
  QCPAxisRect *bands_ = nullptr, *rates_ = nullptr, *latency_ = nullptr, *traffic_ = nullptr;
  std::vector<QCPItemStraightLine*> cursors_;
  int bandCount_ = 0;
};

QColor stateColor(BreakerState s, bool ramping);

}  // namespace spillway::console
