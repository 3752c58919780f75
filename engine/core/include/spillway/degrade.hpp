#pragma once
// The degrade router (seeds 000, 002, 003): when a request's primary model is unavailable,
// which capability-matched backups may answer it, in which order, trimmed or not; what the
// last resort is (cache, fast-fail for non-critical traffic, a static "queued, retry later"
// answer); and the degrade lock that keeps a degraded session — and its retries — off the
// broken primary until the lock expires. Pure decisions: availability of a model is asked of
// the caller (it owns the breakers), time is an input.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "spillway/policy.hpp"

namespace spillway {

using ModelId = std::uint32_t;
using TagMask = std::uint64_t;  // up to 64 distinct capability tags

// One eligible backup for a request.
struct RouteStep {
  static constexpr ModelId kCache = ~ModelId{0};  // an SLA class's `cache` step
  ModelId model = 0;
  std::uint32_t trimmedTo = 0;  // context trimmed to this many tokens; 0 = not trimmed
};

// What the gateway falls back to when no model can answer.
enum class LastResort : std::uint8_t { Cache, FastFail, Static, NoBackup };
std::string_view lastResortName(LastResort r);

// Where a degraded session is locked.
struct DegradeLock {
  static constexpr std::int32_t kCache = -1;
  static constexpr std::int32_t kStatic = -2;
  std::int32_t route = kStatic;  // a ModelId, or kCache / kStatic
  Micros until = 0;
};

struct DegradeCounters {
  std::uint64_t planned = 0, trimmed = 0, skippedForContext = 0, ineligible = 0;
  std::uint64_t lockHits = 0, locksTaken = 0, lockExpired = 0;
};

class DegradeRouter {
 public:
  // `models`: the caller's model names, indexed by ModelId. Models without a profile in the
  // policy can be primaries but are never chosen as backups.
  DegradeRouter(const Policy& policy, std::vector<std::string> models);

  const DegradeConfig& config() const { return cfg_; }
  bool enabled() const { return cfg_.enabled; }
  std::size_t modelCount() const { return names_.size(); }
  const std::string& modelName(ModelId m) const { return names_[m]; }
  const ModelProfile* profile(ModelId m) const { return profiles_[m]; }

  // Tags → mask (unknown tags get a bit too: no model covers them, so no backup qualifies).
  TagMask tagMask(const std::vector<std::string>& tags);

  // Eligible backups for a request on `primary` needing `tags` with `context` tokens, in the
  // order to try them; written into `out` (cleared first). Eligible = covers the tags, quality
  // within the allowed drop, and the context fits (or is trimmed, per policy).
  // `slaClass` (slaClass(name), or -1): its `degrade_to` list replaces the chain, cache
  // steps included (RouteStep::kCache), and its quality drop replaces the policy's.
  void plan(ModelId primary, TagMask tags, std::uint32_t context, std::vector<RouteStep>& out,
            int slaClass = -1);

  // SLA classes (seed 001): index of a policy class, -1 when the policy has no such class.
  int slaClass(std::string_view name) const;
  // Whether the last resort may still use the cache: not for a class with its own list (the
  // list says where the cache goes, or that it does not).
  bool cacheAfterPlan(int slaClass) const {
    return slaClass < 0 || classes_[static_cast<std::size_t>(slaClass)].chain.empty();
  }
  // Whether the class may be answered from the cache at all (no list, or one naming it).
  bool cacheAllowed(int slaClass) const;

  // Every model that may take `primary`'s degraded load (before per-request checks).
  const std::vector<ModelId>& candidates(ModelId primary) const { return chains_[primary]; }

  // Nothing could answer: what now.
  LastResort lastResort(bool critical, bool cacheHit) const;

  // The degrade lock, per session.
  const DegradeLock* locked(std::uint64_t session, Micros now);
  void lock(std::uint64_t session, std::int32_t route, Micros now);
  void release(std::uint64_t session) { locks_.erase(session); }
  std::size_t lockedSessions() const { return locks_.size(); }

  const DegradeCounters& counters() const { return counters_; }

 private:
  DegradeConfig cfg_;
  std::vector<std::string> names_;
  std::vector<const ModelProfile*> profiles_;
  std::vector<TagMask> covers_;               // tags each model covers
  std::vector<std::vector<ModelId>> chains_;  // candidates per primary, in order
  struct ClassRoute {
    std::string name;
    double maxQualityDrop;
    std::vector<ModelId> chain;  // degrade_to resolved (RouteStep::kCache for the cache)
  };
  std::vector<ClassRoute> classes_;
  std::map<std::string, ModelProfile> profileStore_;
  std::unordered_map<std::string, int> tagBits_;
  std::unordered_map<std::uint64_t, DegradeLock> locks_;
  // Backups eligible by tags and quality, per (primary, tag set): that part of a plan does
  // not depend on the request, so it is computed once; only the context check runs per call.
  struct PlanKey {
    ModelId primary;
    TagMask tags;
    int slaClass;
    bool operator==(const PlanKey&) const = default;
  };
  struct PlanKeyHash {
    std::size_t operator()(const PlanKey& k) const {
      return std::hash<std::uint64_t>{}(k.tags * 0x9e3779b97f4a7c15ULL ^ k.primary ^
                                        (static_cast<std::uint64_t>(k.slaClass + 1) << 40));
    }
  };
  struct Eligible {
    std::vector<ModelId> models;
    std::uint32_t ineligible = 0;
  };
  std::unordered_map<PlanKey, Eligible, PlanKeyHash> eligible_;
  DegradeCounters counters_;
  Micros lastSweep_ = 0;
};

}  // namespace spillway
