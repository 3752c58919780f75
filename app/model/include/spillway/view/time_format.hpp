#pragma once
// How the console, the narrative and the reports write time: one formatter per kind, so a TTD
// reads the same in the KPI table, the narrative, a tooltip and an exported report.
#include <string>

#include "spillway/time.hpp"

namespace spillway::view {

// A length of time for people: "850 ms", "4.2 s", "42 s", "6m 28s", "1h 02m"; negative with a
// "−"-free leading "-". Rounded to what the unit shows. (spillway::formatDuration writes the
// policy files' syntax, "72s", for what must parse back.)
std::string durationText(Micros d);
// A point on a simulated or replayed run's own axis, from its start: "T+00:05:00"
// ("T-00:00:03" before it). Sub-second parts are dropped (floor toward the run's start).
std::string formatOffset(Micros t);
// A wall-clock time of day, "14:05:09", in UTC or the machine's local zone.
std::string formatClock(Micros epochMicros, bool utc);

}  // namespace spillway::view
