// Sessions: the view on screen saved to a file and reopened (session.hpp).
#include <QMessageBox>
#include <QStatusBar>

#include "headline_strip.hpp"
#include "instance_tiles.hpp"
#include "library_panel.hpp"
#include "main_window.hpp"
#include "policy_editor.hpp"
#include "session.hpp"
#include "spillway/policy_yaml.hpp"
#include "timeline_plot.hpp"

namespace spillway::console {

bool MainWindow::saveSession(const QString& path, QString* error) {
  if (!current_ || current_->mode == view::Mode::Live) {
    if (error) *error = tr("Save session needs a simulated run or a replayed incident on screen");
    return false;
  }
  Session s;
  if (current_->mode == view::Mode::Replay) {
    s.library = library_->libraryPath();
    s.incident = current_->incident;
  } else {
    s.scenario = scenarioPath_;
  }
  s.policy = policyToYaml(editor_->policy());
  s.loaded = policyToYaml(editor_->loaded());
  s.policySource = editor_->source();
  if (pinned_) s.reference = policyToYaml(pinnedPolicy_);
  s.cursor = static_cast<double>(playback_.cursor()) / 1e6;
  s.zoom = std::make_pair(plot_->timeRange().lower, plot_->timeRange().upper);
  const auto& insts = current_->protectedRun.timeline.instances();
  if (tiles_->selected() < insts.size())
    s.focus = QString::fromStdString(insts[tiles_->selected()].name);
  s.targets = headline_->targets().bounds;
  s.seeds = seeds_->value();
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(writeSession(s)) < 0 ||
      !f.flush()) {
    if (error) *error = tr("Could not write %1: %2").arg(path, f.errorString());
    return false;
  }
  return true;
}

bool MainWindow::openSession(const QString& path, QString* error) {
  try {
    auto s = std::make_shared<Session>(readSession(path));
    if (!s->incident.isEmpty() && !openLibrary(s->library, error)) return false;
    opening_ = std::move(s);
    openingStep_ = 0;
    view::HeadlineTargets t;
    t.bounds = opening_->targets;
    headline_->setTargets(t);
    seeds_->setValue(opening_->seeds);
    unpinReference();
    const Session& o = *opening_;
    editor_->loadPolicy(parsePolicy(o.loaded, path.toStdString()), o.policySource);
    // With a reference, the first run is the reference's: pinned, then the edited policy.
    editor_->setPolicy(parsePolicy(o.reference ? *o.reference : o.policy, path.toStdString()));
    const bool started =
        o.incident.isEmpty() ? runScenario(o.scenario, error) : replayIncident(o.incident, error);
    if (!started) opening_.reset();
    return started;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    opening_.reset();
    return false;
  }
}

// Called when a run is shown while a session opens: pin the reference and what-if the edited
// policy, then put the view back.
void MainWindow::continueSession() {
  if (!opening_) return;
  const Session& o = *opening_;
  if (openingStep_ == 0 && o.reference) {
    openingStep_ = 1;
    pinReference();
    editor_->setPolicy(parsePolicy(o.policy, "session"));
    nextWhatIfCommits_ = true;
    whatIfTimer_->start();
    return;
  }
  restoreView();
}

void MainWindow::restoreView() {
  const Session o = *opening_;
  opening_.reset();
  const auto& insts = current_->protectedRun.timeline.instances();
  for (std::size_t i = 0; i < insts.size(); ++i)
    if (QString::fromStdString(insts[i].name) == o.focus) focusInstance(i);
  refresh(Refresh::Recompute, true);
  if (o.zoom) plot_->zoomTo(o.zoom->first, o.zoom->second);
  setCursorTime(static_cast<Micros>(std::llround(o.cursor * 1e6)));
  updateContext();
  statusBar()->showMessage(tr("Session restored"));
  emit sessionRestored();
}

}  // namespace spillway::console
