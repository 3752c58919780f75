// Seed 000, the GPU-memory-leak incident (resources/scenarios/seed-000.yaml), end to end: one
// of four instances slows down up to 12x without returning errors. Without protection the
// slow calls hold the gateway's budget (max_requests) and the callers' pools, retries pile on,
// and the leak spreads to the healthy instances (they turn traffic away); with the breakers
// the leaking instance is taken out and the others carry the load. The assertions are the
// qualitative claims of docs/scenario.md, with margins wide enough that they hold for any
// seed that reproduces the incident, not the exact figures of one run.
#include <QtTest>

#include <string>

#include "spillway/input_error.hpp"
#include "spillway/sim/report.hpp"
#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/simulator.hpp"

using namespace spillway;
using namespace spillway::sim;

class TstSimSeed000 : public QObject {
  Q_OBJECT

 private slots:
  void degradeIsTheChainOnly();
  void restorationSideBySide();
  void initTestCase();
  void bothRunsComplete();
  void leakIsDetectedAndIsolated();
  void cascadeWithoutProtection();
  void protectionWinsOnKpis();

 private:
  Scenario sc_;
  RunReport base_, prot_;
};

// Degrade success counts only the originals that went down the degrade chain (kpis.md): every
// backup or cache answer did; the baseline, a plain forwarder, has no chain at all (n/a); the
// many originals re-picked to a healthy instance of the group are their own row.
void TstSimSeed000::degradeIsTheChainOnly() {
  QCOMPARE(base_.degradeSuccess.den, std::uint64_t{0});
  QVERIFY(!base_.degradeSuccess.value().has_value());
  QVERIFY(base_.reroutedSuccess.den > 1000);  // retries of failed and timed-out tries
  const std::uint64_t chainAnswers = prot_.answeredBy[1] + prot_.answeredBy[2];
  QVERIFY(chainAnswers > 0);
  QVERIFY(prot_.degradeSuccess.num >= chainAnswers);
  QVERIFY2(prot_.reroutedSuccess.den > 10 * prot_.degradeSuccess.den,
           qPrintable(QStringLiteral("%1 re-picked, %2 degraded")
                          .arg(prot_.reroutedSuccess.den)
                          .arg(prot_.degradeSuccess.den)));
  std::uint64_t perClient = 0;
  for (const ClientReport& c : prot_.clients) {
    QVERIFY(c.degradeSuccess.den + c.reroutedSuccess.den <= c.originals);
    perClient += c.degradeSuccess.den;
  }
  QCOMPARE(perClient, prot_.degradeSuccess.den);
}

// The seed's "15 min by manual switching → ~90 s": service restoration (onset → the callers'
// availability back) side by side, and self-healing (trip → full traffic) over the two faults
// that end by themselves — the leak ends only by the hand restart and is not among them.
void TstSimSeed000::restorationSideBySide() {
  QVERIFY(!prot_.faults[0].selfEnding);
  QVERIFY(prot_.faults[1].selfEnding && prot_.faults[2].selfEnding);
  QCOMPARE(prot_.selfHealed, std::uint64_t{2});
  QVERIFY2(*prot_.meanSelfHealing >= seconds(60) && *prot_.meanSelfHealing <= seconds(120),
           qPrintable(QString::number(*prot_.meanSelfHealing / 1e6)));
  QCOMPARE(base_.serviceRestored, std::uint64_t{3});
  QCOMPARE(prot_.serviceRestored, std::uint64_t{3});
  // The leak: back only after the restart at 20 min (15 min after the onset), in the baseline.
  QVERIFY(*base_.faults[0].serviceRestoration >= seconds(15 * 60));
  QVERIFY(*base_.worstServiceRestoration >= seconds(10 * 60));
  QVERIFY(*prot_.worstServiceRestoration <= seconds(3 * 60));
}

void TstSimSeed000::initTestCase() {
  try {
    sc_ = loadScenarioFile(SPILLWAY_RESOURCES_DIR "/scenarios/seed-000.yaml");
  } catch (const InputError& e) {
    QFAIL(e.what());
  }
  SimOptions off;
  off.protection = false;
  base_ = simulate(sc_, off);
  prot_ = simulate(sc_, SimOptions{});
}

void TstSimSeed000::bothRunsComplete() {
  for (const RunReport* r : {&base_, &prot_}) {
    QCOMPARE(r->scenario, sc_.name);
    QCOMPARE(r->seed, sc_.seed);
    QCOMPARE(r->inFlightAtEnd, std::uint64_t{0});  // the 3 min drain is enough
    QVERIFY(r->originals > 50000);                 // ~40/s over 40 min
    std::uint64_t ended = 0;
    for (std::uint64_t e : r->ends) ended += e;
    QCOMPARE(ended, r->originals);
  }
  QVERIFY(!base_.protection);
  QVERIFY(prot_.protection);
  // The three faults give one row each (a `recover` gives none), and so do the three benign
  // events after them; those are not counted as faults.
  QCOMPARE(base_.faults.size(), std::size_t{6});
  QCOMPARE(prot_.faults.size(), std::size_t{6});
  for (std::size_t f = 0; f < prot_.faults.size(); ++f) QCOMPARE(prot_.faults[f].benign, f >= 3);
  QCOMPARE(prot_.interception.den, std::uint64_t{3});
  const FaultReport& leak = prot_.faults[0];
  QCOMPARE(leak.kind, FaultKind::LatencyDrift);
  QCOMPARE(leak.instance, std::string("chat-72b-3"));
  QCOMPARE(leak.start, seconds(5 * 60));
  QVERIFY(leak.ended);
  QCOMPARE(leak.end, seconds(20 * 60));  // the manual restart (`recover`)
}

void TstSimSeed000::leakIsDetectedAndIsolated() {
  const FaultReport& leak = prot_.faults[0];
  QVERIFY(leak.detected);
  QVERIFY(leak.ttd > 0 && leak.ttd < leak.end - leak.start);  // finite, within the fault
  QVERIFY(prot_.meanTtd.has_value());
  QVERIFY(leak.intercepted);
  QVERIFY(leak.spreadTo.empty());
  // Every fault intercepted.
  QCOMPARE(prot_.interception.den, std::uint64_t{3});
  QCOMPARE(prot_.interception.num, prot_.interception.den);
  QVERIFY(prot_.opens > 0);
}

void TstSimSeed000::cascadeWithoutProtection() {
  // The baseline never blocks; its breakers only say they would have opened.
  QCOMPARE(base_.opens, std::uint64_t{0});
  QVERIFY(base_.wouldOpens > 0);
  QCOMPARE(base_.falsePositive.den, std::uint64_t{0});
  QVERIFY(!base_.falsePositive.value().has_value());  // n/a, not 0
  // The leak spreads: a healthy instance turns traffic away because the budget is full.
  const FaultReport& leak = base_.faults[0];
  QVERIFY(!leak.intercepted);
  QVERIFY(!leak.spreadTo.empty());
  QVERIFY(leak.spreadTo != "chat-72b-3");
  QVERIFY(leak.spreadAt >= leak.start);
  QVERIFY(base_.overflow > 0);
  QCOMPARE(prot_.overflow, std::uint64_t{0});
}

void TstSimSeed000::protectionWinsOnKpis() {
  const double bInt = base_.interception.value().value_or(1);
  const double pInt = prot_.interception.value().value_or(0);
  QVERIFY2(bInt < pInt, qPrintable(QStringLiteral("%1 vs %2").arg(bInt).arg(pInt)));
  QCOMPARE(pInt, 1.0);

  const double bCore = base_.coreAvailabilityInFault.value().value_or(1);
  const double pCore = prot_.coreAvailabilityInFault.value().value_or(0);
  const QString core =
      QStringLiteral("core availability during faults: %1 -> %2").arg(bCore).arg(pCore);
  QVERIFY2(pCore >= bCore + 0.20, qPrintable(core));
  QVERIFY2(pCore >= 0.90, qPrintable(core));
  QVERIFY(prot_.availability.value().value_or(0) > base_.availability.value().value_or(1));

  QVERIFY2(base_.p99Ms > prot_.p99Ms,
           qPrintable(QStringLiteral("p99 %1 ms vs %2 ms").arg(base_.p99Ms).arg(prot_.p99Ms)));
  // Retries pile on without protection: more tries per original.
  QVERIFY(base_.triesPerRequest.value().value_or(0) > prot_.triesPerRequest.value().value_or(0));
}

QTEST_GUILESS_MAIN(TstSimSeed000)
#include "tst_sim_seed000.moc"
