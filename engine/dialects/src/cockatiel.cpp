#include "spillway/dialects/cockatiel.hpp"

#include <algorithm>
#include <cmath>

#include "spillway/dialects/native_config.hpp"

namespace spillway::dialects {

namespace {
const ClassifyConfig kClassify;  // handleAll over the call's failure: Spillway's default
std::int64_t nowMs(Micros t) {   // Date.now()
  return t >= 0 ? t / kMicrosPerMilli : -((-t + kMicrosPerMilli - 1) / kMicrosPerMilli);
}
}  // namespace

struct CockatielDialect::Member {
  // ConsecutiveBreaker
  std::uint32_t consecutive = 0;
  // SamplingBreaker
  struct Window {
    std::int64_t startedAt = 0, failures = 0, successes = 0;
  };
  std::vector<Window> windows;
  std::size_t current = 0;
  std::int64_t curFailures = 0, curSuccesses = 0;
  // CountBreaker: the last `size` results (-1 empty, 0 failure, 1 success)
  std::vector<std::int8_t> samples;
  std::size_t sample = 0;
  std::int64_t countFailures = 0, countSuccesses = 0;
  // Policy state
  Micros openedAt = 0;
  std::uint32_t attemptNo = 0;
  std::uint32_t episode = 0;  // the running half-open episode's token
  std::uint32_t inFlight = 0, successes = 0, failures = 0;
};

CockatielDialect::CockatielDialect(CockatielConfig cfg, std::uint64_t seed, EventSink* sink)
    : DialectCluster(seed, sink), cfg_(std::move(cfg)) {}
CockatielDialect::~CockatielDialect() = default;

namespace {
std::int64_t windowCount(const CockatielConfig& c) {
  return std::max<std::int64_t>(5, static_cast<std::int64_t>(std::ceil(
                                       static_cast<double>(c.samplingDuration / 1000) / 1000.0)));
}
std::int64_t windowSize(const CockatielConfig& c) {  // ms, Math.round(duration / count)
  return static_cast<std::int64_t>(
      std::llround(static_cast<double>(c.samplingDuration / 1000) / windowCount(c)));
}
}  // namespace

void CockatielDialect::onAdded(InstanceId) {
  Member m;
  if (cfg_.breaker == CockatielConfig::Breaker::Sampling)
    m.windows.assign(static_cast<std::size_t>(windowCount(cfg_)), Member::Window{});
  if (cfg_.breaker == CockatielConfig::Breaker::Count) m.samples.assign(cfg_.countSize, -1);
  m_.push_back(std::move(m));
}

void CockatielDialect::countSample(InstanceId id, bool success) {
  Member& m = m_[id];
  std::int8_t& slot = m.samples[m.sample];
  if (slot == 1) --m.countSuccesses;
  if (slot == 0) --m.countFailures;
  slot = success ? 1 : 0;
  ++(success ? m.countSuccesses : m.countFailures);
  m.sample = (m.sample + 1) % m.samples.size();
}

bool CockatielDialect::countFailure(InstanceId id, BreakerState asOf) {
  countSample(id, false);
  if (asOf != BreakerState::Closed) return true;
  const Member& m = m_[id];
  const std::int64_t total = m.countSuccesses + m.countFailures;
  if (total < static_cast<std::int64_t>(cfg_.countMinimumCalls)) return false;
  return static_cast<double>(m.countFailures) > cfg_.countThreshold * static_cast<double>(total);
}

bool CockatielDialect::breakerFailure(InstanceId id, BreakerState asOf, Micros now) {
  Member& m = m_[id];
  if (cfg_.breaker == CockatielConfig::Breaker::Consecutive)
    return ++m.consecutive >= cfg_.consecutiveThreshold;
  if (cfg_.breaker == CockatielConfig::Breaker::Count) return countFailure(id, asOf);
  // push(false): rotate at most one window when the current one is old enough.
  const std::int64_t t = nowMs(now), size = windowSize(cfg_);
  auto push = [&](bool success) {
    if (t - m.windows[m.current].startedAt >= size) {
      const std::size_t next = (m.current + 1) % m.windows.size();
      m.curFailures -= m.windows[next].failures;
      m.curSuccesses -= m.windows[next].successes;
      m.windows[next] = Member::Window{t, 0, 0};
      m.current = next;
    }
    if (success) {
      ++m.windows[m.current].successes;
      ++m.curSuccesses;
    } else {
      ++m.windows[m.current].failures;
      ++m.curFailures;
    }
  };
  push(false);
  if (asOf != BreakerState::Closed) return true;
  const double total = static_cast<double>(m.curSuccesses + m.curFailures);
  const double duration = static_cast<double>(size * static_cast<std::int64_t>(m.windows.size()));
  const double minimumRpms =
      cfg_.minimumRps > 0 ? cfg_.minimumRps / 1000.0 : 5.0 / (cfg_.samplingThreshold * 1000.0);
  if (total < duration * minimumRpms) return false;
  return static_cast<double>(m.curFailures) > cfg_.samplingThreshold * total;
}

void CockatielDialect::breakerSuccess(InstanceId id, BreakerState asOf, Micros now) {
  Member& m = m_[id];
  if (cfg_.breaker == CockatielConfig::Breaker::Consecutive) {
    m.consecutive = 0;
    return;
  }
  if (cfg_.breaker == CockatielConfig::Breaker::Count) {
    if (asOf == BreakerState::HalfOpen) {  // reset(): the ring empties, its position stays
      std::fill(m.samples.begin(), m.samples.end(), std::int8_t{-1});
      m.countFailures = m.countSuccesses = 0;
    }
    countSample(id, true);
    return;
  }
  if (asOf == BreakerState::HalfOpen) {  // resetWindows
    m.curFailures = m.curSuccesses = 0;
    for (auto& w : m.windows) w = Member::Window{};
  }
  const std::int64_t t = nowMs(now), size = windowSize(cfg_);
  if (t - m.windows[m.current].startedAt >= size) {
    const std::size_t next = (m.current + 1) % m.windows.size();
    m.curFailures -= m.windows[next].failures;
    m.curSuccesses -= m.windows[next].successes;
    m.windows[next] = Member::Window{t, 0, 0};
    m.current = next;
  }
  ++m.windows[m.current].successes;
  ++m.curSuccesses;
}

void CockatielDialect::open(InstanceId id, Micros at, Reason reason) {
  const BreakerState s = state(id);
  if (s == BreakerState::Open || s == BreakerState::ForcedOpen) return;
  Member& m = m_[id];
  m.attemptNo = s == BreakerState::HalfOpen ? m.attemptNo : 1;
  m.openedAt = at;
  m.episode = 0;  // the half-open episode (if any) is over: waiters get their verdict
  transition(id, BreakerState::Open, reason, at, cfg_.halfOpenAfter);
}

void CockatielDialect::maybeClose(InstanceId id, Micros at) {
  Member& m = m_[id];
  if (m.successes + m.failures < cfg_.halfOpenCalls || m.inFlight) return;
  breakerSuccess(id, BreakerState::HalfOpen, at);
  m.episode = 0;
  transition(id, BreakerState::Closed, Reason::ProbeStreak, at);
  rampComplete(id, at);
}

DialectDecision CockatielDialect::doAdmit(InstanceId id, Micros now) {
  Member& m = m_[id];
  switch (state(id)) {
    case BreakerState::Open:
      if (now - m.openedAt < cfg_.halfOpenAfter)
        return {Admission::Reject, RejectReason::BreakerOpen};
      ++m.attemptNo;
      m.episode = ++episodes_;
      m.inFlight = m.successes = m.failures = 0;
      transition(id, BreakerState::HalfOpen, Reason::OpenElapsed, now);
      [[fallthrough]];
    case BreakerState::HalfOpen:
      if (m.successes + m.failures + m.inFlight >= cfg_.halfOpenCalls)
        return {Admission::Wait, RejectReason::HalfOpen};  // awaits state.decision
      ++m.inFlight;
      return {Admission::Probe, RejectReason::None, m.episode};
    default:
      return {Admission::Admit, RejectReason::None, 0};
  }
}

void CockatielDialect::doRecord(InstanceId id, const DialectDecision& d, Micros end, Micros,
                                int status, Outcome outcome) {
  Member& m = m_[id];
  const bool failure = classify(kClassify, status, outcome) == Verdict::Failure;
  if (d.token == 0) {  // started while closed: judged as closed
    if (!failure) {
      breakerSuccess(id, BreakerState::Closed, end);
    } else if (breakerFailure(id, BreakerState::Closed, end)) {
      open(id, end, state(id) == BreakerState::HalfOpen ? Reason::ProbeFailed : Reason::ErrorRate);
    }
    return;
  }
  if (state(id) != BreakerState::HalfOpen || m.episode != d.token) return;  // a stale episode
  --m.inFlight;
  if (!failure) {
    ++m.successes;
    maybeClose(id, end);
    return;
  }
  ++m.failures;
  if (static_cast<double>(m.failures) > cfg_.halfOpenThreshold * cfg_.halfOpenCalls) {
    breakerFailure(id, BreakerState::HalfOpen, end);
    open(id, end, Reason::ProbeFailed);
    return;
  }
  maybeClose(id, end);
}

// ---- configuration --------------------------------------------------------------------------

CockatielConfig parseCockatielConfig(std::string_view text, const std::string& source) {
  const NativeReader r(source);
  const YAML::Node root = loadNative(text, source);
  CockatielConfig c;
  r.checkNative(root, "", {"halfOpenAfter", "breaker", "halfOpenSampling"}, {"initialState"},
                &c.ignoredKeys);
  const YAML::Node hoa = r.need(root, "halfOpenAfter", "");
  if (hoa.IsMap())
    r.fail(hoa.Mark(), "halfOpenAfter", "only a number of ms is emulated (no backoff)");
  c.halfOpenAfter = r.dur(hoa, "halfOpenAfter", BareUnit::Millis, 0);
  const YAML::Node b = r.need(root, "breaker", "");
  r.checkNative(b, "breaker", {"ConsecutiveBreaker", "SamplingBreaker", "CountBreaker"});
  if (b.size() != 1) r.fail(b.Mark(), "breaker", "name exactly one breaker");
  if (auto n = NativeReader::get(b, "ConsecutiveBreaker")) {
    c.breaker = CockatielConfig::Breaker::Consecutive;
    c.consecutiveThreshold =
        static_cast<std::uint32_t>(r.whole(n, "breaker.ConsecutiveBreaker", 1, 1000000000));
  } else if (auto s = NativeReader::get(b, "SamplingBreaker")) {
    c.breaker = CockatielConfig::Breaker::Sampling;
    r.checkNative(s, "breaker.SamplingBreaker", {"threshold", "duration", "minimumRps"});
    const YAML::Node th = r.need(s, "threshold", "breaker.SamplingBreaker");
    c.samplingThreshold = r.number(th, "breaker.SamplingBreaker.threshold", 0, 1, true, true);
    c.samplingDuration = r.dur(r.need(s, "duration", "breaker.SamplingBreaker"),
                               "breaker.SamplingBreaker.duration", BareUnit::Millis, 1000);
    if (auto n = NativeReader::get(s, "minimumRps"))
      c.minimumRps = r.number(n, "breaker.SamplingBreaker.minimumRps", 0, 1e9, true);
  } else if (auto cb = NativeReader::get(b, "CountBreaker")) {
    c.breaker = CockatielConfig::Breaker::Count;
    const std::string at = "breaker.CountBreaker";
    r.checkNative(cb, at, {"threshold", "size", "minimumNumberOfCalls"});
    c.countThreshold = r.number(r.need(cb, "threshold", at), at + ".threshold", 0, 1, true, true);
    c.countSize =
        static_cast<std::uint32_t>(r.whole(r.need(cb, "size", at), at + ".size", 1, 1000000));
    c.countMinimumCalls = c.countSize;
    if (auto n = NativeReader::get(cb, "minimumNumberOfCalls"))
      c.countMinimumCalls =
          static_cast<std::uint32_t>(r.whole(n, at + ".minimumNumberOfCalls", 1, c.countSize));
  }
  if (auto h = NativeReader::get(root, "halfOpenSampling")) {
    r.checkNative(h, "halfOpenSampling", {"calls", "threshold"});
    if (auto n = NativeReader::get(h, "calls"))
      c.halfOpenCalls =
          static_cast<std::uint32_t>(r.whole(n, "halfOpenSampling.calls", 1, 1000000));
    if (auto n = NativeReader::get(h, "threshold"))
      c.halfOpenThreshold = r.number(n, "halfOpenSampling.threshold", 0, 1, false, true);
  }
  return c;
}

}  // namespace spillway::dialects
