#pragma once
// Dialects: faithful emulations of other gateways' breakers (Resilience4j, Envoy outlier
// detection, Istio, Sentinel, HAProxy, nginx, LiteLLM, opossum, cockatiel), so a recorded call
// stream can be replayed under *the target's* semantics before a policy is exported to it.
//
// Every dialect is a DialectCluster: a set of members (instances) in groups (models). Some
// targets judge each member alone (Resilience4j, Sentinel, opossum, cockatiel, HAProxy); others
// judge a member against its group (Envoy/Istio eject within a cluster, nginx never marks the
// only server of an upstream down, LiteLLM never cools the only deployment of a group), which is
// why the unit of the interface is the cluster. Like the native engine: const config, time is
// an argument (µs), randomness comes from seeded streams, events go to an EventSink with the
// native states (CLOSED / OPEN / HALF_OPEN / FORCED_OPEN / DISABLED / METRICS_ONLY).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "spillway/breaker.hpp"
#include "spillway/events.hpp"
#include "spillway/outcome.hpp"
#include "spillway/rng.hpp"
#include "spillway/time.hpp"

namespace spillway {

enum class DialectKind : std::uint8_t {
  Resilience4j,
  Envoy,
  Istio,
  Sentinel,
  Haproxy,
  Nginx,
  Litellm,
  Opossum,
  Cockatiel
};
inline constexpr int kDialectCount = 9;

// resilience4j | envoy | istio | sentinel | haproxy | nginx | litellm | opossum | cockatiel
std::string_view dialectName(DialectKind k);
std::optional<DialectKind> parseDialectKind(std::string_view s);

enum class Admission : std::uint8_t {
  Admit,   // sent normally
  Probe,   // sent as the target's half-open trial
  Reject,  // blocked (reason says by what)
  Wait,    // cockatiel: held until the running half-open trial decides, then asked again
};

struct DialectDecision {
  Admission kind = Admission::Admit;
  RejectReason reason = RejectReason::None;
  // Dialect-private tag carried from admit to record (e.g. the half-open episode a call was
  // admitted in: cockatiel ignores results of calls from an episode that is over).
  std::uint32_t token = 0;
  bool admitted() const { return kind == Admission::Admit || kind == Admission::Probe; }
};

class DialectCluster {
 public:
  DialectCluster(std::uint64_t seed, EventSink* sink) : seed_(seed), sink_(sink) {}
  virtual ~DialectCluster() = default;
  DialectCluster(const DialectCluster&) = delete;
  DialectCluster& operator=(const DialectCluster&) = delete;

  virtual DialectKind kind() const = 0;

  // Registers a member (idempotent by name). `group` is its model group / upstream / cluster.
  InstanceId addInstance(std::string_view name, std::string_view group = {});
  std::optional<InstanceId> find(std::string_view name) const;

  // Asks whether a call starting at `now` may go to `id`. Timers due by `now` fire first.
  DialectDecision admit(InstanceId id, Micros now);
  // The outcome of an admitted call, known at `end` (pass the admit's decision back).
  void record(InstanceId id, const DialectDecision& d, Micros end, Micros latency, int status,
              Outcome outcome);
  // Lets time pass: fires every timer due by `now` (interval sweeps, health checks, ...),
  // each at its own due time.
  void advance(Micros now);
  // Ground truth for a blocked call (false-positive accounting, as Engine::noteBlocked).
  void noteBlocked(InstanceId id, bool wouldHaveSucceeded);
  // What the member really did at `at` (every recorded call, admitted or not). Only targets that
  // probe out of band use it: HAProxy's active health checks read the latest observation.
  virtual void observe(InstanceId, Micros /*at*/, bool /*good*/) {}
  // What the member's health endpoint answered at `at`, recorded beside the calls (a prober,
  // the gateway's check log): targets that check out of band read this instead of the calls
  // once a member has any. Given before the replay, in any order; members not yet added are
  // matched by name when they are.
  virtual void recordHealth(std::string_view /*instance*/, Micros /*at*/, bool /*healthy*/) {}
  // When the gateway (re)started, for targets whose timers take their phase from it (HAProxy
  // spreads its first health checks from its start). Unknown: the target's timers start with a
  // member's first call.
  virtual void setStartedAt(Micros /*at*/) {}
  // Whether the target itself would count this call as good (not a failure, not slow).
  virtual bool succeeded(int status, Outcome outcome, Micros latency) const;
  // The target's own call timeout (opossum `timeout`): a call that lasts this long or longer
  // fails at start + this.
  virtual Micros callTimeout() const { return kForever; }
  // Whether the target judges an answer when its status line and headers arrive (a gateway's
  // passive health: HAProxy's observe layer7) rather than when the call ends: a replay then
  // records a call with a known ttfb at start + ttfb.
  virtual bool judgesAtHeaders() const { return false; }
  // Closes the time-in-state accounting at `now` (end of a replay).
  void finish(Micros now);

  std::size_t size() const { return names_.size(); }
  const std::string& name(InstanceId id) const { return names_[id]; }
  const std::string& group(InstanceId id) const { return groups_[id]; }
  // Members of `id`'s group registered so far (the target's own view of its upstream).
  std::size_t groupSize(InstanceId id) const;
  BreakerState state(InstanceId id) const { return states_[id]; }
  const BreakerCounters& counters(InstanceId id) const { return counters_[id]; }
  EventSink* sink() const { return sink_; }
  void setSink(EventSink* s) { sink_ = s; }
  std::uint64_t seed() const { return seed_; }

 protected:
  virtual void onAdded(InstanceId id) = 0;
  virtual DialectDecision doAdmit(InstanceId id, Micros now) = 0;
  virtual void doRecord(InstanceId id, const DialectDecision& d, Micros end, Micros latency,
                        int status, Outcome outcome) = 0;
  // Fires timers due by `now`; the default has none.
  virtual void doAdvance(Micros /*now*/) {}

  // State change with the numbers behind it; keeps time-in-state and counters.
  void transition(InstanceId id, BreakerState to, Reason reason, Micros at, Micros openFor = 0,
                  double errorRate = 0, double slowRate = 0, std::uint32_t calls = 0);
  // Full traffic is back (after a close, or a ramp such as HAProxy's slowstart): what
  // scoreFault reads as "restored".
  void rampComplete(InstanceId id, Micros at);
  void wouldOpen(InstanceId id, Reason reason, Micros at, double errorRate, double slowRate,
                 std::uint32_t calls);
  // Per-member stream: depends on the seed and the name only, as the native engine's.
  Rng& rng(InstanceId id) { return rngs_[id]; }
  // Groups as lists of members, for cluster-level targets.
  const std::vector<InstanceId>& members(InstanceId id) const;
  // A member's first appearance: some targets start their clocks there (opossum, HAProxy).
  Micros firstSeen(InstanceId id) const { return firstSeen_[id]; }
  // Sets a member's state without an event (initial modes such as Resilience4j DISABLED).
  void setInitialState(InstanceId id, BreakerState s) { states_[id] = s; }

 private:
  void touch(InstanceId id, Micros now);
  void publish(const Event& e);

  std::uint64_t seed_;
  EventSink* sink_;
  std::vector<std::string> names_, groups_;
  std::unordered_map<std::string, InstanceId> index_;
  std::unordered_map<std::string, std::vector<InstanceId>> groupMembers_;
  std::vector<BreakerState> states_;
  std::vector<Micros> since_, firstSeen_;
  std::vector<BreakerCounters> counters_;
  std::vector<Rng> rngs_;
  Micros now_ = kNever;  // time never runs backwards inside a dialect: earlier = now
};

// Parses `text` (the target's native configuration) and builds the dialect. `source` names the
// file in errors (`file:line: field: what`, InputError). `select` picks one named entry where a
// file holds several (a Resilience4j instance, an Envoy cluster, a Sentinel resource, an
// HAProxy backend, an nginx upstream); empty = the documented default.
std::unique_ptr<DialectCluster> makeDialect(DialectKind kind, std::string_view text,
                                            const std::string& source, std::uint64_t seed,
                                            EventSink* sink = nullptr,
                                            std::string_view select = {});

}  // namespace spillway
