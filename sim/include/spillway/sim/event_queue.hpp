#pragma once
// The discrete-event kernel's agenda: a 4-ary min-heap of small POD events ordered by
// (time, priority, sequence). The sequence number makes the order total, so two runs with the
// same inputs pop events in the same order — the root of the simulator's determinism.
#include <cstdint>
#include <vector>

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

class EventQueue {
 public:
  // Lower priority value runs first among events at the same time.
  void push(Micros time, std::uint8_t priority, std::uint32_t kind, std::uint32_t target,
            std::uint32_t gen = 0) {
    SimEvent e{time, (std::uint64_t{priority} << 56) | (seq_++ & kSeqMask), kind, target, gen, 0};
    heap_.push_back(e);
    siftUp(heap_.size() - 1);
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const SimEvent& top() const { return heap_.front(); }
  Micros nextTime() const { return heap_.empty() ? kForever : heap_.front().time; }
  SimEvent pop() {
    SimEvent out = heap_.front();
    const SimEvent last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) siftDown(last);
    return out;
  }
  std::uint64_t pushed() const { return seq_; }
  void reserve(std::size_t n) { heap_.reserve(n); }

  // An event whose order word was made elsewhere (two queues sharing one sequence).
  void pushOrdered(const SimEvent& e) {
    heap_.push_back(e);
    siftUp(heap_.size() - 1);
  }
  static std::uint64_t order(std::uint8_t priority, std::uint64_t seq) {
    return (std::uint64_t{priority} << 56) | (seq & kSeqMask);
  }
  static bool before(const SimEvent& a, const SimEvent& b) { return key(a) < key(b); }

 private:
  static constexpr std::uint64_t kSeqMask = (std::uint64_t{1} << 56) - 1;
  __extension__ using Key = unsigned __int128;  // GCC/Clang builtin; -Wpedantic-clean
  // One 128-bit comparison of (time, order); times are never negative here.
  static Key key(const SimEvent& e) {
    return (static_cast<Key>(static_cast<std::uint64_t>(e.time)) << 64) | e.order;
  }
  void siftUp(std::size_t i) {
    const SimEvent e = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  // Places `e` (the former last element) starting from the root: the hole first walks down
  // along the smallest children to a leaf (one comparison per child, none against `e`), then
  // `e` sifts up from there — fewer comparisons than the textbook sift-down, since the last
  // element usually belongs near the bottom.
  void siftDown(const SimEvent& e) {
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      Key bestKey = key(heap_[first]);
      const std::size_t last = first + 4 < n ? first + 4 : n;
      for (std::size_t c = first + 1; c < last; ++c) {
        const Key k = key(heap_[c]);
        if (k < bestKey) {
          bestKey = k;
          best = c;
        }
      }
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
    siftUp(i);
  }
  std::vector<SimEvent> heap_;
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
    main_.pushOrdered(SimEvent{time, EventQueue::order(priority, seq_++), kind, target, gen, 0});
  }
  void pushArrival(Micros time, std::uint8_t priority, std::uint32_t kind, std::uint32_t target,
                   std::uint32_t gen = 0) {
    arrivals_.pushOrdered(
        SimEvent{time, EventQueue::order(priority, seq_++), kind, target, gen, 0});
  }
  bool empty() const { return main_.empty() && arrivals_.empty(); }
  const SimEvent& top() const { return fromArrivals() ? arrivals_.top() : main_.top(); }
  SimEvent pop() { return fromArrivals() ? arrivals_.pop() : main_.pop(); }
  std::size_t size() const { return main_.size() + arrivals_.size(); }

 private:
  bool fromArrivals() const {
    if (arrivals_.empty()) return false;
    if (main_.empty()) return true;
    return EventQueue::before(arrivals_.top(), main_.top());
  }
  EventQueue main_, arrivals_;
  std::uint64_t seq_ = 0;
};

}  // namespace spillway::sim
