// Block classes (docs/kpis.md) on hand-built timelines: which blocks are false trips, recovery
// lag or collateral, what is a real fault, and how the headline 误伤 and its parts add up.
#include <QtTest>

#include "spillway/block_class.hpp"

using namespace spillway;

namespace {

Event transition(InstanceId id, Micros at, BreakerState from, BreakerState to) {
  return transitionEvent(at, id, from, to);
}

Event rampComplete(InstanceId id, Micros at) {
  Event e;
  e.ts = at;
  e.instance = id;
  e.kind = EventKind::RampComplete;
  return e;
}

// One episode of instance `id`: OPEN at `open`, a re-open after a failed probe, CLOSED and the
// ramp complete at `restored`.
void episode(BlockClassifier& c, InstanceId id, Micros open, Micros restored) {
  c.onEvent(transition(id, open, BreakerState::Closed, BreakerState::Open));
  c.onEvent(transition(id, open + seconds(5), BreakerState::Open, BreakerState::HalfOpen));
  c.onEvent(transition(id, open + seconds(6), BreakerState::HalfOpen, BreakerState::Open));
  c.onEvent(transition(id, restored - seconds(2), BreakerState::Open, BreakerState::Closed));
  c.onEvent(rampComplete(id, restored));
}

}  // namespace

class TstBlockClass : public QObject {
  Q_OBJECT
 private slots:
  void classes_data();
  void classes();
  void shortAndBenignFaultsAreNotReal();
  void overlappingFaultsMerge();
  void lateDetectionIsNotAFalseTrip();
  void headlineExcludesCollateral();
  void nothingBlockedIsNa();
  void otherInstancesDoNotCount();
};

// One instance with a real fault [100 s, 160 s); its breaker open from 110 s to 200 s.
void TstBlockClass::classes_data() {
  QTest::addColumn<qint64>("at");
  QTest::addColumn<int>("expected");
  QTest::newRow("during the fault") << qint64(seconds(120)) << int(BlockClass::Collateral);
  QTest::newRow("at the fault's last µs")
      << qint64(seconds(160) - 1) << int(BlockClass::Collateral);
  QTest::newRow("at the fault's end") << qint64(seconds(160)) << int(BlockClass::RecoveryLag);
  QTest::newRow("ramp after the fault") << qint64(seconds(195)) << int(BlockClass::RecoveryLag);
}

void TstBlockClass::classes() {
  QFETCH(qint64, at);
  QFETCH(int, expected);
  BlockClassifier c;
  c.addFault(0, seconds(100), seconds(160));
  episode(c, 0, seconds(110), seconds(200));
  // classify() sees the episode state as of the last event: replay it up to `at`.
  BlockClassifier live;
  live.addFault(0, seconds(100), seconds(160));
  live.onEvent(transition(0, seconds(110), BreakerState::Closed, BreakerState::Open));
  QCOMPARE(int(live.classify(0, at)), expected);
  // A second episode, long after, with no fault: a false trip.
  episode(c, 0, seconds(400), seconds(450));
  QCOMPARE(c.tally().episodes, std::uint64_t{2});
  QCOMPARE(c.tally().falseTripEpisodes, std::uint64_t{1});
  c.onEvent(transition(0, seconds(500), BreakerState::Closed, BreakerState::Open));
  QCOMPARE(c.classify(0, seconds(505)), BlockClass::FalseTrip);
}

void TstBlockClass::shortAndBenignFaultsAreNotReal() {
  BlockClassifier c;                          // minFault 10 s
  c.addFault(0, seconds(100), seconds(105));  // a 5 s blip
  c.addFault(1, seconds(100), seconds(110));  // exactly the window: real
  QVERIFY(!c.realFaultAt(0, seconds(102)));
  QVERIFY(c.realFaultAt(1, seconds(102)));
  c.onEvent(transition(0, seconds(103), BreakerState::Closed, BreakerState::Open));
  QCOMPARE(c.classify(0, seconds(104)), BlockClass::FalseTrip);
  QCOMPARE(c.tally().falseTripEpisodes, std::uint64_t{1});
  // An open-ended fault (still active at the end of the run) is real however it started.
  c.addFault(2, seconds(100), kForever);
  QVERIFY(c.realFaultAt(2, seconds(100000)));
}

void TstBlockClass::overlappingFaultsMerge() {
  BlockClassifier c;
  c.addFault(0, seconds(200), seconds(260));
  c.addFault(0, seconds(100), seconds(220));  // overlaps the first: one fault 100–260 s
  c.addFault(0, seconds(400), seconds(420));
  QVERIFY(c.realFaultAt(0, seconds(230)));
  QVERIFY(!c.realFaultAt(0, seconds(300)));
  QVERIFY(c.realFaultAt(0, seconds(410)));
  c.onEvent(transition(0, seconds(150), BreakerState::Closed, BreakerState::Open));
  QCOMPARE(c.classify(0, seconds(240)), BlockClass::Collateral);
  QCOMPARE(c.classify(0, seconds(300)), BlockClass::RecoveryLag);
  c.onEvent(rampComplete(0, seconds(320)));
  // A new episode between the two faults, 60 s after the first ended: a false trip; the second
  // fault arriving during it makes its blocks collateral, and the rest recovery lag.
  c.onEvent(transition(0, seconds(380), BreakerState::Closed, BreakerState::Open));
  QCOMPARE(c.classify(0, seconds(390)), BlockClass::FalseTrip);
  QCOMPARE(c.classify(0, seconds(405)), BlockClass::Collateral);
  QCOMPARE(c.classify(0, seconds(425)), BlockClass::RecoveryLag);
  QCOMPARE(c.tally().falseTripEpisodes, std::uint64_t{1});
}

void TstBlockClass::lateDetectionIsNotAFalseTrip() {
  BlockClassifier c;  // lateTrip 10 s
  c.addFault(0, seconds(100), seconds(130));
  c.addFault(1, seconds(100), seconds(130));
  c.onEvent(transition(0, seconds(135), BreakerState::Closed, BreakerState::Open));
  c.onEvent(transition(1, seconds(141), BreakerState::Closed, BreakerState::Open));
  QCOMPARE(c.classify(0, seconds(136)), BlockClass::RecoveryLag);
  QCOMPARE(c.classify(1, seconds(142)), BlockClass::FalseTrip);
  QCOMPARE(c.tally().falseTripEpisodes, std::uint64_t{1});
}

void TstBlockClass::headlineExcludesCollateral() {
  BlockClassifier c;
  c.addFault(0, seconds(100), seconds(160));
  c.onEvent(transition(0, seconds(110), BreakerState::Closed, BreakerState::Open));
  for (int k = 0; k < 40; ++k) c.noteBlock(0, seconds(120) + k, k % 4 == 0);  // 10 would succeed
  for (int k = 0; k < 10; ++k) c.noteBlock(0, seconds(170) + k, k % 2 == 0);  // 5 would succeed
  c.onEvent(rampComplete(0, seconds(200)));
  c.onEvent(transition(0, seconds(300), BreakerState::Closed, BreakerState::Open));
  for (int k = 0; k < 10; ++k) c.noteBlock(0, seconds(301) + k, k < 7);  // 7 would succeed
  const BlockTally& t = c.tally();
  QCOMPARE(t.total(), std::uint64_t{60});
  QCOMPARE(t.blocks[int(BlockClass::Collateral)], std::uint64_t{40});
  QCOMPARE(t.part(BlockClass::Collateral), std::uint64_t{10});
  QCOMPARE(t.part(BlockClass::RecoveryLag), std::uint64_t{5});
  QCOMPARE(t.part(BlockClass::FalseTrip), std::uint64_t{7});
  QCOMPARE(*t.falsePositiveRate(), 12.0 / 60.0);
  QCOMPARE(*t.collateralShare(), 10.0 / 60.0);
  QCOMPARE(*t.falseTripsPerHour(seconds(1800)), 2.0);
  BlockTally sum = t;
  sum += t;
  QCOMPARE(*sum.falsePositiveRate(), *t.falsePositiveRate());
  QCOMPARE(sum.falseTripEpisodes, std::uint64_t{2});
}

void TstBlockClass::nothingBlockedIsNa() {
  BlockClassifier c;
  QVERIFY(!c.tally().falsePositiveRate().has_value());
  QVERIFY(!c.tally().collateralShare().has_value());
  QVERIFY(!c.tally().falseTripsPerHour(0).has_value());
  QCOMPARE(*c.tally().falseTripsPerHour(seconds(3600)), 0.0);
}

void TstBlockClass::otherInstancesDoNotCount() {
  BlockClassifier c;
  c.addFault(0, seconds(100), seconds(200));
  c.onEvent(transition(1, seconds(150), BreakerState::Closed, BreakerState::Open));
  QCOMPARE(c.classify(1, seconds(160)), BlockClass::FalseTrip);
  QCOMPARE(c.tally().falseTripEpisodes, std::uint64_t{1});
}

QTEST_GUILESS_MAIN(TstBlockClass)
#include "tst_block_class.moc"
