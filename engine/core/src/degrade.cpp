#include "spillway/degrade.hpp"

#include <algorithm>

namespace spillway {

std::string_view lastResortName(LastResort r) {
  switch (r) {
    case LastResort::Cache:
      return "cache";
    case LastResort::FastFail:
      return "fast_fail";
    case LastResort::Static:
      return "static";
    case LastResort::NoBackup:
      return "no_backup";
  }
  return "?";
}

DegradeRouter::DegradeRouter(const Policy& policy, std::vector<std::string> models)
    : cfg_(policy.degrade), names_(std::move(models)), profileStore_(policy.models) {
  const std::size_t n = names_.size();
  profiles_.assign(n, nullptr);
  covers_.assign(n, 0);
  for (ModelId m = 0; m < n; ++m) {
    auto it = profileStore_.find(names_[m]);
    if (it == profileStore_.end()) continue;
    profiles_[m] = &it->second;
    covers_[m] = tagMask(it->second.tags);
  }
  // Candidate order per primary: the policy's explicit chain, else every profiled model by
  // quality (best first), then tier, then name — deterministic.
  std::vector<ModelId> byQuality;
  for (ModelId m = 0; m < n; ++m)
    if (profiles_[m]) byQuality.push_back(m);
  std::stable_sort(byQuality.begin(), byQuality.end(), [&](ModelId a, ModelId b) {
    if (profiles_[a]->quality != profiles_[b]->quality)
      return profiles_[a]->quality > profiles_[b]->quality;
    if (profiles_[a]->tier != profiles_[b]->tier) return profiles_[a]->tier < profiles_[b]->tier;
    return names_[a] < names_[b];
  });
  chains_.resize(n);
  for (ModelId p = 0; p < n; ++p) {
    auto explicitChain = cfg_.chains.find(names_[p]);
    if (explicitChain != cfg_.chains.end()) {
      for (const std::string& b : explicitChain->second)
        for (ModelId m = 0; m < n; ++m)
          if (names_[m] == b && m != p) chains_[p].push_back(m);
    } else {
      for (ModelId m : byQuality)
        if (m != p) chains_[p].push_back(m);
    }
  }
  for (const auto& [name, k] : policy.slaClasses) {
    ClassRoute c{name, k.maxQualityDrop >= 0 ? k.maxQualityDrop : cfg_.maxQualityDrop, {}};
    for (const std::string& step : k.degradeTo) {
      if (step == kSlaCache) c.chain.push_back(RouteStep::kCache);
      for (ModelId m = 0; m < n; ++m)
        if (names_[m] == step) c.chain.push_back(m);
    }
    classes_.push_back(std::move(c));
  }
}

bool DegradeRouter::cacheAllowed(int slaClass) const {
  if (cacheAfterPlan(slaClass)) return true;
  const std::vector<ModelId>& c = classes_[static_cast<std::size_t>(slaClass)].chain;
  return std::find(c.begin(), c.end(), RouteStep::kCache) != c.end();
}

int DegradeRouter::slaClass(std::string_view name) const {
  for (std::size_t i = 0; i < classes_.size(); ++i)
    if (classes_[i].name == name) return static_cast<int>(i);
  return -1;
}

TagMask DegradeRouter::tagMask(const std::vector<std::string>& tags) {
  TagMask mask = 0;
  for (const std::string& t : tags) {
    auto it = tagBits_.find(t);
    if (it == tagBits_.end()) {
      const int bit = static_cast<int>(tagBits_.size());
      it = tagBits_.emplace(t, bit < 64 ? bit : 63).first;
    }
    mask |= TagMask{1} << it->second;
  }
  return mask;
}

void DegradeRouter::plan(ModelId primary, TagMask tags, std::uint32_t context,
                         std::vector<RouteStep>& out, int slaClass) {
  out.clear();
  ++counters_.planned;
  const PlanKey key{primary, tags, slaClass};
  auto it = eligible_.find(key);
  if (it == eligible_.end()) {
    Eligible e;
    const ClassRoute* cls = slaClass >= 0 ? &classes_[static_cast<std::size_t>(slaClass)] : nullptr;
    const ModelProfile* prim = profiles_[primary];
    const double drop = cls ? cls->maxQualityDrop : cfg_.maxQualityDrop;
    // Without a profile for the primary, quality cannot be compared: only tags decide.
    const double floor = prim ? prim->quality - drop : -1.0;
    const std::vector<ModelId>& chain = cls && !cls->chain.empty() ? cls->chain : chains_[primary];
    for (ModelId m : chain) {
      if (m == RouteStep::kCache) {
        e.models.push_back(m);  // checked per request: a hit or not
        continue;
      }
      if (m == primary) continue;
      const ModelProfile* p = profiles_[m];
      if (!p || (covers_[m] & tags) != tags || p->quality < floor - 1e-12) {
        ++e.ineligible;
        continue;
      }
      e.models.push_back(m);
    }
    it = eligible_.emplace(key, std::move(e)).first;
  }
  counters_.ineligible += it->second.ineligible;
  for (ModelId m : it->second.models) {
    if (m == RouteStep::kCache) {
      out.push_back(RouteStep{m, 0});
      continue;
    }
    const ModelProfile* p = profiles_[m];
    RouteStep step{m, 0};
    if (p->context > 0 && context > p->context) {
      if (cfg_.contextOverflow == ContextOverflow::Skip) {
        ++counters_.skippedForContext;
        continue;
      }
      step.trimmedTo = p->context;  // oldest turns dropped first
      ++counters_.trimmed;
    }
    out.push_back(step);
  }
}

LastResort DegradeRouter::lastResort(bool critical, bool cacheHit) const {
  if (cfg_.cache && cacheHit) return LastResort::Cache;
  if (!critical && cfg_.fastFailNonCritical) return LastResort::FastFail;
  if (cfg_.staticAnswer) return LastResort::Static;
  return LastResort::NoBackup;
}

const DegradeLock* DegradeRouter::locked(std::uint64_t session, Micros now) {
  if (!cfg_.lock || locks_.empty()) return nullptr;  // the common case: nothing degraded
  auto it = locks_.find(session);
  if (it == locks_.end()) return nullptr;
  if (now >= it->second.until) {
    locks_.erase(it);
    ++counters_.lockExpired;
    return nullptr;
  }
  ++counters_.lockHits;
  return &it->second;
}

void DegradeRouter::lock(std::uint64_t session, std::int32_t route, Micros now) {
  if (!cfg_.lock) return;
  // A live lock on the same route is not renewed: a session pinned to the cache or the static
  // answer must get back to the primary once the TTL is over, however often it returns.
  if (auto it = locks_.find(session);
      it != locks_.end() && now < it->second.until && it->second.route == route)
    return;
  locks_[session] = DegradeLock{route, now + cfg_.lockTtl};
  ++counters_.locksTaken;
  // Expired locks of sessions that never came back: swept once per TTL, so the table stays
  // bounded by the sessions degraded within one TTL.
  if (now - lastSweep_ >= cfg_.lockTtl) {
    lastSweep_ = now;
    for (auto it = locks_.begin(); it != locks_.end();) {
      if (now >= it->second.until) {
        it = locks_.erase(it);
        ++counters_.lockExpired;
      } else {
        ++it;
      }
    }
  }
}

}  // namespace spillway
