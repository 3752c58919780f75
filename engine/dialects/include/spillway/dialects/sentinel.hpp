#pragma once
// Alibaba Sentinel DegradeRule (1.8+): slow-request ratio (grade 0), exception ratio (1),
// exception count (2) over one tumbling bucket of statIntervalMs aligned to the epoch; strict
// `>` comparisons (a slow ratio of exactly 1.0 trips when the threshold is 1.0); OPEN for
// timeWindow seconds with no backoff; HALF_OPEN lets exactly one request through and the first
// completion decides. Several rules on one resource are checked in order; a probe blocked by a
// later rule sends its rule back to OPEN (the #1638 hook).
#include <string>
#include <string_view>
#include <vector>

#include "spillway/dialect.hpp"

namespace spillway::dialects {

struct SentinelRule {
  std::string resource;
  int grade = 0;                // 0 slow ratio, 1 exception ratio, 2 exception count
  double count = 0;             // grade 0: max RT (ms); 1: ratio; 2: error count
  std::int64_t timeWindow = 0;  // seconds OPEN
  std::int64_t minRequestAmount = 5;
  std::int64_t statIntervalMs = 1000;
  double slowRatioThreshold = 1.0;  // grade 0 only
};

struct SentinelConfig {
  std::vector<SentinelRule> rules;  // all apply to every emulated resource, in order
  std::vector<std::string> ignoredKeys;
};

// A JSON array of DegradeRule objects (or one object). `resource` keeps only the rules of that
// resource; empty keeps all.
SentinelConfig parseSentinelConfig(std::string_view text, const std::string& source,
                                   std::string_view resource = {});

class SentinelDialect final : public DialectCluster {
 public:
  SentinelDialect(SentinelConfig cfg, std::uint64_t seed, EventSink* sink);
  ~SentinelDialect() override;
  DialectKind kind() const override { return DialectKind::Sentinel; }
  bool succeeded(int status, Outcome outcome, Micros latency) const override;
  const SentinelConfig& config() const { return cfg_; }
  // State of one rule's breaker (the member's state() is the most restrictive one).
  BreakerState ruleState(InstanceId id, std::size_t rule) const;

 protected:
  void onAdded(InstanceId id) override;
  DialectDecision doAdmit(InstanceId id, Micros now) override;
  void doRecord(InstanceId id, const DialectDecision& d, Micros end, Micros latency, int status,
                Outcome outcome) override;

 private:
  struct Rule;
  void setRule(InstanceId id, std::size_t i, BreakerState to, Reason reason, Micros at,
               double value, std::uint32_t calls);
  void sync(InstanceId id, Reason reason, Micros at, double value, std::uint32_t calls);

  const SentinelConfig cfg_;
  std::vector<std::vector<Rule>> m_;  // per member, per rule
};

}  // namespace spillway::dialects
