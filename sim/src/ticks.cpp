// Once per tick: series rows, ground-truth health of every instance, fault interception.
#include "simulator_impl.hpp"

namespace spillway::sim {

// ---- ticks -------------------------------------------------------------------------------
void Simulator::Impl::onTick() {
  engine.advanceAll(now);
  const Micros grace = sc.policy.breaker.window.length;
  std::vector<std::uint32_t> spreading;  // healthy (unfaulted) instances that are unhealthy
  for (std::uint32_t i = 0; i < inst.size(); ++i) {
    Instance& in = inst[i];
    const Breaker& b = engine.breaker(in.eid);
    const BreakerConfig& cfg = b.config();
    std::uint32_t calls;
    double errorRate, slowRate;
    b.decisionRates(calls, errorRate, slowRate);
    const bool overThresholds =
        calls >= cfg.minCalls && (errorRate > cfg.trip.errorRate || slowRate > cfg.trip.slowRate);
    // A full gateway budget in front of the instance counts like its own queue being full.
    in.unhealthy = overThresholds || in.tick.queueFullSeen || in.tick.overflowSeen;
    if (in.unhealthy) in.rep.unhealthyTime += now - lastTick;
    // A spread target has no injected fault of its own, active or ended within the grace
    // period (an instance recovering from its own fault is not a victim of another).
    if (in.unhealthy && !ownFaultRecent(in, now, grace)) spreading.push_back(i);
    if (opt.series) {
      const BreakerSnapshot s = b.snapshot(now);
      InstanceTick row;
      row.t = now;
      row.instance = i;
      row.state = s.state;
      row.ramping = s.ramping;
      row.admitShare = s.admitShare;
      row.errorRate = s.errorRate;
      row.slowRate = s.slowRate;
      row.windowCalls = s.decision.calls;
      row.p99Ms = s.p99 / 1000.0;
      row.baselineP99Ms = s.baselineP99 / 1000.0;
      row.responses = in.tick.responses;
      row.failures = in.tick.failures;
      row.rejected = in.tick.rejected;
      row.queueFull = in.tick.queueFull;
      row.overflow = in.tick.overflow;
      row.busy = in.busy;
      row.queued = static_cast<std::uint32_t>(in.queue.size());
      row.outstanding = models[in.model].outstanding[in.slot];
      row.faultMultiplier = in.active.empty() ? 1.0 : effectAt(in, now).multiplier;
      row.faulted = !in.active.empty();
      row.unhealthy = in.unhealthy;
      const BlockTally bt = blocks.tallyOf(in.eid);
      row.blockedJudged = static_cast<std::uint32_t>(bt.total() - in.judgedBefore);
      row.blockedWouldSucceed = static_cast<std::uint32_t>(bt.avoidable() - in.wouldBefore);
      in.judgedBefore = bt.total();
      in.wouldBefore = bt.avoidable();
      opt.series->onInstance(row);
    }
    in.tick = TickCounters{};
  }
  if (!spreading.empty()) {
    for (Interval& iv : intervals) {
      if (iv.spread || now < iv.start) continue;
      if (iv.end != kForever && now > iv.end + grace) continue;
      iv.spread = true;
      iv.spreadTo = spreading.front();
      iv.spreadAt = now;
    }
  }
  for (ClientState& cl : clients) {
    if (opt.series) {
      cl.tick.t = now;
      cl.tick.p50Ms = percentileMs(cl.tickE2e, 0.5);
      cl.tick.p99Ms = percentileMs(cl.tickE2e, 0.99);
      opt.series->onClient(cl.tick);
    }
    if (opt.series) cl.tickE2e.clear();
    const std::uint32_t id = cl.tick.client;
    cl.tick = ClientTick{};
    cl.tick.client = id;
  }
  for (std::size_t m = 0; m < groupTick.size(); ++m) {
    groupHistory[m].push_back(groupTick[m]);
    groupTick[m] = GroupTick{};
  }
  lastTick = now;
  if ((now >= sc.duration && live == 0) || now >= endTime()) {
    done = true;
    if (opt.series) opt.series->end();
    return;
  }
  agenda.push(now + sc.tick, kPrioTick, kTick, 0);
}

bool Simulator::Impl::ownFaultRecent(const Instance& in, Micros t, Micros grace) const {
  for (std::uint32_t k : in.intervals) {
    const Interval& iv = intervals[k];
    if (iv.start <= t && (iv.end == kForever || t <= iv.end + grace)) return true;
  }
  return false;
}

}  // namespace spillway::sim
