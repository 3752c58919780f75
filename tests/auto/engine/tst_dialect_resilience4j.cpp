// Resilience4j emulation at its documented boundaries (shared/reference/breakers.md §1): `>=`
// thresholds, minimumNumberOfCalls, slow = duration strictly above the threshold, the strict
// isAfter of the lazy OPEN→HALF_OPEN, the half-open count window, exponential open waits with
// their cap, METRICS_ONLY / FORCED_OPEN / DISABLED, TIME_BASED eviction, native config keys.
// Expected times are derived from those rules, not from running the code.
#include <QtTest>

#include <memory>
#include <string>
#include <vector>

#include "dialect_rig.hpp"
#include "spillway/dialect.hpp"
#include "spillway/dialects/resilience4j.hpp"
#include "spillway/input_error.hpp"

using namespace spillway;
using namespace spillway::dialects;

namespace {

constexpr Micros kT0 = seconds(1'700'000'000);  // an epoch-second boundary

struct Rig : test::DialectRig {
  explicit Rig(const std::string& yaml)
      : DialectRig(DialectKind::Resilience4j, yaml, "r4j.yml", "svc", "g") {}
};

const char* kCount10 = R"(
slidingWindowType: COUNT_BASED
slidingWindowSize: 10
minimumNumberOfCalls: 10
failureRateThreshold: 50
waitDurationInOpenState: 10s
permittedNumberOfCallsInHalfOpenState: 3
)";

}  // namespace

class TestDialectResilience4j : public QObject {
  Q_OBJECT
 private slots:
  void failureRateIsInclusive_data() {
    QTest::addColumn<int>("failures");
    QTest::addColumn<bool>("opens");
    QTest::newRow("4 of 10 = 40 % < 50") << 4 << false;
    QTest::newRow("5 of 10 = 50 % >= 50 trips") << 5 << true;
    QTest::newRow("6 of 10") << 6 << true;
  }
  void failureRateIsInclusive() {
    QFETCH(int, failures);
    QFETCH(bool, opens);
    Rig r(kCount10);
    for (int i = 0; i < 10; ++i) r.call(kT0 + seconds(i), i >= 10 - failures);
    QCOMPARE(r.d->state(r.id) == BreakerState::Open, opens);
    if (opens) {
      QCOMPARE(r.transitions().size(), std::size_t(1));
      QCOMPARE(r.transitions()[0].ts, kT0 + seconds(9) + millis(10));  // the 10th result
      QCOMPARE(r.transitions()[0].reason, Reason::ErrorRate);
      QCOMPARE(r.transitions()[0].openFor, seconds(10));
    }
  }

  void minimumNumberOfCalls_data() {
    QTest::addColumn<int>("calls");
    QTest::addColumn<bool>("opens");
    QTest::newRow("9 failures, minimum 10: not judged") << 9 << false;
    QTest::newRow("10th failure: judged, 100 %") << 10 << true;
  }
  void minimumNumberOfCalls() {
    QFETCH(int, calls);
    QFETCH(bool, opens);
    Rig r(kCount10);
    for (int i = 0; i < calls; ++i) r.call(kT0 + seconds(i), true);
    QCOMPARE(r.d->state(r.id) == BreakerState::Open, opens);
  }

  void slowCallIsStrictlyAboveDuration_data() {
    QTest::addColumn<int>("latencyMs");
    QTest::addColumn<bool>("opens");
    QTest::newRow("exactly 1000 ms is not slow") << 1000 << false;
    QTest::newRow("1001 ms is slow") << 1001 << true;
  }
  void slowCallIsStrictlyAboveDuration() {
    QFETCH(int, latencyMs);
    QFETCH(bool, opens);
    Rig r(R"(
slidingWindowSize: 4
minimumNumberOfCalls: 4
slowCallRateThreshold: 100
slowCallDurationThreshold: 1000ms
)");
    for (int i = 0; i < 4; ++i) r.call(kT0 + seconds(2 * i), false, millis(latencyMs));
    QCOMPARE(r.d->state(r.id) == BreakerState::Open, opens);
    if (opens) QCOMPARE(r.transitions()[0].reason, Reason::SlowRate);
  }

  // The lazy transition needs clock.instant().isAfter(openUntil): strictly after.
  void lazyHalfOpenIsStrictlyAfterWait() {
    Rig r(kCount10);
    for (int i = 0; i < 10; ++i) r.call(kT0 + seconds(i), true);
    const Micros opened = kT0 + seconds(9) + millis(10);
    QCOMPARE(r.call(opened + seconds(10), false), Admission::Reject);
    QCOMPARE(r.d->state(r.id), BreakerState::Open);
    QCOMPARE(r.call(opened + seconds(10) + 1, false), Admission::Probe);
    QCOMPARE(r.transitions().back().to, BreakerState::HalfOpen);
    QCOMPARE(r.transitions().back().ts, opened + seconds(10) + 1);
  }

  void automaticTransitionFiresAtTheWaitsEnd() {
    Rig r(std::string(kCount10) + "automaticTransitionFromOpenToHalfOpenEnabled: true\n");
    for (int i = 0; i < 10; ++i) r.call(kT0 + seconds(i), true);
    const Micros opened = kT0 + seconds(9) + millis(10);
    r.d->advance(opened + seconds(60));
    QCOMPARE(r.transitions().size(), std::size_t(2));
    QCOMPARE(r.transitions()[1].to, BreakerState::HalfOpen);
    QCOMPARE(r.transitions()[1].ts, opened + seconds(10));
  }

  // Half-open: a count window of permittedNumberOfCallsInHalfOpenState (3), judged with the
  // same `>=` thresholds once min(minimumNumberOfCalls, 3) = 3 results are in.
  void halfOpenWindow_data() {
    QTest::addColumn<int>("probeFailures");
    QTest::addColumn<int>("expected");  // BreakerState after 3 probes
    QTest::newRow("1 of 3 = 33 % closes") << 1 << int(BreakerState::Closed);
    QTest::newRow("2 of 3 = 67 % reopens") << 2 << int(BreakerState::Open);
  }
  void halfOpenWindow() {
    QFETCH(int, probeFailures);
    QFETCH(int, expected);
    Rig r(kCount10);
    for (int i = 0; i < 10; ++i) r.call(kT0 + seconds(i), true);
    const Micros t = kT0 + seconds(30);
    // Three permits, taken before any result: the fourth caller is rejected.
    std::vector<DialectDecision> ds;
    for (int i = 0; i < 3; ++i) ds.push_back(r.d->admit(r.id, t + i));
    QCOMPARE(ds[0].kind, Admission::Probe);
    QCOMPARE(ds[2].kind, Admission::Probe);
    QCOMPARE(r.d->admit(r.id, t + 3).kind, Admission::Reject);
    for (int i = 0; i < 3; ++i)
      r.d->record(r.id, ds[i], t + millis(100 + i), millis(100), i < probeFailures ? 500 : 200,
                  Outcome::Ok);
    QCOMPARE(int(r.d->state(r.id)), expected);
    QCOMPARE(r.transitions().back().ts, t + millis(102));
  }

  // waitDurationInOpenState × multiplier^(attempt-1), capped: 10 s, 20 s, then 25 s.
  void exponentialBackoffOfTheOpenWait() {
    Rig r(R"(
slidingWindowSize: 2
minimumNumberOfCalls: 2
waitDurationInOpenState: 10s
enableExponentialBackoff: true
exponentialBackoffMultiplier: 2
exponentialMaxWaitDurationInOpenState: 25s
permittedNumberOfCallsInHalfOpenState: 1
)");
    r.call(kT0, true);
    r.call(kT0 + seconds(1), true);
    Micros opened = kT0 + seconds(1) + millis(10);
    for (int k = 0; k < 3; ++k) {
      const Micros wait = r.transitions().back().openFor;
      QCOMPARE(r.call(opened + wait + 1, true), Admission::Probe);  // fails: reopen
      opened = opened + wait + 1 + millis(10);
    }
    std::vector<Micros> waits;
    for (const Event& e : r.transitions())
      if (e.to == BreakerState::Open) waits.push_back(e.openFor);
    QCOMPARE(waits, (std::vector<Micros>{seconds(10), seconds(20), seconds(25), seconds(25)}));
    auto* r4j = static_cast<Resilience4jDialect*>(r.d.get());
    QCOMPARE(r4j->attempts(r.id), 4u);
    // A successful probe closes and the attempts start over.
    QCOMPARE(r.call(opened + seconds(25) + 1, false), Admission::Probe);
    QCOMPARE(r.d->state(r.id), BreakerState::Closed);
    QCOMPARE(r4j->attempts(r.id), 0u);
  }

  void modes_data() {
    QTest::addColumn<QString>("mode");
    QTest::addColumn<int>("rejected");
    QTest::addColumn<int>("wouldOpens");
    QTest::newRow("METRICS_ONLY never rejects, says 'would open' once") << "METRICS_ONLY" << 0 << 1;
    QTest::newRow("FORCED_OPEN rejects everything") << "FORCED_OPEN" << 20 << 0;
    QTest::newRow("DISABLED admits and records nothing") << "DISABLED" << 0 << 0;
  }
  void modes() {
    QFETCH(QString, mode);
    QFETCH(int, rejected);
    QFETCH(int, wouldOpens);
    Rig r(std::string(kCount10) + "initialState: " + mode.toStdString() + "\n");
    for (int i = 0; i < 20; ++i) r.call(kT0 + seconds(i), true);
    QCOMPARE(int(r.d->counters(r.id).rejected), rejected);
    QCOMPARE(int(r.d->counters(r.id).wouldOpens), wouldOpens);
    QCOMPARE(r.transitions().size(), std::size_t(0));
  }

  // TIME_BASED: one bucket per epoch second; size 3 keeps the current and the 2 previous.
  void timeBasedWindowEvicts() {
    Rig r(R"(
slidingWindowType: TIME_BASED
slidingWindowSize: 3
minimumNumberOfCalls: 4
failureRateThreshold: 100
)");
    r.call(kT0, true);
    r.call(kT0 + millis(100), true);
    r.call(kT0 + millis(200), true);
    // Second 3: second 0 has left the window, so only 1 call is in it: below the minimum.
    r.call(kT0 + seconds(3), true);
    QCOMPARE(r.d->state(r.id), BreakerState::Closed);
    r.call(kT0 + seconds(3) + millis(100), true);
    r.call(kT0 + seconds(4), true);
    r.call(kT0 + seconds(4) + millis(100), true);  // 4 failures in seconds 3..4
    QCOMPARE(r.d->state(r.id), BreakerState::Open);
  }

  void springApplicationYml() {
    const char* yml = R"(resilience4j.circuitbreaker:
  configs:
    default:
      sliding-window-size: 50
      failureRateThreshold: 30
      waitDurationInOpenState: PT5S
  instances:
    inventory:
      baseConfig: default
      minimumNumberOfCalls: 7
      slowCallDurationThreshold: 2000
)";
    const Resilience4jConfig c = parseResilience4jConfig(yml, "app.yml", "inventory");
    QCOMPARE(c.slidingWindowSize, 50u);
    QCOMPARE(c.failureRateThreshold, 30.0f);
    QCOMPARE(c.waitDurationInOpenState, seconds(5));
    QCOMPARE(c.minimumNumberOfCalls, 7u);
    QCOMPARE(c.slowCallDurationThreshold, millis(2000));  // a bare number is milliseconds
  }

  void configErrors_data() {
    QTest::addColumn<QString>("yaml");
    QTest::addColumn<QString>("message");
    QTest::newRow("zero threshold") << "slidingWindowSize: 5\nfailureRateThreshold: 0\n"
                                    << "r4j.yml:2: failureRateThreshold: must be in (0, 100]";
    QTest::newRow("typo") << "failureRateTreshold: 50\n"
                          << "r4j.yml:1: failureRateTreshold: unknown key";
    QTest::newRow("bad window type") << "slidingWindowType: SLIDING\n"
                                     << "r4j.yml:1: slidingWindowType: expected one of";
  }
  void configErrors() {
    QFETCH(QString, yaml);
    QFETCH(QString, message);
    try {
      parseResilience4jConfig(yaml.toStdString(), "r4j.yml");
      QFAIL("accepted");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).startsWith(message), e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestDialectResilience4j)
#include "tst_dialect_resilience4j.moc"
