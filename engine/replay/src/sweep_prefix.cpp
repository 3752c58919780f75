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
  TripLog log;
  log.cap = kMaxSamples;
  Replayer ref(p->reference_, options);
  ref.setTripLog(&log);
  for (std::size_t at = 0; at < steps; at += p->interval_) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return nullptr;
    p->snapshots_.push_back(std::make_unique<Replayer>(ref, p->reference_));
    if (!ref.replaySteps(schedule, std::min(at + p->interval_, steps), cancel)) return nullptr;
  }
  p->end_ = std::make_unique<Replayer>(ref, p->reference_);
  // The reference must be the path every candidate shares: none of its evaluations over.
  for (const TripSample& s : log.samples)
    if (Breaker::testTrip(ref.engine().breaker(s.id).config(), s).any()) return nullptr;
  p->summarize(log);
  return p;
}

void SharedPrefix::summarize(const TripLog& log) {
  logs_.resize(schedule_->instances.size());
  for (const TripSample& s : log.samples) logs_[s.id].samples.push_back(s);
  if (log.full) fullAt_ = log.samples.empty() ? 0 : log.samples.back().step;
  for (InstanceLog& in : logs_)
    for (std::size_t b = 0; b < in.samples.size(); b += kBlock) {
      double err = 0, slow = 0;
      for (std::size_t i = b; i < std::min(b + kBlock, in.samples.size()); ++i) {
        const TripSample& s = in.samples[i];
        if (s.calls == 0 || s.calls < reference_.breaker.minCalls) continue;
        err = std::max(err, static_cast<double>(s.failures) / s.calls);
        slow = std::max(slow, static_cast<double>(s.slow) / s.calls);
      }
      in.blockErr.push_back(err);
      in.blockSlow.push_back(slow);
    }
  for (std::size_t seq = 0; seq < schedule_->calls.size(); ++seq) {
    const ReplaySchedule::Call& c = schedule_->calls[seq];
    Micros& last = logs_[c.id].last;
    last = std::max({last, c.ts, end_->admitted(seq) ? c.ts + c.latency : c.ts});
  }
}

// By blocks: a block whose shares stay clearly below both thresholds has no sample over them
// (the slack covers rounding); a layered config may differ from the reference's minimum calls.
std::size_t SharedPrefix::firstOver(const InstanceLog& log, const BreakerConfig& cfg) const {
  const bool exactOnly = cfg.trip.loadFactor.enabled || cfg.minCalls != reference_.breaker.minCalls;
  const double err = Breaker::errorThresholdOf(cfg.trip, false, 0) * (1 - 1e-9);
  const double slow = Breaker::slowRateThresholdOf(cfg.trip) * (1 - 1e-9);
  for (std::size_t b = 0; b < log.blockErr.size(); ++b) {
    if (!exactOnly && log.blockErr[b] < err && log.blockSlow[b] < slow) continue;
    for (std::size_t i = b * kBlock; i < std::min((b + 1) * kBlock, log.samples.size()); ++i)
      if (Breaker::testTrip(cfg, log.samples[i]).any()) return log.samples[i].step;
  }
  return kNone;
}

std::vector<std::size_t> SharedPrefix::divergence(const Policy& policy) const {
  const bool layered = !policy.modelOverrides.empty() || !policy.instanceOverrides.empty();
  std::vector<std::size_t> at(logs_.size(), kNone);
  for (InstanceId id = 0; id < logs_.size(); ++id) {
    const ReplaySchedule::Instance& in = schedule_->instances[id];
    at[id] =
        firstOver(logs_[id], layered ? resolveBreaker(policy, in.model, in.name) : policy.breaker);
    // Past a full log nothing is known: every instance may leave there.
    if (fullAt_ != kNone) at[id] = std::min(at[id], fullAt_);
  }
  return at;
}

ReplayKpis SharedPrefix::replay(const Policy& policy, const std::vector<NamedFault>& faults,
                                const std::atomic<bool>* cancel) const {
  const std::vector<std::size_t> at = divergence(policy);
  const std::size_t first = *std::min_element(at.begin(), at.end());
  if (first == kNone) {  // every instance on the reference's path to the end
    Replayer r(*end_, policy);
    r.finishSchedule();
    return nativeReplayKpis(r, faults);
  }
  std::vector<std::uint8_t> leaves(at.size());
  Micros lastOfOthers = kNever;  // the least Micros
  for (InstanceId id = 0; id < at.size(); ++id) {
    leaves[id] = at[id] != kNone;
    if (!leaves[id]) lastOfOthers = std::max(lastOfOthers, logs_[id].last);
  }
  Replayer r(*snapshots_[first / interval_], policy);
  if (r.replaySteps(*schedule_, schedule_->steps.size(), cancel, &leaves)) {
    r.adoptOthers(*end_, leaves, lastOfOthers);
    r.finishSchedule();
  }
  return nativeReplayKpis(r, faults);
}

}  // namespace spillway
