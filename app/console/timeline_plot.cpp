#include "timeline_plot.hpp"

namespace spillway::console {

QColor stateColor(BreakerState s, bool ramping) {
  switch (s) {
    case BreakerState::Closed:
      return ramping ? QColor(0xf2, 0xc0, 0x37) : QColor(0x3a, 0xa6, 0x5c);
    case BreakerState::Open:
      return QColor(0xd6, 0x45, 0x45);
    case BreakerState::HalfOpen:
      return QColor(0xe8, 0x8a, 0x2e);
    case BreakerState::ForcedOpen:
      return QColor(0x8e, 0x24, 0xaa);
    case BreakerState::Disabled:
      return QColor(0x9e, 0x9e, 0x9e);
    case BreakerState::MetricsOnly:
      return QColor(0x78, 0x90, 0x9c);
  }
  return Qt::gray;
}

TimelinePlot::TimelinePlot(QWidget* parent) : QCustomPlot(parent) {
  plotLayout()->clear();
  margins_ = new QCPMarginGroup(this);
  bands_ = addRect("breaker");
  rates_ = addRect("error, slow, FP rate");
  latency_ = addRect("p99 (ms)");
  traffic_ = addRect("answers, blocks /s");
  bands_->setMaximumSize(QSize(QWIDGETSIZE_MAX, 46));
  bands_->axis(QCPAxis::atLeft)->setTicks(false);
  bands_->axis(QCPAxis::atLeft)->setRange(0, 1);
  rates_->axis(QCPAxis::atLeft)->setRange(0, 1.05);
  // One time axis: zooming or panning any rect moves them all.
  const QList<QCPAxisRect*> rects{bands_, rates_, latency_, traffic_};
  for (QCPAxisRect* r : rects) {
    r->setRangeDrag(Qt::Horizontal);
    r->setRangeZoom(Qt::Horizontal);
    connect(r->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [rects](const QCPRange& range) {
              for (QCPAxisRect* o : rects) o->axis(QCPAxis::atBottom)->setRange(range);
            });
  }
  traffic_->axis(QCPAxis::atBottom)->setLabel("time (s)");
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  setNoAntialiasingOnDrag(true);
}

QCPAxisRect* TimelinePlot::addRect(const QString& label) {
  auto* r = new QCPAxisRect(this);
  r->axis(QCPAxis::atLeft)->setLabel(label);
  r->setMarginGroup(QCP::msLeft | QCP::msRight, margins_);
  plotLayout()->addElement(plotLayout()->rowCount(), 0, r);
  return r;
}

// An infinite line in rect `r`'s coordinates, clipped to it (thresholds, markers, cursor).
QCPItemStraightLine* TimelinePlot::straightLine(QCPAxisRect* r, const QPen& pen) {
  auto* line = new QCPItemStraightLine(this);
  line->setClipAxisRect(r);
  line->point1->setAxes(r->axis(QCPAxis::atBottom), r->axis(QCPAxis::atLeft));
  line->point2->setAxes(r->axis(QCPAxis::atBottom), r->axis(QCPAxis::atLeft));
  line->setPen(pen);
  return line;
}

void TimelinePlot::addGraph(QCPAxisRect* r, const std::vector<double>& x,
                            const std::vector<double>& y, const QColor& c, const QString& name,
                            bool ghost) {
  QCPGraph* g = QCustomPlot::addGraph(r->axis(QCPAxis::atBottom), r->axis(QCPAxis::atLeft));
  g->setName(name);
  QColor col = c;
  if (ghost) col.setAlpha(70);
  g->setPen(QPen(col, ghost ? 1 : 1.4));
  g->setAdaptiveSampling(true);
  QVector<double> xs(x.begin(), x.end()), ys(y.begin(), y.end());
  g->setData(xs, ys, true);
}

void TimelinePlot::show(std::shared_ptr<const Comparison> c, std::size_t instance,
                        const Policy& policy) {
  clearGraphs();
  clearItems();  // also drops the cursors: re-create them below
  for (QCPAxisRect* r : {rates_, latency_, traffic_})
    while (r->insetLayout()->elementCount() > 0) r->insetLayout()->removeAt(0);
  cursors_.clear();
  bandCount_ = 0;
  if (!c || instance >= c->protectedRun.timeline.instances().size()) {
    replot();
    return;
  }
  const view::InstanceTimeline& p = c->protectedRun.timeline.instances()[instance];
  const view::InstanceTimeline& b = c->baseline.timeline.instances()[instance];
  // Bands of the protected run.
  for (const view::StateBand& band : p.bands) {
    auto* rect = new QCPItemRect(this);
    rect->setClipAxisRect(bands_);
    rect->topLeft->setAxes(bands_->axis(QCPAxis::atBottom), bands_->axis(QCPAxis::atLeft));
    rect->bottomRight->setAxes(bands_->axis(QCPAxis::atBottom), bands_->axis(QCPAxis::atLeft));
    rect->topLeft->setCoords(band.start / 1e6, 1);
    rect->bottomRight->setCoords(band.end / 1e6, 0);
    const QColor col = stateColor(band.state, band.ramping);
    rect->setBrush(col);
    rect->setPen(QPen(col));
    ++bandCount_;
  }
  // Rates with the trip thresholds; the baseline run as a ghost underneath.
  addGraph(rates_, b.t, b.errorRate, QColor(200, 40, 40), "error rate (baseline)", true);
  addGraph(rates_, b.t, b.slowRate, QColor(220, 130, 0), "slow rate (baseline)", true);
  addGraph(rates_, p.t, p.errorRate, QColor(200, 40, 40), "error rate");
  addGraph(rates_, p.t, p.slowRate, QColor(220, 130, 0), "slow rate");
  addGraph(rates_, p.t, p.fpRate, QColor(130, 60, 170), "FP rate (60 s)");
  auto threshold = [&](QCPAxisRect* r, double y, const QColor& col) {
    auto* line = straightLine(r, QPen(col, 1, Qt::DashLine));
    line->point1->setCoords(0, y);
    line->point2->setCoords(1, y);
  };
  threshold(rates_, policy.breaker.trip.errorRate, QColor(200, 40, 40));
  threshold(rates_, policy.breaker.trip.slowRate, QColor(220, 130, 0));
  addGraph(latency_, b.t, b.p99Ms, QColor(40, 90, 200), "p99 (baseline)", true);
  addGraph(latency_, p.t, p.p99Ms, QColor(40, 90, 200), "p99");
  addGraph(latency_, p.t, p.baselineP99Ms, QColor(120, 120, 120), "P99 baseline");
  addGraph(traffic_, p.t, p.throughput, QColor(40, 140, 80), "answers/s");
  addGraph(traffic_, p.t, p.rejected, QColor(200, 40, 40), "blocks/s");
  // Fault onset, detection and restore.
  for (const view::Marker& m : p.markers) {
    if (m.kind == view::Marker::Kind::WouldOpen) continue;
    for (QCPAxisRect* r : {rates_, latency_, traffic_}) {
      const bool fault =
          m.kind == view::Marker::Kind::FaultStart || m.kind == view::Marker::Kind::FaultEnd;
      auto* line =
          straightLine(r, QPen(fault ? QColor(120, 0, 120) : QColor(0, 120, 160), 1, Qt::DotLine));
      line->point1->setCoords(m.at / 1e6, 0);
      line->point2->setCoords(m.at / 1e6, 1);
    }
  }
  for (QCPAxisRect* r : {bands_, rates_, latency_, traffic_})
    cursors_.push_back(straightLine(r, QPen(QColor(60, 60, 200), 1)));
  // A legend inside each plotted rect: which line is which (faint = the baseline run).
  for (QCPAxisRect* r : {rates_, latency_, traffic_}) {
    auto* legend = new QCPLegend;
    r->insetLayout()->addElement(legend, Qt::AlignTop | Qt::AlignRight);
    legend->setLayer("legend");
    legend->setFont(QFont(font().family(), 7));
    legend->setIconSize(14, 6);
    legend->setBrush(QColor(255, 255, 255, 170));
    // Two columns: half the height, so a short rect keeps its data visible.
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(2);
    for (int i = 0; i < graphCount(); ++i)
      if (graph(i)->valueAxis() == r->axis(QCPAxis::atLeft)) graph(i)->addToLegend(legend);
  }
  const double end = c->protectedRun.timeline.end() / 1e6;
  for (QCPAxisRect* r : {bands_, rates_, latency_, traffic_})
    r->axis(QCPAxis::atBottom)->setRange(0, end);
  latency_->axis(QCPAxis::atLeft)->rescale();
  traffic_->axis(QCPAxis::atLeft)->rescale();
  setCursorTime(0);
}

void TimelinePlot::setCursorTime(Micros t) {
  for (QCPItemStraightLine* c : cursors_) {
    c->point1->setCoords(t / 1e6, 0);
    c->point2->setCoords(t / 1e6, 1);
  }
  replot(QCustomPlot::rpQueuedReplot);
}

int TimelinePlot::ratePoints() const {
  int n = 0;
  for (int i = 0; i < graphCount(); ++i)
    if (graph(i)->valueAxis() == rates_->axis(QCPAxis::atLeft)) n += graph(i)->data()->size();
  return n;
}

}  // namespace spillway::console
