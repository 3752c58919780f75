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

namespace {

// Seed 001's adaptive breaker and seed 002's cost routing: no exported gateway has them, so
// every target says so, and the plain rates and probes are what it gets.
void noteAdaptive(const Policy& p, std::vector<MappingNote>& notes) {
  const BreakerConfig& b = p.breaker;
  auto gap = [&](Topic t, std::string text) { notes.push_back({t, true, "", std::move(text)}); };
  if (b.trip.loadFactor.enabled)
    gap(Topic::Threshold,
        "trip.load_factor (error threshold x load) is not expressible: the "
        "plain error_rate is exported");
  if (b.trip.weight != 1.0)
    gap(Topic::Threshold, "trip.weight is not expressible: the unweighted rates are exported");
  if (b.slow.spreadMax > 1.0)
    gap(Topic::Slow, "slow.spread_max (P99 spread factor) is not expressible");
  if (!b.halfOpen.release.empty())
    gap(Topic::HalfOpen,
        "half_open.release (graded release) is not expressible: probes close "
        "on the success streak");
  if (p.degrade.cheaperForNonCore || p.degrade.cheaperForSimple)
    gap(Topic::Degrade, "degrade.prefer_cheaper_for (cost routing) is not expressible");
  if (p.degrade.truncateTail)
    gap(Topic::Degrade,
        "degrade.truncate_tail (cut at k x P99 baseline) is not expressible: set the upstream "
        "timeout to the slow threshold");
  const LimitsConfig& l = p.limits;
  bool memory = l.defaultTenant && l.defaultTenant->maxTokensInFlight > 0;
  for (const auto* rules : {&l.tenants, &l.routes, &l.models})
    for (const auto& [name, rule] : *rules) memory = memory || rule.maxTokensInFlight > 0;
  if (memory)
    gap(Topic::Limits,
        "limits max_tokens_in_flight (GPU memory by tokens) is not expressible: the request "
        "counts and rates are exported");
  if (!p.slaClasses.empty())
    gap(Topic::Degrade,
        "sla_classes (per-class budgets and degrade_to) are not expressible: route each class "
        "to its own backends in the gateway");
}

ExportResult dispatch(const Policy& policy, DialectKind target, const ExportContext& ctx) {
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

}  // namespace

namespace {

// `--addresses` entries the export did not use: a typo, or an instance no validation incident
// had, must not pass silently.
void noteUnusedAddresses(const ExportContext& ctx, DialectKind target,
                         std::vector<MappingNote>& notes) {
  if (ctx.addresses.empty()) return;
  const bool servers = target == DialectKind::Nginx || target == DialectKind::Haproxy ||
                       target == DialectKind::Envoy;
  std::string unused;
  for (const auto& [instance, address] : ctx.addresses) {
    bool seen = false;
    for (const auto& [name, model] : ctx.instances) seen = seen || name == instance;
    if (!servers || !seen) unused += (unused.empty() ? "" : ", ") + instance;
  }
  if (unused.empty()) return;
  notes.push_back({Topic::Scope, true, "",
                   servers ? "addresses given for instances the export does not contain (not "
                             "in the validation incidents): " +
                                 unused
                           : std::string(dialectName(target)) +
                                 " configuration names no servers: the addresses are not used"});
}

}  // namespace

namespace {

// A name the export writes into the target's file must stay one token there: a model named
// "m { }\nserver evil:80;\n#" became real nginx directives, and a newline folded into another
// Envoy cluster's name. Control characters are refused for every target; the token-based files
// (nginx, HAProxy) also refuse blanks and their syntax characters.
// Newlines and tabs as \n and \t: the message shows the name on one line, as it was written.
std::string oneLine(std::string_view s) {
  std::string out;
  for (const char c : s) out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : std::string(1, c);
  return out;
}

void checkName(const std::string& name, const std::string& what, DialectKind target,
               const ExportContext& ctx) {
  const bool tokens = target == DialectKind::Nginx || target == DialectKind::Haproxy;
  for (const unsigned char c : name) {
    const bool control = c < 0x20 || c == 0x7f;
    const bool syntax = tokens && std::string_view(" ;{}#\"'\\$`").find(static_cast<char>(c)) !=
                                      std::string_view::npos;
    if (control || syntax)
      throw InputError(
          ctx.policySource, 0, what,
          "'" + oneLine(name) + "' cannot be written into " + std::string(dialectName(target)) +
              " configuration as one name (it holds " +
              (c == ' ' ? std::string("a blank") : "'" + oneLine(std::string(1, c)) + "'") + ")");
  }
}

void checkNames(const Policy& policy, DialectKind target, const ExportContext& ctx) {
  for (const auto& [name, o] : policy.modelOverrides)
    checkName(name, "overrides.models", target, ctx);
  for (const auto& [name, o] : policy.instanceOverrides)
    checkName(name, "overrides.instances", target, ctx);
  for (const auto& [name, m] : policy.models) checkName(name, "models", target, ctx);
  for (const auto& [instance, model] : ctx.instances) {
    checkName(instance, "instance", target, ctx);
    checkName(model, "model", target, ctx);
  }
  for (const auto& [instance, address] : ctx.addresses) checkName(address, "address", target, ctx);
}

const char* modeKey(BreakerMode m) {
  switch (m) {
    case BreakerMode::Normal:
      return "normal";
    case BreakerMode::MetricsOnly:
      return "metrics_only";
    case BreakerMode::Disabled:
      return "disabled";
    case BreakerMode::ForcedOpen:
      break;
  }
  return "forced_open";
}

// Whether the target can hold a breaker that does not enforce: Resilience4j's initialState has
// every mode, per instance too; Envoy's enforcing_* = 0 detects and logs without ejecting (a
// shadow, or off), but only per cluster — it has no per-host settings.
bool expressible(BreakerMode m, DialectKind target, bool perInstance) {
  if (m == BreakerMode::Normal || target == DialectKind::Resilience4j) return true;
  return target == DialectKind::Envoy && m != BreakerMode::ForcedOpen && !perInstance;
}

// A trial (shadow), disabled or forced-open breaker written as an enforcing one would start
// ejecting in production: refused, not noted.
void checkMode(std::optional<BreakerMode> m, const std::string& field, DialectKind target,
               const ExportContext& ctx, bool perInstance = false) {
  if (!m || expressible(*m, target, perInstance)) return;
  throw InputError(ctx.policySource, 0, field,
                   std::string(modeKey(*m)) + ": " + std::string(dialectName(target)) +
                       " has no such mode, and exporting it as an enforcing breaker would eject "
                       "in production; export with mode: normal, or use a target that has it "
                       "(resilience4j: initialState" +
                       (*m == BreakerMode::ForcedOpen ? "" : "; envoy: enforcing 0") + ")");
}

void checkModes(const Policy& policy, DialectKind target, const ExportContext& ctx) {
  checkMode(policy.breaker.mode, "breaker.mode", target, ctx);
  for (const auto& [name, o] : policy.modelOverrides)
    checkMode(o.mode, "overrides.models." + name + ".mode", target, ctx);
  for (const auto& [name, o] : policy.instanceOverrides)
    checkMode(o.mode, "overrides.instances." + name + ".mode", target, ctx, true);
}

// Per-entry targets write one entry per model they know. Known only from overrides (no
// incidents), the file has those models alone: the default breaker the notes describe reaches
// no entry, and other models get no protection from it.
void noteDefaultUnwritten(const Policy& policy, DialectKind target, const ExportContext& ctx,
                          std::vector<MappingNote>& notes) {
  const bool perEntry = target == DialectKind::Envoy || target == DialectKind::Istio ||
                        target == DialectKind::Sentinel || target == DialectKind::Haproxy ||
                        target == DialectKind::Nginx;
  if (!perEntry || !ctx.instances.empty() || policy.modelOverrides.empty()) return;
  std::string names;
  for (const auto& [model, o] : policy.modelOverrides) names += (names.empty() ? "" : ", ") + model;
  MappingNote n;
  n.topic = Topic::Scope;
  n.gap = true;
  n.text = "only the overridden models (" + names +
           ") are written: with no incident (--validate) no other model is known, so the default "
           "breaker described here is in no entry — other models are unprotected; name them in "
           "overrides.models or validate on incidents that hold them";
  notes.push_back(std::move(n));
}

}  // namespace

ExportResult exportPolicy(const Policy& policy, DialectKind target, const ExportContext& ctx) {
  checkNames(policy, target, ctx);
  checkModes(policy, target, ctx);
  ExportResult r = dispatch(policy, target, ctx);
  noteDefaultUnwritten(policy, target, ctx, r.notes);
  noteAdaptive(policy, r.notes);
  noteUnusedAddresses(ctx, target, r.notes);
  return r;
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
