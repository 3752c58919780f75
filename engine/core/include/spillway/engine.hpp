#pragma once
// The engine: a registry of per-instance breakers sharing one policy, one event sink and one
// seed. Calls on different instances touch disjoint state, so threads may drive different
// instances concurrently once registration is done (the sink must then be thread-safe).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "spillway/breaker.hpp"
#include "spillway/policy.hpp"

namespace spillway {

struct EngineTotals {
  std::uint64_t admitted = 0, rejected = 0, verdicts = 0, blockedWouldSucceed = 0;
  std::uint64_t recorded = 0, opens = 0, wouldOpens = 0;
  TripCounts fpByTrip{};
  // FP rate = blocked-but-would-succeed ÷ blocked with a verdict; nullopt when nothing blocked.
  std::optional<double> fpRate() const {
    if (verdicts == 0) return std::nullopt;
    return static_cast<double>(blockedWouldSucceed) / static_cast<double>(verdicts);
  }
};

class Engine {
 public:
  Engine(Policy policy, std::uint64_t seed, EventSink* sink = nullptr);
  // Engines that share one policy (`listen` keeps an engine per instance, so it can drop one)
  // share its memory too.
  Engine(std::shared_ptr<const Policy> policy, std::uint64_t seed, EventSink* sink = nullptr);
  // `from`'s instances and their state under another policy and sink (Breaker::fork).
  Engine(const Engine& from, Policy policy, EventSink* sink);
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Registers an instance (idempotent by name) with its model for per-model overrides.
  InstanceId addInstance(std::string_view name, std::string_view model = {});
  std::optional<InstanceId> find(std::string_view name) const;

  Decision admit(InstanceId id, Micros now) { return breakers_[id]->admit(now); }
  void record(InstanceId id, const Decision& d, Micros end, Micros latency, int status,
              Outcome outcome) {
    breakers_[id]->record(end, latency, status, outcome, d.probe);
  }
  void recordAggregate(InstanceId id, Micros end, std::uint32_t calls, std::uint32_t failures,
                       std::int64_t slow = -1, const LatencyHistogram* hist = nullptr) {
    breakers_[id]->recordAggregate(end, calls, failures, slow, hist);
  }
  void noteBlocked(InstanceId id, bool wouldHaveSucceeded) {
    breakers_[id]->noteBlocked(wouldHaveSucceeded);
  }
  void advanceAll(Micros now);
  // Instance `id`'s breaker becomes a copy of `from` under this engine's config for it.
  void adoptBreaker(InstanceId id, const Breaker& from);
  void setTripLog(TripLog* log) {
    for (auto& b : breakers_) b->setTripLog(log);
  }
  void setLoad(InstanceId id, double load) { breakers_[id]->setLoad(load); }
  // Whether the breakers' window histograms follow every call (the default) or are built when
  // read — for runs that never plot them (SlidingStats::keepWindowHistogram). Applies to the
  // breakers there are and those added later.
  void keepWindowHistograms(bool on);

  Breaker& breaker(InstanceId id) { return *breakers_[id]; }
  const Breaker& breaker(InstanceId id) const { return *breakers_[id]; }
  std::size_t size() const { return breakers_.size(); }
  const std::string& name(InstanceId id) const { return names_[id]; }
  const std::string& model(InstanceId id) const { return models_[modelOf_[id]]; }
  const Policy& policy() const { return *policy_; }
  EngineTotals totals() const;

 private:
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::shared_ptr<const Policy> policy_;
  std::uint64_t seed_;
  EventSink* sink_;
  bool keepWindows_ = true;
  const BreakerConfig* configFor(const std::string& model, const std::string& instance);

  std::vector<std::unique_ptr<Breaker>> breakers_;
  std::map<std::string, std::unique_ptr<BreakerConfig>> configs_;  // resolved overrides
  std::vector<std::string> names_;
  // A fleet has many instances of few models: each model's name once.
  std::vector<std::string> models_;
  std::vector<std::uint32_t> modelOf_;  // by instance: its model in models_
  std::unordered_map<std::string, std::uint32_t, NameHash, std::equal_to<>> modelIndex_;
  std::unordered_map<std::string, InstanceId, NameHash, std::equal_to<>> index_;
};

}  // namespace spillway
