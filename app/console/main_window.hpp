#pragma once
// The console: pick a scenario, run it without and with protection (off the UI thread, with
// progress and cancel), then walk the incident: instance tiles, synchronized timelines and
// the KPI panel all follow one replay cursor (play / pause / step / speed / scrubber).
#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QMainWindow>

#include <memory>

#include "live_session.hpp"
#include "refresh.hpp"
#include "replay_controller.hpp"
#include "run_controller.hpp"
#include "spillway/sim/seeds.hpp"

class QCheckBox;
class QComboBox;
class QDockWidget;
class QLabel;
class QLayout;
class QMenu;
class QProgressBar;
class QPushButton;
class QSlider;
class QSpinBox;
class QSplitter;
class QTabWidget;
class QTableWidget;
class QTimer;

namespace spillway::console {

class CompareDialog;
class ExportDialog;
class HeadlineStrip;
class InstanceTiles;
class KpiChart;
struct NavKey;
class LibraryPanel;
class LivePanel;
class NarrativePanel;
class SensitivityPanel;
class SweepDialog;
class ModesDialog;
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
  Micros cursorTime() const { return playback_.cursor(); }

  // The incident library (File → Open library…, `--library`); false + a message when the file
  // is not one. Selecting an incident replays it under the editor's policy.
  bool openLibrary(const QString& path, QString* error = nullptr);
  bool replayIncident(const QString& name, QString* error = nullptr);
  // What a Shift+drag over the timelines does: marks `instance` bad from `from` to `to`
  // (seconds on the time axis) in the library, then replays to re-score TTD and MTTR.
  bool annotateRange(std::size_t instance, double from, double to, QString* error = nullptr);
  // Tools → Sweep…: the dialog over the library's incidents (created on first use).
  SweepDialog* openSweep();
  // Tools → Compare policies…: the editor's policy, the pinned reference, the policy as loaded
  // and the built-in default on what is on screen, side by side (started at once).
  CompareDialog* openCompare();
  // Tools → Export policy…: the editor's policy exported, with the policy it was loaded as for
  // the bundle's "before" (a new dialog each time, deleted on close).
  ExportDialog* openExport();
  // Seed 001's mode comparison of the scenario and policy being edited (Tools menu).
  ModesDialog* openModes();
  // Loads a policy into the editor as an edit would (one undo step; a what-if follows).
  void loadPolicy(const Policy& p);
  // The policy of the scenario last loaded replaces the editor's (asks first when it has
  // edits, unless `ask` is false); a what-if follows.
  bool useScenarioPolicy(bool ask = true);
  // A/B: the run on screen becomes the reference every later run is compared against (the
  // Δ column, the headline's deltas, the dashed ghost), until unpinned.
  void pinReference();
  void unpinReference();
  std::shared_ptr<const Comparison> reference() const { return pinned_; }
  // The policy in the editor differs from the one the shown run used (a what-if is due).
  bool stale() const;
  QString contextText() const;         // the context bar: source · policy · changes · reference
  QStringList unmatchedNames() const;  // policy names the shown scenario lacks
  QString unusedNote() const;          // the status bar's word on them after a run
  HeadlineStrip* headline() const { return headline_; }
  NarrativePanel* narrative() const { return narrative_; }
  SensitivityPanel* sensitivity() const { return sensitivity_; }
  // The bottom panel's tab by its title's first word, lower case ("kpis", "narrative",
  // "sensitivity", "comparison"); false when there is none.
  bool showPanel(const QString& name);
  // A navigation key's action (what the window-wide keys do; see navigation.hpp).
  void navigate(const NavKey& key);
  // Fault and transition times of the focused instance, in order (N / P).
  std::vector<Micros> marks() const;
  void setUtcClock(bool utc);
  const Policy& referencePolicy() const { return pinnedPolicy_; }
  // Sessions (session.hpp): the view on screen to a file, and back. Opening runs the source
  // (first under the reference policy when one was pinned) and restores the view once shown:
  // sessionRestored() follows. false + a message naming file:line: field on a bad file.
  bool saveSession(const QString& path, QString* error = nullptr);
  bool openSession(const QString& path, QString* error = nullptr);

  // Live mode: the sources of `cfg` (the editor's policy in shadow mode unless cfg has one)
  // feed rolling timelines and tiles; a run or a replay ends it. false + a message on bad
  // input (the session's own failures arrive later in the status bar and the Live dock).
  bool startLive(LiveConfig cfg, QString* error = nullptr);
  static QString liveLabel(const LiveConfig& cfg);
  void stopLive();
  bool isLive() const { return live_.running(); }
  // Live mode recording: the stretch [from, to] (seconds on the live time axis) of the
  // recording becomes the library incident `name` (what a Shift+drag does, after asking the
  // name), off the UI thread: liveCut() or liveCutFailed() follows. false + a message when not
  // recording.
  bool cutLive(double from, double to, const QString& name, QString* error = nullptr);
  LivePanel* livePanel() const { return livePanel_; }
  LiveController& liveController() { return live_; }
  // Span received → tiles repainted, per applied snapshot with new data (ms).
  const std::vector<double>& liveLatenciesMs() const { return liveLatencies_; }
  // The cursor follows the newest data (Live); scrubbing back pauses it, Follow resumes.
  bool following() const { return playback_.following(); }
  const view::Playback& playback() const { return playback_; }

  RunController& controller() { return controller_; }
  ReplayController& replayController() { return replayer_; }
  LibraryPanel* libraryPanel() const { return library_; }
  TimelinePlot* plot() const { return plot_; }
  InstanceTiles* tiles() const { return tiles_; }
  QTableWidget* kpiTable() const { return kpis_; }
  KpiChart* kpiChart() const { return chart_; }
  std::shared_ptr<const Comparison> current() const { return current_; }
  std::shared_ptr<const Comparison> previous() const { return previous_; }
  PolicyEditor* policyEditor() const { return editor_; }
  // The toolbar's source picker (built-in scenarios, plus the file or incident on screen) and
  // its Run button, which runs what the picker shows.
  QComboBox* sourcePicker() const { return scenario_; }
  QPushButton* runButton() const { return run_; }
  QSpinBox* seedsBox() const { return seeds_; }
  ScenarioPanel* scenarioPanel() const { return scenarioPanel_; }
  QStringList recentFiles() const;
  qint64 lastRoundTripMs() const { return lastRoundTripMs_; }
  // Seeds per run in the KPI table (1: the shown run only; more: mean and 95 % interval).
  void setSeeds(int n);
  std::shared_ptr<const sim::SeedRuns> seedRuns() const { return seedRuns_; }

 signals:
  void runShown();   // a finished run is on screen
  void liveShown();  // a live snapshot is on screen
  void liveStarted(quint16 otlpPort);
  void liveCut(const QString& incident, qulonglong records);
  void liveCutFailed(const QString& message);  // the library refused the cut: its reason
  void sessionRestored();
  void intervalsShown();  // the KPI table holds the intervals over the seeds

 protected:
  // With Live mode on, the window hides at once and closes when the session has committed its
  // recording on its own thread: the UI thread never waits for it.
  void closeEvent(QCloseEvent* e) override;

 private:
  void buildRunToolbar();
  void buildCentral();
  void growBottomPanel(double share);
  QWidget* buildTileColumn();
  QWidget* buildKpiPanel();
  QLayout* buildReplayBar();
  void buildHelpMenu();
  void connectLive();
  void showWhatIf(std::shared_ptr<const Comparison> c);
  void buildDocks();
  void buildMenus();
  void buildPlayback();
  void connectRuns();
  void restoreSession();
  void onFinished(std::shared_ptr<const Comparison> c);
  void startWhatIf();
  void fillKpis();
  void fillKpiTable(const std::vector<view::KpiRow>& rows);
  void fillHeadline(const std::vector<view::KpiRow>& rows);
  void fillNarrative();
  void updateSensitivity();
  void buildPolicyMenu();
  void updateContext();
  void onCommitted();
  QString shownSource() const;
  void continueSession();
  void restoreView();
  void startSeeds();  // after a simulated run: the same scenario and policy over more seeds
  void step(int ticks);
  void syncCursor();  // the widgets to playback_'s cursor and play state
  void updateTimeLabel();
  // The timelines' one scheduler: requests coalesce into the highest level pending, done on
  // the next turn of the event loop; refresh() does a level now (a new run on screen).
  void schedule(Refresh level);
  void refresh(Refresh level, bool keepZoom = false);
  void focusInstance(std::size_t i);
  void startRun(const sim::Scenario& sc, const QString& label);
  sim::Scenario withEditorPolicy(sim::Scenario sc);
  void startReplay(const QString& incident, bool whatIf, bool keepPrevious = false);
  static constexpr int kBuiltinSources = 4;  // seed-000 … seed-003, first in the picker
  void showSource(const QString& kind, const QString& value, const QString& text);
  void rememberFile(const QString& path);
  void fillRecentMenu();
  void onLiveSnapshot(std::shared_ptr<const Comparison> c, const LiveStatus& st);
  void applyLive();
  void fillLiveKpis(const LiveStatus& st);
  void startCut(Micros from, Micros to, const QString& name);
  void cutFailed(const QString& message);

  RunController controller_;
  ReplayController replayer_;
  LiveController live_;
  BackgroundJob cutJob_;  // a cut of the live recording into an incident
  LivePanel* livePanel_ = nullptr;
  std::shared_ptr<const Comparison> pendingLive_;  // newest snapshot not yet drawn
  LiveStatus pendingStatus_;                       // merged over skipped snapshots
  bool liveApplyScheduled_ = false;
  std::vector<double> liveLatencies_;
  QString liveLibrary_, liveRecording_;  // where Live mode records (empty: not recording)
  bool keepPrevious_ = false;  // an annotation re-replay: the ghost stays the previous policy's
  // previous_ is what the shown run is compared with: the pinned reference, else the run of
  // the policy committed before the last commit (a slider's drag steps never become it).
  std::shared_ptr<const Comparison> current_, previous_;
  std::shared_ptr<const Comparison> anchor_;  // the run of the last committed policy
  std::shared_ptr<const Comparison> pinned_;
  Policy pinnedPolicy_;
  bool nextWhatIfCommits_ = false, whatIfCommits_ = false;
  Policy scenarioPolicy_;  // the last loaded scenario's own policy
  QString scenarioName_;
  QString scenarioPath_;  // what runScenario was given: a built-in name or a file's path
  // A session being opened: its steps run as the runs it starts are shown.
  std::shared_ptr<struct Session> opening_;
  int openingStep_ = 0;
  QString shownLabel_;  // what is on screen: "scenario seed-000", "incident x", "live"
  bool utcClock_ = true;
  HeadlineStrip* headline_ = nullptr;
  NarrativePanel* narrative_ = nullptr;
  SensitivityPanel* sensitivity_ = nullptr;
  bool sensitivityDue_ = false;  // the shown run changed while the tab was hidden
  QTabWidget* kpiTabs_ = nullptr;
  QSplitter* mainSplit_ = nullptr;  // the timelines over the bottom tabs
  QLabel* context_ = nullptr;
  QLabel* abDiff_ = nullptr;
  sim::Scenario scenarioData_;
  Policy policy_;
  bool whatIfRunning_ = false;
  qint64 lastRoundTripMs_ = -1;
  QElapsedTimer roundTrip_;
  QTimer* whatIfTimer_;
  PolicyEditor* editor_;
  ScenarioPanel* scenarioPanel_;
  LibraryPanel* library_;
  SweepDialog* sweep_ = nullptr;
  ModesDialog* modes_ = nullptr;
  CompareDialog* compare_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  view::Playback playback_;  // the mode on screen and the cursor
  QComboBox* scenario_;      // the source picker: item data {kind ("scenario", "incident"), value}
  QPushButton *run_, *cancel_, *play_;
  QProgressBar* progress_;
  QSlider* scrubber_;
  QComboBox* speed_;
  QSpinBox* seeds_;
  // Seeds beyond the shown run (docs/kpis.md): computed off the UI thread after each simulated
  // run; a newer run makes an older job's result stale (its generation no longer matches).
  QFutureWatcher<sim::SeedRuns>* seedJob_;
  std::shared_ptr<const sim::SeedRuns> seedRuns_;
  std::uint64_t runGeneration_ = 0, seedGeneration_ = 0;
  QCheckBox* loop_;
  QLabel* time_;
  QTimer* playTimer_;
  InstanceTiles* tiles_;
  TimelinePlot* plot_;
  QTimer* refreshTimer_;
  Refresh pending_ = Refresh::None;
  QTableWidget* kpis_;
  KpiChart* chart_;
  QDockWidget *policyDock_ = nullptr, *scenarioDock_ = nullptr, *libraryDock_ = nullptr,
              *liveDock_ = nullptr;
};

}  // namespace spillway::console
