#pragma once
// Replays a library incident under a policy off the UI thread — once watching only (the
// recording as it happened, with "would open" marks) and once protected — and hands back a
// Comparison the timelines, tiles and KPI table draw as they draw a simulated run. Calls stream
// out of the library block by block (Library::open); the annotations are the fault ground
// truth. Progress, cancel; a new start cancels a stale replay (a what-if drag is one replay).
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <thread>

#include "run_controller.hpp"

namespace spillway::console {

class ReplayController : public QObject {
  Q_OBJECT
 public:
  explicit ReplayController(QObject* parent = nullptr);
  ~ReplayController() override;

  void start(const QString& libraryPath, const QString& incident, const Policy& policy);
  void cancel();
  bool running() const { return running_; }
  int started() const { return started_; }

 signals:
  void progress(int percent);
  void finished(std::shared_ptr<const spillway::console::Comparison> result);
  void failed(const QString& message);
  void cancelled();

 private:
  void join();
  std::thread worker_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  bool running_ = false;
  int started_ = 0;
};

}  // namespace spillway::console
