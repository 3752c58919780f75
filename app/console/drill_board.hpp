#pragma once
// The drill board (seed 003's "度量"): per runbook stored in the library, one small plot per
// expectation — what each run measured, oldest to newest, with its seeds' 95 % interval, against
// the bound (dashed); failed runs in red, runs whose interval crossed the bound in amber. The
// numbers come from view::drillTrends; this only draws them.
#include <QDialog>

#include <vector>

#include "spillway/view/drill_trend.hpp"

class QCustomPlot;
class QLabel;
class QListWidget;
class QVBoxLayout;

namespace spillway::console {

class DrillBoard : public QDialog {
  Q_OBJECT
 public:
  explicit DrillBoard(std::vector<view::DrillTrend> trends, QWidget* parent = nullptr);

  QListWidget* runbooks() const { return list_; }
  void showRunbook(int row);
  int plotCount() const { return static_cast<int>(plots_.size()); }
  QCustomPlot* plot(int i) const { return plots_.at(static_cast<std::size_t>(i)); }
  QString summary() const;

 private:
  QCustomPlot* kpiPlot(const view::DrillKpiTrend& k);

  std::vector<view::DrillTrend> trends_;
  QListWidget* list_;
  QLabel* summary_;
  QVBoxLayout* plotsLayout_;
  std::vector<QCustomPlot*> plots_;
};

}  // namespace spillway::console
