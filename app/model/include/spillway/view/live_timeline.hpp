#pragma once
// The rolling timeline of Live mode — toolkit-neutral (no Qt), tested without widgets. It
// watches the shadow engine (every breaker METRICS_ONLY) as live calls and aggregate samples
// reach it: per instance and per second the calls, failures and slow calls (as the engine
// classified them), the p99 of the latencies, the decision window's error and slow rates and
// the learned baseline; "would open" marks with their reason. Only the last `span` of data
// time is kept, so memory is bounded however long the session runs; a snapshot is a
// RunTimeline the console draws as it draws a run or a replay.
//
// Time is the data's own (call end times, sample ends), never the wall clock: the same calls
// give the same timeline.
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "spillway/engine.hpp"
#include "spillway/view/timeline.hpp"

namespace spillway::view {

struct LiveTimelineOptions {
  Micros span = seconds(600);  // data kept (and drawn)
  // A call or sample older than the newest second by more than this is too late to plot: it
  // still reached the engine, but its tick was already sampled and is counted in late().
  // Logs and spans arrive by end time, so a call is late only behind a longer one; a log read
  // from its start (sorted by start time) trails by up to the longest call.
  Micros lateness = seconds(30);
};

class LiveTimeline {
 public:
  LiveTimeline(const Engine& engine, LiveTimelineOptions opt = {});

  // One call the engine recorded at `end` (epoch µs); `failure` and `slow` as it judged them.
  void onCall(InstanceId id, Micros end, Micros latency, bool failure, bool slow);
  // Counts over (end - step, end], spread evenly over its seconds; slow < 0 = not known.
  void onAggregate(InstanceId id, Micros end, Micros step, std::uint32_t calls,
                   std::uint32_t failures, std::int64_t slow);
  // A breaker event of the engine (would-open marks; transitions should a policy force one).
  // `why`: the mark's label ("would open (slow rate 0.62 > 0.40 for 10 s)").
  void onEvent(const Event& e, std::string why = {});

  // The timeline of the retained span: t in seconds since origin() (tick ends), one axis
  // shared by every instance; start() of the RunTimeline is the first retained tick's start.
  RunTimeline snapshot() const;

  Micros origin() const { return origin_; }  // epoch µs of t = 0 (the first data's second)
  Micros newest() const { return newest_; }  // latest data time seen (kNever before any)
  std::uint64_t calls() const { return calls_; }
  std::uint64_t late() const { return late_; }  // too old for their tick (see lateness)
  std::size_t ticks() const { return ticks_.size(); }

 private:
  struct Cell {  // one instance in one second
    double calls = 0, failures = 0, slow = 0;
    std::vector<float> latencyMs;
    double p99Ms = std::numeric_limits<double>::quiet_NaN();  // once sealed
    double errorRate = 0, slowRate = 0, baselineMs = 0;       // sampled at the tick's end
  };
  struct Tick {
    std::vector<Cell> cells;  // by InstanceId
    bool sampled = false;     // window rates taken at the tick's end
    bool sealed = false;      // p99 computed, latencies freed (older than `lateness`)
  };
  // The cell of `id` in the second holding `at`; null before the retained span, or (unless
  // `anyRetained`) older than `lateness`.
  Cell* cell(InstanceId id, Micros at, bool anyRetained);
  void advanceTo(Micros t);  // opens the seconds up to the one holding t, samples, seals, trims
  Micros tickEnd(std::size_t i) const;  // epoch µs of ticks_[i]'s end

  const Engine& engine_;
  LiveTimelineOptions opt_;
  Micros origin_ = kNever, newest_ = kNever;
  std::int64_t first_ = 0;  // second index (since origin) of ticks_.front()
  std::deque<Tick> ticks_;
  std::vector<Event> events_;  // retained span only
  std::vector<std::string> why_;
  std::uint64_t calls_ = 0, late_ = 0;
};

}  // namespace spillway::view
