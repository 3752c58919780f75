#pragma once
// The synchronized timelines: breaker state bands as one swimlane per visible instance
// (grouped as the tiles are), then the focused instance's error and slow-call rate against
// the trip thresholds, p99 against the learned baseline and the slow threshold, and answers
// with blocks stacked by reason — one time axis, zoom and pan together. The protected run is
// drawn over faint ghosts of the baseline run and of the previous policy's run; fault
// markers, "would open" marks, the replay cursor and a crosshair that reads values out.
#include <qcustomplot.h>

#include <memory>

#include "refresh.hpp"
#include "run_controller.hpp"
#include "time_ticker.hpp"

namespace spillway::console {

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
  QString crosshairText() const { return crosshairText_; }
  // For tests: points drawn in the rate graph, bands drawn, lanes, would-open marks.
  int ratePoints() const;
  int bandCount() const { return bandCount_; }
  int laneCount() const { return laneCount_; }
  int wouldOpenMarks() const { return wouldOpenMarks_; }
  int faultMarkers() const { return faultMarkers_; }  // fault onset / end lines drawn
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
  QCPItemText* pooledLabel();
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
  void drawRates(const Comparison& c, const view::InstanceTimeline& p,
                 const view::InstanceTimeline& b, const view::InstanceTimeline* prev,
                 const BreakerConfig& cfg);
  void drawLatency(const Comparison& c, const view::InstanceTimeline& p,
                   const view::InstanceTimeline& b, const view::InstanceTimeline* prev,
                   const BreakerConfig& cfg);
  void drawTraffic(const view::InstanceTimeline& p);
  void drawMarkers(const Comparison& c, const view::InstanceTimeline& p);
  void addCrosshair();
  void clampTimeAxis(const QCPRange& wanted);
  QCPAxisRect* rectAt(const QPoint& pos) const;
  void showZoomBand(double from, double to);
  void endBoxZoom(const QPoint& pos);
  void fitTimeAxis(const Comparison& c);
  void fitValueAxes();
  void addLegends();
  void fillLegends();
  void applyPalette();
  QCPMarginGroup* margins_ = nullptr;  // keeps the rects' left edges aligned
  QCPAxisRect *bands_ = nullptr, *rates_ = nullptr, *latency_ = nullptr, *traffic_ = nullptr;
  std::vector<QCPItemStraightLine*> cursors_, hover_;
  QCPItemStraightLine *errorThreshold_ = nullptr, *slowThreshold_ = nullptr;
  QCPItemText* readout_ = nullptr;
  std::vector<QCPLegend*> legends_;  // rates, latency, traffic
  Pool<QCPItemRect> bandItems_;
  Pool<QCPItemStraightLine> lineItems_;
  Pool<QCPItemText> labelItems_;
  std::vector<QCPGraph*> touched_;  // graphs this pass drew; the others go when it ends
  bool shapeChanged_ = false;       // a graph created or removed this pass: legends refilled
  bool hasRun_ = false;
  QString crosshairText_;
  std::vector<std::size_t> lanes_;
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
