#include "instance_tiles.hpp"

#include <QMouseEvent>
#include <QPainter>

#include <cmath>

#include "timeline_plot.hpp"

namespace spillway::console {
namespace {
constexpr int kTileW = 188, kTileH = 74, kGap = 6;
}

InstanceTiles::InstanceTiles(QWidget* parent) : QWidget(parent) {
  setMinimumWidth(kTileW + 2 * kGap);
}

void InstanceTiles::setRun(std::shared_ptr<const Comparison> c) {
  run_ = std::move(c);
  selected_ = 0;
  updateGeometry();
  update();
}

void InstanceTiles::setCursorTime(Micros t) {
  cursor_ = t;
  update();
}

void InstanceTiles::setSelected(std::size_t i) {
  selected_ = i;
  update();
}

QSize InstanceTiles::sizeHint() const {
  const int n = run_ ? static_cast<int>(run_->protectedRun.timeline.instances().size()) : 4;
  return QSize(kTileW + 2 * kGap, n * (kTileH + kGap) + kGap);
}

QRect InstanceTiles::tileRect(std::size_t i) const {
  return QRect(kGap, kGap + static_cast<int>(i) * (kTileH + kGap), width() - 2 * kGap, kTileH);
}

QString InstanceTiles::tileText(std::size_t i) const {
  if (!run_) return {};
  const view::RunTimeline& tl = run_->protectedRun.timeline;
  const view::InstanceTimeline& it = tl.instances().at(i);
  if (it.t.empty()) return QString::fromStdString(it.name);
  const std::size_t k = tl.indexAt(cursor_);
  const view::StateBand* band = tl.bandAt(i, cursor_);
  const QString state =
      band ? QString::fromUtf8(stateName(band->state).data(), stateName(band->state).size()) +
                 (band->ramping ? " (ramp)" : "")
           : QString("—");
  return QString("%1  %2\nerr %3 %  slow %4 %\n%5 /s  p99 %6 ms")
      .arg(QString::fromStdString(it.name), state)
      .arg(it.errorRate[k] * 100, 0, 'f', 1)
      .arg(it.slowRate[k] * 100, 0, 'f', 1)
      .arg(it.throughput[k], 0, 'f', 1)
      .arg(it.p99Ms[k], 0, 'f', 0);
}

void InstanceTiles::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  if (!run_) {
    p.drawText(rect(), Qt::AlignCenter, tr("No run yet"));
    return;
  }
  const view::RunTimeline& tl = run_->protectedRun.timeline;
  for (std::size_t i = 0; i < tl.instances().size(); ++i) {
    const QRect r = tileRect(i);
    const view::StateBand* band = tl.bandAt(i, cursor_);
    const QColor state = band ? stateColor(band->state, band->ramping) : palette().mid().color();
    p.setPen(i == selected_ ? QPen(palette().highlight().color(), 2)
                            : QPen(palette().mid().color()));
    p.setBrush(palette().base());
    p.drawRoundedRect(r, 6, 6);
    p.setPen(Qt::NoPen);
    p.setBrush(state);
    p.drawRoundedRect(QRect(r.left() + 4, r.top() + 4, 10, r.height() - 8), 3, 3);
    p.setPen(palette().text().color());
    p.drawText(r.adjusted(22, 4, -4, -4), Qt::AlignLeft | Qt::AlignVCenter, tileText(i));
  }
}

void InstanceTiles::mousePressEvent(QMouseEvent* e) {
  if (!run_) return;
  for (std::size_t i = 0; i < run_->protectedRun.timeline.instances().size(); ++i) {
    if (tileRect(i).contains(e->position().toPoint())) {
      setSelected(i);
      emit instanceClicked(i);
      return;
    }
  }
}

}  // namespace spillway::console
