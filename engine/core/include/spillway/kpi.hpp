#pragma once
// Fault scoring against known fault intervals (docs/kpis.md): TTD, time to restore, MTTR,
// recovery lag. Pure functions over the engine's events.
#include <string>
#include <vector>

#include "spillway/events.hpp"

namespace spillway {

struct FaultInterval {
  InstanceId instance = 0;
  Micros start = 0;
  Micros end = 0;  // when the instance was healthy again
  std::string kind;
};

struct FaultScore {
  bool detected = false;  // the breaker opened during the fault
  bool restored = false;  // full traffic restored after the fault ended
  Micros firstOpen = 0;
  Micros restoredAt = 0;
  Micros ttd = kForever;          // onset → first OPEN
  Micros mttr = kForever;         // onset → ramp complete after the fault ended
  Micros fromTrip = kForever;     // first OPEN → ramp complete (the seed's wording)
  Micros recoveryLag = kForever;  // fault end → ramp complete
};

// `events` may hold every instance's events in time order; only `f.instance`'s are read.
// A fault that starts while the breaker is already open (an earlier fault on the instance)
// is detected at its onset, TTD 0 — unless the breaker closes during it before it opens again.
FaultScore scoreFault(const FaultInterval& f, const std::vector<Event>& events);
// The same, restored only once the instance is fault-free at `clear` (≥ f.end): with faults
// that overlap, the recovery lag counts from the last one's end, not from this one's.
FaultScore scoreFault(const FaultInterval& f, const std::vector<Event>& events, Micros clear);

// For each fault, when its instance is fault-free again: the latest end among the faults of
// that instance that overlap or touch it, directly or through one another.
std::vector<Micros> clearTimes(const std::vector<FaultInterval>& faults);

}  // namespace spillway
