#pragma once
// Runs a scenario twice — protection off (baseline) and on — off the UI thread, with progress
// and cancel, and hands back both runs' timelines and reports. A new start cancels a stale run.
#include <QObject>
#include <QString>

#include <memory>

#include "background_job.hpp"
#include "spillway/dialect_replay.hpp"
#include "spillway/sim/scenario.hpp"
#include "spillway/view/playback.hpp"
#include "spillway/view/timeline.hpp"

namespace spillway::console {

struct RunResult {
  sim::RunReport report;  // a simulated run's KPIs
  view::RunTimeline timeline;
  std::vector<Event> events;
  ReplayKpis replayKpis;  // a replayed incident's KPIs (replay_controller.hpp)
};

// Two runs of one scenario — or two replays of one recorded incident (Mode::Replay): the baseline
// watches only (METRICS_ONLY), the protected one applies the policy.
struct Comparison {
  QString scenarioName;
  RunResult baseline, protectedRun;
  // A simulated run, a replayed incident, or Live mode (live_session.hpp): protectedRun is
  // then the rolling shadow-mode timeline, with no baseline run and no report.
  view::Mode mode = view::Mode::Simulation;
  QString incident;   // the library's incident name (replay)
  Micros origin = 0;  // epoch µs of t = 0 (replay)
};

class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(QObject* parent = nullptr);

  // `baseline`: a finished baseline run of the same scenario to reuse (a policy change does
  // not change the unprotected run), or null to run it too.
  void start(const sim::Scenario& scenario, std::shared_ptr<const Comparison> baseline = {});
  int started() const { return job_.started(); }  // runs started so far (for tests)
  // Baseline (unprotected) runs started so far, not reused (for tests).
  int baselineRuns() const { return baselineRuns_; }
  // Stops the run; cancelled() follows from the event loop. Never waits for the worker.
  void cancel();
  bool running() const { return job_.running(); }

 signals:
  void progress(int percent);  // 0…100 over both runs
  void finished(std::shared_ptr<const spillway::console::Comparison> result);
  void failed(const QString& message);
  void cancelled();

 private:
  BackgroundJob job_;
  int baselineRuns_ = 0;
};

}  // namespace spillway::console
