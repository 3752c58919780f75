#include "spillway/dialects/haproxy.hpp"

#include <algorithm>
#include <cctype>

#include "spillway/dialects/native_config.hpp"

namespace spillway::dialects {

namespace {
// observe layer7: valid codes are 100–499, 501 and 505; no response, resets and read timeouts
// are errors. layer4 sees only connection failures.
bool observedError(HaproxyServer::Observe o, int status, Outcome outcome) {
  if (outcome == Outcome::Reset || status <= 0) return true;
  if (o == HaproxyServer::Observe::Layer4) return false;
  if (outcome == Outcome::Timeout) return true;
  return !((status >= 100 && status <= 499) || status == 501 || status == 505);
}
}  // namespace

struct HaproxyDialect::Server {
  HaproxyServer cfg;
  std::uint32_t health = 0;
  std::uint32_t consecutive = 0;
  Micros nextCheck = kNever;
  bool lastGood = true;
  Micros upSince = kNever;  // start of the slowstart ramp
  bool ramping = false;
};

HaproxyDialect::HaproxyDialect(HaproxyConfig cfg, std::uint64_t seed, EventSink* sink)
    : DialectCluster(seed, sink), cfg_(std::move(cfg)) {}
HaproxyDialect::~HaproxyDialect() = default;

std::uint32_t HaproxyDialect::health(InstanceId id) const {
  return m_[id].health;
}
Micros HaproxyDialect::nextCheck(InstanceId id) const {
  return m_[id].nextCheck;
}

void HaproxyDialect::onAdded(InstanceId id) {
  Server s;
  auto it = cfg_.servers.find(name(id));
  s.cfg = it != cfg_.servers.end() ? it->second : cfg_.defaults;
  s.health = s.cfg.rise;  // "up, but will fall down at first failure"
  m_.push_back(s);
}

bool HaproxyDialect::succeeded(int status, Outcome outcome, Micros) const {
  return !observedError(HaproxyServer::Observe::Layer7, status, outcome);
}

void HaproxyDialect::observe(InstanceId id, Micros, bool good) {
  m_[id].lastGood = good;
}

void HaproxyDialect::setStartedAt(Micros at) {
  startedAt_ = at;
}

// start_checks(): the checked servers' first checks are spread over the shortest interval above
// 1 s (at least the server's own) by their position in the configuration. Without the start
// time, or for a server the configuration does not name, checks start with its first call.
Micros HaproxyDialect::firstCheck(InstanceId id) const {
  const auto pos = std::find(cfg_.order.begin(), cfg_.order.end(), name(id));
  if (startedAt_ == kNever || pos == cfg_.order.end()) return firstSeen(id) + interval(id);
  const auto startInter = [](const HaproxyServer& c) {  // health is `rise` at start
    const bool full = c.fall <= 1;
    return full || !c.fastinter ? c.inter : c.fastinter;
  };
  Micros minInter = 0;
  std::int64_t checked = 0, position = 0;
  for (const std::string& server : cfg_.order) {
    const HaproxyServer& c = cfg_.servers.at(server);
    if (!c.check) continue;
    if (server == name(id)) position = checked;
    ++checked;
    const Micros i = startInter(c);
    if (i > millis(1000) && (minInter == 0 || i < minInter)) minInter = i;
  }
  const Micros spread = std::max(minInter, startInter(m_[id].cfg)) / 1000;  // whole ms
  return startedAt_ + millis(spread * position / std::max<std::int64_t>(checked, 1));
}

void HaproxyDialect::recordHealth(std::string_view instance, Micros at, bool healthy) {
  auto it = health_.find(instance);
  if (it == health_.end())
    it = health_.emplace(std::string(instance), decltype(it->second)()).first;
  it->second.emplace_back(at, healthy);
  healthSorted_ = false;
}

// The health endpoint's last recorded answer at or before `at` (healthy before the first),
// else the last call outcome.
bool HaproxyDialect::checkPasses(InstanceId id, Micros at) const {
  const auto it = health_.find(name(id));
  if (it == health_.end()) return m_[id].lastGood;
  const auto& v = it->second;
  const auto after =
      std::upper_bound(v.begin(), v.end(), at, [](Micros t, const auto& h) { return t < h.first; });
  return after == v.begin() || std::prev(after)->second;
}

// srv_getinter: inter when fully up, downinter when fully down, fastinter in between.
Micros HaproxyDialect::interval(InstanceId id) const {
  const Server& s = m_[id];
  const HaproxyServer& c = s.cfg;
  if (s.health == c.rise + c.fall - 1) return c.inter;
  if (state(id) == BreakerState::Open && s.health == 0) return c.downinter ? c.downinter : c.inter;
  return c.fastinter ? c.fastinter : c.inter;
}

void HaproxyDialect::checkResult(InstanceId id, bool ok, Micros at, Reason downReason) {
  Server& s = m_[id];
  const std::uint32_t max = s.cfg.rise + s.cfg.fall - 1;
  const bool up = state(id) != BreakerState::Open;
  if (ok) {
    // set_server_check_status: one step up, and from rise on straight to full health — an UP
    // server is restored by one passing check; a passing check also clears the observe errors.
    if (s.health < max && ++s.health >= s.cfg.rise) s.health = max;
    if (s.cfg.observe != HaproxyServer::Observe::None) s.consecutive = 0;
    if (!up && s.health >= s.cfg.rise) {
      transition(id, BreakerState::Closed, Reason::ProbeStreak, at);
      if (s.cfg.slowstart > 0) {
        s.ramping = true;
        s.upSince = at;
      } else {
        rampComplete(id, at);
      }
    }
    return;
  }
  if (s.health > s.cfg.rise) {
    --s.health;
    return;
  }
  s.health = 0;
  if (up) {
    s.ramping = false;
    transition(id, BreakerState::Open, downReason, at, 0, 0, 0, s.consecutive);
  }
}

void HaproxyDialect::doAdvance(Micros now) {
  if (!healthSorted_) {
    for (auto& [server, v] : health_)
      std::stable_sort(v.begin(), v.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    healthSorted_ = true;
  }
  for (InstanceId id = 0; id < m_.size(); ++id) {
    Server& s = m_[id];
    // The slowstart ramp ends at upSince + slowstart, in time order with the checks.
    auto rampDue = [&](Micros by) {
      if (s.ramping && s.upSince + s.cfg.slowstart <= by) {
        s.ramping = false;
        rampComplete(id, s.upSince + s.cfg.slowstart);
      }
    };
    if (s.cfg.check && s.nextCheck == kNever && firstSeen(id) != kNever)
      s.nextCheck = firstCheck(id);
    while (s.cfg.check && s.nextCheck != kNever && s.nextCheck <= now) {
      const Micros at = s.nextCheck;
      rampDue(at);
      checkResult(id, checkPasses(id, at), at, Reason::ProbeFailed);
      s.nextCheck = at + interval(id);
    }
    rampDue(now);
  }
}

DialectDecision HaproxyDialect::doAdmit(InstanceId id, Micros now) {
  Server& s = m_[id];
  if (state(id) == BreakerState::Open) return {Admission::Reject, RejectReason::BreakerOpen};
  if (s.ramping) {
    // slowstart: weight and maxconn grow linearly from (almost) nothing to 100 %.
    const double share =
        std::max(0.01, static_cast<double>(now - s.upSince) / static_cast<double>(s.cfg.slowstart));
    if (rng(id).uniform() >= share) return {Admission::Reject, RejectReason::Ramp};
  }
  return {};
}

void HaproxyDialect::doRecord(InstanceId id, const DialectDecision&, Micros end, Micros, int status,
                              Outcome outcome) {
  Server& s = m_[id];
  if (s.cfg.observe == HaproxyServer::Observe::None) return;
  if (!observedError(s.cfg.observe, status, outcome)) {
    s.consecutive = 0;
    return;
  }
  if (++s.consecutive < s.cfg.errorLimit) return;
  const std::uint32_t seen = s.consecutive;
  s.consecutive = 0;
  switch (s.cfg.onError) {
    case HaproxyServer::OnError::Fastinter:
      break;
    case HaproxyServer::OnError::SuddenDeath:  // pre-fatal: one more failed check marks down
      if (s.health > s.cfg.rise) s.health = s.cfg.rise + 1;
      [[fallthrough]];
    case HaproxyServer::OnError::FailCheck:
      checkResult(id, false, end, Reason::ErrorRate);
      break;
    case HaproxyServer::OnError::MarkDown:
      s.health = s.cfg.rise;
      checkResult(id, false, end, Reason::ErrorRate);
      break;
  }
  (void)seen;
  // Every mode forces fastinter: the next check comes no later than now + fastinter.
  if (s.cfg.check) {
    const Micros fast = end + (s.cfg.fastinter ? s.cfg.fastinter : s.cfg.inter);
    if (s.nextCheck == kNever || s.nextCheck > fast) s.nextCheck = fast;
  }
}

// ---- configuration --------------------------------------------------------------------------

namespace {

bool takesArg(const std::string& k) {
  static const char* const kArgs[] = {"inter",
                                      "fastinter",
                                      "downinter",
                                      "rise",
                                      "fall",
                                      "observe",
                                      "error-limit",
                                      "on-error",
                                      "slowstart",
                                      "maxconn",
                                      "weight",
                                      "port",
                                      "addr",
                                      "maxqueue",
                                      "minconn",
                                      "cookie",
                                      "id",
                                      "ca-file",
                                      "crt",
                                      "sni",
                                      "track",
                                      "agent-port",
                                      "agent-inter",
                                      "agent-send",
                                      "agent-addr",
                                      "on-marked-down",
                                      "on-marked-up",
                                      "init-addr",
                                      "resolvers",
                                      "check-sni",
                                      "proto",
                                      "alpn",
                                      "check-proto",
                                      "verify",
                                      "ciphers",
                                      "source",
                                      "pool-max-conn",
                                      "pool-purge-delay",
                                      "max-reuse",
                                      "resolve-prefer",
                                      "redir",
                                      "namespace",
                                      "check-alpn",
                                      "ws",
                                      "log-proto"};
  for (const char* a : kArgs)
    if (k == a) return true;
  return false;
}

struct Line {
  std::vector<std::string> words;
  long no;
};

}  // namespace

HaproxyConfig parseHaproxyConfig(std::string_view text, const std::string& source,
                                 std::string_view backend) {
  HaproxyConfig c;
  std::vector<Line> lines;
  {
    long no = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
      const std::size_t e = std::min(text.find('\n', pos), text.size());
      std::string_view l = text.substr(pos, e - pos);
      ++no;
      if (auto h = l.find('#'); h != std::string_view::npos) l = l.substr(0, h);
      Line line{{}, no};
      std::size_t i = 0;
      while (i < l.size()) {
        while (i < l.size() && std::isspace(static_cast<unsigned char>(l[i]))) ++i;
        std::size_t j = i;
        while (j < l.size() && !std::isspace(static_cast<unsigned char>(l[j]))) ++j;
        if (j > i) line.words.emplace_back(l.substr(i, j - i));
        i = j;
      }
      if (!line.words.empty()) lines.push_back(line);
      pos = e + 1;
    }
  }
  auto fail = [&](long no, const std::string& field, const std::string& what) {
    throw InputError(source, no, field, what);
  };
  auto apply = [&](const Line& l, std::size_t from, HaproxyServer& s) {
    for (std::size_t i = from; i < l.words.size(); ++i) {
      const std::string& k = l.words[i];
      std::string v;
      if (takesArg(k)) {
        if (i + 1 >= l.words.size()) fail(l.no, k, "value is missing");
        v = l.words[++i];
      }
      auto time = [&](Micros lo) {
        const auto d = NativeReader::parseNativeDuration(v, BareUnit::Millis);  // bare = ms
        if (!d || *d < lo) fail(l.no, k, "expected a time (e.g. 2s, 500ms), got '" + v + "'");
        return *d;
      };
      auto whole = [&](long lo) {
        try {
          const long n = std::stol(v);
          if (n < lo) throw 0;
          return static_cast<std::uint32_t>(n);
        } catch (...) {
          fail(l.no, k, "expected a whole number >= " + std::to_string(lo) + ", got '" + v + "'");
        }
        return 0u;
      };
      if (k == "check") {
        s.check = true;
      } else if (k == "no-check") {
        s.check = false;
      } else if (k == "inter") {
        s.inter = time(1000);
      } else if (k == "fastinter") {
        s.fastinter = time(1000);
      } else if (k == "downinter") {
        s.downinter = time(1000);
      } else if (k == "rise") {
        s.rise = whole(1);
      } else if (k == "fall") {
        s.fall = whole(1);
      } else if (k == "error-limit") {
        s.errorLimit = whole(1);
      } else if (k == "slowstart") {
        s.slowstart = time(0);
      } else if (k == "observe") {
        if (v == "layer4")
          s.observe = HaproxyServer::Observe::Layer4;
        else if (v == "layer7")
          s.observe = HaproxyServer::Observe::Layer7;
        else
          fail(l.no, k, "expected layer4 or layer7, got '" + v + "'");
      } else if (k == "on-error") {
        using E = HaproxyServer::OnError;
        if (v == "fastinter")
          s.onError = E::Fastinter;
        else if (v == "fail-check")
          s.onError = E::FailCheck;
        else if (v == "sudden-death")
          s.onError = E::SuddenDeath;
        else if (v == "mark-down")
          s.onError = E::MarkDown;
        else
          fail(l.no, k,
               "expected fastinter, fail-check, sudden-death or mark-down, got '" + v + "'");
      } else {
        c.ignoredKeys.push_back(k);
      }
    }
  };
  HaproxyServer defaults;  // from the `defaults` section
  bool inDefaults = false, inTarget = false, found = false, done = false;
  HaproxyServer section;
  std::vector<std::pair<std::string, const Line*>> serverLines;
  for (const Line& l : lines) {
    const std::string& w = l.words[0];
    if (w == "defaults" || w == "global" || w == "frontend" || w == "backend" || w == "listen" ||
        w == "resolvers" || w == "userlist" || w == "peers" || w == "program") {
      inDefaults = w == "defaults";
      const bool candidate = (w == "backend" || w == "listen") && !done;
      const bool named = l.words.size() > 1 && l.words[1] == backend;
      if (inTarget) done = true;
      inTarget = candidate && !done && (backend.empty() || named);
      if (inTarget) {
        found = true;
        section = defaults;
      }
      continue;
    }
    if (w == "default-server") {
      if (inDefaults) apply(l, 1, defaults);
      if (inTarget) apply(l, 1, section);
    } else if (w == "server" && inTarget) {
      if (l.words.size() < 3) fail(l.no, "server", "expected: server NAME ADDRESS [params]");
      serverLines.emplace_back(l.words[1], &l);
    }
  }
  if (!found)
    fail(0, "backend",
         backend.empty() ? std::string("no backend or listen section")
                         : "no backend named '" + std::string(backend) + "'");
  c.defaults = section;
  bool first = true;
  for (const auto& [name, l] : serverLines) {
    HaproxyServer s = section;
    apply(*l, 3, s);
    if (s.observe != HaproxyServer::Observe::None && !s.check)
      fail(l->no, "observe", "needs health checks: add `check` to the server");
    if (!c.servers.count(name)) c.order.push_back(name);
    c.servers[name] = s;
    if (first) c.defaults = s;  // unnamed instances follow the first server
    first = false;
  }
  return c;
}

}  // namespace spillway::dialects
