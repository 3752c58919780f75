#pragma once
// One event as one JSON object (the transitions JSONL written by replay; docs/telemetry.md).
#include <functional>
#include <string>
#include <string_view>
#include <utility>

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
// Instance names come from whoever numbers the instances — the engine or a dialect — set once
// it exists (it takes the sink first); events before that are not written.
class JsonlEventWriter final : public EventSink {
 public:
  // The instance's name and model (group) for an event's id.
  using Names = std::function<std::pair<std::string_view, std::string_view>(InstanceId)>;

  explicit JsonlEventWriter(std::FILE* out) : out_(out) {}
  void setEngine(const Engine* e);
  void setNames(Names names) { names_ = std::move(names); }
  void onEvent(const Event& e) override;

 private:
  std::FILE* out_;
  Names names_;
};

}  // namespace spillway
