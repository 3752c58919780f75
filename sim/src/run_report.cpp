// The KPI report of a run (docs/kpis.md definitions), from the counters kept during it.
#include "simulator_impl.hpp"

namespace spillway::sim {

RunReport Simulator::Impl::report() const {
  RunReport rep;
  rep.scenario = sc.name;
  rep.seed = sc.seed;
  rep.protection = opt.protection;
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
  if (opt.protection) rep.falseTripsPerHour = rep.blocks.falseTripsPerHour(sc.duration);
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
  Micros ttdSum = 0, mttrSum = 0, tripSum = 0;
  int ttdN = 0, mttrN = 0;
  for (const Interval& iv : intervals) {
    const FaultSpec& fs = sc.faults[iv.fault];
    FaultReport fr;
    fr.kind = fs.kind;
    fr.target = fs.target;
    fr.instance = instanceNames[iv.instance];
    fr.start = iv.start;
    fr.benign = fs.benign;
    fr.ended = iv.end != kForever && iv.end <= now;
    fr.end = iv.end == kForever ? now : std::min(iv.end, now);
    if (iv.start > now) continue;  // not reached yet
    FaultInterval fi{inst[iv.instance].eid, iv.start, fr.ended ? iv.end : kForever - 1, ""};
    const FaultScore s = scoreFault(fi, tee.kept);
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
    }
    ++rep.interception.den;
    if (fr.intercepted) ++rep.interception.num;
    rep.faults.push_back(std::move(fr));
  }
  if (ttdN) rep.meanTtd = ttdSum / ttdN;
  if (mttrN) {
    rep.meanMttr = mttrSum / mttrN;
    rep.meanFromTrip = tripSum / mttrN;
  }
  return rep;
}

}  // namespace spillway::sim
