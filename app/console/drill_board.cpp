#include "drill_board.hpp"

#include <qcustomplot.h>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QScrollArea>
#include <QVBoxLayout>

namespace spillway::console {

DrillBoard::DrillBoard(std::vector<view::DrillTrend> trends, QWidget* parent)
    : QDialog(parent), trends_(std::move(trends)) {
  setWindowTitle(tr("Drill runs"));
  resize(980, 640);
  auto* layout = new QHBoxLayout(this);
  list_ = new QListWidget(this);
  list_->setMaximumWidth(260);
  for (const view::DrillTrend& t : trends_)
    list_->addItem(QString("%1  (%2/%3 passed)")
                       .arg(QString::fromStdString(t.runbook))
                       .arg(t.passedRuns)
                       .arg(t.runs));
  layout->addWidget(list_);
  auto* right = new QVBoxLayout;
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  right->addWidget(summary_);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  auto* inner = new QWidget(scroll);
  plotsLayout_ = new QVBoxLayout(inner);
  scroll->setWidget(inner);
  right->addWidget(scroll, 1);
  layout->addLayout(right, 1);
  connect(list_, &QListWidget::currentRowChanged, this, &DrillBoard::showRunbook);
  if (trends_.empty())
    summary_->setText(
        tr("No drill runs in this library yet: run `spillway-cli drill RUNBOOK "
           "--save` (docs/drills.md)."));
  else
    list_->setCurrentRow(0);
}

QString DrillBoard::summary() const {
  return summary_->text();
}

void DrillBoard::showRunbook(int row) {
  for (QCustomPlot* p : plots_) delete p;
  plots_.clear();
  if (row < 0 || row >= static_cast<int>(trends_.size())) return;
  const view::DrillTrend& t = trends_[static_cast<std::size_t>(row)];
  summary_->setText(
      tr("%1: %2 runs, %3 passed. Each plot: one expectation, runs oldest to "
         "newest; dashed: its bound; bars: the 95 % interval over a run's seeds; red: "
         "that run broke it; amber: its interval crossed the bound (the seeds "
         "could not tell).")
          .arg(QString::fromStdString(t.runbook))
          .arg(t.runs)
          .arg(t.passedRuns));
  for (const view::DrillKpiTrend& k : t.kpis) {
    QCustomPlot* p = kpiPlot(k);
    plotsLayout_->addWidget(p);
    plots_.push_back(p);
  }
}

QCustomPlot* DrillBoard::kpiPlot(const view::DrillKpiTrend& k) {
  auto* p = new QCustomPlot(this);
  p->setMinimumHeight(170);
  QString bound;
  if (k.min) bound += QString("≥ %1").arg(*k.min);
  if (k.min && k.max) bound += ", ";
  if (k.max) bound += QString("≤ %1").arg(*k.max);
  p->plotLayout()->insertRow(0);
  p->plotLayout()->addElement(0, 0,
                              new QCPTextElement(p, QString::fromStdString(k.kpi) + "   " + bound));
  QVector<double> x, y, badX, badY, unsureX, unsureY, ciX, ciY, ciMinus, ciPlus;
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  double lo = 0, hi = 0;
  bool any = false;
  auto extend = [&](double v) {
    lo = any ? std::min(lo, v) : v;
    hi = any ? std::max(hi, v) : v;
    any = true;
  };
  for (std::size_t i = 0; i < k.points.size(); ++i) {
    const view::DrillPoint& pt = k.points[i];
    const double xi = static_cast<double>(i + 1);
    ticker->addTick(xi, QString("#%1 r%2").arg(pt.run).arg(pt.revision));
    if (!pt.measured) continue;
    x << xi;
    y << *pt.measured;
    if (pt.unsure)
      unsureX << xi, unsureY << *pt.measured;
    else if (!pt.passed)
      badX << xi, badY << *pt.measured;
    extend(*pt.measured);
    if (pt.lo && pt.hi) {
      ciX << xi, ciY << *pt.measured;
      ciMinus << *pt.measured - *pt.lo, ciPlus << *pt.hi - *pt.measured;
      extend(*pt.lo);
      extend(*pt.hi);
    }
  }
  QCPGraph* g = p->addGraph();
  g->setData(x, y);
  g->setPen(QPen(QColor(40, 110, 190), 2));
  g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
  auto marks = [&](const QVector<double>& mx, const QVector<double>& my, const QColor& colour) {
    QCPGraph* m = p->addGraph();
    m->setData(mx, my);
    m->setLineStyle(QCPGraph::lsNone);
    m->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, colour, 8));
    return m;
  };
  marks(badX, badY, QColor(200, 40, 40));
  marks(unsureX, unsureY, QColor(220, 140, 0));
  // The seeds' intervals hang on a graph of their own: only runs with one get a bar.
  QCPGraph* ci = marks(ciX, ciY, Qt::transparent);
  ci->setScatterStyle(QCPScatterStyle::ssNone);
  auto* bars = new QCPErrorBars(p->xAxis, p->yAxis);
  bars->setDataPlottable(ci);
  bars->setData(ciMinus, ciPlus);
  bars->setPen(QPen(QColor(40, 110, 190, 160), 1));
  for (const auto& b : {k.min, k.max}) {
    if (!b) continue;
    auto* line = new QCPItemStraightLine(p);
    line->point1->setCoords(0, *b);
    line->point2->setCoords(1, *b);
    line->setPen(QPen(QColor(200, 40, 40), 1, Qt::DashLine));
    extend(*b);
  }
  p->xAxis->setTicker(ticker);
  p->xAxis->setRange(0.5, static_cast<double>(k.points.size()) + 0.5);
  const double pad = std::max(1e-3, (hi - lo) * 0.15);
  p->yAxis->setRange(lo - pad, hi + pad);
  p->replot();
  return p;
}

}  // namespace spillway::console
