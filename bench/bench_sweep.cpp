// bench_sweep: the sweep case — 1,000 policies (a 10 × 10 × 10 grid over the trip
// rule) replayed over a 30-minute, 4-instance incident of ~300 k calls on 2 threads. One
// instance leaks (latency grows from 10 min on) and fails 20 % of its calls for 5 minutes;
// the incident is generated in memory (deterministic), so the bench measures the sweep only.
#include <benchmark/benchmark.h>

#include <string>

#include "spillway/policy_yaml.hpp"
#include "spillway/sweep.hpp"

using namespace spillway;

namespace {

IncidentTrace incident() {
  std::string text;
  const long long t0 = 1764480000000;
  std::uint64_t h = 99;
  auto u = [&] {
    h ^= h << 13;
    h ^= h >> 7;
    h ^= h << 17;
    return static_cast<double>(h % 1000000) / 1e6;
  };
  const char* names[] = {"gpu-1", "gpu-2", "gpu-3", "gpu-4"};
  for (long long ms = 0; ms < 30LL * 60 * 1000; ms += 6) {  // ~167 calls/s: ~300 k calls
    const int i = static_cast<int>(u() * 4);
    const bool leak = i == 2 && ms > 600000;
    const double grow = leak ? 1 + static_cast<double>(ms - 600000) / 120000.0 : 1;
    int status = 200;
    if (i == 2 && ms > 900000 && ms < 1200000 && u() < 0.2) status = 503;
    const int latency = static_cast<int>((400 + 300 * u()) * grow);
    text += "{\"ts\":" + std::to_string(t0 + ms) + ",\"instance\":\"" + names[i] +
            "\",\"model\":\"chat\",\"latency_ms\":" + std::to_string(latency) +
            ",\"status\":" + std::to_string(status) + "}\n";
  }
  auto reader = JsonlReader::fromMemory("bench.jsonl", text, false);
  return IncidentTrace::read(
      [&](CallRecord& r) { return reader->next(r); }, "bench",
      {NamedFault{"gpu-3", (t0 + 600000) * 1000, (t0 + 1200000) * 1000, "leak"}});
}

std::vector<SweepCandidate> grid() {
  const Policy base = loadPolicyFile(SPILLWAY_DEFAULT_POLICY);
  SweepSpec spec;
  spec.params = {parseSweepParam("trip.slow_rate=0.1:1.0:0.1", "bench"),
                 parseSweepParam("trip.error_rate=0.1:1.0:0.1", "bench"),
                 parseSweepParam("trip.sustain=0s:9s:1s", "bench")};
  return expandSweep(base, spec);
}

void perDecision(benchmark::State& state, double decisions, unsigned threads) {
  state.counters["decisions_per_s"] =
      benchmark::Counter(decisions, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["decisions_per_s_per_core"] =
      benchmark::Counter(decisions / threads, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Sweep1000(benchmark::State& state) {
  std::vector<IncidentTrace> incidents;
  incidents.push_back(incident());
  const auto candidates = grid();
  SweepRunOptions opt;
  opt.threads = static_cast<unsigned>(state.range(0));
  std::size_t front = 0;
  for (auto _ : state) {
    const SweepResult r = runSweep(candidates, incidents, opt);
    front = 0;
    for (bool f : r.pareto) front += f;
    benchmark::DoNotOptimize(front);
  }
  const double calls = static_cast<double>(incidents[0].calls().size());
  state.counters["calls"] = calls;
  state.counters["candidates"] = static_cast<double>(candidates.size());
  state.counters["pareto"] = static_cast<double>(front);
  perDecision(state, calls * static_cast<double>(candidates.size()), opt.threads);
}
BENCHMARK(BM_Sweep1000)->Arg(1)->Arg(2)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

// The first 100 of the same candidates each replayed alone, call by call through the reorder
// buffer (spillway-cli replay's path, and every candidate's before the sweep shared its work),
// on one thread: the per-decision cost the sweep's shortcuts are measured against.
void BM_EachAlone100(benchmark::State& state) {
  const IncidentTrace inc = incident();
  auto candidates = grid();
  candidates.resize(100);
  for (auto _ : state)
    for (const SweepCandidate& c : candidates) {
      Replayer r(c.policy, ReplayOptions{});
      for (const CallRecord& call : inc.calls()) r.feed(call);
      r.finish();
      benchmark::DoNotOptimize(nativeReplayKpis(r, inc.faults()).rejected);
    }
  perDecision(state, static_cast<double>(inc.calls().size()) * 100, 1);
}
BENCHMARK(BM_EachAlone100)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
