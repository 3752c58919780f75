#pragma once
// Tools → Sweep…: a threshold sweep over library incidents. Parameters (breakerParams() keys,
// from / to / step, or random samples with a seed), incidents, threads; spillway::runSweep
// runs in the background with progress and cancel. Results: a sortable table (parameter
// values, FP rate, mean TTD, MTTR, availability, missed faults) and the Pareto front plot (FP
// rate against mean TTD, colour = availability, the front circled). Clicking a point or a row
// loads that candidate's policy into the editor (which re-replays it); Calibrate picks the
// candidate meeting targets such as `fp<=0.03,ttd<=30s`, or says which target cannot be met.
#include <QDialog>

#include <atomic>
#include <memory>

#include "background_job.hpp"
#include "spillway/sweep.hpp"

class QBoxLayout;
class QCheckBox;
class QComboBox;
class QCPAxis;
class QCPColorGradient;
class QCPRange;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace spillway::console {

struct SweepParamRow {
  QString key;
  double from = 0, to = 0, step = 0;
};

class SweepDialog : public QDialog {
  Q_OBJECT
 public:
  explicit SweepDialog(QWidget* parent = nullptr);
  ~SweepDialog() override;

  void setLibrary(const QString& path, const QStringList& incidents, const QStringList& chosen);
  void setBasePolicy(const Policy& p) { base_ = p; }
  void setParams(const std::vector<SweepParamRow>& rows);
  void setRandom(bool random, int samples, int seed);
  void setThreads(int n);
  QStringList chosenIncidents() const;

  // Starts the sweep; false + a message (in the dialog) on a bad parameter or no incident.
  bool start();
  void cancel();
  bool running() const { return running_; }
  const SweepResult* result() const { return result_.get(); }
  QString message() const;

  // What clicking a row or a point does: selects the candidate and emits candidateChosen.
  void chooseCandidate(std::size_t index);
  // The candidate under a pixel of the Pareto plot (within 8 px), or -1.
  long candidateAt(const QPointF& pixel) const;
  // Runs calibrate() on the result with targets like "fp<=0.03,ttd<=30s"; false + the reason.
  bool calibrateTargets(const QString& targets);
  QString calibrationText() const;

  QTableWidget* resultsTable() const { return table_; }
  QCustomPlot* paretoPlot() const { return plot_; }
  QTableWidget* paramsTable() const { return params_; }

 signals:
  void candidateChosen(const spillway::Policy& policy, const QString& description);
  void finished();
  void cancelled();
  void failed(const QString& message);

 private:
  void showWholeTable();
  struct ParamButtons {
    QPushButton *add, *remove;
  };
  ParamButtons buildParams(QBoxLayout* top);
  void buildIncidents(QBoxLayout* top);
  void buildRunRow(QBoxLayout* layout);
  void buildResults(QBoxLayout* layout);
  QPushButton* buildCalibration(QBoxLayout* layout);
  void connectSignals(const ParamButtons& rowButtons, QPushButton* calibrate);
  void addParamRow(const SweepParamRow& r);
  bool readSpec(SweepSpec& spec, QString& error) const;
  void showResult();
  void drawPareto();
  void plotCandidates(QCPAxis* x, QCPAxis* y, QCPColorGradient& gradient, const QCPRange& range);
  void plotFront(QCPAxis* x, QCPAxis* y);
  void setRunning(bool on);
  QString describe(std::size_t index) const;

  Policy base_;
  QString libraryPath_;
  QTableWidget *params_, *table_;
  QComboBox* mode_;
  QSpinBox *samples_, *seed_, *threads_;
  QListWidget* incidents_;
  QPushButton *run_, *cancel_;
  QProgressBar* progress_;
  QLabel *message_, *calibration_;
  QLineEdit* targets_;
  QCustomPlot* plot_;
  std::unique_ptr<SweepResult> result_;
  std::vector<QPointF> points_;  // per candidate: (FP %, mean TTD s) as plotted
  long chosen_ = -1;
  BackgroundJob job_;  // the sweep
  std::shared_ptr<std::atomic<bool>> cancelFlag_;
  bool running_ = false;
};

}  // namespace spillway::console
