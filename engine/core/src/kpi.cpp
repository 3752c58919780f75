#include "spillway/kpi.hpp"

#include <algorithm>
#include <numeric>

namespace spillway {
namespace {

bool blocking(BreakerState s) {
  return s == BreakerState::Open || s == BreakerState::HalfOpen || s == BreakerState::ForcedOpen;
}

}  // namespace

FaultScore scoreFault(const FaultInterval& f, const std::vector<Event>& events) {
  return scoreFault(f, events, f.end);
}

FaultScore scoreFault(const FaultInterval& f, const std::vector<Event>& events, Micros clear) {
  FaultScore s;
  clear = std::max(clear, f.end);
  // Held open at the onset (by an earlier fault): the fault is blocked from its start — unless
  // the breaker closes during it before opening again, letting it through.
  bool held = false;
  auto detect = [&](Micros at) {
    s.detected = true;
    s.firstOpen = at;
    s.ttd = at - f.start;
  };
  for (const Event& e : events) {
    if (e.instance != f.instance) continue;
    if (e.ts < f.start) {
      if (e.kind == EventKind::Transition) held = blocking(e.to);
      continue;
    }
    if (!s.detected && held && e.ts > f.end) detect(f.start);  // held through the whole fault
    if (!s.detected) {
      if (e.ts > f.end) break;
      if (e.kind != EventKind::Transition) continue;
      if (e.to == BreakerState::Open) detect(held ? f.start : e.ts);
      if (e.to == BreakerState::Closed) held = false;
      continue;
    }
    // Restored = the first return to full traffic once the instance is fault-free.
    if (e.kind == EventKind::RampComplete && e.ts >= clear) {
      s.restored = true;
      s.restoredAt = e.ts;
      s.mttr = e.ts - f.start;
      s.fromTrip = e.ts - s.firstOpen;
      s.recoveryLag = e.ts - clear;
      break;
    }
  }
  if (!s.detected && held) detect(f.start);  // open at the onset, and no event of it since
  return s;
}

std::vector<Micros> clearTimes(const std::vector<FaultInterval>& faults) {
  std::vector<std::size_t> order(faults.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const FaultInterval &x = faults[a], &y = faults[b];
    return x.instance != y.instance ? x.instance < y.instance : x.start < y.start;
  });
  std::vector<Micros> clear(faults.size(), 0);
  // Runs of one instance's faults that overlap or touch, each run's latest end for all of it.
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    Micros end = faults[order[i]].end;
    while (j + 1 < order.size() && faults[order[j + 1]].instance == faults[order[i]].instance &&
           faults[order[j + 1]].start <= end) {
      ++j;
      end = std::max(end, faults[order[j]].end);
    }
    for (std::size_t k = i; k <= j; ++k) clear[order[k]] = end;
    i = j + 1;
  }
  return clear;
}

}  // namespace spillway
