#pragma once
// One instance's breaker: detect (windows, baseline), classify, trip (sustained), break
// (states), recover (probes, ramp), account (counters, events). Time and randomness are inputs;
// the hot paths (admit in CLOSED, record) are inline and allocation-free.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "spillway/events.hpp"
#include "spillway/histogram.hpp"
#include "spillway/outcome.hpp"
#include "spillway/platform.hpp"
#include "spillway/policy.hpp"
#include "spillway/rng.hpp"
#include "spillway/window.hpp"

namespace spillway {

struct Decision {
  bool admitted = true;
  bool probe = false;  // admitted as a half-open probe: its outcome decides recovery
  RejectReason reason = RejectReason::None;
  explicit operator bool() const { return admitted; }
};

struct BreakerCounters {
  std::uint64_t admitted = 0;
  std::uint64_t recorded = 0;
  std::uint64_t failures = 0;
  std::uint64_t slow = 0;
  std::uint64_t rejected = 0;  // all breaker blocks
  RejectCounts rejectedBy{};
  std::uint64_t verdicts = 0;  // blocked requests whose "would it have succeeded" is known
  std::uint64_t blockedWouldSucceed = 0;  // false positives
  TripCounts fpByTrip{};  // false positives by the cause of the trip that blocked them
  std::uint64_t ignored = 0;
  std::uint64_t probes = 0;
  std::uint64_t opens = 0;
  std::uint64_t wouldOpens = 0;  // METRICS_ONLY trips
  std::uint64_t clockRegressions = 0;
  std::array<Micros, kStateCount> timeIn{};
};

// Read-only view for plots and tiles.
struct BreakerSnapshot {
  Micros at = 0;
  BreakerState state = BreakerState::Closed;
  bool ramping = false;
  double admitShare = 1.0;  // share of traffic admitted right now
  WindowCounts window;      // whole window (for plots)
  WindowCounts decision;    // what the trip rule sees
  double errorRate = 0;     // of the decision window; NaN-free: 0 when no calls
  double slowRate = 0;
  double p50 = 0, p90 = 0, p99 = 0;  // µs, window
  double baselineP99 = 0;            // µs; 0 while still learning
  bool baselineLearned = false;
  bool baselineFrozen = false;
  Micros slowThreshold = 0;  // µs; kForever while unknown
  std::uint64_t inflight = 0;
  Micros openUntil = 0;
  std::uint32_t attempts = 0;  // opens counted for backoff
  BreakerCounters counters;
};

// What one trip evaluation read of the window. A sweep's shared prefix (engine/replay) logs
// them on a reference replay to find where a candidate's thresholds first make a difference.
struct TripSample {
  std::uint32_t step;  // TripLog::step when it was taken
  InstanceId id;
  std::uint32_t calls, failures, slow;
  bool loadKnown;
  double load;
};

struct TripLog {
  std::vector<TripSample> samples;
  std::uint32_t step = 0;  // set by whoever drives the breakers
  std::size_t cap = 0;     // samples kept at most; past it `full` is set and nothing is kept
  bool full = false;
};

// Whether a sample is over a config's error or slow-call rate threshold.
struct TripTest {
  bool errOver = false, slowOver = false;
  bool any() const { return errOver || slowOver; }
};

class alignas(platform::kCacheLine) Breaker {
  // Completed window slices feed the P99 baseline (declared first: the inline paths use it).
  struct SliceHook {
    Breaker* self;
    void operator()(const CompletedSlice& s) const { self->onSliceComplete(s); }
    void evicted(const CompletedSlice& s) const { self->onSliceEvicted(s); }
  };
  SliceHook sliceHook() { return SliceHook{this}; }

 public:
  Breaker(InstanceId id, const BreakerConfig& cfg, std::uint64_t seed, EventSink* sink);

  Decision admit(Micros now) {
    if (now >= lastNow_) [[likely]] {  // time stood or moved on
      lastNow_ = now;
    } else {
      now = clamp(now);
    }
    if (state_ == BreakerState::Closed && !ramping_) {
      ++admitted_;
      ++inflight_;
      return Decision{};
    }
    return admitSlow(now);
  }

  // The outcome of an admitted call, known at `end`. `probe` comes from its Decision.
  void record(Micros end, Micros latency, int status, Outcome outcome, bool probe = false) {
    if (end >= lastNow_) [[likely]] {
      lastNow_ = end;
    } else {
      end = clamp(end);
    }
    if (inflight_) --inflight_;
    if (state_ == BreakerState::Disabled) return;
    stats_.advanceTo(end, sliceHook());
    const Verdict v = classify(cfg_->classify, status, outcome);
    if (v == Verdict::Ignored) {
      ++counters_.ignored;
      return;
    }
    const bool failure = v == Verdict::Failure;
    const std::uint64_t lat = latency > 0 ? static_cast<std::uint64_t>(latency) : 0;
    const bool slow = latency > slowThreshold_;
    stats_.addOutcome(failure, slow, lat);  // the counters' recorded, failures and slow too
    if (countWindow_) countWindow_->add(failure, slow);
    if (healthyVerdictStands()) [[likely]]
      return;
    afterOutcome(end, probe, !failure && !slow, 1);
  }

  // Aggregate sample (Prometheus-style): counts over an interval that ended at `end`.
  // `slow` < 0 means unknown: derived from `hist` against the current slow threshold.
  void recordAggregate(Micros end, std::uint32_t calls, std::uint32_t failures, std::int64_t slow,
                       const LatencyHistogram* hist);

  // The caller's verdict on a request this breaker blocked (FP accounting).
  void noteBlocked(bool wouldHaveSucceeded);

  // Lets time pass without traffic (OPEN→HALF_OPEN, ramp completion, state timers).
  void advance(Micros now);

  // The load of the instance's group, 0 … 1 (saturation or queue depth, per
  // trip.load_factor.source), for the load-aware error threshold; the caller measures it.
  // Until a load is set (replay, live telemetry) the factor is 1: the plain error_rate.
  void setLoad(double load) {
    load_ = load < 0 ? 0 : load > 1 ? 1 : load;
    loadKnown_ = true;
    forgetHealthyVerdict();
  }
  // The thresholds the trip rule uses right now: rates × topology weight × load factor.
  double errorThreshold() const;
  double slowRateThreshold() const;
  // The thresholds a config sets on the error and slow-call shares (load: when known).
  static double errorThresholdOf(const TripConfig& t, bool loadKnown, double load);
  static double slowRateThresholdOf(const TripConfig& t);
  // The one trip rule: evaluateTrip applies it to the window, a sweep to logged samples.
  static TripTest testTrip(const BreakerConfig& cfg, const TripSample& s);
  // Every trip evaluation from now on is appended to `log` (nullptr: none).
  void setTripLog(TripLog* log) {
    tripLog_ = log;
    forgetHealthyVerdict();  // a sweep logs every evaluation
  }
  // A copy of this breaker's state under another config and sink (a sweep candidate resuming
  // from a shared prefix); the config must outlive the copy.
  std::unique_ptr<Breaker> fork(const BreakerConfig& cfg, EventSink* sink) const;
  // 1 + the P99 spread of healthy slices, capped at slow.spread_max (1 when off).
  double latencyFactor() const { return latencyFactor_; }

  // Operator / mode transitions: FORCED_OPEN, DISABLED, METRICS_ONLY, CLOSED (reset).
  void force(BreakerState to, Micros now);

  BreakerSnapshot snapshot(Micros now) const;
  // What the trip rule sees, as of the last advance: calls, error and slow rates (0 when
  // empty). Cheaper than a snapshot (no quantiles).
  void decisionRates(std::uint32_t& calls, double& errorRate, double& slowRate) const;
  BreakerCounters counters() const;
  BreakerState state() const { return state_; }
  bool ramping() const { return ramping_; }
  Micros slowThreshold() const { return slowThreshold_; }
  InstanceId id() const { return id_; }
  // A cache hint, no state change: loads the two lines admit and record use. For callers that
  // know a record is coming — the simulator with tens of thousands of calls in flight over a
  // thousand breakers.
  void prefetch() const;
  // See SlidingStats::keepWindowHistogram: the same answers, a different cost.
  void keepWindowHistogram(bool on) { stats_.keepWindowHistogram(on); }
  const BreakerConfig& config() const { return *cfg_; }

 private:
  Breaker(const Breaker&) = default;  // fork() only: it re-points the config and sink
  Breaker& operator=(const Breaker&) = delete;
  // Time never runs backwards inside a breaker: an earlier timestamp is treated as "now".
  Micros clamp(Micros t);
  Decision admitSlow(Micros now);
  Decision reject(Micros now, RejectReason r);
  void afterOutcome(Micros now, bool probe, bool good, std::uint32_t n);
  void evaluateTrip(Micros now);
  // The trip rule is monotone: a window that passed it with enough calls still passes with no
  // more failures, no more slow calls and no fewer calls, while its thresholds' inputs (config,
  // load) stay. Then a CLOSED record whose evaluation could change nothing skips it — most
  // records. A verdict is kept only where skipping is safe (keepHealthyVerdict) and forgotten
  // on every change that could make it unsafe, so the record path compares three counts.
  bool healthyVerdictStands() const {
    const WindowCounts& d = stats_.decision();
    return d.calls >= okCalls_ && d.failures <= okFailures_ && d.slow <= okSlow_;
  }
  void keepHealthyVerdict(const TripSample& s);
  void forgetHealthyVerdict() { okCalls_ = kNoVerdict; }
  static constexpr std::uint32_t kNoVerdict = ~std::uint32_t{0};
  void onSliceComplete(const CompletedSlice& s);
  void onSliceEvicted(const CompletedSlice& s);
  bool windowP50Exceeds(double us);  // the window's P50 > us (the drift check)
  void transition(BreakerState to, Reason reason, Micros now, Micros openFor = 0,
                  Micros sustained = 0);
  void open(Micros now, Reason reason, Micros sustained);
  void toHalfOpen(Micros at);
  void close(Micros now);
  void finishRamp(Micros at);
  void endRamp(Micros at);
  void endCappedRamp(Micros at);
  void gradeProbe(Micros now, bool good, std::uint32_t n);
  void release(Micros now, const ReleaseRule& rule);
  void learnSpread(const CompletedSlice& s);
  double rampShare(Micros now) const;
  Micros rampEnd() const;
  void updateSlowThreshold();
  void decisionCounts(std::uint32_t& calls, std::uint32_t& failures, std::uint32_t& slow) const;
  void publish(EventKind kind, BreakerState from, BreakerState to, Reason reason, Micros now,
               Micros openFor, Micros sustained);

  // A CLOSED admit + record touches two cache lines of its breaker: the first holds what both
  // read and write (the admitted count among them), the window's first its per-call part —
  // the window's counts are also the lifetime recorded / failures / slow (counters()). With a
  // thousand breakers round robin those lines are most of what a call misses, so the breaker
  // is line-aligned and nothing else shares them.
  BreakerState state_ = BreakerState::Closed;
  bool ramping_ = false;
  bool loadKnown_ = false;
  bool wouldOpenFired_ = false;  // METRICS_ONLY: one event per episode
  std::uint32_t inflight_ = 0;
  // The last healthy verdict with enough calls (healthyVerdictStands).
  std::uint32_t okCalls_ = kNoVerdict, okFailures_ = 0, okSlow_ = 0;
  // Above any real time: the first call takes clamp(), which starts the clock.
  Micros lastNow_ = kForever;
  std::uint64_t admitted_ = 0;  // counters().admitted
  const BreakerConfig* cfg_;
  Micros slowThreshold_ = kForever;
  CopyablePtr<CountWindow> countWindow_;  // a COUNT_BASED window only
  alignas(platform::kCacheLine) SlidingStats stats_;
  // All but admitted, recorded, failures and slow (counters() fills those in).
  BreakerCounters counters_;
  std::uint32_t attempts_ = 0;  // consecutive opens for backoff (decays when healthy)
  Micros stateSince_ = kNever;
  Micros healthySince_ = kNever;
  Micros overSince_ = kNever;  // trip condition true since
  double load_ = 0;
  TripLog* tripLog_ = nullptr;

  InstanceId id_;
  EventSink* sink_;
  Rng rng_;
  double baselineWeight_ = 1.0;  // weight of a sample in the newest slice
  double baselineStep_ = 1.0;    // its growth per slice, e^(slice / horizon)
  double baselineP99_ = 0;
  double baselineP50_ = 0;
  bool baselineLearned_ = false;
  bool lastSliceFrozen_ = false;
  // Slices (by ring slot) that completed healthy and have seen no frozen slice since: the
  // baseline takes them when they leave the window. A fault's first seconds look healthy
  // until the window shows the drift (or the breaker trips); they are then dropped, not
  // learned.
  std::uint32_t mergeable_ = 0;
  Micros rampStart_ = 0;
  Micros openUntil_ = 0;
  std::uint32_t streak_ = 0;
  std::uint32_t probeN_ = 0, probeOk_ = 0;  // graded release: probes of this half-open
  double rampFrom_ = 0, rampCap_ = 1;       // graded release: where the ramp starts and stops
  double latencyFactor_ = 1, spreadMean_ = 0, spreadVar_ = 0;
  bool spreadSeen_ = false;
  TripCause tripCause_ = TripCause::ErrorRate;  // what the current open was caused by
  DecayingHistogram baseline_;                  // forward-decayed: weights grow by e^(t/horizon)
};

inline void Breaker::prefetch() const {
  // The two lines a CLOSED admit + record touch (see the members' order).
  platform::prefetch(this);
  platform::prefetch(&stats_);
}

}  // namespace spillway
