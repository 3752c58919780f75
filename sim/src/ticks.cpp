// Once per tick: series rows, ground-truth health of every instance, fault interception.
#include "simulator_impl.hpp"

#include <algorithm>

namespace spillway::sim {

// ---- ticks -------------------------------------------------------------------------------
// The load each model group's breakers see (trip.load_factor): busy slots ÷ slots, or queued
// calls ÷ queue places, over the whole group.
void Simulator::Impl::updateLoads() {
  for (const ModelGroup& mg : models) {
    double busy = 0, slots = 0, queued = 0, places = 0;
    for (std::uint32_t i : mg.instances) {
      busy += inst[i].busy;
      slots += inst[i].slotsEff;
      queued += static_cast<double>(inst[i].queue.size());
      places += static_cast<double>(inst[i].queue.bound());
    }
    for (std::uint32_t i : mg.instances) {
      const LoadFactorConfig& lf = engine.breaker(inst[i].eid).config().trip.loadFactor;
      if (!lf.enabled) continue;
      const bool byQueue = lf.source == LoadSource::Queue;
      const double load =
          byQueue ? (places > 0 ? queued / places : 0) : (slots > 0 ? busy / slots : 1);
      engine.setLoad(inst[i].eid, load);
    }
  }
}

void Simulator::Impl::onTick() {
  engine.advanceAll(now);
  updateLoads();
  const Micros grace = sc.policy.breaker.window.length;
  std::vector<std::uint32_t> spreading;  // healthy (unfaulted) instances that are unhealthy
  const std::size_t window = healthWindowTicks();
  const std::uint64_t tickNo = lastTickNo++;
  for (std::uint32_t i = 0; i < inst.size(); ++i) {
    Instance& in = inst[i];
    const Breaker& b = engine.breaker(in.eid);
    in.unhealthy = judgeHealth(in, window, tickNo);
    in.unhealthyRun = in.unhealthy ? in.unhealthyRun + 1 : 0;
    if (in.unhealthy) in.rep.unhealthyTime += now - lastTick;
    // A spread target has no injected fault of its own, active or ended within the grace
    // period (an instance recovering from its own fault is not a victim of another), and has
    // been unhealthy for a whole window (a blip is not a spread).
    if (in.unhealthyRun >= window && !ownFaultRecent(in, now, grace)) spreading.push_back(i);
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
      // Only a victim this fault's traffic reaches counts for it (kpis.md): its own group
      // (retries, re-picks) or a model that takes the group's degraded load.
      const auto victim = std::find_if(spreading.begin(), spreading.end(), [&](std::uint32_t v) {
        return reaches(inst[iv.instance].model, inst[v].model);
      });
      if (victim == spreading.end()) continue;
      iv.spread = true;
      iv.spreadTo = *victim;
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

std::size_t Simulator::Impl::healthWindowTicks() const {
  return static_cast<std::size_t>(
      std::max<Micros>(1, sc.policy.breaker.window.length / std::max<Micros>(1, sc.tick)));
}

// Ground-truth health, the same for every policy under test (kpis.md, interception): over the
// last window of ticks (time-bounded, unlike a count window that can hold minutes of a lightly
// used backup), at least the scenario policy's min_calls answers and an error share or a share
// answered later than the caller's SLO over its trip thresholds; or traffic turned away by a
// full queue or gateway budget in at least half the window's ticks (one full tick is a blip).
bool Simulator::Impl::reaches(std::uint32_t from, std::uint32_t to) const {
  if (from == to) return true;
  if (!router) return false;
  const auto& c = router->candidates(from);
  return std::find(c.begin(), c.end(), to) != c.end();
}

bool Simulator::Impl::judgeHealth(Instance& in, std::size_t window, std::uint64_t tickNo) {
  if (in.healthRing.size() != window) in.healthRing.assign(window, Instance::Health{});
  Instance::Health& slot = in.healthRing[tickNo % window];
  slot.calls = in.tick.responses;
  slot.failures = in.tick.failures;
  slot.slow = in.tick.slowOverSlo;
  slot.pressure = in.tick.queueFullSeen || in.tick.overflowSeen;
  std::uint64_t calls = 0, failures = 0, slow = 0;
  std::size_t pressed = 0;
  for (const Instance::Health& h : in.healthRing) {
    calls += h.calls;
    failures += h.failures;
    slow += h.slow;
    pressed += h.pressure;
  }
  const bool pressure = 2 * pressed >= window;
  const TripConfig& trip = sc.policy.breaker.trip;
  const auto n = static_cast<double>(calls);
  const bool over = calls >= sc.policy.breaker.minCalls && calls > 0 &&
                    (static_cast<double>(failures) / n > trip.errorRate ||
                     static_cast<double>(slow) / n > trip.slowRate);
  return over || pressure;
}

bool Simulator::Impl::ownFaultRecent(const Instance& in, Micros t, Micros grace) const {
  for (std::uint32_t k : in.intervals) {
    const Interval& iv = intervals[k];
    if (iv.start <= t && (iv.end == kForever || t <= iv.end + grace)) return true;
  }
  return false;
}

}  // namespace spillway::sim
