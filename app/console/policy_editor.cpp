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

#include <algorithm>
#include <cmath>
#include <fstream>
#include <type_traits>
#include <utility>

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

// A field as its control shows it: a duration in seconds (Micros is the only 64-bit integer
// the configs hold), a flag as 0 / 1, a count or a share as the number itself.
template <class F>
double shown(F v) {
  if constexpr (std::is_same_v<F, Micros>)
    return sec(v);
  else
    return static_cast<double>(v);
}

template <class F>
void store(F& field, double v) {
  if constexpr (std::is_same_v<F, Micros>)
    field = fromSec(v);
  else if constexpr (std::is_same_v<F, bool>)
    field = v != 0;
  else
    field = static_cast<F>(v);  // a count: the spin box has no decimals
}

// The field at the end of a member-pointer path: member<&BreakerConfig::trip,
// &TripConfig::slowRate>(b) is b.trip.slowRate.
template <auto First, auto... Rest, class T>
auto& member(T& t) {
  if constexpr (sizeof...(Rest) == 0)
    return t.*First;
  else
    return member<Rest...>(t.*First);
}

template <class M>
struct OwnerOf;
template <class C, class F>
struct OwnerOf<F C::*> {
  using type = C;
};

// Reads and writes one field of a T (the breaker, or the whole policy) as the double its
// control shows, so one loop serves every row whatever the field's type and unit.
template <class T>
struct Field {
  double (*get)(const T&);
  void (*set)(T&, double);
};

// field<&BreakerConfig::trip, &TripConfig::slowRate> reads and writes b.trip.slowRate.
template <auto First, auto... Rest>
constexpr auto field = [] {
  using T = typename OwnerOf<decltype(First)>::type;
  return Field<T>{[](const T& t) { return shown(member<First, Rest...>(t)); },
                  [](T& t, double v) { store(member<First, Rest...>(t), v); }};
}();

struct Range {
  double lo, hi, step;
  int decimals;
  const char* suffix;
};

// One row of the editor: a slider with its spin box over `range`, or a checkbox. Labels,
// tips and group titles are translated when the row is built.
template <class T>
struct RowSpec {
  const char* group;  // its group box's title; the rows of a group are adjacent
  const char* key;    // the YAML key, also the control's object name
  const char* label;
  Range range;      // sliders only
  const char* tip;  // nullptr: none
  bool check;       // a checkbox, for a bool field
  Field<T> field;
};

// A row reads as an addSliderRow call did: key, label, lo, hi, step, decimals, suffix, tip.
template <class T>
constexpr RowSpec<T> sliderRow(const char* group, const char* key, const char* label, double lo,
                               double hi, double step, int decimals, const char* suffix,
                               const char* tip, Field<T> field) {
  return {group, key, label, {lo, hi, step, decimals, suffix}, tip, false, field};
}

template <class T>
constexpr RowSpec<T> checkRow(const char* group, const char* key, const char* label,
                              const char* tip, Field<T> field) {
  return {group, key, label, {}, tip, true, field};
}

constexpr const char* kDetect = QT_TR_NOOP("Detect");
constexpr const char* kTrip = QT_TR_NOOP("Trip");
constexpr const char* kOpen = QT_TR_NOOP("Open");
constexpr const char* kRecover = QT_TR_NOOP("Recover");
constexpr const char* kDegrade = QT_TR_NOOP("Degrade (whole policy)");
constexpr const char* kShedding = QT_TR_NOOP("Shedding (whole policy)");

// The breaker's parameters, grouped as the policy file is: detect, trip, open, recover. They
// edit the breaker of the scope (the default, or a model's override of it).
constexpr RowSpec<BreakerConfig> kBreakerRows[] = {
    sliderRow(kDetect, "window.length", QT_TR_NOOP("window"), 1, 600, 1, 0, " s",
              QT_TR_NOOP("sliding time window"),
              field<&BreakerConfig::window, &WindowConfig::length>),
    sliderRow(kDetect, "min_calls", QT_TR_NOOP("min calls"), 1, 10000, 1, 0, "",
              QT_TR_NOOP("the rule ignores thinner windows"), field<&BreakerConfig::minCalls>),
    sliderRow(kDetect, "slow.k", QT_TR_NOOP("slow = k × P99"), 0.5, 20, 0.1, 1, "",
              QT_TR_NOOP("slow-call threshold factor"),
              field<&BreakerConfig::slow, &SlowConfig::k>),
    sliderRow(kDetect, "slow.floor", QT_TR_NOOP("slow floor"), 0, 60, 0.05, 2, " s",
              QT_TR_NOOP("never below this"), field<&BreakerConfig::slow, &SlowConfig::floor>),
    sliderRow(kDetect, "slow.absolute", QT_TR_NOOP("fixed slow"), 0, 120, 0.1, 1, " s",
              QT_TR_NOOP("> 0: a fixed slow-call threshold instead of k × P99"),
              field<&BreakerConfig::slow, &SlowConfig::absolute>),
    sliderRow(kDetect, "baseline.horizon", QT_TR_NOOP("baseline horizon"), 10, 3600, 10, 0, " s",
              QT_TR_NOOP("time constant of the P99 baseline's forgetting"),
              field<&BreakerConfig::baseline, &BaselineConfig::horizon>),
    sliderRow(kDetect, "baseline.min_calls", QT_TR_NOOP("baseline min calls"), 1, 100000, 10, 0, "",
              QT_TR_NOOP("calls learned before the baseline is trusted"),
              field<&BreakerConfig::baseline, &BaselineConfig::minCalls>),
    sliderRow(kTrip, "trip.error_rate", QT_TR_NOOP("error rate >"), 0.01, 1, 0.01, 2, "",
              QT_TR_NOOP("share of failures"), field<&BreakerConfig::trip, &TripConfig::errorRate>),
    sliderRow(kTrip, "trip.slow_rate", QT_TR_NOOP("slow rate >"), 0.01, 1, 0.01, 2, "",
              QT_TR_NOOP("share of slow calls"),
              field<&BreakerConfig::trip, &TripConfig::slowRate>),
    sliderRow(kTrip, "trip.sustain", QT_TR_NOOP("sustained"), 0, 120, 0.5, 1, " s",
              QT_TR_NOOP("how long it must hold"),
              field<&BreakerConfig::trip, &TripConfig::sustain>),
    sliderRow(kTrip, "trip.weight", QT_TR_NOOP("topology weight"), 0.1, 5, 0.05, 2, "",
              QT_TR_NOOP("multiplies both rate thresholds (seed 001: core 1.2, edge 0.8)"),
              field<&BreakerConfig::trip, &TripConfig::weight>),
    sliderRow(kOpen, "open.duration", QT_TR_NOOP("open for"), 0.1, 600, 1, 1, " s",
              QT_TR_NOOP("first open duration"),
              field<&BreakerConfig::open, &OpenConfig::duration>),
    sliderRow(kOpen, "open.backoff_multiplier", QT_TR_NOOP("backoff ×"), 1, 10, 0.1, 1, "",
              QT_TR_NOOP("per consecutive open"),
              field<&BreakerConfig::open, &OpenConfig::backoffMultiplier>),
    sliderRow(kOpen, "open.max_duration", QT_TR_NOOP("max open"), 0.1, 3600, 5, 0, " s",
              QT_TR_NOOP("backoff cap"), field<&BreakerConfig::open, &OpenConfig::maxDuration>),
    sliderRow(kOpen, "open.jitter", QT_TR_NOOP("jitter"), 0, 1, 0.05, 2, "",
              QT_TR_NOOP("± share of the open time, so breakers do not re-probe in lockstep"),
              field<&BreakerConfig::open, &OpenConfig::jitter>),
    sliderRow(kOpen, "open.decay_after", QT_TR_NOOP("backoff decays after"), 1, 3600, 10, 0, " s",
              QT_TR_NOOP("healthy this long forgets one open of the backoff"),
              field<&BreakerConfig::open, &OpenConfig::decayAfter>),
    sliderRow(kRecover, "half_open.probe_share", QT_TR_NOOP("probe share"), 0.01, 1, 0.01, 2, "",
              QT_TR_NOOP("share of traffic let through in HALF_OPEN"),
              field<&BreakerConfig::halfOpen, &HalfOpenConfig::probeShare>),
    sliderRow(kRecover, "half_open.success_streak", QT_TR_NOOP("success streak"), 1, 1000, 1, 0, "",
              QT_TR_NOOP("good probes in a row to close"),
              field<&BreakerConfig::halfOpen, &HalfOpenConfig::successStreak>),
    sliderRow(kRecover, "ramp.duration", QT_TR_NOOP("ramp"), 0, 600, 5, 0, " s",
              QT_TR_NOOP("back to full traffic over"),
              field<&BreakerConfig::ramp, &RampConfig::duration>),
};

// Degrade and shedding: one setting for the whole policy, whatever the scope.
constexpr RowSpec<Policy> kPolicyRows[] = {
    sliderRow(kDegrade, "degrade.max_quality_drop", QT_TR_NOOP("max quality drop"), 0, 1, 0.05, 2,
              "", QT_TR_NOOP("a backup may be at most this much worse"),
              field<&Policy::degrade, &DegradeConfig::maxQualityDrop>),
    sliderRow(kDegrade, "degrade.retry_budget", QT_TR_NOOP("re-route budget"), 0, 1, 0.05, 2, "",
              QT_TR_NOOP("share of live traffic the gateway may re-route"),
              field<&Policy::degrade, &DegradeConfig::retryBudget>),
    sliderRow(kDegrade, "degrade.lock_ttl", QT_TR_NOOP("lock TTL"), 1, 3600, 10, 0, " s",
              QT_TR_NOOP("a degraded session stays degraded this long"),
              field<&Policy::degrade, &DegradeConfig::lockTtl>),
    checkRow(kDegrade, "degrade.non_critical_backups",
             QT_TR_NOOP("backups for non-critical traffic"),
             QT_TR_NOOP("off: backups are kept for core traffic"),
             field<&Policy::degrade, &DegradeConfig::nonCriticalBackups>),
    checkRow(kDegrade, "degrade.fast_fail_non_critical",
             QT_TR_NOOP("fast-fail non-critical without a backup"), nullptr,
             field<&Policy::degrade, &DegradeConfig::fastFailNonCritical>),
    checkRow(kDegrade, "degrade.cache", QT_TR_NOOP("serve cached answers"), nullptr,
             field<&Policy::degrade, &DegradeConfig::cache>),
    checkRow(kDegrade, "degrade.lock", QT_TR_NOOP("degrade lock"),
             QT_TR_NOOP("a degraded session stays on its backup"),
             field<&Policy::degrade, &DegradeConfig::lock>),
    checkRow(kDegrade, "degrade.truncate_tail",
             QT_TR_NOOP("cut the long tail at the slow threshold"),
             QT_TR_NOOP("an attempt still running at k × P99 is cut and degraded (seed 001)"),
             field<&Policy::degrade, &DegradeConfig::truncateTail>),
    checkRow(
        kDegrade, "degrade.cheaper_non_core", QT_TR_NOOP("cheaper model for non-core traffic"),
        QT_TR_NOOP("cost routing (seed 002): non-core requests go to the cheapest matched model"),
        field<&Policy::degrade, &DegradeConfig::cheaperForNonCore>),
    checkRow(kDegrade, "degrade.cheaper_simple", QT_TR_NOOP("cheaper model for simple requests"),
             QT_TR_NOOP("cost routing (seed 002): requests of few tokens go to the cheapest model"),
             field<&Policy::degrade, &DegradeConfig::cheaperForSimple>),
    sliderRow(kShedding, "limits.shed_at", QT_TR_NOOP("shed non-critical at"), 0, 1, 0.05, 2, "",
              QT_TR_NOOP("share of gateway capacity in use; 0 = off"),
              field<&Policy::limits, &LimitsConfig::shedAt>),
};

// Shows `from`'s fields in the rows' controls; the caller holds off policyEdited.
template <class T, std::size_t N>
void showRows(const PolicyEditor& e, const RowSpec<T> (&rows)[N], const T& from) {
  for (const RowSpec<T>& r : rows) {
    const double v = r.field.get(from);
    if (r.check)
      e.check(r.key)->setChecked(v != 0);
    else
      e.control(r.key)->setValue(v);
  }
}

template <class T, std::size_t N>
void readRows(const PolicyEditor& e, const RowSpec<T> (&rows)[N], T& into) {
  for (const RowSpec<T>& r : rows)
    r.field.set(into, r.check ? e.check(r.key)->isChecked() : e.control(r.key)->value());
}

}  // namespace

PolicyEditor::PolicyEditor(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  buildScopeRow(layout);
  addRows(layout, kBreakerRows);
  addRows(layout, kPolicyRows);
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

// The rows of a table (kBreakerRows, kPolicyRows) in its order, a group box per group.
template <class Rows>
void PolicyEditor::addRows(QVBoxLayout* layout, const Rows& rows) {
  QFormLayout* form = nullptr;
  const char* group = nullptr;
  for (const auto& r : rows) {
    if (qstrcmp(r.group, group) != 0) {
      group = r.group;
      form = addGroup(layout, tr(group));
    }
    const QString tip = r.tip ? tr(r.tip) : QString();
    if (r.check)
      addCheckRow(form, r.key, tr(r.label), tip);
    else
      addSliderRow(form, r.key, tr(r.label), r.range.lo, r.range.hi, r.range.step, r.range.decimals,
                   r.range.suffix, tip);
  }
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
  showRows(*this, kBreakerRows, b);
  updating_ = false;
}

void PolicyEditor::showSections() {
  updating_ = true;
  showRows(*this, kPolicyRows, policy_);
  // Degrade settings mean nothing for a policy without a degrade section.
  const bool degrade = policy_.degrade.enabled;
  for (const auto& [k, c] : checks_) c->setEnabled(degrade);
  for (const Row& r : rows_)
    if (r.key.startsWith("degrade.")) {
      r.box->setEnabled(degrade);
      r.slider->setEnabled(degrade);
    }
  updating_ = false;
}

void PolicyEditor::readControls() {
  const std::string model = scope().toStdString();
  BreakerConfig b = model.empty() ? policy_.breaker : resolveBreaker(policy_, model, {});
  readRows(*this, kBreakerRows, b);
  // The engine refuses a bucket longer than the window and a backoff cap below the first
  // open (breakerFlaw): the edited value wins, so no edit yields a policy that cannot run.
  b.window.bucket = std::min(b.window.bucket, b.window.length);
  b.open.maxDuration = std::max(b.open.duration, b.open.maxDuration);
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
  readRows(*this, kPolicyRows, policy_);
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
