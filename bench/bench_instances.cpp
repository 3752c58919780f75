// Memory per instance: heap bytes an Engine holds per registered instance, idle and after
// traffic at a given rate, counted by glibc's allocator (mallinfo2), so the figure is the
// engine's own state and not the process's. A plain program:
//
//   bench_instances [INSTANCES] [CALLS_PER_S...]
//
// prints one row per rate (0 = registered, never called): bytes per instance, and the heap
// for the whole fleet, with the window histograms kept (the default: plotted) and built when
// read (as `replay` and `listen` run). Traffic is the healthy lognormal mix of bench_breaker
// (median 900 ms), 30 s of it, round robin, so every window and baseline is full.
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "spillway/engine.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/rng.hpp"

namespace {

using namespace spillway;

std::size_t heapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

double normal(Rng& r) {
  double u1 = r.uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  const double u2 = r.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

struct Row {
  double rate;
  double bytesPerInstance;
  double fleetMiB;
  std::uint64_t calls;
};

// Registers `n` instances, drives `rate` calls/s into each for `span`, and measures the heap
// the engine grew by.
Row measure(const Policy& policy, int n, double rate, Micros span, bool keepWindows) {
  const std::size_t before = heapInUse();
  auto engine = std::make_unique<Engine>(policy, 1, nullptr);
  engine->keepWindowHistograms(keepWindows);
  for (int i = 0; i < n; ++i) engine->addInstance("chat-72b-" + std::to_string(i), "chat-72b");
  std::uint64_t calls = 0;
  if (rate > 0) {
    Rng r(42);
    const Micros step = static_cast<Micros>(1e6 / rate / n);
    const Micros t0 = Micros{1764480000} * 1000000;
    InstanceId id = 0;
    for (Micros t = t0; t<t0 + span; t += step> 0 ? step : 1) {
      const Decision d = engine->admit(id, t);
      const auto latency = static_cast<Micros>(900e3 * std::exp(0.35 * normal(r)));
      if (d) engine->record(id, d, t + 1, latency, 200, Outcome::Ok);
      ++calls;
      id = id + 1 == static_cast<InstanceId>(n) ? 0 : id + 1;
    }
  }
  const double grown = static_cast<double>(heapInUse() - before);
  return {rate, grown / n, grown / (1024.0 * 1024.0), calls};
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 10000;
  std::vector<double> rates;
  for (int i = 2; i < argc; ++i) rates.push_back(std::atof(argv[i]));
  if (rates.empty()) rates = {0, 1, 10, 100, 1000};
  const Policy policy = loadPolicyFile(SPILLWAY_DEFAULT_POLICY);
  std::printf("%-12s %-10s %-14s %-12s %-12s %s\n", "calls/s", "instances", "bytes/instance",
              "built-read", "heap MiB", "calls");
  for (const double rate : rates) {
    // The heaviest rates on fewer instances: the state per instance is what is measured, and
    // the calls of the whole fleet must stay at least 1 µs apart to keep the rate.
    const int fleet = rate > 0 ? std::min(n, static_cast<int>(std::min(1e6 / rate, 1e4))) : n;
    const Row row = measure(policy, fleet, rate, seconds(30), true);
    const Row onRead = measure(policy, fleet, rate, seconds(30), false);
    std::printf("%-12g %-10d %-14.0f %-12.0f %-12.1f %llu\n", row.rate, fleet, row.bytesPerInstance,
                onRead.bytesPerInstance, row.fleetMiB, static_cast<unsigned long long>(row.calls));
  }
  return 0;
}
