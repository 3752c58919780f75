#pragma once
// Seed 001's comparison of defence modes in the console: the scenario and policy being edited,
// run with limits only, breaker + degrade, all three (and no protection), over the tool bar's
// seeds, off the UI thread; one row per KPI, one column per mode, the seed's published figure
// under it. The rows come from sim::modesRows: the same text `simulate --modes` prints.
#include <QDialog>
#include <QFutureWatcher>

#include "spillway/sim/modes.hpp"

class QLabel;
class QTableWidget;

namespace spillway::console {

class ModesDialog : public QDialog {
  Q_OBJECT
 public:
  explicit ModesDialog(QWidget* parent = nullptr);
  ~ModesDialog() override;

  // Starts the runs (a later call supersedes an earlier one still running).
  void run(const sim::Scenario& scenario, int seeds);
  bool running() const { return watcher_.isRunning(); }
  QTableWidget* table() const { return table_; }
  QString status() const;

 signals:
  void finished();

 private:
  void showRuns(const sim::ModeRuns& runs);

  QFutureWatcher<sim::ModeRuns> watcher_;
  sim::Scenario scenario_;  // what the running job reads: stays put until it is done
  QLabel* status_;
  QTableWidget* table_;
};

}  // namespace spillway::console
