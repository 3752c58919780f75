#pragma once
// The synchronized timelines: breaker state bands as one swimlane per visible instance
// (grouped as the tiles are), then the focused instance's error and slow-call rate against
// the trip thresholds, p99 against the learned baseline and the slow threshold, and answers
// with blocks stacked by reason — one time axis, zoom and pan together. The protected run is
// drawn over faint ghosts of the baseline run and of the previous policy's run; fault
// markers, "would open" marks, the replay cursor and a crosshair that reads values out. The
// plots explain themselves: a state legend over the lanes, a tooltip on each band (state,
// from–to, why, with the numbers), labelled fault / detection / restore lines through every
// rect, would-open marks clustered with a count, and legends outside the data.
#include <qcustomplot.h>

#include <memory>

#include "refresh.hpp"
#include "run_controller.hpp"
#include "time_ticker.hpp"

namespace spillway::console {

class LegendSwatch;
class ClusterCounts;

struct PlotInput {
  std::shared_ptr<const Comparison> run;
  std::shared_ptr<const Comparison> previous;  // the run before the last policy edit, or null
  std::size_t focus = 0;                       // instance the detail graphs show
  std::vector<std::size_t> lanes;              // instances with a band lane, top to bottom
  Policy policy;                               // thresholds (resolved per instance)
  bool keepZoom = false;  // a what-if of the run on screen: the same extent, the user's zoom
};

class TimelinePlot : public QCustomPlot {
  Q_OBJECT
 public:
  explicit TimelinePlot(QWidget* parent = nullptr);
  // Draws `in` at `level` (Recompute or Reread), reusing the graphs and items already there.
  void show(const PlotInput& in, Refresh level = Refresh::Reread);
  void setCursorTime(Micros t);
  // Crosshair at `seconds` (what a mouse move does): a line through every rect and a readout
  // of the focused instance's values there. Empty text when nothing is under it.
  void setCrosshair(double seconds);
  // One line per series, "name value unit" ("slow rate 61.4 %", "p99 — ms" for no data),
  // under the time; the box on screen shows the same lines with the values aligned.
  QString crosshairText() const { return crosshairText_; }
  // What hovering the breaker lanes at `pos` (widget pixels) shows: the instance, its state,
  // from–to and for how long, and why (the rates at the trip against the thresholds, …).
  // Empty when no band is under `pos`.
  QString bandTooltipAt(QPoint pos) const;
  // For tests: points drawn in the rate graph, bands drawn, lanes, would-open marks.
  int ratePoints() const;
  int bandCount() const { return bandCount_; }
  int laneCount() const { return laneCount_; }
  const std::vector<std::size_t>& lanes() const { return lanes_; }
  int wouldOpenMarks() const { return wouldOpenMarks_; }  // would-open events drawn
  // The ▼ drawn after merging marks of a lane closer than kClusterPx: how many events each
  // stands for (a mark of more than one is labelled with its count). As last laid out.
  int wouldOpenClusters() const { return static_cast<int>(clusterCounts_.size()); }
  const std::vector<int>& wouldOpenClusterCounts() const { return clusterCounts_; }
  static constexpr double kClusterPx = 8;
  int faultMarkers() const { return faultMarkers_; }  // fault onset / end lines drawn
  // Fault, detection and restore lines drawn in rect `r`, and the markers' labels shown
  // (those too close to another are left out).
  int markerLines(const QCPAxisRect* r) const;
  QStringList markerLabels() const;
  QStringList laneNamesShown() const;  // the lanes' labels on screen, top to bottom
  QStringList stateLegend() const;     // the swimlanes' legend: state names, "▼ would open"
  // The trip thresholds' legend texts and whether their lines are drawn (off at 100 %).
  QStringList tripLegend() const;
  bool tripLinesShown() const;
  // Work done so far, by level: passes at each level, replots, and graphs and items (bands,
  // marker lines, labels) created rather than refilled — a pass over data of the same shape
  // creates none.
  int rereads() const { return rereads_; }
  int recomputes() const { return recomputes_; }
  int replots() const { return replots_; }
  int graphsCreated() const { return graphsCreated_; }
  int itemsCreated() const { return itemsCreated_; }
  int created() const { return graphsCreated_ + itemsCreated_; }
  // What a Shift+drag over the breaker or rates rect does when released: marks the focused
  // instance bad over [from, to] (seconds on the time axis).
  void markRange(double from, double to);
  bool marking() const { return markFrom_ >= 0; }
  QCPGraph* graphNamed(const QString& name) const;

  // Tick labels: the run's own axis (T+HH:MM:SS) or the wall clock from `origin` (epoch µs).
  void setTimeMode(TimeTicker::Mode mode, Micros origin, bool utc);
  const TimeTicker& timeTicker() const { return *ticker_; }
  QStringList tickLabels() const;  // the time axis' labels as last drawn
  // The time axis shown (seconds) and the data's extent it is clamped to.
  QCPRange timeRange() const;
  QCPRange dataRange() const { return dataRange_; }
  // Zooms every rect to [from, to] (clamped to the data; at least kMinSpan wide).
  void zoomTo(double from, double to);
  void resetZoom();                      // the whole run (double-click, key 0)
  static constexpr double kMinSpan = 5;  // seconds
  QSize minimumSizeHint() const override;

 signals:
  void laneClicked(std::size_t instance);
  void seekRequested(double seconds);  // a click (not a drag) on the plots
  void rangeMarked(std::size_t instance, double fromSeconds, double toSeconds);

 protected:
  void changeEvent(QEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void leaveEvent(QEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void updateLayout() override;

 private:
  // Items of one kind reused from pass to pass: the first `used` are this pass's, the rest are
  // hidden when the pass ends.
  template <class T>
  struct Pool {
    std::vector<T*> items;
    std::size_t used = 0;
  };
  QCPAxisRect* addRect(const QString& label);
  QCPItemStraightLine* straightLine(QCPAxisRect* r, const QPen& pen);
  QCPItemStraightLine* pooledLine(QCPAxisRect* r, const QPen& pen);
  QCPItemRect* pooledBand();
  QCPItemText* pooledText(Pool<QCPItemText>& pool, QCPAxisRect* r);
  template <class T>
  void trim(Pool<T>& pool);
  // This pass's graph named `name` in rect `r`: the one drawn there before, else a new one.
  QCPGraph* graphSlot(QCPAxisRect* r, const QString& name);
  QCPGraph* addGraph(QCPAxisRect* r, const std::vector<double>& x, const std::vector<double>& y,
                     const QColor& c, const QString& name, Qt::PenStyle style = Qt::SolidLine,
                     int alpha = 255);
  void beginPass(std::size_t focus);
  void endPass();
  void drawBands(const PlotInput& in);
  void labelLanes();
  bool fitLaneLabels();  // true when the lanes' label stride changed
  void drawRates(const Comparison& c, const view::InstanceTimeline& p,
                 const view::InstanceTimeline& b, const view::InstanceTimeline* prev,
                 const BreakerConfig& cfg);
  void drawLatency(const Comparison& c, const view::InstanceTimeline& p,
                   const view::InstanceTimeline& b, const view::InstanceTimeline* prev,
                   const BreakerConfig& cfg);
  void drawTraffic(const view::InstanceTimeline& p);
  void drawMarkers(const Comparison& c, const view::InstanceTimeline& p);
  QString markerText(const view::InstanceTimeline& p, const view::Marker& m) const;
  void layoutMarkerLabels();
  void clusterWouldOpen();
  QString bandReason(const view::InstanceTimeline& it, const view::StateBand& band,
                     const view::StateBand* before) const;
  void placeReadout(double seconds, const QStringList& names, const QStringList& values);
  void addCrosshair();
  void clampTimeAxis(const QCPRange& wanted);
  QCPAxisRect* rectAt(const QPoint& pos) const;
  void showZoomBand(double from, double to);
  void endBoxZoom(const QPoint& pos);
  void fitTimeAxis(const Comparison& c);
  void fitValueAxes();
  void addLegends();
  QCPLegend* addLegendRow(bool right);
  bool fitLegendWraps();
  bool fitTickCounts();  // true when a value axis' tick count changed
  void fillLegends();
  void applyPalette();
  QCPMarginGroup* margins_ = nullptr;  // keeps the rects' left edges aligned
  QCPAxisRect *bands_ = nullptr, *rates_ = nullptr, *latency_ = nullptr, *traffic_ = nullptr;
  std::vector<QCPItemStraightLine*> cursors_, hover_;
  QCPItemStraightLine *errorThreshold_ = nullptr, *slowThreshold_ = nullptr;
  QCPItemText* readout_ = nullptr;
  std::vector<QCPLegend*> legends_;                                  // rates, latency, traffic
  QCPLegend* stateLegend_ = nullptr;                                 // over the lanes
  LegendSwatch *errorTripItem_ = nullptr, *slowTripItem_ = nullptr;  // in the rates legend
  bool errorTripOn_ = true, slowTripOn_ = true;  // below 100 %: the rule can trip
  Pool<QCPItemRect> bandItems_;
  Pool<QCPItemStraightLine> lineItems_;
  Pool<QCPItemText> labelItems_;
  ClusterCounts* counts_ = nullptr;  // the counts beside clustered ▼
  // This pass's marker labels and where they stand (seconds): staggered on every layout.
  std::vector<std::pair<QCPItemText*, double>> markerLabels_;
  struct Mark {
    double x, y;  // seconds, lane coordinate
    std::size_t lane;
  };
  std::vector<Mark> marks_;  // would-open events in lane, then time order
  QCPGraph* wouldOpenGraph_ = nullptr;
  std::vector<int> clusterCounts_;
  QCPRange clusteredRange_;  // the time range and width the clusters were made for
  int clusteredWidth_ = -1;
  std::shared_ptr<const Comparison> run_;  // what the band tooltips explain
  Policy policy_;
  std::vector<QCPGraph*> touched_;  // graphs this pass drew; the others go when it ends
  bool shapeChanged_ = false;       // a graph created or removed this pass: legends refilled
  bool hasRun_ = false;
  QString crosshairText_;
  std::vector<std::size_t> lanes_;
  std::vector<QString> laneLabels_;  // by lane; the focused one marked ◆
  std::size_t focusLane_ = 0, laneStride_ = 1;
  // The lane that spent longest away from full traffic (its breaker open, probing or ramping):
  // named however squeezed the lanes are, as the focused one is. lanes_.size(): none.
  std::size_t busyLane_ = 0;
  std::size_t focus_ = 0;
  int bandCount_ = 0, laneCount_ = 0, wouldOpenMarks_ = 0, faultMarkers_ = 0;
  int rereads_ = 0, recomputes_ = 0, replots_ = 0, graphsCreated_ = 0, itemsCreated_ = 0;
  double markFrom_ = -1;  // a Shift+drag in progress: where it started (seconds)
  // A plain left press: a click seeks, a drag box-zooms (Ctrl+drag pans).
  bool boxZoom_ = false;
  QPoint pressPos_;
  std::vector<QCPItemRect*> zoomRects_;
  QSharedPointer<TimeTicker> ticker_;
  QCPRange dataRange_{0, 1};
  std::vector<QCPItemRect*> markRects_;
};

QColor stateColor(BreakerState s, bool ramping);

}  // namespace spillway::console
