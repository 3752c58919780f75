// KPIs over several seeds: the interval arithmetic on known values, reports in seed order
// whatever the threads, and an interval that covers a known answer.
#include <QtTest>

#include <cmath>

#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/seeds.hpp"

using namespace spillway;
using namespace spillway::sim;

class TstSimSeeds : public QObject {
  Q_OBJECT

 private slots:
  void intervalOfKnownValues();
  void sameBytesWhateverTheThreads();
  void intervalCoversTheKnownAvailability();
  void aVerdictOnFewEventsSaysSo();
  void aBadRunInAWorkerIsAnInputError();
  void aBreakerOnlyPolicyKeepsTheScenariosSections();
};

namespace {

// A core client of SLA class `core`, defined by the scenario's own policy with a degrade chain.
const char* kClassed =
    "version: 1\nname: classed\nduration: 20s\nseed: 5\n"
    "policy:\n  degrade: {max_quality_drop: 0.3}\n"
    "  sla_classes:\n    core: {availability: 0.999, latency: 1s}\n"
    "models:\n  - {name: m, instances: 2, service: {base: 50ms, sigma: 0.1}}\n"
    "clients:\n  - {name: app, model: m, rate: 5, timeout: 2s, sla_class: core}\n";

}  // namespace

// Every multi-run command (--seeds, --modes, drills, sweeps over a scenario) runs its jobs on
// worker threads. A run that finds its input inconsistent — here a client naming an SLA class
// the policy lacks — throws there; that must come back as the input error it is (file:line:
// key, exit 2), not end the process (std::terminate, exit 134).
void TstSimSeeds::aBadRunInAWorkerIsAnInputError() {
  Scenario sc = parseScenario(kClassed, "classed.yaml");
  sc.policy.slaClasses.clear();
  for (const unsigned threads : {1u, 2u}) {
    try {
      runSeeds(sc, 3, threads);
      QFAIL("accepted");
    } catch (const InputError& e) {
      QCOMPARE(e.file(), std::string("classed.yaml"));
      QCOMPARE(e.line(), 12L);  // the client's line
      QCOMPARE(e.field(), std::string("clients[0].sla_class"));
      QVERIFY2(std::string(e.what()).find("has no class 'core'") != std::string::npos, e.what());
    }
  }
}

// A breaker-only policy (simulate --policy, sweep --policy, a runbook's policy) replaces the
// breaker alone: the scenario's models, degrade chain, limits and SLA classes stay in force.
// A policy with any of those sections replaces the scenario's whole.
void TstSimSeeds::aBreakerOnlyPolicyKeepsTheScenariosSections() {
  Scenario sc = parseScenario(kClassed, "classed.yaml");
  Policy breakerOnly;
  breakerOnly.name = "b";
  breakerOnly.breaker.trip.errorRate = 0.1;
  usePolicy(sc, breakerOnly);
  QCOMPARE(sc.policy.name, std::string("b"));
  QCOMPARE(sc.policy.breaker.trip.errorRate, 0.1);
  QVERIFY(sc.policy.degrade.enabled);
  QCOMPARE(sc.policy.slaClasses.count("core"), std::size_t{1});
  QCOMPARE(runSeeds(sc, 2, 2).protectedRuns.size(), std::size_t{2});  // runs: the class exists
  Policy whole = breakerOnly;
  whole.degrade.enabled = true;
  usePolicy(sc, whole);
  QVERIFY(sc.policy.slaClasses.empty());
}

// Three seeds with one spread fault each: a zero-width interval at 100 %, "better" than the
// seed's 95 % — on three faults. The verdict says so; on thousands of requests it does not.
void TstSimSeeds::aVerdictOnFewEventsSaysSo() {
  SeedRuns runs;
  for (int i = 0; i < 3; ++i) {
    RunReport r;
    r.pairedInterception = {1, 1};
    r.coreAvailabilityInFault = {990, 1000};
    runs.protectedRuns.push_back(r);
    runs.baseline.push_back(RunReport{});
  }
  Scenario sc;
  sc.name = "seed-000-gpu-leak";
  const QString table = QString::fromStdString(seedsTable(runs, sc));
  QString interception, core;
  for (const QString& l : table.split('\n')) {
    if (l.contains("fault interception rate")) interception = l;
    if (l.contains("core availability during faults")) core = l;
  }
  QVERIFY2(interception.endsWith("better (only n=3)"), qPrintable(interception));
  QVERIFY2(core.endsWith("better"), qPrintable(core));
}

// 1 … 5: mean 3, s = √2.5, t(0.975; 4) = 2.7764451 → half-width 2.7764451 · √2.5 / √5.
void TstSimSeeds::intervalOfKnownValues() {
  const auto i = seedInterval({1, 2, 3, 4, 5});
  QVERIFY(i.has_value());
  QCOMPARE(i->n, 5u);
  QCOMPARE(i->mean, 3.0);
  const double half = 2.7764451051977934 * std::sqrt(2.5) / std::sqrt(5.0);
  QVERIFY(std::abs(i->hi - (3 + half)) < 1e-9);
  QVERIFY(std::abs(i->lo - (3 - half)) < 1e-9);
  const auto one = seedInterval({0.7});
  QCOMPARE(one->lo, 0.7);
  QCOMPARE(one->hi, 0.7);
  QVERIFY(!seedInterval({}).has_value());
}

Scenario lossy() {
  // One instance; 10 % of calls fail and nobody retries: availability is 0.9 per request.
  return parseScenario(R"(name: lossy
duration: 120s
seed: 100
models: [{name: m, instances: 1, slots: 16, error_rate: 0.1, service: {base: 50ms, sigma: 0}}]
clients: [{name: c, model: m, rate: 20, timeout: 2s}]
)",
                       "lossy.yaml");
}

void TstSimSeeds::sameBytesWhateverTheThreads() {
  const Scenario sc = lossy();
  const SeedRuns one = runSeeds(sc, 6, 1), two = runSeeds(sc, 6, 2);
  QCOMPARE(seedsJson(one, sc), seedsJson(two, sc));
  QCOMPARE(one.protectedRuns.size(), std::size_t{6});
  for (std::size_t i = 0; i < 6; ++i) {
    QCOMPARE(one.protectedRuns[i].seed, sc.seed + i);
    QCOMPARE(reportJson(one.protectedRuns[i]), reportJson(two.protectedRuns[i]));
    QVERIFY(!one.baseline[i].protection);
  }
  // Different seeds, different runs.
  QVERIFY(one.protectedRuns[0].originals != one.protectedRuns[1].originals ||
          one.protectedRuns[0].availability.num != one.protectedRuns[1].availability.num);
}

void TstSimSeeds::intervalCoversTheKnownAvailability() {
  const Scenario sc = lossy();
  const SeedRuns runs = runSeeds(sc, 10);
  std::vector<double> avail;
  for (const RunReport& r : runs.baseline) avail.push_back(*r.availability.value());
  const auto i = seedInterval(avail);
  QVERIFY2(i->lo <= 0.9 && 0.9 <= i->hi,
           qPrintable(QStringLiteral("[%1, %2]").arg(i->lo).arg(i->hi)));
  QVERIFY(i->hi - i->lo > 0);  // ~2 400 requests a run: a spread of ~0.6 points
  QVERIFY(i->hi - i->lo < 0.02);
  // Every rate with its sample size (kpis.md): the requests of all the seeds together.
  std::uint64_t requests = 0, baselineRequests = 0;
  for (const RunReport& r : runs.protectedRuns) requests += r.availability.den;
  for (const RunReport& r : runs.baseline) baselineRequests += r.availability.den;
  const QString table = QString::fromStdString(seedsTable(runs, sc));
  QString row;
  for (const QString& l : table.split('\n'))
    if (l.contains("availability (within SLO)")) row = l;
  QVERIFY2(row.contains(QStringLiteral(" n=%1").arg(baselineRequests)) &&
               row.contains(QStringLiteral(" n=%1").arg(requests)),
           qPrintable(row));
}

QTEST_GUILESS_MAIN(TstSimSeeds)
#include "tst_sim_seeds.moc"
