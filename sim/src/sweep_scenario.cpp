#include "spillway/sim/sweep_scenario.hpp"

#include <algorithm>

#include "spillway/sim/simulator.hpp"

namespace spillway::sim {

SweepScore scoreRun(const RunReport& r) {
  SweepScore s;
  s.records = r.availability.den;
  s.succeeded = r.availability.num;  // already net of what the breakers turned away
  s.blocks = r.blocks;
  // The breakers' blocks, as a replay counts them (availability() does not take them off again:
  // `succeeded` is net of them here).
  s.rejected = r.blocks.total();
  for (const std::uint64_t w : r.blocks.wouldSucceed) s.blockedWouldSucceed += w;
  s.traffic = r.simulated;
  s.simulated = true;
  s.limitRefusals = r.limiterMisKill.den;
  s.misKills = r.limiterMisKill.num;
  s.slotTime = r.waste.den;
  s.wastedSlotTime = r.waste.num;
  s.originals = r.originals;
  s.costed = r.costPer1k.has_value();
  s.cost = r.costPer1k.value_or(0) * static_cast<double>(r.originals) / 1000.0;
  for (const FaultReport& f : r.faults) {
    if (f.benign) continue;
    ++s.faults;
    const Micros ttd = f.detected ? f.ttd : std::max<Micros>(0, f.end - f.start);
    s.detected += f.detected;
    s.ttdSum += ttd;
    s.ttdMax = std::max(s.ttdMax, ttd);
    if (f.restored) {
      ++s.restored;
      s.mttrSum += f.mttr;
    }
  }
  return s;
}

CandidateScorer scenarioScorer(const Scenario& scenario, std::uint32_t seeds) {
  return [scenario, seeds](const Policy& policy) {
    Scenario sc = scenario;
    sc.policy = policy;
    SweepScore total;
    for (std::uint32_t k = 0; k < std::max<std::uint32_t>(seeds, 1); ++k) {
      sc.seed = scenario.seed + k;
      total.add(scoreRun(simulate(sc)));
    }
    return total;
  };
}

}  // namespace spillway::sim
