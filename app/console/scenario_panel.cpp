#include "scenario_panel.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "spillway/input_error.hpp"

namespace spillway::console {
namespace {

enum Column { kKind, kTarget, kStart, kLength, kValue, kDelay, kColumns };

constexpr sim::FaultKind kKinds[] = {
    sim::FaultKind::LatencyDrift, sim::FaultKind::Delay,  sim::FaultKind::Errors,
    sim::FaultKind::Throttle,     sim::FaultKind::Hang,   sim::FaultKind::Reset,
    sim::FaultKind::CapacityLoss, sim::FaultKind::Outage, sim::FaultKind::Recover};

QDoubleSpinBox* number(double lo, double hi, int decimals, const QString& suffix, double v) {
  auto* b = new QDoubleSpinBox;
  b->setRange(lo, hi);
  b->setDecimals(decimals);
  b->setSuffix(suffix);
  b->setValue(v);
  b->setFrame(false);
  return b;
}

}  // namespace

ScenarioPanel::ScenarioPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  seed_ = new QSpinBox(this);
  seed_->setRange(0, 2147483647);
  seed_->setToolTip(tr("Same seed, same run: every number is reproducible"));
  duration_ = new QDoubleSpinBox(this);
  duration_->setRange(1, 24 * 60);
  duration_->setDecimals(1);
  duration_->setSuffix(tr(" min"));
  load_ = new QDoubleSpinBox(this);
  load_->setRange(0.05, 10);
  load_->setSingleStep(0.1);
  load_->setDecimals(2);
  load_->setSuffix("×");
  load_->setToolTip(tr("Multiplies every client's base request rate"));
  form->addRow(tr("seed"), seed_);
  form->addRow(tr("duration"), duration_);
  form->addRow(tr("load"), load_);
  layout->addLayout(form);
  layout->addWidget(new QLabel(tr("Fault timeline"), this));
  faults_ = new QTableWidget(0, kColumns, this);
  faults_->setHorizontalHeaderLabels(
      {tr("kind"), tr("target"), tr("start (s)"), tr("length (s)"), tr("value"), tr("delay (ms)")});
  faults_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  faults_->verticalHeader()->hide();
  faults_->setToolTip(
      tr("length 0 = until a recover or the end; value = drift multiplier, "
         "probability or remaining capacity share"));
  layout->addWidget(faults_, 1);
  auto* buttons = new QHBoxLayout;
  auto* add = new QPushButton(tr("Add fault"), this);
  auto* remove = new QPushButton(tr("Remove"), this);
  auto* run = new QPushButton(tr("Run edited scenario"), this);
  run->setDefault(true);
  buttons->addWidget(add);
  buttons->addWidget(remove);
  buttons->addStretch(1);
  buttons->addWidget(run);
  layout->addLayout(buttons);
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  layout->addWidget(summary_);
  connect(add, &QPushButton::clicked, this, [this] {
    sim::FaultSpec f;
    f.kind = sim::FaultKind::Errors;
    f.value = 0.5;
    f.at = duration_->value() * 60e6 / 4;
    f.duration = seconds(120);
    const QStringList t = targets();
    f.target = t.isEmpty() ? std::string() : t.front().toStdString();
    addFault(f);
  });
  connect(remove, &QPushButton::clicked, this, [this] { removeFault(faults_->currentRow()); });
  connect(run, &QPushButton::clicked, this, &ScenarioPanel::runRequested);
}

QStringList ScenarioPanel::targets() const {
  QStringList out;
  for (const sim::ModelSpec& m : base_.models) {
    out << QString::fromStdString(m.name);
    for (const sim::InstanceSpec& i : m.instances) out << QString::fromStdString(i.name);
  }
  return out;
}

void ScenarioPanel::setScenario(const sim::Scenario& s) {
  base_ = s;
  seed_->setValue(static_cast<int>(s.seed & 0x7fffffff));
  duration_->setValue(static_cast<double>(s.duration) / 60e6);
  load_->setValue(1.0);
  faults_->setRowCount(0);
  for (const sim::FaultSpec& f : s.faults) addFault(f);
  summary_->setText(tr("%1 — %2 models, %3 clients")
                        .arg(QString::fromStdString(s.name))
                        .arg(s.models.size())
                        .arg(s.clients.size()));
}

void ScenarioPanel::addFault(const sim::FaultSpec& f) {
  const int row = faults_->rowCount();
  faults_->insertRow(row);
  auto* kind = new QComboBox;
  for (sim::FaultKind k : kKinds) {
    const auto n = sim::faultKindName(k);
    kind->addItem(QString::fromUtf8(n.data(), static_cast<int>(n.size())), static_cast<int>(k));
  }
  kind->setCurrentIndex(kind->findData(static_cast<int>(f.kind)));
  faults_->setCellWidget(row, kKind, kind);
  auto* target = new QComboBox;
  target->addItems(targets());
  target->setCurrentText(QString::fromStdString(f.target));
  faults_->setCellWidget(row, kTarget, target);
  faults_->setCellWidget(row, kStart, number(0, 86400, 1, "", static_cast<double>(f.at) / 1e6));
  const double len = f.duration == kForever ? 0 : static_cast<double>(f.duration) / 1e6;
  faults_->setCellWidget(row, kLength, number(0, 86400, 1, "", len));
  faults_->setCellWidget(row, kValue, number(0, 1000, 3, "", f.value));
  faults_->setCellWidget(row, kDelay, number(0, 600000, 0, "", static_cast<double>(f.delay) / 1e3));
  // Keep what the table does not show (ramp, status) with the row.
  faults_->setVerticalHeaderItem(row, new QTableWidgetItem(QString::number(row)));
  faults_->verticalHeaderItem(row)->setData(Qt::UserRole, QVariant::fromValue<qlonglong>(f.ramp));
  faults_->verticalHeaderItem(row)->setData(Qt::UserRole + 1, f.status);
}

void ScenarioPanel::removeFault(int row) {
  if (row >= 0 && row < faults_->rowCount()) faults_->removeRow(row);
}

sim::Scenario ScenarioPanel::edited() const {
  sim::Scenario s = base_;
  s.seed = static_cast<std::uint64_t>(seed_->value());
  s.duration = static_cast<Micros>(duration_->value() * 60e6 + 0.5);
  for (sim::ClientSpec& c : s.clients) c.rate *= load_->value();
  s.faults.clear();
  for (int row = 0; row < faults_->rowCount(); ++row) {
    auto num = [&](int col) {
      return static_cast<QDoubleSpinBox*>(faults_->cellWidget(row, col))->value();
    };
    sim::FaultSpec f;
    f.kind = static_cast<sim::FaultKind>(
        static_cast<QComboBox*>(faults_->cellWidget(row, kKind))->currentData().toInt());
    f.target =
        static_cast<QComboBox*>(faults_->cellWidget(row, kTarget))->currentText().toStdString();
    if (f.target.empty()) throw InputError("scenario panel", row + 1, "target", "no target");
    f.at = static_cast<Micros>(num(kStart) * 1e6 + 0.5);
    if (f.at >= s.duration)
      throw InputError("scenario panel", row + 1, "start", "starts after the scenario ends");
    const double len = num(kLength);
    f.duration = len > 0 ? static_cast<Micros>(len * 1e6 + 0.5) : kForever;
    f.value = num(kValue);
    f.delay = static_cast<Micros>(num(kDelay) * 1e3 + 0.5);
    if (QTableWidgetItem* h = faults_->verticalHeaderItem(row)) {
      f.ramp = h->data(Qt::UserRole).toLongLong();
      f.status = h->data(Qt::UserRole + 1).toInt();
    }
    if ((f.kind == sim::FaultKind::Errors || f.kind == sim::FaultKind::Throttle ||
         f.kind == sim::FaultKind::Hang || f.kind == sim::FaultKind::Reset) &&
        f.value > 1)
      throw InputError("scenario panel", row + 1, "value", "a probability must be ≤ 1");
    f.line = row + 1;
    s.faults.push_back(f);
  }
  // The simulator applies faults in time order.
  std::stable_sort(s.faults.begin(), s.faults.end(),
                   [](const sim::FaultSpec& a, const sim::FaultSpec& b) { return a.at < b.at; });
  return s;
}

}  // namespace spillway::console
