#include "instance_tiles.hpp"

#include <QContextMenuEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <cmath>

#include "timeline_plot.hpp"

namespace spillway::console {
namespace {
constexpr int kTileW = 236, kTileH = 74, kGap = 6;
constexpr double kSparkSeconds = 120;  // what the sparkline looks back over
}  // namespace

InstanceTiles::InstanceTiles(QWidget* parent) : QWidget(parent) {
  setMinimumWidth(kTileW + 2 * kGap);
}

void InstanceTiles::setRun(std::shared_ptr<const Comparison> c, bool keepView) {
  const bool sameShape =
      run_ && c &&
      run_->protectedRun.timeline.instances().size() == c->protectedRun.timeline.instances().size();
  run_ = std::move(c);
  if (!keepView || !sameShape) {
    selected_ = 0;
    hidden_.clear();
  }
  reorder();
  updateGeometry();
  update();
}

void InstanceTiles::reorder() {
  order_list_.clear();
  if (run_) order_list_ = view::displayOrder(run_->protectedRun.timeline, order_, cursor_);
}

void InstanceTiles::setCursorTime(Micros t) {
  cursor_ = t;
  if (order_ == view::TileOrder::Health) reorder();  // the worst stays on top as time moves
  update();
}

void InstanceTiles::setSelected(std::size_t i) {
  selected_ = i;
  update();
}

void InstanceTiles::setOrder(view::TileOrder order) {
  order_ = order;
  reorder();
  update();
}

void InstanceTiles::setHidden(std::size_t i, bool hidden) {
  if (hidden == isHidden(i)) return;
  if (hidden)
    hidden_.insert(i);
  else
    hidden_.erase(i);
  update();
  emit visibilityChanged();
}

std::vector<std::size_t> InstanceTiles::visible() const {
  std::vector<std::size_t> out;
  for (std::size_t i : order_list_)
    if (!isHidden(i)) out.push_back(i);
  return out;
}

QSize InstanceTiles::sizeHint() const {
  const int n = run_ ? static_cast<int>(run_->protectedRun.timeline.instances().size()) : 4;
  return QSize(kTileW + 2 * kGap, n * (kTileH + kGap) + kGap);
}

QRect InstanceTiles::tileRect(std::size_t slot) const {
  return QRect(kGap, kGap + static_cast<int>(slot) * (kTileH + kGap), width() - 2 * kGap, kTileH);
}

QRect InstanceTiles::eyeRect(const QRect& tile) const {
  return QRect(tile.right() - 20, tile.top() + 4, 16, 14);
}

long InstanceTiles::slotAt(const QPoint& p) const {
  for (std::size_t s = 0; s < order_list_.size(); ++s)
    if (tileRect(s).contains(p)) return static_cast<long>(s);
  return -1;
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
  // A replayed second without calls has no p99 (NaN): a dash, not "nan".
  const QString p99 = std::isnan(it.p99Ms[k]) ? QString("—") : QString::number(it.p99Ms[k], 'f', 0);
  return QString("%1  %2\nerr %3 %  slow %4 %\n%5 /s  p99 %6 ms")
      .arg(QString::fromStdString(it.name), state)
      .arg(it.errorRate[k] * 100, 0, 'f', 1)
      .arg(it.slowRate[k] * 100, 0, 'f', 1)
      .arg(it.throughput[k], 0, 'f', 1)
      .arg(p99);
}

// Answers/s (green) and slow rate (orange, 0…1) over the last two minutes up to the cursor.
void InstanceTiles::paintSparkline(QPainter& p, const QRect& r, std::size_t i) const {
  const view::RunTimeline& tl = run_->protectedRun.timeline;
  const view::InstanceTimeline& it = tl.instances().at(i);
  if (it.t.empty()) return;
  const std::size_t k = tl.indexAt(cursor_);
  const double t1 = it.t[k], t0 = t1 - kSparkSeconds;
  double peak = 1;
  std::size_t first = k;
  while (first > 0 && it.t[first - 1] > t0) --first;
  for (std::size_t j = first; j <= k; ++j) peak = std::max(peak, it.throughput[j]);
  auto line = [&](const std::vector<double>& v, double top, const QColor& c) {
    QPainterPath path;
    for (std::size_t j = first; j <= k; ++j) {
      const double x = r.left() + (it.t[j] - t0) / kSparkSeconds * r.width();
      const double y = r.bottom() - std::clamp(v[j] / top, 0.0, 1.0) * r.height();
      if (j == first)
        path.moveTo(x, y);
      else
        path.lineTo(x, y);
    }
    p.setPen(QPen(c, 1.2));
    p.setBrush(Qt::NoBrush);
    p.drawPath(path);
  };
  QColor frame = palette().mid().color();
  frame.setAlpha(80);
  p.setPen(QPen(frame));
  p.setBrush(Qt::NoBrush);
  p.drawRect(r);
  line(it.throughput, peak, QColor(40, 140, 80));
  line(it.slowRate, 1.0, QColor(220, 130, 0));
}

void InstanceTiles::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  if (!run_) {
    p.drawText(rect(), Qt::AlignCenter, tr("No run yet"));
    return;
  }
  const view::RunTimeline& tl = run_->protectedRun.timeline;
  for (std::size_t s = 0; s < order_list_.size(); ++s) {
    const std::size_t i = order_list_[s];
    const QRect r = tileRect(s);
    const bool hidden = isHidden(i);
    p.setOpacity(hidden ? 0.45 : 1.0);
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
    paintSparkline(p, QRect(r.right() - 66, r.bottom() - 30, 60, 24), i);
    // The eye: shown in the timelines or not.
    const QRect eye = eyeRect(r);
    p.setPen(QPen(palette().text().color(), 1.2));
    p.setBrush(Qt::NoBrush);
    p.drawEllipse(eye.adjusted(0, 3, 0, -3));
    if (!hidden) {
      p.setBrush(palette().text());
      p.drawEllipse(eye.center(), 2, 2);
    } else {
      p.drawLine(eye.bottomLeft(), eye.topRight());
    }
  }
  p.setOpacity(1.0);
}

void InstanceTiles::mousePressEvent(QMouseEvent* e) {
  const long s = slotAt(e->position().toPoint());
  if (s < 0 || e->button() != Qt::LeftButton) return;
  const std::size_t i = order_list_[static_cast<std::size_t>(s)];
  if (eyeRect(tileRect(static_cast<std::size_t>(s))).contains(e->position().toPoint())) {
    setHidden(i, !isHidden(i));
    return;
  }
  setSelected(i);
  emit instanceClicked(i);
}

void InstanceTiles::contextMenuEvent(QContextMenuEvent* e) {
  if (!run_) return;
  const long s = slotAt(e->pos());
  QMenu menu(this);
  const auto& insts = run_->protectedRun.timeline.instances();
  if (s >= 0) {
    const std::size_t i = order_list_[static_cast<std::size_t>(s)];
    menu.addAction(isHidden(i) ? tr("Show in timelines") : tr("Hide from timelines"), this,
                   [this, i] { setHidden(i, !isHidden(i)); });
    const std::string model = insts[i].model;
    menu.addAction(tr("Show only %1").arg(QString::fromStdString(model)), this, [this, model] {
      const auto& all = run_->protectedRun.timeline.instances();
      for (std::size_t j = 0; j < all.size(); ++j)
        if (all[j].model == model)
          hidden_.erase(j);
        else
          hidden_.insert(j);
      update();
      emit visibilityChanged();
    });
  }
  menu.addAction(tr("Show all"), this, [this] {
    hidden_.clear();
    update();
    emit visibilityChanged();
  });
  menu.addSeparator();
  const std::pair<view::TileOrder, QString> orders[] = {{view::TileOrder::Health, tr("by health")},
                                                        {view::TileOrder::Name, tr("by name")},
                                                        {view::TileOrder::Model, tr("by model")}};
  for (const auto& [o, label] : orders) {
    QAction* a = menu.addAction(tr("Sort %1").arg(label), this, [this, o = o] { setOrder(o); });
    a->setCheckable(true);
    a->setChecked(order_ == o);
  }
  menu.exec(e->globalPos());
}

}  // namespace spillway::console
