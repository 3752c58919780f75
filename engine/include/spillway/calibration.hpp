#pragma once
// Seed 000's closed loop: when the false-positive rate over a period exceeds the target,
// propose a less sensitive threshold set — and say why.
#include <optional>
#include <string>

#include "spillway/engine.hpp"

namespace spillway {

struct CalibrationProposal {
  Micros at = 0;
  double fpRate = 0;
  std::uint64_t blocked = 0;       // blocked requests with a verdict in the period
  std::uint64_t wouldSucceed = 0;  // of which would have succeeded
  BreakerConfig proposed;
  std::string reason;
};

class Calibrator {
 public:
  explicit Calibrator(const CalibrationConfig& cfg) : cfg_(cfg) {}

  // Call as time passes (e.g. once per simulated second). Returns a proposal at the end of a
  // period whose FP rate is above the target with enough blocked requests to judge.
  std::optional<CalibrationProposal> observe(Micros now, const Engine& engine);

 private:
  CalibrationConfig cfg_;
  Micros periodStart_ = kNever;
  EngineTotals atStart_;
};

}  // namespace spillway
