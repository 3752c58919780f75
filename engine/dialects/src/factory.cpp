// makeDialect: native configuration text → the dialect that emulates it.
#include "spillway/dialect.hpp"
#include "spillway/dialects/cockatiel.hpp"
#include "spillway/dialects/envoy.hpp"
#include "spillway/dialects/haproxy.hpp"
#include "spillway/dialects/istio.hpp"
#include "spillway/dialects/litellm.hpp"
#include "spillway/dialects/nginx.hpp"
#include "spillway/dialects/opossum.hpp"
#include "spillway/dialects/resilience4j.hpp"
#include "spillway/dialects/sentinel.hpp"

namespace spillway {

using namespace dialects;

std::unique_ptr<DialectCluster> makeDialect(DialectKind kind, std::string_view text,
                                            const std::string& source, std::uint64_t seed,
                                            EventSink* sink, std::string_view select) {
  switch (kind) {
    case DialectKind::Resilience4j:
      return std::make_unique<Resilience4jDialect>(parseResilience4jConfig(text, source, select),
                                                   seed, sink);
    case DialectKind::Envoy:
      return std::make_unique<EnvoyDialect>(parseEnvoyConfig(text, source, select), seed, sink);
    case DialectKind::Istio:
      return std::make_unique<IstioDialect>(parseIstioConfig(text, source, select), seed, sink);
    case DialectKind::Sentinel:
      return std::make_unique<SentinelDialect>(parseSentinelConfig(text, source, select), seed,
                                               sink);
    case DialectKind::Haproxy:
      return std::make_unique<HaproxyDialect>(parseHaproxyConfig(text, source, select), seed, sink);
    case DialectKind::Nginx:
      return std::make_unique<NginxDialect>(parseNginxConfig(text, source, select), seed, sink);
    case DialectKind::Litellm:
      return std::make_unique<LitellmDialect>(parseLitellmConfig(text, source), seed, sink);
    case DialectKind::Opossum:
      return std::make_unique<OpossumDialect>(parseOpossumConfig(text, source), seed, sink);
    case DialectKind::Cockatiel:
      return std::make_unique<CockatielDialect>(parseCockatielConfig(text, source), seed, sink);
  }
  return nullptr;
}

}  // namespace spillway
