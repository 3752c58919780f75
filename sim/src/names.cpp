#include "spillway/sim/scenario.hpp"

namespace spillway::sim {

std::string_view faultKindName(FaultKind k) {
  switch (k) {
    case FaultKind::LatencyDrift:
      return "latency_drift";
    case FaultKind::Delay:
      return "delay";
    case FaultKind::Errors:
      return "errors";
    case FaultKind::Throttle:
      return "throttle";
    case FaultKind::Hang:
      return "hang";
    case FaultKind::Reset:
      return "reset";
    case FaultKind::CapacityLoss:
      return "capacity_loss";
    case FaultKind::Outage:
      return "outage";
    case FaultKind::Recover:
      return "recover";
  }
  return "?";
}

std::string_view criticalityName(Criticality c) {
  return c == Criticality::Core ? "core" : "non_critical";
}

}  // namespace spillway::sim
