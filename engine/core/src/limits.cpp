#include "spillway/limits.hpp"

#include <algorithm>

namespace spillway {

std::string_view limitReasonName(LimitReason r) {
  switch (r) {
    case LimitReason::None:
      return "none";
    case LimitReason::RateLimited:
      return "rate_limited";
    case LimitReason::TokenLimited:
      return "token_limited";
    case LimitReason::Concurrency:
      return "concurrency_limited";
    case LimitReason::Shed:
      return "overload_shed";
  }
  return "?";
}

Limiter::Limiter(const LimitsConfig& cfg) : cfg_(cfg) {}

std::uint32_t Limiter::id(LimitScope scope, std::string_view name) {
  auto& idx = index_[static_cast<int>(scope)];
  const std::string key(name);
  if (auto it = idx.find(key); it != idx.end()) return it->second;
  State st;
  st.name = key;
  const std::map<std::string, LimitRule>* rules = scope == LimitScope::Tenant  ? &cfg_.tenants
                                                  : scope == LimitScope::Route ? &cfg_.routes
                                                                               : &cfg_.models;
  if (auto r = rules->find(key); r != rules->end()) {
    st.rule = &r->second;
  } else if (scope == LimitScope::Tenant && cfg_.defaultTenant) {
    st.rule = &*cfg_.defaultTenant;  // each unlisted tenant gets its own bucket of this size
  }
  if (st.rule) {
    const LimitRule& r = *st.rule;
    // A bucket must hold at least one request, or a rate under 1/s would never admit.
    st.requests = TokenBucket(r.rate, r.burst > 0 ? r.burst : std::max(1.0, r.rate));
    st.tokens = TokenBucket(r.tokensPerSecond, r.tokenBurst > 0 ? r.tokenBurst : r.tokensPerSecond);
  }
  auto& vec = keys_[static_cast<int>(scope)];
  vec.push_back(std::move(st));
  const auto id = static_cast<std::uint32_t>(vec.size() - 1);
  idx.emplace(key, id);
  return id;
}

const std::string& Limiter::name(LimitScope scope, std::uint32_t id) const {
  return keys_[static_cast<int>(scope)][id].name;
}

// Checks one key without taking anything (so a refusal by a later key leaves earlier buckets
// untouched): concurrency, then request rate, then tokens.
LimitReason Limiter::check(State& st, Micros now, double tokenCost, double rateFactor) {
  if (!st.rule) return LimitReason::None;
  if (st.rule->maxConcurrent && st.inFlight >= st.rule->maxConcurrent)
    return LimitReason::Concurrency;
  // GPU memory by tokens in flight: a request larger than the whole budget still goes alone.
  if (st.rule->maxTokensInFlight > 0 && st.inFlight > 0 &&
      st.tokensInFlight + tokenCost > st.rule->maxTokensInFlight + 1e-9)
    return LimitReason::Concurrency;
  if (st.requests.limited() && st.requests.level(now, rateFactor) + 1e-9 < 1.0)
    return LimitReason::RateLimited;
  if (st.tokens.limited() && st.tokens.level(now, rateFactor) + 1e-9 < tokenCost)
    return LimitReason::TokenLimited;
  return LimitReason::None;
}

LimitDecision Limiter::admit(const LimitKey& k, Micros now, double estTokens, bool critical,
                             double load, double saturation) {
  State* st[kLimitScopes] = {&state(LimitScope::Tenant, k.tenant),
                             &state(LimitScope::Route, k.route),
                             &state(LimitScope::Model, k.model)};
  // Shedding by priority: non-critical traffic goes first, critical only near the ceiling.
  if (cfg_.shedAt > 0 && (load >= cfg_.shedCriticalAt || (!critical && load >= cfg_.shedAt))) {
    ++st[0]->counters.rejectedBy[LimitReason::Shed];
    return {LimitReason::Shed, LimitScope::Tenant, 0};
  }
  // Adaptive limits: as instances saturate, every bucket refills more slowly — the rates
  // shrink by `factor`, bursts stay, so even a one-request bucket keeps admitting.
  double factor = 1.0;
  if (cfg_.adaptive && saturation > cfg_.adaptiveFrom) {
    const double x = std::min(1.0, (saturation - cfg_.adaptiveFrom) / (1.0 - cfg_.adaptiveFrom));
    factor = 1.0 - x * (1.0 - cfg_.adaptiveMin);
  }
  for (int s = 0; s < kLimitScopes; ++s) {
    const LimitReason r = check(*st[s], now, estTokens, factor);
    if (r != LimitReason::None) {
      ++st[0]->counters.rejectedBy[r];
      return {r, static_cast<LimitScope>(s), 0};
    }
  }
  for (State* x : st) {
    if (!x->rule) continue;
    x->requests.tryTake(now, 1.0, factor);
    x->tokens.tryTake(now, estTokens, factor);
    ++x->inFlight;
    x->tokensInFlight += estTokens;
  }
  ++st[0]->counters.admitted;
  LimitDecision ok;
  ok.tokensTaken = estTokens;
  return ok;
}

void Limiter::complete(const LimitKey& k, Micros now, double tokensTaken, double actualTokens) {
  State* st[kLimitScopes] = {&state(LimitScope::Tenant, k.tenant),
                             &state(LimitScope::Route, k.route),
                             &state(LimitScope::Model, k.model)};
  for (State* x : st) {
    if (!x->rule) continue;
    if (x->inFlight) --x->inFlight;
    x->tokensInFlight = x->inFlight ? std::max(0.0, x->tokensInFlight - tokensTaken) : 0.0;
    // Settle the estimate: give back what was not used, take what was used beyond it.
    x->tokens.adjust(now, tokensTaken - actualTokens);
  }
  st[0]->counters.tokens += actualTokens;
}

}  // namespace spillway
