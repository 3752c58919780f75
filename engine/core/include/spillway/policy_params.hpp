#pragma once
// The breaker's tunable parameters by name ("trip.slow_rate", "open.duration", …, the policy
// file's keys), as plain numbers: durations in seconds, rates as shares. One table serves the
// sweep, the calibrator and the console's editor, so a key means the same everywhere.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/policy.hpp"

namespace spillway {

struct BreakerParam {
  std::string_view key;
  std::string_view unit;  // "s", "share", "count", "factor"
  double min, max;        // the valid range (inclusive)
};

// Every tunable parameter, in the policy file's order.
const std::vector<BreakerParam>& breakerParams();
const BreakerParam* findBreakerParam(std::string_view key);

// Reads / writes one parameter; nullopt / false for an unknown key. set() keeps the config
// consistent (the window's bucket never exceeds its length; max open ≥ open).
std::optional<double> getBreakerParam(const BreakerConfig& b, std::string_view key);
bool setBreakerParam(BreakerConfig& b, std::string_view key, double value);

}  // namespace spillway
