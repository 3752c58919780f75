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
  // Appends the groups of sorted (bin, count) runs: `next(bin, count)` yields them in rising
  // bin order and returns false at the end.
  template <typename Next>
  void build(Next&& next);

  std::vector<std::uint16_t> words_;  // the list, or the packed bytes
  std::uint32_t total_ = 0;
  bool packed_ = false;
};

template <typename Next>
void SliceBins::build(Next&& next) {
  // Written to a per-thread scratch first, then copied once: the slice's own storage is then
  // exactly as long as the longest slice it held, with no doubling slack.
  thread_local std::vector<std::uint8_t> out;
  out.clear();
  std::uint32_t total = 0;
  int bin = 0;
  std::uint32_t count = 0;
  int group = -1;
  std::array<std::uint32_t, kGroup> counts{};  // the group's counts, in bin order
  int inGroup = 0;
  unsigned mask = 0;
  const auto endGroup = [&] {
    if (group < 0) return;
    out.insert(out.end(), {static_cast<std::uint8_t>(group), static_cast<std::uint8_t>(mask),
                           static_cast<std::uint8_t>(mask >> 8)});
    const std::size_t nibbles = out.size();
    out.resize(nibbles + static_cast<std::size_t>(inGroup + 1) / 2, 0);
    for (int k = 0; k < inGroup; ++k) {
      const std::uint32_t c = counts[static_cast<std::size_t>(k)];
      out[nibbles + static_cast<std::size_t>(k >> 1)] |=
          static_cast<std::uint8_t>(std::min(c, kNibble) << ((k & 1) * 4));
    }
    for (int k = 0; k < inGroup; ++k) {
      const std::uint32_t c = counts[static_cast<std::size_t>(k)];
      if (c < kNibble) continue;
      if (c - kNibble < kEscape) {
        out.push_back(static_cast<std::uint8_t>(c - kNibble));
      } else {
        std::uint8_t raw[1 + sizeof c] = {kEscape};
        std::memcpy(raw + 1, &c, sizeof c);
        out.insert(out.end(), raw, raw + sizeof raw);
      }
    }
    inGroup = 0;
    mask = 0;
  };
  while (next(bin, count)) {
    if ((bin >> kGroupBits) != group) {
      endGroup();
      group = bin >> kGroupBits;
    }
    mask |= 1u << (bin & (kGroup - 1));
    counts[static_cast<std::size_t>(inGroup++)] = count;
    total += count;
  }
  endGroup();
  if (out.size() % 2) out.push_back(kEnd);
  words_.clear();
  words_.resize(out.size() / 2);  // exactly: an empty vector grows to the size asked
  std::memcpy(words_.data(), out.data(), out.size());
  total_ = total;
  packed_ = true;
}

template <typename Count>
void SliceBins::pack(const BasicHistogram<Count>& h) {
  using H = BasicHistogram<Count>;
  std::uint32_t blocks = h.usedBlocks();
  std::uint64_t mask = 0;
  int block = -1;
  build([&](int& bin, std::uint32_t& count) {
    for (;;) {
      while (mask) {  // a loose mask bit may name an emptied bin: skip it
        bin = (block << H::kBlockBits) + std::countr_zero(mask);
        mask &= mask - 1;
        count = h.binCount(bin);
        if (count) return true;
      }
      if (!blocks) return false;
      block = std::countr_zero(blocks);
      blocks &= blocks - 1;
      mask = h.blockMask(block);
    }
  });
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
