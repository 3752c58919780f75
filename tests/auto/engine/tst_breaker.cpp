// The breaker state machine at its boundaries: trip rule (strict thresholds, min_calls,
// sustain), OPEN/HALF_OPEN/ramp recovery, backoff and its decay, modes, the P99 baseline and
// its freezes, clock regressions, aggregate samples, FP accounting, KPI scoring.
// Time is simulated throughout.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "spillway/breaker.hpp"
#include "spillway/engine.hpp"
#include "spillway/kpi.hpp"

using namespace spillway;

namespace {

// The documented defaults, spelled out so a test never depends on a default changing.
BreakerConfig explicitConfig() {
  BreakerConfig c;
  c.mode = BreakerMode::Normal;
  c.window.type = WindowType::Time;
  c.window.length = seconds(10);
  c.window.bucket = seconds(1);
  c.window.calls = 100;
  c.minCalls = 20;
  c.trip.errorRate = 0.5;
  c.trip.slowRate = 0.4;
  c.trip.sustain = seconds(3);
  c.slow.k = 3.0;
  c.slow.floor = millis(200);
  c.slow.absolute = 0;
  c.slow.initialBaseline = 0;
  c.baseline.horizon = seconds(300);
  c.baseline.minCalls = 200;
  c.baseline.freezeErrorRate = 0.25;
  c.baseline.freezeSlowRate = 0.2;
  c.baseline.freezeDriftRatio = 1.3;
  c.open.duration = seconds(10);
  c.open.backoffMultiplier = 1.5;
  c.open.maxDuration = seconds(60);
  c.open.jitter = 0.0;
  c.open.decayAfter = seconds(60);
  c.halfOpen.probeShare = 0.1;
  c.halfOpen.successStreak = 5;
  c.ramp.duration = seconds(30);
  c.ramp.shape = RampShape::Linear;
  c.ramp.steps = 4;
  c.ramp.relapseReopens = true;
  return c;
}

// One breaker with its own config copy and an event log.
struct Rig {
  explicit Rig(const BreakerConfig& c, std::uint64_t seed = 42) : cfg(c), b(7, cfg, seed, &sink) {}
  Rig(const Rig&) = delete;
  Rig& operator=(const Rig&) = delete;

  void ok(Micros t, Micros lat = millis(50), bool probe = false) {
    b.record(t, lat, 200, Outcome::Ok, probe);
  }
  void fail(Micros t, Micros lat = millis(50), bool probe = false) {
    b.record(t, lat, 500, Outcome::Ok, probe);
  }
  std::vector<Event> transitions() const {
    std::vector<Event> v;
    for (const Event& e : sink.events)
      if (e.kind == EventKind::Transition) v.push_back(e);
    return v;
  }
  int count(EventKind k) const {
    return static_cast<int>(std::count_if(sink.events.begin(), sink.events.end(),
                                          [k](const Event& e) { return e.kind == k; }));
  }
  const Event* last(EventKind k) const {
    for (auto it = sink.events.rbegin(); it != sink.events.rend(); ++it)
      if (it->kind == k) return &*it;
    return nullptr;
  }
  // Admits at `t` until a probe is let through (HALF_OPEN); returns how many admits it took.
  int admitProbe(Micros t) {
    for (int i = 1; i <= 1'000'000; ++i)
      if (b.admit(t).probe) return i;
    return -1;
  }
  // CLOSED → OPEN: min_calls failures at `t`, one more once the sustain has held.
  Micros trip(Micros t) {
    for (std::uint32_t i = 0; i < std::max<std::uint32_t>(cfg.minCalls, 1); ++i) fail(t);
    if (b.state() != BreakerState::Open) {
      t += cfg.trip.sustain;
      fail(t);
    }
    return t;
  }
  // OPEN → HALF_OPEN → CLOSED through success_streak good probes at the end of the open time.
  // Returns the close time.
  Micros recover() {
    const Micros t = b.snapshot(0).openUntil;
    b.advance(t);
    for (std::uint32_t i = 0; i < cfg.halfOpen.successStreak; ++i) {
      admitProbe(t);
      ok(t, millis(10), true);
    }
    return t;
  }

  BreakerConfig cfg;
  VectorSink sink;
  Breaker b;
};

double binomialSigma(double n, double p) {
  return std::sqrt(n * p * (1.0 - p));
}

// Standard normal from a seeded engine generator (Box–Muller).
double normal(Rng& rng) {
  const double u1 = 1.0 - rng.uniform();
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

double nearestRank(std::vector<Micros> v, double q) {
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::int64_t>(std::ceil(q * static_cast<double>(v.size()) - 1e-9));
  rank = std::clamp<std::int64_t>(rank, 1, static_cast<std::int64_t>(v.size()));
  return static_cast<double>(v[static_cast<std::size_t>(rank - 1)]);
}

// Open duration of the n-th consecutive open: duration × multiplier^(n-1), capped.
Micros expectedOpenFor(const OpenConfig& o, int n) {
  const double cap = static_cast<double>(std::max(o.maxDuration, o.duration));
  return static_cast<Micros>(std::llround(
      std::min(static_cast<double>(o.duration) * std::pow(o.backoffMultiplier, n - 1), cap)));
}

enum class Pool { LogNormal100ms, Uniform1to50ms, Bimodal, LlmHeavyTail };
enum class BadProbe { Status500, Timeout, Reset, Status429, Slow };

}  // namespace

Q_DECLARE_METATYPE(Pool)
Q_DECLARE_METATYPE(BadProbe)
Q_DECLARE_METATYPE(RampShape)
Q_DECLARE_METATYPE(BreakerState)
Q_DECLARE_METATYPE(BreakerMode)
Q_DECLARE_METATYPE(std::vector<spillway::Event>)

class TstBreaker : public QObject {
  Q_OBJECT

 private slots:
  // Trip rule.
  void tripOnErrorRate_data();
  void tripOnErrorRate();
  void tripOnSlowRate_data();
  void tripOnSlowRate();
  void tripOnBothRates();
  void sustain_data();
  void sustain();
  void sustainRestartsWhenConditionClears();
  void shortBlipDoesNotTrip_data();
  void shortBlipDoesNotTrip();
  void slowClassification_data();
  void slowClassification();
  void countWindowTrip_data();
  void countWindowTrip();
  // Recovery.
  void openRejectsUntilDurationElapses_data();
  void openRejectsUntilDurationElapses();
  void halfOpenProbeShare_data();
  void halfOpenProbeShare();
  void successStreakCloses_data();
  void successStreakCloses();
  void badProbeReopens_data();
  void badProbeReopens();
  void ignoredProbeDoesNotCount();
  void rampShare_data();
  void rampShare();
  void rampCompleteEvent_data();
  void rampCompleteEvent();
  void rampRelapse_data();
  void rampRelapse();
  void recordAfterRampEndIsNotARelapse();
  void backoff_data();
  void backoff();
  void backoffDecay_data();
  void backoffDecay();
  void openJitter();
  // Modes.
  void metricsOnlyNeverRejects_data();
  void metricsOnlyNeverRejects();
  void disabledAdmitsAndRecordsNothing();
  void forcedOpenRejectsAll();
  void forceTransitions_data();
  void forceTransitions();
  // Baseline.
  void baselineLearnsP99_data();
  void baselineLearnsP99();
  void baselineFrozenDuringDrift_data();
  void baselineFrozenDuringDrift();
  void baselineFrozenWhileRecovering();
  void baselineNeverLearnsTheOnset();
  void baselineSkipsUnhealthySlices_data();
  void baselineSkipsUnhealthySlices();
  // Robustness and inputs.
  void clockGoingBackwards_data();
  void clockGoingBackwards();
  void aggregateTripsLikeSingles_data();
  void aggregateTripsLikeSingles();
  void aggregateSlowFromHistogram_data();
  void aggregateSlowFromHistogram();
  void aggregateProbesInHalfOpen_data();
  void aggregateProbesInHalfOpen();
  void lifetimeCountersOutliveTheWindow_data();
  void lifetimeCountersOutliveTheWindow();
  // Accounting.
  void fpAccounting();
  void engineFpRate_data();
  void engineFpRate();
  void scoreFault_data();
  void scoreFault();
  void clearTimes();
};

// ---------------------------------------------------------------------------------------------
// Trip rule

void TstBreaker::tripOnErrorRate_data() {
  QTest::addColumn<double>("errorRate");
  QTest::addColumn<quint32>("minCalls");
  QTest::addColumn<int>("calls");
  QTest::addColumn<int>("failures");
  QTest::addColumn<bool>("trips");
  // Successes first, failures last: the error rate only rises, so the final rate is the
  // highest any prefix with enough calls reached.
  QTest::newRow("exactly at threshold 10/20") << 0.5 << 20u << 20 << 10 << false;
  QTest::newRow("just above 11/20") << 0.5 << 20u << 20 << 11 << true;
  QTest::newRow("exactly at threshold 50/100") << 0.5 << 20u << 100 << 50 << false;
  QTest::newRow("just above 51/100") << 0.5 << 20u << 100 << 51 << true;
  QTest::newRow("min_calls one short, all failing") << 0.5 << 20u << 19 << 19 << false;
  QTest::newRow("min_calls reached, all failing") << 0.5 << 20u << 20 << 20 << true;
  QTest::newRow("quarter: at threshold 2/8") << 0.25 << 8u << 8 << 2 << false;
  QTest::newRow("quarter: above 3/8") << 0.25 << 8u << 8 << 3 << true;
  QTest::newRow("rate 0: one failure trips") << 0.0 << 5u << 5 << 1 << true;
  QTest::newRow("rate 0: no failure") << 0.0 << 5u << 5 << 0 << false;
  QTest::newRow("rate 1: never") << 1.0 << 5u << 50 << 50 << false;
  QTest::newRow("min_calls 1") << 0.5 << 1u << 1 << 1 << true;
}

void TstBreaker::tripOnErrorRate() {
  QFETCH(double, errorRate);
  QFETCH(quint32, minCalls);
  QFETCH(int, calls);
  QFETCH(int, failures);
  QFETCH(bool, trips);
  BreakerConfig c = explicitConfig();
  c.trip.errorRate = errorRate;
  c.minCalls = minCalls;
  c.trip.sustain = 0;
  Rig r(c);
  const Micros t = seconds(5);
  for (int i = 0; i < calls; ++i) (i < calls - failures) ? r.ok(t) : r.fail(t);
  QCOMPARE(r.b.state(), trips ? BreakerState::Open : BreakerState::Closed);
  const auto tr = r.transitions();
  QCOMPARE(static_cast<int>(tr.size()), trips ? 1 : 0);
  if (trips) {
    QCOMPARE(tr[0].from, BreakerState::Closed);
    QCOMPARE(tr[0].to, BreakerState::Open);
    QCOMPARE(tr[0].reason, Reason::ErrorRate);
    QCOMPARE(tr[0].ts, t);
    QVERIFY(tr[0].calls >= minCalls);
    QVERIFY(tr[0].errorRate > errorRate);
  } else {
    QVERIFY(r.b.snapshot(t).errorRate <= errorRate || static_cast<quint32>(calls) < minCalls);
  }
}

void TstBreaker::tripOnSlowRate_data() {
  QTest::addColumn<double>("slowRate");
  QTest::addColumn<int>("calls");
  QTest::addColumn<int>("slowCalls");
  QTest::addColumn<Micros>("slowLatency");
  QTest::addColumn<bool>("trips");
  // slow.absolute = 1 s: a call is slow when its latency is strictly above 1 s.
  const Micros above = seconds(1) + 1;
  QTest::newRow("exactly at threshold 8/20") << 0.4 << 20 << 8 << above << false;
  QTest::newRow("just above 9/20") << 0.4 << 20 << 9 << above << true;
  QTest::newRow("min_calls one short") << 0.4 << 19 << 19 << above << false;
  QTest::newRow("latency equal to threshold is not slow") << 0.4 << 20 << 20 << seconds(1) << false;
  QTest::newRow("at threshold 40/100") << 0.4 << 100 << 40 << above << false;
  QTest::newRow("above 41/100") << 0.4 << 100 << 41 << above << true;
}

void TstBreaker::tripOnSlowRate() {
  QFETCH(double, slowRate);
  QFETCH(int, calls);
  QFETCH(int, slowCalls);
  QFETCH(Micros, slowLatency);
  QFETCH(bool, trips);
  BreakerConfig c = explicitConfig();
  c.trip.slowRate = slowRate;
  c.trip.sustain = 0;
  c.slow.absolute = seconds(1);
  Rig r(c);
  const Micros t = seconds(5);
  for (int i = 0; i < calls; ++i) r.ok(t, i < calls - slowCalls ? millis(100) : slowLatency);
  QCOMPARE(r.b.state(), trips ? BreakerState::Open : BreakerState::Closed);
  const auto tr = r.transitions();
  QCOMPARE(static_cast<int>(tr.size()), trips ? 1 : 0);
  if (trips) {
    QCOMPARE(tr[0].reason, Reason::SlowRate);
    QVERIFY(tr[0].slowRate > slowRate);
    QCOMPARE(tr[0].errorRate, 0.0);
  }
}

void TstBreaker::tripOnBothRates() {
  BreakerConfig c = explicitConfig();
  c.trip.sustain = 0;
  c.slow.absolute = seconds(1);
  Rig r(c);
  // 20 calls: 11 slow failures → both rates above their thresholds at the last call.
  for (int i = 0; i < 9; ++i) r.ok(seconds(1));
  for (int i = 0; i < 11; ++i) r.fail(seconds(1), seconds(2));
  QCOMPARE(r.b.state(), BreakerState::Open);
  QCOMPARE(r.transitions().at(0).reason, Reason::ErrorAndSlow);
}

void TstBreaker::sustain_data() {
  QTest::addColumn<Micros>("sustain");
  QTest::addColumn<Micros>("recordAt");  // after t0, when the condition became true
  QTest::addColumn<bool>("opens");
  QTest::newRow("3s: 2.999s is not enough") << seconds(3) << millis(2'999) << false;
  QTest::newRow("3s: 2.999999s is not enough") << seconds(3) << seconds(3) - 1 << false;
  QTest::newRow("3s: exactly 3s opens") << seconds(3) << seconds(3) << true;
  QTest::newRow("3s: later opens") << seconds(3) << seconds(5) << true;
  QTest::newRow("1s: 999ms is not enough") << seconds(1) << millis(999) << false;
  QTest::newRow("1s: exactly 1s opens") << seconds(1) << seconds(1) << true;
  QTest::newRow("0: opens at once") << Micros(0) << Micros(0) << true;
}

void TstBreaker::sustain() {
  QFETCH(Micros, sustain);
  QFETCH(Micros, recordAt);
  QFETCH(bool, opens);
  BreakerConfig c = explicitConfig();
  c.trip.sustain = sustain;
  Rig r(c);
  const Micros t0 = millis(1'500);
  // The 20th failure at t0 makes the condition true (min_calls reached, 100 % errors).
  for (int i = 0; i < 20; ++i) r.fail(t0);
  if (sustain == 0) {
    QCOMPARE(r.b.state(), BreakerState::Open);
    QCOMPARE(r.transitions().at(0).sustained, Micros(0));
    return;
  }
  QCOMPARE(r.b.state(), BreakerState::Closed);
  r.fail(t0 + recordAt);
  QCOMPARE(r.b.state(), opens ? BreakerState::Open : BreakerState::Closed);
  if (!opens) {
    // It does open once the sustain is reached.
    r.fail(t0 + sustain);
    QCOMPARE(r.b.state(), BreakerState::Open);
  }
  const Event e = r.transitions().at(0);
  QCOMPARE(e.ts, t0 + std::max(recordAt, sustain));
  QCOMPARE(e.sustained, e.ts - t0);
  QVERIFY(e.sustained >= sustain);
  QCOMPARE(e.reason, Reason::ErrorRate);
}

void TstBreaker::sustainRestartsWhenConditionClears() {
  Rig r(explicitConfig());
  const Micros t0 = seconds(1);
  for (int i = 0; i < 20; ++i) r.fail(t0);               // over from t0
  for (int i = 0; i < 30; ++i) r.ok(t0 + seconds(1));    // 20/50 = 0.4: clears
  for (int i = 0; i < 40; ++i) r.fail(t0 + seconds(2));  // 60/90: over again from t0+2s
  r.fail(t0 + seconds(5) - 1);  // held 2.999999 s since the condition came back
  QCOMPARE(r.b.state(), BreakerState::Closed);
  r.fail(t0 + seconds(5));
  QCOMPARE(r.b.state(), BreakerState::Open);
  QCOMPARE(r.transitions().at(0).sustained, seconds(3));
}

void TstBreaker::shortBlipDoesNotTrip_data() {
  QTest::addColumn<int>("perSecond");
  QTest::addColumn<Micros>("blipStart");
  QTest::addColumn<Micros>("blipLength");
  QTest::addColumn<bool>("trips");
  // With the default policy (10 s window, error_rate 0.5, sustain 3 s), 2 s of 100 % errors
  // are 20 % of a full window.
  QTest::newRow("20/s, blip at 10s") << 20 << seconds(10) << seconds(2) << false;
  QTest::newRow("50/s, blip at 10s") << 50 << seconds(10) << seconds(2) << false;
  QTest::newRow("200/s, blip at 25s") << 200 << seconds(25) << seconds(2) << false;
  QTest::newRow("50/s, blip at 5s (half-full window)") << 50 << seconds(5) << seconds(2) << false;
  // Control: a 6 s outage is 60 % of the window for longer than the sustain.
  QTest::newRow("control: 6s outage trips") << 50 << seconds(10) << seconds(6) << true;
}

void TstBreaker::shortBlipDoesNotTrip() {
  QFETCH(int, perSecond);
  QFETCH(Micros, blipStart);
  QFETCH(Micros, blipLength);
  QFETCH(bool, trips);
  const BreakerConfig def;  // the default policy as shipped
  Rig r(def);
  double maxErrorRate = 0;
  const Micros step = seconds(1) / perSecond;
  for (Micros t = 0; t < blipStart + blipLength + seconds(15); t += step) {
    const bool inBlip = t >= blipStart && t < blipStart + blipLength;
    const Decision d = r.b.admit(t);
    if (!d) continue;
    inBlip ? r.fail(t) : r.ok(t);
    maxErrorRate = std::max(maxErrorRate, r.b.snapshot(t).errorRate);
  }
  // The blip was seen ...
  QVERIFY(maxErrorRate > 0.1);
  // ... and only the control outage opens.
  QCOMPARE(r.b.counters().opens, trips ? 1u : 0u);
  if (!trips) {
    QVERIFY(r.sink.events.empty());
    QCOMPARE(r.b.state(), BreakerState::Closed);
  }
}

void TstBreaker::slowClassification_data() {
  QTest::addColumn<double>("k");
  QTest::addColumn<Micros>("floor");
  QTest::addColumn<Micros>("absolute");
  QTest::addColumn<Micros>("initialBaseline");
  QTest::addColumn<Micros>("threshold");
  // threshold = absolute if set, else max(floor, k × baseline), else unknown (never slow).
  QTest::newRow("still learning: nothing is slow")
      << 3.0 << millis(200) << Micros(0) << Micros(0) << kForever;
  QTest::newRow("k x initial baseline")
      << 3.0 << millis(200) << Micros(0) << millis(100) << millis(300);
  QTest::newRow("floor wins") << 3.0 << millis(200) << Micros(0) << millis(50) << millis(200);
  QTest::newRow("k = 2") << 2.0 << millis(100) << Micros(0) << millis(400) << millis(800);
  QTest::newRow("absolute overrides baseline")
      << 3.0 << millis(200) << millis(1'500) << millis(100) << millis(1'500);
  QTest::newRow("absolute overrides floor")
      << 3.0 << millis(200) << millis(50) << Micros(0) << millis(50);
}

void TstBreaker::slowClassification() {
  QFETCH(double, k);
  QFETCH(Micros, floor);
  QFETCH(Micros, absolute);
  QFETCH(Micros, initialBaseline);
  QFETCH(Micros, threshold);
  BreakerConfig c = explicitConfig();
  c.slow.k = k;
  c.slow.floor = floor;
  c.slow.absolute = absolute;
  c.slow.initialBaseline = initialBaseline;
  Rig r(c);
  QCOMPARE(r.b.slowThreshold(), threshold);
  QCOMPARE(r.b.snapshot(0).slowThreshold, threshold);
  if (threshold == kForever) {
    r.ok(seconds(1), seconds(3'600));
    QCOMPARE(r.b.counters().slow, 0u);
    return;
  }
  r.ok(seconds(1), threshold);  // at the threshold: not slow (strict >)
  QCOMPARE(r.b.counters().slow, 0u);
  r.ok(seconds(1), threshold + 1);
  QCOMPARE(r.b.counters().slow, 1u);
  r.fail(seconds(1), threshold + 1);  // a slow failure counts in both
  QCOMPARE(r.b.counters().slow, 2u);
  QCOMPARE(r.b.counters().failures, 1u);
  QCOMPARE(r.b.snapshot(seconds(1)).window.slow, 2u);
}

void TstBreaker::countWindowTrip_data() {
  QTest::addColumn<int>("oldFailures");     // failures before the last 20 calls
  QTest::addColumn<int>("recentFailures");  // failures among the last 20
  QTest::addColumn<bool>("trips");
  QTest::newRow("10 of last 20: at threshold") << 0 << 10 << false;
  QTest::newRow("11 of last 20: above") << 0 << 11 << true;
  QTest::newRow("old failures slid out") << 15 << 10 << false;
}

void TstBreaker::countWindowTrip() {
  QFETCH(int, oldFailures);
  QFETCH(int, recentFailures);
  QFETCH(bool, trips);
  BreakerConfig c = explicitConfig();
  c.window.type = WindowType::Count;
  c.window.calls = 20;
  c.trip.sustain = 0;
  Rig r(c);
  // Old failures interleaved with successes (never over 50 % of the last 20), then 20 calls:
  // successes first. Time plays no part: all calls within one second.
  Micros t = seconds(1);
  for (int i = 0; i < oldFailures; ++i) {
    r.fail(t);
    r.ok(t);
    r.ok(t);
  }
  QCOMPARE(r.b.state(), BreakerState::Closed);
  for (int i = 0; i < 20; ++i) (i < 20 - recentFailures) ? r.ok(t) : r.fail(t);
  QCOMPARE(r.b.state(), trips ? BreakerState::Open : BreakerState::Closed);
  if (trips) QCOMPARE(r.transitions().at(0).calls, 20u);
}

// ---------------------------------------------------------------------------------------------
// Recovery

void TstBreaker::openRejectsUntilDurationElapses_data() {
  QTest::addColumn<Micros>("after");
  QTest::addColumn<bool>("stillOpen");
  const Micros d = seconds(10);
  QTest::newRow("at the trip") << Micros(0) << true;
  QTest::newRow("1us later") << Micros(1) << true;
  QTest::newRow("1us before duration") << d - 1 << true;
  QTest::newRow("exactly the duration") << d << false;
  QTest::newRow("long after") << d + seconds(3'600) << false;
}

void TstBreaker::openRejectsUntilDurationElapses() {
  QFETCH(Micros, after);
  QFETCH(bool, stillOpen);
  for (bool viaAdvance : {false, true}) {
    Rig r(explicitConfig());
    const Micros tOpen = r.trip(seconds(2));
    QCOMPARE(r.b.state(), BreakerState::Open);
    const Event opened = r.transitions().back();
    QCOMPARE(opened.openFor, r.cfg.open.duration);
    QCOMPARE(r.b.snapshot(tOpen).openUntil, tOpen + r.cfg.open.duration);
    const Micros t = tOpen + after;
    if (viaAdvance) r.b.advance(t);
    const Decision d = r.b.admit(t);
    if (stillOpen) {
      QVERIFY(!d.admitted);
      QCOMPARE(d.reason, RejectReason::BreakerOpen);
      QCOMPARE(r.b.state(), BreakerState::Open);
      QCOMPARE(r.b.snapshot(t).admitShare, 0.0);
      QCOMPARE(r.b.counters().rejectedBy[RejectReason::BreakerOpen], 1u);
    } else {
      QCOMPARE(r.b.state(), BreakerState::HalfOpen);
      QVERIFY(d.probe || d.reason == RejectReason::HalfOpen);
      QCOMPARE(d.admitted, d.probe);
      const Event half = r.transitions().back();
      QCOMPARE(half.from, BreakerState::Open);
      QCOMPARE(half.to, BreakerState::HalfOpen);
      QCOMPARE(half.reason, Reason::OpenElapsed);
      QCOMPARE(half.ts, tOpen + r.cfg.open.duration);  // when it elapsed, not when observed
      QCOMPARE(r.b.counters().rejectedBy[RejectReason::BreakerOpen], 0u);
    }
  }
}

void TstBreaker::halfOpenProbeShare_data() {
  QTest::addColumn<double>("share");
  QTest::addColumn<quint64>("seed");
  QTest::newRow("5%") << 0.05 << quint64(1);
  QTest::newRow("10%") << 0.1 << quint64(2);
  QTest::newRow("10%, other seed") << 0.1 << quint64(99);
  QTest::newRow("30%") << 0.3 << quint64(3);
  QTest::newRow("50%") << 0.5 << quint64(4);
  QTest::newRow("100%") << 1.0 << quint64(5);
}

void TstBreaker::halfOpenProbeShare() {
  QFETCH(double, share);
  QFETCH(quint64, seed);
  BreakerConfig c = explicitConfig();
  c.halfOpen.probeShare = share;
  c.halfOpen.successStreak = 1'000'000;  // never closes here
  Rig r(c, seed);
  const Micros tOpen = r.trip(seconds(1));
  const Micros t0 = tOpen + c.open.duration;
  const int n = 40'000;
  int probes = 0, halfOpenRejects = 0;
  for (int i = 0; i < n; ++i) {
    const Decision d = r.b.admit(t0 + i * millis(1));
    QCOMPARE(d.admitted, d.probe);
    probes += d.probe;
    halfOpenRejects += d.reason == RejectReason::HalfOpen;
  }
  QCOMPARE(r.b.state(), BreakerState::HalfOpen);
  QCOMPARE(probes + halfOpenRejects, n);
  QCOMPARE(r.b.counters().probes, static_cast<std::uint64_t>(probes));
  QCOMPARE(r.b.snapshot(t0).admitShare, share);
  const double tol = 5.0 * binomialSigma(n, share);
  QVERIFY2(
      std::abs(probes - n * share) <= tol,
      qPrintable(
          QString("%1 probes of %2, expected %3 ± %4").arg(probes).arg(n).arg(n * share).arg(tol)));
}

void TstBreaker::successStreakCloses_data() {
  QTest::addColumn<quint32>("streak");
  QTest::newRow("streak 1") << 1u;
  QTest::newRow("streak 5") << 5u;
  QTest::newRow("streak 10") << 10u;
}

void TstBreaker::successStreakCloses() {
  QFETCH(quint32, streak);
  BreakerConfig c = explicitConfig();
  c.halfOpen.successStreak = streak;
  Rig r(c);
  const Micros tHalf = r.trip(seconds(1)) + c.open.duration;
  r.b.advance(tHalf);
  QCOMPARE(r.b.state(), BreakerState::HalfOpen);
  Micros t = tHalf;
  for (quint32 i = 0; i < streak; ++i) {
    // Calls that were in flight (not probes) finish around the probes: neither their
    // successes nor their failures move the streak.
    for (int j = 0; j < 10; ++j) r.ok(t);
    r.fail(t);
    QVERIFY(r.admitProbe(t) > 0);
    t += millis(100);
    r.ok(t, millis(20), true);
    QCOMPARE(r.b.state(), i + 1 < streak ? BreakerState::HalfOpen : BreakerState::Closed);
  }
  const Event closed = r.transitions().back();
  QCOMPARE(closed.from, BreakerState::HalfOpen);
  QCOMPARE(closed.to, BreakerState::Closed);
  QCOMPARE(closed.reason, Reason::ProbeStreak);
  QCOMPARE(closed.ts, t);
  QVERIFY(r.b.snapshot(t).ramping);
  // The decision window restarted on closing: the failures seen while half-open are gone
  // from what the trip rule sees, but still plotted.
  QCOMPARE(r.b.snapshot(t).decision.calls, 0u);
  QVERIFY(r.b.snapshot(t).window.failures > 0);
}

void TstBreaker::badProbeReopens_data() {
  QTest::addColumn<BadProbe>("kind");
  QTest::addColumn<int>("goodBefore");
  QTest::newRow("5xx first") << BadProbe::Status500 << 0;
  QTest::newRow("timeout first") << BadProbe::Timeout << 0;
  QTest::newRow("reset first") << BadProbe::Reset << 0;
  QTest::newRow("429 first") << BadProbe::Status429 << 0;
  QTest::newRow("slow first") << BadProbe::Slow << 0;
  QTest::newRow("5xx after streak-1 good") << BadProbe::Status500 << 4;
  QTest::newRow("slow after streak-1 good") << BadProbe::Slow << 4;
}

void TstBreaker::badProbeReopens() {
  QFETCH(BadProbe, kind);
  QFETCH(int, goodBefore);
  BreakerConfig c = explicitConfig();
  c.slow.absolute = seconds(1);
  Rig r(c);
  Micros t = r.trip(seconds(1)) + c.open.duration;
  r.b.advance(t);
  for (int i = 0; i < goodBefore; ++i) {
    r.admitProbe(t);
    r.ok(t, millis(10), true);
  }
  QCOMPARE(r.b.state(), BreakerState::HalfOpen);
  r.admitProbe(t);
  switch (kind) {
    case BadProbe::Status500:
      r.b.record(t, millis(10), 503, Outcome::Ok, true);
      break;
    case BadProbe::Timeout:
      r.b.record(t, seconds(30), 0, Outcome::Timeout, true);
      break;
    case BadProbe::Reset:
      r.b.record(t, millis(10), 0, Outcome::Reset, true);
      break;
    case BadProbe::Status429:
      r.b.record(t, millis(10), 429, Outcome::Ok, true);
      break;
    case BadProbe::Slow:
      r.b.record(t, seconds(1) + 1, 200, Outcome::Ok, true);
      break;
  }
  QCOMPARE(r.b.state(), BreakerState::Open);
  const Event e = r.transitions().back();
  QCOMPARE(e.from, BreakerState::HalfOpen);
  QCOMPARE(e.reason, Reason::ProbeFailed);
  QCOMPARE(e.ts, t);
  QCOMPARE(e.openFor, expectedOpenFor(c.open, 2));
  // The streak starts over: streak-1 good probes in the next half-open do not close.
  t += e.openFor;
  r.b.advance(t);
  for (quint32 i = 0; i + 1 < c.halfOpen.successStreak; ++i) {
    r.admitProbe(t);
    r.ok(t, millis(10), true);
  }
  QCOMPARE(r.b.state(), BreakerState::HalfOpen);
  r.admitProbe(t);
  r.ok(t, millis(10), true);
  QCOMPARE(r.b.state(), BreakerState::Closed);
}

void TstBreaker::ignoredProbeDoesNotCount() {
  // A 404 probe (client error, ignored by default) is neither good nor bad.
  BreakerConfig c = explicitConfig();
  c.halfOpen.successStreak = 2;
  Rig r(c);
  const Micros t = r.trip(seconds(1)) + c.open.duration;
  r.b.advance(t);
  r.admitProbe(t);
  r.ok(t, millis(10), true);
  for (int i = 0; i < 5; ++i) {
    r.admitProbe(t);
    r.b.record(t, millis(10), 404, Outcome::Ok, true);
  }
  QCOMPARE(r.b.state(), BreakerState::HalfOpen);
  QCOMPARE(r.b.counters().ignored, 5u);
  r.admitProbe(t);
  r.ok(t, millis(10), true);
  QCOMPARE(r.b.state(), BreakerState::Closed);
}

void TstBreaker::rampShare_data() {
  QTest::addColumn<RampShape>("shape");
  QTest::addColumn<quint32>("steps");
  QTest::addColumn<double>("fraction");  // of ramp.duration since closing
  for (double f : {0.0, 0.1, 0.25, 0.5, 0.75, 0.999, 1.0, 1.5})
    QTest::newRow(qPrintable(QString("linear at %1").arg(f))) << RampShape::Linear << 4u << f;
  for (double f : {0.0, 0.249, 0.25, 0.5, 0.74, 0.75, 0.999, 1.0})
    QTest::newRow(qPrintable(QString("4 steps at %1").arg(f))) << RampShape::Step << 4u << f;
  for (double f : {0.3, 0.34, 0.7})
    QTest::newRow(qPrintable(QString("3 steps at %1").arg(f))) << RampShape::Step << 3u << f;
}

void TstBreaker::rampShare() {
  QFETCH(RampShape, shape);
  QFETCH(quint32, steps);
  QFETCH(double, fraction);
  BreakerConfig c = explicitConfig();
  c.halfOpen.probeShare = 0.2;
  c.halfOpen.successStreak = 3;
  c.ramp.shape = shape;
  c.ramp.steps = steps;
  Rig r(c, 1234);
  r.trip(seconds(1));
  const Micros tc = r.recover();
  QCOMPARE(r.b.state(), BreakerState::Closed);
  const Micros d = c.ramp.duration;
  const Micros offset = static_cast<Micros>(std::llround(fraction * static_cast<double>(d)));
  // The rule: share = p0 + (1 - p0) × g, g = elapsed fraction (Linear) or that fraction
  // rounded down to whole steps (Step); 1 once the ramp is over.
  const double p0 = c.halfOpen.probeShare;
  const double f = static_cast<double>(offset) / static_cast<double>(d);
  const double g = shape == RampShape::Step ? std::floor(f * steps) / steps : f;
  const double expected = f >= 1.0 ? 1.0 : p0 + (1.0 - p0) * g;
  const Micros t = tc + offset;
  QCOMPARE(r.b.snapshot(t).admitShare, expected);
  // Empirically, admits at that moment pass with that probability.
  const int n = 20'000;
  int admitted = 0;
  for (int i = 0; i < n; ++i) {
    const Decision dec = r.b.admit(t);
    admitted += dec.admitted;
    if (!dec.admitted && dec.reason != RejectReason::Ramp) QFAIL("ramp rejection reason");
    if (dec.probe) QFAIL("ramp admissions are not probes");
  }
  if (expected >= 1.0) {
    QCOMPARE(admitted, n);
  } else {
    const double tol = 5.0 * binomialSigma(n, expected);
    QVERIFY2(std::abs(admitted - n * expected) <= tol,
             qPrintable(QString("admitted %1 of %2, expected %3 ± %4")
                            .arg(admitted)
                            .arg(n)
                            .arg(n * expected)
                            .arg(tol)));
  }
  // The share never goes down during the ramp and spans p0 .. 1.
  Rig mono(c, 99);
  mono.trip(seconds(1));
  const Micros mc = mono.recover();
  double prev = 0;
  for (int i = 0; i <= 300; ++i) {
    const double share = mono.b.snapshot(mc + d * i / 300).admitShare;
    if (share < prev) QFAIL(qPrintable(QString("share fell at step %1").arg(i)));
    prev = share;
  }
  QCOMPARE(mono.b.snapshot(mc).admitShare, p0);
  QCOMPARE(prev, 1.0);
}

void TstBreaker::rampCompleteEvent_data() {
  QTest::addColumn<bool>("viaAdmit");
  QTest::addColumn<Micros>("late");  // how long after the ramp's end time is next seen
  QTest::newRow("advance to the exact end") << false << Micros(0);
  QTest::newRow("admit 5s after the end") << true << seconds(5);
  QTest::newRow("advance an hour after the end") << false << seconds(3'600);
}

void TstBreaker::rampCompleteEvent() {
  QFETCH(bool, viaAdmit);
  QFETCH(Micros, late);
  Rig r(explicitConfig());
  r.trip(seconds(1));
  const Micros tc = r.recover();
  const Micros end = tc + r.cfg.ramp.duration;
  r.b.advance(end - 1);
  QCOMPARE(r.count(EventKind::RampComplete), 0);
  QVERIFY(r.b.ramping());
  QVERIFY(r.b.snapshot(end - 1).admitShare < 1.0);
  if (viaAdmit) {
    QVERIFY(r.b.admit(end + late).admitted);
  } else {
    r.b.advance(end + late);
  }
  QCOMPARE(r.count(EventKind::RampComplete), 1);
  const Event* e = r.last(EventKind::RampComplete);
  QCOMPARE(e->ts, end);  // when the share reached 100 %, not when it was noticed
  QCOMPARE(e->from, BreakerState::Closed);
  QCOMPARE(e->to, BreakerState::Closed);
  QCOMPARE(e->reason, Reason::RampComplete);
  QVERIFY(!r.b.ramping());
  QCOMPARE(r.b.snapshot(end + late).admitShare, 1.0);
  for (int i = 0; i < 1'000; ++i) QVERIFY(r.b.admit(end + late + i).admitted);
  r.b.advance(end + late + seconds(100));
  QCOMPARE(r.count(EventKind::RampComplete), 1);
}

void TstBreaker::rampRelapse_data() {
  QTest::addColumn<bool>("relapseReopens");
  QTest::newRow("relapse reopens") << true;
  QTest::newRow("relapse_reopens off") << false;
}

void TstBreaker::rampRelapse() {
  QFETCH(bool, relapseReopens);
  BreakerConfig c = explicitConfig();
  c.ramp.relapseReopens = relapseReopens;
  Rig r(c);
  r.trip(seconds(1));
  const Micros tc = r.recover();
  const Micros t = tc + seconds(5);
  r.b.advance(t);
  for (int i = 0; i < 20; ++i) r.fail(t);
  if (relapseReopens) {
    // No sustain while ramping: the first evaluation over the thresholds reopens.
    QCOMPARE(r.b.state(), BreakerState::Open);
    const Event e = r.transitions().back();
    QCOMPARE(e.from, BreakerState::Closed);
    QCOMPARE(e.reason, Reason::RampRelapse);
    QCOMPARE(e.ts, t);
    QCOMPARE(e.sustained, Micros(0));
    QCOMPARE(e.openFor, expectedOpenFor(c.open, 2));  // the ramp did not forget the earlier open
    QCOMPARE(r.count(EventKind::RampComplete), 0);
    return;
  }
  // Off: the ramp runs to its end despite the failures; afterwards the normal rule applies,
  // with its sustain counted from the first evaluation after the ramp.
  QCOMPARE(r.b.state(), BreakerState::Closed);
  const Micros end = tc + c.ramp.duration;
  Micros u = t;
  while (r.b.state() == BreakerState::Closed && u < end + seconds(30)) {
    u += millis(500);
    r.b.advance(u);
    for (int i = 0; i < 5; ++i) r.fail(u);
  }
  QCOMPARE(r.b.state(), BreakerState::Open);
  const Event e = r.transitions().back();
  QCOMPARE(e.reason, Reason::ErrorRate);
  QCOMPARE(e.ts, end + c.trip.sustain);
  QCOMPARE(r.last(EventKind::RampComplete)->ts, end);
}

void TstBreaker::recordAfterRampEndIsNotARelapse() {
  // A call admitted during the ramp may finish after it: with no admit or advance in between,
  // the breaker must still judge it as the fully closed breaker it now is.
  Rig r(explicitConfig());
  r.trip(seconds(1));
  const Micros tc = r.recover();
  const Micros end = tc + r.cfg.ramp.duration;
  const Micros t = end + seconds(1);
  for (int i = 0; i < 20; ++i) r.fail(t);
  QCOMPARE(r.b.state(), BreakerState::Closed);  // the sustain applies again
  QCOMPARE(r.count(EventKind::RampComplete), 1);
  QCOMPARE(r.last(EventKind::RampComplete)->ts, end);
  r.fail(t + r.cfg.trip.sustain);
  QCOMPARE(r.b.state(), BreakerState::Open);
  QCOMPARE(r.transitions().back().reason, Reason::ErrorRate);
}

void TstBreaker::backoff_data() {
  QTest::addColumn<Micros>("duration");
  QTest::addColumn<double>("multiplier");
  QTest::addColumn<Micros>("maxDuration");
  QTest::addColumn<int>("opens");
  QTest::newRow("10s x1.5, cap 60s") << seconds(10) << 1.5 << seconds(60) << 8;
  QTest::newRow("1s x2, cap 10s") << seconds(1) << 2.0 << seconds(10) << 6;
  QTest::newRow("7s x1.5, cap 100s") << seconds(7) << 1.5 << seconds(100) << 9;
  QTest::newRow("no growth x1") << seconds(5) << 1.0 << seconds(60) << 4;
  QTest::newRow("cap equal to duration") << seconds(10) << 1.5 << seconds(10) << 3;
}

void TstBreaker::backoff() {
  QFETCH(Micros, duration);
  QFETCH(double, multiplier);
  QFETCH(Micros, maxDuration);
  QFETCH(int, opens);
  BreakerConfig c = explicitConfig();
  c.open.duration = duration;
  c.open.backoffMultiplier = multiplier;
  c.open.maxDuration = maxDuration;
  Rig r(c);
  r.trip(seconds(1));
  for (int n = 1; n <= opens; ++n) {
    const Event e = r.transitions().back();
    QCOMPARE(e.to, BreakerState::Open);
    QCOMPARE(e.reason, n == 1 ? Reason::ErrorRate : Reason::ProbeFailed);
    const Micros want = expectedOpenFor(c.open, n);
    QVERIFY2(
        std::abs(e.openFor - want) <= 1,
        qPrintable(QString("open #%1 for %2us, expected %3us").arg(n).arg(e.openFor).arg(want)));
    QVERIFY(e.openFor <= std::max(maxDuration, duration));
    const BreakerSnapshot s = r.b.snapshot(e.ts);
    QCOMPARE(s.attempts, static_cast<std::uint32_t>(n));
    QCOMPARE(s.openUntil, e.ts + e.openFor);
    QVERIFY(!r.b.admit(e.ts + e.openFor - 1).admitted);
    QCOMPARE(r.b.state(), BreakerState::Open);
    const Micros t = e.ts + e.openFor;
    r.b.advance(t);
    QCOMPARE(r.b.state(), BreakerState::HalfOpen);
    r.admitProbe(t);
    r.fail(t, millis(10), true);
  }
  QCOMPARE(r.b.counters().opens, static_cast<std::uint64_t>(opens + 1));
}

void TstBreaker::backoffDecay_data() {
  QTest::addColumn<Micros>("healthyFor");
  QTest::addColumn<int>("decays");
  // decay_after = 60 s; 3 consecutive opens before recovering. Every decay_after of healthy
  // CLOSED time (after the ramp) forgets one.
  QTest::newRow("no healthy time") << Micros(0) << 0;
  QTest::newRow("59s: nothing forgotten") << seconds(59) << 0;
  QTest::newRow("60s: one forgotten") << seconds(60) << 1;
  QTest::newRow("119s: one") << seconds(119) << 1;
  QTest::newRow("120s: two") << seconds(120) << 2;
  QTest::newRow("10 min: all three") << seconds(600) << 3;
}

void TstBreaker::backoffDecay() {
  QFETCH(Micros, healthyFor);
  QFETCH(int, decays);
  BreakerConfig c = explicitConfig();
  c.trip.sustain = 0;
  Rig r(c);
  r.trip(seconds(1));
  for (int i = 0; i < 2; ++i) {  // two failed probes: three consecutive opens
    const Micros t = r.b.snapshot(0).openUntil;
    r.b.advance(t);
    r.admitProbe(t);
    r.fail(t, millis(10), true);
  }
  QCOMPARE(r.b.snapshot(0).attempts, 3u);
  const Micros tc = r.recover();
  const Micros tr = tc + c.ramp.duration;
  r.b.advance(tr);
  QCOMPARE(r.count(EventKind::RampComplete), 1);
  QCOMPARE(r.b.snapshot(tr).attempts, 3u);  // recovering alone forgets nothing
  for (Micros t = tr + seconds(1); t <= tr + healthyFor; t += seconds(1)) r.ok(t);
  QCOMPARE(r.b.snapshot(tr + healthyFor).attempts, static_cast<std::uint32_t>(3 - decays));
  const Micros tt = tr + healthyFor + millis(1);
  for (int i = 0; i < 20; ++i) r.fail(tt);
  QCOMPARE(r.b.state(), BreakerState::Open);
  const Event e = r.transitions().back();
  QCOMPARE(e.ts, tt);
  QVERIFY(std::abs(e.openFor - expectedOpenFor(c.open, 3 - decays + 1)) <= 1);
  if (decays > 0) QVERIFY(e.openFor < expectedOpenFor(c.open, 4));
}

void TstBreaker::openJitter() {
  // jitter j: each open lasts duration × (1 ± j), drawn from the breaker's seeded stream.
  BreakerConfig c = explicitConfig();
  c.open.duration = seconds(10);
  c.open.backoffMultiplier = 1.0;
  c.open.jitter = 0.2;
  auto durations = [&](std::uint64_t seed) {
    Rig r(c, seed);
    std::vector<Micros> d;
    r.trip(seconds(1));
    for (int i = 0; i < 300; ++i) {
      const Event e = r.transitions().back();
      d.push_back(e.openFor);
      const Micros t = e.ts + e.openFor;
      r.b.advance(t);
      r.admitProbe(t);
      r.fail(t, millis(10), true);
    }
    return d;
  };
  const std::vector<Micros> a = durations(5);
  double sum = 0;
  for (Micros x : a) {
    QVERIFY(x >= seconds(8) && x <= seconds(12));
    sum += static_cast<double>(x);
  }
  QVERIFY(*std::min_element(a.begin(), a.end()) < seconds(9));
  QVERIFY(*std::max_element(a.begin(), a.end()) > seconds(11));
  // Uniform on ±2 s: the mean of 300 draws is within 5 standard errors of 10 s.
  const double se = 2e6 / std::sqrt(3.0) / std::sqrt(static_cast<double>(a.size()));
  QVERIFY(std::abs(sum / a.size() - 10e6) <= 5 * se);
  QVERIFY(durations(5) == a);  // same seed, same draws
  QVERIFY(durations(6) != a);
}

// ---------------------------------------------------------------------------------------------
// Modes

void TstBreaker::metricsOnlyNeverRejects_data() {
  QTest::addColumn<int>("storms");
  QTest::newRow("one storm") << 1;
  QTest::newRow("two storms") << 2;
  QTest::newRow("three storms") << 3;
}

void TstBreaker::metricsOnlyNeverRejects() {
  QFETCH(int, storms);
  BreakerConfig c = explicitConfig();
  c.mode = BreakerMode::MetricsOnly;
  Rig r(c);
  QCOMPARE(r.b.state(), BreakerState::MetricsOnly);
  Micros t = 0;
  const Micros step = millis(20);  // 50 calls/s
  std::uint64_t admits = 0;
  auto run = [&](Micros length, bool failing) {
    for (const Micros end = t + length; t < end; t += step) {
      ++admits;
      if (!r.b.admit(t).admitted) return false;
      failing ? r.fail(t) : r.ok(t);
    }
    return true;
  };
  for (int s = 0; s < storms; ++s) {
    const Micros stormStart = t;
    QVERIFY2(run(seconds(20), true), "METRICS_ONLY rejected a call");
    QCOMPARE(r.count(EventKind::WouldOpen), s + 1);
    const Event* e = r.last(EventKind::WouldOpen);
    QCOMPARE(e->from, BreakerState::MetricsOnly);
    QCOMPARE(e->to, BreakerState::MetricsOnly);
    QCOMPARE(e->reason, Reason::ErrorRate);
    QVERIFY(e->sustained >= c.trip.sustain);
    QVERIFY(e->ts >= stormStart + c.trip.sustain);
    if (s == 0) {
      // Condition true from the 20th call (min_calls, all failing); shadow trip once the
      // sustain has held, at the first call from then on.
      const Micros over = 19 * step;
      const Micros expected = (over + c.trip.sustain + step - 1) / step * step;
      QCOMPARE(e->ts, expected);
    }
    // Healthy long enough for the failures to leave the window: re-arms.
    QVERIFY2(run(seconds(15), false), "METRICS_ONLY rejected a call");
    QCOMPARE(r.count(EventKind::WouldOpen), s + 1);
  }
  QVERIFY(r.transitions().empty());
  QCOMPARE(r.b.state(), BreakerState::MetricsOnly);
  QCOMPARE(r.b.counters().rejected, 0u);
  QCOMPARE(r.b.counters().admitted, admits);
  QCOMPARE(r.b.counters().wouldOpens, static_cast<std::uint64_t>(storms));
  QCOMPARE(r.b.counters().opens, 0u);
}

void TstBreaker::disabledAdmitsAndRecordsNothing() {
  BreakerConfig c = explicitConfig();
  c.mode = BreakerMode::Disabled;
  c.slow.absolute = millis(100);
  Rig r(c);
  QCOMPARE(r.b.state(), BreakerState::Disabled);
  Micros t = 0;
  for (int i = 0; i < 1'000; ++i, t += millis(10)) {
    const Decision d = r.b.admit(t);
    QVERIFY(d.admitted && !d.probe);
    r.fail(t, seconds(5));
  }
  r.b.recordAggregate(t, 100, 100, 100, nullptr);
  const BreakerSnapshot s = r.b.snapshot(t);
  QCOMPARE(s.counters.admitted, 1'000u);
  QCOMPARE(s.counters.rejected, 0u);
  QCOMPARE(s.counters.recorded, 0u);
  QCOMPARE(s.counters.failures, 0u);
  QCOMPARE(s.counters.slow, 0u);
  QCOMPARE(s.window.calls, 0u);
  QCOMPARE(s.admitShare, 1.0);
  QVERIFY(r.sink.events.empty());
  QCOMPARE(r.b.state(), BreakerState::Disabled);
}

void TstBreaker::forcedOpenRejectsAll() {
  BreakerConfig c = explicitConfig();
  c.mode = BreakerMode::ForcedOpen;
  Rig r(c);
  QCOMPARE(r.b.state(), BreakerState::ForcedOpen);
  for (int i = 0; i < 1'000; ++i) {
    const Decision d = r.b.admit(i * millis(10));
    QVERIFY(!d.admitted);
    QCOMPARE(d.reason, RejectReason::ForcedOpen);
  }
  r.b.advance(seconds(3'600));  // far past any open duration
  QVERIFY(!r.b.admit(seconds(3'600)).admitted);
  QCOMPARE(r.b.counters().rejectedBy[RejectReason::ForcedOpen], 1'001u);
  QCOMPARE(r.b.counters().admitted, 0u);
  QCOMPARE(r.b.snapshot(seconds(3'600)).admitShare, 0.0);
  QVERIFY(r.sink.events.empty());
}

void TstBreaker::forceTransitions_data() {
  QTest::addColumn<BreakerState>("from");
  QTest::addColumn<BreakerState>("to");
  using S = BreakerState;
  const std::pair<S, S> rows[] = {
      {S::Closed, S::ForcedOpen},    {S::Closed, S::Disabled},      {S::Closed, S::MetricsOnly},
      {S::ForcedOpen, S::Closed},    {S::Disabled, S::Closed},      {S::MetricsOnly, S::Closed},
      {S::Open, S::Closed},          {S::Open, S::MetricsOnly},     {S::HalfOpen, S::ForcedOpen},
      {S::HalfOpen, S::Closed},      {S::MetricsOnly, S::Disabled}, {S::Closed, S::Closed},
      {S::ForcedOpen, S::ForcedOpen}};
  for (auto [f, t] : rows)
    QTest::newRow(qPrintable(QString("%1 -> %2")
                                 .arg(QString::fromUtf8(stateName(f).data(), stateName(f).size()),
                                      QString::fromUtf8(stateName(t).data(), stateName(t).size()))))
        << f << t;
}

void TstBreaker::forceTransitions() {
  QFETCH(BreakerState, from);
  QFETCH(BreakerState, to);
  BreakerConfig c = explicitConfig();
  switch (from) {
    case BreakerState::ForcedOpen:
      c.mode = BreakerMode::ForcedOpen;
      break;
    case BreakerState::Disabled:
      c.mode = BreakerMode::Disabled;
      break;
    case BreakerState::MetricsOnly:
      c.mode = BreakerMode::MetricsOnly;
      break;
    default:
      c.mode = BreakerMode::Normal;
      break;
  }
  Rig r(c);
  Micros t = seconds(1);
  r.b.advance(t);
  if (from == BreakerState::Open || from == BreakerState::HalfOpen) t = r.trip(t);
  if (from == BreakerState::HalfOpen) r.b.advance(t += c.open.duration);
  QCOMPARE(r.b.state(), from);
  const std::size_t before = r.transitions().size();
  t += seconds(1);
  r.b.force(to, t);
  QCOMPARE(r.b.state(), to);
  if (from == to) {
    QCOMPARE(r.transitions().size(), before);  // nothing to do, nothing to say
    return;
  }
  QCOMPARE(r.transitions().size(), before + 1);
  const Event e = r.transitions().back();
  QCOMPARE(e.from, from);
  QCOMPARE(e.to, to);
  QCOMPARE(e.reason, Reason::Manual);
  QCOMPARE(e.ts, t);
  // The target state behaves as such.
  const Decision d = r.b.admit(t + 1);
  QCOMPARE(d.admitted, to != BreakerState::ForcedOpen);
  if (to == BreakerState::ForcedOpen) QCOMPARE(d.reason, RejectReason::ForcedOpen);
  if (to == BreakerState::Closed) {
    QVERIFY(!r.b.ramping());                       // a manual reset is fully closed at once
    QCOMPARE(r.b.snapshot(t).decision.calls, 0u);  // and judges only what comes next
    for (int i = 0; i < 19; ++i) r.fail(t + 1);    // one short of min_calls
    QCOMPARE(r.b.state(), BreakerState::Closed);
  }
}

// ---------------------------------------------------------------------------------------------
// Baseline

void TstBreaker::baselineLearnsP99_data() {
  QTest::addColumn<Pool>("pool");
  QTest::addColumn<int>("perSecond");
  // perSecond is chosen so that 0.99 × perSecond is not an integer: the nearest-rank P99 of
  // the pool is then one well-defined sample.
  QTest::newRow("lognormal, median 100ms") << Pool::LogNormal100ms << 150;
  QTest::newRow("uniform 1..50ms") << Pool::Uniform1to50ms << 250;
  QTest::newRow("bimodal 50ms / 1.2s") << Pool::Bimodal << 150;
  QTest::newRow("LLM heavy tail, median 2s") << Pool::LlmHeavyTail << 90;
}

void TstBreaker::baselineLearnsP99() {
  QFETCH(Pool, pool);
  QFETCH(int, perSecond);
  const BreakerConfig c = explicitConfig();
  Rig r(c);
  Rng rng(static_cast<std::uint64_t>(pool) + 100);
  // A stationary distribution: the same multiset of latencies every second, in a new order.
  std::vector<Micros> values(static_cast<std::size_t>(perSecond));
  for (Micros& v : values) {
    double x = 0;
    switch (pool) {
      case Pool::LogNormal100ms:
        x = 100e3 * std::exp(0.4 * normal(rng));
        break;
      case Pool::Uniform1to50ms:
        x = 1e3 + rng.uniform() * 49e3;
        break;
      case Pool::Bimodal:
        x = (rng.uniform() < 0.9 ? 50e3 : 1.2e6) * std::exp(0.1 * normal(rng));
        break;
      case Pool::LlmHeavyTail:
        x = 2e6 * std::exp(1.0 * normal(rng));
        break;
    }
    v = std::max<Micros>(1, std::llround(x));
  }
  std::vector<Micros> fed;
  const int duration = 600;
  const Micros step = seconds(1) / perSecond;
  for (int s = 0; s < duration; ++s) {
    for (int i = perSecond - 1; i > 0; --i)
      std::swap(values[static_cast<std::size_t>(i)],
                values[static_cast<std::size_t>(rng.uniform() * (i + 1))]);
    for (int i = 0; i < perSecond; ++i) {
      const Micros t = seconds(s) + i * step;
      r.ok(t, values[static_cast<std::size_t>(i)]);
      fed.push_back(values[static_cast<std::size_t>(i)]);
      if (s == 0) {
        // Nothing learned before the first slice completes.
        const BreakerSnapshot snap = r.b.snapshot(t);
        if (snap.baselineLearned || snap.baselineP99 != 0.0) QFAIL("learned too early");
      }
      // A slice is learned once the whole window after it was seen healthy — when it leaves
      // the 10 s window, at 10 s for the first — and then only if it alone reaches
      // baseline.min_calls.
      if (s >= 1 && s < 10 && i == 0 && r.b.snapshot(t).baselineLearned) QFAIL("learned early");
      if (s == 10 && i == 0) {
        QCOMPARE(r.b.snapshot(t).baselineLearned,
                 static_cast<std::uint32_t>(perSecond) >= c.baseline.minCalls);
      }
    }
  }
  r.b.advance(seconds(duration));  // completes the last slice
  const BreakerSnapshot snap = r.b.snapshot(seconds(duration));
  QVERIFY(snap.baselineLearned);
  QVERIFY(!snap.baselineFrozen);
  const double exact = nearestRank(fed, 0.99);
  QVERIFY2(std::abs(snap.baselineP99 - exact) <= 0.01 * exact,
           qPrintable(QString("baseline P99 %1us, exact %2us").arg(snap.baselineP99).arg(exact)));
  // The slow threshold follows the learned baseline: max(floor, k × P99).
  QCOMPARE(r.b.slowThreshold(),
           std::max<Micros>(c.slow.floor, static_cast<Micros>(c.slow.k * snap.baselineP99)));
  QVERIFY(r.sink.events.empty());
}

void TstBreaker::baselineFrozenDuringDrift_data() {
  QTest::addColumn<bool>("freeze");
  QTest::newRow("default freeze rules") << true;
  QTest::newRow("control: freezing disabled") << false;
}

void TstBreaker::baselineFrozenDuringDrift() {
  QFETCH(bool, freeze);
  BreakerConfig c = explicitConfig();
  if (!freeze) {
    c.baseline.freezeDriftRatio = 1e9;
    c.baseline.freezeSlowRate = 1.0;
    c.baseline.freezeErrorRate = 1.0;
  }
  Rig r(c, 5);
  Rng rng(77);
  auto latency = [&](double factor) {
    return std::max<Micros>(1, std::llround(factor * 100e3 * std::exp(0.4 * normal(rng))));
  };
  const Micros step = seconds(1) / 40;
  const Micros d0 = seconds(300), d1 = d0 + seconds(180), end = d1 + seconds(60);
  Micros t = 0;
  for (; t < d0; t += step)
    if (const Decision d = r.b.admit(t)) r.ok(t, latency(1.0), d.probe);
  r.b.advance(d0);
  const BreakerSnapshot before = r.b.snapshot(d0);
  QVERIFY(before.baselineLearned);
  const double b0 = before.baselineP99;
  QVERIFY(r.sink.events.empty());
  // A leak: median ×1 → ×8 over three minutes, then held; never an error.
  double maxDev = 0;
  bool sawFrozen = false;
  for (; t < end; t += step) {
    const double f = t < d1 ? 1.0 + 7.0 * static_cast<double>(t - d0) / (d1 - d0) : 8.0;
    if (const Decision d = r.b.admit(t)) r.ok(t, latency(f), d.probe);
    if (t % seconds(1) == 0) {
      const BreakerSnapshot s = r.b.snapshot(t);
      maxDev = std::max(maxDev, std::abs(s.baselineP99 - b0) / b0);
      sawFrozen = sawFrozen || s.baselineFrozen;
    }
  }
  QCOMPARE(r.b.counters().failures, 0u);
  if (!freeze) {
    // Control: the same drift, learned, drags the baseline far along.
    QVERIFY2(maxDev > 0.10, qPrintable(QString("max deviation %1").arg(maxDev)));
    return;
  }
  QVERIFY2(maxDev <= 0.10, qPrintable(QString("baseline moved by %1 %").arg(maxDev * 100)));
  QVERIFY(sawFrozen);
  const auto tr = r.transitions();
  QVERIFY2(!tr.empty(), "the drift never opened the breaker");
  QCOMPARE(tr[0].to, BreakerState::Open);
  QCOMPARE(tr[0].reason, Reason::SlowRate);
  QVERIFY(tr[0].ts > d0 && tr[0].ts < end);
  QVERIFY(tr[0].slowRate > c.trip.slowRate);
}

// seed-003's fault: every call +400 ms at once, no error, and still under the slow threshold
// (k × P99 ≈ 750 ms), so no slice is frozen for its slow calls. The window shows the drift
// (median × 1.3) only once half of it holds the fault; the slices before that looked healthy
// when they completed, but the baseline takes a slice only once the window after it was seen
// healthy — so the onset never reaches it and the slow threshold stays where it was. (Learned
// as they completed, five seconds of it were 2 % of the baseline's weight: its P99 jumped.)
void TstBreaker::baselineNeverLearnsTheOnset() {
  const BreakerConfig c = explicitConfig();
  Rig r(c, 9);
  Rng rng(78);
  auto latency = [&](Micros add) {
    return add + std::max<Micros>(1, std::llround(100e3 * std::exp(0.4 * normal(rng))));
  };
  const Micros step = seconds(1) / 40;
  const Micros onset = seconds(300), end = onset + seconds(60);
  Micros t = 0;
  for (; t < onset; t += step)
    if (const Decision d = r.b.admit(t)) r.ok(t, latency(0), d.probe);
  r.b.advance(onset);
  const BreakerSnapshot before = r.b.snapshot(onset);
  QVERIFY(before.baselineLearned);
  const Micros threshold = r.b.slowThreshold();
  double maxDev = 0;
  for (; t < end; t += step) {
    if (const Decision d = r.b.admit(t)) r.ok(t, latency(millis(400)), d.probe);
    if (t % seconds(1) == 0)
      maxDev = std::max(
          maxDev, std::abs(r.b.snapshot(t).baselineP99 - before.baselineP99) / before.baselineP99);
  }
  QVERIFY2(maxDev <= 0.02, qPrintable(QString("baseline moved by %1 %").arg(maxDev * 100)));
  QCOMPARE(r.b.slowThreshold(), threshold);
  QVERIFY(r.b.snapshot(end).baselineFrozen);  // the drift is seen
  QVERIFY(r.b.counters().slow < 24);          // a tail call now and then, ≤ 1 % of them
}

void TstBreaker::baselineFrozenWhileRecovering() {
  const BreakerConfig c = explicitConfig();
  Rig r(c, 9);
  Rng rng(5);
  std::vector<Micros> pool(100);
  for (Micros& v : pool) v = std::llround(100e3 * std::exp(0.4 * normal(rng)));
  const Micros step = millis(10);
  Micros t = 0;
  for (int i = 0; t < seconds(300); t += step, ++i)
    r.ok(t, pool[static_cast<std::size_t>(i % 100)]);
  r.b.advance(t);
  const double b0 = r.b.snapshot(t).baselineP99;
  QVERIFY(r.b.snapshot(t).baselineLearned);
  // Fast failures until it opens.
  for (int i = 0; r.b.state() != BreakerState::Open && i < 1'000; ++i, t += step)
    r.fail(t, millis(5));
  QCOMPARE(r.b.state(), BreakerState::Open);
  QCOMPARE(r.b.snapshot(t).baselineP99, b0);
  // From here on only healthy traffic, fast at the median with a tail above the old P99:
  // learned, it would raise the baseline P99 (the control at the end shows it does).
  auto healthy = [&](Micros until, int& i) {
    for (; t < until; t += step, ++i) r.ok(t, i % 10 == 0 ? millis(500) : millis(10));
  };
  int i = 0;
  healthy(r.b.snapshot(t).openUntil, i);  // calls still finishing while OPEN
  QCOMPARE(r.b.state(), BreakerState::Open);
  QCOMPARE(r.b.snapshot(t).baselineP99, b0);
  QVERIFY(r.b.snapshot(t).baselineFrozen);
  r.b.advance(t);
  QCOMPARE(r.b.state(), BreakerState::HalfOpen);
  healthy(t + seconds(20), i);  // non-probe traffic while HALF_OPEN
  QCOMPARE(r.b.state(), BreakerState::HalfOpen);
  QCOMPARE(r.b.snapshot(t).baselineP99, b0);
  QVERIFY(r.b.snapshot(t).baselineFrozen);
  for (quint32 k = 0; k < c.halfOpen.successStreak; ++k) {
    r.admitProbe(t);
    r.ok(t, millis(10), true);
  }
  QCOMPARE(r.b.state(), BreakerState::Closed);
  const Micros rampEnd = t + c.ramp.duration;
  healthy(rampEnd - millis(1), i);  // ramping
  QVERIFY(r.b.ramping());
  QCOMPARE(r.b.snapshot(t).baselineP99, b0);
  r.b.advance(rampEnd);
  QVERIFY(!r.b.ramping());
  // Control: fully closed and healthy, the same traffic is learned again.
  healthy(t + seconds(60), i);
  QVERIFY2(r.b.snapshot(t).baselineP99 > 1.5 * b0,
           qPrintable(QString("P99 %1 vs %2").arg(r.b.snapshot(t).baselineP99).arg(b0)));
  QVERIFY(!r.b.snapshot(t).baselineFrozen);
  QCOMPARE(r.b.state(), BreakerState::Closed);
}

void TstBreaker::baselineSkipsUnhealthySlices_data() {
  QTest::addColumn<int>("errorPct");
  QTest::addColumn<int>("slowPct");
  QTest::addColumn<bool>("learned");
  // A completed slice feeds the baseline only if its error rate is at most freeze_error_rate
  // (25 %) and its slow rate at most freeze_slow_rate (20 %). 100 calls per slice.
  QTest::newRow("clean slices are learned") << 0 << 0 << true;
  QTest::newRow("errors exactly 25%: learned") << 25 << 0 << true;
  QTest::newRow("errors 26%: skipped") << 26 << 0 << false;
  QTest::newRow("slow exactly 20%: learned") << 0 << 20 << true;
  QTest::newRow("slow 21%: skipped") << 0 << 21 << false;
}

void TstBreaker::baselineSkipsUnhealthySlices() {
  QFETCH(int, errorPct);
  QFETCH(int, slowPct);
  QFETCH(bool, learned);
  const BreakerConfig c = explicitConfig();
  Rig r(c, 11);
  Rng rng(6);
  std::vector<Micros> pool(100);
  for (Micros& v : pool) v = std::llround(100e3 * std::exp(0.4 * normal(rng)));
  const Micros step = millis(10);  // 100 calls per one-second slice
  Micros t = 0;
  for (int i = 0; t < seconds(300); t += step, ++i)
    r.ok(t, pool[static_cast<std::size_t>(i % 100)]);
  r.b.advance(t);
  const double b0 = r.b.snapshot(t).baselineP99;
  const Micros threshold = r.b.slowThreshold();
  QVERIFY(threshold < seconds(2));
  // Each slice: the unhealthy share first (failures fast, slow calls at 2 s), then a tail of
  // 10 % at 500 ms (above the old P99, below the slow threshold) and a fast majority. Never
  // enough to trip (errors < 50 %, slow < 40 %), median far below the drift limit.
  QVERIFY(millis(500) > b0 && millis(500) < threshold);
  for (int i = 0; t < seconds(360); t += step, ++i) {
    const int k = i % 100;
    if (k < errorPct) {
      r.fail(t, millis(10));
    } else if (k < errorPct + slowPct) {
      r.ok(t, seconds(2));
    } else {
      r.ok(t, k % 10 == 9 ? millis(500) : millis(10));
    }
  }
  r.b.advance(t);
  QCOMPARE(r.b.state(), BreakerState::Closed);
  const BreakerSnapshot s = r.b.snapshot(t);
  QCOMPARE(s.baselineFrozen, !learned);
  if (learned) {
    QVERIFY2(s.baselineP99 > 1.5 * b0,
             qPrintable(QString("P99 %1 vs %2").arg(s.baselineP99).arg(b0)));
  } else {
    QCOMPARE(s.baselineP99, b0);
  }
}

// ---------------------------------------------------------------------------------------------
// Robustness and inputs

enum class Api { Admit, Record, Advance, Force, Aggregate };
Q_DECLARE_METATYPE(Api)

void TstBreaker::clockGoingBackwards_data() {
  QTest::addColumn<Api>("api");
  QTest::newRow("admit") << Api::Admit;
  QTest::newRow("record") << Api::Record;
  QTest::newRow("advance") << Api::Advance;
  QTest::newRow("force") << Api::Force;
  QTest::newRow("recordAggregate") << Api::Aggregate;
}

void TstBreaker::clockGoingBackwards() {
  QFETCH(Api, api);
  BreakerConfig c = explicitConfig();
  c.trip.sustain = 0;
  Rig r(c);
  const Micros t0 = seconds(10);
  r.b.advance(t0);
  const Micros tOpen = r.trip(seconds(20));
  QCOMPARE(r.b.state(), BreakerState::Open);
  const Micros until = tOpen + c.open.duration;
  const Micros earlier = seconds(15);
  switch (api) {
    case Api::Admit: {
      const Decision d = r.b.admit(earlier);
      QVERIFY(!d.admitted);
      QCOMPARE(d.reason, RejectReason::BreakerOpen);
      break;
    }
    case Api::Record:
      r.ok(earlier);
      break;
    case Api::Advance:
      r.b.advance(earlier);
      break;
    case Api::Force:
      r.b.force(BreakerState::Open, earlier);
      break;  // same state: no-op
    case Api::Aggregate:
      r.b.recordAggregate(earlier, 10, 0, 0, nullptr);
      break;
  }
  QCOMPARE(r.b.counters().clockRegressions, 1u);
  QCOMPARE(r.b.state(), BreakerState::Open);
  QCOMPARE(r.b.snapshot(tOpen).openUntil, until);
  if (api == Api::Record) QCOMPARE(r.b.snapshot(tOpen).window.calls, 21u);  // taken as "now"
  if (api == Api::Aggregate) QCOMPARE(r.b.snapshot(tOpen).window.calls, 30u);
  // Time did not move: the open period still ends exactly when it should.
  QVERIFY(!r.b.admit(until - 1).admitted);
  QCOMPARE(r.b.state(), BreakerState::Open);
  r.b.admit(until);
  QCOMPARE(r.b.state(), BreakerState::HalfOpen);
  QCOMPARE(r.b.counters().clockRegressions, 1u);
  // A regression in HALF_OPEN is a half-open admission at "now".
  const Decision d = r.b.admit(earlier);
  QVERIFY(d.probe || d.reason == RejectReason::HalfOpen);
  QCOMPARE(r.b.counters().clockRegressions, 2u);
  QCOMPARE(r.b.state(), BreakerState::HalfOpen);
  // Equal timestamps are not regressions.
  r.b.admit(until);
  QCOMPARE(r.b.counters().clockRegressions, 2u);
  // Events in order; time in states adds up to the elapsed time.
  Micros prev = kNever;
  for (const Event& e : r.sink.events) {
    QVERIFY(e.ts >= prev);
    prev = e.ts;
  }
  const BreakerSnapshot s = r.b.snapshot(until);
  Micros sum = 0;
  for (Micros x : s.counters.timeIn) sum += x;
  QCOMPARE(sum, until - t0);
  QCOMPARE(s.counters.admitted + s.counters.rejected,
           static_cast<std::uint64_t>(api == Api::Admit ? 5 : 4));
}

void TstBreaker::aggregateTripsLikeSingles_data() {
  QTest::addColumn<quint32>("perBatch");
  QTest::addColumn<double>("failShare");
  QTest::addColumn<bool>("trips");
  QTest::newRow("20/s, all failing") << 20u << 1.0 << true;
  QTest::newRow("20/s, 80% failing") << 20u << 0.8 << true;
  QTest::newRow("7/s (< min_calls per batch)") << 7u << 1.0 << true;
  QTest::newRow("50/s, 60% failing") << 50u << 0.6 << true;
  QTest::newRow("50/s, 50% failing: never above") << 50u << 0.5 << false;
}

void TstBreaker::aggregateTripsLikeSingles() {
  QFETCH(quint32, perBatch);
  QFETCH(double, failShare);
  QFETCH(bool, trips);
  const BreakerConfig c = explicitConfig();
  Rig agg(c), single(c);
  // One batch per second (10 healthy seconds, then failing ones), all of a batch's calls
  // ending at the same time. Singles record failures first: within a batch the rate then
  // moves monotonically between its start and end values, as the aggregate sees it.
  for (int sec = 0; sec < 40; ++sec) {
    const Micros t = seconds(sec) + millis(500);
    const auto failures =
        sec < 10 ? 0u : static_cast<std::uint32_t>(std::llround(perBatch * failShare));
    agg.b.recordAggregate(t, perBatch, failures, 0, nullptr);
    for (quint32 i = 0; i < perBatch; ++i) i < failures ? single.fail(t) : single.ok(t);
  }
  const auto a = agg.transitions(), s = single.transitions();
  QCOMPARE(a.size(), s.size());
  QCOMPARE(a.empty(), !trips);
  for (std::size_t i = 0; i < a.size(); ++i) {
    QCOMPARE(a[i].ts, s[i].ts);
    QCOMPARE(a[i].from, s[i].from);
    QCOMPARE(a[i].to, s[i].to);
    QCOMPARE(a[i].reason, s[i].reason);
    QCOMPARE(a[i].openFor, s[i].openFor);
    QCOMPARE(a[i].sustained, s[i].sustained);
  }
  QCOMPARE(agg.b.state(), single.b.state());
  QCOMPARE(agg.b.counters().recorded, single.b.counters().recorded);
  QCOMPARE(agg.b.counters().failures, single.b.counters().failures);
}

void TstBreaker::aggregateSlowFromHistogram_data() {
  QTest::addColumn<Micros>("absolute");
  QTest::addColumn<QList<qint64>>("latencies");
  QTest::addColumn<qint64>("slowArg");
  QTest::addColumn<quint32>("calls");
  QTest::addColumn<quint32>("expectedSlow");
  const qint64 ms = 1000;
  QTest::newRow("derived: 3 of 10 above 500ms")
      << millis(500) << QList<qint64>{100 * ms, 100 * ms, 100 * ms,  120 * ms,  150 * ms,
                                      200 * ms, 300 * ms, 1000 * ms, 2000 * ms, 5000 * ms}
      << qint64(-1) << 10u << 3u;
  QTest::newRow("derived: none above")
      << millis(500) << QList<qint64>{100 * ms, 400 * ms} << qint64(-1) << 2u << 0u;
  QTest::newRow("derived: threshold unknown, nothing slow")
      << Micros(0) << QList<qint64>{10'000 * ms, 10'000 * ms} << qint64(-1) << 2u << 0u;
  QTest::newRow("derived without histogram: nothing slow")
      << millis(500) << QList<qint64>{} << qint64(-1) << 10u << 0u;
  QTest::newRow("explicit slow wins over histogram")
      << millis(500) << QList<qint64>{1000 * ms, 1000 * ms, 1000 * ms} << qint64(1) << 3u << 1u;
  QTest::newRow("explicit slow capped at calls")
      << millis(500) << QList<qint64>{} << qint64(50) << 10u << 10u;
}

void TstBreaker::aggregateSlowFromHistogram() {
  QFETCH(Micros, absolute);
  QFETCH(QList<qint64>, latencies);
  QFETCH(qint64, slowArg);
  QFETCH(quint32, calls);
  QFETCH(quint32, expectedSlow);
  BreakerConfig c = explicitConfig();
  c.slow.absolute = absolute;
  c.trip.slowRate = 1.0;  // never trips: only the accounting is under test
  Rig r(c);
  LatencyHistogram h;
  for (qint64 v : latencies) h.add(static_cast<std::uint64_t>(v));
  r.b.recordAggregate(seconds(1), calls, 0, slowArg, latencies.isEmpty() ? nullptr : &h);
  const BreakerSnapshot s = r.b.snapshot(seconds(1));
  QCOMPARE(r.b.counters().slow, static_cast<std::uint64_t>(expectedSlow));
  QCOMPARE(s.window.slow, expectedSlow);
  QCOMPARE(s.window.calls, calls);
  QCOMPARE(r.b.counters().recorded, static_cast<std::uint64_t>(calls));
  if (!latencies.isEmpty()) QVERIFY(s.p99 > 0);
}

// counters() counts every outcome since the start, long after the window dropped it — its
// recorded / failures / slow are the window's buckets as they leave the head, plus the head.
// Traffic runs many windows long, with gaps shorter and longer than a bucket and the window,
// aggregates among single calls, in every mode that records; a fork half way continues alike.
void TstBreaker::lifetimeCountersOutliveTheWindow_data() {
  QTest::addColumn<BreakerMode>("mode");
  QTest::addColumn<Micros>("meanGap");
  QTest::addColumn<double>("aggregateShare");
  QTest::addColumn<quint64>("seed");
  QTest::newRow("closed, dense") << BreakerMode::Normal << millis(100) << 0.0 << quint64(1);
  QTest::newRow("closed, sparse (gaps over the window)")
      << BreakerMode::Normal << seconds(4) << 0.0 << quint64(2);
  QTest::newRow("closed, with aggregates")
      << BreakerMode::Normal << millis(300) << 0.2 << quint64(3);
  QTest::newRow("metrics only, mixed")
      << BreakerMode::MetricsOnly << millis(150) << 0.1 << quint64(4);
}

void TstBreaker::lifetimeCountersOutliveTheWindow() {
  QFETCH(BreakerMode, mode);
  QFETCH(Micros, meanGap);
  QFETCH(double, aggregateShare);
  QFETCH(quint64, seed);
  BreakerConfig c = explicitConfig();
  c.mode = mode;
  c.slow.absolute = millis(400);  // slow is known to the test
  c.trip.errorRate = 1.0;         // stays CLOSED: every admitted call is recorded
  c.trip.slowRate = 1.0;
  Rig r(c, seed);
  std::unique_ptr<Breaker> fork;
  Rng rng(seed);
  std::uint64_t calls = 0, failures = 0, slow = 0, singles = 0;
  Micros t = seconds(1);
  for (int op = 0; op < 4000; ++op) {
    if (op == 2000) fork = r.b.fork(r.cfg, nullptr);
    t += static_cast<Micros>(2.0 * rng.uniform() * static_cast<double>(meanGap));
    const bool fail = rng.uniform() < 0.1;
    const auto lat = static_cast<Micros>(rng.uniform() * 800'000.0);
    if (rng.uniform() < aggregateShare) {
      const auto n = static_cast<std::uint32_t>(1 + rng.uniform() * 20);
      const auto f = static_cast<std::uint32_t>(rng.uniform() * n);
      const auto sl = static_cast<std::uint32_t>(rng.uniform() * n);
      for (Breaker* b : {&r.b, fork.get()})
        if (b) b->recordAggregate(t, n, f, sl, nullptr);
      calls += n, failures += f, slow += sl;
    } else {
      for (Breaker* b : {&r.b, fork.get()}) {
        if (!b) continue;
        QVERIFY(b->admit(t).admitted);
        b->record(t, lat, fail ? 500 : 200, Outcome::Ok);
      }
      ++calls, ++singles, failures += fail, slow += lat > c.slow.absolute;
    }
  }
  QVERIFY(t - seconds(1) > 20 * c.window.length);  // the window rolled over many times
  QVERIFY(r.b.snapshot(t).window.calls < calls);   // and holds only a part of the calls
  const BreakerCounters all = r.b.counters(), forked = fork->counters();
  for (const BreakerCounters& got : {all, forked, r.b.snapshot(t).counters}) {
    QCOMPARE(got.recorded, calls);
    QCOMPARE(got.failures, failures);
    QCOMPARE(got.slow, slow);
    QCOMPARE(got.ignored, 0u);
    QCOMPARE(got.admitted, singles);
  }
}

void TstBreaker::aggregateProbesInHalfOpen_data() {
  QTest::addColumn<quint32>("calls");
  QTest::addColumn<quint32>("failures");
  QTest::addColumn<qint64>("slow");
  QTest::addColumn<int>("repeat");
  QTest::addColumn<BreakerState>("expected");
  // probe_share 0.1, success_streak 5: a clean interval counts as round(0.1 × calls) probes,
  // at least one; anything failed or slow in it is a failed probe.
  QTest::newRow("50 clean calls = 5 probes: closes")
      << 50u << 0u << qint64(0) << 1 << BreakerState::Closed;
  QTest::newRow("40 clean calls = 4 probes: stays")
      << 40u << 0u << qint64(0) << 1 << BreakerState::HalfOpen;
  QTest::newRow("3 clean calls x4 = 4 probes: stays")
      << 3u << 0u << qint64(0) << 4 << BreakerState::HalfOpen;
  QTest::newRow("3 clean calls x5 = 5 probes: closes")
      << 3u << 0u << qint64(0) << 5 << BreakerState::Closed;
  QTest::newRow("1 failure in 100 reopens") << 100u << 1u << qint64(0) << 1 << BreakerState::Open;
  QTest::newRow("1 slow in 100 reopens") << 100u << 0u << qint64(1) << 1 << BreakerState::Open;
}

void TstBreaker::aggregateProbesInHalfOpen() {
  QFETCH(quint32, calls);
  QFETCH(quint32, failures);
  QFETCH(qint64, slow);
  QFETCH(int, repeat);
  QFETCH(BreakerState, expected);
  Rig r(explicitConfig());
  Micros t = r.trip(seconds(1)) + r.cfg.open.duration;
  r.b.advance(t);
  QCOMPARE(r.b.state(), BreakerState::HalfOpen);
  for (int i = 0; i < repeat; ++i)
    r.b.recordAggregate(t += millis(100), calls, failures, slow, nullptr);
  QCOMPARE(r.b.state(), expected);
  if (expected != BreakerState::HalfOpen) {
    const Event e = r.transitions().back();
    QCOMPARE(e.from, BreakerState::HalfOpen);
    QCOMPARE(e.reason, expected == BreakerState::Open ? Reason::ProbeFailed : Reason::ProbeStreak);
  }
}

// ---------------------------------------------------------------------------------------------
// Accounting

void TstBreaker::fpAccounting() {
  BreakerConfig c = explicitConfig();
  c.trip.sustain = 0;
  c.slow.absolute = millis(500);
  {
    Rig r(c);
    r.trip(seconds(1));  // on errors
    QCOMPARE(r.transitions().back().reason, Reason::ErrorRate);
    for (bool ok : {true, false, true, true, false}) r.b.noteBlocked(ok);
    QCOMPARE(r.b.counters().verdicts, 5u);
    QCOMPARE(r.b.counters().blockedWouldSucceed, 3u);
    QCOMPARE(r.b.counters().fpByTrip[TripCause::ErrorRate], 3u);
    QCOMPARE(r.b.counters().fpByTrip[TripCause::SlowRate], 0u);
  }
  {
    Rig r(c);
    for (int i = 0; i < 20; ++i) r.ok(seconds(1), seconds(1));  // slow, not failing
    QCOMPARE(r.transitions().back().reason, Reason::SlowRate);
    for (bool ok : {true, true, false, true, true}) r.b.noteBlocked(ok);
    QCOMPARE(r.b.counters().fpByTrip[TripCause::ErrorRate], 0u);
    QCOMPARE(r.b.counters().fpByTrip[TripCause::SlowRate], 4u);
    // A later trip on errors: its blocks are attributed to errors.
    const Micros tc = r.recover();
    r.b.advance(tc + c.ramp.duration);
    for (int i = 0; i < 40; ++i) r.fail(tc + c.ramp.duration + seconds(1));
    QCOMPARE(r.b.state(), BreakerState::Open);
    r.b.noteBlocked(true);
    QCOMPARE(r.b.counters().fpByTrip[TripCause::ErrorRate], 1u);
    QCOMPARE(r.b.counters().fpByTrip[TripCause::SlowRate], 4u);
    QCOMPARE(r.b.counters().verdicts, 6u);
  }
}

void TstBreaker::engineFpRate_data() {
  QTest::addColumn<int>("blockedA");
  QTest::addColumn<int>("fpA");
  QTest::addColumn<int>("blockedB");
  QTest::addColumn<int>("fpB");
  QTest::newRow("nothing blocked") << 0 << 0 << 0 << 0;
  QTest::newRow("one instance") << 5 << 3 << 0 << 0;
  QTest::newRow("blocked, no FP: 0, not unknown") << 4 << 0 << 0 << 0;
  QTest::newRow("two instances pooled") << 5 << 3 << 5 << 1;
}

void TstBreaker::engineFpRate() {
  QFETCH(int, blockedA);
  QFETCH(int, fpA);
  QFETCH(int, blockedB);
  QFETCH(int, fpB);
  Policy p;
  p.breaker = explicitConfig();
  Engine e(p, 1);
  const InstanceId a = e.addInstance("a"), b = e.addInstance("b");
  // Rejections without a verdict do not make an FP rate.
  e.breaker(a).force(BreakerState::ForcedOpen, 0);
  for (int i = 0; i < 3; ++i) QVERIFY(!e.admit(a, i).admitted);
  QCOMPARE(e.totals().rejected, 3u);
  for (int i = 0; i < blockedA; ++i) e.noteBlocked(a, i < fpA);
  for (int i = 0; i < blockedB; ++i) e.noteBlocked(b, i < fpB);
  const EngineTotals t = e.totals();
  QCOMPARE(t.verdicts, static_cast<std::uint64_t>(blockedA + blockedB));
  QCOMPARE(t.blockedWouldSucceed, static_cast<std::uint64_t>(fpA + fpB));
  if (blockedA + blockedB == 0) {
    QVERIFY(!t.fpRate().has_value());
  } else {
    QVERIFY(t.fpRate().has_value());
    QCOMPARE(*t.fpRate(), static_cast<double>(fpA + fpB) / (blockedA + blockedB));
  }
}

namespace {
Event ev(Micros ts, EventKind kind, BreakerState from, BreakerState to, InstanceId inst = 0) {
  Event e;
  e.ts = ts;
  e.instance = inst;
  e.kind = kind;
  e.from = from;
  e.to = to;
  return e;
}
}  // namespace

void TstBreaker::scoreFault_data() {
  using S = BreakerState;
  const auto T = EventKind::Transition, RC = EventKind::RampComplete, W = EventKind::WouldOpen;
  QTest::addColumn<std::vector<Event>>("events");
  QTest::addColumn<bool>("detected");
  QTest::addColumn<Micros>("firstOpen");
  QTest::addColumn<bool>("restored");
  QTest::addColumn<Micros>("restoredAt");
  QTest::addColumn<Micros>("clear");  // the instance fault-free (0: at the fault's end)
  // The fault: instance 0, from 100 s to 200 s.
  const Micros s = seconds(1);
  QTest::newRow("open, relapse, restored after the end")
      << std::vector<Event>{ev(101 * s, T, S::Closed, S::Open, 1),  // another instance
                            ev(110 * s, T, S::Closed, S::Open),
                            ev(120 * s, T, S::Open, S::HalfOpen),
                            ev(121 * s, T, S::HalfOpen, S::Closed),
                            ev(151 * s, RC, S::Closed, S::Closed),  // during the fault
                            ev(160 * s, T, S::Closed, S::Open),
                            ev(170 * s, T, S::Open, S::HalfOpen),
                            ev(205 * s, T, S::HalfOpen, S::Closed),
                            ev(235 * s, RC, S::Closed, S::Closed),
                            ev(300 * s, RC, S::Closed, S::Closed)}
      << true << 110 * s << true << 235 * s << Micros(0);
  QTest::newRow("an open before the fault does not count")
      << std::vector<Event>{ev(90 * s, T, S::Closed, S::Open),
                            ev(100 * s, T, S::Open, S::HalfOpen),
                            ev(101 * s, T, S::HalfOpen, S::Closed),
                            ev(131 * s, RC, S::Closed, S::Closed),
                            ev(150 * s, T, S::Closed, S::Open),
                            ev(260 * s, RC, S::Closed, S::Closed)}
      << true << 150 * s << true << 260 * s << Micros(0);
  QTest::newRow("open at onset, restored exactly at the end")
      << std::vector<Event>{ev(100 * s, T, S::Closed, S::Open),
                            ev(200 * s, RC, S::Closed, S::Closed)}
      << true << 100 * s << true << 200 * s << Micros(0);
  QTest::newRow("open exactly at the end")
      << std::vector<Event>{ev(200 * s, T, S::Closed, S::Open),
                            ev(240 * s, RC, S::Closed, S::Closed)}
      << true << 200 * s << true << 240 * s << Micros(0);
  QTest::newRow("never opened") << std::vector<Event>{ev(110 * s, T, S::Closed, S::Open, 3),
                                                      ev(120 * s, W, S::MetricsOnly,
                                                         S::MetricsOnly),
                                                      ev(130 * s, RC, S::Closed, S::Closed)}
                                << false << Micros(0) << false << Micros(0) << Micros(0);
  QTest::newRow("opened only after the fault")
      << std::vector<Event>{ev(201 * s, T, S::Closed, S::Open),
                            ev(260 * s, RC, S::Closed, S::Closed)}
      << false << Micros(0) << false << Micros(0) << Micros(0);
  QTest::newRow("opened, never restored")
      << std::vector<Event>{ev(150 * s, T, S::Closed, S::Open),
                            ev(160 * s, T, S::Open, S::HalfOpen),
                            ev(160 * s, T, S::HalfOpen, S::Open)}
      << true << 150 * s << false << Micros(0) << Micros(0);
  // An earlier fault holds the breaker open at this one's onset: blocked from the start.
  QTest::newRow("already open at the onset")
      << std::vector<Event>{ev(90 * s, T, S::Closed, S::Open),
                            ev(150 * s, T, S::Open, S::HalfOpen),
                            ev(151 * s, T, S::HalfOpen, S::Open),  // the probe fails
                            ev(180 * s, T, S::Open, S::HalfOpen),
                            ev(205 * s, T, S::HalfOpen, S::Closed),
                            ev(230 * s, RC, S::Closed, S::Closed)}
      << true << 100 * s << true << 230 * s << Micros(0);
  QTest::newRow("open at the onset, closes during the fault")  // it let the fault through
      << std::vector<Event>{ev(90 * s, T, S::Closed, S::Open), ev(150 * s, T, S::Open, S::HalfOpen),
                            ev(151 * s, T, S::HalfOpen, S::Closed),
                            ev(230 * s, RC, S::Closed, S::Closed)}
      << false << Micros(0) << false << Micros(0) << Micros(0);
  QTest::newRow("open through the whole fault")
      << std::vector<Event>{ev(90 * s, T, S::Closed, S::Open), ev(205 * s, T, S::Open, S::HalfOpen),
                            ev(206 * s, T, S::HalfOpen, S::Closed),
                            ev(236 * s, RC, S::Closed, S::Closed)}
      << true << 100 * s << true << 236 * s << Micros(0);
  QTest::newRow("already open, nothing since")
      << std::vector<Event>{ev(90 * s, T, S::Closed, S::Open)} << true << 100 * s << false
      << Micros(0) << Micros(0);
  QTest::newRow("half-open at the onset")
      << std::vector<Event>{ev(80 * s, T, S::Closed, S::Open), ev(95 * s, T, S::Open, S::HalfOpen)}
      << true << 100 * s << false << Micros(0) << Micros(0);
  // An overlapping fault on the instance ends at 300 s: full traffic at 230 s came while it
  // was active, so this fault is restored at 320 s, 20 s after the instance was clear.
  QTest::newRow("overlapping fault ends later")
      << std::vector<Event>{ev(110 * s, T, S::Closed, S::Open),
                            ev(230 * s, RC, S::Closed, S::Closed),
                            ev(250 * s, T, S::Closed, S::Open),
                            ev(320 * s, RC, S::Closed, S::Closed)}
      << true << 110 * s << true << 320 * s << 300 * s;
}

void TstBreaker::scoreFault() {
  QFETCH(std::vector<Event>, events);
  QFETCH(bool, detected);
  QFETCH(Micros, firstOpen);
  QFETCH(bool, restored);
  QFETCH(Micros, restoredAt);
  QFETCH(Micros, clear);
  FaultInterval f;
  f.instance = 0;
  f.start = seconds(100);
  f.end = seconds(200);
  const FaultScore s =
      clear ? spillway::scoreFault(f, events, clear) : spillway::scoreFault(f, events);
  if (!clear) clear = f.end;
  QCOMPARE(s.detected, detected);
  QCOMPARE(s.restored, restored);
  QCOMPARE(s.ttd, detected ? firstOpen - f.start : kForever);
  if (detected) QCOMPARE(s.firstOpen, firstOpen);
  QCOMPARE(s.mttr, restored ? restoredAt - f.start : kForever);
  QCOMPARE(s.fromTrip, restored ? restoredAt - firstOpen : kForever);
  QCOMPARE(s.recoveryLag, restored ? restoredAt - clear : kForever);
  if (restored) QCOMPARE(s.restoredAt, restoredAt);
}

void TstBreaker::clearTimes() {
  const Micros s = seconds(1);
  // Instance 0: 100–200 and 150–300 overlap, 300–400 touches them, 500–600 stands alone;
  // instance 1's 120–250 overlaps none of them (another instance). Out of order on purpose.
  const std::vector<FaultInterval> faults = {{0, 300 * s, 400 * s, ""},
                                             {1, 120 * s, 250 * s, ""},
                                             {0, 100 * s, 200 * s, ""},
                                             {0, 500 * s, 600 * s, ""},
                                             {0, 150 * s, 300 * s, ""}};
  const std::vector<Micros> want = {400 * s, 250 * s, 400 * s, 600 * s, 400 * s};
  QCOMPARE(spillway::clearTimes(faults), want);
  QVERIFY(spillway::clearTimes({}).empty());
}

QTEST_GUILESS_MAIN(TstBreaker)
#include "tst_breaker.moc"
