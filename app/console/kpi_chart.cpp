#include "kpi_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QValueAxis>

namespace spillway::console {

KpiChart::KpiChart(QWidget* parent) : QChartView(parent) {
  setRenderHint(QPainter::Antialiasing);
  chart()->setTitle(
      tr("Share KPIs: baseline, reference, current policy (↑ higher is better, ↓ lower is)"));
  chart()->legend()->setAlignment(Qt::AlignBottom);
}

void KpiChart::setRows(const std::vector<view::KpiRow>& rows) {
  chart()->removeAllSeries();
  for (QAbstractAxis* a : chart()->axes()) chart()->removeAxis(a);
  // Shares only (availability, degrade success, FP, interception): one scale, 0–100 %.
  QStringList names;
  auto* base = new QBarSet(tr("baseline (off)"));
  auto* prev = new QBarSet(tr("reference (pinned or previous)"));
  auto* cur = new QBarSet(tr("current policy"));
  bool anyPrevious = false;
  for (const view::KpiRow& r : rows) {
    if (r.unit != "share" || r.perClient) continue;
    // The bars all grow upward; the arrow says which way is good for this KPI.
    names << QString::fromStdString(r.name).trimmed() + (r.higherIsBetter ? " ↑" : " ↓");
    *base << (r.baseline ? *r.baseline * 100 : 0);
    *prev << (r.previous ? *r.previous * 100 : 0);
    *cur << (r.current ? *r.current * 100 : 0);
    anyPrevious = anyPrevious || r.previous.has_value();
  }
  categories_ = static_cast<int>(names.size());
  auto* series = new QBarSeries;
  series->append(base);
  if (anyPrevious) {
    series->append(prev);
  } else {
    delete prev;
  }
  series->append(cur);
  chart()->addSeries(series);
  auto* x = new QBarCategoryAxis;
  x->append(names);
  auto* y = new QValueAxis;
  y->setRange(0, 100);
  y->setLabelFormat("%.0f %%");
  chart()->addAxis(x, Qt::AlignBottom);
  chart()->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
}

int KpiChart::seriesCount() const {
  const auto all = chart()->series();
  if (all.isEmpty()) return 0;
  return static_cast<QBarSeries*>(all.front())->count();
}

}  // namespace spillway::console
