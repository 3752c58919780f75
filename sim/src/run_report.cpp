// The KPI report of a run (docs/kpis.md definitions), from the counters kept during it.
#include "simulator_impl.hpp"
#include "spillway/sim/restoration.hpp"

namespace spillway::sim {
namespace {

// One counter of a group's ticks as a column: the shape the restoration rule reads
// (restoration.hpp), which the live drill's per-second counts share.
std::vector<std::uint64_t> column(const std::vector<GroupTick>& h,
                                  std::uint32_t GroupTick::*counter) {
  std::vector<std::uint64_t> out;
  out.reserve(h.size());
  for (const GroupTick& t : h) out.push_back(t.*counter);
  return out;
}

}  // namespace

// Fault onset → the faulted group's callers' availability back (kpis.md, serviceRestoredSince),
// measured from the fault's start. nullopt: no answers before the onset, or not back by the end
// of the run.
std::optional<Micros> Simulator::Impl::serviceRestoration(const Interval& iv, bool* left) const {
  // A start before 0 has no minute before it (row 0 at the latest), hence no level.
  if (groupHistory.empty() || sc.tick <= 0 || iv.start < 0) return std::nullopt;
  const std::vector<GroupTick>& h = groupHistory[inst[iv.instance].model];
  const std::int64_t minute = std::max<std::int64_t>(1, seconds(60) / sc.tick);
  const std::int64_t window = std::max<std::int64_t>(1, sc.policy.breaker.window.length / sc.tick);
  // The fault's reach: while it lasts and one window after (as for its spread).
  const std::int64_t span =
      iv.end == kForever ? static_cast<std::int64_t>(h.size()) : iv.end / sc.tick + window + 1;
  const auto goodSince = serviceRestoredSince(
      column(h, &GroupTick::finished), column(h, &GroupTick::available),
      static_cast<std::size_t>(iv.start / sc.tick),  // row k covers [k, k + 1) ticks
      static_cast<std::size_t>(minute), static_cast<std::size_t>(window),
      static_cast<std::size_t>(span), left);
  if (!goodSince) return std::nullopt;
  return std::max<Micros>(0, (static_cast<Micros>(*goodSince) + 1) * sc.tick - iv.start);
}

// Spread to the service (kpis.md, interception): the group's core callers lose more
// availability than the faulted capacity explains — rolling over one window, below their level
// in the minute before the onset by more than the share of the group's instances with a real
// fault (and 5 points), for a whole window, during the fault plus one window. When it first
// held, or nullopt.
std::optional<Micros> Simulator::Impl::serviceSpreadAt(const Interval& iv) const {
  if (groupHistory.empty() || sc.tick <= 0) return std::nullopt;
  const std::uint32_t m = inst[iv.instance].model;
  const std::vector<GroupTick>& h = groupHistory[m];
  const auto rows = static_cast<std::int64_t>(h.size());
  const std::int64_t onset = iv.start / sc.tick;
  const std::int64_t minute = std::max<std::int64_t>(1, seconds(60) / sc.tick);
  const std::int64_t window = std::max<std::int64_t>(1, sc.policy.breaker.window.length / sc.tick);
  const std::int64_t last =
      iv.end == kForever ? rows : std::min(rows, iv.end / sc.tick + window + 1);
  if (onset < 0) return std::nullopt;  // no minute before it, hence no level
  // The same yardstick as the restoration's, on the core callers.
  const std::vector<std::uint64_t> fin = column(h, &GroupTick::coreFinished);
  const std::vector<std::uint64_t> ok = column(h, &GroupTick::coreAvailable);
  const auto before = availabilityBefore(fin, ok, static_cast<std::size_t>(onset),
                                         static_cast<std::size_t>(minute));
  if (!before) return std::nullopt;
  std::size_t faulted = 0;
  const std::vector<std::uint32_t>& members = models[m].instances;
  for (std::uint32_t i : members)
    for (std::uint32_t k : inst[i].intervals) {
      const Interval& o = intervals[k];
      if (!sc.faults[o.fault].benign && o.start < iv.end && iv.start < o.end) {
        ++faulted;
        break;
      }
    }
  const double explained = static_cast<double>(faulted) / static_cast<double>(members.size());
  const double floor = *before - explained - kRestorationMargin;
  if (floor <= 0) return std::nullopt;  // the faulted capacity explains losing everything
  std::uint64_t wf = 0, wa = 0;
  std::int64_t below = 0;
  for (std::int64_t k = onset; k < last; ++k) {
    wf += fin[static_cast<std::size_t>(k)];
    wa += ok[static_cast<std::size_t>(k)];
    if (k - window >= onset) {
      wf -= fin[static_cast<std::size_t>(k - window)];
      wa -= ok[static_cast<std::size_t>(k - window)];
    }
    const bool lost = wf > 0 && static_cast<double>(wa) / static_cast<double>(wf) < floor;
    below = lost ? below + 1 : 0;
    if (below >= window) return (k + 1) * sc.tick;
  }
  return std::nullopt;
}

std::string modeName(const SimOptions& o) {
  if (!o.protection) return "off";
  const Layers& l = o.layers;
  if (l == Layers{}) return "all";
  std::string m;
  for (const auto& [on, name] : {std::pair{l.limits, "limits"}, std::pair{l.breaker, "breaker"},
                                 std::pair{l.degrade, "degrade"}})
    if (on) m += (m.empty() ? "" : "+") + std::string(name);
  return m.empty() ? "off" : m;
}

RunReport Simulator::Impl::report() const {
  RunReport rep;
  rep.scenario = sc.name;
  rep.seed = sc.seed;
  rep.protection = opt.protection;
  rep.mode = modeName(opt);
  rep.simulated = now;
  rep.originals = originals;
  rep.inFlightAtEnd = live;
  rep.events = events;
  rep.rejectedBy = rejectedBy;
  rep.overflow = overflow;
  LatencyHistogram all;
  for (const ClientState& cl : clients) {
    ClientReport c = cl.rep;
    c.p50Ms = percentileMs(cl.e2e, 0.5);
    c.p99Ms = percentileMs(cl.e2e, 0.99);
    c.latencySamples = cl.e2e.total();
    for (int k = 0; k < kEndCount; ++k) rep.ends[k] += c.ends[k];
    rep.attempts += c.attempts;
    rep.availability.num += c.availability.num;
    rep.availability.den += c.availability.den;
    rep.degradeSuccess.num += c.degradeSuccess.num;
    rep.degradeSuccess.den += c.degradeSuccess.den;
    rep.reroutedSuccess.num += c.reroutedSuccess.num;
    rep.reroutedSuccess.den += c.reroutedSuccess.den;
    rep.slaInQuota.num += c.slaInQuota.num;
    rep.slaInQuota.den += c.slaInQuota.den;
    rep.quotaRefused += c.quotaRefused;
    rep.degradeSwitch.num += c.degradeSwitch.num;
    rep.costRouted += c.costRouted;
    rep.gatewayFaultHits += c.gatewayFaultHits;
    rep.tailCuts += c.tailCuts;
    rep.degradeSwitch.den += c.degradeSwitch.den;
    rep.availabilityInFault.num += c.availabilityInFault.num;
    rep.availabilityInFault.den += c.availabilityInFault.den;
    if (c.criticality == Criticality::Core) {
      rep.coreAvailability.num += c.availability.num;
      rep.coreAvailability.den += c.availability.den;
      rep.coreAvailabilityInFault.num += c.availabilityInFault.num;
      rep.coreAvailabilityInFault.den += c.availabilityInFault.den;
    }
    all.merge(cl.e2e);
    rep.clients.push_back(std::move(c));
  }
  for (const auto& [name, k] : sc.policy.slaClasses) {
    SlaClassReport s{name, k.availability, k.latency, {}, 0};
    for (const ClientReport& c : rep.clients) {
      if (c.slaClass != name) continue;
      s.attained.num += c.withinClassBudget.num;
      s.attained.den += c.withinClassBudget.den;
      s.quotaRefused += c.quotaRefused;
    }
    rep.slaClasses.push_back(std::move(s));
  }
  rep.limitedBy = limitedBy;
  rep.degradeRejects = degradeRejects;
  rep.degradeOn = degrading;
  rep.limitsOn = limiting;
  std::uint64_t successes = 0, drops = 0;
  for (const ClientReport& c : rep.clients) {
    for (int k = 0; k < 3; ++k) rep.answeredBy[k] += c.answeredBy[k];
    for (int k = 0; k < 4; ++k) rep.backupByTier[k] += c.backupByTier[k];
    drops += c.qualityDrop;
    successes += c.ends[static_cast<int>(End::Success)];
    rep.trimmed += c.trimmed;
    rep.lockHits += c.lockHits;
    rep.misroutes += c.misroutes;
    rep.reroutes += c.reroutes;
  }
  rep.qualityDropShare = Ratio{drops, successes};
  rep.waste = Ratio{wastedSlotTime, slotTime};
  rep.limiterMisKill = Ratio{misKills, limitRefusals};
  rep.misKillBy = misKillBy;
  if (costed && originals > 0) rep.costPer1k = cost / static_cast<double>(originals) * 1000.0;
  if (degrading) rep.locksTaken = router->counters().locksTaken;
  if (limiting) {
    for (std::uint32_t t = 0; t < limiter->size(LimitScope::Tenant); ++t) {
      TenantReport tr;
      tr.name = limiter->name(LimitScope::Tenant, t);
      const LimitCounters& lc = limiter->counters(LimitScope::Tenant, t);
      tr.admitted = lc.admitted;
      tr.rejectedBy = lc.rejectedBy;
      tr.tokens = lc.tokens;
      if (const LimitRule* rule = limiter->rule(LimitScope::Tenant, t)) {
        tr.rate = rule->rate;
        tr.burst = rule->burst > 0 ? rule->burst : std::max(1.0, rule->rate);  // as the bucket
        tr.tokensPerSecond = rule->tokensPerSecond;
        tr.maxConcurrent = rule->maxConcurrent;
      }
      rep.tenants.push_back(std::move(tr));
    }
  }
  rep.p50Ms = percentileMs(all, 0.5);
  rep.p99Ms = percentileMs(all, 0.99);
  rep.retryAmplification = Ratio{rep.attempts, rep.originals};
  std::uint64_t gw = 0;
  for (const ClientReport& c : rep.clients) gw += c.tries;
  rep.triesPerRequest = Ratio{gw, rep.originals};
  const EngineTotals tot = engine.totals();
  rep.blocks = blocks.tally();
  const std::uint64_t blocked = rep.blocks.total();
  rep.falsePositive = Ratio{rep.blocks.avoidable(), blocked};
  rep.fpFalseTrip = Ratio{rep.blocks.part(BlockClass::FalseTrip), blocked};
  rep.fpRecoveryLag = Ratio{rep.blocks.part(BlockClass::RecoveryLag), blocked};
  rep.collateral = Ratio{rep.blocks.part(BlockClass::Collateral), blocked};
  if (breakerLayer(opt)) rep.falseTripsPerHour = rep.blocks.falseTripsPerHour(sc.duration);
  rep.opens = tot.opens;
  rep.wouldOpens = tot.wouldOpens;
  for (const Instance& in : inst) {
    InstanceReport ir = in.rep;
    // The snapshot adds the time spent in the current state since its last transition.
    const BreakerCounters bc = engine.breaker(in.eid).snapshot(now).counters;
    ir.opens = bc.opens;
    ir.timeIn = bc.timeIn;
    rep.queueFull += ir.queueFull;
    rep.instances.push_back(std::move(ir));
  }
  Micros ttdSum = 0, mttrSum = 0, tripSum = 0, selfSum = 0, restoreSum = 0, recoverySum = 0;
  int ttdN = 0, mttrN = 0;
  // Faults as scored: an unended one runs to the end of time. Overlapping real faults on one
  // instance clear together (the recovery lag counts from the last one's end).
  auto scored = [&](const Interval& iv) {
    const bool ended = iv.end != kForever && iv.end <= now;
    return FaultInterval{inst[iv.instance].eid, iv.start, ended ? iv.end : kForever - 1, ""};
  };
  // A fault shorter than the block classes' shortest real fault (10 s) is scored as they
  // class its blocks: benign, a blip — not a fault to detect (kpis.md).
  auto benign = [&](const Interval& iv) {
    return sc.faults[iv.fault].benign ||
           (iv.end != kForever && iv.end - iv.start < blocks.rules().minFault);
  };
  std::vector<FaultInterval> real;
  std::vector<std::size_t> realAt;
  for (std::size_t k = 0; k < intervals.size(); ++k)
    if (!benign(intervals[k]) && intervals[k].start <= now) {
      real.push_back(scored(intervals[k]));
      realAt.push_back(k);
    }
  std::vector<Micros> clearOf(intervals.size(), 0);  // 0: a benign fault clears at its end
  const std::vector<Micros> clears = clearTimes(real);
  for (std::size_t k = 0; k < real.size(); ++k) clearOf[realAt[k]] = clears[k];
  for (std::size_t ivAt = 0; ivAt < intervals.size(); ++ivAt) {
    const Interval& iv = intervals[ivAt];
    const FaultSpec& fs = sc.faults[iv.fault];
    FaultReport fr;
    fr.kind = fs.kind;
    fr.target = fs.target;
    fr.instance = instanceNames[iv.instance];
    fr.start = iv.start;
    fr.benign = benign(iv);
    fr.selfEnding = !iv.byHand && iv.end != kForever;
    if (!fr.benign) fr.serviceRestoration = serviceRestoration(iv, &fr.serviceLeft);
    fr.ended = iv.end != kForever && iv.end <= now;
    fr.end = iv.end == kForever ? now : std::min(iv.end, now);
    if (iv.start > now) continue;  // not reached yet
    const FaultInterval fi = scored(iv);
    const FaultScore s = scoreFault(fi, tee.kept, clearOf[ivAt]);
    fr.detected = s.detected;
    fr.restored = s.restored;
    fr.ttd = s.ttd;
    fr.mttr = s.mttr;
    fr.fromTrip = s.fromTrip;
    fr.recoveryLag = s.recoveryLag;
    fr.intercepted = !iv.spread;
    if (iv.spread) {
      fr.spreadTo = instanceNames[iv.spreadTo];
      fr.spreadAt = iv.spreadAt;
    } else if (!fr.benign) {
      if (const auto at = serviceSpreadAt(iv)) {
        fr.intercepted = false;
        fr.spreadTo = "service (core availability)";
        fr.spreadAt = *at;
      }
    }
    if (fr.benign) {
      rep.faults.push_back(std::move(fr));
      continue;
    }
    if (s.detected) {
      ttdSum += s.ttd;
      ++ttdN;
    }
    if (s.restored) {
      mttrSum += s.mttr;
      tripSum += s.fromTrip;
      ++mttrN;
      if (fr.selfEnding) {
        selfSum += s.fromTrip;
        ++rep.selfHealed;
      }
    }
    if (!fr.benign && fr.serviceLeft && !fr.serviceRestoration) ++rep.serviceNotRestored;
    if (fr.serviceRestoration) {
      restoreSum += *fr.serviceRestoration;
      recoverySum += std::max<Micros>(0, fr.start + *fr.serviceRestoration - fr.end);
      rep.worstServiceRestoration =
          std::max(rep.worstServiceRestoration.value_or(0), *fr.serviceRestoration);
      ++rep.serviceRestored;
    }
    ++rep.interception.den;
    if (fr.intercepted) ++rep.interception.num;
    rep.faults.push_back(std::move(fr));
  }
  rep.cascade = Ratio{rep.interception.den - rep.interception.num, rep.interception.den};
  if (ttdN) rep.meanTtd = ttdSum / ttdN;
  if (mttrN) {
    rep.meanMttr = mttrSum / mttrN;
    rep.meanFromTrip = tripSum / mttrN;
  }
  if (rep.selfHealed) rep.meanSelfHealing = selfSum / static_cast<Micros>(rep.selfHealed);
  if (rep.serviceRestored) {
    rep.meanServiceRestoration = restoreSum / static_cast<Micros>(rep.serviceRestored);
    rep.meanRecovery = recoverySum / static_cast<Micros>(rep.serviceRestored);
  }
  return rep;
}

}  // namespace spillway::sim
