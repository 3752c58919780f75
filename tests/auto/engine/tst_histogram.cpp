// Log-linear latency histogram: bin layout, quantile accuracy against exact nearest-rank
// quantiles, merge/subtract algebra, countAbove.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "spillway/compact_histogram.hpp"
#include "spillway/histogram.hpp"
#include "spillway/rng.hpp"
#include "spillway/slice_bins.hpp"

using namespace spillway;
using Layout = HistogramLayout;

namespace {

enum class Dist {
  LogUniform,
  ExactRegion,
  LogNormalLlm,
  Bimodal,
  OctaveEdges,
  Extremes,
  EachCount
};

// Standard normal from the engine's seeded generator (Box–Muller).
double normal(Rng& rng) {
  const double u1 = 1.0 - rng.uniform();  // (0, 1]
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

std::uint64_t clampUs(double v) {
  if (v < 1.0) return 1;
  if (v > static_cast<double>(Layout::kMaxValue)) return Layout::kMaxValue;
  return static_cast<std::uint64_t>(std::llround(v));
}

std::vector<std::uint64_t> samples(Dist d, int n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::uint64_t> v;
  v.reserve(static_cast<std::size_t>(n));
  const double logMax = std::log(static_cast<double>(Layout::kMaxValue));
  switch (d) {
    case Dist::LogUniform:  // 1 µs .. ~17.9 min, every octave equally likely
      for (int i = 0; i < n; ++i) v.push_back(clampUs(std::exp(rng.uniform() * logMax)));
      break;
    case Dist::ExactRegion:  // below 128 µs bins are one microsecond wide
      for (int i = 0; i < n; ++i) v.push_back(static_cast<std::uint64_t>(rng.uniform() * 128));
      break;
    case Dist::LogNormalLlm:  // median 800 ms, heavy tail
      for (int i = 0; i < n; ++i) v.push_back(clampUs(800'000.0 * std::exp(0.8 * normal(rng))));
      break;
    case Dist::Bimodal:  // 95 % fast (20 ms), 5 % stuck (5 min)
      for (int i = 0; i < n; ++i) {
        const double base = rng.uniform() < 0.95 ? 20'000.0 : 300'000'000.0;
        v.push_back(clampUs(base * std::exp(0.1 * normal(rng))));
      }
      break;
    case Dist::OctaveEdges:  // 2^k - 1, 2^k, 2^k + 1 for every octave
      for (int k = 0; k <= Layout::kLastOctave; ++k) {
        const std::uint64_t p = std::uint64_t{1} << k;
        v.push_back(p - 1);
        v.push_back(p);
        v.push_back(std::min(p + 1, Layout::kMaxValue));
      }
      break;
    case Dist::Extremes:  // the two ends of the range
      for (int i = 0; i < n; ++i) v.push_back(i % 2 ? Layout::kMaxValue : 1);
      break;
    case Dist::EachCount:  // n bins from 200 up, the k-th holding k samples
      for (int k = 1; k <= n; ++k)
        v.insert(v.end(), static_cast<std::size_t>(k),
                 static_cast<std::uint64_t>(Layout::lowerEdge(199 + k)));
      break;
  }
  return v;
}

// Nearest-rank quantile: the smallest sample with at least q·n samples at or below it.
double exactQuantile(const std::vector<std::uint64_t>& sorted, double q) {
  const double n = static_cast<double>(sorted.size());
  auto rank = static_cast<std::int64_t>(std::ceil(q * n - 1e-9));
  rank = std::clamp<std::int64_t>(rank, 1, static_cast<std::int64_t>(sorted.size()));
  return static_cast<double>(sorted[static_cast<std::size_t>(rank - 1)]);
}

template <typename A, typename B>
bool sameBins(const BasicHistogram<A>& a, const BasicHistogram<B>& b) {
  if (static_cast<double>(a.total()) != static_cast<double>(b.total())) return false;
  for (int i = 0; i < Layout::kBins; ++i)
    if (static_cast<double>(a.binCount(i)) != static_cast<double>(b.binCount(i))) return false;
  return true;
}

}  // namespace

Q_DECLARE_METATYPE(Dist)

class TstHistogram : public QObject {
  Q_OBJECT

 private slots:
  void layoutIsAContiguousPartition();
  void binOfMonotonic();
  void binOfBoundaries_data();
  void binOfBoundaries();
  void representativeWithinHalfBin();
  void quantileRelativeError_data();
  void quantileRelativeError();
  void emptyHistogram();
  void mergeEqualsAddingAll_data();
  void mergeEqualsAddingAll();
  void subtractAfterMergeRestores_data();
  void subtractAfterMergeRestores();
  void countAbove_data();
  void countAbove();
  void weightedAddAndScale();
  void quantileMatchesNaiveScan_data();
  void quantileMatchesNaiveScan();
  void quantileExceedsAgreesWithQuantile_data();
  void quantileExceedsAgreesWithQuantile();
  void scaledFoldsEqualMergeScaled_data();
  void scaledFoldsEqualMergeScaled();
  void packedBinsHoldEveryCount_data();
  void packedBinsHoldEveryCount();
  void compactHistogramWidensWithoutLoss_data();
  void compactHistogramWidensWithoutLoss();
  void pagedEqualsFlat_data();
  void pagedEqualsFlat();
  void pagesOnlyWhereSamplesLand();
  void deferredAddsSettleToAddBins_data();
  void deferredAddsSettleToAddBins();
};

// The two-level quantile (block sums, bin masks, walking down from the top for q > 0.5) must
// give exactly the nearest-rank answer of a plain scan over all bins — for exact counts, for
// decayed (scaled, forward-weighted) ones, and after windows slide (subtract).
namespace {
template <typename H>
double naiveQuantile(const H& h, double q) {
  double total = 0;
  for (int i = 0; i < spillway::HistogramLayout::kBins; ++i) total += h.binCount(i);
  if (total <= 0) return 0;
  double rank = std::max(q * total, 1e-12), seen = 0;
  for (int i = 0; i < spillway::HistogramLayout::kBins; ++i) {
    if (!(h.binCount(i) > 0)) continue;
    seen += h.binCount(i);
    if (seen >= rank - 1e-9) return spillway::HistogramLayout::representative(i);
  }
  return spillway::HistogramLayout::representative(spillway::HistogramLayout::kBins - 1);
}
}  // namespace

void TstHistogram::quantileMatchesNaiveScan_data() {
  QTest::addColumn<int>("samples");
  QTest::addColumn<bool>("decayed");
  QTest::addColumn<bool>("slide");
  QTest::newRow("few exact") << 5 << false << false;
  QTest::newRow("many exact") << 5000 << false << false;
  QTest::newRow("exact, slid window") << 3000 << false << true;
  QTest::newRow("decayed") << 3000 << true << false;
}

void TstHistogram::quantileMatchesNaiveScan() {
  QFETCH(int, samples);
  QFETCH(bool, decayed);
  QFETCH(bool, slide);
  spillway::Rng rng(static_cast<std::uint64_t>(samples) * 7 + decayed);
  for (int round = 0; round < 20; ++round) {
    spillway::LatencyHistogram exact, older;
    spillway::DecayingHistogram dec;
    double weight = 1.0;
    for (int k = 0; k < samples; ++k) {
      // Log-uniform latencies from 10 µs to ~20 min exercise every octave.
      const auto us = static_cast<std::uint64_t>(std::exp(2.3 + rng.uniform() * 18.6));
      exact.add(us);
      if (k < samples / 2) older.add(us);
      if (k % 64 == 0) weight *= 1.01;
      dec.add(us, weight);
    }
    if (slide) exact.subtract(older);
    for (double q : {0.0, 0.01, 0.25, 0.5, 0.51, 0.9, 0.99, 0.999, 1.0}) {
      if (decayed) {
        QCOMPARE(dec.quantile(q), naiveQuantile(dec, q));
      } else {
        QCOMPARE(exact.quantile(q), naiveQuantile(exact, q));
      }
    }
  }
}

void TstHistogram::layoutIsAContiguousPartition() {
  // Every bin's lower edge maps to it, the value before maps to the previous bin, and the
  // bins tile [0, kMaxValue] without gaps.
  QCOMPARE(Layout::binOf(0), 0);
  for (int b = 0; b < Layout::kBins; ++b) {
    const auto lo = static_cast<std::uint64_t>(Layout::lowerEdge(b));
    const auto w = static_cast<std::uint64_t>(Layout::width(b));
    QVERIFY2(w >= 1, qPrintable(QString("bin %1").arg(b)));
    QCOMPARE(Layout::binOf(lo), b);
    QCOMPARE(Layout::binOf(lo + w - 1), b);
    if (b > 0) QCOMPARE(Layout::binOf(lo - 1), b - 1);
    if (b + 1 < Layout::kBins) {
      QCOMPARE(static_cast<std::uint64_t>(Layout::lowerEdge(b + 1)), lo + w);
    } else {
      QCOMPARE(lo + w - 1, Layout::kMaxValue);
    }
    // Relative bin width: ≤ 1/64 of the lower edge once bins are wider than 1 µs.
    if (w > 1) QVERIFY(static_cast<double>(w) <= static_cast<double>(lo) / Layout::kSub);
  }
  // Above the range everything is clamped into the last bin.
  QCOMPARE(Layout::binOf(Layout::kMaxValue + 1), Layout::kBins - 1);
  QCOMPARE(Layout::binOf(std::numeric_limits<std::uint64_t>::max()), Layout::kBins - 1);
}

void TstHistogram::binOfMonotonic() {
  // Dense: consecutive values never go back and never skip a bin.
  for (std::uint64_t x = 0; x < (std::uint64_t{1} << 16); ++x) {
    const int d = Layout::binOf(x + 1) - Layout::binOf(x);
    if (d != 0 && d != 1) QFAIL(qPrintable(QString("binOf jumps by %1 at %2").arg(d).arg(x)));
  }
  // Sparse: random ordered pairs over the whole (and beyond the) range.
  Rng rng(7);
  const double logTop = std::log(static_cast<double>(Layout::kMaxValue) * 4.0);
  for (int i = 0; i < 200'000; ++i) {
    auto a = static_cast<std::uint64_t>(std::exp(rng.uniform() * logTop));
    auto b = static_cast<std::uint64_t>(std::exp(rng.uniform() * logTop));
    if (a > b) std::swap(a, b);
    if (Layout::binOf(a) > Layout::binOf(b))
      QFAIL(qPrintable(QString("binOf(%1) > binOf(%2)").arg(a).arg(b)));
  }
}

void TstHistogram::binOfBoundaries_data() {
  // startsBin: v is the first value of its bin (binOf(v-1) < binOf(v)). Octave e ≥ 6 has bins
  // of width 2^(e-6); below 128 µs every value has its own bin.
  QTest::addColumn<quint64>("v");
  QTest::addColumn<bool>("startsBin");
  QTest::newRow("63 exact") << quint64(63) << true;
  QTest::newRow("64 first log octave, width 1") << quint64(64) << true;
  QTest::newRow("127 width 1") << quint64(127) << true;
  QTest::newRow("128 octave 7 starts") << quint64(128) << true;
  QTest::newRow("129 shares 128's bin") << quint64(129) << false;
  QTest::newRow("130 next width-2 bin") << quint64(130) << true;
  QTest::newRow("256 octave 8 starts") << quint64(256) << true;
  QTest::newRow("259 inside width-4 bin") << quint64(259) << false;
  QTest::newRow("260 next width-4 bin") << quint64(260) << true;
  QTest::newRow("2^20 octave starts") << (quint64(1) << 20) << true;
  QTest::newRow("2^20 + 2^14 - 1 inside") << ((quint64(1) << 20) + (quint64(1) << 14) - 1) << false;
  QTest::newRow("2^20 + 2^14 next bin") << ((quint64(1) << 20) + (quint64(1) << 14)) << true;
  QTest::newRow("2^29 last octave starts") << (quint64(1) << 29) << true;
  QTest::newRow("kMaxValue inside last bin") << quint64(Layout::kMaxValue) << false;
}

void TstHistogram::binOfBoundaries() {
  QFETCH(quint64, v);
  QFETCH(bool, startsBin);
  const int b = Layout::binOf(v);
  QCOMPARE(Layout::binOf(v - 1) < b, startsBin);
  QCOMPARE(static_cast<std::uint64_t>(Layout::lowerEdge(b)) == v, startsBin);
  QVERIFY(Layout::lowerEdge(b) <= static_cast<double>(v));
  QVERIFY(static_cast<double>(v) < Layout::lowerEdge(b) + Layout::width(b));
}

void TstHistogram::representativeWithinHalfBin() {
  // A single sample's quantile is its bin's representative: exact below 128 µs, otherwise off
  // by at most half a bin, i.e. ≤ 1/128 of the value (the documented 0.78 %).
  auto check = [](std::uint64_t x) {
    LatencyHistogram h;
    h.add(x);
    const double r = h.quantile(0.5);
    const double err = std::abs(r - static_cast<double>(x));
    if (x < 128) return err == 0.0;
    return err <= static_cast<double>(x) / 128.0;
  };
  for (std::uint64_t x = 0; x < 4096; ++x)
    if (!check(x)) QFAIL(qPrintable(QString("representative of %1").arg(x)));
  for (int b = 0; b < Layout::kBins; ++b) {
    const auto lo = static_cast<std::uint64_t>(Layout::lowerEdge(b));
    const auto hi = lo + static_cast<std::uint64_t>(Layout::width(b)) - 1;
    if (!check(lo) || !check(hi))
      QFAIL(qPrintable(QString("representative of bin %1 edges").arg(b)));
  }
}

void TstHistogram::quantileRelativeError_data() {
  QTest::addColumn<Dist>("dist");
  QTest::addColumn<int>("n");
  QTest::addColumn<quint64>("seed");
  QTest::newRow("log-uniform 1us..17min") << Dist::LogUniform << 100'000 << quint64(1);
  QTest::newRow("log-uniform small n") << Dist::LogUniform << 37 << quint64(2);
  QTest::newRow("exact region <128us") << Dist::ExactRegion << 10'000 << quint64(3);
  QTest::newRow("lognormal LLM latencies") << Dist::LogNormalLlm << 50'000 << quint64(4);
  QTest::newRow("bimodal 20ms / 5min") << Dist::Bimodal << 50'000 << quint64(5);
  QTest::newRow("octave edges") << Dist::OctaveEdges << 0 << quint64(6);
  QTest::newRow("1us and 17.9min") << Dist::Extremes << 1'001 << quint64(7);
}

void TstHistogram::quantileRelativeError() {
  QFETCH(Dist, dist);
  QFETCH(int, n);
  QFETCH(quint64, seed);
  std::vector<std::uint64_t> v = samples(dist, n, seed);
  LatencyHistogram h;
  for (std::uint64_t x : v) h.add(x);
  QCOMPARE(static_cast<std::size_t>(h.total()), v.size());
  std::sort(v.begin(), v.end());
  for (double q : {0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0}) {
    const double exact = exactQuantile(v, q);
    const double got = h.quantile(q);
    if (std::abs(got - exact) > 0.01 * exact)
      QFAIL(qPrintable(QString("q=%1: histogram %2 vs exact %3").arg(q).arg(got).arg(exact)));
  }
}

void TstHistogram::emptyHistogram() {
  LatencyHistogram h;
  QCOMPARE(h.total(), 0u);
  QCOMPARE(h.quantile(0.5), 0.0);
  QCOMPARE(h.quantile(0.99), 0.0);
  QCOMPARE(h.countAbove(0), 0.0);
  DecayingHistogram d;
  QCOMPARE(d.quantile(0.99), 0.0);
}

void TstHistogram::mergeEqualsAddingAll_data() {
  QTest::addColumn<int>("nA");
  QTest::addColumn<int>("nB");
  QTest::newRow("both filled") << 5'000 << 7'000;
  QTest::newRow("merge empty") << 5'000 << 0;
  QTest::newRow("into empty") << 0 << 3'000;
}

void TstHistogram::mergeEqualsAddingAll() {
  QFETCH(int, nA);
  QFETCH(int, nB);
  const auto a = samples(Dist::LogUniform, nA, 11);
  const auto b = samples(Dist::LogNormalLlm, nB, 12);
  LatencyHistogram ha, hb, all;
  for (auto x : a) ha.add(x), all.add(x);
  for (auto x : b) hb.add(x), all.add(x);
  ha.merge(hb);
  QVERIFY(sameBins(ha, all));
  QCOMPARE(ha.total(), static_cast<std::uint32_t>(nA + nB));
  for (double q : {0.01, 0.5, 0.99}) QCOMPARE(ha.quantile(q), all.quantile(q));
  // Merging an exact histogram into a decayed one carries the same counts.
  DecayingHistogram d;
  d.merge(all);
  QVERIFY(sameBins(d, all));
  QCOMPARE(d.quantile(0.99), all.quantile(0.99));
}

void TstHistogram::subtractAfterMergeRestores_data() {
  QTest::addColumn<int>("nA");
  QTest::addColumn<int>("nB");
  QTest::newRow("overlapping") << 4'000 << 4'000;
  QTest::newRow("subtract everything") << 0 << 2'500;
  QTest::newRow("subtract nothing") << 2'500 << 0;
}

void TstHistogram::subtractAfterMergeRestores() {
  QFETCH(int, nA);
  QFETCH(int, nB);
  LatencyHistogram ha, hb;
  for (auto x : samples(Dist::Bimodal, nA, 21)) ha.add(x);
  for (auto x : samples(Dist::LogUniform, nB, 22)) hb.add(x);
  const LatencyHistogram original = ha;
  ha.merge(hb);
  QCOMPARE(ha.total(), static_cast<std::uint32_t>(nA + nB));
  ha.subtract(hb);
  QVERIFY(sameBins(ha, original));
  for (double q : {0.0, 0.5, 0.99, 1.0}) QCOMPARE(ha.quantile(q), original.quantile(q));
}

void TstHistogram::countAbove_data() {
  QTest::addColumn<QList<quint64>>("values");
  QTest::addColumn<quint64>("threshold");
  QTest::addColumn<double>("expected");
  const quint64 ms = 1000;
  const quint64 million = 1'000'000;
  const int bMillion = Layout::binOf(million);
  const auto nextEdge = static_cast<quint64>(Layout::lowerEdge(bMillion + 1));
  QTest::newRow("exact region, strict")
      << QList<quint64>{10, 49, 50, 51, 100} << quint64(50) << 2.0;
  QTest::newRow("none above") << QList<quint64>{1, 2, 3} << quint64(3) << 0.0;
  QTest::newRow("all above zero") << QList<quint64>{100 * ms, 1000 * ms} << quint64(0) << 2.0;
  QTest::newRow("log region") << QList<quint64>{100 * ms, 200 * ms, 300 * ms, 1000 * ms, 2000 * ms}
                              << quint64(250 * ms) << 3.0;
  // Bin resolution: a sample in the threshold's own bin is not "above" it ...
  QTest::newRow("same bin is not above")
      << QList<quint64>{million, million + 1} << quint64(million) << 0.0;
  // ... the first value of the next bin is.
  QTest::newRow("next bin is above")
      << QList<quint64>{nextEdge - 1, nextEdge} << quint64(million) << 1.0;
  QTest::newRow("clamped values count above 1s")
      << QList<quint64>{Layout::kMaxValue + 1000, Layout::kMaxValue} << quint64(1000 * ms) << 2.0;
}

void TstHistogram::countAbove() {
  QFETCH(QList<quint64>, values);
  QFETCH(quint64, threshold);
  QFETCH(double, expected);
  LatencyHistogram h;
  for (quint64 v : values) h.add(v);
  QCOMPARE(h.countAbove(threshold), expected);
  // Same rule on a decayed histogram scaled by a constant.
  DecayingHistogram d;
  for (quint64 v : values) d.add(v, 2.5);
  QCOMPARE(d.countAbove(threshold), 2.5 * expected);
}

void TstHistogram::weightedAddAndScale() {
  DecayingHistogram d;
  LatencyHistogram h;
  for (auto x : samples(Dist::LogNormalLlm, 2'000, 31)) d.add(x), h.add(x);
  const double p50 = d.quantile(0.5), p99 = d.quantile(0.99);
  QCOMPARE(p50, h.quantile(0.5));
  QCOMPARE(p99, h.quantile(0.99));
  d.scale(0.25);
  QCOMPARE(d.total(), 500.0);
  // Scaling changes weights, not shape.
  QCOMPARE(d.quantile(0.5), p50);
  QCOMPARE(d.quantile(0.99), p99);
  // add(v, n) weighs like n single adds.
  LatencyHistogram w, s;
  w.add(12'345, 7);
  for (int i = 0; i < 7; ++i) s.add(12'345);
  QVERIFY(sameBins(w, s));
}

// quantileExceeds(q, v) — the breaker's drift check without a quantile walk — must answer
// exactly quantile(q) > v, for values on, just below and just above every representative in
// use, between bins and out of range; and countThrough must equal a plain prefix sum.
void TstHistogram::quantileExceedsAgreesWithQuantile_data() {
  QTest::addColumn<Dist>("dist");
  QTest::addColumn<int>("count");
  QTest::addColumn<bool>("slide");
  QTest::newRow("one sample") << Dist::LogNormalLlm << 1 << false;
  QTest::newRow("few, LLM latencies") << Dist::LogNormalLlm << 9 << false;
  QTest::newRow("window, LLM latencies") << Dist::LogNormalLlm << 200 << false;
  QTest::newRow("slid window") << Dist::LogNormalLlm << 400 << true;
  QTest::newRow("exact region") << Dist::ExactRegion << 300 << false;
  QTest::newRow("octave edges") << Dist::OctaveEdges << 0 << false;
  QTest::newRow("bimodal") << Dist::Bimodal << 500 << true;
  QTest::newRow("extremes") << Dist::Extremes << 10 << false;
  QTest::newRow("log-uniform") << Dist::LogUniform << 3000 << true;
}

void TstHistogram::quantileExceedsAgreesWithQuantile() {
  QFETCH(Dist, dist);
  QFETCH(int, count);
  QFETCH(bool, slide);
  const std::vector<std::uint64_t> v = samples(dist, count, 11 + static_cast<std::uint64_t>(count));
  LatencyHistogram h, older;
  for (std::size_t k = 0; k < v.size(); ++k) {
    h.add(v[k]);
    if (k < v.size() / 2) older.add(v[k]);
  }
  if (slide) h.subtract(older);  // masks kept tight by eviction
  std::uint64_t prefix = 0;
  for (int b = 0; b < Layout::kBins; ++b) {
    prefix += h.binCount(b);
    QCOMPARE(h.countThrough(b), prefix);
  }
  std::vector<double> values = {-1.0, 0.0, 0.5, 1e12, std::numeric_limits<double>::infinity()};
  for (int b = 0; b < Layout::kBins; ++b) {
    if (h.binCount(b) == 0 && b % 97 != 0) continue;  // every bin in use, and some empty ones
    const double r = Layout::representative(b);
    for (double d : {-0.5, -1e-9, 0.0, 1e-9, 0.25, 0.5}) values.push_back(r + d * Layout::width(b));
    values.push_back(std::nextafter(r, 0.0));
    values.push_back(std::nextafter(r, 1e300));
  }
  int above = 0, atOrBelow = 0;
  for (double q : {0.0, 0.01, 0.25, 0.5, 0.51, 0.9, 0.99, 1.0}) {
    for (double value : values) {
      const bool expected = h.quantile(q) > value;
      if (h.quantileExceeds(q, value) != expected)
        QFAIL(qPrintable(QStringLiteral("q=%1 value=%2: quantile %3")
                             .arg(q)
                             .arg(value, 0, 'g', 17)
                             .arg(h.quantile(q), 0, 'g', 17)));
      (expected ? above : atOrBelow)++;
    }
  }
  QVERIFY(above > 0 && atOrBelow > 0);  // both answers occur
  LatencyHistogram empty;
  QCOMPARE(empty.quantileExceeds(0.5, 0.0), empty.quantile(0.5) > 0.0);
  QCOMPARE(empty.quantileExceeds(0.5, -1.0), empty.quantile(0.5) > -1.0);
}

// A breaker folds a slice's list of bins into its decayed baseline with addBinsScaled, a packed
// slice with addCountsScaled; either must be bit for bit what mergeScaled of a histogram of
// the same calls gives — every bin, group and block sum and the total — over many folds with a
// growing weight, with repeated bins, and on top of an existing baseline.
void TstHistogram::scaledFoldsEqualMergeScaled_data() {
  QTest::addColumn<Dist>("dist");
  QTest::addColumn<int>("perSlice");
  QTest::newRow("LLM latencies, 20 a slice") << Dist::LogNormalLlm << 20;
  QTest::newRow("exact region, many repeats") << Dist::ExactRegion << 200;
  QTest::newRow("bimodal, 5 a slice") << Dist::Bimodal << 5;
  QTest::newRow("log-uniform, 255 a slice") << Dist::LogUniform << 255;
  QTest::newRow("one a slice") << Dist::LogNormalLlm << 1;
}

void TstHistogram::scaledFoldsEqualMergeScaled() {
  QFETCH(Dist, dist);
  QFETCH(int, perSlice);
  DecayingHistogram viaMerge, viaBins, viaPacked;
  double weight = 1.0;
  for (int slice = 0; slice < 300; ++slice) {
    const std::vector<std::uint64_t> v = samples(dist, perSlice, 1000 + slice);
    LatencyHistogram h;
    std::vector<std::uint16_t> bins;
    for (const std::uint64_t us : v) {
      h.add(us);
      bins.push_back(static_cast<std::uint16_t>(Layout::binOf(us)));
    }
    weight *= 1.0066;  // the forward-decay step of a 1 s slice over a 150 s horizon
    viaMerge.mergeScaled(h, weight);
    viaBins.addBinsScaled(bins.data(), bins.size(), weight);
    SliceBins packed;
    packed.pack(bins.data(), bins.size());
    viaPacked.addCountsScaled([&](auto f) { packed.forEach(f); }, weight);
  }
  QVERIFY(viaMerge.total() > 0);
  // Bitwise: the same doubles, not merely close ones.
  auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  for (const DecayingHistogram* via : {&viaBins, &viaPacked}) {
    QVERIFY(same(via->total(), viaMerge.total()));
    QCOMPARE(via->usedBlocks(), viaMerge.usedBlocks());
    for (int b = 0; b < DecayingHistogram::kBlocks; ++b) {
      QCOMPARE(via->blockMask(b), viaMerge.blockMask(b));
      QVERIFY2(same(via->blockCount(b), viaMerge.blockCount(b)), qPrintable(QString::number(b)));
      for (int g = 0; g < DecayingHistogram::kGroupsPerBlock; ++g)
        QVERIFY(same(via->groupCount(b, g), viaMerge.groupCount(b, g)));
    }
    for (int i = 0; i < Layout::kBins; ++i)
      QVERIFY2(same(via->binCount(i), viaMerge.binCount(i)), qPrintable(QString::number(i)));
    for (double q : {0.5, 0.99}) QCOMPARE(via->quantile(q), viaMerge.quantile(q));
  }
  // The per-thread tally is left empty: a second, different fold gives the same again.
  const std::uint16_t one[] = {200, 200, 900};
  LatencyHistogram h3;
  for (const std::uint16_t b : one) h3.addBin(b, 1);
  viaMerge.mergeScaled(h3, 2.0);
  viaBins.addBinsScaled(one, 3, 2.0);
  QVERIFY(same(viaBins.binCount(200), viaMerge.binCount(200)));
  QVERIFY(same(viaBins.binCount(900), viaMerge.binCount(900)));
  QVERIFY(same(viaBins.total(), viaMerge.total()));
}

// A completed slice (SliceBins) is packed from its histogram or from its calls' bins, or kept
// as the list of them: packed, it must give back every bin in use with its count, in rising
// order — counts past the one-byte form (255 and more) and bins at both ends included; in any
// form, the prefix counts of the histogram it came from, and adding it to a histogram and
// taking it out again must leave that histogram as it was.
void TstHistogram::packedBinsHoldEveryCount_data() {
  QTest::addColumn<Dist>("dist");
  QTest::addColumn<int>("n");
  QTest::newRow("LLM latencies, a busy slice") << Dist::LogNormalLlm << 1000;
  QTest::newRow("exact region: counts past 255") << Dist::ExactRegion << 40000;
  // Every count from 1 to 300 in its own bin: short (a nibble), the first long ones (14, 15,
  // 16), the last and first of a long count's byte and four bytes (269, 270).
  QTest::newRow("each count 1–300 once") << Dist::EachCount << 300;
  QTest::newRow("octave edges") << Dist::OctaveEdges << 300;
  QTest::newRow("both ends of the range") << Dist::Extremes << 600;
  QTest::newRow("log-uniform, sparse") << Dist::LogUniform << 7;
  QTest::newRow("one call") << Dist::Bimodal << 1;
}

void TstHistogram::packedBinsHoldEveryCount() {
  QFETCH(Dist, dist);
  QFETCH(int, n);
  const std::vector<std::uint64_t> v = samples(dist, n, 77);
  LatencyHistogram h;
  std::vector<std::uint16_t> bins;
  for (const std::uint64_t us : v) {
    h.add(us);
    bins.push_back(static_cast<std::uint16_t>(Layout::binOf(us)));
  }
  h.addBin(Layout::binOf(v.front()), 70000);  // a count that needs the four-byte form
  bins.insert(bins.end(), 70000, static_cast<std::uint16_t>(Layout::binOf(v.front())));
  SliceBins fromHist, fromList, asList;
  fromHist.pack(h);
  fromList.pack(bins.data(), bins.size());
  std::vector<std::uint16_t> given = bins;
  asList.takeList(given);
  QVERIFY(given.empty());
  QVERIFY(fromHist.packed() && fromList.packed() && !asList.packed());
  for (const SliceBins* p : {&fromHist, &fromList, &asList}) {
    QCOMPARE(p->total(), h.total());
    QVERIFY(sameBins(p->histogram(), h));
    for (std::size_t k = 0; k < v.size(); k += 1 + v.size() / 64) {  // a list counts every call
      const int bin = Layout::binOf(v[k]);
      QCOMPARE(std::uint64_t{p->countThrough(bin)}, h.countThrough(bin));
      QCOMPARE(std::uint64_t{p->countThrough(bin - 1)}, bin > 0 ? h.countThrough(bin - 1) : 0u);
    }
    LatencyHistogram other;
    for (int i = 0; i < 50; ++i) other.add(5000 + 997 * i);
    const LatencyHistogram before = other;
    p->addTo(other);
    QCOMPARE(other.total(), before.total() + h.total());
    p->removeFrom(other);
    QVERIFY(sameBins(other, before));
    if (!p->packed()) continue;
    int last = -1;
    std::uint32_t seen = 0;
    bool ordered = true, exact = true;
    p->forEach([&](int bin, std::uint32_t c) {
      ordered &= bin > last;
      exact &= c > 0 && c == h.binCount(bin);
      last = bin;
      ++seen;
    });
    QVERIFY(ordered);
    QVERIFY(exact);
    std::uint32_t inUse = 0;
    for (int i = 0; i < Layout::kBins; ++i) inUse += h.binCount(i) > 0;
    QCOMPARE(seen, inUse);
  }
  // Repacking replaces what was there; an emptied histogram packs to nothing.
  h.clear();
  fromHist.pack(h);
  QVERIFY(fromHist.empty());
  QCOMPARE(fromHist.total(), 0u);
}

// A window's compact histogram keeps 16-bit counts while it holds fewer than 65,536 calls and
// widens before any count could wrap, whichever way the calls come (singles in batches, as the
// head slice takes them, aggregates, or a packed slice bin by bin, as the window takes one):
// always the counts a 32-bit histogram holds, also once calls are taken back out.
void TstHistogram::compactHistogramWidensWithoutLoss_data() {
  QTest::addColumn<int>("singles");            // in batches of 12, one bin for every 7th batch
  QTest::addColumn<QList<int>>("aggregates");  // merged after the singles, each in 3 bins
  QTest::addColumn<bool>("wide");
  QTest::newRow("a busy slice stays narrow") << 5000 << QList<int>{} << false;
  QTest::newRow("65,535 calls stay narrow") << 65'535 << QList<int>{} << false;
  QTest::newRow("the 65,536th single widens") << 65'536 << QList<int>{} << true;
  QTest::newRow("singles past 65,535, one bin hot") << 200'000 << QList<int>{} << true;
  QTest::newRow("one aggregate past 65,535") << 10 << QList<int>{70'000} << true;
  QTest::newRow("aggregates that add up past 65,535") << 300 << QList<int>{40'000, 30'000} << true;
  QTest::newRow("aggregates up to 65,535") << 35 << QList<int>{40'000, 25'500} << false;
}

void TstHistogram::compactHistogramWidensWithoutLoss() {
  QFETCH(int, singles);
  QFETCH(QList<int>, aggregates);
  QFETCH(bool, wide);
  Rng rng(static_cast<std::uint64_t>(singles) + 3);
  CompactHistogram head;
  LatencyHistogram want;
  std::vector<std::uint16_t> batch;
  for (int k = 0; k < singles;) {
    batch.clear();
    const int hot = Layout::binOf(900'000);
    for (int i = 0; i < 12 && k < singles; ++i, ++k) {
      const int bin =
          (k / 12) % 7 == 0
              ? hot
              : Layout::binOf(static_cast<std::uint64_t>(std::exp(11.0 + 3.0 * rng.uniform())));
      batch.push_back(static_cast<std::uint16_t>(bin));
      want.addBin(bin, 1);
    }
    head.addBins(batch.data(), static_cast<int>(batch.size()));
  }
  for (const int calls : aggregates) {
    LatencyHistogram agg;
    agg.add(2'000, static_cast<std::uint32_t>(calls / 3));
    agg.add(700'000, static_cast<std::uint32_t>(calls / 3));
    agg.add(30'000'000, static_cast<std::uint32_t>(calls - 2 * (calls / 3)));
    head.merge(agg);
    want.merge(agg);
  }
  QCOMPARE(head.wide() != nullptr, wide);
  QCOMPARE(head.narrow() != nullptr, !wide);
  const auto check = [&](const CompactHistogram& got) {
    QCOMPARE(std::uint64_t{got.total()}, std::uint64_t{want.total()});
    bool same = false;
    got.visit([&](const auto& h) { same = sameBins(h, want); });
    QVERIFY(same);
    for (int bin = 0; bin < Layout::kBins; bin += 37)
      QCOMPARE(got.countThrough(bin), want.countThrough(bin));
    SliceBins fromGot, fromWant;
    got.visit([&](const auto& h) { fromGot.pack(h); });
    fromWant.pack(want);
    QVERIFY(sameBins(fromGot.histogram(), want));
    QVERIFY(sameBins(fromWant.histogram(), fromGot.histogram()));
  };
  check(head);
  SliceBins slice;  // the same calls, as a completed slice joins the window: bin by bin
  slice.pack(want);
  CompactHistogram window;
  slice.addTo(window);
  QCOMPARE(window.wide() != nullptr, wide);
  check(window);
  // The window lets the aggregates go (as their slice leaves): the width stays.
  for (const int calls : aggregates) {
    const std::uint32_t n[] = {static_cast<std::uint32_t>(calls / 3),
                               static_cast<std::uint32_t>(calls / 3),
                               static_cast<std::uint32_t>(calls - 2 * (calls / 3))};
    const std::uint64_t us[] = {2'000, 700'000, 30'000'000};
    for (int i = 0; i < 3; ++i) {
      window.removeBin(Layout::binOf(us[i]), n[i]);
      want.removeBin(Layout::binOf(us[i]), n[i]);
    }
  }
  QCOMPARE(window.wide() != nullptr, wide);
  check(window);
  // The next slice: emptied, the same width (a busy head stays wide), and exact again.
  head.clear();
  want.clear();
  QCOMPARE(head.total(), 0u);
  QCOMPARE(head.wide() != nullptr, wide);
  const std::uint16_t some[] = {3, 3, 700, 1599};
  head.addBins(some, 4);
  for (const std::uint16_t b : some) want.addBin(b, 1);
  check(head);
}

// Paged storage keeps only the blocks samples landed in. Every operation a window or a
// baseline uses, at random, against a flat array of all 1,600 bins (the storage before it was
// paged): the same counts in every bin and the same quantiles, prefix counts and counts above.
namespace {
struct Flat {
  std::vector<double> bin = std::vector<double>(Layout::kBins, 0.0);
  double total = 0;
  void add(int b, double n) {
    bin[static_cast<std::size_t>(b)] += n;
    total += n;
  }
};

template <typename H>
void compareWithFlat(const H& h, const Flat& f, int op) {
  QVERIFY2(static_cast<double>(h.total()) == f.total, qPrintable(QString("op %1 total").arg(op)));
  for (int i = 0; i < Layout::kBins; ++i)
    if (static_cast<double>(h.binCount(i)) != f.bin[static_cast<std::size_t>(i)])
      QFAIL(qPrintable(QString("op %1 bin %2: %3, flat %4")
                           .arg(op)
                           .arg(i)
                           .arg(static_cast<double>(h.binCount(i)))
                           .arg(f.bin[static_cast<std::size_t>(i)])));
  for (double q : {0.0, 0.01, 0.5, 0.9, 0.99, 1.0}) {
    // The flat array's nearest-rank answer: a plain scan.
    double rank = std::max(q * f.total, 1e-12), seen = 0, want = 0;
    if (f.total > 0) {
      want = Layout::representative(Layout::kBins - 1);
      for (int i = 0; i < Layout::kBins; ++i) {
        if (!(f.bin[static_cast<std::size_t>(i)] > 0)) continue;
        seen += f.bin[static_cast<std::size_t>(i)];
        if (seen >= rank - 1e-9) {
          want = Layout::representative(i);
          break;
        }
      }
    }
    if (h.quantile(q) != want)
      QFAIL(qPrintable(
          QString("op %1 q %2: %3, flat %4").arg(op).arg(q).arg(h.quantile(q)).arg(want)));
  }
  for (std::uint64_t us :
       {std::uint64_t{0}, std::uint64_t{900}, std::uint64_t{250'000}, std::uint64_t{1'500'000}}) {
    double above = 0;
    for (int i = Layout::binOf(us) + 1; i < Layout::kBins; ++i)
      above += f.bin[static_cast<std::size_t>(i)];
    QCOMPARE(h.countAbove(us), above);
    if constexpr (std::is_integral_v<decltype(h.total())>) {
      double through = 0;
      for (int i = 0; i <= Layout::binOf(us); ++i) through += f.bin[static_cast<std::size_t>(i)];
      QCOMPARE(static_cast<double>(h.countThrough(Layout::binOf(us))), through);
    }
  }
}
}  // namespace

void TstHistogram::pagedEqualsFlat_data() {
  QTest::addColumn<bool>("decayed");
  QTest::addColumn<quint64>("seed");
  QTest::newRow("window counts") << false << quint64(1);
  QTest::newRow("window counts, seed 2") << false << quint64(2);
  QTest::newRow("decayed baseline") << true << quint64(3);
}

void TstHistogram::pagedEqualsFlat() {
  QFETCH(bool, decayed);
  QFETCH(quint64, seed);
  Rng rng(seed);
  // A latency around 900 ms, now and then anywhere from 1 µs to the top of the range.
  const auto latency = [&rng]() -> std::uint64_t {
    if (rng.uniform() < 0.05) return clampUs(std::exp(rng.uniform() * 20.7));
    return clampUs(900'000.0 * std::exp(0.35 * normal(rng)));
  };
  LatencyHistogram win, slice;
  DecayingHistogram base;
  Flat fWin, fSlice, fBase;
  for (int op = 0; op < 3000; ++op) {
    const double r = rng.uniform();
    const int b = Layout::binOf(latency());
    if (!decayed) {
      if (r < 0.5) {  // a call into the slice
        slice.addBin(b, 1);
        fSlice.add(b, 1);
      } else if (r < 0.6) {  // the slice joins the window
        win.merge(slice);
        for (int i = 0; i < Layout::kBins; ++i)
          fWin.add(i, fSlice.bin[static_cast<std::size_t>(i)]);
      } else if (r < 0.7 && fWin.total >= fSlice.total) {  // and leaves it
        bool inWindow = true;
        for (int i = 0; i < Layout::kBins; ++i)
          inWindow &=
              fWin.bin[static_cast<std::size_t>(i)] >= fSlice.bin[static_cast<std::size_t>(i)];
        if (!inWindow) continue;
        win.subtract(slice);
        for (int i = 0; i < Layout::kBins; ++i)
          fWin.add(i, -fSlice.bin[static_cast<std::size_t>(i)]);
      } else if (r < 0.75) {
        slice.clear();
        fSlice = Flat{};
      } else if (r < 0.95) {  // a batch of calls
        std::uint16_t bins[12];
        for (auto& x : bins) {
          x = static_cast<std::uint16_t>(Layout::binOf(latency()));
          fWin.add(x, 1);
        }
        win.addBins(bins, 12);
      } else if (fWin.bin[static_cast<std::size_t>(b)] > 0) {  // one call leaves the window
        win.removeBin(b, 1);
        fWin.add(b, -1);
      }
      compareWithFlat(win, fWin, op);
      compareWithFlat(slice, fSlice, op);
    } else {
      if (r < 0.6) {  // a slice's calls, weighted
        std::uint16_t bins[8];
        for (auto& x : bins) x = static_cast<std::uint16_t>(Layout::binOf(latency()));
        const double w = 1.0 + rng.uniform();
        base.addBinsScaled(bins, 8, w);
        // The same sums: a tally per bin, then weight × count once per bin.
        std::vector<int> tally(Layout::kBins, 0);
        for (auto x : bins) ++tally[x];
        for (int i = 0; i < Layout::kBins; ++i)
          if (tally[static_cast<std::size_t>(i)])
            fBase.bin[static_cast<std::size_t>(i)] += w * tally[static_cast<std::size_t>(i)];
        fBase.total += w * 8;
      } else if (r < 0.8) {  // a dense slice, weighted
        LatencyHistogram h;
        for (int k = 0; k < 20; ++k) h.add(latency());
        const double w = 0.5 + rng.uniform();
        base.mergeScaled(h, w);
        for (int i = 0; i < Layout::kBins; ++i)
          if (h.binCount(i))
            fBase.bin[static_cast<std::size_t>(i)] += w * static_cast<double>(h.binCount(i));
        fBase.total += w * static_cast<double>(h.total());
      } else {  // renormalised
        const double f = 0.25 + rng.uniform() * 0.5;
        base.scale(f);
        for (double& c : fBase.bin) c *= f;
        fBase.total *= f;
      }
      compareWithFlat(base, fBase, op);
    }
    if (QTest::currentTestFailed()) return;
  }
}

// Memory: an empty histogram holds no page; samples in three blocks make three pages; a clear
// keeps them (a slice is cleared every window); a copy holds the same pages.
void TstHistogram::pagesOnlyWhereSamplesLand() {
  LatencyHistogram h;
  QCOMPARE(h.pageBytes(), std::size_t{0});
  QCOMPARE(h.quantile(0.99), 0.0);
  QCOMPARE(h.countAbove(1000), 0.0);
  h.add(900'000);  // one block
  const std::size_t page = h.pageBytes();
  QVERIFY(page > 0);
  QVERIFY(page < 400);  // 64 counts and the block's sums, not 1,600 counts
  h.add(910'000);       // the same block
  QCOMPARE(h.pageBytes(), page);
  h.add(50);         // the exact region
  h.add(3'000'000);  // two octaves up
  QCOMPARE(h.pageBytes(), 3 * page);
  h.clear();
  QCOMPARE(h.pageBytes(), 3 * page);
  QCOMPARE(h.total(), 0u);
  QCOMPARE(h.quantile(0.5), 0.0);
  h.add(920'000);
  const LatencyHistogram copy = h;
  QCOMPARE(copy.quantile(0.5), h.quantile(0.5));
  DecayingHistogram d;
  QCOMPARE(d.pageBytes(), std::size_t{0});
  d.add(900'000, 2.5);
  QVERIFY(d.pageBytes() > page);  // doubles
  QVERIFY(d.pageBytes() < 700);
}

// A window's head takes its calls as counts only (addBinsDeferred) and settles its sums and
// masks before it is read. Through random batches, merges and clears, a copy taken while stale
// (addCountsTo) and the settled histogram must equal one that took every call with addBins:
// every bin, block and group sum, mask, used block, prefix count and quantile.
namespace {
template <typename Count>
void expectSame(const BasicHistogram<Count>& got, const BasicHistogram<Count>& want,
                const char* when, int op) {
  using H = BasicHistogram<Count>;
  const QByteArray at = QByteArray(when) + " after op " + QByteArray::number(op);
  QVERIFY2(got.total() == want.total(), at.constData());
  QVERIFY2(got.usedBlocks() == want.usedBlocks(), at.constData());
  for (int b = 0; b < H::kBlocks; ++b) {
    QVERIFY2(got.blockMask(b) == want.blockMask(b), at.constData());
    QVERIFY2(got.blockCount(b) == want.blockCount(b), at.constData());
    for (int g = 0; g < H::kGroupsPerBlock; ++g)
      QVERIFY2(got.groupCount(b, g) == want.groupCount(b, g), at.constData());
  }
  for (int i = 0; i < Layout::kBins; ++i) {
    QVERIFY2(got.binCount(i) == want.binCount(i), at.constData());
    if (i % 37 == 0) QVERIFY2(got.countThrough(i) == want.countThrough(i), at.constData());
  }
  for (double q : {0.01, 0.5, 0.99}) QVERIFY2(got.quantile(q) == want.quantile(q), at.constData());
}

template <typename Count>
void deferredAgainstEager(std::uint64_t seed) {
  Rng rng(seed);
  BasicHistogram<Count> deferred, eager, other;
  for (int op = 0; op < 400; ++op) {
    const double r = rng.uniform();
    if (r < 0.7) {  // a batch of calls, around 900 ms, now and then anywhere
      std::uint16_t bins[12];
      const int n = 1 + static_cast<int>(rng.uniform() * 12);
      for (int k = 0; k < n; ++k) {
        const double us = rng.uniform() < 0.1 ? std::exp(rng.uniform() * 20.7)
                                              : 900'000.0 * std::exp(0.35 * normal(rng));
        bins[k] = static_cast<std::uint16_t>(Layout::binOf(clampUs(us)));
      }
      deferred.addBinsDeferred(bins, n);
      eager.addBins(bins, n);
    } else if (r < 0.8) {  // an aggregate merged in
      other.clear();
      for (int k = 0; k < 20; ++k) other.add(clampUs(std::exp(rng.uniform() * 20.7)));
      deferred.merge(other);
      eager.merge(other);
    } else if (r < 0.85) {  // the slice completes
      deferred.clear();
      eager.clear();
    } else {  // read: a copy while stale, then settled
      LatencyHistogram copied, merged;
      deferred.addCountsTo(copied);
      merged.merge(eager);
      expectSame(copied, merged, "copy while stale", op);
      deferred.settle();
      QVERIFY(!deferred.stale());
      expectSame(deferred, eager, "settled", op);
    }
  }
}
}  // namespace

void TstHistogram::deferredAddsSettleToAddBins_data() {
  QTest::addColumn<bool>("narrow");
  QTest::addColumn<quint64>("seed");
  for (quint64 seed : {1ull, 2ull, 3ull}) {
    QTest::newRow(qPrintable(QString("16-bit, seed %1").arg(seed))) << true << seed;
    QTest::newRow(qPrintable(QString("32-bit, seed %1").arg(seed))) << false << seed;
  }
}

void TstHistogram::deferredAddsSettleToAddBins() {
  QFETCH(bool, narrow);
  QFETCH(quint64, seed);
  if (narrow)
    deferredAgainstEager<std::uint16_t>(seed);
  else
    deferredAgainstEager<std::uint32_t>(seed);
  if (QTest::currentTestFailed()) return;
  // The compact form settles its 16-bit half before it widens (a merge reads the masks).
  CompactHistogram c;
  LatencyHistogram want;
  std::vector<std::uint16_t> bins(600, static_cast<std::uint16_t>(Layout::binOf(900'000)));
  for (int k = 0; k < 109; ++k) {  // 65,400 calls: still 16 bits
    c.addBinsDeferred(bins.data(), static_cast<int>(bins.size()));
    want.addBins(bins.data(), static_cast<int>(bins.size()));
  }
  QVERIFY(c.narrow() && c.stale());
  c.addBinsDeferred(bins.data(), static_cast<int>(bins.size()));  // past 65,535: widens
  want.addBins(bins.data(), static_cast<int>(bins.size()));
  QVERIFY(c.wide());
  c.settle();
  expectSame(*c.wide(), want, "widened", 0);
}

QTEST_GUILESS_MAIN(TstHistogram)
#include "tst_histogram.moc"
