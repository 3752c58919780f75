#include "spillway/policy_params.hpp"

#include <algorithm>
#include <cmath>

namespace spillway {
namespace {

double sec(Micros d) {
  return static_cast<double>(d) / 1e6;
}
Micros fromSec(double s) {
  return static_cast<Micros>(std::llround(s * 1e6));
}

}  // namespace

const std::vector<BreakerParam>& breakerParams() {
  static const std::vector<BreakerParam> params = {
      {"window.length", "s", 1, 3600},
      {"min_calls", "count", 1, 1e6},
      {"slow.k", "factor", 0.5, 100},
      {"slow.floor", "s", 0, 600},
      {"slow.absolute", "s", 0, 600},
      {"baseline.horizon", "s", 1, 86400},
      {"baseline.min_calls", "count", 1, 1e7},
      {"trip.error_rate", "share", 0.001, 1},
      {"trip.slow_rate", "share", 0.001, 1},
      {"trip.sustain", "s", 0, 3600},
      {"open.duration", "s", 0.001, 86400},
      {"open.backoff_multiplier", "factor", 1, 100},
      {"open.max_duration", "s", 0.001, 86400},
      {"open.jitter", "share", 0, 1},
      {"half_open.probe_share", "share", 0.001, 1},
      {"half_open.success_streak", "count", 1, 1e6},
      {"ramp.duration", "s", 0, 86400},
  };
  return params;
}

const BreakerParam* findBreakerParam(std::string_view key) {
  for (const BreakerParam& p : breakerParams())
    if (p.key == key) return &p;
  return nullptr;
}

std::optional<double> getBreakerParam(const BreakerConfig& b, std::string_view k) {
  if (k == "window.length") return sec(b.window.length);
  if (k == "min_calls") return b.minCalls;
  if (k == "slow.k") return b.slow.k;
  if (k == "slow.floor") return sec(b.slow.floor);
  if (k == "slow.absolute") return sec(b.slow.absolute);
  if (k == "baseline.horizon") return sec(b.baseline.horizon);
  if (k == "baseline.min_calls") return b.baseline.minCalls;
  if (k == "trip.error_rate") return b.trip.errorRate;
  if (k == "trip.slow_rate") return b.trip.slowRate;
  if (k == "trip.sustain") return sec(b.trip.sustain);
  if (k == "open.duration") return sec(b.open.duration);
  if (k == "open.backoff_multiplier") return b.open.backoffMultiplier;
  if (k == "open.max_duration") return sec(b.open.maxDuration);
  if (k == "open.jitter") return b.open.jitter;
  if (k == "half_open.probe_share") return b.halfOpen.probeShare;
  if (k == "half_open.success_streak") return b.halfOpen.successStreak;
  if (k == "ramp.duration") return sec(b.ramp.duration);
  return std::nullopt;
}

bool setBreakerParam(BreakerConfig& b, std::string_view k, double v) {
  const BreakerParam* p = findBreakerParam(k);
  if (!p) return false;
  v = std::clamp(v, p->min, p->max);
  const auto count = [&] { return static_cast<std::uint32_t>(std::llround(v)); };
  if (k == "window.length") {
    b.window.length = fromSec(v);
    b.window.bucket = std::min(b.window.bucket, b.window.length);
  } else if (k == "min_calls") {
    b.minCalls = count();
  } else if (k == "slow.k") {
    b.slow.k = v;
  } else if (k == "slow.floor") {
    b.slow.floor = fromSec(v);
  } else if (k == "slow.absolute") {
    b.slow.absolute = fromSec(v);
  } else if (k == "baseline.horizon") {
    b.baseline.horizon = fromSec(v);
  } else if (k == "baseline.min_calls") {
    b.baseline.minCalls = count();
  } else if (k == "trip.error_rate") {
    b.trip.errorRate = v;
  } else if (k == "trip.slow_rate") {
    b.trip.slowRate = v;
  } else if (k == "trip.sustain") {
    b.trip.sustain = fromSec(v);
  } else if (k == "open.duration") {
    b.open.duration = fromSec(v);
    b.open.maxDuration = std::max(b.open.maxDuration, b.open.duration);
  } else if (k == "open.backoff_multiplier") {
    b.open.backoffMultiplier = v;
  } else if (k == "open.max_duration") {
    b.open.maxDuration = std::max(b.open.duration, fromSec(v));
  } else if (k == "open.jitter") {
    b.open.jitter = v;
  } else if (k == "half_open.probe_share") {
    b.halfOpen.probeShare = v;
  } else if (k == "half_open.success_streak") {
    b.halfOpen.successStreak = count();
  } else if (k == "ramp.duration") {
    b.ramp.duration = fromSec(v);
  }
  return true;
}

}  // namespace spillway
