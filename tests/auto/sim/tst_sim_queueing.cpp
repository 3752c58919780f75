// The simulator against queueing theory. One model, one instance with c slots and a queue far
// too long to fill, no errors, no batching knee, no retries, protection off: a FIFO M/G/c
// queue with Poisson arrivals and lognormal service times (median `base`, log-sigma σ).
//
//   E[S] = base·e^(σ²/2),  E[S²] = base²·e^(2σ²),  Cs² = Var S / E[S]² = e^(σ²) − 1.
//   c = 1: Pollaczek–Khinchine, exact:  Wq = λ E[S²] / (2 (1 − ρ)),  ρ = λ E[S].
//   c > 1: Allen–Cunneen approximation: Wq ≈ ErlangC(c, a) · E[S] / (c (1 − ρ)) · (1 + Cs²) / 2,
//          a = λ E[S], ρ = a / c.
//
// The mean wait is measured as the mean end-to-end latency (Simulator::answeredLatency())
// minus the analytical E[S]. The tolerance is derived, not guessed:
//  - statistical: batch means over 20 equal slices of the run give a standard error; allow 4 SE,
//    and require the SE itself to be small (≤ 4 % of Wq) so the check stays sharp;
//  - binning: the histogram reports bin midpoints, at most 1/128 (0.78 %) off each sample, so
//    the mean end-to-end latency is at most 0.78 % off — allowed in full;
//  - model: 0 for P-K (exact); 10 % of Wq for Allen–Cunneen, whose error for Cs² ≤ 1 and
//    moderate load is a few percent in the literature.
#include <QtTest>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "spillway/histogram.hpp"
#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/series.hpp"
#include "spillway/sim/simulator.hpp"

using namespace spillway;
using namespace spillway::sim;

namespace {

double histogramMean(const LatencyHistogram& h) {
  double sum = 0;
  for (int b = 0; b < HistogramLayout::kBins; ++b)
    sum += HistogramLayout::representative(b) * h.binCount(b);
  return h.total() ? sum / h.total() : 0.0;
}

double erlangC(int c, double a) {
  // Σ a^k/k! for k < c, and a^c/c!, computed by recurrence (no overflow for small c).
  double term = 1, sum = 0;
  for (int k = 0; k < c; ++k) {
    sum += term;
    term *= a / (k + 1);
  }
  const double rho = a / c;
  const double last = term / (1 - rho);
  return last / (sum + last);
}

// A single-instance M/G/c scenario at utilization rho.
Scenario mgc(int c, double rho, double baseMs, double sigma, Micros duration, std::uint64_t seed) {
  const double meanS = baseMs * std::exp(sigma * sigma / 2) / 1000.0;  // seconds
  const double lambda = rho * c / meanS;
  Scenario sc = parseScenario(
      "duration: 1s\nmodels: [{name: m, instances: 1}]\nclients: [{name: c, model: m, rate: 1}]\n",
      "test.yaml");
  sc.duration = duration;
  sc.seed = seed;
  ModelSpec& m = sc.models[0];
  m.slotCount = static_cast<std::uint32_t>(c);
  m.queue = 100000;  // never full at these loads
  m.baseTime = static_cast<Micros>(std::llround(baseMs * 1000));
  m.sigma = sigma;
  m.errorRate = 0;
  m.batching = Batching{};
  ClientSpec& cl = sc.clients[0];
  cl.rate = lambda;
  cl.timeout = seconds(3600);  // nobody gives up
  cl.retries = RetrySpec{};
  return sc;
}

// Mean busy slots sampled at the ticks (for Little's law on the servers).
// Only ticks up to `until` count: the drain after the arrivals stop is not steady state.
class BusySampler final : public SeriesSink {
 public:
  explicit BusySampler(Micros until) : until_(until) {}
  void begin(const std::vector<std::string>&, const std::vector<std::string>&) override {}
  void onInstance(const InstanceTick& r) override {
    if (r.t <= until_) busy.push_back(r.busy);
  }
  void onClient(const ClientTick&) override {}
  std::vector<double> busy;

 private:
  Micros until_;
};

struct MeanAndError {
  double mean = 0, se = 0;
};

// Mean of equal-sized batches and the standard error of that mean.
MeanAndError batchMeans(const std::vector<double>& batches) {
  MeanAndError m;
  const double n = static_cast<double>(batches.size());
  for (double b : batches) m.mean += b / n;
  double var = 0;
  for (double b : batches) var += (b - m.mean) * (b - m.mean) / (n - 1);
  m.se = std::sqrt(var / n);
  return m;
}

}  // namespace

class TstSimQueueing : public QObject {
  Q_OBJECT

 private slots:
  void lognormalServiceTime_data();
  void lognormalServiceTime();
  void meanWait_data();
  void meanWait();
};

void TstSimQueueing::lognormalServiceTime_data() {
  QTest::addColumn<double>("baseMs");
  QTest::addColumn<double>("sigma");
  QTest::newRow("sigma 0: always the median") << 40.0 << 0.0;
  QTest::newRow("sigma 0.25") << 40.0 << 0.25;
  QTest::newRow("sigma 0.8") << 20.0 << 0.8;
}

// With far more slots than calls in service (M/G/∞), the end-to-end latency is the service
// time itself: median = base, mean = base·e^(σ²/2), P99 = base·e^(2.3263 σ). 100 000 samples:
// the sample median's relative SE is ≈ 1.25 σ / √n ≤ 0.4 %, the mean's ≈ √(e^(σ²) − 1) / √n
// ≤ 0.3 %; add the 0.78 % bin error.
void TstSimQueueing::lognormalServiceTime() {
  QFETCH(double, baseMs);
  QFETCH(double, sigma);
  // a = λ E[S] ≈ 4 Erlangs on 200 slots: P(all busy) is astronomically small.
  Scenario sc = mgc(200, 0.02, baseMs, sigma, seconds(1), 5);
  const double meanS = baseMs * std::exp(sigma * sigma / 2);
  sc.duration = static_cast<Micros>(100000 / sc.clients[0].rate * 1e6);
  SimOptions opt;
  opt.protection = false;
  Simulator sim(sc, opt);
  sim.run();
  const LatencyHistogram& h = sim.answeredLatency();
  QVERIFY(h.total() > 95000);
  QCOMPARE(sim.report().queueFull, std::uint64_t{0});
  const double bin = 1.0 / 128;
  const double median = h.quantile(0.5) / 1000.0;
  const double p99 = h.quantile(0.99) / 1000.0;
  const double mean = histogramMean(h) / 1000.0;
  auto close = [&](double got, double want, double rel) {
    return std::abs(got - want) <= rel * want;
  };
  QVERIFY2(close(median, baseMs, bin + 0.005 + 1.25 * sigma * 4 / std::sqrt(1e5)),
           qPrintable(QStringLiteral("median %1 ms, expected %2").arg(median).arg(baseMs)));
  QVERIFY2(close(mean, meanS, bin + 4 * std::sqrt(std::exp(sigma * sigma) - 1) / std::sqrt(1e5)),
           qPrintable(QStringLiteral("mean %1 ms, expected %2").arg(mean).arg(meanS)));
  // The P99 of a lognormal sample of 10^5 is within a few percent (σ-dependent); 5 % is ample
  // and still tells e^(2.33σ) from e^(σ) or from no noise.
  const double wantP99 = baseMs * std::exp(2.3263 * sigma);
  QVERIFY2(close(p99, wantP99, bin + 0.05),
           qPrintable(QStringLiteral("p99 %1 ms, expected %2").arg(p99).arg(wantP99)));
}

void TstSimQueueing::meanWait_data() {
  QTest::addColumn<int>("servers");
  QTest::addColumn<double>("rho");
  QTest::addColumn<double>("sigma");
  QTest::addColumn<double>("modelTolerance");  // share of Wq the formula itself may be off
  QTest::addColumn<quint64>("seed");
  QTest::newRow("M/D/1 rho 0.7 (P-K, sigma 0)") << 1 << 0.7 << 0.0 << 0.0 << quint64{11};
  QTest::newRow("M/G/1 rho 0.5 sigma 0.5 (P-K)") << 1 << 0.5 << 0.5 << 0.0 << quint64{12};
  QTest::newRow("M/G/1 rho 0.7 sigma 0.5 (P-K)") << 1 << 0.7 << 0.5 << 0.0 << quint64{13};
  QTest::newRow("M/G/1 rho 0.6 sigma 0.8 (P-K)") << 1 << 0.6 << 0.8 << 0.0 << quint64{14};
  QTest::newRow("M/G/4 rho 0.7 sigma 0.5 (Allen-Cunneen)")
      << 4 << 0.7 << 0.5 << 0.10 << quint64{15};
  QTest::newRow("M/G/8 rho 0.75 sigma 0.5 (Allen-Cunneen)")
      << 8 << 0.75 << 0.5 << 0.10 << quint64{16};
}

void TstSimQueueing::meanWait() {
  QFETCH(int, servers);
  QFETCH(double, rho);
  QFETCH(double, sigma);
  QFETCH(double, modelTolerance);
  QFETCH(quint64, seed);
  const double baseMs = 10;
  const double meanS = baseMs * std::exp(sigma * sigma / 2);  // ms
  const double cs2 = std::exp(sigma * sigma) - 1;
  const double a = rho * servers;
  const double wq = erlangC(servers, a) * meanS / (servers * (1 - rho)) * (1 + cs2) / 2;  // ms
  if (servers == 1) {
    // The formula above reduces to Pollaczek–Khinchine for one server; say so explicitly.
    const double lambda = rho / meanS;  // per ms
    const double es2 = baseMs * baseMs * std::exp(2 * sigma * sigma);
    QVERIFY(std::abs(wq - lambda * es2 / (2 * (1 - rho))) < 1e-9 * wq);
  }

  // 400 000 requests.
  Scenario sc = mgc(servers, rho, baseMs, sigma, seconds(1), seed);
  const double lambda = sc.clients[0].rate;
  sc.duration = static_cast<Micros>(400000 / lambda * 1e6);
  BusySampler busy(sc.duration);
  SimOptions opt;
  opt.protection = false;
  opt.series = &busy;
  Simulator sim(sc, opt);
  const int kBatches = 20;
  std::vector<double> waits;
  LatencyHistogram prev;
  for (int b = 1; b <= kBatches; ++b) {
    if (b < kBatches)
      sim.runUntil(sc.duration / kBatches * b);
    else
      sim.run();  // the last batch takes the drain too
    LatencyHistogram batch = sim.answeredLatency();
    batch.subtract(prev);
    prev = sim.answeredLatency();
    waits.push_back(histogramMean(batch) / 1000.0 - meanS);
  }
  const auto r = sim.report();
  QCOMPARE(r.queueFull, std::uint64_t{0});
  QCOMPARE(r.inFlightAtEnd, std::uint64_t{0});
  QCOMPARE(r.ends[static_cast<int>(End::Success)], r.originals);  // nobody failed or gave up
  QVERIFY(r.originals > 390000);

  const MeanAndError w = batchMeans(waits);
  const double overall = histogramMean(sim.answeredLatency()) / 1000.0 - meanS;
  const double bias = (meanS + wq) / 128;  // the bins' worst case, on the end-to-end mean
  const double allowed = 4 * w.se + bias + modelTolerance * wq;
  const QString msg = QStringLiteral("Wq measured %1 ms (SE %2), formula %3 ms, allowed ±%4")
                          .arg(overall)
                          .arg(w.se)
                          .arg(wq)
                          .arg(allowed);
  QVERIFY2(w.se <= 0.04 * wq, qPrintable(msg));  // the run is long enough to judge
  QVERIFY2(std::abs(overall - wq) <= allowed, qPrintable(msg));

  // Little's law on the servers: mean busy slots = λ E[S] = a. The tick samples (one per
  // second) are nearly independent at these time scales; batch them to get an SE anyway.
  std::vector<double> busyBatches;
  const std::size_t per = busy.busy.size() / kBatches;
  for (int b = 0; b < kBatches; ++b) {
    double s = 0;
    for (std::size_t i = 0; i < per; ++i) s += busy.busy[b * per + i];
    busyBatches.push_back(s / per);
  }
  const MeanAndError bm = batchMeans(busyBatches);
  QVERIFY2(std::abs(bm.mean - a) <= 4 * bm.se + 0.01 * a,
           qPrintable(
               QStringLiteral("mean busy %1 (SE %2), expected %3").arg(bm.mean).arg(bm.se).arg(a)));
}

QTEST_GUILESS_MAIN(TstSimQueueing)
#include "tst_sim_queueing.moc"
