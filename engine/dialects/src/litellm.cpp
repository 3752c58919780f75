#include "spillway/dialects/litellm.hpp"

#include "spillway/dialects/native_config.hpp"

namespace spillway::dialects {

namespace {
constexpr std::int64_t kDefaultAllowedFails = 3;
constexpr std::uint64_t kSingleDeploymentTrafficFailureThreshold = 1000;
constexpr double kFailureThresholdPercent = 0.5;
constexpr std::uint64_t kFailureThresholdMinimumRequests = 5;

// The status LiteLLM sees: an exception's status code (timeouts are 408).
int litellmStatus(int status, Outcome outcome) {
  if (outcome == Outcome::Timeout) return 408;
  return status;
}
bool isFailure(int status, Outcome outcome) {
  return outcome != Outcome::Ok || status >= 400 || status <= 0;
}
// litellm._should_retry: 408, 409, 429 and >= 500 are retried.
bool shouldRetry(int s) {
  return s == 408 || s == 409 || s == 429 || s >= 500;
}
// _is_cooldown_required: 429, 401, 408, 404 and >= 500; other 4xx are the caller's fault.
bool cooldownEligible(int s) {
  if (s >= 400 && s < 500) return s == 429 || s == 401 || s == 408 || s == 404;
  return s >= 500;
}
// allowed_fails_policy key for an exception status.
const char* policyKey(int s) {
  switch (s) {
    case 400:
      return "BadRequestErrorAllowedFails";
    case 401:
      return "AuthenticationErrorAllowedFails";
    case 404:
      return "NotFoundErrorAllowedFails";
    case 408:
      return "TimeoutErrorAllowedFails";
    case 429:
      return "RateLimitErrorAllowedFails";
    case 502:
      return "BadGatewayErrorAllowedFails";
    case 503:
      return "ServiceUnavailableErrorAllowedFails";
    default:
      return s >= 500 ? "InternalServerErrorAllowedFails" : "";
  }
}
std::int64_t minuteOf(Micros t) {
  const Micros m = seconds(60);
  return t >= 0 ? t / m : -((-t + m - 1) / m);
}
}  // namespace

struct LitellmDialect::Deployment {
  std::int64_t minute = std::numeric_limits<std::int64_t>::min();
  std::uint64_t ok = 0, fails = 0;  // this minute
  std::int64_t v1Fails = 0;         // failed_calls cache value
  Micros v1Expiry = kNever;         // its TTL
  Micros until = kNever;            // cooldown deadline
};

LitellmDialect::LitellmDialect(LitellmConfig cfg, std::uint64_t seed, EventSink* sink)
    : DialectCluster(seed, sink), cfg_(std::move(cfg)) {}
LitellmDialect::~LitellmDialect() = default;

void LitellmDialect::onAdded(InstanceId) {
  m_.emplace_back();
}
Micros LitellmDialect::cooldownUntil(InstanceId id) const {
  return m_[id].until;
}

bool LitellmDialect::succeeded(int status, Outcome outcome, Micros) const {
  return !isFailure(status, outcome);
}

void LitellmDialect::doAdvance(Micros now) {
  for (InstanceId id = 0; id < m_.size(); ++id) {
    Deployment& d = m_[id];
    if (state(id) == BreakerState::Open && d.until <= now) {  // the cooldown TTL expires
      transition(id, BreakerState::Closed, Reason::OpenElapsed, d.until);
      rampComplete(id, d.until);
    }
  }
}

DialectDecision LitellmDialect::doAdmit(InstanceId id, Micros) {
  if (state(id) == BreakerState::Open) return {Admission::Reject, RejectReason::BreakerOpen};
  return {};
}

bool LitellmDialect::shouldCooldown(InstanceId id, Micros now, int s) {
  Deployment& d = m_[id];
  const bool single = groupSize(id) == 1;
  if (!cfg_.legacy()) {
    const std::uint64_t total = d.ok + d.fails;
    const double pct = total ? static_cast<double>(d.fails) / static_cast<double>(total) : 0;
    if (s == 429 && !single) return true;
    if (pct == 1.0 && total >= kSingleDeploymentTrafficFailureThreshold) return true;
    if (pct > kFailureThresholdPercent && total >= kFailureThresholdMinimumRequests && !single)
      return true;
    return !shouldRetry(s);
  }
  // v1: `get_allowed_fails_from_policy(...) or allowed_fails` (a 0 in the policy falls back).
  std::int64_t allowed = cfg_.allowedFails;
  if (auto it = cfg_.allowedFailsPolicy.find(policyKey(s));
      it != cfg_.allowedFailsPolicy.end() && it->second != 0)
    allowed = it->second;
  if (d.v1Expiry != kNever && now >= d.v1Expiry) d.v1Fails = 0;  // TTL over
  const std::int64_t updated = d.v1Fails + 1;
  if (updated > allowed) return true;
  d.v1Fails = updated;
  d.v1Expiry = now + cfg_.cooldownTime;
  return false;
}

void LitellmDialect::doRecord(InstanceId id, const DialectDecision&, Micros end, Micros, int status,
                              Outcome outcome) {
  Deployment& d = m_[id];
  if (const std::int64_t m = minuteOf(end); m != d.minute) {
    d.minute = m;
    d.ok = d.fails = 0;
  }
  if (!isFailure(status, outcome)) {
    ++d.ok;
    return;
  }
  ++d.fails;  // the failure callback counts before the cooldown decision
  if (cfg_.disableCooldowns) return;
  // Connection errors (no status, resets) carry "APIConnectionError": never a cooldown.
  if (outcome == Outcome::Reset || (outcome != Outcome::Timeout && status <= 0)) return;
  const int s = litellmStatus(status, outcome);
  if (!cooldownEligible(s)) return;
  if (!shouldCooldown(id, end, s)) return;
  if (state(id) == BreakerState::Open) return;  // re-cooling keeps the first deadline (#40130)
  d.until = end + cfg_.cooldownTime;
  const std::uint64_t total = d.ok + d.fails;
  transition(id, BreakerState::Open, s == 429 ? Reason::ErrorRate : Reason::ErrorRate, end,
             cfg_.cooldownTime, total ? static_cast<double>(d.fails) / total : 0, 0,
             static_cast<std::uint32_t>(total));
}

// ---- configuration --------------------------------------------------------------------------

LitellmConfig parseLitellmConfig(std::string_view text, const std::string& source) {
  const NativeReader r(source);
  const YAML::Node root = loadNative(text, source);
  if (!root.IsMap()) r.fail(root.Mark(), "", "expected a mapping of keys");
  LitellmConfig c;
  YAML::Node rs = NativeReader::get(root, "router_settings");
  std::string path = "router_settings";
  if (!rs) {
    rs = root;
    path.clear();
  }
  r.checkNative(rs, path,
                {"allowed_fails", "allowed_fails_policy", "cooldown_time", "disable_cooldowns",
                 "num_retries", "retry_policy", "fallbacks", "context_window_fallbacks",
                 "content_policy_fallbacks", "default_fallbacks"},
                {"routing_strategy", "routing_strategy_args", "redis_host", "redis_port",
                 "redis_password", "redis_url", "timeout", "stream_timeout", "model_group_alias",
                 "enable_pre_call_checks", "retry_after", "cache_responses", "max_fallbacks",
                 "enable_tag_filtering", "provider_budget_config", "optional_pre_call_checks",
                 "model_group_retry_policy", "default_max_parallel_requests"},
                &c.ignoredKeys);
  auto k = [&](const char* f) { return NativeReader::join(path, f); };
  if (auto n = NativeReader::get(rs, "allowed_fails")) {
    c.allowedFails = r.whole(n, k("allowed_fails"), 0, 1000000000);
    c.allowedFailsSet = c.allowedFails != kDefaultAllowedFails;
  }
  if (auto n = NativeReader::get(rs, "allowed_fails_policy")) {
    if (!n.IsMap()) r.fail(n.Mark(), k("allowed_fails_policy"), "expected a mapping");
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string key = r.keyOf(it->first, k("allowed_fails_policy"));
      c.allowedFailsPolicy[key] =
          r.whole(it->second, k("allowed_fails_policy") + "." + key, 0, 1000000000);
    }
  }
  if (auto n = NativeReader::get(rs, "cooldown_time"))  // seconds, may be fractional
    c.cooldownTime = static_cast<Micros>(r.num(n, k("cooldown_time"), 0, 1e9) * 1e6);
  if (auto n = NativeReader::get(rs, "disable_cooldowns"))
    c.disableCooldowns = r.boolean(n, k("disable_cooldowns"));
  if (auto n = NativeReader::get(rs, "num_retries"))
    c.numRetries = r.whole(n, k("num_retries"), 0, 1000);
  if (auto n = NativeReader::get(rs, "retry_policy")) {
    if (!n.IsMap()) r.fail(n.Mark(), k("retry_policy"), "expected a mapping");
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string key = r.keyOf(it->first, k("retry_policy"));
      c.retryPolicy[key] = r.whole(it->second, k("retry_policy") + "." + key, 0, 1000);
    }
  }
  for (const char* f :
       {"fallbacks", "context_window_fallbacks", "content_policy_fallbacks", "default_fallbacks"}) {
    const YAML::Node n = NativeReader::get(rs, f);
    if (!n) continue;
    if (!n.IsSequence()) r.fail(n.Mark(), k(f), "expected a list");
    for (const auto& item : n) {
      if (item.IsScalar()) {
        c.fallbacks.push_back(std::string(f) + ": " + item.Scalar());
        continue;
      }
      if (!item.IsMap()) r.fail(item.Mark(), k(f), "expected {group: [backups]}");
      for (auto it = item.begin(); it != item.end(); ++it) {
        std::string line = std::string(f) + ": " + r.keyOf(it->first, k(f)) + " ->";
        const YAML::Node backups = it->second;  // a named copy: the proxy is a temporary
        if (backups.IsSequence())
          for (std::size_t i = 0; i < backups.size(); ++i)
            line += " " + r.scalar(backups[i], k(f) + "[" + std::to_string(i) + "]");
        c.fallbacks.push_back(line);
      }
    }
  }
  return c;
}

}  // namespace spillway::dialects
