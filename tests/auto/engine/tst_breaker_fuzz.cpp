// Seeded randomized invariants: random admit / record / aggregate / advance / force sequences
// with random outcomes, traffic regimes and mostly-monotone time (with occasional backward
// steps). Every event must be on the legal transition graph, chain from the previous state
// and be in time order; counters must add up; half-open admissions must follow probe_share;
// the same seed must give the same run, and a run that evaluates the trip rule on every record
// (a trip log on) must be the run that skips evaluations whose verdict stands.
#include <QtTest>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "spillway/breaker.hpp"
#include "spillway/rng.hpp"

using namespace spillway;

namespace {

// Checks each event as the breaker emits it.
class CheckingSink final : public EventSink {
 public:
  CheckingSink(BreakerState initial, const BreakerConfig& cfg) : state(initial), cfg_(cfg) {}

  void onEvent(const Event& e) override {
    events.push_back(e);
    if (!error.empty()) return;
    const std::string at =
        " (event #" + std::to_string(events.size()) + ", ts " + std::to_string(e.ts) + ")";
    if (e.ts < lastTs) return fail("event timestamps went backwards" + at);
    if (e.ts > now) return fail("event from the future" + at);
    lastTs = e.ts;
    switch (e.kind) {
      case EventKind::Transition:
        return transition(e, at);
      case EventKind::RampComplete:
        if (e.from != BreakerState::Closed || e.to != BreakerState::Closed || !rampPending ||
            state != BreakerState::Closed)
          return fail("RampComplete outside a ramp" + at);
        if (e.ts != closedAt + cfg_.ramp.duration) return fail("RampComplete not at ramp end" + at);
        rampPending = false;
        ++rampCompletes;
        return;
      case EventKind::WouldOpen:
        if (state != BreakerState::MetricsOnly || e.from != state || e.to != state)
          return fail("WouldOpen outside METRICS_ONLY" + at);
        ++wouldOpens;
        return;
    }
  }

  std::vector<Event> events;
  std::string error;
  BreakerState state;
  Micros now = kNever;  // latest time handed to the breaker
  Micros lastTs = kNever;
  bool forcing = false;  // a force() call is in progress
  bool rampPending = false;
  Micros closedAt = 0;
  std::array<int, 6> edges{};  // C→O, O→H, H→O, H→C, relapse, manual
  int rampCompletes = 0, wouldOpens = 0;

 private:
  void fail(const std::string& m) {
    if (error.empty()) error = m;
  }
  void transition(const Event& e, const std::string& at) {
    using S = BreakerState;
    if (e.from != state) return fail("transition does not start where the last one ended" + at);
    if (e.from == e.to) return fail("transition to the same state" + at);
    if (e.reason == Reason::Manual) {
      if (!forcing) return fail("Manual transition without force()" + at);
      if (e.to != S::ForcedOpen && e.to != S::Disabled && e.to != S::MetricsOnly &&
          e.to != S::Closed)
        return fail("Manual transition to a state force() cannot set" + at);
      ++edges[5];
      rampPending = false;
    } else {
      if (forcing) return fail("automatic transition during force()" + at);
      const bool tripReason = e.reason == Reason::ErrorRate || e.reason == Reason::SlowRate ||
                              e.reason == Reason::ErrorAndSlow;
      if (e.from == S::Closed && e.to == S::Open && tripReason) {
        if (rampPending) return fail("sustained trip while ramping" + at);
        ++edges[0];
      } else if (e.from == S::Closed && e.to == S::Open && e.reason == Reason::RampRelapse) {
        if (!rampPending || e.ts >= closedAt + cfg_.ramp.duration)
          return fail("RampRelapse outside the ramp" + at);
        ++edges[4];
        rampPending = false;
      } else if (e.from == S::Open && e.to == S::HalfOpen && e.reason == Reason::OpenElapsed) {
        ++edges[1];
      } else if (e.from == S::HalfOpen && e.to == S::Open && e.reason == Reason::ProbeFailed) {
        ++edges[2];
      } else if (e.from == S::HalfOpen && e.to == S::Closed && e.reason == Reason::ProbeStreak) {
        ++edges[3];
        rampPending = true;
        closedAt = e.ts;
      } else {
        return fail("illegal transition " + std::string(stateName(e.from)) + " -> " +
                    std::string(stateName(e.to)) + " (" + std::string(reasonName(e.reason)) + ")" +
                    at);
      }
    }
    if (e.to == S::Open) {
      const double cap = static_cast<double>(std::max(cfg_.open.maxDuration, cfg_.open.duration)) *
                         (1.0 + cfg_.open.jitter);
      if (e.openFor <= 0 || static_cast<double>(e.openFor) > cap + 1.0)
        return fail("open duration out of range" + at);
    }
    state = e.to;
  }

  const BreakerConfig& cfg_;
};

BreakerConfig fuzzConfig(std::uint64_t seed) {
  BreakerConfig c;
  c.window.length = seconds(10);
  c.window.bucket = seconds(1);
  c.minCalls = 10;
  c.trip.errorRate = 0.5;
  c.trip.slowRate = 0.4;
  c.trip.sustain = seconds(1);
  c.slow.absolute = millis(800);
  c.open.duration = seconds(2);
  c.open.backoffMultiplier = 1.5;
  c.open.maxDuration = seconds(10);
  c.open.decayAfter = seconds(20);
  c.halfOpen.probeShare = 0.2;
  c.halfOpen.successStreak = 5;
  c.ramp.duration = seconds(5);
  switch (seed % 4) {
    case 0:
      break;
    case 1:  // count window, stepped ramp, another probe share
      c.window.type = WindowType::Count;
      c.window.calls = 30;
      c.ramp.shape = RampShape::Step;
      c.ramp.steps = 3;
      c.halfOpen.probeShare = 0.15;
      c.halfOpen.successStreak = 3;
      break;
    case 2:  // jittered opens, relapses do not reopen
      c.open.jitter = 0.2;
      c.ramp.relapseReopens = false;
      c.halfOpen.probeShare = 0.5;
      c.halfOpen.successStreak = 8;
      break;
    case 3:  // learned baseline (initial guess until then), immediate trips, starts shadowing
      c.slow.absolute = 0;
      c.slow.initialBaseline = millis(150);
      c.baseline.minCalls = 50;
      c.trip.sustain = 0;
      c.mode = BreakerMode::MetricsOnly;
      break;
  }
  return c;
}

struct Run {
  std::vector<Event> events;
  BreakerCounters counters;
  std::array<int, 6> edges{};
  int rampCompletes = 0, wouldOpens = 0;
  std::uint64_t halfOpenAdmits = 0, halfOpenProbes = 0;
  double probeShare = 0;
};

// Drives one breaker through `ops` random operations, checking invariants as it goes. Fails
// the current test (and returns early) on the first violation.
// logTrips: a trip log, so every record evaluates the trip rule.
void drive(std::uint64_t seed, int ops, Run& out, bool logTrips = false) {
  const BreakerConfig cfg = fuzzConfig(seed);
  const BreakerState initial =
      cfg.mode == BreakerMode::MetricsOnly ? BreakerState::MetricsOnly : BreakerState::Closed;
  CheckingSink sink(initial, cfg);
  Breaker b(1, cfg, seed * 7919 + 1, &sink);
  TripLog log;  // cap 0: keeps no sample, only turns per-record evaluation on
  if (logTrips) b.setTripLog(&log);
  Rng rng(seed);
  out.probeShare = cfg.halfOpen.probeShare;

  struct Call {
    Micros latency;
    bool probe;
  };
  std::vector<Call> inflight;
  const Micros t0 = seconds(1'764'480'000) + static_cast<Micros>(rng.uniform() * 1e6);
  Micros t = t0, maxT = kNever, firstT = kNever;
  std::uint64_t admits = 0, regressions = 0;
  int regime = 0;  // 0 healthy, 1 failing, 2 slow
  // Every API call goes through here: it tracks the clock the breaker must have seen.
  auto at = [&](Micros when) {
    if (maxT != kNever && when < maxT) ++regressions;
    if (firstT == kNever) firstT = when;
    maxT = std::max(maxT, when);
    sink.now = maxT;
    return when;
  };
  auto outcome = [&](int& status, Outcome& o, Micros& lat) {
    const double u = rng.uniform();
    const double failP = regime == 1 ? 0.75 : 0.04;
    const double slowP = regime == 2 ? 0.8 : 0.03;
    status = 200;
    o = Outcome::Ok;
    if (u < failP) {
      const double k = rng.uniform();
      if (k < 0.5)
        status = 500 + static_cast<int>(rng.uniform() * 4);
      else if (k < 0.7)
        status = 429;
      else if (k < 0.85)
        status = 0, o = Outcome::Timeout;
      else
        status = 0, o = Outcome::Reset;
    } else if (u < failP + 0.02) {
      status = 404;  // ignored
    }
    lat = rng.uniform() < slowP ? millis(900) + static_cast<Micros>(rng.uniform() * 5e6)
                                : millis(20) + static_cast<Micros>(rng.uniform() * 2e5);
  };

  for (int op = 0; op < ops; ++op) {
    // Time: small forward steps; now and then a jump back of up to 2 s.
    if (rng.uniform() < 0.003) {
      t -= static_cast<Micros>(rng.uniform() * 2e6);
    } else {
      t += static_cast<Micros>(rng.uniform() * 60e3);
    }
    if (rng.uniform() < 0.001) {  // half the time healthy, else failing or slow
      const double g = rng.uniform();
      regime = g < 0.5 ? 0 : g < 0.75 ? 1 : 2;
    }

    const BreakerState st = b.state();
    const bool manualState = st == BreakerState::ForcedOpen || st == BreakerState::Disabled ||
                             st == BreakerState::MetricsOnly;
    const double r = rng.uniform();
    if (manualState && r < 0.002) {  // back to normal operation after a while
      sink.forcing = true;
      b.force(BreakerState::Closed, at(t));
      sink.forcing = false;
    } else if (r < 0.0005) {
      static constexpr BreakerState targets[] = {BreakerState::ForcedOpen, BreakerState::Disabled,
                                                 BreakerState::MetricsOnly, BreakerState::Closed};
      sink.forcing = true;
      b.force(targets[static_cast<int>(rng.uniform() * 4)], at(t));
      sink.forcing = false;
    } else if (r < 0.42) {
      const Decision d = b.admit(at(t));
      ++admits;
      if (d.probe || d.reason == RejectReason::HalfOpen) {
        ++out.halfOpenAdmits;
        out.halfOpenProbes += d.probe;
      }
      if (d.admitted != (d.reason == RejectReason::None)) QFAIL("decision reason mismatch");
      if (d.admitted) {
        inflight.push_back(Call{0, d.probe});
      } else if (rng.uniform() < 0.3) {
        b.noteBlocked(rng.uniform() < 0.5);
      }
    } else if (r < 0.85) {
      int status;
      Outcome o;
      Micros lat;
      outcome(status, o, lat);
      bool probe = false;
      if (!inflight.empty()) {
        // Mostly one of the oldest calls, sometimes any (out-of-order completions).
        const double span = rng.uniform() < 0.8 ? std::min<double>(3, inflight.size())
                                                : static_cast<double>(inflight.size());
        const auto i = static_cast<std::size_t>(rng.uniform() * span);
        probe = inflight[i].probe;
        inflight.erase(inflight.begin() + static_cast<std::ptrdiff_t>(i));
      }
      b.record(at(t), lat, status, o, probe);
    } else if (r < 0.95) {
      b.advance(at(t));
    } else {
      const auto calls = static_cast<std::uint32_t>(rng.uniform() * 30);
      const double failP = regime == 1 ? 0.7 : 0.03;
      auto failures = static_cast<std::uint32_t>(std::lround(calls * failP * rng.uniform() * 2));
      LatencyHistogram h;
      for (std::uint32_t i = 0; i < calls; ++i)
        h.add(static_cast<std::uint64_t>(regime == 2 ? 2e6 * rng.uniform() : 1e5 * rng.uniform()));
      const std::int64_t slow =
          rng.uniform() < 0.5 ? -1 : static_cast<std::int64_t>(regime == 2 ? calls / 2 : 0);
      b.recordAggregate(at(t), calls, failures, slow, rng.uniform() < 0.7 ? &h : nullptr);
    }

    if (!sink.error.empty())
      QFAIL(qPrintable(QString("seed %1 op %2: %3").arg(seed).arg(op).arg(sink.error.c_str())));
    if (b.state() != sink.state)
      QFAIL(
          qPrintable(QString("seed %1 op %2: state disagrees with the events").arg(seed).arg(op)));
    const BreakerCounters& c = b.counters();
    if (c.admitted + c.rejected != admits)
      QFAIL(qPrintable(QString("seed %1 op %2: admitted %3 + rejected %4 != %5 admits")
                           .arg(seed)
                           .arg(op)
                           .arg(c.admitted)
                           .arg(c.rejected)
                           .arg(admits)));
    std::uint64_t byReason = 0;
    for (auto n : c.rejectedBy) byReason += n;
    if (byReason != c.rejected || c.rejectedBy[RejectReason::None] != 0)
      QFAIL("rejections by reason do not add up");
    if (c.clockRegressions != regressions)
      QFAIL(qPrintable(QString("seed %1 op %2: %3 clock regressions counted, %4 happened")
                           .arg(seed)
                           .arg(op)
                           .arg(c.clockRegressions)
                           .arg(regressions)));
    if (c.blockedWouldSucceed > c.verdicts ||
        c.fpByTrip[TripCause::ErrorRate] + c.fpByTrip[TripCause::SlowRate] != c.blockedWouldSucceed)
      QFAIL("FP accounting does not add up");
    if (op % 16 == 0 || op == ops - 1) {
      const BreakerSnapshot s = b.snapshot(maxT);
      Micros inStates = 0;
      for (Micros x : s.counters.timeIn) inStates += x;
      if (inStates != maxT - firstT)
        QFAIL(qPrintable(QString("seed %1 op %2: time in states %3 != elapsed %4")
                             .arg(seed)
                             .arg(op)
                             .arg(inStates)
                             .arg(maxT - firstT)));
      const WindowCounts& w = s.window;
      const WindowCounts& d = s.decision;
      if (d.calls > w.calls || d.failures > w.failures || d.slow > w.slow ||
          d.rejected > w.rejected || w.failures > w.calls || w.slow > w.calls)
        QFAIL(qPrintable(QString("seed %1 op %2: window counts inconsistent").arg(seed).arg(op)));
      if (s.admitShare < 0.0 || s.admitShare > 1.0) QFAIL("admit share out of [0, 1]");
    }
  }
  out.events = sink.events;
  out.counters = b.counters();
  out.edges = sink.edges;
  out.rampCompletes = sink.rampCompletes;
  out.wouldOpens = sink.wouldOpens;
  if (qEnvironmentVariableIsSet("FUZZ_STATS"))
    qInfo(
        "seed %llu: %.0fs simulated, edges %d %d %d %d relapse %d manual %d, ramps %d, would %d, "
        "half-open admits %llu, inflight %zu",
        static_cast<unsigned long long>(seed), (maxT - firstT) / 1e6, sink.edges[0], sink.edges[1],
        sink.edges[2], sink.edges[3], sink.edges[4], sink.edges[5], sink.rampCompletes,
        sink.wouldOpens, static_cast<unsigned long long>(out.halfOpenAdmits), inflight.size());
}

bool sameEvent(const Event& a, const Event& b) {
  return a.ts == b.ts && a.instance == b.instance && a.kind == b.kind && a.from == b.from &&
         a.to == b.to && a.reason == b.reason && a.errorRate == b.errorRate &&
         a.slowRate == b.slowRate && a.calls == b.calls && a.openFor == b.openFor &&
         a.sustained == b.sustained;
}

constexpr int kOps = 20'000;

// Traffic whose failure and slow shares wander around the trip thresholds while the group's
// load moves the error threshold: verdicts flip often, opens back off and decay.
void driveNearThresholds(std::uint64_t seed, bool logTrips, Run& out) {
  BreakerConfig c = fuzzConfig(0);
  c.trip.errorRate = 0.3;
  c.trip.slowRate = 0.3;
  c.trip.sustain = millis(500);
  c.trip.loadFactor = LoadFactorConfig{true, 0.3, 2.0, LoadSource::Saturation};
  c.open.duration = seconds(1);
  c.open.decayAfter = seconds(4);
  c.ramp.duration = seconds(2);
  c.ramp.relapseReopens = seed % 2 == 0;
  c.halfOpen.probeShare = 0.5;
  CheckingSink sink(BreakerState::Closed, c);
  Breaker b(1, c, seed, &sink);
  TripLog log;
  if (logTrips) b.setTripLog(&log);
  Rng rng(seed);
  Micros t = seconds(1'764'480'000);
  // Rows differ in how often the load moves and how high the shares wander.
  const double loadMoves = seed % 2 ? 0.05 : 0.004;
  const double maxShare = seed / 2 % 2 ? 0.5 : 0.35;
  double failP = 0.2, slowP = 0.2;
  for (int op = 0; op < 4 * kOps; ++op) {
    t += static_cast<Micros>(rng.uniform() * 20e3);
    sink.now = t;
    failP = std::clamp(failP + (rng.uniform() - 0.5) * 0.02, 0.02, maxShare);
    slowP = std::clamp(slowP + (rng.uniform() - 0.5) * 0.02, 0.02, maxShare);
    if (rng.uniform() < loadMoves) b.setLoad(rng.uniform() * 1.2 - 0.1);
    const Decision d = b.admit(t);
    if (!d) continue;
    const bool fail = rng.uniform() < failP;
    const Micros lat = rng.uniform() < slowP ? millis(900) : millis(30);
    t += lat;
    sink.now = t;
    b.record(t, lat, fail ? 503 : 200, Outcome::Ok, d.probe);
  }
  if (!sink.error.empty()) QFAIL(sink.error.c_str());
  out.events = sink.events;
  out.counters = b.counters();
  out.edges = sink.edges;
}

}  // namespace

class TstBreakerFuzz : public QObject {
  Q_OBJECT

 private slots:
  void invariants_data();
  void invariants();
  void deterministic_data();
  void deterministic();
  void coverageAndProbeShareAcrossSeeds();
  void standingVerdictSkipsNothing_data();
  void standingVerdictSkipsNothing();
  void tripLogSeesEveryRecord();
};

void TstBreakerFuzz::invariants_data() {
  QTest::addColumn<quint64>("seed");
  for (quint64 s = 1; s <= 12; ++s) QTest::newRow(qPrintable(QString("seed %1").arg(s))) << s;
}

void TstBreakerFuzz::invariants() {
  QFETCH(quint64, seed);
  Run run;
  drive(seed, kOps, run);
  if (QTest::currentTestFailed()) return;
  // The run exercised the machine: it tripped, probed, failed a probe and closed again.
  QVERIFY2(run.edges[0] > 0, "never tripped");
  QVERIFY2(run.edges[1] > 0, "never went half-open");
  QVERIFY2(run.edges[2] > 0, "never failed a probe");
  QVERIFY2(run.edges[3] > 0, "never closed from half-open");
  // Half-open admissions follow probe_share (binomial, 5 sigma).
  const double n = static_cast<double>(run.halfOpenAdmits);
  QVERIFY2(n >= 30, qPrintable(QString("only %1 half-open admissions").arg(n)));
  const double p = run.probeShare;
  const double sigma = std::sqrt(n * p * (1 - p));
  QVERIFY2(std::abs(static_cast<double>(run.halfOpenProbes) - n * p) <= 5 * sigma,
           qPrintable(QString("%1 probes of %2 half-open admissions, expected %3 ± %4")
                          .arg(run.halfOpenProbes)
                          .arg(n)
                          .arg(n * p)
                          .arg(5 * sigma)));
}

void TstBreakerFuzz::deterministic_data() {
  QTest::addColumn<quint64>("seed");
  for (quint64 s : {3ull, 6ull, 10ull, 12345ull})
    QTest::newRow(qPrintable(QString("seed %1").arg(s))) << quint64(s);
}

void TstBreakerFuzz::deterministic() {
  QFETCH(quint64, seed);
  Run a, b, other;
  drive(seed, kOps, a);
  if (QTest::currentTestFailed()) return;
  drive(seed, kOps, b);
  if (QTest::currentTestFailed()) return;
  QCOMPARE(a.events.size(), b.events.size());
  QVERIFY(!a.events.empty());
  for (std::size_t i = 0; i < a.events.size(); ++i)
    if (!sameEvent(a.events[i], b.events[i]))
      QFAIL(qPrintable(QString("runs diverge at event #%1").arg(i)));
  QCOMPARE(a.counters.admitted, b.counters.admitted);
  QCOMPARE(a.counters.rejected, b.counters.rejected);
  QCOMPARE(a.counters.probes, b.counters.probes);
  QCOMPARE(a.counters.opens, b.counters.opens);
  QVERIFY(a.counters.timeIn == b.counters.timeIn);
  // A different seed gives a different run (the seed is really used).
  drive(seed + 4, kOps, other);  // same config family (seed % 4)
  if (QTest::currentTestFailed()) return;
  bool differ = other.events.size() != a.events.size();
  for (std::size_t i = 0; !differ && i < a.events.size(); ++i)
    differ = !sameEvent(a.events[i], other.events[i]);
  QVERIFY(differ);
}

void TstBreakerFuzz::coverageAndProbeShareAcrossSeeds() {
  std::array<int, 6> edges{};
  int rampCompletes = 0, wouldOpens = 0;
  double n = 0, mean = 0, var = 0, probes = 0;
  for (quint64 seed = 1; seed <= 12; ++seed) {
    Run run;
    drive(seed, kOps, run);
    if (QTest::currentTestFailed()) return;
    for (int i = 0; i < 6; ++i) edges[i] += run.edges[i];
    rampCompletes += run.rampCompletes;
    wouldOpens += run.wouldOpens;
    const double k = static_cast<double>(run.halfOpenAdmits);
    n += k;
    mean += k * run.probeShare;
    var += k * run.probeShare * (1 - run.probeShare);
    probes += static_cast<double>(run.halfOpenProbes);
  }
  QVERIFY2(n >= 800, qPrintable(QString("only %1 half-open admissions in all").arg(n)));
  // Every part of the graph was walked somewhere.
  QVERIFY2(edges[4] > 0, "no ramp relapse in any seed");
  QVERIFY2(edges[5] > 0, "no manual transition in any seed");
  QVERIFY2(rampCompletes > 0, "no ramp ever completed");
  QVERIFY2(wouldOpens > 0, "no shadow trip in any seed");
  QVERIFY2(std::abs(probes - mean) <= 5 * std::sqrt(var),
           qPrintable(QString("%1 probes in %2 half-open admissions, expected %3 ± %4")
                          .arg(probes)
                          .arg(n)
                          .arg(mean)
                          .arg(5 * std::sqrt(var))));
}

void TstBreakerFuzz::standingVerdictSkipsNothing_data() {
  QTest::addColumn<quint64>("seed");
  QTest::addColumn<bool>("nearThresholds");
  for (quint64 s = 1; s <= 8; ++s)
    QTest::newRow(qPrintable(QString("seed %1").arg(s))) << s << false;
  for (quint64 s = 1; s <= 16; ++s)
    QTest::newRow(qPrintable(QString("near the thresholds, seed %1").arg(s))) << s << true;
}

// A record whose verdict stands skips the trip rule; evaluating it anyway changes nothing.
void TstBreakerFuzz::standingVerdictSkipsNothing() {
  QFETCH(quint64, seed);
  QFETCH(bool, nearThresholds);
  Run skipping, evaluating;
  for (bool logTrips : {false, true}) {
    Run& run = logTrips ? evaluating : skipping;
    if (nearThresholds)
      driveNearThresholds(seed, logTrips, run);
    else
      drive(seed, kOps, run, logTrips);
    if (QTest::currentTestFailed()) return;
  }
  QVERIFY(skipping.edges[0] > 0);
  QCOMPARE(skipping.events.size(), evaluating.events.size());
  for (std::size_t i = 0; i < skipping.events.size(); ++i)
    if (!sameEvent(skipping.events[i], evaluating.events[i]))
      QFAIL(qPrintable(QString("the runs diverge at event #%1").arg(i)));
  const BreakerCounters &a = skipping.counters, &b = evaluating.counters;
  QCOMPARE(a.admitted, b.admitted);
  QCOMPARE(a.rejected, b.rejected);
  QCOMPARE(a.opens, b.opens);
  QCOMPARE(a.wouldOpens, b.wouldOpens);
  QVERIFY(a.timeIn == b.timeIn);
}

// A sweep replays trip decisions from the log, so a breaker with a log evaluates every record,
// even one whose healthy verdict stood before the log was attached.
void TstBreakerFuzz::tripLogSeesEveryRecord() {
  const BreakerConfig cfg = fuzzConfig(0);
  Breaker b(1, cfg, 7, nullptr);
  Rng rng(11);
  Micros t = seconds(1'764'480'000);
  auto healthyCall = [&] {
    t += millis(5);
    const Decision d = b.admit(t);
    QVERIFY(d.admitted);
    const Micros lat = millis(20) + static_cast<Micros>(rng.uniform() * 30e3);
    b.record(t + lat, lat, rng.uniform() < 0.02 ? 503 : 200, Outcome::Ok, d.probe);
  };
  for (int i = 0; i < 2000; ++i) healthyCall();
  TripLog log;
  log.cap = 1'000'000;
  b.setTripLog(&log);
  constexpr int kLogged = 500;
  for (int i = 0; i < kLogged; ++i) healthyCall();
  QCOMPARE(b.state(), BreakerState::Closed);
  QCOMPARE(log.samples.size(), std::size_t{kLogged});
}

QTEST_GUILESS_MAIN(TstBreakerFuzz)
#include "tst_breaker_fuzz.moc"
