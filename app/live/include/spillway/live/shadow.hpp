#pragma once
// Shadow mode over live access-log lines: each line becomes call records (the importers of
// engine/formats: nginx, Envoy, canonical JSONL), the records go through the engine with every
// breaker in METRICS_ONLY, and each "would open" comes back as a ready-to-print verdict. Time
// is the log's own (the calls' end times), so the same lines give the same verdicts. No
// widgets, no clock.
//
// Instance names come from the network (a span's server.address, a log's upstream, a Prometheus
// label), so the set of tracked instances is bounded: at most `maxInstances` at once, each an
// engine of its own that is freed when the instance has been idle for `idleHorizon` of data
// time (`listen`); or, with `sharedEngine` (the console's Live mode), one engine for all of
// them and a hard cap, since a shared engine cannot drop an instance. What is over the bound is
// rejected and counted, never an unbounded map.
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "spillway/engine.hpp"
#include "spillway/formats/source.hpp"

namespace spillway::live {

struct ShadowOptions {
  formats::Format format = formats::Format::Nginx;
  formats::FieldMap map;  // field-map overrides (docs/formats.md)
  std::uint64_t seed = 1;
  // Upstream address → instance name ("127.0.0.1:18002" → "chat-32b-3").
  std::map<std::string, std::string, std::less<>> aliases;
  std::string sourceName = "log";  // names the file in error messages
  // At most this many instances are tracked at once (~5 KiB each). Over the bound, a new
  // instance's calls and samples are rejected (counted) unless an idle one can be evicted.
  // 0: no bound — only for trusted input (tests, a file read once), never for a network source.
  std::size_t maxInstances = 1024;
  // Longest instance or model name kept (bytes). A name is a map key, an engine's label and a
  // line of every summary: its length is bounded too, not only the count. Longer: refused and
  // counted, as over maxInstances.
  std::size_t maxNameBytes = 256;
  // The wall clock (µs since the epoch) of a source that reads the network, or none. With it,
  // a call or sample ending more than `maxAhead` after it is refused and counted: data time
  // moves to the newest end seen, so one span dated an hour ahead would leave every instance
  // "idle" for an hour and evict them all. The monitor itself never reads a clock.
  std::function<Micros()> wallClock;
  Micros maxAhead = seconds(300);
  // An instance without data for this long (data time: the newest call or sample seen by any
  // instance) is evicted, its breaker state dropped. 0: never evicted.
  Micros idleHorizon = seconds(600);
  // One engine for every instance (engine(); the console's Live mode, whose timeline reads it by
  // dense ids) instead of one engine each. An engine cannot drop an instance, so nothing is
  // evicted (idleHorizon does not apply) and maxInstances is a hard cap: once that many names
  // are tracked, every call or sample of a new name is rejected and counted, for as long as the
  // monitor lives, while the instances already tracked are served as before.
  bool sharedEngine = false;
  // Whether each breaker's window histogram follows every call (a console that plots every
  // instance every tick) or is built from the window's slices when read (a headless monitor
  // reads it for its table): the same answers, 1–1.4 KB less per instance with traffic.
  bool keepWindowHistograms = true;
};

// The host's clock in µs since the epoch: what a network source passes as `wallClock`.
inline Micros wallClockMicros() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

// Why calls past the count bound are refused too, for a source's refusal message: "its
// instance or model name is over 256 bytes, or they end over 5m after this host's clock".
std::string otherRefusals(const ShadowOptions& opt);

// What the instance bound did (all zero without one).
struct InstanceBoundStats {
  std::size_t tracked = 0;            // instances tracked now
  std::size_t highWater = 0;          // most tracked at once
  std::uint64_t evicted = 0;          // instances dropped after idleHorizon without data
  std::uint64_t callsRejected = 0;    // calls of instances over maxInstances
  std::uint64_t samplesRejected = 0;  // aggregate samples of instances over maxInstances
  // Refusals: a new name met a full table (one per refused call or sample: refused names are
  // not remembered, so a name refused twice counts twice).
  std::uint64_t instancesRejected = 0;
  // Refusals of a name (instance or model) longer than maxNameBytes, one per call or sample.
  std::uint64_t namesTooLong = 0;
  // Refusals of a call or sample ending more than maxAhead after the wall clock.
  std::uint64_t fromTheFuture = 0;
};

struct WouldOpenVerdict {
  Event event;
  std::string instance;
  double errorThreshold = 0, slowThreshold = 0;
  std::string text;  // "12:03:10 chat-32b-1 would open (slow rate 0.62 > 0.40 for 10 s)"
};

// One call as the engine saw it: what a live timeline plots and a recorder stores.
struct RecordedCall {
  InstanceId id = 0;
  const CallRecord* rec = nullptr;  // instance as received (before aliases)
  std::string_view instance;        // the engine's name (after aliases)
  bool failure = false;             // by the policy's classification
  bool slow = false;                // over the breaker's slow threshold when it was recorded
};

struct InstanceSummary {
  std::string instance;
  std::uint64_t calls = 0, failures = 0, slow = 0, wouldOpens = 0;
  double errorRate = 0, slowRate = 0;  // decision window at the end
  double p99Ms = 0;                    // window p99 at the end
  Micros slowThresholdUs = kForever;   // kForever while the baseline is unknown
  Micros firstWouldOpen = kNever;
  double reportedP99Ms = -1;  // the last p99 a metrics source reported (addAggregate); -1: none
};

class ShadowMonitor final : private EventSink {
 public:
  // `policy` is used with breaker.mode forced to metrics_only (overrides too).
  ShadowMonitor(Policy policy, ShadowOptions opt);
  ~ShadowMonitor() override;

  std::function<void(const WouldOpenVerdict&)> onWouldOpen;
  // Observers for the console's live view and the library's recorder: every call after the
  // engine recorded it, and every breaker event (transitions, would-open) as it happens.
  std::function<void(const RecordedCall&)> onRecorded;
  std::function<void(const Event&)> onEngineEvent;
  // Every aggregate sample after the engine recorded it (its engine id, after aliases).
  std::function<void(InstanceId, const formats::AggregateSample&)> onAggregated;

  // Queues one complete line (no newline); flush() parses what is queued. Batching keeps the
  // importers' per-source setup off the per-line path.
  void addLine(std::string_view line);
  void flush();
  // One call from a source that is not a log line: straight to the engine, with the same
  // aliases and the same METRICS_ONLY handling as a parsed line. false: its instance is over
  // maxInstances (counted in bound()).
  bool addCall(const CallRecord& rec) { return process(rec, false); }
  // For a source that acknowledges a call before it reaches the engine (the OTLP receiver):
  // admits the call's instance now — registers it or finds it — and keeps it from eviction
  // until addReservedCall() hands the call on, so an acknowledged call is never refused later.
  // false: over maxInstances (counted; the source answers it as rejected).
  bool reserve(std::string_view instance, std::string_view model, Micros t);
  void addReservedCall(const CallRecord& rec) { process(rec, true); }
  // Counts over a step from a metrics source (Prometheus): Engine::recordAggregate, the path
  // Replayer::feedAggregate takes, with the same aliases and METRICS_ONLY handling. `p99Ms`
  // (< 0: none) is only kept for the summary; aggregates carry no latencies into the engine.
  void addAggregate(const formats::AggregateSample& s, double p99Ms = -1);
  std::uint64_t aggregates() const { return aggregates_; }  // samples added
  const InstanceBoundStats& bound() const { return bound_; }
  const ShadowOptions& options() const { return opt_; }
  // Drops the instances idle for idleHorizon (also done whenever a new instance needs room).
  void evictIdle();

  std::vector<InstanceSummary> summary() const;
  std::uint64_t lines() const { return lines_; }
  std::uint64_t records() const { return records_; }
  std::uint64_t badLines() const { return badLines_; }
  std::uint64_t ignored() const { return ignored_; }                  // lines with no upstream call
  const std::vector<std::string>& errors() const { return errors_; }  // the first 20
  // The first kMaxKeptVerdicts verdicts (every one still reaches onWouldOpen).
  const std::vector<WouldOpenVerdict>& verdicts() const { return verdicts_; }
  static constexpr std::size_t kMaxKeptVerdicts = 1000;
  Micros lastTime() const { return last_; }
  // The one shared engine (ShadowOptions::sharedEngine); its ids are the monitor's ids.
  Engine& engine();

 private:
  struct Tracked;
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  void onEvent(const Event& e) override;
  bool process(const CallRecord& rec, bool reserved);
  std::string_view engineName(std::string_view instance) const;
  // The tracked instance of that (aliased) name, registered if there is room; nullptr when the
  // table is full of instances that are not idle.
  Tracked* track(std::string_view name, std::string_view model, Micros t);
  void touch(Tracked& t, Micros time);
  void evict(Tracked& t);

  ShadowOptions opt_;
  std::shared_ptr<const Policy> policy_;  // METRICS_ONLY; every instance's engine shares it
  std::unique_ptr<Engine> shared_;        // sharedEngine: every instance in one engine
  std::unordered_map<std::string, std::unique_ptr<Tracked>, NameHash, std::equal_to<>> byName_;
  std::vector<Tracked*> byId_;       // id → instance (nullptr: a free id)
  std::vector<InstanceId> freeIds_;  // ids of evicted instances, reused
  std::list<Tracked*> lru_;          // least recently seen first
  InstanceBoundStats bound_;
  std::vector<std::string> pending_;
  std::uint64_t lineBase_ = 0;  // lines before the pending batch
  std::uint64_t lines_ = 0, records_ = 0, badLines_ = 0, ignored_ = 0;
  std::vector<std::string> errors_;
  std::vector<WouldOpenVerdict> verdicts_;
  std::uint64_t aggregates_ = 0;
  Micros last_ = kNever;
};

// "12:03:10" in local time, from µs since the epoch.
std::string clockTime(Micros t);

}  // namespace spillway::live
