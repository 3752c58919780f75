#pragma once
// What active faults do to an instance at one moment (docs/scenario.md, "faults"): one rule for
// the simulator's event loop and the live rig's fake instances, which ask at wall-clock time.
#include <algorithm>

#include "spillway/sim/scenario.hpp"
#include "spillway/time.hpp"

namespace spillway::sim {

struct FaultEffect {
  double multiplier = 1.0;  // latency_drift: service time ×
  Micros delay = 0;         // delay: service time +
  double errorP = 0;        // errors: probability, with errorStatus
  int errorStatus = 503;
  double throttleP = 0;  // 429
  double hangP = 0;
  Micros hangUntil = kForever;  // earliest end of the active hangs
  double resetP = 0;
  bool outage = false;
  double remaining = 1.0;  // capacity_loss: share of slots left (smallest active)
  bool capacityLoss = false;
};

// Adds fault `f`, active on [start, end) and at `t` inside it, to `fx`. A ramp scales the
// excess, the delay and the probabilities by min(1, (t − start) / ramp); several faults
// multiply drifts, add delays and take the largest probability.
inline void addFaultEffect(FaultEffect& fx, const FaultSpec& f, Micros start, Micros end,
                           Micros t) {
  const double k = f.ramp > 0
                       ? std::min(1.0, static_cast<double>(t - start) / static_cast<double>(f.ramp))
                       : 1.0;
  switch (f.kind) {
    case FaultKind::LatencyDrift:
      fx.multiplier *= 1.0 + (f.value - 1.0) * k;
      break;
    case FaultKind::Delay:
      fx.delay += static_cast<Micros>(static_cast<double>(f.delay) * k);
      break;
    case FaultKind::Errors:
      fx.errorP = std::max(fx.errorP, f.value * k);
      fx.errorStatus = f.status;  // the last listed active one
      break;
    case FaultKind::Throttle:
      fx.throttleP = std::max(fx.throttleP, f.value * k);
      break;
    case FaultKind::Hang:
      fx.hangP = std::max(fx.hangP, f.value * k);
      fx.hangUntil = std::min(fx.hangUntil, end);
      break;
    case FaultKind::Reset:
      fx.resetP = std::max(fx.resetP, f.value * k);
      break;
    case FaultKind::Outage:
      fx.outage = true;
      break;
    case FaultKind::CapacityLoss:
      fx.capacityLoss = true;
      fx.remaining = std::min(fx.remaining, f.value);
      break;
    case FaultKind::Recover:
      break;
  }
}

}  // namespace spillway::sim
