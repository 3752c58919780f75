#pragma once
// The discrete-event simulator, paced by the wall clock: scenario time = wall time × speed.
// A timer advances Simulator::runUntil in small steps, so the event loop keeps serving (the
// /metrics endpoint) between them. The simulator itself never reads a clock; this is the one
// place that maps wall time onto it (docs/live.md, "simulate --serve-metrics").
#include <QElapsedTimer>
#include <QObject>

#include <memory>

#include "spillway/sim/scenario.hpp"
#include "spillway/sim/simulator.hpp"

class QTimer;

namespace spillway::drill {

class PacedSimulation : public QObject {
  Q_OBJECT
 public:
  // Keeps a reference to `sc` (as the Simulator does): it must outlive this object.
  PacedSimulation(const sim::Scenario& sc, sim::SimOptions opt, double speed,
                  QObject* parent = nullptr);
  ~PacedSimulation() override;

  void start();
  void stop();
  bool finished() const { return finished_; }
  // Scenario time of the simulator now.
  Micros now() const { return sim_->now(); }
  // Scenario time the wall clock asks for (ahead of now() while the simulator catches up).
  Micros due() const;
  sim::Simulator& simulator() { return *sim_; }
  // The largest lag seen between due() and now() after a step (the simulator slower than
  // real time × speed).
  Micros maxLag() const { return maxLag_; }

 signals:
  void done();  // the scenario ended (arrivals over and drained)

 private:
  void advance();

  std::unique_ptr<sim::Simulator> sim_;
  double speed_;
  QElapsedTimer wall_;
  QTimer* timer_ = nullptr;
  bool finished_ = false;
  Micros maxLag_ = 0;
};

}  // namespace spillway::drill
