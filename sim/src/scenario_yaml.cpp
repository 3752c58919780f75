#include "spillway/sim/scenario_yaml.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "spillway/input_limits.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/yaml_reader.hpp"

namespace spillway::sim {

std::string tooLong(Micros d, Micros max) {
  constexpr Micros day = Micros{24} * 3600 * 1000000;
  std::string m = formatDuration(max);
  if (max % day == 0) m += " (" + std::to_string(max / day) + " days)";
  return "must be at most " + m + " (docs/limits.md), got " + formatDuration(d);
}

namespace {

class ScenarioReader : public YamlReader {
 public:
  ScenarioReader(std::string source, std::string baseDir)
      : YamlReader(std::move(source)), baseDir_(std::move(baseDir)) {}

  Scenario read(const YAML::Node& root) const;
  std::vector<FaultSpec> faults(const YAML::Node& list, const std::string& path,
                                const std::set<std::string>& names, Micros duration) const;

 private:
  static int line(const YAML::Node& n) { return n.Mark().is_null() ? 0 : n.Mark().line + 1; }
  void requireSeq(const YAML::Node& n, const std::string& key) const {
    if (!n.IsSequence()) fail(n.Mark(), key, "expected a list");
  }
  std::string name(const YAML::Node& n, const std::string& key) const {
    const std::string s = scalar(n, key);
    if (s.empty()) fail(n.Mark(), key, "must not be empty");
    for (char c : s)
      if (c == ',' || c == '"' || c == '\n' || c == ' ')
        fail(n.Mark(), key, "names may not contain spaces, commas or quotes: '" + s + "'");
    return s;
  }
  LogNormal logNormal(const YAML::Node& n, const std::string& path) const {
    requireMap(n, path);
    checkKeys(n, path, {"median", "sigma"});
    LogNormal ln;
    ln.median = number(need(n, "median", path), join(path, "median"), 0, 1e9, true);
    if (auto v = n["sigma"]) ln.sigma = number(v, join(path, "sigma"), 0, 5, false);
    return ln;
  }
  double perToken(const YAML::Node& n, const std::string& key) const {
    return static_cast<double>(duration(n, key, 0));
  }

  void model(const YAML::Node& n, const std::string& path, ModelSpec& m) const;
  void client(const YAML::Node& n, const std::string& path, ClientSpec& c) const;
  LoadShape shape(const YAML::Node& n, const std::string& path) const;
  void retries(const YAML::Node& n, const std::string& path, RetrySpec& r) const;
  FaultSpec fault(const YAML::Node& n, const std::string& path) const;
  void gatewayFault(const YAML::Node& n, const std::string& path, FaultSpec& f) const;
  Policy policy(const YAML::Node& n) const;

  std::string baseDir_;
};

void ScenarioReader::model(const YAML::Node& n, const std::string& path, ModelSpec& m) const {
  requireMap(n, path);
  checkKeys(n, path,
            {"name", "instances", "slots", "queue", "queue_full", "service", "batching",
             "error_rate", "error_latency", "serve_abandoned", "max_requests"});
  m.line = line(n);
  m.name = name(need(n, "name", path), join(path, "name"));
  const YAML::Node insts = need(n, "instances", path);
  const std::string ip = join(path, "instances");
  if (insts.IsScalar()) {
    const std::uint32_t count = this->count(insts, ip, 1, 10000);
    for (std::uint32_t i = 1; i <= count; ++i)
      m.instances.push_back(InstanceSpec{m.name + "-" + std::to_string(i), 1.0});
  } else {
    requireSeq(insts, ip);
    if (insts.size() == 0) fail(insts.Mark(), ip, "a model needs at least one instance");
    for (std::size_t i = 0; i < insts.size(); ++i) {
      const YAML::Node it = insts[i];
      const std::string p = ip + "[" + std::to_string(i) + "]";
      InstanceSpec is;
      if (it.IsScalar()) {
        is.name = name(it, p);
      } else {
        requireMap(it, p);
        checkKeys(it, p, {"name", "weight"});
        is.name = name(need(it, "name", p), join(p, "name"));
        if (auto w = it["weight"]) is.weight = number(w, join(p, "weight"), 0, 1e6, true);
      }
      m.instances.push_back(is);
    }
  }
  if (auto v = n["slots"]) m.slotCount = count(v, join(path, "slots"), 1, 100000);
  if (auto v = n["queue"]) m.queue = count(v, join(path, "queue"), 0, 10000000);
  if (auto v = n["queue_full"]) {
    m.queueFullStatus = static_cast<int>(count(v, join(path, "queue_full"), 100, 599));
    if (m.queueFullStatus != 503 && m.queueFullStatus != 429)
      fail(v.Mark(), join(path, "queue_full"), "expected 503 or 429");
  }
  if (auto s = n["service"]) {
    const std::string sp = join(path, "service");
    requireMap(s, sp);
    checkKeys(s, sp, {"base", "per_input_token", "per_output_token", "sigma"});
    if (auto v = s["base"]) m.baseTime = duration(v, join(sp, "base"), 0);
    if (auto v = s["per_input_token"]) m.perInputToken = perToken(v, join(sp, "per_input_token"));
    if (auto v = s["per_output_token"])
      m.perOutputToken = perToken(v, join(sp, "per_output_token"));
    if (auto v = s["sigma"]) m.sigma = number(v, join(sp, "sigma"), 0, 5, false);
  }
  if (auto b = n["batching"]) {
    const std::string bp = join(path, "batching");
    requireMap(b, bp);
    checkKeys(b, bp, {"knee", "slope"});
    m.batching.knee = count(need(b, "knee", bp), join(bp, "knee"), 1, 100000);
    m.batching.slope = number(need(b, "slope", bp), join(bp, "slope"), 0, 100, false);
  }
  if (auto v = n["error_rate"]) m.errorRate = number(v, join(path, "error_rate"), 0, 1, false);
  if (auto v = n["error_latency"]) m.errorLatency = duration(v, join(path, "error_latency"), 0);
  if (auto v = n["max_requests"])
    m.maxRequests = count(v, join(path, "max_requests"), 1, 100000000);
  if (auto v = n["serve_abandoned"]) m.serveAbandoned = boolean(v, join(path, "serve_abandoned"));
}

LoadShape ScenarioReader::shape(const YAML::Node& n, const std::string& path) const {
  requireMap(n, path);
  LoadShape s;
  s.kind = choice<ProfileKind>(need(n, "type", path), join(path, "type"),
                               {{"constant", ProfileKind::Constant},
                                {"step", ProfileKind::Step},
                                {"ramp", ProfileKind::Ramp},
                                {"diurnal", ProfileKind::Diurnal},
                                {"burst", ProfileKind::Burst}});
  switch (s.kind) {
    case ProfileKind::Constant:
      checkKeys(n, path, {"type"});
      break;
    case ProfileKind::Step: {
      checkKeys(n, path, {"type", "steps"});
      const YAML::Node steps = need(n, "steps", path);
      const std::string sp = join(path, "steps");
      requireSeq(steps, sp);
      Micros prev = -1;
      for (std::size_t i = 0; i < steps.size(); ++i) {
        const std::string p = sp + "[" + std::to_string(i) + "]";
        requireMap(steps[i], p);
        checkKeys(steps[i], p, {"at", "factor"});
        const Micros at = duration(need(steps[i], "at", p), join(p, "at"), 0);
        if (at <= prev) fail(steps[i].Mark(), join(p, "at"), "steps must be in time order");
        prev = at;
        s.steps.emplace_back(at,
                             number(need(steps[i], "factor", p), join(p, "factor"), 0, 1e6, false));
      }
      break;
    }
    case ProfileKind::Ramp:
      checkKeys(n, path, {"type", "start", "end", "from", "to"});
      s.start = duration(need(n, "start", path), join(path, "start"), 0);
      s.end = duration(need(n, "end", path), join(path, "end"), 0);
      if (s.end <= s.start) fail(n["end"].Mark(), join(path, "end"), "must be after start");
      if (auto v = n["from"]) s.from = number(v, join(path, "from"), 0, 1e6, false);
      if (auto v = n["to"]) s.to = number(v, join(path, "to"), 0, 1e6, false);
      break;
    case ProfileKind::Diurnal:
      checkKeys(n, path, {"type", "amplitude", "period", "phase"});
      s.amplitude = number(need(n, "amplitude", path), join(path, "amplitude"), 0, 1, false);
      if (auto v = n["period"]) s.period = duration(v, join(path, "period"), 1, false, true);
      if (auto v = n["phase"]) s.phase = duration(v, join(path, "phase"), 0);
      break;
    case ProfileKind::Burst:
      checkKeys(n, path, {"type", "start", "duration", "multiplier"});
      s.start = duration(need(n, "start", path), join(path, "start"), 0);
      s.end = s.start + duration(need(n, "duration", path), join(path, "duration"), 1, false, true);
      s.multiplier = number(need(n, "multiplier", path), join(path, "multiplier"), 0, 1e6, false);
      break;
  }
  return s;
}

void ScenarioReader::retries(const YAML::Node& n, const std::string& path, RetrySpec& r) const {
  requireMap(n, path);
  checkKeys(n, path, {"max", "backoff", "multiplier", "max_backoff", "jitter", "budget", "on"});
  if (auto v = n["max"]) r.max = count(v, join(path, "max"), 0, 100);
  if (auto v = n["backoff"]) r.backoff = duration(v, join(path, "backoff"), 0);
  if (auto v = n["multiplier"]) r.multiplier = number(v, join(path, "multiplier"), 1, 100, false);
  if (auto v = n["max_backoff"]) r.maxBackoff = duration(v, join(path, "max_backoff"), 0);
  if (auto v = n["jitter"])
    r.jitter = choice<RetrySpec::Jitter>(v, join(path, "jitter"),
                                         {{"none", RetrySpec::Jitter::None},
                                          {"full", RetrySpec::Jitter::Full},
                                          {"equal", RetrySpec::Jitter::Equal}});
  if (auto v = n["budget"]) r.budget = number(v, join(path, "budget"), 0, 100, false);
  if (auto on = n["on"]) {
    const std::string op = join(path, "on");
    requireSeq(on, op);
    r.onError = r.onTimeout = r.onThrottle = r.onRejected = false;
    for (std::size_t i = 0; i < on.size(); ++i) {
      const std::string p = op + "[" + std::to_string(i) + "]";
      const std::string s = scalar(on[i], p);
      if (s == "error")
        r.onError = true;
      else if (s == "timeout")
        r.onTimeout = true;
      else if (s == "throttle")
        r.onThrottle = true;
      else if (s == "rejected")
        r.onRejected = true;
      else
        fail(on[i].Mark(), p,
             "expected one of error, timeout, throttle, rejected, got '" + s + "'");
    }
  }
}

void ScenarioReader::client(const YAML::Node& n, const std::string& path, ClientSpec& c) const {
  requireMap(n, path);
  checkKeys(n, path,
            {"name", "model", "criticality", "rate", "profile", "timeout", "deadline", "slo",
             "concurrency", "retries", "tokens", "sessions", "tenant", "route", "tags", "cache",
             "drill", "sla_class"});
  c.line = line(n);
  c.name = name(need(n, "name", path), join(path, "name"));
  c.model = name(need(n, "model", path), join(path, "model"));
  if (auto v = n["criticality"])
    c.criticality = choice<Criticality>(
        v, join(path, "criticality"),
        {{"core", Criticality::Core}, {"non_critical", Criticality::NonCritical}});
  c.rate = number(need(n, "rate", path), join(path, "rate"), 0, 1e8, false);
  if (auto v = n["drill"]) c.drill = boolean(v, join(path, "drill"));
  if (auto v = n["sla_class"]) c.slaClass = name(v, join(path, "sla_class"));
  if (auto p = n["profile"]) {
    const std::string pp = join(path, "profile");
    if (p.IsMap()) {
      c.profile.push_back(shape(p, pp));
    } else {
      requireSeq(p, pp);
      for (std::size_t i = 0; i < p.size(); ++i)
        c.profile.push_back(shape(p[i], pp + "[" + std::to_string(i) + "]"));
    }
  }
  if (auto v = n["timeout"]) c.timeout = duration(v, join(path, "timeout"), 1, false, true);
  if (auto v = n["deadline"]) c.deadline = duration(v, join(path, "deadline"), 1, false, true);
  if (auto v = n["slo"]) c.slo = duration(v, join(path, "slo"), 1, false, true);
  if (auto v = n["tenant"]) c.tenant = name(v, join(path, "tenant"));
  if (auto v = n["route"]) c.route = scalar(v, join(path, "route"));
  if (auto t = n["tags"]) {
    const std::string tp = join(path, "tags");
    requireSeq(t, tp);
    c.tags.clear();
    for (std::size_t i = 0; i < t.size(); ++i)
      c.tags.push_back(name(t[i], tp + "[" + std::to_string(i) + "]"));
  }
  if (auto k = n["cache"]) {
    const std::string kp = join(path, "cache");
    requireMap(k, kp);
    checkKeys(k, kp, {"keys", "zipf"});
    c.cache.keys = count(need(k, "keys", kp), join(kp, "keys"), 1, 10000000);
    if (auto v = k["zipf"]) c.cache.zipf = number(v, join(kp, "zipf"), 0, 10, false);
  }
  if (auto v = n["concurrency"]) c.concurrency = count(v, join(path, "concurrency"), 1, 10000000);
  if (auto v = n["retries"]) retries(v, join(path, "retries"), c.retries);
  if (auto t = n["tokens"]) {
    const std::string tp = join(path, "tokens");
    requireMap(t, tp);
    checkKeys(t, tp, {"input", "output"});
    if (auto v = t["input"]) c.inputTokens = logNormal(v, join(tp, "input"));
    if (auto v = t["output"]) c.outputTokens = logNormal(v, join(tp, "output"));
  }
  if (auto s = n["sessions"]) {
    const std::string sp = join(path, "sessions");
    requireMap(s, sp);
    checkKeys(s, sp, {"turns", "think", "context_growth"});
    c.sessions.turns = number(need(s, "turns", sp), join(sp, "turns"), 1, 10000, false);
    if (auto v = s["think"]) c.sessions.think = duration(v, join(sp, "think"), 0);
    if (auto v = s["context_growth"])
      c.sessions.contextGrowth = number(v, join(sp, "context_growth"), 0, 10, false);
  }
}

FaultSpec ScenarioReader::fault(const YAML::Node& n, const std::string& path) const {
  requireMap(n, path);
  FaultSpec f;
  f.line = line(n);
  f.kind = choice<FaultKind>(need(n, "type", path), join(path, "type"),
                             {{"latency_drift", FaultKind::LatencyDrift},
                              {"delay", FaultKind::Delay},
                              {"errors", FaultKind::Errors},
                              {"throttle", FaultKind::Throttle},
                              {"hang", FaultKind::Hang},
                              {"reset", FaultKind::Reset},
                              {"capacity_loss", FaultKind::CapacityLoss},
                              {"outage", FaultKind::Outage},
                              {"recover", FaultKind::Recover}});
  switch (f.kind) {
    case FaultKind::LatencyDrift:
      checkKeys(n, path,
                {"type", "target", "at", "benign", "drill_only", "duration", "ramp", "multiplier"});
      f.value = number(need(n, "multiplier", path), join(path, "multiplier"), 1, 1e6, false);
      break;
    case FaultKind::Delay:
      checkKeys(n, path,
                {"type", "target", "at", "benign", "drill_only", "duration", "ramp", "delay"});
      f.delay = duration(need(n, "delay", path), join(path, "delay"), 1, false, true);
      break;
    case FaultKind::Errors:
      checkKeys(
          n, path,
          {"type", "target", "at", "benign", "drill_only", "duration", "ramp", "rate", "status"});
      f.value = number(need(n, "rate", path), join(path, "rate"), 0, 1, true);
      if (auto v = n["status"])
        f.status = static_cast<int>(count(v, join(path, "status"), 500, 599));
      break;
    case FaultKind::Throttle:
    case FaultKind::Hang:
    case FaultKind::Reset:
      checkKeys(n, path,
                {"type", "target", "at", "benign", "drill_only", "duration", "ramp", "rate"});
      if (auto v = n["rate"]) f.value = number(v, join(path, "rate"), 0, 1, true);
      break;
    case FaultKind::CapacityLoss:
      checkKeys(n, path, {"type", "target", "at", "benign", "drill_only", "duration", "remaining"});
      f.value = number(need(n, "remaining", path), join(path, "remaining"), 0, 1, false, true);
      break;
    case FaultKind::Outage:
      checkKeys(n, path, {"type", "target", "at", "benign", "drill_only", "duration"});
      break;
    case FaultKind::Recover:
      checkKeys(n, path, {"type", "target", "at", "benign", "drill_only"});
      break;
  }
  f.target = name(need(n, "target", path), join(path, "target"));
  f.at = duration(need(n, "at", path), join(path, "at"), 0);
  if (auto v = n["duration"]) f.duration = duration(v, join(path, "duration"), 1, false, true);
  if (auto v = n["ramp"]) f.ramp = duration(v, join(path, "ramp"), 0);
  if (auto v = n["benign"]) f.benign = boolean(v, join(path, "benign"));
  return f;
}

// A fault on the gateway itself: delay, errors or reset (and their recover); `drill_only` is
// for gateway faults only (an instance is shared by every caller).
void ScenarioReader::gatewayFault(const YAML::Node& n, const std::string& path,
                                  FaultSpec& f) const {
  if (auto v = n["drill_only"]) {
    f.drillOnly = boolean(v, join(path, "drill_only"));
    if (f.target != kGatewayTarget)
      fail(v.Mark(), join(path, "drill_only"),
           "only a fault on the gateway can be limited to drill traffic (target: gateway)");
  }
  if (f.target != kGatewayTarget) return;
  const bool ok = f.kind == FaultKind::Delay || f.kind == FaultKind::Errors ||
                  f.kind == FaultKind::Reset || f.kind == FaultKind::Recover;
  if (!ok)
    fail(n["type"].Mark(), join(path, "type"),
         "a fault on the gateway is delay, errors or reset (or recover)");
}

Policy ScenarioReader::policy(const YAML::Node& n) const {
  if (n.IsMap()) return parsePolicyNode(n, source());
  const std::string p = scalar(n, "policy");
  std::filesystem::path path(p);
  if (path.is_relative() && !baseDir_.empty()) path = std::filesystem::path(baseDir_) / path;
  std::string text;
  try {
    text = readInputFile(path.string(), input_limits::kPolicy, "policy file");
  } catch (const InputError& e) {
    const std::string& d = e.detail();
    if (d.rfind("cannot open", 0) == 0)  // "cannot open policy file 'p.yaml': No such file…"
      fail(
          n.Mark(), "policy",
          "cannot open policy file '" + path.string() + "'" + d.substr(std::strlen("cannot open")));
    fail(n.Mark(), "policy", "policy file '" + path.string() + "': " + d);
  }
  return parsePolicy(text, path.string());
}

Scenario ScenarioReader::read(const YAML::Node& root) const {
  requireMap(root, "(document)");
  checkKeys(root, "",
            {"version", "name", "description", "duration", "tick", "drain", "seed", "routing",
             "shared_pool", "policy", "models", "clients", "faults"});
  Scenario s;
  s.source = source();
  if (auto v = root["version"]) {
    if (count(v, "version", 1, 1000) != 1)
      fail(v.Mark(), "version", "this Spillway reads scenario version 1");
  }
  s.name = root["name"] ? scalar(root["name"], "name") : std::string("unnamed");
  if (auto v = root["description"]) s.description = scalar(v, "description");
  s.duration = duration(need(root, "duration", ""), "duration", 1, false, true);
  if (s.duration > kMaxDuration)
    fail(root["duration"].Mark(), "duration", tooLong(s.duration, kMaxDuration));
  if (auto v = root["tick"]) s.tick = duration(v, "tick", millis(10));
  if (s.tick > kMaxTick) fail(root["tick"].Mark(), "tick", tooLong(s.tick, kMaxTick));
  if (auto v = root["drain"]) s.drain = duration(v, "drain", 0);
  if (s.drain > kMaxDrain) fail(root["drain"].Mark(), "drain", tooLong(s.drain, kMaxDrain));
  if (auto v = root["seed"]) {
    unsigned long long seed;
    if (!YAML::convert<unsigned long long>::decode(v, seed))
      fail(v.Mark(), "seed", "expected a whole number, got '" + scalar(v, "seed") + "'");
    s.seed = seed;
  }
  if (auto v = root["routing"])
    s.routing = choice<Routing>(v, "routing",
                                {{"least_outstanding", Routing::LeastOutstanding},
                                 {"round_robin", Routing::RoundRobin},
                                 {"weighted", Routing::Weighted}});
  if (auto v = root["shared_pool"]) s.sharedPool = count(v, "shared_pool", 1, 100000000);
  if (auto v = root["policy"]) s.policy = policy(v);

  const YAML::Node models = need(root, "models", "");
  requireSeq(models, "models");
  if (models.size() == 0) fail(models.Mark(), "models", "at least one model is needed");
  std::set<std::string> names;  // instances and models share one namespace (fault targets)
  for (std::size_t i = 0; i < models.size(); ++i) {
    const std::string p = "models[" + std::to_string(i) + "]";
    ModelSpec m;
    model(models[i], p, m);
    if (!names.insert(m.name).second)
      fail(models[i]["name"].Mark(), p + ".name", "duplicate name '" + m.name + "'");
    for (const InstanceSpec& is : m.instances)
      if (is.name == kGatewayTarget || m.name == kGatewayTarget)
        fail(models[i]["name"].Mark(), p + ".name",
             "'gateway' is reserved: it names the gateway in faults");
      else if (!names.insert(is.name).second)
        fail(models[i]["instances"].Mark(), p + ".instances",
             "duplicate instance name '" + is.name + "'");
    s.models.push_back(std::move(m));
  }

  const YAML::Node clients = need(root, "clients", "");
  requireSeq(clients, "clients");
  if (clients.size() == 0) fail(clients.Mark(), "clients", "at least one client is needed");
  std::set<std::string> clientNames;
  for (std::size_t i = 0; i < clients.size(); ++i) {
    const std::string p = "clients[" + std::to_string(i) + "]";
    ClientSpec c;
    client(clients[i], p, c);
    if (!clientNames.insert(c.name).second)
      fail(clients[i]["name"].Mark(), p + ".name", "duplicate client name '" + c.name + "'");
    bool known = false;
    for (const ModelSpec& m : s.models) known = known || m.name == c.model;
    if (!known) fail(clients[i]["model"].Mark(), p + ".model", "no model named '" + c.model + "'");
    s.clients.push_back(std::move(c));
  }

  if (auto list = root["faults"]) s.faults = faults(list, "faults", names, s.duration);
  try {
    checkScenarioBudget(s);
  } catch (const InputError& e) {
    // Blame the line of what is too much: the duration, the tick, the models, or the client
    // (its rate, or its cache keys) that makes the most.
    const std::string& f = e.field();
    YAML::Mark m = root["duration"].Mark();
    if (f.rfind("clients[", 0) == 0) {
      const std::size_t i = std::stoul(f.substr(8));
      const bool keys = f.find(".cache.keys") != std::string::npos;
      m = keys ? keyMark(clients[i]["cache"], "keys") : keyMark(clients[i], "rate");
    } else if (f == "tick" && root["tick"]) {
      m = root["tick"].Mark();
    } else if (f == "models") {
      m = keyMark(root, "models");
    }
    fail(m, f, e.detail());
  }
  return s;
}

std::vector<FaultSpec> ScenarioReader::faults(const YAML::Node& list, const std::string& path,
                                              const std::set<std::string>& names,
                                              Micros duration) const {
  requireSeq(list, path);
  std::vector<FaultSpec> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    FaultSpec f = fault(list[i], p);
    gatewayFault(list[i], p, f);
    if (!names.count(f.target) && f.target != kGatewayTarget)
      fail(list[i]["target"].Mark(), p + ".target",
           "no instance or model named '" + f.target + "'");
    if (f.at >= duration)
      fail(list[i]["at"].Mark(), p + ".at", "starts at or after the end of the scenario");
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::vector<FaultSpec> parseFaultsOf(std::string_view yamlText, const std::string& source,
                                     const std::string& key, const Scenario& scenario) {
  const YAML::Node root = loadYamlText(yamlText, source);
  const YAML::Node list = root.IsMap() ? root[key] : YAML::Node();
  if (!list) return {};
  std::set<std::string> names;
  for (const ModelSpec& m : scenario.models) {
    names.insert(m.name);
    for (const InstanceSpec& i : m.instances) names.insert(i.name);
  }
  return ScenarioReader(source, {}).faults(list, key, names, scenario.duration);
}

Scenario parseScenario(std::string_view yamlText, const std::string& source,
                       const std::string& baseDir) {
  checkInputSize(yamlText, source, input_limits::kScenario, "scenario file");
  const YAML::Node root = loadYamlText(yamlText, source);
  if (!root || root.IsNull()) throw InputError(source, 0, "", "empty scenario");
  return ScenarioReader(source, baseDir).read(root);
}

Scenario loadScenarioFile(const std::string& path) {
  return parseScenario(readInputFile(path, input_limits::kScenario, "scenario file"), path,
                       std::filesystem::path(path).parent_path().string());
}

namespace {

// Requests one client sends over `duration`, from above: its rate times the peak of each
// profile shape, plus what its bursts add while they last; session turns count one each.
double requestsBound(const ClientSpec& c, Micros duration) {
  const double secs = static_cast<double>(duration) * 1e-6;
  double peak = 1, burstSecs = 0;
  for (const LoadShape& ls : c.profile) {
    switch (ls.kind) {
      case ProfileKind::Constant:
        break;
      case ProfileKind::Step: {
        double m = 1;
        for (const auto& st : ls.steps) m = std::max(m, st.second);
        peak *= m;
        break;
      }
      case ProfileKind::Ramp:
        peak *= std::max({1.0, ls.from, ls.to});
        break;
      case ProfileKind::Diurnal:
        peak *= 1 + ls.amplitude;
        break;
      case ProfileKind::Burst: {
        const Micros from = std::min(ls.start, duration), to = std::min(ls.end, duration);
        burstSecs += std::max(0.0, ls.multiplier - 1) * static_cast<double>(to - from) * 1e-6;
        break;
      }
    }
  }
  const double turns = c.sessions.turns > 1 ? c.sessions.turns : 1;
  return c.rate * peak * (secs + burstSecs) * turns;
}

// What the scenario's size costs whatever its traffic: its instances (memory, and per-tick
// work over `ticks`) and its clients' cache keys (memory).
void checkSizeBudget(const Scenario& s, double ticks) {
  double instances = 0;
  for (const ModelSpec& m : s.models) instances += static_cast<double>(m.instances.size());
  char buf[300];
  if (instances > kMaxInstances) {
    std::snprintf(buf, sizeof buf,
                  "%.0f instances over all models, more than the limit of %.0f (docs/limits.md)",
                  instances, kMaxInstances);
    throw InputError(s.source, 0, "models", buf);
  }
  if (instances * ticks > kMaxInstanceTicks) {
    std::snprintf(buf, sizeof buf,
                  "%.0f instances x %.3g ticks is %.3g instance-ticks, more than the limit of "
                  "%.3g (docs/limits.md): a longer tick, a shorter duration or fewer instances",
                  instances, ticks, instances * ticks, kMaxInstanceTicks);
    throw InputError(s.source, 0, "tick", buf);
  }
  double keys = 0;
  for (std::size_t i = 0; i < s.clients.size(); ++i) {
    keys += s.clients[i].cache.keys;
    if (keys > kMaxCacheKeys) {
      std::snprintf(buf, sizeof buf,
                    "the clients' cache keys add up to %.0f here, more than the limit of %.0f "
                    "over all clients (docs/limits.md)",
                    keys, kMaxCacheKeys);
      throw InputError(s.source, 0, "clients[" + std::to_string(i) + "].cache.keys", buf);
    }
  }
}

}  // namespace

void checkScenarioBudget(const Scenario& s) {
  if (s.duration > kMaxDuration)
    throw InputError(s.source, 0, "duration", tooLong(s.duration, kMaxDuration));
  const double ticks = static_cast<double>(s.duration + s.drain) / static_cast<double>(s.tick);
  if (ticks > kMaxTicks) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "(duration + drain) / tick is %.3g ticks, more than the limit of %.0f "
                  "(docs/limits.md): a longer tick or a shorter duration",
                  ticks, kMaxTicks);
    throw InputError(s.source, 0, "tick", buf);
  }
  checkSizeBudget(s, ticks);
  double total = 0, most = -1;
  std::size_t culprit = 0;
  for (std::size_t i = 0; i < s.clients.size(); ++i) {
    const double n = requestsBound(s.clients[i], s.duration);
    total += n;
    if (n > most) {
      most = n;
      culprit = i;
    }
  }
  if (total > kMaxRequests) {
    char buf[300];
    std::snprintf(buf, sizeof buf,
                  "the clients would send about %.3g requests in %s (rate x peak load x "
                  "duration), more than the limit of %.0f per run (docs/limits.md); this one "
                  "sends the most (%.3g): lower rates or a shorter duration",
                  total, formatDuration(s.duration).c_str(), kMaxRequests, most);
    throw InputError(s.source, 0, "clients[" + std::to_string(culprit) + "].rate", buf);
  }
}

void usePolicy(Scenario& sc, Policy pol) {
  if (pol.models.empty() && !pol.degrade.enabled && !pol.limits.any() && !pol.limits.adaptive &&
      pol.slaClasses.empty()) {
    pol.models = sc.policy.models;
    pol.degrade = sc.policy.degrade;
    pol.limits = sc.policy.limits;
    pol.slaClasses = sc.policy.slaClasses;
  }
  sc.policy = std::move(pol);
}

}  // namespace spillway::sim
