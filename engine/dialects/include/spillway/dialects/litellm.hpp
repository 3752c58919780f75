#pragma once
// LiteLLM router cooldowns (litellm/router_utils/cooldown_handlers.py). A deployment (member)
// of a model group either serves or is cooled down for cooldown_time; no half-open: it returns
// when the cooldown expires (a re-cooldown keeps the first deadline, #40130).
//  - v2 (default): per wall-clock-minute success/failure counts; cool down on a 429 in a
//    multi-deployment group, on 100 % failures with >= 1000 requests in the minute, on a
//    failure share > 50 % with >= 5 requests in a multi-deployment group, or on a
//    non-retryable status (401, 404). A single-deployment group is never cooled by the 429
//    or percentage rules.
//  - v1 (allowed_fails != 3 or allowed_fails_policy set): a fail counter with TTL cooldown_time
//    (refreshed per failure); cool down when fails + 1 > allowed_fails, any group size.
// Only 429, 401, 408, 404 and >= 500 are cooldown-eligible; connection errors are not.
// num_retries / retry_policy / fallbacks are read and reported, not replayed (a trace holds the
// attempts that were made).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/dialect.hpp"

namespace spillway::dialects {

struct LitellmConfig {
  std::int64_t allowedFails = 3;  // DEFAULT_ALLOWED_FAILS
  bool allowedFailsSet = false;   // explicitly set to a non-default value: v1
  std::map<std::string, std::int64_t> allowedFailsPolicy;  // e.g. RateLimitErrorAllowedFails
  Micros cooldownTime = seconds(5);                        // DEFAULT_COOLDOWN_TIME_SECONDS
  bool disableCooldowns = false;
  std::int64_t numRetries = 0;
  std::map<std::string, std::int64_t> retryPolicy;
  std::vector<std::string> fallbacks;  // "group -> backup" lines, for the report
  std::vector<std::string> ignoredKeys;
  bool legacy() const { return allowedFailsSet || !allowedFailsPolicy.empty(); }
};

// config.yaml (`router_settings:`) or a bare router_settings map.
LitellmConfig parseLitellmConfig(std::string_view text, const std::string& source);

class LitellmDialect final : public DialectCluster {
 public:
  LitellmDialect(LitellmConfig cfg, std::uint64_t seed, EventSink* sink);
  ~LitellmDialect() override;
  DialectKind kind() const override { return DialectKind::Litellm; }
  bool succeeded(int status, Outcome outcome, Micros latency) const override;
  const LitellmConfig& config() const { return cfg_; }
  Micros cooldownUntil(InstanceId id) const;

 protected:
  void onAdded(InstanceId id) override;
  DialectDecision doAdmit(InstanceId id, Micros now) override;
  void doRecord(InstanceId id, const DialectDecision& d, Micros end, Micros latency, int status,
                Outcome outcome) override;
  void doAdvance(Micros now) override;

 private:
  struct Deployment;
  bool shouldCooldown(InstanceId id, Micros now, int status);

  const LitellmConfig cfg_;
  std::vector<Deployment> m_;
};

}  // namespace spillway::dialects
