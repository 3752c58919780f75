// The console's mode and playback clock without widgets (app/model/playback.hpp).
#include <QTest>

#include "spillway/view/playback.hpp"

using namespace spillway;
using view::Mode;
using view::Playback;

class TstPlayback : public QObject {
  Q_OBJECT
 private slots:
  void showKeepsOrPlacesTheCursor_data();
  void showKeepsOrPlacesTheCursor();
  void playsAtSpeedAndStopsAtTheEnd();
  void loopWrapsToTheStart();
  void liveFollowsUntilLookingBack();
  void emptyNeverPlays();
  void speedIndexClamped();
};

void TstPlayback::showKeepsOrPlacesTheCursor_data() {
  QTest::addColumn<qint64>("before");  // cursor before the new data
  QTest::addColumn<int>("mode");
  QTest::addColumn<qint64>("start");
  QTest::addColumn<qint64>("end");
  QTest::addColumn<qint64>("at");  // -1: none
  QTest::addColumn<qint64>("cursor");
  QTest::addColumn<bool>("following");
  QTest::newRow("a what-if keeps the cursor") << qint64(700) << int(Mode::Simulation) << qint64(0)
                                              << qint64(2400) << qint64(-1) << qint64(700) << false;
  QTest::newRow("a shorter run clamps it") << qint64(700) << int(Mode::Simulation) << qint64(0)
                                           << qint64(300) << qint64(-1) << qint64(300) << false;
  QTest::newRow("a replay placed at its first fault")
      << qint64(700) << int(Mode::Replay) << qint64(0) << qint64(1800) << qint64(420) << qint64(420)
      << false;
  QTest::newRow("a place outside the range is clamped")
      << qint64(0) << int(Mode::Replay) << qint64(100) << qint64(200) << qint64(50) << qint64(100)
      << false;
  QTest::newRow("Live starts at the newest data") << qint64(10) << int(Mode::Live) << qint64(-60)
                                                  << qint64(0) << qint64(-1) << qint64(0) << true;
}

void TstPlayback::showKeepsOrPlacesTheCursor() {
  QFETCH(qint64, before);
  QFETCH(int, mode);
  QFETCH(qint64, start);
  QFETCH(qint64, end);
  QFETCH(qint64, at);
  QFETCH(qint64, cursor);
  QFETCH(bool, following);
  Playback p;
  p.show(Mode::Simulation, 0, seconds(5000));
  p.seek(seconds(before));
  p.togglePlay();
  QVERIFY(p.playing());
  p.show(static_cast<Mode>(mode), seconds(start), seconds(end),
         at < 0 ? std::nullopt : std::optional<Micros>(seconds(at)));
  QCOMPARE(p.cursor(), seconds(cursor));
  QCOMPARE(p.following(), following);
  QCOMPARE(p.mode(), static_cast<Mode>(mode));
  QVERIFY(!p.playing());  // new data stops playing
}

void TstPlayback::playsAtSpeedAndStopsAtTheEnd() {
  Playback p;
  p.show(Mode::Simulation, 0, seconds(10));
  p.advance(millis(50));
  QCOMPARE(p.cursor(), Micros{0});  // paused: the timer moves nothing
  p.setSpeed(2);                    // × 5
  p.togglePlay();
  p.advance(millis(50));
  QCOMPARE(p.cursor(), millis(250));
  p.seek(seconds(9) + millis(900));
  p.advance(millis(50));  // would pass the end: stops where it is
  QVERIFY(!p.playing());
  QCOMPARE(p.cursor(), seconds(9) + millis(900));
}

void TstPlayback::loopWrapsToTheStart() {
  Playback p;
  p.show(Mode::Replay, seconds(3), seconds(10));
  p.setLoop(true);
  p.togglePlay();
  p.seek(seconds(10) - millis(10));
  p.advance(millis(50));
  QVERIFY(p.playing());
  QCOMPARE(p.cursor(), seconds(3));
}

void TstPlayback::liveFollowsUntilLookingBack() {
  Playback p;
  p.show(Mode::Live, 0, seconds(60));
  p.extend(seconds(1), seconds(61));
  QCOMPARE(p.cursor(), seconds(61));  // following
  p.step(-seconds(10));               // looking back stops following
  QVERIFY(!p.following());
  p.extend(seconds(2), seconds(62));
  QCOMPARE(p.cursor(), seconds(51));  // stays on what the user looks at
  p.extend(seconds(55), seconds(115));
  QCOMPARE(p.cursor(), seconds(55));  // unless it scrolled out of the window
  p.togglePlay();                     // Live's Play is Follow
  QVERIFY(p.following());
  QVERIFY(!p.playing());
  QCOMPARE(p.cursor(), seconds(115));
  p.seek(seconds(80));
  QVERIFY(!p.following());
  p.seek(seconds(500));  // dragged to the newest data: following again
  QVERIFY(p.following());
  QCOMPARE(p.cursor(), seconds(115));
}

void TstPlayback::emptyNeverPlays() {
  Playback p;
  p.togglePlay();
  QVERIFY(!p.playing());
  p.seek(seconds(5));
  QCOMPARE(p.cursor(), Micros{0});
  p.setSpeed(4);
  p.show(Mode::Simulation, 0, seconds(10), seconds(4));
  p.clear();
  QCOMPARE(p.mode(), Mode::Empty);
  QCOMPARE(p.cursor(), Micros{0});
  QCOMPARE(p.speed(), 100.0);  // the user's choice outlives what was shown
  QCOMPARE(view::modeName(Mode::Live), std::string_view("live"));
}

void TstPlayback::speedIndexClamped() {
  Playback p;
  QCOMPARE(p.speed(), 1.0);
  p.setSpeed(99);
  QCOMPARE(p.speed(), 100.0);
  p.setSpeed(-3);
  QCOMPARE(p.speed(), 0.5);
}

QTEST_GUILESS_MAIN(TstPlayback)
#include "tst_playback.moc"
