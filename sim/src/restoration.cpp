#include "spillway/sim/restoration.hpp"

#include <algorithm>

namespace spillway::sim {

std::optional<double> availabilityBefore(std::span<const std::uint64_t> finished,
                                         std::span<const std::uint64_t> available,
                                         std::size_t onset, std::size_t rowsPerMinute) {
  const std::size_t minute = std::max<std::size_t>(1, rowsPerMinute);
  const std::size_t end = std::min({onset, finished.size(), available.size()});
  std::uint64_t fin = 0, ok = 0;
  for (std::size_t k = onset > minute ? onset - minute : 0; k < end; ++k) {
    fin += finished[k];
    ok += available[k];
  }
  if (fin == 0) return std::nullopt;
  return static_cast<double>(ok) / static_cast<double>(fin);
}

std::optional<std::size_t> serviceRestoredSince(std::span<const std::uint64_t> finished,
                                                std::span<const std::uint64_t> available,
                                                std::size_t onset, std::size_t rowsPerMinute,
                                                std::size_t rowsPerWindow) {
  const std::size_t rows = std::min(finished.size(), available.size());
  const std::size_t minute = std::max<std::size_t>(1, rowsPerMinute);
  const std::size_t window = std::max<std::size_t>(1, rowsPerWindow);
  const auto before = availabilityBefore(finished, available, onset, minute);
  if (!before) return std::nullopt;
  const double level = *before - kRestorationMargin;
  // The window starts at the onset: the rows before it are the yardstick, not the recovery.
  std::uint64_t wf = 0, wa = 0;
  std::optional<std::size_t> goodSince;
  for (std::size_t k = onset; k < rows; ++k) {
    wf += finished[k];
    wa += available[k];
    if (k - onset >= window) {
      wf -= finished[k - window];
      wa -= available[k - window];
    }
    const bool good = wf > 0 && static_cast<double>(wa) / static_cast<double>(wf) >= level;
    if (!good) {
      goodSince.reset();  // a dip anywhere in the minute starts it again
      continue;
    }
    if (!goodSince) goodSince = k;
    if (k - *goodSince >= minute) return goodSince;
  }
  return std::nullopt;
}

}  // namespace spillway::sim
