// Simulator throughput: simulated original requests per wall second, with the engine in the loop
// (every attempt is admitted by a breaker and its outcome recorded), and memory over long runs.
//
//   BM_Seed000/protection:P          resources/scenarios/seed-000.yaml as shipped (4 instances,
//                                    12 clients, ~40 req/s, 40 min + 3 min drain, 3 faults)
//   BM_Seed000_10h/protection:P      the same with duration 10 h (faults stay in the first 40 min)
//   BM_Seed001|2|3/protection:P      resources/scenarios/seed-00N.yaml as shipped: 001 limits and
//                                    shedding, 002 the degrade chain (backups, cache, trim, lock),
//                                    003 the degrade lock; counters from one more, untimed run
//   BM_PlainQueue20x8/protection:P   plain queueing network: Poisson arrivals, 20 instances × 8
//                                    slots, lognormal service (mean 1 s, σ 0.5), least-outstanding
//                                    routing, one client, no faults / retries / errors, 70 %
//                                    utilization, 1 h. The same model in SimPy:
//                                    bench/simpy/mmc_lognormal.py
//   BM_PlainQueue20x8_Check/util_pct:U/seed:S
//                                    the plain queue with a series sink attached, to check it
//                                    against the SimPy model (utilization, mean wait by Little's
//                                    law, response-time quantiles), at 70 % and 95 %, seeds 1–3.
//                                    Its time is not a throughput.
//   BM_Scaled10k_*                   seed-000 × 250: every client's rate, connection pool and the
//                                    gateway budget × 250, so ~10 k req/s; either 1000 instances of
//                                    32 slots or 100 instances of 320 slots (queue, knee × 10,
//                                    knee slope ÷ 10). Faults kept. 1 h or 10 min. Memory counters:
//                                    rss_at_10min_MiB (current RSS after 10 simulated minutes),
//                                    rss_end_MiB, peak_rss_MiB (the process's peak: run alone).
//                                    The _1min rows (one simulated minute) are for profiling.
//
// Counters: items_per_second = original requests per wall second; requests and events are per
// run; events_per_second = discrete events per wall second. Docs: docs/performance.md.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "spillway/policy_yaml.hpp"
#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/series.hpp"
#include "spillway/sim/simulator.hpp"

namespace {

using namespace spillway;
using namespace spillway::sim;

SimOptions simOptions(bool protection, SeriesSink* series = nullptr) {
  SimOptions o;
  o.protection = protection;
  o.series = series;
  return o;
}

constexpr Micros kMinute = seconds(60);
constexpr Micros kHour = seconds(3600);

const Scenario& seed000() {
  static const Scenario s = loadScenarioFile(SPILLWAY_SEED000);
  return s;
}

const Policy& defaultPolicy() {
  static const Policy p = loadPolicyFile(SPILLWAY_DEFAULT_POLICY);
  return p;
}

Scenario withDuration(const Scenario& base, Micros duration) {
  Scenario s = base;
  s.duration = duration;
  return s;
}

// seed-000 scaled so that per-instance load is unchanged: client rates, client connection pools
// and the group's gateway budget × `rateFactor`; instances × `instanceFactor`; each instance ×
// `slotFactor` bigger (slots, queue and batching knee; the knee slope shrinks by the same factor
// so an instance's service-time curve keeps its shape relative to its size). Faults are kept:
// they target chat-72b-1/2/3 by name, which still exist.
Scenario scaled(double rateFactor, std::uint32_t instanceFactor, std::uint32_t slotFactor,
                Micros duration) {
  Scenario s = seed000();
  s.name += "-x" + std::to_string(static_cast<int>(rateFactor));
  s.duration = duration;
  for (ModelSpec& m : s.models) {
    const std::size_t n = m.instances.size() * instanceFactor;
    m.instances.clear();
    for (std::size_t k = 0; k < n; ++k)
      m.instances.push_back(InstanceSpec{m.name + "-" + std::to_string(k), 1.0});
    m.slotCount *= slotFactor;
    m.queue *= slotFactor;
    if (m.batching.knee > 0) {
      m.batching.knee *= slotFactor;
      m.batching.slope /= slotFactor;
    }
    if (m.maxRequests > 0)
      m.maxRequests = static_cast<std::uint32_t>(std::llround(m.maxRequests * rateFactor));
  }
  for (ClientSpec& c : s.clients) {
    c.rate *= rateFactor;
    if (c.concurrency > 0)
      c.concurrency = static_cast<std::uint32_t>(std::llround(c.concurrency * rateFactor));
  }
  return s;
}

// The plain queueing network of bench/simpy/mmc_lognormal.py.
constexpr int kPlainInstances = 20;
constexpr int kPlainSlots = 8;
constexpr double kPlainMeanService = 1.0;  // s
constexpr double kPlainSigma = 0.5;

Scenario plainQueue(double utilization, Micros duration) {
  Scenario s;
  s.name = "plain-queue-20x8";
  s.duration = duration;
  s.tick = seconds(1);
  s.drain = seconds(120);
  s.seed = 1;
  s.routing = Routing::LeastOutstanding;
  s.policy = defaultPolicy();
  ModelSpec m;
  m.name = "mmc";
  for (int k = 0; k < kPlainInstances; ++k)
    m.instances.push_back(InstanceSpec{m.name + "-" + std::to_string(k), 1.0});
  m.slotCount = kPlainSlots;
  m.queue = 4096;  // never full: no losses
  // Lognormal by median: mean = median × e^(σ²/2).
  m.baseTime = static_cast<Micros>(
      std::llround(kPlainMeanService * 1e6 * std::exp(-kPlainSigma * kPlainSigma / 2)));
  m.sigma = kPlainSigma;
  m.errorRate = 0;
  s.models.push_back(m);
  ClientSpec c;
  c.name = "poisson";
  c.model = m.name;
  c.rate = utilization * kPlainInstances * kPlainSlots / kPlainMeanService;
  c.timeout = 10 * kMinute;  // never reached
  c.retries.max = 0;
  s.clients.push_back(c);
  return s;
}

double currentRssMiB() {
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}

double peakRssMiB() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // KiB on Linux
}

// Runs `sc` once per iteration (construction, run and destruction are timed; the report is
// built once after the loop, untimed) and sets the counters.
void runScenario(benchmark::State& state, const Scenario& sc, bool protection,
                 Micros sampleRssAt = 0) {
  std::uint64_t originals = 0, events = 0;
  double rssAtSample = 0, rssEnd = 0;
  std::unique_ptr<Simulator> last;
  for (auto _ : state) {
    auto sim = std::make_unique<Simulator>(sc, simOptions(protection));
    if (sampleRssAt > 0) {
      sim->runUntil(sampleRssAt);
      rssAtSample = currentRssMiB();
    }
    sim->run();
    if (sampleRssAt > 0) rssEnd = currentRssMiB();
    originals += sim->originals();
    events += sim->eventsProcessed();
    last = std::move(sim);
  }
  const RunReport rep = last->report();
  state.SetItemsProcessed(static_cast<std::int64_t>(originals));
  state.counters["requests"] = static_cast<double>(last->originals());
  state.counters["events"] = static_cast<double>(last->eventsProcessed());
  state.counters["events_per_second"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["availability"] = rep.availability.value().value_or(0);
  state.counters["attempts_per_request"] = rep.retryAmplification.value().value_or(0);
  state.counters["opens"] = static_cast<double>(rep.opens);
  if (rep.inFlightAtEnd != 0) state.SkipWithError("requests still in flight at the end");
  if (sampleRssAt > 0) {
    state.counters["rss_at_10min_MiB"] = rssAtSample;
    state.counters["rss_end_MiB"] = rssEnd;
    state.counters["peak_rss_MiB"] = peakRssMiB();
  }
}

// ---------------------------------------------------------------------------------------------
// Target 1: seed-000.

void BM_Seed000(benchmark::State& state) {
  runScenario(state, seed000(), state.range(0) != 0);
}
BENCHMARK(BM_Seed000)
    ->ArgName("protection")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Seed000_10h(benchmark::State& state) {
  static const Scenario s = withDuration(seed000(), 10 * kHour);
  runScenario(state, s, state.range(0) != 0);
}
BENCHMARK(BM_Seed000_10h)
    ->ArgName("protection")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// ---------------------------------------------------------------------------------------------
// Degradation and limits: seeds 001 (limits, shedding), 002 (degrade chain, cache, trim, lock)
// and 003 (degrade lock), as shipped, next to seed-000. Same timing as BM_Seed000; after the
// timed loop one more run (untimed) reports what the degrade router and limiter did.

const Scenario& seedScenario(const char* file) {
  // The shipped scenarios sit next to seed-000.yaml. Static: a Simulator keeps a reference.
  static std::map<std::string, Scenario> loaded;
  auto it = loaded.find(file);
  if (it == loaded.end())
    it = loaded
             .emplace(file,
                      loadScenarioFile(
                          (std::filesystem::path(SPILLWAY_SEED000).parent_path() / file).string()))
             .first;
  return it->second;
}

void runSeed(benchmark::State& state, const char* file) {
  const Scenario& sc = seedScenario(file);
  const bool protection = state.range(0) != 0;
  runScenario(state, sc, protection);
  const RunReport rep = simulate(sc, simOptions(protection));
  std::uint64_t limited = 0;
  rep.limitedBy.forEach([&](LimitReason why, std::uint64_t n) {
    if (why != LimitReason::None) limited += n;
  });
  state.counters["limited"] = static_cast<double>(limited);
  state.counters["by_backup"] = static_cast<double>(rep.answeredBy[1]);
  state.counters["by_cache"] = static_cast<double>(rep.answeredBy[2]);
  state.counters["lock_hits"] = static_cast<double>(rep.lockHits);
  state.counters["misroutes"] = static_cast<double>(rep.misroutes);
}

void BM_Seed001(benchmark::State& state) {
  runSeed(state, "seed-001.yaml");
}
BENCHMARK(BM_Seed001)
    ->ArgName("protection")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Seed002(benchmark::State& state) {
  runSeed(state, "seed-002.yaml");
}
BENCHMARK(BM_Seed002)
    ->ArgName("protection")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Seed003(benchmark::State& state) {
  runSeed(state, "seed-003.yaml");
}
BENCHMARK(BM_Seed003)
    ->ArgName("protection")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// ---------------------------------------------------------------------------------------------
// Target 2: the plain queueing network (compare with bench/simpy/mmc_lognormal.py).

void BM_PlainQueue20x8(benchmark::State& state) {
  static const Scenario s = plainQueue(0.70, kHour);
  runScenario(state, s, state.range(0) != 0);
}
BENCHMARK(BM_PlainQueue20x8)
    ->ArgName("protection")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Time averages over the ticks up to the end of arrivals.
class QueueStats final : public SeriesSink {
 public:
  explicit QueueStats(Micros horizon) : horizon_(horizon) {}
  void begin(const std::vector<std::string>&, const std::vector<std::string>&) override {}
  void onInstance(const InstanceTick& row) override {
    if (row.t > horizon_) return;
    busy += row.busy;
    queued += row.queued;
    rejected += row.rejected;
  }
  void onClient(const ClientTick& row) override {
    if (row.t <= horizon_) ++ticks;
  }
  double busy = 0, queued = 0, rejected = 0;
  std::uint64_t ticks = 0;

 private:
  Micros horizon_;
};

void BM_PlainQueue20x8_Check(benchmark::State& state) {
  const double util = static_cast<double>(state.range(0)) / 100.0;
  Scenario s = plainQueue(util, kHour);
  s.seed = static_cast<std::uint64_t>(state.range(1));
  for (auto _ : state) {
    QueueStats stats(s.duration);
    Simulator sim(s, simOptions(true, &stats));
    sim.run();
    const double ticks = static_cast<double>(stats.ticks);
    const double lambda = static_cast<double>(sim.originals()) / (s.duration / 1e6);
    const double lq = stats.queued / ticks;  // mean requests waiting for a slot
    const LatencyHistogram& h = sim.answeredLatency();
    state.counters["requests"] = static_cast<double>(sim.originals());
    state.counters["arrival_rate"] = lambda;
    state.counters["utilization"] = stats.busy / ticks / (kPlainInstances * kPlainSlots);
    state.counters["mean_queued"] = lq;
    state.counters["mean_wait_ms"] = lq / lambda * 1e3;  // Little's law
    state.counters["resp_p50_ms"] = h.quantile(0.5) / 1e3;
    state.counters["resp_p99_ms"] = h.quantile(0.99) / 1e3;
    state.counters["blocked"] = stats.rejected;
  }
}
BENCHMARK(BM_PlainQueue20x8_Check)
    ->ArgNames({"util_pct", "seed"})
    ->ArgsProduct({{70, 95}, {1, 2, 3}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// ---------------------------------------------------------------------------------------------
// Target 3: 1 h at ~10 k req/s. Run each alone for a meaningful peak_rss_MiB.

void BM_Scaled10k_1h(benchmark::State& state) {
  static const Scenario s = scaled(250, 250, 1, kHour);
  runScenario(state, s, true, 10 * kMinute);
}
BENCHMARK(BM_Scaled10k_1h)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Scaled10k_10min(benchmark::State& state) {
  static const Scenario s = scaled(250, 250, 1, 10 * kMinute);
  runScenario(state, s, true, 10 * kMinute);
}
BENCHMARK(BM_Scaled10k_10min)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Scaled10k_100x320_1h(benchmark::State& state) {
  static const Scenario s = scaled(250, 25, 10, kHour);
  runScenario(state, s, true, 10 * kMinute);
}
BENCHMARK(BM_Scaled10k_100x320_1h)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Scaled10k_100x320_10min(benchmark::State& state) {
  static const Scenario s = scaled(250, 25, 10, 10 * kMinute);
  runScenario(state, s, true, 10 * kMinute);
}
BENCHMARK(BM_Scaled10k_100x320_10min)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// One simulated minute of each shape: short enough to run under callgrind (instruction counts
// per request), not a target row.
void BM_Scaled10k_1min(benchmark::State& state) {
  static const Scenario s = scaled(250, 250, 1, kMinute);
  runScenario(state, s, true);
}
BENCHMARK(BM_Scaled10k_1min)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Scaled10k_100x320_1min(benchmark::State& state) {
  static const Scenario s = scaled(250, 25, 10, kMinute);
  runScenario(state, s, true);
}
BENCHMARK(BM_Scaled10k_100x320_1min)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
