#include "spillway/dialects/resilience4j.hpp"

#include <algorithm>
#include <cmath>

#include "spillway/dialects/native_config.hpp"

namespace spillway::dialects {

Micros Resilience4jConfig::waitFor(std::uint32_t attempts) const {
  if (!enableExponentialBackoff || attempts <= 1) return waitDurationInOpenState;
  // IntervalFunction.ofExponentialBackoff: initial × multiplier^(attempt-1), capped by max.
  const double w = static_cast<double>(waitDurationInOpenState) *
                   std::pow(exponentialBackoffMultiplier, static_cast<double>(attempts - 1));
  const double cap = static_cast<double>(exponentialMaxWaitDurationInOpenState);
  return static_cast<Micros>(std::min(w, cap));
}

namespace {

const ClassifyConfig kClassify;  // what counts as an exception: Spillway's default (docs)

// A CircuitBreakerMetrics window: a ring of calls (COUNT_BASED) or one aggregation per epoch
// second (TIME_BASED, subtract-on-evict).
class Window {
 public:
  Window() = default;
  Window(bool timeBased, std::uint32_t size) : time_(timeBased), size_(std::max(1u, size)) {
    if (time_)
      buckets_.assign(size_, Bucket{});
    else
      ring_.assign(size_, 0);
  }
  void add(Micros t, bool failure, bool slow) {
    const std::uint8_t v = static_cast<std::uint8_t>((failure ? 1 : 0) | (slow ? 2 : 0));
    if (time_) {
      evict(t);
      Bucket& b = buckets_[static_cast<std::size_t>(epochSecond(t) % size_)];
      b.epoch = epochSecond(t);
      ++b.calls;
      b.fails += failure;
      b.slow += slow;
    } else {
      if (filled_ == size_) {
        const std::uint8_t old = ring_[head_];
        --calls_;
        fails_ -= old & 1;
        slow_ -= (old >> 1) & 1;
      } else {
        ++filled_;
      }
      ring_[head_] = v;
      head_ = (head_ + 1) % size_;
    }
    ++calls_;
    fails_ += failure;
    slow_ += slow;
  }
  std::uint32_t calls() const { return calls_; }
  std::uint32_t fails() const { return fails_; }
  std::uint32_t slow() const { return slow_; }

 private:
  struct Bucket {
    std::int64_t epoch = std::numeric_limits<std::int64_t>::min();
    std::uint32_t calls = 0, fails = 0, slow = 0;
  };
  static std::int64_t epochSecond(Micros t) {
    return t >= 0 ? t / kMicrosPerSecond : -((-t + kMicrosPerSecond - 1) / kMicrosPerSecond);
  }
  // Buckets older than the last `size` epoch seconds leave the totals.
  void evict(Micros t) {
    const std::int64_t now = epochSecond(t);
    for (Bucket& b : buckets_) {
      if (b.calls && b.epoch <= now - static_cast<std::int64_t>(size_)) {
        calls_ -= b.calls;
        fails_ -= b.fails;
        slow_ -= b.slow;
        b = Bucket{};
      }
    }
  }
  bool time_ = false;
  std::uint32_t size_ = 1;
  std::vector<std::uint8_t> ring_;
  std::uint32_t head_ = 0, filled_ = 0;
  std::vector<Bucket> buckets_;
  std::uint32_t calls_ = 0, fails_ = 0, slow_ = 0;
};

enum class Result : std::uint8_t { BelowMinimum, Below, Above };

struct Rates {
  Result result = Result::BelowMinimum;
  float failureRate = 0, slowRate = 0;  // percent, as Resilience4j computes them (float)
  bool failureExceeded = false, slowExceeded = false;
};

Rates judge(const Window& w, std::uint32_t minCalls, const Resilience4jConfig& c) {
  Rates r;
  if (w.calls() == 0 || w.calls() < minCalls) return r;
  r.failureRate = static_cast<float>(w.fails()) * 100.0f / static_cast<float>(w.calls());
  r.slowRate = static_cast<float>(w.slow()) * 100.0f / static_cast<float>(w.calls());
  r.failureExceeded = r.failureRate >= c.failureRateThreshold;
  r.slowExceeded = r.slowRate >= c.slowCallRateThreshold;
  r.result = r.failureExceeded || r.slowExceeded ? Result::Above : Result::Below;
  return r;
}

Reason tripReason(const Rates& r) {
  if (r.failureExceeded && r.slowExceeded) return Reason::ErrorAndSlow;
  return r.failureExceeded ? Reason::ErrorRate : Reason::SlowRate;
}

}  // namespace

struct Resilience4jDialect::Member {
  Window metrics;   // CLOSED (kept while OPEN: late results land there) or METRICS_ONLY
  Window halfOpen;  // HALF_OPEN: count window of the permitted calls
  std::uint32_t permits = 0;
  std::uint32_t attempts = 0;
  Micros openUntil = 0;
  Micros halfOpenSince = 0;
  bool firedFailure = false, firedSlow = false;  // METRICS_ONLY publishes each event once
  bool initialPending = false;  // created OPEN or HALF_OPEN: its timers start when first seen
};

Resilience4jDialect::Resilience4jDialect(Resilience4jConfig cfg, std::uint64_t seed,
                                         EventSink* sink)
    : DialectCluster(seed, sink), cfg_(std::move(cfg)) {}

Resilience4jDialect::~Resilience4jDialect() = default;

std::uint32_t Resilience4jDialect::attempts(InstanceId id) const {
  return m_[id].attempts;
}
Micros Resilience4jDialect::openUntil(InstanceId id) const {
  return m_[id].openUntil;
}

bool Resilience4jDialect::succeeded(int status, Outcome outcome, Micros latency) const {
  return classify(kClassify, status, outcome) != Verdict::Failure &&
         latency <= cfg_.slowCallDurationThreshold;
}

void Resilience4jDialect::onAdded(InstanceId id) {
  Member m;
  m.metrics = Window(cfg_.slidingWindowType == Resilience4jConfig::Window::TimeBased,
                     cfg_.slidingWindowSize);
  m.initialPending =
      cfg_.initialState == BreakerState::Open || cfg_.initialState == BreakerState::HalfOpen;
  m_.push_back(std::move(m));
  setInitialState(id, cfg_.initialState);
}

// A breaker created OPEN is OpenState(attempts 1) from its creation (the member's first call):
// its wait runs from there; one created HALF_OPEN has its permits and maxWait from there.
void Resilience4jDialect::startInitial(InstanceId id) {
  Member& m = m_[id];
  if (!m.initialPending || firstSeen(id) == kNever) return;
  m.initialPending = false;
  m.attempts = 1;
  m.openUntil = firstSeen(id) + cfg_.waitFor(1);
  m.permits = cfg_.permittedNumberOfCallsInHalfOpenState;
  m.halfOpen = Window(false, cfg_.permittedNumberOfCallsInHalfOpenState);
  m.halfOpenSince = firstSeen(id);
}

void Resilience4jDialect::open(InstanceId id, Micros at, std::uint32_t attempts, Reason reason,
                               float fr, float sr, std::uint32_t calls) {
  Member& m = m_[id];
  m.attempts = attempts;
  const Micros wait = cfg_.waitFor(attempts);
  m.openUntil = at + wait;
  transition(id, BreakerState::Open, reason, at, wait, fr / 100.0, sr / 100.0, calls);
}

void Resilience4jDialect::toHalfOpen(InstanceId id, Micros at) {
  Member& m = m_[id];
  m.permits = cfg_.permittedNumberOfCallsInHalfOpenState;
  m.halfOpen = Window(false, cfg_.permittedNumberOfCallsInHalfOpenState);
  m.halfOpenSince = at;
  transition(id, BreakerState::HalfOpen, Reason::OpenElapsed, at);
}

void Resilience4jDialect::close(InstanceId id, Micros at, Reason reason) {
  Member& m = m_[id];
  m.attempts = 0;  // CLOSED reports attempts = 0: the backoff starts over
  m.metrics = Window(cfg_.slidingWindowType == Resilience4jConfig::Window::TimeBased,
                     cfg_.slidingWindowSize);
  transition(id, BreakerState::Closed, reason, at);
  rampComplete(id, at);  // no ramp in Resilience4j: full traffic at once
}

void Resilience4jDialect::doAdvance(Micros now) {
  for (InstanceId id = 0; id < m_.size(); ++id) startInitial(id);
  const bool timers =
      cfg_.automaticTransitionFromOpenToHalfOpenEnabled || cfg_.maxWaitDurationInHalfOpenState > 0;
  if (!timers) return;
  for (InstanceId id = 0; id < m_.size(); ++id) {
    Member& m = m_[id];
    if (state(id) == BreakerState::Open && cfg_.automaticTransitionFromOpenToHalfOpenEnabled &&
        m.openUntil <= now)
      toHalfOpen(id, m.openUntil);  // the scheduler fires exactly at the end of the wait
    if (state(id) == BreakerState::HalfOpen && cfg_.maxWaitDurationInHalfOpenState > 0 &&
        m.halfOpenSince + cfg_.maxWaitDurationInHalfOpenState <= now) {
      const Micros at = m.halfOpenSince + cfg_.maxWaitDurationInHalfOpenState;
      if (cfg_.transitionToClosedAfterWait)
        close(id, at, Reason::Manual);
      else
        open(id, at, m.attempts + 1, Reason::ProbeFailed, 0, 0, 0);
      // An automatic half-open of the new open period may already be due.
      if (state(id) == BreakerState::Open && cfg_.automaticTransitionFromOpenToHalfOpenEnabled &&
          m.openUntil <= now)
        toHalfOpen(id, m.openUntil);
    }
  }
}

DialectDecision Resilience4jDialect::doAdmit(InstanceId id, Micros now) {
  startInitial(id);
  Member& m = m_[id];
  switch (state(id)) {
    case BreakerState::Closed:
    case BreakerState::MetricsOnly:
    case BreakerState::Disabled:
      return {};
    case BreakerState::ForcedOpen:
      return {Admission::Reject, RejectReason::ForcedOpen};
    case BreakerState::Open:
      // OpenState.tryAcquirePermission: clock.instant().isAfter(retryAfterWaitDuration), strict.
      if (!(now > m.openUntil)) return {Admission::Reject, RejectReason::BreakerOpen};
      toHalfOpen(id, now);
      [[fallthrough]];
    case BreakerState::HalfOpen:
      if (m.permits == 0) return {Admission::Reject, RejectReason::HalfOpen};
      --m.permits;
      return {Admission::Probe};
  }
  return {};
}

void Resilience4jDialect::doRecord(InstanceId id, const DialectDecision& /*d*/, Micros end,
                                   Micros latency, int status, Outcome outcome) {
  Member& m = m_[id];
  const BreakerState s = state(id);
  if (s == BreakerState::Disabled || s == BreakerState::ForcedOpen) return;
  const Verdict v = classify(kClassify, status, outcome);
  if (v == Verdict::Ignored) {  // ignoreExceptions: the half-open permit is released
    if (s == BreakerState::HalfOpen)
      m.permits = std::min(m.permits + 1, cfg_.permittedNumberOfCallsInHalfOpenState);
    return;
  }
  const bool failure = v == Verdict::Failure;
  const bool slow = latency > cfg_.slowCallDurationThreshold;
  const std::uint32_t minClosed = cfg_.slidingWindowType == Resilience4jConfig::Window::CountBased
                                      ? std::min(cfg_.minimumNumberOfCalls, cfg_.slidingWindowSize)
                                      : cfg_.minimumNumberOfCalls;
  switch (s) {
    case BreakerState::Closed: {
      m.metrics.add(end, failure, slow);
      const Rates r = judge(m.metrics, minClosed, cfg_);
      if (r.result == Result::Above)
        open(id, end, 1, tripReason(r), r.failureRate, r.slowRate, m.metrics.calls());
      break;
    }
    case BreakerState::MetricsOnly: {
      m.metrics.add(end, failure, slow);
      const Rates r = judge(m.metrics, minClosed, cfg_);
      if (r.failureExceeded && !m.firedFailure) {
        m.firedFailure = true;
        wouldOpen(id, Reason::ErrorRate, end, r.failureRate / 100.0, r.slowRate / 100.0,
                  m.metrics.calls());
      }
      if (r.slowExceeded && !m.firedSlow) {
        m.firedSlow = true;
        wouldOpen(id, Reason::SlowRate, end, r.failureRate / 100.0, r.slowRate / 100.0,
                  m.metrics.calls());
      }
      break;
    }
    case BreakerState::Open:
      m.metrics.add(end, failure, slow);  // results of calls started before the open
      break;
    case BreakerState::HalfOpen: {
      m.halfOpen.add(end, failure, slow);
      const std::uint32_t minHalf =
          std::min(cfg_.minimumNumberOfCalls, cfg_.permittedNumberOfCallsInHalfOpenState);
      const Rates r = judge(m.halfOpen, minHalf, cfg_);
      if (r.result == Result::Above)
        open(id, end, m.attempts + 1, Reason::ProbeFailed, r.failureRate, r.slowRate,
             m.halfOpen.calls());
      else if (r.result == Result::Below)
        close(id, end, Reason::ProbeStreak);
      break;
    }
    default:
      break;
  }
}

// ---- configuration --------------------------------------------------------------------------

namespace {

const std::initializer_list<std::string_view> kEmulated = {
    "baseConfig",
    "slidingWindowType",
    "slidingWindowSize",
    "minimumNumberOfCalls",
    "failureRateThreshold",
    "slowCallRateThreshold",
    "slowCallDurationThreshold",
    "waitDurationInOpenState",
    "enableExponentialBackoff",
    "exponentialBackoffMultiplier",
    "exponentialMaxWaitDurationInOpenState",
    "permittedNumberOfCallsInHalfOpenState",
    "maxWaitDurationInHalfOpenState",
    "transitionToStateAfterWaitDuration",
    "automaticTransitionFromOpenToHalfOpenEnabled",
    "initialState"};
const std::initializer_list<std::string_view> kKnown = {"enableRandomizedWait",
                                                        "randomizedWaitFactor",
                                                        "writableStackTraceEnabled",
                                                        "recordExceptions",
                                                        "ignoreExceptions",
                                                        "recordFailurePredicate",
                                                        "recordResultPredicate",
                                                        "ignoreExceptionPredicate",
                                                        "ignoreClassBindingExceptions",
                                                        "registerHealthIndicator",
                                                        "allowHealthIndicatorToFail",
                                                        "eventConsumerBufferSize",
                                                        "slidingWindowSynchronizationStrategy"};

void applyProps(const NativeReader& r, const YAML::Node& map, const std::string& path,
                Resilience4jConfig& c) {
  r.checkNative(map, path, kEmulated, kKnown, &c.ignoredKeys);
  auto key = [&](std::string_view k) { return NativeReader::join(path, std::string(k)); };
  using W = Resilience4jConfig::Window;
  if (auto n = NativeReader::get(map, "slidingWindowType"))
    c.slidingWindowType =
        r.choice<W>(n, key("slidingWindowType"),
                    {{"COUNT_BASED", W::CountBased}, {"TIME_BASED", W::TimeBased}});
  if (auto n = NativeReader::get(map, "slidingWindowSize"))
    c.slidingWindowSize =
        static_cast<std::uint32_t>(r.whole(n, key("slidingWindowSize"), 1, 1000000));
  if (auto n = NativeReader::get(map, "minimumNumberOfCalls"))
    c.minimumNumberOfCalls =
        static_cast<std::uint32_t>(r.whole(n, key("minimumNumberOfCalls"), 1, 1000000000));
  auto percent = [&](const YAML::Node& n, std::string_view k) {
    const double v = r.num(n, key(k), 0, 100);
    if (v <= 0) r.fail(n.Mark(), key(k), "must be in (0, 100]");
    return static_cast<float>(v);
  };
  if (auto n = NativeReader::get(map, "failureRateThreshold"))
    c.failureRateThreshold = percent(n, "failureRateThreshold");
  if (auto n = NativeReader::get(map, "slowCallRateThreshold"))
    c.slowCallRateThreshold = percent(n, "slowCallRateThreshold");
  // Spring reads a bare number as milliseconds.
  if (auto n = NativeReader::get(map, "slowCallDurationThreshold"))
    c.slowCallDurationThreshold = r.dur(n, key("slowCallDurationThreshold"), BareUnit::Millis, 1);
  if (auto n = NativeReader::get(map, "waitDurationInOpenState"))
    c.waitDurationInOpenState = r.dur(n, key("waitDurationInOpenState"), BareUnit::Millis, 1000);
  if (auto n = NativeReader::get(map, "enableExponentialBackoff"))
    c.enableExponentialBackoff = r.boolean(n, key("enableExponentialBackoff"));
  if (auto n = NativeReader::get(map, "exponentialBackoffMultiplier"))
    c.exponentialBackoffMultiplier = r.num(n, key("exponentialBackoffMultiplier"), 1, 1000);
  if (auto n = NativeReader::get(map, "exponentialMaxWaitDurationInOpenState"))
    c.exponentialMaxWaitDurationInOpenState =
        r.dur(n, key("exponentialMaxWaitDurationInOpenState"), BareUnit::Millis, 1000);
  if (auto n = NativeReader::get(map, "permittedNumberOfCallsInHalfOpenState"))
    c.permittedNumberOfCallsInHalfOpenState = static_cast<std::uint32_t>(
        r.whole(n, key("permittedNumberOfCallsInHalfOpenState"), 1, 1000000));
  if (auto n = NativeReader::get(map, "maxWaitDurationInHalfOpenState"))
    c.maxWaitDurationInHalfOpenState =
        r.dur(n, key("maxWaitDurationInHalfOpenState"), BareUnit::Millis, 0);
  if (auto n = NativeReader::get(map, "transitionToStateAfterWaitDuration"))
    c.transitionToClosedAfterWait = r.choice<bool>(n, key("transitionToStateAfterWaitDuration"),
                                                   {{"OPEN", false}, {"CLOSED", true}});
  if (auto n = NativeReader::get(map, "automaticTransitionFromOpenToHalfOpenEnabled"))
    c.automaticTransitionFromOpenToHalfOpenEnabled =
        r.boolean(n, key("automaticTransitionFromOpenToHalfOpenEnabled"));
  if (auto n = NativeReader::get(map, "initialState"))
    c.initialState = r.choice<BreakerState>(n, key("initialState"),
                                            {{"CLOSED", BreakerState::Closed},
                                             {"OPEN", BreakerState::Open},
                                             {"HALF_OPEN", BreakerState::HalfOpen},
                                             {"METRICS_ONLY", BreakerState::MetricsOnly},
                                             {"FORCED_OPEN", BreakerState::ForcedOpen},
                                             {"DISABLED", BreakerState::Disabled}});
}

// Applies `map` on top of its baseConfig (looked up in `configs`); `chain` holds the configs
// on the way down, so that a cycle is named as one.
void applyWithBase(const NativeReader& r, const YAML::Node& configs, const YAML::Node& map,
                   const std::string& path, Resilience4jConfig& c,
                   std::vector<std::string> chain = {}) {
  if (path.starts_with("configs.")) chain.push_back(path.substr(8));
  if (auto b = NativeReader::get(map, "baseConfig")) {
    const std::string field = NativeReader::join(path, "baseConfig");
    const std::string name = r.scalar(b, field);
    if (std::find(chain.begin(), chain.end(), name) != chain.end()) {
      std::string loop;
      for (const std::string& n : chain) loop += n + " -> ";
      r.fail(b.Mark(), field, "a cycle of baseConfigs: " + loop + name);
    }
    if (chain.size() >= 8) r.fail(b.Mark(), field, "more than 8 levels of baseConfig");
    const YAML::Node base = NativeReader::get(configs, name);
    if (!base) r.fail(b.Mark(), field, "no configs." + name + " to inherit from");
    applyWithBase(r, configs, base, "configs." + name, c, std::move(chain));
  }
  applyProps(r, map, path, c);
}

}  // namespace

Resilience4jConfig parseResilience4jConfig(std::string_view text, const std::string& source,
                                           std::string_view instance) {
  const NativeReader r(source);
  const YAML::Node root = loadNative(text, source);
  Resilience4jConfig c;
  if (!root.IsMap()) r.fail(root.Mark(), "", "expected a mapping of keys");
  // The prefix may be nested (resilience4j: circuitbreaker:) or dotted, as Spring allows.
  YAML::Node cb = NativeReader::get(root, "resilience4j.circuitbreaker");
  if (!cb) cb = NativeReader::get(NativeReader::get(root, "resilience4j"), "circuitbreaker");
  if (!cb && NativeReader::get(root, "resilience4j"))
    r.fail(NativeReader::get(root, "resilience4j").Mark(), "resilience4j",
           "expected a map holding circuitbreaker: (configs:, instances:)");
  if (!cb) {  // a bare map of properties
    applyProps(r, root, "", c);
  } else {
    r.checkNative(cb, "resilience4j.circuitbreaker", {"configs", "instances"},
                  {"backends", "circuitBreakerAspectOrder", "metrics", "tags"}, &c.ignoredKeys);
    const YAML::Node configs = NativeReader::get(cb, "configs");
    const YAML::Node instances = NativeReader::get(cb, "instances");
    // YAML keeps one of two equal keys: a name given twice would lose one of its configs.
    r.uniqueKeys(configs, "resilience4j.circuitbreaker.configs");
    r.uniqueKeys(instances, "resilience4j.circuitbreaker.instances");
    if (!instance.empty()) {
      const YAML::Node inst = NativeReader::get(instances, instance);
      if (!inst)
        r.fail(cb.Mark(), "resilience4j.circuitbreaker.instances",
               "no instance named '" + std::string(instance) + "'");
      applyWithBase(r, configs, inst, "instances." + std::string(instance), c);
    } else if (const YAML::Node def = NativeReader::get(configs, "default")) {
      applyWithBase(r, configs, def, "configs.default", c);
    } else if (instances && instances.IsMap() && instances.size() == 1) {
      const std::string name =
          r.keyOf(instances.begin()->first, "resilience4j.circuitbreaker.instances");
      applyWithBase(r, configs, instances.begin()->second, "instances." + name, c);
    } else {
      r.fail(cb.Mark(), "resilience4j.circuitbreaker",
             "no configs.default; name the instance to emulate");
    }
  }
  return c;
}

}  // namespace spillway::dialects
