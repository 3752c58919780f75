#pragma once
// Fault annotations: the ground truth a replay scores TTD and MTTR against. JSON Lines, one
// fault per line: {"instance": "...", "start": <epoch ms | RFC 3339>, "end": ..., "kind": "...",
// "benign": true|false}. A benign one (a blip, a burst of long prompts) is not a real fault:
// tripping on it is a false trip (docs/kpis.md).
#include <string>
#include <string_view>
#include <vector>

#include "spillway/dialect_replay.hpp"

namespace spillway {

// Throws InputError naming `source`, the line and the field.
std::vector<NamedFault> parseFaultAnnotations(std::string_view text, const std::string& source);

}  // namespace spillway
