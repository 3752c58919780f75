#include "spillway/view/live_kpis.hpp"

#include <algorithm>

namespace spillway::view {

LiveKpis liveKpis(const RunTimeline& tl, const std::vector<double>& drawLatenciesMs) {
  LiveKpis k;
  k.shownSeconds = static_cast<double>(tl.end() - tl.start()) / 1e6;
  k.instances = tl.instances().size();
  double failures = 0, slow = 0;
  for (const InstanceTimeline& it : tl.instances()) {
    for (std::size_t s = 0; s < it.calls.size(); ++s) {
      k.calls += it.calls[s];
      failures += it.failures[s];
      slow += it.slow[s];
    }
    const auto marks = std::count_if(it.markers.begin(), it.markers.end(), [](const Marker& m) {
      return m.kind == Marker::Kind::WouldOpen;
    });
    k.wouldOpen += static_cast<int>(marks);
    k.instancesOpen += marks > 0;
  }
  if (k.calls > 0) {
    k.failureShare = failures / k.calls;
    k.slowShare = slow / k.calls;
  }
  if (!drawLatenciesMs.empty()) {
    std::vector<double> v(
        drawLatenciesMs.end() -
            static_cast<std::ptrdiff_t>(std::min(drawLatenciesMs.size(), LiveKpis::kLatencyWindow)),
        drawLatenciesMs.end());
    k.drawWorstMs = *std::max_element(v.begin(), v.end());
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    k.drawMedianMs = v[v.size() / 2];
  }
  return k;
}

}  // namespace spillway::view
