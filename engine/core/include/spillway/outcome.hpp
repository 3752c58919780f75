#pragma once
#include <cstdint>
#include <string_view>

#include "spillway/policy.hpp"

namespace spillway {

// How a call ended, as the caller saw it. Status carries the HTTP code (0 = no response).
enum class Outcome : std::uint8_t { Ok, Error, Timeout, Reset };

enum class Verdict : std::uint8_t { Ignored, Success, Failure };

inline Verdict classify(const ClassifyConfig& c, int status, Outcome outcome) {
  // Most calls: an answer below 400, a failure only if the policy lists its status.
  if (outcome == Outcome::Ok && static_cast<unsigned>(status) < 400)
    return c.failureStatus[static_cast<unsigned>(status)] ? Verdict::Failure : Verdict::Success;
  if (outcome == Outcome::Timeout) return c.timeoutIsFailure ? Verdict::Failure : Verdict::Success;
  if (outcome == Outcome::Reset) return c.resetIsFailure ? Verdict::Failure : Verdict::Success;
  if (status < 0 || status > 999) return Verdict::Failure;
  if (c.failureStatus[static_cast<unsigned>(status)]) return Verdict::Failure;
  if (outcome == Outcome::Error) return Verdict::Failure;
  if (status >= 400 && status < 500) {
    switch (c.clientErrors) {
      case ClientErrors::Ignore:
        return Verdict::Ignored;
      case ClientErrors::Success:
        return Verdict::Success;
      case ClientErrors::Failure:
        return Verdict::Failure;
    }
  }
  return Verdict::Success;
}

std::string_view outcomeName(Outcome o);
bool parseOutcome(std::string_view s, Outcome& out);

}  // namespace spillway
