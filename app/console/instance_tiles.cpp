#include "instance_tiles.hpp"

#include <QContextMenuEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

#include "timeline_plot.hpp"

namespace spillway::console {
namespace {
constexpr int kTileW = 236, kTileH = 74, kGap = 6;
constexpr double kSparkSeconds = 120;  // what the sparkline looks back over
const QColor kAmber(255, 176, 0);

// "12/s", "1.5/s", "3.2k/s": a scale read at a glance.
QString perSecond(double v) {
  if (v >= 1000) return QString::number(v / 1000, 'f', v >= 10000 ? 0 : 1) + "k/s";
  return QString::number(v, 'f', v >= 10 || v == std::floor(v) ? 0 : 1) + "/s";
}

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

QString InstanceTiles::placeholderShown() const {
  if (run_ && !order_list_.empty()) return {};
  return placeholder_.isEmpty() ? tr("No run yet") : placeholder_;
}

void InstanceTiles::clear(const QString& message) {
  run_.reset();
  placeholder_ = message;
  selected_ = 0;
  hidden_.clear();
  order_list_.clear();
  updateGeometry();
  update();
}

void InstanceTiles::reorder() {
  order_list_.clear();
  if (!run_) return;
  order_list_ = view::displayOrder(run_->protectedRun.timeline, order_, cursor_);
  // What the session is about comes first: the instances that would open now (in shadow mode
  // every breaker is METRICS_ONLY, so the state bands alone cannot tell them).
  if (order_ == view::TileOrder::Health)
    std::stable_partition(order_list_.begin(), order_list_.end(),
                          [this](std::size_t i) { return wouldOpen(i); });
}

// Bands end where the data ends (exclusive): a cursor on the newest data, as Live mode's is,
// shows the state of the last instant instead of none.
Micros InstanceTiles::stateTime() const {
  if (!run_) return cursor_;
  const view::RunTimeline& tl = run_->protectedRun.timeline;
  return tl.end() > tl.start() ? std::min(cursor_, tl.end() - 1) : cursor_;
}

bool InstanceTiles::wouldOpen(std::size_t i) const {
  if (!run_ || i >= run_->protectedRun.timeline.instances().size()) return false;
  const auto& markers = run_->protectedRun.timeline.instances()[i].markers;
  for (auto m = markers.rbegin(); m != markers.rend(); ++m) {
    if (m->kind != view::Marker::Kind::WouldOpen || m->at > cursor_) continue;
    return cursor_ - m->at < hold_;  // the latest one at or before the cursor decides
  }
  return false;
}

void InstanceTiles::setWouldOpenHold(Micros hold) {
  hold_ = hold;
  reorder();
  update();
}

QRect InstanceTiles::tileGeometry(std::size_t i) const {
  const auto at = std::find(order_list_.begin(), order_list_.end(), i);
  return at == order_list_.end() ? QRect()
                                 : tileRect(static_cast<std::size_t>(at - order_list_.begin()));
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

namespace {

// Answers per second over the last 10 s up to index k: one second alone (in Live, the newest,
// still filling) read 2.1/s beside a sparkline peaking at 13/s and a table saying 22/s.
double recentRate(const view::InstanceTimeline& it, std::size_t k) {
  constexpr double kSeconds = 10;
  double sum = 0;
  int n = 0;
  for (std::size_t j = k + 1; j-- > 0 && it.t[j] > it.t[k] - kSeconds;) {
    if (std::isnan(it.throughput[j])) continue;
    sum += it.throughput[j];
    ++n;
  }
  return n ? sum / n : 0.0;
}

}  // namespace

QString InstanceTiles::tileText(std::size_t i) const {
  if (!run_) return {};
  const view::RunTimeline& tl = run_->protectedRun.timeline;
  const view::InstanceTimeline& it = tl.instances().at(i);
  if (it.t.empty()) return QString::fromStdString(it.name);
  const std::size_t k = tl.indexAt(cursor_);
  const view::StateBand* band = tl.bandAt(i, stateTime());
  const QString state =
      band ? QString::fromUtf8(stateName(band->state).data(), stateName(band->state).size()) +
                 (band->ramping ? " (ramp)" : "")
           : QString("—");
  // A replayed second without calls has no p99 (NaN): a dash, not "nan".
  const QString p99 = std::isnan(it.p99Ms[k]) ? QString("—") : QString::number(it.p99Ms[k], 'f', 0);
  return QString("%1  %2\nerr %3 %  slow %4 %\n%5 /s  p99 %6 ms")
      .arg(QString::fromStdString(it.name),
           wouldOpen(i) ? state + QString::fromUtf8(" · would open") : state)
      .arg(it.errorRate[k] * 100, 0, 'f', 1)
      .arg(it.slowRate[k] * 100, 0, 'f', 1)
      .arg(recentRate(it, std::min(k, it.t.size() - 1)), 0, 'f', 1)
      .arg(p99);
}

bool InstanceTiles::sparkWindow(std::size_t i, std::size_t& first, std::size_t& k,
                                double& peak) const {
  if (!run_) return false;
  const view::RunTimeline& tl = run_->protectedRun.timeline;
  const view::InstanceTimeline& it = tl.instances().at(i);
  if (it.t.empty()) return false;
  k = std::min(tl.indexAt(cursor_), it.t.size() - 1);
  const double t0 = it.t[k] - kSparkSeconds;
  peak = 1;
  first = k;
  while (first > 0 && it.t[first - 1] > t0) --first;
  for (std::size_t j = first; j <= k; ++j)
    if (!std::isnan(it.throughput[j])) peak = std::max(peak, it.throughput[j]);
  return true;
}

QString InstanceTiles::sparklineScale(std::size_t i) const {
  std::size_t first = 0, k = 0;
  double peak = 0;
  return sparkWindow(i, first, k, peak) ? perSecond(peak) : QString();
}

// Answers/s (green, its peak printed above the top-right corner) and slow rate (orange, 0…1)
// over the last two minutes up to the cursor.
void InstanceTiles::paintSparkline(QPainter& p, const QRect& r, std::size_t i) const {
  const view::InstanceTimeline& it = run_->protectedRun.timeline.instances().at(i);
  std::size_t first = 0, k = 0;
  double peak = 1;
  if (!sparkWindow(i, first, k, peak)) return;
  const double t0 = it.t[k] - kSparkSeconds;
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
  QFont small = font();
  small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.7));
  p.setFont(small);
  p.setPen(QColor(40, 140, 80));
  // Above the frame, never under the lines it scales.
  const int h = QFontMetrics(small).height();
  p.drawText(QRect(r.left(), r.top() - h, r.width(), h), Qt::AlignRight | Qt::AlignBottom,
             perSecond(peak));
  p.setFont(font());
}

void InstanceTiles::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  // Live before the first instance reports has a run with none: the placeholder says why.
  if (const QString why = placeholderShown(); !why.isEmpty()) {
    p.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap, why);
    return;
  }
  for (std::size_t s = 0; s < order_list_.size(); ++s) paintTile(p, s);
  p.setOpacity(1.0);
}

// One tile: the state stripe, the text, the sparkline and the eye. A would-open tile is amber
// (fill, stripe and frame) and says so in a badge where the state would be.
void InstanceTiles::paintTile(QPainter& p, std::size_t slot) const {
  const view::RunTimeline& tl = run_->protectedRun.timeline;
  const std::size_t i = order_list_[slot];
  const QRect r = tileRect(slot);
  const bool hidden = isHidden(i), amber = wouldOpen(i);
  p.setOpacity(hidden ? 0.45 : 1.0);
  const view::StateBand* band = tl.bandAt(i, stateTime());
  const QColor state = amber  ? kAmber
                       : band ? stateColor(band->state, band->ramping)
                              : palette().mid().color();
  QColor fill = palette().base().color();
  if (amber)
    fill = QColor::fromRgbF(0.6f * fill.redF() + 0.4f * kAmber.redF(),
                            0.6f * fill.greenF() + 0.4f * kAmber.greenF(),
                            0.6f * fill.blueF() + 0.4f * kAmber.blueF());
  p.setPen(i == selected_ ? QPen(palette().highlight().color(), 2)
           : amber        ? QPen(kAmber.darker(120), 2)
                          : QPen(palette().mid().color()));
  p.setBrush(fill);
  p.drawRoundedRect(r, 6, 6);
  p.setPen(Qt::NoPen);
  p.setBrush(state);
  p.drawRoundedRect(QRect(r.left() + 4, r.top() + 4, 10, r.height() - 8), 3, 3);
  p.setPen(palette().text().color());
  const QRect text = r.adjusted(22, 4, -4, -4);
  QStringList lines = tileText(i).split('\n');
  const QFontMetrics fm(font());
  if (amber && !lines.isEmpty()) {
    // The first line is the name and a badge instead of the state.
    const QString badge = tr("would open");
    QFont bold = font();
    bold.setBold(true);
    const int badgeW = QFontMetrics(bold).horizontalAdvance(badge) + 10;
    const int top = text.top() + (text.height() - lines.size() * fm.lineSpacing()) / 2;
    const QString name = fm.elidedText(QString::fromStdString(tl.instances()[i].name),
                                       Qt::ElideMiddle, text.width() - badgeW - 30);
    p.drawText(QPoint(text.left(), top + fm.ascent()), name);
    const QRect pill(text.left() + fm.horizontalAdvance(name) + 6, top, badgeW, fm.height());
    p.setPen(Qt::NoPen);
    p.setBrush(kAmber.darker(140));
    p.drawRoundedRect(pill, pill.height() / 2.0, pill.height() / 2.0);
    p.setPen(Qt::white);
    p.setFont(bold);
    p.drawText(pill, Qt::AlignCenter, badge);
    p.setFont(font());
    p.setPen(palette().text().color());
    lines.front() = QString();
  }
  p.drawText(text, Qt::AlignLeft | Qt::AlignVCenter, lines.join('\n'));
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
