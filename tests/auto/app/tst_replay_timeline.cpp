// The replay view model without widgets: a hand-built incident replayed under a small policy
// gives exact per-second counts (calls, failures, slow, blocked, false positives) and the bands
// of a known trip; on the built-in seed-000 sample the timeline's totals and events are those
// of a plain Replayer; watch-only replays mark "would open"; fault markers and KPI rows.
#include <QTest>

#include <algorithm>

#include <cmath>

#include "spillway/policy_yaml.hpp"
#include "spillway/view/replay_timeline.hpp"

using namespace spillway;
using namespace spillway::view;

namespace {

// Trips at once on 4 failures in a 10 s window, stays OPEN 5 s, closes after 2 good probes.
const char* kPolicy = R"(version: 1
name: tiny
breaker:
  window: { type: time, length: 10s, bucket: 1s }
  min_calls: 4
  trip: { error_rate: 0.5, slow_rate: 0.5, sustain: 0s }
  slow: { absolute: 1s }
  open: { duration: 5s, backoff_multiplier: 2, max_duration: 60s, jitter: 0 }
  half_open: { probe_share: 1.0, success_streak: 2 }
  ramp: { duration: off }
)";

constexpr Micros kT0 = 1764480000000000;  // a whole second

// 20 s, four calls a second per instance, strictly ordered. "a" answers 503 in its first second
// and 200 after (so its blocks while OPEN are false positives); "b" always answers 200, and
// one call in second 3 takes 2 s (slow); "c" exists only from second 10 on.
std::vector<CallRecord> incident() {
  std::vector<CallRecord> out;
  for (int k = 0; k < 80; ++k) {
    const Micros at = kT0 + k * millis(250);
    CallRecord a;
    a.ts = at;
    a.instance = "a";
    a.model = "m";
    a.latency = millis(50);
    a.status = k < 4 ? 503 : 200;
    out.push_back(a);
    CallRecord b = a;
    b.ts = at + millis(1);
    b.instance = "b";
    b.status = 200;
    b.latency = k == 13 ? seconds(2) : millis(40);
    out.push_back(b);
    if (k >= 40) {
      CallRecord c = b;
      c.ts = at + millis(2);
      c.instance = "c";
      c.latency = millis(30);
      out.push_back(c);
    }
  }
  return out;
}

ReplayView replay(const Policy& p, std::vector<NamedFault> faults = {}) {
  ReplayTimelineBuilder b(p, std::move(faults));
  for (const CallRecord& r : incident()) b.feed(r);
  return b.finish();
}

const InstanceTimeline& named(const ReplayView& v, const std::string& name) {
  for (const InstanceTimeline& it : v.timeline.instances())
    if (it.name == name) return it;
  throw std::runtime_error("no instance " + name);
}

}  // namespace

class TstReplayTimeline : public QObject {
  Q_OBJECT
 private slots:
  void exactCountsPerSecond();
  void bandsOfAKnownTrip();
  void markersFromFaults();
  void watchOnlyMarksWouldOpen();
  void sampleMatchesPlainReplayer();
  void outOfOrderRecordsSameSeries();
  void kpiRows();
};

void TstReplayTimeline::exactCountsPerSecond() {
  const ReplayView v = replay(parsePolicy(kPolicy, "tiny"));
  QCOMPARE(v.origin, kT0);
  QCOMPARE(v.timeline.instances().size(), std::size_t{3});
  const InstanceTimeline& a = named(v, "a");
  const InstanceTimeline& b = named(v, "b");
  const InstanceTimeline& c = named(v, "c");
  QCOMPARE(a.t.size(), std::size_t{20});  // the last call ends at 19.80 s
  QCOMPARE(a.t.front(), 1.0);             // ticks are labelled by their end
  for (std::size_t k = 0; k < 20; ++k) {
    QCOMPARE(a.calls[k], 4.0);
    QCOMPARE(b.calls[k], 4.0);
    QCOMPARE(c.calls[k], k >= 10 ? 4.0 : 0.0);
    QCOMPARE(a.failures[k], k == 0 ? 4.0 : 0.0);
    QCOMPARE(b.failures[k], 0.0);
    QCOMPARE(b.slow[k], k == 3 ? 1.0 : 0.0);
    QCOMPARE(b.rejected[k], 0.0);
  }
  // "a" trips when its 4th failure completes (0.80 s) and stays OPEN until 5.80 s: the calls
  // of seconds 1-5 are blocked, and since they answered 200 in the recording, every one is a
  // false positive.
  for (std::size_t k = 0; k < 20; ++k) {
    const double blocked = k >= 1 && k <= 5 ? 4.0 : 0.0;
    QCOMPARE(a.rejected[k], blocked);
    QCOMPARE(a.blockedWouldSucceed[k], blocked);
    QCOMPARE(a.throughput[k], 4.0 - blocked);
  }
  QCOMPARE(v.kpis.rejected, std::uint64_t{20});
  QCOMPARE(v.kpis.blockedWouldSucceed, std::uint64_t{20});
  // One bad second is a blip, not a real fault: the trip is a false trip, every block avoidable.
  QVERIFY(v.kpis.faultsFromRecording);
  QVERIFY(v.kpis.realFaults.empty());
  QCOMPARE(v.kpis.falsePositives(), std::uint64_t{20});
  QCOMPARE(v.kpis.blocks.falseTripEpisodes, std::uint64_t{1});
  // p99 of the recorded latencies: b's second 3 holds the 2 s call.
  QCOMPARE(b.p99Ms[3], 2000.0);
  QCOMPARE(b.p99Ms[4], 40.0);
  QVERIFY(std::isnan(c.p99Ms[2]));  // no calls yet
  // The sliding-minute FP rate is 1 once "a" blocked anything.
  QCOMPARE(a.fpRate[3], 1.0);
  QVERIFY(std::isnan(b.fpRate[3]));
  // The decision window: "a" at the end of second 0 holds 3 completed failures.
  QVERIFY(a.errorRate[0] > 0.5);
}

void TstReplayTimeline::bandsOfAKnownTrip() {
  const ReplayView v = replay(parsePolicy(kPolicy, "tiny"));
  const InstanceTimeline& a = named(v, "a");
  QVERIFY(a.bands.size() >= 4);
  QCOMPARE(a.bands[0].state, BreakerState::Closed);
  QCOMPARE(a.bands[0].start, Micros{0});
  QCOMPARE(a.bands[0].end, millis(800));  // the 4th failure completes at 0.75 s + 50 ms
  QCOMPARE(a.bands[1].state, BreakerState::Open);
  QCOMPARE(a.bands[1].end, millis(5800));
  QCOMPARE(a.bands[2].state, BreakerState::HalfOpen);
  QCOMPARE(a.bands[3].state, BreakerState::Closed);
  QCOMPARE(a.bands.back().end, v.timeline.end());
  QCOMPARE(named(v, "b").bands.size(), std::size_t{1});
  QCOMPARE(v.timeline.bandAt(0, seconds(3))->state, BreakerState::Open);
}

void TstReplayTimeline::markersFromFaults() {
  NamedFault f;
  f.instance = "a";
  f.start = kT0;
  f.end = kT0 + seconds(1);
  f.kind = "error_burst";
  const ReplayView v = replay(parsePolicy(kPolicy, "tiny"), {f});
  const InstanceTimeline& a = named(v, "a");
  std::vector<Marker::Kind> kinds;
  for (const Marker& m : a.markers) kinds.push_back(m.kind);
  QCOMPARE(a.markers.front().kind, Marker::Kind::FaultStart);
  QCOMPARE(a.markers.front().at, Micros{0});
  QCOMPARE(a.markers.front().label, std::string("error_burst starts"));
  auto at = [&](Marker::Kind k) -> Micros {
    for (const Marker& m : a.markers)
      if (m.kind == k) return m.at;
    return -1;
  };
  QCOMPARE(at(Marker::Kind::FaultEnd), seconds(1));
  QCOMPARE(at(Marker::Kind::Detected), millis(800));  // TTD 0.8 s
  QVERIFY(at(Marker::Kind::Restored) > millis(5800));
  QCOMPARE(v.kpis.faults.size(), std::size_t{1});
  QCOMPARE(v.kpis.faults[0].score.ttd, millis(800));
}

void TstReplayTimeline::watchOnlyMarksWouldOpen() {
  const ReplayView v = replay(watchOnly(parsePolicy(kPolicy, "tiny")));
  QVERIFY(!v.protection);
  const InstanceTimeline& a = named(v, "a");
  for (double x : a.rejected) QCOMPARE(x, 0.0);
  QCOMPARE(a.bands.front().state, BreakerState::MetricsOnly);
  bool wouldOpen = false;
  for (const Marker& m : a.markers) wouldOpen = wouldOpen || m.kind == Marker::Kind::WouldOpen;
  QVERIFY(wouldOpen);
  QCOMPARE(v.kpis.rejected, std::uint64_t{0});
}

// A real recording, out of start-time order in places: the engine's Replayer decides, the
// builder only watches — events and totals are the plain replay's.
void TstReplayTimeline::sampleMatchesPlainReplayer() {
  const std::string path = SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.jsonl";
  const Policy policy = loadPolicyFile(SPILLWAY_RESOURCES_DIR "/policies/default.yaml");
  ReplayTimelineBuilder b(policy, {});
  Replayer plain(policy, ReplayOptions{});
  auto reader = JsonlReader::openFile(path, false);
  CallRecord rec;
  while (reader->next(rec)) {
    b.feed(rec);
    plain.feed(rec);
  }
  plain.finish();
  const ReplayView v = b.finish();
  const ReplayKpis k = nativeReplayKpis(plain);
  QCOMPARE(v.events.size(), plain.events().size());
  QCOMPARE(v.kpis.rejected, k.rejected);
  QVERIFY(k.rejected > 0);
  double blocked = 0, fp = 0, calls = 0;
  for (const InstanceTimeline& it : v.timeline.instances())
    for (std::size_t i = 0; i < it.t.size(); ++i) {
      blocked += it.rejected[i];
      fp += it.blockedWouldSucceed[i];
      calls += it.calls[i];
    }
  QCOMPARE(blocked, static_cast<double>(k.rejected));
  QCOMPARE(fp, static_cast<double>(k.blockedWouldSucceed));
  QCOMPARE(calls, static_cast<double>(k.records));
  // The leaking instance holds OPEN bands; its blocks fall inside non-CLOSED bands.
  const InstanceTimeline& leak = named(v, "chat-72b-3");
  int open = 0;
  for (const StateBand& s : leak.bands) open += s.state == BreakerState::Open;
  QVERIFY(open > 0);
  for (std::size_t i = 0; i < leak.t.size(); ++i)
    if (leak.rejected[i] > 0) {
      bool notClosed = false;
      for (const StateBand& s : leak.bands)
        if (s.start < seconds(static_cast<long>(i) + 1) && s.end > seconds(static_cast<long>(i)))
          notClosed = notClosed || s.state != BreakerState::Closed || s.ramping;
      QVERIFY2(notClosed, qPrintable(QString("blocks in a closed second %1").arg(i)));
    }
}

// Logs are written at completion: records come out of start order. Within the reorder window
// the replay decides the same, and the timeline attributes each block to the call it blocked,
// so every per-second series is the one of the ordered recording.
void TstReplayTimeline::outOfOrderRecordsSameSeries() {
  const Policy p = parsePolicy(kPolicy, "tiny");
  const ReplayView ordered = replay(p);
  std::vector<CallRecord> shuffled = incident();
  for (std::size_t i = 0; i + 12 <= shuffled.size(); i += 12)  // 12 records: about 1.3 s
    std::reverse(shuffled.begin() + static_cast<std::ptrdiff_t>(i),
                 shuffled.begin() + static_cast<std::ptrdiff_t>(i + 12));
  ReplayTimelineBuilder b(p, {}, ReplayOptions{}, kT0);  // the library knows the first start
  for (const CallRecord& r : shuffled) b.feed(r);
  const ReplayView v = b.finish();
  QCOMPARE(v.kpis.late, std::uint64_t{0});
  QVERIFY(v.kpis.rejected > 0);  // blocks to attribute
  for (const char* name : {"a", "b", "c"}) {
    const InstanceTimeline& want = named(ordered, name);
    const InstanceTimeline& got = named(v, name);
    QCOMPARE(got.calls, want.calls);
    QCOMPARE(got.failures, want.failures);
    QCOMPARE(got.slow, want.slow);
    QCOMPARE(got.rejected, want.rejected);
    QCOMPARE(got.blockedWouldSucceed, want.blockedWouldSucceed);
  }
  // Without the library's first start, t = 0 is still the earliest call's second, although
  // the first record fed starts about a second later.
  QVERIFY(shuffled.front().ts >= kT0 + seconds(1));
  ReplayTimelineBuilder unset(p, {}, ReplayOptions{});
  for (const CallRecord& r : shuffled) unset.feed(r);
  const ReplayView u = unset.finish();
  QCOMPARE(u.origin, kT0);
  for (const char* name : {"a", "b", "c"}) {
    QCOMPARE(named(u, name).calls, named(ordered, name).calls);
    QCOMPARE(named(u, name).rejected, named(ordered, name).rejected);
  }
}

void TstReplayTimeline::kpiRows() {
  const Policy p = parsePolicy(kPolicy, "tiny");
  NamedFault f{"a", kT0, kT0 + seconds(1), "error_burst"};
  const ReplayView cur = replay(p, {f}), base = replay(watchOnly(p), {f});
  const auto rows = replayKpiRows(cur.kpis, &base.kpis, nullptr);
  auto row = [&](const std::string& prefix) -> const KpiRow& {
    for (const KpiRow& r : rows)
      if (r.name.rfind(prefix, 0) == 0) return r;
    throw std::runtime_error(prefix);
  };
  // A 1 s "fault" is shorter than a window: not a real fault, so the trip is a false trip and
  // every block that the recording answered is avoidable.
  QCOMPARE(*row("false-positive rate").current, 1.0);
  QCOMPARE(*row("  of which false trips").current, 1.0);
  QCOMPARE(*row("  of which recovery lag").current, 0.0);
  QCOMPARE(*row("collateral share").current, 0.0);
  QVERIFY(*row("false trips per hour").current > 0);
  QVERIFY(!row("false-positive rate").baseline);  // nothing blocked: n/a
  QCOMPARE(*row("blocked calls").current, 20.0 / 200.0);
  QCOMPARE(*row("real faults detected").current, 1.0);
  QCOMPARE(*row("TTD").current, 0.8);
  QVERIFY(*row("availability").deltaBaseline() < 0);  // the false positives cost answers
  QVERIFY(!row("TTD").deltaPrevious());
}

QTEST_GUILESS_MAIN(TstReplayTimeline)
#include "tst_replay_timeline.moc"
