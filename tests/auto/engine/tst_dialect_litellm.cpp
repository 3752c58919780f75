// LiteLLM router cooldowns (shared/reference/breakers.md §13): the v2 per-minute rules (a 429
// in a multi-deployment group, > 50 % failures with >= 5 requests, non-retryable statuses), a
// single-deployment group that is never cooled by them, v1 allowed_fails (fails + 1 >
// allowed_fails) for any group, the cooldown_time expiry, router_settings keys.
#include <QtTest>

#include <memory>
#include <string>
#include <vector>

#include "spillway/dialect.hpp"
#include "spillway/dialects/litellm.hpp"
#include "spillway/input_error.hpp"

using namespace spillway;
using namespace spillway::dialects;

namespace {

constexpr Micros kT0 = seconds(1'700'000'040);  // a wall-clock minute starts here

struct Rig {
  Rig(const std::string& yaml, int deployments)
      : d(makeDialect(DialectKind::Litellm, yaml, "config.yaml", 1, &sink)) {
    for (int i = 0; i < deployments; ++i)
      ids.push_back(d->addInstance("gpt-4o-" + std::to_string(i), "gpt-4o"));
  }
  Admission call(Micros start, int status) {
    const DialectDecision dec = d->admit(ids[0], start);
    if (dec.admitted()) d->record(ids[0], dec, start + millis(10), millis(10), status, Outcome::Ok);
    return dec.kind;
  }
  VectorSink sink;
  std::unique_ptr<DialectCluster> d;
  std::vector<InstanceId> ids;
};

}  // namespace

class TestDialectLitellm : public QObject {
  Q_OBJECT
 private slots:
  // 's' = 200, 'f' = 500, 'r' = 429, 'a' = 401; the index of the call that cools down, or -1.
  void cooldownRules_data() {
    QTest::addColumn<int>("deployments");
    QTest::addColumn<QString>("calls");
    QTest::addColumn<int>("cooledAt");
    QTest::newRow("429, two deployments: at once") << 2 << "sr" << 1;
    QTest::newRow("429, single deployment: never") << 1 << "rrrrrr" << -1;
    QTest::newRow("3 of 4 failed: below 5 requests") << 2 << "sfff" << -1;
    QTest::newRow("4 of 6 > 50 % with >= 5") << 2 << "sfffsf" << 5;
    QTest::newRow("3 of 6 = 50 %: not above") << 2 << "sssfff" << -1;
    QTest::newRow("single deployment, every call fails") << 1 << "ffffffffff" << -1;
    QTest::newRow("401 is not retryable: cooled") << 2 << "sa" << 1;
  }
  void cooldownRules() {
    QFETCH(int, deployments);
    QFETCH(QString, calls);
    QFETCH(int, cooledAt);
    Rig r("router_settings:\n  cooldown_time: 30\n  num_retries: 2\n", deployments);
    int at = -1;
    for (int i = 0; i < calls.size(); ++i) {
      const QChar c = calls[i];
      const int status = c == 's' ? 200 : c == 'f' ? 500 : c == 'r' ? 429 : 401;
      r.call(kT0 + seconds(i), status);
      if (at < 0 && r.d->state(r.ids[0]) == BreakerState::Open) at = i;
    }
    QCOMPARE(at, cooledAt);
    if (cooledAt >= 0) {
      QCOMPARE(r.sink.events[0].ts, kT0 + seconds(cooledAt) + millis(10));
      QCOMPARE(r.sink.events[0].openFor, seconds(30));
    }
  }

  // Counts are per wall-clock minute: failures of the previous minute do not count.
  void perMinuteWindow() {
    Rig r("router_settings: {cooldown_time: 5}\n", 2);
    for (int i = 0; i < 4; ++i) r.call(kT0 + seconds(50 + i), 500);  // 54 s: 4 of 4, < 5 calls
    r.call(kT0 + seconds(61), 500);                                  // new minute: 1 of 1
    QCOMPARE(r.d->state(r.ids[0]), BreakerState::Closed);
  }

  void cooldownExpires() {
    Rig r("router_settings: {cooldown_time: 5}\n", 2);
    r.call(kT0, 429);  // cooled at +10 ms until +5.01 s
    QCOMPARE(r.call(kT0 + seconds(5), 200), Admission::Reject);
    QCOMPARE(r.call(kT0 + seconds(5) + millis(10), 200), Admission::Admit);
    QCOMPARE(r.sink.events.size(), std::size_t(3));  // open, closed, ramp complete
    QCOMPARE(r.sink.events[1].ts, kT0 + seconds(5) + millis(10));
  }

  // v1 (allowed_fails set): fails + 1 > allowed_fails, for a single deployment too.
  void legacyAllowedFails_data() {
    QTest::addColumn<int>("allowed");
    QTest::addColumn<int>("cooledAt");
    QTest::newRow("allowed_fails 1: the 2nd failure") << 1 << 1;
    QTest::newRow("allowed_fails 2: the 3rd failure") << 2 << 2;
  }
  void legacyAllowedFails() {
    QFETCH(int, allowed);
    QFETCH(int, cooledAt);
    Rig r(
        "router_settings:\n  allowed_fails: " + std::to_string(allowed) + "\n  cooldown_time: 60\n",
        1);
    int at = -1;
    for (int i = 0; i < 5 && at < 0; ++i) {
      r.call(kT0 + seconds(i), 500);
      if (r.d->state(r.ids[0]) == BreakerState::Open) at = i;
    }
    QCOMPARE(at, cooledAt);
  }

  // The v1 counter lives cooldown_time after its last failure.
  void legacyCounterExpires() {
    Rig r("router_settings: {allowed_fails: 1, cooldown_time: 10}\n", 2);
    r.call(kT0, 500);
    r.call(kT0 + seconds(11), 500);  // the first failure's TTL is over: 1 again
    QCOMPARE(r.d->state(r.ids[0]), BreakerState::Closed);
    r.call(kT0 + seconds(12), 500);
    QCOMPARE(r.d->state(r.ids[0]), BreakerState::Open);
  }

  void settings() {
    const LitellmConfig c = parseLitellmConfig(R"(model_list: []
router_settings:
  routing_strategy: simple-shuffle
  num_retries: 2
  allowed_fails_policy: {RateLimitErrorAllowedFails: 100}
  fallbacks: [{"gpt-4o": ["claude-sonnet"]}]
)",
                                               "config.yaml");
    QCOMPARE(c.numRetries, 2);
    QVERIFY(c.legacy());
    QCOMPARE(c.fallbacks, std::vector<std::string>{"fallbacks: gpt-4o -> claude-sonnet"});
    try {
      parseLitellmConfig("router_settings:\n  cooldown_tme: 5\n", "config.yaml");
      QFAIL("accepted");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).startsWith("config.yaml:2: router_settings.cooldown_tme: unknown"),
               e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestDialectLitellm)
#include "tst_dialect_litellm.moc"
