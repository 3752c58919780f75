#pragma once
// What the replay and live timelines both need to put calls on whole seconds: the second a
// time falls in, and the p99 of one second's latencies.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "spillway/time.hpp"

namespace spillway::view::detail {

inline constexpr Micros kSecond = seconds(1);
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The start of the second holding t (floor, also before the epoch).
inline Micros floorSecond(Micros t) {
  const Micros r = t % kSecond;
  return r < 0 ? t - r - kSecond : t - r;
}

// Nearest-rank p99; NaN for a second without calls (a gap, not 0). Reorders `v`.
inline double p99(std::vector<float>& v) {
  if (v.empty()) return kNaN;
  const std::size_t k =
      static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(v.size()))) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace spillway::view::detail
