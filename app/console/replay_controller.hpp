#pragma once
// Replays a library incident under a policy off the UI thread — once watching only (the
// recording as it happened, with "would open" marks) and once protected — and hands back a
// Comparison the timelines, tiles and KPI table draw as they draw a simulated run. Calls stream
// out of the library block by block (Library::open); the annotations are the fault ground
// truth. Progress, cancel; a new start cancels a stale replay (a what-if drag is one replay).
#include <QObject>
#include <QString>

#include <memory>

#include "run_controller.hpp"

namespace spillway::console {

class ReplayController : public QObject {
  Q_OBJECT
 public:
  explicit ReplayController(QObject* parent = nullptr);

  void start(const QString& libraryPath, const QString& incident, const Policy& policy);
  // Stops the replay; cancelled() follows from the event loop. Never waits for the worker.
  void cancel();
  bool running() const { return job_.running(); }
  int started() const { return job_.started(); }

 signals:
  void progress(int percent);
  void finished(std::shared_ptr<const spillway::console::Comparison> result);
  void failed(const QString& message);
  void cancelled();

 private:
  BackgroundJob job_;
};

}  // namespace spillway::console
