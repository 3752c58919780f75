#include "spillway/block_class.hpp"

#include <algorithm>

namespace spillway {

std::string_view blockClassName(BlockClass c) {
  switch (c) {
    case BlockClass::FalseTrip:
      return "false_trip";
    case BlockClass::RecoveryLag:
      return "recovery_lag";
    case BlockClass::Collateral:
      return "collateral";
  }
  return "?";
}

std::optional<double> BlockTally::falseTripsPerHour(Micros traffic) const {
  if (traffic <= 0) return std::nullopt;
  return static_cast<double>(falseTripEpisodes) * 3600.0 * kMicrosPerSecond /
         static_cast<double>(traffic);
}

BlockTally& BlockTally::operator+=(const BlockTally& o) {
  for (int c = 0; c < kBlockClassCount; ++c) {
    blocks[c] += o.blocks[c];
    wouldSucceed[c] += o.wouldSucceed[c];
  }
  episodes += o.episodes;
  falseTripEpisodes += o.falseTripEpisodes;
  falseTripsByRule[0] += o.falseTripsByRule[0];
  falseTripsByRule[1] += o.falseTripsByRule[1];
  return *this;
}

BlockClassifier::PerInstance& BlockClassifier::at(InstanceId id) {
  if (id >= inst_.size()) inst_.resize(static_cast<std::size_t>(id) + 1);
  return inst_[id];
}

const BlockClassifier::PerInstance* BlockClassifier::find(InstanceId id) const {
  return id < inst_.size() ? &inst_[id] : nullptr;
}

void BlockClassifier::addFault(InstanceId id, Micros start, Micros end) {
  if (end <= start || (end != kForever && end - start < rules_.minFault)) return;
  std::vector<Interval>& f = at(id).faults;
  f.push_back({start, end});
  std::sort(f.begin(), f.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> merged;
  for (const Interval& i : f) {
    if (!merged.empty() && i.start <= merged.back().end)
      merged.back().end = std::max(merged.back().end, i.end);
    else
      merged.push_back(i);
  }
  f = std::move(merged);
}

const BlockClassifier::Interval* BlockClassifier::lastStarted(const PerInstance& p, Micros t) {
  auto it = std::upper_bound(p.faults.begin(), p.faults.end(), t,
                             [](Micros v, const Interval& i) { return v < i.start; });
  return it == p.faults.begin() ? nullptr : &*(it - 1);
}

bool BlockClassifier::realFaultAt(InstanceId id, Micros t) const {
  const PerInstance* p = find(id);
  if (!p) return false;
  const Interval* i = lastStarted(*p, t);
  return i && t < i->end;
}

void BlockClassifier::onEvent(const Event& e) {
  PerInstance& p = at(e.instance);
  if (e.kind == EventKind::RampComplete) {
    p.inEpisode = false;
    return;
  }
  if (e.kind != EventKind::Transition) return;
  const bool opens = e.to == BreakerState::Open || e.to == BreakerState::ForcedOpen;
  if (!opens || p.inEpisode) return;
  p.inEpisode = true;
  p.episodeStart = e.ts;
  const Interval* i = lastStarted(p, e.ts);
  const bool falseTrip = !i || (e.ts >= i->end && i->end + rules_.lateTrip <= e.ts);
  for (BlockTally* t : {&total_, &p.blocks}) {
    ++t->episodes;
    if (!falseTrip) continue;
    ++t->falseTripEpisodes;
    t->falseTripsByRule[0] += e.reason == Reason::ErrorRate || e.reason == Reason::ErrorAndSlow;
    t->falseTripsByRule[1] += e.reason == Reason::SlowRate || e.reason == Reason::ErrorAndSlow;
  }
}

BlockClass BlockClassifier::classify(InstanceId id, Micros t) const {
  const PerInstance* p = find(id);
  if (!p) return BlockClass::FalseTrip;
  const Interval* i = lastStarted(*p, t);
  if (i && t < i->end) return BlockClass::Collateral;
  // A real fault during the episode (or just before its open) makes the rest of it recovery.
  const Micros since = p->inEpisode ? p->episodeStart : t;
  if (i && i->end + rules_.lateTrip > since) return BlockClass::RecoveryLag;
  return BlockClass::FalseTrip;
}

void BlockClassifier::noteBlock(InstanceId id, Micros t, bool wouldSucceed) {
  const int c = static_cast<int>(classify(id, t));
  ++total_.blocks[c];
  total_.wouldSucceed[c] += wouldSucceed;
  BlockTally& mine = at(id).blocks;
  ++mine.blocks[c];
  mine.wouldSucceed[c] += wouldSucceed;
}

BlockTally BlockClassifier::tallyOf(InstanceId id) const {
  const PerInstance* p = find(id);
  return p ? p->blocks : BlockTally{};
}

}  // namespace spillway
