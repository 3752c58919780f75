// Sliding windows: time buckets roll over at exact boundaries, idle gaps clear, the decision
// totals restart without losing the plotted totals, the count window keeps the last N.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <utility>
#include <vector>

#include "spillway/histogram.hpp"
#include "spillway/rng.hpp"
#include "spillway/window.hpp"

using namespace spillway;

namespace {

std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  return a >= 0 ? a / b : (a - b + 1) / b;
}

bool operator==(const WindowCounts& a, const WindowCounts& b) {
  return a.calls == b.calls && a.failures == b.failures && a.slow == b.slow &&
         a.rejected == b.rejected;
}

QString str(const WindowCounts& c) {
  return QString("{calls %1, failures %2, slow %3, rejected %4}")
      .arg(c.calls)
      .arg(c.failures)
      .arg(c.slow)
      .arg(c.rejected);
}

bool within(const WindowCounts& part, const WindowCounts& whole) {
  return part.calls <= whole.calls && part.failures <= whole.failures && part.slow <= whole.slow &&
         part.rejected <= whole.rejected;
}

// Reference model: every event kept with its bucket index and sequence number; the window is
// recomputed from scratch on every query.
class Model {
 public:
  Model(Micros length, Micros width) : w_(width) {
    n_ = static_cast<int>((std::max(length, width) + width - 1) / width);
    bps_ = (n_ + SlidingStats::kMaxSlices - 1) / SlidingStats::kMaxSlices;
  }
  void advance(Micros t) {
    const std::int64_t idx = floorDiv(t, w_);
    head_ = started_ ? std::max(head_, idx) : idx;
    started_ = true;
    // Drop what no query can reach any more (records are appended in time order).
    const std::int64_t keepFrom = floorDiv(floorDiv(head_, bps_) * bps_ - n_ + 1, bps_) * bps_;
    std::size_t k = 0;
    while (k < recs_.size() && recs_[k].bucket < keepFrom) ++k;
    recs_.erase(recs_.begin(), recs_.begin() + static_cast<std::ptrdiff_t>(k));
  }
  void add(const WindowCounts& c, const std::vector<std::pair<int, std::uint32_t>>& bins = {}) {
    recs_.push_back(Rec{head_, ++seq_, c, bins});
  }
  void restart() { restartSeq_ = seq_; }

  WindowCounts all() const { return sum(false); }
  WindowCounts decision() const { return sum(true); }
  // Histogram entries the window must hold: slices are evicted whole when a new slice starts,
  // so the latencies cover the window as of the head slice's first bucket, rounded out to
  // whole slices (exactly the window when a slice is one bucket).
  LatencyHistogram sliceRoundedHist() const {
    const std::int64_t sliceStart = floorDiv(head_, bps_) * bps_;
    return hist(floorDiv(sliceStart - n_ + 1, bps_) * bps_);
  }
  int bucketsPerSlice() const { return bps_; }

 private:
  struct Rec {
    std::int64_t bucket;
    std::uint64_t seq;
    WindowCounts c;
    std::vector<std::pair<int, std::uint32_t>> bins;
  };
  WindowCounts sum(bool decisionOnly) const {
    WindowCounts s;
    for (const Rec& r : recs_) {
      if (r.bucket <= head_ - n_) continue;
      if (decisionOnly && r.seq <= restartSeq_) continue;
      s.add(r.c);
    }
    return s;
  }
  LatencyHistogram hist(std::int64_t fromBucket) const {
    LatencyHistogram h;
    for (const Rec& r : recs_)
      if (r.bucket >= fromBucket)
        for (auto [bin, k] : r.bins) h.addBin(bin, k);
    return h;
  }

  Micros w_;
  int n_ = 0;
  int bps_ = 1;
  std::int64_t head_ = 0;
  bool started_ = false;
  std::uint64_t seq_ = 0, restartSeq_ = 0;
  std::vector<Rec> recs_;
};

bool sameBins(const LatencyHistogram& a, const LatencyHistogram& b) {
  if (a.total() != b.total()) return false;
  for (int i = 0; i < HistogramLayout::kBins; ++i)
    if (a.binCount(i) != b.binCount(i)) return false;
  return true;
}

std::uint32_t histTotal(const SlidingStats& s) {
  return s.histogram() ? s.histogram()->total() : 0u;
}

}  // namespace

class TstWindow : public QObject {
  Q_OBJECT

 private slots:
  void geometry_data();
  void geometry();
  void rollover_data();
  void rollover();
  void evictsExactlyTheOldBucket();
  void idleGap_data();
  void idleGap();
  void restartDecision_data();
  void restartDecision();
  void aggregateEvictsLikeSingles();
  void completedSlicesInOrder_data();
  void completedSlicesInOrder();
  void randomizedAgainstModel_data();
  void randomizedAgainstModel();
  void countWindowKeepsLastN_data();
  void countWindowKeepsLastN();
  void busyHeadReadAfterEveryCall_data();
  void busyHeadReadAfterEveryCall();
};

void TstWindow::geometry_data() {
  QTest::addColumn<Micros>("length");
  QTest::addColumn<Micros>("bucket");
  QTest::addColumn<int>("buckets");
  QTest::addColumn<int>("perSlice");
  // buckets = ceil(length / bucket); slices hold ceil(buckets / 10) buckets each.
  QTest::newRow("10s / 1s") << seconds(10) << seconds(1) << 10 << 1;
  QTest::newRow("60s / 1s") << seconds(60) << seconds(1) << 60 << 6;
  QTest::newRow("10s / 250ms") << seconds(10) << millis(250) << 40 << 4;
  QTest::newRow("10.5s / 1s rounds up") << millis(10'500) << seconds(1) << 11 << 2;
  QTest::newRow("shorter than a bucket") << millis(300) << seconds(1) << 1 << 1;
  QTest::newRow("zero bucket width is one µs") << Micros(5) << Micros(0) << 5 << 1;
}

void TstWindow::geometry() {
  QFETCH(Micros, length);
  QFETCH(Micros, bucket);
  QFETCH(int, buckets);
  QFETCH(int, perSlice);
  SlidingStats s(length, bucket);
  QCOMPARE(s.bucketCount(), buckets);
  QCOMPARE(s.bucketsPerSlice(), perSlice);
  QCOMPARE(s.bucketWidth(), std::max<Micros>(bucket, 1));
}

void TstWindow::rollover_data() {
  QTest::addColumn<Micros>("base");
  QTest::addColumn<Micros>("callAt");
  QTest::addColumn<Micros>("queryAt");
  QTest::addColumn<bool>("present");
  // 10 s window of 1 s buckets: a call stays while its bucket is one of the 10 newest.
  struct Row {
    const char* name;
    Micros callAt, queryAt;
    bool present;
  };
  const Row rows[] = {
      {"t=0 same bucket", 0, millis(500), true},
      {"t=0 present at 9.999s", 0, millis(9'999), true},
      {"t=0 gone at 10.000s", 0, seconds(10), false},
      {"t=0.999 present at 9.999s", millis(999), millis(9'999), true},
      {"t=0.999 shares bucket 0: gone at 10.000s", millis(999), seconds(10), false},
      {"t=1.000 next bucket: present at 10.000s", seconds(1), seconds(10), true},
      {"t=1.000 present at 10.999999s", seconds(1), seconds(11) - 1, true},
      {"t=1.000 gone at 11.000s", seconds(1), seconds(11), false},
  };
  // Aligned epochs: zero, a Unix-epoch timestamp (replay), and negative time.
  const std::pair<const char*, Micros> bases[] = {
      {"epoch 0", 0}, {"unix", seconds(1'764'480'000)}, {"negative", seconds(-20)}};
  for (auto [baseName, base] : bases)
    for (const Row& r : rows)
      QTest::newRow(qPrintable(QString("%1: %2").arg(baseName, r.name)))
          << base << r.callAt << r.queryAt << r.present;
}

void TstWindow::rollover() {
  QFETCH(Micros, base);
  QFETCH(Micros, callAt);
  QFETCH(Micros, queryAt);
  QFETCH(bool, present);
  SlidingStats s(seconds(10), seconds(1));
  s.advanceTo(base + callAt);
  s.addOutcome(true, true, 100);  // below 128 µs: exact bin
  s.addRejected();
  s.advanceTo(base + queryAt);
  const WindowCounts expect{present ? 1u : 0u, present ? 1u : 0u, present ? 1u : 0u,
                            present ? 1u : 0u};
  QVERIFY2(s.all() == expect, qPrintable(str(s.all())));
  QVERIFY2(s.decision() == expect, qPrintable(str(s.decision())));
  // One-bucket slices: the latency histogram covers exactly the same window.
  QCOMPARE(histTotal(s), expect.calls);
  QCOMPARE(s.quantile(0.5), present ? 100.0 : 0.0);
}

void TstWindow::evictsExactlyTheOldBucket() {
  // Bucket k (k = 0..9) holds k+1 calls, of which k % 3 failures and k % 2 slow; then time
  // moves on bucket by bucket and each step must evict exactly the oldest bucket.
  SlidingStats s(seconds(10), seconds(1));
  std::vector<WindowCounts> bucket(10);
  for (int k = 0; k < 10; ++k) {
    s.advanceTo(seconds(k) + millis(100 * (k % 10)));
    for (int i = 0; i <= k; ++i) {
      const bool fail = i < k % 3, slow = i < k % 2;
      s.addOutcome(fail, slow, 10'000);
      bucket[k].calls++;
      bucket[k].failures += fail;
      bucket[k].slow += slow;
    }
  }
  auto expected = [&](Micros t) {
    WindowCounts c;
    const std::int64_t head = t / seconds(1);
    for (int k = 0; k < 10; ++k)
      if (k > head - 10) c.add(bucket[k]);
    return c;
  };
  for (Micros t : {millis(9'999), seconds(10), millis(10'500), seconds(11), seconds(15),
                   millis(18'999), seconds(19), seconds(20)}) {
    const WindowCounts before = s.all();
    s.advanceTo(t);
    QVERIFY2(s.all() == expected(t), qPrintable(QString("t=%1us: %2").arg(t).arg(str(s.all()))));
    QVERIFY(s.decision() == s.all());
    QVERIFY(within(s.all(), before));
    QCOMPARE(histTotal(s), s.all().calls);
  }
  QCOMPARE(s.all().calls, 0u);
}

void TstWindow::idleGap_data() {
  QTest::addColumn<Micros>("gap");
  QTest::addColumn<int>("bucketsLeft");
  // One call in each bucket 0..9 (the last at 9.5 s); then nothing for `gap`.
  // Bucket 9 (the last one) leaves the window when bucket 19 starts, 9.5 s after the last call.
  QTest::newRow("to 18.5s keeps the last bucket") << seconds(9) << 1;
  QTest::newRow("to 18.999999s keeps the last bucket") << millis(9'500) - 1 << 1;
  QTest::newRow("to 19.0s clears") << millis(9'500) << 0;
  QTest::newRow("to 10.5s keeps nine buckets") << seconds(1) << 9;
  QTest::newRow("gap of 11 buckets") << seconds(11) << 0;
  QTest::newRow("one hour") << seconds(3'600) << 0;
  QTest::newRow("a year") << seconds(365LL * 86'400) << 0;
}

void TstWindow::idleGap() {
  QFETCH(Micros, gap);
  QFETCH(int, bucketsLeft);
  SlidingStats s(seconds(10), seconds(1));
  for (int k = 0; k < 10; ++k) {
    s.advanceTo(seconds(k) + millis(500));
    s.addOutcome(k % 2 == 0, k % 3 == 0, 5'000 + 1'000 * k);
    s.addRejected();
  }
  QCOMPARE(s.all().calls, 10u);
  s.advanceTo(seconds(9) + millis(500) + gap);
  QCOMPARE(s.all().calls, static_cast<std::uint32_t>(bucketsLeft));
  QCOMPARE(s.all().rejected, static_cast<std::uint32_t>(bucketsLeft));
  QVERIFY(s.decision() == s.all());
  QCOMPARE(histTotal(s), s.all().calls);
  if (bucketsLeft == 0) {
    QCOMPARE(s.all().failures, 0u);
    QCOMPARE(s.all().slow, 0u);
    QCOMPARE(s.quantile(0.99), 0.0);
  }
  // The window works normally after the gap: a new call counts, then ages out 10 s later.
  const Micros t = seconds(9) + millis(500) + gap + seconds(20);
  s.advanceTo(t);
  QCOMPARE(s.all().calls, 0u);
  s.addOutcome(true, false, 1'000);
  QCOMPARE(s.all().calls, 1u);
  QCOMPARE(s.decision().failures, 1u);
  s.advanceTo(t + seconds(10));
  QCOMPARE(s.all().calls, 0u);
  QCOMPARE(s.decision().calls, 0u);
}

void TstWindow::restartDecision_data() {
  QTest::addColumn<QList<Micros>>("restarts");
  // A call every 250 ms from 0 to 30 s (every third a failure, every fifth slow, every
  // seventh slot a rejection), with decision restarts at the listed times (before that
  // time's call).
  QTest::newRow("before any traffic") << QList<Micros>{0};
  QTest::newRow("mid-bucket") << QList<Micros>{millis(4'500)};
  QTest::newRow("at a bucket start") << QList<Micros>{seconds(5)};
  QTest::newRow("last µs of a bucket") << QList<Micros>{millis(9'999)};
  QTest::newRow("twice in one bucket") << QList<Micros>{millis(4'250), millis(4'750)};
  QTest::newRow("in consecutive buckets") << QList<Micros>{millis(6'500), millis(7'250)};
  QTest::newRow("late, after the first window") << QList<Micros>{millis(25'250)};
}

void TstWindow::restartDecision() {
  QFETCH(QList<Micros>, restarts);
  SlidingStats s(seconds(10), seconds(1));
  struct Call {
    Micros t;
    bool fail, slow, rejected;
  };
  std::vector<Call> calls;
  Micros lastRestart = kNever;
  for (int i = 0; i * millis(250) <= seconds(30); ++i) {
    const Micros t = i * millis(250);
    s.advanceTo(t);
    if (restarts.contains(t)) {
      const WindowCounts allBefore = s.all();
      s.restartDecision();
      lastRestart = t;
      QVERIFY2(s.all() == allBefore, "restart must keep the plotted totals");
      QVERIFY2(s.decision() == WindowCounts{}, qPrintable(str(s.decision())));
    }
    const Call c{t, i % 3 == 0, i % 5 == 0, i % 7 == 0};
    s.addOutcome(c.fail, c.slow, 1'000);
    if (c.rejected) s.addRejected();
    calls.push_back(c);
    // Expected from the definition: all = calls whose bucket is among the newest 10;
    // decision = those of them recorded after the latest restart.
    WindowCounts all, decision;
    for (const Call& k : calls) {
      if (k.t / seconds(1) <= t / seconds(1) - 10) continue;
      const WindowCounts one{1u, k.fail ? 1u : 0u, k.slow ? 1u : 0u, k.rejected ? 1u : 0u};
      all.add(one);
      if (lastRestart == kNever || k.t >= lastRestart) decision.add(one);
    }
    QVERIFY2(s.all() == all, qPrintable(QString("t=%1: %2").arg(t).arg(str(s.all()))));
    QVERIFY2(
        s.decision() == decision,
        qPrintable(QString("t=%1: %2 expected %3").arg(t).arg(str(s.decision()), str(decision))));
    QVERIFY2(within(s.decision(), s.all()), "decision counts exceed the window's");
  }
  // Everything ages out; decision counts must reach zero, not wrap around.
  for (Micros t = seconds(30); t <= seconds(45); t += millis(500)) {
    s.advanceTo(t);
    QVERIFY2(within(s.decision(), s.all()), qPrintable(str(s.decision())));
  }
  QVERIFY(s.all() == WindowCounts{});
  QVERIFY(s.decision() == WindowCounts{});
}

void TstWindow::aggregateEvictsLikeSingles() {
  // An aggregate sample lands in the current bucket and leaves with it, like its calls would.
  SlidingStats agg(seconds(10), seconds(1)), single(seconds(10), seconds(1));
  LatencyHistogram h;
  for (int i = 0; i < 30; ++i) h.add(static_cast<std::uint64_t>(10'000 + 1'000 * i));
  for (SlidingStats* s : {&agg, &single}) s->advanceTo(millis(2'500));
  agg.addAggregate(WindowCounts{30, 7, 4, 0}, &h);
  for (int i = 0; i < 30; ++i) single.addOutcome(i < 7, i < 4, 10'000 + 1'000 * i);
  for (Micros t : {millis(2'500), millis(11'999), seconds(12), seconds(13)}) {
    agg.advanceTo(t);
    single.advanceTo(t);
    QVERIFY2(agg.all() == single.all(), qPrintable(str(agg.all())));
    QVERIFY(agg.decision() == single.decision());
    QCOMPARE(histTotal(agg), histTotal(single));
    QCOMPARE(agg.quantile(0.9), single.quantile(0.9));
  }
  QCOMPARE(agg.all().calls, 0u);
  // Aggregates without a histogram count, but add no latencies.
  SlidingStats noHist(seconds(10), seconds(1));
  noHist.advanceTo(0);
  noHist.addAggregate(WindowCounts{5, 1, 0, 0}, nullptr);
  QCOMPARE(noHist.all().calls, 5u);
  QCOMPARE(histTotal(noHist), 0u);
}

void TstWindow::completedSlicesInOrder_data() {
  QTest::addColumn<Micros>("length");
  QTest::addColumn<Micros>("bucket");
  QTest::newRow("10s / 1s: one-bucket slices") << seconds(10) << seconds(1);
  QTest::newRow("60s / 1s: six-bucket slices") << seconds(60) << seconds(1);
  QTest::newRow("10s / 250ms") << seconds(10) << millis(250);
}

void TstWindow::completedSlicesInOrder() {
  QFETCH(Micros, length);
  QFETCH(Micros, bucket);
  SlidingStats s(length, bucket);
  const Micros slice = bucket * s.bucketsPerSlice();
  // Traffic in some slices only (every third slice empty); each call's latency encodes its
  // slice, so the reported histogram can be checked for contents.
  struct Seen {
    Micros end;
    std::uint32_t calls, failures, hist;
    double p50;
  };
  std::vector<Seen> seen;
  auto hook = [&](const CompletedSlice& c) {
    seen.push_back(Seen{c.end, c.counts.calls, c.counts.failures, c.samples(),
                        c.samples() ? c.histogram().quantile(0.5) : 0.0});
  };
  std::vector<Seen> expected;
  const int nSlices = 40;
  for (int k = 0; k < nSlices; ++k) {
    const bool empty = k % 3 == 2;
    const std::uint32_t n = empty ? 0u : static_cast<std::uint32_t>(k % 4 + 1);
    for (std::uint32_t i = 0; i < n; ++i) {
      s.advanceTo(k * slice + static_cast<Micros>(i) * slice / 5, hook);
      s.addOutcome(i == 0, false, static_cast<std::uint64_t>(50 + k));  // exact bins (< 128)
    }
    if (!empty) expected.push_back(Seen{(k + 1) * slice, n, 1u, n, double(50 + k)});
  }
  s.advanceTo(nSlices * slice + seconds(3'600), hook);  // long gap: the last slice completes
  QCOMPARE(seen.size(), expected.size());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    QCOMPARE(seen[i].end, expected[i].end);
    QCOMPARE(seen[i].calls, expected[i].calls);
    QCOMPARE(seen[i].failures, expected[i].failures);
    QCOMPARE(seen[i].hist, expected[i].hist);
    QCOMPARE(seen[i].p50, expected[i].p50);
  }
}

// Modes of the window histogram (SlidingStats::keepWindowHistogram): every answer must be
// the same whether it follows the calls, is built when read, or switches between the two.
enum WindowMode { Kept, BuiltWhenRead, Switching };

void TstWindow::randomizedAgainstModel_data() {
  QTest::addColumn<Micros>("length");
  QTest::addColumn<Micros>("bucket");
  QTest::addColumn<quint64>("seed");
  QTest::addColumn<int>("mode");
  // Share of operations that move time; -1: busy and quiet in turns (2,000 operations each),
  // so slices that went dense are reused by quiet slices and the other way round.
  QTest::addColumn<double>("moveShare");
  // Aggregates of 10,000–80,000 calls now and then: a head slice past 65,535 calls widens its
  // histogram's counts (CompactHistogram), and must lose nothing doing so.
  QTest::addColumn<bool>("huge");
  QTest::newRow("10s / 1s") << seconds(10) << seconds(1) << quint64(1) << int(Kept) << 0.25
                            << false;
  QTest::newRow("10s / 1s, seed 2")
      << seconds(10) << seconds(1) << quint64(2) << int(Kept) << 0.25 << false;
  QTest::newRow("60s / 1s") << seconds(60) << seconds(1) << quint64(3) << int(Kept) << 0.25
                            << false;
  QTest::newRow("25s / 1s") << seconds(25) << seconds(1) << quint64(4) << int(Kept) << 0.25
                            << false;
  QTest::newRow("10s / 250ms") << seconds(10) << millis(250) << quint64(5) << int(Kept) << 0.25
                               << false;
  QTest::newRow("single bucket") << seconds(1) << seconds(1) << quint64(6) << int(Kept) << 0.25
                                 << false;
  // Busy slices go dense (a histogram instead of a list of bins).
  QTest::newRow("busy") << seconds(10) << seconds(1) << quint64(7) << int(Kept) << 0.002 << false;
  QTest::newRow("built when read")
      << seconds(10) << seconds(1) << quint64(1) << int(BuiltWhenRead) << 0.25 << false;
  QTest::newRow("built when read, 25s / 1s")
      << seconds(25) << seconds(1) << quint64(4) << int(BuiltWhenRead) << 0.25 << false;
  QTest::newRow("built when read, 10s / 250ms")
      << seconds(10) << millis(250) << quint64(5) << int(BuiltWhenRead) << 0.25 << false;
  QTest::newRow("built when read, busy")
      << seconds(10) << seconds(1) << quint64(7) << int(BuiltWhenRead) << 0.002 << false;
  QTest::newRow("busy, then quiet")
      << seconds(10) << seconds(1) << quint64(10) << int(Kept) << -1.0 << false;
  QTest::newRow("built when read, busy, then quiet")
      << seconds(10) << seconds(1) << quint64(11) << int(BuiltWhenRead) << -1.0 << false;
  QTest::newRow("switching") << seconds(10) << seconds(1) << quint64(8) << int(Switching) << 0.25
                             << false;
  QTest::newRow("switching, busy")
      << seconds(10) << seconds(1) << quint64(9) << int(Switching) << 0.002 << false;
  QTest::newRow("huge aggregates")
      << seconds(10) << seconds(1) << quint64(12) << int(Kept) << 0.25 << true;
  QTest::newRow("huge aggregates, busy")
      << seconds(10) << seconds(1) << quint64(13) << int(Kept) << 0.002 << true;
  QTest::newRow("built when read, huge aggregates, busy")
      << seconds(10) << seconds(1) << quint64(14) << int(BuiltWhenRead) << 0.002 << true;
  QTest::newRow("switching, huge aggregates, busy")
      << seconds(10) << seconds(1) << quint64(15) << int(Switching) << 0.002 << true;
}

void TstWindow::randomizedAgainstModel() {
  QFETCH(Micros, length);
  QFETCH(Micros, bucket);
  QFETCH(quint64, seed);
  QFETCH(int, mode);
  QFETCH(double, moveShare);
  QFETCH(bool, huge);
  SlidingStats s(length, bucket);
  s.keepWindowHistogram(mode == Kept);
  Model m(length, bucket);
  Rng rng(seed);
  int exceeded = 0, notExceeded = 0;
  // Every call added, and the calls of every slice as it left (what the baseline learns):
  // together with the window, nothing lost and nothing counted twice, in any slice's form.
  LatencyHistogram everything, left;
  Micros t = seconds(1'000) + static_cast<Micros>(rng.uniform() * 1e6);
  s.advanceTo(t);
  m.advance(t);
  if (seed % 2 == 0) {  // restart before any traffic, as a fresh breaker forced CLOSED does
    s.restartDecision();
    m.restart();
  }
  for (int op = 0; op < 20'000; ++op) {
    if (mode == Switching && op % 997 == 0) s.keepWindowHistogram(!s.keepsWindowHistogram());
    const double share = moveShare >= 0 ? moveShare : (op / 2000) % 2 ? 0.25 : 0.002;
    const double r = rng.uniform();
    if (r < share) {
      // Time moves: usually a fraction of a bucket, sometimes several, rarely a long gap.
      const double g = rng.uniform();
      const Micros step = g < 0.9    ? static_cast<Micros>(rng.uniform() * bucket)
                          : g < 0.99 ? static_cast<Micros>(rng.uniform() * bucket * 5)
                                     : static_cast<Micros>(rng.uniform() * length * 3);
      t += step;
      // The breaker's drift check reads the window from the hook, while the completed slice
      // is still the head: it must see the window before the move, every call once.
      const LatencyHistogram before = m.sliceRoundedHist();
      bool hookSaw = true;
      struct Hook {
        SlidingStats& s;
        const LatencyHistogram& before;
        bool& hookSaw;
        LatencyHistogram& left;
        void operator()(const CompletedSlice& c) const {
          hookSaw &= c.histogram().total() == c.samples();
          const LatencyHistogram* h = s.histogram();
          hookSaw &= h ? sameBins(*h, before) : before.total() == 0;
          if (before.total() > 0) {
            const double p50 = before.quantile(0.5);
            hookSaw &= s.quantileExceeds(0.5, p50 - 1) && !s.quantileExceeds(0.5, p50);
          }
        }
        void evicted(const CompletedSlice& c) const {
          const LatencyHistogram h = c.histogram();
          hookSaw &= h.total() == c.samples();
          left.merge(h);
        }
      };
      s.advanceTo(t, Hook{s, before, hookSaw, left});
      if (!hookSaw) QFAIL(qPrintable(QString("op %1: the hook saw another window").arg(op)));
      m.advance(t);
    } else if (r < 0.80) {
      const bool fail = rng.uniform() < 0.3, slow = rng.uniform() < 0.2;
      const auto lat = static_cast<std::uint64_t>(rng.uniform() * 5e6);
      s.addOutcome(fail, slow, lat);
      m.add(WindowCounts{1, fail, slow, 0}, {{HistogramLayout::binOf(lat), 1u}});
      everything.add(lat);
    } else if (r < 0.90) {
      s.addRejected();
      m.add(WindowCounts{0, 0, 0, 1});
    } else if (r < 0.97) {
      const bool big = huge && rng.uniform() < 0.05;
      const auto calls =
          static_cast<std::uint32_t>(big ? 10'000 + rng.uniform() * 70'000 : rng.uniform() * 20);
      const auto fails = static_cast<std::uint32_t>(rng.uniform() * (calls + 1));
      const auto slow = static_cast<std::uint32_t>(rng.uniform() * (calls + 1));
      LatencyHistogram h;
      std::vector<std::pair<int, std::uint32_t>> bins;
      for (std::uint32_t i = 0, part = big ? calls / 3 : 1; i < calls; i += part) {
        const auto lat = static_cast<std::uint64_t>(rng.uniform() * 2e6);
        const std::uint32_t n = std::min(part, calls - i);
        h.add(lat, n);
        bins.emplace_back(HistogramLayout::binOf(lat), n);
      }
      s.addAggregate(WindowCounts{calls, fails, slow, 0}, &h);
      m.add(WindowCounts{calls, fails, slow, 0}, bins);
      everything.merge(h);
    } else {
      s.restartDecision();
      m.restart();
    }
    const WindowCounts all = m.all(), decision = m.decision();
    if (!(s.all() == all))
      QFAIL(qPrintable(QString("op %1 all %2 expected %3").arg(op).arg(str(s.all()), str(all))));
    if (!(s.decision() == decision))
      QFAIL(qPrintable(
          QString("op %1 decision %2 expected %3").arg(op).arg(str(s.decision()), str(decision))));
    if (!within(s.decision(), s.all())) QFAIL("decision counts exceed the window's");
    // Latencies: exactly the samples of the slices the window touches.
    const LatencyHistogram expect = m.sliceRoundedHist();
    const std::uint32_t got = histTotal(s);
    if (got != expect.total() || (s.histogram() && !sameBins(*s.histogram(), expect)))
      QFAIL(qPrintable(QString("op %1: histogram holds %2 samples, expected %3")
                           .arg(op)
                           .arg(got)
                           .arg(expect.total())));
    if (m.bucketsPerSlice() == 1 && got != all.calls) QFAIL("one-bucket slices: hist != window");
    if (op % 4 == 0) {
      LatencyHistogram seen = left;
      if (const LatencyHistogram* h = s.histogram()) seen.merge(*h);
      if (!sameBins(seen, everything))
        QFAIL(qPrintable(QString("op %1: slices left and the window hold %2 calls of %3")
                             .arg(op)
                             .arg(seen.total())
                             .arg(everything.total())));
    }
    // The drift check's question, around the answer and at random: quantileExceeds must agree
    // with the quantile of the expected samples. Not every operation: a read through
    // histogram() leaves calls pending, and they must reach their slice in batches too.
    if (expect.total() > 0 && op % 8 == 0) {
      const double q = op % 3 == 0 ? 0.5 : rng.uniform();
      const double at = expect.quantile(q);
      for (const double v : {at, at - 1, std::nextafter(at, 0.0), at * (0.5 + rng.uniform())}) {
        const bool want = expect.quantile(q) > v;
        if (s.quantileExceeds(q, v) != want)
          QFAIL(qPrintable(QString("op %1: quantileExceeds(%2, %3) != %4")
                               .arg(op)
                               .arg(q)
                               .arg(v, 0, 'g', 17)
                               .arg(want)));
        (want ? exceeded : notExceeded)++;
      }
    }
  }
  QVERIFY(exceeded > 100 && notExceeded > 100);  // both answers were asked for
}

// A busy head slice takes its calls as bare counts and settles them only when it is read
// whole. Read after every call (a plot, a snapshot) and asked the drift check's question, the
// window must hold exactly its calls, however many the head took since it last settled.
void TstWindow::busyHeadReadAfterEveryCall_data() {
  QTest::addColumn<bool>("keepWindow");
  QTest::newRow("window histogram kept") << true;
  QTest::newRow("built when read") << false;
}

void TstWindow::busyHeadReadAfterEveryCall() {
  QFETCH(bool, keepWindow);
  SlidingStats s(seconds(3), seconds(1));
  s.keepWindowHistogram(keepWindow);
  Rng rng(11);
  std::vector<LatencyHistogram> perSecond(6);  // the calls of each second
  for (int call = 0; call < 6 * 900; ++call) {
    const int second = call / 900;
    s.advanceTo(seconds(second) + (call % 900) * 1000);
    const auto lat = static_cast<std::uint64_t>(900'000.0 * std::exp(0.35 * (rng.uniform() - 0.5)));
    s.addOutcome(false, false, lat);
    perSecond[static_cast<std::size_t>(second)].add(lat);
    LatencyHistogram expect;  // the window: this second and the two before
    for (int k = std::max(0, second - 2); k <= second; ++k)
      expect.merge(perSecond[static_cast<std::size_t>(k)]);
    const LatencyHistogram* got = s.histogram();
    if (!got || !sameBins(*got, expect))
      QFAIL(qPrintable(
          QString("call %1: the window's bins differ from its calls (%2 held, %3 expected)")
              .arg(call)
              .arg(got ? got->total() : 0u)
              .arg(expect.total())));
    if (call % 50 == 0) {
      const double p99 = expect.quantile(0.99);
      QCOMPARE(s.quantileExceeds(0.99, p99), false);
      QCOMPARE(s.quantileExceeds(0.99, p99 - 1), true);
    }
  }
}

void TstWindow::countWindowKeepsLastN_data() {
  QTest::addColumn<quint32>("size");
  QTest::addColumn<quint32>("effective");
  QTest::newRow("size 1") << 1u << 1u;
  QTest::newRow("size 5") << 5u << 5u;
  QTest::newRow("size 100") << 100u << 100u;
  QTest::newRow("size 0 behaves as 1") << 0u << 1u;
}

void TstWindow::countWindowKeepsLastN() {
  QFETCH(quint32, size);
  QFETCH(quint32, effective);
  CountWindow w(size);
  std::deque<std::pair<bool, bool>> ref;
  Rng rng(size + 17);
  for (int i = 0; i < 3'000; ++i) {
    if (i == 1'500) {
      w.clear();
      ref.clear();
      QCOMPARE(w.calls(), 0u);
      QCOMPARE(w.failures(), 0u);
      QCOMPARE(w.slow(), 0u);
    }
    const bool fail = rng.uniform() < 0.4, slow = rng.uniform() < 0.3;
    w.add(fail, slow);
    ref.emplace_back(fail, slow);
    if (ref.size() > effective) ref.pop_front();
    std::uint32_t f = 0, sl = 0;
    for (auto [a, b] : ref) f += a, sl += b;
    if (w.calls() != ref.size() || w.failures() != f || w.slow() != sl)
      QFAIL(qPrintable(QString("after %1 adds: calls %2 failures %3 slow %4, expected %5 %6 %7")
                           .arg(i + 1)
                           .arg(w.calls())
                           .arg(w.failures())
                           .arg(w.slow())
                           .arg(ref.size())
                           .arg(f)
                           .arg(sl)));
  }
}

QTEST_GUILESS_MAIN(TstWindow)
#include "tst_window.moc"
