#include "headline_strip.hpp"

#include "flow_layout.hpp"

#include <QDialog>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "kpi_text.hpp"

namespace spillway::console {
namespace {

QString badgeText(view::HeadlineTile::Verdict v) {
  switch (v) {
    case view::HeadlineTile::Verdict::Pass:
      return "PASS";
    case view::HeadlineTile::Verdict::Fail:
      return "FAIL";
    case view::HeadlineTile::Verdict::Unsure:
      return "UNSURE";
    default:
      return "—";
  }
}

QString badgeStyle(view::HeadlineTile::Verdict v) {
  switch (v) {
    case view::HeadlineTile::Verdict::Pass:
      return "background:#2e7d32;color:white;border-radius:3px;padding:0 4px;";
    case view::HeadlineTile::Verdict::Fail:
      return "background:#c62828;color:white;border-radius:3px;padding:0 4px;";
    case view::HeadlineTile::Verdict::Unsure:
      return "background:#ef6c00;color:white;border-radius:3px;padding:0 4px;";
    default:
      return "color:palette(mid);";
  }
}

QString targetText(const view::HeadlineTile& t) {
  if (!t.target) return QObject::tr("no target");
  return QObject::tr("target %1 %2").arg(t.higherIsBetter ? "≥" : "≤", kpiValue(t.target, t.unit));
}

// A target as its editor shows it: shares in %, durations in seconds.
double shownTarget(double v, const std::string& unit) {
  return unit == "share" ? v * 100 : v;
}

}  // namespace

HeadlineStrip::HeadlineStrip(QWidget* parent) : QWidget(parent) {
  auto* outer = new QHBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  row_ = new FlowLayout(nullptr, 6);
  outer->addLayout(row_, 1);
  auto* edit = new QPushButton(tr("Targets…"), this);
  edit->setObjectName("editTargets");
  edit->setToolTip(tr("Set the bound each headline KPI is judged against (kept with the session)"));
  connect(edit, &QPushButton::clicked, this, &HeadlineStrip::editTargets);
  outer->addWidget(edit, 0, Qt::AlignTop);
}

void HeadlineStrip::setTiles(std::vector<view::HeadlineTile> tiles, const QString& referenceName) {
  tiles_ = std::move(tiles);
  for (QWidget* w : tileWidgets_) {
    row_->removeWidget(w);  // out of the flow now, not when the event loop deletes it
    w->hide();
    w->deleteLater();
  }
  tileWidgets_.clear();
  for (const view::HeadlineTile& t : tiles_) {
    QWidget* w = makeTile(t, referenceName);
    row_->addWidget(w);
    tileWidgets_.push_back(w);
  }
}

QWidget* HeadlineStrip::makeTile(const view::HeadlineTile& t, const QString& referenceName) {
  auto* frame = new QFrame(this);
  frame->setObjectName(QString::fromStdString(t.key));
  frame->setFrameShape(QFrame::StyledPanel);
  auto* v = new QVBoxLayout(frame);
  v->setContentsMargins(6, 2, 6, 2);
  v->setSpacing(0);
  auto* name = new QLabel(QString::fromStdString(t.label), frame);
  QFont small = name->font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  name->setFont(small);
  v->addWidget(name);
  auto* middle = new QHBoxLayout;
  auto* value = new QLabel(kpiValue(t.value, t.unit), frame);
  value->setObjectName("value");
  QFont big = value->font();
  big.setPointSizeF(big.pointSizeF() * 1.3);
  big.setBold(true);
  value->setFont(big);
  auto* badge = new QLabel(badgeText(t.verdict), frame);
  badge->setObjectName("badge");
  badge->setStyleSheet(badgeStyle(t.verdict));
  badge->setFont(small);
  middle->addWidget(value);
  middle->addStretch(1);
  middle->addWidget(badge);
  v->addLayout(middle);
  QString sub = targetText(t);
  // Over several seeds the verdict reads the interval: show it.
  if (t.interval && t.interval->n > 1)
    sub += "<br>" + tr("[%1, %2] · %3 seeds")
                        .arg(kpiValue(t.interval->lo, t.unit), kpiValue(t.interval->hi, t.unit))
                        .arg(t.interval->n);
  if (t.value && t.reference) {
    const double d = *t.value - *t.reference;
    const QColor c = deltaColor(d, t.unit, t.higherIsBetter);
    const QString delta =
        kpiDelta(d, t.unit) + " " + tr("vs %1").arg(referenceName.toHtmlEscaped());
    sub += "<br>" +
           (c.isValid() ? QString("<span style='color:%1'>%2</span>").arg(c.name(), delta) : delta);
  } else if (!t.detail.empty()) {
    sub += "<br>" + QString::fromStdString(t.detail).toHtmlEscaped().replace("\n", "<br>");
  }
  if (!t.warning.empty())
    sub += QString("<br><span style='color:#c62828'>%1</span>")
               .arg(QString::fromStdString(t.warning).toHtmlEscaped());
  auto* below = new QLabel(sub, frame);
  below->setTextFormat(Qt::RichText);
  below->setFont(small);
  v->addWidget(below);
  frame->setToolTip(QString::fromStdString(t.label) +
                    (t.detail.empty() ? QString() : "\n" + QString::fromStdString(t.detail)) +
                    (t.warning.empty() ? QString() : "\n" + QString::fromStdString(t.warning)));
  return frame;
}

QString HeadlineStrip::badge(const QString& key) const {
  for (QWidget* w : tileWidgets_)
    if (w->objectName() == key) return w->findChild<QLabel*>("badge")->text();
  return {};
}

QString HeadlineStrip::valueText(const QString& key) const {
  for (QWidget* w : tileWidgets_)
    if (w->objectName() == key) return w->findChild<QLabel*>("value")->text();
  return {};
}

void HeadlineStrip::setTargets(const view::HeadlineTargets& t) {
  targets_ = t;
  emit targetsChanged(targets_);
}

// One spin box per key; an unchecked bound is no target.
void HeadlineStrip::editTargets() {
  QDialog d(this);
  d.setWindowTitle(tr("Headline targets"));
  auto* form = new QFormLayout(&d);
  std::vector<std::pair<std::string, QDoubleSpinBox*>> boxes;
  for (const auto& [key, label] : view::headlineKeys()) {
    const bool share =
        key != "ttd" && key != "self_healing" && key != "mttr" && key != "service_restoration";
    auto* box = new QDoubleSpinBox(&d);
    box->setRange(0, share ? 100 : 3600);
    box->setDecimals(share ? 2 : 0);
    box->setSuffix(share ? " %" : " s");
    box->setSpecialValueText(tr("no target"));
    const auto bound = targets_.of(key);
    box->setValue(bound ? shownTarget(*bound, share ? "share" : "s") : 0);
    form->addRow(QString::fromStdString(label), box);
    boxes.emplace_back(key, box);
  }
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &d);
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, &d, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &d, &QDialog::reject);
  if (d.exec() != QDialog::Accepted) return;
  view::HeadlineTargets t;
  for (const auto& [key, box] : boxes)
    if (box->value() > 0) t.bounds[key] = box->suffix() == " %" ? box->value() / 100 : box->value();
  setTargets(t);
}

}  // namespace spillway::console
