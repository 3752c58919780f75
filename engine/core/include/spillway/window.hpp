#pragma once
// Sliding windows. SlidingStats is the time-based window every breaker keeps: a ring of
// buckets with running totals (subtract on evict), plus each slice's latencies (the head's a
// histogram, completed ones SliceBins) for quantiles. It keeps two sets of totals: `all` for plots,
// and `decision` which the breaker can restart (on closing) without losing the plotted history.
#include <array>
#include <cstdint>
#include <vector>

#include "spillway/compact_histogram.hpp"
#include "spillway/histogram.hpp"
#include "spillway/slice_bins.hpp"
#include "spillway/time.hpp"

namespace spillway {

struct WindowCounts {
  std::uint32_t calls = 0;  // recorded (non-ignored) outcomes
  std::uint32_t failures = 0;
  std::uint32_t slow = 0;
  std::uint32_t rejected = 0;  // breaker rejections in this bucket

  void add(const WindowCounts& o) {
    calls += o.calls;
    failures += o.failures;
    slow += o.slow;
    rejected += o.rejected;
  }
  void sub(const WindowCounts& o) {
    calls -= o.calls;
    failures -= o.failures;
    slow -= o.slow;
    rejected -= o.rejected;
  }
};

// A completed slice, handed to the baseline learner; its latencies are valid during the call
// only, in one of three forms: a histogram (a slice that just completed with many calls), its
// packed bins (one evicted after many), else the bins of its calls (one per call, unordered) —
// most slices hold a handful, and building a histogram of them cost more than using them.
struct CompletedSlice {
  WindowCounts counts;
  Micros end = 0;
  const LatencyHistogram* hist = nullptr;
  const NarrowHistogram* narrow = nullptr;  // the head's 16-bit form (CompactHistogram)
  const SliceBins* packed = nullptr;
  const std::uint16_t* bins = nullptr;
  std::uint32_t binCount = 0;
  int slot = -1;  // the slice's place in the window's ring (the same when it is evicted)

  std::uint32_t samples() const {
    return hist ? hist->total() : narrow ? narrow->total() : packed ? packed->total() : binCount;
  }
  LatencyHistogram histogram() const {  // a copy, whatever the form
    if (hist) return *hist;
    if (packed) return packed->histogram();
    LatencyHistogram h;
    if (narrow) {
      h.merge(*narrow);
      return h;
    }
    for (std::uint32_t k = 0; k < binCount; ++k) h.addBin(bins[k], 1);
    return h;
  }
};

class SlidingStats {
 public:
  static constexpr int kMaxSlices = 10;

  SlidingStats(Micros length, Micros bucketWidth);

  // Moves the window so that `t` falls in the newest bucket. Calls onSlice for every slice
  // that completes (in time order, empty ones skipped). `t` must not go backwards (the
  // breaker clamps).
  template <typename OnSlice>
  void advanceTo(Micros t, OnSlice&& onSlice) {
    if (t < headEnd_) return;  // fast path: still inside the newest bucket
    roll(t, onSlice);
  }
  void advanceTo(Micros t) {
    advanceTo(t, [](const CompletedSlice&) {});
  }

  void addOutcome(bool failure, bool slow, std::uint64_t latencyUs) {
    WindowCounts& b = headBucket_;
    b.calls++;
    b.failures += failure;
    b.slow += slow;
    decision_.calls++;
    decision_.failures += failure;
    decision_.slow += slow;
    // The call's bin waits here, in the window's own cache line, until a few have come or
    // anything reads the latencies (flushPending): with a thousand breakers round robin, a
    // call that went straight to its slice's list or histogram missed the cache there.
    pending_[pendingN_++] = static_cast<std::uint16_t>(HistogramLayout::binOf(latencyUs));
    if (pendingN_ == kPending) movePending();
  }
  void addAggregate(const WindowCounts& c, const LatencyHistogram* hist);
  void addRejected() {
    headBucket_.rejected++;
    decision_.rejected++;
  }

  // Restart the decision totals: only outcomes from now on count for the next decision.
  void restartDecision();

  // Whether the window histogram follows the slices as they complete and leave (on, the
  // default: a read adds only the head slice — plots, snapshots every tick) or is built from
  // all slices when read (off: a simulation nobody plots saves adding and removing them).
  // Every answer is the same either way; it may switch at any time.
  void keepWindowHistogram(bool on);
  bool keepsWindowHistogram() const { return keepWindow_; }

  // The whole window's totals: its buckets summed (read for plots, so a call keeps one copy of
  // its counts fewer).
  WindowCounts all() const;
  // Every outcome the window was ever given, not only those still in it: the buckets that left
  // the head plus the head's. A breaker reads its lifetime counters here instead of bumping
  // a second copy of them on every call.
  struct Lifetime {
    std::uint64_t calls = 0, failures = 0, slow = 0;
  };
  Lifetime lifetime() const {
    return {past_.calls + headBucket_.calls, past_.failures + headBucket_.failures,
            past_.slow + headBucket_.slow};
  }
  const WindowCounts& decision() const { return decision_; }
  // The window's latencies, the head slice's included. While the head slice has calls, this
  // is a copy with them (per thread, valid until the next call on the thread) — the window
  // itself changes only in non-const calls.
  const LatencyHistogram* histogram() const;
  double quantile(double q) const {
    const LatencyHistogram* h = histogram();
    return h ? h->quantile(q) : 0.0;
  }
  // quantile(q) > value (see spillway::quantileExceeds). When the histogram is not kept, a
  // prefix count over the slices, each slice's count kept until it or the bin changes — so
  // asked once per slice, it counts the one slice that just completed. false while nothing
  // was recorded.
  bool quantileExceeds(double q, double value);
  Micros bucketWidth() const { return width_; }
  int bucketCount() const { return n_; }
  int bucketsPerSlice() const { return bucketsPerSlice_; }

 private:
  template <typename OnSlice>
  void roll(Micros t, OnSlice& onSlice);
  void evictBucket(std::int64_t idx, int slot);  // slot = idx mod n_
  void allocSlices();
  bool hasSlices() const { return !slices_.empty(); }
  // Moves the pending calls into the head slice and settles its histogram: before anything
  // but a copy (addHead) reads the head.
  void flushPending() {
    if (pendingN_) movePending();
    headHist_.settle();
  }
  void movePending();   // calls go to a dense head as counts only (addBinsDeferred)
  void allocBuckets();  // at the first call: an idle instance keeps no ring
  // The head slice's latencies are the bins of its calls while they are few (a one-second
  // slice of a lightly loaded instance holds a handful), a histogram once they are many or an
  // aggregate arrives. A completed slice keeps a short list as it is and packs anything
  // longer (SliceBins): it is read once or twice more, and ten busy slices' histograms were
  // most of what a busy instance held.
  static constexpr std::size_t kSparseSlice = 256;
  static constexpr std::size_t kListSlice = 32;  // longer lists are packed on completion
  struct Slice {
    SliceBins bins;
    // quantileExceeds' count of the slice (calls in bins ≤ countBin_) and the generation it
    // was taken at: `gen` moves when the slice completes and when it leaves.
    std::uint32_t gen = 0, countGen = 0, countThrough = 0;
  };
  CompactHistogram& makeHeadDense();
  // The window histogram holds the completed slices: the head slice joins it when it
  // completes, and a read adds it to a copy (histogram()). A call then touches the head only.
  void completeHead();
  template <typename H>
  void addHead(H& h) const {
    if (headDense_ && headHist_.stale())
      headHist_.addCountsTo(h);
    else if (headDense_)
      headHist_.visit([&h](const auto& head) { h.merge(head); });
    else
      h.addBins(headBins_.data(), static_cast<int>(headBins_.size()));
  }
  // The head's calls in bins [0, bin]; after flushPending.
  std::uint64_t headCountThrough(int bin) const {
    return headDense_ ? headHist_.countThrough(bin)
                      : SliceBins::listCountThrough(headBins_.data(), headBins_.size(), bin);
  }
  std::uint32_t headTotal() const {
    return headDense_ ? headHist_.total() : static_cast<std::uint32_t>(headBins_.size());
  }
  void evictSlice(Slice& sl);
  CompletedSlice evictedView(int slot) const;  // every call of the slice

  // The head slice's counts: the head bucket's and those of the slice's earlier buckets.
  WindowCounts headSliceCounts() const;

  // What every call reads and writes comes first, in one cache line — the head bucket's end,
  // its counts next to the decision totals (they go to the ring when the head moves on), the
  // pending bins — then what a flush of them needs. The window's and the head slice's totals
  // are summed from the ring when read (all(), headSliceCounts()).
  Micros headEnd_ = kNever;  // end time of the newest bucket (exclusive)
  WindowCounts headBucket_;  // ring_[headSlot_].counts is stale while it is the head
  WindowCounts decision_;
  static constexpr int kPending = 11;  // the per-call part is then one cache line
  std::uint8_t pendingN_ = 0;
  std::array<std::uint16_t, kPending> pending_{};  // bins of head-slice calls not yet in it
  bool keepWindow_ = true;  // windowHist_ follows the slices (else it is stale, never read)
  int headSlice_ = 0;       // headSliceIdx_ mod nSlices_
  bool headDense_ = false;  // headHist_ holds the head (headBins_ empty)
  std::vector<std::uint16_t> headBins_;
  CompactHistogram headHist_;  // pages kept: a busy instance stays busy
  std::vector<Slice> slices_;  // allocated at the first latency; the head's is empty
  CompactHistogram windowHist_;

  Micros width_;
  int n_;  // buckets in the window
  int bucketsPerSlice_;
  int nSlices_;
  struct Bucket {
    WindowCounts counts;
    std::int64_t idx;  // the absolute bucket index the slot holds
  };
  std::vector<Bucket> ring_;       // empty until the window starts
  std::int64_t headIdx_ = 0;       // absolute bucket index of the newest bucket
  int headSlot_ = 0;               // headIdx_ mod n_
  int headPos_ = 0;                // headIdx_ - headSliceIdx_ × bucketsPerSlice_
  std::int64_t headSliceIdx_ = 0;  // absolute slice index of the newest bucket
  bool started_ = false;
  int countBin_ = -2;  // -2: nothing counted yet (-1 is a real answer: no bin)
  // Decision epoch: buckets before epochIdx_ are not in decision_; the epoch bucket only
  // partially (epochBase_ is what it held when the decision restarted).
  std::int64_t epochIdx_ = 0;
  WindowCounts epochBase_;
  Lifetime past_;  // of the buckets that were the head (lifetime())
};

template <typename OnSlice>
void SlidingStats::roll(Micros t, OnSlice& onSlice) {
  if (!started_) {
    const std::int64_t idx = t >= 0 ? t / width_ : (t - width_ + 1) / width_;
    started_ = true;
    allocBuckets();
    headIdx_ = idx;
    epochIdx_ = idx;
    headSlot_ = static_cast<int>(((idx % n_) + n_) % n_);
    ring_[headSlot_].idx = idx;
    const std::int64_t sIdx =
        idx >= 0 ? idx / bucketsPerSlice_ : (idx - bucketsPerSlice_ + 1) / bucketsPerSlice_;
    headSliceIdx_ = sIdx;
    headPos_ = static_cast<int>(idx - sIdx * bucketsPerSlice_);
    headSlice_ = static_cast<int>(((sIdx % nSlices_) + nSlices_) % nSlices_);
    headEnd_ = (idx + 1) * width_;
    return;
  }
  // Everything below is kept relative to the head, so the usual step (the next bucket, the
  // next slice) needs no division: t >= headEnd_ = (headIdx_ + 1) × width_ here.
  const Micros past = t - headEnd_;
  const std::int64_t step = 1 + (past < width_ ? 0 : past / width_);  // buckets moved, >= 1
  const std::int64_t idx = headIdx_ + step;
  const std::int64_t oldSlice = headSliceIdx_;
  std::int64_t newSlice = oldSlice;
  std::int64_t pos = headPos_ + step;  // the new head's position from the old slice's start
  if (pos >= bucketsPerSlice_) {
    newSlice = bucketsPerSlice_ == 1 ? oldSlice + pos : oldSlice + pos / bucketsPerSlice_;
    pos -= (newSlice - oldSlice) * bucketsPerSlice_;
  }
  if (newSlice != oldSlice) flushPending();  // the hook reads the slice whole
  const WindowCounts sliceCounts = newSlice != oldSlice ? headSliceCounts() : WindowCounts{};
  if (sliceCounts.calls > 0) {
    CompletedSlice done;
    done.counts = sliceCounts;
    done.end = (oldSlice + 1) * bucketsPerSlice_ * width_;
    if (hasSlices()) {
      if (headDense_) {
        done.hist = headHist_.wide();
        done.narrow = headHist_.narrow();
      } else {
        done.bins = headBins_.data();
        done.binCount = static_cast<std::uint32_t>(headBins_.size());
      }
    }
    done.slot = headSlice_;
    onSlice(done);  // still the head: a read counts it once (histogram())
  }
  // The completed slice joins the window histogram and its slot before anything leaves.
  if (hasSlices() && newSlice != oldSlice) completeHead();
  // The new head's slot: idx mod n_, from the old one.
  int newSlot;
  if (step < n_) {
    newSlot = headSlot_ + static_cast<int>(step);
    if (newSlot >= n_) newSlot -= n_;
  } else {
    newSlot = static_cast<int>(((idx % n_) + n_) % n_);
  }
  ring_[headSlot_].counts = headBucket_;  // the old head joins the ring
  past_.calls += headBucket_.calls;
  past_.failures += headBucket_.failures;
  past_.slow += headBucket_.slow;
  // Evict at most one window's worth of buckets: a long idle gap clears everything once.
  const std::int64_t count = step < n_ ? step : n_;  // buckets from..idx
  int slot = newSlot - static_cast<int>(count - 1);
  if (slot < 0) slot += n_;
  for (std::int64_t b = idx - count + 1; b <= idx; ++b) {
    evictBucket(b, slot);
    if (++slot == n_) slot = 0;
  }
  // Slices: evict the ones newly entered.
  const std::int64_t sSteps = newSlice - oldSlice;
  if (sSteps > 0) {
    int newSliceSlot;
    if (sSteps < nSlices_) {
      newSliceSlot = headSlice_ + static_cast<int>(sSteps);
      if (newSliceSlot >= nSlices_) newSliceSlot -= nSlices_;
    } else {
      newSliceSlot = static_cast<int>(((newSlice % nSlices_) + nSlices_) % nSlices_);
    }
    const std::int64_t sCount = sSteps < nSlices_ ? sSteps : nSlices_;
    int sl = newSliceSlot - static_cast<int>(sCount - 1);
    if (sl < 0) sl += nSlices_;
    for (std::int64_t k = 0; k < sCount; ++k) {
      if (hasSlices()) {
        // A hook that wants the slices as they leave the window (the baseline learns a slice
        // only once the whole window after it was seen, Breaker::onSliceEvicted) gets them
        // before their latencies go.
        if constexpr (requires(const CompletedSlice& c) { onSlice.evicted(c); })
          onSlice.evicted(evictedView(sl));
        evictSlice(slices_[sl]);
      }
      if (++sl == nSlices_) sl = 0;
    }
    headSlice_ = newSliceSlot;
  }
  headBucket_ = WindowCounts{};  // the new head's slot was just evicted
  headIdx_ = idx;
  headSlot_ = newSlot;
  headSliceIdx_ = newSlice;
  headPos_ = static_cast<int>(pos);
  headEnd_ = headEnd_ + step * width_;
}

// Count-based window: the last N outcomes, for breakers configured like Resilience4j's
// COUNT_BASED window.
class CountWindow {
 public:
  explicit CountWindow(std::uint32_t size) : ring_(size == 0 ? 1 : size, 0) {}
  void add(bool failure, bool slow) {
    std::uint8_t& slot = ring_[pos_];
    if (filled_ == ring_.size()) {
      failures_ -= slot & 1u;
      slow_ -= (slot >> 1) & 1u;
    } else {
      ++filled_;
    }
    slot = static_cast<std::uint8_t>(failure | (slow << 1));
    failures_ += failure;
    slow_ += slow;
    if (++pos_ == ring_.size()) pos_ = 0;
  }
  void clear() {
    std::fill(ring_.begin(), ring_.end(), 0);
    pos_ = filled_ = failures_ = slow_ = 0;
  }
  std::uint32_t calls() const { return filled_; }
  std::uint32_t failures() const { return failures_; }
  std::uint32_t slow() const { return slow_; }

 private:
  std::vector<std::uint8_t> ring_;
  std::uint32_t pos_ = 0, filled_ = 0, failures_ = 0, slow_ = 0;
};

}  // namespace spillway
