// The policy's `models` (capability profiles), `degrade` and `limits` sections: reading them
// (with file:line errors) and writing them back.
#include "spillway/policy_sections_yaml.hpp"

#include "spillway/policy_yaml.hpp"

#include <algorithm>
#include <cmath>

namespace spillway {
namespace {

std::uint32_t tokenCount(const YamlReader& r, const YAML::Node& n, const std::string& key) {
  // Context windows are written as 8192, 32k or 128k.
  std::string s = r.scalar(n, key);
  double mult = 1;
  if (!s.empty() && (s.back() == 'k' || s.back() == 'K')) {
    mult = 1024;
    s.pop_back();
  }
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used != s.size() || !std::isfinite(v) || v < 0 || v * mult > 1e9)
      throw std::invalid_argument(s);
    return static_cast<std::uint32_t>(v * mult);
  } catch (const std::exception&) {
    r.fail(n.Mark(), key,
           "expected a token count like 8192 or 32k, got '" + r.scalar(n, key) + "'");
  }
}

std::vector<std::string> words(const YamlReader& r, const YAML::Node& n, const std::string& key) {
  if (!n.IsSequence()) r.fail(n.Mark(), key, "expected a list");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string p = key + "[" + std::to_string(i) + "]";
    const std::string w = r.scalar(n[i], p);
    if (w.empty()) r.fail(n[i].Mark(), p, "must not be empty");
    if (std::find(out.begin(), out.end(), w) != out.end())
      r.fail(n[i].Mark(), p, "listed twice: '" + w + "'");
    out.push_back(w);
  }
  return out;
}

LimitRule limitRule(const YamlReader& r, const YAML::Node& n, const std::string& path) {
  r.requireMap(n, path);
  r.checkKeys(n, path,
              {"rate", "burst", "max_concurrent", "tokens_per_second", "token_burst",
               "max_tokens_in_flight"});
  LimitRule rule;
  rule.line = n.Mark().is_null() ? 0 : n.Mark().line + 1;
  auto join = [&](const char* k) { return path + "." + k; };
  if (auto v = n["rate"]) rule.rate = r.number(v, join("rate"), 0, 1e9, true);
  if (auto v = n["burst"]) rule.burst = r.number(v, join("burst"), 1, 1e9, false);
  if (auto v = n["max_concurrent"])
    rule.maxConcurrent = r.count(v, join("max_concurrent"), 1, 100000000);
  if (auto v = n["tokens_per_second"])
    rule.tokensPerSecond = r.number(v, join("tokens_per_second"), 0, 1e12, true);
  if (auto v = n["token_burst"]) rule.tokenBurst = r.number(v, join("token_burst"), 1, 1e12, false);
  if (auto v = n["max_tokens_in_flight"])
    rule.maxTokensInFlight = r.number(v, join("max_tokens_in_flight"), 1, 1e12, false);
  if (rule.burst > 0 && rule.rate == 0)
    r.fail(r.keyMark(n, "burst"), join("burst"), "a burst needs a rate");
  if (rule.tokenBurst > 0 && rule.tokensPerSecond == 0)
    r.fail(r.keyMark(n, "token_burst"), join("token_burst"),
           "a token_burst needs tokens_per_second");
  if (rule.rate == 0 && rule.maxConcurrent == 0 && rule.tokensPerSecond == 0 &&
      rule.maxTokensInFlight == 0)
    r.fail(n.Mark(), path,
           "sets no limit (give rate, max_concurrent, tokens_per_second or max_tokens_in_flight)");
  return rule;
}

void ruleMap(const YamlReader& r, const YAML::Node& n, const std::string& path,
             std::map<std::string, LimitRule>& out) {
  r.requireMap(n, path);
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string name = r.keyOf(it->first, path);
    if (out.count(name)) r.fail(it->first.Mark(), path + "." + name, "duplicate key");
    out[name] = limitRule(r, it->second, path + "." + name);
  }
}

}  // namespace

void readModelProfiles(const YamlReader& r, const YAML::Node& n,
                       std::map<std::string, ModelProfile>& out) {
  r.requireMap(n, "models");
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string name = r.keyOf(it->first, "models");
    const std::string path = "models." + name;
    if (out.count(name)) r.fail(it->first.Mark(), path, "duplicate key");
    const YAML::Node m = it->second;
    r.requireMap(m, path);
    r.checkKeys(m, path, {"tier", "quality", "context", "tags", "cost", "timeout"});
    ModelProfile p;
    p.line = it->first.Mark().line + 1;
    if (auto v = m["tier"]) p.tier = static_cast<int>(r.count(v, path + ".tier", 1, 4));
    if (auto v = m["quality"]) p.quality = r.number(v, path + ".quality", 0, 1, false);
    if (auto v = m["context"]) p.context = tokenCount(r, v, path + ".context");
    if (auto v = m["tags"]) p.tags = words(r, v, path + ".tags");
    if (auto v = m["cost"]) p.cost = r.number(v, path + ".cost", 0, 1e9, false);
    if (auto v = m["timeout"]) p.timeout = r.duration(v, path + ".timeout", 1, false, true);
    out[name] = std::move(p);
  }
}

void readDegrade(const YamlReader& r, const YAML::Node& n,
                 const std::map<std::string, ModelProfile>& models, DegradeConfig& d) {
  r.requireMap(n, "degrade");
  r.checkKeys(n, "degrade",
              {"max_quality_drop", "context_overflow", "chains", "cache", "non_critical_backups",
               "fast_fail_non_critical", "static_answer", "lock", "retry_budget",
               "prefer_cheaper_for", "simple_max_tokens", "truncate_tail"});
  d.enabled = true;
  if (auto v = n["max_quality_drop"])
    d.maxQualityDrop = r.number(v, "degrade.max_quality_drop", 0, 1, false);
  if (auto v = n["context_overflow"])
    d.contextOverflow = r.choice<ContextOverflow>(
        v, "degrade.context_overflow",
        {{"trim", ContextOverflow::Trim}, {"skip", ContextOverflow::Skip}});
  if (auto c = n["chains"]) {
    r.requireMap(c, "degrade.chains");
    for (auto it = c.begin(); it != c.end(); ++it) {
      const std::string primary = r.keyOf(it->first, "degrade.chains");
      const std::string path = "degrade.chains." + primary;
      if (d.chains.count(primary)) r.fail(it->first.Mark(), path, "duplicate key");
      std::vector<std::string> chain = words(r, it->second, path);
      for (std::size_t i = 0; i < chain.size(); ++i) {
        if (chain[i] == primary)
          r.fail(it->second[i].Mark(), path + "[" + std::to_string(i) + "]",
                 "a model cannot back itself up");
        if (!models.count(chain[i]))
          r.fail(it->second[i].Mark(), path + "[" + std::to_string(i) + "]",
                 "no profile for '" + chain[i] + "' under `models` (a backup needs one)");
      }
      d.chains[primary] = std::move(chain);
    }
  }
  if (auto c = n["cache"]) {
    r.requireMap(c, "degrade.cache");
    r.checkKeys(c, "degrade.cache", {"enabled", "max_age"});
    d.cache = c["enabled"] ? r.boolean(c["enabled"], "degrade.cache.enabled") : true;
    if (auto v = c["max_age"])
      d.cacheMaxAge = r.duration(v, "degrade.cache.max_age", 1, false, true);
  }
  if (auto v = n["non_critical_backups"])
    d.nonCriticalBackups = r.boolean(v, "degrade.non_critical_backups");
  if (auto v = n["fast_fail_non_critical"])
    d.fastFailNonCritical = r.boolean(v, "degrade.fast_fail_non_critical");
  if (auto v = n["static_answer"]) d.staticAnswer = r.boolean(v, "degrade.static_answer");
  if (auto l = n["lock"]) {
    r.requireMap(l, "degrade.lock");
    r.checkKeys(l, "degrade.lock", {"enabled", "ttl"});
    d.lock = l["enabled"] ? r.boolean(l["enabled"], "degrade.lock.enabled") : true;
    if (auto v = l["ttl"]) d.lockTtl = r.duration(v, "degrade.lock.ttl", 1, false, true);
  }
  if (auto v = n["retry_budget"]) d.retryBudget = r.number(v, "degrade.retry_budget", 0, 1, false);
  if (auto v = n["prefer_cheaper_for"]) {
    const std::string key = "degrade.prefer_cheaper_for";
    const std::vector<std::string> kinds =
        v.IsSequence() ? words(r, v, key) : std::vector{r.scalar(v, key)};
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      const YAML::Node& at = v.IsSequence() ? v[i] : v;
      if (kinds[i] == "non_core")
        d.cheaperForNonCore = true;
      else if (kinds[i] == "simple")
        d.cheaperForSimple = true;
      else
        r.fail(at.Mark(), key, "expected non_core or simple, got '" + kinds[i] + "'");
    }
  }
  if (auto v = n["simple_max_tokens"])
    d.simpleMaxTokens = r.count(v, "degrade.simple_max_tokens", 1, 10000000);
  if (auto v = n["truncate_tail"]) d.truncateTail = r.boolean(v, "degrade.truncate_tail");
}

void readLimits(const YamlReader& r, const YAML::Node& n, LimitsConfig& l) {
  r.requireMap(n, "limits");
  r.checkKeys(n, "limits", {"tenants", "default_tenant", "routes", "models", "shed", "adaptive"});
  if (auto v = n["tenants"]) ruleMap(r, v, "limits.tenants", l.tenants);
  if (auto v = n["default_tenant"]) l.defaultTenant = limitRule(r, v, "limits.default_tenant");
  if (auto v = n["routes"]) ruleMap(r, v, "limits.routes", l.routes);
  if (auto v = n["models"]) ruleMap(r, v, "limits.models", l.models);
  if (auto s = n["shed"]) {
    r.requireMap(s, "limits.shed");
    r.checkKeys(s, "limits.shed", {"at", "critical_at"});
    l.shedAt = r.number(r.need(s, "at", "limits.shed"), "limits.shed.at", 0, 10, true);
    l.shedCriticalAt = std::max(l.shedAt, 1.0);
    if (auto v = s["critical_at"]) {
      l.shedCriticalAt = r.number(v, "limits.shed.critical_at", 0, 10, true);
      if (l.shedCriticalAt < l.shedAt)
        r.fail(v.Mark(), "limits.shed.critical_at", "must not be below limits.shed.at");
    }
  }
  if (auto a = n["adaptive"]) {
    r.requireMap(a, "limits.adaptive");
    r.checkKeys(a, "limits.adaptive", {"from", "min_factor"});
    l.adaptive = true;
    if (auto v = a["from"]) l.adaptiveFrom = r.number(v, "limits.adaptive.from", 0, 1, false, true);
    if (auto v = a["min_factor"])
      l.adaptiveMin = r.number(v, "limits.adaptive.min_factor", 0, 1, true);
  }
}

void readSlaClasses(const YamlReader& r, const YAML::Node& n,
                    const std::map<std::string, ModelProfile>& models,
                    std::map<std::string, SlaClass>& out) {
  r.requireMap(n, "sla_classes");
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string name = r.keyOf(it->first, "sla_classes");
    const std::string path = "sla_classes." + name;
    if (out.count(name)) r.fail(it->first.Mark(), path, "duplicate key");
    const YAML::Node c = it->second;
    r.requireMap(c, path);
    r.checkKeys(c, path, {"availability", "latency", "max_quality_drop", "degrade_to"});
    SlaClass k;
    k.line = it->first.Mark().line + 1;
    k.availability =
        r.number(r.need(c, "availability", path), path + ".availability", 0, 1, true, false);
    k.latency = r.duration(r.need(c, "latency", path), path + ".latency", 1, false, true);
    if (auto v = c["max_quality_drop"])
      k.maxQualityDrop = r.number(v, path + ".max_quality_drop", 0, 1, false);
    if (auto v = c["degrade_to"]) {
      k.degradeTo = words(r, v, path + ".degrade_to");
      for (std::size_t i = 0; i < k.degradeTo.size(); ++i)
        if (k.degradeTo[i] != kSlaCache && !models.count(k.degradeTo[i]))
          r.fail(v[i].Mark(), path + ".degrade_to[" + std::to_string(i) + "]",
                 "expected cache or a model with a profile under `models`, got '" + k.degradeTo[i] +
                     "'");
    }
    out[name] = std::move(k);
  }
}

void emitPolicySections(YAML::Emitter& e, const Policy& p) {
  auto dur = [](Micros d) { return formatDuration(d); };
  if (!p.models.empty()) {
    e << YAML::Key << "models" << YAML::Value << YAML::BeginMap;
    for (const auto& [name, m] : p.models) {
      e << YAML::Key << name << YAML::Value << YAML::BeginMap;
      e << YAML::Key << "tier" << YAML::Value << m.tier;
      e << YAML::Key << "quality" << YAML::Value << yamlNumber(m.quality);
      e << YAML::Key << "context" << YAML::Value << m.context;
      e << YAML::Key << "tags" << YAML::Value << YAML::Flow << m.tags;
      e << YAML::Key << "cost" << YAML::Value << yamlNumber(m.cost);
      if (m.timeout > 0) e << YAML::Key << "timeout" << YAML::Value << dur(m.timeout);
      e << YAML::EndMap;
    }
    e << YAML::EndMap;
  }
  if (p.degrade.enabled) {
    const DegradeConfig& d = p.degrade;
    e << YAML::Key << "degrade" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "max_quality_drop" << YAML::Value << yamlNumber(d.maxQualityDrop);
    e << YAML::Key << "context_overflow" << YAML::Value
      << (d.contextOverflow == ContextOverflow::Trim ? "trim" : "skip");
    if (!d.chains.empty()) {
      e << YAML::Key << "chains" << YAML::Value << YAML::BeginMap;
      for (const auto& [k, v] : d.chains) e << YAML::Key << k << YAML::Value << YAML::Flow << v;
      e << YAML::EndMap;
    }
    e << YAML::Key << "cache" << YAML::Value << YAML::BeginMap << YAML::Key << "enabled"
      << YAML::Value << d.cache << YAML::Key << "max_age" << YAML::Value << dur(d.cacheMaxAge)
      << YAML::EndMap;
    e << YAML::Key << "non_critical_backups" << YAML::Value << d.nonCriticalBackups;
    e << YAML::Key << "fast_fail_non_critical" << YAML::Value << d.fastFailNonCritical;
    e << YAML::Key << "static_answer" << YAML::Value << d.staticAnswer;
    e << YAML::Key << "lock" << YAML::Value << YAML::BeginMap << YAML::Key << "enabled"
      << YAML::Value << d.lock << YAML::Key << "ttl" << YAML::Value << dur(d.lockTtl)
      << YAML::EndMap;
    e << YAML::Key << "retry_budget" << YAML::Value << yamlNumber(d.retryBudget);
    if (d.cheaperForNonCore || d.cheaperForSimple) {
      std::vector<std::string> kinds;
      if (d.cheaperForNonCore) kinds.emplace_back("non_core");
      if (d.cheaperForSimple) kinds.emplace_back("simple");
      e << YAML::Key << "prefer_cheaper_for" << YAML::Value << YAML::Flow << kinds;
      e << YAML::Key << "simple_max_tokens" << YAML::Value << d.simpleMaxTokens;
    }
    if (d.truncateTail) e << YAML::Key << "truncate_tail" << YAML::Value << true;
    e << YAML::EndMap;
  }
  if (!p.slaClasses.empty()) {
    e << YAML::Key << "sla_classes" << YAML::Value << YAML::BeginMap;
    for (const auto& [name, k] : p.slaClasses) {
      e << YAML::Key << name << YAML::Value << YAML::BeginMap;
      e << YAML::Key << "availability" << YAML::Value << yamlNumber(k.availability);
      e << YAML::Key << "latency" << YAML::Value << dur(k.latency);
      if (k.maxQualityDrop >= 0)
        e << YAML::Key << "max_quality_drop" << YAML::Value << yamlNumber(k.maxQualityDrop);
      if (!k.degradeTo.empty())
        e << YAML::Key << "degrade_to" << YAML::Value << YAML::Flow << k.degradeTo;
      e << YAML::EndMap;
    }
    e << YAML::EndMap;
  }
  const LimitsConfig& l = p.limits;
  if (l.any() || l.adaptive) {
    auto rule = [&](const LimitRule& r) {
      e << YAML::BeginMap;
      if (r.rate > 0) e << YAML::Key << "rate" << YAML::Value << yamlNumber(r.rate);
      if (r.burst > 0) e << YAML::Key << "burst" << YAML::Value << yamlNumber(r.burst);
      if (r.maxConcurrent) e << YAML::Key << "max_concurrent" << YAML::Value << r.maxConcurrent;
      if (r.tokensPerSecond > 0)
        e << YAML::Key << "tokens_per_second" << YAML::Value << yamlNumber(r.tokensPerSecond);
      if (r.tokenBurst > 0)
        e << YAML::Key << "token_burst" << YAML::Value << yamlNumber(r.tokenBurst);
      if (r.maxTokensInFlight > 0)
        e << YAML::Key << "max_tokens_in_flight" << YAML::Value << yamlNumber(r.maxTokensInFlight);
      e << YAML::EndMap;
    };
    auto rules = [&](const char* key, const std::map<std::string, LimitRule>& m) {
      if (m.empty()) return;
      e << YAML::Key << key << YAML::Value << YAML::BeginMap;
      for (const auto& [k, r] : m) {
        e << YAML::Key << k << YAML::Value;
        rule(r);
      }
      e << YAML::EndMap;
    };
    e << YAML::Key << "limits" << YAML::Value << YAML::BeginMap;
    rules("tenants", l.tenants);
    if (l.defaultTenant) {
      e << YAML::Key << "default_tenant" << YAML::Value;
      rule(*l.defaultTenant);
    }
    rules("routes", l.routes);
    rules("models", l.models);
    if (l.shedAt > 0)
      e << YAML::Key << "shed" << YAML::Value << YAML::BeginMap << YAML::Key << "at" << YAML::Value
        << yamlNumber(l.shedAt) << YAML::Key << "critical_at" << YAML::Value
        << yamlNumber(l.shedCriticalAt) << YAML::EndMap;
    if (l.adaptive)
      e << YAML::Key << "adaptive" << YAML::Value << YAML::BeginMap << YAML::Key << "from"
        << YAML::Value << yamlNumber(l.adaptiveFrom) << YAML::Key << "min_factor" << YAML::Value
        << yamlNumber(l.adaptiveMin) << YAML::EndMap;
    e << YAML::EndMap;
  }
}

}  // namespace spillway
