#pragma once
// The discrete-event simulator: model instances with slots, queues and faults; business
// systems with arrival profiles, timeouts and retries; and the gateway in between, which asks
// the engine to admit every attempt and records every outcome into it — the same engine code
// that decides in replay and live.
//
// Deterministic: no clock, no unseeded randomness; the same scenario and seed give the same
// events, series and report byte for byte. Memory is O(instances + clients + in-flight).
#include <cstdint>
#include <memory>

#include "spillway/engine.hpp"
#include "spillway/histogram.hpp"
#include "spillway/sim/report.hpp"
#include "spillway/sim/scenario.hpp"
#include "spillway/sim/series.hpp"

namespace spillway::sim {

// Every attempt whose outcome the gateway recorded into the engine (an instance's answer or
// the caller's timeout), as it happens: for exporters that need per-attempt latencies, which
// the per-tick series cannot give (simulate --serve-metrics). Unset, it costs one branch.
class AttemptObserver {
 public:
  virtual ~AttemptObserver() = default;
  // `instance` indexes the scenario's instances in file order (as InstanceTick::instance).
  virtual void onAttempt(std::uint32_t instance, Micros end, Micros latency, int status,
                         Outcome outcome) = 0;
};

// The layers of defence that run (seed 001's three modes: limits only, breaker + degrade, all
// three). A layer off is absent: no limiter; breakers that only watch (METRICS_ONLY); no
// degrade chain.
struct Layers {
  bool limits = true, breaker = true, degrade = true;
  bool operator==(const Layers&) const = default;
};

struct SimOptions {
  // false: the baseline — breakers only watch (METRICS_ONLY), the gateway forwards everything.
  bool protection = true;
  EventSink* events = nullptr;          // breaker transitions as they happen
  SeriesSink* series = nullptr;         // one row per instance and client per tick
  AttemptObserver* attempts = nullptr;  // every recorded attempt
  // The ground truth of a blocked call reuses the instance's last FIFO re-run while nothing
  // it depends on has changed. false recomputes it on every block: the same results, slower
  // (the tests compare the two).
  bool reuseRerun = true;
  Layers layers;  // with protection: which layers run (last: aggregate initializers keep working)
};

class Simulator {
 public:
  // Keeps a reference to `scenario`: it must outlive the simulator (hence no temporaries).
  Simulator(const Scenario& scenario, SimOptions options = {});
  Simulator(Scenario&&, SimOptions = {}) = delete;
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Processes events up to and including simulated time `t`; returns false once the run is
  // over (arrivals stopped at the scenario's duration and nothing is left, or the drain ended).
  bool runUntil(Micros t);
  void run();

  Micros now() const;
  Micros endTime() const;  // duration + drain: the latest the run can last
  bool finished() const;
  std::uint64_t originals() const;  // original requests started so far
  // Original requests not answered yet, and of those the ones waiting longer than their
  // client's deadline (or per-try timeout when it has none): an overload's growing backlog.
  std::uint64_t unanswered() const;
  std::uint64_t overdue() const;
  std::uint64_t eventsProcessed() const;

  const Engine& engine() const;
  // End-to-end latency of every answered original request so far (cumulative; valid until the
  // next call).
  const LatencyHistogram& answeredLatency() const;
  // The KPI report; valid at any time (partial before the end).
  RunReport report() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> d_;
};

// "off", "all", or the layers that run joined by '+' ("limits", "breaker+degrade").
std::string modeName(const SimOptions& options);

// Convenience: run a scenario to the end and report.
RunReport simulate(const Scenario& scenario, SimOptions options = {});

}  // namespace spillway::sim
