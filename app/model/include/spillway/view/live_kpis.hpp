#pragma once
// Live mode's KPI rows, toolkit-neutral: what the shadow-mode timeline in view says (calls,
// failure and slow shares by the policy's classification, would-open verdicts) and how fast
// the console draws what arrives. The Qt table only prints them.
#include <cstdint>
#include <optional>
#include <vector>

#include "spillway/view/timeline.hpp"

namespace spillway::view {

struct LiveKpis {
  double shownSeconds = 0;                        // the timeline's span
  double calls = 0;                               // in view
  std::optional<double> failureShare, slowShare;  // of the calls in view; none without calls
  int wouldOpen = 0;                              // verdicts in view
  int instancesOpen = 0;                          // instances with at least one
  std::size_t instances = 0;
  // Arrival → tiles over the last `kLatencyWindow` snapshots (ms); none before the first.
  std::optional<double> drawMedianMs, drawWorstMs;
  static constexpr std::size_t kLatencyWindow = 200;
};

LiveKpis liveKpis(const RunTimeline& tl, const std::vector<double>& drawLatenciesMs);

}  // namespace spillway::view
