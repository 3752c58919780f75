#pragma once
// Every instance of a scenario as a FakeInstance on consecutive loopback ports, sharing one
// scenario clock (so a fault at 30s hits all its targets at once). docs/live.md.
#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <vector>

#include "spillway/drill/fake_instance.hpp"
#include "spillway/sim/scenario.hpp"

namespace spillway::drill {

struct FarmOptions {
  quint16 basePort = 0;    // instance i on basePort + i; 0 = any free port each
  double speed = 1.0;      // fault timeline speed-up
  std::uint64_t seed = 0;  // 0 = the scenario's seed
  live::HttpLimits limits;
};

class InstanceFarm : public QObject {
  Q_OBJECT
 public:
  // Keeps its own copy of the scenario (the instances point into it).
  InstanceFarm(sim::Scenario sc, FarmOptions opt, QObject* parent = nullptr);
  ~InstanceFarm() override;

  // Starts every listener; false with errorString() when one cannot listen.
  bool start();
  QString errorString() const { return error_; }
  const std::vector<FakeInstance*>& instances() const { return instances_; }
  const ScenarioClock& clock() const { return clock_; }
  const sim::Scenario& scenario() const { return sc_; }

 signals:
  void faultTransition(const QString& text);

 private:
  sim::Scenario sc_;
  FarmOptions opt_;
  ScenarioClock clock_;
  std::vector<FakeInstance*> instances_;
  QString error_;
};

}  // namespace spillway::drill
