#pragma once
// A bounded FIFO (an instance's queue). The buffer grows on demand — powers of two, so an
// index is a mask, not a division — up to the bound: a queue of 10⁷ places costs memory only
// when it fills, not when the instance is built. Allocating and touching every place up front
// took 8 % of a run of the plain queue (2 MB written per run) and would take 240 MB for one
// instance with a 10⁷ queue.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <vector>

namespace spillway::sim {

template <typename T>
class BoundedFifo {
 public:
  explicit BoundedFifo(std::size_t bound = 0) { init(bound); }
  // Empties the queue and sets its bound (0: no places, always full).
  void init(std::size_t bound) {
    bound_ = bound;
    buf_.assign(std::min<std::size_t>(std::bit_ceil(bound ? bound : 1), 16), T{});
    head_ = count_ = 0;
  }
  std::size_t size() const { return count_; }
  std::size_t bound() const { return bound_; }
  bool full() const { return count_ >= bound_; }
  // Not when full().
  void push(const T& e) {
    if (count_ == buf_.size()) grow();
    buf_[(head_ + count_) & (buf_.size() - 1)] = e;
    ++count_;
  }
  // Not when empty.
  T pop() {
    T e = buf_[head_];
    head_ = (head_ + 1) & (buf_.size() - 1);
    --count_;
    return e;
  }
  // The i-th oldest, i < size().
  const T& at(std::size_t i) const { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  // Places allocated (for tests: it grows with the contents, never past the bound's power of 2).
  std::size_t allocated() const { return buf_.size(); }

 private:
  // Doubles the buffer, the oldest entry moved to 0.
  void grow() {
    std::vector<T> next(2 * buf_.size());
    for (std::size_t i = 0; i < count_; ++i) next[i] = at(i);
    buf_.swap(next);
    head_ = 0;
  }
  std::vector<T> buf_;
  std::size_t head_ = 0, count_ = 0, bound_ = 0;
};

}  // namespace spillway::sim
