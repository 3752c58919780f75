#pragma once
// Mergeable log-linear latency histogram (HDR-style): exact below 64 µs, then 64 sub-buckets
// per power of two. A bin's width is at most 1/64 of its lower edge, and quantiles report the
// bin midpoint, so the relative error is at most 1/128 (0.78 %) — inside the 1 % the
// baseline needs. Values above ~17.9 minutes are clamped into the last bin.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace spillway {

struct HistogramLayout {
  static constexpr int kSubBits = 6;
  static constexpr int kSub = 1 << kSubBits;     // 64
  static constexpr int kFirstOctave = kSubBits;  // 2^6 = 64 µs: first log-linear octave
  static constexpr int kLastOctave = 29;         // 2^30 µs ≈ 17.9 min upper edge
  static constexpr int kBins = kSub + (kLastOctave - kFirstOctave + 1) * kSub;  // 1600
  static constexpr std::uint64_t kMaxValue = (std::uint64_t{1} << (kLastOctave + 1)) - 1;

  // Without a branch (every recorded call takes one): below 2^6 the shift is 0 and the bin is
  // the value; above, (shift << 6) + (us >> shift) is kSub × (octave − 6) + kSub + sub-bucket,
  // since us >> shift lies in [64, 128).
  static int binOf(std::uint64_t us) {
    us = std::min(us, kMaxValue);
    const int shift = std::max(63 - std::countl_zero(us | 1) - kSubBits, 0);
    return (shift << kSubBits) + static_cast<int>(us >> shift);
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
  // The last bin whose representative is ≤ value (representatives rise with the bin); -1 when
  // there is none (value < 0, NaN).
  static int lastBinAtOrBelow(double value) {
    if (!(value >= 0.0)) return -1;
    const double capped = std::min(value, static_cast<double>(kMaxValue));
    const int bin = binOf(static_cast<std::uint64_t>(capped));  // holds floor(value)
    return representative(bin) > value ? bin - 1 : bin;         // its midpoint may lie above
  }
};

// Whether the nearest-rank quantile q of `total` samples with integer counts lies above
// `value`, given `through`: how many of them are in bins up to lastBinAtOrBelow(value). The
// answer bin is the first whose cumulative count reaches the rank, so it lies above that bin
// exactly when fewer samples than the rank are at or below it — or none are (an empty bin is
// never the answer: q = 0 takes the first sample's bin). Integer sums are exact in any order,
// so this agrees with BasicHistogram::quantile() on every input.
inline bool quantileExceeds(double q, double value, std::uint64_t through, std::uint64_t total) {
  if (total == 0) return 0.0 > value;  // quantile() of nothing is 0
  double rank = q * static_cast<double>(total);
  if (rank < 1e-12) rank = 1e-12;
  return through == 0 || static_cast<double>(through) < rank - 1e-9;
}

// Count is uint32_t for windows (exact, mergeable, subtractable) and double for the
// exponentially decayed baseline.
//
// Storage is paged: a block's counts and sums (a page) exist only once a sample lands in it.
// A latency distribution spans a few octaves — a few of the 25 blocks — so a histogram holds
// 1–2 KB instead of 7–14 KB; a fleet of 10⁵ breakers, each with a window, its slices and a
// baseline, fits in memory, and a thousand of them fit in the cache far better. A page, once
// made, stays (cleared, not freed): the head slice's histogram is cleared every slice.
//
// Three levels: every 64 bins (a block) keep their sum, the sums of their four groups of 16
// bins, and a bit mask of the bins in use; a word says which blocks are in use. Quantiles,
// merges, subtractions and clears touch only what is there, and a quantile walks at most 16
// bins of the block it lands in. A window or a one-second slice holds a few distinct
// latencies, and these operations run every second per instance — scanning all 1600 bins each
// time made them the simulator's biggest cost at low request rates. A block's mask and sums
// sit together (one cache line), so adding a sample touches two lines plus the header.
template <typename Count>
class BasicHistogram {
 public:
  using Layout = HistogramLayout;
  static constexpr int kBlockBits = 6;
  static constexpr int kBlock = 1 << kBlockBits;  // 64 bins: one bit each in a mask word
  static constexpr int kBlocks = (Layout::kBins + kBlock - 1) / kBlock;  // 25
  static constexpr int kGroupBits = 4;
  static constexpr int kGroup = 1 << kGroupBits;           // 16 bins
  static constexpr int kGroupsPerBlock = kBlock / kGroup;  // 4
  static constexpr std::uint64_t kGroupMask = (std::uint64_t{1} << kGroup) - 1;

  BasicHistogram() = default;

  void add(std::uint64_t us, Count n = Count{1}) { addBin(Layout::binOf(us), n); }
  void addBin(int bin, Count n) {
    Page& p = pageFor(bin >> kBlockBits);
    Block& b = p.meta;
    p.counts[bin & (kBlock - 1)] += n;
    b.mask |= std::uint64_t{1} << (bin & (kBlock - 1));
    b.sum += n;
    b.group[(bin >> kGroupBits) & (kGroupsPerBlock - 1)] += n;
    used_ |= std::uint32_t{1} << (bin >> kBlockBits);
    total_ += n;
  }
  // One sample in each of `bins` (integer counts): addBin n times, with the totals that every
  // call would bump kept in registers.
  void addBins(const std::uint16_t* bins, int n) {
    static_assert(std::is_integral_v<Count>, "decayed histograms add with addBinsScaled");
    std::uint32_t used = 0;
    for (int k = 0; k < n; ++k) {
      const int bin = bins[k];
      Page& p = pageFor(bin >> kBlockBits);
      ++p.counts[bin & (kBlock - 1)];
      p.meta.mask |= std::uint64_t{1} << (bin & (kBlock - 1));
      ++p.meta.sum;
      ++p.meta.group[(bin >> kGroupBits) & (kGroupsPerBlock - 1)];
      used |= std::uint32_t{1} << (bin >> kBlockBits);
    }
    used_ |= used;
    total_ += static_cast<Count>(n);
  }
  // addBins for a histogram that is written far more often than read (a window's head slice:
  // every call, read once a slice): only the counts, so a sample touches one cache line, not
  // two. The sums, masks and used blocks are stale until settle(); until then only total(),
  // binCount() and addCountsTo() may read it, and adds, merges, clear() and settle() write it.
  void addBinsDeferred(const std::uint16_t* bins, int n) {
    static_assert(std::is_integral_v<Count>, "decayed histograms add with addBinsScaled");
    for (int k = 0; k < n; ++k) {
      const unsigned bin = bins[k];
      ++pageFor(static_cast<int>(bin >> kBlockBits)).counts[bin & (kBlock - 1)];
    }
    total_ += static_cast<Count>(n);
    stale_ = n > 0 || stale_;
  }
  // Rebuilds the sums, masks and used blocks from the counts after addBinsDeferred: the state
  // addBins would have left (every sum is the sum of its counts, every mask bit a non-empty bin).
  void settle() {
    if (!stale_) return;
    used_ = 0;
    for (int b = 0; b < kBlocks; ++b) {
      if (!slot_[b]) continue;
      Page& p = pages_[slot_[b] - 1];
      Block m{};
      for (int g = 0; g < kGroupsPerBlock; ++g) {
        Count sum{};
        for (int i = 0; i < kGroup; ++i) {
          const Count c = p.counts[g * kGroup + i];
          sum += c;
          m.mask |= std::uint64_t{c != Count{}} << (g * kGroup + i);
        }
        m.group[g] = sum;
        m.sum += sum;
      }
      p.meta = m;
      if (m.mask) used_ |= std::uint32_t{1} << b;
    }
    stale_ = false;
  }
  bool stale() const { return stale_; }
  // Adds every sample to `h` (h.addBin per bin in use), read from the counts alone: what
  // h.merge(*this) gives for integer counts, and valid while stale.
  template <typename H>
  void addCountsTo(H& h) const {
    for (int b = 0; b < kBlocks; ++b) {
      if (!slot_[b]) continue;
      const Page& p = page(b);
      for (int i = 0; i < kBlock; ++i)
        if (p.counts[i] != Count{}) h.addBin((b << kBlockBits) + i, p.counts[i]);
    }
  }
  // Takes back `n` samples that addBin put in `bin` (window eviction, one bin at a time): the
  // same state as subtracting a histogram that holds them.
  void removeBin(int bin, Count n) {
    Page& p = pages_[slot_[bin >> kBlockBits] - 1];  // the bin holds n: its page exists
    Block& b = p.meta;
    Count& c = p.counts[bin & (kBlock - 1)];
    c -= n;
    if (c == Count{}) {
      b.mask &= ~(std::uint64_t{1} << (bin & (kBlock - 1)));
      if (!b.mask) used_ &= ~(std::uint32_t{1} << (bin >> kBlockBits));
    }
    b.sum -= n;
    b.group[(bin >> kGroupBits) & (kGroupsPerBlock - 1)] -= n;
    total_ -= n;
  }
  template <typename Other>
  void merge(const BasicHistogram<Other>& o) {
    mergeImpl(o, [](auto c) { return static_cast<Count>(c); });
  }
  // Adds `o` with every count multiplied by `factor` (decayed histograms).
  template <typename Other>
  void mergeScaled(const BasicHistogram<Other>& o, double factor) {
    static_assert(std::is_floating_point_v<Count>, "only decayed histograms scale");
    mergeImpl(o, [factor](auto c) { return factor * static_cast<double>(c); });
  }
  // Adds counts given in rising bin order (forEach(f) calls f(bin, count)), each multiplied by
  // `factor`: bit for bit the state mergeScaled gives for a histogram holding them, since
  // every bin, group and block gets one add of factor × its whole count there and here. The
  // breaker folds a packed slice (SliceBins) into its decayed baseline this way.
  template <typename ForEach>
  void addCountsScaled(ForEach&& forEach, double factor) {
    static_assert(std::is_floating_point_v<Count>, "only decayed histograms scale");
    Page* p = nullptr;
    int block = -1, group = -1;
    std::uint64_t blockSum = 0, groupSum = 0, total = 0;
    const auto endGroup = [&] {
      if (group >= 0)
        p->meta.group[group & (kGroupsPerBlock - 1)] += factor * static_cast<double>(groupSum);
      groupSum = 0;
    };
    const auto endBlock = [&] {
      if (!p) return;
      endGroup();
      p->meta.sum += factor * static_cast<double>(blockSum);
      blockSum = 0;
    };
    forEach([&](int bin, std::uint32_t c) {
      if ((bin >> kBlockBits) != block) {
        endBlock();  // before pageFor: a new page may move the others
        group = -1;
        block = bin >> kBlockBits;
        p = &pageFor(block);
        used_ |= std::uint32_t{1} << block;
      }
      if ((bin >> kGroupBits) != group) {
        endGroup();
        group = bin >> kGroupBits;
      }
      p->counts[bin & (kBlock - 1)] += factor * static_cast<double>(c);
      p->meta.mask |= std::uint64_t{1} << (bin & (kBlock - 1));
      blockSum += c;
      groupSum += c;
      total += c;
    });
    endBlock();
    total_ += factor * static_cast<double>(total);
  }
  // Adds one sample per entry of `bins` (any order, repeats allowed), each weighted `factor`:
  // bit for bit the state mergeScaled gives for a histogram holding them, since every bin,
  // group and block gets one add of factor × its whole count there and here. A per-thread
  // tally collects the counts first; a repeat then adds +0.0, which changes nothing (counts are
  // never -0.0). The breaker folds a slice's short list of bins this way, once per slice.
  void addBinsScaled(const std::uint16_t* bins, std::size_t n, double factor) {
    static_assert(std::is_floating_point_v<Count>, "only decayed histograms scale");
    struct Tally {
      std::array<std::uint32_t, Layout::kBins> bin{};
      std::array<std::uint32_t, kBlocks * kGroupsPerBlock> group{};
      std::array<std::uint32_t, kBlocks> block{};
    };
    thread_local Tally t;  // all zero between calls
    for (std::size_t k = 0; k < n; ++k) {
      const int b = bins[k];
      ++t.bin[b];
      ++t.group[b >> kGroupBits];
      ++t.block[b >> kBlockBits];
    }
    for (std::size_t k = 0; k < n; ++k) {
      const int b = bins[k], g = b >> kGroupBits, blk = b >> kBlockBits;
      Page& p = pageFor(blk);
      Block& tb = p.meta;
      p.counts[b & (kBlock - 1)] += factor * static_cast<double>(t.bin[b]);
      tb.group[g & (kGroupsPerBlock - 1)] += factor * static_cast<double>(t.group[g]);
      tb.sum += factor * static_cast<double>(t.block[blk]);
      t.bin[b] = t.group[g] = t.block[blk] = 0;
      tb.mask |= std::uint64_t{1} << (b & (kBlock - 1));
      used_ |= std::uint32_t{1} << blk;
    }
    total_ += factor * static_cast<double>(n);
  }
  // Only meaningful when `o` was previously merged/added into this one (window eviction).
  void subtract(const BasicHistogram& o) {
    // Blocks and groups `o` does not use hold nothing of it (their sums are 0 too).
    for (std::uint32_t u = o.used_; u; u &= u - 1) {
      const int b = std::countr_zero(u);
      const Page& op = o.page(b);
      const Block& ob = op.meta;
      Page& tp = pageFor(b);
      Block& tb = tp.meta;
      for (std::uint64_t m = ob.mask; m; m &= m - 1) {
        const int bit = std::countr_zero(m);
        tp.counts[bit] -= op.counts[bit];
        // Keep the mask tight: a window that slides for hours must not end up scanning every
        // bin it ever used.
        if (tp.counts[bit] == Count{}) tb.mask &= ~(std::uint64_t{1} << bit);
      }
      tb.sum -= ob.sum;
      for (int g = 0; g < kGroupsPerBlock; ++g)
        if ((ob.mask >> (g * kGroup)) & kGroupMask) tb.group[g] -= ob.group[g];
      if (!tb.mask) used_ &= ~(std::uint32_t{1} << b);
    }
    total_ -= o.total_;
  }
  void scale(double factor) {
    static_assert(std::is_floating_point_v<Count>, "only decayed histograms scale");
    for (Page& p : pages_) {
      for (auto& c : p.counts) c *= factor;
      p.meta.sum *= factor;
      for (auto& g : p.meta.group) g *= factor;
    }
    total_ *= factor;
  }
  void clear() {
    if (stale_) {  // the masks do not name every count: clear the pages whole
      for (Page& p : pages_) p = Page{};
      stale_ = false;
      used_ = 0;
      total_ = Count{};
      return;
    }
    // A block without mask bits has only empty bins and zero sums: nothing to reset there.
    for (std::uint32_t u = used_; u; u &= u - 1) {
      Page& p = pages_[slot_[std::countr_zero(u)] - 1];
      for (std::uint64_t m = p.meta.mask; m; m &= m - 1) p.counts[std::countr_zero(m)] = Count{};
      p.meta = Block{};
    }
    used_ = 0;
    total_ = Count{};
  }

  Count total() const { return total_; }
  Count binCount(int bin) const {
    const int s = slot_[bin >> kBlockBits];
    return s ? pages_[s - 1].counts[bin & (kBlock - 1)] : Count{};
  }
  Count blockCount(int block) const { return slot_[block] ? page(block).meta.sum : Count{}; }
  Count groupCount(int block, int group) const {
    return slot_[block] ? page(block).meta.group[group] : Count{};
  }
  std::uint64_t blockMask(int block) const { return slot_[block] ? page(block).meta.mask : 0; }
  // Block `block`'s 64 counts; only for a block that has a page (usedBlocks()).
  const Count* blockCounts(int block) const { return page(block).counts.data(); }
  // Heap bytes of the pages (the memory a histogram costs beyond its own size).
  std::size_t pageBytes() const { return pages_.capacity() * sizeof(Page); }
  // Bit b set = block b has mask bits (kBlocks ≤ 32).
  std::uint32_t usedBlocks() const { return used_; }

  // Nearest-rank quantile (q in [0,1]) in µs; 0 when empty. High quantiles walk down from
  // the top (a P99 then reads one or two blocks instead of the whole range).
  double quantile(double q) const {
    if (!(total_ > Count{})) return 0.0;
    double rank = q * static_cast<double>(total_);
    if (rank < 1e-12) rank = 1e-12;
    if (q > 0.5) return quantileFromTop(rank);
    double seen = 0;
    for (std::uint32_t u = used_; u; u &= u - 1) {
      const int b = std::countr_zero(u);
      const Page& p = page(b);
      const Block& bl = p.meta;
      const double block = static_cast<double>(bl.sum);
      // Skip whole blocks that end before the rank (with a margin for rounding in decayed
      // sums: near the boundary, walk the bins).
      if (seen + block < rank - 1e-6 * (1.0 + rank)) {
        seen += block;
        continue;
      }
      for (int g = 0; g < kGroupsPerBlock; ++g) {
        const std::uint64_t gm = (bl.mask >> (g * kGroup)) & kGroupMask;
        if (!gm) continue;
        const double group = static_cast<double>(bl.group[g]);
        if (seen + group < rank - 1e-6 * (1.0 + rank)) {  // the same test, one level down
          seen += group;
          continue;
        }
        const int base = g * kGroup;
        for (std::uint64_t m = gm; m; m &= m - 1) {
          const int i = base + std::countr_zero(m);
          if (!(p.counts[i] > Count{})) continue;  // an empty bin is never the answer (q = 0)
          seen += static_cast<double>(p.counts[i]);
          if (seen >= rank - 1e-9) return Layout::representative((b << kBlockBits) + i);
        }
      }
    }
    return Layout::representative(Layout::kBins - 1);
  }
  // quantile(q) > value, without the walk: one prefix count (integer counts only; see the
  // free quantileExceeds). A breaker asks it once per slice (the drift check).
  bool quantileExceeds(double q, double value) const {
    static_assert(std::is_integral_v<Count>, "exact only for integer counts");
    const int last = Layout::lastBinAtOrBelow(value);
    return spillway::quantileExceeds(q, value, last < 0 ? 0 : countThrough(last), total_);
  }
  // Samples in bins [0, bin] (integer counts only): the used blocks below, the groups below in
  // its block, then the bins of its group — all 16 summed under a mask, no branch per bin.
  std::uint64_t countThrough(int bin) const {
    static_assert(std::is_integral_v<Count>, "exact only for integer counts");
    const int blk = bin >> kBlockBits;
    std::uint64_t n = 0;
    for (std::uint32_t u = used_ & ((std::uint32_t{1} << blk) - 1); u; u &= u - 1)
      n += page(std::countr_zero(u)).meta.sum;
    if (!slot_[blk]) return n;  // nothing in the bin's block
    const Page& p = page(blk);
    const int g = (bin >> kGroupBits) & (kGroupsPerBlock - 1);
    for (int k = 0; k < g; ++k) n += p.meta.group[k];
    const int base = (bin & (kBlock - 1)) & ~(kGroup - 1);
    const int upto = (bin & (kBlock - 1)) - base;
    Count inGroup{};
    for (int i = 0; i < kGroup; ++i) inGroup += i <= upto ? p.counts[base + i] : Count{};
    return n + inGroup;
  }
  // Number of samples strictly above `us` (bin-resolution: bins whose lower edge > us).
  double countAbove(std::uint64_t us) const {
    const int b = Layout::binOf(us);
    double n = 0;
    const int blockEnd = std::min(((b >> kBlockBits) + 1) * kBlock, Layout::kBins);
    for (int i = b + 1; i < blockEnd; ++i) n += static_cast<double>(binCount(i));
    for (int k = (b >> kBlockBits) + 1; k < kBlocks; ++k) n += static_cast<double>(blockCount(k));
    return n;
  }

 private:
  struct Block {
    std::uint64_t mask = 0;  // bit set = bin may be non-empty
    Count sum{};
    std::array<Count, kGroupsPerBlock> group{};
  };
  // A block's sums and mask sit together (one cache line) before its counts.
  struct Page {
    Block meta;
    std::array<Count, kBlock> counts{};
  };
  const Page& page(int block) const { return pages_[slot_[block] - 1]; }
  Page& pageFor(int block) {
    const int s = slot_[block];
    if (s) [[likely]]
      return pages_[s - 1];
    return newPage(block);
  }
  Page& newPage(int block) {
    pages_.reserve(pages_.size() + 1);  // exactly: a histogram spans a few blocks
    pages_.emplace_back();
    slot_[block] = static_cast<std::uint8_t>(pages_.size());
    return pages_.back();
  }

  // The nearest-rank answer is the smallest bin whose cumulative count reaches `rank`, i.e.
  // walking down, the first bin below which fewer than `rank` samples remain.
  double quantileFromTop(double rank) const {
    const double total = static_cast<double>(total_);
    double above = 0;  // samples in bins above the current one
    for (std::uint32_t u = used_; u; u &= ~(std::uint32_t{1} << (31 - std::countl_zero(u)))) {
      const int b = 31 - std::countl_zero(u);
      const Page& p = page(b);
      const Block& bl = p.meta;
      const double block = static_cast<double>(bl.sum);
      // The whole block lies above the answer when what is below it still reaches the rank.
      if (total - above - block >= rank - 1e-9 + 1e-6 * (1.0 + rank)) {
        above += block;
        continue;
      }
      for (int g = kGroupsPerBlock - 1; g >= 0; --g) {
        const std::uint64_t gm = (bl.mask >> (g * kGroup)) & kGroupMask;
        if (!gm) continue;
        const double group = static_cast<double>(bl.group[g]);
        if (total - above - group >= rank - 1e-9 + 1e-6 * (1.0 + rank)) {
          above += group;
          continue;
        }
        const int base = g * kGroup;
        for (std::uint64_t m = gm; m; m &= ~(std::uint64_t{1} << (63 - std::countl_zero(m)))) {
          const int i = base + 63 - std::countl_zero(m);
          const double c = static_cast<double>(p.counts[i]);
          if (!(c > 0)) continue;
          if (total - above - c < rank - 1e-9) return Layout::representative((b << kBlockBits) + i);
          above += c;
        }
      }
    }
    // Rounding in decayed sums: fall back to the lowest non-empty bin.
    for (int b = 0; b < kBlocks; ++b)
      for (std::uint64_t m = blockMask(b); m; m &= m - 1) {
        const int i = (b << kBlockBits) + std::countr_zero(m);
        if (binCount(i) > Count{}) return Layout::representative(i);
      }
    return 0.0;
  }

  template <typename Other, typename Conv>
  void mergeImpl(const BasicHistogram<Other>& o, Conv conv) {
    for (std::uint32_t u = o.usedBlocks(); u; u &= u - 1) {
      const int b = std::countr_zero(u);
      const std::uint64_t mask = o.blockMask(b);
      Page& tp = pageFor(b);
      for (std::uint64_t m = mask; m; m &= m - 1) {
        const int bit = std::countr_zero(m);
        tp.counts[bit] += conv(o.binCount((b << kBlockBits) + bit));
      }
      Block& tb = tp.meta;
      tb.sum += conv(o.blockCount(b));
      for (int g = 0; g < kGroupsPerBlock; ++g)
        if ((mask >> (g * kGroup)) & kGroupMask) tb.group[g] += conv(o.groupCount(b, g));
      tb.mask |= mask;
    }
    used_ |= o.usedBlocks();
    total_ += conv(o.total());
  }

  Count total_{};
  std::uint32_t used_ = 0;                    // bit b set = block b's mask != 0 (stale: lags)
  std::array<std::uint8_t, kBlocks> slot_{};  // block b's page is pages_[slot_[b] - 1]; 0: none
  bool stale_ = false;                        // sums and masks lag the counts (addBinsDeferred)
  std::vector<Page> pages_;
  static_assert(kBlocks <= 32, "one bit per block in used_");
};

using LatencyHistogram = BasicHistogram<std::uint32_t>;
using DecayingHistogram = BasicHistogram<double>;

}  // namespace spillway
