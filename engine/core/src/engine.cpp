#include "spillway/engine.hpp"

#include "spillway/rng.hpp"

namespace spillway {

Engine::Engine(Policy policy, std::uint64_t seed, EventSink* sink)
    : Engine(std::make_shared<const Policy>(std::move(policy)), seed, sink) {}

Engine::Engine(std::shared_ptr<const Policy> policy, std::uint64_t seed, EventSink* sink)
    : policy_(std::move(policy)), seed_(seed), sink_(sink) {}

Engine::Engine(const Engine& from, Policy policy, EventSink* sink)
    : policy_(std::make_shared<const Policy>(std::move(policy))),
      seed_(from.seed_),
      sink_(sink),
      keepWindows_(from.keepWindows_),
      names_(from.names_),
      models_(from.models_),
      modelOf_(from.modelOf_),
      modelIndex_(from.modelIndex_) {
  for (InstanceId id = 0; id < from.breakers_.size(); ++id) {
    breakers_.push_back(from.breakers_[id]->fork(*configFor(model(id), names_[id]), sink));
    index_.emplace(names_[id], id);
  }
}

InstanceId Engine::addInstance(std::string_view name, std::string_view model) {
  if (auto it = index_.find(name); it != index_.end()) return it->second;
  const auto id = static_cast<InstanceId>(breakers_.size());
  names_.emplace_back(name);
  auto m = modelIndex_.find(model);
  if (m == modelIndex_.end()) {
    m = modelIndex_.emplace(std::string(model), static_cast<std::uint32_t>(models_.size())).first;
    models_.emplace_back(model);
  }
  modelOf_.push_back(m->second);
  const BreakerConfig& cfg = *configFor(models_[m->second], names_.back());
  // Per-instance stream: depends on the seed and the name only, never on registration order.
  const std::uint64_t stream = seed_ ^ stableHash(name);
  breakers_.push_back(std::make_unique<Breaker>(id, cfg, stream, sink_));
  if (!keepWindows_) breakers_.back()->keepWindowHistogram(false);
  index_.emplace(names_.back(), id);
  return id;
}

void Engine::keepWindowHistograms(bool on) {
  keepWindows_ = on;
  for (auto& b : breakers_) b->keepWindowHistogram(on);
}

const BreakerConfig* Engine::configFor(const std::string& model, const std::string& instance) {
  const bool byModel = !model.empty() && policy_->modelOverrides.count(model);
  const bool byInstance = policy_->instanceOverrides.count(instance) > 0;
  if (!byModel && !byInstance) return &policy_->breaker;
  // Instances sharing a model (and no override of their own) share one resolved config.
  const std::string key = byInstance ? "i\n" + model + "\n" + instance : "m\n" + model;
  auto& slot = configs_[key];
  if (!slot) slot = std::make_unique<BreakerConfig>(resolveBreaker(*policy_, model, instance));
  return slot.get();
}

std::optional<InstanceId> Engine::find(std::string_view name) const {
  if (auto it = index_.find(name); it != index_.end()) return it->second;
  return std::nullopt;
}

void Engine::adoptBreaker(InstanceId id, const Breaker& from) {
  breakers_[id] = from.fork(*configFor(model(id), names_[id]), sink_);
}

void Engine::advanceAll(Micros now) {
  for (auto& b : breakers_) b->advance(now);
}

EngineTotals Engine::totals() const {
  EngineTotals t;
  for (const auto& b : breakers_) {
    const BreakerCounters& c = b->counters();
    t.admitted += c.admitted;
    t.rejected += c.rejected;
    t.verdicts += c.verdicts;
    t.blockedWouldSucceed += c.blockedWouldSucceed;
    t.recorded += c.recorded;
    t.opens += c.opens;
    t.wouldOpens += c.wouldOpens;
    for (TripCause cause : {TripCause::ErrorRate, TripCause::SlowRate})
      t.fpByTrip[cause] += c.fpByTrip[cause];
  }
  return t;
}

}  // namespace spillway
