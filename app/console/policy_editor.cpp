#include "policy_editor.hpp"

#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QMessageBox>
#include <QPushButton>
#include <QVBoxLayout>

#include <fstream>

#include "spillway/policy_yaml.hpp"

namespace spillway::console {
namespace {

double sec(Micros d) {
  return static_cast<double>(d) / 1e6;
}
Micros fromSec(double s) {
  return static_cast<Micros>(s * 1e6 + 0.5);
}

}  // namespace

PolicyEditor::PolicyEditor(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto group = [&](const QString& title) {
    auto* box = new QGroupBox(title, this);
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
    layout->addWidget(box);
    return form;
  };
  auto row = [&](QFormLayout* form, const QString& key, const QString& label, double lo, double hi,
                 double step, int decimals, const QString& suffix, const QString& tip) {
    QDoubleSpinBox* box = add(key, label, lo, hi, step, decimals, suffix);
    box->setToolTip(tip);
    form->addRow(label, box);
  };
  QFormLayout* detect = group(tr("Detect"));
  row(detect, "window.length", tr("window"), 1, 600, 1, 0, " s", tr("sliding time window"));
  row(detect, "min_calls", tr("min calls"), 1, 10000, 1, 0, "",
      tr("the rule ignores thinner windows"));
  row(detect, "slow.k", tr("slow = k × P99"), 0.5, 20, 0.1, 1, "",
      tr("slow-call threshold factor"));
  row(detect, "slow.floor", tr("slow floor"), 0, 60, 0.05, 2, " s", tr("never below this"));
  QFormLayout* trip = group(tr("Trip"));
  row(trip, "trip.error_rate", tr("error rate >"), 0.01, 1, 0.01, 2, "", tr("share of failures"));
  row(trip, "trip.slow_rate", tr("slow rate >"), 0.01, 1, 0.01, 2, "", tr("share of slow calls"));
  row(trip, "trip.sustain", tr("sustained"), 0, 120, 0.5, 1, " s", tr("how long it must hold"));
  QFormLayout* open = group(tr("Open"));
  row(open, "open.duration", tr("open for"), 0.1, 600, 1, 1, " s", tr("first open duration"));
  row(open, "open.backoff_multiplier", tr("backoff ×"), 1, 10, 0.1, 1, "",
      tr("per consecutive open"));
  row(open, "open.max_duration", tr("max open"), 0.1, 3600, 5, 0, " s", tr("backoff cap"));
  QFormLayout* recover = group(tr("Recover"));
  row(recover, "half_open.probe_share", tr("probe share"), 0.01, 1, 0.01, 2, "",
      tr("share of traffic let through in HALF_OPEN"));
  row(recover, "half_open.success_streak", tr("success streak"), 1, 1000, 1, 0, "",
      tr("good probes in a row to close"));
  row(recover, "ramp.duration", tr("ramp"), 0, 600, 5, 0, " s", tr("back to full traffic over"));
  auto* buttons = new QHBoxLayout;
  auto* loadButton = new QPushButton(tr("Load…"), this);
  auto* saveButton = new QPushButton(tr("Save…"), this);
  buttons->addWidget(loadButton);
  buttons->addWidget(saveButton);
  layout->addLayout(buttons);
  layout->addStretch(1);
  connect(loadButton, &QPushButton::clicked, this, &PolicyEditor::load);
  connect(saveButton, &QPushButton::clicked, this, &PolicyEditor::save);
}

QDoubleSpinBox* PolicyEditor::add(const QString& key, const QString&, double lo, double hi,
                                  double step, int decimals, const QString& suffix) {
  auto* box = new QDoubleSpinBox(this);
  box->setRange(lo, hi);
  box->setSingleStep(step);
  box->setDecimals(decimals);
  box->setSuffix(suffix);
  box->setKeyboardTracking(false);  // typing "0.45" is one change, not three
  box->setObjectName(key);
  connect(box, &QDoubleSpinBox::valueChanged, this, [this] {
    if (updating_) return;
    readControls();
    emit policyEdited(policy_);
  });
  controls_.append({key, box});
  return box;
}

QDoubleSpinBox* PolicyEditor::control(const QString& key) const {
  for (const auto& [k, box] : controls_)
    if (k == key) return box;
  return nullptr;
}

void PolicyEditor::setPolicy(const Policy& p) {
  policy_ = p;
  updating_ = true;
  const BreakerConfig& b = p.breaker;
  control("window.length")->setValue(sec(b.window.length));
  control("min_calls")->setValue(b.minCalls);
  control("slow.k")->setValue(b.slow.k);
  control("slow.floor")->setValue(sec(b.slow.floor));
  control("trip.error_rate")->setValue(b.trip.errorRate);
  control("trip.slow_rate")->setValue(b.trip.slowRate);
  control("trip.sustain")->setValue(sec(b.trip.sustain));
  control("open.duration")->setValue(sec(b.open.duration));
  control("open.backoff_multiplier")->setValue(b.open.backoffMultiplier);
  control("open.max_duration")->setValue(sec(b.open.maxDuration));
  control("half_open.probe_share")->setValue(b.halfOpen.probeShare);
  control("half_open.success_streak")->setValue(b.halfOpen.successStreak);
  control("ramp.duration")->setValue(sec(b.ramp.duration));
  updating_ = false;
}

void PolicyEditor::readControls() {
  BreakerConfig& b = policy_.breaker;
  b.window.length = fromSec(control("window.length")->value());
  b.window.bucket = std::min(b.window.bucket, b.window.length);
  b.minCalls = static_cast<std::uint32_t>(control("min_calls")->value());
  b.slow.k = control("slow.k")->value();
  b.slow.floor = fromSec(control("slow.floor")->value());
  b.trip.errorRate = control("trip.error_rate")->value();
  b.trip.slowRate = control("trip.slow_rate")->value();
  b.trip.sustain = fromSec(control("trip.sustain")->value());
  b.open.duration = fromSec(control("open.duration")->value());
  b.open.backoffMultiplier = control("open.backoff_multiplier")->value();
  b.open.maxDuration = std::max(b.open.duration, fromSec(control("open.max_duration")->value()));
  b.halfOpen.probeShare = control("half_open.probe_share")->value();
  b.halfOpen.successStreak =
      static_cast<std::uint32_t>(control("half_open.success_streak")->value());
  b.ramp.duration = fromSec(control("ramp.duration")->value());
}

void PolicyEditor::load() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Load policy"), {}, tr("Policies (*.yaml *.yml)"));
  if (path.isEmpty()) return;
  try {
    setPolicy(loadPolicyFile(path.toStdString()));
    emit policyEdited(policy_);
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Policy"), QString::fromUtf8(e.what()));
  }
}

void PolicyEditor::save() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Save policy"), "policy.yaml",
                                                    tr("Policies (*.yaml *.yml)"));
  if (path.isEmpty()) return;
  std::ofstream out(path.toStdString(), std::ios::binary);
  out << policyToYaml(policy_);
  if (!out) QMessageBox::warning(this, tr("Policy"), tr("Could not write %1").arg(path));
}

}  // namespace spillway::console
