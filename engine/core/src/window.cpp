#include "spillway/window.hpp"

#include <algorithm>
#include <bit>

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
}

void SlidingStats::allocBuckets() {
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
    sl.hist->addBins(sl.bins.data(), static_cast<int>(sl.bins.size()));
    std::vector<std::uint16_t>().swap(sl.bins);  // a busy slice stays dense: free the list
    sl.dense = true;
  }
  return *sl.hist;
}

void SlidingStats::movePending() {
  if (!windowHist_) allocHist();
  Slice& sl = slices_[headSlice_];
  ++sl.gen;
  int k = 0;
  if (!sl.dense) {  // the slice's list while it is short
    const auto room = static_cast<int>(kSparseSlice - sl.bins.size());
    const int n = std::min<int>(pendingN_, room);
    const std::size_t need = sl.bins.size() + static_cast<std::size_t>(n);
    if (need > sl.bins.capacity()) sl.bins.reserve(std::bit_ceil(need));  // little slack
    sl.bins.insert(sl.bins.end(), pending_.begin(), pending_.begin() + n);
    k = n;
  }
  if (k < pendingN_) makeDense(sl).addBins(pending_.data() + k, pendingN_ - k);
  pendingN_ = 0;
}

void SlidingStats::flushHead() {
  if (keepWindow_) addSlice(*windowHist_, slices_[headSlice_]);
}

void SlidingStats::addSlice(LatencyHistogram& h, const Slice& sl) {
  if (sl.dense)
    h.merge(*sl.hist);
  else
    h.addBins(sl.bins.data(), static_cast<int>(sl.bins.size()));
}

const LatencyHistogram* SlidingStats::histogram() const {
  if (!windowHist_ && !pendingN_) return nullptr;
  thread_local LatencyHistogram copy;
  const auto withPending = [this]() {
    for (int k = 0; k < pendingN_; ++k) copy.addBin(pending_[k], 1);
    return &copy;
  };
  if (!keepWindow_ || !windowHist_) {
    // Built from the slices, into a per-thread copy: the window itself is not touched.
    copy.clear();
    if (windowHist_)
      for (const Slice& sl : slices_) addSlice(copy, sl);
    return withPending();
  }
  const Slice& head = slices_[headSlice_];
  const bool headEmpty = head.dense ? head.hist->total() == 0 : head.bins.empty();
  if (headEmpty && !pendingN_) return windowHist_.get();
  copy = *windowHist_;
  addSlice(copy, head);
  return withPending();
}

bool SlidingStats::quantileExceeds(double q, double value) {
  flushPending();
  if (!windowHist_) return false;
  if (keepWindow_) return histogram()->quantileExceeds(q, value);
  const int last = HistogramLayout::lastBinAtOrBelow(value);
  if (last != countBin_) {
    countBin_ = last;
    for (Slice& sl : slices_) sl.countGen = sl.gen - 1;  // all stale
  }
  std::uint64_t through = 0, total = 0;
  for (Slice& sl : slices_) {
    if (sl.countGen != sl.gen) {
      std::uint32_t n = 0;
      if (sl.dense) {
        sl.countTotal = sl.hist->total();
        if (last >= 0) n = static_cast<std::uint32_t>(sl.hist->countThrough(last));
      } else {
        sl.countTotal = static_cast<std::uint32_t>(sl.bins.size());
        // A compare and an add per call, no branch: this loop vectorizes.
        for (const std::uint16_t bin : sl.bins) n += static_cast<int>(bin) <= last;
      }
      sl.countThrough = n;
      sl.countGen = sl.gen;
    }
    through += sl.countThrough;
    total += sl.countTotal;
  }
  return spillway::quantileExceeds(q, value, through, total);
}

void SlidingStats::keepWindowHistogram(bool on) {
  flushPending();
  if (on && !keepWindow_ && windowHist_) {
    // Catch up: the window takes every completed slice's calls again.
    windowHist_->clear();
    for (int k = 0; k < nSlices_; ++k)
      if (k != headSlice_) addSlice(*windowHist_, slices_[k]);
  }
  keepWindow_ = on;
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
  ++sl.gen;
  if (sl.dense) {
    // A slice busy enough for a histogram stays one: the next one through this slot is
    // likely as busy, and a list grown to kSparseSlice first would only be thrown away.
    const bool busy = sl.hist->total() >= kSparseSlice;
    if (sl.hist->total() > 0) {
      if (keepWindow_) windowHist_->subtract(*sl.hist);
      sl.hist->clear();
    }
    sl.dense = busy;
  } else {
    if (keepWindow_)
      for (const std::uint16_t bin : sl.bins) windowHist_->removeBin(bin, 1);
    sl.bins.clear();
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
    flushPending();
    if (!windowHist_) allocHist();
    ++slices_[headSlice_].gen;
    makeDense(slices_[headSlice_]).merge(*hist);
  }
}

void SlidingStats::restartDecision() {
  decision_ = WindowCounts{};
  epochIdx_ = headIdx_;
  epochBase_ = headBucket_;
  if (started_ && slotIdx_[headSlot_] != headIdx_) {
    slotIdx_[headSlot_] = headIdx_;
  }
}

}  // namespace spillway
