#include "spillway/breaker.hpp"

#include <algorithm>
#include <cmath>

namespace spillway {
namespace {

// The trip rule judges a window only once it holds min_calls (and at least one) calls.
bool enoughCalls(const BreakerConfig& cfg, std::uint32_t calls) {
  return calls >= cfg.minCalls && calls > 0;
}

}  // namespace

Breaker::Breaker(InstanceId id, const BreakerConfig& cfg, std::uint64_t seed, EventSink* sink)
    : cfg_(&cfg), stats_(cfg.window.length, cfg.window.bucket), id_(id), sink_(sink), rng_(seed) {
  if (cfg.window.type == WindowType::Count)
    countWindow_ = std::make_unique<CountWindow>(cfg.window.calls);
  switch (cfg.mode) {
    case BreakerMode::Normal:
      state_ = BreakerState::Closed;
      break;
    case BreakerMode::MetricsOnly:
      state_ = BreakerState::MetricsOnly;
      break;
    case BreakerMode::Disabled:
      state_ = BreakerState::Disabled;
      break;
    case BreakerMode::ForcedOpen:
      state_ = BreakerState::ForcedOpen;
      break;
  }
  updateSlowThreshold();
  const double sliceLen = static_cast<double>(stats_.bucketWidth()) * stats_.bucketsPerSlice();
  const double horizon = static_cast<double>(std::max<Micros>(cfg.baseline.horizon, 1));
  baselineStep_ = std::exp(sliceLen / horizon);
}

Micros Breaker::clamp(Micros t) {
  if (stateSince_ == kNever) {  // the first call starts the clock
    stateSince_ = t;
  } else if (t < lastNow_) {
    ++counters_.clockRegressions;
    return lastNow_;
  }
  lastNow_ = t;
  return t;
}

void Breaker::decisionCounts(std::uint32_t& calls, std::uint32_t& failures,
                             std::uint32_t& slow) const {
  if (countWindow_) {
    calls = countWindow_->calls();
    failures = countWindow_->failures();
    slow = countWindow_->slow();
  } else {
    const WindowCounts& d = stats_.decision();
    calls = d.calls;
    failures = d.failures;
    slow = d.slow;
  }
}

void Breaker::decisionRates(std::uint32_t& calls, double& errorRate, double& slowRate) const {
  std::uint32_t failures, slow;
  decisionCounts(calls, failures, slow);
  errorRate = calls ? static_cast<double>(failures) / calls : 0.0;  // 0, not NaN, when empty
  slowRate = calls ? static_cast<double>(slow) / calls : 0.0;
}

Decision Breaker::reject(Micros now, RejectReason r) {
  stats_.advanceTo(now, sliceHook());
  stats_.addRejected();
  ++counters_.rejected;
  ++counters_.rejectedBy[r];
  return Decision{false, false, r};
}

Decision Breaker::admitSlow(Micros now) {
  switch (state_) {
    case BreakerState::Closed: {  // ramping back after recovery
      if (now >= rampEnd()) {
        endRamp(rampEnd());
        if (state_ != BreakerState::Closed) return reject(now, RejectReason::BreakerOpen);
      }
      if (ramping_ && rng_.uniform() >= rampShare(now)) return reject(now, RejectReason::Ramp);
      ++admitted_;
      ++inflight_;
      return Decision{};
    }
    case BreakerState::Open:
      if (now < openUntil_) return reject(now, RejectReason::BreakerOpen);
      toHalfOpen(openUntil_);
      [[fallthrough]];
    case BreakerState::HalfOpen:
      if (rng_.uniform() < cfg_->halfOpen.probeShare) {
        ++admitted_;
        ++counters_.probes;
        ++inflight_;
        return Decision{true, true, RejectReason::None};
      }
      return reject(now, RejectReason::HalfOpen);
    case BreakerState::ForcedOpen:
      return reject(now, RejectReason::ForcedOpen);
    case BreakerState::Disabled:
    case BreakerState::MetricsOnly:
      ++admitted_;
      ++inflight_;
      return Decision{};
  }
  return Decision{};
}

void Breaker::afterOutcome(Micros now, bool probe, bool good, std::uint32_t n) {
  // A call admitted while ramping may end after the ramp did, with no admit or advance in
  // between: the ramp is over, so it must not be judged as a relapse (no sustain).
  if (state_ == BreakerState::Closed && ramping_ && now >= rampEnd()) endRamp(rampEnd());
  switch (state_) {
    case BreakerState::Closed:
    case BreakerState::MetricsOnly:
      evaluateTrip(now);
      break;
    case BreakerState::HalfOpen:
      if (!probe) break;  // started before the breaker opened: stats only
      if (!cfg_->halfOpen.release.empty()) {
        gradeProbe(now, good, n);
      } else if (!good) {
        open(now, Reason::ProbeFailed, 0);
      } else {
        streak_ += n;
        if (streak_ >= cfg_->halfOpen.successStreak) close(now);
      }
      break;
    default:
      break;
  }
}

void Breaker::evaluateTrip(Micros now) {
  TripSample sample{0, id_, 0, 0, 0, loadKnown_, load_};
  decisionCounts(sample.calls, sample.failures, sample.slow);
  if (tripLog_) {
    sample.step = tripLog_->step;
    if (tripLog_->samples.size() < tripLog_->cap)
      tripLog_->samples.push_back(sample);
    else
      tripLog_->full = true;
  }
  const auto [errOver, slowOver] = testTrip(*cfg_, sample);
  forgetHealthyVerdict();
  if (!errOver && !slowOver) {
    overSince_ = kNever;
    wouldOpenFired_ = false;
    if (state_ == BreakerState::Closed && !ramping_) {
      if (healthySince_ == kNever) healthySince_ = now;
      // Flap damping decays: every decay_after of health forgets one open.
      if (attempts_ > 0 && now - healthySince_ >= cfg_->open.decayAfter) {
        --attempts_;
        healthySince_ = now;
      }
    }
    keepHealthyVerdict(sample);
    return;
  }
  healthySince_ = now;
  if (state_ == BreakerState::Closed && ramping_) {
    if (cfg_->ramp.relapseReopens) open(now, Reason::RampRelapse, 0);
    return;
  }
  if (overSince_ == kNever) overSince_ = now;
  const Micros held = now - overSince_;
  if (held < cfg_->trip.sustain) return;
  const Reason r = errOver && slowOver ? Reason::ErrorAndSlow
                   : errOver           ? Reason::ErrorRate
                                       : Reason::SlowRate;
  tripCause_ = errOver ? TripCause::ErrorRate : TripCause::SlowRate;
  if (state_ == BreakerState::MetricsOnly) {
    if (!wouldOpenFired_) {
      wouldOpenFired_ = true;
      ++counters_.wouldOpens;
      publish(EventKind::WouldOpen, state_, state_, r, now, 0, held);
    }
    return;
  }
  open(now, r, held);
}

// Skipping the next evaluations is safe only in plain CLOSED (not ramping, METRICS_ONLY or a
// count window), with nothing time-driven pending (flap-damping decay, a sustain timer) and no
// trip log; transition(), setTripLog(), setLoad() and fork() forget the verdict.
void Breaker::keepHealthyVerdict(const TripSample& s) {
  if (state_ != BreakerState::Closed || ramping_ || attempts_ > 0 || tripLog_ || countWindow_ ||
      !enoughCalls(*cfg_, s.calls))
    return;
  okCalls_ = s.calls;
  okFailures_ = s.failures;
  okSlow_ = s.slow;
}

double Breaker::errorThresholdOf(const TripConfig& t, bool loadKnown, double load) {
  double f = t.weight;
  if (t.loadFactor.enabled && loadKnown)
    f *= t.loadFactor.min + (t.loadFactor.max - t.loadFactor.min) * load;
  return std::min(1.0, t.errorRate * f);
}

double Breaker::slowRateThresholdOf(const TripConfig& t) {
  return std::min(1.0, t.slowRate * t.weight);
}

TripTest Breaker::testTrip(const BreakerConfig& cfg, const TripSample& s) {
  const bool enough = enoughCalls(cfg, s.calls);
  const double c = s.calls;
  return {enough && s.failures > errorThresholdOf(cfg.trip, s.loadKnown, s.load) * c,
          enough && s.slow > slowRateThresholdOf(cfg.trip) * c};
}

double Breaker::errorThreshold() const {
  return errorThresholdOf(cfg_->trip, loadKnown_, load_);
}

double Breaker::slowRateThreshold() const {
  return slowRateThresholdOf(cfg_->trip);
}

std::unique_ptr<Breaker> Breaker::fork(const BreakerConfig& cfg, EventSink* sink) const {
  std::unique_ptr<Breaker> b(new Breaker(*this));
  b->cfg_ = &cfg;
  b->sink_ = sink;
  b->tripLog_ = nullptr;
  b->forgetHealthyVerdict();
  return b;
}

// Graded release: judge the probes so far against the rules (best first).
void Breaker::gradeProbe(Micros now, bool good, std::uint32_t n) {
  const HalfOpenConfig& h = cfg_->halfOpen;
  probeN_ += n;
  if (good) probeOk_ += n;
  const double rate = static_cast<double>(probeOk_) / probeN_;
  const ReleaseRule* best = nullptr;
  for (const ReleaseRule& r : h.release) {
    if (probeN_ >= r.probes && rate >= r.success) {
      best = &r;
      break;
    }
  }
  if (best == &h.release.front()) return release(now, *best);
  if (probeN_ >= h.maxProbes) {
    if (best) return release(now, *best);
    return open(now, Reason::ProbeFailed, 0);
  }
  // Reopen as soon as even a clean run of the remaining probes could not reach the last rule.
  const double reachable = static_cast<double>(probeOk_ + (h.maxProbes - probeN_)) / h.maxProbes;
  if (reachable < h.release.back().success) open(now, Reason::ProbeFailed, 0);
}

void Breaker::release(Micros now, const ReleaseRule& rule) {
  rampFrom_ = rule.start;
  rampCap_ = rule.cap;
  close(now);
}

void Breaker::endRamp(Micros at) {
  if (rampCap_ < 1.0) return endCappedRamp(at);
  finishRamp(at);
}

// A release capped below full traffic is graded again on what the ramp admitted: the best
// rule's rate lets it rise to 100 %, a lower rule holds it at the cap for another ramp period,
// anything worse reopens.
void Breaker::endCappedRamp(Micros at) {
  std::uint32_t calls, failures, slow;
  decisionCounts(calls, failures, slow);
  const double bad = calls ? static_cast<double>(std::max(failures, slow)) / calls : 0.0;
  const double goodShare = 1.0 - bad;
  const std::vector<ReleaseRule>& rules = cfg_->halfOpen.release;
  rampFrom_ = rampCap_;
  rampStart_ = at;
  if (calls >= rules.front().probes && goodShare >= rules.front().success) {
    rampCap_ = 1.0;
    return;
  }
  for (const ReleaseRule& r : rules)
    if (calls >= r.probes && goodShare >= r.success) return;
  open(at, Reason::RampRelapse, 0);
}

void Breaker::open(Micros now, Reason reason, Micros sustained) {
  ++attempts_;
  ++counters_.opens;
  if (reason == Reason::ErrorRate || reason == Reason::ErrorAndSlow)
    tripCause_ = TripCause::ErrorRate;
  else if (reason == Reason::SlowRate)
    tripCause_ = TripCause::SlowRate;
  double d = static_cast<double>(cfg_->open.duration);
  const double cap = static_cast<double>(std::max(cfg_->open.maxDuration, cfg_->open.duration));
  for (std::uint32_t i = 1; i < attempts_ && d < cap; ++i) d *= cfg_->open.backoffMultiplier;
  d = std::min(d, cap);
  if (cfg_->open.jitter > 0) d *= 1.0 + cfg_->open.jitter * (2.0 * rng_.uniform() - 1.0);
  const Micros openFor = std::max<Micros>(1, static_cast<Micros>(std::llround(d)));
  openUntil_ = now + openFor;
  ramping_ = false;
  streak_ = 0;
  overSince_ = kNever;
  transition(BreakerState::Open, reason, now, openFor, sustained);
}

void Breaker::toHalfOpen(Micros at) {
  streak_ = 0;
  probeN_ = probeOk_ = 0;
  transition(BreakerState::HalfOpen, Reason::OpenElapsed, at);
}

void Breaker::close(Micros now) {
  transition(BreakerState::Closed, Reason::ProbeStreak, now);
  stats_.restartDecision();
  if (countWindow_) countWindow_->clear();
  overSince_ = kNever;
  healthySince_ = now;
  rampStart_ = now;
  if (cfg_->halfOpen.release.empty()) {
    rampFrom_ = cfg_->halfOpen.probeShare;
    rampCap_ = 1.0;
  }
  ramping_ = cfg_->ramp.duration > 0 && rampFrom_ < 1.0;
  if (!ramping_) finishRamp(now);
}

void Breaker::finishRamp(Micros at) {
  ramping_ = false;
  healthySince_ = at;
  publish(EventKind::RampComplete, BreakerState::Closed, BreakerState::Closed, Reason::RampComplete,
          at, 0, 0);
}

Micros Breaker::rampEnd() const {
  return rampStart_ + cfg_->ramp.duration;
}

double Breaker::rampShare(Micros now) const {
  if (cfg_->ramp.duration <= 0) return 1.0;
  const double p0 = rampFrom_;
  double f = static_cast<double>(now - rampStart_) / static_cast<double>(cfg_->ramp.duration);
  f = std::clamp(f, 0.0, 1.0);
  if (cfg_->ramp.shape == RampShape::Step) {
    const double n = std::max<std::uint32_t>(1, cfg_->ramp.steps);
    f = std::floor(f * n) / n;
  }
  if (f >= 1.0) return rampCap_;
  return p0 + (rampCap_ - p0) * f;
}

void Breaker::transition(BreakerState to, Reason reason, Micros now, Micros openFor,
                         Micros sustained) {
  if (stateSince_ != kNever && now > stateSince_)
    counters_.timeIn[static_cast<int>(state_)] += now - stateSince_;
  const BreakerState from = state_;
  state_ = to;
  stateSince_ = now;
  forgetHealthyVerdict();
  publish(EventKind::Transition, from, to, reason, now, openFor, sustained);
}

void Breaker::publish(EventKind kind, BreakerState from, BreakerState to, Reason reason, Micros now,
                      Micros openFor, Micros sustained) {
  if (!sink_) return;
  Event e;
  e.ts = now;
  e.instance = id_;
  e.kind = kind;
  e.from = from;
  e.to = to;
  e.reason = reason;
  decisionRates(e.calls, e.errorRate, e.slowRate);
  e.openFor = openFor;
  e.sustained = sustained;
  sink_->onEvent(e);
}

void Breaker::onSliceComplete(const CompletedSlice& s) {
  const BaselineConfig& b = cfg_->baseline;
  bool healthy = (state_ == BreakerState::Closed && !ramping_) ||
                 state_ == BreakerState::MetricsOnly || state_ == BreakerState::Disabled;
  if (healthy && s.counts.calls > 0) {
    const double c = s.counts.calls;
    if (s.counts.failures > b.freezeErrorRate * c || s.counts.slow > b.freezeSlowRate * c) {
      healthy = false;
    } else if (baselineLearned_ && windowP50Exceeds(b.freezeDriftRatio * baselineP50_)) {
      // The slice is clearly slower than what we learned: a drift (a leak) must not be
      // allowed to drag the baseline up with it.
      healthy = false;
    }
  }
  lastSliceFrozen_ = !healthy;
  if (!healthy) {
    mergeable_ = 0;  // the slices still in the window may hold this one's onset
    return;
  }
  if (s.samples() > 0 && s.slot >= 0) mergeable_ |= 1u << s.slot;
}

void Breaker::onSliceEvicted(const CompletedSlice& s) {
  const std::uint32_t bit = 1u << s.slot;
  if (!(mergeable_ & bit)) return;
  mergeable_ &= ~bit;
  const BaselineConfig& b = cfg_->baseline;
  // Forward decay: rather than shrinking every bin each slice, newer slices get a growing
  // weight; quantiles do not care about the common factor. Renormalize long before overflow.
  baselineWeight_ *= baselineStep_;
  if (baselineWeight_ > 1e200) {
    baseline_.scale(1.0 / baselineWeight_);
    baselineWeight_ = 1.0;
  }
  if (cfg_->slow.spreadMax > 1.0) learnSpread(s);
  // The same sums, whatever the slice's form.
  if (s.hist) {
    baseline_.mergeScaled(*s.hist, baselineWeight_);
  } else if (s.packed) {
    baseline_.addCountsScaled([&](auto f) { s.packed->forEach(f); }, baselineWeight_);
  } else {
    baseline_.addBinsScaled(s.bins, s.binCount, baselineWeight_);
  }
  if (!baselineLearned_ && baseline_.total() / baselineWeight_ >= b.minCalls)
    baselineLearned_ = true;
  if (baselineLearned_) {
    baselineP99_ = baseline_.quantile(0.99);
    baselineP50_ = baseline_.quantile(0.5);
    updateSlowThreshold();
  }
}

// The spread of healthy slices' P99 (an exponentially weighted mean and variance with the
// baseline's horizon) scales the slow threshold: a naturally noisy instance gets more room.
void Breaker::learnSpread(const CompletedSlice& s) {
  if (s.samples() < 20) return;  // a P99 over fewer calls is noise, not spread
  const double p = s.histogram().quantile(0.99);
  if (!spreadSeen_) {
    spreadSeen_ = true;
    spreadMean_ = p;
  } else {
    const double a = 1.0 - 1.0 / baselineStep_;
    const double d = p - spreadMean_;
    spreadMean_ += a * d;
    spreadVar_ = (1.0 - a) * (spreadVar_ + a * d * d);
  }
  const double cv = spreadMean_ > 0 ? std::sqrt(spreadVar_) / spreadMean_ : 0.0;
  latencyFactor_ = std::clamp(1.0 + cv, 1.0, cfg_->slow.spreadMax);
}

bool Breaker::windowP50Exceeds(double us) {
  return stats_.quantileExceeds(0.5, us);
}

void Breaker::updateSlowThreshold() {
  const SlowConfig& s = cfg_->slow;
  if (s.absolute > 0) {
    slowThreshold_ = s.absolute;
  } else if (baselineLearned_) {
    slowThreshold_ =
        std::max<Micros>(s.floor, static_cast<Micros>(s.k * baselineP99_ * latencyFactor_));
  } else if (s.initialBaseline > 0) {
    slowThreshold_ = std::max<Micros>(
        s.floor, static_cast<Micros>(s.k * static_cast<double>(s.initialBaseline)));
  } else {
    slowThreshold_ = kForever;  // still learning: nothing is called slow yet
  }
}

void Breaker::recordAggregate(Micros end, std::uint32_t calls, std::uint32_t failures,
                              std::int64_t slow, const LatencyHistogram* hist) {
  end = clamp(end);
  if (state_ == BreakerState::Disabled || calls == 0) return;
  stats_.advanceTo(end, sliceHook());
  failures = std::min(failures, calls);
  if (slow < 0) {
    slow = (hist && slowThreshold_ != kForever) ? static_cast<std::int64_t>(hist->countAbove(
                                                      static_cast<std::uint64_t>(slowThreshold_)))
                                                : 0;
  }
  const auto slowN = static_cast<std::uint32_t>(std::min<std::int64_t>(slow, calls));
  stats_.addAggregate(WindowCounts{calls, failures, slowN, 0}, hist);
  if (countWindow_) {
    const std::uint32_t n = std::min(calls, cfg_->window.calls);
    for (std::uint32_t i = 0; i < n; ++i) countWindow_->add(i < failures, i < slowN);
  }
  // Probes inside an aggregate are not individually known: the interval as a whole is a good
  // probe when nothing failed or was slow, and counts as the probes it would have carried.
  const bool good = failures == 0 && slowN == 0;
  const auto probes = std::max<std::uint32_t>(
      1, static_cast<std::uint32_t>(std::lround(calls * cfg_->halfOpen.probeShare)));
  afterOutcome(end, state_ == BreakerState::HalfOpen, good, probes);
}

void Breaker::noteBlocked(bool wouldHaveSucceeded) {
  ++counters_.verdicts;
  if (wouldHaveSucceeded) {
    ++counters_.blockedWouldSucceed;
    ++counters_.fpByTrip[tripCause_];
  }
}

void Breaker::advance(Micros now) {
  now = clamp(now);
  stats_.advanceTo(now, sliceHook());
  if (state_ == BreakerState::Open && now >= openUntil_) toHalfOpen(openUntil_);
  if (state_ == BreakerState::Closed && ramping_ && now >= rampEnd()) endRamp(rampEnd());
}

void Breaker::force(BreakerState to, Micros now) {
  now = clamp(now);
  if (to == state_) return;
  ramping_ = false;
  overSince_ = kNever;
  wouldOpenFired_ = false;
  transition(to, Reason::Manual, now);
  if (to == BreakerState::Closed) {
    stats_.restartDecision();
    if (countWindow_) countWindow_->clear();
    healthySince_ = now;
  }
}

BreakerCounters Breaker::counters() const {
  BreakerCounters c = counters_;
  const SlidingStats::Lifetime seen = stats_.lifetime();
  c.admitted = admitted_;
  c.recorded = seen.calls;
  c.failures = seen.failures;
  c.slow = seen.slow;
  return c;
}

BreakerSnapshot Breaker::snapshot(Micros now) const {
  BreakerSnapshot s;
  s.at = now;
  s.state = state_;
  s.ramping = ramping_ && now < rampEnd();
  switch (state_) {
    case BreakerState::Closed:
      s.admitShare = ramping_ ? rampShare(now) : 1.0;
      break;
    case BreakerState::Open:
      s.admitShare = now >= openUntil_ ? cfg_->halfOpen.probeShare : 0.0;
      break;
    case BreakerState::HalfOpen:
      s.admitShare = cfg_->halfOpen.probeShare;
      break;
    case BreakerState::ForcedOpen:
      s.admitShare = 0.0;
      break;
    default:
      s.admitShare = 1.0;
      break;
  }
  s.window = stats_.all();
  s.decision = stats_.decision();
  std::uint32_t calls;
  decisionRates(calls, s.errorRate, s.slowRate);
  if (const LatencyHistogram* h = stats_.histogram()) {
    s.p50 = h->quantile(0.50);
    s.p90 = h->quantile(0.90);
    s.p99 = h->quantile(0.99);
  }
  s.baselineP99 = baselineLearned_ ? baselineP99_ : 0.0;
  s.baselineLearned = baselineLearned_;
  s.baselineFrozen = lastSliceFrozen_;
  s.slowThreshold = slowThreshold_;
  s.inflight = inflight_;
  s.openUntil = openUntil_;
  s.attempts = attempts_;
  s.counters = counters();
  if (stateSince_ != kNever && now > stateSince_)
    s.counters.timeIn[static_cast<int>(state_)] += now - stateSince_;
  return s;
}

}  // namespace spillway
