// Calibration's next grid (issue 23): when no candidate meets the targets, the grid to sweep
// next is built around the candidate closest to them — past the edge it sits on, or refined
// around it inside the range or on a parameter's hard limit — and nothing is proposed when a
// candidate meets them. Scores are set by hand (TTD only), so the closest candidate is known.
#include <QTest>

#include <cmath>

#include "spillway/next_grid.hpp"
#include "spillway/sweep.hpp"

using namespace spillway;

namespace {

// A sweep of `key` over `values`, every fault detected; the TTD of candidate i is ttd[i] s.
SweepResult sweepOf(const std::string& key, const std::vector<double>& values,
                    const std::vector<double>& ttd) {
  SweepSpec spec;
  spec.params.push_back({key, values});
  SweepResult r;
  r.candidates = expandSweep(Policy{}, spec);
  for (double t : ttd) {
    SweepScore s;
    s.faults = s.detected = 1;
    s.ttdSum = static_cast<Micros>(std::llround(t * 1e6));
    r.scores.push_back(s);
  }
  r.pareto = paretoFront(r.scores);
  return r;
}

const std::vector<Target> kFastDetection = parseTargets("ttd<=10s", "test");

void compareAxis(const NextGridAxis& a, double from, double to, double step) {
  QVERIFY2(std::abs(a.from - from) < 1e-9, qPrintable(QString::number(a.from)));
  QVERIFY2(std::abs(a.to - to) < 1e-9, qPrintable(QString::number(a.to)));
  QVERIFY2(std::abs(a.step - step) < 1e-9, qPrintable(QString::number(a.step)));
}

}  // namespace

class TstNextGrid : public QObject {
  Q_OBJECT
 private slots:
  void nothingProposedWhenMet();
  void extendsPastTheEdge();
  void refinesInside();
  void refinesOnAHardLimit();
  void countsStayWhole();
  void twoAxesAndTheirArguments();
  void recoveryLagAddsRecoveryParameters_data();
  void recoveryLagAddsRecoveryParameters();
};

void TstNextGrid::nothingProposedWhenMet() {
  const SweepResult r = sweepOf("trip.slow_rate", {0.2, 0.3, 0.4}, {30, 20, 5});
  QVERIFY(calibrate(r, kFastDetection).chosen.has_value());
  QVERIFY(!proposeNextGrid(r, kFastDetection).has_value());
}

// TTD still falling at the top of the range: the next grid goes past it.
void TstNextGrid::extendsPastTheEdge() {
  const SweepResult r = sweepOf("trip.slow_rate", {0.2, 0.3, 0.4, 0.5}, {40, 30, 20, 15});
  QVERIFY(!calibrate(r, kFastDetection).chosen);
  const auto g = proposeNextGrid(r, kFastDetection);
  QVERIFY(g.has_value());
  QCOMPARE(g->around, std::size_t(3));
  QCOMPARE(g->axes.size(), std::size_t(1));
  QCOMPARE(g->axes[0].move, NextGridAxis::Move::ExtendedUp);
  compareAxis(g->axes[0], 0.4, 0.7, 0.1);  // two points past 0.5, one inside
  QCOMPARE(formatNextGrid(*g), std::string("trip.slow_rate 0.4..0.7 step 0.1"));
  // And at the bottom: the other way.
  const SweepResult low = sweepOf("trip.slow_rate", {0.2, 0.3, 0.4, 0.5}, {15, 20, 30, 40});
  const auto down = proposeNextGrid(low, kFastDetection);
  QCOMPARE(down->axes[0].move, NextGridAxis::Move::ExtendedDown);
  compareAxis(down->axes[0], 0.1, 0.3, 0.1);  // 0.0 is not a valid rate: one point past 0.2
}

void TstNextGrid::refinesInside() {
  const SweepResult r = sweepOf("trip.slow_rate", {0.2, 0.3, 0.4}, {40, 15, 30});
  const auto g = proposeNextGrid(r, kFastDetection);
  QVERIFY(g.has_value());
  QCOMPARE(g->around, std::size_t(1));
  QCOMPARE(g->axes[0].move, NextGridAxis::Move::Refined);
  compareAxis(g->axes[0], 0.2, 0.4, 0.05);
}

// A share at 1 cannot go up: the best there is refined toward the inside instead.
void TstNextGrid::refinesOnAHardLimit() {
  const SweepResult r = sweepOf("trip.error_rate", {0.8, 0.9, 1.0}, {40, 30, 15});
  const auto g = proposeNextGrid(r, kFastDetection);
  QCOMPARE(g->axes[0].move, NextGridAxis::Move::Refined);
  compareAxis(g->axes[0], 0.9, 1.0, 0.05);
}

void TstNextGrid::countsStayWhole() {
  const SweepResult r = sweepOf("half_open.success_streak", {1, 4, 7}, {40, 15, 30});
  const auto g = proposeNextGrid(r, kFastDetection);
  compareAxis(g->axes[0], 1, 7, 2);  // half of 3, rounded: whole probes
}

// Two axes: a fixed parameter stays one value; the arguments read back as the same grid and
// the closest candidate's point is on it.
void TstNextGrid::twoAxesAndTheirArguments() {
  SweepSpec spec;
  spec.params.push_back({"trip.sustain", {0, 5, 10}});
  spec.params.push_back({"slow.k", {3}});
  SweepResult r;
  r.candidates = expandSweep(Policy{}, spec);
  for (double t : {25.0, 12.0, 30.0}) {
    SweepScore s;
    s.faults = s.detected = 1;
    s.ttdSum = static_cast<Micros>(t * 1e6);
    r.scores.push_back(s);
  }
  const auto g = proposeNextGrid(r, kFastDetection);
  QVERIFY(g.has_value());
  QCOMPARE(formatNextGrid(*g), std::string("trip.sustain 0..10 step 2.5, slow.k 3"));
  const std::string args = nextGridArgs(*g);
  QCOMPARE(args, std::string("--param trip.sustain=0:10:2.5 --param slow.k=3"));
  const SweepParamRange sustain = parseSweepParam("trip.sustain=0:10:2.5", "next");
  QCOMPARE(sustain.values, (std::vector<double>{0, 2.5, 5, 7.5, 10}));
}

void TstNextGrid::recoveryLagAddsRecoveryParameters_data() {
  QTest::addColumn<int>("recoveryLag");
  QTest::addColumn<int>("falseTrip");
  QTest::addColumn<bool>("added");
  QTest::newRow("recovery lag dominates") << 30 << 10 << true;
  QTest::newRow("false trips dominate") << 10 << 30 << false;
}

// 误伤 of 40 % against a 5 % target: when most of it is recovery lag, a trip-only grid cannot
// reach the target, and the recovery parameters join the next grid from the policy's values
// (open 10 s, ramp 30 s, probes 10 %) toward a faster return.
void TstNextGrid::recoveryLagAddsRecoveryParameters() {
  QFETCH(int, recoveryLag);
  QFETCH(int, falseTrip);
  QFETCH(bool, added);
  Policy base;
  base.breaker.open.duration = seconds(10);
  base.breaker.ramp.duration = seconds(30);
  base.breaker.halfOpen.probeShare = 0.1;
  SweepSpec spec;
  spec.params.push_back({"trip.slow_rate", {0.2, 0.3, 0.4}});
  SweepResult r;
  r.candidates = expandSweep(base, spec);
  for (int i = 0; i < 3; ++i) {
    SweepScore s;
    s.faults = s.detected = 1;
    s.ttdSum = seconds(5);
    s.blocks.blocks = {static_cast<std::uint64_t>(falseTrip),
                       static_cast<std::uint64_t>(recoveryLag), 60};
    s.blocks.wouldSucceed = s.blocks.blocks;
    s.blocks.wouldSucceed[static_cast<int>(BlockClass::Collateral)] = 0;
    r.scores.push_back(s);
  }
  QCOMPARE(*r.scores[0].fpRateOrNa(), 0.4);
  const auto g = proposeNextGrid(r, parseTargets("fp<=0.05", "test"));
  QVERIFY(g.has_value());
  if (!added) {
    QCOMPARE(g->axes.size(), std::size_t(1));
    QVERIFY(g->why.empty());
    return;
  }
  QCOMPARE(g->axes.size(), std::size_t(4));
  compareAxis(g->axes[1], 2.5, 10, 2.5);
  compareAxis(g->axes[2], 0, 30, 10);
  compareAxis(g->axes[3], 0.1, 1, 0.3);
  QCOMPARE(g->axes[3].move, NextGridAxis::Move::Added);
  QVERIFY2(g->why.find("recovery lag is 30 of the 40 avoidable blocks") == 0, g->why.c_str());
}

QTEST_APPLESS_MAIN(TstNextGrid)
#include "tst_next_grid.moc"
