#include "spillway/dialect.hpp"

#include <algorithm>

namespace spillway {

namespace {
constexpr std::string_view kNames[kDialectCount] = {"resilience4j", "envoy",   "istio",
                                                    "sentinel",     "haproxy", "nginx",
                                                    "litellm",      "opossum", "cockatiel"};
}

std::string_view dialectName(DialectKind k) {
  return kNames[static_cast<int>(k)];
}

std::optional<DialectKind> parseDialectKind(std::string_view s) {
  for (int i = 0; i < kDialectCount; ++i)
    if (kNames[i] == s) return static_cast<DialectKind>(i);
  return std::nullopt;
}

InstanceId DialectCluster::addInstance(std::string_view name, std::string_view group) {
  const std::string key(name);
  if (auto it = index_.find(key); it != index_.end()) return it->second;
  const auto id = static_cast<InstanceId>(names_.size());
  names_.push_back(key);
  groups_.emplace_back(group);
  index_.emplace(key, id);
  groupMembers_[std::string(group)].push_back(id);
  states_.push_back(BreakerState::Closed);
  since_.push_back(kNever);
  firstSeen_.push_back(kNever);
  counters_.emplace_back();
  rngs_.emplace_back(seed_ ^ stableHash(name));
  onAdded(id);
  return id;
}

std::optional<InstanceId> DialectCluster::find(std::string_view name) const {
  if (auto it = index_.find(std::string(name)); it != index_.end()) return it->second;
  return std::nullopt;
}

std::size_t DialectCluster::groupSize(InstanceId id) const {
  return members(id).size();
}

const std::vector<InstanceId>& DialectCluster::members(InstanceId id) const {
  return groupMembers_.at(groups_[id]);
}

void DialectCluster::touch(InstanceId id, Micros now) {
  if (firstSeen_[id] == kNever) {
    firstSeen_[id] = now;
    since_[id] = now;
  }
}

void DialectCluster::advance(Micros now) {
  if (now < now_) now = now_;
  now_ = now;
  doAdvance(now);
}

DialectDecision DialectCluster::admit(InstanceId id, Micros now) {
  advance(now);
  now = now_;
  touch(id, now);
  const DialectDecision d = doAdmit(id, now);
  BreakerCounters& c = counters_[id];
  if (d.admitted()) {
    ++c.admitted;
    c.probes += d.kind == Admission::Probe;
  } else if (d.kind == Admission::Reject) {
    ++c.rejected;
    ++c.rejectedBy[d.reason];
  }
  return d;
}

void DialectCluster::record(InstanceId id, const DialectDecision& d, Micros end, Micros latency,
                            int status, Outcome outcome) {
  advance(end);
  end = now_;
  touch(id, end);
  ++counters_[id].recorded;
  doRecord(id, d, end, latency, status, outcome);
}

void DialectCluster::noteBlocked(InstanceId id, bool wouldHaveSucceeded) {
  BreakerCounters& c = counters_[id];
  ++c.verdicts;
  c.blockedWouldSucceed += wouldHaveSucceeded;
}

bool DialectCluster::succeeded(int status, Outcome outcome, Micros /*latency*/) const {
  static const ClassifyConfig kDefault;  // Spillway's default: 5xx, 0, 429, timeouts, resets
  return classify(kDefault, status, outcome) != Verdict::Failure;
}

void DialectCluster::finish(Micros now) {
  advance(now);
  for (InstanceId id = 0; id < names_.size(); ++id) {
    if (since_[id] == kNever) continue;
    counters_[id].timeIn[static_cast<int>(states_[id])] += std::max<Micros>(0, now_ - since_[id]);
    since_[id] = now_;
  }
}

void DialectCluster::transition(InstanceId id, BreakerState to, Reason reason, Micros at,
                                Micros openFor, double errorRate, double slowRate,
                                std::uint32_t calls) {
  const BreakerState from = states_[id];
  if (from == to) return;
  touch(id, at);
  counters_[id].timeIn[static_cast<int>(from)] += std::max<Micros>(0, at - since_[id]);
  since_[id] = at;
  states_[id] = to;
  if (to == BreakerState::Open) ++counters_[id].opens;
  Event e = transitionEvent(at, id, from, to, reason);
  e.errorRate = errorRate;
  e.slowRate = slowRate;
  e.calls = calls;
  e.openFor = openFor;
  publish(e);
}

void DialectCluster::rampComplete(InstanceId id, Micros at) {
  Event e;
  e.ts = at;
  e.instance = id;
  e.kind = EventKind::RampComplete;
  e.from = e.to = states_[id];
  e.reason = Reason::RampComplete;
  publish(e);
}

void DialectCluster::wouldOpen(InstanceId id, Reason reason, Micros at, double errorRate,
                               double slowRate, std::uint32_t calls) {
  ++counters_[id].wouldOpens;
  Event e;
  e.ts = at;
  e.instance = id;
  e.kind = EventKind::WouldOpen;
  e.from = e.to = states_[id];
  e.reason = reason;
  e.errorRate = errorRate;
  e.slowRate = slowRate;
  e.calls = calls;
  publish(e);
}

void DialectCluster::publish(const Event& e) {
  if (sink_) sink_->onEvent(e);
}

}  // namespace spillway
