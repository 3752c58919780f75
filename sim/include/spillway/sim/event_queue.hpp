#pragma once
// The discrete-event kernel's agenda: small POD events ordered by (time, priority, sequence),
// in a 4-ary min-heap (EventQueue) fed by a calendar queue (Calendar) at the usual loads or a
// hierarchical timing wheel (TimingWheel) at very high ones (Agenda picks). The sequence number
// makes the order total, so two runs with the same inputs pop events in the same order — the
// root of the simulator's determinism.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "spillway/platform.hpp"
#include "spillway/time.hpp"

namespace spillway::sim {

struct SimEvent {
  Micros time = 0;
  std::uint64_t order = 0;   // priority (top 8 bits) | insertion sequence (low 56 bits)
  std::uint32_t kind = 0;    // what happens (the simulator's enum)
  std::uint32_t target = 0;  // which request / client / instance
  std::uint32_t gen = 0;     // generation of the target slot: stale events are skipped
  std::uint32_t aux = 0;     // spare word: a hint for prefetching (simulator)
};

// Storage for the heap with 64-byte alignment (see EventQueue).
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete (p, std::align_val_t{64}); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};

// The heap lives at slots 3.. of a 64-byte aligned array, so the four children of a node
// (logical 4i+1..4i+4, physical 4(i+1)..4(i+1)+3) are exactly two cache lines, not three.
class EventQueue {
 public:
  // Room for a first batch of events up front: no early reallocations (and GCC's bounds
  // analysis then sees top()'s slot inside the allocation).
  EventQueue() : heap_(kPad) { heap_.reserve(64); }
  // Lower priority value runs first among events at the same time.
  void push(Micros time, std::uint8_t priority, std::uint32_t kind, std::uint32_t target,
            std::uint32_t gen = 0) {
    pushOrdered(SimEvent{time, (std::uint64_t{priority} << 56) | (seq_++ & kSeqMask), kind, target,
                         gen, 0});
  }
  bool empty() const { return heap_.size() == kPad; }
  std::size_t size() const { return heap_.size() - kPad; }
  const SimEvent& top() const { return heap_[kPad]; }
  Micros nextTime() const { return empty() ? kForever : top().time; }
  SimEvent pop() {
    SimEvent out = heap_[kPad];
    const SimEvent last = heap_.back();
    heap_.pop_back();
    if (!empty()) siftUp(holeToLeaf(), last);
    return out;
  }
  // Empties the queue, earliest first (a structure in front of it takes everything over).
  std::vector<SimEvent> popAll() {
    std::vector<SimEvent> all;
    all.reserve(size());
    while (!empty()) all.push_back(pop());
    return all;
  }
  std::uint64_t pushed() const { return seq_; }
  void reserve(std::size_t n) { heap_.reserve(n + kPad); }

  // An event whose order word was made elsewhere (two queues sharing one sequence).
  // The new event sifts up from a fresh slot at the end and is stored once, where it lands:
  // writing it first and reading it back made the CPU wait on store forwarding (the fields are
  // written one by one, then read as two 16-byte words).
  [[gnu::always_inline]] void pushOrdered(const SimEvent e) {
    heap_.emplace_back();
    siftUp(size() - 1, e);
  }
  static std::uint64_t order(std::uint8_t priority, std::uint64_t seq) {
    return (std::uint64_t{priority} << 56) | (seq & kSeqMask);
  }
  static bool before(const SimEvent& a, const SimEvent& b) { return key(a) < key(b); }
  // The same, computed without a branch.
  static bool earlier(const SimEvent& a, const SimEvent& b) { return less(key(a), key(b)); }

 private:
  static constexpr std::uint64_t kSeqMask = (std::uint64_t{1} << 56) - 1;
  using Key = platform::Uint128;
  // One 128-bit comparison of (time, order); times are never negative here.
  static Key key(const SimEvent& e) {
    return platform::uint128(static_cast<std::uint64_t>(e.time), e.order);
  }
  static bool less(Key a, Key b) { return platform::lessWithoutBranch(a, b); }
  [[gnu::always_inline]] void siftUp(std::size_t i, const SimEvent e) {
    SimEvent* h = heap_.data() + kPad;
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!before(e, h[parent])) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = e;
  }
  // The root is a hole: it walks down along the smallest children to a leaf (one comparison per
  // child, none against the element to place) and the leaf's index is returned; the caller's
  // element then sifts up from there — fewer comparisons than the textbook sift-down, since
  // the element placed (the former last one, or a new one) usually belongs near the bottom.
  std::size_t holeToLeaf() {
    const std::size_t n = size();
    SimEvent* h = heap_.data() + kPad;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      std::size_t best;
      if (first + 4 <= n) {
        // A full node: the smallest of four as two independent pairs, then the winners (keys
        // are unique, so the order of comparisons does not matter).
        const Key k0 = key(h[first]), k1 = key(h[first + 1]);
        const Key k2 = key(h[first + 2]), k3 = key(h[first + 3]);
        // Selected with masks, not branches: which child wins is a coin toss the branch
        // predictor keeps missing.
        const std::size_t a = first + less(k1, k0), b = first + 2 + less(k3, k2);
        best =
            a ^ ((a ^ b) & (std::size_t{0} - static_cast<std::size_t>(less(key(h[b]), key(h[a])))));
      } else if (first < n) {
        best = first;
        Key bestKey = key(h[first]);
        for (std::size_t c = first + 1; c < n; ++c) {
          const Key k = key(h[c]);
          if (k < bestKey) {
            bestKey = k;
            best = c;
          }
        }
      } else {
        break;
      }
      h[i] = h[best];
      i = best;
    }
    return i;
  }
  static constexpr std::size_t kPad = 3;
  std::vector<SimEvent, CacheLineAllocator<SimEvent>> heap_;
  std::uint64_t seq_ = 0;
};

// A hierarchical timing wheel (Varghese & Lauck, "Hashed and hierarchical timing wheels",
// SOSP 1987) in front of a small heap (`near`, owned by the caller). Simulated time is cut
// into 1.024 ms grains; four levels of 256 buckets each cover 262 ms, 67 s, 4.8 h and 51 days
// ahead of the current grain, and anything later waits in a heap of its own. Events of the
// current grain (or earlier) go to `near`, ordered by the full (time, priority, sequence) key;
// a later event is appended to the bucket of the highest base-256 digit in which its grain
// differs from the current one. When `near` runs dry, the lowest non-empty bucket is emptied
// into the finer levels (or `near`). So the pop order is exactly a heap's, but the heap holds
// one grain of events instead of everything in flight: with tens of thousands of calls in
// flight (10 k requests/s) a single heap was deep, out of the cache and most of the run.
// Events must not be filed earlier than the last popped one (simulated time only moves on).
class TimingWheel {
 public:
  // Called for each event as it enters `near`, a grain or more before it pops: time enough
  // to start loading what its handler will touch.
  using Prefetch = void (*)(const void* context, const SimEvent& e);
  void setPrefetch(Prefetch fn, const void* context) {
    prefetch_ = fn;
    prefetchContext_ = context;
  }
  // Events filed in the wheel (not in `near`).
  std::size_t parked() const { return parked_; }
  // Takes over everything in `near`, filed by the grain of the earliest event.
  void start(EventQueue& near) {
    const std::vector<SimEvent> all = near.popAll();
    if (all.empty()) return;
    cur_ = grainOf(all.front().time);
    parked_ += all.size();
    for (const SimEvent& e : all) place(e, near);
  }
  // Hands everything parked back to `near`.
  void stop(EventQueue& near) {
    for (int level = 0; level < kLevels; ++level)
      for (int w = 0; w < kWords; ++w) {
        for (std::uint64_t m = used_[level][w]; m; m &= m - 1) {
          std::vector<SimEvent>& b = buckets_[level][w * 64 + std::countr_zero(m)];
          for (const SimEvent& e : b) near.pushOrdered(e);
          release(b);
        }
        used_[level][w] = 0;
      }
    while (!far_.empty()) near.pushOrdered(far_.pop());
    parked_ = 0;
  }
  void file(const SimEvent& e, EventQueue& near) {
    ++parked_;
    place(e, near);
  }
  // `near` is empty: moves to the next non-empty bucket until `near` has events (or nothing is
  // parked). Every used bucket of a level lies after the current grain's digit there (it was
  // filed by its highest differing digit, and grains only grow), so the lowest used slot of
  // the lowest non-empty level is the next one.
  void refill(EventQueue& near) {
    while (near.empty() && parked_ > 0) {
      bool moved = false;
      for (int level = 0; level < kLevels && !moved; ++level) {
        const int shift = level * kDigitBits;
        const int digit = static_cast<int>((cur_ >> shift) & (kSlots - 1));
        for (int w = digit >> 6; w < kWords; ++w) {
          if (!used_[level][w]) continue;
          const int slot = w * 64 + std::countr_zero(used_[level][w]);
          used_[level][w] &= used_[level][w] - 1;
          const std::uint64_t below = (std::uint64_t{1} << (shift + kDigitBits)) - 1;
          cur_ = (cur_ & ~below) | (static_cast<std::uint64_t>(slot) << shift);
          // Re-filed by the new current grain: into finer levels or `near`, never back here.
          std::vector<SimEvent>& b = buckets_[level][slot];
          for (const SimEvent& e : b) place(e, near);
          release(b);
          moved = true;
          break;
        }
      }
      if (moved) continue;
      // The wheel is empty: jump to the earliest far event and take in what is now in range.
      cur_ = grainOf(far_.top().time);
      while (!far_.empty() && ((grainOf(far_.top().time) ^ cur_) >> kTopBit) == 0)
        place(far_.pop(), near);
    }
  }

 private:
  static constexpr int kGrainBits = 10;  // 1.024 ms
  static constexpr int kDigitBits = 8;
  static constexpr int kSlots = 1 << kDigitBits;
  static constexpr int kWords = kSlots / 64;
  static constexpr int kLevels = 4;
  static constexpr int kTopBit = kLevels * kDigitBits;  // grains: 2^42 µs, 51 days

  static std::uint64_t grainOf(Micros t) {
    return static_cast<std::uint64_t>(t < 0 ? 0 : t) >> kGrainBits;
  }
  // An emptied bucket keeps a small allocation for next time; a large one is freed, or 256
  // coarse buckets would each keep room for their busiest 262 ms (twice the memory of the
  // calls in flight at 10 k requests/s).
  static void release(std::vector<SimEvent>& b) {
    if (b.capacity() > 256)
      std::vector<SimEvent>().swap(b);
    else
      b.clear();
  }
  // Files an event counted in parked_: into `near` (no longer parked) when due by the
  // current grain.
  void place(const SimEvent& e, EventQueue& near) {
    const std::uint64_t g = grainOf(e.time);
    if (g <= cur_) {
      --parked_;
      if (prefetch_) prefetch_(prefetchContext_, e);
      near.pushOrdered(e);
      return;
    }
    const int high = 63 - std::countl_zero(g ^ cur_);  // the highest bit in which they differ
    if (high >= kTopBit) {
      far_.pushOrdered(e);
      return;
    }
    const int level = high / kDigitBits;
    const int slot = static_cast<int>((g >> (level * kDigitBits)) & (kSlots - 1));
    buckets_[level][slot].push_back(e);
    used_[level][slot >> 6] |= std::uint64_t{1} << (slot & 63);
  }

  EventQueue far_;  // beyond the top level; its own order words are unused
  std::vector<SimEvent> buckets_[kLevels][kSlots];
  std::uint64_t used_[kLevels][kWords] = {};
  std::uint64_t cur_ = 0;   // the current grain
  std::size_t parked_ = 0;  // events in the buckets and the far heap
  Prefetch prefetch_ = nullptr;
  const void* prefetchContext_ = nullptr;
};

// A calendar queue (Brown, CACM 1988) of one level in front of a small heap (`near`, owned by
// the caller), for the agenda's usual load of a few hundred pending events. Simulated time is
// cut into 16.384 ms grains; the 4096 buckets cover the next 67 s (a bucket holds exactly one
// grain's events: grains in (current, current + 4096) differ modulo 4096), later events wait
// in a heap of their own. Events of the current grain or earlier go to `near`. A bucket is an
// intrusive list through one pool of events, so filing an event is a few stores into memory
// that stays in the cache (a vector per bucket was a cache miss per event). When `near` runs
// dry, the next used bucket (a bit map says which) moves into it. With a few events per grain
// `near` holds a handful, so an event costs a list insert and a push and pop on a tiny heap
// instead of a push and pop on a heap of hundreds: the pop order is the same (time, priority,
// sequence) order. Events must not be filed earlier than the last popped one.
class Calendar {
 public:
  Calendar() {
    for (std::uint32_t& h : heads_) h = kNil;
  }

  // Events filed in the buckets or the far heap (not in `near`).
  std::size_t parked() const { return parked_; }
  // Takes over everything in `near`, from the grain of the earliest event.
  void start(EventQueue& near) {
    const std::vector<SimEvent> all = near.popAll();
    if (all.empty()) return;
    cur_ = grainOf(all.front().time);
    for (const SimEvent& e : all) file(e, near);
  }
  // Hands everything parked back to `near`.
  void stop(EventQueue& near) {
    for (int w = 0; w < kWords; ++w) {
      for (std::uint64_t m = used_[w]; m; m &= m - 1) drain(w * 64 + std::countr_zero(m), near);
      used_[w] = 0;
    }
    while (!far_.empty()) near.pushOrdered(far_.pop());
    parked_ = 0;
  }
  // Inline, `e` by value: this runs for every event, and an event built just before and passed
  // through memory made the CPU wait on store forwarding when copied with 16-byte moves. The
  // rare cases (far, a new node) are calls.
  [[gnu::always_inline]] void file(const SimEvent e, EventQueue& near) {
    const auto d = static_cast<std::int64_t>(grainOf(e.time) - cur_);
    if (d <= 0) return near.pushOrdered(e);
    ++parked_;
    if (d >= static_cast<std::int64_t>(kBuckets)) [[unlikely]]
      return far_.pushOrdered(e);
    const auto b =
        static_cast<std::uint32_t>((cur_ + static_cast<std::uint64_t>(d)) & (kBuckets - 1));
    std::uint32_t n = free_;
    if (n != kNil) [[likely]]
      free_ = link_[n];
    else
      n = grow();  // (`e` must not be passed: its address would force it onto the stack)
    pool_[n] = e;
    link_[n] = heads_[b];
    heads_[b] = n;
    used_[b >> 6] |= std::uint64_t{1} << (b & 63);
  }
  // `near` is empty: moves the next used grain into it (or, with every bucket empty, jumps to
  // the earliest far event).
  void refill(EventQueue& near) {
    if (parked_ == 0) return;
    const auto start = static_cast<std::uint32_t>((cur_ + 1) & (kBuckets - 1));
    std::uint32_t w = start >> 6;
    std::uint64_t bits = used_[w] & (~std::uint64_t{0} << (start & 63));
    // kWords + 1 words: the last is the first word again, for the bits before `start` (grains
    // most of a turn ahead).
    for (int k = 0; k <= kWords; ++k) {
      if (bits) {
        const std::uint32_t b = w * 64 + static_cast<std::uint32_t>(std::countr_zero(bits));
        cur_ += 1 + ((b - start) & (kBuckets - 1));
        used_[w] &= ~(std::uint64_t{1} << (b & 63));
        parked_ -= drain(b, near);
        admitFar(near);
        return;
      }
      w = (w + 1) & (kWords - 1);
      bits = used_[w];
    }
    cur_ = grainOf(far_.top().time);
    admitFar(near);
  }

 private:
  static constexpr int kGrainBits = 14;  // 16.384 ms
  static constexpr std::uint32_t kBuckets = 4096;
  static constexpr int kWords = kBuckets / 64;
  static constexpr std::uint32_t kNil = ~std::uint32_t{0};

  static std::uint64_t grainOf(Micros t) {
    return static_cast<std::uint64_t>(t < 0 ? 0 : t) >> kGrainBits;
  }
  [[gnu::noinline]] std::uint32_t grow() {
    pool_.emplace_back();
    link_.push_back(kNil);
    return static_cast<std::uint32_t>(pool_.size() - 1);
  }
  // Moves bucket b's list into `near` and frees its nodes; returns how many it moved.
  std::size_t drain(std::uint32_t b, EventQueue& near) {
    std::size_t moved = 0;
    for (std::uint32_t n = heads_[b]; n != kNil;) {
      near.pushOrdered(pool_[n]);
      const std::uint32_t next = link_[n];
      link_[n] = free_;
      free_ = n;
      n = next;
      ++moved;
    }
    heads_[b] = kNil;
    return moved;
  }
  // Far events now within a turn of the current grain go to their bucket (or `near`).
  void admitFar(EventQueue& near) {
    while (!far_.empty() && grainOf(far_.top().time) - cur_ < kBuckets) {
      const SimEvent e = far_.pop();
      --parked_;
      file(e, near);
    }
  }

  std::uint64_t cur_ = 0;   // the current grain
  std::size_t parked_ = 0;  // events in the buckets and the far heap
  std::vector<SimEvent> pool_;
  std::vector<std::uint32_t> link_;  // next node in a bucket's list, or in the free list
  std::uint32_t free_ = kNil;
  std::uint32_t heads_[kBuckets];
  std::uint64_t used_[kWords] = {};
  EventQueue far_;  // beyond the buckets' turn; its own order words are unused
};

// One pending event per slot (a client's next arrival) in a winner tree: each inner node holds
// the slot whose event is earliest below it, so the root holds the next one, and setting or
// clearing a slot re-runs the log2(slots) matches on its path — the same compare-and-select at
// every level, where a heap's sift stops at a data-dependent level the branch predictor keeps
// missing (that sift was a third of scheduling an arrival).
class SlotTree {
 public:
  SlotTree() { resize(1); }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const SimEvent& top() const { return ev_[win_[1]]; }
  std::uint32_t topSlot() const { return win_[1]; }
  bool occupied(std::uint32_t slot) const { return slot < leaves_ && ev_[slot].order != kFree; }
  // Puts `e` in `slot` (replacing what was there).
  void set(std::uint32_t slot, const SimEvent& e) {
    if (slot >= leaves_) [[unlikely]]
      resize(slot + 1);
    count_ += ev_[slot].order == kFree;
    ev_[slot] = e;
    rematch(slot);
  }
  void clear(std::uint32_t slot) {
    if (!occupied(slot)) return;
    --count_;
    ev_[slot] = free();
    rematch(slot);
  }

 private:
  static constexpr std::uint64_t kFree = ~std::uint64_t{0};  // no real order word is all ones
  static SimEvent free() { return SimEvent{kForever, kFree, 0, 0, 0, 0}; }
  void rematch(std::uint32_t slot) {
    for (std::size_t k = (leaves_ + slot) >> 1; k >= 1; k >>= 1) {
      const std::uint32_t a = win_[2 * k], b = win_[2 * k + 1];
      const auto bFirst = static_cast<std::uint32_t>(EventQueue::earlier(ev_[b], ev_[a]));
      win_[k] = a ^ ((a ^ b) & (0u - bFirst));
    }
  }
  void resize(std::size_t n) {  // (not "slots": a macro under Qt)
    leaves_ = std::bit_ceil(std::max<std::size_t>(n, 2));
    ev_.resize(leaves_, free());
    win_.assign(2 * leaves_, 0);
    for (std::size_t i = 0; i < leaves_; ++i) win_[leaves_ + i] = static_cast<std::uint32_t>(i);
    for (std::size_t k = leaves_ - 1; k >= 1; --k) {
      const std::uint32_t a = win_[2 * k], b = win_[2 * k + 1];
      win_[k] = EventQueue::earlier(ev_[b], ev_[a]) ? b : a;
    }
  }
  std::vector<SimEvent> ev_;        // by slot; order kFree = no event
  std::vector<std::uint32_t> win_;  // [1, leaves): winners of the inner nodes; leaves after
  std::size_t leaves_ = 0, count_ = 0;
};

// The simulator's agenda: the main lane for everything, plus a small lane for the clients' next
// arrivals (one pending per client). Every request starts with an arrival, so keeping those
// out of the main lane saves a push and a pop on it per request; the lanes share one sequence,
// so events pop in exactly the (time, priority, sequence) order a single queue would give.
//
// The main lane is a calendar queue while few events are pending (hundreds: 16 ms grains, a
// handful of events each) and a timing wheel when many are (tens of thousands: a 16 ms grain
// would hold hundreds, so its 1 ms grains keep `near` small): the wheel starts above
// `wheelAt` pending events and stops below `heapAt` (the gap keeps it from flapping; 0 =
// always the wheel). Both pop in the same order, so the switch changes nothing but speed.
class Agenda {
 public:
  explicit Agenda(std::size_t wheelAt = 4096, std::size_t heapAt = 1024)
      : wheelAt_(wheelAt), heapAt_(heapAt), wheelOn_(wheelAt == 0) {}
  // `aux` rides in the event's spare word (the simulator's prefetch hints). Inline: every
  // handler schedules something.
  [[gnu::always_inline]] void push(Micros time, std::uint8_t priority, std::uint32_t kind,
                                   std::uint32_t target, std::uint32_t gen = 0,
                                   std::uint32_t aux = 0) {
    const SimEvent e{time, EventQueue::order(priority, seq_++), kind, target, gen, aux};
    if (wheelOn_) return wheel_.file(e, near_);
    calendar_.file(e, near_);
    if (near_.size() + calendar_.parked() > wheelAt_) [[unlikely]]
      startWheel();
  }
  // The next arrival of client `target`, which has none pending (but the one just popped).
  // The arrival handler schedules the next one first thing, so a popped arrival keeps its slot
  // until then and the new one replaces it (see popDue).
  void pushArrival(Micros time, std::uint8_t priority, std::uint32_t kind, std::uint32_t target,
                   std::uint32_t gen = 0) {
    if (arrivalHeld_) [[likely]] {
      arrivalHeld_ = false;
      if (heldSlot_ != target) arrivals_.clear(heldSlot_);
    }
    arrivals_.set(target,
                  SimEvent{time, EventQueue::order(priority, seq_++), kind, target, gen, 0});
  }
  bool empty() const { return size() == 0; }
  // Which lane an event popped from (kNoEvent: none due). The caller dispatches arrivals on
  // this instead of the event's kind: one branch it must take anyway, where the kind would be
  // a second, as unpredictable.
  enum Lane { kNoEvent = 0, kArrivalLane, kMainLane };
  // Pops the next event into `out` if it is due at or before `t`.
  Lane popDue(Micros t, SimEvent& out) {
    if (arrivalHeld_) [[unlikely]] {  // the last arrival scheduled no next one
      arrivalHeld_ = false;
      arrivals_.clear(heldSlot_);
    }
    ready();
    const bool arrival =
        !arrivals_.empty() && (near_.empty() || EventQueue::earlier(arrivals_.top(), near_.top()));
    if (arrival) {
      if (arrivals_.top().time > t) return kNoEvent;
      out = arrivals_.top();
      arrivalHeld_ = true;
      heldSlot_ = arrivals_.topSlot();
      return kArrivalLane;
    }
    if (near_.empty() || near_.top().time > t) return kNoEvent;
    out = near_.pop();
    return kMainLane;
  }
  std::size_t size() const {
    return near_.size() + arrivals_.size() - arrivalHeld_ + wheel_.parked() + calendar_.parked();
  }
  bool wheelMode() const { return wheelOn_; }
  void setPrefetch(TimingWheel::Prefetch fn, const void* context) {
    wheel_.setPrefetch(fn, context);
  }

 private:
  [[gnu::noinline]] void startWheel() {
    wheelOn_ = true;
    calendar_.stop(near_);
    wheel_.start(near_);
  }
  // The main lane's heap holds its next event (the calendar or the wheel refills it once per
  // grain).
  void ready() {
    if (!near_.empty()) [[likely]]
      return;
    if (!wheelOn_) return calendar_.refill(near_);
    if (wheel_.parked() < heapAt_) {
      wheelOn_ = false;
      wheel_.stop(near_);
      calendar_.start(near_);  // files the earliest grain back into `near`
      return;
    }
    wheel_.refill(near_);
  }
  EventQueue near_;  // the main lane's next events (all of them while the calendar is empty)
  SlotTree arrivals_;
  Calendar calendar_;
  TimingWheel wheel_;
  std::size_t wheelAt_, heapAt_;
  bool wheelOn_;
  bool arrivalHeld_ = false;  // the arrival in heldSlot_ was popped (pushArrival replaces it)
  std::uint32_t heldSlot_ = 0;
  std::uint64_t seq_ = 0;
};

}  // namespace spillway::sim
