#include "modes_dialog.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent>

namespace spillway::console {

ModesDialog::ModesDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Compare defence modes"));
  resize(1000, 520);
  auto* layout = new QVBoxLayout(this);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  layout->addWidget(status_);
  table_ = new QTableWidget(this);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setStretchLastSection(true);
  layout->addWidget(table_, 1);
  connect(&watcher_, &QFutureWatcher<sim::ModeRuns>::finished, this, [this] {
    showRuns(watcher_.result());
    emit finished();
  });
}

ModesDialog::~ModesDialog() {
  watcher_.waitForFinished();  // the job reads scenario_
}

QString ModesDialog::status() const {
  return status_->text();
}

void ModesDialog::run(const sim::Scenario& scenario, int seeds) {
  watcher_.waitForFinished();
  scenario_ = scenario;
  const auto n = static_cast<std::uint32_t>(std::max(1, seeds));
  status_->setText(tr("Running %1 with %2 seed(s) in four modes…")
                       .arg(QString::fromStdString(scenario.name))
                       .arg(n));
  table_->clear();
  table_->setRowCount(0);
  watcher_.setFuture(QtConcurrent::run([this, n] {
    return sim::runModes(scenario_, sim::parseModes("off,limits,breaker+degrade,all"), n);
  }));
}

void ModesDialog::showRuns(const sim::ModeRuns& runs) {
  const std::vector<sim::ModesRow> rows = sim::modesRows(runs, scenario_);
  const int modes = static_cast<int>(runs.modes.size());
  table_->setColumnCount(modes + 1);
  QStringList headers{tr("KPI")};
  for (const sim::Mode& m : runs.modes) headers << QString::fromStdString(m.name);
  table_->setHorizontalHeaderLabels(headers);
  int r = 0;
  for (const sim::ModesRow& row : rows) {
    const bool seeded = std::any_of(row.seedFigures.begin(), row.seedFigures.end(),
                                    [](const std::string& f) { return !f.empty(); });
    table_->setRowCount(r + (seeded ? 2 : 1));
    table_->setItem(r, 0, new QTableWidgetItem(QString::fromStdString(row.kpi)));
    for (int m = 0; m < modes; ++m)
      table_->setItem(r, m + 1, new QTableWidgetItem(QString::fromStdString(row.cells[m])));
    ++r;
    if (!seeded) continue;
    auto* label = new QTableWidgetItem(tr("    seed figure"));
    QFont italic = label->font();
    italic.setItalic(true);
    label->setFont(italic);
    table_->setItem(r, 0, label);
    for (int m = 0; m < modes; ++m) {
      auto* item = new QTableWidgetItem(QString::fromStdString(row.seedFigures[m]));
      item->setFont(italic);
      table_->setItem(r, m + 1, item);
    }
    ++r;
  }
  table_->resizeColumnsToContents();
  const std::size_t n = runs.runs.empty() ? 0 : runs.runs[0].size();
  status_->setText(
      tr("%1, %2 seed(s)%3. MTTR: onset → the callers' availability back; SLA attainment over "
         "in-quota traffic; waste: slot time of answers nobody took or too late (docs/kpis.md).")
          .arg(QString::fromStdString(scenario_.name))
          .arg(n)
          .arg(n > 1 ? tr(": mean [95 % interval]") : QString()));
}

}  // namespace spillway::console
