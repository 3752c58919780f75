// exportPolicy / importConfig: dispatch to one exporter or importer per target.
#include "spillway/export/export.hpp"

#include "mapping.hpp"
#include "spillway/input_error.hpp"

namespace spillway::exporter {

bool exportable(DialectKind k) {
  switch (k) {
    case DialectKind::Resilience4j:
    case DialectKind::Envoy:
    case DialectKind::Istio:
    case DialectKind::Sentinel:
    case DialectKind::Haproxy:
    case DialectKind::Nginx:
    case DialectKind::Litellm:
      return true;
    case DialectKind::Opossum:
    case DialectKind::Cockatiel:
      return false;
  }
  return false;
}

ExportResult exportPolicy(const Policy& policy, DialectKind target, const ExportContext& ctx) {
  switch (target) {
    case DialectKind::Resilience4j:
      return detail::exportResilience4j(policy, ctx);
    case DialectKind::Envoy:
      return detail::exportEnvoy(policy, ctx);
    case DialectKind::Istio:
      return detail::exportIstio(policy, ctx);
    case DialectKind::Sentinel:
      return detail::exportSentinel(policy, ctx);
    case DialectKind::Haproxy:
      return detail::exportHaproxy(policy, ctx);
    case DialectKind::Nginx:
      return detail::exportNginx(policy, ctx);
    case DialectKind::Litellm:
      return detail::exportLitellm(policy, ctx);
    case DialectKind::Opossum:
    case DialectKind::Cockatiel:
      break;
  }
  throw InputError("", 0, "target",
                   std::string(dialectName(target)) + " is emulated, not an export target");
}

bool importable(DialectKind k) {
  return k == DialectKind::Resilience4j || k == DialectKind::Envoy || k == DialectKind::Sentinel;
}

ImportResult importConfig(DialectKind from, std::string_view text, const std::string& source) {
  switch (from) {
    case DialectKind::Resilience4j:
      return detail::importResilience4j(text, source);
    case DialectKind::Envoy:
      return detail::importEnvoy(text, source);
    case DialectKind::Sentinel:
      return detail::importSentinel(text, source);
    default:
      break;
  }
  throw InputError(
      source, 0, "from",
      "cannot import from " + std::string(dialectName(from)) + " (resilience4j, envoy, sentinel)");
}

}  // namespace spillway::exporter
