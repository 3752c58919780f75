// The console's policy workflow: which policy is in effect and where it came from, what a
// comparison is against (the pinned reference or the last committed policy), the KPI panel
// that leads with the decision, and the window-wide navigation keys.
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QUndoStack>

#include "compare_dialog.hpp"
#include "headline_strip.hpp"
#include "instance_tiles.hpp"
#include "kpi_chart.hpp"
#include "kpi_text.hpp"
#include "library_panel.hpp"
#include "main_window.hpp"
#include "narrative_panel.hpp"
#include "navigation.hpp"
#include "policy_editor.hpp"
#include "sensitivity_panel.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/sim/policy_match.hpp"
#include "spillway/view/headline.hpp"
#include "spillway/view/replay_timeline.hpp"
#include "spillway/view/time_format.hpp"
#include "timeline_plot.hpp"

namespace spillway::console {
namespace {

QString policyName(const Policy& p) {
  return QString::fromStdString(p.name.empty() ? "policy" : p.name);
}

// At most `n` changes, then how many more.
QString someChanges(const std::vector<std::string>& lines, int n) {
  QStringList out;
  for (int i = 0; i < static_cast<int>(lines.size()) && i < n; ++i)
    out << QString::fromStdString(lines[static_cast<std::size_t>(i)]).toHtmlEscaped();
  if (static_cast<int>(lines.size()) > n)
    out << QObject::tr("… %1 more").arg(static_cast<int>(lines.size()) - n);
  return out.join("; ");
}

view::HeadlineTargets loadTargets() {
  QSettings settings;
  if (!settings.contains("targets/set")) return view::HeadlineTargets::defaults();
  view::HeadlineTargets t;
  for (const auto& [key, label] : view::headlineKeys()) {
    const QVariant v = settings.value("targets/" + QString::fromStdString(key));
    if (v.isValid()) t.bounds[key] = v.toDouble();
  }
  return t;
}

void saveTargets(const view::HeadlineTargets& t) {
  QSettings settings;
  settings.remove("targets");
  settings.setValue("targets/set", true);
  for (const auto& [key, bound] : t.bounds)
    settings.setValue("targets/" + QString::fromStdString(key), bound);
}

// How the editor's header states a headline verdict, up to the target's value.
std::string verdictWord(view::HeadlineTile::Verdict v) {
  switch (v) {
    case view::HeadlineTile::Verdict::Pass:
      return " (meets ";
    case view::HeadlineTile::Verdict::Unsure:
      return " (seeds straddle ";
    case view::HeadlineTile::Verdict::NoData:
      return " (target ";
    default:
      return " (misses ";
  }
}

// A row with its own bound (an SLA class's target) says whether it meets it: the mark after
// its value, and the value's colour.
struct TargetCell {
  QString mark;
  QColor colour;
};
TargetCell targetCell(const view::KpiRow& r) {
  if (!r.target) return {};
  const QString bound = kpiValue(r.target, r.unit);
  switch (view::judgeTarget(r.current, r.currentInterval, r.target, r.higherIsBetter)) {
    case view::HeadlineTile::Verdict::Pass:
      return {QObject::tr("  ✓ meets %1").arg(bound), QColor(30, 130, 60)};
    case view::HeadlineTile::Verdict::Fail:
      return {QObject::tr("  ✗ misses %1").arg(bound), QColor(190, 40, 40)};
    case view::HeadlineTile::Verdict::Unsure:
      return {QObject::tr("  ? seeds straddle %1").arg(bound), QColor(200, 100, 0)};
    default:
      return {};
  }
}

}  // namespace

// Policy: undo / redo, revert, the scenario's own policy, the A/B reference.
void MainWindow::buildPolicyMenu() {
  QMenu* menu = menuBar()->addMenu(tr("&Policy"));
  QAction* undo = editor_->undoStack()->createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  QAction* redo = editor_->undoStack()->createRedoAction(this, tr("&Redo"));
  redo->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence::Redo});
  menu->addAction(undo);
  menu->addAction(redo);
  menu->addAction(tr("Re&vert to loaded"), editor_, &PolicyEditor::revert);
  menu->addAction(tr("Use the &scenario's policy"), this, [this] { useScenarioPolicy(); });
  menu->addSeparator();
  menu->addAction(tr("&Pin as reference (A)"), QKeySequence(Qt::CTRL | Qt::Key_B), this,
                  &MainWindow::pinReference);
  menu->addAction(tr("U&npin reference"), this, &MainWindow::unpinReference);
  connect(editor_, &PolicyEditor::committed, this, &MainWindow::onCommitted);
  connect(editor_, &PolicyEditor::stateChanged, this, &MainWindow::updateContext);
  headline_->setTargets(loadTargets());
  connect(headline_, &HeadlineStrip::targetsChanged, this, [this](const view::HeadlineTargets& t) {
    saveTargets(t);
    if (current_ && current_->mode != view::Mode::Live) fillKpis();
  });
}

// The editor's policy survives runs and scenario switches; it follows the scenario only while
// it holds an unedited policy that came with a scenario or the build (never a file's).
sim::Scenario MainWindow::withEditorPolicy(sim::Scenario sc) {
  const QString source = editor_->source();
  if (!editor_->isModified() && !source.startsWith(tr("file")))
    editor_->loadPolicy(sc.policy, tr("scenario %1").arg(scenarioName_));
  else if (!samePolicy(sc.policy, editor_->policy()))
    statusBar()->showMessage(tr("Kept your policy %1; Policy → Use the scenario's policy "
                                "switches to %2's own")
                                 .arg(editor_->displayName(), scenarioName_));
  sc.policy = editor_->policy();
  return sc;
}

bool MainWindow::useScenarioPolicy(bool ask) {
  if (scenarioName_.isEmpty()) {
    statusBar()->showMessage(tr("No scenario loaded: its policy is not known"));
    return false;
  }
  if (ask && editor_->isModified() &&
      QMessageBox::question(this, tr("Use the scenario's policy"),
                            tr("Discard the edits to %1 and use %2's own policy?")
                                .arg(editor_->displayName(), scenarioName_)) != QMessageBox::Yes)
    return false;
  editor_->loadPolicy(scenarioPolicy_, tr("scenario %1").arg(scenarioName_));
  emit editor_->policyEdited(editor_->policy());
  onCommitted();
  return true;
}

// A committed edit: the run that shows it becomes the anchor later edits are compared with.
void MainWindow::onCommitted() {
  const bool shownIsThis = samePolicy(policy_, editor_->policy());
  if (shownIsThis && whatIfRunning_ && !whatIfTimer_->isActive()) {
    whatIfCommits_ = true;  // the what-if under way is this very policy
  } else if (shownIsThis && !whatIfRunning_ && !whatIfTimer_->isActive() && current_) {
    anchor_ = current_;  // the drag's last preview already shows it
  } else {
    nextWhatIfCommits_ = true;
    if (!whatIfTimer_->isActive()) whatIfTimer_->start();
  }
  updateContext();
}

void MainWindow::pinReference() {
  if (!current_ || current_->mode == view::Mode::Live) {
    statusBar()->showMessage(tr("Pin needs a simulated or replayed run on screen"));
    return;
  }
  pinned_ = current_;
  pinnedPolicy_ = policy_;
  previous_ = pinned_;
  fillKpis();
  schedule(Refresh::Reread);
  updateContext();
  statusBar()->showMessage(tr("Pinned %1 as the reference (A): later runs are compared with it")
                               .arg(policyName(policy_)));
}

void MainWindow::unpinReference() {
  if (!pinned_) return;
  pinned_.reset();
  previous_ = anchor_ == current_ ? nullptr : anchor_;
  if (current_) fillKpis();
  schedule(Refresh::Reread);
  updateContext();
}

bool MainWindow::stale() const {
  if (!current_ || current_->mode == view::Mode::Live) return false;
  return whatIfRunning_ || whatIfTimer_->isActive() || !samePolicy(policy_, editor_->policy());
}

QString MainWindow::shownSource() const {
  return shownLabel_.isEmpty() ? tr("nothing run yet") : shownLabel_;
}

QString MainWindow::contextText() const {
  QString text = "<b>" + shownSource().toHtmlEscaped() + "</b>  ·  " + tr("policy") + " <b>" +
                 editor_->displayName().toHtmlEscaped() + "</b> (" +
                 tr("from %1").arg(editor_->source().toHtmlEscaped()) + ")";
  const auto changes = policyChanges(editor_->loaded(), editor_->policy());
  if (!changes.empty())
    text += "  ·  " + tr("%n change(s) vs loaded: ", "", static_cast<int>(changes.size())) +
            someChanges(changes, 3);
  if (pinned_)
    text += "  ·  " + tr("reference <b>A</b> = %1").arg(policyName(pinnedPolicy_).toHtmlEscaped());
  if (stale()) text += "  ·  <i>" + tr("re-running with the edited policy…") + "</i>";
  if (const QStringList names = unmatchedNames(); !names.isEmpty())
    text += "  ·  <span style='color:#c62828'>" +
            tr("⚠ %n policy name(s) the scenario lacks (hover)", "", names.size()) + "</span>";
  return text;
}

// The editor's policy names models or instances the shown scenario lacks: that part of it
// is dropped without a word (a typo in a backup's name removes the backup).
QStringList MainWindow::unmatchedNames() const {
  QStringList out;
  if (!current_ || current_->mode != view::Mode::Simulation) return out;
  for (const std::string& w : sim::unmatchedPolicyNames(scenarioData_, editor_->policy()))
    out << QString::fromStdString(w);
  return out;
}

// For the status bar after a run: the first name the scenario lacks, in full.
QString MainWindow::unusedNote() const {
  const QStringList names = unmatchedNames();
  if (names.isEmpty()) return {};
  return tr("  ·  ⚠ unused by this scenario: %1").arg(names.front()) +
         (names.size() > 1 ? tr(" (+%1 more: hover the context bar)").arg(names.size() - 1)
                           : QString());
}

void MainWindow::updateContext() {
  context_->setText(contextText());
  const QStringList unmatched = unmatchedNames();
  context_->setToolTip(
      unmatched.isEmpty() ? QString() : tr("Unused by this scenario:\n") + unmatched.join("\n"));
  setWindowTitle(shownSource() + " · " + editor_->displayName() + tr(" — Spillway"));
  const bool greyed = stale();
  kpis_->setEnabled(!greyed);
  headline_->setEnabled(!greyed);
  QString ab;
  if (pinned_ && current_) {
    const auto d = policyChanges(pinnedPolicy_, policy_);
    ab = tr("A → B (shown): ") + (d.empty() ? tr("same policy") : someChanges(d, 6));
  }
  abDiff_->setText(ab);
  abDiff_->setVisible(!ab.isEmpty());
}

void MainWindow::fillKpis() {
  const bool replay = current_->mode == view::Mode::Replay;
  const bool comparable = previous_ && previous_->mode == current_->mode;
  auto rows = replay ? view::replayKpiRows(
                           current_->protectedRun.replayKpis, &current_->baseline.replayKpis,
                           comparable ? &previous_->protectedRun.replayKpis : nullptr)
                     : view::kpiRows(current_->protectedRun.report, &current_->baseline.report,
                                     comparable ? &previous_->protectedRun.report : nullptr);
  if (!replay && seedRuns_) rows = view::withIntervals(std::move(rows), *seedRuns_);
  const QString over =
      !replay && seedRuns_
          ? tr("  [95 %, %1 seeds]").arg(static_cast<qulonglong>(seedRuns_->protectedRuns.size()))
          : QString();
  kpis_->setHorizontalHeaderLabels({tr("KPI"),
                                    replay ? tr("recorded") : tr("baseline (off)") + over,
                                    replay ? tr("under policy") : tr("protected (on)") + over,
                                    replay ? tr("Δ recorded") : tr("Δ baseline"),
                                    pinned_ ? tr("Δ reference A") : tr("Δ previous policy")});
  kpis_->horizontalHeaderItem(1)->setToolTip(
      replay ? tr("The recording replayed with every breaker watching only") : QString());
  chart_->setRows(rows);
  fillHeadline(rows);
  fillKpiTable(rows);
  updateContext();
}

void MainWindow::fillHeadline(const std::vector<view::KpiRow>& rows) {
  headline_->setTiles(view::headline(rows, headline_->targets()),
                      pinned_ ? tr("A") : tr("previous"));
  std::vector<std::string> lines;
  for (const view::HeadlineTile& t : headline_->tiles())
    lines.push_back(t.label + ": " + kpiValue(t.value, t.unit).toStdString() +
                    (t.target
                         ? verdictWord(t.verdict) + kpiValue(t.target, t.unit).toStdString() + ")"
                         : std::string()));
  editor_->setHeaderKpis(lines);
}

// Totals first; the per-client availabilities under one collapsible group row at the end.
void MainWindow::fillKpiTable(const std::vector<view::KpiRow>& rows) {
  for (int col = 2; col < 5; ++col) kpis_->setColumnHidden(col, false);  // (hidden while live)
  std::vector<const view::KpiRow*> order;
  for (const view::KpiRow& r : rows)
    if (!r.perClient) order.push_back(&r);
  const std::size_t totals = order.size();
  for (const view::KpiRow& r : rows)
    if (r.perClient) order.push_back(&r);
  const bool group = order.size() > totals;
  kpis_->setRowCount(static_cast<int>(order.size() + (group ? 1 : 0)));
  auto cell = [this](int row, int col, const QString& text, const QColor& fg = {}) {
    auto* item = new QTableWidgetItem(text);
    if (fg.isValid()) item->setForeground(fg);
    kpis_->setItem(row, col, item);
  };
  int row = 0;
  for (std::size_t i = 0; i < order.size(); ++i, ++row) {
    if (group && i == totals) {
      const bool open = kpis_->property("clientsOpen").toBool();
      cell(row, 0,
           (open ? "▾ " : "▸ ") + tr("availability per client (%1)").arg(order.size() - totals));
      kpis_->item(row, 0)->setData(Qt::UserRole, "clients");
      for (int c = 1; c < 5; ++c) cell(row, c, QString());
      ++row;
    }
    const view::KpiRow& r = *order[i];
    cell(row, 0, QString::fromStdString(r.name));
    cell(row, 1, kpiWithInterval(r.baseline, r.baselineInterval, r.unit));
    const TargetCell target = targetCell(r);
    cell(row, 2, kpiWithInterval(r.current, r.currentInterval, r.unit) + target.mark,
         target.colour);
    const auto d = r.deltaBaseline();
    cell(row, 3, d ? kpiDelta(*d, r.unit) : "n/a",
         d ? deltaColor(*d, r.unit, r.higherIsBetter) : QColor());
    const auto dp = r.deltaPrevious();
    cell(row, 4, dp ? kpiDelta(*dp, r.unit) : "—",
         dp ? deltaColor(*dp, r.unit, r.higherIsBetter) : QColor());
    kpis_->setRowHidden(row, r.perClient && !kpis_->property("clientsOpen").toBool());
  }
}

// The run told: the simulated scenario's faults by strength, a recording on its wall clock.
void MainWindow::fillNarrative() {
  Narrative n =
      narrativeOf(*current_, current_->mode == view::Mode::Simulation ? &scenarioData_ : nullptr);
  n.clock.utc = utcClock_;
  narrative_->setClock(n.clock);
  narrative_->setLines(std::move(n.lines));
}

bool MainWindow::showPanel(const QString& name) {
  for (int i = 0; i < kpiTabs_->count(); ++i)
    if (kpiTabs_->tabText(i).section(' ', 0, 0).toLower() == name.toLower()) {
      kpiTabs_->setCurrentIndex(i);
      return true;
    }
  return false;
}

CompareDialog* MainWindow::openCompare() {
  if (!compare_) compare_ = new CompareDialog(this);
  if (!current_ || current_->mode == view::Mode::Live) {
    statusBar()->showMessage(tr("Compare needs a simulated run or a replayed incident on screen"));
    return compare_;
  }
  std::vector<CompareDialog::Entry> entries{
      {tr("editing: %1").arg(editor_->displayName()), editor_->policy()}};
  if (pinned_)
    entries.push_back({tr("reference A: %1").arg(policyName(pinnedPolicy_)), pinnedPolicy_});
  if (editor_->isModified())
    entries.push_back({tr("as loaded: %1").arg(policyName(editor_->loaded())), editor_->loaded()});
  if (current_->mode == view::Mode::Replay) {
    compare_->setIncident(library_->libraryPath(), current_->incident);
  } else {
    compare_->setScenario(scenarioData_);
  }
  compare_->setTargets(headline_->targets());
  compare_->setPolicies(std::move(entries));
  compare_->show();
  compare_->raise();
  compare_->start();
  return compare_;
}

// The sensitivity runs dozens of simulations: only for the tab on screen, and again when the
// tab comes back to a newer run.
void MainWindow::updateSensitivity() {
  sensitivityDue_ = kpiTabs_->currentWidget() != sensitivity_;
  if (sensitivityDue_ || !current_ || current_->mode == view::Mode::Live) return;
  if (current_->mode == view::Mode::Replay)
    sensitivity_->computeIncident(library_->libraryPath(), current_->incident, policy_);
  else
    sensitivity_->compute(scenarioData_, policy_);
}

void MainWindow::setUtcClock(bool utc) {
  utcClock_ = utc;
  QSettings().setValue("view/utc", utc);
  if (current_ && current_->mode != view::Mode::Live) fillNarrative();
  if (current_ && current_->mode != view::Mode::Simulation)
    plot_->setTimeMode(TimeTicker::Mode::Clock, current_->origin, utc);
  updateTimeLabel();
}

std::vector<Micros> MainWindow::marks() const {
  std::vector<Micros> out;
  if (!current_) return out;
  const auto& insts = current_->protectedRun.timeline.instances();
  const std::size_t focus = tiles_->selected();
  if (focus >= insts.size()) return out;
  for (const view::StateBand& b : insts[focus].bands)
    if (b.start > current_->protectedRun.timeline.start()) out.push_back(b.start);
  for (const view::InstanceTimeline& it : insts)
    for (const view::Marker& m : it.markers)
      if (m.kind != view::Marker::Kind::WouldOpen) out.push_back(m.at);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void MainWindow::navigate(const NavKey& key) {
  using A = NavKey::Action;
  const Micros at = playback_.cursor();
  switch (key.action) {
    case A::PlayPause:
      play_->click();
      return;
    case A::Step:
      step(key.seconds);
      return;
    case A::Home:
      setCursorTime(current_ ? current_->protectedRun.timeline.start() : 0);
      return;
    case A::End:
      setCursorTime(current_ ? current_->protectedRun.timeline.end() : 0);
      return;
    case A::ResetZoom:
      plot_->resetZoom();
      return;
    case A::Next:
    case A::Previous: {
      const auto all = marks();
      // Half a second of slack, so a mark the cursor sits on is not found again.
      if (key.action == A::Next) {
        const auto it = std::upper_bound(all.begin(), all.end(), at + millis(500));
        if (it != all.end()) setCursorTime(*it);
      } else {
        const auto it = std::lower_bound(all.begin(), all.end(), at - millis(500));
        if (it != all.begin()) setCursorTime(*std::prev(it));
      }
      return;
    }
  }
}

}  // namespace spillway::console
