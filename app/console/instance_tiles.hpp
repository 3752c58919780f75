#pragma once
// Instance tiles in the spirit of the Hystrix dashboard: per instance its breaker state
// colour, error %, slow %, answers/s, p99 and a sparkline of the last two minutes (its scale
// printed in its corner) at the replay cursor; sorted by health (worst first, re-sorted as the
// cursor moves), name (naturally: -2 before -10) or model; click to focus, the eye toggles the
// instance's lane in the timelines. An instance whose shadow breaker would open (a "would
// open" mark in Live mode or on a METRICS_ONLY instance) is amber with a badge, and first in
// health order: that is the instance the session is about.
#include <QWidget>

#include <memory>
#include <set>

#include "run_controller.hpp"

namespace spillway::console {

class InstanceTiles : public QWidget {
  Q_OBJECT
 public:
  explicit InstanceTiles(QWidget* parent = nullptr);
  // keepView: a what-if of the same scenario keeps the focus and the hidden instances.
  void setRun(std::shared_ptr<const Comparison> c, bool keepView = false);
  // No tiles (Go live starts over: the last session's instances must not stay on screen);
  // `message` is shown instead ("No run yet" when empty).
  void clear(const QString& message = {});
  void setCursorTime(Micros t);
  void setSelected(std::size_t i);
  std::size_t selected() const { return selected_; }
  void setOrder(view::TileOrder order);
  view::TileOrder order() const { return order_; }
  void setHidden(std::size_t i, bool hidden);
  bool isHidden(std::size_t i) const { return hidden_.count(i) > 0; }
  // Instances in tile order, and those of them shown in the timelines.
  const std::vector<std::size_t>& displayed() const { return order_list_; }
  std::vector<std::size_t> visible() const;
  // What a tile shows now (for tests and accessibility).
  QString tileText(std::size_t i) const;
  // What the column says instead of tiles (no run yet, or live before an instance reports);
  // empty while tiles are drawn.
  QString placeholderShown() const;
  // The instance's shadow breaker would be open at the cursor: a "would open" mark at most
  // wouldOpenHold() before it (as long as a real breaker stays open at most; open.max_duration
  // is 60 s by default).
  bool wouldOpen(std::size_t i) const;
  void setWouldOpenHold(Micros hold);
  Micros wouldOpenHold() const { return hold_; }
  // The sparkline's scale as printed at its top-left ("12/s"): its peak answers per second.
  QString sparklineScale(std::size_t i) const;
  // Where instance i's tile is drawn (empty when it has none).
  QRect tileGeometry(std::size_t i) const;
  QSize sizeHint() const override;

 signals:
  void instanceClicked(std::size_t index);
  void visibilityChanged();

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void contextMenuEvent(QContextMenuEvent*) override;

 private:
  void reorder();
  Micros stateTime() const;  // where the tiles read the state bands
  QRect tileRect(std::size_t slot) const;
  QRect eyeRect(const QRect& tile) const;
  long slotAt(const QPoint& p) const;
  void paintTile(QPainter& p, std::size_t slot) const;
  void paintSparkline(QPainter& p, const QRect& r, std::size_t i) const;
  // The sparkline's window [first, k] at the cursor and its peak answers/s; false: no data.
  bool sparkWindow(std::size_t i, std::size_t& first, std::size_t& k, double& peak) const;
  std::shared_ptr<const Comparison> run_;
  QString placeholder_;
  Micros hold_ = seconds(60);
  Micros cursor_ = 0;
  std::size_t selected_ = 0;
  view::TileOrder order_ = view::TileOrder::Name;
  std::vector<std::size_t> order_list_;
  std::set<std::size_t> hidden_;
};

}  // namespace spillway::console
