// The console's main window: building it (one function per area) and wiring its parts.
// Over 600 lines because every mode's hand-over (run, replay, what-if, seeds, live) meets
// here; issue 20's PlaybackController and Mode machine are what moves them out.
#include "main_window.hpp"

#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QKeyEvent>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "compare_dialog.hpp"
#include "export_dialog.hpp"
#include "headline_strip.hpp"
#include "instance_tiles.hpp"
#include "kpi_chart.hpp"
#include "library_menu.hpp"
#include "library_panel.hpp"
#include "live_panel.hpp"
#include "modes_dialog.hpp"
#include "narrative_panel.hpp"
#include "navigation.hpp"
#include "policy_editor.hpp"
#include "scenario_panel.hpp"
#include "sensitivity_panel.hpp"
#include "spillway/app/resources.hpp"
#include "spillway/input_error.hpp"
#include "spillway/library/library.hpp"
#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/view/live_kpis.hpp"
#include "spillway/view/replay_timeline.hpp"
#include "spillway/view/time_format.hpp"
#include "sweep_dialog.hpp"
#include "timeline_plot.hpp"

namespace spillway::console {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  buildRunToolbar();
  buildCentral();
  buildDocks();
  buildMenus();
  buildPolicyMenu();
  buildPlayback();
  connectRuns();
  restoreSession();
  updateContext();
}

// The toolbar: scenario, Run, Cancel, progress, seeds.
void MainWindow::buildRunToolbar() {
  auto* bar = addToolBar(tr("Run"));
  bar->setObjectName("runToolbar");
  scenario_ = new QComboBox(this);
  for (const char* s : {"seed-000", "seed-001", "seed-002", "seed-003"})
    scenario_->addItem(s, QStringList{"scenario", s});
  scenario_->setToolTip(
      tr("What Run runs: a built-in scenario (the seeds' incidents), or the scenario file or "
         "library incident on screen"));
  run_ = new QPushButton(tr("Run"), this);
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setEnabled(false);
  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(220);
  progress_->setRange(0, 100);
  bar->addWidget(new QLabel(tr(" Source "), this));
  bar->addWidget(scenario_);
  bar->addWidget(run_);
  bar->addWidget(cancel_);
  bar->addWidget(progress_);
  seeds_ = new QSpinBox(this);
  seeds_->setRange(1, 20);
  seeds_->setPrefix(tr("seeds "));
  seeds_->setToolTip(
      tr("Run the scenario under this many seeds as well and show each KPI's mean and 95 % "
         "interval (docs/kpis.md); the plots show the first seed"));
  bar->addWidget(seeds_);
  seedJob_ = new QFutureWatcher<sim::SeedRuns>(this);
  connect(seedJob_, &QFutureWatcherBase::finished, this, [this] {
    if (seedGeneration_ != runGeneration_ || !current_ || current_->mode == view::Mode::Replay)
      return;  // stale
    seedRuns_ = std::make_shared<const sim::SeedRuns>(seedJob_->result());
    fillKpis();
    emit intervalsShown();
  });
  connect(seeds_, &QSpinBox::valueChanged, this, [this] { startSeeds(); });
}

// Tiles, the timeline plot with the replay controls, the KPI table and chart.
QWidget* MainWindow::buildTileColumn() {
  tiles_ = new InstanceTiles(this);
  tiles_->setOrder(view::TileOrder::Model);
  auto* tileScroll = new QScrollArea(this);
  tileScroll->setWidget(tiles_);
  tileScroll->setWidgetResizable(true);
  tileScroll->setMinimumWidth(260);
  auto* sortBy = new QComboBox(this);
  sortBy->addItem(tr("Sort by health"), static_cast<int>(view::TileOrder::Health));
  sortBy->addItem(tr("Sort by name"), static_cast<int>(view::TileOrder::Name));
  sortBy->addItem(tr("Group by model"), static_cast<int>(view::TileOrder::Model));
  sortBy->setCurrentIndex(2);  // as the lanes are: grouped by model
  sortBy->setToolTip(
      tr("Health re-sorts as the cursor moves: the worst instance stays on top. "
         "Right-click a tile to hide it or show one model only."));
  connect(sortBy, &QComboBox::currentIndexChanged, this, [this, sortBy] {
    tiles_->setOrder(static_cast<view::TileOrder>(sortBy->currentData().toInt()));
  });
  auto* tileColumn = new QWidget(this);
  auto* tileLayout = new QVBoxLayout(tileColumn);
  tileLayout->setContentsMargins(0, 0, 0, 0);
  tileLayout->addWidget(sortBy);
  tileLayout->addWidget(tileScroll, 1);
  return tileColumn;
}

// The KPI panel's tabs: headline strip and table, narrative, sensitivity, comparison chart.
QWidget* MainWindow::buildKpiPanel() {
  kpis_ = new QTableWidget(this);
  kpis_->setColumnCount(5);
  kpis_->setHorizontalHeaderLabels({tr("KPI"), tr("baseline (off)"), tr("protected (on)"),
                                    tr("Δ baseline"), tr("Δ previous policy")});
  kpis_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  // The value columns fit their text (an interval is wider than a value); the name takes the rest.
  for (int c = 1; c < 5; ++c)
    kpis_->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  kpis_->verticalHeader()->hide();
  kpis_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  // Never squeezed to nothing under wrapped tiles on a laptop screen: the KPI page scrolls to
  // at least five rows of it instead.
  kpis_->setMinimumHeight(kpis_->horizontalHeader()->sizeHint().height() +
                          5 * kpis_->verticalHeader()->defaultSectionSize() + 4);
  chart_ = new KpiChart(this);
  headline_ = new HeadlineStrip(this);
  abDiff_ = new QLabel(this);
  abDiff_->setWordWrap(true);
  abDiff_->setVisible(false);
  auto* kpiPage = new QWidget(this);
  auto* kpiLayout = new QVBoxLayout(kpiPage);
  kpiLayout->setContentsMargins(0, 2, 0, 0);
  kpiLayout->addWidget(headline_);
  kpiLayout->addWidget(abDiff_);
  kpiLayout->addWidget(kpis_, 1);
  connect(kpis_, &QTableWidget::cellClicked, this, [this](int row, int) {
    const QTableWidgetItem* item = kpis_->item(row, 0);
    if (!item || item->data(Qt::UserRole).toString() != "clients") return;
    kpis_->setProperty("clientsOpen", !kpis_->property("clientsOpen").toBool());
    fillKpis();
  });
  narrative_ = new NarrativePanel(this);
  connect(narrative_, &NarrativePanel::lineActivated, this,
          [this](Micros at, Micros from, Micros to, std::size_t instance) {
            if (current_ && instance < current_->protectedRun.timeline.instances().size())
              focusInstance(instance);
            plot_->zoomTo(static_cast<double>(from) / 1e6, static_cast<double>(to) / 1e6);
            setCursorTime(at);
          });
  // Scrolls rather than forcing the window taller when the tiles wrap on a narrow screen.
  auto* kpiScroll = new QScrollArea(this);
  kpiScroll->setFrameShape(QFrame::NoFrame);
  kpiScroll->setWidgetResizable(true);
  kpiScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  kpiScroll->setWidget(kpiPage);
  kpiTabs_ = new QTabWidget(this);
  kpiTabs_->addTab(kpiScroll, tr("KPIs"));
  kpiTabs_->addTab(narrative_, tr("Narrative"));
  sensitivity_ = new SensitivityPanel(this);
  kpiTabs_->addTab(sensitivity_, tr("Sensitivity"));
  kpiTabs_->setTabToolTip(kpiTabs_->count() - 1,
                          tr("What moves what: 误伤 and TTD one step either side of each "
                             "breaker parameter, around the policy shown"));
  auto* chartScroll = new QScrollArea(this);
  chartScroll->setFrameShape(QFrame::NoFrame);
  chartScroll->setWidgetResizable(true);
  chartScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  chartScroll->setWidget(chart_);
  kpiTabs_->addTab(chartScroll, tr("Comparison chart"));
  connect(kpiTabs_, &QTabWidget::currentChanged, this, [this, chartScroll] {
    if (kpiTabs_->currentWidget() == sensitivity_ || kpiTabs_->currentWidget() == chartScroll)
      QTimer::singleShot(0, this, [this] { growBottomPanel(0.45); });
    if (sensitivityDue_) updateSensitivity();
  });
  return kpiTabs_;
}

// Replay controls: play / pause, step, speed, scrubber with times.
QLayout* MainWindow::buildReplayBar() {
  play_ = new QPushButton(tr("Play"), this);
  auto* back = new QPushButton("◀", this);
  auto* fwd = new QPushButton("▶", this);
  // The step buttons as narrow as their arrows: the bar fits beside the tiles on a laptop.
  for (QPushButton* b : {back, fwd})
    b->setMaximumWidth(b->fontMetrics().horizontalAdvance("◀") + 28);
  connect(back, &QPushButton::clicked, this, [this] { step(-1); });
  connect(fwd, &QPushButton::clicked, this, [this] { step(1); });
  speed_ = new QComboBox(this);
  for (const char* s : {"0.5×", "1×", "5×", "20×", "100×"}) speed_->addItem(s);
  speed_->setCurrentIndex(3);
  scrubber_ = new QSlider(Qt::Horizontal, this);
  scrubber_->setMinimumWidth(120);  // never squeezed away by a wide dock
  time_ = new QLabel("00:00", this);
  // As wide as its longest text, so a new second never resizes the plots beside it.
  time_->setFixedWidth(
      time_->fontMetrics().horizontalAdvance("00:00:00 UTC  T+00:00:00 / T+00:00:00"));
  auto* replay = new QHBoxLayout;
  replay->addWidget(back);
  replay->addWidget(play_);
  replay->addWidget(fwd);
  replay->addWidget(speed_);
  loop_ = new QCheckBox(tr("Loop"), this);
  loop_->setToolTip(tr("Start again from the beginning at the end"));
  replay->addWidget(loop_);
  replay->addWidget(scrubber_, 1);
  replay->addWidget(time_);
  return replay;
}

// Eleven parameters' bars need height: a tab that shows them takes up to `share` of the
// splitter from the timelines (never shrinks what the user made bigger).
void MainWindow::growBottomPanel(double share) {
  QList<int> sizes = mainSplit_->sizes();
  const int total = sizes.value(0) + sizes.value(1);
  const int want = static_cast<int>(total * share);
  if (sizes.size() != 2 || total <= 0 || sizes[1] >= want) return;
  mainSplit_->setSizes({total - want, want});
}

void MainWindow::buildCentral() {
  QWidget* tileColumn = buildTileColumn();
  plot_ = new TimelinePlot(this);
  QLayout* replay = buildReplayBar();
  auto* right = new QWidget(this);
  auto* rightLayout = new QVBoxLayout(right);
  rightLayout->setContentsMargins(0, 0, 0, 0);
  rightLayout->addWidget(plot_, 1);
  rightLayout->addLayout(replay);
  auto* top = new QSplitter(Qt::Horizontal, this);
  top->addWidget(tileColumn);
  top->addWidget(right);
  top->setStretchFactor(1, 1);
  auto* main = mainSplit_ = new QSplitter(Qt::Vertical, this);
  main->addWidget(top);
  main->addWidget(buildKpiPanel());
  // A third for the KPIs: the headline tiles and half a dozen table rows at 1000 px.
  main->setStretchFactor(0, 2);
  main->setStretchFactor(1, 1);
  // The context bar: what is on screen, under which policy, compared with what — always shown,
  // never only a transient status message.
  context_ = new QLabel(this);
  context_->setObjectName("contextBar");
  context_->setTextFormat(Qt::RichText);
  context_->setWordWrap(true);
  context_->setContentsMargins(6, 2, 6, 2);
  auto* central = new QWidget(this);
  auto* centralLayout = new QVBoxLayout(central);
  centralLayout->setContentsMargins(0, 0, 0, 0);
  centralLayout->setSpacing(0);
  centralLayout->addWidget(context_);
  centralLayout->addWidget(main, 1);
  setCentralWidget(central);
  statusBar()->showMessage(tr("Ready"));
}

// The docks: policy editor, scenario, library, live.
void MainWindow::buildDocks() {
  // The policy editor, docked: every change re-runs the protected side (the baseline does not
  // depend on the policy) after a short quiet period, so a drag or a typed number is one run.
  editor_ = new PolicyEditor(this);
  policyDock_ = new QDockWidget(tr("Policy"), this);
  policyDock_->setObjectName("policyDock");
  auto* editorScroll = new QScrollArea(policyDock_);
  editorScroll->setWidget(editor_);
  editorScroll->setWidgetResizable(true);
  policyDock_->setWidget(editorScroll);
  addDockWidget(Qt::RightDockWidgetArea, policyDock_);
  scenarioPanel_ = new ScenarioPanel(this);
  scenarioDock_ = new QDockWidget(tr("Scenario"), this);
  scenarioDock_->setObjectName("scenarioDock");
  scenarioDock_->setWidget(scenarioPanel_);
  addDockWidget(Qt::RightDockWidgetArea, scenarioDock_);
  tabifyDockWidget(scenarioDock_, policyDock_);
  // Until a scenario brings its own, the editor holds the built-in default policy (what a
  // replay from the library runs under).
  try {
    editor_->loadPolicy(app::loadPolicy(""), tr("the built-in default"));
  } catch (const std::exception& e) {
    // A broken build's resource, never the user's file: say so, and edit the compiled defaults.
    editor_->loadPolicy(Policy{}, tr("compiled defaults"));
    statusBar()->showMessage(tr("The built-in default policy did not load: %1").arg(e.what()));
  }
  // The incident library, a third tab: recorded incidents replay in the same timelines.
  library_ = new LibraryPanel(this);
  libraryDock_ = new QDockWidget(tr("Library"), this);
  libraryDock_->setObjectName("libraryDock");
  libraryDock_->setWidget(library_);
  addDockWidget(Qt::RightDockWidgetArea, libraryDock_);
  tabifyDockWidget(policyDock_, libraryDock_);
  // Live mode, a fourth tab: shadow mode over the gateway's telemetry.
  livePanel_ = new LivePanel(this);
  liveDock_ = new QDockWidget(tr("Live"), this);
  liveDock_->setObjectName("liveDock");
  liveDock_->setWidget(livePanel_);
  addDockWidget(Qt::RightDockWidgetArea, liveDock_);
  tabifyDockWidget(libraryDock_, liveDock_);
  policyDock_
      ->raise();  // the policy is what an SRE tunes first (after the last tab, which is raised)
  connectLive();
  connect(library_, &LibraryPanel::incidentSelected, this, [this](const QString& name) {
    QString error;
    if (!replayIncident(name, &error)) statusBar()->showMessage(error);
  });
  connect(library_, &LibraryPanel::libraryOpened, this, &LibraryMenu::remember);
  connect(library_, &LibraryPanel::annotationsChanged, this, [this](const QString& incident) {
    // The ground truth changed: re-score TTD and MTTR (the ghost stays the previous policy's).
    if (current_ && current_->mode == view::Mode::Replay && current_->incident == incident)
      startReplay(incident, true, true);
  });
  connect(scenarioPanel_, &ScenarioPanel::runRequested, this, [this] {
    QString error;
    if (!runEdited(&error)) QMessageBox::warning(this, tr("Scenario"), error);
  });
  whatIfTimer_ = new QTimer(this);
  whatIfTimer_->setSingleShot(true);
  whatIfTimer_->setInterval(150);
  connect(whatIfTimer_, &QTimer::timeout, this, &MainWindow::startWhatIf);
  connect(editor_, &PolicyEditor::policyEdited, this, [this] { whatIfTimer_->start(); });
}

// The Live dock's Go live / Stop and the session's reports.
void MainWindow::connectLive() {
  connect(livePanel_, &LivePanel::startRequested, this, [this] {
    LiveConfig cfg;
    QString error;
    if (livePanel_->config(cfg, &error) && livePanel_->record()) {
      cfg.recordLibrary = library_->libraryPath();
      if (cfg.recordLibrary.isEmpty())
        cfg.recordLibrary = QString::fromStdString(library::defaultLibraryPath());
    }
    if (!error.isEmpty() || !startLive(cfg, &error)) QMessageBox::warning(this, tr("Live"), error);
  });
  connect(livePanel_, &LivePanel::stopRequested, this, &MainWindow::stopLive);
  connect(&live_, &LiveController::started, this, [this](quint16 port) {
    livePanel_->setRunning(true, port);
    statusBar()->showMessage(port ? tr("Live: OTLP/HTTP on port %1").arg(port) : tr("Live"));
    // Port 0 asked for any free port: the context bar names the one bound.
    if (port) {
      shownLabel_.replace(QRegularExpression(R"((OTLP on [^,]*):0\b)"),
                          QStringLiteral("\\1:%1").arg(port));
      updateContext();
    }
    emit liveStarted(port);
  });
  connect(&live_, &LiveController::failed, this, [this](const QString& m) {
    livePanel_->setRunning(false);
    livePanel_->showFailure(m);
    statusBar()->showMessage(tr("Live: %1").arg(m));
  });
  connect(&live_, &LiveController::snapshot, this, &MainWindow::onLiveSnapshot);
}

// File, View, Tools, Help.
void MainWindow::buildMenus() {
  // File: open a scenario file (the last folder is remembered); Help: about.
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open scenario…"), QKeySequence::Open, this, [this] {
    QSettings settings;
    const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"),
                                                      settings.value("files/lastDir").toString(),
                                                      tr("Scenarios (*.yaml *.yml)"));
    if (path.isEmpty()) return;
    settings.setValue("files/lastDir", QFileInfo(path).absolutePath());
    QString error;
    if (!runScenario(path, &error)) QMessageBox::warning(this, tr("Scenario"), error);
  });
  file->addAction(tr("Open &session…"), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open session"), {},
                                                      tr("Spillway sessions (*.spillway)"));
    QString error;
    if (!path.isEmpty() && !openSession(path, &error))
      QMessageBox::warning(this, tr("Session"), error);
  });
  file->addAction(tr("Save s&ession…"), QKeySequence::Save, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save session"), "tuning.spillway",
                                                      tr("Spillway sessions (*.spillway)"));
    QString error;
    if (path.isEmpty()) return;
    if (!saveSession(path, &error))
      QMessageBox::warning(this, tr("Session"), error);
    else
      statusBar()->showMessage(tr("Saved the session to %1").arg(path));
  });
  recentMenu_ = file->addMenu(tr("Open &recent"));
  fillRecentMenu();
  new LibraryMenu(
      file, this,
      [this](const QString& location, QString* error) {
        libraryDock_->raise();
        return openLibrary(location, error);
      },
      [this] { return library_->libraryPath(); });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
  QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
  viewMenu->addAction(policyDock_->toggleViewAction());
  viewMenu->addAction(scenarioDock_->toggleViewAction());
  viewMenu->addAction(libraryDock_->toggleViewAction());
  viewMenu->addAction(liveDock_->toggleViewAction());
  QMenu* themeMenu = viewMenu->addMenu(tr("&Theme"));
  auto* themes = new QActionGroup(this);
  const std::pair<Theme, QString> themeNames[] = {
      {Theme::System, tr("Desktop")}, {Theme::Light, tr("Light")}, {Theme::Dark, tr("Dark")}};
  const int savedTheme = QSettings().value("view/theme", 0).toInt();
  for (const auto& [t, label] : themeNames) {
    QAction* a = themeMenu->addAction(label, this, [this, t = t] { setTheme(t); });
    a->setCheckable(true);
    a->setChecked(static_cast<int>(t) == savedTheme);
    themes->addAction(a);
  }
  QMenu* tools = menuBar()->addMenu(tr("&Tools"));
  tools->addAction(tr("&Sweep…"), this, [this] { openSweep(); });
  tools->addAction(tr("Compare &modes…"), this, [this] { openModes(); });
  tools->addAction(tr("Compare &policies…"), this, [this] { openCompare(); });
  tools->addAction(tr("&Export policy…"), this, [this] { openExport(); });
  QAction* utc = viewMenu->addAction(tr("Clock in &UTC"), this, &MainWindow::setUtcClock);
  utc->setCheckable(true);
  utcClock_ = QSettings().value("view/utc", true).toBool();
  utc->setChecked(utcClock_);
  utc->setToolTip(tr("Recordings and Live mode: the time axis in UTC, else local time"));
  buildHelpMenu();
}

// Help: the keys, the documentation, about.
void MainWindow::buildHelpMenu() {
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Keyboard and mouse"), QKeySequence::HelpContents, this, [this] {
    QMessageBox::information(
        this, tr("Keyboard and mouse"),
        tr("<table>"
           "<tr><td><b>Space</b></td><td>play / pause (Live: follow)</td></tr>"
           "<tr><td><b>← →</b></td><td>step 1 s; with Shift 10 s, with Ctrl 1 min</td></tr>"
           "<tr><td><b>N / P</b></td><td>next / previous transition or fault</td></tr>"
           "<tr><td><b>Home / End</b></td><td>start / end of the run</td></tr>"
           "<tr><td><b>0</b></td><td>reset the zoom</td></tr>"
           "<tr><td><b>Ctrl+Z / Ctrl+Shift+Z</b></td><td>undo / redo a policy edit</td></tr>"
           "<tr><td><b>Ctrl+B</b></td><td>pin the shown run as the reference (A)</td></tr>"
           "<tr><td>click</td><td>move the cursor there</td></tr>"
           "<tr><td>drag</td><td>zoom to the dragged stretch; Ctrl+drag pans; wheel zooms</td></tr>"
           "<tr><td>double-click</td><td>the whole run</td></tr>"
           "<tr><td>Shift+drag</td><td>mark an instance bad (replay) or cut an incident "
           "(Live)</td></tr>"
           "</table><p>The keys work whatever has focus, except while typing in a field.</p>"));
  });
  help->addAction(tr("&Documentation"), this, [this] {
    QMessageBox::information(
        this, tr("Documentation"),
        tr("The console: docs/console.md · KPIs: docs/kpis.md · the CLI: spillway-cli --help. "
           "Installed: /usr/share/doc/spillway/."));
  });
  help->addAction(tr("&About Spillway"), this, [this] {
    QMessageBox::about(
        this, tr("About Spillway"),
        tr("<b>Spillway</b> %1<br>Resilience console for AI gateways: tune breakers, replay "
           "incidents, compare policies.<br>Engine, simulator and console: C++20, Qt %2, "
           "QCustomPlot.")
            .arg(QApplication::applicationVersion(), qVersion()));
  });
}

// Play / pause, speed, loop and the scrubber.
void MainWindow::buildPlayback() {
  refreshTimer_ = new QTimer(this);  // the timelines' one scheduler (schedule())
  refreshTimer_->setSingleShot(true);
  refreshTimer_->setInterval(0);
  connect(refreshTimer_, &QTimer::timeout, this, [this] { refresh(pending_); });
  playTimer_ = new QTimer(this);
  playTimer_->setInterval(50);
  playback_.setSpeed(speed_->currentIndex());
  connect(speed_, &QComboBox::currentIndexChanged, this, [this](int i) { playback_.setSpeed(i); });
  connect(loop_, &QCheckBox::toggled, this, [this](bool on) { playback_.setLoop(on); });
  connect(playTimer_, &QTimer::timeout, this, [this] {
    playback_.advance(millis(50));
    syncCursor();
  });
  connect(play_, &QPushButton::clicked, this, [this] {
    playback_.togglePlay();  // Live: the button is Follow
    if (playback_.playing()) {
      playTimer_->start();
      play_->setText(tr("Pause"));
    }
    syncCursor();
  });
  connect(scrubber_, &QSlider::valueChanged, this, [this](int v) {
    setCursorTime(static_cast<Micros>(v) * 1000000);  // Live: looking back pauses following
  });
  qApp->installEventFilter(new NavigationFilter(this, [this](const NavKey& k) { navigate(k); }));
  connect(plot_, &TimelinePlot::seekRequested, this,
          [this](double s) { setCursorTime(static_cast<Micros>(std::llround(s * 1e6))); });
}

// Run, cancel, the simulated and replayed runs' progress and results, marks on the plot.
void MainWindow::connectRuns() {
  connect(run_, &QPushButton::clicked, this, [this] {
    const QStringList source = scenario_->currentData().toStringList();
    if (source.value(0) == "live") {
      statusBar()->showMessage(
          live_.running() ? tr("Live: it follows the sources as they come; Stop is in the Live "
                               "panel. Pick a scenario or incident to run that instead")
                          : tr("Live stopped: Go live is in the Live panel"));
      return;
    }
    QString error;
    const bool ok = source.value(0) == "incident" ? replayIncident(source.value(1), &error)
                                                  : runScenario(source.value(1), &error);
    if (!ok) statusBar()->showMessage(error);
  });
  connect(cancel_, &QPushButton::clicked, this, [this] {
    controller_.cancel();
    replayer_.cancel();
  });
  connect(&controller_, &RunController::progress, progress_, &QProgressBar::setValue);
  connect(&controller_, &RunController::finished, this, &MainWindow::onFinished);
  connect(&controller_, &RunController::cancelled, this, [this] {
    run_->setEnabled(true);
    cancel_->setEnabled(false);
    statusBar()->showMessage(tr("Cancelled"));
  });
  connect(&controller_, &RunController::failed, this, [this](const QString& m) {
    run_->setEnabled(true);
    cancel_->setEnabled(false);
    statusBar()->showMessage(m);
  });
  // A replayed incident arrives as a simulated comparison does.
  connect(&replayer_, &ReplayController::progress, progress_, &QProgressBar::setValue);
  connect(&replayer_, &ReplayController::finished, this, &MainWindow::onFinished);
  connect(&replayer_, &ReplayController::cancelled, this, [this] {
    whatIfRunning_ = keepPrevious_ = false;
    run_->setEnabled(true);
    cancel_->setEnabled(false);
    statusBar()->showMessage(tr("Replay cancelled"));
  });
  connect(&replayer_, &ReplayController::failed, this, [this](const QString& m) {
    whatIfRunning_ = keepPrevious_ = false;
    run_->setEnabled(true);
    cancel_->setEnabled(false);
    statusBar()->showMessage(m);
  });
  connect(plot_, &TimelinePlot::rangeMarked, this, [this](std::size_t i, double from, double to) {
    QString error;
    if (current_ && current_->mode == view::Mode::Live) {  // Live: the stretch becomes an incident
      if (to < from) std::swap(from, to);
      const QString when = QDateTime::fromMSecsSinceEpoch(
                               (current_->origin + static_cast<Micros>(from * 1e6)) / 1000)
                               .toString("yyyyMMdd-HHmmss");
      bool ok = false;
      const QString name = QInputDialog::getText(
          this, tr("Cut into an incident"),
          tr("Incident name for %1 s of live data:").arg(to - from, 0, 'f', 0), QLineEdit::Normal,
          "live-" + when, &ok);
      if (ok && !cutLive(from, to, name, &error)) QMessageBox::warning(this, tr("Cut"), error);
      // The cut itself runs in the background: its result or refusal is said in the status bar.
      return;
    }
    if (!annotateRange(i, from, to, &error)) statusBar()->showMessage(error);
  });
  connect(tiles_, &InstanceTiles::instanceClicked, this, &MainWindow::focusInstance);
  connect(tiles_, &InstanceTiles::visibilityChanged, this,
          [this] { schedule(Refresh::Recompute); });
  connect(plot_, &TimelinePlot::laneClicked, this, &MainWindow::focusInstance);
}

// Geometry, theme and the last library from the previous session.
void MainWindow::restoreSession() {
  QSettings settings;
  restoreGeometry(settings.value("window/geometry").toByteArray());
  restoreState(settings.value("window/state").toByteArray());
  if (const int savedTheme = settings.value("view/theme", 0).toInt(); savedTheme != 0)
    setTheme(static_cast<Theme>(savedTheme));
  if (!settings.contains("window/geometry") || width() < 1000 || height() < 700) resize(1500, 950);
  if (!settings.contains("window/state")) {
    // First launch: the policy in front, the docks narrow enough for the timelines to lead.
    policyDock_->raise();
    resizeDocks({policyDock_}, {std::max(340, width() / 4)}, Qt::Horizontal);
  }
  // The last library, else the default one when it exists (the first import creates it).
  QString libPath = settings.value("library/path").toString();
  if (libPath.isEmpty() || !LibraryMenu::reachable(libPath))
    libPath = QString::fromStdString(library::defaultLibraryPath());
  if (LibraryMenu::reachable(libPath)) library_->openLibrary(libPath, false);
}

MainWindow::~MainWindow() {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
}

bool MainWindow::runScenario(const QString& nameOrPath, QString* error) {
  try {
    const sim::Scenario sc = app::loadScenario(nameOrPath.toStdString());
    QStringList models;
    for (const sim::ModelSpec& m : sc.models) models << QString::fromStdString(m.name);
    editor_->setModels(models);
    scenarioPanel_->setScenario(sc);
    const int builtin = scenario_->findText(nameOrPath);
    if (builtin >= 0 && builtin < kBuiltinSources)
      scenario_->setCurrentIndex(builtin);  // the picker shows what runs
    else
      rememberFile(QFileInfo(nameOrPath).absoluteFilePath());
    if (builtin < 0 || builtin >= kBuiltinSources)
      showSource("scenario", QFileInfo(nameOrPath).absoluteFilePath(),
                 QFileInfo(nameOrPath).fileName());
    seeds_->setEnabled(true);
    scenarioName_ = builtin >= 0 ? nameOrPath : QFileInfo(nameOrPath).fileName();
    scenarioPath_ = builtin >= 0 ? nameOrPath : QFileInfo(nameOrPath).absoluteFilePath();
    scenarioPolicy_ = sc.policy;
    startRun(withEditorPolicy(sc), scenarioName_);
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
}

bool MainWindow::runEdited(QString* error) {
  try {
    sim::Scenario sc = scenarioPanel_->edited();
    sc.policy = editor_->policy();
    startRun(sc, QString::fromStdString(sc.name) + tr(" (edited)"));
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
}

void MainWindow::startRun(const sim::Scenario& sc, const QString& label) {
  stopLive();          // a simulated run replaces Live mode
  replayer_.cancel();  // and a replay in progress
  keepPrevious_ = false;
  scenarioData_ = sc;
  policy_ = sc.policy;
  previous_.reset();
  anchor_.reset();
  whatIfRunning_ = nextWhatIfCommits_ = false;
  shownLabel_ = tr("scenario %1").arg(label);
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  progress_->setValue(0);
  statusBar()->showMessage(tr("Running %1 without and with protection…").arg(label));
  controller_.start(sc);
}

QStringList MainWindow::recentFiles() const {
  return QSettings().value("files/recent").toStringList();
}

void MainWindow::rememberFile(const QString& path) {
  QStringList recent = recentFiles();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > 8) recent.removeLast();
  QSettings().setValue("files/recent", recent);
  fillRecentMenu();
}

void MainWindow::fillRecentMenu() {
  if (!recentMenu_) return;
  recentMenu_->clear();
  for (const QString& path : recentFiles())
    recentMenu_
        ->addAction(QFileInfo(path).fileName(), this,
                    [this, path] {
                      QString error;
                      if (!runScenario(path, &error))
                        QMessageBox::warning(this, tr("Scenario"), error);
                    })
        ->setToolTip(path);
  recentMenu_->setEnabled(!recentMenu_->isEmpty());
}

void MainWindow::setTheme(Theme t) {
  QSettings().setValue("view/theme", static_cast<int>(t));
  if (t == Theme::System) {
    QApplication::setPalette(QApplication::style()->standardPalette());
    return;
  }
  // Fusion draws a palette faithfully on every platform.
  QApplication::setStyle(QStyleFactory::create("Fusion"));
  QPalette p = QApplication::style()->standardPalette();
  if (t == Theme::Dark) {
    const QColor window(45, 45, 48), base(30, 30, 32), text(225, 225, 225);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, QColor(60, 60, 64));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::Mid, QColor(90, 90, 95));
    p.setColor(QPalette::Highlight, QColor(64, 128, 208));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(120, 120, 120));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(120, 120, 120));
  }
  QApplication::setPalette(p);
}

void MainWindow::focusInstance(std::size_t i) {
  tiles_->setSelected(i);
  schedule(Refresh::Recompute);
}

void MainWindow::schedule(Refresh level) {
  pending_ = std::max(pending_, level);
  refreshTimer_->start();
}

void MainWindow::refresh(Refresh level, bool keepZoom) {
  pending_ = Refresh::None;
  refreshTimer_->stop();
  if (level == Refresh::None) return;
  if (level == Refresh::Replot) {
    plot_->setCursorTime(playback_.cursor());
    return;
  }
  PlotInput in;
  in.keepZoom = keepZoom;
  in.run = current_;
  in.previous = previous_;
  in.focus = tiles_->selected();
  in.policy = policy_;
  if (current_) {
    // Lanes grouped by model, whatever order the tiles are sorted in.
    for (std::size_t i :
         view::displayOrder(current_->protectedRun.timeline, view::TileOrder::Model, 0))
      if (!tiles_->isHidden(i)) in.lanes.push_back(i);
  }
  plot_->show(in, level);
  plot_->setCursorTime(playback_.cursor());
}

void MainWindow::startWhatIf() {
  if (!current_) return;
  if (current_->mode == view::Mode::Live) {
    statusBar()->showMessage(
        tr("Live: the edited policy applies from the next Go live (shadow state starts over)"));
    return;
  }
  if (current_->mode == view::Mode::Replay) {
    policy_ = editor_->policy();
    whatIfCommits_ = std::exchange(nextWhatIfCommits_, false);
    startReplay(current_->incident, true);
    updateContext();
    return;
  }
  sim::Scenario sc = scenarioData_;
  sc.policy = editor_->policy();
  policy_ = sc.policy;
  whatIfRunning_ = true;
  whatIfCommits_ = std::exchange(nextWhatIfCommits_, false);
  updateContext();
  roundTrip_.start();
  statusBar()->showMessage(tr("Re-running with the edited policy…"));
  controller_.start(sc, current_);  // cancels a stale what-if; reuses the baseline run
}

// A what-if: keep the cursor and the focused instance, compare with the reference (an
// annotation's re-replay keeps the policy, so the ghost stays the previous policy's).
void MainWindow::showWhatIf(std::shared_ptr<const Comparison> c) {
  whatIfRunning_ = false;
  current_ = std::move(c);
  if (!keepPrevious_) previous_ = pinned_ ? pinned_ : anchor_;
  if (whatIfCommits_ || keepPrevious_) anchor_ = current_;
  keepPrevious_ = whatIfCommits_ = false;
  run_->setEnabled(true);
  cancel_->setEnabled(false);
  progress_->setValue(100);
  tiles_->setRun(current_, true);  // keeps the focus and the hidden lanes
  refresh(Refresh::Reread, true);
  fillNarrative();
  updateSensitivity();
  startSeeds();
  playback_.extend(current_->protectedRun.timeline.start(), current_->protectedRun.timeline.end());
  syncCursor();
  lastRoundTripMs_ = roundTrip_.elapsed();
  statusBar()->showMessage(tr("Re-run and redrawn in %1 ms").arg(lastRoundTripMs_) + unusedNote());
  emit runShown();
  if (opening_) QTimer::singleShot(0, this, &MainWindow::continueSession);
}

void MainWindow::onFinished(std::shared_ptr<const Comparison> c) {
  if (current_ &&
      current_->mode == view::Mode::Live) {  // a run or replay that ended Live mode: a fresh view
    current_.reset();
    whatIfRunning_ = false;
  }
  if (whatIfRunning_ && current_ && c->mode == current_->mode) {
    showWhatIf(std::move(c));
    return;
  }
  whatIfRunning_ = keepPrevious_ = false;
  current_ = std::move(c);
  anchor_ = current_;
  if (pinned_ &&
      (pinned_->mode != current_->mode || pinned_->scenarioName != current_->scenarioName ||
       pinned_->incident != current_->incident))
    pinned_.reset();  // a reference from another scenario compares nothing
  previous_ = pinned_;
  plot_->setTimeMode(
      current_->mode == view::Mode::Simulation ? TimeTicker::Mode::Offset : TimeTicker::Mode::Clock,
      current_->origin, utcClock_);
  run_->setEnabled(true);
  cancel_->setEnabled(false);
  progress_->setValue(100);
  tiles_->setRun(current_);
  // Focus the instance the first fault hit (its detection under the cursor), else the first.
  std::size_t focus = 0;
  std::string faulted;
  Micros at = 0;
  if (current_->mode == view::Mode::Replay) {
    const auto& faults = current_->protectedRun.replayKpis.faults;
    for (const FaultKpis& f : faults)
      if (f.found) {
        faulted = f.fault.instance;
        at = f.fault.start - current_->origin + (f.score.detected ? f.score.ttd : 0);
        break;
      }
  } else if (!current_->protectedRun.report.faults.empty()) {
    const auto& f = current_->protectedRun.report.faults.front();
    faulted = f.instance;
    at = f.start + f.ttd;
  }
  const auto& insts = current_->protectedRun.timeline.instances();
  for (std::size_t i = 0; i < insts.size(); ++i)
    if (insts[i].name == faulted) focus = i;
  tiles_->setSelected(focus);
  refresh(Refresh::Reread);
  fillNarrative();
  updateSensitivity();
  scrubber_->setRange(0, static_cast<int>(current_->protectedRun.timeline.end() / 1000000));
  startSeeds();
  playback_.show(current_->mode, current_->protectedRun.timeline.start(),
                 current_->protectedRun.timeline.end(), at);
  syncCursor();
  if (current_->mode == view::Mode::Replay)
    statusBar()->showMessage(tr("%1: %L2 recorded calls replayed watching only and under '%3'")
                                 .arg(current_->incident)
                                 .arg(current_->protectedRun.replayKpis.records)
                                 .arg(QString::fromStdString(policy_.name)));
  else
    statusBar()->showMessage(tr("%1: %2 requests simulated twice")
                                 .arg(current_->scenarioName)
                                 .arg(current_->protectedRun.report.originals) +
                             unusedNote());
  emit runShown();
  if (opening_) QTimer::singleShot(0, this, &MainWindow::continueSession);
}

bool MainWindow::openLibrary(const QString& path, QString* error) {
  return library_->openLibrary(path, true, error);
}

bool MainWindow::replayIncident(const QString& name, QString* error) {
  library::Library* lib = library_->library();
  if (!lib) {
    if (error) *error = tr("No library open");
    return false;
  }
  try {
    const library::IncidentInfo info = lib->requireIncident(name.toStdString());
    QStringList models;
    for (const library::InstanceInfo& i : lib->instances(info.name)) {
      const QString m = QString::fromStdString(i.model);
      if (!m.isEmpty() && !models.contains(m)) models << m;
    }
    editor_->setModels(models);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
  policy_ = editor_->policy();
  shownLabel_ = tr("incident %1").arg(name);
  showSource("incident", name, shownLabel_);
  seeds_->setEnabled(false);  // a recording has one history: seeds are the simulator's
  startReplay(name, false);
  return true;
}

// The picker shows the file or incident on screen as its last item (one at a time), so that
// Run runs it again rather than the built-in scenario the picker last showed.
void MainWindow::showSource(const QString& kind, const QString& value, const QString& text) {
  const QStringList data{kind, value};
  while (scenario_->count() > kBuiltinSources) scenario_->removeItem(kBuiltinSources);
  scenario_->addItem(text, data);
  scenario_->setCurrentIndex(kBuiltinSources);
}

void MainWindow::startReplay(const QString& incident, bool whatIf, bool keepPrevious) {
  stopLive();
  controller_.cancel();  // a replay replaces a simulated run in progress
  if (!whatIf) {
    previous_.reset();
    anchor_.reset();
  }
  whatIfRunning_ = whatIf;
  keepPrevious_ = keepPrevious;
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  progress_->setValue(0);
  roundTrip_.start();
  statusBar()->showMessage(
      whatIf ? tr("Replaying %1 with the edited policy…").arg(incident)
             : tr("Replaying %1 watching only and under the policy…").arg(incident));
  replayer_.start(library_->libraryPath(), incident, policy_);
}

bool MainWindow::annotateRange(std::size_t instance, double from, double to, QString* error) {
  if (!current_ || current_->mode != view::Mode::Replay || !library_->library()) {
    if (error)
      *error =
          tr("Shift+drag marks a replayed incident's instance bad: select an "
             "incident in the library first");
    return false;
  }
  const auto& insts = current_->protectedRun.timeline.instances();
  if (instance >= insts.size()) return false;
  if (to < from) std::swap(from, to);
  library::Annotation a;
  a.instance = insts[instance].name;
  a.start = current_->origin + static_cast<Micros>(std::llround(std::max(0.0, from) * 1e6));
  a.end = current_->origin + static_cast<Micros>(std::llround(to * 1e6));
  a.kind = "marked bad";
  a.origin = "operator";
  try {
    library_->library()->annotate(current_->incident.toStdString(), a);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
  library_->refresh();
  statusBar()->showMessage(
      tr("Marked %1 bad from %2 to %3; re-scoring TTD and MTTR…")
          .arg(QString::fromStdString(a.instance), timeRange(a.start, a.end).section(' ', 1)));
  startReplay(current_->incident, true, true);
  return true;
}

ModesDialog* MainWindow::openModes() {
  if (!modes_) modes_ = new ModesDialog(this);
  sim::Scenario sc = scenarioData_;
  sc.policy = policy_;
  modes_->run(sc, seeds_->value());
  modes_->show();
  modes_->raise();
  return modes_;
}

ExportDialog* MainWindow::openExport() {
  auto* d = new ExportDialog(editor_->policy(), this);
  // The bundle's "before" is the policy the edits started from.
  d->setProvenance(editor_->source(), editor_->loaded(),
                   QString::fromStdString(editor_->loaded().name));
  d->setAttribute(Qt::WA_DeleteOnClose);
  d->show();
  return d;
}

SweepDialog* MainWindow::openSweep() {
  if (!sweep_) {
    sweep_ = new SweepDialog(this);
    connect(sweep_, &SweepDialog::candidateChosen, this,
            [this](const Policy& p, const QString& what) {
              loadPolicy(p);
              statusBar()->showMessage(tr("Loaded the sweep's candidate %1").arg(what));
            });
  }
  sweep_->setBasePolicy(editor_->policy());
  // The header says what the grid is around, as the context bar does.
  sweep_->setWindowTitle(
      tr("Sweep — base policy %1 (from %2)").arg(editor_->displayName(), editor_->source()));
  QStringList chosen = library_->selectedIncidents();
  if (chosen.isEmpty() && current_ && current_->mode == view::Mode::Replay)
    chosen << current_->incident;
  sweep_->setLibrary(library_->libraryPath(), library_->shownIncidents(), chosen);
  sweep_->show();
  sweep_->raise();
  return sweep_;
}

void MainWindow::loadPolicy(const Policy& p) {
  editor_->applyPolicy(p, tr("load %1").arg(QString::fromStdString(p.name)));  // what-if follows
}

void MainWindow::setSeeds(int n) {
  seeds_->setValue(n);
}

void MainWindow::startSeeds() {
  ++runGeneration_;
  seedRuns_.reset();
  if (!current_) return;
  fillKpis();
  if (current_->mode == view::Mode::Replay || current_->mode == view::Mode::Live ||
      seeds_->value() < 2)
    return;
  sim::Scenario sc = scenarioData_;
  sc.policy = policy_;
  const auto n = static_cast<std::uint32_t>(seeds_->value());
  seedGeneration_ = runGeneration_;
  // A stale job runs to its end (a few seconds at most) and its result is dropped.
  seedJob_->setFuture(QtConcurrent::run([sc, n] { return sim::runSeeds(sc, n); }));
  statusBar()->showMessage(tr("Running %1 seeds for the KPI intervals…").arg(n));
}

void MainWindow::setCursorTime(Micros t) {
  playback_.seek(t);
  syncCursor();
}

void MainWindow::syncCursor() {
  if (!playback_.playing() && playTimer_->isActive()) {
    playTimer_->stop();
    play_->setText(tr("Play"));
  }
  tiles_->setCursorTime(playback_.cursor());
  schedule(Refresh::Replot);
  const QSignalBlocker block(scrubber_);
  scrubber_->setValue(static_cast<int>(playback_.cursor() / 1000000));
  updateTimeLabel();
}

void MainWindow::step(int ticks) {
  setCursorTime(playback_.cursor() + ticks * seconds(1));
}

void MainWindow::updateTimeLabel() {
  const Micros end = current_ ? current_->protectedRun.timeline.end() : 0;
  const Micros cursor = playback_.cursor();
  if (current_ && current_->mode == view::Mode::Live) {  // the gateway's clock
    time_->setText(QString::fromStdString(view::formatClock(current_->origin + cursor, utcClock_)) +
                   (utcClock_ ? " UTC" : "") +
                   (playback_.following() ? tr("  LIVE") : tr("  (paused)")));
    return;
  }
  QString text = QString::fromStdString(view::formatOffset(cursor)) + " / " +
                 QString::fromStdString(view::formatOffset(end));
  if (current_ && current_->mode == view::Mode::Replay)  // a recording: its wall clock too
    text = QString::fromStdString(view::formatClock(current_->origin + cursor, utcClock_)) +
           (utcClock_ ? " UTC  " : "  ") + text;
  time_->setText(text);
}

bool MainWindow::startLive(LiveConfig cfg, QString* error) {
  if (cfg.otlp.isEmpty() && cfg.tailFile.isEmpty() && !cfg.prometheus) {
    if (error) *error = tr("Live: choose a source (OTLP receiver, access log or Prometheus)");
    return false;
  }
  if (!cfg.policy) cfg.policy = editor_->policy();
  controller_.cancel();
  replayer_.cancel();
  whatIfRunning_ = keepPrevious_ = false;
  playTimer_->stop();
  previous_.reset();
  current_.reset();
  pendingLive_.reset();
  pendingStatus_ = {};
  liveLatencies_.clear();
  playback_.clear();
  tiles_->clear(tr("Waiting for live data: no instance has reported yet"));
  tiles_->setWouldOpenHold(cfg.policy->breaker.open.maxDuration);
  policy_ = *cfg.policy;
  shownLabel_ = liveLabel(cfg);
  showSource("live", {}, tr("live (shadow mode)"));
  seeds_->setEnabled(false);
  liveLibrary_ = cfg.recordLibrary;
  liveRecording_ = cfg.recordLibrary.isEmpty() ? QString() : cfg.recording;
  if (!cfg.recordLibrary.isEmpty() && library_->libraryPath() != cfg.recordLibrary) {
    // The dock shows the library the recording goes to (created or migrated here, on the UI
    // thread's connection, before the worker's recorder opens its own).
    QString message;
    if (!library_->openLibrary(cfg.recordLibrary, true, &message)) {
      if (error) *error = message;
      return false;
    }
  }
  livePanel_->setConfig(cfg);
  livePanel_->clearVerdicts();
  play_->setText(tr("Follow"));
  statusBar()->showMessage(tr("Going live…"));
  live_.start(cfg);
  updateContext();
  return true;
}

// What the context bar names while live: the sources followed, in shadow mode.
QString MainWindow::liveLabel(const LiveConfig& cfg) {
  QStringList from;
  if (!cfg.otlp.isEmpty()) from << tr("OTLP on %1").arg(cfg.otlp);
  if (!cfg.tailFile.isEmpty())
    from << tr("%1 log %2")
                .arg(QString::fromUtf8(formats::formatName(cfg.tailFormat).data()),
                     QFileInfo(cfg.tailFile).fileName());
  if (cfg.prometheus) from << tr("Prometheus %1").arg(QString::fromStdString(cfg.prometheus->url));
  return tr("live (shadow mode): %1").arg(from.join(", "));
}

bool MainWindow::cutLive(double from, double to, const QString& name, QString* error) {
  if (!current_ || current_->mode != view::Mode::Live || liveRecording_.isEmpty()) {
    if (error) *error = tr("Cutting needs Live mode recording into the library (Live dock)");
    return false;
  }
  if (cutJob_.running()) {
    if (error) *error = tr("A cut is still running");
    return false;
  }
  if (to < from) std::swap(from, to);
  QString message;
  if (library_->libraryPath() != liveLibrary_ &&
      !library_->openLibrary(liveLibrary_, true, &message)) {
    if (error) *error = message;
    return false;
  }
  const Micros a = current_->origin + static_cast<Micros>(std::llround(from * 1e6));
  const Micros b = current_->origin + static_cast<Micros>(std::llround(to * 1e6));
  statusBar()->showMessage(tr("Cutting %1…").arg(name.trimmed()));
  if (!live_.running()) {
    startCut(a, b, name.trimmed());
    return true;
  }
  live_.flushRecording([this, a, b, name = name.trimmed()](bool ok, const QString& why) {
    if (ok)
      startCut(a, b, name);
    else
      cutFailed(tr("Cut: %1").arg(why));
  });
  return true;
}

// The cut copies the recording's blocks into a new incident on a worker, with its own library
// connection (SQLite's WAL lets the recorder go on writing meanwhile).
void MainWindow::startCut(Micros from, Micros to, const QString& name) {
  cutJob_.start([this, lib = liveLibrary_.toStdString(), rec = liveRecording_.toStdString(), from,
                 to, name = name.toStdString()](const BackgroundJob::Context& job) {
    try {
      library::Library l(lib, library::OpenOptions{.mustExist = true});
      const library::CutResult r = l.cutRecording(rec, from, to, name);
      job.deliver([this, r] {
        library_->refresh();
        statusBar()->showMessage(tr("Cut %L1 %2 (%3) into the incident '%4'; select it in the "
                                    "Library to replay and tune")
                                     .arg(r.records)
                                     .arg(QString::fromStdString(r.kind))
                                     .arg(timeRange(r.from, r.to))
                                     .arg(QString::fromStdString(r.incident)));
        emit liveCut(QString::fromStdString(r.incident), static_cast<qulonglong>(r.records));
      });
    } catch (const std::exception& e) {
      job.deliver([this, msg = QString::fromUtf8(e.what())] { cutFailed(msg); });
    }
  });
}

void MainWindow::cutFailed(const QString& message) {
  statusBar()->showMessage(message);
  emit liveCutFailed(message);
}

void MainWindow::closeEvent(QCloseEvent* e) {
  if (!live_.running() && !live_.closing()) {
    QMainWindow::closeEvent(e);
    return;
  }
  stopLive();
  e->ignore();
  hide();
  connect(&live_, &LiveController::closed, this, &QWidget::close, Qt::UniqueConnection);
}

void MainWindow::stopLive() {
  if (!live_.running()) return;
  live_.stop();
  livePanel_->setRunning(false);
  play_->setText(tr("Play"));
  statusBar()->showMessage(tr("Live stopped; the last view stays on screen"));
}

// Snapshots come at the session's refresh rate; should drawing fall behind, only the newest
// is drawn (the skipped ones' verdicts and latency stamps are merged into it).
void MainWindow::onLiveSnapshot(std::shared_ptr<const Comparison> c, const LiveStatus& st) {
  pendingLive_ = std::move(c);
  const LiveStatus merged = pendingStatus_;
  pendingStatus_ = st;
  pendingStatus_.verdicts = merged.verdicts + st.verdicts;
  pendingStatus_.errors = merged.errors + st.errors;
  if (merged.oldestNewDataNs != 0 &&
      (st.oldestNewDataNs == 0 || merged.oldestNewDataNs < st.oldestNewDataNs))
    pendingStatus_.oldestNewDataNs = merged.oldestNewDataNs;
  if (liveApplyScheduled_) return;
  liveApplyScheduled_ = true;
  QTimer::singleShot(0, this, &MainWindow::applyLive);
}

void MainWindow::applyLive() {
  liveApplyScheduled_ = false;
  if (!pendingLive_) return;
  const bool first = !current_ || current_->mode != view::Mode::Live;
  const std::size_t before = current_ ? current_->protectedRun.timeline.instances().size() : 0;
  current_ = std::move(pendingLive_);
  pendingLive_.reset();
  const LiveStatus st = pendingStatus_;
  pendingStatus_ = {};
  const view::RunTimeline& tl = current_->protectedRun.timeline;
  tiles_->setRun(current_, !first);
  if (first || tl.instances().size() != before) {
    // Focus the worst instance when one appears; keep the user's choice after that.
    if (first || tiles_->selected() >= tl.instances().size()) tiles_->setSelected(0);
  }
  {
    const QSignalBlocker block(scrubber_);
    scrubber_->setRange(static_cast<int>(tl.start() / 1000000),
                        static_cast<int>(tl.end() / 1000000));
  }
  if (first) {
    plot_->setTimeMode(TimeTicker::Mode::Clock, current_->origin, utcClock_);
    playback_.show(view::Mode::Live, tl.start(), tl.end());
  } else
    playback_.extend(tl.start(), tl.end());
  syncCursor();
  tiles_->repaint();  // the tiles are what the latency is measured to
  double latencyMs = -1;
  if (st.oldestNewDataNs != 0) {
    latencyMs = static_cast<double>(steadyNowNs() - st.oldestNewDataNs) / 1e6;
    liveLatencies_.push_back(latencyMs);
  }
  refresh(Refresh::Reread);
  fillLiveKpis(st);
  livePanel_->showStatus(st, latencyMs);
  if (!st.verdicts.isEmpty()) statusBar()->showMessage(st.verdicts.back());
  emit liveShown();
}

void MainWindow::fillLiveKpis(const LiveStatus& st) {
  const view::LiveKpis k = view::liveKpis(current_->protectedRun.timeline, liveLatencies_);
  auto share = [](std::optional<double> x) -> QString {
    return x ? QString::number(*x * 100, 'f', 1) + " %" : "n/a";
  };
  auto ms = [](std::optional<double> x) -> QString {
    return x ? QString::number(*x, 'f', 0) + " ms" : "n/a";
  };
  const std::vector<std::pair<QString, QString>> rows = {
      {tr("calls in view (last %1 s)").arg(k.shownSeconds, 0, 'f', 0),
       QString("%L1").arg(k.calls, 0, 'f', 0)},
      {tr("calls per second (last 10 s)"), QString::number(st.callsPerSecond, 'f', 0)},
      {tr("failures (by the policy's classification)"), share(k.failureShare)},
      {tr("slow calls (over each breaker's threshold)"), share(k.slowShare)},
      {tr("would-open verdicts in view"), QString::number(k.wouldOpen)},
      {tr("instances that would open"), QString("%1 of %2").arg(k.instancesOpen).arg(k.instances)},
      {tr("arrival → tiles (median, last 200)"), ms(k.drawMedianMs)},
      {tr("arrival → tiles (worst, last 200)"), ms(k.drawWorstMs)},
      {tr("data too late for its second"), QString("%L1").arg(st.late)},
  };
  kpis_->setHorizontalHeaderLabels(
      {tr("KPI"), tr("live (shadow mode)"), QString(), QString(), QString()});
  for (int col = 2; col < 5; ++col) kpis_->setColumnHidden(col, true);  // nothing to compare
  kpis_->setRowCount(static_cast<int>(rows.size()));
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    kpis_->setItem(i, 0, new QTableWidgetItem(rows[static_cast<std::size_t>(i)].first));
    kpis_->setItem(i, 1, new QTableWidgetItem(rows[static_cast<std::size_t>(i)].second));
    for (int col = 2; col < 5; ++col) kpis_->setItem(i, col, new QTableWidgetItem());
  }
  kpis_->resizeColumnToContents(1);
  chart_->setRows({});
}

}  // namespace spillway::console
