// Live mode's rolling timeline without widgets, driven through the shadow monitor as the
// console drives it: per-second counts and p99 from the calls, every closed second sampled
// (also across a gap), the span bound however long the stream, late calls counted and not
// plotted, aggregates spread over their step, would-open marks with their reason that roll
// out with the span, and a jump far ahead that starts over.
#include <QTest>

#include <cmath>

#include "spillway/live/shadow.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/view/live_kpis.hpp"
#include "spillway/view/live_timeline.hpp"

using namespace spillway;
using namespace spillway::view;

namespace {

// Trips on half failures over 10 calls in a 5 s window, held 2 s; slow over 500 ms.
const char* kPolicy = R"(version: 1
name: live-test
breaker:
  window: { type: time, length: 5s, bucket: 1s }
  min_calls: 10
  trip: { error_rate: 0.5, slow_rate: 0.5, sustain: 2s }
  slow: { absolute: 500ms }
)";

constexpr Micros kT0 = 1764480000000000;  // a whole second

// One engine for every instance, as LiveSession sets it up (the timeline reads that engine).
live::ShadowOptions sharedEngine() {
  live::ShadowOptions o;
  o.sharedEngine = true;
  return o;
}

// The shadow monitor feeding a live timeline, as LiveSession wires them.
struct Rig {
  explicit Rig(LiveTimelineOptions opt = {})
      : shadow(parsePolicy(kPolicy, "test"), sharedEngine()), timeline(shadow.engine(), opt) {
    shadow.onRecorded = [this](const live::RecordedCall& c) {
      timeline.onCall(c.id, c.rec->end(), c.rec->latency, c.failure, c.slow);
    };
    shadow.onWouldOpen = [this](const live::WouldOpenVerdict& v) {
      timeline.onEvent(v.event, v.text.substr(v.text.find("would open")));
    };
  }
  // A call of `instance` ending at kT0 + endMs.
  void call(const char* instance, double endMs, double latencyMs, int status = 200) {
    CallRecord r;
    r.latency = static_cast<Micros>(latencyMs * 1e3);
    r.ts = kT0 + static_cast<Micros>(endMs * 1e3) - r.latency;
    r.instance = instance;
    r.model = "m";
    r.status = status;
    shadow.addCall(r);
  }
  live::ShadowMonitor shadow;
  LiveTimeline timeline;
};

const InstanceTimeline& inst(const RunTimeline& tl, const std::string& name) {
  for (const InstanceTimeline& it : tl.instances())
    if (it.name == name) return it;
  throw std::runtime_error("no instance " + name);
}

}  // namespace

class TstLiveTimeline : public QObject {
  Q_OBJECT
 private slots:
  void countsAndP99PerSecond();
  void everyClosedSecondIsSampled();
  void spanBoundsMemory_data();
  void spanBoundsMemory();
  void lateCallsAreCountedNotPlotted();
  void aggregatesSpreadOverTheirStep();
  void wouldOpenMarksRollOut();
  void kpisOfTheView();
  void jumpFarAheadStartsOver();
  void emptyTimeline();
};

void TstLiveTimeline::countsAndP99PerSecond() {
  Rig rig;
  // Second 0: latencies 1..100 ms (p99 = 99 ms); second 1: 3 calls, one 503, one slow.
  for (int i = 1; i <= 100; ++i) rig.call("a", i * 9.0, i);
  rig.call("a", 1100, 20);
  rig.call("a", 1200, 20, 503);
  rig.call("a", 1300, 800);
  for (int i = 0; i < 40; ++i) rig.call("b", 40000 + i, 10);  // seals seconds 0 and 1
  const RunTimeline tl = rig.timeline.snapshot();
  const InstanceTimeline& a = inst(tl, "a");
  QCOMPARE(tl.start(), Micros{0});
  QCOMPARE(a.t.front(), 1.0);
  QCOMPARE(a.calls[0], 100.0);
  QCOMPARE(a.failures[0], 0.0);
  QCOMPARE(a.p99Ms[0], 99.0);
  QCOMPARE(a.calls[1], 3.0);
  QCOMPARE(a.failures[1], 1.0);
  QCOMPARE(a.slow[1], 1.0);
  QCOMPARE(a.p99Ms[1], 800.0);
  QVERIFY(std::isnan(a.p99Ms[2]));  // no calls: no p99, not 0
  // Every instance on one axis, "b" present over the seconds before its first call.
  QCOMPARE(inst(tl, "b").t, a.t);
  QCOMPARE(rig.timeline.calls(), std::uint64_t{143});
}

void TstLiveTimeline::everyClosedSecondIsSampled() {
  Rig rig;
  // 20 failing calls a second for 4 s, then one call 3 s later (seconds 4–6 opened at once):
  // all closed seconds carry the window's error rate, none a stray 0.
  for (int k = 0; k < 80; ++k) rig.call("a", k * 50.0, 10, 500);
  rig.call("a", 7500, 10, 500);
  const RunTimeline tl = rig.timeline.snapshot();
  const InstanceTimeline& a = inst(tl, "a");
  QCOMPARE(a.errorRate.size(), std::size_t{8});
  for (std::size_t k = 0; k < a.errorRate.size(); ++k)
    QVERIFY2(a.errorRate[k] > 0.99,
             qPrintable(QString("second %1: %2").arg(k).arg(a.errorRate[k])));
}

void TstLiveTimeline::spanBoundsMemory_data() {
  QTest::addColumn<int>("spanSeconds");
  QTest::addColumn<int>("streamSeconds");
  QTest::newRow("10 s of 30") << 10 << 30;
  QTest::newRow("60 s of 1000") << 60 << 1000;
  QTest::newRow("span longer than the stream") << 600 << 100;
}

void TstLiveTimeline::spanBoundsMemory() {
  QFETCH(int, spanSeconds);
  QFETCH(int, streamSeconds);
  Rig rig(LiveTimelineOptions{.span = seconds(spanSeconds), .lateness = seconds(2)});
  for (int s = 0; s < streamSeconds; ++s)
    for (int i = 0; i < 10; ++i) rig.call(i % 2 ? "a" : "b", s * 1000.0 + i * 100 + 50, 30);
  const RunTimeline tl = rig.timeline.snapshot();
  const std::size_t kept = std::min(spanSeconds, streamSeconds);
  QCOMPARE(rig.timeline.ticks(), kept);
  QCOMPARE(inst(tl, "a").t.size(), kept);
  QCOMPARE(tl.end(), seconds(streamSeconds));
  QCOMPARE(tl.start(), seconds(streamSeconds) - seconds(static_cast<std::int64_t>(kept)));
  QCOMPARE(inst(tl, "a").t.front(), static_cast<double>(streamSeconds - kept + 1));
  // The retained seconds are intact after trimming.
  for (double c : inst(tl, "a").calls) QCOMPARE(c, 5.0);
}

void TstLiveTimeline::lateCallsAreCountedNotPlotted() {
  Rig rig(LiveTimelineOptions{.span = seconds(60), .lateness = seconds(5)});
  for (int s = 0; s < 20; ++s) rig.call("a", s * 1000.0 + 500, 10);
  rig.call("a", 17500, 10);  // 2.5 s behind the newest: still counted in its second
  rig.call("a", 3500, 10);   // 16 s behind: too late for its second
  const RunTimeline tl = rig.timeline.snapshot();
  const InstanceTimeline& a = inst(tl, "a");
  QCOMPARE(a.calls[17], 2.0);
  QCOMPARE(a.calls[3], 1.0);
  QCOMPARE(rig.timeline.late(), std::uint64_t{1});
  QCOMPARE(rig.timeline.calls(), std::uint64_t{22});  // the engine saw it all the same
}

void TstLiveTimeline::aggregatesSpreadOverTheirStep() {
  live::ShadowMonitor shadow(parsePolicy(kPolicy, "test"), sharedEngine());
  const InstanceId id = shadow.engine().addInstance("a", "m");
  LiveTimeline tl(shadow.engine());
  // 15 s steps: 150 calls, 30 failures, 15 slow → 10 / 2 / 1 per second.
  tl.onAggregate(id, kT0 + seconds(15), seconds(15), 150, 30, 15);
  tl.onAggregate(id, kT0 + seconds(30), seconds(15), 300, 0, -1);  // slow unknown: 0 plotted
  const RunTimeline v = tl.snapshot();
  const InstanceTimeline& a = inst(v, "a");
  QCOMPARE(a.calls.size(), std::size_t{30});
  for (std::size_t k = 0; k < 15; ++k) {
    QCOMPARE(a.calls[k], 10.0);
    QCOMPARE(a.failures[k], 2.0);
    QCOMPARE(a.slow[k], 1.0);
    QCOMPARE(a.calls[k + 15], 20.0);
    QCOMPARE(a.slow[k + 15], 0.0);
  }
  QCOMPARE(tl.calls(), std::uint64_t{450});
}

void TstLiveTimeline::wouldOpenMarksRollOut() {
  Rig rig(LiveTimelineOptions{.span = seconds(30), .lateness = seconds(2)});
  // "bad" fails from second 5 on; "good" never does.
  for (int k = 0; k < 200; ++k) {
    rig.call("good", k * 100.0, 20);
    rig.call("bad", k * 100.0 + 1, 20, k >= 50 ? 503 : 200);
  }
  RunTimeline tl = rig.timeline.snapshot();
  QVERIFY(inst(tl, "good").markers.empty());
  const auto& marks = inst(tl, "bad").markers;
  QCOMPARE(marks.size(), std::size_t{1});
  QCOMPARE(marks[0].kind, Marker::Kind::WouldOpen);
  QVERIFY2(QString::fromStdString(marks[0].label).startsWith("would open (error rate"),
           marks[0].label.c_str());
  // Sustained 2 s after the rate passed 0.5 (about second 10 of a 5 s window).
  QVERIFY(marks[0].at > seconds(9) && marks[0].at < seconds(14));
  // Shadow mode: one METRICS_ONLY band over the whole span, nothing blocked.
  QCOMPARE(inst(tl, "bad").bands.size(), std::size_t{1});
  QCOMPARE(inst(tl, "bad").bands[0].state, BreakerState::MetricsOnly);
  // 60 s later (healthy again) the mark has rolled out with the span.
  for (int k = 200; k < 800; ++k) rig.call("bad", k * 100.0, 20);
  tl = rig.timeline.snapshot();
  QVERIFY(inst(tl, "bad").markers.empty());
  QCOMPARE(tl.start(), seconds(50));
}

// The Live KPI rows from the view: shares of the calls in view, would-open verdicts and the
// instances they are on, and the draw latency over the last 200 snapshots only.
void TstLiveTimeline::kpisOfTheView() {
  QVERIFY(!liveKpis(RunTimeline{}, {}).failureShare);  // no calls: n/a, not 0 %
  Rig rig(LiveTimelineOptions{.span = seconds(30), .lateness = seconds(2)});
  for (int k = 0; k < 200; ++k) {
    rig.call("good", k * 100.0, k % 4 == 0 ? 800 : 20);  // a quarter slow (> 500 ms)
    rig.call("bad", k * 100.0 + 1, 20, k >= 50 ? 503 : 200);
  }
  const RunTimeline tl = rig.timeline.snapshot();
  std::vector<double> lat(250, 1.0);
  lat[10] = 900;  // older than the last 200: not counted
  lat[240] = 40;
  lat[241] = 30;
  const LiveKpis k = liveKpis(tl, lat);
  double calls = 0, failures = 0, slow = 0;
  for (const InstanceTimeline& it : tl.instances())
    for (std::size_t s = 0; s < it.calls.size(); ++s) {
      calls += it.calls[s];
      failures += it.failures[s];
      slow += it.slow[s];
    }
  QVERIFY(calls > 300);
  QCOMPARE(k.calls, calls);
  QCOMPARE(*k.failureShare, failures / calls);
  QVERIFY(*k.failureShare > 0.3);  // "bad" fails from second 5 on
  QCOMPARE(*k.slowShare, slow / calls);
  QVERIFY(*k.slowShare > 0.1);
  QCOMPARE(k.wouldOpen, 1);
  QCOMPARE(k.instancesOpen, 1);
  QCOMPARE(k.instances, std::size_t{2});
  QCOMPARE(*k.drawWorstMs, 40.0);
  QCOMPARE(*k.drawMedianMs, 1.0);
  QCOMPARE(k.shownSeconds, static_cast<double>(tl.end() - tl.start()) / 1e6);
}

void TstLiveTimeline::jumpFarAheadStartsOver() {
  Rig rig(LiveTimelineOptions{.span = seconds(60), .lateness = seconds(2)});
  for (int s = 0; s < 10; ++s) rig.call("a", s * 1000.0 + 500, 10);
  rig.call("a", 3'600'000.0 + 500, 10);  // an hour later: not 3600 empty seconds
  QVERIFY(rig.timeline.ticks() <= 60);
  const RunTimeline tl = rig.timeline.snapshot();
  QCOMPARE(tl.end(), seconds(3601));
  double sum = 0;
  for (double c : inst(tl, "a").calls) sum += c;
  QCOMPARE(sum, 1.0);
}

void TstLiveTimeline::emptyTimeline() {
  live::ShadowMonitor shadow(parsePolicy(kPolicy, "test"), sharedEngine());
  LiveTimeline tl(shadow.engine());
  const RunTimeline v = tl.snapshot();
  QVERIFY(v.instances().empty());
  QCOMPARE(v.end(), Micros{0});
  QCOMPARE(tl.origin(), kNever);
}

QTEST_GUILESS_MAIN(TstLiveTimeline)
#include "tst_live_timeline.moc"
