#include "run_controller.hpp"

#include <QMetaObject>

#include "spillway/sim/simulator.hpp"

namespace spillway::console {
namespace {

// One run, stopped between 10 s chunks of simulated time when cancelled.
bool runOne(const sim::Scenario& sc, bool protection, RunResult& out,
            const std::atomic<bool>& cancel, const std::function<void(double)>& onProgress) {
  sim::VectorSeries series;
  VectorSink events;
  sim::SimOptions opt;
  opt.protection = protection;
  opt.series = &series;
  opt.events = &events;
  sim::Simulator s(sc, opt);
  const Micros step = seconds(10);
  for (Micros t = step; s.runUntil(t); t += step) {
    if (cancel.load(std::memory_order_relaxed)) return false;
    onProgress(std::min(1.0, static_cast<double>(t) / static_cast<double>(sc.duration)));
  }
  out.report = s.report();
  out.events = std::move(events.events);
  out.timeline = view::RunTimeline::build(series, out.events, out.report, sc.tick);
  return true;
}

}  // namespace

RunController::RunController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<std::shared_ptr<const Comparison>>(
      "std::shared_ptr<const spillway::console::Comparison>");
  connect(&job_, &BackgroundJob::progress, this, &RunController::progress);
}

void RunController::cancel() {
  if (!job_.running()) return;
  job_.cancel();
  QMetaObject::invokeMethod(this, &RunController::cancelled, Qt::QueuedConnection);
}

void RunController::start(const sim::Scenario& scenario,
                          std::shared_ptr<const Comparison> baseline) {
  if (!baseline) ++baselineRuns_;
  job_.start([this, scenario, baseline](const BackgroundJob::Context& job) {
    auto result = std::make_shared<Comparison>();
    result->scenarioName = QString::fromStdString(scenario.name);
    try {
      bool ok = true;
      if (baseline)
        result->baseline = baseline->baseline;
      else
        ok = runOne(scenario, false, result->baseline, job.cancelFlag(),
                    [&](double f) { job.progress(f * 0.5); });
      const double from = baseline ? 0.0 : 0.5, span = baseline ? 1.0 : 0.5;
      ok = ok && runOne(scenario, true, result->protectedRun, job.cancelFlag(),
                        [&](double f) { job.progress(from + f * span); });
      // Stopped: cancel() said so already, or a newer run superseded this one.
      if (ok) job.deliver([this, result] { emit finished(result); });
    } catch (const std::exception& e) {
      job.deliver([this, msg = QString::fromUtf8(e.what())] { emit failed(msg); });
    }
  });
}

}  // namespace spillway::console
