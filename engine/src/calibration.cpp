#include "spillway/calibration.hpp"

#include <algorithm>
#include <cstdio>

namespace spillway {

std::optional<CalibrationProposal> Calibrator::observe(Micros now, const Engine& engine) {
  if (periodStart_ == kNever) {
    periodStart_ = now;
    atStart_ = engine.totals();
    return std::nullopt;
  }
  if (now - periodStart_ < cfg_.period) return std::nullopt;
  const EngineTotals t = engine.totals();
  const std::uint64_t blocked = t.verdicts - atStart_.verdicts;
  const std::uint64_t fp = t.blockedWouldSucceed - atStart_.blockedWouldSucceed;
  const std::uint64_t fpErr = t.fpByTrip[0] - atStart_.fpByTrip[0];
  const std::uint64_t fpSlow = t.fpByTrip[1] - atStart_.fpByTrip[1];
  const Micros start = periodStart_;
  periodStart_ = now;
  atStart_ = t;
  if (blocked < cfg_.minBlocked) return std::nullopt;
  const double rate = static_cast<double>(fp) / static_cast<double>(blocked);
  if (rate <= cfg_.fpTarget) return std::nullopt;

  CalibrationProposal p;
  p.at = now;
  p.fpRate = rate;
  p.blocked = blocked;
  p.wouldSucceed = fp;
  p.proposed = engine.policy().breaker;
  BreakerConfig& b = p.proposed;
  // Relax the rule that caused most of the wrongly blocked requests, and ask it to hold longer.
  char buf[512];
  const Micros oldSustain = b.trip.sustain;
  b.trip.sustain += cfg_.sustainStep;
  const bool slowRule = fpSlow >= fpErr;
  double& threshold = slowRule ? b.trip.slowRate : b.trip.errorRate;
  const double old = threshold;
  threshold = std::min(0.95, old + cfg_.rateStep);
  std::snprintf(buf, sizeof buf,
                "FP rate %.1f%% > target %.1f%% over %s (%llu of %llu blocked would have "
                "succeeded; %llu after %s trips): raise trip.%s %.2f -> %.2f, "
                "trip.sustain %s -> %s",
                rate * 100, cfg_.fpTarget * 100,
                formatDuration((now - start) / kMicrosPerSecond * kMicrosPerSecond).c_str(),
                static_cast<unsigned long long>(fp), static_cast<unsigned long long>(blocked),
                static_cast<unsigned long long>(slowRule ? fpSlow : fpErr),
                slowRule ? "slow-rate" : "error-rate", slowRule ? "slow_rate" : "error_rate", old,
                threshold, formatDuration(oldSustain).c_str(),
                formatDuration(b.trip.sustain).c_str());
  p.reason = buf;
  return p;
}

}  // namespace spillway
