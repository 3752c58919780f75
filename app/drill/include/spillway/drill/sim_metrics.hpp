#pragma once
// A running simulation as Prometheus metrics, text exposition format 0.0.4 (what
// `simulate --serve-metrics` serves on GET /metrics). Per instance, from what the simulated
// gateway saw:
//   spillway_sim_requests_total{instance,model}       attempts that ended (answer or timeout)
//   spillway_sim_failures_total{instance,model}       ... of which 5xx, 429, reset or timeout
//   spillway_sim_latency_seconds_bucket{instance,model,le} (+ _sum, _count) their latencies
//   spillway_sim_breaker_rejected_total{instance,model} attempts the breaker blocked
//   spillway_sim_inflight / _queue_depth / _busy_slots / _fault_active  gauges, per tick
//   spillway_sim_breaker_state{instance,model,state}  1 for the current state, 0 for the others
//   spillway_sim_time_seconds                          scenario time
// Counters and the histogram are fed per attempt (sim::AttemptObserver); gauges per tick
// (sim::SeriesSink). No Qt, no clock: render() shows the state as of the last event.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "spillway/sim/scenario.hpp"
#include "spillway/sim/series.hpp"
#include "spillway/sim/simulator.hpp"

namespace spillway::drill {

class SimMetrics final : public sim::SeriesSink, public sim::AttemptObserver {
 public:
  // Upper bounds in seconds, ascending; +Inf is implied.
  static const std::vector<double>& defaultBuckets();

  explicit SimMetrics(const sim::Scenario& sc, std::vector<double> buckets = defaultBuckets());

  void begin(const std::vector<std::string>&, const std::vector<std::string>&) override {}
  void onInstance(const sim::InstanceTick& row) override;
  void onClient(const sim::ClientTick&) override {}
  void onAttempt(std::uint32_t instance, Micros end, Micros latency, int status,
                 Outcome outcome) override;

  // The scenario time render() reports (the simulator's clock; never earlier than the last
  // event seen).
  void setTime(Micros t) { now_ = std::max(now_, t); }
  // The text exposition, HELP and TYPE first per family.
  std::string render() const;

  std::uint64_t requests(std::size_t instance) const { return inst_[instance].requests; }
  std::uint64_t failures(std::size_t instance) const { return inst_[instance].failures; }
  std::size_t instances() const { return inst_.size(); }
  Micros time() const { return now_; }

 private:
  struct Inst {
    std::string labels;  // instance="…",model="…"
    std::uint64_t requests = 0, failures = 0, rejected = 0;
    std::vector<std::uint64_t> perBucket;  // not cumulative; the last is +Inf
    double sumSeconds = 0;
    std::uint32_t inflight = 0, queued = 0, busy = 0;
    bool faulted = false;
    BreakerState state = BreakerState::Closed;
  };
  std::vector<double> buckets_;
  std::vector<std::string> le_;  // the bounds as written in the `le` label
  std::vector<Inst> inst_;
  Micros now_ = 0;
};

// A Prometheus label value: backslash, double quote and newline escaped.
std::string promLabelValue(std::string_view v);
// A sample value: the shortest text that reads back as the same double; +Inf, -Inf, NaN.
std::string promNumber(double v);

}  // namespace spillway::drill
