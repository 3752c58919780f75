#pragma once
// The incident narrative (issue 23): a run's breaker events and KPI report told as a short,
// time-ordered account an SRE can read and click — "T+00:05:00 latency drift on chat-72b-3 →
// T+00:06:12 tripped, TTD 1m 12s → … → full traffic restored → summary: 误伤 …". Toolkit-neutral
// (no Qt): the console's NarrativePanel lists these lines and `spillway-cli simulate/replay
// --narrative` prints the same text.
//
// Every figure is the report's own (TTD, self-healing, service restoration, 误伤 and its parts,
// opens): a narrative that recomputed a KPI could contradict the KPI table beside it. Only
// which episode is a false trip is decided here, by the engine's own BlockClassifier over the
// same real faults the report judged. Repetitive transitions are clustered (failed probe rounds,
// runs of false trips, would-open marks), so a 40-minute run reads in a few dozen lines.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/dialect_replay.hpp"
#include "spillway/events.hpp"
#include "spillway/sim/report.hpp"
#include "spillway/sim/scenario.hpp"

namespace spillway::view {

enum class NarrativeKind : std::uint8_t {
  FaultStart,       // a real fault begins (what, where, how strong)
  Jitter,           // a benign fault or one shorter than a window: not a real fault
  FaultEnd,         // a real fault ends (by itself or by a hand fix)
  Trip,             // a breaker opened while its instance really failed (a detection)
  FalseTrip,        // opened with no real fault: its would-succeed blocks count toward 误伤
  Probing,          // half-open rounds, failed probes re-opening (clustered)
  Relapse,          // re-opened while ramping traffic back
  Recovered,        // probes passed: closed, ramping traffic back
  Restored,         // ramp complete: full traffic (self-healing ends here)
  ServiceRestored,  // the faulted group's callers' availability back (service restoration)
  WouldOpen,        // a watching breaker would have opened (protection off)
  Other,            // any other transition (forced open, disabled, …)
  Summary,          // the run's headline figures
};
std::string_view narrativeKindName(NarrativeKind k);

inline constexpr std::size_t kNoInstance = std::numeric_limits<std::size_t>::max();

struct NarrativeLine {
  Micros at = 0;            // on the run's own axis (0 = its start), where a click seeks
  Micros from = 0, to = 0;  // the range a click zooms to (contains `at`)
  std::string instance;     // empty for run-wide lines (summary)
  // Index of the instance in the run's timeline / report (the engine's InstanceId), or
  // kNoInstance.
  std::size_t instanceIndex = kNoInstance;
  NarrativeKind kind = NarrativeKind::Other;
  std::string text;         // without the time: the views put it in their own column
  std::uint32_t count = 1;  // engine events (or, for a trip line, episodes) it stands for
};

// A simulated run: its report and breaker events (time order, as SimOptions::events received
// them). `scenario` (optional) names each fault's strength (×12 over 8m, 60 % 503s); `baseline`
// (optional, the same scenario unprotected) gives the would-open count for the summary.
std::vector<NarrativeLine> simulationNarrative(const sim::RunReport& report,
                                               const std::vector<Event>& events,
                                               const sim::Scenario* scenario = nullptr,
                                               const sim::RunReport* baseline = nullptr);

// A replayed incident: its KPIs and events (epoch µs), put on the run's axis by `origin` (epoch
// µs of t = 0, as ReplayView::origin). `baseline` (optional, the watch-only replay) gives the
// would-open count.
std::vector<NarrativeLine> replayNarrative(const ReplayKpis& kpis, const std::vector<Event>& events,
                                           Micros origin, const ReplayKpis* baseline = nullptr);

// How a line's time is written: "T+00:06:12" on a simulated run's axis, or the wall-clock time
// of day of a recording (origin + at).
struct NarrativeClock {
  std::optional<Micros> wallOrigin;  // set: wall clock (epoch µs of t = 0)
  bool utc = true;
};
std::string narrativeTime(const NarrativeLine& line, const NarrativeClock& clock = {});

// The lines as plain text, one per line: "<time>  <text>" (the CLI's --narrative, the panel's
// "Copy as text").
std::string narrativeText(const std::vector<NarrativeLine>& lines,
                          const NarrativeClock& clock = {});

}  // namespace spillway::view
