#pragma once
// The scenario's fault timeline seen from one instance, as a pure function of scenario time:
// which faults are active and what they do (docs/scenario.md, "faults"). The simulator keeps
// the same rules inside its event loop; the live rig asks at wall-clock time instead. No Qt.
#include <string>
#include <vector>

#include "spillway/sim/fault_effect.hpp"
#include "spillway/sim/scenario.hpp"
#include "spillway/time.hpp"

namespace spillway::drill {

// One fault as it applies to one instance: `recover`s already folded into `end`.
struct InstanceFault {
  const sim::FaultSpec* spec = nullptr;
  Micros start = 0;
  Micros end = kForever;
};

using sim::FaultEffect;

class FaultTimeline {
 public:
  FaultTimeline() = default;
  // The faults of `sc` that reach `instance` of `model`.
  FaultTimeline(const sim::Scenario& sc, const std::string& instance, const std::string& model);

  FaultEffect effectAt(Micros t) const;
  const std::vector<InstanceFault>& faults() const { return faults_; }
  // Start and end times (sorted, unique) at which the effect changes its set of faults.
  std::vector<Micros> edges() const;

 private:
  std::vector<InstanceFault> faults_;
};

// "latency_drift x3 (ramp 30s)", "errors 503 p=0.5", … for stderr lines.
std::string describeFault(const sim::FaultSpec& f);

}  // namespace spillway::drill
