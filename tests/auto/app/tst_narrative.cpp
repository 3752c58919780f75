// The incident narrative (issue 23) against the run it tells: every episode a breaker opened
// is in a trip line (or counted in a cluster), each detection carries the report's TTD, false
// trips add up to the report's, the lines are in time order and the summary quotes the
// report's 误伤 and its parts. The expected figures come from the run's own events and report,
// never from numbers written here.
#include <QTest>

#include <fstream>
#include <map>
#include <sstream>

#include "spillway/fault_annotations.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/simulator.hpp"
#include "spillway/telemetry.hpp"
#include "spillway/view/narrative.hpp"
#include "spillway/view/replay_timeline.hpp"
#include "spillway/view/time_format.hpp"

using namespace spillway;
using namespace spillway::view;

namespace {

struct Run {
  sim::Scenario sc;
  VectorSink events;
  sim::RunReport report;
};

Run simulate(const std::string& scenario, bool protection, bool sensitive) {
  Run r;
  r.sc = sim::loadScenarioFile(SPILLWAY_RESOURCES_DIR "/scenarios/" + scenario + ".yaml");
  // The shipped over-sensitive breaker trips on the scenario's benign jitter: false trips for
  // the narrative to tell (breaker only: the scenario's other sections stay).
  if (sensitive)
    r.sc.policy.breaker =
        loadPolicyFile(SPILLWAY_RESOURCES_DIR "/policies/oversensitive.yaml").breaker;
  sim::SimOptions opt;
  opt.protection = protection;
  opt.events = &r.events;
  sim::Simulator s(r.sc, opt);
  s.run();
  r.report = s.report();
  return r;
}

// The opens that start an episode (docs/kpis.md): OPEN or FORCED_OPEN from full traffic; an
// episode ends at RAMP_COMPLETE.
std::vector<Event> episodeOpens(const std::vector<Event>& events) {
  std::map<InstanceId, bool> inEpisode;
  std::vector<Event> out;
  for (const Event& e : events) {
    if (e.kind == EventKind::RampComplete) inEpisode[e.instance] = false;
    if (e.kind != EventKind::Transition) continue;
    if ((e.to == BreakerState::Open || e.to == BreakerState::ForcedOpen) &&
        !inEpisode[e.instance]) {
      inEpisode[e.instance] = true;
      out.push_back(e);
    }
  }
  return out;
}

std::string pct(std::optional<double> v) {
  if (!v) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", *v * 100);
  return buf;
}

bool isTrip(const NarrativeLine& l) {
  return l.kind == NarrativeKind::Trip || l.kind == NarrativeKind::FalseTrip;
}

std::uint64_t countOf(const std::vector<NarrativeLine>& lines, NarrativeKind kind) {
  std::uint64_t n = 0;
  for (const NarrativeLine& l : lines) n += l.kind == kind ? l.count : 0;
  return n;
}

const NarrativeLine* find(const std::vector<NarrativeLine>& lines, NarrativeKind kind,
                          const std::string& instance, Micros at) {
  for (const NarrativeLine& l : lines)
    if (l.kind == kind && l.instance == instance && l.at == at) return &l;
  return nullptr;
}

bool summarySays(const std::vector<NarrativeLine>& lines, const std::string& what) {
  for (const NarrativeLine& l : lines)
    if (l.kind == NarrativeKind::Summary && l.text.find(what) != std::string::npos) return true;
  return false;
}

// In time order, the summary last, and every line's zoom range holds its moment.
void checkOrder(const std::vector<NarrativeLine>& lines) {
  QVERIFY(!lines.empty());
  QCOMPARE(lines.back().kind, NarrativeKind::Summary);
  bool summary = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const NarrativeLine& l = lines[i];
    QVERIFY2(l.from <= l.at && l.at <= l.to && l.from < l.to, l.text.c_str());
    QVERIFY2(!summary || l.kind == NarrativeKind::Summary, l.text.c_str());
    summary = l.kind == NarrativeKind::Summary;
    if (i > 0 && !summary) QVERIFY2(lines[i - 1].at <= l.at, l.text.c_str());
  }
}

// Every episode's open is in a trip line of its instance: that line itself (count 1, at the
// open) or a cluster whose range holds it; the counts add up to the episodes.
void checkTrips(const std::vector<NarrativeLine>& lines, const std::vector<Event>& events) {
  const std::vector<Event> opens = episodeOpens(events);
  for (const Event& e : opens) {
    bool told = false;
    for (const NarrativeLine& l : lines)
      told = told || (isTrip(l) && l.instanceIndex == e.instance && l.from <= e.ts &&
                      e.ts <= l.to && (l.count > 1 || l.at == e.ts));
    QVERIFY2(told, qPrintable(QString("open at %1 µs not told").arg(e.ts)));
  }
  QCOMPARE(countOf(lines, NarrativeKind::Trip) + countOf(lines, NarrativeKind::FalseTrip),
           std::uint64_t(opens.size()));
  std::uint64_t would = 0;
  for (const Event& e : events) would += e.kind == EventKind::WouldOpen;
  QCOMPARE(countOf(lines, NarrativeKind::WouldOpen), would);
}

// Detections carry the report's TTD, self-ending restored faults its self-healing time.
void checkFaults(const std::vector<NarrativeLine>& lines, const sim::RunReport& r) {
  for (const sim::FaultReport& f : r.faults) {
    if (f.benign) continue;
    if (f.detected) {
      const NarrativeLine* trip = find(lines, NarrativeKind::Trip, f.instance, f.start + f.ttd);
      QVERIFY2(trip, f.instance.c_str());
      QVERIFY2(trip->text.find("TTD " + view::durationText(f.ttd)) != std::string::npos,
               trip->text.c_str());
    }
    if (f.restored && f.selfEnding) {
      const NarrativeLine* back =
          find(lines, NarrativeKind::Restored, f.instance, f.start + f.mttr);
      QVERIFY2(back, f.instance.c_str());
      QVERIFY2(
          back->text.find("self-healing " + view::durationText(f.fromTrip)) != std::string::npos,
          back->text.c_str());
    }
  }
}

Event transition(Micros ts, BreakerState from, BreakerState to, Reason why) {
  Event e = transitionEvent(ts, 0, from, to, why);
  e.slowRate = 0.5;
  e.calls = 40;
  return e;
}

Event rampComplete(Micros ts) {
  Event e = transition(ts, BreakerState::Closed, BreakerState::Closed, Reason::RampComplete);
  e.kind = EventKind::RampComplete;
  return e;
}

sim::RunReport oneInstance() {
  sim::RunReport r;
  r.simulated = seconds(3600);
  sim::InstanceReport i;
  i.name = "chat-a";
  i.model = "chat";
  r.instances.push_back(i);
  return r;
}

using S = BreakerState;

}  // namespace

class TstNarrative : public QObject {
  Q_OBJECT

 private slots:
  void simulatedRun_data();
  void simulatedRun();
  void flappingIsOneLine_data();
  void flappingIsOneLine();
  void probeRoundsAreOneLine();
  void replayedSample();
  void textHasTimes();
};

void TstNarrative::simulatedRun_data() {
  QTest::addColumn<QString>("scenario");
  QTest::addColumn<bool>("protection");
  QTest::addColumn<bool>("sensitive");
  QTest::newRow("seed-000 protected") << "seed-000" << true << false;
  QTest::newRow("seed-000 unprotected") << "seed-000" << false << false;
  QTest::newRow("seed-000 over-sensitive") << "seed-000" << true << true;
  QTest::newRow("seed-003 protected") << "seed-003" << true << false;
}

// The acceptance of issue 23: narrative lines for seed-000 match its events and its report.
void TstNarrative::simulatedRun() {
  QFETCH(QString, scenario);
  QFETCH(bool, protection);
  QFETCH(bool, sensitive);
  const Run run = simulate(scenario.toStdString(), protection, sensitive);
  const sim::RunReport& r = run.report;
  const auto lines = simulationNarrative(r, run.events.events, &run.sc);
  checkOrder(lines);
  checkTrips(lines, run.events.events);
  checkFaults(lines, r);
  if (protection) {
    QCOMPARE(countOf(lines, NarrativeKind::FalseTrip), r.blocks.falseTripEpisodes);
    QCOMPARE(countOf(lines, NarrativeKind::Trip) + countOf(lines, NarrativeKind::FalseTrip),
             r.blocks.episodes);
    QVERIFY(summarySays(lines, "误伤 " + pct(r.falsePositive.value())));
    QVERIFY(summarySays(lines, "false trips " + pct(r.fpFalseTrip.value())));
    QVERIFY(summarySays(lines, "recovery lag " + pct(r.fpRecoveryLag.value())));
    QVERIFY(summarySays(lines, std::to_string(r.opens) + " breaker opens"));
    if (r.meanTtd) QVERIFY(summarySays(lines, "TTD " + view::durationText(*r.meanTtd)));
    if (r.meanSelfHealing)
      QVERIFY(summarySays(lines, "self-healing " + view::durationText(*r.meanSelfHealing)));
  }
  if (sensitive) QVERIFY(r.blocks.falseTripEpisodes > 0);  // the row tests what it means to
  // A 40-minute run reads in a few dozen lines, however often the breakers flapped.
  QVERIFY2(lines.size() >= 5 && lines.size() <= 45, qPrintable(QString::number(lines.size())));
}

void TstNarrative::flappingIsOneLine_data() {
  QTest::addColumn<int>("episodes");
  QTest::addColumn<int>("tripLines");
  QTest::newRow("one") << 1 << 1;
  QTest::newRow("two, told one by one") << 2 << 2;
  QTest::newRow("three, clustered") << 3 << 1;
  QTest::newRow("twenty, clustered") << 20 << 1;
}

// An instance with no fault that opens again and again: false trips, clustered with a count.
void TstNarrative::flappingIsOneLine() {
  QFETCH(int, episodes);
  QFETCH(int, tripLines);
  std::vector<Event> events;
  for (int i = 0; i < episodes; ++i) {
    const Micros t = seconds(60) * (i + 1);
    events.push_back(transition(t, S::Closed, S::Open, Reason::SlowRate));
    events.push_back(transition(t + seconds(10), S::Open, S::HalfOpen, Reason::OpenElapsed));
    events.push_back(transition(t + seconds(12), S::HalfOpen, S::Closed, Reason::ProbeStreak));
    events.push_back(rampComplete(t + seconds(42)));
  }
  const auto lines = simulationNarrative(oneInstance(), events);
  checkOrder(lines);
  checkTrips(lines, events);
  int trips = 0;
  for (const NarrativeLine& l : lines) trips += isTrip(l);
  QCOMPARE(trips, tripLines);
  QCOMPARE(countOf(lines, NarrativeKind::FalseTrip), std::uint64_t(episodes));
  QCOMPARE(countOf(lines, NarrativeKind::Trip), std::uint64_t{0});
  const NarrativeLine& first = *std::find_if(lines.begin(), lines.end(), isTrip);
  QCOMPARE(first.instance, std::string("chat-a"));
  QCOMPARE(first.instanceIndex, std::size_t{0});
  QVERIFY(first.text.find("no real fault") != std::string::npos);
}

// Twenty failed probe rounds before the probes pass: one line that counts them.
void TstNarrative::probeRoundsAreOneLine() {
  std::vector<Event> events{transition(seconds(60), S::Closed, S::Open, Reason::SlowRate)};
  Micros t = seconds(60);
  for (int i = 0; i < 20; ++i) {
    events.push_back(transition(t += seconds(10), S::Open, S::HalfOpen, Reason::OpenElapsed));
    events.push_back(transition(t += seconds(2), S::HalfOpen, S::Open, Reason::ProbeFailed));
  }
  events.push_back(transition(t += seconds(10), S::Open, S::HalfOpen, Reason::OpenElapsed));
  events.push_back(transition(t += seconds(2), S::HalfOpen, S::Closed, Reason::ProbeStreak));
  events.push_back(rampComplete(t += seconds(30)));
  const auto lines = simulationNarrative(oneInstance(), events);
  checkOrder(lines);
  QCOMPARE(countOf(lines, NarrativeKind::Probing), std::uint64_t{41});
  int probing = 0;
  for (const NarrativeLine& l : lines)
    if (l.kind == NarrativeKind::Probing) {
      ++probing;
      QCOMPARE(l.at, seconds(70));
      QVERIFY2(l.text.find("21 probe rounds, 20 failed") != std::string::npos, l.text.c_str());
    }
  QCOMPARE(probing, 1);
  QVERIFY(find(lines, NarrativeKind::Recovered, "chat-a", t - seconds(30)));
  QVERIFY(find(lines, NarrativeKind::Restored, "chat-a", t));
}

// The built-in recording replayed: times on the replay's axis, the leak's TTD and 误伤 as the
// replay scored them.
void TstNarrative::replayedSample() {
  const Policy policy = loadPolicyFile(SPILLWAY_RESOURCES_DIR "/policies/default.yaml");
  std::ifstream in(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.faults.jsonl");
  std::stringstream text;
  text << in.rdbuf();
  const auto faults = parseFaultAnnotations(text.str(), "seed000-sample.faults.jsonl");
  ReplayTimelineBuilder b(policy, faults);
  auto reader = JsonlReader::openFile(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.jsonl", false);
  CallRecord rec;
  while (reader->next(rec)) b.feed(rec);
  const ReplayView v = b.finish();
  const auto lines = replayNarrative(v.kpis, v.events, v.origin);
  checkOrder(lines);
  std::vector<Event> shifted = v.events;
  for (Event& e : shifted) e.ts -= v.origin;
  checkTrips(lines, shifted);
  QVERIFY(!v.kpis.faults.empty());
  for (const FaultKpis& f : v.kpis.faults) {
    QVERIFY(f.score.detected);
    const NarrativeLine* trip =
        find(lines, NarrativeKind::Trip, f.fault.instance, f.score.firstOpen - v.origin);
    QVERIFY(trip);
    QVERIFY2(trip->text.find("TTD " + view::durationText(f.score.ttd)) != std::string::npos,
             trip->text.c_str());
  }
  QCOMPARE(countOf(lines, NarrativeKind::FalseTrip), v.kpis.blocks.falseTripEpisodes);
  QVERIFY(summarySays(lines, "误伤 " + pct(v.kpis.fpRate())));
  QVERIFY(summarySays(lines, std::to_string(v.kpis.opens) + " breaker opens"));
}

// The printed form: each line's time (run offset or wall clock) then its text.
void TstNarrative::textHasTimes() {
  std::vector<Event> events{transition(seconds(372), S::Closed, S::Open, Reason::SlowRate)};
  const auto lines = simulationNarrative(oneInstance(), events);
  const std::string offsets = narrativeText(lines);
  QVERIFY2(offsets.find("T+00:06:12  " + lines.front().text + "\n") != std::string::npos,
           offsets.c_str());
  const Micros origin = seconds(1718083440);  // 2024-06-11 05:24:00 UTC
  const std::string wall = narrativeText(lines, NarrativeClock{origin, true});
  QVERIFY2(wall.find("05:30:12  " + lines.front().text + "\n") != std::string::npos, wall.c_str());
  QCOMPARE(std::count(offsets.begin(), offsets.end(), '\n'), std::ptrdiff_t(lines.size()));
}

QTEST_GUILESS_MAIN(TstNarrative)
#include "tst_narrative.moc"
