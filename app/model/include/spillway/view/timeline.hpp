#pragma once
// What the console draws, built from a run and nothing else — toolkit-neutral (no Qt), so the
// views stay thin and the data is tested without widgets (as Wireshark keeps its I/O-graph
// model under the Qt layer). One RunTimeline per run: per-instance series on one time axis,
// breaker state bands taken from the exact transition times, fault markers (onset, detection,
// restore), per-client series, and the KPI rows with deltas against other runs.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/events.hpp"
#include "spillway/policy.hpp"
#include "spillway/sim/report.hpp"
#include "spillway/sim/seeds.hpp"
#include "spillway/sim/series.hpp"

namespace spillway::view {

// A stretch of time an instance's breaker spent in one state (ramping = CLOSED while traffic
// is still being ramped back).
struct StateBand {
  Micros start = 0, end = 0;
  BreakerState state = BreakerState::Closed;
  bool ramping = false;
  bool operator==(const StateBand&) const = default;
};

// Bands covering [0, end) without gaps or overlaps, from an instance's events in time order.
// `initial` is the state before the first event (CLOSED, or METRICS_ONLY for a baseline).
std::vector<StateBand> bandsFromEvents(const std::vector<Event>& events, InstanceId instance,
                                       BreakerState initial, Micros end);

struct Marker {
  enum class Kind { FaultStart, FaultEnd, Detected, Restored, WouldOpen };
  Micros at = 0;
  Kind kind = Kind::FaultStart;
  std::string label;
  Micros onset = -1;  // Detected, Restored: their fault's onset (TTD and MTTR count from it)
};

struct InstanceTimeline {
  std::string name, model;
  std::vector<double> t;  // seconds, end of each tick
  std::vector<double> errorRate, slowRate, p99Ms, baselineP99Ms;
  std::vector<double> throughput;  // answers per second
  std::vector<double> rejected;    // breaker blocks per second
  std::vector<double> queueFull;   // attempts the instance turned away (queue full) per second
  std::vector<double> overflow;    // attempts the gateway's per-model budget turned away
  std::vector<double> busy, queued;
  // False-positive rate over the last minute: blocked calls that would have succeeded ÷
  // blocked calls judged, both summed over a sliding 60 s; NaN while nothing was blocked.
  std::vector<double> fpRate;
  std::vector<double> blockedJudged, blockedWouldSucceed;  // per tick
  // Replay only (empty for a simulated run): the recording's calls per tick, and of those the
  // failures (by the policy's classification) and the slow ones (over the breaker's threshold
  // when the call was admitted).
  std::vector<double> calls, failures, slow;
  std::vector<StateBand> bands;
  std::vector<Marker> markers;  // in time order
};

struct ClientTimeline {
  std::string name;
  bool core = false;
  std::vector<double> t;
  std::vector<double> availability;  // available ÷ finished in the tick; NaN when none ended
  std::vector<double> p99Ms;
  std::vector<double> originals;  // per second
};

// The slow-call threshold the breaker applied at each tick (ms), as the engine derives it:
// a fixed `absolute`, else max(floor, k × learned P99 baseline), else k × the initial
// baseline; NaN while nothing is called slow yet (baseline still learning).
std::vector<double> slowThresholdMs(const InstanceTimeline& it, const SlowConfig& slow);

// Names as an operator reads them: "chat-2" before "chat-10" (digit runs compare by value).
bool naturalLess(std::string_view a, std::string_view b);

// Instances in display order: grouped by model (models in first-seen order), then by name
// or by health at `t` (worst first: OPEN/FORCED, HALF_OPEN, ramping, then by error+slow rate).
enum class TileOrder { Name, Health, Model };
class RunTimeline;
std::vector<std::size_t> displayOrder(const RunTimeline& tl, TileOrder order, Micros t);

class RunTimeline {
 public:
  // `series` must have been filled by the run (SimOptions::series), `events` are its breaker
  // events in time order, `report` its KPI report.
  static RunTimeline build(const sim::VectorSeries& series, const std::vector<Event>& events,
                           const sim::RunReport& report, Micros tick);

  // A timeline assembled elsewhere (a replay, replay_timeline.hpp): the series must share one
  // time axis; the sliding-minute FP rate is derived here from the blocks per tick.
  // `start`: where the series begin (a live timeline rolls; runs and replays start at 0).
  static RunTimeline fromInstances(std::vector<InstanceTimeline> instances, Micros tick, Micros end,
                                   Micros start = 0);

  const std::vector<InstanceTimeline>& instances() const { return instances_; }
  std::vector<InstanceTimeline>& instances() { return instances_; }
  const std::vector<ClientTimeline>& clients() const { return clients_; }
  Micros start() const { return start_; }
  Micros end() const { return end_; }
  // Index of the last tick at or before `t` (the scrubber's position); 0 before the first.
  std::size_t indexAt(Micros t) const;
  // The band an instance is in at `t`.
  const StateBand* bandAt(std::size_t instance, Micros t) const;

 private:
  std::vector<InstanceTimeline> instances_;
  std::vector<ClientTimeline> clients_;
  Micros tick_ = 0, start_ = 0, end_ = 0;
};

// One KPI row of the panel: the current run's value and its deltas against the baseline and
// the previous run. Values are shares (0…1), seconds or ratios, as `unit` says; n/a = nullopt.
struct KpiRow {
  std::string name;
  std::string unit;  // "share", "s", "x", "ms"
  bool higherIsBetter = true;
  bool perClient = false;  // one client's availability (listed core first after the totals)
  std::optional<double> current, baseline, previous;
  // A bound the row's own definition carries (an SLA class's attainment target): the table
  // says whether the row meets it.
  std::optional<double> target;
  // Over several seeds (withIntervals): mean and 95 % interval, protected and baseline.
  std::optional<sim::SeedInterval> currentInterval, baselineInterval;
  std::optional<double> deltaBaseline() const;
  std::optional<double> deltaPrevious() const;
};

std::vector<KpiRow> kpiRows(const sim::RunReport& current, const sim::RunReport* baseline,
                            const sim::RunReport* previous);

// The same rows' intervals over `runs` (docs/kpis.md: one seed is an anecdote), matched by row
// name; a row no seed defines keeps none.
std::vector<KpiRow> withIntervals(std::vector<KpiRow> rows, const sim::SeedRuns& runs);

}  // namespace spillway::view
