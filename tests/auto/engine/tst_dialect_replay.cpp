// Replaying a trace under a dialect: the same ordering and KPIs as the native replay
// (rejections, false positives, opens, TTD / MTTR / recovery lag through scoreFault), the
// dialect names and factory, and native KPIs in the same struct.
#include <QtTest>

#include <string>

#include "spillway/dialect.hpp"
#include "spillway/dialect_replay.hpp"
#include "spillway/input_error.hpp"
#include "spillway/policy.hpp"

using namespace spillway;

namespace {

constexpr std::int64_t kBaseMs = 1764480000000;  // trace epoch, ms

// Two instances of model m, a call each every 100 ms for 30 s; `a` answers 500 from 10 s to
// 20 s. Latency 10 ms.
std::string trace() {
  std::string s;
  for (int k = 0; k < 300; ++k) {
    const std::int64_t ts = kBaseMs + 100 * k;
    const bool fault = k >= 100 && k < 200;
    s += R"({"ts":)" + std::to_string(ts) +
         R"(,"instance":"a","model":"m","latency_ms":10,"status":)" + (fault ? "500" : "200") +
         "}\n";
    s += R"({"ts":)" + std::to_string(ts) +
         R"(,"instance":"b","model":"m","latency_ms":10,"status":200})" + "\n";
  }
  return s;
}

const char* kR4j = R"(
slidingWindowSize: 10
minimumNumberOfCalls: 10
failureRateThreshold: 50
waitDurationInOpenState: 5s
permittedNumberOfCallsInHalfOpenState: 1
)";

}  // namespace

class TestDialectReplay : public QObject {
  Q_OBJECT
 private slots:
  void names() {
    for (int i = 0; i < kDialectCount; ++i) {
      const auto k = static_cast<DialectKind>(i);
      QCOMPARE(parseDialectKind(dialectName(k)), std::optional<DialectKind>(k));
    }
    QCOMPARE(parseDialectKind("hystrix"), std::optional<DialectKind>());
    QCOMPARE(dialectName(DialectKind::Litellm), std::string_view("litellm"));
  }

  // Derived from the Resilience4j rules: the 5th failure of a 10-call window (10.4 s start,
  // +10 ms) opens; rejected until 15.41 s; the 15.5 s probe fails (open again until 20.51 s);
  // the 20.6 s probe succeeds and closes at 20.61 s.
  void resilience4jKpis() {
    const std::string t = trace();
    auto reader = JsonlReader::fromMemory("trace.jsonl", t, false);
    const std::vector<NamedFault> faults = {
        {"a", millis(kBaseMs + 10000), millis(kBaseMs + 20000), "errors"}};
    const ReplayKpis k =
        replayUnderDialect(DialectKind::Resilience4j, kR4j, "r4j.yml", *reader, faults);
    QCOMPARE(k.engine, std::string("resilience4j"));
    QCOMPARE(k.records, 600u);
    QCOMPARE(k.instances.size(), std::size_t(2));
    const InstanceKpis& a = k.instances[0];
    QCOMPARE(a.name, std::string("a"));
    QCOMPARE(a.stats.records, 300u);
    QCOMPARE(a.counters.opens, 2u);
    QCOMPARE(a.counters.rejected, 100u);           // 10.5 … 15.4 s and 15.6 … 20.5 s
    QCOMPARE(a.counters.blockedWouldSucceed, 6u);  // 20.0 … 20.5 s were answered fine
    QCOMPARE(a.finalState, BreakerState::Closed);
    QCOMPARE(k.instances[1].counters.rejected, 0u);
    QCOMPARE(k.fpRate(), std::optional<double>(0.06));
    QCOMPARE(k.faults.size(), std::size_t(1));
    const FaultScore& s = k.faults[0].score;
    QVERIFY(s.detected && s.restored);
    QCOMPARE(s.ttd, millis(410));
    QCOMPARE(s.mttr, millis(10610));
    QCOMPARE(s.recoveryLag, millis(610));
    // Time in state adds up to the replayed span of the instance (0 … 29.91 s).
    const auto& ti = a.counters.timeIn;
    QCOMPARE(ti[int(BreakerState::Closed)] + ti[int(BreakerState::Open)] +
                 ti[int(BreakerState::HalfOpen)],
             millis(29910));
  }

  // cockatiel's waiting callers run after the trial's verdict instead of being rejected.
  void cockatielWaitersRunAfterTheVerdict() {
    auto d = makeDialect(DialectKind::Cockatiel,
                         R"({"halfOpenAfter": 1000, "breaker": {"ConsecutiveBreaker": 1}})",
                         "c.json", 1);
    DialectReplayer r(*d);
    std::string t;
    // A failure opens at 10 ms; at 1.01 s a slow trial (500 ms) starts; two callers arrive
    // while it runs and wait; the trial succeeds at 1.51 s and both then run.
    auto line = [&](int ms, int lat, int status) {
      t += R"({"ts":)" + std::to_string(kBaseMs + ms) +
           R"(,"instance":"x","model":"m","latency_ms":)" + std::to_string(lat) + R"(,"status":)" +
           std::to_string(status) + "}\n";
    };
    line(0, 10, 500);
    line(1010, 500, 200);
    line(1100, 10, 200);
    line(1200, 10, 200);
    auto reader = JsonlReader::fromMemory("t.jsonl", t, false);
    CallRecord rec;
    while (reader->next(rec)) r.feed(rec);
    r.finish();
    const ReplayKpis k = r.kpis();
    QCOMPARE(k.instances[0].counters.rejected, 0u);
    QCOMPARE(k.instances[0].counters.admitted, 4u);
    QCOMPARE(k.instances[0].finalState, BreakerState::Closed);
  }

  // HAProxy counts an answer when its headers arrive (observe layer7), so a replay records a
  // call with a known ttfb then. Three errors whose headers come at 5, 6 and 8 ms are three in
  // a row for it (error-limit 3: down), though a success's end (52 ms) falls between their
  // ends (40, 60, 70 ms); without the ttfb the success breaks the run.
  void haproxyCountsAnswersWhenTheirHeadersArrive_data() {
    QTest::addColumn<bool>("withTtfb");
    QTest::addColumn<bool>("down");
    QTest::newRow("ttfb known: by the headers") << true << true;
    QTest::newRow("ttfb unknown: by the ends") << false << false;
  }
  void haproxyCountsAnswersWhenTheirHeadersArrive() {
    QFETCH(bool, withTtfb);
    QFETCH(bool, down);
    auto d = makeDialect(DialectKind::Haproxy,
                         "backend be\n  server x a:1 check inter 10s rise 2 fall 3 observe layer7 "
                         "error-limit 3 on-error mark-down\n",
                         "haproxy.cfg", 1);
    DialectReplayer r(*d);
    struct Call {
      int startMs, latencyMs, ttfbMs, status;
    };
    for (const Call& c :
         {Call{0, 40, 5, 503}, Call{1, 59, 5, 503}, Call{2, 50, 50, 200}, Call{3, 67, 5, 503}}) {
      CallRecord rec;
      rec.ts = millis(kBaseMs + c.startMs);
      rec.latency = millis(c.latencyMs);
      rec.ttfb = withTtfb ? millis(c.ttfbMs) : -1;
      rec.status = c.status;
      rec.instance = "x";
      rec.model = "m";
      r.feed(rec);
    }
    r.finish();
    QCOMPARE(r.kpis().instances[0].counters.opens, down ? 1u : 0u);
  }

  void nativeKpisShareTheStruct() {
    const std::string t = trace();
    Replayer rep(Policy{}, ReplayOptions{});
    auto reader = JsonlReader::fromMemory("trace.jsonl", t, false);
    CallRecord rec;
    while (reader->next(rec)) rep.feed(rec);
    rep.finish();
    const ReplayKpis k =
        nativeReplayKpis(rep, {{"a", millis(kBaseMs + 10000), millis(kBaseMs + 20000), "errors"}});
    QCOMPARE(k.engine, std::string("native"));
    QCOMPARE(k.records, 600u);
    QCOMPARE(k.instances.size(), std::size_t(2));
    QVERIFY(k.faults[0].found);
    QVERIFY(k.faults[0].score.detected);  // the native breaker trips on this fault too
  }

  void factoryReportsNativeErrors() {
    try {
      makeDialect(DialectKind::Envoy, "outlier_detection:\n  interval: 10\n", "envoy.yaml", 1);
      QFAIL("accepted");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).startsWith("envoy.yaml:2: outlier_detection.interval: expected a "
                                            "duration"),
               e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestDialectReplay)
#include "tst_dialect_replay.moc"
