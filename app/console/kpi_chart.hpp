#pragma once
// The KPI comparison chart (Qt Charts): the share KPIs of the baseline, the previous policy and
// the current policy as grouped horizontal bars — the "did this change help?" view next to the
// table. Horizontal, so every KPI's name is written out in full on the left.
#include <QChartView>

#include "spillway/view/timeline.hpp"

namespace spillway::console {

class KpiChart : public QChartView {
  Q_OBJECT
 public:
  explicit KpiChart(QWidget* parent = nullptr);
  void setRows(const std::vector<view::KpiRow>& rows);
  int seriesCount() const;  // bar sets drawn (baseline, previous, current)
  int categoryCount() const { return categories_; }

 protected:
  void changeEvent(QEvent* e) override;

 private:
  void followPalette();
  int categories_ = 0;
};

}  // namespace spillway::console
