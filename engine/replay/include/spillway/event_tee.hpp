#pragma once
#include <cstdint>
#include <vector>

#include "spillway/events.hpp"

namespace spillway {

// Keeps every event in `keep` and passes it on to `next` (when set): a replay's own record of
// its events beside its caller's sink. With `stamps`, also the value of `*step` at each event
// (a scheduled replay's step, so two replays' events can be merged in order).
class EventTee final : public EventSink {
 public:
  EventTee(std::vector<Event>& keep, EventSink* next, std::vector<std::uint32_t>* stamps = nullptr,
           const std::size_t* step = nullptr)
      : keep_(keep), next_(next), stamps_(stamps), step_(step) {}
  void onEvent(const Event& e) override {
    keep_.push_back(e);
    if (stamps_) stamps_->push_back(static_cast<std::uint32_t>(*step_));
    if (next_) next_->onEvent(e);
  }

 private:
  std::vector<Event>& keep_;
  EventSink* next_;
  std::vector<std::uint32_t>* stamps_;
  const std::size_t* step_;
};

}  // namespace spillway
