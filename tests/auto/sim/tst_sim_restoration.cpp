// The service restoration rule (sim/restoration.hpp, docs/kpis.md) that the simulator's report
// and the live drill's callers share, on hand-built per-row counts: back within 5 points of the
// minute before the onset, rolling over a window counted from the onset, for a whole minute.
// Expected rows are worked out by hand in each row's comment.
#include <QtTest>

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "spillway/sim/restoration.hpp"

using namespace spillway::sim;

namespace {

struct Rows {
  std::vector<std::uint64_t> finished, available;
};

// `count` rows, each with `finished` calls of which `available` were available.
struct Run {
  std::size_t count;
  std::uint64_t finished, available;
};

Rows rows(std::initializer_list<Run> runs) {
  Rows r;
  for (const Run& run : runs)
    for (std::size_t i = 0; i < run.count; ++i) {
      r.finished.push_back(run.finished);
      r.available.push_back(run.available);
    }
  return r;
}

constexpr qint64 kNever = -1;

}  // namespace

Q_DECLARE_METATYPE(Rows)

class TstSimRestoration : public QObject {
  Q_OBJECT

 private slots:
  void restoredSince_data();
  void restoredSince();
  void backOnlyAfterLeaving_data();
  void backOnlyAfterLeaving();
  void levelOfTheMinuteBefore();
};

void TstSimRestoration::restoredSince_data() {
  QTest::addColumn<Rows>("counts");
  QTest::addColumn<qulonglong>("onset");
  QTest::addColumn<qulonglong>("perMinute");
  QTest::addColumn<qulonglong>("perWindow");
  QTest::addColumn<qint64>("expected");  // the first row of the good minute, or kNever

  // Dip over rows 60..89; the 10-row window is clean from row 99 (90..99), and rows 99..159 are
  // all good.
  QTest::newRow("restores after a dip")
      << rows({{60, 10, 10}, {30, 10, 0}, {200, 10, 10}}) << 60ULL << 60ULL << 10ULL << 99LL;
  // 96 % after a 100 % minute is within 5 points; 94 % is not.
  QTest::newRow("within five points")
      << rows({{60, 100, 100}, {30, 100, 0}, {200, 100, 96}}) << 60ULL << 60ULL << 10ULL << 99LL;
  QTest::newRow("six points short, never")
      << rows({{60, 100, 100}, {30, 100, 0}, {200, 100, 94}}) << 60ULL << 60ULL << 10ULL << kNever;
  QTest::newRow("stays down, never")
      << rows({{60, 10, 10}, {200, 10, 0}}) << 60ULL << 60ULL << 10ULL << kNever;
  // No level to come back to: nothing finished in the minute before the onset, although all
  // is well after it.
  QTest::newRow("no traffic before the onset")
      << rows({{60, 0, 0}, {200, 10, 10}}) << 60ULL << 60ULL << 10ULL << kNever;
  // The same when calls finished only earlier (rows 0..29): the minute before is rows 60..119.
  QTest::newRow("traffic only before the minute before")
      << rows({{30, 10, 10}, {90, 0, 0}, {200, 10, 10}}) << 120ULL << 60ULL << 10ULL << kNever;
  QTest::newRow("onset at row 0") << rows({{300, 10, 10}}) << 0ULL << 60ULL << 10ULL << kNever;
  // Only 30 rows before the onset: the minute before clamps at row 0 and still gives a level.
  // Dip 30..39, clean window from row 49.
  QTest::newRow("minute before clamps at row 0")
      << rows({{30, 10, 10}, {10, 10, 0}, {200, 10, 10}}) << 30ULL << 60ULL << 10ULL << 49LL;
  // Good from row 79 (window 70..79), but one bad row at 120 spoils the windows ending at
  // 120..129 before the minute (79..139) is complete: the good minute starts again at 130.
  QTest::newRow("flap resets the good minute")
      << rows({{60, 10, 10}, {10, 10, 0}, {50, 10, 10}, {1, 10, 0}, {200, 10, 10}}) << 60ULL
      << 60ULL << 10ULL << 130LL;
  // The same bad row at 140, once rows 79..139 have made the minute: restored at 79.
  QTest::newRow("flap after the minute")
      << rows({{60, 10, 10}, {10, 10, 0}, {70, 10, 10}, {1, 10, 0}, {100, 10, 10}}) << 60ULL
      << 60ULL << 10ULL << 79LL;
  // Good from the onset: the minute is rows 60..120, so 120 rows end one short of it.
  QTest::newRow("columns end one row short")
      << rows({{60, 10, 10}, {60, 10, 10}}) << 60ULL << 60ULL << 10ULL << kNever;
  QTest::newRow("columns end with the minute")
      << rows({{60, 10, 10}, {61, 10, 10}}) << 60ULL << 60ULL << 10ULL << 60LL;
  // Level (5000 + 500) / 6000 ≈ 91.7 %. The onset row alone is 100 %: good at once. A window
  // reaching back over rows 51..59 (50 %) would not be good before row 69.
  QTest::newRow("window counted from the onset")
      << rows({{50, 100, 100}, {10, 100, 50}, {200, 100, 100}}) << 60ULL << 60ULL << 10ULL << 60LL;
  // Rows without finished calls are not good: the first window with calls ends at row 90.
  QTest::newRow("silence is not restoration")
      << rows({{60, 10, 10}, {30, 0, 0}, {200, 10, 10}}) << 60ULL << 60ULL << 10ULL << 90LL;
  // A breaker window shorter than a row counts as one row (the live drill's minimum).
  QTest::newRow("window of 0 rows is 1")
      << rows({{60, 10, 10}, {30, 10, 0}, {200, 10, 10}}) << 60ULL << 60ULL << 0ULL << 90LL;
  QTest::newRow("window of 1 row")
      << rows({{60, 10, 10}, {30, 10, 0}, {200, 10, 10}}) << 60ULL << 60ULL << 1ULL << 90LL;
  // 10 s rows: a minute is 6 rows; good from row 9 through 15.
  QTest::newRow("six rows a minute")
      << rows({{6, 10, 10}, {3, 10, 0}, {20, 10, 10}}) << 6ULL << 6ULL << 1ULL << 9LL;
}

void TstSimRestoration::restoredSince() {
  QFETCH(Rows, counts);
  QFETCH(qulonglong, onset);
  QFETCH(qulonglong, perMinute);
  QFETCH(qulonglong, perWindow);
  QFETCH(qint64, expected);
  const auto since = serviceRestoredSince(counts.finished, counts.available, onset, perMinute,
                                          perWindow, SIZE_MAX);
  QCOMPARE(since.has_value(), expected != kNever);
  if (since) QCOMPARE(static_cast<qint64>(*since), expected);
}

// A slow fault (seed 000's leak) may hurt the callers only minutes after its onset: the good
// minute right after the onset is not its restoration, the return after the dip is. A dip
// past the fault's span (its end + one window) is not its doing. Onset 60, 60 rows a minute,
// a 10-row window.
void TstSimRestoration::backOnlyAfterLeaving_data() {
  QTest::addColumn<Rows>("counts");
  QTest::addColumn<qulonglong>("spanEnd");
  QTest::addColumn<qint64>("expected");
  // Good 60..129, dip 130..149 (left at 130), window clean again from 159, a minute to 219.
  const Rows late = rows({{60, 10, 10}, {70, 10, 10}, {20, 10, 0}, {200, 10, 10}});
  QTest::newRow("dip after a good minute") << late << 400ULL << 159LL;
  QTest::newRow("dip at the span's last row") << late << 131ULL << 159LL;
  QTest::newRow("dip past the span") << late << 130ULL << 60LL;
  // 94 % (six points down) for rows 130..149 after a good minute: the window is below 95 %
  // with nine such rows in it (left at 138) and back at 95.2 % with eight (row 151); 96 % is
  // within five points.
  QTest::newRow("six points down, later")
      << rows({{60, 100, 100}, {70, 100, 100}, {20, 100, 94}, {200, 100, 100}}) << 400ULL << 151LL;
  QTest::newRow("four points down, later")
      << rows({{60, 100, 100}, {70, 100, 100}, {20, 100, 96}, {200, 100, 100}}) << 400ULL << 60LL;
  // Quiet rows right after the onset (a low rate) are not leaving; a whole quiet window is.
  QTest::newRow("quiet start, then answers")
      << rows({{60, 10, 10}, {5, 0, 0}, {200, 10, 10}}) << 400ULL << 65LL;
  QTest::newRow("quiet for a window, later")
      << rows({{60, 10, 10}, {70, 10, 10}, {10, 0, 0}, {200, 10, 10}}) << 400ULL << 140LL;
  // Left and never back within the columns.
  QTest::newRow("left for good") << rows({{60, 10, 10}, {70, 10, 10}, {100, 10, 0}}) << 400ULL
                                 << kNever;
}

void TstSimRestoration::backOnlyAfterLeaving() {
  QFETCH(Rows, counts);
  QFETCH(qulonglong, spanEnd);
  QFETCH(qint64, expected);
  const auto since = serviceRestoredSince(counts.finished, counts.available, 60, 60, 10, spanEnd);
  QCOMPARE(since.has_value(), expected != kNever);
  if (since) QCOMPARE(static_cast<qint64>(*since), expected);
}

// The level is available ÷ finished over the minute before the onset, clamped at row 0; no
// finished call gives no level, where no available call gives a level of 0.
void TstSimRestoration::levelOfTheMinuteBefore() {
  const Rows r = rows({{30, 10, 10}, {30, 10, 5}, {60, 10, 0}});
  auto level = [&](std::size_t onset) {
    return availabilityBefore(r.finished, r.available, onset, 60);
  };
  // value_or(-1): a missing level fails each comparison (a level is never negative).
  QCOMPARE(level(60).value_or(-1), 0.75);  // (300 + 150) / 600
  QCOMPARE(level(90).value_or(-1), 0.25);  // rows 30..89: 150 / 600
  QCOMPARE(level(20).value_or(-1), 1.0);   // rows 0..19
  QCOMPARE(level(120).value_or(-1), 0.0);  // rows 60..119: none available
  QCOMPARE(level(150).value_or(-1), 0.0);  // rows 90..119, the columns' end
  QVERIFY(!level(0));                      // nothing before row 0
  QVERIFY(!level(500));                    // all past the columns
}

QTEST_GUILESS_MAIN(TstSimRestoration)
#include "tst_sim_restoration.moc"
