#include "timeline_plot.hpp"

#include <QFontDatabase>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "spillway/policy.hpp"
#include "spillway/view/mark_clusters.hpp"
#include "spillway/view/time_format.hpp"

namespace spillway::console {
namespace {

constexpr int kLanePx = 15;    // height of one instance's band lane, room permitting
constexpr int kLaneMinPx = 5;  // and at least: a fleet's lanes squeeze before the window grows

// Shares (0…1) labelled as percentages; none above 100 % (the band there holds the marker
// labels).
class PercentTicker : public QCPAxisTicker {
 protected:
  QString getTickLabel(double tick, const QLocale&, QChar, int) override {
    return QString::number(tick * 100, 'f', 0) + " %";
  }
  QVector<double> createTickVector(double step, const QCPRange& range) override {
    QVector<double> ticks = QCPAxisTicker::createTickVector(step, range);
    ticks.erase(std::remove_if(ticks.begin(), ticks.end(), [](double t) { return t > 1.0 + 1e-9; }),
                ticks.end());
    return ticks;
  }
};
// Milliseconds labelled as durations: a leak's p99 reaches a minute, and "60000" reads as a
// count.
class MillisTicker : public QCPAxisTicker {
 protected:
  QString getTickLabel(double tick, const QLocale&, QChar, int) override {
    const double a = std::abs(tick);
    if (a < 0.5) return QStringLiteral("0");
    if (a < 1000) return QString::number(tick, 'g', 3) + " ms";
    if (a < 120'000) return QString::number(tick / 1000, 'g', 4) + " s";
    return QString::number(tick / 60'000, 'g', 4) + " min";
  }
};
const char* kGhost = "ghost";  // graph property: a faint comparison run, not read out
// The focused instance's series keep their colour in every rect (rates, latency, thresholds).
const QColor kErrorColor(200, 40, 40), kSlowColor(220, 130, 0), kFpColor(130, 60, 170),
    kLatencyColor(40, 90, 200);
// Marker lines: a fault's onset and end purple, the breaker's detection and restore blue.
const QColor kFaultColor(120, 0, 120), kDetectColor(0, 120, 160);
// Marker labels are staggered over up to this many rows (and never more than a quarter of
// the rates' height), then left out.
constexpr int kLabelRows = 3;
constexpr double kLabelGapPx = 6;
const QString kNoData = QStringLiteral("—");

// The value of `g` at key `x` (the sample at or before it); NaN outside the data.
double valueAt(const QCPGraph* g, double x) {
  const auto data = g->data();
  if (data->isEmpty() || x < data->constBegin()->key) return std::nan("");
  auto it = data->findBegin(x, false);
  if (it != data->constBegin() && (it == data->constEnd() || it->key > x)) --it;
  return it->value;
}

QString percent(double share) {
  return std::isnan(share) ? kNoData : QString::number(share * 100, 'f', 1) + " %";
}

QString duration(Micros d) {
  return QString::fromStdString(view::durationText(d));
}

QString stateName(const view::StateBand& b) {
  const std::string_view name = spillway::stateName(b.state);
  const QString text = QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size()));
  return b.ramping ? text + " (ramping)" : text;
}

// The tick holding `t`: the first whose end is at or after it (the last one past the data).
std::size_t tickAt(const view::InstanceTimeline& it, Micros t) {
  const auto pos = std::lower_bound(it.t.begin(), it.t.end(), static_cast<double>(t) / 1e6);
  if (it.t.empty()) return 0;
  return std::min<std::size_t>(static_cast<std::size_t>(pos - it.t.begin()), it.t.size() - 1);
}

double at(const std::vector<double>& v, std::size_t k) {
  return k < v.size() ? v[k] : std::nan("");
}

}  // namespace

// A legend entry that is not a graph: a state's colour, a threshold's dashed line, the ▼.
class LegendSwatch : public QCPAbstractLegendItem {
 public:
  enum class Kind { Fill, Line, Triangle };
  LegendSwatch(QCPLegend* legend, Kind kind, const QColor& color, const QString& text,
               Qt::PenStyle style = Qt::SolidLine)
      : QCPAbstractLegendItem(legend), kind_(kind), color_(color), style_(style), text_(text) {
    setMargins(QMargins(2, 1, 8, 2));  // room for descenders whatever the device's DPI
  }
  void setText(const QString& text) { text_ = text; }
  const QString& text() const { return text_; }

 protected:
  void draw(QCPPainter* painter) override {
    const QSize icon = mParentLegend->iconSize();
    const QRectF box(mRect.left(), mRect.center().y() - icon.height() / 2.0, icon.width(),
                     icon.height());
    painter->save();
    if (kind_ == Kind::Fill) {
      painter->setPen(Qt::NoPen);
      painter->setBrush(color_);
      painter->drawRect(box);
    } else if (kind_ == Kind::Line) {
      painter->setPen(QPen(color_, 1.4, style_));
      painter->drawLine(QPointF(box.left(), box.center().y()),
                        QPointF(box.right(), box.center().y()));
    } else {  // the would-open mark as the lanes draw it
      const double h = std::min(box.height() + 1, 7.0), cx = box.center().x();
      const double top = box.center().y() - h / 2;
      painter->setPen(QPen(Qt::black, 1));
      painter->setBrush(QColor(255, 255, 255, 220));
      painter->drawPolygon(
          QPolygonF{QPointF(cx - h / 2, top), QPointF(cx + h / 2, top), QPointF(cx, top + h)});
    }
    painter->restore();
    painter->setFont(mFont);
    painter->setPen(mTextColor);
    painter->drawText(mRect.adjusted(icon.width() + mParentLegend->iconTextPadding(), 0, 0, 0),
                      Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, text_);
  }
  QSize minimumOuterSizeHint() const override {
    const QFontMetrics fm(mFont);
    const QSize icon = mParentLegend->iconSize();
    return {icon.width() + mParentLegend->iconTextPadding() + fm.horizontalAdvance(text_) +
                mMargins.left() + mMargins.right(),
            std::max(fm.height(), icon.height()) + mMargins.top() + mMargins.bottom()};
  }

 private:
  Kind kind_;
  QColor color_;
  Qt::PenStyle style_;
  QString text_;
};

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

// The counts beside clustered ▼, all drawn by one item: a zoom that makes more clusters
// creates nothing.
class ClusterCounts : public QCPAbstractItem {
 public:
  ClusterCounts(QCustomPlot* plot, QCPAxisRect* rect, const QFont& font)
      : QCPAbstractItem(plot), rect_(rect), font_(font) {
    setClipAxisRect(rect);
    setSelectable(false);
  }
  std::vector<std::pair<QPointF, int>> counts;  // where (plot coordinates), how many
  const QFont& font() const { return font_; }
  double selectTest(const QPointF&, bool, QVariant*) const override { return -1; }

 protected:
  void draw(QCPPainter* painter) override {
    const QCPAxis *x = rect_->axis(QCPAxis::atBottom), *y = rect_->axis(QCPAxis::atLeft);
    painter->setFont(font_);
    painter->setPen(Qt::black);  // on the lanes' light colours, as the ▼'s outline
    for (const auto& [at, n] : counts) {
      // Just right of the ▼ (7 px wide), centred on it.
      const QPointF px(x->coordToPixel(at.x()) + 5, y->coordToPixel(at.y()));
      painter->drawText(QRectF(px.x(), px.y() - 10, 40, 20), Qt::AlignLeft | Qt::AlignVCenter,
                        QString::number(n));
    }
  }

 private:
  QCPAxisRect* rect_;
  QFont font_;
};

TimelinePlot::TimelinePlot(QWidget* parent) : QCustomPlot(parent) {
  plotLayout()->clear();
  plotLayout()->setRowSpacing(1);
  // The first legend made would become the plot's own and collect every graph: fillLegends
  // lists each rect's graphs in its own legend.
  setAutoAddPlottableToLegend(false);
  margins_ = new QCPMarginGroup(this);
  // Each rect under its legend row: the legends name what is drawn without covering it.
  stateLegend_ = addLegendRow(true);
  bands_ = addRect("breaker");
  // The lanes take their full height first; the value rects share what is left. One lane's
  // height until lanes are drawn (Live before its first data has none).
  plotLayout()->setRowStretchFactor(plotLayout()->rowCount() - 1, 100);
  bands_->setMinimumSize(QSize(0, 8 + kLanePx));
  bands_->setMaximumSize(QSize(QWIDGETSIZE_MAX, 8 + kLanePx));
  legends_.push_back(addLegendRow(false));
  rates_ = addRect("rates");
  // In percent, as the trip thresholds in the legend and the tiles are written.
  rates_->axis(QCPAxis::atLeft)->setTicker(QSharedPointer<PercentTicker>::create());
  legends_.push_back(addLegendRow(false));
  latency_ = addRect("p99");
  latency_->axis(QCPAxis::atLeft)->setTicker(QSharedPointer<MillisTicker>::create());
  legends_.push_back(addLegendRow(false));
  traffic_ = addRect("calls/s");
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
  // One time axis read at the bottom: the rects above keep its ticks and grid, not its text
  // (a short window's data gets the height back; the readout names the time).
  for (QCPAxisRect* r : {bands_, rates_, latency_})
    r->axis(QCPAxis::atBottom)->setTickLabels(false);
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
  counts_ = new ClusterCounts(this, bands_, QFont(font().family(), 7, QFont::Bold));
  counts_->setLayer("axes");  // over the bands, as the ▼ are
  // What depends on pixels (clusters of ▼, staggered labels) follows the zoom and the size,
  // once they are known and before anything is drawn.
  connect(this, &QCustomPlot::afterLayout, this, [this] {
    clusterWouldOpen();
    layoutMarkerLabels();
  });
  connect(this, &QCustomPlot::afterReplot, this, [this] { ++replots_; });
  applyPalette();
}

QCPAxisRect* TimelinePlot::addRect(const QString& label) {
  auto* r = new QCPAxisRect(this);
  r->axis(QCPAxis::atLeft)->setLabel(label);
  // A lower floor than QCustomPlot's 50 px: the four rects still fit a 1280×800 laptop.
  r->setMinimumSize(0, 30);
  r->setMarginGroup(QCP::msLeft | QCP::msRight, margins_);
  plotLayout()->addElement(plotLayout()->rowCount(), 0, r);
  return r;
}

// A legend in a row of its own, as tall as its entries, aligned with the rects' edges and
// packed to the left (or right) of it.
QCPLegend* TimelinePlot::addLegendRow(bool right) {
  auto* row = new QCPLayoutGrid;
  const int at = plotLayout()->rowCount();
  plotLayout()->addElement(at, 0, row);
  plotLayout()->setRowStretchFactor(at, 0.001);
  row->setMarginGroup(QCP::msLeft | QCP::msRight, margins_);
  auto* legend = new QCPLegend;
  auto* spacer = new QCPLayoutElement(this);
  row->addElement(0, 0, right ? static_cast<QCPLayoutElement*>(spacer) : legend);
  row->addElement(0, 1, right ? static_cast<QCPLayoutElement*>(legend) : spacer);
  row->setColumnStretchFactor(right ? 1 : 0, 0.001);
  legend->setLayer("legend");
  legend->setFont(QFont(font().family(), 7));
  legend->setIconSize(14, 7);
  legend->setIconTextPadding(4);
  legend->setMargins(QMargins(0, 1, 0, 0));
  legend->setRowSpacing(0);
  legend->setColumnSpacing(0);
  legend->setSelectableParts(QCPLegend::spNone);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setWrap(8);
  return legend;
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

// A line in a pooled item: reused from the last pass (its rect, pen and place set anew). Over
// the bands and the series, whenever either was created.
QCPItemStraightLine* TimelinePlot::pooledLine(QCPAxisRect* r, const QPen& pen) {
  Pool<QCPItemStraightLine>& pool = lineItems_;
  if (pool.used == pool.items.size()) {
    pool.items.push_back(straightLine(r, pen));
    pool.items.back()->setLayer("axes");
  }
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

// A text in `pool`, in rect `r`'s coordinates and clipped to it; the caller sets the rest.
QCPItemText* TimelinePlot::pooledText(Pool<QCPItemText>& pool, QCPAxisRect* r) {
  if (pool.used == pool.items.size()) {
    auto* label = new QCPItemText(this);
    ++itemsCreated_;
    label->setFont(QFont(font().family(), 7));
    label->setLayer("legend");  // over the lines they name
    pool.items.push_back(label);
  }
  QCPItemText* label = pool.items[pool.used++];
  label->setClipAxisRect(r);
  label->position->setAxes(r->axis(QCPAxis::atBottom), r->axis(QCPAxis::atLeft));
  label->setVisible(true);
  return label;
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
  run_ = hasRun_ ? c : nullptr;
  policy_ = in.policy;
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
  marks_.clear();
  markerLabels_.clear();
  wouldOpenGraph_ = nullptr;
  clusteredWidth_ = -1;  // the clusters are made again for this pass's marks
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
  clusterWouldOpen();  // also when nothing is laid out again: counts and ▼ follow the data
  errorThreshold_->setVisible(hasRun_ && errorTripOn_);
  slowThreshold_->setVisible(hasRun_ && slowTripOn_);
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
  // The rates the breaker compares, as it does: the topology weight scales both.
  const double errorTrip = cfg.trip.errorRate * cfg.trip.weight;
  const double slowTrip = cfg.trip.slowRate * cfg.trip.weight;
  errorThreshold_->point1->setCoords(0, errorTrip);
  errorThreshold_->point2->setCoords(1, errorTrip);
  slowThreshold_->point1->setCoords(0, slowTrip);
  slowThreshold_->point2->setCoords(1, slowTrip);
  // A rate never exceeds 100 %: a threshold there is a rule switched off, not a line to draw.
  errorTripOn_ = errorTrip < 1.0;
  slowTripOn_ = slowTrip < 1.0;
  errorTripItem_->setText(errorTripOn_ ? "error trip > " + percent(errorTrip) : "error trip off");
  slowTripItem_->setText(slowTripOn_ ? "slow trip > " + percent(slowTrip) : "slow trip off");
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

// Fault onset / end, detection and restore through every rect, each named in a label at the
// top of the rates (staggered on layout); live verdicts on the rates only.
void TimelinePlot::drawMarkers(const Comparison& c, const view::InstanceTimeline& p) {
  QColor bg = palette().color(QPalette::Base);
  bg.setAlpha(210);
  const bool dark = bg.lightness() < 128;  // the marker colours lightened to be read on it
  for (const view::Marker& m : p.markers) {
    const bool would = m.kind == view::Marker::Kind::WouldOpen;
    // A run's would-open marks are the lanes' triangles; live, the verdict at its moment on
    // the focused instance's rates ("would open (slow rate 0.62 > 0.40 for 10 s)").
    if (would && c.mode != view::Mode::Live) continue;
    const bool fault =
        m.kind == view::Marker::Kind::FaultStart || m.kind == view::Marker::Kind::FaultEnd;
    faultMarkers_ += fault;
    QColor color = would ? palette().color(QPalette::Text) : (fault ? kFaultColor : kDetectColor);
    if (dark && !would) color = color.lighter(190);
    for (QCPAxisRect* r : {bands_, rates_, latency_, traffic_}) {
      if (would && r != rates_) continue;
      auto* line = pooledLine(r, QPen(color, 1, Qt::DotLine));
      line->point1->setCoords(m.at / 1e6, 0);
      line->point2->setCoords(m.at / 1e6, 1);
    }
    QCPItemText* label = pooledText(labelItems_, rates_);
    label->position->setType(QCPItemPosition::ptAbsolute);
    label->setText(markerText(p, m));
    label->setColor(color);
    label->setBrush(bg);
    label->setPadding(QMargins(3, 0, 3, 1));
    markerLabels_.emplace_back(label, m.at / 1e6);
  }
}

// "fault: latency drift starts", "detected (TTD 1m 12s)", "full traffic back (2m 05s after the
// onset)": the times measured from the fault's onset, as the KPIs measure them.
QString TimelinePlot::markerText(const view::InstanceTimeline& p, const view::Marker& m) const {
  const QString label = QString::fromStdString(m.label);
  // Its own fault's onset: with two faults on the instance, the latest onset is not always it.
  Micros onset = m.onset;
  if (onset < 0)
    for (const view::Marker& o : p.markers)
      if (o.kind == view::Marker::Kind::FaultStart && o.at <= m.at) onset = o.at;
  switch (m.kind) {
    case view::Marker::Kind::FaultStart:
    case view::Marker::Kind::FaultEnd: {
      const QString what = QString(label).replace('_', ' ');  // "latency_drift": a YAML key
      // A recorded fault of no kind is already "fault starts"; benign jitter is no fault.
      return what.startsWith("benign") || what.startsWith("fault") ? what : "fault: " + what;
    }
    case view::Marker::Kind::Detected:
      return onset < 0 ? label : QString("%1 (TTD %2)").arg(label, duration(m.at - onset));
    case view::Marker::Kind::Restored:
      return onset < 0 ? label
                       : QString("%1 (%2 after the onset)").arg(label, duration(m.at - onset));
    case view::Marker::Kind::WouldOpen:
      break;
  }
  return label;
}

// The marker labels in time order along the top of the rates, each beside its line (to the
// left of it near the right edge), moved down a row when it would overlap the previous one
// and left out when the rows are taken there — the line stays.
void TimelinePlot::layoutMarkerLabels() {
  const QCPAxis* x = rates_->axis(QCPAxis::atBottom);
  double rowEnd[kLabelRows];
  std::fill(std::begin(rowEnd), std::end(rowEnd), -1e9);
  int usedPx = 0;  // the label rows' height, from the rect's top
  for (auto& [label, seconds] : markerLabels_) {
    const double px = x->coordToPixel(seconds);
    // The box as QCPItemText measures it, so that rows of them never touch.
    const QRect text =
        QFontMetrics(label->font())
            .boundingRect(0, 0, 0, 0, Qt::TextDontClip | Qt::AlignLeft, label->text());
    const QMargins pad = label->padding();
    const int w = text.width() + pad.left() + pad.right() + 2;
    const int h = text.height() + pad.top() + pad.bottom() + 1;
    const bool flip = px + w > rates_->right();
    const double from = flip ? px - w : px;
    int row = 0;
    const int rows = std::clamp(rates_->height() / (4 * h), 1, kLabelRows);
    while (row < rows && rowEnd[row] + kLabelGapPx > from) ++row;
    const bool shown = row < rows && px >= rates_->left() && px <= rates_->right();
    label->setVisible(shown);
    if (!shown) continue;
    rowEnd[row] = from + w;
    label->setPositionAlignment((flip ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
    label->position->setCoords(flip ? px - 1 : px + 1, rates_->top() + 1 + row * h);
    usedPx = std::max(usedPx, 2 + (row + 1) * h);
  }
  // The labels get a band of their own above 100 %, so that no curve runs under them, while
  // that costs the curves at most a quarter of the rect (a small window keeps them on top).
  const double f = static_cast<double>(usedPx) / std::max(1, rates_->height());
  rates_->axis(QCPAxis::atLeft)->setRange(0, f <= 0.25 ? std::max(1.05, 1.0 / (1.0 - f)) : 1.05);
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
  // A box beside the crosshair (Grafana's tooltip), free to reach over the rects below;
  // fixed-width so the values line up.
  readout_ = new QCPItemText(this);
  readout_->setClipToAxisRect(false);
  readout_->position->setType(QCPItemPosition::ptAbsolute);
  readout_->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
  readout_->setTextAlignment(Qt::AlignLeft);
  readout_->setPadding(QMargins(5, 3, 5, 3));
  QFont fixed = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  fixed.setPointSize(8);
  readout_->setFont(fixed);
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
  laneLabels_.assign(lanes_.size(), QString());
  focusLane_ = busyLane_ = lanes_.size();
  Micros busiest = 0;
  for (std::size_t lane = 0; lane < lanes_.size(); ++lane) {
    const std::size_t i = lanes_[lane];
    if (i >= tl.instances().size()) continue;
    const double top = n - static_cast<double>(lane), bottom = top - 0.86;
    const view::InstanceTimeline& it = tl.instances()[i];
    laneLabels_[lane] =
        QString::fromStdString(it.name) + (i == in.focus ? QString(" ◆") : QString());
    if (i == in.focus) focusLane_ = lane;
    Micros away = 0;
    for (const view::StateBand& band : it.bands)
      if (band.state != BreakerState::Closed || band.ramping) away += band.end - band.start;
    if (away > busiest) busiest = away, busyLane_ = lane;
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
        if (m.kind == view::Marker::Kind::WouldOpen)
          marks_.push_back({m.at / 1e6, top - 0.2, lane});
  }
  wouldOpenMarks_ = static_cast<int>(marks_.size());
  if (!marks_.empty()) {
    // Its points are the clusters of marks (clusterWouldOpen), made again on every zoom.
    QCPGraph* g =
        graphSlot(bands_, in.run->mode == view::Mode::Live ? "would open (shadow)"
                                                           : "would open (unprotected run)");
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangleInverted, Qt::black,
                                       QColor(255, 255, 255, 220), 7));
    g->setProperty(kGhost, true);
    g->setLayer("axes");  // over the bands, however many are added later
    wouldOpenGraph_ = g;
  }
  bands_->axis(QCPAxis::atLeft)->setRange(0, n + 0.1);
  bands_->setMinimumSize(QSize(0, 8 + kLaneMinPx * laneCount_));
  bands_->setMaximumSize(QSize(QWIDGETSIZE_MAX, 8 + kLanePx * laneCount_));
  labelLanes();
}

// Every lane named when a line of text fits each; squeezed, the focused one, the busiest (when
// not within a label's height of the focused one), and every k-th one clear of both.
void TimelinePlot::labelLanes() {
  auto ticker = bands_->axis(QCPAxis::atLeft)->ticker().dynamicCast<QCPAxisTickerText>();
  ticker->clear();
  const double n = static_cast<double>(laneLabels_.size());
  const auto near = [this](std::size_t lane, std::size_t anchor) {
    const std::size_t d = lane > anchor ? lane - anchor : anchor - lane;
    return anchor < laneLabels_.size() && d < laneStride_;
  };
  const std::size_t busy = near(busyLane_, focusLane_) ? laneLabels_.size() : busyLane_;
  for (std::size_t lane = 0; lane < laneLabels_.size(); ++lane) {
    const bool named = lane == focusLane_ || lane == busy ||
                       (lane % laneStride_ == 0 && !near(lane, focusLane_) && !near(lane, busy));
    if (named && !laneLabels_[lane].isEmpty())
      ticker->addTick(n - static_cast<double>(lane) - 0.43, laneLabels_[lane]);
  }
}

// True when the lanes' label stride changed with the rect's height.
bool TimelinePlot::fitLaneLabels() {
  if (laneLabels_.empty() || bands_->height() <= 0) return false;
  const double perLane = static_cast<double>(bands_->height() - 8) / laneLabels_.size();
  const auto stride = static_cast<std::size_t>(std::max(
      1.0, std::ceil(QFontMetrics(bands_->axis(QCPAxis::atLeft)->tickLabelFont()).height() /
                     std::max(perLane, 1.0))));
  if (stride == laneStride_) return false;
  laneStride_ = stride;
  labelLanes();
  return true;
}

// Would-open marks of a lane closer than kClusterPx at the current zoom are one ▼ with their
// count beside it, so a flapping policy's dozens of verdicts stay readable; zooming in splits
// them. Made again only when the zoom, the width or the marks changed.
void TimelinePlot::clusterWouldOpen() {
  const QCPRange range = bands_->axis(QCPAxis::atBottom)->range();
  const int width = bands_->width();
  if (clusteredWidth_ == width && clusteredRange_ == range) return;
  clusteredRange_ = range;
  clusteredWidth_ = width;
  clusterCounts_.clear();
  counts_->counts.clear();
  // Before the first layout (no width yet) every mark stands alone.
  const double pxPerUnit = width > 0 && range.size() > 0 ? width / range.size() : 0;
  std::vector<std::size_t> lanes;
  std::vector<double> px;
  for (const Mark& m : marks_) {
    lanes.push_back(m.lane);
    px.push_back(m.x * pxPerUnit);
  }
  // The count is drawn 5 px right of its ▼ (ClusterCounts); the next ▼ is 7 px wide.
  const QFontMetrics digits(counts_->font());
  const auto countEnd = [&](int n) {
    return 5.0 + digits.horizontalAdvance(QString::number(n)) + 4.0;
  };
  QVector<double> xs, ys;
  for (const view::MarkCluster& c :
       view::clusterMarks(lanes, px, pxPerUnit > 0 ? kClusterPx : 0, countEnd)) {
    const Mark& m = marks_[c.first];
    xs.push_back(m.x);  // where the policy first would have opened
    ys.push_back(m.y);
    clusterCounts_.push_back(c.count);
    if (c.count > 1) counts_->counts.emplace_back(QPointF(m.x, m.y), c.count);
  }
  if (wouldOpenGraph_) wouldOpenGraph_->setData(xs, ys, true);
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

// The lanes' states and marks over the breaker rect; the trip thresholds after the rates.
void TimelinePlot::addLegends() {
  using Kind = LegendSwatch::Kind;
  const std::pair<QColor, const char*> states[] = {
      {stateColor(BreakerState::Closed, false), "CLOSED"},
      {stateColor(BreakerState::Closed, true), "ramping"},
      {stateColor(BreakerState::HalfOpen, false), "HALF_OPEN"},
      {stateColor(BreakerState::Open, false), "OPEN"},
      {stateColor(BreakerState::ForcedOpen, false), "FORCED_OPEN"},
      {stateColor(BreakerState::MetricsOnly, false), "METRICS_ONLY"}};
  for (const auto& [color, name] : states)
    stateLegend_->addItem(new LegendSwatch(stateLegend_, Kind::Fill, color, name));
  stateLegend_->addItem(new LegendSwatch(stateLegend_, Kind::Triangle, Qt::black, "would open"));
  // The trip thresholds' swatches join the rates' legend once a policy names them
  // (fillLegends): nameless, before the first run or live data, they would be bare dashes.
  errorTripItem_ = new LegendSwatch(legends_[0], Kind::Line, kErrorColor, "", Qt::DashLine);
  slowTripItem_ = new LegendSwatch(legends_[0], Kind::Line, kSlowColor, "", Qt::DashLine);
}

// Each rect's graphs in its legend, in drawing order (the faint twins of a series unlisted),
// then the rates' thresholds.
void TimelinePlot::fillLegends() {
  const QCPAxisRect* rects[] = {rates_, latency_, traffic_};
  for (std::size_t k = 0; k < legends_.size(); ++k) {
    QCPLegend* legend = legends_[k];
    if (k == 0)  // kept across passes: their text follows the policy
      for (LegendSwatch* item : {errorTripItem_, slowTripItem_}) legend->take(item);
    legend->clearItems();
    legend->simplify();
    for (QCPGraph* g : touched_)
      if (g->valueAxis() == rects[k]->axis(QCPAxis::atLeft) && g->name() != "" &&
          !g->name().contains("(baseline)") && !g->name().contains("(previous)"))
        g->addToLegend(legend);
    for (int i = 0; i < legend->itemCount(); ++i)
      if (legend->item(i)) legend->item(i)->setMargins(QMargins(2, 1, 8, 2));
    if (k == 0)  // named once a policy is drawn: before that (Live waiting) there is none
      for (LegendSwatch* item : {errorTripItem_, slowTripItem_})
        if (!item->text().isEmpty()) legend->addItem(item);
  }
}

// The layout's own minimum follows the legends' current wrap (as wide as the plot is now), so
// it would never let the window narrow: the legends re-wrap to whatever width they get.
QSize TimelinePlot::minimumSizeHint() const {
  return {320, QCustomPlot::minimumSizeHint().height()};
}

// A legend that wraps anew changes its row's height: laid out once more, in the same replot.
void TimelinePlot::updateLayout() {
  QCustomPlot::updateLayout();
  const bool wrapped = fitLegendWraps();
  const bool lanes = fitLaneLabels();
  if (fitTickCounts() || wrapped || lanes) QCustomPlot::updateLayout();
}

// A value tick every ~28 px at most: a short rect (a laptop screen) keeps readable labels.
bool TimelinePlot::fitTickCounts() {
  bool changed = false;
  for (QCPAxisRect* r : {rates_, latency_, traffic_}) {
    const int fit = std::clamp(r->height() / 28, 2, 5);
    QSharedPointer<QCPAxisTicker> ticker = r->axis(QCPAxis::atLeft)->ticker();
    if (r->height() <= 0 || ticker->tickCount() == fit) continue;
    ticker->setTickCount(fit);
    changed = true;
  }
  return changed;
}

// As many entries in a legend's row as fit over its rect (the widest ones counted, so any
// row of that many fits); the rest wrap below. True when one changed.
bool TimelinePlot::fitLegendWraps() {
  const int width = bands_->width();
  if (width <= 0) return false;
  bool changed = false;
  std::vector<QCPLegend*> all = legends_;
  all.push_back(stateLegend_);
  for (QCPLegend* legend : all) {
    std::vector<int> widths;
    for (int i = 0; i < legend->itemCount(); ++i)
      if (legend->item(i)) widths.push_back(legend->item(i)->minimumOuterSizeHint().width());
    std::sort(widths.rbegin(), widths.rend());
    int fit = 0, used = 0;
    while (fit < static_cast<int>(widths.size()) && used + widths[fit] <= width)
      used += widths[fit++];
    fit = std::max(1, fit);
    if (legend->wrap() == fit) continue;
    legend->setWrap(fit);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    changed = true;
  }
  return changed;
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
  }
  // The legends stand outside the data: no box, the page's text colour.
  std::vector<QCPLegend*> all = legends_;
  all.push_back(stateLegend_);
  for (QCPLegend* legend : all) {
    legend->setBrush(Qt::NoBrush);
    legend->setBorderPen(Qt::NoPen);
    legend->setTextColor(text);
  }
  // The threshold swatches leave their legend while no threshold is drawn, and a legend only
  // recolours the items it holds: on a dark page they kept the light page's black text.
  for (LegendSwatch* swatch : {errorTripItem_, slowTripItem_})
    if (swatch) swatch->setTextColor(text);
  if (readout_) {
    QColor bg = pal.color(QPalette::ToolTipBase);
    bg.setAlpha(235);
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
  // p99 of a second with no answer is no data, not 0 ms.
  const QCPGraph* answers = graphNamed("answers");
  const double answered = answers ? valueAt(answers, x) : std::nan("");
  QStringList names, values;
  for (QCPAxisRect* r : {rates_, latency_, traffic_}) {
    for (int i = 0; i < graphCount(); ++i) {
      QCPGraph* g = graph(i);
      if (g->valueAxis() != r->axis(QCPAxis::atLeft) || g->property(kGhost).toBool()) continue;
      const double v = valueAt(g, x);
      QString value;
      if (r == rates_) {
        value = percent(v);
      } else if (r == latency_) {
        const bool none = std::isnan(v) || v <= 0 || (g->name() == "p99" && answered == 0);
        value = none ? kNoData : QString::number(v, 'f', 0) + " ms";
      } else {
        value = std::isnan(v) ? kNoData : QString::number(v, 'f', 1) + " /s";
      }
      names << g->name();
      values << value;
    }
  }
  QStringList lines{ticker_->label(x)};
  for (qsizetype k = 0; k < names.size(); ++k) lines << names[k] + " " + values[k];
  crosshairText_ = lines.join('\n');
  placeReadout(x, names, values);
  for (QCPItemStraightLine* h : hover_) {
    h->point1->setCoords(x, 0);
    h->point2->setCoords(x, 1);
    h->setVisible(true);
  }
  replot(rpQueuedReplot);
}

// The readout's lines with names and values in columns, beside the crosshair: to its right,
// or to its left when the box would pass the rects' right edge.
void TimelinePlot::placeReadout(double seconds, const QStringList& names,
                                const QStringList& values) {
  qsizetype nameWidth = 0, valueWidth = 0;
  for (qsizetype k = 0; k < names.size(); ++k) {
    nameWidth = std::max(nameWidth, names[k].size());
    valueWidth = std::max(valueWidth, values[k].size());
  }
  QStringList lines{ticker_->label(seconds)};
  for (qsizetype k = 0; k < names.size(); ++k)
    lines << names[k].leftJustified(nameWidth) + "  " + values[k].rightJustified(valueWidth);
  readout_->setText(lines.join('\n'));
  const QFontMetrics fm(readout_->font());
  int w = 0;
  for (const QString& line : lines) w = std::max(w, fm.horizontalAdvance(line));
  w += readout_->padding().left() + readout_->padding().right();
  const double px = rates_->axis(QCPAxis::atBottom)->coordToPixel(seconds);
  const bool left = px + 12 + w > rates_->right();
  readout_->setPositionAlignment((left ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
  readout_->position->setCoords(left ? px - 12 : px + 12, rates_->top() + 2);
  readout_->setVisible(true);
}

// The band under `pos` on the breaker lanes, named with its times and what drove it.
QString TimelinePlot::bandTooltipAt(QPoint pos) const {
  if (!hasRun_ || !run_ || !bands_->rect().contains(pos)) return {};
  const double y = bands_->axis(QCPAxis::atLeft)->pixelToCoord(pos.y());
  const auto lane = static_cast<long>(std::floor(static_cast<double>(lanes_.size()) - y));
  if (lane < 0 || lane >= static_cast<long>(lanes_.size())) return {};
  const std::size_t i = lanes_[static_cast<std::size_t>(lane)];
  const view::RunTimeline& tl = run_->protectedRun.timeline;
  if (i >= tl.instances().size()) return {};
  const view::InstanceTimeline& it = tl.instances()[i];
  const auto t = static_cast<Micros>(
      std::llround(bands_->axis(QCPAxis::atBottom)->pixelToCoord(pos.x()) * 1e6));
  for (std::size_t k = 0; k < it.bands.size(); ++k) {
    const view::StateBand& band = it.bands[k];
    if (t < band.start || t >= band.end) continue;
    return QString("%1 · %2\n%3 – %4 (%5)\n%6")
        .arg(QString::fromStdString(it.name), stateName(band), ticker_->label(band.start / 1e6),
             ticker_->label(band.end / 1e6), duration(band.end - band.start),
             bandReason(it, band, k > 0 ? &it.bands[k - 1] : nullptr));
  }
  return {};
}

// Why the breaker was in `band`, with the numbers it went by: the rates of the tick it
// tripped in against the trip thresholds, the peak rates of a healthy stretch, …
QString TimelinePlot::bandReason(const view::InstanceTimeline& it, const view::StateBand& band,
                                 const view::StateBand* before) const {
  const BreakerConfig cfg = resolveBreaker(policy_, it.model, it.name);
  const double errorTrip = cfg.trip.errorRate * cfg.trip.weight;
  const double slowTrip = cfg.trip.slowRate * cfg.trip.weight;
  auto against = [](const char* name, double v, double trip) {
    return QString("%1 %2 %3 %4")
        .arg(name, percent(v), !std::isnan(v) && v > trip ? ">" : "≤", percent(trip));
  };
  const std::size_t k = tickAt(it, band.start);
  const QString rates = against("error rate", at(it.errorRate, k), errorTrip) + ", " +
                        against("slow rate", at(it.slowRate, k), slowTrip);
  switch (band.state) {
    case BreakerState::Open:
      if (before && before->state == BreakerState::HalfOpen)
        return "re-opened: the probes failed (" + rates + ")";
      return QString("tripped: %1 (sustained %2)").arg(rates, duration(cfg.trip.sustain));
    case BreakerState::HalfOpen:
      return QString("probing: %1 of calls let through, %2 good probes in a row close it")
          .arg(percent(cfg.halfOpen.probeShare))
          .arg(cfg.halfOpen.successStreak);
    case BreakerState::Closed: {
      if (band.ramping) return "ramping: traffic let back in over " + duration(cfg.ramp.duration);
      double error = std::nan(""), slow = std::nan("");
      for (std::size_t j = k; j < it.t.size() && it.t[j] * 1e6 <= band.end; ++j) {
        if (!(at(it.errorRate, j) <= error)) error = at(it.errorRate, j);
        if (!(at(it.slowRate, j) <= slow)) slow = at(it.slowRate, j);
      }
      return "healthy: peak " + against("error rate", error, errorTrip) + ", peak " +
             against("slow rate", slow, slowTrip);
    }
    case BreakerState::ForcedOpen:
      return "forced open: no traffic, whatever the rates";
    case BreakerState::MetricsOnly:
      return "watching only: the policy judges (" + rates + " here) and blocks nothing";
    case BreakerState::Disabled:
      return "breaker disabled";
  }
  return {};
}

int TimelinePlot::markerLines(const QCPAxisRect* r) const {
  int n = 0;
  for (std::size_t k = 0; k < lineItems_.used; ++k) n += lineItems_.items[k]->clipAxisRect() == r;
  return n;
}

QStringList TimelinePlot::markerLabels() const {
  QStringList out;
  for (const auto& [label, seconds] : markerLabels_)
    if (label->visible()) out << label->text();
  return out;
}

QStringList TimelinePlot::tripLegend() const {
  return {errorTripItem_->text(), slowTripItem_->text()};
}

bool TimelinePlot::tripLinesShown() const {
  return errorThreshold_->visible() || slowThreshold_->visible();
}

QStringList TimelinePlot::laneNamesShown() const {
  QStringList names;
  const auto ticker = bands_->axis(QCPAxis::atLeft)->ticker().dynamicCast<QCPAxisTickerText>();
  const QMap<double, QString> ticks = ticker->ticks();
  for (auto it = ticks.constEnd(); it != ticks.constBegin();) names << (--it).value();
  return names;
}

QStringList TimelinePlot::stateLegend() const {
  QStringList out;
  for (int i = 0; i < stateLegend_->itemCount(); ++i)
    if (const auto* item = dynamic_cast<const LegendSwatch*>(stateLegend_->item(i)))
      out << item->text();
  return out;
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
  const QPoint pos = e->position().toPoint();
  QCPAxisRect* r = rectAt(pos);
  if (!r) return;
  setCrosshair(r->axis(QCPAxis::atBottom)->pixelToCoord(pos.x()));
  // Over the lanes the band's tooltip says what the readout would, and more.
  const QString tip = r == bands_ ? bandTooltipAt(pos) : QString();
  if (tip.isEmpty()) {
    QToolTip::hideText();
    return;
  }
  readout_->setVisible(false);
  QToolTip::showText(e->globalPosition().toPoint(), tip, this);
}

void TimelinePlot::leaveEvent(QEvent* e) {
  QCustomPlot::leaveEvent(e);
  QToolTip::hideText();
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
