#pragma once
// cockatiel (connor4312/cockatiel src/CircuitBreakerPolicy.ts, src/breaker/*.ts):
// ConsecutiveBreaker(n) opens on the n-th consecutive failure; SamplingBreaker({threshold,
// duration, minimumRps}) keeps max(5, ceil(duration/1000)) windows of round(duration/count) ms,
// rotating at most one window per recorded result, and opens when total >= duration ×
// minimumRps (default 5 / threshold per second) and failures > threshold × total;
// CountBreaker({threshold, size, minimumNumberOfCalls = size}) keeps the last `size` results in
// a ring and opens when at least minimumNumberOfCalls are in it and failures > threshold × them
// (a half-open success empties the ring, its position stays). OPEN→HALF_OPEN
// is lazy: the first call at least halfOpenAfter after the opening runs the trial; other
// callers *wait* for its verdict (Admission::Wait) instead of being rejected. A closed-state
// call is judged with the state it started in; half-open results of a finished episode are
// dropped. halfOpenSampling {calls, threshold} (4.0) defaults to one trial.
#include <string>
#include <string_view>
#include <vector>

#include "spillway/dialect.hpp"

namespace spillway::dialects {

struct CockatielConfig {
  enum class Breaker : std::uint8_t { Consecutive, Sampling, Count };
  Breaker breaker = Breaker::Consecutive;
  std::uint32_t consecutiveThreshold = 5;
  double samplingThreshold = 0.5;  // (0, 1)
  Micros samplingDuration = seconds(10);
  double minimumRps = 0;        // 0: 5 / threshold
  double countThreshold = 0.5;  // (0, 1)
  std::uint32_t countSize = 10, countMinimumCalls = 10;
  Micros halfOpenAfter = seconds(10);
  std::uint32_t halfOpenCalls = 1;  // halfOpenSampling.calls
  double halfOpenThreshold = 0;     // halfOpenSampling.threshold, [0, 1)
  std::vector<std::string> ignoredKeys;
};

// JSON/YAML: {halfOpenAfter: ms, breaker: {ConsecutiveBreaker: n} |
// {SamplingBreaker: {threshold, duration, minimumRps}} | {CountBreaker: {threshold, size,
// minimumNumberOfCalls}}, halfOpenSampling: {calls, threshold}}.
CockatielConfig parseCockatielConfig(std::string_view text, const std::string& source);

class CockatielDialect final : public DialectCluster {
 public:
  CockatielDialect(CockatielConfig cfg, std::uint64_t seed, EventSink* sink);
  ~CockatielDialect() override;
  DialectKind kind() const override { return DialectKind::Cockatiel; }
  const CockatielConfig& config() const { return cfg_; }

 protected:
  void onAdded(InstanceId id) override;
  DialectDecision doAdmit(InstanceId id, Micros now) override;
  void doRecord(InstanceId id, const DialectDecision& d, Micros end, Micros latency, int status,
                Outcome outcome) override;

 private:
  struct Member;
  bool breakerFailure(InstanceId id, BreakerState asOf, Micros now);
  bool countFailure(InstanceId id, BreakerState asOf);
  void countSample(InstanceId id, bool success);
  void breakerSuccess(InstanceId id, BreakerState asOf, Micros now);
  void open(InstanceId id, Micros at, Reason reason);
  void maybeClose(InstanceId id, Micros at);

  const CockatielConfig cfg_;
  std::vector<Member> m_;
  std::uint32_t episodes_ = 0;  // half-open episode tokens (0 = a call that started closed)
};

}  // namespace spillway::dialects
