#pragma once
// The policy: const configuration objects, as Envoy's outlier detection takes them. Values
// here are the defaults documented in docs/policy.md; resources/policies/default.yaml carries
// the seed-000 numbers explicitly.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spillway/time.hpp"

namespace spillway {

enum class BreakerMode : std::uint8_t { Normal, MetricsOnly, Disabled, ForcedOpen };
enum class WindowType : std::uint8_t { Time, Count };
enum class RampShape : std::uint8_t { Linear, Step };
enum class ClientErrors : std::uint8_t { Ignore, Success, Failure };

struct WindowConfig {
  WindowType type = WindowType::Time;
  Micros length = seconds(10);
  Micros bucket = seconds(1);
  std::uint32_t calls = 100;  // size of a count-based window
};

enum class LoadSource : std::uint8_t { Saturation, Queue };

// Load-aware error threshold (seed 001: "baseErrThreshold*loadFactor()", factor in [0.8, 1.5]
// from CPU / queue depth). The factor goes linearly from `min` on an idle group to `max` on a
// saturated one: under load, errors come from the load itself and tripping an instance throws
// its share onto peers that are just as busy — the cascade the seed warns about — while an
// idle group has room to absorb an early trip.
struct LoadFactorConfig {
  bool enabled = false;
  double min = 0.8, max = 1.5;
  LoadSource source = LoadSource::Saturation;
  bool operator==(const LoadFactorConfig&) const = default;
};

struct TripConfig {
  double errorRate = 0.5;       // trip when the window's error rate is strictly above this
  double slowRate = 0.4;        // ... or the slow-call rate is strictly above this
  Micros sustain = seconds(3);  // condition must hold this long (0 = trip at once)
  // Topology weight (seed 001's get_topology_weight: core 1.2, edge 0.8): multiplies both
  // rate thresholds; set it per service in a model override.
  double weight = 1.0;
  LoadFactorConfig loadFactor{};
};

struct ClassifyConfig {
  // failure[s] for HTTP status s in [0, 999]; 0 = no response.
  std::array<bool, 1000> failureStatus{};
  ClientErrors clientErrors = ClientErrors::Ignore;  // 4xx that are not listed as failures
  bool timeoutIsFailure = true;
  bool resetIsFailure = true;
  ClassifyConfig();  // 5xx, 0 and 429 count by default
};

struct SlowConfig {
  double k = 3.0;              // slow = latency > k × P99 baseline
  Micros floor = millis(200);  // ... but never below this
  Micros absolute = 0;         // > 0: fixed threshold instead of the baseline rule
  Micros initialBaseline = 0;  // > 0: baseline to use until one is learned
  // Latency factor (seed 001's latencyFactor(), "依据历史P99波动标准差动态缩放"): the
  // threshold is further multiplied by 1 + the coefficient of variation of the healthy
  // slices' P99, capped at this; 1 = off.
  double spreadMax = 1.0;
};

struct BaselineConfig {
  Micros horizon = seconds(300);  // time constant of the exponential forgetting
  std::uint32_t minCalls = 200;   // learned weight before the baseline is trusted
  // A completed slice only feeds the baseline while the instance looks healthy: breaker fully
  // closed, slice error/slow rates at most these, and the window's median latency at most
  // ratio × the baseline's median. The median, not the P99: over a few dozen calls it is
  // stable, so a drift (a memory leak) freezes the baseline before it can drag it up.
  double freezeErrorRate = 0.25;
  double freezeSlowRate = 0.2;
  double freezeDriftRatio = 1.3;
};

struct OpenConfig {
  Micros duration = seconds(10);
  double backoffMultiplier = 1.5;
  Micros maxDuration = seconds(60);
  double jitter = 0.0;              // ± share of the duration, drawn from the breaker's stream
  Micros decayAfter = seconds(60);  // healthy (closed, not ramping) time that forgets one open
};

// Graded release (seed 001, 2.4): the probes' success rate decides how much traffic comes
// back. A rule applies once at least `probes` probes ran and at least `success` of them
// succeeded; the ramp then starts at `start` and rises to `cap`.
struct ReleaseRule {
  double success = 0.95;
  std::uint32_t probes = 3;
  double start = 0.05, cap = 1.0;
  bool operator==(const ReleaseRule&) const = default;
};

struct HalfOpenConfig {
  double probeShare = 0.1;
  std::uint32_t successStreak = 5;
  // Empty: `success_streak` good probes close, the first bad one reopens. Otherwise the
  // rules, best first; the best rule releases at once, the others only after `maxProbes`;
  // below the last rule's rate (or once it can no longer be reached) the breaker reopens.
  std::vector<ReleaseRule> release{};
  std::uint32_t maxProbes = 20;
};

struct RampConfig {
  Micros duration = seconds(30);
  RampShape shape = RampShape::Linear;
  std::uint32_t steps = 4;
  bool relapseReopens = true;
};

struct BreakerConfig {
  BreakerMode mode = BreakerMode::Normal;
  WindowConfig window;
  std::uint32_t minCalls = 20;
  TripConfig trip;
  ClassifyConfig classify;
  SlowConfig slow;
  BaselineConfig baseline;
  OpenConfig open;
  HalfOpenConfig halfOpen;
  RampConfig ramp;
};

struct CalibrationConfig {
  double fpTarget = 0.05;  // propose less sensitive thresholds above this FP rate
  Micros period = seconds(300);
  std::uint32_t minBlocked = 20;    // do not judge a period on fewer blocked requests
  double rateStep = 0.05;           // how much a proposal raises a rate threshold
  Micros sustainStep = seconds(2);  // ... and lengthens sustain
};

// A per-model or per-instance override: a partial `breaker` section, typed and validated when
// the policy is read; each field is set or not. resolveBreaker layers the model's override,
// then the instance's, on the policy's breaker. An override's `load_factor` and `release`
// replace the policy's whole.
struct BreakerOverride {
  template <class T>
  using Opt = std::optional<T>;
  Opt<BreakerMode> mode;
  struct {
    Opt<WindowType> type;
    Opt<Micros> length, bucket;
    Opt<std::uint32_t> calls;
  } window;
  Opt<std::uint32_t> minCalls;
  struct {
    Opt<double> errorRate, slowRate;
    Opt<Micros> sustain;
    Opt<double> weight;
    Opt<LoadFactorConfig> loadFactor;
  } trip;
  struct {
    Opt<std::array<bool, 1000>> failureStatus;
    Opt<ClientErrors> clientErrors;
    Opt<bool> timeoutIsFailure, resetIsFailure;
  } classify;
  struct {
    Opt<double> k;
    Opt<Micros> floor, absolute, initialBaseline;
    Opt<double> spreadMax;
  } slow;
  struct {
    Opt<Micros> horizon;
    Opt<std::uint32_t> minCalls;
    Opt<double> freezeErrorRate, freezeSlowRate, freezeDriftRatio;
  } baseline;
  struct {
    Opt<Micros> duration;
    Opt<double> backoffMultiplier;
    Opt<Micros> maxDuration;
    Opt<double> jitter;
    Opt<Micros> decayAfter;
  } open;
  struct {
    Opt<double> probeShare;
    Opt<std::uint32_t> successStreak;
    Opt<std::vector<ReleaseRule>> release;
    Opt<std::uint32_t> maxProbes;
  } halfOpen;
  struct {
    Opt<Micros> duration;
    Opt<RampShape> shape;
    Opt<std::uint32_t> steps;
    Opt<bool> relapseReopens;
  } ramp;
  int line = 0;  // where it came from, for messages; 0 when built in code
};

// Calls f(get) once per breaker field, where get(x) returns that field of a BreakerConfig or
// of a BreakerOverride (same member names): one list for layering, diffing and comparing.
template <class F>
void forEachBreakerField(F&& f) {
  f([](auto& b) -> auto& { return b.mode; });
  f([](auto& b) -> auto& { return b.window.type; });
  f([](auto& b) -> auto& { return b.window.length; });
  f([](auto& b) -> auto& { return b.window.bucket; });
  f([](auto& b) -> auto& { return b.window.calls; });
  f([](auto& b) -> auto& { return b.minCalls; });
  f([](auto& b) -> auto& { return b.trip.errorRate; });
  f([](auto& b) -> auto& { return b.trip.slowRate; });
  f([](auto& b) -> auto& { return b.trip.sustain; });
  f([](auto& b) -> auto& { return b.trip.weight; });
  f([](auto& b) -> auto& { return b.trip.loadFactor; });
  f([](auto& b) -> auto& { return b.classify.failureStatus; });
  f([](auto& b) -> auto& { return b.classify.clientErrors; });
  f([](auto& b) -> auto& { return b.classify.timeoutIsFailure; });
  f([](auto& b) -> auto& { return b.classify.resetIsFailure; });
  f([](auto& b) -> auto& { return b.slow.k; });
  f([](auto& b) -> auto& { return b.slow.floor; });
  f([](auto& b) -> auto& { return b.slow.absolute; });
  f([](auto& b) -> auto& { return b.slow.initialBaseline; });
  f([](auto& b) -> auto& { return b.slow.spreadMax; });
  f([](auto& b) -> auto& { return b.baseline.horizon; });
  f([](auto& b) -> auto& { return b.baseline.minCalls; });
  f([](auto& b) -> auto& { return b.baseline.freezeErrorRate; });
  f([](auto& b) -> auto& { return b.baseline.freezeSlowRate; });
  f([](auto& b) -> auto& { return b.baseline.freezeDriftRatio; });
  f([](auto& b) -> auto& { return b.open.duration; });
  f([](auto& b) -> auto& { return b.open.backoffMultiplier; });
  f([](auto& b) -> auto& { return b.open.maxDuration; });
  f([](auto& b) -> auto& { return b.open.jitter; });
  f([](auto& b) -> auto& { return b.open.decayAfter; });
  f([](auto& b) -> auto& { return b.halfOpen.probeShare; });
  f([](auto& b) -> auto& { return b.halfOpen.successStreak; });
  f([](auto& b) -> auto& { return b.halfOpen.release; });
  f([](auto& b) -> auto& { return b.halfOpen.maxProbes; });
  f([](auto& b) -> auto& { return b.ramp.duration; });
  f([](auto& b) -> auto& { return b.ramp.shape; });
  f([](auto& b) -> auto& { return b.ramp.steps; });
  f([](auto& b) -> auto& { return b.ramp.relapseReopens; });
}

// ---- degradation (seeds 000, 002, 003) ---------------------------------------------------

// What a model can do, for capability-matched fallback. Tags are free-form words (chat,
// reasoning, code, vision, …); a backup must cover every tag a request needs.
struct ModelProfile {
  int tier = 1;               // 1 = primary class … 3 = local/edge; informational ordering
  double quality = 1.0;       // 0 … 1; a backup may be at most degrade.maxQualityDrop worse
  std::uint32_t context = 0;  // context window in tokens; 0 = unlimited
  std::vector<std::string> tags;
  double cost = 0;     // per 1k tokens, for reports
  Micros timeout = 0;  // the gateway's upstream timeout for this model; 0 = the caller's
  int line = 0;
};

enum class ContextOverflow : std::uint8_t { Trim, Skip };

struct DegradeConfig {
  bool enabled = false;  // no `degrade` section: a blocked request fails fast
  double maxQualityDrop = 0.3;
  ContextOverflow contextOverflow = ContextOverflow::Trim;
  // Explicit chains per primary model (in order); a primary without one gets every eligible
  // model, best quality first.
  std::map<std::string, std::vector<std::string>> chains;
  bool cache = false;
  Micros cacheMaxAge = seconds(600);
  bool nonCriticalBackups = true;   // false: backups are kept for core traffic only
  bool fastFailNonCritical = true;  // no matched backup: non-critical fails fast, never a
                                    // hard switch to an unsuitable model
  bool staticAnswer = true;         // the last resort: "queued, retry later" for core
  bool lock = true;                 // degrade lock: a degraded session stays degraded
  Micros lockTtl = seconds(300);
  double retryBudget = 0.2;  // gateway re-routes ≤ this share of live traffic
  // Cost routing (seed 002: "轻量模型承接非核心和简单请求"): these requests go to the
  // cheapest capability-matched model first, while the primary is healthy too; the primary
  // takes them when that model cannot.
  bool cheaperForNonCore = false;
  bool cheaperForSimple = false;
  std::uint32_t simpleMaxTokens = 500;  // "simple": input + expected output tokens at most this
  // Long-tail truncation (seed 001): an attempt still running at its instance's slow
  // threshold (k × P99 baseline) is cut by the gateway and degraded.
  bool truncateTail = false;
};

// ---- limits (seed 001) --------------------------------------------------------------------

struct LimitRule {
  double rate = 0;                  // requests per second; 0 = no request-rate limit
  double burst = 0;                 // bucket size; 0 = rate (one second's worth)
  std::uint32_t maxConcurrent = 0;  // 0 = unlimited
  double tokensPerSecond = 0;       // LLM tokens (input + expected output); 0 = unlimited
  double tokenBurst = 0;            // 0 = one second's worth
  // GPU memory (seed 001, 4.4 "成本感知限流"): the KV cache the admitted requests hold, as
  // their input + expected output tokens in flight, at most this; 0 = unlimited.
  double maxTokensInFlight = 0;
  int line = 0;
};

struct LimitsConfig {
  std::map<std::string, LimitRule> tenants, routes, models;
  std::optional<LimitRule> defaultTenant;  // for tenants not listed
  // Overload shedding by priority: above `shedAt` of the gateway's capacity in use,
  // non-critical requests are shed; above `shedCriticalAt`, critical ones too.
  double shedAt = 0;  // 0 = off
  double shedCriticalAt = 1.0;
  // Adaptive limits (seed 001's load factor): rates shrink linearly to `adaptiveMin` × rate
  // as instance saturation goes from `adaptiveFrom` to 1.
  bool adaptive = false;
  double adaptiveFrom = 0.8, adaptiveMin = 0.5;
  bool any() const {
    return !tenants.empty() || !routes.empty() || !models.empty() || defaultTenant || shedAt > 0;
  }
};

// ---- SLA classes (seed 001, 3.1) -------------------------------------------------------------

// A class of traffic with its own target, latency budget and degraded versions ("core
// 99.99 % / 200 ms on the full model, important 99.9 % / 800 ms quantized, fallback 99 % / 3 s
// cached"). Clients name their class; the budget is a measuring stick per class, never the
// clients' SLO (kpis.md: the "would have succeeded" bar is the client's, not the policy's).
struct SlaClass {
  double availability = 0;     // target share of in-quota requests answered within `latency`
  Micros latency = 0;          // the class's latency budget
  double maxQualityDrop = -1;  // < 0: degrade.max_quality_drop
  // What a degraded request of the class may take, in order: model names and `cache`
  // (kSlaCache). Empty: the degrade chain and the last resort, as for every request.
  std::vector<std::string> degradeTo;
  int line = 0;
};
inline constexpr const char* kSlaCache = "cache";

struct Policy {
  std::string name = "default";
  BreakerConfig breaker;
  CalibrationConfig calibration;
  std::map<std::string, ModelProfile> models;  // capability profiles by model name
  DegradeConfig degrade;
  LimitsConfig limits;
  std::map<std::string, SlaClass> slaClasses;
  std::map<std::string, BreakerOverride> modelOverrides;
  std::map<std::string, BreakerOverride> instanceOverrides;
};

// Copies the fields `o` sets onto `b`.
void applyOverride(const BreakerOverride& o, BreakerConfig& b);
// The override that turns `base` into `changed`: the fields that differ.
BreakerOverride overrideBetween(const BreakerConfig& base, const BreakerConfig& changed);
bool isEmpty(const BreakerOverride& o);
bool operator==(const BreakerOverride& a, const BreakerOverride& b);  // fields, not lines
bool operator==(const BreakerConfig& a, const BreakerConfig& b);

// What makes a breaker config inconsistent (a window bucket longer than the window, …): the
// field to blame and why; nullopt when it is consistent.
struct BreakerFlaw {
  std::string field;  // relative to `breaker`, e.g. "window.bucket"
  std::string other;  // the other key involved, blamed when the file did not write `field`
  std::string what;
  int release = -1;  // the half_open.release rule, when it is one
};
std::optional<BreakerFlaw> breakerFlaw(const BreakerConfig& b);

// Effective breaker config of an instance: default ← model override ← instance override.
// Throws InputError when the layers together are inconsistent (each alone was checked on load).
BreakerConfig resolveBreaker(const Policy& policy, const std::string& model,
                             const std::string& instance);

}  // namespace spillway
