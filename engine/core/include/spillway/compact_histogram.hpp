#pragma once
// A window's latencies, in as few bytes as their count allows. The head slice's histogram
// holds the slice's calls and the window's histogram the window's: while there are fewer than
// 65,536 no bin can overflow 16 bits, and the pages take half the room of 32-bit ones. Those
// two were the largest histograms a busy instance kept (1.4 KB each at 1,000 calls/s). A count
// that would pass 65,535 widens the histogram to 32 bits for good: a busy instance stays busy.
#include <cstdint>
#include <memory>

#include "spillway/copyable_ptr.hpp"
#include "spillway/histogram.hpp"

namespace spillway {

using NarrowHistogram = BasicHistogram<std::uint16_t>;

class CompactHistogram {
 public:
  std::uint32_t total() const { return wide_ ? wide_->total() : narrow_ ? narrow_->total() : 0; }
  void addBin(int bin, std::uint32_t n) {
    if (fitsNarrow(n))
      narrowHist().addBin(bin, static_cast<std::uint16_t>(n));
    else
      wideHist().addBin(bin, n);
  }
  void addBins(const std::uint16_t* bins, int n) {
    if (fitsNarrow(static_cast<std::uint64_t>(n)))
      narrowHist().addBins(bins, n);
    else
      wideHist().addBins(bins, n);
  }
  // See BasicHistogram::addBinsDeferred: counts now, sums and masks at settle().
  void addBinsDeferred(const std::uint16_t* bins, int n) {
    if (fitsNarrow(static_cast<std::uint64_t>(n)))
      narrowHist().addBinsDeferred(bins, n);
    else
      wideHist().addBinsDeferred(bins, n);
  }
  void settle() {
    if (wide_) wide_->settle();
    if (narrow_) narrow_->settle();
  }
  bool stale() const { return wide_ ? wide_->stale() : narrow_ && narrow_->stale(); }
  // h.addBin for every bin in use, from the counts alone (valid while stale).
  template <typename H>
  void addCountsTo(H& h) const {
    visit([&h](const auto& own) { own.addCountsTo(h); });
  }
  template <typename Count>
  void merge(const BasicHistogram<Count>& h) {
    if (fitsNarrow(h.total()))
      narrowHist().merge(h);
    else
      wideHist().merge(h);
  }
  // Takes back calls that were added: a count only shrinks, so the width stays.
  void removeBin(int bin, std::uint32_t n) {
    if (wide_)
      wide_->removeBin(bin, n);
    else
      narrow_->removeBin(bin, static_cast<std::uint16_t>(n));
  }
  std::uint64_t countThrough(int bin) const {
    return wide_ ? wide_->countThrough(bin) : narrow_ ? narrow_->countThrough(bin) : 0;
  }
  // f(histogram) with the one that holds the calls (16- or 32-bit counts); nothing when none
  // was ever added.
  template <typename F>
  void visit(F&& f) const {
    if (wide_)
      f(*wide_);
    else if (narrow_)
      f(*narrow_);
  }
  // At most one is non-null.
  const LatencyHistogram* wide() const { return wide_.get(); }
  const NarrowHistogram* narrow() const { return narrow_.get(); }
  void clear() {  // pages stay: the next slice is likely as busy
    if (wide_) wide_->clear();
    if (narrow_) narrow_->clear();
  }
  void release() {
    wide_.reset();
    narrow_.reset();
  }

 private:
  bool fitsNarrow(std::uint64_t more) const {
    return !wide_ && (narrow_ ? narrow_->total() : 0u) + more <= 0xFFFFu;
  }
  NarrowHistogram& narrowHist() {
    if (!narrow_) narrow_ = std::make_unique<NarrowHistogram>();
    return *narrow_;
  }
  LatencyHistogram& wideHist() {
    if (!wide_) {
      wide_ = std::make_unique<LatencyHistogram>();
      if (narrow_) {
        narrow_->settle();  // merge reads the masks
        wide_->merge(*narrow_);
      }
      narrow_.reset();
    }
    return *wide_;
  }

  CopyablePtr<NarrowHistogram> narrow_;
  CopyablePtr<LatencyHistogram> wide_;
};

}  // namespace spillway
