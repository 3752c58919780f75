#pragma once
// The console: pick a scenario, run it without and with protection (off the UI thread, with
// progress and cancel), then walk the incident: instance tiles, synchronized timelines and
// the KPI panel all follow one replay cursor (play / pause / step / speed / scrubber).
#include <QElapsedTimer>
#include <QMainWindow>

#include <memory>

#include "run_controller.hpp"

class QCheckBox;
class QComboBox;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QSlider;
class QTableWidget;
class QTimer;

namespace spillway::console {

class InstanceTiles;
class KpiChart;
class PolicyEditor;
class ScenarioPanel;
class TimelinePlot;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Loads a built-in scenario by name (seed-000 …) or a file, and runs it. false + a message
  // on bad input; nothing already shown is lost.
  bool runScenario(const QString& nameOrPath, QString* error = nullptr);
  // Runs the scenario panel's edited scenario (seed, duration, load, faults) with the
  // editor's policy, baseline included. false + a message naming the bad field.
  bool runEdited(QString* error = nullptr);
  // Light, dark or the desktop's palette, remembered.
  enum class Theme { System, Light, Dark };
  void setTheme(Theme t);
  void setCursorTime(Micros t);
  Micros cursorTime() const { return cursor_; }

  RunController& controller() { return controller_; }
  TimelinePlot* plot() const { return plot_; }
  InstanceTiles* tiles() const { return tiles_; }
  QTableWidget* kpiTable() const { return kpis_; }
  KpiChart* kpiChart() const { return chart_; }
  std::shared_ptr<const Comparison> current() const { return current_; }
  std::shared_ptr<const Comparison> previous() const { return previous_; }
  PolicyEditor* policyEditor() const { return editor_; }
  ScenarioPanel* scenarioPanel() const { return scenarioPanel_; }
  QStringList recentFiles() const;
  qint64 lastRoundTripMs() const { return lastRoundTripMs_; }

 signals:
  void runShown();  // a finished run is on screen

 protected:
  void keyPressEvent(QKeyEvent* e) override;

 private:
  void onFinished(std::shared_ptr<const Comparison> c);
  void startWhatIf();
  void fillKpis();
  void step(int ticks);
  void updateTimeLabel();
  void redrawPlot();
  void focusInstance(std::size_t i);
  void startRun(const sim::Scenario& sc, const QString& label);
  void rememberFile(const QString& path);
  void fillRecentMenu();

  RunController controller_;
  std::shared_ptr<const Comparison> current_, previous_;
  sim::Scenario scenarioData_;
  Policy policy_;
  bool whatIfRunning_ = false;
  qint64 lastRoundTripMs_ = -1;
  QElapsedTimer roundTrip_;
  QTimer* whatIfTimer_;
  PolicyEditor* editor_;
  ScenarioPanel* scenarioPanel_;
  QMenu* recentMenu_ = nullptr;
  Micros cursor_ = 0;
  QComboBox* scenario_;
  QPushButton *run_, *cancel_, *play_;
  QProgressBar* progress_;
  QSlider* scrubber_;
  QComboBox* speed_;
  QCheckBox* loop_;
  QLabel* time_;
  QTimer* playTimer_;
  InstanceTiles* tiles_;
  TimelinePlot* plot_;
  QTableWidget* kpis_;
  KpiChart* chart_;
};

}  // namespace spillway::console
