// Policy → HAProxy backends: passive `observe layer7` with `error-limit` standing in for the
// error rate and `on-error mark-down`, recovery through health checks (`rise` successes every
// `fastinter` ≈ the open period and the success streak), `slowstart` from the ramp.
#include <algorithm>

#include "mapping.hpp"

namespace spillway::exporter::detail {

namespace {

struct Health {
  std::uint32_t errorLimit, rise;
  Micros fastinter;  // also downinter
};

Health health(const BreakerConfig& c) {
  Health h;
  h.errorLimit = failuresToTrip(c);
  h.rise = std::max<std::uint32_t>(1, c.halfOpen.successStreak);
  // After a mark-down HAProxy checks at fastinter (forced by the error limit, then above
  // health 0), so `rise` passing checks every fastinter keep the server out for about
  // open.duration; while they fail (health 0) it checks every downinter: the same pace.
  h.fastinter = std::max<Micros>(millis(100), c.open.duration / h.rise / 1000 * 1000);
  return h;
}

std::string serverParams(const Health& h, const BreakerConfig& c) {
  std::string s = "check inter 2s fastinter " + dur(h.fastinter) + " downinter " +
                  dur(h.fastinter) + " rise " + std::to_string(h.rise) +
                  " fall 3 observe layer7 error-limit " + std::to_string(h.errorLimit) +
                  " on-error mark-down";
  if (c.ramp.duration > 0) s += " slowstart " + dur(c.ramp.duration);
  return s;
}

void haproxyNotes(Notes& n, const BreakerConfig& c, const std::string& scope) {
  const Health h = health(c);
  n.approx(Topic::Threshold,
           "HAProxy counts consecutive errors, not a rate: error_rate " + num(c.trip.errorRate) +
               " over min_calls " + std::to_string(effectiveMinCalls(c)) + " → error-limit " +
               std::to_string(h.errorLimit) +
               " (the fewest failures that can trip it, but in a row; a correct response resets "
               "the count) with on-error mark-down",
           scope);
  n.gap(Topic::Slow,
        "HAProxy has no slow-call rule: only read timeouts count as layer7 errors "
        "(set `timeout server` to make slow calls errors — it also kills them), so "
        "slow_rate " +
            num(c.trip.slowRate) + " is not exported",
        scope);
  noteSustain(n, "HAProxy", c);
  n.approx(Topic::HalfOpen,
           "recovery only through health checks: open.duration " + formatDuration(c.open.duration) +
               " and success_streak " + std::to_string(c.halfOpen.successStreak) + " → rise " +
               std::to_string(h.rise) + " passing checks every fastinter " + dur(h.fastinter) +
               " ≈ " + formatDuration(h.fastinter * h.rise) +
               " out when the instance is healthy again (HAProxy checks at fastinter right after "
               "a mark-down and while health is above 0; downinter " +
               dur(h.fastinter) + " while the checks fail; checks, not live probes: probe_share " +
               num(c.halfOpen.probeShare) + " is not expressible)",
           scope);
  if (c.open.backoffMultiplier > 1)
    n.gap(Topic::Backoff,
          "HAProxy has no backoff: a server is marked down the same way every "
          "time (× " +
              num(c.open.backoffMultiplier) + " up to " + formatDuration(c.open.maxDuration) +
              " dropped)",
          scope);
  noteJitterDecay(n, "HAProxy", c);
  if (c.ramp.duration > 0)
    n.approx(Topic::Ramp,
             "ramp " + formatDuration(c.ramp.duration) + " → slowstart " + dur(c.ramp.duration) +
                 " (linear weight and maxconn; a step-shaped ramp becomes linear)",
             scope);
  n.approx(Topic::Classify,
           "a refused connection counts against error-limit at each attempt, as it happens; "
           "HAProxy logs the request once, when its retries (1 s apart) are over, so a replay "
           "of its log sees those errors up to `retries` seconds late (docs/dialects.md)",
           scope);
  noteClassify(n, "HAProxy (observe layer7 judges 100–499, 501, 505 as valid)", c);
  noteUncountedStatuses(
      n, "HAProxy's observe layer7", c, [](int s) { return s >= 500 && s != 501 && s != 505; },
      scope);
  n.gap(Topic::HalfOpen,
        "a passing health check resets the server's error count (HAProxy's check.c, with "
        "on-error): with `inter 2s` and error-limit " +
            std::to_string(health(c).errorLimit) +
            ", a backend whose health endpoint answers while its calls fail must fail that many "
            "calls between two checks to be marked down. --validate assumes the checks follow "
            "the calls; `replay --dialect haproxy --health FILE` replays real check results",
        scope);
}

}  // namespace

ExportResult exportHaproxy(const Policy& policy, const ExportContext& ctx) {
  ExportResult r;
  r.target = DialectKind::Haproxy;
  r.fileName = "haproxy-backends.cfg";
  Notes n;
  const Plan plan = makePlan(policy, ctx);
  std::string t =
      "# HAProxy backends with passive health (observe layer7), exported by Spillway.\n"
      "# Mapping notes and gaps: spillway-cli export --target haproxy (docs/export.md).\n"
      "#\n"
      "# To replay HAProxy's own traffic under this file (spillway-cli import and replay read\n"
      "# these log lines as they are; replay --dialect haproxy --from-export), and to see its\n"
      "# states:\n"
      "#   global:   log stdout format raw local0\n"
      "#             stats socket /run/haproxy/spillway.sock mode 600 level admin\n"
      "#   frontend: log global\n"
      "#             log-format '" +
      std::string(haproxyLogFormat()) + "'\n";
  std::size_t addr = 0;
  bool first = true;
  for (const Entry& e : plan.entries()) {
    const std::string scope = first ? std::string() : e.name;
    first = false;
    haproxyNotes(n, e.cfg, scope);
    t += "\nbackend " + e.name + "\n";
    t += "    mode http\n    balance roundrobin\n    option httpchk GET /health\n";
    t += "    default-server " + serverParams(health(e.cfg), e.cfg) + "\n";
    if (e.instances.empty()) {
      t += "    server " + e.name + "-1 " + placeholderAddress(addr++) + "  # " +
           std::string(kTodoAddress) + "\n";
      continue;
    }
    for (const std::string& inst : e.instances) {
      const std::size_t placeholders = addr;
      t += "    server " + inst + " " + serverAddress(ctx, inst, addr);
      for (const InstanceOverride& o : plan.instances)
        if (o.instance == inst) {
          t += " " + serverParams(health(o.cfg), o.cfg);
          haproxyNotes(n, o.cfg, inst);
        }
      t += (addr > placeholders ? "  # " + std::string(kTodoAddress) : "") + "\n";
    }
  }
  n.approx(Topic::Scope,
           std::string(addr > 0 ? "server addresses are placeholders (127.0.0.1:8001, ...): "
                                  "replace them with the instances' addresses; "
                                : "") +
               "the health check is GET /health");
  for (const InstanceOverride& o : plan.instances) {
    bool placed = false;
    for (const Entry& e : plan.models)
      placed = placed ||
               std::find(e.instances.begin(), e.instances.end(), o.instance) != e.instances.end();
    if (!placed)
      n.gap(Topic::Scope,
            "instance override " + o.instance +
                " has no server line (instance not seen in a --validate incident): "
                "add its parameters to its `server` line by hand",
            o.instance);
  }
  if (plan.models.size() > 1)
    n.approx(Topic::Scope,
             "one backend per model; a validation replay emulates every model with "
             "the first backend's values");
  r.text = std::move(t);
  r.notes = n.take();
  return r;
}

}  // namespace spillway::exporter::detail

namespace spillway::exporter {

std::string_view haproxyLogFormat() {
  // Log variables only: a sample fetch (a txn variable, say) prints a bare `-` on a line HAProxy
  // writes without a transaction (a request it could not parse), which would not be JSON.
  // %Ts%ms is the accept date in epoch ms (%ms zero-padded): on a kept-alive connection the
  // end of the previous request, so the importer adds the handshake and idle time (%Th, %Ti).
  // %Ta, the active time, is never -1 unlike %Tr; %s is <NOSRV> when no server was chosen.
  return R"({"accept_ms":%Ts%ms,"Th":%Th,"Ti":%Ti,"TR":%TR,"Tw":%Tw,"Tc":%Tc,"Tr":%Tr,"Ta":%Ta,)"
         R"("server":"%s","backend":"%b","status":%ST,"termination":"%ts"})";
}

}  // namespace spillway::exporter
