// Seed 001's adaptive breaker, on hand-built cases in simulated time: the load factor moves
// the error threshold ([0.8, 1.5] from an idle to a saturated group), the topology weight
// scales both rates, the P99 spread widens the slow threshold, and graded release follows the
// seed's rules (≥ 95 % over 3 probes → 5 % up to 100 %; 85–94 % → 1 % capped at 20 %;
// below → reopen). The keys read and write back through the policy YAML.
#include <QtTest>

#include <cmath>
#include <string>

#include "error_of.hpp"
#include "spillway/breaker.hpp"
#include "spillway/policy_yaml.hpp"

using namespace spillway;
using spillway::testing::errorOf;

namespace {

BreakerConfig base() {
  BreakerConfig c;
  c.minCalls = 20;
  c.trip.errorRate = 0.5;
  c.trip.slowRate = 0.4;
  c.trip.sustain = 0;
  c.open.duration = seconds(1);
  c.open.backoffMultiplier = 2;
  c.open.maxDuration = seconds(8);
  c.halfOpen.probeShare = 1.0;  // every call a probe: the tests decide each outcome
  c.ramp.duration = seconds(20);
  return c;
}

// `bad` failures among 20 calls at one instant; true when the breaker opened.
// load < 0: never measured (replay, live).
bool trips(const BreakerConfig& cfg, double load, int bad) {
  Breaker b(1, cfg, 7, nullptr);
  if (load >= 0) b.setLoad(load);
  const Micros t = seconds(5);
  for (int i = 0; i < 20; ++i) b.record(t, millis(20), i < bad ? 500 : 200, Outcome::Ok);
  return b.state() == BreakerState::Open;
}

BreakerConfig graded() {
  BreakerConfig c = base();
  c.halfOpen.release = {{0.95, 3, 0.05, 1.0}, {0.85, 5, 0.01, 0.2}};
  c.halfOpen.maxProbes = 20;
  return c;
}

// Opens the breaker, lets the open time pass and feeds probes ('g' good, 'b' bad) at `t`.
Micros probe(Breaker& b, const std::string& outcomes) {
  Micros t = seconds(5);
  for (int i = 0; i < 20; ++i) b.record(t, millis(20), 500, Outcome::Ok);
  t += seconds(2);
  for (char c : outcomes) {
    if (b.state() != BreakerState::HalfOpen && b.state() != BreakerState::Open) break;
    const Decision d = b.admit(t);
    if (!d.probe) break;
    b.record(t, millis(20), c == 'g' ? 200 : 500, Outcome::Ok, true);
  }
  return t;
}

}  // namespace

class TstBreakerAdaptive : public QObject {
  Q_OBJECT

 private slots:
  void loadFactorMovesTheThreshold_data() {
    QTest::addColumn<bool>("enabled");
    QTest::addColumn<double>("load");
    QTest::addColumn<int>("bad");  // of 20
    QTest::addColumn<double>("threshold");
    QTest::addColumn<bool>("opens");
    QTest::newRow("off: 11/20 > 0.5") << false << 1.0 << 11 << 0.5 << true;
    QTest::newRow("idle group: 0.8 x 0.5, 9/20 trips") << true << 0.0 << 9 << 0.4 << true;
    QTest::newRow("idle group: 8/20 holds") << true << 0.0 << 8 << 0.4 << false;
    QTest::newRow("half busy: 0.575") << true << 0.5 << 11 << 0.575 << false;
    QTest::newRow("saturated: 1.5 x 0.5, 14/20 holds") << true << 1.0 << 14 << 0.75 << false;
    QTest::newRow("saturated: 16/20 trips") << true << 1.0 << 16 << 0.75 << true;
    QTest::newRow("load above 1 is 1") << true << 3.0 << 15 << 0.75 << false;
    QTest::newRow("no load measured: the plain rate") << true << -1.0 << 11 << 0.5 << true;
  }
  void loadFactorMovesTheThreshold() {
    QFETCH(bool, enabled);
    QFETCH(double, load);
    QFETCH(int, bad);
    QFETCH(double, threshold);
    QFETCH(bool, opens);
    BreakerConfig c = base();
    c.trip.loadFactor.enabled = enabled;
    Breaker b(1, c, 7, nullptr);
    if (load >= 0) b.setLoad(load);
    QVERIFY(std::abs(b.errorThreshold() - threshold) < 1e-12);
    QCOMPARE(trips(c, load, bad), opens);
  }

  void topologyWeightScalesBothRates() {
    BreakerConfig c = base();
    c.trip.weight = 1.2;        // a core service: more tolerant (seed 001's table)
    QVERIFY(!trips(c, 0, 12));  // 60 % is not above 0.6
    QVERIFY(trips(c, 0, 13));
    Breaker b(1, c, 7, nullptr);
    QVERIFY(std::abs(b.slowRateThreshold() - 0.48) < 1e-12);
    c.trip.weight = 3;  // never above 1
    Breaker capped(1, c, 7, nullptr);
    QCOMPARE(capped.errorThreshold(), 1.0);
  }

  void p99SpreadWidensTheSlowThreshold() {
    // Healthy slices whose P99 alternates between 100 and 400 ms: a noisy instance.
    auto threshold = [](double spreadMax, bool noisy) {
      BreakerConfig c = base();
      c.slow.spreadMax = spreadMax;
      c.baseline.minCalls = 100;
      c.baseline.freezeDriftRatio = 1000;  // the test is about spread, not drift
      Breaker b(1, c, 7, nullptr);
      for (int s = 0; s < 120; ++s)
        for (int i = 0; i < 50; ++i) {
          const Micros lat = noisy && s % 2 && i < 2 ? millis(400) : millis(100);
          b.record(seconds(s) + i * 1000, lat, 200, Outcome::Ok);
        }
      return std::pair{b.slowThreshold(), b.latencyFactor()};
    };
    const auto [off, offFactor] = threshold(1.0, true);
    const auto [on, onFactor] = threshold(3.0, true);
    const auto [steady, steadyFactor] = threshold(3.0, false);
    QCOMPARE(offFactor, 1.0);
    QVERIFY2(onFactor > 1.2 && onFactor <= 3.0, qPrintable(QString::number(onFactor)));
    QVERIFY2(on > off, qPrintable(QString("%1 vs %2").arg(on).arg(off)));
    QVERIFY2(steadyFactor < 1.05, qPrintable(QString::number(steadyFactor)));
    QVERIFY(steady < on);
  }

  void gradedReleaseFollowsTheSeed_data() {
    QTest::addColumn<QString>("probes");
    QTest::addColumn<bool>("closed");
    QTest::addColumn<double>("start");  // admit share right after the release
    QTest::addColumn<double>("cap");    // ... at the end of the ramp
    QTest::newRow("3 of 3: 5 % up to 100 %") << "ggg" << true << 0.05 << 1.0;
    QTest::newRow("2 of 3: not yet") << "bgg" << false << 0.0 << 0.0;
    QTest::newRow("19 of 20 (95 %): 5 %") << "b" + QString(19, 'g') << true << 0.05 << 1.0;
    QTest::newRow("18 of 20 (90 %): 1 % capped at 20 %")
        << "bb" + QString(18, 'g') << true << 0.01 << 0.2;
    QTest::newRow("17 of 20 (85 %): 1 %") << "bbb" + QString(17, 'g') << true << 0.01 << 0.2;
    QTest::newRow("4 failures: 85 % out of reach, reopen") << "bbbb" << false << 0.0 << 0.0;
  }
  void gradedReleaseFollowsTheSeed() {
    QFETCH(QString, probes);
    QFETCH(bool, closed);
    QFETCH(double, start);
    QFETCH(double, cap);
    const BreakerConfig c = graded();
    Breaker b(1, c, 7, nullptr);
    const Micros t = probe(b, probes.toStdString());
    if (!closed) {
      QVERIFY(b.state() != BreakerState::Closed);
      if (probes == "bbbb") QCOMPARE(b.state(), BreakerState::Open);
      return;
    }
    QCOMPARE(b.state(), BreakerState::Closed);
    QVERIFY(b.ramping());
    QVERIFY(std::abs(b.snapshot(t).admitShare - start) < 1e-9);
    const double mid = b.snapshot(t + seconds(10)).admitShare;
    QVERIFY(std::abs(mid - (start + (cap - start) / 2)) < 1e-9);
    QVERIFY(std::abs(b.snapshot(t + seconds(20)).admitShare - cap) < 1e-9);
  }

  void cappedReleaseRisesOnlyWhenTrafficIsGood_data() {
    QTest::addColumn<int>("badPerSecond");  // of 10 calls a second during the capped ramp
    QTest::addColumn<QString>("after");     // rises, holds, reopens
    QTest::newRow("clean: on to 100 %") << 0 << "rises";
    QTest::newRow("1 in 10 bad (90 %): held at 20 %") << 1 << "holds";
    QTest::newRow("3 in 10 bad: reopen") << 3 << "reopens";
  }
  void cappedReleaseRisesOnlyWhenTrafficIsGood() {
    QFETCH(int, badPerSecond);
    QFETCH(QString, after);
    // At most 30 % bad: the ramp's relapse rule (50 %) stays out of the way, the grading decides.
    const BreakerConfig c = graded();
    Breaker b(1, c, 7, nullptr);
    Micros t = probe(b, "bb" + std::string(18, 'g'));
    QCOMPARE(b.state(), BreakerState::Closed);
    const Micros end = t + seconds(20);
    for (; t < end; t += millis(100)) {
      const int k = static_cast<int>((t / millis(100)) % 10);
      b.record(t, millis(20), k < badPerSecond ? 500 : 200, Outcome::Ok);
    }
    b.advance(end);
    if (after == "reopens") {
      QCOMPARE(b.state(), BreakerState::Open);
      return;
    }
    QCOMPARE(b.state(), BreakerState::Closed);
    const double later = b.snapshot(end + seconds(10)).admitShare;
    if (after == "rises")
      QVERIFY2(std::abs(later - 0.6) < 1e-9, qPrintable(QString::number(later)));
    else
      QVERIFY2(std::abs(later - 0.2) < 1e-9, qPrintable(QString::number(later)));
  }

  void keysReadAndWriteBack() {
    const std::string yaml =
        "version: 1\nname: adaptive\nbreaker:\n"
        "  trip: {error_rate: 0.5, weight: 1.2, load_factor: {min: 0.8, max: 1.5, source: queue}}\n"
        "  slow: {spread_max: 2}\n"
        "  half_open:\n    release:\n"
        "      - {success: 0.95, probes: 3, start: 0.05}\n"
        "      - {success: 0.85, probes: 5, start: 0.01, cap: 0.2}\n"
        "    max_probes: 20\n";
    const Policy p = parsePolicy(yaml, "p.yaml");
    QCOMPARE(p.breaker.trip.weight, 1.2);
    QVERIFY(p.breaker.trip.loadFactor.enabled);
    QCOMPARE(p.breaker.trip.loadFactor.source, LoadSource::Queue);
    QCOMPARE(p.breaker.slow.spreadMax, 2.0);
    QCOMPARE(p.breaker.halfOpen.release.size(), std::size_t{2});
    QCOMPARE(p.breaker.halfOpen.release[0].cap, 1.0);
    QCOMPARE(p.breaker.halfOpen.release[1].cap, 0.2);
    const Policy back = parsePolicy(policyToYaml(p), "back.yaml");
    QCOMPARE(policyToYaml(back), policyToYaml(p));
    QCOMPARE(back.breaker.halfOpen.release[1].start, 0.01);
    // Without the keys, the written policy has none of them (older readers keep working).
    const std::string plain = policyToYaml(parsePolicy("version: 1\nname: x\n", "x.yaml"));
    QVERIFY(plain.find("load_factor") == std::string::npos);
    QVERIFY(plain.find("release") == std::string::npos);
  }

  void badKeysNameTheLine_data() {
    QTest::addColumn<QString>("yaml");
    QTest::addColumn<QString>("expected");
    QTest::newRow("rules out of order")
        << "version: 1\nname: x\nbreaker:\n  half_open:\n    release:\n"
           "      - {success: 0.85, probes: 5, start: 0.01}\n"
           "      - {success: 0.95, probes: 3, start: 0.05}\n"
        << "p.yaml:7: breaker.half_open.release[1].success: rules go best first";
    QTest::newRow("cap below start")
        << "version: 1\nname: x\nbreaker:\n  half_open:\n    release:\n"
           "      - {success: 0.9, probes: 3, start: 0.5, cap: 0.2}\n"
        << "p.yaml:6: breaker.half_open.release[0].cap: must not be below start";
    QTest::newRow("more probes than max_probes")
        << "version: 1\nname: x\nbreaker:\n  half_open:\n    max_probes: 4\n    release:\n"
           "      - {success: 0.9, probes: 5, start: 0.5}\n"
        << "p.yaml:7: breaker.half_open.release[0].probes: must not exceed";
    QTest::newRow("load factor max below min")
        << "version: 1\nname: x\nbreaker:\n  trip:\n    load_factor: {min: 1.2, max: 0.9}\n"
        << "p.yaml:5: breaker.trip.load_factor.max: must not be below";
    QTest::newRow("unknown source")
        << "version: 1\nname: x\nbreaker:\n  trip:\n    load_factor: {source: cpu}\n"
        << "p.yaml:5: breaker.trip.load_factor.source:";
  }
  void badKeysNameTheLine() {
    QFETCH(QString, yaml);
    QFETCH(QString, expected);
    const QString err = errorOf([&] { parsePolicy(yaml.toStdString(), "p.yaml"); });
    QVERIFY2(err.startsWith(expected), qPrintable(err));
  }
};

QTEST_GUILESS_MAIN(TstBreakerAdaptive)
#include "tst_breaker_adaptive.moc"
