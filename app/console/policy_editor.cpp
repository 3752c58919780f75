#include "policy_editor.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>

#include <cmath>
#include <fstream>

#include "spillway/policy_yaml.hpp"

namespace spillway::console {
namespace {

constexpr int kSteps = 1000;  // slider resolution

double sec(Micros d) {
  return static_cast<double>(d) / 1e6;
}
Micros fromSec(double s) {
  return static_cast<Micros>(s * 1e6 + 0.5);
}

}  // namespace

PolicyEditor::PolicyEditor(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  buildScopeRow(layout);
  buildBreakerGroups(layout);
  buildWholePolicyGroups(layout);
  buildFileButtons(layout);
  connectScope();
}

// Scope: the default breaker, or one model's override on top of it.
void PolicyEditor::buildScopeRow(QVBoxLayout* layout) {
  auto* scopeRow = new QHBoxLayout;
  scope_ = new QComboBox(this);
  scope_->addItem(tr("all models (default)"), QString());
  scope_->setToolTip(tr("Edit the default breaker, or override it for one model"));
  resetOverride_ = new QPushButton(tr("Reset"), this);
  resetOverride_->setToolTip(tr("Drop this model's override: it follows the default again"));
  scopeRow->addWidget(new QLabel(tr("Scope"), this));
  scopeRow->addWidget(scope_, 1);
  scopeRow->addWidget(resetOverride_);
  layout->addLayout(scopeRow);
}

// The breaker's parameters, grouped as the policy file is: detect, trip, open, recover.
void PolicyEditor::buildBreakerGroups(QVBoxLayout* layout) {
  QFormLayout* form = addGroup(layout, tr("Detect"));
  addSliderRow(form, "window.length", tr("window"), 1, 600, 1, 0, " s", tr("sliding time window"));
  addSliderRow(form, "min_calls", tr("min calls"), 1, 10000, 1, 0, "",
               tr("the rule ignores thinner windows"));
  addSliderRow(form, "slow.k", tr("slow = k × P99"), 0.5, 20, 0.1, 1, "",
               tr("slow-call threshold factor"));
  addSliderRow(form, "slow.floor", tr("slow floor"), 0, 60, 0.05, 2, " s", tr("never below this"));
  addSliderRow(form, "slow.absolute", tr("fixed slow"), 0, 120, 0.1, 1, " s",
               tr("> 0: a fixed slow-call threshold instead of k × P99"));
  addSliderRow(form, "baseline.horizon", tr("baseline horizon"), 10, 3600, 10, 0, " s",
               tr("time constant of the P99 baseline's forgetting"));
  addSliderRow(form, "baseline.min_calls", tr("baseline min calls"), 1, 100000, 10, 0, "",
               tr("calls learned before the baseline is trusted"));
  form = addGroup(layout, tr("Trip"));
  addSliderRow(form, "trip.error_rate", tr("error rate >"), 0.01, 1, 0.01, 2, "",
               tr("share of failures"));
  addSliderRow(form, "trip.slow_rate", tr("slow rate >"), 0.01, 1, 0.01, 2, "",
               tr("share of slow calls"));
  addSliderRow(form, "trip.sustain", tr("sustained"), 0, 120, 0.5, 1, " s",
               tr("how long it must hold"));
  addSliderRow(form, "trip.weight", tr("topology weight"), 0.1, 5, 0.05, 2, "",
               tr("multiplies both rate thresholds (seed 001: core 1.2, edge 0.8)"));
  form = addGroup(layout, tr("Open"));
  addSliderRow(form, "open.duration", tr("open for"), 0.1, 600, 1, 1, " s",
               tr("first open duration"));
  addSliderRow(form, "open.backoff_multiplier", tr("backoff ×"), 1, 10, 0.1, 1, "",
               tr("per consecutive open"));
  addSliderRow(form, "open.max_duration", tr("max open"), 0.1, 3600, 5, 0, " s", tr("backoff cap"));
  addSliderRow(form, "open.jitter", tr("jitter"), 0, 1, 0.05, 2, "",
               tr("± share of the open time, so breakers do not re-probe in lockstep"));
  addSliderRow(form, "open.decay_after", tr("backoff decays after"), 1, 3600, 10, 0, " s",
               tr("healthy this long forgets one open of the backoff"));
  form = addGroup(layout, tr("Recover"));
  addSliderRow(form, "half_open.probe_share", tr("probe share"), 0.01, 1, 0.01, 2, "",
               tr("share of traffic let through in HALF_OPEN"));
  addSliderRow(form, "half_open.success_streak", tr("success streak"), 1, 1000, 1, 0, "",
               tr("good probes in a row to close"));
  addSliderRow(form, "ramp.duration", tr("ramp"), 0, 600, 5, 0, " s",
               tr("back to full traffic over"));
}

// Degrade and shedding: one setting for the whole policy, whatever the scope.
void PolicyEditor::buildWholePolicyGroups(QVBoxLayout* layout) {
  QFormLayout* form = addGroup(layout, tr("Degrade (whole policy)"));
  addSliderRow(form, "degrade.max_quality_drop", tr("max quality drop"), 0, 1, 0.05, 2, "",
               tr("a backup may be at most this much worse"));
  addSliderRow(form, "degrade.retry_budget", tr("re-route budget"), 0, 1, 0.05, 2, "",
               tr("share of live traffic the gateway may re-route"));
  addSliderRow(form, "degrade.lock_ttl", tr("lock TTL"), 1, 3600, 10, 0, " s",
               tr("a degraded session stays degraded this long"));
  addCheckRow(form, "degrade.non_critical_backups", tr("backups for non-critical traffic"),
              tr("off: backups are kept for core traffic"));
  addCheckRow(form, "degrade.fast_fail_non_critical", tr("fast-fail non-critical without a backup"),
              {});
  addCheckRow(form, "degrade.cache", tr("serve cached answers"), {});
  addCheckRow(form, "degrade.lock", tr("degrade lock"),
              tr("a degraded session stays on its backup"));
  addCheckRow(form, "degrade.truncate_tail", tr("cut the long tail at the slow threshold"),
              tr("an attempt still running at k × P99 is cut and degraded (seed 001)"));
  addCheckRow(form, "degrade.cheaper_non_core", tr("cheaper model for non-core traffic"),
              tr("cost routing (seed 002): non-core requests go to the cheapest matched model"));
  addCheckRow(form, "degrade.cheaper_simple", tr("cheaper model for simple requests"),
              tr("cost routing (seed 002): requests of few tokens go to the cheapest model"));
  form = addGroup(layout, tr("Shedding (whole policy)"));
  addSliderRow(form, "limits.shed_at", tr("shed non-critical at"), 0, 1, 0.05, 2, "",
               tr("share of gateway capacity in use; 0 = off"));
}

void PolicyEditor::buildFileButtons(QVBoxLayout* layout) {
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

void PolicyEditor::connectScope() {
  connect(scope_, &QComboBox::currentIndexChanged, this, [this] {
    const QString m = scope();
    resetOverride_->setEnabled(!m.isEmpty() && policy_.modelOverrides.count(m.toStdString()));
    showBreaker(m.isEmpty() ? policy_.breaker : resolveBreaker(policy_, m.toStdString(), {}));
  });
  connect(resetOverride_, &QPushButton::clicked, this, [this] {
    policy_.modelOverrides.erase(scope().toStdString());
    resetOverride_->setEnabled(false);
    showBreaker(resolveBreaker(policy_, scope().toStdString(), {}));
    emit policyEdited(policy_);
  });
  resetOverride_->setEnabled(false);
}

QFormLayout* PolicyEditor::addGroup(QVBoxLayout* layout, const QString& title) {
  auto* box = new QGroupBox(title, this);
  auto* form = new QFormLayout(box);
  form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
  layout->addWidget(box);
  return form;
}

// A slider with its spin box (see add()) as one row of `form`.
void PolicyEditor::addSliderRow(QFormLayout* form, const QString& key, const QString& label,
                                double lo, double hi, double step, int decimals,
                                const QString& suffix, const QString& tip) {
  QDoubleSpinBox* box = add(key, lo, hi, step, decimals, suffix);
  box->setToolTip(tip);
  auto* line = new QHBoxLayout;
  line->addWidget(slider(key), 1);
  line->addWidget(box);
  form->addRow(label, line);
}

void PolicyEditor::addCheckRow(QFormLayout* form, const QString& key, const QString& label,
                               const QString& tip) {
  form->addRow(addCheck(key, label, tip));
}

QDoubleSpinBox* PolicyEditor::add(const QString& key, double lo, double hi, double step,
                                  int decimals, const QString& suffix) {
  auto* box = new QDoubleSpinBox(this);
  box->setRange(lo, hi);
  box->setSingleStep(step);
  box->setDecimals(decimals);
  box->setSuffix(suffix);
  box->setKeyboardTracking(false);  // typing "0.45" is one change, not three
  box->setObjectName(key);
  auto* s = new QSlider(Qt::Horizontal, this);
  s->setRange(0, kSteps);
  s->setObjectName(key + ".slider");
  // Wide ranges (1 s … 1 h) get a log scale, so the useful short end is not one pixel wide.
  const Row r{key, box, s, lo > 0 && hi / lo > 100};
  rows_.append(r);
  connect(box, &QDoubleSpinBox::valueChanged, this, [this, r] {
    syncSlider(r);
    if (updating_) return;
    readControls();
    emit policyEdited(policy_);
  });
  connect(s, &QSlider::valueChanged, this, [r](int v) {
    const double f = static_cast<double>(v) / kSteps;
    const double lo = r.box->minimum(), hi = r.box->maximum();
    r.box->setValue(r.log ? lo * std::pow(hi / lo, f) : lo + f * (hi - lo));
  });
  return box;
}

QCheckBox* PolicyEditor::addCheck(const QString& key, const QString& label, const QString& tip) {
  auto* c = new QCheckBox(label, this);
  c->setObjectName(key);
  c->setToolTip(tip);
  checks_.append({key, c});
  connect(c, &QCheckBox::toggled, this, [this] {
    if (updating_) return;
    readControls();
    emit policyEdited(policy_);
  });
  return c;
}

void PolicyEditor::syncSlider(const Row& r) {
  const double lo = r.box->minimum(), hi = r.box->maximum(), v = r.box->value();
  const double f = r.log ? std::log(v / lo) / std::log(hi / lo) : (v - lo) / (hi - lo);
  const QSignalBlocker block(r.slider);
  r.slider->setValue(static_cast<int>(std::lround(std::clamp(f, 0.0, 1.0) * kSteps)));
}

QDoubleSpinBox* PolicyEditor::control(const QString& key) const {
  for (const Row& r : rows_)
    if (r.key == key) return r.box;
  return nullptr;
}

QSlider* PolicyEditor::slider(const QString& key) const {
  for (const Row& r : rows_)
    if (r.key == key) return r.slider;
  return nullptr;
}

QCheckBox* PolicyEditor::check(const QString& key) const {
  for (const auto& [k, c] : checks_)
    if (k == key) return c;
  return nullptr;
}

QString PolicyEditor::scope() const {
  return scope_->currentData().toString();
}

void PolicyEditor::setScope(const QString& model) {
  const int i = scope_->findData(model);
  if (i >= 0) scope_->setCurrentIndex(i);
}

void PolicyEditor::setModels(const QStringList& models) {
  const QSignalBlocker block(scope_);
  while (scope_->count() > 1) scope_->removeItem(1);
  for (const QString& m : models) scope_->addItem(tr("model %1").arg(m), m);
  scope_->setCurrentIndex(0);
  resetOverride_->setEnabled(false);
}

void PolicyEditor::setPolicy(const Policy& p) {
  policy_ = p;
  const QString m = scope();
  showBreaker(m.isEmpty() ? p.breaker : resolveBreaker(p, m.toStdString(), {}));
  showSections();
}

void PolicyEditor::showBreaker(const BreakerConfig& b) {
  updating_ = true;
  control("window.length")->setValue(sec(b.window.length));
  control("min_calls")->setValue(b.minCalls);
  control("slow.k")->setValue(b.slow.k);
  control("slow.floor")->setValue(sec(b.slow.floor));
  control("slow.absolute")->setValue(sec(b.slow.absolute));
  control("baseline.horizon")->setValue(sec(b.baseline.horizon));
  control("baseline.min_calls")->setValue(b.baseline.minCalls);
  control("trip.error_rate")->setValue(b.trip.errorRate);
  control("trip.slow_rate")->setValue(b.trip.slowRate);
  control("trip.sustain")->setValue(sec(b.trip.sustain));
  control("trip.weight")->setValue(b.trip.weight);
  control("open.duration")->setValue(sec(b.open.duration));
  control("open.backoff_multiplier")->setValue(b.open.backoffMultiplier);
  control("open.max_duration")->setValue(sec(b.open.maxDuration));
  control("open.jitter")->setValue(b.open.jitter);
  control("open.decay_after")->setValue(sec(b.open.decayAfter));
  control("half_open.probe_share")->setValue(b.halfOpen.probeShare);
  control("half_open.success_streak")->setValue(b.halfOpen.successStreak);
  control("ramp.duration")->setValue(sec(b.ramp.duration));
  updating_ = false;
}

void PolicyEditor::showSections() {
  updating_ = true;
  const DegradeConfig& d = policy_.degrade;
  control("degrade.max_quality_drop")->setValue(d.maxQualityDrop);
  control("degrade.retry_budget")->setValue(d.retryBudget);
  control("degrade.lock_ttl")->setValue(sec(d.lockTtl));
  check("degrade.non_critical_backups")->setChecked(d.nonCriticalBackups);
  check("degrade.fast_fail_non_critical")->setChecked(d.fastFailNonCritical);
  check("degrade.cache")->setChecked(d.cache);
  check("degrade.lock")->setChecked(d.lock);
  check("degrade.truncate_tail")->setChecked(d.truncateTail);
  check("degrade.cheaper_non_core")->setChecked(d.cheaperForNonCore);
  check("degrade.cheaper_simple")->setChecked(d.cheaperForSimple);
  control("limits.shed_at")->setValue(policy_.limits.shedAt);
  // Degrade settings mean nothing for a policy without a degrade section.
  for (const auto& [k, c] : checks_) c->setEnabled(d.enabled);
  for (const Row& r : rows_)
    if (r.key.startsWith("degrade.")) {
      r.box->setEnabled(d.enabled);
      r.slider->setEnabled(d.enabled);
    }
  updating_ = false;
}

void PolicyEditor::readControls() {
  const std::string model = scope().toStdString();
  BreakerConfig b = model.empty() ? policy_.breaker : resolveBreaker(policy_, model, {});
  b.window.length = fromSec(control("window.length")->value());
  b.window.bucket = std::min(b.window.bucket, b.window.length);
  b.minCalls = static_cast<std::uint32_t>(control("min_calls")->value());
  b.slow.k = control("slow.k")->value();
  b.slow.floor = fromSec(control("slow.floor")->value());
  b.slow.absolute = fromSec(control("slow.absolute")->value());
  b.baseline.horizon = fromSec(control("baseline.horizon")->value());
  b.baseline.minCalls = static_cast<std::uint32_t>(control("baseline.min_calls")->value());
  b.trip.errorRate = control("trip.error_rate")->value();
  b.trip.slowRate = control("trip.slow_rate")->value();
  b.trip.sustain = fromSec(control("trip.sustain")->value());
  b.trip.weight = control("trip.weight")->value();
  b.open.duration = fromSec(control("open.duration")->value());
  b.open.backoffMultiplier = control("open.backoff_multiplier")->value();
  b.open.maxDuration = std::max(b.open.duration, fromSec(control("open.max_duration")->value()));
  b.open.jitter = control("open.jitter")->value();
  b.open.decayAfter = fromSec(control("open.decay_after")->value());
  b.halfOpen.probeShare = control("half_open.probe_share")->value();
  b.halfOpen.successStreak =
      static_cast<std::uint32_t>(control("half_open.success_streak")->value());
  b.ramp.duration = fromSec(control("ramp.duration")->value());
  if (model.empty()) {
    policy_.breaker = b;
  } else {
    // Only what differs from the default goes into the override, so later edits of the
    // default still reach this model's other settings.
    BreakerOverride o = overrideBetween(policy_.breaker, b);
    if (isEmpty(o))
      policy_.modelOverrides.erase(model);
    else
      policy_.modelOverrides[model] = std::move(o);
    resetOverride_->setEnabled(policy_.modelOverrides.count(model) > 0);
  }
  DegradeConfig& d = policy_.degrade;
  d.maxQualityDrop = control("degrade.max_quality_drop")->value();
  d.retryBudget = control("degrade.retry_budget")->value();
  d.lockTtl = fromSec(control("degrade.lock_ttl")->value());
  d.nonCriticalBackups = check("degrade.non_critical_backups")->isChecked();
  d.fastFailNonCritical = check("degrade.fast_fail_non_critical")->isChecked();
  d.cache = check("degrade.cache")->isChecked();
  d.lock = check("degrade.lock")->isChecked();
  d.truncateTail = check("degrade.truncate_tail")->isChecked();
  d.cheaperForNonCore = check("degrade.cheaper_non_core")->isChecked();
  d.cheaperForSimple = check("degrade.cheaper_simple")->isChecked();
  policy_.limits.shedAt = control("limits.shed_at")->value();
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
