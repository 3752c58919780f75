#include "narrative_panel.hpp"

#include <QAction>
#include <QClipboard>
#include <QGuiApplication>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QPainter>
#include <QPixmap>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace spillway::console {
namespace {

constexpr int kLineRole = Qt::UserRole;  // the row's index into lines_

// Marks readable on light and dark themes alike; the text keeps the palette's colour.
QColor colourOf(view::NarrativeKind k) {
  using K = view::NarrativeKind;
  switch (k) {
    case K::FaultStart:
    case K::FaultEnd:
      return QColor(0x8e, 0x44, 0xad);
    case K::Jitter:
      return QColor(0x95, 0xa5, 0xa6);
    case K::Trip:
      return QColor(0xe6, 0x7e, 0x22);
    case K::FalseTrip:
      return QColor(0xe7, 0x4c, 0x3c);
    case K::Probing:
    case K::Relapse:
      return QColor(0xd4, 0xa0, 0x17);
    case K::Recovered:
    case K::Restored:
    case K::ServiceRestored:
      return QColor(0x27, 0xae, 0x60);
    case K::WouldOpen:
      return QColor(0x34, 0x98, 0xdb);
    case K::Other:
    case K::Summary:
      return QColor(0x7f, 0x8c, 0x8d);
  }
  return Qt::gray;
}

QIcon markOf(view::NarrativeKind k) {
  QPixmap pm(12, 12);
  pm.fill(Qt::transparent);
  QPainter p(&pm);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(Qt::NoPen);
  p.setBrush(colourOf(k));
  if (k == view::NarrativeKind::Summary)
    p.drawRect(2, 2, 8, 8);
  else
    p.drawEllipse(1, 1, 10, 10);
  return QIcon(pm);
}

}  // namespace

Narrative narrativeOf(const Comparison& c, const sim::Scenario* scenario) {
  Narrative n;
  const RunResult& run = c.protectedRun;
  if (c.mode == view::Mode::Simulation)
    n.lines = view::simulationNarrative(run.report, run.events, scenario, &c.baseline.report);
  else if (c.mode == view::Mode::Replay) {
    n.lines = view::replayNarrative(run.replayKpis, run.events, c.origin, &c.baseline.replayKpis);
    n.clock.wallOrigin = c.origin;
  }
  return n;
}

NarrativePanel::NarrativePanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  list_ = new QTreeWidget(this);
  list_->setObjectName("narrativeList");
  list_->setColumnCount(2);
  list_->setHeaderLabels({tr("Time"), tr("What happened")});
  list_->setRootIsDecorated(false);
  list_->setWordWrap(true);
  list_->setAlternatingRowColors(true);
  list_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  list_->header()->setStretchLastSection(true);
  list_->installEventFilter(this);
  empty_ = new QLabel(tr("Run a scenario or replay an incident: its account appears here."), this);
  empty_->setWordWrap(true);
  empty_->setAlignment(Qt::AlignCenter);
  copy_ = new QAction(tr("Copy as text"), this);
  copy_->setObjectName("copyNarrative");
  copy_->setToolTip(tr("The narrative as spillway-cli simulate --narrative prints it"));
  copy_->setEnabled(false);
  connect(copy_, &QAction::triggered, this, &NarrativePanel::copyAsText);
  list_->addAction(copy_);
  list_->setContextMenuPolicy(Qt::ActionsContextMenu);
  auto* copyButton = new QToolButton(this);
  copyButton->setDefaultAction(copy_);
  layout->addWidget(list_, 1);
  layout->addWidget(empty_, 1);
  layout->addWidget(copyButton, 0, Qt::AlignRight);
  connect(list_, &QTreeWidget::itemClicked, this,
          [this](QTreeWidgetItem* item) { activate(item); });
  fill();
}

void NarrativePanel::setLines(std::vector<view::NarrativeLine> lines) {
  lines_ = std::move(lines);
  fill();
}

void NarrativePanel::setClock(view::NarrativeClock clock) {
  clock_ = clock;
  fill();
}

QString NarrativePanel::text() const {
  return QString::fromStdString(view::narrativeText(lines_, clock_));
}

void NarrativePanel::copyAsText() {
  if (QClipboard* cb = QGuiApplication::clipboard()) cb->setText(text());
}

void NarrativePanel::fill() {
  list_->clear();
  QList<QTreeWidgetItem*> items;
  for (std::size_t i = 0; i < lines_.size(); ++i) {
    const view::NarrativeLine& l = lines_[i];
    const bool summary = l.kind == view::NarrativeKind::Summary;
    auto* item = new QTreeWidgetItem;
    // The summary's mark and time column say what it is; its text drops the "summary: " the
    // plain-text form needs.
    QString text = QString::fromStdString(l.text);
    if (summary && text.startsWith(QLatin1String("summary: "))) text.remove(0, 9);
    item->setText(0,
                  summary ? tr("summary") : QString::fromStdString(view::narrativeTime(l, clock_)));
    item->setText(1, text);
    item->setIcon(1, markOf(l.kind));
    item->setToolTip(1, QString::fromStdString(std::string(view::narrativeKindName(l.kind))) +
                            ": " + QString::fromStdString(l.text));
    item->setData(0, kLineRole, static_cast<qulonglong>(i));
    if (summary) {
      QFont f = item->font(1);
      f.setBold(true);
      item->setFont(1, f);
    }
    items.push_back(item);
  }
  list_->addTopLevelItems(items);
  list_->setVisible(!lines_.empty());
  empty_->setVisible(lines_.empty());
  copy_->setEnabled(!lines_.empty());
}

void NarrativePanel::activate(QTreeWidgetItem* item) {
  if (!item) return;
  const auto i = static_cast<std::size_t>(item->data(0, kLineRole).toULongLong());
  if (i >= lines_.size()) return;
  const view::NarrativeLine& l = lines_[i];
  emit lineActivated(l.at, l.from, l.to, l.instanceIndex);
}

// Enter on the current row acts like a click (the view's own `activated` also fires on a
// double click in some styles, which would seek twice).
bool NarrativePanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == list_ && event->type() == QEvent::KeyPress) {
    const int key = static_cast<QKeyEvent*>(event)->key();
    if (key == Qt::Key_Return || key == Qt::Key_Enter) {
      activate(list_->currentItem());
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace spillway::console
