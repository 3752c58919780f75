#include "timeline_plot.hpp"

#include <algorithm>
#include <cmath>

#include "spillway/policy.hpp"

namespace spillway::console {
namespace {

constexpr int kLanePx = 15;    // height of one instance's band lane
const char* kGhost = "ghost";  // graph property: a faint comparison run, not read out
// The focused instance's series keep their colour in every rect (rates, latency, thresholds).
const QColor kErrorColor(200, 40, 40), kSlowColor(220, 130, 0), kFpColor(130, 60, 170),
    kLatencyColor(40, 90, 200);

// The value of `g` at key `x` (the sample at or before it); NaN outside the data.
double valueAt(const QCPGraph* g, double x) {
  const auto data = g->data();
  if (data->isEmpty() || x < data->constBegin()->key) return std::nan("");
  auto it = data->findBegin(x, false);
  if (it != data->constBegin() && (it == data->constEnd() || it->key > x)) --it;
  return it->value;
}

}  // namespace

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
  traffic_ = addRect("per second");
  bands_->axis(QCPAxis::atLeft)->setTicker(QSharedPointer<QCPAxisTickerText>::create());
  bands_->axis(QCPAxis::atLeft)->grid()->setVisible(false);
  rates_->axis(QCPAxis::atLeft)->setRange(0, 1.05);
  // One time axis: zooming or panning any rect moves them all.
  const QList<QCPAxisRect*> rects{bands_, rates_, latency_, traffic_};
  for (QCPAxisRect* r : rects) {
    r->setRangeDrag(Qt::Horizontal);
    r->setRangeZoom(Qt::Horizontal);
    connect(r->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            &TimelinePlot::clampTimeAxis);
  }
  ticker_ = QSharedPointer<TimeTicker>::create();
  ticker_->setTickCount(6);
  for (QCPAxisRect* r : rects) r->axis(QCPAxis::atBottom)->setTicker(ticker_);
  setTimeMode(TimeTicker::Mode::Offset, 0, true);
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  setNoAntialiasingOnDrag(true);
  setMouseTracking(true);
  // What every run draws the same way lives as long as the plot.
  addCrosshair();
  errorThreshold_ = straightLine(rates_, QPen(kErrorColor, 1, Qt::DashLine));
  slowThreshold_ = straightLine(rates_, QPen(kSlowColor, 1, Qt::DashLine));
  for (auto* line : {errorThreshold_, slowThreshold_}) {
    line->setLayer("axes");  // over the series, as the cursor is
    line->setVisible(false);
  }
  addLegends();
  connect(this, &QCustomPlot::afterReplot, this, [this] { ++replots_; });
  applyPalette();
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
  ++itemsCreated_;
  line->setClipAxisRect(r);
  line->point1->setAxes(r->axis(QCPAxis::atBottom), r->axis(QCPAxis::atLeft));
  line->point2->setAxes(r->axis(QCPAxis::atBottom), r->axis(QCPAxis::atLeft));
  line->setPen(pen);
  return line;
}

// A line in a pooled item: reused from the last pass (its rect, pen and place set anew).
QCPItemStraightLine* TimelinePlot::pooledLine(QCPAxisRect* r, const QPen& pen) {
  Pool<QCPItemStraightLine>& pool = lineItems_;
  if (pool.used == pool.items.size()) pool.items.push_back(straightLine(r, pen));
  QCPItemStraightLine* line = pool.items[pool.used++];
  line->setClipAxisRect(r);
  for (QCPItemPosition* p : {line->point1, line->point2})
    p->setAxes(r->axis(QCPAxis::atBottom), r->axis(QCPAxis::atLeft));
  line->setPen(pen);
  line->setVisible(true);
  return line;
}

QCPItemRect* TimelinePlot::pooledBand() {
  Pool<QCPItemRect>& pool = bandItems_;
  if (pool.used == pool.items.size()) {
    auto* rect = new QCPItemRect(this);
    ++itemsCreated_;
    rect->setClipAxisRect(bands_);
    rect->topLeft->setAxes(bands_->axis(QCPAxis::atBottom), bands_->axis(QCPAxis::atLeft));
    rect->bottomRight->setAxes(bands_->axis(QCPAxis::atBottom), bands_->axis(QCPAxis::atLeft));
    rect->setPen(Qt::NoPen);
    pool.items.push_back(rect);
  }
  pool.items[pool.used]->setVisible(true);
  return pool.items[pool.used++];
}

QCPItemText* TimelinePlot::pooledLabel() {
  Pool<QCPItemText>& pool = labelItems_;
  if (pool.used == pool.items.size()) {
    auto* label = new QCPItemText(this);
    ++itemsCreated_;
    label->setClipAxisRect(rates_);
    label->position->setAxes(rates_->axis(QCPAxis::atBottom), rates_->axis(QCPAxis::atLeft));
    label->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    label->setFont(QFont(font().family(), 8));
    label->setProperty("wouldOpenLabel", true);
    pool.items.push_back(label);
  }
  pool.items[pool.used]->setVisible(true);
  return pool.items[pool.used++];
}

// The items this pass did not use are hidden, not deleted: a lane shown again, or the next
// live snapshot's band, takes one back.
template <class T>
void TimelinePlot::trim(Pool<T>& pool) {
  for (std::size_t k = pool.used; k < pool.items.size(); ++k) pool.items[k]->setVisible(false);
}

QCPGraph* TimelinePlot::graphSlot(QCPAxisRect* r, const QString& name) {
  QCPAxis* value = r->axis(QCPAxis::atLeft);
  for (int i = 0; i < graphCount(); ++i) {
    QCPGraph* g = graph(i);
    if (g->valueAxis() == value && g->name() == name &&
        std::find(touched_.begin(), touched_.end(), g) == touched_.end()) {
      touched_.push_back(g);
      return g;
    }
  }
  QCPGraph* g = QCustomPlot::addGraph(r->axis(QCPAxis::atBottom), value);
  g->setName(name);
  g->setAdaptiveSampling(true);
  ++graphsCreated_;
  shapeChanged_ = true;
  touched_.push_back(g);
  return g;
}

QCPGraph* TimelinePlot::addGraph(QCPAxisRect* r, const std::vector<double>& x,
                                 const std::vector<double>& y, const QColor& c, const QString& name,
                                 Qt::PenStyle style, int alpha) {
  QCPGraph* g = graphSlot(r, name);
  QColor col = c;
  col.setAlpha(alpha);
  g->setPen(QPen(col, alpha < 255 ? 1 : 1.4, style));
  g->setProperty(kGhost, alpha < 255);
  g->setBrush(Qt::NoBrush);
  g->setChannelFillGraph(nullptr);
  QVector<double> xs(x.begin(), x.end()), ys(y.begin(), y.end());
  g->setData(xs, ys, true);
  return g;
}

QCPGraph* TimelinePlot::graphNamed(const QString& name) const {
  for (int i = 0; i < graphCount(); ++i)
    if (graph(i)->name() == name) return graph(i);
  return nullptr;
}

void TimelinePlot::show(const PlotInput& in, Refresh level) {
  ++(level == Refresh::Reread ? rereads_ : recomputes_);
  beginPass(in.focus);
  const auto& c = in.run;
  hasRun_ = c && in.focus < c->protectedRun.timeline.instances().size();
  if (!hasRun_) {
    endPass();
    replot();
    return;
  }
  const view::InstanceTimeline& p = c->protectedRun.timeline.instances()[in.focus];
  // Live mode has no baseline run: the shadow timeline is all there is.
  const view::InstanceTimeline& b =
      c->mode == view::Mode::Live ? p : c->baseline.timeline.instances()[in.focus];
  const view::InstanceTimeline* prev = nullptr;
  if (in.previous && in.focus < in.previous->protectedRun.timeline.instances().size())
    prev = &in.previous->protectedRun.timeline.instances()[in.focus];
  drawBands(in);
  const BreakerConfig cfg = resolveBreaker(in.policy, p.model, p.name);
  drawRates(*c, p, b, prev, cfg);
  drawLatency(*c, p, b, prev, cfg);
  drawTraffic(p);
  drawMarkers(*c, p);
  endPass();
  if (level == Refresh::Reread && !in.keepZoom) fitTimeAxis(*c);
  fitValueAxes();
  replot(rpQueuedReplot);
}

void TimelinePlot::beginPass(std::size_t focus) {
  touched_.clear();
  shapeChanged_ = false;
  bandItems_.used = lineItems_.used = labelItems_.used = 0;
  bandCount_ = laneCount_ = wouldOpenMarks_ = faultMarkers_ = 0;
  lanes_.clear();
  for (QCPItemRect* r : markRects_) removeItem(r);  // a Shift+drag does not survive new data
  markRects_.clear();
  markFrom_ = -1;
  focus_ = focus;
}

// Drops what this pass did not draw; the legends follow the graphs only when those changed.
void TimelinePlot::endPass() {
  for (int i = graphCount() - 1; i >= 0; --i)
    if (std::find(touched_.begin(), touched_.end(), graph(i)) == touched_.end()) {
      removeGraph(i);
      shapeChanged_ = true;
    }
  trim(bandItems_);
  trim(lineItems_);
  trim(labelItems_);
  errorThreshold_->setVisible(hasRun_);
  slowThreshold_->setVisible(hasRun_);
  if (!shapeChanged_) return;
  // Drawn (and listed) in this pass's order, whenever they were created: a series added later
  // must not paint over the ones drawn after it.
  for (QCPGraph* g : touched_) {
    const QString on = g->layer()->name();
    g->setLayer("background");
    g->setLayer(on);
  }
  fillLegends();
}

// Rates with the trip thresholds, over the baseline run (faint) and the previous policy's
// run (dashed) — so a threshold edit shows what it changed.
void TimelinePlot::drawRates(const Comparison& c, const view::InstanceTimeline& p,
                             const view::InstanceTimeline& b, const view::InstanceTimeline* prev,
                             const BreakerConfig& cfg) {
  // A replay's baseline is the recording itself, the breakers only watching.
  if (c.mode != view::Mode::Live) {
    addGraph(rates_, b.t, b.errorRate, kErrorColor,
             c.mode == view::Mode::Replay ? "recorded, watch only (faint)" : "baseline run (faint)",
             Qt::SolidLine, 70);
    addGraph(rates_, b.t, b.slowRate, kSlowColor, "slow rate (baseline)", Qt::SolidLine, 70);
  }
  if (prev) {
    addGraph(rates_, prev->t, prev->errorRate, kErrorColor, "previous policy (dashed)",
             Qt::DashLine, 110);
    addGraph(rates_, prev->t, prev->slowRate, kSlowColor, "slow rate (previous)", Qt::DashLine,
             110);
  }
  addGraph(rates_, p.t, p.errorRate, kErrorColor, "error rate");
  addGraph(rates_, p.t, p.slowRate, kSlowColor, "slow rate");
  // A simulated run's series counts the avoidable blocks (误伤 over a sliding minute); a replay's
  // every block the recording answered within the SLO (the classes need the whole recording).
  // Live shadow mode blocks nothing.
  if (c.mode != view::Mode::Live)
    addGraph(rates_, p.t, p.fpRate, kFpColor,
             c.mode == view::Mode::Replay ? "good calls blocked, share (60 s)" : "误伤 (60 s)");
  errorThreshold_->point1->setCoords(0, cfg.trip.errorRate);
  errorThreshold_->point2->setCoords(1, cfg.trip.errorRate);
  slowThreshold_->point1->setCoords(0, cfg.trip.slowRate);
  slowThreshold_->point2->setCoords(1, cfg.trip.slowRate);
}

void TimelinePlot::drawLatency(const Comparison& c, const view::InstanceTimeline& p,
                               const view::InstanceTimeline& b, const view::InstanceTimeline* prev,
                               const BreakerConfig& cfg) {
  if (c.mode != view::Mode::Live)
    addGraph(latency_, b.t, b.p99Ms, kLatencyColor, "p99 (baseline)", Qt::SolidLine, 70);
  if (prev)
    addGraph(latency_, prev->t, prev->p99Ms, kLatencyColor, "p99 (previous)", Qt::DashLine, 110);
  addGraph(latency_, p.t, p.p99Ms, kLatencyColor, "p99");
  addGraph(latency_, p.t, p.baselineP99Ms, QColor(120, 120, 120), "P99 baseline");
  addGraph(latency_, p.t, view::slowThresholdMs(p, cfg.slow), kSlowColor, "slow threshold",
           Qt::DashLine);
}

// Fault onset / end, detection and restore, through every detail rect.
void TimelinePlot::drawMarkers(const Comparison& c, const view::InstanceTimeline& p) {
  int liveLabels = 0;
  for (const view::Marker& m : p.markers) {
    if (m.kind == view::Marker::Kind::WouldOpen) {
      // Live: the verdict at its moment on the focused instance's rates ("would open (slow
      // rate 0.62 > 0.40 for 10 s)"); a run's marks are the lanes' triangles only.
      if (c.mode == view::Mode::Live) {
        auto* line = pooledLine(rates_, QPen(QColor(20, 20, 20), 1, Qt::DotLine));
        line->point1->setCoords(m.at / 1e6, 0);
        line->point2->setCoords(m.at / 1e6, 1);
        QCPItemText* label = pooledLabel();
        // Staggered: verdicts close together would print over each other.
        label->position->setCoords(m.at / 1e6, 1.0 - 0.1 * (liveLabels++ % 4));
        label->setText(QString::fromStdString(m.label) + " ");
      }
      continue;
    }
    const bool fault =
        m.kind == view::Marker::Kind::FaultStart || m.kind == view::Marker::Kind::FaultEnd;
    faultMarkers_ += fault;
    for (QCPAxisRect* r : {rates_, latency_, traffic_}) {
      auto* line =
          pooledLine(r, QPen(fault ? QColor(120, 0, 120) : QColor(0, 120, 160), 1, Qt::DotLine));
      line->point1->setCoords(m.at / 1e6, 0);
      line->point2->setCoords(m.at / 1e6, 1);
    }
  }
}

// The replay cursor and the hidden crosshair lines in every rect, and the crosshair's readout:
// made once, moved by every cursor move and hover.
void TimelinePlot::addCrosshair() {
  for (QCPAxisRect* r : {bands_, rates_, latency_, traffic_}) {
    cursors_.push_back(straightLine(r, QPen(QColor(60, 60, 200), 1)));
    auto* h = straightLine(r, QPen(QColor(128, 128, 128), 1, Qt::DashLine));
    h->setVisible(false);
    hover_.push_back(h);
  }
  readout_ = new QCPItemText(this);
  readout_->setClipAxisRect(rates_);
  readout_->position->setType(QCPItemPosition::ptAxisRectRatio);
  readout_->position->setAxisRect(rates_);
  readout_->position->setCoords(0.005, 0.03);
  readout_->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
  readout_->setTextAlignment(Qt::AlignLeft);
  readout_->setPadding(QMargins(4, 2, 4, 2));
  readout_->setFont(QFont(font().family(), 8));
  readout_->setVisible(false);
  // Above everything a pass draws, whenever it was created.
  for (QCPAbstractItem* item : cursors_) item->setLayer("overlay");
  for (QCPAbstractItem* item : hover_) item->setLayer("overlay");
  readout_->setLayer("overlay");
}

void TimelinePlot::fitTimeAxis(const Comparison& c) {
  const double start = c.protectedRun.timeline.start() / 1e6;  // a live timeline rolls
  const double end = std::max(start + 1, c.protectedRun.timeline.end() / 1e6);
  dataRange_ = QCPRange(start, end);
  resetZoom();
}

void TimelinePlot::resetZoom() {
  for (QCPAxisRect* r : {bands_, rates_, latency_, traffic_})
    r->axis(QCPAxis::atBottom)->setRange(dataRange_);
  replot(rpQueuedReplot);
}

void TimelinePlot::zoomTo(double from, double to) {
  if (to < from) std::swap(from, to);
  traffic_->axis(QCPAxis::atBottom)->setRange(from, to);  // clampTimeAxis follows
  replot(rpQueuedReplot);
}

QCPRange TimelinePlot::timeRange() const {
  return traffic_->axis(QCPAxis::atBottom)->range();
}

// Every rect shows the same stretch, never wider than the data nor outside it (zooming out
// does not run into negative time), never narrower than kMinSpan.
void TimelinePlot::clampTimeAxis(const QCPRange& wanted) {
  const double full = dataRange_.size();
  const double span = std::clamp(wanted.size(), std::min(kMinSpan, full), full);
  double lower = wanted.size() == span ? wanted.lower : wanted.center() - span / 2;
  lower = std::clamp(lower, dataRange_.lower, dataRange_.upper - span);
  const QCPRange range(lower, lower + span);
  for (QCPAxisRect* o : {bands_, rates_, latency_, traffic_})
    o->axis(QCPAxis::atBottom)->setRange(range);
}

void TimelinePlot::setTimeMode(TimeTicker::Mode mode, Micros origin, bool utc) {
  ticker_->setMode(mode, origin, utc);
  traffic_->axis(QCPAxis::atBottom)
      ->setLabel(mode == TimeTicker::Mode::Offset ? tr("time since the start (T+h:m:s)")
                                                  : (utc ? tr("time (UTC)") : tr("time (local)")));
  replot(rpQueuedReplot);
}

QStringList TimelinePlot::tickLabels() const {
  return traffic_->axis(QCPAxis::atBottom)->tickVectorLabels();
}

void TimelinePlot::fitValueAxes() {
  latency_->axis(QCPAxis::atLeft)->rescale();
  latency_->axis(QCPAxis::atLeft)->setRangeLower(0);
  traffic_->axis(QCPAxis::atLeft)->rescale();
  traffic_->axis(QCPAxis::atLeft)->setRangeLower(0);
}

// One lane per visible instance, top to bottom; the focused one labelled in bold. Triangles
// mark where the policy *would* have opened on the unprotected run (shadow mode's verdict).
void TimelinePlot::drawBands(const PlotInput& in) {
  const view::RunTimeline& tl = in.run->protectedRun.timeline;
  lanes_ = in.lanes.empty() ? std::vector<std::size_t>{in.focus} : in.lanes;
  laneCount_ = static_cast<int>(lanes_.size());
  const double n = static_cast<double>(lanes_.size());
  auto ticker = bands_->axis(QCPAxis::atLeft)->ticker().dynamicCast<QCPAxisTickerText>();
  ticker->clear();
  QVector<double> wx, wy;
  for (std::size_t lane = 0; lane < lanes_.size(); ++lane) {
    const std::size_t i = lanes_[lane];
    if (i >= tl.instances().size()) continue;
    const double top = n - static_cast<double>(lane), bottom = top - 0.86;
    const view::InstanceTimeline& it = tl.instances()[i];
    ticker->addTick((top + bottom) / 2,
                    QString::fromStdString(it.name) + (i == in.focus ? QString(" ◆") : QString()));
    for (const view::StateBand& band : it.bands) {
      QCPItemRect* rect = pooledBand();
      rect->topLeft->setCoords(band.start / 1e6, top);
      rect->bottomRight->setCoords(band.end / 1e6, bottom);
      QColor col = stateColor(band.state, band.ramping);
      if (i != in.focus) col = col.lighter(115);
      rect->setBrush(col);
      ++bandCount_;
    }
    // Would-open marks: the unprotected run's, or live, the shadow engine's own.
    const view::RunTimeline& marks = in.run->mode == view::Mode::Live
                                         ? in.run->protectedRun.timeline
                                         : in.run->baseline.timeline;
    if (i < marks.instances().size())
      for (const view::Marker& m : marks.instances()[i].markers)
        if (m.kind == view::Marker::Kind::WouldOpen) {
          wx.push_back(m.at / 1e6);
          wy.push_back(top - 0.2);
        }
  }
  wouldOpenMarks_ = static_cast<int>(wx.size());
  if (!wx.isEmpty()) {
    QCPGraph* g =
        graphSlot(bands_, in.run->mode == view::Mode::Live ? "would open (shadow)"
                                                           : "would open (unprotected run)");
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangleInverted, Qt::black,
                                       QColor(255, 255, 255, 220), 7));
    g->setProperty(kGhost, true);
    g->setLayer("axes");  // over the bands, however many are added later
    g->setData(wx, wy, true);
  }
  bands_->axis(QCPAxis::atLeft)->setRange(0, n + 0.1);
  const int h = 8 + kLanePx * laneCount_;
  bands_->setMinimumSize(QSize(0, h));
  bands_->setMaximumSize(QSize(QWIDGETSIZE_MAX, h));
}

// Blocks stacked by reason, answers as a line over them: the breaker's blocks, then attempts
// the instance's full queue turned away, then the gateway budget's overflows.
void TimelinePlot::drawTraffic(const view::InstanceTimeline& p) {
  std::vector<double> stack(p.t.size(), 0.0);
  QCPGraph* below = nullptr;
  struct Layer {
    const std::vector<double>* v;
    QColor color;
    const char* name;
  };
  const Layer layers[] = {{&p.rejected, QColor(200, 40, 40), "breaker blocks"},
                          {&p.queueFull, QColor(150, 90, 40), "queue full"},
                          {&p.overflow, QColor(110, 110, 110), "budget overflow"}};
  for (const Layer& l : layers) {
    bool any = false;
    for (std::size_t k = 0; k < stack.size() && k < l.v->size(); ++k) {
      stack[k] += (*l.v)[k];
      any = any || (*l.v)[k] > 0;
    }
    if (!any) continue;
    QCPGraph* g = addGraph(traffic_, p.t, stack, l.color, l.name);
    QColor fill = l.color;
    fill.setAlpha(90);
    g->setBrush(fill);
    g->setChannelFillGraph(below);
    below = g;
  }
  addGraph(traffic_, p.t, p.throughput, QColor(40, 140, 80), "answers");  // on top
}

void TimelinePlot::addLegends() {
  // A legend inside each detail rect; two columns keep a short rect's data visible.
  for (QCPAxisRect* r : {rates_, latency_, traffic_}) {
    auto* legend = new QCPLegend;
    r->insetLayout()->addElement(legend, Qt::AlignTop | Qt::AlignRight);
    legend->setLayer("legend");
    legend->setFont(QFont(font().family(), 7));
    legend->setIconSize(14, 6);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(2);
    legends_.push_back(legend);
  }
}

// Each rect's graphs in its legend, in drawing order (the faint twins of a series unlisted).
void TimelinePlot::fillLegends() {
  const QCPAxisRect* rects[] = {rates_, latency_, traffic_};
  for (std::size_t k = 0; k < legends_.size(); ++k) {
    QCPLegend* legend = legends_[k];
    legend->clearItems();
    for (QCPGraph* g : touched_)
      if (g->valueAxis() == rects[k]->axis(QCPAxis::atLeft) && g->name() != "" &&
          !g->name().contains("(baseline)") && !g->name().contains("(previous)"))
        g->addToLegend(legend);
  }
}

// Colours from the widget palette, so a dark desktop gets a dark plot.
void TimelinePlot::applyPalette() {
  const QPalette pal = palette();
  setBackground(pal.base());
  const QColor text = pal.color(QPalette::Text), mid = pal.color(QPalette::Mid);
  QColor grid = mid;
  grid.setAlpha(90);
  for (QCPAxisRect* r : {bands_, rates_, latency_, traffic_}) {
    r->setBackground(pal.base());
    for (QCPAxis* a : r->axes()) {
      a->setBasePen(QPen(text));
      a->setTickPen(QPen(text));
      a->setSubTickPen(QPen(text));
      a->setTickLabelColor(text);
      a->setLabelColor(text);
      a->grid()->setPen(QPen(grid, 1, Qt::DotLine));
    }
    for (int i = 0; i < r->insetLayout()->elementCount(); ++i)
      if (auto* legend = qobject_cast<QCPLegend*>(r->insetLayout()->elementAt(i))) {
        QColor bg = pal.color(QPalette::Base);
        bg.setAlpha(190);
        legend->setBrush(bg);
        legend->setTextColor(text);
        legend->setBorderPen(QPen(mid));
      }
  }
  if (readout_) {
    QColor bg = pal.color(QPalette::ToolTipBase);
    bg.setAlpha(225);
    readout_->setBrush(bg);
    readout_->setColor(pal.color(QPalette::ToolTipText));
    readout_->setPen(QPen(mid));
  }
}

void TimelinePlot::changeEvent(QEvent* e) {
  if (e->type() == QEvent::PaletteChange) {
    applyPalette();
    replot(rpQueuedReplot);
  }
  QCustomPlot::changeEvent(e);
}

void TimelinePlot::setCursorTime(Micros t) {
  for (QCPItemStraightLine* c : cursors_) {
    c->point1->setCoords(t / 1e6, 0);
    c->point2->setCoords(t / 1e6, 1);
  }
  replot(QCustomPlot::rpQueuedReplot);
}

void TimelinePlot::setCrosshair(double x) {
  crosshairText_.clear();
  if (!hasRun_) return;
  QStringList lines{ticker_->label(x)};
  for (QCPAxisRect* r : {rates_, latency_, traffic_}) {
    QStringList parts;
    for (int i = 0; i < graphCount(); ++i) {
      QCPGraph* g = graph(i);
      if (g->valueAxis() != r->axis(QCPAxis::atLeft) || g->property(kGhost).toBool()) continue;
      const double v = valueAt(g, x);
      if (std::isnan(v)) continue;
      const bool share = r == rates_;
      parts << QString("%1 %2").arg(g->name(), share ? QString::number(v * 100, 'f', 1) + " %"
                                                     : QString::number(v, 'f', r == traffic_));
    }
    if (!parts.isEmpty()) lines << parts.join("   ");
  }
  crosshairText_ = lines.join('\n');
  readout_->setText(crosshairText_);
  readout_->setVisible(true);
  for (QCPItemStraightLine* h : hover_) {
    h->point1->setCoords(x, 0);
    h->point2->setCoords(x, 1);
    h->setVisible(true);
  }
  replot(rpQueuedReplot);
}

void TimelinePlot::mouseReleaseEvent(QMouseEvent* e) {
  if (markFrom_ >= 0) {
    markRange(markFrom_, rates_->axis(QCPAxis::atBottom)->pixelToCoord(e->position().x()));
    return;
  }
  if (boxZoom_) {
    endBoxZoom(e->position().toPoint());
    return;
  }
  QCustomPlot::mouseReleaseEvent(e);
}

// A release near the press is a click: seek there (and focus the lane under it); farther, a
// box zoom over the dragged stretch.
void TimelinePlot::endBoxZoom(const QPoint& pos) {
  boxZoom_ = false;
  for (QCPItemRect* r : zoomRects_) removeItem(r);
  zoomRects_.clear();
  const QCPAxis* x = rates_->axis(QCPAxis::atBottom);
  if (std::abs(pos.x() - pressPos_.x()) < 5) {
    if (bands_->rect().contains(pressPos_)) {
      const double y = bands_->axis(QCPAxis::atLeft)->pixelToCoord(pressPos_.y());
      const auto lane = static_cast<long>(std::floor(static_cast<double>(lanes_.size()) - y));
      if (lane >= 0 && lane < static_cast<long>(lanes_.size()))
        emit laneClicked(lanes_[static_cast<std::size_t>(lane)]);
    }
    replot(rpQueuedReplot);
    emit seekRequested(
        std::clamp(x->pixelToCoord(pressPos_.x()), dataRange_.lower, dataRange_.upper));
    return;
  }
  zoomTo(x->pixelToCoord(pressPos_.x()), x->pixelToCoord(pos.x()));
}

void TimelinePlot::showZoomBand(double from, double to) {
  if (zoomRects_.empty())
    for (QCPAxisRect* r : {bands_, rates_, latency_, traffic_}) {
      auto* rect = new QCPItemRect(this);
      rect->setClipAxisRect(r);
      for (QCPItemPosition* p : {rect->topLeft, rect->bottomRight}) {
        p->setTypeY(QCPItemPosition::ptAxisRectRatio);
        p->setAxes(r->axis(QCPAxis::atBottom), r->axis(QCPAxis::atLeft));
        p->setAxisRect(r);
      }
      rect->setPen(QPen(palette().color(QPalette::Highlight), 1, Qt::DashLine));
      QColor fill = palette().color(QPalette::Highlight);
      fill.setAlpha(40);
      rect->setBrush(fill);
      rect->setLayer("overlay");
      zoomRects_.push_back(rect);
    }
  for (QCPItemRect* r : zoomRects_) {
    r->topLeft->setCoords(from, 0);
    r->bottomRight->setCoords(to, 1);
  }
  replot(rpQueuedReplot);
}

void TimelinePlot::mouseDoubleClickEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton && hasRun_) {
    resetZoom();
    return;
  }
  QCustomPlot::mouseDoubleClickEvent(e);
}

QCPAxisRect* TimelinePlot::rectAt(const QPoint& pos) const {
  for (QCPAxisRect* r : {bands_, rates_, latency_, traffic_})
    if (r->rect().contains(pos)) return r;
  return nullptr;
}

void TimelinePlot::mouseMoveEvent(QMouseEvent* e) {
  if (boxZoom_) {
    const QCPAxis* x = rates_->axis(QCPAxis::atBottom);
    if (std::abs(e->position().x() - pressPos_.x()) >= 5)
      showZoomBand(x->pixelToCoord(pressPos_.x()), x->pixelToCoord(e->position().x()));
    return;
  }
  if (markFrom_ >= 0) {
    const double x = rates_->axis(QCPAxis::atBottom)->pixelToCoord(e->position().x());
    for (QCPItemRect* r : markRects_) r->bottomRight->setCoords(x, 1);
    replot(rpQueuedReplot);
    return;
  }
  QCustomPlot::mouseMoveEvent(e);
  if (e->buttons() != Qt::NoButton || !hasRun_) return;  // dragging: no readout
  const QPointF pos = e->position();
  for (QCPAxisRect* r : {bands_, rates_, latency_, traffic_})
    if (r->rect().contains(pos.toPoint())) {
      setCrosshair(r->axis(QCPAxis::atBottom)->pixelToCoord(pos.x()));
      return;
    }
}

void TimelinePlot::leaveEvent(QEvent* e) {
  QCustomPlot::leaveEvent(e);
  readout_->setVisible(false);
  for (QCPItemStraightLine* h : hover_) h->setVisible(false);
  replot(rpQueuedReplot);
}

void TimelinePlot::markRange(double from, double to) {
  if (to < from) std::swap(from, to);
  for (QCPItemRect* r : markRects_) removeItem(r);
  markRects_.clear();
  markFrom_ = -1;
  replot(rpQueuedReplot);
  if (to - from < 0.5) return;  // a click, not a range
  emit rangeMarked(focus_, from, to);
}

void TimelinePlot::mousePressEvent(QMouseEvent* e) {
  // Shift+drag over the breaker lanes or the rates: mark a range instead of panning.
  const QPoint pos = e->position().toPoint();
  if (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier) && hasRun_ &&
      (bands_->rect().contains(pos) || rates_->rect().contains(pos))) {
    markFrom_ = std::max(0.0, rates_->axis(QCPAxis::atBottom)->pixelToCoord(pos.x()));
    for (QCPAxisRect* r : {bands_, rates_}) {
      auto* rect = new QCPItemRect(this);
      rect->setClipAxisRect(r);
      rect->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
      rect->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
      for (QCPItemPosition* p : {rect->topLeft, rect->bottomRight}) {
        p->setAxes(r->axis(QCPAxis::atBottom), r->axis(QCPAxis::atLeft));
        p->setAxisRect(r);
      }
      rect->topLeft->setCoords(markFrom_, 0);
      rect->bottomRight->setCoords(markFrom_, 1);
      rect->setPen(QPen(QColor(120, 0, 120), 1, Qt::DashLine));
      rect->setBrush(QColor(120, 0, 120, 40));
      markRects_.push_back(rect);
    }
    replot(rpQueuedReplot);
    return;
  }
  // A plain press starts a click (seek, and focus a lane) or a box zoom; Ctrl+drag pans.
  if (e->button() == Qt::LeftButton && !(e->modifiers() & Qt::ControlModifier) && hasRun_ &&
      rectAt(pos)) {
    boxZoom_ = true;
    pressPos_ = pos;
    return;
  }
  QCustomPlot::mousePressEvent(e);
}

int TimelinePlot::ratePoints() const {
  int n = 0;
  for (int i = 0; i < graphCount(); ++i)
    if (graph(i)->valueAxis() == rates_->axis(QCPAxis::atLeft)) n += graph(i)->data()->size();
  return n;
}

}  // namespace spillway::console
