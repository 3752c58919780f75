#pragma once
// The Live dock: where the telemetry comes from (OTLP/HTTP receiver, an access log,
// Prometheus), each field checked as it is typed and marked next to it; Go live / Stop; one
// health row per configured source (receiving N/s, waiting for a file, failing with the reason
// and the last success); the counters; and the "would open" verdicts as they happen (newest on
// top). The rarely changed options (token file, formats, span, instance bound, retention) fold
// away under Advanced, so the dock stays narrow. The session itself runs in LiveController.
#include <QWidget>

#include <array>
#include <vector>

#include "live_session.hpp"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSettings;
class QSpinBox;
class QToolButton;

namespace spillway::console {

class LivePanel : public QWidget {
  Q_OBJECT
 public:
  // The fields checked inline.
  enum class Field { Otlp, TokenFile, Tail, Prometheus };

  explicit LivePanel(QWidget* parent = nullptr);

  // The form as a config (policy and the recording's library left to the caller; record()
  // says whether to record). false + a message naming the field (also marked next to it).
  bool config(LiveConfig& out, QString* error) const;
  void setConfig(const LiveConfig& cfg);
  bool record() const;
  void setRecord(bool on);
  void setRunning(bool running, quint16 otlpPort = 0);
  void showStatus(const LiveStatus& st, double latencyMs);
  // A session that failed to start (or to close its recording): the message goes to the
  // health row of the source it names (OTLP receiver, Prometheus, recording), else to a row
  // of its own — never only to the status bar.
  void showFailure(const QString& message);
  void clearVerdicts();
  QListWidget* verdicts() const { return verdicts_; }
  QLineEdit* otlpAddress() const { return otlp_; }
  QLineEdit* otlpTokenFile() const { return token_; }
  QLineEdit* tailFile() const { return tail_; }
  QLineEdit* prometheusUrl() const { return prom_; }
  QSpinBox* maxInstances() const { return maxInstances_; }
  QString statusText() const;
  // What is marked next to a field: an error that stops Go live ("" when the field is fine or
  // its source is off). fieldNote: a remark that does not (a log not there yet is waited for).
  QString fieldProblem(Field f) const;
  QString fieldNote(Field f) const;
  // The health row of a source as shown (plain text; "" when the row is not shown), and its
  // state.
  QString healthText(SourceHealth::Source s) const;
  std::optional<SourceHealth::State> healthState(SourceHealth::Source s) const;
  bool advancedShown() const;
  void setAdvancedShown(bool shown);
  // A narrow column (at most 300 px asked for): the timelines are what Live mode is for.
  QSize sizeHint() const override;

 signals:
  void startRequested();
  void stopRequested();

 private:
  struct Check {  // a field's inline mark
    QLabel* hint = nullptr;
    QString problem, note;
  };
  QPushButton* buildSources(const QSettings& settings);
  void buildSession(const QSettings& settings);
  void layOut(QPushButton* browse);
  QWidget* buildAdvanced();
  void connectValidation();
  void validate();
  void mark(Field f, const QString& problem, const QString& note = {});
  QString checkOtlp() const;
  QString checkToken() const;
  void checkTail(QString& problem, QString& note) const;
  QString checkProm() const;
  void renderHealth();
  QString healthLine(const SourceHealth& h) const;
  void saveSettings() const;

  QCheckBox *useOtlp_, *useTail_, *fromStart_, *useProm_;
  QLineEdit *otlp_, *token_, *tail_, *prom_;
  QComboBox *format_, *preset_;
  QSpinBox* promStep_;
  QCheckBox* record_;
  QSpinBox* retainHours_;
  QSpinBox* spanMinutes_;
  QSpinBox* maxInstances_;
  QToolButton* advancedToggle_;
  QWidget* advanced_;
  QPushButton *start_, *stop_;
  QLabel* status_;
  QListWidget* verdicts_;
  std::array<Check, 4> checks_;  // by Field
  // Health: one row per source (by SourceHealth::Source) and one for a failure no source
  // owns; what the last status said.
  std::array<QLabel*, 4> healthRows_{};
  QLabel* failureRow_ = nullptr;
  QWidget* health_ = nullptr;
  std::vector<SourceHealth> sources_;
  QString failure_;
  bool running_ = false;
};

}  // namespace spillway::console
