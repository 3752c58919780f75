#pragma once
// A scenario: the model groups and their instances, the business systems that call them, the
// fault timeline and the policy under test. Plain data; docs/scenario.md documents every key.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spillway/policy.hpp"
#include "spillway/time.hpp"

namespace spillway::sim {

// A lognormal by its median and the sigma of its log (sigma 0 = always the median).
struct LogNormal {
  double median = 0;
  double sigma = 0;
};

// Continuous batching: the per-request time is flat up to `knee` busy slots, then rises by
// `slope` (a share of the base time) for every further busy slot.
struct Batching {
  std::uint32_t knee = 0;  // 0 = no knee (flat)
  double slope = 0;
};

struct InstanceSpec {
  std::string name;
  double weight = 1.0;  // for weighted routing
};

struct ModelSpec {
  std::string name;
  int line = 0;
  std::vector<InstanceSpec> instances;
  std::uint32_t slotCount = 8;    // concurrent requests one instance serves
  std::uint32_t queue = 32;       // requests waiting for a slot; full → queueFullStatus
  int queueFullStatus = 503;      // 503 or 429
  Micros baseTime = millis(500);  // service time with no tokens
  double perInputToken = 0;       // µs per input token (prefill)
  double perOutputToken = 0;      // µs per output token (decode)
  double sigma = 0.25;            // lognormal noise on the service time
  Batching batching;
  double errorRate = 0;              // background 5xx probability
  Micros errorLatency = millis(20);  // how fast an error comes back
  bool serveAbandoned = false;       // serve queued requests whose caller already gave up
  // The gateway's budget of attempts in flight to this model group, shared by its instances
  // (Envoy's cluster-level circuit_breakers.max_requests; 0 = none). Over it, the gateway
  // answers 503 at once — so calls stuck on one slow instance starve the healthy ones.
  std::uint32_t maxRequests = 0;
};

enum class ProfileKind : std::uint8_t { Constant, Step, Ramp, Diurnal, Burst };

// A load shape: a multiplier on the client's base rate. Several shapes multiply.
struct LoadShape {
  ProfileKind kind = ProfileKind::Constant;
  // step: factor from `at` on (steps are applied in order)
  std::vector<std::pair<Micros, double>> steps;
  // ramp: factor moves from `from` to `to` between start and end
  Micros start = 0, end = 0;
  double from = 1, to = 1;
  // diurnal: 1 + amplitude × sin(2π (t + phase) / period)
  double amplitude = 0;
  Micros period = seconds(86400), phase = 0;
  // burst: × multiplier during [start, end)
  double multiplier = 1;
};

enum class Criticality : std::uint8_t { Core, NonCritical };

struct RetrySpec {
  std::uint32_t max = 0;  // retries after the first attempt
  Micros backoff = millis(100);
  double multiplier = 2.0;
  Micros maxBackoff = seconds(10);
  enum class Jitter : std::uint8_t { None, Full, Equal } jitter = Jitter::Full;
  double budget = 0;  // 0 = unlimited; else retries ≤ budget × original requests (Envoy/gRPC)
  bool onError = true, onTimeout = true, onThrottle = true, onRejected = true;
};

struct SessionSpec {
  double turns = 0;  // mean requests per session (geometric); 0 = independent requests
  Micros think = seconds(5);
  double contextGrowth = 0;  // share of the previous turn's tokens carried as input
};

// Which cached answers a client's requests could hit: request keys drawn from a Zipf law over
// `keys` distinct keys (exponent `zipf`); an answer is cached when a model answered that key.
struct CacheKeys {
  std::uint32_t keys = 0;  // 0 = requests are never cacheable
  double zipf = 1.0;
};

struct ClientSpec {
  std::string name;
  int line = 0;
  std::string model;
  std::string tenant;  // for limits; empty = the client's name
  std::string route = "/v1/chat/completions";
  std::vector<std::string> tags = {"chat"};  // capabilities a backup must cover
  CacheKeys cache;
  Criticality criticality = Criticality::NonCritical;
  double rate = 10;  // original requests (or sessions) per second
  std::vector<LoadShape> profile;
  Micros timeout = seconds(30);  // per attempt
  // Overall deadline of the original request across retries (0 = none): a retry gets only
  // what is left of it, as with gRPC deadlines or an SDK's total timeout.
  Micros deadline = 0;
  Micros slo = 0;  // availability latency bound; 0 = the timeout
  // Connection pool of the caller (0 = unbounded): attempts in flight beyond it fail at once
  // — how a slow instance exhausts a caller that shares one pool for every instance.
  std::uint32_t concurrency = 0;
  RetrySpec retries;
  LogNormal inputTokens, outputTokens;
  SessionSpec sessions;
  // Drill-tagged traffic (seed 003): a gateway fault with `drill_only` reaches these requests
  // only — the drill's blast radius (as a fault filter matching an x-drill header).
  bool drill = false;
  // SLA class (seed 001): a class of the policy's `sla_classes`; empty = none.
  std::string slaClass;
  // The availability bar: `slo`, or the attempt timeout when none is given.
  Micros effectiveSlo() const { return slo > 0 ? slo : timeout; }
};

enum class FaultKind : std::uint8_t {
  LatencyDrift,  // memory leak: multiplier rises from 1 to `value` over the ramp
  Delay,         // fixed added delay (chaos drill)
  Errors,        // 5xx with probability `value`
  Throttle,      // 429 with probability `value`
  Hang,          // no answer until the fault ends, with probability `value`
  Reset,         // connection reset with probability `value`
  CapacityLoss,  // slots shrink to `value` × slots
  Outage,        // every call refused
  Recover,       // ends every earlier fault of the target at `at`
};
inline constexpr int kFaultKindCount = 9;

struct FaultSpec {
  FaultKind kind = FaultKind::Errors;
  int line = 0;
  std::string target;  // an instance or a model (then every instance of it)
  Micros at = 0;
  Micros duration = kForever;  // kForever: until a recover or the end
  Micros ramp = 0;             // time to reach full strength
  double value = 1;            // multiplier, probability or remaining capacity share
  Micros delay = 0;            // for Delay
  int status = 503;            // for Errors
  // Normal jitter (a blip, a burst, a GC pause): applied like any fault, but not a real fault
  // for the KPIs — a breaker that trips on it has false-tripped (docs/kpis.md).
  bool benign = false;
  // Target `gateway` (kGatewayTarget): the gateway itself fails — `delay` (CPU saturation:
  // every call waits this long before routing), `errors` (it answers 5xx itself), `reset`
  // (connection interruption) — on each attempt with probability `value`. `drillOnly`: only
  // drill-tagged clients' requests are hit.
  bool drillOnly = false;
};

inline constexpr const char* kGatewayTarget = "gateway";

// A client's original-request rate at scenario time `t`: its rate times its load profile.
double clientRateAt(const ClientSpec& cs, Micros t);

enum class Routing : std::uint8_t { LeastOutstanding, RoundRobin, Weighted };

struct Scenario {
  std::string name;
  std::string description;
  std::string source;  // file the scenario came from, for messages
  Micros duration = seconds(600);
  Micros tick = seconds(1);
  Micros drain = seconds(120);  // after `duration`: let in-flight requests finish
  std::uint64_t seed = 1;
  Routing routing = Routing::LeastOutstanding;
  // One upstream pool for every model (seed 002's failure mode without pool isolation): the
  // gateway's attempts in flight to all models at most this; 0 = none. Per-model budgets
  // (`max_requests`) are the isolated pools.
  std::uint32_t sharedPool = 0;
  Policy policy;
  std::vector<ModelSpec> models;
  std::vector<ClientSpec> clients;
  std::vector<FaultSpec> faults;
};

std::string_view faultKindName(FaultKind k);
std::string_view criticalityName(Criticality c);

}  // namespace spillway::sim
