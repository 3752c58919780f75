#include "spillway/view/mark_clusters.hpp"

#include <algorithm>

namespace spillway::view {

std::vector<MarkCluster> clusterMarks(const std::vector<std::size_t>& lanes,
                                      const std::vector<double>& xPx, double minGapPx,
                                      const std::function<double(int)>& countEndPx) {
  std::vector<MarkCluster> out;
  for (std::size_t k = 0; k < xPx.size();) {
    std::size_t end = k + 1;
    const auto reach = [&](int n) { return n > 1 ? std::max(minGapPx, countEndPx(n)) : minGapPx; };
    while (end < xPx.size() && lanes[end] == lanes[k] &&
           xPx[end] - xPx[k] < reach(static_cast<int>(end - k)))
      ++end;
    out.push_back(MarkCluster{k, static_cast<int>(end - k)});
    k = end;
  }
  return out;
}

}  // namespace spillway::view
