// Sentinel DegradeRule emulation (shared/reference/breakers.md §2): strict `>` comparisons
// (slow ratio 1.0 trips at exactly 1.0), minRequestAmount, the tumbling statIntervalMs bucket,
// timeWindow seconds OPEN without backoff, exactly one half-open probe decided by the first
// completion, rules checked in order, JSON keys and validation.
#include <QtTest>

#include <memory>
#include <string>
#include <vector>

#include "dialect_rig.hpp"
#include "spillway/dialect.hpp"
#include "spillway/dialects/sentinel.hpp"
#include "spillway/input_error.hpp"

using namespace spillway;
using namespace spillway::dialects;

namespace {

constexpr Micros kT0 = seconds(1'700'000'000);  // a multiple of every statIntervalMs used

struct Rig : test::DialectRig {
  explicit Rig(const std::string& json)
      : DialectRig(DialectKind::Sentinel, json, "degrade.json", "GET:/orders", "orders") {}
};

}  // namespace

class TestDialectSentinel : public QObject {
  Q_OBJECT
 private slots:
  // grade 1: errors / total > count, strictly; judged once total >= minRequestAmount.
  void exceptionRatioIsStrict_data() {
    QTest::addColumn<int>("ok");
    QTest::addColumn<int>("errors");
    QTest::addColumn<bool>("opens");
    QTest::newRow("2 of 4 = 0.5, not > 0.5") << 2 << 2 << false;
    QTest::newRow("3 of 5 = 0.6 > 0.5") << 2 << 3 << true;
    QTest::newRow("3 of 3: below minRequestAmount 4") << 0 << 3 << false;
  }
  void exceptionRatioIsStrict() {
    QFETCH(int, ok);
    QFETCH(int, errors);
    QFETCH(bool, opens);
    Rig r(R"([{"resource":"GET:/orders","grade":1,"count":0.5,"minRequestAmount":4,
              "statIntervalMs":1000,"timeWindow":5}])");
    int i = 0;
    for (; i < ok; ++i) r.call(kT0 + millis(50 * i), false);
    for (int e = 0; e < errors; ++e, ++i) r.call(kT0 + millis(50 * i), true);
    QCOMPARE(r.d->state(r.id) == BreakerState::Open, opens);
  }

  void exceptionCountIsStrict_data() {
    QTest::addColumn<int>("errors");
    QTest::addColumn<bool>("opens");
    QTest::newRow("2 errors, count 2") << 2 << false;
    QTest::newRow("3 errors > 2") << 3 << true;
  }
  void exceptionCountIsStrict() {
    QFETCH(int, errors);
    QFETCH(bool, opens);
    Rig r(R"([{"grade":2,"count":2,"minRequestAmount":1,"statIntervalMs":60000,"timeWindow":5}])");
    for (int e = 0; e < errors; ++e) r.call(kT0 + seconds(e), true);
    QCOMPARE(r.d->state(r.id) == BreakerState::Open, opens);
  }

  // grade 0: slow = RT > count ms; ratio > slowRatioThreshold, except that a threshold of 1.0
  // is reached by a ratio of exactly 1.0.
  void slowRatio_data() {
    QTest::addColumn<double>("threshold");
    QTest::addColumn<int>("slowOf4");
    QTest::addColumn<int>("rtMs");
    QTest::addColumn<bool>("opens");
    QTest::newRow("0.5 of 0.5: not >") << 0.5 << 2 << 101 << false;
    QTest::newRow("0.75 > 0.5") << 0.5 << 3 << 101 << true;
    QTest::newRow("1.0 at threshold 1.0 trips") << 1.0 << 4 << 101 << true;
    QTest::newRow("RT exactly count is not slow") << 1.0 << 4 << 100 << false;
  }
  void slowRatio() {
    QFETCH(double, threshold);
    QFETCH(int, slowOf4);
    QFETCH(int, rtMs);
    QFETCH(bool, opens);
    Rig r(R"([{"grade":0,"count":100,"slowRatioThreshold":)" + std::to_string(threshold) +
          R"(,"minRequestAmount":4,"statIntervalMs":10000,"timeWindow":5}])");
    for (int i = 0; i < 4; ++i)
      r.call(kT0 + seconds(i), false, millis(i < 4 - slowOf4 ? 10 : rtMs));
    QCOMPARE(r.d->state(r.id) == BreakerState::Open, opens);
    if (opens) QCOMPARE(r.transitions()[0].reason, Reason::SlowRate);
  }

  // One bucket aligned to statIntervalMs: errors in two intervals never add up.
  void tumblingBucket() {
    Rig r(R"([{"grade":2,"count":2,"minRequestAmount":1,"statIntervalMs":1000,"timeWindow":5}])");
    r.call(kT0 + millis(700), true);
    r.call(kT0 + millis(800), true);
    r.call(kT0 + millis(1100), true);  // a new interval: count 1
    r.call(kT0 + millis(1200), true);
    QCOMPARE(r.d->state(r.id), BreakerState::Closed);
    r.call(kT0 + millis(1300), true);  // 3 > 2 within [1000, 2000)
    QCOMPARE(r.d->state(r.id), BreakerState::Open);
  }

  // OPEN for timeWindow s (retry when now >= nextRetry), then exactly one probe; the first
  // completion decides; a failed probe re-arms the same timeWindow (no backoff).
  void oneProbeOnly() {
    Rig r(R"([{"grade":2,"count":0,"minRequestAmount":1,"statIntervalMs":1000,"timeWindow":2}])");
    r.call(kT0, true);  // 1 > 0: OPEN at +10 ms
    const Micros opened = kT0 + millis(10);
    QCOMPARE(r.d->admit(r.id, opened + seconds(2) - millis(1)).kind, Admission::Reject);
    const DialectDecision probe = r.d->admit(r.id, opened + seconds(2));
    QCOMPARE(probe.kind, Admission::Probe);
    QCOMPARE(r.d->state(r.id), BreakerState::HalfOpen);
    QCOMPARE(r.d->admit(r.id, opened + seconds(2) + 1).kind, Admission::Reject);
    QCOMPARE(r.d->admit(r.id, opened + seconds(3)).kind, Admission::Reject);
    r.d->record(r.id, probe, opened + seconds(3) + millis(5), seconds(1), 500, Outcome::Ok);
    QCOMPARE(r.d->state(r.id), BreakerState::Open);
    const Micros reopened = opened + seconds(3) + millis(5);
    QCOMPARE(r.transitions().back().openFor, seconds(2));
    QCOMPARE(r.call(reopened + seconds(2) - millis(1), false), Admission::Reject);
    QCOMPARE(r.call(reopened + seconds(2), false), Admission::Probe);
    QCOMPARE(r.d->state(r.id), BreakerState::Closed);
    const auto t = r.transitions();
    QCOMPARE(t.size(), std::size_t(5));  // open, half-open, open, half-open, closed
  }

  // A probe admitted by rule 1 but blocked by rule 2 sends rule 1 back to OPEN.
  void probeBlockedByALaterRule() {
    Rig r(R"([{"grade":2,"count":0,"minRequestAmount":1,"statIntervalMs":1000,"timeWindow":1},
              {"grade":2,"count":1,"minRequestAmount":1,"statIntervalMs":1000,"timeWindow":10}])");
    r.call(kT0, true);                                                      // rule 1 opens (1 > 0)
    r.d->record(r.id, {}, kT0 + millis(20), millis(10), 500, Outcome::Ok);  // rule 2: 2 > 1
    auto* s = static_cast<SentinelDialect*>(r.d.get());
    QCOMPARE(s->ruleState(r.id, 0), BreakerState::Open);
    QCOMPARE(s->ruleState(r.id, 1), BreakerState::Open);
    QCOMPARE(r.d->admit(r.id, kT0 + seconds(2)).kind, Admission::Reject);
    QCOMPARE(s->ruleState(r.id, 0), BreakerState::Open);  // reverted, not stuck half-open
  }

  void ruleValidation_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("message");
    QTest::newRow("timeWindow 0") << R"([{"grade":1,"count":0.5,
 "timeWindow":0}])"
                                  << "degrade.json:2: [0].timeWindow: must be in [1,";
    QTest::newRow("ratio above 1") << R"([{"grade":1,"count":1.5,"timeWindow":1}])"
                                   << "degrade.json:1: [0].count: an exception ratio";
    QTest::newRow("unknown key")
        << R"([{"grade":1,"count":0.5,"timeWindow":1,"rtSlowRequestAmount":5}])"
        << "degrade.json:1: [0].rtSlowRequestAmount: unknown key";
  }
  void ruleValidation() {
    QFETCH(QString, json);
    QFETCH(QString, message);
    try {
      parseSentinelConfig(json.toStdString(), "degrade.json");
      QFAIL("accepted");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).startsWith(message), e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestDialectSentinel)
#include "tst_dialect_sentinel.moc"
