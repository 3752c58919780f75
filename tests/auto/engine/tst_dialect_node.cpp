// opossum and cockatiel emulations (shared/reference/breakers.md §7, §8; their sources):
// opossum's strict `>` error percentage over `fires` (rejected calls included), volumeThreshold,
// the rolling buckets, warm-up, one half-open trial (PENDING_CLOSE), its timeout; cockatiel's
// ConsecutiveBreaker and SamplingBreaker, its lazy half-open after halfOpenAfter with other
// callers waiting for the verdict. Times follow fake-timer semantics: a timer due at t fires
// before a call made at t.
#include <QtTest>

#include <memory>
#include <string>
#include <vector>

#include "dialect_rig.hpp"
#include "spillway/dialect.hpp"
#include "spillway/dialects/cockatiel.hpp"
#include "spillway/dialects/opossum.hpp"
#include "spillway/input_error.hpp"

using namespace spillway;
using namespace spillway::dialects;

namespace {

constexpr Micros kT0 = 0;  // fake timers start at 0

struct Rig : test::DialectRig {
  Rig(DialectKind k, const std::string& cfg) : DialectRig(k, cfg, "options.json", "fn", "g") {}
  // Runs a string of results ('s' success, 'f' failure), one every 100 ms.
  void run(const QString& seq, Micros from = kT0) {
    for (int i = 0; i < seq.size(); ++i) call(from + millis(100 * i), seq[i] == 'f');
  }
  QStringList log() const {
    QStringList out;
    for (const Event& e : transitions())
      out << QStringLiteral("%1:%2")
                 .arg(e.ts / 1000)
                 .arg(QString::fromUtf8(stateName(e.to).data(), int(stateName(e.to).size())));
    return out;
  }
};

}  // namespace

class TestDialectNode : public QObject {
  Q_OBJECT
 private slots:
  void opossumThreshold_data() {
    QTest::addColumn<QString>("options");
    QTest::addColumn<QString>("results");
    QTest::addColumn<bool>("opens");
    QTest::newRow("volumeThreshold 5: 4 failures are not judged") << R"({"volumeThreshold": 5})"
                                                                  << "ffff" << false;
    QTest::newRow("volumeThreshold 5: the 5th failure opens") << R"({"volumeThreshold": 5})"
                                                              << "fffff" << true;
    QTest::newRow("2 of 4 = 50 %, not > 50") << "{}"
                                             << "ssff" << false;
    QTest::newRow("3 of 5 = 60 % > 50") << "{}"
                                        << "ssfff" << true;
    QTest::newRow("default volume 0: the first failure opens") << "{}"
                                                               << "f" << true;
  }
  void opossumThreshold() {
    QFETCH(QString, options);
    QFETCH(QString, results);
    QFETCH(bool, opens);
    Rig r(DialectKind::Opossum, options.toStdString());
    r.run(results);
    QCOMPARE(r.d->state(r.id) == BreakerState::Open, opens);
  }

  // Buckets rotate every rollingCountTimeout / buckets from creation (at 0).
  void opossumRollingWindow_data() {
    QTest::addColumn<int>("failAtMs");
    QTest::addColumn<bool>("opens");
    QTest::newRow("success still in the window: 1 of 2") << 500 << false;
    QTest::newRow("success rotated out at 1000 ms: 1 of 1") << 1050 << true;
  }
  void opossumRollingWindow() {
    QFETCH(int, failAtMs);
    QFETCH(bool, opens);
    Rig r(DialectKind::Opossum, R"({"rollingCountTimeout": 1000, "rollingCountBuckets": 10})");
    r.call(kT0, false);
    r.call(millis(failAtMs), true);
    QCOMPARE(r.d->state(r.id) == BreakerState::Open, opens);
  }

  void opossumHalfOpenSingleTrial() {
    Rig r(DialectKind::Opossum, R"({"resetTimeout": 1000})");
    r.call(kT0, true);  // open at 10 ms, half-open timer for 1010 ms
    QCOMPARE(r.call(millis(500), false), Admission::Reject);
    QCOMPARE(r.call(millis(1009), false), Admission::Reject);
    auto* o = static_cast<OpossumDialect*>(r.d.get());
    QCOMPARE(o->fires(r.id), 3u);  // rejected calls are fires too
    const DialectDecision trial = r.d->admit(r.id, millis(1010));
    QCOMPARE(trial.kind, Admission::Probe);
    QCOMPARE(r.d->admit(r.id, millis(1011)).kind, Admission::Reject);
    r.d->record(r.id, trial, millis(1500), millis(490), 200, Outcome::Ok);
    QCOMPARE(r.log(), QStringList({"10:OPEN", "1010:HALF_OPEN", "1500:CLOSED"}));
    // The window is not cleared on close: the opening failure still counts.
    QCOMPARE(o->failures(r.id), 1u);
  }

  void opossumTrialFailureReopens() {
    Rig r(DialectKind::Opossum, R"({"resetTimeout": 1000})");
    r.call(kT0, true);
    QCOMPARE(r.call(millis(1010), true, millis(100)), Admission::Probe);
    QCOMPARE(r.log(), QStringList({"10:OPEN", "1010:HALF_OPEN", "1110:OPEN"}));
    QCOMPARE(r.call(millis(2109), false), Admission::Reject);
    QCOMPARE(r.call(millis(2110), false), Admission::Probe);
  }

  void opossumWarmUp() {
    Rig r(DialectKind::Opossum, R"({"allowWarmUp": true, "rollingCountTimeout": 2000})");
    r.run("fffff");
    QCOMPARE(r.d->state(r.id), BreakerState::Closed);
    r.call(millis(2000), true);  // warm-up over at 2000 ms
    QCOMPARE(r.d->state(r.id), BreakerState::Open);
  }

  void opossumOptions() {
    QCOMPARE(parseOpossumConfig(R"({"timeout": 3000})", "o.json").timeout, millis(3000));
    Rig off(DialectKind::Opossum, R"({"timeout": false})");
    QCOMPARE(off.d->callTimeout(), kForever);
    Rig on(DialectKind::Opossum, R"({"timeout": 3000, "capacity": 10})");
    QCOMPARE(on.d->callTimeout(), millis(3000));
    try {
      parseOpossumConfig("{\n \"resetTimeOut\": 5}", "o.json");
      QFAIL("accepted");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).startsWith("o.json:2: resetTimeOut: unknown key"), e.what());
    }
  }

  // ---- cockatiel ------------------------------------------------------------------------

  void cockatielConsecutive_data() {
    QTest::addColumn<QString>("results");
    QTest::addColumn<bool>("opens");
    QTest::newRow("a success resets the count") << "ffsff" << false;
    QTest::newRow("the 3rd consecutive failure") << "ffsfff" << true;
  }
  void cockatielConsecutive() {
    QFETCH(QString, results);
    QFETCH(bool, opens);
    Rig r(DialectKind::Cockatiel,
          R"({"halfOpenAfter": 1000, "breaker": {"ConsecutiveBreaker": 3}})");
    r.run(results);
    QCOMPARE(r.d->state(r.id) == BreakerState::Open, opens);
  }

  // 5 windows of 1000 ms; minimumRps 1 → at least 5 results; failures > 0.5 × total.
  void cockatielSampling_data() {
    QTest::addColumn<QString>("results");
    QTest::addColumn<bool>("opens");
    QTest::newRow("4 results: below the minimum volume") << "ffff" << false;
    QTest::newRow("3 of 5 > 2.5") << "ssfff" << true;
    QTest::newRow("2 of 5 is not") << "sssff" << false;
  }
  void cockatielSampling() {
    QFETCH(QString, results);
    QFETCH(bool, opens);
    Rig r(DialectKind::Cockatiel, R"({"halfOpenAfter": 1000,
      "breaker": {"SamplingBreaker": {"threshold": 0.5, "duration": 5000, "minimumRps": 1}}})");
    r.run(results);
    QCOMPARE(r.d->state(r.id) == BreakerState::Open, opens);
  }

  // The default minimumRps is 5 / threshold: 10 rps over 5 s = 50 results.
  void cockatielSamplingDefaultVolume() {
    Rig r(DialectKind::Cockatiel, R"({"halfOpenAfter": 1000,
      "breaker": {"SamplingBreaker": {"threshold": 0.5, "duration": 5000}}})");
    for (int i = 0; i < 49; ++i) r.call(millis(90 * i), true);
    QCOMPARE(r.d->state(r.id), BreakerState::Closed);
    r.call(millis(90 * 49), true);
    QCOMPARE(r.d->state(r.id), BreakerState::Open);
  }

  void cockatielHalfOpen() {
    Rig r(DialectKind::Cockatiel,
          R"({"halfOpenAfter": 1000, "breaker": {"ConsecutiveBreaker": 1}})");
    r.call(kT0, true);  // open at 10 ms
    QCOMPARE(r.call(millis(1009), false), Admission::Reject);
    const DialectDecision trial = r.d->admit(r.id, millis(1010));  // now - openedAt >= 1000
    QCOMPARE(trial.kind, Admission::Probe);
    QCOMPARE(r.d->admit(r.id, millis(1020)).kind, Admission::Wait);  // awaits the verdict
    r.d->record(r.id, trial, millis(1100), millis(90), 500, Outcome::Ok);
    QCOMPARE(r.log(), QStringList({"10:OPEN", "1010:HALF_OPEN", "1100:OPEN"}));
    const DialectDecision trial2 = r.d->admit(r.id, millis(2100));
    QCOMPARE(trial2.kind, Admission::Probe);
    r.d->record(r.id, trial2, millis(2200), millis(100), 200, Outcome::Ok);
    QCOMPARE(r.d->state(r.id), BreakerState::Closed);
    // A result from the finished episode is dropped.
    r.d->record(r.id, trial, millis(2300), millis(100), 500, Outcome::Ok);
    QCOMPARE(r.d->state(r.id), BreakerState::Closed);
  }

  void cockatielConfigErrors_data() {
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("error");
    QTest::newRow("sampling threshold 1")
        << R"({"halfOpenAfter": 1000,
 "breaker": {"SamplingBreaker": {"threshold": 1, "duration": 5000}}})"
        << "c.json:2: breaker.SamplingBreaker.threshold: must be in (0, 1)";
    // As cockatiel's CountBreaker constructor refuses them.
    QTest::newRow("count threshold 0")
        << R"({"halfOpenAfter": 1000,
 "breaker": {"CountBreaker": {"threshold": 0, "size": 5}}})"
        << "c.json:2: breaker.CountBreaker.threshold: must be in (0, 1)";
    QTest::newRow("count minimum over the size")
        << R"({"halfOpenAfter": 1000,
 "breaker": {"CountBreaker": {"threshold": 0.5, "size": 5, "minimumNumberOfCalls": 6}}})"
        << "c.json:2: breaker.CountBreaker.minimumNumberOfCalls:";
    QTest::newRow("count without a size")
        << R"({"halfOpenAfter": 1000, "breaker": {"CountBreaker": {"threshold": 0.5}}})"
        << "c.json:1: breaker.CountBreaker.size:";
  }
  void cockatielConfigErrors() {
    QFETCH(QString, config);
    QFETCH(QString, error);
    try {
      parseCockatielConfig(config.toStdString(), "c.json");
      QFAIL("accepted");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).startsWith(error), e.what());
    }
  }

  // CountBreaker: the ring of the last `size` results, judged on a failure once
  // minimumNumberOfCalls are in it (cockatiel src/breaker/CountBreaker.ts).
  void cockatielCount() {
    auto d = makeDialect(DialectKind::Cockatiel, R"({"halfOpenAfter": 1000,
 "breaker": {"CountBreaker": {"threshold": 0.5, "size": 4, "minimumNumberOfCalls": 3}}})",
                         "c.json", 1);
    const InstanceId id = d->addInstance("fn", "g");
    auto call = [&](Micros t, bool ok) {
      const DialectDecision dec = d->admit(id, t);
      if (dec.admitted()) d->record(id, dec, t + millis(1), millis(1), ok ? 200 : 500, Outcome::Ok);
      return dec.kind;
    };
    call(0, false);
    call(millis(10), false);  // two failures: under the minimum of 3
    QCOMPARE(d->state(id), BreakerState::Closed);
    call(millis(20), true);
    call(millis(30), true);
    call(millis(40), true);   // the first failure leaves the ring: F S S S
    call(millis(50), false);  // the second one too: S S S F, 1 of 4
    QCOMPARE(d->state(id), BreakerState::Closed);
    call(millis(60), false);  // S S F F: 2 of 4, not more than half
    QCOMPARE(d->state(id), BreakerState::Closed);
    call(millis(70), false);  // S F F F: 3 of 4
    QCOMPARE(d->state(id), BreakerState::Open);
  }
};

QTEST_GUILESS_MAIN(TestDialectNode)
#include "tst_dialect_node.moc"
