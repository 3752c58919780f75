#pragma once
// Runs a scenario twice — protection off (baseline) and on — off the UI thread, with progress
// and cancel, and hands back both runs' timelines and reports. A new start cancels a stale run.
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <thread>

#include "spillway/dialect_replay.hpp"
#include "spillway/sim/scenario.hpp"
#include "spillway/view/timeline.hpp"

namespace spillway::console {

struct RunResult {
  sim::RunReport report;  // a simulated run's KPIs
  view::RunTimeline timeline;
  std::vector<Event> events;
  ReplayKpis replayKpis;  // a replayed incident's KPIs (replay_controller.hpp)
};

// Two runs of one scenario — or two replays of one recorded incident (`replay`): the baseline
// watches only (METRICS_ONLY), the protected one applies the policy.
struct Comparison {
  QString scenarioName;
  RunResult baseline, protectedRun;
  bool replay = false;
  // Live mode (live_session.hpp): protectedRun is the rolling shadow-mode timeline; there is
  // no baseline run and no report.
  bool live = false;
  QString incident;   // the library's incident name (replay)
  Micros origin = 0;  // epoch µs of t = 0 (replay)
};

class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  // `baseline`: a finished baseline run of the same scenario to reuse (a policy change does
  // not change the unprotected run), or null to run it too.
  void start(const sim::Scenario& scenario, std::shared_ptr<const Comparison> baseline = {});
  int started() const { return started_; }  // runs started so far (for tests)
  // Baseline (unprotected) runs simulated so far, not reused (for tests).
  int baselineRuns() const { return baselineRuns_.load(); }
  void cancel();
  bool running() const { return running_; }

 signals:
  void progress(int percent);  // 0…100 over both runs
  void finished(std::shared_ptr<const spillway::console::Comparison> result);
  void failed(const QString& message);
  void cancelled();

 private:
  void join();
  std::thread worker_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  bool running_ = false;
  int started_ = 0;
  std::atomic<int> baselineRuns_{0};
};

}  // namespace spillway::console
