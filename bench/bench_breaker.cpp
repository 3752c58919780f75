// Breaker hot paths under realistic time: every benchmark drives simulated time forward at a
// fixed call rate per instance, so bucket rollovers and baseline slice folds happen at the rate
// they would in production (1 s buckets, 10 s window: one rollover per 1000 calls at 1000
// calls/s). Traffic (latency, status) is pregenerated so the RNG is not measured.
//
// One benchmark iteration = one admit + record pair (or one admit for the reject-only paths,
// one recordAggregate for the aggregate path). Results are ns per iteration.
// Docs: docs/performance.md.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "spillway/breaker.hpp"
#include "spillway/engine.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/rng.hpp"

namespace {

using namespace spillway;

// The shipped default policy (seed-000 numbers): 10 s window of 1 s buckets, slow = 3 × P99.
const Policy& defaultPolicy() {
  static const Policy p = loadPolicyFile(SPILLWAY_DEFAULT_POLICY);
  return p;
}

// ---------------------------------------------------------------------------------------------
// Pregenerated traffic.

struct Call {
  std::int32_t latency;  // µs
  std::int16_t status;
  Outcome outcome;
};

constexpr std::size_t kCalls = 1 << 16;  // 512 KiB of calls, read sequentially
constexpr std::size_t kMask = kCalls - 1;

double normal(Rng& r) {  // Box–Muller, as spillway-tracegen does
  double u1 = r.uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  const double u2 = r.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

// Healthy traffic like spillway-tracegen's background: lognormal latency (median 900 ms,
// sigma 0.35), 0.4 % 503, 0.2 % 429, 0.4 % 400 (ignored by the default classifier).
// `clean`: no errors at all (for probe paths, where one failure would reopen the breaker).
std::vector<Call> makeTraffic(bool clean, std::uint64_t seed) {
  Rng r(seed);
  std::vector<Call> v(kCalls);
  for (Call& c : v) {
    const double latMs = 900.0 * std::exp(0.35 * normal(r));
    c.latency = static_cast<std::int32_t>(latMs * 1000.0);
    c.status = 200;
    c.outcome = Outcome::Ok;
    const double u = r.uniform();
    if (clean) continue;
    if (u < 0.004) {
      c.status = 503;
      c.latency = static_cast<std::int32_t>((50.0 + 30.0 * r.uniform()) * 1000.0);
      c.outcome = Outcome::Error;
    } else if (u < 0.006) {
      c.status = 429;
      c.latency = static_cast<std::int32_t>((5.0 + 5.0 * r.uniform()) * 1000.0);
      c.outcome = Outcome::Error;
    } else if (u < 0.010) {
      c.status = 400;
    }
  }
  return v;
}

const std::vector<Call>& healthyTraffic() {
  static const std::vector<Call> v = makeTraffic(false, 42);
  return v;
}
const std::vector<Call>& cleanTraffic() {
  static const std::vector<Call> v = makeTraffic(true, 43);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Simulated time. Each instance sees one call every kPeriod µs (1000 calls/s). A call is
// admitted at t and its outcome recorded at t + 1 µs (the completion of an earlier call landing
// just after; the exact end time does not matter to the windows, only that time moves forward).

constexpr Micros kPeriod = 1000;                      // µs between calls on one instance
constexpr Micros kT0 = Micros{1764480000} * 1000000;  // 2025-11-30T05:20:00Z
constexpr Micros kWarmup = seconds(15);               // fills the window, learns the baseline

template <typename Calls>
inline void pair(Breaker& b, Micros t, const Calls& c) {
  const Decision d = b.admit(t);
  if (d) b.record(t + 1, c.latency, c.status, c.outcome, d.probe);
  benchmark::DoNotOptimize(d);
}

// Healthy traffic from `t` for `span`; returns the next call time.
Micros drive(Breaker& b, Micros t, Micros span, const std::vector<Call>& calls, std::size_t& k) {
  for (const Micros end = t + span; t < end; t += kPeriod) pair(b, t, calls[k++ & kMask]);
  return t;
}

// Hard failures (503) until the breaker leaves CLOSED.
Micros tripOpen(Breaker& b, Micros t) {
  const Call fail{60000, 503, Outcome::Error};
  for (int i = 0; i < 100000 && b.state() == BreakerState::Closed; ++i, t += kPeriod)
    pair(b, t, fail);
  return t;
}

void report(benchmark::State& state, const Breaker& b) {
  const BreakerCounters& c = b.counters();
  state.counters["opens"] = static_cast<double>(c.opens);
  state.counters["rejected%"] =
      c.admitted + c.rejected ? 100.0 * c.rejected / double(c.admitted + c.rejected) : 0.0;
  state.counters["sim_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kPeriod / 1e6, benchmark::Counter::kDefaults);
}

// ---------------------------------------------------------------------------------------------
// 1. One instance, steady CLOSED: the hot path. record_offset_us = µs between admit and record
// (1: time moves between them; 0: both share a timestamp, as happens with a µs clock at high
// rates). window_histogram = whether the breaker keeps its window histogram up to date (1: the
// console, which plots window quantiles every tick; 0: replay and listen, which never plot them
// — SlidingStats::keepWindowHistogram).

void BM_Closed_AdmitRecord(benchmark::State& state) {
  const Micros recordOffset = state.range(0);
  const BreakerConfig& cfg = defaultPolicy().breaker;
  Breaker b(0, cfg, 1, nullptr);
  b.keepWindowHistogram(state.range(1) != 0);
  const auto& calls = healthyTraffic();
  std::size_t k = 0;
  Micros t = drive(b, kT0, kWarmup, calls, k);
  if (!b.snapshot(t).baselineLearned) state.SkipWithError("baseline not learned in warm-up");
  for (auto _ : state) {
    const Call& c = calls[k++ & kMask];
    const Decision d = b.admit(t);
    if (d) b.record(t + recordOffset, c.latency, c.status, c.outcome, d.probe);
    benchmark::DoNotOptimize(d);
    t += kPeriod;
  }
  if (b.state() != BreakerState::Closed || b.counters().opens)
    state.SkipWithError("breaker left CLOSED: not the steady state");
  report(state, b);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Closed_AdmitRecord)
    ->ArgNames({"record_offset_us", "window_histogram"})
    ->ArgsProduct({{1, 0}, {1, 0}});

// ---------------------------------------------------------------------------------------------
// 2. Many instances of one Engine, round-robin. Each instance still sees 1000 calls/s, so the
// engine as a whole handles N × 1000 calls/s of simulated time. With 1000 instances the
// working set (~10 KiB of windows and baseline per breaker, bench_instances) is beyond L2.

struct EngineFixture {
  std::unique_ptr<Engine> engine;
  std::size_t k = 0;
  Micros t = 0;
};

EngineFixture& engineFixture(int n) {
  static std::map<int, std::unique_ptr<EngineFixture>> cache;  // warm-up once per size
  auto& slot = cache[n];
  if (!slot) {
    slot = std::make_unique<EngineFixture>();
    slot->engine = std::make_unique<Engine>(defaultPolicy(), 1, nullptr);
    for (int i = 0; i < n; ++i)
      slot->engine->addInstance("chat-72b-" + std::to_string(i), "chat-72b");
    const auto& calls = healthyTraffic();
    const Micros step = kPeriod / n;
    Micros t = kT0;
    for (Micros end = kT0 + kWarmup; t < end;)
      for (InstanceId id = 0; id < static_cast<InstanceId>(n); ++id, t += step)
        pair(slot->engine->breaker(id), t, calls[slot->k++ & kMask]);
    slot->t = t;
  }
  return *slot;
}

void BM_Engine_RoundRobin(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  EngineFixture& f = engineFixture(n);
  Engine& e = *f.engine;
  const auto& calls = healthyTraffic();
  const Micros step = kPeriod / n;
  Micros t = f.t;
  std::size_t k = f.k;
  InstanceId id = 0;
  const auto last = static_cast<InstanceId>(n - 1);
  for (auto _ : state) {
    const Call& c = calls[k++ & kMask];
    const Decision d = e.admit(id, t);
    if (d) e.record(id, d, t + 1, c.latency, c.status, c.outcome);
    benchmark::DoNotOptimize(d);
    t += step;
    id = id == last ? 0 : id + 1;
  }
  // Keep whole rounds so every instance keeps its 1000 calls/s.
  for (; id != 0; id = id == last ? 0 : id + 1, t += step)
    pair(e.breaker(id), t, calls[k++ & kMask]);
  f.t = t;
  f.k = k;
  if (e.totals().opens) state.SkipWithError("a breaker left CLOSED");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Engine_RoundRobin)->ArgName("instances")->Arg(1)->Arg(10)->Arg(100)->Arg(1000);

// ---------------------------------------------------------------------------------------------
// 3. Two threads, one shared Engine (sink nullptr), each thread on its own instances
// (registered up front). Reported time is wall time per pair of the *aggregate* throughput
// (Google Benchmark divides by the iterations of both threads): per-thread ns/pair is twice it.

struct ThreadedFixture {
  std::unique_ptr<Engine> engine;
  int perThread = 0;
  std::vector<Micros> t;       // per thread: its simulated clock
  std::vector<std::size_t> k;  // per thread: position in the traffic
};
std::map<int, std::unique_ptr<ThreadedFixture>> gThreaded;
constexpr int kMaxThreads = 2;

void setupThreaded(const benchmark::State& state) {
  const int m = static_cast<int>(state.range(0));
  auto& slot = gThreaded[m];
  if (slot) return;
  slot = std::make_unique<ThreadedFixture>();
  slot->engine = std::make_unique<Engine>(defaultPolicy(), 1, nullptr);
  slot->perThread = m;
  for (int i = 0; i < kMaxThreads * m; ++i)
    slot->engine->addInstance("chat-72b-" + std::to_string(i), "chat-72b");
  const auto& calls = healthyTraffic();
  const Micros step = kPeriod / m;
  for (int th = 0; th < kMaxThreads; ++th) {
    std::size_t k = static_cast<std::size_t>(th) * 4099;
    Micros t = kT0;
    for (Micros end = kT0 + kWarmup; t < end;)
      for (int i = 0; i < m; ++i, t += step)
        pair(slot->engine->breaker(static_cast<InstanceId>(th * m + i)), t, calls[k++ & kMask]);
    slot->t.push_back(t);
    slot->k.push_back(k);
  }
}

void BM_Engine_TwoThreads(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0));
  ThreadedFixture& f = *gThreaded.at(m);
  Engine& e = *f.engine;
  const int th = state.thread_index();
  const auto& calls = healthyTraffic();
  const Micros step = kPeriod / m;
  const auto first = static_cast<InstanceId>(th * m);
  const auto last = static_cast<InstanceId>(th * m + m - 1);
  Micros t = f.t[th];
  std::size_t k = f.k[th];
  InstanceId id = first;
  for (auto _ : state) {
    const Call& c = calls[k++ & kMask];
    const Decision d = e.admit(id, t);
    if (d) e.record(id, d, t + 1, c.latency, c.status, c.outcome);
    benchmark::DoNotOptimize(d);
    t += step;
    id = id == last ? first : id + 1;
  }
  for (; id != first; id = id == last ? first : id + 1, t += step)
    pair(e.breaker(id), t, calls[k++ & kMask]);
  f.t[th] = t;
  f.k[th] = k;
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Engine_TwoThreads)
    ->ArgName("instances_per_thread")
    ->Arg(1)
    ->Arg(500)
    ->Setup(setupThreaded)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();

// ---------------------------------------------------------------------------------------------
// 4. OPEN: every admit is rejected (open duration set far beyond the run). ns per admit.

void BM_Open_Reject(benchmark::State& state) {
  BreakerConfig cfg = defaultPolicy().breaker;
  cfg.open.duration = cfg.open.maxDuration = seconds(10'000'000);  // stays OPEN
  Breaker b(0, cfg, 1, nullptr);
  std::size_t k = 0;
  Micros t = drive(b, kT0, kWarmup, healthyTraffic(), k);
  t = tripOpen(b, t);
  if (b.state() != BreakerState::Open) state.SkipWithError("did not open");
  for (auto _ : state) {
    benchmark::DoNotOptimize(b.admit(t));
    t += kPeriod;
  }
  if (b.state() != BreakerState::Open) state.SkipWithError("left OPEN");
  report(state, b);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Open_Reject);

// ---------------------------------------------------------------------------------------------
// 5. HALF_OPEN: probe_share 0.1 of admits pass as probes, their (good) outcomes recorded; the
// success streak is set out of reach so the breaker stays HALF_OPEN. ns per admit (+ record
// for the probes).

void BM_HalfOpen_Probe(benchmark::State& state) {
  BreakerConfig cfg = defaultPolicy().breaker;
  cfg.open.duration = seconds(10);
  cfg.halfOpen.successStreak = 0xffffffffu;  // never closes
  Breaker b(0, cfg, 1, nullptr);
  const auto& calls = cleanTraffic();
  std::size_t k = 0;
  Micros t = drive(b, kT0, kWarmup, calls, k);
  t = tripOpen(b, t) + seconds(11);
  b.advance(t);
  if (b.state() != BreakerState::HalfOpen) state.SkipWithError("not HALF_OPEN");
  for (auto _ : state) {
    pair(b, t, calls[k++ & kMask]);
    t += kPeriod;
  }
  if (b.state() != BreakerState::HalfOpen) state.SkipWithError("left HALF_OPEN");
  report(state, b);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HalfOpen_Probe);

// ---------------------------------------------------------------------------------------------
// 6. Ramp: closed again after a good probe, admitting a share that rises linearly. The ramp is
// made long (10^6 s) and the run starts half-way, so ~55 % of admits pass and the share moves
// little during the run. ns per admit (+ record for the admitted).

void BM_Ramp_AdmitRecord(benchmark::State& state) {
  BreakerConfig cfg = defaultPolicy().breaker;
  cfg.open.duration = seconds(10);
  cfg.halfOpen.successStreak = 1;
  cfg.ramp.duration = seconds(1'000'000);
  Breaker b(0, cfg, 1, nullptr);
  const auto& calls = cleanTraffic();
  std::size_t k = 0;
  Micros t = drive(b, kT0, kWarmup, calls, k);
  t = tripOpen(b, t) + seconds(11);
  for (int i = 0; i < 10000 && !(b.state() == BreakerState::Closed && b.ramping());
       ++i, t += kPeriod)
    pair(b, t, calls[k++ & kMask]);
  t += seconds(500'000);
  b.advance(t);
  if (!b.ramping()) state.SkipWithError("not ramping");
  for (auto _ : state) {
    pair(b, t, calls[k++ & kMask]);
    t += kPeriod;
  }
  if (!b.ramping()) state.SkipWithError("ramp ended");
  state.counters["share%"] = 100.0 * b.snapshot(t).admitShare;
  report(state, b);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Ramp_AdmitRecord);

// ---------------------------------------------------------------------------------------------
// 7. recordAggregate: one Prometheus-style sample per second (1000 calls, 0.6 % failures).
// Arg 0: counts only (slow known); arg 1: with a latency histogram, slow derived from it.
// Every sample rolls a bucket and completes a slice. ns per aggregate.

void BM_RecordAggregate(benchmark::State& state) {
  const bool withHist = state.range(0) != 0;
  const BreakerConfig& cfg = defaultPolicy().breaker;
  Breaker b(0, cfg, 1, nullptr);
  std::vector<LatencyHistogram> hists(64);
  const auto& calls = healthyTraffic();
  std::size_t k = 0;
  for (auto& h : hists)
    for (int i = 0; i < 1000; ++i) h.add(static_cast<std::uint64_t>(calls[k++ & kMask].latency));
  Micros t = kT0;
  std::size_t i = 0;
  for (; t < kT0 + kWarmup; t += seconds(1)) b.recordAggregate(t, 1000, 6, -1, &hists[i++ & 63]);
  for (auto _ : state) {
    if (withHist)
      b.recordAggregate(t, 1000, 6, -1, &hists[i++ & 63]);
    else
      b.recordAggregate(t, 1000, 6, 0, nullptr);
    t += seconds(1);
  }
  if (b.state() != BreakerState::Closed) state.SkipWithError("left CLOSED");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecordAggregate)->ArgName("histogram")->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
