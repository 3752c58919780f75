// "What moves what" (issue 23): every delta of the sensitivity model is the difference of two
// simulations the test runs itself — the current policy and the stepped one — so the chart
// shows what a separate run would show; the same inputs give the same result on any thread
// count; a cancel stops the runs early; a replayed incident goes through the sweep engine.
#include <QTest>

#include <atomic>
#include <cmath>

#include <fstream>
#include <iterator>

#include "spillway/fault_annotations.hpp"
#include "spillway/policy_params.hpp"
#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/simulator.hpp"
#include "spillway/view/sensitivity.hpp"

using namespace spillway;
using namespace spillway::view;

namespace {

sim::Scenario seed000() {
  return sim::loadScenarioFile(SPILLWAY_RESOURCES_DIR "/scenarios/seed-000.yaml");
}

// The run report's KPIs, read here without the model's help.
struct Kpis {
  std::optional<double> fp, ttd, avail;
};
Kpis simulateWith(const sim::Scenario& scenario, const std::string& key, std::optional<double> v) {
  sim::Scenario sc = scenario;
  if (v && !setBreakerParam(sc.policy.breaker, key, *v)) qFatal("unknown key %s", key.c_str());
  const sim::RunReport r = sim::simulate(sc);
  Kpis k{r.falsePositive.value(), std::nullopt, r.availability.value()};
  if (r.meanTtd) k.ttd = static_cast<double>(*r.meanTtd) / 1e6;
  return k;
}

void compareDelta(std::optional<double> got, std::optional<double> a, std::optional<double> b,
                  double scale, const char* what) {
  QVERIFY2(got.has_value() == (a && b), what);
  if (got) QVERIFY2(std::abs(*got - (*a - *b) * scale) < 1e-9, what);
}

bool sameKpis(const SensitivityKpis& a, const SensitivityKpis& b) {
  return a.falsePositive == b.falsePositive && a.ttdSeconds == b.ttdSeconds &&
         a.availability == b.availability && a.missed == b.missed;
}

bool same(const Sensitivity& a, const Sensitivity& b) {
  if (a.rows.size() != b.rows.size() || !sameKpis(a.current, b.current)) return false;
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    const SensitivityRow &x = a.rows[i], &y = b.rows[i];
    if (x.key != y.key || x.impact != y.impact || x.down.has_value() != y.down.has_value() ||
        x.up.has_value() != y.up.has_value())
      return false;
    if (x.down && (x.down->value != y.down->value || !sameKpis(x.down->kpis, y.down->kpis)))
      return false;
    if (x.up && (x.up->value != y.up->value || !sameKpis(x.up->kpis, y.up->kpis))) return false;
  }
  return true;
}

}  // namespace

class TestSensitivity : public QObject {
  Q_OBJECT
 private slots:
  void stepsStayInRange();
  void deltasAreTwoIndependentRuns();
  void seedsAverageIndependentRuns();
  void deterministicAcrossThreads();
  void cancelStopsEarly();
  void replayGoesThroughTheSweep();
};

// One step each way, clamped: a share at 1 cannot go up, a zero sustain cannot go down, a count
// moves by whole calls, a small value still moves by the key's grain.
void TestSensitivity::stepsStayInRange() {
  BreakerConfig b;
  b.trip.errorRate = 1;
  b.trip.sustain = 0;
  b.minCalls = 2;
  b.trip.slowRate = 0.4;
  const StepValues rate = sensitivitySteps(b, "trip.error_rate");
  QCOMPARE(rate.up, std::nullopt);
  QCOMPARE(rate.down, std::optional<double>(0.8));
  const StepValues sustain = sensitivitySteps(b, "trip.sustain");
  QCOMPARE(sustain.down, std::nullopt);
  QCOMPARE(sustain.up, std::optional<double>(1));
  const StepValues calls = sensitivitySteps(b, "min_calls");
  QCOMPARE(calls.down, std::optional<double>(1));
  QCOMPARE(calls.up, std::optional<double>(3));
  const StepValues slow = sensitivitySteps(b, "trip.slow_rate");
  QVERIFY(std::abs(*slow.down - 0.32) < 1e-12);
  QVERIFY(std::abs(*slow.up - 0.5) < 1e-12);
  QCOMPARE(sensitivitySteps(b, "no.such_key").up, std::nullopt);
}

void TestSensitivity::deltasAreTwoIndependentRuns() {
  const sim::Scenario sc = seed000();
  SensitivityOptions o;
  o.threads = 2;
  const Sensitivity s = computeSensitivity(sc, sc.policy, o);
  QVERIFY(!s.cancelled);
  QCOMPARE(s.rows.size(), sensitivityKeys().size());
  const Kpis base = simulateWith(sc, "", std::nullopt);
  QCOMPARE(s.current.falsePositive, base.fp);
  QCOMPARE(s.current.ttdSeconds, base.ttd);
  std::size_t steps = 0, moved = 0;
  for (const SensitivityRow& r : s.rows) {
    qInfo("%-26s %8s  down %8s: %+.2f pp %+.1f s   up %8s: %+.2f pp %+.1f s   impact %.2f",
          r.key.c_str(), formatParamValue(r.current, r.unit).c_str(),
          r.down ? formatParamValue(r.down->value, r.unit).c_str() : "-",
          r.down ? r.down->falsePositivePp.value_or(0) : 0.0,
          r.down ? r.down->ttdSeconds.value_or(0) : 0.0,
          r.up ? formatParamValue(r.up->value, r.unit).c_str() : "-",
          r.up ? r.up->falsePositivePp.value_or(0) : 0.0, r.up ? r.up->ttdSeconds.value_or(0) : 0.0,
          r.impact);
    QCOMPARE(getBreakerParam(sc.policy.breaker, r.key), std::optional<double>(r.current));
    for (const auto& step : {r.down, r.up}) {
      if (!step) continue;
      ++steps;
      const Kpis k = simulateWith(sc, r.key, step->value);
      compareDelta(step->falsePositivePp, k.fp, base.fp, 100, r.key.c_str());
      compareDelta(step->ttdSeconds, k.ttd, base.ttd, 1, r.key.c_str());
      compareDelta(step->availabilityPp, k.avail, base.avail, 100, r.key.c_str());
      moved += std::abs(step->falsePositivePp.value_or(0)) > 1e-9;
    }
    QVERIFY(!r.down || r.down->value < r.current);
    QVERIFY(!r.up || r.up->value > r.current);
  }
  QCOMPARE(s.runs, steps + 1);
  QVERIFY2(moved > 0, "on seed-000 some knob moves 误伤");
  for (std::size_t i = 1; i < s.rows.size(); ++i) QVERIFY(s.rows[i - 1].impact >= s.rows[i].impact);
  QVERIFY(s.rows.front().impact > s.rows.back().impact);
}

// Several seeds: each KPI is the mean of the runs under seeds s … s + n − 1.
void TestSensitivity::seedsAverageIndependentRuns() {
  const sim::Scenario sc = seed000();
  SensitivityOptions o;
  o.threads = 2;
  o.seeds = 3;
  o.keys = {"trip.sustain"};
  const Sensitivity s = computeSensitivity(sc, sc.policy, o);
  QCOMPARE(s.runs, std::size_t(9));
  QCOMPARE(s.seeds, 3u);
  const SensitivityRow& r = s.rows.at(0);
  QVERIFY(r.up.has_value());
  double base = 0, up = 0;
  for (std::uint64_t k = 0; k < 3; ++k) {
    sim::Scenario seeded = sc;
    seeded.seed = sc.seed + k;
    base += *simulateWith(seeded, "", std::nullopt).fp / 3;
    up += *simulateWith(seeded, r.key, r.up->value).fp / 3;
  }
  QVERIFY(std::abs(*s.current.falsePositive - base) < 1e-12);
  QVERIFY(std::abs(*r.up->falsePositivePp - (up - base) * 100) < 1e-9);
}

void TestSensitivity::deterministicAcrossThreads() {
  const sim::Scenario sc = seed000();
  Policy p = sc.policy;
  p.breaker.trip.slowRate = 0.3;
  SensitivityOptions one, two;
  one.threads = 1;
  two.threads = 2;
  one.keys = two.keys = {"trip.slow_rate", "trip.sustain", "open.duration", "ramp.duration"};
  const Sensitivity a = computeSensitivity(sc, p, one);
  const Sensitivity b = computeSensitivity(sc, p, two);
  QCOMPARE(a.rows.size(), std::size_t(4));
  QVERIFY(same(a, b));
  QVERIFY(same(a, computeSensitivity(sc, p, one)));
}

// The flag is raised once the first run is done: the rest never start.
void TestSensitivity::cancelStopsEarly() {
  const sim::Scenario sc = seed000();
  std::atomic<bool> cancel{false};
  std::atomic<int> done{0};
  SensitivityOptions o;
  o.threads = 1;
  o.cancel = &cancel;
  o.progress = [&](std::size_t, std::size_t) {
    ++done;
    cancel = true;
  };
  const Sensitivity s = computeSensitivity(sc, sc.policy, o);
  QVERIFY(s.cancelled);
  QCOMPARE(done.load(), 1);
  QVERIFY(s.runs > 2);
}

// A recorded incident: each step is a candidate of runSweep, scored as replayIncident scores it.
void TestSensitivity::replayGoesThroughTheSweep() {
  const std::string dir = SPILLWAY_RESOURCES_DIR "/traces/";
  std::ifstream in(dir + "seed000-sample.faults.jsonl");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  auto reader = JsonlReader::openFile(dir + "seed000-sample.jsonl", false);
  const std::vector<IncidentTrace> incidents{
      IncidentTrace::read([&](CallRecord& r) { return reader->next(r); }, "seed000-sample",
                          parseFaultAnnotations(text, "faults"))};
  const Policy policy;
  SensitivityOptions o;
  o.threads = 2;
  o.keys = {"trip.slow_rate", "open.duration"};
  const Sensitivity s = computeSensitivity(incidents, policy, o);
  QVERIFY(!s.simulated);
  QCOMPARE(s.rows.size(), std::size_t(2));
  SweepScore base;
  base.add(replayIncident(policy, incidents.front()));
  QCOMPARE(s.current.falsePositive, base.fpRateOrNa());
  for (const SensitivityRow& r : s.rows)
    for (const auto& step : {r.down, r.up}) {
      QVERIFY(step.has_value());
      Policy p = policy;
      setBreakerParam(p.breaker, r.key, step->value);
      SweepScore k;
      k.add(replayIncident(p, incidents.front()));
      compareDelta(step->falsePositivePp, k.fpRateOrNa(), base.fpRateOrNa(), 100, r.key.c_str());
      compareDelta(step->ttdSeconds, k.meanTtdSeconds(), base.meanTtdSeconds(), 1, r.key.c_str());
    }
}

QTEST_APPLESS_MAIN(TestSensitivity)
#include "tst_sensitivity.moc"
