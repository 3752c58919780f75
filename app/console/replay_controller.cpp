#include "replay_controller.hpp"

#include <QMetaObject>

#include "spillway/library/library.hpp"
#include "spillway/view/replay_timeline.hpp"

namespace spillway::console {

ReplayController::ReplayController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<std::shared_ptr<const Comparison>>(
      "std::shared_ptr<const spillway::console::Comparison>");
  connect(&job_, &BackgroundJob::progress, this, &ReplayController::progress);
}

void ReplayController::cancel() {
  if (!job_.running()) return;
  job_.cancel();
  QMetaObject::invokeMethod(this, &ReplayController::cancelled, Qt::QueuedConnection);
}

void ReplayController::start(const QString& libraryPath, const QString& incident,
                             const Policy& policy) {
  const std::string path = libraryPath.toStdString(), name = incident.toStdString();
  job_.start([this, path, name, policy, incident](const BackgroundJob::Context& job) {
    try {
      // Its own connection: SQLite handles are not shared across threads (WAL lets the UI
      // read and annotate meanwhile).
      library::Library lib(path, library::OpenOptions{.mustExist = true});
      const library::IncidentInfo info = lib.requireIncident(name);
      const std::vector<NamedFault> faults = lib.faults(name);
      const double total = 2.0 * static_cast<double>(std::max<std::uint64_t>(info.records, 1));
      auto result = std::make_shared<Comparison>();
      result->mode = view::Mode::Replay;
      result->incident = incident;
      result->scenarioName = incident;
      int pass = 0;
      for (RunResult* out : {&result->baseline, &result->protectedRun}) {
        const Policy p = out == &result->baseline ? view::watchOnly(policy) : policy;
        auto src = lib.open(name);
        const double offset = pass++ * static_cast<double>(info.records);
        auto v = view::replayTimeline(*src, p, faults, info.tStart, &job.cancelFlag(),
                                      [&](std::uint64_t n) { job.progress((offset + n) / total); });
        if (!v) return;  // stopped: cancel() said so already, or a newer replay superseded it
        result->origin = v->origin;
        out->timeline = std::move(v->timeline);
        out->events = std::move(v->events);
        out->replayKpis = std::move(v->kpis);
      }
      job.deliver([this, result] { emit finished(result); });
    } catch (const std::exception& e) {
      job.deliver([this, msg = QString::fromUtf8(e.what())] { emit failed(msg); });
    }
  });
}

}  // namespace spillway::console
