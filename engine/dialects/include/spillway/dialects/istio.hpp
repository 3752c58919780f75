#pragma once
// Istio DestinationRule outlierDetection, as pilot translates it to Envoy
// (cluster_traffic_policy.go): consecutive5xxErrors / consecutiveGatewayErrors with enforcing
// 100 when > 0 (0 disables), interval, baseEjectionTime, maxEjectionPercent (when > 0),
// minHealthPercent → healthy_panic_threshold (default 0: no panic); success-rate detection
// forced off, no failure-percentage detector, max_ejection_time and jitter left at Envoy's
// defaults (300 s cap, no jitter). The emulation is the Envoy one with that config.
#include <string_view>

#include "spillway/dialects/envoy.hpp"

namespace spillway::dialects {

// A DestinationRule (spec.trafficPolicy.outlierDetection), a trafficPolicy map, or a bare
// outlierDetection map, in Istio's camelCase keys. Several DestinationRules (manifests between
// `---`, as `export --target istio` writes one per model): the one whose metadata.name or
// spec.host is `select`, else the first.
EnvoyOutlierConfig parseIstioConfig(std::string_view text, const std::string& source,
                                    std::string_view select = {});

class IstioDialect final : public EnvoyDialect {
 public:
  using EnvoyDialect::EnvoyDialect;
  DialectKind kind() const override { return DialectKind::Istio; }
};

}  // namespace spillway::dialects
