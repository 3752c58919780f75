#pragma once
// What the engine tells the world: every transition (and the shadow "would open") is an event
// with the numbers that caused it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/enum_array.hpp"
#include "spillway/time.hpp"

namespace spillway {

using InstanceId = std::uint32_t;

enum class BreakerState : std::uint8_t {
  Closed,
  Open,
  HalfOpen,
  ForcedOpen,
  Disabled,
  MetricsOnly
};
inline constexpr int kStateCount = 6;

enum class Reason : std::uint8_t {
  ErrorRate,     // error rate above threshold, sustained
  SlowRate,      // slow-call rate above threshold, sustained
  ErrorAndSlow,  // both
  OpenElapsed,   // open duration over: probing starts
  ProbeFailed,   // a half-open probe failed or was slow
  ProbeStreak,   // success_streak good probes: close and ramp
  RampRelapse,   // thresholds exceeded while ramping back
  RampComplete,  // admitted share back to 100 %
  Manual,        // forced by an operator / the policy mode
};

enum class EventKind : std::uint8_t { Transition, RampComplete, WouldOpen };

enum class RejectReason : std::uint8_t { None, BreakerOpen, HalfOpen, Ramp, ForcedOpen };
inline constexpr std::size_t kRejectReasonCount = 5;
using RejectCounts = EnumArray<RejectReason, kRejectReasonCount>;

// What tripped a breaker: its error rate or its slow-call rate (both over: the error rate).
enum class TripCause : std::uint8_t { ErrorRate, SlowRate };
using TripCounts = EnumArray<TripCause, 2>;

struct Event {
  Micros ts = 0;
  InstanceId instance = 0;
  EventKind kind = EventKind::Transition;
  BreakerState from = BreakerState::Closed;
  BreakerState to = BreakerState::Closed;
  Reason reason = Reason::Manual;
  double errorRate = 0;  // decision window rates at the moment of the event
  double slowRate = 0;
  std::uint32_t calls = 0;
  Micros openFor = 0;    // for transitions to OPEN: the chosen open duration
  Micros sustained = 0;  // for trips: how long the condition held
};

// A transition event with the rates left at 0 (tests, emulated dialects).
inline Event transitionEvent(Micros ts, InstanceId id, BreakerState from, BreakerState to,
                             Reason reason = Reason::Manual) {
  Event e;
  e.ts = ts;
  e.instance = id;
  e.kind = EventKind::Transition;
  e.from = from;
  e.to = to;
  e.reason = reason;
  return e;
}

std::string_view stateName(BreakerState s);
std::string_view reasonName(Reason r);
std::string_view eventKindName(EventKind k);
std::string_view rejectReasonName(RejectReason r);
bool parseState(std::string_view s, BreakerState& out);

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void onEvent(const Event& e) = 0;
};

// Keeps every event; for tests and small runs.
class VectorSink final : public EventSink {
 public:
  void onEvent(const Event& e) override { events.push_back(e); }
  std::vector<Event> events;
};

}  // namespace spillway
