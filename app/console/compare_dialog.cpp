#include "compare_dialog.hpp"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

#include "kpi_text.hpp"
#include "spillway/library/library.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/sim/seeds.hpp"
#include "spillway/view/replay_timeline.hpp"

namespace spillway::console {

CompareDialog::CompareDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Compare policies"));
  resize(820, 420);
  auto* layout = new QVBoxLayout(this);
  what_ = new QLabel(this);
  layout->addWidget(what_);
  table_ = new QTableWidget(this);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  layout->addWidget(table_, 1);
  auto* row = new QHBoxLayout;
  auto* add = new QPushButton(tr("Add policy file…"), this);
  auto* run = new QPushButton(tr("Run"), this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 100);
  row->addWidget(add);
  row->addWidget(progress_, 1);
  row->addWidget(run);
  layout->addLayout(row);
  connect(add, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Add a policy"), {}, tr("Policies (*.yaml *.yml)"));
    QString error;
    if (path.isEmpty()) return;
    if (!addPolicyFile(path, &error))
      QMessageBox::warning(this, tr("Policy"), error);
    else
      start();
  });
  connect(run, &QPushButton::clicked, this, &CompareDialog::start);
  connect(&job_, &BackgroundJob::progress, progress_, &QProgressBar::setValue);
  connect(this, &QDialog::rejected, &job_, &BackgroundJob::cancel);
}

void CompareDialog::setScenario(const sim::Scenario& scenario) {
  scenario_ = scenario;
  incident_.clear();
  what_->setText(tr("Scenario %1, seed %2: each policy simulated with protection on")
                     .arg(QString::fromStdString(scenario.name))
                     .arg(scenario.seed));
}

void CompareDialog::setIncident(const QString& library, const QString& incident) {
  scenario_.reset();
  library_ = library;
  incident_ = incident;
  what_->setText(tr("Incident %1: each policy replays the recording").arg(incident));
}

void CompareDialog::setPolicies(std::vector<Entry> policies) {
  entries_ = std::move(policies);
  results_.clear();
  fill();
}

bool CompareDialog::addPolicyFile(const QString& path, QString* error) {
  try {
    entries_.push_back({QFileInfo(path).fileName(), loadPolicyFile(path.toStdString())});
    results_.clear();
    fill();
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
}

// One policy's KPI rows: protected and unprotected (the would-opens) for a scenario, under the
// policy and watching only for an incident. Empty when cancelled.
std::vector<view::KpiRow> CompareDialog::runOne(const Policy& p,
                                                const BackgroundJob::Context& job) const {
  if (scenario_) {
    sim::Scenario sc = *scenario_;
    sc.policy = p;
    const sim::SeedRuns r = sim::runSeeds(sc, 1, 1);
    return view::kpiRows(r.protectedRuns[0], &r.baseline[0], nullptr);
  }
  library::Library lib(library_.toStdString(), library::OpenOptions{.mustExist = true});
  const std::string name = incident_.toStdString();
  const library::IncidentInfo info = lib.requireIncident(name);
  const auto faults = lib.faults(name);
  auto under = view::replayTimeline(*lib.open(name), p, faults, info.tStart, &job.cancelFlag());
  auto watching = view::replayTimeline(*lib.open(name), view::watchOnly(p), faults, info.tStart,
                                       &job.cancelFlag());
  if (!under || !watching) return {};
  return view::replayKpiRows(under->kpis, &watching->kpis, nullptr);
}

void CompareDialog::start() {
  results_.clear();
  progress_->setValue(0);
  const auto entries = entries_;
  job_.start([this, entries](const BackgroundJob::Context& job) {
    try {
      std::vector<std::vector<view::KpiRow>> rows;
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (job.cancelled()) return;
        rows.push_back(runOne(entries[i].policy, job));
        job.progress(static_cast<double>(i + 1) / static_cast<double>(entries.size()));
      }
      job.deliver([this, rows] {
        for (const auto& r : rows) results_.push_back(view::headline(r, targets_));
        fill();
        emit finished();
      });
    } catch (const std::exception& e) {
      job.deliver([this, msg = QString::fromUtf8(e.what())] { what_->setText(msg); });
    }
  });
}

// Rows: the headline KPIs; columns: the policies. The best value of a row (by its direction)
// is bold; a cell that misses its target is red.
void CompareDialog::fill() {
  table_->clear();
  table_->setColumnCount(static_cast<int>(entries_.size()));
  QStringList names;
  for (const Entry& e : entries_) names << e.name;
  table_->setHorizontalHeaderLabels(names);
  if (results_.empty()) {
    table_->setRowCount(0);
    return;
  }
  const auto& first = results_.front();
  table_->setRowCount(static_cast<int>(first.size()));
  for (std::size_t r = 0; r < first.size(); ++r) {
    const view::HeadlineTile& t = first[r];
    QString label = QString::fromStdString(t.label);
    if (t.target)
      label += QString("  (%1 %2)").arg(t.higherIsBetter ? "≥" : "≤", kpiValue(t.target, t.unit));
    table_->setVerticalHeaderItem(static_cast<int>(r), new QTableWidgetItem(label));
    std::optional<double> best;
    for (const auto& col : results_)
      if (r < col.size() && col[r].value &&
          (!best || (t.higherIsBetter ? *col[r].value > *best : *col[r].value < *best)))
        best = col[r].value;
    for (std::size_t c = 0; c < results_.size(); ++c) {
      if (r >= results_[c].size()) continue;
      const view::HeadlineTile& cell = results_[c][r];
      auto* item = new QTableWidgetItem(kpiValue(cell.value, cell.unit));
      QFont f = item->font();
      f.setBold(cell.value && best && *cell.value == *best && results_.size() > 1);
      item->setFont(f);
      if (cell.verdict == view::HeadlineTile::Verdict::Fail)
        item->setForeground(QColor(190, 40, 40));
      table_->setItem(static_cast<int>(r), static_cast<int>(c), item);
    }
  }
}

}  // namespace spillway::console
