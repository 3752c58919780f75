// The console's view models without widgets: state bands from transitions, series and markers
// built from a real run, the scrubber's lookups, and KPI deltas.
#include <QTest>

#include <cmath>
#include <limits>

#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/simulator.hpp"
#include "spillway/view/headline.hpp"
#include "spillway/view/mark_clusters.hpp"
#include "spillway/view/timeline.hpp"

using namespace spillway;
using namespace spillway::view;

Q_DECLARE_METATYPE(std::vector<spillway::Event>)
Q_DECLARE_METATYPE(std::vector<spillway::view::StateBand>)

namespace {

Event transition(Micros ts, BreakerState from, BreakerState to, Reason why, InstanceId id = 0) {
  return transitionEvent(ts, id, from, to, why);
}

Event rampComplete(Micros ts, InstanceId id = 0) {
  Event e;
  e.ts = ts;
  e.instance = id;
  e.kind = EventKind::RampComplete;
  e.from = e.to = BreakerState::Closed;
  e.reason = Reason::RampComplete;
  return e;
}

using S = BreakerState;

// Bands must tile [0, end): contiguous, non-empty, and never two equal neighbours.
void checkTiling(const std::vector<StateBand>& bands, Micros end) {
  QVERIFY(!bands.empty());
  QCOMPARE(bands.front().start, Micros{0});
  QCOMPARE(bands.back().end, end);
  for (std::size_t i = 0; i < bands.size(); ++i) {
    QVERIFY(bands[i].start < bands[i].end);
    if (i > 0) {
      QCOMPARE(bands[i].start, bands[i - 1].end);
      QVERIFY(bands[i].state != bands[i - 1].state || bands[i].ramping != bands[i - 1].ramping);
    }
  }
}

struct Run {
  sim::Scenario sc;
  sim::VectorSeries series;
  VectorSink events;
  sim::RunReport report;
};

Run runSeed000(bool protection, Micros duration) {
  Run r;
  r.sc = sim::loadScenarioFile(SPILLWAY_RESOURCES_DIR "/scenarios/seed-000.yaml");
  r.sc.duration = duration;
  sim::SimOptions opt;
  opt.protection = protection;
  opt.series = &r.series;
  opt.events = &r.events;
  sim::Simulator s(r.sc, opt);
  s.run();
  r.report = s.report();
  return r;
}

}  // namespace

class TstTimeline : public QObject {
  Q_OBJECT

 private slots:
  void bands_data();
  void bands();
  void otherInstancesIgnored();
  void seriesFromARun();
  void markersFromFaults();
  void scrubberLookups();
  void kpiDeltas();
  void kpiIntervals();
  void interceptionIsPaired_data();
  void interceptionIsPaired();
  void slaClassRows();
  void verdictReadsTheInterval_data();
  void verdictReadsTheInterval();
  void seedIntervalWithAMiss();
  void clientFallShowsOnTheTile();
  void perFaultRows();
  void slowThreshold_data();
  void slowThreshold();
  void displayOrders();
  void markClusters_data();
  void markClusters();
  void fpTileShowsCollateral();
};

void TstTimeline::bands_data() {
  QTest::addColumn<std::vector<Event>>("events");
  QTest::addColumn<std::vector<StateBand>>("want");
  const Micros end = seconds(100);
  QTest::newRow("no events: one band")
      << std::vector<Event>{} << std::vector<StateBand>{{0, end, S::Closed, false}};
  QTest::newRow("trip, probe, close, ramp, done")
      << std::vector<Event>{transition(seconds(10), S::Closed, S::Open, Reason::SlowRate),
                            transition(seconds(20), S::Open, S::HalfOpen, Reason::OpenElapsed),
                            transition(seconds(25), S::HalfOpen, S::Closed, Reason::ProbeStreak),
                            rampComplete(seconds(55))}
      << std::vector<StateBand>{{0, seconds(10), S::Closed, false},
                                {seconds(10), seconds(20), S::Open, false},
                                {seconds(20), seconds(25), S::HalfOpen, false},
                                {seconds(25), seconds(55), S::Closed, true},
                                {seconds(55), end, S::Closed, false}};
  QTest::newRow("ramp relapse reopens")
      << std::vector<Event>{transition(seconds(10), S::Closed, S::Open, Reason::ErrorRate),
                            transition(seconds(20), S::Open, S::HalfOpen, Reason::OpenElapsed),
                            transition(seconds(22), S::HalfOpen, S::Closed, Reason::ProbeStreak),
                            transition(seconds(30), S::Closed, S::Open, Reason::RampRelapse)}
      << std::vector<StateBand>{{0, seconds(10), S::Closed, false},
                                {seconds(10), seconds(20), S::Open, false},
                                {seconds(20), seconds(22), S::HalfOpen, false},
                                {seconds(22), seconds(30), S::Closed, true},
                                {seconds(30), end, S::Open, false}};
  // With no ramp the engine publishes RampComplete at the closing instant: no empty band.
  QTest::newRow("close without ramp")
      << std::vector<Event>{transition(seconds(10), S::Closed, S::Open, Reason::ErrorRate),
                            transition(seconds(40), S::Open, S::Closed, Reason::ProbeStreak),
                            rampComplete(seconds(40))}
      << std::vector<StateBand>{{0, seconds(10), S::Closed, false},
                                {seconds(10), seconds(40), S::Open, false},
                                {seconds(40), end, S::Closed, false}};
  QTest::newRow("forced open, manual close is not a ramp")
      << std::vector<Event>{transition(seconds(5), S::Closed, S::ForcedOpen, Reason::Manual),
                            transition(seconds(8), S::ForcedOpen, S::Closed, Reason::Manual)}
      << std::vector<StateBand>{{0, seconds(5), S::Closed, false},
                                {seconds(5), seconds(8), S::ForcedOpen, false},
                                {seconds(8), end, S::Closed, false}};
  QTest::newRow("events after the end are cut")
      << std::vector<Event>{transition(seconds(90), S::Closed, S::Open, Reason::ErrorRate),
                            transition(seconds(120), S::Open, S::HalfOpen, Reason::OpenElapsed)}
      << std::vector<StateBand>{{0, seconds(90), S::Closed, false},
                                {seconds(90), end, S::Open, false}};
}

void TstTimeline::bands() {
  QFETCH(std::vector<Event>, events);
  QFETCH(std::vector<StateBand>, want);
  const std::vector<StateBand> got = bandsFromEvents(events, 0, S::Closed, seconds(100));
  checkTiling(got, seconds(100));
  QCOMPARE(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    QVERIFY2(got[i] == want[i], qPrintable(QString::number(i)));
}

void TstTimeline::otherInstancesIgnored() {
  const std::vector<Event> ev{transition(seconds(10), S::Closed, S::Open, Reason::ErrorRate, 1),
                              transition(seconds(20), S::Closed, S::Open, Reason::ErrorRate, 0)};
  const auto b0 = bandsFromEvents(ev, 0, S::Closed, seconds(30));
  const auto b1 = bandsFromEvents(ev, 1, S::Closed, seconds(30));
  QCOMPARE(b0.size(), std::size_t{2});
  QCOMPARE(b0[1].start, seconds(20));
  QCOMPARE(b1[1].start, seconds(10));
}

// A real run: one row per tick per instance and client, rates in range, the leaking instance
// shows OPEN bands while the healthy ones stay CLOSED all along.
void TstTimeline::seriesFromARun() {
  const Run r = runSeed000(true, seconds(900));
  const RunTimeline tl = RunTimeline::build(r.series, r.events.events, r.report, r.sc.tick);
  QCOMPARE(tl.instances().size(), r.series.instanceNames.size());
  QCOMPARE(tl.clients().size(), r.series.clientNames.size());
  const std::size_t ticks = tl.instances().front().t.size();
  QVERIFY(ticks >= 900);
  for (const InstanceTimeline& it : tl.instances()) {
    QCOMPARE(it.t.size(), ticks);
    QCOMPARE(it.errorRate.size(), ticks);
    QCOMPARE(it.throughput.size(), ticks);
    for (std::size_t k = 0; k < ticks; ++k) {
      QVERIFY(it.errorRate[k] >= 0 && it.errorRate[k] <= 1);
      QVERIFY(it.slowRate[k] >= 0 && it.slowRate[k] <= 1);
      if (k > 0) QVERIFY(it.t[k] > it.t[k - 1]);
    }
    checkTiling(it.bands, tl.end());
  }
  auto find = [&](const char* name) -> const InstanceTimeline& {
    for (const InstanceTimeline& it : tl.instances())
      if (it.name == name) return it;
    return tl.instances().front();
  };
  const InstanceTimeline& leaking = find("chat-72b-3");
  QCOMPARE(leaking.name, std::string("chat-72b-3"));
  bool open = false;
  for (const StateBand& b : leaking.bands) open = open || b.state == S::Open;
  QVERIFY2(open, "the leaking instance must show an OPEN band");
  const InstanceTimeline& healthy = find("chat-72b-4");
  QCOMPARE(healthy.bands.size(), std::size_t{1});
  QCOMPARE(healthy.bands.front().state, S::Closed);
  // Throughput summed over the run matches the instance's attempts in the report, within the
  // answers still in flight at the end (the series counts answers, the report attempts).
  double answers = 0;
  for (double v : healthy.throughput) answers += v * static_cast<double>(r.sc.tick) / 1e6;
  std::uint64_t attempts = 0;
  for (const auto& in : r.report.instances)
    if (in.name == "chat-72b-4") attempts = in.attempts;
  QVERIFY(std::abs(answers - static_cast<double>(attempts)) <= 0.01 * attempts + 50);
  // The FP rate over time adds up to the report's: per-tick judged blocks sum to its
  // denominator, and each sliding-minute value is a share or NaN (nothing blocked).
  double judged = 0, would = 0;
  for (const InstanceTimeline& it : tl.instances()) {
    QCOMPARE(it.fpRate.size(), it.t.size());
    for (std::size_t k = 0; k < it.t.size(); ++k) {
      judged += it.blockedJudged[k];
      would += it.blockedWouldSucceed[k];
      QVERIFY(std::isnan(it.fpRate[k]) || (it.fpRate[k] >= 0 && it.fpRate[k] <= 1));
    }
  }
  QCOMPARE(judged, static_cast<double>(r.report.falsePositive.den));
  QCOMPARE(would, static_cast<double>(r.report.falsePositive.num));
  QVERIFY(judged > 0);
  bool anyFp = false;
  for (double v : leaking.fpRate) anyFp = anyFp || !std::isnan(v);
  QVERIFY(anyFp);
  // p99 is the window's: a number where the window held calls, none (NaN, drawn as a gap)
  // where it held none — the leaking instance's open spells — never a fast-looking 0 ms.
  const auto leakingId = static_cast<std::uint32_t>(&leaking - tl.instances().data());
  std::size_t k = 0, gaps = 0;
  for (const sim::InstanceTick& row : r.series.instances) {
    if (row.instance != leakingId) continue;
    const double p = leaking.p99Ms.at(k++);
    QCOMPARE(std::isnan(p), row.windowCalls == 0);
    gaps += std::isnan(p);
  }
  QCOMPARE(k, ticks);
  QVERIFY(gaps > 0);
  // Clients: availability is a share or NaN (no request ended in the tick).
  for (const ClientTimeline& ct : tl.clients())
    for (double a : ct.availability) QVERIFY(std::isnan(a) || (a >= 0 && a <= 1));
  QVERIFY(tl.clients().front().core);  // customer-service is core
}

void TstTimeline::markersFromFaults() {
  const Run r = runSeed000(true, seconds(1500));
  const RunTimeline tl = RunTimeline::build(r.series, r.events.events, r.report, r.sc.tick);
  for (const InstanceTimeline& it : tl.instances()) {
    for (std::size_t k = 1; k < it.markers.size(); ++k)
      QVERIFY(it.markers[k - 1].at <= it.markers[k].at);
    if (it.name != "chat-72b-3") {
      // Only the benign jitter (a blip, a stall) on the others: start and end, nothing else.
      for (const Marker& m : it.markers) {
        QVERIFY2(m.label.rfind("benign ", 0) == 0, m.label.c_str());
        QVERIFY(m.kind == Marker::Kind::FaultStart || m.kind == Marker::Kind::FaultEnd);
      }
      continue;
    }
    // The leak starts at 5 min, is detected (TTD) and ends at 20 min with the restart.
    QVERIFY(it.markers.size() >= 3);
    QCOMPARE(it.markers.front().kind, Marker::Kind::FaultStart);
    QCOMPARE(it.markers.front().at, seconds(300));
    bool detected = false, ended = false;
    for (const Marker& m : it.markers) {
      if (m.kind == Marker::Kind::Detected) {
        detected = true;
        QCOMPARE(m.at, seconds(300) + r.report.faults.front().ttd);
        // Detection is the first OPEN: the band that starts there is OPEN.
        const StateBand* b = tl.bandAt(&it - tl.instances().data(), m.at);
        QVERIFY(b && b->state == S::Open && b->start == m.at);
      }
      if (m.kind == Marker::Kind::FaultEnd) {
        ended = true;
        QCOMPARE(m.at, seconds(1200));
      }
    }
    QVERIFY(detected && ended);
  }
  // The baseline's breakers only watch: METRICS_ONLY throughout, "would open" marks instead.
  const Run b = runSeed000(false, seconds(1500));
  const RunTimeline bt = RunTimeline::build(b.series, b.events.events, b.report, b.sc.tick);
  std::size_t wouldOpen = 0;
  for (const InstanceTimeline& it : bt.instances()) {
    QCOMPARE(it.bands.size(), std::size_t{1});
    QCOMPARE(it.bands.front().state, S::MetricsOnly);
    for (const Marker& m : it.markers) wouldOpen += m.kind == Marker::Kind::WouldOpen;
  }
  QCOMPARE(wouldOpen, static_cast<std::size_t>(b.report.wouldOpens));
}

void TstTimeline::scrubberLookups() {
  const Run r = runSeed000(true, seconds(120));
  const RunTimeline tl = RunTimeline::build(r.series, r.events.events, r.report, r.sc.tick);
  const std::vector<double>& t = tl.instances().front().t;
  QCOMPARE(tl.indexAt(0), std::size_t{0});
  QCOMPARE(tl.indexAt(seconds(1)), std::size_t{0});  // the first tick ends at 1 s
  QCOMPARE(tl.indexAt(seconds(10)), std::size_t{9});
  QCOMPARE(tl.indexAt(seconds(10) + 500000), std::size_t{9});  // between ticks: the last one
  QCOMPARE(tl.indexAt(seconds(100000)), t.size() - 1);
  const StateBand* b = tl.bandAt(0, seconds(60));
  QVERIFY(b && b->start <= seconds(60) && seconds(60) < b->end);
  QVERIFY(tl.bandAt(0, tl.end()) == nullptr);  // past the end of the run
}

void TstTimeline::kpiDeltas() {
  const Run base = runSeed000(false, seconds(1500));
  const Run prot = runSeed000(true, seconds(1500));
  const std::vector<KpiRow> rows = kpiRows(prot.report, &base.report, nullptr);
  QVERIFY(rows.size() >= 8);
  for (const KpiRow& row : rows) {
    QVERIFY(!row.previous);
    QVERIFY(!row.deltaPrevious());
    if (row.current && row.baseline) {
      QCOMPARE(*row.deltaBaseline(), *row.current - *row.baseline);
    } else {
      QVERIFY(!row.deltaBaseline());  // n/a stays n/a, never 0
    }
    if (row.name == "core availability during faults") {
      QCOMPARE(*row.current, *prot.report.coreAvailabilityInFault.value());
      QVERIFY(*row.deltaBaseline() > 0.2);  // protection helps by a wide margin
    }
    if (row.name.rfind("false-positive rate", 0) == 0 || row.name == "false trips per hour") {
      QVERIFY(!row.baseline);  // nothing is blocked without protection: n/a
      QVERIFY(!row.higherIsBetter);
    }
    if (row.name == "  of which recovery lag")
      QCOMPARE(*row.current, *prot.report.fpRecoveryLag.value());
  }
  // Per client, core first, each equal to that client's own availability in both runs.
  std::vector<const KpiRow*> clients;
  for (const KpiRow& row : rows)
    if (row.perClient) clients.push_back(&row);
  QCOMPARE(clients.size(), prot.report.clients.size());
  bool seenNonCore = false;
  for (const KpiRow* row : clients) {
    const bool core = row->name.find("(core)") != std::string::npos;
    QVERIFY2(!(core && seenNonCore), row->name.c_str());  // no core client after a non-core one
    seenNonCore = seenNonCore || !core;
    for (std::size_t c = 0; c < prot.report.clients.size(); ++c)
      if (row->name.find(" " + prot.report.clients[c].name) != std::string::npos) {
        QCOMPARE(*row->current, *prot.report.clients[c].availability.value());
        QCOMPARE(*row->baseline, *base.report.clients[c].availability.value());
      }
  }
  // Against itself as "previous": every delta is 0 where defined.
  for (const KpiRow& row : kpiRows(prot.report, nullptr, &prot.report))
    if (row.current) QCOMPARE(*row.deltaPrevious(), 0.0);
}

// The policy's SLA classes, each a row under the in-quota SLA row with its target and budget in
// the name, its attainment now, in the baseline and the previous run matched by class name.
void TstTimeline::slaClassRows() {
  sim::RunReport cur, base;
  auto cls = [](const char* name, double target, Micros latency, std::uint64_t num) {
    sim::SlaClassReport s;
    s.name = name;
    s.target = target;
    s.latency = latency;
    s.attained = {num, 1000};
    return s;
  };
  cur.slaClasses = {cls("core", 0.9999, seconds(3), 990), cls("fallback", 0.99, seconds(30), 995)};
  base.slaClasses = {cls("fallback", 0.99, seconds(30), 900)};  // a class the baseline lacks
  const std::vector<KpiRow> rows = kpiRows(cur, &base, nullptr);
  std::size_t sla = rows.size();
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].name == "SLA attainment (in-quota)") sla = i;
  QVERIFY(sla + 2 < rows.size());
  QCOMPARE(rows[sla + 1].name, std::string("  SLA class · core (99.99 %, 3s)"));
  QCOMPARE(*rows[sla + 1].current, 0.99);
  QVERIFY(!rows[sla + 1].baseline);
  QCOMPARE(rows[sla + 2].name, std::string("  SLA class · fallback (99 %, 30s)"));
  QCOMPARE(*rows[sla + 2].baseline, 0.9);
  QCOMPARE(*rows[sla + 2].deltaBaseline(), 0.995 - 0.9);
  QVERIFY(rows[sla + 2].higherIsBetter);
  // Each class row carries its own target; the table says met or missed by it.
  QCOMPARE(*rows[sla + 1].target, 0.9999);
  QCOMPARE(judgeTarget(rows[sla + 1].current, std::nullopt, rows[sla + 1].target, true),
           HeadlineTile::Verdict::Fail);
  QCOMPARE(judgeTarget(rows[sla + 2].current, std::nullopt, rows[sla + 2].target, true),
           HeadlineTile::Verdict::Pass);
}

void TstTimeline::verdictReadsTheInterval_data() {
  QTest::addColumn<double>("mean");
  QTest::addColumn<double>("lo");
  QTest::addColumn<double>("hi");
  QTest::addColumn<int>("seeds");
  QTest::addColumn<bool>("higherIsBetter");
  QTest::addColumn<double>("target");
  QTest::addColumn<int>("want");
  using V = HeadlineTile::Verdict;
  QTest::newRow("whole interval above a floor")
      << 0.97 << 0.96 << 0.98 << 10 << true << 0.95 << int(V::Pass);
  QTest::newRow("mean meets, interval straddles")
      << 0.96 << 0.93 << 0.99 << 10 << true << 0.95 << int(V::Unsure);
  QTest::newRow("whole interval under a floor")
      << 0.92 << 0.90 << 0.94 << 10 << true << 0.95 << int(V::Fail);
  QTest::newRow("ceiling: interval straddles")
      << 25.0 << 20.0 << 40.0 << 10 << false << 30.0 << int(V::Unsure);
  QTest::newRow("ceiling: whole interval under")
      << 25.0 << 20.0 << 29.0 << 10 << false << 30.0 << int(V::Pass);
  QTest::newRow("one seed: the value decides")
      << 0.96 << 0.96 << 0.96 << 1 << true << 0.95 << int(V::Pass);
  QTest::newRow("some seed never detected")
      << qInf() << 12.0 << qInf() << 10 << false << 30.0 << int(V::Unsure);
}

void TstTimeline::verdictReadsTheInterval() {
  QFETCH(double, mean);
  QFETCH(double, lo);
  QFETCH(double, hi);
  QFETCH(int, seeds);
  QFETCH(bool, higherIsBetter);
  QFETCH(double, target);
  QFETCH(int, want);
  const sim::SeedInterval i{mean, lo, hi, static_cast<std::uint32_t>(seeds)};
  QCOMPARE(int(judgeTarget(mean, i, target, higherIsBetter)), want);
  // The tile reads it from its row.
  KpiRow row;
  row.name = higherIsBetter ? "availability" : "TTD (worst)";
  row.unit = higherIsBetter ? "share" : "s";
  row.higherIsBetter = higherIsBetter;
  row.current = mean;
  row.currentInterval = i;
  HeadlineTargets t;
  t.bounds[higherIsBetter ? "availability" : "ttd"] = target;
  const std::vector<HeadlineTile> tiles = headline({row}, t);
  QCOMPARE(tiles.size(), std::size_t(1));
  QCOMPARE(int(tiles[0].verdict), want);
}

void TstTimeline::seedIntervalWithAMiss() {
  // One seed never detected the fault (TTD ∞): no t interval; it spans the values.
  const auto i = sim::seedInterval({12.0, 20.0, std::numeric_limits<double>::infinity()});
  QVERIFY(i);
  QCOMPARE(i->n, 3u);
  QVERIFY(std::isinf(i->mean) && i->mean > 0);
  QCOMPARE(i->lo, 12.0);
  QVERIFY(std::isinf(i->hi));
  const auto finite = sim::seedInterval({12.0, 20.0});
  QCOMPARE(finite->mean, 16.0);
  QVERIFY(finite->lo < 12.0 && finite->hi > 20.0);  // Student's t, wider than the values
}

void TstTimeline::clientFallShowsOnTheTile() {
  sim::RunReport cur, prev;
  auto client = [](const char* name, std::uint64_t ok) {
    sim::ClientReport c;
    c.name = name;
    c.availability = {ok, 1000};
    return c;
  };
  // The total holds at 99.5 % while one client falls 3 pp and the other gains.
  cur.availability = prev.availability = {1990, 2000};
  cur.clients = {client("billing", 960), client("search", 1000)};
  prev.clients = {client("billing", 990), client("search", 970)};
  auto tile = [&] {
    const std::vector<HeadlineTile> tiles =
        headline(kpiRows(cur, nullptr, &prev), HeadlineTargets::defaults());
    return *std::find_if(tiles.begin(), tiles.end(),
                         [](const HeadlineTile& t) { return t.key == "availability"; });
  };
  QCOMPARE(tile().warning, std::string("▼ billing -3.0 pp"));
  cur.clients[0].availability = {990, 1000};  // no client fell: nothing to warn of
  QVERIFY(tile().warning.empty());
}

// Each real fault's TTD and MTTR under the means, matched to the other runs by position; a
// benign fault has none, an undetected one is n/a.
void TstTimeline::perFaultRows() {
  auto fault = [](const char* inst, Micros start, bool benign, std::optional<Micros> ttd) {
    sim::FaultReport f;
    f.kind = sim::FaultKind::LatencyDrift;
    f.instance = inst;
    f.start = start;
    f.benign = benign;
    f.detected = ttd.has_value();
    f.ttd = ttd.value_or(kForever);
    f.restored = f.detected;
    f.mttr = f.detected ? *ttd + seconds(60) : kForever;
    return f;
  };
  sim::RunReport cur, prev;
  cur.faults = {fault("chat-3", seconds(300), false, seconds(72)),
                fault("chat-1", seconds(400), true, std::nullopt),
                fault("chat-2", seconds(500), false, std::nullopt)};
  prev.faults = {fault("chat-3", seconds(300), false, seconds(30)),
                 fault("chat-1", seconds(400), true, std::nullopt),
                 fault("chat-2", seconds(500), false, seconds(40))};
  const std::vector<KpiRow> rows = kpiRows(cur, nullptr, &prev);
  std::vector<const KpiRow*> ttd, mttr;
  for (const KpiRow& r : rows) {
    if (r.name.rfind("  TTD · ", 0) == 0) ttd.push_back(&r);
    if (r.name.rfind("  onset → full · ", 0) == 0) mttr.push_back(&r);
  }
  QCOMPARE(ttd.size(), std::size_t(2));  // the benign one has no row
  QCOMPARE(mttr.size(), std::size_t(2));
  QVERIFY(ttd[0]->name.find("chat-3") != std::string::npos);
  QVERIFY(ttd[0]->name.find("T+00:05:00") != std::string::npos);
  QCOMPARE(*ttd[0]->current, 72.0);
  QCOMPARE(*ttd[0]->deltaPrevious(), 42.0);
  QVERIFY(!ttd[0]->higherIsBetter);
  QCOMPARE(*mttr[0]->current, 132.0);
  // No longer caught: TTD ∞ (kpis.md), not a blank that reads as nothing to see.
  QVERIFY(std::isinf(*ttd[1]->current) && *ttd[1]->current > 0);
  QCOMPARE(*ttd[1]->previous, 40.0);
  QVERIFY(std::isinf(*ttd[1]->deltaPrevious()));
  // The misses beside the mean TTD, and the headline's TTD tile: ∞ and FAIL, whatever the
  // mean of the faults that were detected (72 s here; 30 s the target).
  const auto never = std::find_if(rows.begin(), rows.end(), [](const KpiRow& r) {
    return r.name == "real faults never detected";
  });
  QVERIFY(never != rows.end());
  QCOMPARE(*never->current, 1.0);
  QCOMPARE(*never->previous, 0.0);
  HeadlineTargets targets = HeadlineTargets::defaults();
  cur.meanTtd = seconds(20);  // a mean that would pass on its own
  const auto tiles = headline(kpiRows(cur, nullptr, &prev), targets);
  const auto tile = std::find_if(tiles.begin(), tiles.end(),
                                 [](const HeadlineTile& t) { return t.key == "ttd"; });
  QVERIFY(tile != tiles.end());
  QVERIFY(std::isinf(*tile->value));
  QCOMPARE(tile->verdict, HeadlineTile::Verdict::Fail);
  QCOMPARE(tile->detail, std::string("1 never detected · 20 s mean"));
  // A run that misses none is judged on its worst fault, not its mean: 72 s fails the 30 s
  // target though the mean (20 s) meets it.
  prev.faults[2].detected = false;
  cur.faults[2].detected = true;
  cur.faults[2].ttd = seconds(25);
  auto ttdTile = [&] {
    const std::vector<HeadlineTile> tiles = headline(kpiRows(cur, nullptr, &prev), targets);
    return *std::find_if(tiles.begin(), tiles.end(),
                         [](const HeadlineTile& t) { return t.key == "ttd"; });
  };
  QCOMPARE(*ttdTile().value, 72.0);
  QCOMPARE(ttdTile().verdict, HeadlineTile::Verdict::Fail);
  QCOMPARE(ttdTile().detail, std::string("20 s mean"));
  cur.faults[0].ttd = seconds(28);
  QCOMPARE(*ttdTile().value, 28.0);
  QCOMPARE(ttdTile().verdict, HeadlineTile::Verdict::Pass);
  // Without real faults there is no worst: n/a, no verdict.
  cur.faults.clear();
  QVERIFY(!ttdTile().value);
  QCOMPARE(ttdTile().verdict, HeadlineTile::Verdict::NoData);
}

void TstTimeline::slowThreshold_data() {
  QTest::addColumn<double>("k");
  QTest::addColumn<qlonglong>("floorUs");
  QTest::addColumn<qlonglong>("absoluteUs");
  QTest::addColumn<qlonglong>("initialUs");
  QTest::addColumn<double>("baselineMs");
  QTest::addColumn<double>("want");  // NaN: nothing is slow yet
  const double nan = std::numeric_limits<double>::quiet_NaN();
  QTest::newRow("learned: k x baseline") << 3.0 << 200000LL << 0LL << 0LL << 800.0 << 2400.0;
  QTest::newRow("learned: floor wins") << 3.0 << 5000000LL << 0LL << 0LL << 800.0 << 5000.0;
  QTest::newRow("absolute overrides") << 3.0 << 200000LL << 1500000LL << 0LL << 800.0 << 1500.0;
  QTest::newRow("learning, no initial") << 3.0 << 200000LL << 0LL << 0LL << 0.0 << nan;
  QTest::newRow("learning, initial") << 2.0 << 200000LL << 0LL << 400000LL << 0.0 << 800.0;
}

void TstTimeline::slowThreshold() {
  QFETCH(double, k);
  QFETCH(qlonglong, floorUs);
  QFETCH(qlonglong, absoluteUs);
  QFETCH(qlonglong, initialUs);
  QFETCH(double, baselineMs);
  QFETCH(double, want);
  InstanceTimeline it;
  it.t = {1, 2};
  it.baselineP99Ms = {baselineMs, baselineMs};
  SlowConfig slow;
  slow.k = k;
  slow.floor = floorUs;
  slow.absolute = absoluteUs;
  slow.initialBaseline = initialUs;
  const std::vector<double> got = slowThresholdMs(it, slow);
  QCOMPARE(got.size(), std::size_t{2});
  if (std::isnan(want))
    QVERIFY(std::isnan(got[1]));
  else
    QCOMPARE(got[1], want);
}

// Health puts the open breaker first at a moment it is open, and back in name order once all
// are closed; model grouping keeps each model's instances together in first-seen model order.
void TstTimeline::displayOrders() {
  const Run r = runSeed000(true, seconds(900));
  const RunTimeline tl = RunTimeline::build(r.series, r.events.events, r.report, r.sc.tick);
  const auto& insts = tl.instances();
  std::size_t leaky = insts.size();
  for (std::size_t i = 0; i < insts.size(); ++i)
    if (insts[i].name == "chat-72b-3") leaky = i;
  QVERIFY(leaky < insts.size());
  Micros openAt = -1;
  for (const StateBand& b : insts[leaky].bands)
    if (b.state == S::Open) {
      openAt = (b.start + b.end) / 2;
      break;
    }
  QVERIFY(openAt > 0);
  QCOMPARE(displayOrder(tl, TileOrder::Health, openAt).front(), leaky);
  const auto byName = displayOrder(tl, TileOrder::Name, openAt);
  for (std::size_t i = 1; i < byName.size(); ++i)
    QVERIFY(insts[byName[i - 1]].name < insts[byName[i]].name);
  QCOMPARE(displayOrder(tl, TileOrder::Health, 0), byName);  // all healthy: by name
  const auto byModel = displayOrder(tl, TileOrder::Model, 0);
  QCOMPARE(insts[byModel.front()].model, insts.front().model);
  int switches = 0;
  for (std::size_t i = 1; i < byModel.size(); ++i)
    switches += insts[byModel[i - 1]].model != insts[byModel[i]].model;
  QCOMPARE(switches, 1);  // two models, each one block
}

// Intervals over seeds for the same rows, matched by name: each defined row gets one around
// the seeds' mean, over as many seeds as define it; the first seed is the shown run.
void TstTimeline::kpiIntervals() {
  sim::Scenario sc = sim::loadScenarioFile(SPILLWAY_RESOURCES_DIR "/scenarios/seed-000.yaml");
  sc.duration = seconds(1500);
  const sim::SeedRuns runs = sim::runSeeds(sc, 4, 2);
  const std::vector<KpiRow> rows =
      withIntervals(kpiRows(runs.protectedRuns[0], &runs.baseline[0], nullptr), runs);
  int withInterval = 0;
  for (const KpiRow& row : rows) {
    if (!row.current) continue;
    QVERIFY2(row.currentInterval, row.name.c_str());
    const sim::SeedInterval& i = *row.currentInterval;
    QVERIFY(i.n >= 1 && i.n <= 4);
    QVERIFY2(i.lo <= i.mean + 1e-12 && i.mean <= i.hi + 1e-12, row.name.c_str());
    ++withInterval;
  }
  QVERIFY(withInterval >= 8);
  auto find = [&](const std::string& name) -> const KpiRow& {
    for (const KpiRow& r : rows)
      if (r.name == name) return r;
    throw std::runtime_error(name);
  };
  // Availability is defined on every seed, in both runs; the seeds differ, so the interval
  // has a width.
  const KpiRow& a = find("availability");
  QCOMPARE(a.currentInterval->n, 4u);
  QCOMPARE(a.baselineInterval->n, 4u);
  QVERIFY(a.currentInterval->hi > a.currentInterval->lo);
  double sum = 0;
  for (const sim::RunReport& r : runs.protectedRuns) sum += *r.availability.value();
  QVERIFY(std::abs(a.currentInterval->mean - sum / 4) < 1e-12);
  // The value shown beside an interval is its mean (the first seed's value may lie outside
  // it), and Δ baseline compares means; the previous policy ran one seed, so no Δ previous.
  const std::vector<KpiRow> withPrevious = withIntervals(
      kpiRows(runs.protectedRuns[0], &runs.baseline[0], &runs.protectedRuns[1]), runs);
  for (const KpiRow& row : withPrevious) {
    QVERIFY2(!row.previous, row.name.c_str());
    if (row.currentInterval) QCOMPARE(*row.current, row.currentInterval->mean);
    if (row.baselineInterval) QCOMPARE(*row.baseline, row.baselineInterval->mean);
  }
  QVERIFY(*a.current != *runs.protectedRuns[0].availability.value());
}

// Interception is among the faults that spread in the baseline run (kpis.md): a fault that
// did not spread without protection counts for nothing, and with nothing spread it is n/a —
// not the protected run's own share of faults that did not spread.
void TstTimeline::interceptionIsPaired_data() {
  QTest::addColumn<QString>("baselineSpread");  // per fault: s = spread, . = did not
  QTest::addColumn<QString>("protectedSpread");
  QTest::addColumn<double>("expected");  // -1: n/a
  QTest::newRow("nothing spread in the baseline") << "..."
                                                  << "..." << -1.0;
  QTest::newRow("one of three spread, intercepted") << ".s."
                                                    << "..." << 1.0;
  QTest::newRow("two spread, one intercepted") << "ss."
                                               << ".s." << 0.5;
  QTest::newRow("spread only under the policy") << "s.."
                                                << "s.s" << 0.0;
}

void TstTimeline::interceptionIsPaired() {
  QFETCH(QString, baselineSpread);
  QFETCH(QString, protectedSpread);
  QFETCH(double, expected);
  auto run = [](const QString& spread) {
    sim::RunReport r;
    for (QChar c : spread) {
      sim::FaultReport f;
      f.intercepted = c != 's';
      r.faults.push_back(f);
    }
    return r;
  };
  const sim::RunReport baseline = run(baselineSpread), protectedRun = run(protectedSpread);
  auto interception = [](const std::vector<KpiRow>& rows) -> const KpiRow& {
    for (const KpiRow& r : rows)
      if (r.name == "fault interception rate") return r;
    throw std::runtime_error("no interception row");
  };
  const KpiRow& row = interception(kpiRows(protectedRun, &baseline, &protectedRun));
  QVERIFY(!row.baseline);  // undefined for the baseline itself
  if (expected < 0) {
    QVERIFY(!row.current);
  } else {
    QVERIFY(row.current);
    QCOMPARE(*row.current, expected);
    QCOMPARE(*row.previous, expected);
  }
  QVERIFY(!interception(kpiRows(protectedRun, nullptr, nullptr)).current);  // no baseline
}

// Would-open ▼: merged when closer than 8 px, or when the next would stand on the count beside
// a cluster (here 5 px + 6 px a digit + 4 px: a count of 2 ends 15 px right of its ▼). A busy
// lane drew ▼ over the digits: marks 0, 4 and 12 px made "2" at 0 and a ▼ at 12 on the 2.
void TstTimeline::markClusters_data() {
  QTest::addColumn<QList<double>>("xs");
  QTest::addColumn<QList<int>>("lanes");  // empty: all in lane 0
  QTest::addColumn<QList<int>>("counts");
  QTest::newRow("apart") << QList<double>{0, 20, 40} << QList<int>{} << QList<int>{1, 1, 1};
  QTest::newRow("a close pair") << QList<double>{0, 4} << QList<int>{} << QList<int>{2};
  QTest::newRow("a ▼ on the count joins")
      << QList<double>{0, 4, 12} << QList<int>{} << QList<int>{3};
  QTest::newRow("clear of the count")
      << QList<double>{0, 4, 16} << QList<int>{} << QList<int>{2, 1};
  QTest::newRow("two-digit count reaches further")
      << QList<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 20} << QList<int>{} << QList<int>{11};
  QTest::newRow("lanes never merge") << QList<double>{0, 2} << QList<int>{0, 1} << QList<int>{1, 1};
  QTest::newRow("a lone ▼ keeps 8 px")
      << QList<double>{0, 9, 30} << QList<int>{} << QList<int>{1, 1, 1};
}

void TstTimeline::markClusters() {
  QFETCH(QList<double>, xs);
  QFETCH(QList<int>, lanes);
  QFETCH(QList<int>, counts);
  std::vector<std::size_t> lane(xs.size(), 0);
  for (int i = 0; i < lanes.size(); ++i) lane[i] = static_cast<std::size_t>(lanes[i]);
  const auto countEnd = [](int n) { return 5.0 + 6.0 * QString::number(n).size() + 4.0; };
  const auto got = clusterMarks(lane, std::vector<double>(xs.begin(), xs.end()), 8.0, countEnd);
  QList<int> n;
  std::size_t next = 0;
  for (const MarkCluster& c : got) {
    QCOMPARE(c.first, next);  // clusters cover the marks in order
    next += static_cast<std::size_t>(c.count);
    n << c.count;
  }
  QCOMPARE(n, counts);
}

// Seed 003's 误伤 tile said 0.1 % PASS while 96.7 % of the blocks stopped good calls of the
// faulty instance: the collateral share stands under its two parts (kpis.md: beside it).
void TstTimeline::fpTileShowsCollateral() {
  sim::RunReport r;
  r.falsePositive = {1, 1000};
  r.fpFalseTrip = {0, 1000};
  r.fpRecoveryLag = {1, 1000};
  r.collateral = {967, 1000};
  const auto tiles = headline(kpiRows(r, nullptr, nullptr), HeadlineTargets::defaults());
  const auto fp =
      std::find_if(tiles.begin(), tiles.end(), [](const HeadlineTile& t) { return t.key == "fp"; });
  QVERIFY(fp != tiles.end());
  QCOMPARE(fp->verdict, HeadlineTile::Verdict::Pass);  // 误伤 is what the target judges
  QCOMPARE(fp->detail, std::string("trips 0.0 % · lag 0.1 %\ncollateral 96.7 %"));
}

QTEST_GUILESS_MAIN(TstTimeline)
#include "tst_timeline.moc"
