#pragma once
// A completed window slice's latencies. A slice is written once, when it completes, and read
// once or twice after (the drift check, the window's eviction, the baseline), so it need not
// be a histogram. A short slice keeps its calls' bins as they came (a list); a longer one is
// packed: for every group of 16 bins that holds any, in rising order, the group's index (one
// byte: 100 groups), a 16-bit mask of its bins in use, then one count per bin in use — a byte
// below 255, else 255 and four bytes. A busy one-second slice spans a few octaves of bins:
// ~200 bytes packed against ~1.1 KB of histogram pages, which was most of what a busy
// instance held. Either form lives in one vector of 16-bit words (ten of them per window).
#include <algorithm>
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
      p += 3;
      for (; mask; mask &= mask - 1) {
        std::uint32_t c = *p++;
        if (c == kEscape) {
          std::memcpy(&c, p, sizeof c);
          p += sizeof c;
        }
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
  static constexpr std::uint8_t kEscape = 255;
  static constexpr std::uint8_t kEnd = 254;  // pads an odd byte count (no group is numbered so)
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
  std::size_t maskAt = 0;
  int group = -1;
  while (next(bin, count)) {
    if ((bin >> kGroupBits) != group) {
      group = bin >> kGroupBits;
      maskAt = out.size() + 1;
      out.insert(out.end(), {static_cast<std::uint8_t>(group), 0, 0});
    }
    const unsigned bit = 1u << (bin & (kGroup - 1));
    out[maskAt] |= static_cast<std::uint8_t>(bit);
    out[maskAt + 1] |= static_cast<std::uint8_t>(bit >> 8);
    if (count < kEscape) {
      out.push_back(static_cast<std::uint8_t>(count));
    } else {
      std::uint8_t raw[1 + sizeof count] = {kEscape};
      std::memcpy(raw + 1, &count, sizeof count);
      out.insert(out.end(), raw, raw + sizeof raw);
    }
    total += count;
  }
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
