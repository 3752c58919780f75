// The capacity-knee search (sim::findKnee) on a model small enough to reason about: one
// instance with 4 slots and ~100 ms calls serves at most c / E[S] = 4 / 0.1005 s ≈ 39.8 req/s
// (lognormal σ = 0.1: E[S] = 100 ms · e^0.005). Below that the queue of 32 stays short and
// nothing fails; above it the queue fills, the instance answers 503 and the waits approach
// 32 / 39.8 ≈ 0.8 s — the knee rule (P99 > 1.8 × the first step's, errors > 1 %) must fire at
// the first step over capacity and not before.
#include <QtTest>

#include <cmath>
#include <string>

#include "spillway/sim/knee.hpp"
#include "spillway/sim/scenario_yaml.hpp"

using namespace spillway;
using namespace spillway::sim;

namespace {

const double kCapacity = 4 / (0.1 * std::exp(0.1 * 0.1 / 2));  // req/s

Scenario tiny(double rate) {
  return parseScenario(
      "name: tiny\nseed: 3\nduration: 1m\nmodels: [{name: m, instances: 1, "
      "slots: 4, queue: 32, service: {base: 100ms, sigma: 0.1}}]\n"
      "clients: [{name: c, model: m, rate: " +
          std::to_string(rate) + ", timeout: 30s}]\n",
      "tiny.yaml");
}

KneeOptions shortSteps(double from, double to, double step) {
  KneeOptions o;
  o.from = from;
  o.to = to;
  o.step = step;
  o.maxStep = seconds(150);
  o.minStep = seconds(60);
  o.chunk = seconds(30);  // measured part: the last two chunks, 60 s
  return o;
}

}  // namespace

class TstSimKnee : public QObject {
  Q_OBJECT

 private slots:
  void kneeAtFirstStepOverCapacity_data();
  void kneeAtFirstStepOverCapacity();
  void noKneeBelowCapacity();
  void faultsAreIgnored();
  void sessionClientOffersTurns();
  void growingBacklogNeverSettles();
  void seed003KneeAgreesWithItsTable();
};

void TstSimKnee::kneeAtFirstStepOverCapacity_data() {
  QTest::addColumn<double>("baseRate");
  QTest::addColumn<double>("from");
  QTest::addColumn<double>("to");
  QTest::addColumn<double>("step");
  // 16 req/s × 1, 2, 3 = 16, 32, 48: ρ = 0.40, 0.80, 1.21.
  QTest::newRow("16/s x1..3") << 16.0 << 1.0 << 3.0 << 1.0;
  // 10 req/s × 0.5 … 6 = 5 … 60: ρ crosses 1 between 3.5 (35/s) and 4.5 (45/s).
  QTest::newRow("10/s x0.5..6") << 10.0 << 0.5 << 6.0 << 1.0;
}

void TstSimKnee::kneeAtFirstStepOverCapacity() {
  QFETCH(double, baseRate);
  QFETCH(double, from);
  QFETCH(double, to);
  QFETCH(double, step);
  const KneeOptions o = shortSteps(from, to, step);
  int progressCalls = 0;
  const KneeResult r = findKnee(tiny(baseRate), o, [&](const KneeStep&) { ++progressCalls; });
  const int expectedSteps = static_cast<int>(std::floor((to - from) / step + 1e-9)) + 1;
  QCOMPARE(static_cast<int>(r.steps.size()), expectedSteps);
  QCOMPARE(progressCalls, expectedSteps);
  QVERIFY(r.knee.has_value());
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const KneeStep& s = r.steps[i];
    const double offered = baseRate * (from + step * static_cast<double>(i));
    QCOMPARE(s.offeredRps, offered);
    QVERIFY(s.ran >= o.minStep && s.ran <= o.maxStep);
    const QString what = QStringLiteral("step %1 (%2/s): p99 %3 ms, errors %4, util %5, good/s %6")
                             .arg(i)
                             .arg(offered)
                             .arg(s.p99Ms)
                             .arg(s.errors.value().value_or(-1))
                             .arg(s.utilization)
                             .arg(s.throughput);
    if (offered < 0.9 * kCapacity) {
      // Below capacity: no failures, busy slots = λ E[S] (Little), everything served. The
      // utilization is sampled once per tick over the 60 s measured: busy ≈ Poisson(λ E[S])
      // per sample, so its mean has SD √(λ E[S] / 60) / c; goodput is a Poisson count over
      // 60 s. Allow 4.5 SD each.
      const double busy = offered / kCapacity * 4;
      QVERIFY2(s.errors.num == 0, qPrintable(what));
      QVERIFY2(std::abs(s.utilization - busy / 4) < 4.5 * std::sqrt(busy / 60) / 4,
               qPrintable(what));
      QVERIFY2(std::abs(s.throughput - offered) < 4.5 * std::sqrt(offered * 60) / 60,
               qPrintable(what));
      QVERIFY2(i < *r.knee, qPrintable(what));
    } else if (offered > 1.1 * kCapacity) {
      // Over capacity: saturated slots, goodput = capacity, the excess turned away.
      QVERIFY2(s.utilization > 0.97, qPrintable(what));
      QVERIFY2(std::abs(s.throughput - kCapacity) < 0.05 * kCapacity, qPrintable(what));
      // What cannot be served is turned away (queue full): errors ≈ 1 − capacity / offered;
      // 5 points cover the Poisson noise of 60 s of arrivals and the queue's own share.
      QVERIFY2(std::abs(s.errors.value().value_or(0) - (1 - kCapacity / offered)) < 0.05,
               qPrintable(what));
    }
  }
  // The knee is the first step over capacity.
  const KneeStep& k = r.steps[*r.knee];
  QVERIFY2(k.offeredRps > kCapacity, qPrintable(QString::number(k.offeredRps)));
  QVERIFY(*r.knee > 0);
  QVERIFY(r.steps[*r.knee - 1].offeredRps < kCapacity);
  QVERIFY(k.p99Ms > o.p99Ratio * r.steps.front().p99Ms);
}

void TstSimKnee::noKneeBelowCapacity() {
  // 10 req/s × 0.5 … 2.5 = 5 … 25 req/s, at most 63 % of capacity.
  const KneeResult r = findKnee(tiny(10), shortSteps(0.5, 2.5, 0.5));
  QCOMPARE(r.steps.size(), std::size_t{5});
  QVERIFY(!r.knee.has_value());
  for (const KneeStep& s : r.steps) QCOMPARE(s.errors.num, std::uint64_t{0});
  // The table says so.
  QVERIFY(QString::fromStdString(kneeTable(r, shortSteps(0.5, 2.5, 0.5))).contains("No knee"));
}

// Steps run without the scenario's faults: an outage for the whole run does not create a knee.
void TstSimKnee::faultsAreIgnored() {
  Scenario sc = tiny(10);
  FaultSpec f;
  f.kind = FaultKind::Outage;
  f.target = "m-1";
  f.at = 0;
  sc.faults.push_back(f);
  const KneeResult r = findKnee(sc, shortSteps(0.5, 1.5, 0.5));
  QVERIFY(!r.knee.has_value());
  for (const KneeStep& s : r.steps) QVERIFY(s.throughput > 0.8 * s.offeredRps);
}

// A session client's rate counts conversations; the knee's offered load counts requests
// (rate × mean turns), the unit of good/s and of the capacity it is compared with.
void TstSimKnee::sessionClientOffersTurns() {
  Scenario sc = tiny(2);
  sc.clients[0].sessions.turns = 4;
  sc.clients[0].sessions.think = seconds(1);
  const KneeResult r = findKnee(sc, shortSteps(1, 2, 1));
  QCOMPARE(r.steps.size(), std::size_t{2});
  QCOMPARE(r.steps[0].offeredRps, 8.0);
  QCOMPARE(r.steps[1].offeredRps, 16.0);
  // And about that many requests per second are served (2 × 4 = 8/s; Poisson over 60 s, the
  // session lengths add variance: 25 %).
  QVERIFY2(std::abs(r.steps[0].throughput - 8) < 2,
           qPrintable(QString::number(r.steps[0].throughput)));
}

// Twice the capacity into a queue that never fills, callers patient for 1000 s: nothing fails
// within the step (no breaker), but the backlog grows by ~40 requests a second — the step must
// never count as settled, and its backlog is reported.
void TstSimKnee::growingBacklogNeverSettles() {
  const Scenario sc = parseScenario(
      "name: backlog\nseed: 5\nduration: 1m\nmodels: [{name: m, instances: 1, slots: 4, "
      "queue: 1000000, service: {base: 100ms, sigma: 0.1}}]\n"
      "clients: [{name: c, model: m, rate: 80, timeout: 1000s}]\n",
      "backlog.yaml");
  KneeOptions o = shortSteps(1, 1, 1);
  o.protection = false;  // a breaker would trip on the growing waits and turn calls away
  const KneeResult r = findKnee(sc, o);
  QCOMPARE(r.steps.size(), std::size_t{1});
  const KneeStep& s = r.steps[0];
  QVERIFY(!s.stable);
  QCOMPARE(s.ran, seconds(150));
  // ~80 − 39.8 = 40 more requests a second than are answered, over 150 s.
  QVERIFY2(s.backlog > 5000 && s.backlog < 7000, qPrintable(QString::number(s.backlog)));
  QCOMPARE(s.overdue, std::uint64_t{0});  // nobody has waited 1000 s yet
}

// Seed 003's stepped test: the knee is where its table says the rule first holds (P99 over
// 1.8 × the base step's and errors over 1 %), and that is 240 % of the daily peak.
void TstSimKnee::seed003KneeAgreesWithItsTable() {
  const Scenario sc = loadScenarioFile(SPILLWAY_RESOURCES_DIR "/scenarios/seed-003.yaml");
  const KneeOptions o;
  const KneeResult r = findKnee(sc, o);
  QVERIFY(r.knee.has_value());
  for (std::size_t i = 1; i < r.steps.size(); ++i) {
    const KneeStep& s = r.steps[i];
    const bool rule =
        s.p99Ms > o.p99Ratio * r.steps.front().p99Ms && s.errors.value().value_or(0) > o.errorRate;
    if (i < *r.knee) QVERIFY2(!rule, qPrintable(QString::number(i)));
    if (i == *r.knee) QVERIFY(rule);
  }
  QCOMPARE(qRound(r.steps[*r.knee].factor * 100), 240);
  QVERIFY(QString::fromStdString(kneeTable(r, o)).contains("Knee at 240 % load"));
}

QTEST_GUILESS_MAIN(TstSimKnee)
#include "tst_sim_knee.moc"
