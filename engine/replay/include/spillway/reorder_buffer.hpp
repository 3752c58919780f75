#pragma once
// The replay's clock: recorded calls are admitted in start order and their outcomes applied in
// completion order, as a gateway saw them. Logs are written at completion, so records arrive up
// to a reorder window out of start order: a call is held until no earlier start can still come
// (the newest start seen minus the window), and one that comes later than that is late, applied
// at "now". Outcomes due by a call's start are applied before it is admitted. Used by the native
// Replayer and the DialectReplayer; only what each does at admission and completion differs.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <queue>
#include <vector>

#include "spillway/events.hpp"
#include "spillway/outcome.hpp"
#include "spillway/time.hpp"

namespace spillway {

// A recorded call waiting for its start to be admitted.
struct PendingCall {
  Micros ts;
  Micros latency;
  std::uint64_t seq;  // arrival order: ties in start or end time keep it
  InstanceId id;
  int status;
  Outcome outcome;
  Micros slo;  // its tenant's
};

// Done: what is applied at completion; needs `Micros end` and `std::uint64_t seq`. Call: a
// PendingCall, or one with more of the record (what a dialect needs, the native replay not).
template <class Done, class Call = PendingCall>
class ReorderBuffer {
 public:
  explicit ReorderBuffer(Micros window) : window_(window) {}

  // Queues a call by its start (after calls with the same start). Returns true when it is late:
  // it starts before a call already admitted.
  bool push(Call p) {
    p.seq = seq_++;
    const bool late = p.ts < lastAdmit_;
    if (pending_.empty() || pending_.back().ts <= p.ts) {
      pending_.push_back(p);  // the common case: records in start order
    } else {
      auto at = std::upper_bound(pending_.begin(), pending_.end(), p,
                                 [](const Call& a, const Call& b) { return a.ts < b.ts; });
      pending_.insert(at, p);
    }
    maxTs_ = std::max(maxTs_, p.ts);
    return late;
  }

  // The start before which no call can still arrive in order.
  Micros watermark() const { return maxTs_ == kNever ? kNever : maxTs_ - window_; }

  // Admits, in start order, every queued call that starts at or before `upTo`; before each,
  // applies the outcomes due by its start.
  template <class Admit, class Complete>
  void drain(Micros upTo, Admit&& admit, Complete&& complete) {
    while (!pending_.empty() && pending_.front().ts <= upTo) {
      const Call p = pending_.front();
      pending_.pop_front();
      completeUntil(p.ts, complete);
      noteAdmitted(p.ts);
      admit(p);
    }
  }

  // Applies, in completion order (ties: arrival order), every outcome due by `t`. `complete`
  // may schedule more.
  template <class Complete>
  void completeUntil(Micros t, Complete&& complete) {
    while (!inflight_.empty() && inflight_.top().end <= t) {
      const Done d = inflight_.top();
      inflight_.pop();
      complete(d);
    }
  }

  void schedule(const Done& d) { inflight_.push(d); }
  // Time has reached `t` without a call (an aggregate sample): later starts before it are late.
  void noteAdmitted(Micros t) { lastAdmit_ = std::max(lastAdmit_, t); }

 private:
  struct Later {
    bool operator()(const Done& a, const Done& b) const {
      return a.end != b.end ? a.end > b.end : a.seq > b.seq;
    }
  };

  Micros window_;
  std::deque<Call> pending_;  // sorted by (ts, seq)
  std::priority_queue<Done, std::vector<Done>, Later> inflight_;
  std::uint64_t seq_ = 0;
  Micros maxTs_ = kNever;
  Micros lastAdmit_ = kNever;
};

}  // namespace spillway
