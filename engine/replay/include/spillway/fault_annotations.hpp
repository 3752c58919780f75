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

// What an instance's health endpoint answered, recorded beside the calls by a prober or read
// from a gateway's check log: JSON Lines {"ts": <epoch ms | RFC 3339>, "instance": "...",
// "healthy": true|false}, one answer (or one change) per line. A dialect replay hands them to
// targets that check out of band (DialectCluster::recordHealth).
struct HealthObservation {
  std::string instance;
  Micros at = 0;
  bool healthy = true;
};
std::vector<HealthObservation> parseHealthObservations(std::string_view text,
                                                       const std::string& source);

}  // namespace spillway
