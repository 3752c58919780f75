#pragma once
// Instance tiles in the spirit of the Hystrix dashboard: per instance its breaker state
// colour, error %, slow %, answers/s and p99 at the replay cursor; click to focus.
#include <QWidget>

#include <memory>

#include "run_controller.hpp"

namespace spillway::console {

class InstanceTiles : public QWidget {
  Q_OBJECT
 public:
  explicit InstanceTiles(QWidget* parent = nullptr);
  void setRun(std::shared_ptr<const Comparison> c);
  void setCursorTime(Micros t);
  void setSelected(std::size_t i);
  std::size_t selected() const { return selected_; }
  // What a tile shows now (for tests and accessibility).
  QString tileText(std::size_t i) const;
  QSize sizeHint() const override;

 signals:
  void instanceClicked(std::size_t index);

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent*) override;

 private:
  QRect tileRect(std::size_t i) const;
  std::shared_ptr<const Comparison> run_;
  Micros cursor_ = 0;
  std::size_t selected_ = 0;
};

}  // namespace spillway::console
