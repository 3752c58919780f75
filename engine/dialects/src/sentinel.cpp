#include "spillway/dialects/sentinel.hpp"

#include <cmath>

#include "spillway/dialects/native_config.hpp"

namespace spillway::dialects {

namespace {
const ClassifyConfig kClassify;  // what counts as a business exception: Spillway's default

// Sentinel reads TimeUtil.currentTimeMillis(): whole epoch milliseconds.
std::int64_t epochMs(Micros t) {
  return t >= 0 ? t / kMicrosPerMilli : -((-t + kMicrosPerMilli - 1) / kMicrosPerMilli);
}
}  // namespace

struct SentinelDialect::Rule {
  BreakerState state = BreakerState::Closed;
  std::int64_t nextRetry = 0;                                      // ms
  std::int64_t bucket = std::numeric_limits<std::int64_t>::min();  // window start, ms
  std::uint32_t total = 0, bad = 0;  // bad: slow (grade 0) or errors (grades 1, 2)
};

SentinelDialect::SentinelDialect(SentinelConfig cfg, std::uint64_t seed, EventSink* sink)
    : DialectCluster(seed, sink), cfg_(std::move(cfg)) {}
SentinelDialect::~SentinelDialect() = default;

void SentinelDialect::onAdded(InstanceId) {
  m_.emplace_back(cfg_.rules.size());
}

BreakerState SentinelDialect::ruleState(InstanceId id, std::size_t rule) const {
  return m_[id][rule].state;
}

bool SentinelDialect::succeeded(int status, Outcome outcome, Micros latency) const {
  const Micros rtMs = latency / kMicrosPerMilli;
  for (const SentinelRule& r : cfg_.rules) {
    if (r.grade == 0 && static_cast<double>(rtMs) > std::round(r.count)) return false;
    if (r.grade != 0 && classify(kClassify, status, outcome) == Verdict::Failure) return false;
  }
  return cfg_.rules.empty() ? classify(kClassify, status, outcome) != Verdict::Failure : true;
}

// The member shows the most restrictive of its rules' states.
void SentinelDialect::sync(InstanceId id, Reason reason, Micros at, double value,
                           std::uint32_t calls) {
  BreakerState s = BreakerState::Closed;
  for (const Rule& r : m_[id]) {
    if (r.state == BreakerState::Open) s = BreakerState::Open;
    if (r.state == BreakerState::HalfOpen && s == BreakerState::Closed) s = BreakerState::HalfOpen;
  }
  if (s == state(id)) return;
  Micros openFor = 0;
  for (std::size_t i = 0; i < m_[id].size(); ++i)
    if (m_[id][i].state == BreakerState::Open)
      openFor = std::max(openFor, seconds(cfg_.rules[i].timeWindow));
  const bool slowRule = reason == Reason::SlowRate;
  transition(id, s, reason, at, s == BreakerState::Open ? openFor : 0, slowRule ? 0 : value,
             slowRule ? value : 0, calls);
  if (s == BreakerState::Closed) rampComplete(id, at);
}

void SentinelDialect::setRule(InstanceId id, std::size_t i, BreakerState to, Reason reason,
                              Micros at, double value, std::uint32_t calls) {
  Rule& r = m_[id][i];
  const SentinelRule& c = cfg_.rules[i];
  r.state = to;
  if (to == BreakerState::Open) r.nextRetry = epochMs(at) + c.timeWindow * 1000;  // no backoff
  if (to == BreakerState::Closed) r.total = r.bad = 0;  // fromHalfOpenToClose: resetStat()
  sync(id, reason, at, value, calls);
}

DialectDecision SentinelDialect::doAdmit(InstanceId id, Micros now) {
  const std::int64_t ms = epochMs(now);
  std::vector<std::size_t> flipped;
  for (std::size_t i = 0; i < m_[id].size(); ++i) {
    Rule& r = m_[id][i];
    if (r.state == BreakerState::Closed) continue;
    // tryPass: OPEN with the retry time reached wins the CAS OPEN→HALF_OPEN and passes;
    // everything else that is not CLOSED is blocked.
    if (r.state == BreakerState::Open && ms >= r.nextRetry) {
      setRule(id, i, BreakerState::HalfOpen, Reason::OpenElapsed, now, 0, 0);
      flipped.push_back(i);
      continue;
    }
    const RejectReason why =
        r.state == BreakerState::Open ? RejectReason::BreakerOpen : RejectReason::HalfOpen;
    // A probe admitted by an earlier rule but blocked here: that rule goes back to OPEN with
    // its retry time unchanged (whenTerminate hook for #1638).
    for (std::size_t j : flipped) {
      m_[id][j].state = BreakerState::Open;
      sync(id, Reason::ProbeFailed, now, 1.0, 0);
    }
    return {Admission::Reject, why};
  }
  return {flipped.empty() ? Admission::Admit : Admission::Probe};
}

void SentinelDialect::doRecord(InstanceId id, const DialectDecision&, Micros end, Micros latency,
                               int status, Outcome outcome) {
  const std::int64_t endMs = epochMs(end);
  const std::int64_t rt = endMs - epochMs(end - latency);
  const bool error = classify(kClassify, status, outcome) == Verdict::Failure;
  for (std::size_t i = 0; i < m_[id].size(); ++i) {
    Rule& r = m_[id][i];
    const SentinelRule& c = cfg_.rules[i];
    // One LeapArray bucket aligned to multiples of statIntervalMs: a tumbling window.
    const std::int64_t start =
        endMs - (((endMs % c.statIntervalMs) + c.statIntervalMs) % c.statIntervalMs);
    if (start != r.bucket) {
      r.bucket = start;
      r.total = r.bad = 0;
    }
    const bool bad = c.grade == 0 ? static_cast<double>(rt) > std::round(c.count) : error;
    ++r.total;
    r.bad += bad;
    const Reason trip = c.grade == 0 ? Reason::SlowRate : Reason::ErrorRate;
    if (r.state == BreakerState::Open) continue;
    if (r.state == BreakerState::HalfOpen) {  // the first completion decides
      if (bad)
        setRule(id, i, BreakerState::Open, Reason::ProbeFailed, end, 1.0, r.total);
      else
        setRule(id, i, BreakerState::Closed, Reason::ProbeStreak, end, 0, r.total);
      continue;
    }
    if (static_cast<std::int64_t>(r.total) < c.minRequestAmount) continue;
    const double ratio = static_cast<double>(r.bad) / static_cast<double>(r.total);
    bool open = false;
    double value = ratio;
    if (c.grade == 0) {
      open = ratio > c.slowRatioThreshold ||
             (ratio == c.slowRatioThreshold && c.slowRatioThreshold == 1.0);
    } else if (c.grade == 1) {
      open = ratio > c.count;
    } else {
      open = static_cast<double>(r.bad) > c.count;
    }
    if (open) setRule(id, i, BreakerState::Open, trip, end, value, r.total);
  }
}

// ---- configuration --------------------------------------------------------------------------

SentinelConfig parseSentinelConfig(std::string_view text, const std::string& source,
                                   std::string_view resource) {
  const NativeReader r(source);
  const YAML::Node root = loadNative(text, source);
  SentinelConfig c;
  std::vector<YAML::Node> items;
  if (root.IsSequence()) {
    for (const auto& n : root) items.push_back(n);
  } else if (root.IsMap()) {
    items.push_back(root);
  } else {
    r.fail(root.Mark(), "", "expected a JSON array of DegradeRule objects");
  }
  for (std::size_t k = 0; k < items.size(); ++k) {
    const YAML::Node& n = items[k];
    const std::string path = "[" + std::to_string(k) + "]";
    auto key = [&](const char* f) { return path + "." + f; };
    r.checkNative(n, path,
                  {"resource", "grade", "count", "timeWindow", "minRequestAmount", "statIntervalMs",
                   "slowRatioThreshold"},
                  {"limitApp", "id", "regex"}, &c.ignoredKeys);
    SentinelRule rule;
    if (auto v = NativeReader::get(n, "resource")) rule.resource = r.scalar(v, key("resource"));
    if (auto v = NativeReader::get(n, "grade"))
      rule.grade = static_cast<int>(r.whole(v, key("grade"), 0, 2));
    // DegradeRule.count defaults to 0 (DegradeRuleManager.isValidRule: count >= 0).
    if (const YAML::Node cnt = NativeReader::get(n, "count")) {
      rule.count = r.num(cnt, key("count"), 0, 1e15);
      if (rule.grade == 1 && rule.count > 1)
        r.fail(cnt.Mark(), key("count"), "an exception ratio must be in [0, 1]");
    }
    const YAML::Node tw = r.need(n, "timeWindow", path);
    rule.timeWindow = r.whole(tw, key("timeWindow"), 1, 1000000000);  // seconds, > 0
    if (auto v = NativeReader::get(n, "minRequestAmount"))
      rule.minRequestAmount = r.whole(v, key("minRequestAmount"), 1, 2000000000);
    if (auto v = NativeReader::get(n, "statIntervalMs"))
      rule.statIntervalMs = r.whole(v, key("statIntervalMs"), 1, 2000000000);
    if (auto v = NativeReader::get(n, "slowRatioThreshold")) {
      if (rule.grade != 0)
        r.fail(v.Mark(), key("slowRatioThreshold"), "only a grade 0 (slow ratio) rule has it");
      rule.slowRatioThreshold = r.num(v, key("slowRatioThreshold"), 0, 1);
    }
    if (!resource.empty() && rule.resource != resource) continue;
    c.rules.push_back(rule);
  }
  if (c.rules.empty())
    r.fail(root.Mark(), "resource",
           resource.empty() ? std::string("no DegradeRule")
                            : "no DegradeRule for resource '" + std::string(resource) + "'");
  return c;
}

}  // namespace spillway::dialects
