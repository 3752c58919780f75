// Policy → nginx OSS upstreams: `server ADDR max_fails=N fail_timeout=T;` with max_fails
// standing in for the error rate and fail_timeout for the open period, a shared `zone` (one
// state for all workers, as the emulation assumes) and proxy_next_upstream for what counts.
#include <algorithm>

#include "mapping.hpp"

namespace spillway::exporter::detail {

namespace {

// nginx reads fail_timeout in whole seconds and refuses "ms": the nearest, at least 1 s.
Micros failTimeout(const BreakerConfig& c) {
  const Micros s = (c.open.duration + kMicrosPerSecond / 2) / kMicrosPerSecond;
  return seconds(std::max<Micros>(1, s));
}

std::string params(const BreakerConfig& c) {
  return "max_fails=" + std::to_string(failuresToTrip(c)) + " fail_timeout=" + dur(failTimeout(c));
}

void nginxNotes(Notes& n, const BreakerConfig& c, const std::string& scope) {
  n.approx(Topic::Threshold,
           "nginx counts unsuccessful attempts, not a rate: error_rate " + num(c.trip.errorRate) +
               " over min_calls " + std::to_string(effectiveMinCalls(c)) +
               " → max_fails=" + std::to_string(failuresToTrip(c)) +
               " (successes do not lower the count until the peer has been out once)",
           scope);
  const Micros ft = failTimeout(c);
  n.approx(Topic::Open,
           "fail_timeout=" + dur(ft) + " is both the open period (open.duration " +
               formatDuration(c.open.duration) +
               (ft != c.open.duration ? ", in nginx's whole seconds" : "") +
               ") and the counting period (" + windowText(c) + " dropped)",
           scope);
  n.gap(Topic::Slow,
        "nginx has no slow-call rule: only timeouts (proxy_read_timeout) count, so "
        "slow_rate " +
            num(c.trip.slowRate) + " is not exported",
        scope);
  noteSustain(n, "nginx", c);
  if (c.open.backoffMultiplier > 1)
    n.gap(Topic::Backoff,
          "nginx has no backoff: every period is fail_timeout (× " + num(c.open.backoffMultiplier) +
              " up to " + formatDuration(c.open.maxDuration) + " dropped)",
          scope);
  noteJitterDecay(n, "nginx", c);
  n.gap(Topic::HalfOpen,
        "nginx sends one trial request per fail_timeout after the period and "
        "restores the peer on its first success: success_streak " +
            std::to_string(c.halfOpen.successStreak) + " → 1, probe_share " +
            num(c.halfOpen.probeShare) + " → one request",
        scope);
  if (c.ramp.duration > 0)
    n.gap(Topic::Ramp,
          "slow_start is NGINX Plus only: ramp " + formatDuration(c.ramp.duration) +
              " dropped (open source restores the weight stepwise on its own)",
          scope);
}

}  // namespace

ExportResult exportNginx(const Policy& policy, const ExportContext& ctx) {
  ExportResult r;
  r.target = DialectKind::Nginx;
  r.fileName = "upstreams.conf";
  Notes n;
  const Plan plan = makePlan(policy, ctx);
  std::string t =
      "# nginx upstreams with passive health (max_fails / fail_timeout), exported by Spillway.\n"
      "# Include in the http {} block. Mapping notes and gaps: spillway-cli export --target "
      "nginx.\n";
  // What counts as unsuccessful beyond error / timeout / invalid_header. nginx names only these
  // statuses; it also makes nginx try the next server (a retry).
  const ClassifyConfig& cl = plan.base.classify;
  std::string next = "proxy_next_upstream error timeout invalid_header";
  for (int s : {500, 502, 503, 504, 429})
    if (cl.failureStatus[static_cast<std::size_t>(s)]) next += " http_" + std::to_string(s);
  if (!ctx.idempotentOnly) {
    next += " non_idempotent";
    n.approx(Topic::Classify,
             "non_idempotent: LLM calls are POST, and without it nginx neither retries a failed "
             "POST nor counts its failure against max_fails — no server is ever taken out. A "
             "POST the upstream failed after starting work may run twice "
             "(--idempotent-only leaves it out)");
  } else {
    n.gap(Topic::Classify,
          "--idempotent-only: nginx neither retries nor counts failed POST requests (every LLM "
          "call): for POST traffic no server is ever taken out");
  }
  t += next + ";\n";
  n.approx(Topic::Classify,
           "failure statuses → proxy_next_upstream (nginx can list only 500, 502, 503, 504, 429; "
           "501 and 505–599 are not counted); it also retries the request on the next server — "
           "bound it with proxy_next_upstream_tries");
  std::size_t addr = 0;
  bool first = true;
  for (const Entry& e : plan.entries()) {
    const std::string scope = first ? std::string() : e.name;
    first = false;
    nginxNotes(n, e.cfg, scope);
    t += "\nupstream " + e.name + " {\n    zone " + e.name + " 64k;\n";
    if (e.instances.empty()) {
      t += "    server " + placeholderAddress(addr++) + " " + params(e.cfg) + ";  # " +
           std::string(kTodoAddress) + "\n";
    } else {
      for (const std::string& inst : e.instances) {
        BreakerConfig c = e.cfg;
        for (const InstanceOverride& o : plan.instances)
          if (o.instance == inst) {
            c = o.cfg;
            nginxNotes(n, c, inst);
          }
        const std::size_t placeholders = addr;
        const std::string address = serverAddress(ctx, inst, addr);  // may take a placeholder
        t += "    server " + address + " " + params(c) + ";  # " + inst +
             (addr > placeholders ? " " + std::string(kTodoAddress) : "") + "\n";
      }
      if (e.instances.size() == 1)
        n.gap(Topic::Scope,
              "nginx never marks the only server of an upstream down: " + e.name +
                  " has one instance, so its breaker never opens",
              e.name);
    }
    t += "}\n";
  }
  if (addr > 0)
    n.approx(Topic::Scope,
             "server addresses are placeholders (127.0.0.1:8001, ...; the instance "
             "is named in a comment): replace them with the instances' addresses");
  if (plan.models.size() > 1)
    n.approx(Topic::Scope,
             "one upstream per model; a validation replay emulates every model "
             "with the first upstream's values");
  r.text = std::move(t);
  r.notes = n.take();
  return r;
}

}  // namespace spillway::exporter::detail
