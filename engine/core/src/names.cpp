// String names of enums, as they appear in files (transitions JSONL, reports, policies).
#include "spillway/events.hpp"
#include "spillway/outcome.hpp"

namespace spillway {

std::string_view stateName(BreakerState s) {
  switch (s) {
    case BreakerState::Closed:
      return "CLOSED";
    case BreakerState::Open:
      return "OPEN";
    case BreakerState::HalfOpen:
      return "HALF_OPEN";
    case BreakerState::ForcedOpen:
      return "FORCED_OPEN";
    case BreakerState::Disabled:
      return "DISABLED";
    case BreakerState::MetricsOnly:
      return "METRICS_ONLY";
  }
  return "?";
}

bool parseState(std::string_view s, BreakerState& out) {
  for (int i = 0; i < kStateCount; ++i) {
    if (stateName(static_cast<BreakerState>(i)) == s) {
      out = static_cast<BreakerState>(i);
      return true;
    }
  }
  return false;
}

std::string_view reasonName(Reason r) {
  switch (r) {
    case Reason::ErrorRate:
      return "error_rate";
    case Reason::SlowRate:
      return "slow_rate";
    case Reason::ErrorAndSlow:
      return "error_and_slow_rate";
    case Reason::OpenElapsed:
      return "open_elapsed";
    case Reason::ProbeFailed:
      return "probe_failed";
    case Reason::ProbeStreak:
      return "probe_streak";
    case Reason::RampRelapse:
      return "ramp_relapse";
    case Reason::RampComplete:
      return "ramp_complete";
    case Reason::Manual:
      return "manual";
  }
  return "?";
}

std::string_view eventKindName(EventKind k) {
  switch (k) {
    case EventKind::Transition:
      return "transition";
    case EventKind::RampComplete:
      return "ramp_complete";
    case EventKind::WouldOpen:
      return "would_open";
  }
  return "?";
}

std::string_view rejectReasonName(RejectReason r) {
  switch (r) {
    case RejectReason::None:
      return "none";
    case RejectReason::BreakerOpen:
      return "breaker_open";
    case RejectReason::HalfOpen:
      return "half_open";
    case RejectReason::Ramp:
      return "ramp";
    case RejectReason::ForcedOpen:
      return "forced_open";
  }
  return "?";
}

std::string_view outcomeName(Outcome o) {
  switch (o) {
    case Outcome::Ok:
      return "ok";
    case Outcome::Error:
      return "error";
    case Outcome::Timeout:
      return "timeout";
    case Outcome::Reset:
      return "reset";
  }
  return "?";
}

bool parseOutcome(std::string_view s, Outcome& out) {
  if (s == "ok")
    out = Outcome::Ok;
  else if (s == "error")
    out = Outcome::Error;
  else if (s == "timeout")
    out = Outcome::Timeout;
  else if (s == "reset")
    out = Outcome::Reset;
  else
    return false;
  return true;
}

}  // namespace spillway
