#pragma once
// Would-open marks (▼) of a lane that would be drawn on top of each other merge into one ▼ with
// their count beside it; zooming in splits them. Toolkit-neutral: positions in pixels, the
// count's width from the caller's font.
#include <cstddef>
#include <functional>
#include <vector>

namespace spillway::view {

struct MarkCluster {
  std::size_t first = 0;  // index of its first mark (where the ▼ stands)
  int count = 1;
};

// `lanes` and `xPx` (in lane, then x order) give each mark's lane and pixel position. A mark
// joins the cluster before it (same lane) when it stands closer to that cluster's first mark
// than `minGapPx`, or, once the cluster has a count beside it, than `countEndPx(count)` (the
// count's right end, measured from the first mark, plus the next ▼'s half width): a ▼ is
// never drawn over the digits of the cluster before it.
std::vector<MarkCluster> clusterMarks(const std::vector<std::size_t>& lanes,
                                      const std::vector<double>& xPx, double minGapPx,
                                      const std::function<double(int)>& countEndPx);

}  // namespace spillway::view
