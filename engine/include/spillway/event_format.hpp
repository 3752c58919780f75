#pragma once
// One event as one JSON object (the transitions JSONL written by replay; docs/telemetry.md).
#include <string>
#include <string_view>

#include "spillway/events.hpp"

namespace spillway {

// ts is epoch milliseconds (fractional when the event is not on a whole millisecond).
std::string formatEventJson(const Event& e, std::string_view instance, std::string_view model);

// Human-readable reason with the numbers, e.g.
// "slow rate 0.62 > 0.40 over 10s window (143 calls), held 3s".
std::string describeEvent(const Event& e, double errorThreshold, double slowThreshold);

}  // namespace spillway
