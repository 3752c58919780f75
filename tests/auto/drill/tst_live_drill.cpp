// The callers' KPIs of a drill against a real gateway (app/drill/src/live_drill.cpp liveKpis),
// on hand-built calls: availability is a 200 within the client's SLO (a 503 or a reset is
// not), core and during-fault shares count only their own calls, a 429 is a quota refusal
// outside SLA attainment, p99 is the nearest rank, and the recovery after a fault follows
// kpis.md's service restoration (back within 5 points of the minute before the onset for a
// minute) minus the fault's end. Keys the callers cannot measure are absent.
#include <QtTest>

#include <map>
#include <optional>
#include <string>

#include "spillway/drill/live_drill.hpp"

using namespace spillway;
using namespace spillway::drill;

namespace {

// Two clients (core "app" with a 1 s SLO, non-critical "batch" with its 2 s timeout), one
// fault on chat-1 during [100 s, 130 s), a 10 s breaker window.
sim::Scenario scenario() {
  sim::Scenario sc;
  sc.duration = seconds(300);
  sc.policy.breaker.window.length = seconds(10);
  sim::ClientSpec app;
  app.name = "app";
  app.criticality = sim::Criticality::Core;
  app.slo = seconds(1);
  sim::ClientSpec batch;
  batch.name = "batch";
  batch.timeout = seconds(2);
  sc.clients = {app, batch};
  sim::FaultSpec f;
  f.target = "chat-1";
  f.at = seconds(100);
  f.duration = seconds(30);
  sc.faults = {f};
  return sc;
}

LiveCall call(std::uint32_t client, Micros start, int status, Micros latency) {
  LiveCall c;
  c.client = client;
  c.start = start;
  c.status = status;
  c.latency = latency;
  c.done = true;
  return c;
}

std::map<std::string, std::optional<double>> asMap(
    const std::vector<std::pair<std::string, std::optional<double>>>& v) {
  return {v.begin(), v.end()};
}

}  // namespace

class TstLiveDrill : public QObject {
  Q_OBJECT
 private slots:
  void shares() {
    const sim::Scenario sc = scenario();
    std::vector<LiveCall> calls = {
        call(0, seconds(10), 200, millis(200)),   // core, available
        call(0, seconds(11), 200, millis(1500)),  // core, past its 1 s SLO
        call(1, seconds(12), 200, millis(1500)),  // batch: within its 2 s timeout
        call(0, seconds(105), 503, millis(10)),   // core, during the fault, failed
        call(1, seconds(106), 0, -1),             // batch, during the fault, reset
        call(1, seconds(107), 200, millis(100)),  // batch, during the fault, available
        call(1, seconds(200), 429, millis(5)),    // a quota refusal
    };
    LiveCall pending = call(0, seconds(201), 0, -1);
    pending.done = false;  // never ended: not counted anywhere
    calls.push_back(pending);
    const auto k = asMap(liveKpis(sc, calls));
    QCOMPARE(*k.at("availability"), 3.0 / 7.0);
    QCOMPARE(*k.at("core_availability"), 1.0 / 3.0);
    QCOMPARE(*k.at("availability_during_faults"), 1.0 / 3.0);
    QCOMPARE(*k.at("core_availability_during_faults"), 0.0);
    QCOMPARE(*k.at("sla_attainment_in_quota"), 3.0 / 6.0);
    // Nearest rank over the four 200s (100, 200, 1500, 1500 ms): the 4th.
    QCOMPARE(*k.at("p99_ms"), 1500.0);
    QVERIFY(!k.count("degrade_switch_rate"));  // not measurable at the callers
    QVERIFY(!k.count("false_positive_rate"));
  }

  // One call per second: all available before the onset, all failing until `backAt`, then all
  // available.
  void recovery_data() {
    QTest::addColumn<int>("backAt");    // s
    QTest::addColumn<int>("expected");  // s after the fault's end; -1: not restored
    QTest::newRow("back at the end") << 130 << 10;
    QTest::newRow("back 20 s late") << 150 << 30;
    QTest::newRow("back before the end") << 110 << 0;
    QTest::newRow("never back") << 400 << -1;
    QTest::newRow("back too late to hold a minute") << 260 << -1;
  }
  void recovery() {
    QFETCH(int, backAt);
    QFETCH(int, expected);
    const sim::Scenario sc = scenario();
    std::vector<LiveCall> calls;
    for (int s = 0; s < 300; ++s) {
      const bool bad = s >= 100 && s < backAt;
      calls.push_back(call(0, seconds(s), bad ? 503 : 200, millis(50)));
    }
    const auto k = asMap(liveKpis(sc, calls));
    if (expected < 0) {
      QVERIFY(!k.at("recovery_after_fault_s"));
      return;
    }
    QVERIFY(k.at("recovery_after_fault_s"));
    // The window holds 10 s and the level is 95 %: good once ten good seconds fill it, at
    // backAt + 9; restored at the end of that second, if it holds for a minute.
    QCOMPARE(*k.at("recovery_after_fault_s"), static_cast<double>(expected));
  }
};

QTEST_GUILESS_MAIN(TstLiveDrill)
#include "tst_live_drill.moc"
