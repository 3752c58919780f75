#pragma once
// Tools → Compare policies…: N policies on what is on screen — the simulated scenario or the
// replayed library incident — side by side, as `spillway-cli compare` prints them: one column
// per policy, the headline KPIs as rows with their targets, the best of each row in bold.
// The runs go off the UI thread, one after the other, with progress; closing cancels them.
#include <QDialog>

#include <vector>

#include "background_job.hpp"
#include "spillway/sim/scenario.hpp"
#include "spillway/view/headline.hpp"

class QLabel;
class QProgressBar;
class QTableWidget;

namespace spillway::console {

class CompareDialog : public QDialog {
  Q_OBJECT
 public:
  struct Entry {
    QString name;
    Policy policy;
  };
  explicit CompareDialog(QWidget* parent = nullptr);
  void setScenario(const sim::Scenario& scenario);
  void setIncident(const QString& library, const QString& incident);
  void setTargets(const view::HeadlineTargets& targets) { targets_ = targets; }
  void setPolicies(std::vector<Entry> policies);
  // Adds a policy file as one more column; false + the file's own error.
  bool addPolicyFile(const QString& path, QString* error = nullptr);
  const std::vector<Entry>& policies() const { return entries_; }
  void start();
  QTableWidget* table() const { return table_; }
  // The headline tiles of each policy's run, in column order, once finished() fired.
  const std::vector<std::vector<view::HeadlineTile>>& results() const { return results_; }

 signals:
  void finished();

 private:
  void fill();
  std::vector<view::KpiRow> runOne(const Policy& p, const BackgroundJob::Context& job) const;

  std::vector<Entry> entries_;
  std::optional<sim::Scenario> scenario_;
  QString library_, incident_;
  view::HeadlineTargets targets_ = view::HeadlineTargets::defaults();
  std::vector<std::vector<view::HeadlineTile>> results_;
  BackgroundJob job_;
  QTableWidget* table_;
  QProgressBar* progress_;
  QLabel* what_;
};

}  // namespace spillway::console
