#pragma once
// The discrete-event kernel's agenda: a 4-ary min-heap of small POD events ordered by
// (time, priority, sequence). The sequence number makes the order total, so two runs with the
// same inputs pop events in the same order — the root of the simulator's determinism.
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "spillway/time.hpp"

namespace spillway::sim {

struct SimEvent {
  Micros time = 0;
  std::uint64_t order = 0;   // priority (top 8 bits) | insertion sequence (low 56 bits)
  std::uint32_t kind = 0;    // what happens (the simulator's enum)
  std::uint32_t target = 0;  // which request / client / instance
  std::uint32_t gen = 0;     // generation of the target slot: stale events are skipped
  std::uint32_t pad = 0;
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
    if (!empty()) siftDown(last);
    return out;
  }
  std::uint64_t pushed() const { return seq_; }
  void reserve(std::size_t n) { heap_.reserve(n + kPad); }

  // An event whose order word was made elsewhere (two queues sharing one sequence).
  // The new event sifts up from a fresh slot at the end and is stored once, where it lands:
  // writing it first and reading it back made the CPU wait on store forwarding (the fields are
  // written one by one, then read as two 16-byte words).
  void pushOrdered(const SimEvent& e) {
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
  __extension__ using Key = unsigned __int128;  // GCC/Clang builtin; -Wpedantic-clean
  // One 128-bit comparison of (time, order); times are never negative here.
  static Key key(const SimEvent& e) {
    return (static_cast<Key>(static_cast<std::uint64_t>(e.time)) << 64) | e.order;
  }
  // a < b as the borrow of a - b: a flag, where `<` on 128 bits compiles to branches.
  static bool less(Key a, Key b) {
#if defined(__x86_64__)
    unsigned long long d;
    const unsigned char borrow =
        _subborrow_u64(0, static_cast<std::uint64_t>(a), static_cast<std::uint64_t>(b), &d);
    return _subborrow_u64(borrow, static_cast<std::uint64_t>(a >> 64),
                          static_cast<std::uint64_t>(b >> 64), &d);
#else
    return a < b;
#endif
  }
  void siftUp(std::size_t i, const SimEvent e) {
    SimEvent* h = heap_.data() + kPad;
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!before(e, h[parent])) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = e;
  }
  // Places `e` (the former last element) starting from the root: the hole first walks down
  // along the smallest children to a leaf (one comparison per child, none against `e`), then
  // `e` sifts up from there — fewer comparisons than the textbook sift-down, since the last
  // element usually belongs near the bottom.
  void siftDown(const SimEvent& e) {
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
    siftUp(i, e);
  }
  static constexpr std::size_t kPad = 3;
  std::vector<SimEvent, CacheLineAllocator<SimEvent>> heap_;
  std::uint64_t seq_ = 0;
};

// The simulator's agenda: one queue for everything, plus a small lane for the clients' next
// arrivals (one pending per client). Every request starts with an arrival, so keeping those
// out of the big heap saves a push and a pop on it per request; the lanes share one sequence,
// so events pop in exactly the (time, priority, sequence) order a single queue would give.
class Agenda {
 public:
  void push(Micros time, std::uint8_t priority, std::uint32_t kind, std::uint32_t target,
            std::uint32_t gen = 0) {
    lanes_[kMain].pushOrdered(
        SimEvent{time, EventQueue::order(priority, seq_++), kind, target, gen, 0});
  }
  void pushArrival(Micros time, std::uint8_t priority, std::uint32_t kind, std::uint32_t target,
                   std::uint32_t gen = 0) {
    lanes_[kArrivals].pushOrdered(
        SimEvent{time, EventQueue::order(priority, seq_++), kind, target, gen, 0});
  }
  bool empty() const { return lanes_[kMain].empty() && lanes_[kArrivals].empty(); }
  // The lane is picked by index, not by a branch: which lane goes next is as good as random.
  const SimEvent& top() const { return lanes_[next()].top(); }
  SimEvent pop() { return lanes_[next()].pop(); }
  // Pops the next event into `out` if it is due at or before `t`: one lane choice for the test
  // and the pop (top() then pop() chose twice).
  bool popDue(Micros t, SimEvent& out) {
    EventQueue& q = lanes_[next()];
    if (q.empty() || q.top().time > t) return false;
    out = q.pop();
    return true;
  }
  std::size_t size() const { return lanes_[kMain].size() + lanes_[kArrivals].size(); }

 private:
  static constexpr int kMain = 0, kArrivals = 1;
  int next() const {
    const EventQueue& a = lanes_[kArrivals];
    const EventQueue& m = lanes_[kMain];
    if (a.empty()) return kMain;
    if (m.empty()) return kArrivals;
    return EventQueue::earlier(a.top(), m.top()) ? kArrivals : kMain;
  }
  EventQueue lanes_[2];
  std::uint64_t seq_ = 0;
};

}  // namespace spillway::sim
