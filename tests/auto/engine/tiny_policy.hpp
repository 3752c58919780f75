#pragma once
// The replay tests' policy: a breaker small enough to reason about.
#include "spillway/policy.hpp"

namespace spillway::test {

// Trips on the first window with at least 4 calls and more than half of them failed (sustain
// 0); open 5 s; every half-open request is a probe (probe_share 1.0: the seeded draw is always
// below it); 2 good probes close; no ramp; a call slower than 1 s is slow (fixed threshold, no
// baseline learning involved).
inline Policy tinyPolicy() {
  Policy p;
  BreakerConfig& b = p.breaker;
  b.window = {WindowType::Time, seconds(10), seconds(1), 100};
  b.minCalls = 4;
  b.trip = {0.5, 0.4, 0};
  b.open = {seconds(5), 2.0, seconds(60), 0.0, seconds(60)};
  b.halfOpen = {1.0, 2};
  b.ramp.duration = 0;
  b.slow.absolute = seconds(1);
  return p;
}

}  // namespace spillway::test
