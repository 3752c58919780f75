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

namespace {

// Availability rolling over `window` rows counted from the onset (so fewer at first).
class Rolling {
 public:
  Rolling(std::span<const std::uint64_t> finished, std::span<const std::uint64_t> available,
          std::size_t onset, std::size_t window, double level)
      : finished_(finished), available_(available), onset_(onset), window_(window), level_(level) {}
  // Takes row k in (rows are taken in order from the onset).
  void take(std::size_t k) {
    wf_ += finished_[k];
    wa_ += available_[k];
    if (k - onset_ >= window_) {
      wf_ -= finished_[k - window_];
      wa_ -= available_[k - window_];
    }
    full_ = k - onset_ + 1 >= window_;
  }
  bool good() const {
    return wf_ > 0 && static_cast<double>(wa_) / static_cast<double>(wf_) >= level_;
  }
  // Left the level: answers below it, or a whole window without an answer (the first rows
  // after the onset may be quiet at low rates without anything having gone wrong).
  bool left() const { return !good() && (wf_ > 0 || full_); }

 private:
  std::span<const std::uint64_t> finished_, available_;
  std::size_t onset_, window_;
  double level_;
  std::uint64_t wf_ = 0, wa_ = 0;
  bool full_ = false;
};

}  // namespace

std::optional<std::size_t> serviceRestoredSince(std::span<const std::uint64_t> finished,
                                                std::span<const std::uint64_t> available,
                                                std::size_t onset, std::size_t rowsPerMinute,
                                                std::size_t rowsPerWindow, std::size_t spanEnd,
                                                bool* left) {
  if (left) *left = false;
  const std::size_t rows = std::min(finished.size(), available.size());
  const std::size_t minute = std::max<std::size_t>(1, rowsPerMinute);
  const std::size_t window = std::max<std::size_t>(1, rowsPerWindow);
  const auto before = availabilityBefore(finished, available, onset, minute);
  if (!before) return std::nullopt;
  const double level = *before - kRestorationMargin;
  // "Back" is after the service left its level: a slow fault may hurt only minutes after its
  // onset, and a good minute before that is not its restoration. Without leaving during the
  // span, the service was never affected: back from the onset, once a good minute shows it.
  std::size_t from = onset;
  Rolling scan(finished, available, onset, window, level);
  for (std::size_t k = onset; k < std::min(rows, spanEnd); ++k) {
    scan.take(k);
    if (scan.left()) {
      from = k + 1;
      break;
    }
  }
  if (left) *left = from > onset;
  Rolling w(finished, available, onset, window, level);
  std::optional<std::size_t> goodSince;
  for (std::size_t k = onset; k < rows; ++k) {
    w.take(k);
    if (!w.good()) {
      goodSince.reset();  // a dip anywhere in the minute starts it again
      continue;
    }
    if (k < from) continue;
    if (!goodSince) goodSince = k;
    if (k - *goodSince >= minute) return goodSince;
  }
  return std::nullopt;
}

}  // namespace spillway::sim
