#include "spillway/dialects/nginx.hpp"

#include <algorithm>
#include <cctype>

#include "spillway/dialects/native_config.hpp"

namespace spillway::dialects {

namespace {
// ngx_time(): whole seconds.
std::int64_t sec(Micros t) {
  return t >= 0 ? t / kMicrosPerSecond : -((-t + kMicrosPerSecond - 1) / kMicrosPerSecond);
}
}  // namespace

struct NginxDialect::Peer {
  NginxServer cfg;
  std::uint32_t fails = 0;
  std::int64_t accessed = 0, checked = 0;  // seconds
};

NginxDialect::NginxDialect(NginxConfig cfg, std::uint64_t seed, EventSink* sink)
    : DialectCluster(seed, sink), cfg_(std::move(cfg)) {}
NginxDialect::~NginxDialect() = default;

std::uint32_t NginxDialect::fails(InstanceId id) const {
  return m_[id].fails;
}

void NginxDialect::onAdded(InstanceId id) {
  Peer p;
  auto it = cfg_.servers.find(name(id));
  p.cfg = it != cfg_.servers.end() ? it->second : cfg_.defaults;
  m_.push_back(p);
}

bool NginxDialect::unsuccessful(int status, Outcome outcome) const {
  // error, timeout and invalid_header always count; http_* only when listed (403/404 never).
  if (outcome == Outcome::Timeout || outcome == Outcome::Reset || status == 0) return true;
  if (status == 403 || status == 404) return false;
  return std::find(cfg_.nextUpstreamStatuses.begin(), cfg_.nextUpstreamStatuses.end(), status) !=
         cfg_.nextUpstreamStatuses.end();
}

bool NginxDialect::succeeded(int status, Outcome outcome, Micros) const {
  return !unsuccessful(status, outcome) && status < 500;
}

bool NginxDialect::down(InstanceId id, std::int64_t nowSec) const {
  const Peer& p = m_[id];
  return p.cfg.maxFails && p.fails >= p.cfg.maxFails &&
         nowSec - p.checked <= sec(p.cfg.failTimeout);
}

void NginxDialect::doAdvance(Micros now) {
  // fail_timeout over: the next selection is a trial (OPEN → HALF_OPEN), at the first whole
  // second where now - checked > fail_timeout.
  for (InstanceId id = 0; id < m_.size(); ++id) {
    if (state(id) != BreakerState::Open) continue;
    const Peer& p = m_[id];
    const std::int64_t at = p.checked + sec(p.cfg.failTimeout) + 1;
    if (sec(now) >= at) transition(id, BreakerState::HalfOpen, Reason::OpenElapsed, seconds(at));
  }
}

DialectDecision NginxDialect::doAdmit(InstanceId id, Micros now) {
  if (groupSize(id) == 1) return {};  // peers->single: never marked down
  Peer& p = m_[id];
  const std::int64_t s = sec(now);
  if (down(id, s))
    return {Admission::Reject, state(id) == BreakerState::HalfOpen ? RejectReason::HalfOpen
                                                                   : RejectReason::BreakerOpen};
  // Selected: a peer whose fail_timeout has passed is checked again from now.
  const bool trial = p.cfg.maxFails && p.fails >= p.cfg.maxFails;
  if (s - p.checked > sec(p.cfg.failTimeout)) p.checked = s;
  return {trial ? Admission::Probe : Admission::Admit};
}

void NginxDialect::doRecord(InstanceId id, const DialectDecision&, Micros end, Micros, int status,
                            Outcome outcome) {
  if (groupSize(id) == 1) return;  // no accounting for a single server
  Peer& p = m_[id];
  const std::int64_t s = sec(end);
  if (unsuccessful(status, outcome)) {
    ++p.fails;
    p.accessed = p.checked = s;
    if (p.cfg.maxFails && p.fails >= p.cfg.maxFails)
      transition(id, BreakerState::Open,
                 state(id) == BreakerState::HalfOpen ? Reason::ProbeFailed : Reason::ErrorRate, end,
                 p.cfg.failTimeout, 0, 0, p.fails);
  } else if (p.accessed < p.checked) {  // "mark peer live if check passed"
    p.fails = 0;
    if (state(id) != BreakerState::Closed) {
      transition(id, BreakerState::Closed, Reason::ProbeStreak, end);
      rampComplete(id, end);
    }
  }
}

// ---- configuration --------------------------------------------------------------------------

namespace {

struct Token {
  std::string text;
  long line;
};

// nginx.conf tokens: words, `{`, `}`, `;`; comments dropped; quotes kept simple.
std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> out;
  long line = 1;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '{' || c == '}' || c == ';') {
      out.push_back({std::string(1, c), line});
      ++i;
    } else {
      std::size_t j = i;
      while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j])) &&
             text[j] != ';' && text[j] != '{' && text[j] != '}')
        ++j;
      std::string w(text.substr(i, j - i));
      if (w.size() >= 2 && (w.front() == '"' || w.front() == '\'')) w = w.substr(1, w.size() - 2);
      out.push_back({w, line});
      i = j;
    }
  }
  return out;
}

}  // namespace

NginxConfig parseNginxConfig(std::string_view text, const std::string& source,
                             std::string_view upstream) {
  NginxConfig c;
  const std::vector<Token> t = tokenize(text);
  auto fail = [&](long line, const std::string& field, const std::string& what) {
    throw InputError(source, line, field, what);
  };
  bool found = false, haveDefaults = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].text == "proxy_next_upstream") {
      for (std::size_t j = i + 1; j < t.size() && t[j].text != ";"; ++j) {
        const std::string& w = t[j].text;
        if (w.rfind("http_", 0) == 0) {
          try {
            c.nextUpstreamStatuses.push_back(std::stoi(w.substr(5)));
          } catch (...) {
            fail(t[j].line, "proxy_next_upstream", "unknown condition '" + w + "'");
          }
        }
      }
      continue;
    }
    if (t[i].text != "upstream" || i + 2 >= t.size() || t[i + 2].text != "{") continue;
    const std::string name = t[i + 1].text;
    if (found || (!upstream.empty() && name != upstream)) continue;
    found = true;
    std::size_t j = i + 3;
    for (; j < t.size() && t[j].text != "}"; ++j) {
      if (t[j].text != "server") {  // other directives (zone, keepalive, hash...) end at ';'
        while (j < t.size() && t[j].text != ";" && t[j].text != "}") ++j;
        continue;
      }
      if (j + 1 >= t.size()) fail(t[j].line, "server", "address is missing");
      const std::string addr = t[j + 1].text;
      NginxServer s;
      bool backup = false;
      for (j += 2; j < t.size() && t[j].text != ";"; ++j) {
        const std::string& w = t[j].text;
        const auto eq = w.find('=');
        const std::string k = w.substr(0, eq);
        const std::string v = eq == std::string::npos ? "" : w.substr(eq + 1);
        if (k == "max_fails") {
          try {
            const long n = std::stol(v);
            if (n < 0) throw 0;
            s.maxFails = static_cast<std::uint32_t>(n);
          } catch (...) {
            fail(t[j].line, "server." + k, "expected a whole number >= 0, got '" + v + "'");
          }
        } else if (k == "fail_timeout") {
          // nginx reads fail_timeout in whole seconds (bare = seconds) and refuses "ms"
          // (ngx_parse_time with is_sec): nginx -t fails with 'invalid parameter'.
          const auto d = NativeReader::parseNativeDuration(v, BareUnit::Seconds);
          if (!d || *d < 0 || v.find("ms") != std::string::npos)
            fail(t[j].line, "server." + k,
                 "expected a time in seconds (e.g. 10s, 1m; nginx refuses ms), got '" + v + "'");
          s.failTimeout = *d;
        } else if (k == "backup") {
          backup = true;
        } else if (k == "weight" || k == "max_conns" || k == "down" || k == "slow_start" ||
                   k == "resolve" || k == "route" || k == "service" || k == "drain") {
          c.ignoredKeys.push_back("server." + k);
        } else {
          fail(t[j].line, "server." + k, "unknown server parameter");
        }
      }
      if (backup) continue;  // backups only serve when every primary is down: not emulated
      c.servers[addr] = s;
      if (!haveDefaults) {
        c.defaults = s;
        haveDefaults = true;
      }
    }
  }
  if (!found)
    fail(0, "upstream",
         upstream.empty() ? std::string("no upstream block")
                          : "no upstream named '" + std::string(upstream) + "'");
  return c;
}

}  // namespace spillway::dialects
