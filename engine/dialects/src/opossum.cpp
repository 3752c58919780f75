#include "spillway/dialects/opossum.hpp"

#include <algorithm>
#include <deque>

#include "spillway/dialects/native_config.hpp"

namespace spillway::dialects {

namespace {
const ClassifyConfig kClassify;  // a rejected promise: Spillway's default failures
}

Micros OpossumConfig::bucketInterval() const {
  return millis((rollingCountTimeout / kMicrosPerMilli) / std::max(1u, rollingCountBuckets));
}

struct OpossumDialect::Member {
  struct Bucket {
    std::uint64_t fires = 0, failures = 0;
  };
  bool started = false;
  Micros t0 = 0;
  std::deque<Bucket> window;  // [0] is the current bucket (status.js unshifts new ones)
  std::uint64_t rotations = 0;
  bool pendingClose = false;
  Micros halfOpenAt = kNever;  // the resetTimeout timer
  bool warmingUp = false;
  Micros warmUntil = kNever;
};

OpossumDialect::OpossumDialect(OpossumConfig cfg, std::uint64_t seed, EventSink* sink)
    : DialectCluster(seed, sink), cfg_(std::move(cfg)) {}
OpossumDialect::~OpossumDialect() = default;

void OpossumDialect::onAdded(InstanceId) {
  m_.emplace_back();
}

std::uint64_t OpossumDialect::fires(InstanceId id) const {
  std::uint64_t n = 0;
  for (const auto& b : m_[id].window) n += b.fires;
  return n;
}
std::uint64_t OpossumDialect::failures(InstanceId id) const {
  std::uint64_t n = 0;
  for (const auto& b : m_[id].window) n += b.failures;
  return n;
}

// The breaker is constructed when its member first shows up: timers count from there.
void OpossumDialect::start(InstanceId id, Micros t0) {
  Member& m = m_[id];
  if (m.started) return;
  m.started = true;
  m.t0 = t0;
  m.window.assign(std::max(1u, cfg_.rollingCountBuckets), Member::Bucket{});
  if (cfg_.allowWarmUp) {
    m.warmingUp = true;
    m.warmUntil = t0 + cfg_.rollingCountTimeout;
  }
}

// Timers in due order; at equal times in creation order, as fake timers run them: the bucket
// interval (created first), the warm-up timeout, then the reset timer.
void OpossumDialect::runTimers(InstanceId id, Micros now) {
  Member& m = m_[id];
  const Micros step = std::max<Micros>(cfg_.bucketInterval(), kMicrosPerMilli);
  for (;;) {
    const Micros rot = m.t0 + static_cast<Micros>(m.rotations + 1) * step;
    const Micros warm = m.warmingUp ? m.warmUntil : kForever;
    const Micros half = m.halfOpenAt != kNever ? m.halfOpenAt : kForever;
    const Micros next = std::min({rot, warm, half});
    if (next > now) return;
    if (rot == next) {
      // Rotations before the next other timer can be applied in bulk.
      const Micros until = std::min({warm, half, now});
      const std::uint64_t k = static_cast<std::uint64_t>((until - m.t0) / step) - m.rotations;
      const std::uint64_t n = std::min<std::uint64_t>(k, m.window.size());
      for (std::uint64_t i = 0; i < n; ++i) {
        m.window.pop_back();
        m.window.push_front(Member::Bucket{});
      }
      m.rotations += std::max<std::uint64_t>(k, 1);
      continue;
    }
    if (warm == next) {
      m.warmingUp = false;
      continue;
    }
    m.halfOpenAt = kNever;  // _halfOpen: HALF_OPEN with PENDING_CLOSE
    m.pendingClose = true;
    transition(id, BreakerState::HalfOpen, Reason::OpenElapsed, half);
  }
}

void OpossumDialect::doAdvance(Micros now) {
  for (InstanceId id = 0; id < m_.size(); ++id)
    if (m_[id].started) runTimers(id, now);
}

void OpossumDialect::open(InstanceId id, Micros at, double rate, std::uint64_t fires) {
  if (state(id) == BreakerState::Open) return;  // open() does nothing when already open
  Member& m = m_[id];
  m.pendingClose = false;
  m.halfOpenAt = at + cfg_.resetTimeout;
  transition(id, BreakerState::Open,
             state(id) == BreakerState::HalfOpen ? Reason::ProbeFailed : Reason::ErrorRate, at,
             cfg_.resetTimeout, rate, 0, static_cast<std::uint32_t>(fires));
}

DialectDecision OpossumDialect::doAdmit(InstanceId id, Micros now) {
  start(id, now);
  Member& m = m_[id];
  ++m.window.front().fires;  // 'fire' is emitted for every call, before any check
  if (!cfg_.enabled) return {};
  if (state(id) != BreakerState::Closed && !m.pendingClose)
    return {Admission::Reject, state(id) == BreakerState::HalfOpen ? RejectReason::HalfOpen
                                                                   : RejectReason::BreakerOpen};
  if (m.pendingClose) {
    m.pendingClose = false;
    return {Admission::Probe};
  }
  return {};
}

void OpossumDialect::doRecord(InstanceId id, const DialectDecision&, Micros end, Micros, int status,
                              Outcome outcome) {
  start(id, end);
  if (!cfg_.enabled) return;  // a disabled breaker calls the action directly: no events
  Member& m = m_[id];
  if (classify(kClassify, status, outcome) != Verdict::Failure) {
    if (state(id) == BreakerState::HalfOpen) {  // any success while half-open closes
      m.halfOpenAt = kNever;
      m.pendingClose = false;
      transition(id, BreakerState::Closed, Reason::ProbeStreak, end);
      rampComplete(id, end);
    }
    return;
  }
  ++m.window.front().failures;
  if (m.warmingUp) return;
  const bool halfOpen = state(id) == BreakerState::HalfOpen;
  const std::uint64_t f = fires(id), e = failures(id);
  if (f < cfg_.volumeThreshold && !halfOpen) return;
  // failures / fires × 100 in JavaScript: with no fires left in the window it is Infinity.
  const double rate = f ? static_cast<double>(e) / static_cast<double>(f) * 100.0 : 1e300;
  if (rate > cfg_.errorThresholdPercentage || halfOpen)
    open(id, end, std::min(rate, 100.0) / 100.0, f);
}

// ---- configuration --------------------------------------------------------------------------

OpossumConfig parseOpossumConfig(std::string_view text, const std::string& source) {
  const NativeReader r(source);
  const YAML::Node root = loadNative(text, source);
  OpossumConfig c;
  r.checkNative(root, "",
                {"timeout", "resetTimeout", "errorThresholdPercentage", "rollingCountTimeout",
                 "rollingCountBuckets", "volumeThreshold", "allowWarmUp", "enabled"},
                {"capacity",
                 "name",
                 "group",
                 "cache",
                 "cacheTTL",
                 "cacheGetKey",
                 "cacheTransport",
                 "coalesce",
                 "coalesceTTL",
                 "coalesceResetOn",
                 "coalesceSize",
                 "abortController",
                 "autoRenewAbortController",
                 "enableSnapshots",
                 "rotateBucketController",
                 "rollingPercentilesEnabled",
                 "errorFilter",
                 "maxFailures",
                 "state",
                 "status"},
                &c.ignoredKeys);
  auto ms = [&](const char* k, Micros lo) {
    return r.dur(NativeReader::get(root, k), k, BareUnit::Millis, lo);
  };
  if (auto n = NativeReader::get(root, "timeout")) {
    bool b = true;
    if (n.IsScalar() && YAML::convert<bool>::decode(n, b) && !b)
      c.timeout = 0;  // timeout: false
    else
      c.timeout = ms("timeout", 0);
  }
  if (NativeReader::get(root, "resetTimeout")) c.resetTimeout = ms("resetTimeout", 0);
  if (NativeReader::get(root, "rollingCountTimeout"))
    c.rollingCountTimeout = ms("rollingCountTimeout", 1000);
  if (auto n = NativeReader::get(root, "errorThresholdPercentage"))
    c.errorThresholdPercentage = r.num(n, "errorThresholdPercentage", 0, 100);
  if (auto n = NativeReader::get(root, "rollingCountBuckets"))
    c.rollingCountBuckets =
        static_cast<std::uint32_t>(r.whole(n, "rollingCountBuckets", 1, 100000));
  if (auto n = NativeReader::get(root, "volumeThreshold"))
    c.volumeThreshold = static_cast<std::uint32_t>(r.whole(n, "volumeThreshold", 0, 2000000000));
  if (auto n = NativeReader::get(root, "allowWarmUp")) c.allowWarmUp = r.boolean(n, "allowWarmUp");
  if (auto n = NativeReader::get(root, "enabled")) c.enabled = r.boolean(n, "enabled");
  return c;
}

}  // namespace spillway::dialects
