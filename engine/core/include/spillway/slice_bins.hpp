#pragma once
// A completed window slice's latencies. A slice is written once, when it completes, and read
// once or twice after (the drift check, the window's eviction, the baseline), so it need not
// be a histogram. A short slice keeps its calls' bins as they came (a list); a longer one is
// packed: for every group of 16 bins that holds any, in rising order, the group's index (one
// byte: 100 groups), a 16-bit mask of its bins in use, a nibble per bin in use (its count, or 15:
// the count is long), then the long counts in order — a byte of count − 15 below 255, else 255
// and four bytes. Most bins of a second's calls hold a few: a busy one-second slice spans a few
// octaves of bins, ~130 bytes packed (~200 with a byte per count) against ~1.1 KB of histogram
// pages, which was most of what a busy instance held. Either form lives in one vector of 16-bit
// words (ten of them per window).
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "spillway/histogram.hpp"

namespace spillway {

class SliceBins {
 public:
  static constexpr int kGroupBits = 4;
  static constexpr int kGroup = 1 << kGroupBits;  // 16 bins
  static_assert(HistogramLayout::kBins / kGroup < 254, "a group's index fits a byte");

  // Replaces the content with a histogram's bins (integer counts, 16 or 32 bits), packed.
  template <typename Count>
  void pack(const BasicHistogram<Count>& h);
  // Replaces the content with one sample per entry of `bins` (any order, repeats allowed),
  // packed.
  void pack(const std::uint16_t* bins, std::size_t n);
  // Takes `bins` as the list, leaving `bins` this one's former storage, emptied (its room
  // kept: the window's head fills it next).
  void takeList(std::vector<std::uint16_t>& bins) {
    words_.swap(bins);
    bins.clear();
    total_ = static_cast<std::uint32_t>(words_.size());
    packed_ = false;
  }
  void clear() {  // keeps the room
    words_.clear();
    total_ = 0;
    packed_ = false;
  }

  std::uint32_t total() const { return total_; }
  bool empty() const { return total_ == 0; }
  bool packed() const { return packed_; }
  // The list form's bins (one per call, unordered); only when !packed().
  const std::uint16_t* list() const { return words_.data(); }
  std::size_t heapBytes() const { return words_.capacity() * sizeof(std::uint16_t); }

  // f(bin, count) for every bin in use, in rising bin order; count > 0. Only when packed().
  template <typename F>
  void forEach(F&& f) const {
    const auto* p = reinterpret_cast<const std::uint8_t*>(words_.data());
    const std::uint8_t* const end = p + words_.size() * sizeof(std::uint16_t);
    while (p < end && *p != kEnd) {
      const int base = p[0] << kGroupBits;
      unsigned mask = p[1] | (unsigned{p[2]} << 8);
      const std::uint8_t* const nibbles = p + 3;
      p = nibbles + (std::popcount(mask) + 1) / 2;  // the group's long counts follow
      for (int k = 0; mask; mask &= mask - 1, ++k) {
        std::uint32_t c = (nibbles[k >> 1] >> ((k & 1) * 4)) & kNibble;
        if (c == kNibble) c = longCount(p);
        f(base + std::countr_zero(mask), c);
      }
    }
  }
  // Samples in bins [0, bin], either form.
  std::uint32_t countThrough(int bin) const {
    std::uint32_t n = 0;
    if (!packed_) return listCountThrough(words_.data(), words_.size(), bin);
    forEach([&](int b, std::uint32_t c) { n += b <= bin ? c : 0; });
    return n;
  }
  // Calls in bins [0, bin] of a list of their bins (the head slice's too).
  static std::uint32_t listCountThrough(const std::uint16_t* bins, std::size_t count, int bin) {
    std::uint32_t n = 0;
    // A compare and an add per call, no branch: this loop vectorizes.
    for (std::size_t k = 0; k < count; ++k) n += static_cast<int>(bins[k]) <= bin;
    return n;
  }
  // Adds the slice to `h` (a LatencyHistogram or a CompactHistogram), either form.
  template <typename H>
  void addTo(H& h) const {
    if (packed_)
      forEach([&](int b, std::uint32_t c) { h.addBin(b, c); });
    else
      h.addBins(words_.data(), static_cast<int>(words_.size()));
  }
  // Takes the slice back out of `h`, which holds it: one bin at a time gives `h` the same
  // state as subtracting a histogram of it.
  template <typename H>
  void removeFrom(H& h) const {
    if (packed_)
      forEach([&](int b, std::uint32_t c) { h.removeBin(b, c); });
    else
      for (const std::uint16_t b : words_) h.removeBin(b, 1);
  }
  LatencyHistogram histogram() const {
    LatencyHistogram h;
    addTo(h);
    return h;
  }

 private:
  static constexpr std::uint32_t kNibble = 15;  // a count of 15 or more follows the nibbles
  static constexpr std::uint8_t kEscape = 255;  // ... as four bytes when it is 270 or more
  static constexpr std::uint8_t kEnd = 254;     // pads an odd byte count (no group is numbered so)
  static std::uint32_t longCount(const std::uint8_t*& p) {
    const std::uint8_t b = *p++;
    if (b != kEscape) return kNibble + b;
    std::uint32_t c;
    std::memcpy(&c, p, sizeof c);
    p += sizeof c;
    return c;
  }
  // Packing is written to a per-thread scratch as long as the longest packing can be (every
  // group full, every count four bytes), then copied once (finish): the slice's own storage is
  // then exactly as long as the longest slice it held, with no doubling slack.
  static constexpr std::size_t kGroupMax = 3 + kGroup / 2 + kGroup * 5;
  static std::uint8_t* scratch() {
    thread_local std::array<std::uint8_t, (HistogramLayout::kBins / kGroup) * kGroupMax + 1> s;
    return s.data();
  }
  // Writes one group at `out` (its index, mask, nibbles and long counts; `counts` in bin
  // order, one per mask bit) and returns the end.
  static std::uint8_t* writeGroup(std::uint8_t* out, int group, unsigned mask,
                                  const std::uint32_t* counts, int n);
  void finish(const std::uint8_t* begin, std::uint8_t* end, std::uint32_t total);
  // Appends the groups of sorted (bin, count) runs: `next(bin, count)` yields them in rising
  // bin order and returns false at the end.
  template <typename Next>
  void build(Next&& next);

  std::vector<std::uint16_t> words_;  // the list, or the packed bytes
  std::uint32_t total_ = 0;
  bool packed_ = false;
};

inline std::uint8_t* SliceBins::writeGroup(std::uint8_t* out, int group, unsigned mask,
                                           const std::uint32_t* counts, int n) {
  out[0] = static_cast<std::uint8_t>(group);
  out[1] = static_cast<std::uint8_t>(mask);
  out[2] = static_cast<std::uint8_t>(mask >> 8);
  std::uint8_t* const nibbles = out + 3;
  out = nibbles + (n + 1) / 2;
  std::memset(nibbles, 0, static_cast<std::size_t>(out - nibbles));
  for (int k = 0; k < n; ++k)
    nibbles[k >> 1] |= static_cast<std::uint8_t>(std::min(counts[k], kNibble) << ((k & 1) * 4));
  for (int k = 0; k < n; ++k) {
    const std::uint32_t c = counts[k];
    if (c < kNibble) continue;
    if (c - kNibble < kEscape) {
      *out++ = static_cast<std::uint8_t>(c - kNibble);
    } else {
      *out++ = kEscape;
      std::memcpy(out, &c, sizeof c);
      out += sizeof c;
    }
  }
  return out;
}

inline void SliceBins::finish(const std::uint8_t* begin, std::uint8_t* end, std::uint32_t total) {
  if ((end - begin) % 2) *end++ = kEnd;
  const auto bytes = static_cast<std::size_t>(end - begin);
  words_.clear();
  words_.resize(bytes / 2);  // exactly: an empty vector grows to the size asked
  std::memcpy(words_.data(), begin, bytes);
  total_ = total;
  packed_ = true;
}

template <typename Next>
void SliceBins::build(Next&& next) {
  std::uint8_t* const begin = scratch();
  std::uint8_t* out = begin;
  std::uint32_t total = 0, count = 0;
  int bin = 0, group = -1, inGroup = 0;
  std::array<std::uint32_t, kGroup> counts;  // the group's counts, in bin order
  unsigned mask = 0;
  while (next(bin, count)) {
    if ((bin >> kGroupBits) != group) {
      if (group >= 0) out = writeGroup(out, group, mask, counts.data(), inGroup);
      group = bin >> kGroupBits;
      inGroup = 0;
      mask = 0;
    }
    mask |= 1u << (bin & (kGroup - 1));
    counts[static_cast<std::size_t>(inGroup++)] = count;
    total += count;
  }
  if (group >= 0) out = writeGroup(out, group, mask, counts.data(), inGroup);
  finish(begin, out, total);
}

// Group by group from the histogram's pages: its masks name the groups in use (a loose bit may
// name an emptied bin: skipped).
template <typename Count>
void SliceBins::pack(const BasicHistogram<Count>& h) {
  using H = BasicHistogram<Count>;
  constexpr int kGroupsPerBlock = H::kBlock / kGroup;
  std::uint8_t* const begin = scratch();
  std::uint8_t* out = begin;
  std::uint32_t total = 0;
  std::array<std::uint32_t, kGroup> counts;
  for (std::uint32_t blocks = h.usedBlocks(); blocks; blocks &= blocks - 1) {
    const int block = std::countr_zero(blocks);
    const Count* const bins = h.blockCounts(block);
    const std::uint64_t blockMask = h.blockMask(block);
    for (int g = 0; g < kGroupsPerBlock; ++g) {
      unsigned mask = 0;
      int n = 0;
      for (auto m = static_cast<unsigned>((blockMask >> (g * kGroup)) & 0xFFFFu); m; m &= m - 1) {
        const int bit = std::countr_zero(m);
        const auto c = static_cast<std::uint32_t>(bins[g * kGroup + bit]);
        if (!c) continue;
        mask |= 1u << bit;
        counts[static_cast<std::size_t>(n++)] = c;
        total += c;
      }
      if (n) out = writeGroup(out, block * kGroupsPerBlock + g, mask, counts.data(), n);
    }
  }
  finish(begin, out, total);
}

inline void SliceBins::pack(const std::uint16_t* bins, std::size_t n) {
  thread_local std::vector<std::uint16_t> sorted;
  sorted.assign(bins, bins + n);
  std::sort(sorted.begin(), sorted.end());
  std::size_t k = 0;
  build([&](int& bin, std::uint32_t& count) {
    if (k == sorted.size()) return false;
    const std::size_t from = k;
    while (k < sorted.size() && sorted[k] == sorted[from]) ++k;
    bin = sorted[from];
    count = static_cast<std::uint32_t>(k - from);
    return true;
  });
}

}  // namespace spillway
