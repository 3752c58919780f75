#include "spillway/window.hpp"

#include <algorithm>

namespace spillway {

SlidingStats::SlidingStats(Micros length, Micros bucketWidth)
    : width_(bucketWidth > 0 ? bucketWidth : 1) {
  const Micros len = std::max(length, width_);
  n_ = static_cast<int>((len + width_ - 1) / width_);
  // Histograms are the memory cost of a window (6.4 KB each): group buckets into at most
  // kMaxSlices slices. Quantiles then cover the window rounded up to whole slices.
  bucketsPerSlice_ = (n_ + kMaxSlices - 1) / kMaxSlices;
  // The n_ newest buckets (the head's included) span at most ceil((n_-1)/bps) + 1 slices; one
  // more would keep a slice that lies entirely outside the window.
  nSlices_ = (n_ - 1 + bucketsPerSlice_ - 1) / bucketsPerSlice_ + 1;
  buckets_.assign(static_cast<std::size_t>(n_), WindowCounts{});
  slotIdx_.assign(static_cast<std::size_t>(n_), std::int64_t{-1} << 62);
}

void SlidingStats::allocHist() {
  slices_.resize(static_cast<std::size_t>(nSlices_));
  windowHist_ = std::make_unique<LatencyHistogram>();
}

LatencyHistogram& SlidingStats::makeDense(Slice& sl) {
  if (!sl.dense) {
    if (!sl.hist) sl.hist = std::make_unique<LatencyHistogram>();
    // Dense slices add to the window as they go: first the list's calls it has not taken.
    if (keepWindow_)
      for (std::size_t k = sl.flushed; k < sl.bins.size(); ++k) windowHist_->addBin(sl.bins[k], 1);
    for (const std::uint16_t bin : sl.bins) sl.hist->addBin(bin, 1);
    sl.bins.clear();
    sl.flushed = 0;
    sl.dense = true;
  }
  return *sl.hist;
}

void SlidingStats::flushHead() {
  Slice& sl = slices_[headSlice_];
  if (sl.dense || !keepWindow_) return;
  for (std::size_t k = sl.flushed; k < sl.bins.size(); ++k) windowHist_->addBin(sl.bins[k], 1);
  sl.flushed = static_cast<std::uint32_t>(sl.bins.size());
}

const LatencyHistogram* SlidingStats::histogram() const {
  if (!windowHist_) return nullptr;
  thread_local LatencyHistogram copy;
  if (!keepWindow_) {
    // Built from the slices, into a per-thread copy: the window itself is not touched.
    copy.clear();
    addSlices(copy);
    return &copy;
  }
  const Slice& sl = slices_[headSlice_];
  if (sl.dense || sl.flushed == sl.bins.size()) return windowHist_.get();
  copy = *windowHist_;
  for (std::size_t k = sl.flushed; k < sl.bins.size(); ++k) copy.addBin(sl.bins[k], 1);
  return &copy;
}

bool SlidingStats::quantileExceeds(double q, double value) {
  if (!windowHist_) return false;
  if (keepWindow_) return histogram()->quantileExceeds(q, value);
  const int last = HistogramLayout::lastBinAtOrBelow(value);
  if (last != countBin_) {
    countBin_ = last;
    for (int k = 0; k < nSlices_; ++k) countGen_[k] = sliceGen_[k] - 1;  // all stale
  }
  std::uint64_t through = 0, total = 0;
  for (int k = 0; k < nSlices_; ++k) {
    if (countGen_[k] != sliceGen_[k]) {
      const Slice& sl = slices_[k];
      std::uint32_t n = 0;
      if (sl.dense) {
        countTotal_[k] = sl.hist->total();
        if (last >= 0) n = static_cast<std::uint32_t>(sl.hist->countThrough(last));
      } else {
        countTotal_[k] = static_cast<std::uint32_t>(sl.bins.size());
        // A compare and an add per call, no branch: this loop vectorizes.
        for (const std::uint16_t bin : sl.bins) n += static_cast<int>(bin) <= last;
      }
      countThrough_[k] = n;
      countGen_[k] = sliceGen_[k];
    }
    through += countThrough_[k];
    total += countTotal_[k];
  }
  return spillway::quantileExceeds(q, value, through, total);
}

void SlidingStats::keepWindowHistogram(bool on) {
  if (on && !keepWindow_ && windowHist_) {
    // Catch up: the window takes every slice's calls again.
    windowHist_->clear();
    addSlices(*windowHist_);
    for (Slice& sl : slices_) sl.flushed = static_cast<std::uint32_t>(sl.bins.size());
  }
  keepWindow_ = on;
}

void SlidingStats::addSlices(LatencyHistogram& h) const {
  for (const Slice& sl : slices_) {
    if (sl.dense) {
      h.merge(*sl.hist);
    } else {
      for (const std::uint16_t bin : sl.bins) h.addBin(bin, 1);
    }
  }
}

// Takes the slice's calls out of the window histogram and empties it. One bin at a time gives
// the window the same state as subtracting the slice's histogram.
CompletedSlice SlidingStats::evictedView(int slot) const {
  const Slice& sl = slices_[static_cast<std::size_t>(slot)];
  CompletedSlice v;
  v.slot = slot;
  if (sl.dense) {
    v.hist = sl.hist.get();
  } else {
    v.bins = sl.bins.data();
    v.binCount = static_cast<std::uint32_t>(sl.bins.size());
  }
  return v;
}

void SlidingStats::evictSlice(Slice& sl) {
  ++sliceGen_[static_cast<std::size_t>(&sl - slices_.data())];
  if (sl.dense) {
    if (sl.hist->total() > 0) {
      if (keepWindow_) windowHist_->subtract(*sl.hist);
      sl.hist->clear();
    }
    sl.dense = false;
  } else {
    // Calls the window never took (a head slice evicted by a long gap) are simply dropped.
    if (keepWindow_)
      for (std::size_t k = 0; k < sl.flushed; ++k) windowHist_->removeBin(sl.bins[k], 1);
    sl.bins.clear();
    sl.flushed = 0;
  }
}

void SlidingStats::evictBucket(std::int64_t idx, int slot) {
  WindowCounts& b = buckets_[slot];
  const std::int64_t old = slotIdx_[slot];
  all_.sub(b);
  if (old > epochIdx_) {
    decision_.sub(b);
  } else if (old == epochIdx_) {
    WindowCounts part = b;
    part.sub(epochBase_);
    decision_.sub(part);
    epochBase_ = WindowCounts{};
  }
  b = WindowCounts{};
  slotIdx_[slot] = idx;
}

void SlidingStats::addAggregate(const WindowCounts& c, const LatencyHistogram* hist) {
  headBucket_.add(c);
  all_.add(c);
  decision_.add(c);
  headSliceCounts_.add(c);
  if (hist && hist->total() > 0) {
    if (!windowHist_) allocHist();
    ++sliceGen_[headSlice_];
    makeDense(slices_[headSlice_]).merge(*hist);
    if (keepWindow_) windowHist_->merge(*hist);
  }
}

void SlidingStats::restartDecision() {
  decision_ = WindowCounts{};
  epochIdx_ = headIdx_;
  epochBase_ = headBucket_;
  if (slotIdx_[headSlot_] != headIdx_) {
    slotIdx_[headSlot_] = headIdx_;
  }
}

}  // namespace spillway
