#include "replay_controller.hpp"

#include <QMetaObject>

#include "spillway/library/library.hpp"
#include "spillway/view/replay_timeline.hpp"

namespace spillway::console {

ReplayController::ReplayController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<std::shared_ptr<const Comparison>>(
      "std::shared_ptr<const spillway::console::Comparison>");
}

ReplayController::~ReplayController() {
  cancel();
  join();
}

void ReplayController::join() {
  if (worker_.joinable()) worker_.join();
}

void ReplayController::cancel() {
  if (cancel_) cancel_->store(true);
}

void ReplayController::start(const QString& libraryPath, const QString& incident,
                             const Policy& policy) {
  cancel();
  join();  // a stale replay stops within 4096 records
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  running_ = true;
  ++started_;
  auto flag = cancel_;
  const std::string path = libraryPath.toStdString(), name = incident.toStdString();
  worker_ = std::thread([this, path, name, policy, flag, incident] {
    auto post = [this, flag](auto fn) {
      QMetaObject::invokeMethod(
          this,
          [this, flag, fn] {
            if (flag != cancel_) return;  // superseded by a newer replay
            running_ = false;
            fn();
          },
          Qt::QueuedConnection);
    };
    try {
      // Its own connection: SQLite handles are not shared across threads (WAL lets the UI
      // read and annotate meanwhile).
      library::Library lib(path, library::OpenOptions{.mustExist = true});
      const library::IncidentInfo info = lib.requireIncident(name);
      const std::vector<NamedFault> faults = lib.faults(name);
      const double total = 2.0 * static_cast<double>(std::max<std::uint64_t>(info.records, 1));
      int last = -1;
      auto report = [&](double done) {
        const int pct = static_cast<int>(std::min(1.0, done / total) * 100);
        if (pct == last) return;
        last = pct;
        QMetaObject::invokeMethod(
            this, [this, pct] { emit progress(pct); }, Qt::QueuedConnection);
      };
      auto result = std::make_shared<Comparison>();
      result->replay = true;
      result->incident = incident;
      result->scenarioName = incident;
      bool ok = true;
      int pass = 0;
      for (RunResult* out : {&result->baseline, &result->protectedRun}) {
        const Policy p = out == &result->baseline ? view::watchOnly(policy) : policy;
        auto src = lib.open(name);
        const double offset = pass++ * static_cast<double>(info.records);
        auto v = view::replayTimeline(*src, p, faults, info.tStart, flag.get(),
                                      [&](std::uint64_t n) { report(offset + n); });
        if (!v) {
          ok = false;
          break;
        }
        result->origin = v->origin;
        out->timeline = std::move(v->timeline);
        out->events = std::move(v->events);
        out->replayKpis = std::move(v->kpis);
      }
      if (ok)
        post([this, result] { emit finished(result); });
      else
        post([this] { emit cancelled(); });
    } catch (const std::exception& e) {
      const QString msg = QString::fromUtf8(e.what());
      post([this, msg] { emit failed(msg); });
    }
  });
}

}  // namespace spillway::console
