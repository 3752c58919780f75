#pragma once
// Instance tiles in the spirit of the Hystrix dashboard: per instance its breaker state
// colour, error %, slow %, answers/s, p99 and a sparkline of the last two minutes at the
// replay cursor; sorted by health (worst first, re-sorted as the cursor moves), name or model;
// click to focus, the eye toggles the instance's lane in the timelines.
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
  QRect tileRect(std::size_t slot) const;
  QRect eyeRect(const QRect& tile) const;
  long slotAt(const QPoint& p) const;
  void paintSparkline(QPainter& p, const QRect& r, std::size_t i) const;
  std::shared_ptr<const Comparison> run_;
  Micros cursor_ = 0;
  std::size_t selected_ = 0;
  view::TileOrder order_ = view::TileOrder::Name;
  std::vector<std::size_t> order_list_;
  std::set<std::size_t> hidden_;
};

}  // namespace spillway::console
