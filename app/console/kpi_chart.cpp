#include "kpi_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QEvent>
#include <QHorizontalBarSeries>
#include <QValueAxis>

namespace spillway::console {

KpiChart::KpiChart(QWidget* parent) : QChartView(parent) {
  setRenderHint(QPainter::Antialiasing);
  chart()->setTitle(tr("Share KPIs (↑ higher is better, ↓ lower is better)"));
  chart()->legend()->setAlignment(Qt::AlignTop);
  followPalette();
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
  // Qt draws the first category at the bottom: the rows go in reversed, so the chart reads
  // top-down in the table's order.
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    const view::KpiRow& r = *it;
    if (r.unit != "share" || r.perClient) continue;
    names << QString::fromStdString(r.name).trimmed() + (r.higherIsBetter ? " ↑" : " ↓");
    *base << (r.baseline ? *r.baseline * 100 : 0);
    *prev << (r.previous ? *r.previous * 100 : 0);
    *cur << (r.current ? *r.current * 100 : 0);
    anyPrevious = anyPrevious || r.previous.has_value();
  }
  categories_ = static_cast<int>(names.size());
  auto* series = new QHorizontalBarSeries;
  // Legend order = top-down bar order within a KPI (Qt stacks the sets bottom-up).
  series->append(cur);
  if (anyPrevious) {
    series->append(prev);
  } else {
    delete prev;
  }
  series->append(base);
  chart()->addSeries(series);
  chart()->legend()->setReverseMarkers(true);
  auto* y = new QBarCategoryAxis;
  y->append(names);
  auto* x = new QValueAxis;
  x->setRange(0, 100);
  x->setLabelFormat("%.0f %%");
  chart()->addAxis(y, Qt::AlignLeft);
  chart()->addAxis(x, Qt::AlignBottom);
  series->attachAxis(x);
  series->attachAxis(y);
  // A KPI's bars a line of text each: legible, and the scroll area around scrolls the rest.
  const int bar = fontMetrics().height();
  setMinimumHeight(categories_ * (series->count() * bar + bar / 2) + 6 * bar);
  followPalette();
}

int KpiChart::seriesCount() const {
  const auto all = chart()->series();
  if (all.isEmpty()) return 0;
  return static_cast<QHorizontalBarSeries*>(all.front())->count();
}

void KpiChart::changeEvent(QEvent* e) {
  if (e->type() == QEvent::PaletteChange) followPalette();
  QChartView::changeEvent(e);
}

// The chart's own theme follows the window's (light or dark), keeping the bar colours.
void KpiChart::followPalette() {
  const bool dark = palette().color(QPalette::Window).lightness() < 128;
  const QChart::ChartTheme want = dark ? QChart::ChartThemeDark : QChart::ChartThemeLight;
  if (chart()->theme() != want) chart()->setTheme(want);
}

}  // namespace spillway::console
