#include "spillway/drill/fault_timeline.hpp"

#include <algorithm>
#include <cstdio>

namespace spillway::drill {

FaultTimeline::FaultTimeline(const sim::Scenario& sc, const std::string& instance,
                             const std::string& model) {
  auto hits = [&](const sim::FaultSpec& f) { return f.target == instance || f.target == model; };
  for (const sim::FaultSpec& f : sc.faults) {
    if (f.kind == sim::FaultKind::Recover || !hits(f)) continue;
    InstanceFault inf{&f, f.at, f.duration == kForever ? kForever : f.at + f.duration};
    // A recover of this instance (or its model) after the onset ends the fault early.
    for (const sim::FaultSpec& r : sc.faults)
      if (r.kind == sim::FaultKind::Recover && hits(r) && r.at > f.at && r.at < inf.end)
        inf.end = r.at;
    faults_.push_back(inf);
  }
}

FaultEffect FaultTimeline::effectAt(Micros t) const {
  FaultEffect fx;
  for (const InstanceFault& f : faults_)
    if (t >= f.start && t < f.end) sim::addFaultEffect(fx, *f.spec, f.start, f.end, t);
  return fx;
}

std::vector<Micros> FaultTimeline::edges() const {
  std::vector<Micros> out;
  for (const InstanceFault& f : faults_) {
    out.push_back(f.start);
    if (f.end != kForever) out.push_back(f.end);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string describeFault(const sim::FaultSpec& f) {
  std::string s(sim::faultKindName(f.kind));
  char buf[96];
  switch (f.kind) {
    case sim::FaultKind::LatencyDrift:
      std::snprintf(buf, sizeof buf, " x%g", f.value);
      s += buf;
      break;
    case sim::FaultKind::Delay:
      s += " +" + formatDuration(f.delay);
      break;
    case sim::FaultKind::Errors:
      std::snprintf(buf, sizeof buf, " %d p=%g", f.status, f.value);
      s += buf;
      break;
    case sim::FaultKind::Throttle:
    case sim::FaultKind::Hang:
    case sim::FaultKind::Reset:
      std::snprintf(buf, sizeof buf, " p=%g", f.value);
      s += buf;
      break;
    case sim::FaultKind::CapacityLoss:
      std::snprintf(buf, sizeof buf, " remaining %g", f.value);
      s += buf;
      break;
    case sim::FaultKind::Outage:
    case sim::FaultKind::Recover:
      break;
  }
  if (f.ramp > 0) s += " (ramp " + formatDuration(f.ramp) + ")";
  return s;
}

}  // namespace spillway::drill
