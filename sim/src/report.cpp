// A run's report as JSON and as the table, side by side per KPI so that both say the same
// (over 600 lines: one function pair per section of docs/kpis.md).
#include "spillway/sim/report.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "spillway/limits.hpp"

namespace spillway::sim {
namespace {

using nlohmann::ordered_json;

ordered_json ratioJson(const Ratio& r) {
  ordered_json j;
  const auto v = r.value();
  j["value"] = v ? ordered_json(*v) : ordered_json(nullptr);
  j["num"] = r.num;
  j["den"] = r.den;
  return j;
}

ordered_json durationJson(Micros d) {
  return d == kForever ? ordered_json(nullptr) : ordered_json(static_cast<double>(d) / 1e6);
}
ordered_json durationJson(const std::optional<Micros>& d) {
  return d ? durationJson(*d) : ordered_json(nullptr);
}

std::string pct(const Ratio& r) {
  const auto v = r.value();
  if (!v) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", *v * 100.0);
  return buf;
}
std::string pctN(const Ratio& r) {
  return pct(r) + " (n=" + std::to_string(r.den) + ")";
}
// Two decimals: a class promising 99.99 % is judged on the second one.
std::string pct2N(const Ratio& r) {
  const auto v = r.value();
  if (!v) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f %% (n=%llu)", *v * 100.0,
                static_cast<unsigned long long>(r.den));
  return buf;
}
std::string pctOf(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g %%", share * 100.0);
  return buf;
}
std::string slaClassLabel(const SlaClassReport& s) {
  return "  class " + s.name + " (" + pctOf(s.target) + ", " + formatDuration(s.latency) + ")";
}
std::string classVerdict(const SlaClassReport& s) {
  return pct2N(s.attained) + (s.attained.den ? (s.met() ? "  met" : "  missed") : "");
}
std::string ratioX(const Ratio& r) {
  const auto v = r.value();
  if (!v) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", *v);
  return buf;
}
std::string dur(Micros d) {
  if (d == kForever) return "never";
  char buf[32];
  const double sec = static_cast<double>(d) / 1e6;
  if (sec < 60) {
    std::snprintf(buf, sizeof buf, "%.1fs", sec);
  } else {
    const long s = std::lround(sec);
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  }
  return buf;
}
std::string dur(const std::optional<Micros>& d) {
  return d ? dur(*d) : std::string("n/a");
}
std::string ms(double v) {
  char buf[32];
  if (v >= 10000) {
    std::snprintf(buf, sizeof buf, "%.1f s", v / 1000);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f ms", v);
  }
  return buf;
}

// Terminal columns of UTF-8 text: CJK ideographs (误伤) take two, continuation bytes none.
std::size_t columns(const std::string& s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) == 0x80) continue;
    n += (c & 0xF0) == 0xE0 && i + 2 < s.size() ? 2 : 1;  // 3-byte sequences here are CJK
  }
  return n;
}

void cell(std::string& line, const std::string& s, std::size_t width) {
  line += s;
  line.append(width > columns(s) ? width - columns(s) : 0, ' ');
  line += ' ';
}

void row(std::ostringstream& os, const std::string& a, const std::string& b,
         const std::string& c = {}, const std::string& d = {}) {
  std::string line = "  ";
  cell(line, a, 34);
  cell(line, b, 22);
  cell(line, c, 22);
  line += d;
  while (!line.empty() && line.back() == ' ') line.pop_back();  // noise in a diff of reports
  os << line << '\n';
}

// Who answered: the run's or a client's counts by primary / backup / cache.
ordered_json answersJson(const std::array<std::uint64_t, 3>& a) {
  return {{"primary", a[0]}, {"backup", a[1]}, {"cache", a[2]}};
}

// Limiter refusals by reason (the reason names are the JSON keys), into `into`.
void limitReasonsJson(const LimitCounts& counts, ordered_json& into) {
  counts.forEach([&](LimitReason why, std::uint64_t n) {
    if (why != LimitReason::None) into[std::string(limitReasonName(why))] = n;
  });
}

std::string withN(const std::optional<Micros>& d, std::uint64_t n) {
  return dur(d) + " (n=" + std::to_string(n) + ")";
}

// The real faults' TTD: the mean over the detected ones with its n, and the worst — "never"
// when one was not detected (kpis.md: its TTD is ∞; a mean over the rest reads faster).
std::string ttdMean(const RunReport& r) {
  std::uint64_t detected = 0;
  for (const FaultReport& f : r.faults) detected += !f.benign && f.detected;
  return withN(r.meanTtd, detected);
}
std::string ttdWorst(const RunReport& r) {
  std::optional<Micros> worst;
  std::uint64_t missed = 0;
  for (const FaultReport& f : r.faults) {
    if (f.benign) continue;
    if (!f.detected)
      ++missed;
    else
      worst = std::max(worst.value_or(0), f.ttd);
  }
  if (missed) return "never (" + std::to_string(missed) + " not detected)";
  return dur(worst);
}
// Trip → full traffic over every restored fault, those fixed by hand included (the seeds'
// self-healing time counts only the faults that ended by themselves: its own row).
std::string fromTrip(const RunReport& r) {
  std::uint64_t restored = 0;
  for (const FaultReport& f : r.faults) restored += !f.benign && f.restored;
  return withN(r.meanFromTrip, restored);
}
// Fault end (the instance fault-free) → full traffic, over the restored faults: the part a
// recovery policy controls (kpis.md).
std::string recoveryLag(const RunReport& r) {
  Micros sum = 0;
  std::uint64_t n = 0;
  for (const FaultReport& f : r.faults)
    if (!f.benign && f.restored) sum += f.recoveryLag, ++n;
  return n ? withN(sum / static_cast<Micros>(n), n) : "n/a";
}

// "5m40s, 16m58s (n=3)": mean and worst onset → availability back, over the faults; a service
// never back makes the worst "never" (its mean is over the faults it came back from).
std::string restoration(const RunReport& r) {
  const std::string never =
      "never (" + std::to_string(r.serviceNotRestored) + " not back by the end)";
  if (!r.serviceRestored) return r.serviceNotRestored ? never : "n/a";
  return dur(r.meanServiceRestoration) + ", " +
         (r.serviceNotRestored ? never : dur(r.worstServiceRestoration)) +
         " (n=" + std::to_string(r.serviceRestored) + ")";
}

std::string cost(const std::optional<double>& c) {
  if (!c) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", *c);
  return buf;
}

// "3 (4.5/h)": false-trip episodes and their rate per hour of traffic.
std::string falseTrips(const RunReport& r) {
  if (!r.falseTripsPerHour) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%llu (%.1f/h)",
                static_cast<unsigned long long>(r.blocks.falseTripEpisodes), *r.falseTripsPerHour);
  return buf;
}

ordered_json runJson(const RunReport& r) {
  ordered_json j;
  j["scenario"] = r.scenario;
  j["seed"] = r.seed;
  j["protection"] = r.protection;
  j["mode"] = r.mode;
  j["simulated_s"] = static_cast<double>(r.simulated) / 1e6;
  j["events"] = r.events;
  j["originals"] = r.originals;
  ordered_json ends;
  for (int k = 0; k < kEndCount; ++k) ends[std::string(endName(static_cast<End>(k)))] = r.ends[k];
  j["ends"] = ends;
  j["in_flight_at_end"] = r.inFlightAtEnd;
  j["attempts"] = r.attempts;
  ordered_json k;
  k["availability"] = ratioJson(r.availability);
  k["core_availability"] = ratioJson(r.coreAvailability);
  k["availability_during_faults"] = ratioJson(r.availabilityInFault);
  k["core_availability_during_faults"] = ratioJson(r.coreAvailabilityInFault);
  k["degrade_success_rate"] = ratioJson(r.degradeSuccess);
  k["rerouted_within_group_success"] = ratioJson(r.reroutedSuccess);
  k["false_positive_rate"] = ratioJson(r.falsePositive);
  k["false_positive_parts"] = {{"false_trip", ratioJson(r.fpFalseTrip)},
                               {"recovery_lag", ratioJson(r.fpRecoveryLag)}};
  k["collateral_share"] = ratioJson(r.collateral);
  k["false_trips"] = r.blocks.falseTripEpisodes;
  k["false_trips_per_hour"] =
      r.falseTripsPerHour ? ordered_json(*r.falseTripsPerHour) : ordered_json(nullptr);
  ordered_json bc;
  for (int c = 0; c < kBlockClassCount; ++c)
    bc[std::string(blockClassName(static_cast<BlockClass>(c)))] = {
        {"blocks", r.blocks.blocks[c]}, {"would_succeed", r.blocks.wouldSucceed[c]}};
  k["blocks_by_class"] = bc;
  // Paired with a baseline run (kpis.md) or n/a: the run's own share of faults that did not
  // spread is 1 − cascade_rate, not interception.
  k["fault_interception_rate"] = ratioJson(r.pairedInterception);
  k["cascade_rate"] = ratioJson(r.cascade);
  k["sla_attainment_in_quota"] = ratioJson(r.slaInQuota);
  k["quota_refusals"] = r.quotaRefused;
  ordered_json classes = ordered_json::array();
  for (const SlaClassReport& s : r.slaClasses)
    classes.push_back({{"name", s.name},
                       {"target", s.target},
                       {"latency_ms", static_cast<double>(s.latency) / 1000.0},
                       {"attained", ratioJson(s.attained)},
                       {"quota_refusals", s.quotaRefused},
                       {"met", s.met()}});
  k["sla_classes"] = classes;
  k["resource_waste"] = ratioJson(r.waste);
  k["limiter_mis_kill_rate"] = ratioJson(r.limiterMisKill);
  k["limiter_mis_kills_by"] = {{"tenant_quota", r.misKillBy[0]},
                               {"route", r.misKillBy[1]},
                               {"model", r.misKillBy[2]},
                               {"shed", r.misKillBy[3]}};
  k["degrade_switch_rate"] = ratioJson(r.degradeSwitch);
  k["cost_per_1k_requests"] = r.costPer1k ? ordered_json(*r.costPer1k) : ordered_json(nullptr);
  k["cost_routed_answers"] = r.costRouted;
  k["recovery_after_fault_s"] = durationJson(r.meanRecovery);
  k["retry_amplification"] = ratioJson(r.retryAmplification);
  k["tries_per_request"] = ratioJson(r.triesPerRequest);
  k["ttd_s"] = durationJson(r.meanTtd);
  k["mttr_s"] = durationJson(r.meanMttr);
  k["mttr_from_trip_s"] = durationJson(r.meanFromTrip);
  k["self_healing_s"] = durationJson(r.meanSelfHealing);
  k["self_healing_n"] = r.selfHealed;
  k["service_restoration_s"] = durationJson(r.meanServiceRestoration);
  k["service_restoration_n"] = r.serviceRestored;
  // JSON has no ∞: a service never back makes the worst null, with the count beside it.
  k["service_restoration_worst_s"] =
      r.serviceNotRestored ? ordered_json(nullptr) : durationJson(r.worstServiceRestoration);
  k["service_not_restored"] = r.serviceNotRestored;
  const auto worstTtd = worstTtdSeconds(r);
  k["ttd_worst_s"] =
      worstTtd && std::isfinite(*worstTtd) ? ordered_json(*worstTtd) : ordered_json(nullptr);
  std::uint64_t missed = 0;  // null above: no real fault, or this many never detected
  if (r.protection)
    for (const FaultReport& f : r.faults) missed += !f.benign && !f.detected;
  k["faults_missed"] = missed;
  const bool anyAnswer = r.ends[static_cast<int>(End::Success)] > 0;
  k["p50_ms"] = anyAnswer ? ordered_json(r.p50Ms) : ordered_json(nullptr);
  k["p99_ms"] = anyAnswer ? ordered_json(r.p99Ms) : ordered_json(nullptr);
  k["breaker_opens"] = r.opens;
  k["would_opens"] = r.wouldOpens;
  if (r.degradeOn) {
    k["answers_by"] = answersJson(r.answeredBy);
    k["backup_answers_by_tier"] = {{"1", r.backupByTier[0]},
                                   {"2", r.backupByTier[1]},
                                   {"3", r.backupByTier[2]},
                                   {"4", r.backupByTier[3]}};
    k["quality_drop_share"] = ratioJson(r.qualityDropShare);
    k["trimmed"] = r.trimmed;
    k["lock_hits"] = r.lockHits;
    k["locks_taken"] = r.locksTaken;
    k["misroutes"] = r.misroutes;
    k["gateway_reroutes"] = r.reroutes;
    k["tail_cuts"] = r.tailCuts;
    k["gateway_fault_hits"] = r.gatewayFaultHits;
  }
  j["kpis"] = k;
  ordered_json rej;
  r.rejectedBy.forEach([&](RejectReason why, std::uint64_t n) {
    if (why != RejectReason::None) rej[std::string(rejectReasonName(why))] = n;
  });
  rej["queue_full"] = r.queueFull;
  rej["overflow"] = r.overflow;
  limitReasonsJson(r.limitedBy, rej);
  rej["fast_fail"] = r.degradeRejects[0];
  rej["static_answer"] = r.degradeRejects[1];
  rej["no_backup"] = r.degradeRejects[2];
  j["rejections"] = rej;
  ordered_json clients = ordered_json::array();
  for (const ClientReport& c : r.clients) {
    ordered_json cj;
    cj["name"] = c.name;
    cj["criticality"] = criticalityName(c.criticality);
    if (!c.slaClass.empty()) cj["sla_class"] = c.slaClass;
    cj["originals"] = c.originals;
    ordered_json ce;
    for (int e = 0; e < kEndCount; ++e) ce[std::string(endName(static_cast<End>(e)))] = c.ends[e];
    cj["ends"] = ce;
    cj["availability"] = ratioJson(c.availability);
    cj["availability_during_faults"] = ratioJson(c.availabilityInFault);
    cj["degrade_success_rate"] = ratioJson(c.degradeSuccess);
    cj["rerouted_within_group_success"] = ratioJson(c.reroutedSuccess);
    cj["attempts"] = c.attempts;
    cj["retries"] = c.retries;
    cj["retries_denied_by_budget"] = c.retriesDenied;
    cj["breaker_blocks"] = c.breakerBlocks;
    cj["pool_exhausted"] = c.poolExhausted;
    cj["overflow"] = c.overflow;
    cj["retry_amplification"] = ratioJson(Ratio{c.attempts, c.originals});
    cj["answers_by"] = answersJson(c.answeredBy);
    cj["quality_drop"] = c.qualityDrop;
    cj["trimmed"] = c.trimmed;
    cj["lock_hits"] = c.lockHits;
    cj["misroutes"] = c.misroutes;
    cj["gateway_reroutes"] = c.reroutes;
    cj["fast_fail"] = c.fastFail;
    cj["static_answers"] = c.staticAnswers;
    cj["limited"] = c.limited;
    cj["p50_ms"] = c.latencySamples ? ordered_json(c.p50Ms) : ordered_json(nullptr);
    cj["p99_ms"] = c.latencySamples ? ordered_json(c.p99Ms) : ordered_json(nullptr);
    clients.push_back(cj);
  }
  j["clients"] = clients;
  if (r.limitsOn) {
    ordered_json tenants = ordered_json::array();
    for (const TenantReport& t : r.tenants) {
      ordered_json tj;
      tj["name"] = t.name;
      tj["admitted"] = t.admitted;
      ordered_json rj;
      limitReasonsJson(t.rejectedBy, rj);
      tj["rejected"] = rj;
      tj["tokens"] = t.tokens;
      ordered_json q;
      if (t.rate > 0) q["rate"] = t.rate, q["burst"] = t.burst;
      if (t.maxConcurrent) q["max_concurrent"] = t.maxConcurrent;
      if (t.tokensPerSecond > 0) q["tokens_per_second"] = t.tokensPerSecond;
      tj["quota"] = q.is_null() ? ordered_json::object() : q;
      tenants.push_back(tj);
    }
    j["tenants"] = tenants;
  }
  ordered_json insts = ordered_json::array();
  for (const InstanceReport& in : r.instances) {
    ordered_json ij;
    ij["name"] = in.name;
    ij["model"] = in.model;
    ij["attempts"] = in.attempts;
    ij["failures"] = in.failures;
    ij["queue_full"] = in.queueFull;
    ij["rejected"] = in.rejected;
    ij["opens"] = in.opens;
    ij["unhealthy_s"] = static_cast<double>(in.unhealthyTime) / 1e6;
    ordered_json t;
    for (int s = 0; s < kStateCount; ++s)
      if (in.timeIn[s])
        t[std::string(stateName(static_cast<BreakerState>(s)))] = in.timeIn[s] / 1e6;
    ij["time_in_state_s"] = t;
    insts.push_back(ij);
  }
  j["instances"] = insts;
  ordered_json faults = ordered_json::array();
  for (const FaultReport& f : r.faults) {
    ordered_json fj;
    fj["kind"] = faultKindName(f.kind);
    fj["target"] = f.target;
    fj["instance"] = f.instance;
    fj["start_s"] = f.start / 1e6;
    fj["end_s"] = f.ended ? ordered_json(f.end / 1e6) : ordered_json(nullptr);
    fj["benign"] = f.benign;
    fj["self_ending"] = f.selfEnding;
    fj["service_restoration_s"] = durationJson(f.serviceRestoration);
    fj["service_left"] = f.serviceLeft;
    fj["detected"] = f.detected;
    fj["restored"] = f.restored;
    fj["ttd_s"] = durationJson(f.ttd);
    fj["mttr_s"] = durationJson(f.mttr);
    fj["mttr_from_trip_s"] = durationJson(f.fromTrip);
    fj["recovery_lag_s"] = durationJson(f.recoveryLag);
    fj["spread"] = !f.intercepted;  // in this run; interception is paired (fault_interception_rate)
    if (!f.intercepted) {
      fj["spread_to"] = f.spreadTo;
      fj["spread_at_s"] = f.spreadAt / 1e6;
    }
    faults.push_back(fj);
  }
  j["faults"] = faults;
  return j;
}

// Published figures of the seed documents, keyed by the scenario name prefix.
struct SeedFigures {
  const char* availability = "";
  const char* core = "";
  const char* degrade = "";
  const char* interception = "";
  const char* fp = "";
  const char* restoration = "";  // the seeds' "MTTR": onset → service back (kpis.md)
  const char* selfHealing = "";
  const char* cost = "";
};
SeedFigures seedFigures(const std::string& scenario) {
  if (scenario.rfind("seed-000", 0) == 0)
    return {"", "<40 % -> ~92 %", "~97 %", "~95 %", "<= ~3 %", "~15 min -> ~90 s", "~90 s"};
  if (scenario.rfind("seed-001", 0) == 0)
    return {"SLA 71 % -> 99.97 %", "", "", "", "", "4.2 -> 0.4 min"};
  if (scenario.rfind("seed-002", 0) == 0)
    return {"87.2 % -> 99.95 %", "", "", "", "", "", "", "~35 % lower"};
  return {};
}

}  // namespace

std::string_view endName(End e) {
  switch (e) {
    case End::Success:
      return "success";
    case End::Error:
      return "error";
    case End::Timeout:
      return "timeout";
    case End::Rejected:
      return "rejected";
    case End::Shed:
      return "shed";
  }
  return "?";
}

std::string reportJson(const RunReport& r, int indent) {
  return runJson(r).dump(indent);
}

std::string reportTable(const RunReport& r) {
  std::ostringstream os;
  os << "Scenario " << r.scenario << ", seed " << r.seed << ", protection "
     << (r.protection ? (r.mode == "all" ? "on" : "on (" + r.mode + ")") : "off") << ", "
     << dur(r.simulated) << " simulated, " << r.originals << " requests, " << r.events
     << " events\n\n";
  row(os, "KPI", "value");
  row(os, "availability (within SLO)", pctN(r.availability));
  row(os, "core availability", pctN(r.coreAvailability));
  row(os, "availability during faults", pctN(r.availabilityInFault));
  row(os, "core availability during faults", pctN(r.coreAvailabilityInFault));
  row(os, "SLA attainment (in-quota traffic)", pctN(r.slaInQuota));
  row(os, "  quota refusals (originals)", std::to_string(r.quotaRefused));
  for (const SlaClassReport& s : r.slaClasses) row(os, slaClassLabel(s), classVerdict(s));
  row(os, "degrade success rate", pctN(r.degradeSuccess));
  row(os, "degrade switch rate", pctN(r.degradeSwitch));
  row(os, "re-routed within group (answered)", pctN(r.reroutedSuccess));
  row(os, "resource waste (slot time)", pctN(r.waste));
  row(os, "limiter mis-kill rate", pctN(r.limiterMisKill));
  row(os, "cost per 1k requests", cost(r.costPer1k));
  // Interception is paired with the unprotected run (kpis.md); one run has no baseline.
  row(os, "fault interception rate", "n/a (paired with the baseline: --compare)");
  row(os, "cascade rate (faults that spread)", pctN(r.cascade));
  row(os, "false-positive rate (误伤)", pctN(r.falsePositive));
  row(os, "  false trips / recovery lag", pct(r.fpFalseTrip) + " / " + pct(r.fpRecoveryLag));
  row(os, "collateral share (correct trips)", pctN(r.collateral));
  row(os, "false trips", falseTrips(r));
  row(os, "TTD (mean, detected faults)", ttdMean(r));
  row(os, "TTD (worst)", ttdWorst(r));
  row(os, "onset -> full traffic (mean)", dur(r.meanMttr));
  row(os, "trip -> full (mean, all restored)", fromTrip(r));
  row(os, "self-healing time (trip -> full)", withN(r.meanSelfHealing, r.selfHealed));
  row(os, "recovery lag (fault end -> full)", recoveryLag(r));
  row(os, "service restoration (mean, worst)", restoration(r));
  row(os, "recovery after the fault (mean)", withN(r.meanRecovery, r.serviceRestored));
  row(os, "retry amplification (instances)", ratioX(r.retryAmplification));
  row(os, "tries per request (callers)", ratioX(r.triesPerRequest));
  row(os, "latency p50 / p99 (answered)", ms(r.p50Ms) + " / " + ms(r.p99Ms));
  row(os, "breaker opens",
      std::to_string(r.opens) +
          (r.wouldOpens ? " (would open: " + std::to_string(r.wouldOpens) + ")" : std::string()));
  std::string rej;
  r.rejectedBy.forEach([&](RejectReason why, std::uint64_t n) {
    if (why != RejectReason::None && n)
      rej += std::string(rejectReasonName(why)) + " " + std::to_string(n) + ", ";
  });
  rej += "queue_full " + std::to_string(r.queueFull) + ", overflow " + std::to_string(r.overflow);
  r.limitedBy.forEach([&](LimitReason why, std::uint64_t n) {
    if (why != LimitReason::None && n)
      rej += ", " + std::string(limitReasonName(why)) + " " + std::to_string(n);
  });
  const char* dr[3] = {"fast_fail", "static_answer", "no_backup"};
  for (int i = 0; i < 3; ++i)
    if (r.degradeRejects[i])
      rej += std::string(", ") + dr[i] + " " + std::to_string(r.degradeRejects[i]);
  row(os, "rejections by reason", rej);
  if (r.degradeOn) {
    row(os, "answers by primary / backup / cache",
        std::to_string(r.answeredBy[0]) + " / " + std::to_string(r.answeredBy[1]) + " / " +
            std::to_string(r.answeredBy[2]));
    row(os, "backup answers by tier 2 / 3",
        std::to_string(r.backupByTier[1]) + " / " + std::to_string(r.backupByTier[2]));
    row(os, "quality-drop share (of answers)", pctN(r.qualityDropShare));
    row(os, "trimmed / lock hits / mis-routes",
        std::to_string(r.trimmed) + " / " + std::to_string(r.lockHits) + " / " +
            std::to_string(r.misroutes));
    row(os, "gateway re-routes / tail cuts",
        std::to_string(r.reroutes) + " / " + std::to_string(r.tailCuts));
  }
  if (r.limitsOn && !r.tenants.empty()) {
    os << "\n";
    row(os, "tenant", "admitted", "refused (rate/tokens/conc/shed)", "quota");
    for (const TenantReport& t : r.tenants) {
      std::string quota;
      char buf[96];
      if (t.rate > 0) {
        std::snprintf(buf, sizeof buf, "%g/s burst %g ", t.rate, t.burst);
        quota += buf;
      }
      if (t.maxConcurrent) quota += "conc " + std::to_string(t.maxConcurrent) + " ";
      if (t.tokensPerSecond > 0) {
        std::snprintf(buf, sizeof buf, "%g tok/s", t.tokensPerSecond);
        quota += buf;
      }
      row(os, t.name, std::to_string(t.admitted),
          std::to_string(t.rejectedBy[LimitReason::RateLimited]) + "/" +
              std::to_string(t.rejectedBy[LimitReason::TokenLimited]) + "/" +
              std::to_string(t.rejectedBy[LimitReason::Concurrency]) + "/" +
              std::to_string(t.rejectedBy[LimitReason::Shed]),
          quota.empty() ? "none" : quota);
    }
  }
  os << "\n";
  row(os, "client", "availability", "p50 / p99", "ends ok/err/timeout/rejected/shed, tries");
  for (const ClientReport& c : r.clients) {
    row(os, c.name + (c.criticality == Criticality::Core ? " [core]" : ""), pct(c.availability),
        ms(c.p50Ms) + " / " + ms(c.p99Ms),
        std::to_string(c.ends[0]) + "/" + std::to_string(c.ends[1]) + "/" +
            std::to_string(c.ends[2]) + "/" + std::to_string(c.ends[3]) + "/" +
            std::to_string(c.ends[4]) + "  " + ratioX(Ratio{c.attempts, c.originals}));
  }
  if (!r.faults.empty()) {
    os << "\n";
    // Whether the fault spread in this run. Interception is a paired figure (kpis.md: of the
    // faults that spread without protection): one run's row cannot say it.
    row(os, "fault (instance, kind, start)", "TTD / MTTR", "spread here", "spread to");
    for (const FaultReport& f : r.faults)
      row(os, f.instance + " " + std::string(faultKindName(f.kind)) + " @" + dur(f.start),
          f.benign ? std::string("- / -") : dur(f.ttd) + " / " + dur(f.mttr),
          f.benign        ? "benign"
          : f.intercepted ? "no"
                          : "yes",
          f.benign || f.intercepted ? "" : f.spreadTo + " @" + dur(f.spreadAt));
  }
  if (r.inFlightAtEnd)
    os << "\nwarning: " << r.inFlightAtEnd
       << " requests still in flight at the end (raise `drain`)\n";
  return os.str();
}

Ratio pairedInterception(const RunReport& baseline, const RunReport& protectedRun) {
  Ratio r;
  const std::size_t n = std::min(baseline.faults.size(), protectedRun.faults.size());
  for (std::size_t i = 0; i < n; ++i) {
    const FaultReport& b = baseline.faults[i];
    if (b.benign || b.intercepted) continue;  // did not spread without protection
    ++r.den;
    r.num += protectedRun.faults[i].intercepted;
  }
  return r;
}

std::string compareTable(const RunReport& b, const RunReport& p) {
  std::ostringstream os;
  const SeedFigures seed = seedFigures(p.scenario);
  os << "Scenario " << p.scenario << ", seed " << p.seed << ": protection off vs on ("
     << b.originals << " / " << p.originals << " requests)\n\n";
  row(os, "KPI", "baseline (off)", "protected (on)", "seed figure");
  row(os, "availability (within SLO)", pctN(b.availability), pctN(p.availability),
      seed.availability);
  row(os, "core availability", pctN(b.coreAvailability), pctN(p.coreAvailability));
  row(os, "availability during faults", pctN(b.availabilityInFault), pctN(p.availabilityInFault));
  row(os, "core availability during faults", pctN(b.coreAvailabilityInFault),
      pctN(p.coreAvailabilityInFault), seed.core);
  row(os, "SLA attainment (in-quota traffic)", pctN(b.slaInQuota), pctN(p.slaInQuota));
  row(os, "  quota refusals (originals)", std::to_string(b.quotaRefused),
      std::to_string(p.quotaRefused));
  for (std::size_t i = 0; i < p.slaClasses.size() && i < b.slaClasses.size(); ++i)
    row(os, slaClassLabel(p.slaClasses[i]), classVerdict(b.slaClasses[i]),
        classVerdict(p.slaClasses[i]));
  row(os, "degrade success rate", pctN(b.degradeSuccess), pctN(p.degradeSuccess), seed.degrade);
  row(os, "degrade switch rate", pctN(b.degradeSwitch), pctN(p.degradeSwitch));
  row(os, "re-routed within group (answered)", pctN(b.reroutedSuccess), pctN(p.reroutedSuccess));
  row(os, "resource waste (slot time)", pct(b.waste), pct(p.waste));
  row(os, "cascade rate (faults that spread)", pctN(b.cascade), pctN(p.cascade));
  row(os, "limiter mis-kill rate", pctN(b.limiterMisKill), pctN(p.limiterMisKill));
  std::string protectedCost = cost(p.costPer1k);
  if (b.costPer1k && p.costPer1k && *b.costPer1k > 0) {
    char change[32];
    std::snprintf(change, sizeof change, " (%+.1f %%)", (*p.costPer1k / *b.costPer1k - 1) * 100);
    protectedCost += change;
  }
  row(os, "cost per 1k requests", cost(b.costPer1k), protectedCost, seed.cost);
  // Interception is judged on the faults that spread in this paired baseline (kpis.md).
  const Ratio spread{b.interception.den - b.interception.num, b.interception.den};
  row(os, "fault interception rate",
      std::to_string(spread.num) + " of " + std::to_string(spread.den) + " spread",
      pctN(pairedInterception(b, p)), seed.interception);
  row(os, "false-positive rate (误伤)", pctN(b.falsePositive), pctN(p.falsePositive), seed.fp);
  row(os, "  false trips / recovery lag", "", pct(p.fpFalseTrip) + " / " + pct(p.fpRecoveryLag));
  row(os, "collateral share (correct trips)", pctN(b.collateral), pctN(p.collateral));
  row(os, "false trips", falseTrips(b), falseTrips(p));
  row(os, "TTD (mean, detected faults)", dur(b.meanTtd), ttdMean(p));
  row(os, "TTD (worst)", "n/a", ttdWorst(p));
  row(os, "onset -> full traffic (mean)", dur(b.meanMttr), dur(p.meanMttr));
  row(os, "trip -> full (mean, all restored)", dur(b.meanFromTrip), fromTrip(p));
  row(os, "self-healing time (trip -> full)", "n/a", withN(p.meanSelfHealing, p.selfHealed),
      seed.selfHealing);
  row(os, "recovery lag (fault end -> full)", "n/a", recoveryLag(p));
  row(os, "service restoration (mean, worst)", restoration(b), restoration(p), seed.restoration);
  row(os, "recovery after the fault (mean)", withN(b.meanRecovery, b.serviceRestored),
      withN(p.meanRecovery, p.serviceRestored));
  row(os, "retry amplification (instances)", ratioX(b.retryAmplification),
      ratioX(p.retryAmplification));
  row(os, "tries per request (callers)", ratioX(b.triesPerRequest), ratioX(p.triesPerRequest));
  row(os, "latency p50", ms(b.p50Ms), ms(p.p50Ms));
  row(os, "latency p99", ms(b.p99Ms), ms(p.p99Ms));
  row(os, "breaker opens",
      std::to_string(b.opens) + " (would: " + std::to_string(b.wouldOpens) + ")",
      std::to_string(p.opens));
  row(os, "queue-full answers", std::to_string(b.queueFull), std::to_string(p.queueFull));
  row(os, "gateway overflows", std::to_string(b.overflow), std::to_string(p.overflow));
  if (p.costRouted)
    row(os, "answers by a cheaper model (cost)", std::to_string(b.costRouted),
        std::to_string(p.costRouted));
  if (p.degradeOn)
    row(os, "answers primary / backup / cache",
        std::to_string(b.answeredBy[0]) + " / " + std::to_string(b.answeredBy[1]) + " / " +
            std::to_string(b.answeredBy[2]),
        std::to_string(p.answeredBy[0]) + " / " + std::to_string(p.answeredBy[1]) + " / " +
            std::to_string(p.answeredBy[2]));
  if (p.limitsOn) {
    std::uint64_t lim = 0;
    p.limitedBy.forEach([&](LimitReason why, std::uint64_t n) {
      if (why != LimitReason::None) lim += n;
    });
    row(os, "refused by limits", "0", std::to_string(lim));
  }
  os << "\n";
  row(os, "client availability (in faults)", "baseline (off)", "protected (on)");
  for (std::size_t i = 0; i < p.clients.size() && i < b.clients.size(); ++i)
    row(os, p.clients[i].name + (p.clients[i].criticality == Criticality::Core ? " [core]" : ""),
        pctN(b.clients[i].availability) + " (" + pct(b.clients[i].availabilityInFault) + ")",
        pctN(p.clients[i].availability) + " (" + pct(p.clients[i].availabilityInFault) + ")");
  os << "\n(The seed figures are the published, de-identified numbers of the seed document;\n"
        " the simulated figures come from this scenario and seed.)\n";
  return os.str();
}

std::string compareJson(const RunReport& b, const RunReport& p, int indent) {
  ordered_json j;
  RunReport paired = p;
  paired.pairedInterception = pairedInterception(b, p);
  j["baseline"] = runJson(b);
  j["protected"] = runJson(paired);
  j["fault_interception_rate"] = ratioJson(paired.pairedInterception);
  const SeedFigures s = seedFigures(p.scenario);
  ordered_json sf;
  if (*s.availability) sf["availability"] = s.availability;
  if (*s.core) sf["core_availability"] = s.core;
  if (*s.degrade) sf["degrade_success_rate"] = s.degrade;
  if (*s.interception) sf["fault_interception_rate"] = s.interception;
  if (*s.fp) sf["false_positive_rate"] = s.fp;
  if (*s.restoration) sf["service_restoration"] = s.restoration;
  if (*s.selfHealing) sf["self_healing"] = s.selfHealing;
  if (*s.cost) sf["cost_per_1k_requests"] = s.cost;
  j["seed_figures"] = sf;
  return j.dump(indent);
}

std::optional<double> worstTtdSeconds(const RunReport& r) {
  std::optional<double> w;
  if (!r.protection) return w;
  for (const FaultReport& f : r.faults) {
    if (f.benign) continue;
    const double t =
        f.detected ? static_cast<double>(f.ttd) / 1e6 : std::numeric_limits<double>::infinity();
    w = std::max(w.value_or(t), t);
  }
  return w;
}

std::optional<double> worstRestorationSeconds(const RunReport& r) {
  if (r.serviceNotRestored) return std::numeric_limits<double>::infinity();
  if (!r.worstServiceRestoration) return std::nullopt;
  return static_cast<double>(*r.worstServiceRestoration) / 1e6;
}

}  // namespace spillway::sim
