#pragma once
// Service restoration (docs/kpis.md): after a fault's onset has taken the group's callers'
// availability (rolling over one breaker window counted from the onset) below its level in the
// minute before the onset, it is back within 5 points of that level and stays there a minute. One
// rule for the simulator's report and the live drill's callers, over per-row counts (a row is one
// tick): each caller turns the returned row into its own duration. Pure, no Qt, no clock.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace spillway::sim {

// How far below its level before the onset the availability may stay and count as restored.
inline constexpr double kRestorationMargin = 0.05;

// available ÷ finished over the `rowsPerMinute` rows before `onset` (fewer at the start of the
// columns), or nullopt when none of them has a finished call.
std::optional<double> availabilityBefore(std::span<const std::uint64_t> finished,
                                         std::span<const std::uint64_t> available,
                                         std::size_t onset, std::size_t rowsPerMinute);

// The first row of the good minute after the service left its level, or nullopt. A row is
// good when the last `rowsPerWindow` rows up to it (only rows from the onset on, so fewer at
// first) have finished calls and an availability ≥ the level before the onset −
// kRestorationMargin; the service left it at the first row in [onset, spanEnd) whose window
// has calls below that, or has had no call for a whole window. The good minute is a run of
// good rows from row r through r + rowsPerMinute, r after that row — or from the onset on when
// the service never left it within the span (the fault did not reach it). nullopt without a
// level before the onset (availabilityBefore), or when the columns end first. `left`, when
// given, says whether the service left the band within the span. Rows per minute
// and per window below 1 count as 1; the columns are read up to the shorter one.
std::optional<std::size_t> serviceRestoredSince(std::span<const std::uint64_t> finished,
                                                std::span<const std::uint64_t> available,
                                                std::size_t onset, std::size_t rowsPerMinute,
                                                std::size_t rowsPerWindow, std::size_t spanEnd,
                                                bool* left = nullptr);

}  // namespace spillway::sim
