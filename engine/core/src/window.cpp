#include "spillway/window.hpp"

#include <algorithm>
#include <bit>

namespace spillway {

SlidingStats::SlidingStats(Micros length, Micros bucketWidth)
    : width_(bucketWidth > 0 ? bucketWidth : 1) {
  const Micros len = std::max(length, width_);
  n_ = static_cast<int>((len + width_ - 1) / width_);
  // Slices' latencies are the memory cost of a window: group buckets into at most
  // kMaxSlices slices. Quantiles then cover the window rounded up to whole slices.
  bucketsPerSlice_ = (n_ + kMaxSlices - 1) / kMaxSlices;
  // The n_ newest buckets (the head's included) span at most ceil((n_-1)/bps) + 1 slices; one
  // more would keep a slice that lies entirely outside the window.
  nSlices_ = (n_ - 1 + bucketsPerSlice_ - 1) / bucketsPerSlice_ + 1;
}

void SlidingStats::allocBuckets() {
  ring_.assign(static_cast<std::size_t>(n_), Bucket{WindowCounts{}, std::int64_t{-1} << 62});
}

void SlidingStats::allocSlices() {
  slices_.resize(static_cast<std::size_t>(nSlices_));
}

CompactHistogram& SlidingStats::makeHeadDense() {
  if (!headDense_) {
    headHist_.addBins(headBins_.data(), static_cast<int>(headBins_.size()));
    std::vector<std::uint16_t>().swap(headBins_);  // a busy head stays dense: free the list
    headDense_ = true;
  }
  return headHist_;
}

void SlidingStats::movePending() {
  if (!hasSlices()) allocSlices();
  int k = 0;
  if (!headDense_) {  // the head's list while it is short
    const auto room = static_cast<int>(kSparseSlice - headBins_.size());
    const int n = std::min<int>(pendingN_, room);
    const std::size_t need = headBins_.size() + static_cast<std::size_t>(n);
    if (need > headBins_.capacity()) headBins_.reserve(std::bit_ceil(need));  // little slack
    headBins_.insert(headBins_.end(), pending_.begin(), pending_.begin() + n);
    k = n;
  }
  if (k < pendingN_) makeHeadDense().addBinsDeferred(pending_.data() + k, pendingN_ - k);
  pendingN_ = 0;
}

// The head slice joins the window histogram and moves to its slot: a short list as it is (the
// slot's empty list, with its room, becomes the head's), anything longer packed.
void SlidingStats::completeHead() {
  if (keepWindow_) addHead(windowHist_);
  Slice& sl = slices_[headSlice_];
  ++sl.gen;
  if (headDense_) {
    headHist_.visit([&sl](const auto& head) { sl.bins.pack(head); });
    // A head busy enough for a histogram stays one: the next slice is likely as busy, and a
    // list grown to kSparseSlice first would only be thrown away.
    headDense_ = headHist_.total() >= kSparseSlice;
    headHist_.clear();
  } else if (headBins_.size() > kListSlice) {
    sl.bins.pack(headBins_.data(), headBins_.size());
    headBins_.clear();
  } else {
    sl.bins.takeList(headBins_);
  }
}

const LatencyHistogram* SlidingStats::histogram() const {
  if (!hasSlices() && !pendingN_) return nullptr;
  thread_local LatencyHistogram copy;
  const auto withPending = [this]() {
    for (int k = 0; k < pendingN_; ++k) copy.addBin(pending_[k], 1);
    return &copy;
  };
  copy.clear();
  if (!keepWindow_) {
    // Built from the slices, into a per-thread copy: the window itself is not touched.
    for (const Slice& sl : slices_) sl.bins.addTo(copy);
  } else {
    if (headTotal() == 0 && !pendingN_ && windowHist_.wide()) return windowHist_.wide();
    windowHist_.visit([](const auto& window) { copy.merge(window); });
  }
  addHead(copy);
  return withPending();
}

bool SlidingStats::quantileExceeds(double q, double value) {
  flushPending();
  if (!hasSlices()) return false;
  const int last = HistogramLayout::lastBinAtOrBelow(value);
  if (keepWindow_) {
    const std::uint64_t total = std::uint64_t{windowHist_.total()} + headTotal();
    const std::uint64_t through =
        last >= 0 ? windowHist_.countThrough(last) + headCountThrough(last) : 0;
    return spillway::quantileExceeds(q, value, through, total);
  }
  if (last != countBin_) {
    countBin_ = last;
    for (Slice& sl : slices_) sl.countGen = sl.gen - 1;  // all stale
  }
  std::uint64_t through = 0, total = 0;
  for (Slice& sl : slices_) {
    if (sl.countGen != sl.gen) {
      sl.countThrough = last >= 0 ? sl.bins.countThrough(last) : 0;
      sl.countGen = sl.gen;
    }
    through += sl.countThrough;
    total += sl.bins.total();
  }
  // The head changes with every call: counted each time (once per slice, as the breaker asks).
  total += headTotal();
  if (last >= 0) through += headCountThrough(last);
  return spillway::quantileExceeds(q, value, through, total);
}

void SlidingStats::keepWindowHistogram(bool on) {
  flushPending();
  if (on && !keepWindow_) {
    // Catch up: the window takes every completed slice's calls again.
    for (const Slice& sl : slices_) sl.bins.addTo(windowHist_);
  }
  if (!on) windowHist_.release();  // stale from here on: its pages are free to go
  keepWindow_ = on;
}

CompletedSlice SlidingStats::evictedView(int slot) const {
  const Slice& sl = slices_[static_cast<std::size_t>(slot)];
  CompletedSlice v;
  v.slot = slot;
  if (sl.bins.packed()) {
    v.packed = &sl.bins;
  } else {
    v.bins = sl.bins.list();
    v.binCount = sl.bins.total();
  }
  return v;
}

// Takes the slice's calls out of the window histogram and empties it.
void SlidingStats::evictSlice(Slice& sl) {
  ++sl.gen;
  if (keepWindow_) sl.bins.removeFrom(windowHist_);
  sl.bins.clear();
}

void SlidingStats::evictBucket(std::int64_t idx, int slot) {
  WindowCounts& b = ring_[slot].counts;
  const std::int64_t old = ring_[slot].idx;
  if (old > epochIdx_) {
    decision_.sub(b);
  } else if (old == epochIdx_) {
    WindowCounts part = b;
    part.sub(epochBase_);
    decision_.sub(part);
    epochBase_ = WindowCounts{};
  }
  b = WindowCounts{};
  ring_[slot].idx = idx;
}

void SlidingStats::addAggregate(const WindowCounts& c, const LatencyHistogram* hist) {
  headBucket_.add(c);
  decision_.add(c);
  if (hist && hist->total() > 0) {
    flushPending();
    if (!hasSlices()) allocSlices();
    makeHeadDense().merge(*hist);
  }
}

WindowCounts SlidingStats::all() const {
  WindowCounts sum = headBucket_;
  for (int slot = 0; slot < static_cast<int>(ring_.size()); ++slot)
    if (slot != headSlot_) sum.add(ring_[static_cast<std::size_t>(slot)].counts);
  return sum;
}

// Rejections are not a slice's: the baseline reads its calls only.
WindowCounts SlidingStats::headSliceCounts() const {
  WindowCounts sum = headBucket_;
  int slot = headSlot_;
  for (int k = 0; k < headPos_; ++k) {
    slot = slot == 0 ? n_ - 1 : slot - 1;
    sum.add(ring_[static_cast<std::size_t>(slot)].counts);
  }
  sum.rejected = 0;
  return sum;
}

void SlidingStats::restartDecision() {
  decision_ = WindowCounts{};
  epochIdx_ = headIdx_;
  epochBase_ = headBucket_;
  if (started_ && ring_[headSlot_].idx != headIdx_) {
    ring_[headSlot_].idx = headIdx_;
  }
}

}  // namespace spillway
