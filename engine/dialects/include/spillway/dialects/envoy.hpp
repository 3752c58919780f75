#pragma once
// Envoy outlier detection (source/common/upstream/outlier_detection_impl.cc), one detector per
// cluster (= group): consecutive_5xx and consecutive_gateway_failure fire inline on exactly the
// N-th error; success_rate (mean - stdev x factor/1000) and failure_percentage (>= threshold)
// run every `interval` over the previous interval's counts, gated by their minimum hosts and
// request volumes; ejection needs 100 x (ejected + 1) / hosts <= max_ejection_percent (or
// always_eject_one_host) and an enforcing_* draw from the seeded stream; a host stays out for
// min(base_ejection_time x backoff, max_ejection_time) + jitter, checked at interval sweeps; the
// backoff grows per ejection (while backoff x base < max + base) and decays by one per sweep
// once the host has been back for an interval. No half-open: the host simply returns. While
// fewer than healthy_panic_threshold % of hosts are available, the LB ignores ejections.
#include <string>
#include <string_view>
#include <vector>

#include "spillway/dialect.hpp"

namespace spillway::dialects {

struct EnvoyOutlierConfig {
  std::uint32_t consecutive5xx = 5;
  std::uint32_t consecutiveGatewayFailure = 5;
  Micros interval = seconds(10);
  Micros baseEjectionTime = seconds(30);
  Micros maxEjectionTime = -1;  // -1: Envoy's default, max(300 s, base_ejection_time)
  Micros maxEjectionTimeJitter = 0;
  std::uint32_t maxEjectionPercent = 10;
  bool alwaysEjectOneHost = false;
  std::uint32_t enforcingConsecutive5xx = 100;
  std::uint32_t enforcingConsecutiveGatewayFailure = 0;
  std::uint32_t enforcingSuccessRate = 100;
  std::uint32_t successRateMinimumHosts = 5;
  std::uint32_t successRateRequestVolume = 100;
  std::uint32_t successRateStdevFactor = 1900;
  std::uint32_t failurePercentageThreshold = 85;
  std::uint32_t enforcingFailurePercentage = 0;
  std::uint32_t failurePercentageMinimumHosts = 5;
  std::uint32_t failurePercentageRequestVolume = 50;
  double healthyPanicThreshold = 50;  // common_lb_config, percent; 0 disables panic
  std::vector<std::string> ignoredKeys;

  Micros maxEjection() const {
    return maxEjectionTime >= 0 ? maxEjectionTime : std::max(seconds(300), baseEjectionTime);
  }
};

// A cluster (`outlier_detection`, `common_lb_config`), a bootstrap/`clusters:` list (`cluster`
// picks one by name; empty: the first), or a bare outlier_detection map; snake_case or the
// proto-JSON lowerCamelCase.
EnvoyOutlierConfig parseEnvoyConfig(std::string_view text, const std::string& source,
                                    std::string_view cluster = {});

class EnvoyDialect : public DialectCluster {
 public:
  EnvoyDialect(EnvoyOutlierConfig cfg, std::uint64_t seed, EventSink* sink);
  ~EnvoyDialect() override;
  DialectKind kind() const override { return DialectKind::Envoy; }
  bool succeeded(int status, Outcome outcome, Micros latency) const override;
  const EnvoyOutlierConfig& config() const { return cfg_; }
  std::uint32_t ejectTimeBackoff(InstanceId id) const;
  std::uint32_t numEjections(InstanceId id) const;
  bool ejected(InstanceId id) const;

 protected:
  void onAdded(InstanceId id) override;
  DialectDecision doAdmit(InstanceId id, Micros now) override;
  void doRecord(InstanceId id, const DialectDecision& d, Micros end, Micros latency, int status,
                Outcome outcome) override;
  void doAdvance(Micros now) override;

 private:
  struct Host;
  struct Detector;
  enum class Type : std::uint8_t { Consecutive5xx, ConsecutiveGateway, SuccessRate, FailurePct };
  void eject(InstanceId id, Type type, Micros at, double rate);
  void sweep(Detector& d, Micros at);
  Detector& detectorOf(InstanceId id);
  bool enforce(Detector& d, std::uint32_t percent);

  const EnvoyOutlierConfig cfg_;
  std::vector<Host> hosts_;
  std::vector<Detector> detectors_;  // one per group, in order of first appearance
};

}  // namespace spillway::dialects
