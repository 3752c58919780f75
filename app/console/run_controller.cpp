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
}

RunController::~RunController() {
  cancel();
  join();
}

void RunController::join() {
  if (worker_.joinable()) worker_.join();
}

void RunController::cancel() {
  if (cancel_) cancel_->store(true);
}

void RunController::start(const sim::Scenario& scenario,
                          std::shared_ptr<const Comparison> baseline) {
  cancel();
  join();  // a stale run stops at its next chunk
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  running_ = true;
  ++started_;
  auto flag = cancel_;
  worker_ = std::thread([this, scenario, flag, baseline] {
    auto result = std::make_shared<Comparison>();
    result->scenarioName = QString::fromStdString(scenario.name);
    int last = -1;
    auto report = [&](double share) {
      const int pct = static_cast<int>(share * 100);
      if (pct == last) return;
      last = pct;
      QMetaObject::invokeMethod(
          this, [this, pct] { emit progress(pct); }, Qt::QueuedConnection);
    };
    try {
      bool ok = true;
      if (baseline) {
        result->baseline = baseline->baseline;
      } else {
        ++baselineRuns_;
        ok = runOne(scenario, false, result->baseline, *flag, [&](double f) { report(f * 0.5); });
      }
      const double from = baseline ? 0.0 : 0.5, span = baseline ? 1.0 : 0.5;
      ok = ok && runOne(scenario, true, result->protectedRun, *flag,
                        [&](double f) { report(from + f * span); });
      QMetaObject::invokeMethod(
          this,
          [this, ok, result, flag] {
            if (flag != cancel_) return;  // superseded by a newer run
            running_ = false;
            if (ok) {
              emit finished(result);
            } else {
              emit cancelled();
            }
          },
          Qt::QueuedConnection);
    } catch (const std::exception& e) {
      const QString msg = QString::fromUtf8(e.what());
      QMetaObject::invokeMethod(
          this,
          [this, msg] {
            running_ = false;
            emit failed(msg);
          },
          Qt::QueuedConnection);
    }
  });
}

}  // namespace spillway::console
