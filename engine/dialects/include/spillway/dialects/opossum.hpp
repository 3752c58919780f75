#pragma once
// opossum (nodeshift/opossum lib/circuit.js, lib/status.js): a rolling window of
// rollingCountBuckets buckets rotated every floor(rollingCountTimeout / buckets) ms from the
// breaker's creation; `fires` counts every call, rejected ones included; on a failure the
// breaker opens when failures / fires × 100 > errorThresholdPercentage (strict), unless
// fires < volumeThreshold or it is still warming up (allowWarmUp: the first
// rollingCountTimeout); a call longer than `timeout` fails at start + timeout. OPEN for
// resetTimeout, then HALF_OPEN with PENDING_CLOSE: exactly one call passes; while half-open any
// success closes and any failure reopens. The window is not cleared on close.
#include <string>
#include <string_view>
#include <vector>

#include "spillway/dialect.hpp"

namespace spillway::dialects {

struct OpossumConfig {
  Micros timeout = millis(10000);  // 0: `timeout: false`
  Micros resetTimeout = millis(30000);
  double errorThresholdPercentage = 50;
  Micros rollingCountTimeout = millis(10000);
  std::uint32_t rollingCountBuckets = 10;
  std::uint32_t volumeThreshold = 0;
  bool allowWarmUp = false;
  bool enabled = true;
  std::vector<std::string> ignoredKeys;
  Micros bucketInterval() const;  // floor(rollingCountTimeout / buckets), whole ms
};

// The options object as JSON/YAML, in opossum's keys (durations in ms).
OpossumConfig parseOpossumConfig(std::string_view text, const std::string& source);

class OpossumDialect final : public DialectCluster {
 public:
  OpossumDialect(OpossumConfig cfg, std::uint64_t seed, EventSink* sink);
  ~OpossumDialect() override;
  DialectKind kind() const override { return DialectKind::Opossum; }
  Micros callTimeout() const override { return cfg_.timeout > 0 ? cfg_.timeout : kForever; }
  const OpossumConfig& config() const { return cfg_; }
  // Window totals (what `circuit.stats` sums), as of the last event.
  std::uint64_t fires(InstanceId id) const;
  std::uint64_t failures(InstanceId id) const;

 protected:
  void onAdded(InstanceId id) override;
  DialectDecision doAdmit(InstanceId id, Micros now) override;
  void doRecord(InstanceId id, const DialectDecision& d, Micros end, Micros latency, int status,
                Outcome outcome) override;
  void doAdvance(Micros now) override;

 private:
  struct Member;
  void start(InstanceId id, Micros t0);
  void runTimers(InstanceId id, Micros now);
  void open(InstanceId id, Micros at, double rate, std::uint64_t fires);

  const OpossumConfig cfg_;
  std::vector<Member> m_;
};

}  // namespace spillway::dialects
