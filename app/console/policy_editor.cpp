#include "policy_editor.hpp"

#include <QAbstractScrollArea>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollBar>
#include <QSlider>
#include <QUndoStack>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <type_traits>
#include <utility>

#include "spillway/policy_yaml.hpp"

namespace spillway::console {
namespace {

constexpr int kSteps = 1000;  // slider resolution

// One committed edit: the policy before and after it.
class PolicyStep : public QUndoCommand {
 public:
  PolicyStep(std::function<void(const Policy&)> apply, Policy before, Policy after,
             const QString& text)
      : QUndoCommand(text),
        apply_(std::move(apply)),
        before_(std::move(before)),
        after_(std::move(after)) {}
  void undo() override { apply_(before_); }
  void redo() override {
    if (first_) {
      first_ = false;  // pushed after the edit was made
      return;
    }
    apply_(after_);
  }

 private:
  std::function<void(const Policy&)> apply_;
  Policy before_, after_;
  bool first_ = true;
};

// The wheel changes a control only once the user has put focus on it (a click, Tab);
// over an unfocused one it scrolls the dock, as a scroll over a web form does.
class WheelGuard : public QObject {
 public:
  using QObject::QObject;
  bool eventFilter(QObject* watched, QEvent* e) override {
    auto* w = qobject_cast<QWidget*>(watched);
    if (e->type() != QEvent::Wheel || !w || w->hasFocus()) return false;
    for (QWidget* p = w->parentWidget(); p; p = p->parentWidget())
      if (auto* area = qobject_cast<QAbstractScrollArea*>(p)) {
        QCoreApplication::sendEvent(area->verticalScrollBar(), e);
        break;
      }
    return true;
  }
};

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

// A breaker row's value in `b`, by its YAML key; none for a policy-wide row.
std::optional<double> breakerField(const QString& key, const BreakerConfig& b) {
  for (const RowSpec<BreakerConfig>& spec : kBreakerRows)
    if (key == spec.key) return spec.field.get(b);
  return std::nullopt;
}

}  // namespace

bool samePolicy(const Policy& a, const Policy& b) {
  return policyToYaml(a) == policyToYaml(b);
}

PolicyEditor::PolicyEditor(QWidget* parent) : QWidget(parent), undo_(new QUndoStack(this)) {
  connect(undo_, &QUndoStack::indexChanged, this, &PolicyEditor::stateChanged);
  auto* layout = new QVBoxLayout(this);
  buildScopeRow(layout);
  addRows(layout, kBreakerRows);
  addRows(layout, kPolicyRows);
  buildFileButtons(layout);
  connectScope();
}

// The undo stack, a child, clears itself as it goes: nothing may hear of that.
PolicyEditor::~PolicyEditor() {
  disconnect(undo_, nullptr, this, nullptr);
  undo_->blockSignals(true);
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
  auto* revertButton = new QPushButton(tr("Revert"), this);
  revertButton->setObjectName("revert");
  revertButton->setToolTip(tr("Back to the policy as loaded (one undo step)"));
  buttons->addWidget(loadButton);
  buttons->addWidget(saveButton);
  buttons->addWidget(revertButton);
  connect(revertButton, &QPushButton::clicked, this, &PolicyEditor::revert);
  connect(this, &PolicyEditor::stateChanged, revertButton,
          [this, revertButton] { revertButton->setEnabled(isModified()); });
  revertButton->setEnabled(false);
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
    edited(true, tr("reset %1's override").arg(scope()));
  });
  resetOverride_->setEnabled(false);
}

QFormLayout* PolicyEditor::addGroup(QVBoxLayout* layout, const QString& title, const char* key) {
  auto* box = new QGroupBox(title, this);
  box->setProperty("group", key);
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
      form = addGroup(layout, tr(group), group);
    }
    // The tip names the YAML key, so what is tuned here can be found in the file.
    const QString tip = (r.tip ? tr(r.tip) + "\n" : QString()) + tr("YAML: %1").arg(r.key);
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
  slider(key)->setToolTip(tip);
  auto* line = new QHBoxLayout;
  line->addWidget(slider(key), 1);
  line->addWidget(box);
  auto* name = new QLabel(label, this);
  name->setToolTip(tip);
  rows_.last().label = name;
  form->addRow(name, line);
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
  box->setObjectName(key);
  box->setFocusPolicy(Qt::StrongFocus);  // the wheel does not take focus (WheelGuard)
  auto* s = new QSlider(Qt::Horizontal, this);
  s->setRange(0, kSteps);
  s->setObjectName(key + ".slider");
  s->setFocusPolicy(Qt::StrongFocus);
  auto* guard = new WheelGuard(this);
  box->installEventFilter(guard);
  s->installEventFilter(guard);
  // Wide ranges (1 s … 1 h) get a log scale, so the useful short end is not one pixel wide;
  // fine-stepped ranges from 0 (sustain 0…120 s by 0.5) a square one, for the same reason.
  const auto scale = lo > 0 && hi / lo > 100       ? Row::Scale::Log
                     : lo == 0 && hi / step >= 200 ? Row::Scale::Square
                                                   : Row::Scale::Linear;
  const Row r{key, box, s, scale, nullptr};
  rows_.append(r);
  // Typing is a preview (after the window's debounce), finishing it is the commit; a step by
  // arrow keys or buttons commits at once.
  connect(box, &QDoubleSpinBox::valueChanged, this, [this, r] {
    syncSlider(r);
    if (updating_) return;
    readControls();
    const auto* text = r.box->findChild<QLineEdit*>();
    edited(!r.slider->isSliderDown() && !(text && text->isModified()), r.key);
  });
  connect(box, &QDoubleSpinBox::editingFinished, this, [this, r] { commit(r.key); });
  connect(s, &QSlider::valueChanged, this, [r](int v) {
    const double f = static_cast<double>(v) / kSteps;
    const double lo = r.box->minimum(), hi = r.box->maximum();
    double x = r.scale == Row::Scale::Log      ? lo * std::pow(hi / lo, f)
               : r.scale == Row::Scale::Square ? lo + f * f * (hi - lo)
                                               : lo + f * (hi - lo);
    const double step = r.box->singleStep();
    if (r.scale != Row::Scale::Log) x = std::round(x / step) * step;  // snap to the step
    r.box->setValue(x);
  });
  connect(s, &QSlider::sliderReleased, this, [this, r] { commit(r.key); });
  return box;
}

QCheckBox* PolicyEditor::addCheck(const QString& key, const QString& label, const QString& tip) {
  auto* c = new QCheckBox(label, this);
  c->setObjectName(key);
  c->setToolTip(tip);
  checks_.append({key, c});
  connect(c, &QCheckBox::toggled, this, [this, key] {
    if (updating_) return;
    readControls();
    edited(true, key);
  });
  return c;
}

void PolicyEditor::syncSlider(const Row& r) {
  const double lo = r.box->minimum(), hi = r.box->maximum(), v = r.box->value();
  double f = (v - lo) / (hi - lo);
  if (r.scale == Row::Scale::Log) f = std::log(v / lo) / std::log(hi / lo);
  if (r.scale == Row::Scale::Square) f = std::sqrt(std::max(0.0, f));
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
  committed_ = p;
  const QString m = scope();
  showBreaker(m.isEmpty() ? p.breaker : resolveBreaker(p, m.toStdString(), {}));
  showSections();
  emit stateChanged();
}

void PolicyEditor::loadPolicy(const Policy& p, const QString& source) {
  loaded_ = p;
  source_ = source;
  undo_->clear();
  setPolicy(p);
}

void PolicyEditor::applyPolicy(const Policy& p, const QString& what) {
  const Policy before = committed_;
  setPolicy(p);
  committed_ = before;  // so the commit records the change from the last committed policy
  edited(true, what);
}

void PolicyEditor::revert() {
  if (!isModified()) return;
  applyPolicy(loaded_, tr("revert to %1").arg(source_));
}

bool PolicyEditor::isModified() const {
  return !samePolicy(policy_, loaded_);
}

QString PolicyEditor::displayName() const {
  const QString name = QString::fromStdString(policy_.name.empty() ? "policy" : policy_.name);
  return isModified() ? name + "*" : name;
}

QStringList PolicyEditor::changes() const {
  QStringList out;
  for (const std::string& line : policyChanges(loaded_, policy_))
    out << QString::fromStdString(line);
  return out;
}

// Every change previews (policyEdited); a final one is also committed.
void PolicyEditor::edited(bool final, const QString& what) {
  emit policyEdited(policy_);
  if (final) commit(what);
}

// One undo step from the last committed policy to this one; nothing when they are the same
// (a drag let go where it started, Enter on an unchanged value).
void PolicyEditor::commit(const QString& what) {
  if (samePolicy(policy_, committed_)) return;
  auto apply = [this](const Policy& p) {
    setPolicy(p);
    emit policyEdited(policy_);
    emit committed();
  };
  const Policy before = committed_;
  committed_ = policy_;
  undo_->push(new PolicyStep(apply, before, policy_, tr("edit %1").arg(what)));
  markOverrides();
  emit committed();
  emit stateChanged();
}

void PolicyEditor::showBreaker(const BreakerConfig& b) {
  updating_ = true;
  showRows(*this, kBreakerRows, b);
  updating_ = false;
  markOverrides();
}

// In a model's scope, the keys its override sets read "● key" in bold: they no longer follow
// the default breaker.
void PolicyEditor::markOverrides() {
  const std::string model = scope().toStdString();
  std::optional<BreakerConfig> own;
  if (!model.empty() && policy_.modelOverrides.count(model))
    own = resolveBreaker(policy_, model, {});
  for (const Row& r : rows_) {
    const auto fallback = breakerField(r.key, policy_.breaker);
    if (!r.label || !fallback) continue;
    const bool overridden = own && breakerField(r.key, *own) != fallback;
    QFont f = r.label->font();
    f.setBold(overridden);
    r.label->setFont(f);
    QString text = r.label->text();
    if (text.startsWith("● ")) text = text.mid(2);
    r.label->setText(overridden ? "● " + text : text);
    r.label->setToolTip(overridden ? tr("Overridden for %1 (the default is %2)")
                                         .arg(QString::fromStdString(model))
                                         .arg(*fallback)
                                   : r.box->toolTip());
  }
}

void PolicyEditor::showSections() {
  updating_ = true;
  showRows(*this, kPolicyRows, policy_);
  // Degrade settings mean nothing for a policy without a degrade section: they say so rather
  // than show values nothing uses.
  const bool degrade = policy_.degrade.enabled;
  // A short title (it sets the dock's minimum width); the why in its tooltip.
  for (auto* box : findChildren<QGroupBox*>())
    if (box->property("group").toString() == kDegrade) {
      box->setTitle(degrade ? tr(kDegrade) : tr("Degrade — not set (inherits)"));
      box->setToolTip(degrade ? QString()
                              : tr("This policy has no degrade section: the gateway's defaults "
                                   "apply. The values below are unused."));
    }
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
    const Policy p = loadPolicyFile(path.toStdString());
    if (isModified() && QMessageBox::question(this, tr("Load policy"),
                                              tr("Discard the edits to %1?").arg(displayName())) !=
                            QMessageBox::Yes)
      return;
    loadPolicy(p, tr("file %1").arg(QFileInfo(path).fileName()));
    emit policyEdited(policy_);
    emit committed();
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Policy"), QString::fromUtf8(e.what()));
  }
}

// Save names the policy (a saved edit is a new policy, not the one it started from) and heads
// the file with where it came from and what changed, for the reviewer.
void PolicyEditor::save() {
  bool ok = false;
  const QString name = QInputDialog::getText(
      this, tr("Save policy"), tr("Name of the saved policy:"), QLineEdit::Normal,
      QString::fromStdString(policy_.name) + (isModified() ? "-tuned" : ""), &ok);
  if (!ok || name.trimmed().isEmpty()) return;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Save policy"), name.trimmed() + ".yaml", tr("Policies (*.yaml *.yml)"));
  if (path.isEmpty()) return;
  QString error;
  if (!saveTo(path, name.trimmed(), &error)) {
    QMessageBox::warning(this, tr("Policy"), error);
    return;
  }
  QMessageBox::information(this, tr("Policy"), tr("Saved %1 as %2").arg(name.trimmed(), path));
}

bool PolicyEditor::saveTo(const QString& path, const QString& name, QString* error) {
  Policy p = policy_;
  const Policy base = loaded_;
  p.name = name.toStdString();
  PolicyHeader header;
  header.source = source_.toStdString();
  header.base = &base;
  header.kpis = headerKpis_;
  header.notes = {"Written by Spillway " + QCoreApplication::applicationVersion().toStdString()};
  std::ofstream out(path.toStdString(), std::ios::binary);
  out << policyToYamlWithHeader(p, header);
  if (!out) {
    if (error) *error = tr("Could not write %1").arg(path);
    return false;
  }
  policy_.name = p.name;
  emit stateChanged();
  return true;
}

}  // namespace spillway::console
