#include "spillway/kpi.hpp"

namespace spillway {

FaultScore scoreFault(const FaultInterval& f, const std::vector<Event>& events) {
  FaultScore s;
  for (const Event& e : events) {
    if (e.instance != f.instance) continue;
    if (!s.detected) {
      if (e.kind == EventKind::Transition && e.to == BreakerState::Open && e.ts >= f.start &&
          e.ts <= f.end) {
        s.detected = true;
        s.firstOpen = e.ts;
        s.ttd = e.ts - f.start;
      }
      continue;
    }
    // Restored = the first return to full traffic once the fault is over.
    if (e.kind == EventKind::RampComplete && e.ts >= f.end) {
      s.restored = true;
      s.restoredAt = e.ts;
      s.mttr = e.ts - f.start;
      s.fromTrip = e.ts - s.firstOpen;
      s.recoveryLag = e.ts - f.end;
      break;
    }
  }
  return s;
}

}  // namespace spillway
