#pragma once
#include <vector>

#include "spillway/events.hpp"

namespace spillway {

// Keeps every event in `keep` and passes it on to `next` (when set): a replay's own record of
// its events beside its caller's sink.
class EventTee final : public EventSink {
 public:
  EventTee(std::vector<Event>& keep, EventSink* next) : keep_(keep), next_(next) {}
  void onEvent(const Event& e) override {
    keep_.push_back(e);
    if (next_) next_->onEvent(e);
  }

 private:
  std::vector<Event>& keep_;
  EventSink* next_;
};

}  // namespace spillway
