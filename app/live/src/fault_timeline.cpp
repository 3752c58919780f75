#include "spillway/live/fault_timeline.hpp"

#include <algorithm>
#include <cstdio>

namespace spillway::live {

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
  for (const InstanceFault& f : faults_) {
    if (t < f.start || t >= f.end) continue;
    const sim::FaultSpec& s = *f.spec;
    // s = min(1, (t − start) / ramp): the ramp scales the excess, the delay and probabilities.
    const double k =
        s.ramp > 0 ? std::min(1.0, static_cast<double>(t - f.start) / static_cast<double>(s.ramp))
                   : 1.0;
    switch (s.kind) {
      case sim::FaultKind::LatencyDrift:
        fx.multiplier *= 1.0 + (s.value - 1.0) * k;
        break;
      case sim::FaultKind::Delay:
        fx.delay += static_cast<Micros>(static_cast<double>(s.delay) * k);
        break;
      case sim::FaultKind::Errors:
        fx.errorP = std::max(fx.errorP, s.value * k);
        fx.errorStatus = s.status;  // the last listed active one
        break;
      case sim::FaultKind::Throttle:
        fx.throttleP = std::max(fx.throttleP, s.value * k);
        break;
      case sim::FaultKind::Hang:
        fx.hangP = std::max(fx.hangP, s.value * k);
        fx.hangUntil = std::min(fx.hangUntil, f.end);
        break;
      case sim::FaultKind::Reset:
        fx.resetP = std::max(fx.resetP, s.value * k);
        break;
      case sim::FaultKind::Outage:
        fx.outage = true;
        break;
      case sim::FaultKind::CapacityLoss:
        fx.capacityLoss = true;
        fx.remaining = std::min(fx.remaining, s.value);
        break;
      case sim::FaultKind::Recover:
        break;
    }
  }
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

}  // namespace spillway::live
