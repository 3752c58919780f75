#include "spillway/policy_yaml.hpp"

#include <charconv>

#include <yaml-cpp/yaml.h>

#include "spillway/input_limits.hpp"
#include "spillway/policy_sections_yaml.hpp"
#include "spillway/yaml_reader.hpp"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace spillway {
namespace {

// The policy sections, on top of the generic reader.
class Reader : public YamlReader {
 public:
  using YamlReader::YamlReader;
  void breaker(const YAML::Node& n, const std::string& path, BreakerConfig& b) const;
  void calibration(const YAML::Node& n, const std::string& path, CalibrationConfig& c) const;

 private:
  void loadFactor(const YAML::Node& n, const std::string& p, LoadFactorConfig& l) const;
  void release(const YAML::Node& n, const std::string& p, HalfOpenConfig& h) const;
};

void Reader::loadFactor(const YAML::Node& n, const std::string& p, LoadFactorConfig& l) const {
  requireMap(n, p);
  checkKeys(n, p, {"min", "max", "source"});
  l.enabled = true;
  if (auto v = n["min"]) l.min = number(v, join(p, "min"), 0, 10, true);
  if (auto v = n["max"]) l.max = number(v, join(p, "max"), 0, 10, true);
  if (l.max < l.min)
    fail(keyMark(n, n["max"] ? "max" : "min"), join(p, n["max"] ? "max" : "min"),
         "must not be below load_factor.min");
  if (auto v = n["source"])
    l.source =
        choice<LoadSource>(v, join(p, "source"),
                           {{"saturation", LoadSource::Saturation}, {"queue", LoadSource::Queue}});
}

void Reader::release(const YAML::Node& n, const std::string& p, HalfOpenConfig& h) const {
  if (!n.IsSequence() || n.size() == 0)
    fail(n.Mark(), p, "expected a list of rules such as [{success: 0.95, probes: 3, start: 0.05}]");
  h.release.clear();
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string q = p + "[" + std::to_string(i) + "]";
    const YAML::Node& m = n[i];
    requireMap(m, q);
    checkKeys(m, q, {"success", "probes", "start", "cap"});
    ReleaseRule rule;
    rule.success = number(need(m, "success", q), join(q, "success"), 0, 1, true);
    rule.probes = count(need(m, "probes", q), join(q, "probes"), 1, 10000);
    rule.start = number(need(m, "start", q), join(q, "start"), 0, 1, true);
    if (auto v = m["cap"]) rule.cap = number(v, join(q, "cap"), 0, 1, true);
    if (rule.cap < rule.start) fail(keyMark(m, "cap"), join(q, "cap"), "must not be below start");
    if (!h.release.empty() && rule.success >= h.release.back().success)
      fail(keyMark(m, "success"), join(q, "success"),
           "rules go best first: success must be below the previous rule's");
    h.release.push_back(rule);
  }
}

void Reader::breaker(const YAML::Node& n, const std::string& path, BreakerConfig& b) const {
  requireMap(n, path);
  checkKeys(n, path,
            {"mode", "window", "min_calls", "trip", "classify", "slow", "baseline", "open",
             "half_open", "ramp"});
  auto key = [&](const char* k) { return join(path, k); };
  if (auto v = n["mode"]) {
    b.mode = choice<BreakerMode>(v, key("mode"),
                                 {{"normal", BreakerMode::Normal},
                                  {"metrics_only", BreakerMode::MetricsOnly},
                                  {"disabled", BreakerMode::Disabled},
                                  {"forced_open", BreakerMode::ForcedOpen}});
  }
  if (auto w = n["window"]) {
    const std::string p = key("window");
    requireMap(w, p);
    checkKeys(w, p, {"type", "length", "bucket", "calls"});
    if (auto v = w["type"])
      b.window.type = choice<WindowType>(
          v, join(p, "type"), {{"time", WindowType::Time}, {"count", WindowType::Count}});
    if (auto v = w["length"]) b.window.length = duration(v, join(p, "length"), 1, false, true);
    if (auto v = w["bucket"]) b.window.bucket = duration(v, join(p, "bucket"), 1, false, true);
    if (auto v = w["calls"]) b.window.calls = count(v, join(p, "calls"), 1, 1000000);
    // Blame the key the user wrote: bucket when given, else length.
    const std::string culprit = w["bucket"] ? "bucket" : "length";
    if (b.window.bucket > b.window.length)
      fail(keyMark(w, culprit), join(p, culprit),
           "window.bucket must not be longer than window.length");
    if (b.window.length / b.window.bucket > 3600)
      fail(keyMark(w, culprit), join(p, culprit),
           "window.length / bucket must be at most 3600 buckets");
  }
  if (auto v = n["min_calls"]) b.minCalls = count(v, key("min_calls"), 1, 10000000);
  if (auto t = n["trip"]) {
    const std::string p = key("trip");
    requireMap(t, p);
    checkKeys(t, p, {"error_rate", "slow_rate", "sustain", "weight", "load_factor"});
    if (auto v = t["error_rate"]) b.trip.errorRate = number(v, join(p, "error_rate"), 0, 1, true);
    if (auto v = t["slow_rate"]) b.trip.slowRate = number(v, join(p, "slow_rate"), 0, 1, true);
    if (auto v = t["sustain"]) b.trip.sustain = duration(v, join(p, "sustain"), 0);
    if (auto v = t["weight"]) b.trip.weight = number(v, join(p, "weight"), 0, 10, true);
    if (auto v = t["load_factor"]) loadFactor(v, join(p, "load_factor"), b.trip.loadFactor);
  }
  if (auto c = n["classify"]) {
    const std::string p = key("classify");
    requireMap(c, p);
    checkKeys(c, p, {"failure_statuses", "client_errors", "timeout", "reset"});
    if (auto v = c["failure_statuses"]) {
      const std::string fk = join(p, "failure_statuses");
      if (!v.IsSequence()) fail(v.Mark(), fk, "expected a list such as [5xx, 0, 429]");
      b.classify.failureStatus.fill(false);
      for (const auto& item : v) {
        const std::string s = scalar(item, fk);
        if (s.size() == 3 && s[1] == 'x' && s[2] == 'x' && s[0] >= '1' && s[0] <= '9') {
          const int base = (s[0] - '0') * 100;
          for (int i = base; i < base + 100; ++i) b.classify.failureStatus[i] = true;
        } else {
          b.classify.failureStatus[count(item, fk, 0, 999)] = true;
        }
      }
    }
    if (auto v = c["client_errors"])
      b.classify.clientErrors = choice<ClientErrors>(v, join(p, "client_errors"),
                                                     {{"ignore", ClientErrors::Ignore},
                                                      {"success", ClientErrors::Success},
                                                      {"failure", ClientErrors::Failure}});
    if (auto v = c["timeout"])
      b.classify.timeoutIsFailure =
          choice<bool>(v, join(p, "timeout"), {{"failure", true}, {"success", false}});
    if (auto v = c["reset"])
      b.classify.resetIsFailure =
          choice<bool>(v, join(p, "reset"), {{"failure", true}, {"success", false}});
  }
  if (auto s = n["slow"]) {
    const std::string p = key("slow");
    requireMap(s, p);
    checkKeys(s, p, {"k", "floor", "absolute", "initial_baseline", "spread_max"});
    if (auto v = s["spread_max"])
      b.slow.spreadMax = number(v, join(p, "spread_max"), 1, 100, false);
    if (auto v = s["k"]) b.slow.k = number(v, join(p, "k"), 0, 100, true);
    if (auto v = s["floor"]) b.slow.floor = duration(v, join(p, "floor"), 0);
    if (auto v = s["absolute"]) b.slow.absolute = duration(v, join(p, "absolute"), 0, true);
    if (auto v = s["initial_baseline"])
      b.slow.initialBaseline = duration(v, join(p, "initial_baseline"), 0, true);
  }
  if (auto s = n["baseline"]) {
    const std::string p = key("baseline");
    requireMap(s, p);
    checkKeys(
        s, p,
        {"horizon", "min_calls", "freeze_error_rate", "freeze_slow_rate", "freeze_drift_ratio"});
    if (auto v = s["horizon"]) b.baseline.horizon = duration(v, join(p, "horizon"), 1, false, true);
    if (auto v = s["min_calls"]) b.baseline.minCalls = count(v, join(p, "min_calls"), 1, 100000000);
    if (auto v = s["freeze_error_rate"])
      b.baseline.freezeErrorRate = number(v, join(p, "freeze_error_rate"), 0, 1, true);
    if (auto v = s["freeze_slow_rate"])
      b.baseline.freezeSlowRate = number(v, join(p, "freeze_slow_rate"), 0, 1, true);
    if (auto v = s["freeze_drift_ratio"])
      b.baseline.freezeDriftRatio = number(v, join(p, "freeze_drift_ratio"), 1, 1000, false);
  }
  if (auto o = n["open"]) {
    const std::string p = key("open");
    requireMap(o, p);
    checkKeys(o, p, {"duration", "backoff_multiplier", "max_duration", "jitter", "decay_after"});
    if (auto v = o["duration"]) b.open.duration = duration(v, join(p, "duration"), 1, false, true);
    if (auto v = o["backoff_multiplier"])
      b.open.backoffMultiplier = number(v, join(p, "backoff_multiplier"), 1, 100, false);
    if (auto v = o["max_duration"])
      b.open.maxDuration = duration(v, join(p, "max_duration"), 1, false, true);
    if (auto v = o["jitter"]) b.open.jitter = number(v, join(p, "jitter"), 0, 1, false, true);
    if (auto v = o["decay_after"])
      b.open.decayAfter = duration(v, join(p, "decay_after"), 1, false, true);
    if (b.open.maxDuration < b.open.duration) {
      const std::string culprit = o["max_duration"] ? "max_duration" : "duration";
      fail(keyMark(o, culprit), join(p, culprit),
           "open.max_duration must not be shorter than open.duration");
    }
  }
  if (auto h = n["half_open"]) {
    const std::string p = key("half_open");
    requireMap(h, p);
    checkKeys(h, p, {"probe_share", "success_streak", "release", "max_probes"});
    if (auto v = h["max_probes"]) b.halfOpen.maxProbes = count(v, join(p, "max_probes"), 1, 100000);
    if (auto v = h["release"]) release(v, join(p, "release"), b.halfOpen);
    for (std::size_t i = 0; i < b.halfOpen.release.size(); ++i)
      if (b.halfOpen.release[i].probes > b.halfOpen.maxProbes)
        fail(h["release"][i].Mark(), join(p, "release[" + std::to_string(i) + "].probes"),
             "must not exceed half_open.max_probes");
    if (auto v = h["probe_share"])
      b.halfOpen.probeShare = number(v, join(p, "probe_share"), 0, 1, true);
    if (auto v = h["success_streak"])
      b.halfOpen.successStreak = count(v, join(p, "success_streak"), 1, 1000000);
  }
  if (auto r = n["ramp"]) {
    const std::string p = key("ramp");
    requireMap(r, p);
    checkKeys(r, p, {"duration", "shape", "steps", "relapse_reopens"});
    if (auto v = r["duration"]) b.ramp.duration = duration(v, join(p, "duration"), 0, true);
    if (auto v = r["shape"])
      b.ramp.shape = choice<RampShape>(v, join(p, "shape"),
                                       {{"linear", RampShape::Linear}, {"step", RampShape::Step}});
    if (auto v = r["steps"]) b.ramp.steps = count(v, join(p, "steps"), 1, 1000);
    if (auto v = r["relapse_reopens"])
      b.ramp.relapseReopens = boolean(v, join(p, "relapse_reopens"));
  }
}

void Reader::calibration(const YAML::Node& n, const std::string& path, CalibrationConfig& c) const {
  requireMap(n, path);
  checkKeys(n, path, {"fp_target", "period", "min_blocked", "rate_step", "sustain_step"});
  if (auto v = n["fp_target"]) c.fpTarget = number(v, join(path, "fp_target"), 0, 1, true);
  if (auto v = n["period"]) c.period = duration(v, join(path, "period"), 1, false, true);
  if (auto v = n["min_blocked"]) c.minBlocked = count(v, join(path, "min_blocked"), 1, 100000000);
  if (auto v = n["rate_step"]) c.rateStep = number(v, join(path, "rate_step"), 0, 0.5, true);
  if (auto v = n["sustain_step"]) c.sustainStep = duration(v, join(path, "sustain_step"), 0);
}

}  // namespace

YAML::Node loadYamlText(std::string_view text, const std::string& source) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    // ParserException (syntax, nesting too deep) and anything else yaml-cpp throws while
    // building the nodes: always a named error, never an uncaught YAML exception.
    throw InputError(source, e.mark.is_null() ? 0 : e.mark.line + 1, "", "YAML syntax: " + e.msg);
  }
}

Policy parsePolicy(std::string_view yamlText, const std::string& source) {
  checkInputSize(yamlText, source, input_limits::kPolicy, "policy file");
  const YAML::Node root = loadYamlText(yamlText, source);
  // Line 1: an empty file (or one of comments only) has no line to blame but the first.
  if (!root || root.IsNull()) throw InputError(source, 1, "", "empty policy");
  return parsePolicyNode(root, source);
}

Policy parsePolicyNode(const YAML::Node& root, const std::string& source) {
  Reader r(source);
  r.requireMap(root, "(document)");
  r.checkKeys(root, "",
              {"version", "name", "breaker", "calibration", "overrides", "models", "degrade",
               "limits", "sla_classes"});
  Policy p;
  if (auto v = root["version"]) {
    if (r.count(v, "version", 1, 1000) != 1)
      r.fail(v.Mark(), "version", "this Spillway reads policy version 1");
  }
  if (auto v = root["name"]) p.name = r.scalar(v, "name");
  if (auto v = root["breaker"]) r.breaker(v, "breaker", p.breaker);
  if (auto v = root["calibration"]) r.calibration(v, "calibration", p.calibration);
  if (auto v = root["models"]) readModelProfiles(r, v, p.models);
  if (auto v = root["degrade"]) readDegrade(r, v, p.models, p.degrade);
  if (auto v = root["limits"]) readLimits(r, v, p.limits);
  if (auto v = root["sla_classes"]) readSlaClasses(r, v, p.models, p.slaClasses);
  if (auto o = root["overrides"]) {
    r.requireMap(o, "overrides");
    r.checkKeys(o, "overrides", {"models", "instances"});
    auto readScope = [&](const char* scope, std::map<std::string, BreakerOverride>& out) {
      const YAML::Node s = o[scope];
      if (!s) return;
      const std::string path = std::string("overrides.") + scope;
      r.requireMap(s, path);
      for (auto it = s.begin(); it != s.end(); ++it) {
        const std::string name = r.keyOf(it->first, path);
        if (out.count(name)) r.fail(it->first.Mark(), path + "." + name, "duplicate key");
        // Validate now against the default so errors carry the file's line numbers.
        BreakerConfig probe = p.breaker;
        r.breaker(it->second, path + "." + name, probe);
        YAML::Emitter e;
        e << it->second;
        out[name] = BreakerOverride{e.c_str(), it->first.Mark().line + 1};
      }
    };
    readScope("models", p.modelOverrides);
    readScope("instances", p.instanceOverrides);
  }
  return p;
}

Policy loadPolicyFile(const std::string& path) {
  return parsePolicy(readInputFile(path, input_limits::kPolicy, "policy file"), path);
}

BreakerConfig resolveBreaker(const Policy& policy, const std::string& model,
                             const std::string& instance) {
  BreakerConfig b = policy.breaker;
  Reader r("<override>");
  auto apply = [&](const std::map<std::string, BreakerOverride>& m, const std::string& key,
                   const char* scope) {
    if (key.empty()) return;
    auto it = m.find(key);
    if (it == m.end()) return;
    r.breaker(YAML::Load(it->second.yaml), std::string("overrides.") + scope + "." + key, b);
  };
  apply(policy.modelOverrides, model, "models");
  apply(policy.instanceOverrides, instance, "instances");
  return b;
}

namespace {

std::string dur(Micros d) {
  return d == 0 ? std::string("off") : formatDuration(d);
}

// The shortest text that reads back as the same double: 0.3, not 0.29999999999999999 (a
// fixed precision of 17 digits round-trips but shows binary noise to the SRE).
std::string shortest(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

void emitBreaker(YAML::Emitter& e, const BreakerConfig& b) {
  e << YAML::BeginMap;
  const char* modes[] = {"normal", "metrics_only", "disabled", "forced_open"};
  e << YAML::Key << "mode" << YAML::Value << modes[static_cast<int>(b.mode)];
  e << YAML::Key << "window" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "type" << YAML::Value << (b.window.type == WindowType::Time ? "time" : "count");
  e << YAML::Key << "length" << YAML::Value << formatDuration(b.window.length);
  e << YAML::Key << "bucket" << YAML::Value << formatDuration(b.window.bucket);
  e << YAML::Key << "calls" << YAML::Value << b.window.calls << YAML::EndMap;
  e << YAML::Key << "min_calls" << YAML::Value << b.minCalls;
  e << YAML::Key << "trip" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "error_rate" << YAML::Value << shortest(b.trip.errorRate);
  e << YAML::Key << "slow_rate" << YAML::Value << shortest(b.trip.slowRate);
  e << YAML::Key << "sustain" << YAML::Value << formatDuration(b.trip.sustain);
  // The keys below are written only when set, so that a policy without them reads as before.
  if (b.trip.weight != 1.0) e << YAML::Key << "weight" << YAML::Value << shortest(b.trip.weight);
  if (const LoadFactorConfig& l = b.trip.loadFactor; l.enabled)
    e << YAML::Key << "load_factor" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
      << "min" << YAML::Value << shortest(l.min) << YAML::Key << "max" << YAML::Value
      << shortest(l.max) << YAML::Key << "source" << YAML::Value
      << (l.source == LoadSource::Queue ? "queue" : "saturation") << YAML::EndMap;
  e << YAML::EndMap;
  e << YAML::Key << "classify" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "failure_statuses" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (int cls = 1; cls <= 9; ++cls) {
    bool all = true;
    for (int i = cls * 100; i < cls * 100 + 100; ++i) all = all && b.classify.failureStatus[i];
    if (all) e << std::to_string(cls) + "xx";
  }
  for (int i = 0; i < 1000; ++i) {
    if (!b.classify.failureStatus[i]) continue;
    const int cls = i / 100;
    bool all = cls >= 1;
    for (int j = cls * 100; all && j < cls * 100 + 100; ++j) all = b.classify.failureStatus[j];
    if (!all) e << i;
  }
  e << YAML::EndSeq;
  const char* ce[] = {"ignore", "success", "failure"};
  e << YAML::Key << "client_errors" << YAML::Value << ce[static_cast<int>(b.classify.clientErrors)];
  e << YAML::Key << "timeout" << YAML::Value
    << (b.classify.timeoutIsFailure ? "failure" : "success");
  e << YAML::Key << "reset" << YAML::Value << (b.classify.resetIsFailure ? "failure" : "success");
  e << YAML::EndMap;
  e << YAML::Key << "slow" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "k" << YAML::Value << shortest(b.slow.k);
  e << YAML::Key << "floor" << YAML::Value << formatDuration(b.slow.floor);
  e << YAML::Key << "absolute" << YAML::Value << dur(b.slow.absolute);
  e << YAML::Key << "initial_baseline" << YAML::Value << dur(b.slow.initialBaseline);
  if (b.slow.spreadMax != 1.0)
    e << YAML::Key << "spread_max" << YAML::Value << shortest(b.slow.spreadMax);
  e << YAML::EndMap;
  e << YAML::Key << "baseline" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "horizon" << YAML::Value << formatDuration(b.baseline.horizon);
  e << YAML::Key << "min_calls" << YAML::Value << b.baseline.minCalls;
  e << YAML::Key << "freeze_error_rate" << YAML::Value << shortest(b.baseline.freezeErrorRate);
  e << YAML::Key << "freeze_slow_rate" << YAML::Value << shortest(b.baseline.freezeSlowRate);
  e << YAML::Key << "freeze_drift_ratio" << YAML::Value << shortest(b.baseline.freezeDriftRatio);
  e << YAML::EndMap;
  e << YAML::Key << "open" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "duration" << YAML::Value << formatDuration(b.open.duration);
  e << YAML::Key << "backoff_multiplier" << YAML::Value << shortest(b.open.backoffMultiplier);
  e << YAML::Key << "max_duration" << YAML::Value << formatDuration(b.open.maxDuration);
  e << YAML::Key << "jitter" << YAML::Value << shortest(b.open.jitter);
  e << YAML::Key << "decay_after" << YAML::Value << formatDuration(b.open.decayAfter);
  e << YAML::EndMap;
  e << YAML::Key << "half_open" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "probe_share" << YAML::Value << shortest(b.halfOpen.probeShare);
  e << YAML::Key << "success_streak" << YAML::Value << b.halfOpen.successStreak;
  if (!b.halfOpen.release.empty()) {
    e << YAML::Key << "release" << YAML::Value << YAML::BeginSeq;
    for (const ReleaseRule& r : b.halfOpen.release)
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "success" << YAML::Value
        << shortest(r.success) << YAML::Key << "probes" << YAML::Value << r.probes << YAML::Key
        << "start" << YAML::Value << shortest(r.start) << YAML::Key << "cap" << YAML::Value
        << shortest(r.cap) << YAML::EndMap;
    e << YAML::EndSeq;
    e << YAML::Key << "max_probes" << YAML::Value << b.halfOpen.maxProbes;
  }
  e << YAML::EndMap;
  e << YAML::Key << "ramp" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "duration" << YAML::Value << dur(b.ramp.duration);
  e << YAML::Key << "shape" << YAML::Value
    << (b.ramp.shape == RampShape::Linear ? "linear" : "step");
  e << YAML::Key << "steps" << YAML::Value << b.ramp.steps;
  e << YAML::Key << "relapse_reopens" << YAML::Value << b.ramp.relapseReopens;
  e << YAML::EndMap;
  e << YAML::EndMap;
}

// What `b` has that `a` has not (or differently), key by key; null when they agree.
YAML::Node diffNode(const YAML::Node& a, const YAML::Node& b) {
  if (b.IsMap() && a.IsMap()) {
    YAML::Node out(YAML::NodeType::Map);
    bool any = false;
    for (auto it = b.begin(); it != b.end(); ++it) {
      const std::string key = it->first.Scalar();  // our own emitter's output: plain keys
      YAML::Node d = diffNode(a[key], it->second);
      if (!d.IsNull()) {
        out[key] = d;
        any = true;
      }
    }
    return any ? out : YAML::Node();
  }
  YAML::Emitter ea, eb;
  ea << a;
  eb << b;
  return std::string(ea.c_str()) == eb.c_str() ? YAML::Node() : b;
}

}  // namespace

std::string breakerOverrideYaml(const BreakerConfig& base, const BreakerConfig& changed) {
  auto emit = [](const BreakerConfig& b) {
    YAML::Emitter e;
    e.SetDoublePrecision(17);
    emitBreaker(e, b);
    return YAML::Load(e.c_str());
  };
  const YAML::Node d = diffNode(emit(base), emit(changed));
  if (d.IsNull()) return "{}";
  YAML::Emitter e;
  e << d;
  return e.c_str();
}

std::string policyToYaml(const Policy& p) {
  YAML::Emitter e;
  e.SetDoublePrecision(17);
  e << YAML::BeginMap;
  e << YAML::Key << "version" << YAML::Value << 1;
  e << YAML::Key << "name" << YAML::Value << p.name;
  e << YAML::Key << "breaker" << YAML::Value;
  emitBreaker(e, p.breaker);
  e << YAML::Key << "calibration" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "fp_target" << YAML::Value << shortest(p.calibration.fpTarget);
  e << YAML::Key << "period" << YAML::Value << formatDuration(p.calibration.period);
  e << YAML::Key << "min_blocked" << YAML::Value << p.calibration.minBlocked;
  e << YAML::Key << "rate_step" << YAML::Value << shortest(p.calibration.rateStep);
  e << YAML::Key << "sustain_step" << YAML::Value << formatDuration(p.calibration.sustainStep);
  e << YAML::EndMap;
  if (!p.modelOverrides.empty() || !p.instanceOverrides.empty()) {
    e << YAML::Key << "overrides" << YAML::Value << YAML::BeginMap;
    auto scope = [&](const char* name, const std::map<std::string, BreakerOverride>& m) {
      if (m.empty()) return;
      e << YAML::Key << name << YAML::Value << YAML::BeginMap;
      for (const auto& [k, o] : m) e << YAML::Key << k << YAML::Value << YAML::Load(o.yaml);
      e << YAML::EndMap;
    };
    scope("models", p.modelOverrides);
    scope("instances", p.instanceOverrides);
    e << YAML::EndMap;
  }
  emitPolicySections(e, p);
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

ClassifyConfig::ClassifyConfig() {
  failureStatus.fill(false);
  failureStatus[0] = true;
  for (int i = 500; i < 600; ++i) failureStatus[i] = true;
  failureStatus[429] = true;
}

}  // namespace spillway
