#include "spillway/sweep_prefix.hpp"

#include <algorithm>
#include <optional>

namespace spillway {
namespace {

constexpr std::size_t kMaxSnapshots = 64;
constexpr std::size_t kSnapshotBudget = std::size_t{256} << 20;   // bytes for all snapshots
constexpr std::size_t kBytesPerInstance = std::size_t{96} << 10;  // a breaker's windows, baseline
constexpr std::size_t kMaxSamples = std::size_t{4} << 20;         // 128 MB of trip log

// No window exceeds these (capped at 1 in the rule), whatever the weight or load factor.
constexpr double kUnreachableRate = 1e12;

}  // namespace

Policy SharedPrefix::reference(Policy p) {
  p.breaker.trip.errorRate = kUnreachableRate;
  p.breaker.trip.slowRate = kUnreachableRate;
  p.breaker.trip.sustain = 0;
  return p;
}

bool SharedPrefix::covers(const Policy& policy) const {
  const Policy r = reference(policy);
  return r.breaker == reference_.breaker && r.modelOverrides == reference_.modelOverrides &&
         r.instanceOverrides == reference_.instanceOverrides;
}

std::unique_ptr<SharedPrefix> SharedPrefix::build(const std::vector<const Policy*>& policies,
                                                  const ReplaySchedule& schedule,
                                                  const ReplayOptions& options,
                                                  const std::atomic<bool>* cancel) {
  const std::size_t steps = schedule.steps.size();
  if (policies.size() < 2 || steps == 0) return nullptr;
  std::unique_ptr<SharedPrefix> p(new SharedPrefix(reference(*policies[0]), schedule));
  if (std::count_if(policies.begin(), policies.end(),
                    [&](const Policy* c) { return p->covers(*c); }) < 2)
    return nullptr;
  const std::size_t perSnapshot =
      schedule.instances.size() * kBytesPerInstance + schedule.calls.size();
  const std::size_t count = std::clamp<std::size_t>(
      kSnapshotBudget / std::max<std::size_t>(perSnapshot, 1), 1, kMaxSnapshots);
  p->interval_ = (steps + count - 1) / count;
  p->log_.cap = kMaxSamples;
  Replayer ref(p->reference_, options);
  ref.setTripLog(&p->log_);
  for (std::size_t at = 0; at < steps; at += p->interval_) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return nullptr;
    p->snapshots_.push_back(std::make_unique<Replayer>(ref, p->reference_));
    if (!ref.replaySteps(schedule, std::min(at + p->interval_, steps), cancel)) return nullptr;
  }
  p->end_ = std::make_unique<Replayer>(ref, p->reference_);
  // The reference must be the path every candidate shares: none of its evaluations over.
  for (const TripSample& s : p->log_.samples)
    if (Breaker::testTrip(ref.engine().breaker(s.id).config(), s).any()) return nullptr;
  p->summarize();
  return p;
}

void SharedPrefix::summarize() {
  const std::vector<TripSample>& log = log_.samples;
  for (std::size_t b = 0; b < log.size(); b += kBlock) {
    double err = 0, slow = 0;
    for (std::size_t i = b; i < std::min(b + kBlock, log.size()); ++i) {
      const TripSample& s = log[i];
      if (s.calls == 0 || s.calls < reference_.breaker.minCalls) continue;
      err = std::max(err, static_cast<double>(s.failures) / s.calls);
      slow = std::max(slow, static_cast<double>(s.slow) / s.calls);
    }
    blockErr_.push_back(err);
    blockSlow_.push_back(slow);
  }
}

// The first sample over `cfg` (every instance's config), by blocks: a block whose shares stay
// clearly below both thresholds has no sample over them (the slack covers rounding).
std::size_t SharedPrefix::firstOver(const BreakerConfig& cfg) const {
  const std::vector<TripSample>& log = log_.samples;
  const double weight = cfg.trip.weight;
  const bool exactOnly = cfg.trip.loadFactor.enabled || cfg.minCalls != reference_.breaker.minCalls;
  const double err = std::min(1.0, cfg.trip.errorRate * weight) * (1 - 1e-9);
  const double slow = std::min(1.0, cfg.trip.slowRate * weight) * (1 - 1e-9);
  for (std::size_t b = 0; b < blockErr_.size(); ++b) {
    if (!exactOnly && blockErr_[b] < err && blockSlow_[b] < slow) continue;
    for (std::size_t i = b * kBlock; i < std::min((b + 1) * kBlock, log.size()); ++i)
      if (Breaker::testTrip(cfg, log[i]).any()) return i;
  }
  return log.size();
}

// Overrides may give each instance its own thresholds: resolved as the log needs them.
std::size_t SharedPrefix::firstOverLayered(const Policy& policy) const {
  std::vector<std::optional<BreakerConfig>> resolved(schedule_->instances.size());
  const std::vector<TripSample>& log = log_.samples;
  for (std::size_t i = 0; i < log.size(); ++i) {
    std::optional<BreakerConfig>& cfg = resolved[log[i].id];
    if (!cfg) {
      const ReplaySchedule::Instance& in = schedule_->instances[log[i].id];
      cfg = resolveBreaker(policy, in.model, in.name);
    }
    if (Breaker::testTrip(*cfg, log[i]).any()) return i;
  }
  return log.size();
}

std::size_t SharedPrefix::divergence(const Policy& policy) const {
  const bool layered = !policy.modelOverrides.empty() || !policy.instanceOverrides.empty();
  const std::size_t i = layered ? firstOverLayered(policy) : firstOver(policy.breaker);
  if (i < log_.samples.size()) return log_.samples[i].step;
  // A full log ends within its last step: resume there.
  return log_.full ? log_.samples.back().step : schedule_->steps.size();
}

ReplayKpis SharedPrefix::replay(const Policy& policy, const std::vector<NamedFault>& faults,
                                const std::atomic<bool>* cancel) const {
  const std::size_t at = divergence(policy);
  if (at >= schedule_->steps.size()) {
    Replayer r(*end_, policy);
    r.finishSchedule();
    return nativeReplayKpis(r, faults);
  }
  Replayer r(*snapshots_[at / interval_], policy);
  if (r.replaySteps(*schedule_, schedule_->steps.size(), cancel)) r.finishSchedule();
  return nativeReplayKpis(r, faults);
}

}  // namespace spillway
