#pragma once
// One event as one JSON object (the transitions JSONL written by replay; docs/telemetry.md).
#include <string>
#include <string_view>

#include <cstdio>

#include "spillway/engine.hpp"
#include "spillway/events.hpp"

namespace spillway {

// ts is epoch milliseconds (fractional when the event is not on a whole millisecond).
std::string formatEventJson(const Event& e, std::string_view instance, std::string_view model);

// Human-readable reason with the numbers, e.g.
// "slow rate 0.62 > 0.40 over 10s window (143 calls), held 3s".
std::string describeEvent(const Event& e, double errorThreshold, double slowThreshold);

// Streams every event as one JSON line to `out` as it happens, so memory stays bounded.
// Instance names come from the engine, set once it exists (the engine takes the sink first).
class JsonlEventWriter final : public EventSink {
 public:
  explicit JsonlEventWriter(std::FILE* out) : out_(out) {}
  void setEngine(const Engine* e) { engine_ = e; }
  void onEvent(const Event& e) override;

 private:
  std::FILE* out_;
  const Engine* engine_ = nullptr;
};

}  // namespace spillway
