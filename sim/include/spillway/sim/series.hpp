#pragma once
// The simulator's time series: one row per instance and one per client every tick (1 s by
// default). A sink receives rows as the run goes, so a console can plot while it runs and a
// file writer can stream them (docs/scenario.md describes the CSV format).
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "spillway/events.hpp"
#include "spillway/time.hpp"

namespace spillway::sim {

struct InstanceTick {
  Micros t = 0;  // end of the tick
  std::uint32_t instance = 0;
  BreakerState state = BreakerState::Closed;
  bool ramping = false;
  double admitShare = 1;
  double errorRate = 0, slowRate = 0;  // the breaker's decision window
  std::uint32_t windowCalls = 0;
  double p99Ms = 0;               // window P99 (ms)
  double baselineP99Ms = 0;       // learned baseline (ms), 0 while learning
  std::uint32_t responses = 0;    // answers (any status) the gateway saw in this tick
  std::uint32_t failures = 0;     // ... of which failures (5xx, 429, reset, timeout)
  std::uint32_t rejected = 0;     // attempts the breaker blocked in this tick
  std::uint32_t queueFull = 0;    // attempts the instance turned away with a full queue
  std::uint32_t overflow = 0;     // attempts routed here that the gateway's budget turned away
  std::uint32_t busy = 0;         // slots in use at the end of the tick
  std::uint32_t queued = 0;       // waiting for a slot
  std::uint32_t outstanding = 0;  // gateway's in-flight attempts on the instance
  double faultMultiplier = 1;     // latency multiplier of active faults
  bool faulted = false;           // an injected fault is active
  bool unhealthy = false;         // over the trip thresholds or queue full (ground truth)
  // Breaker blocks in this tick, and of those the would-succeed false-trip and recovery-lag
  // blocks (docs/kpis.md): the false-positive rate (误伤) over time.
  std::uint32_t blockedJudged = 0, blockedWouldSucceed = 0;
};

struct ClientTick {
  Micros t = 0;
  std::uint32_t client = 0;
  std::uint32_t originals = 0;  // original requests started in this tick
  std::uint32_t finished = 0;   // original requests that ended in this tick
  std::uint32_t available = 0;  // ... with a usable answer within the SLO
  std::uint32_t failed = 0;     // ... with an error, a timeout or a rejection
  std::uint32_t attempts = 0;   // attempts sent to instances
  std::uint32_t retries = 0;    // retries scheduled
  std::uint32_t blocked = 0;    // breaker blocks (one per blocked instance)
  double p50Ms = 0, p99Ms = 0;  // end-to-end latency of answers finished in this tick
};

class SeriesSink {
 public:
  virtual ~SeriesSink() = default;
  virtual void begin(const std::vector<std::string>& instances,
                     const std::vector<std::string>& clients) = 0;
  virtual void onInstance(const InstanceTick& row) = 0;
  virtual void onClient(const ClientTick& row) = 0;
  virtual void end() {}
};

// Two CSV streams (instances, clients) with a header line each; names instead of indices.
class CsvSeriesWriter final : public SeriesSink {
 public:
  CsvSeriesWriter(std::ostream& instances, std::ostream& clients)
      : inst_(instances), cli_(clients) {}
  void begin(const std::vector<std::string>& instances,
             const std::vector<std::string>& clients) override;
  void onInstance(const InstanceTick& row) override;
  void onClient(const ClientTick& row) override;
  void end() override;

 private:
  std::ostream& inst_;
  std::ostream& cli_;
  std::vector<std::string> instances_, clients_;
};

// Keeps every row; for tests and the console's small runs.
class VectorSeries final : public SeriesSink {
 public:
  void begin(const std::vector<std::string>& i, const std::vector<std::string>& c) override {
    instanceNames = i;
    clientNames = c;
  }
  void onInstance(const InstanceTick& row) override { instances.push_back(row); }
  void onClient(const ClientTick& row) override { clients.push_back(row); }
  std::vector<std::string> instanceNames, clientNames;
  std::vector<InstanceTick> instances;
  std::vector<ClientTick> clients;
};

}  // namespace spillway::sim
