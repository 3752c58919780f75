#pragma once
// Mergeable log-linear latency histogram (HDR-style): exact below 64 µs, then 64 sub-buckets
// per power of two. A bin's width is at most 1/64 of its lower edge, and quantiles report the
// bin midpoint, so the relative error is at most 1/128 (0.78 %) — inside the 1 % the
// baseline needs. Values above ~17.9 minutes are clamped into the last bin.
#include <array>
#include <cstdint>
#include <type_traits>

namespace spillway {

struct HistogramLayout {
  static constexpr int kSubBits = 6;
  static constexpr int kSub = 1 << kSubBits;     // 64
  static constexpr int kFirstOctave = kSubBits;  // 2^6 = 64 µs: first log-linear octave
  static constexpr int kLastOctave = 29;         // 2^30 µs ≈ 17.9 min upper edge
  static constexpr int kBins = kSub + (kLastOctave - kFirstOctave + 1) * kSub;  // 1600
  static constexpr std::uint64_t kMaxValue = (std::uint64_t{1} << (kLastOctave + 1)) - 1;

  static int binOf(std::uint64_t us) {
    if (us < static_cast<std::uint64_t>(kSub)) return static_cast<int>(us);
    if (us > kMaxValue) us = kMaxValue;
    const int e = 63 - __builtin_clzll(us);
    return kSub + (e - kFirstOctave) * kSub + static_cast<int>((us >> (e - kSubBits)) & (kSub - 1));
  }
  static double lowerEdge(int bin) {
    if (bin < kSub) return bin;
    const int e = (bin - kSub) / kSub + kFirstOctave;
    const int sub = (bin - kSub) % kSub;
    return static_cast<double>((std::uint64_t{1} << e) +
                               (static_cast<std::uint64_t>(sub) << (e - kSubBits)));
  }
  static double width(int bin) {
    if (bin < kSub) return 1.0;
    const int e = (bin - kSub) / kSub + kFirstOctave;
    return static_cast<double>(std::uint64_t{1} << (e - kSubBits));
  }
  // Representative value: exact bins report themselves, others their midpoint.
  static double representative(int bin) {
    if (bin < 2 * kSub) return lowerEdge(bin);  // width 1: exact
    return lowerEdge(bin) + width(bin) / 2.0;
  }
};

// Count is uint32_t for windows (exact, mergeable, subtractable) and double for the
// exponentially decayed baseline.
template <typename Count>
class BasicHistogram {
 public:
  using Layout = HistogramLayout;
  BasicHistogram() { clear(); }

  void add(std::uint64_t us, Count n = Count{1}) {
    counts_[Layout::binOf(us)] += n;
    total_ += n;
  }
  void addBin(int bin, Count n) {
    counts_[bin] += n;
    total_ += n;
  }
  template <typename Other>
  void merge(const BasicHistogram<Other>& o) {
    for (int i = 0; i < Layout::kBins; ++i) counts_[i] += static_cast<Count>(o.binCount(i));
    total_ += static_cast<Count>(o.total());
  }
  // Only meaningful when `o` was previously merged/added into this one (window eviction).
  void subtract(const BasicHistogram& o) {
    for (int i = 0; i < Layout::kBins; ++i) counts_[i] -= o.counts_[i];
    total_ -= o.total_;
  }
  void scale(double factor) {
    static_assert(std::is_floating_point_v<Count>, "only decayed histograms scale");
    for (auto& c : counts_) c *= factor;
    total_ *= factor;
  }
  void clear() {
    counts_.fill(Count{});
    total_ = Count{};
  }

  Count total() const { return total_; }
  Count binCount(int bin) const { return counts_[bin]; }

  // Nearest-rank quantile (q in [0,1]) in µs; 0 when empty.
  double quantile(double q) const {
    if (!(total_ > Count{})) return 0.0;
    double rank = q * static_cast<double>(total_);
    if (rank < 1e-12) rank = 1e-12;
    double seen = 0;
    for (int i = 0; i < Layout::kBins; ++i) {
      if (!(counts_[i] > Count{})) continue;  // an empty bin is never the answer (q = 0)
      seen += static_cast<double>(counts_[i]);
      if (seen >= rank - 1e-9) return Layout::representative(i);
    }
    return Layout::representative(Layout::kBins - 1);
  }
  // Number of samples strictly above `us` (bin-resolution: bins whose lower edge > us).
  double countAbove(std::uint64_t us) const {
    const int b = Layout::binOf(us);
    double n = 0;
    for (int i = b + 1; i < Layout::kBins; ++i) n += static_cast<double>(counts_[i]);
    return n;
  }

 private:
  std::array<Count, Layout::kBins> counts_;
  Count total_;
};

using LatencyHistogram = BasicHistogram<std::uint32_t>;
using DecayingHistogram = BasicHistogram<double>;

}  // namespace spillway
