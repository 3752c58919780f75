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
};

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
