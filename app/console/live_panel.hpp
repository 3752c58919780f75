#pragma once
// The Live dock: where the telemetry comes from (OTLP/HTTP receiver, an access log), how much
// of it the timelines keep and how many instances at most, Go live / Stop, the source counters
// (and what the instance bound refused), and the "would open" verdicts as they happen (newest
// on top). The session itself runs in LiveController.
#include <QWidget>

#include "live_session.hpp"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSettings;
class QSpinBox;

namespace spillway::console {

class LivePanel : public QWidget {
  Q_OBJECT
 public:
  explicit LivePanel(QWidget* parent = nullptr);

  // The form as a config (policy and the recording's library left to the caller; record()
  // says whether to record). false + a message naming the field.
  bool config(LiveConfig& out, QString* error) const;
  void setConfig(const LiveConfig& cfg);
  bool record() const;
  void setRecord(bool on);
  void setRunning(bool running, quint16 otlpPort = 0);
  void showStatus(const LiveStatus& st, double latencyMs);
  void clearVerdicts();
  QListWidget* verdicts() const { return verdicts_; }
  QLineEdit* otlpTokenFile() const { return token_; }
  QSpinBox* maxInstances() const { return maxInstances_; }
  QString statusText() const;

 signals:
  void startRequested();
  void stopRequested();

 private:
  QPushButton* buildSources(const QSettings& settings);
  void buildSession(const QSettings& settings);
  void layOut(QPushButton* browse);

  QCheckBox *useOtlp_, *useTail_, *fromStart_, *useProm_;
  QLineEdit *otlp_, *token_, *tail_, *prom_;
  QComboBox *format_, *preset_;
  QSpinBox* promStep_;
  QCheckBox* record_;
  QSpinBox* retainHours_;
  QSpinBox* spanMinutes_;
  QSpinBox* maxInstances_;
  QPushButton *start_, *stop_;
  QLabel* status_;
  QListWidget* verdicts_;
};

}  // namespace spillway::console
