#pragma once
// Limiters (seed 001): token buckets by tenant, route and model; token-per-second budgets
// estimated at admission and reconciled at completion; max concurrent requests per key;
// overload shedding by priority; adaptive limits that shrink with instance saturation.
// Time is an input. Keys are resolved to small integers once, so a decision is a few array
// reads and no allocation.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "spillway/enum_array.hpp"
#include "spillway/policy.hpp"

namespace spillway {

// A bucket of `burst` tokens refilled at `rate` per second. `rate` 0 = unlimited.
class TokenBucket {
 public:
  TokenBucket() = default;
  TokenBucket(double rate, double burst) : rate_(rate), burst_(burst), level_(burst) {}
  bool limited() const { return rate_ > 0; }
  // Takes `n` tokens if there are that many at `now`. `rateFactor` (adaptive limits) scales
  // the refill since the last call: the bucket fills more slowly while instances saturate.
  bool tryTake(Micros now, double n, double rateFactor = 1.0) {
    if (rate_ <= 0) return true;
    refill(now, rateFactor);
    if (level_ + 1e-9 < n) return false;
    level_ -= n;
    return true;
  }
  // Adds `n` back (or takes more when negative) — reconciling an estimate; never above burst.
  void adjust(Micros now, double n) {
    if (rate_ <= 0) return;
    refill(now, 1.0);
    level_ = std::min(burst_, level_ + n);
  }
  double level(Micros now, double rateFactor = 1.0) {
    refill(now, rateFactor);
    return level_;
  }

 private:
  void refill(Micros now, double rateFactor) {
    if (now > last_) {
      level_ =
          std::min(burst_, level_ + rate_ * rateFactor * static_cast<double>(now - last_) * 1e-6);
      last_ = now;
    }
  }
  double rate_ = 0, burst_ = 0, level_ = 0;
  Micros last_ = 0;
};

enum class LimitReason : std::uint8_t { None, RateLimited, TokenLimited, Concurrency, Shed };
inline constexpr std::size_t kLimitReasonCount = 5;
using LimitCounts = EnumArray<LimitReason, kLimitReasonCount>;
std::string_view limitReasonName(LimitReason r);

enum class LimitScope : std::uint8_t { Tenant, Route, Model };
inline constexpr int kLimitScopes = 3;

struct LimitKey {
  std::uint32_t tenant = 0, route = 0, model = 0;  // ids from Limiter::id()
};

struct LimitDecision {
  LimitReason reason = LimitReason::None;
  LimitScope scope = LimitScope::Tenant;  // which key refused
  double tokensTaken = 0;                 // what admission charged: settle with it in complete()
  explicit operator bool() const { return reason == LimitReason::None; }
};

struct LimitCounters {
  std::uint64_t admitted = 0;
  LimitCounts rejectedBy{};
  double tokens = 0;  // reconciled tokens used
};

class Limiter {
 public:
  explicit Limiter(const LimitsConfig& cfg);

  // Resolves a name to an id for a scope; a tenant without a rule gets the default rule (or
  // none). Ids are stable for the limiter's life.
  std::uint32_t id(LimitScope scope, std::string_view name);
  const std::string& name(LimitScope scope, std::uint32_t id) const;
  std::size_t size(LimitScope scope) const { return keys_[static_cast<int>(scope)].size(); }

  // `load`: share of the gateway's capacity in use (0…1+), for shedding; `saturation`: the
  // instances' busy share (0…1), for adaptive limits; `estTokens`: input + expected output.
  LimitDecision admit(const LimitKey& k, Micros now, double estTokens, bool critical,
                      double load = 0, double saturation = 0);
  // The request ended: release its concurrency and settle what admission charged
  // (`LimitDecision::tokensTaken`) against what it really used.
  void complete(const LimitKey& k, Micros now, double tokensTaken, double actualTokens);

  const LimitCounters& counters(LimitScope scope, std::uint32_t id) const {
    return keys_[static_cast<int>(scope)][id].counters;
  }
  const LimitRule* rule(LimitScope scope, std::uint32_t id) const {
    return keys_[static_cast<int>(scope)][id].rule;
  }
  std::uint32_t inFlight(LimitScope scope, std::uint32_t id) const {
    return keys_[static_cast<int>(scope)][id].inFlight;
  }
  const LimitsConfig& config() const { return cfg_; }

 private:
  struct State {
    std::string name;
    const LimitRule* rule = nullptr;
    TokenBucket requests, tokens;
    std::uint32_t inFlight = 0;
    double tokensInFlight = 0;  // estimates of the admitted requests still in flight
    LimitCounters counters;
  };
  State& state(LimitScope s, std::uint32_t id) { return keys_[static_cast<int>(s)][id]; }
  LimitReason check(State& st, Micros now, double tokenCost, double rateFactor);

  LimitsConfig cfg_;
  std::array<std::vector<State>, kLimitScopes> keys_;
  std::array<std::unordered_map<std::string, std::uint32_t>, kLimitScopes> index_;
};

}  // namespace spillway
