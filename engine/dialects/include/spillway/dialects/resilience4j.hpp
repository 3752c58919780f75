#pragma once
// Resilience4j CircuitBreaker (CircuitBreakerStateMachine): COUNT_BASED / TIME_BASED sliding
// windows, rates compared with `>=` (as float percent), slow = duration > threshold, a
// half-open count window of permittedNumberOfCallsInHalfOpenState, optional exponential open
// wait, automatic or lazy OPEN→HALF_OPEN, METRICS_ONLY / FORCED_OPEN / DISABLED.
#include <string>
#include <string_view>
#include <vector>

#include "spillway/dialect.hpp"

namespace spillway::dialects {

struct Resilience4jConfig {
  enum class Window : std::uint8_t { CountBased, TimeBased };
  Window slidingWindowType = Window::CountBased;
  std::uint32_t slidingWindowSize = 100;     // calls, or 1-second buckets
  std::uint32_t minimumNumberOfCalls = 100;  // clamped to the size when COUNT_BASED
  float failureRateThreshold = 50;           // percent, (0, 100]
  float slowCallRateThreshold = 100;         // percent, (0, 100]
  Micros slowCallDurationThreshold = seconds(60);
  Micros waitDurationInOpenState = seconds(60);
  bool enableExponentialBackoff = false;
  double exponentialBackoffMultiplier = 1.5;
  Micros exponentialMaxWaitDurationInOpenState = kForever;
  std::uint32_t permittedNumberOfCallsInHalfOpenState = 10;
  Micros maxWaitDurationInHalfOpenState = 0;  // 0 = wait for the permitted calls forever
  bool transitionToClosedAfterWait = false;   // transitionToStateAfterWaitDuration: CLOSED
  bool automaticTransitionFromOpenToHalfOpenEnabled = false;
  // CLOSED, OPEN, HALF_OPEN, METRICS_ONLY, FORCED_OPEN, DISABLED
  BreakerState initialState = BreakerState::Closed;
  std::vector<std::string> ignoredKeys;  // accepted but not emulated

  // Open wait for the n-th consecutive open (attempts = 1 on CLOSED→OPEN).
  Micros waitFor(std::uint32_t attempts) const;
};

// application.yml (`resilience4j.circuitbreaker.configs/instances`, nested or dotted prefix,
// camelCase or kebab-case), or a bare map of CircuitBreaker properties. `instance` picks
// `instances.<instance>` (with its baseConfig); empty: `configs.default`, else the only
// instance.
Resilience4jConfig parseResilience4jConfig(std::string_view text, const std::string& source,
                                           std::string_view instance = {});

class Resilience4jDialect final : public DialectCluster {
 public:
  Resilience4jDialect(Resilience4jConfig cfg, std::uint64_t seed, EventSink* sink);
  ~Resilience4jDialect() override;
  DialectKind kind() const override { return DialectKind::Resilience4j; }
  bool succeeded(int status, Outcome outcome, Micros latency) const override;
  const Resilience4jConfig& config() const { return cfg_; }
  std::uint32_t attempts(InstanceId id) const;
  Micros openUntil(InstanceId id) const;

 protected:
  void onAdded(InstanceId id) override;
  DialectDecision doAdmit(InstanceId id, Micros now) override;
  void doRecord(InstanceId id, const DialectDecision& d, Micros end, Micros latency, int status,
                Outcome outcome) override;
  void doAdvance(Micros now) override;

 private:
  struct Member;
  void open(InstanceId id, Micros at, std::uint32_t attempts, Reason reason, float fr, float sr,
            std::uint32_t calls);
  void toHalfOpen(InstanceId id, Micros at);
  void startInitial(InstanceId id);
  void close(InstanceId id, Micros at, Reason reason);

  const Resilience4jConfig cfg_;
  std::vector<Member> m_;
};

}  // namespace spillway::dialects
