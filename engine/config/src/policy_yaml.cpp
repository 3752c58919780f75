#include "spillway/policy_yaml.hpp"

#include <algorithm>
#include <charconv>

#include <yaml-cpp/yaml.h>

#include <vector>

#include "spillway/input_limits.hpp"
#include "spillway/policy_sections_yaml.hpp"
#include "spillway/yaml_reader.hpp"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace spillway {
namespace {

// The field itself (BreakerConfig) or the field made present (BreakerOverride): the reader
// writes both through one code path.
template <class T>
T& slot(T& v) {
  return v;
}
template <class T>
T& slot(std::optional<T>& v) {
  return v ? *v : v.emplace();
}

// The policy sections, on top of the generic reader.
class Reader : public YamlReader {
 public:
  using YamlReader::YamlReader;
  // Reads a `breaker` section into a whole config or into an override (what it names only).
  template <class B>
  void breaker(const YAML::Node& n, const std::string& path, B& b) const;
  // Fails on the first inconsistency of the config `n` led to, blaming a key `n` wrote.
  void checkBreaker(const YAML::Node& n, const std::string& path, const BreakerConfig& b) const;
  void calibration(const YAML::Node& n, const std::string& path, CalibrationConfig& c) const;

 private:
  void loadFactor(const YAML::Node& n, const std::string& p, LoadFactorConfig& l) const;
  void release(const YAML::Node& n, const std::string& p, std::vector<ReleaseRule>& rules) const;
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

void Reader::release(const YAML::Node& n, const std::string& p,
                     std::vector<ReleaseRule>& rules) const {
  if (!n.IsSequence() || n.size() == 0)
    fail(n.Mark(), p, "expected a list of rules such as [{success: 0.95, probes: 3, start: 0.05}]");
  rules.clear();
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
    if (!rules.empty() && rule.success >= rules.back().success)
      fail(keyMark(m, "success"), join(q, "success"),
           "rules go best first: success must be below the previous rule's");
    rules.push_back(rule);
  }
}

template <class B>
void Reader::breaker(const YAML::Node& n, const std::string& path, B& b) const {
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
    if (auto v = t["load_factor"]) loadFactor(v, join(p, "load_factor"), slot(b.trip.loadFactor));
  }
  if (auto c = n["classify"]) {
    const std::string p = key("classify");
    requireMap(c, p);
    checkKeys(c, p, {"failure_statuses", "client_errors", "timeout", "reset"});
    if (auto v = c["failure_statuses"]) {
      const std::string fk = join(p, "failure_statuses");
      if (!v.IsSequence()) fail(v.Mark(), fk, "expected a list such as [5xx, 0, 429]");
      auto& failure = slot(b.classify.failureStatus);
      failure.fill(false);
      for (const auto& item : v) {
        const std::string s = scalar(item, fk);
        if (s.size() == 3 && s[1] == 'x' && s[2] == 'x' && s[0] >= '1' && s[0] <= '9') {
          const int base = (s[0] - '0') * 100;
          for (int i = base; i < base + 100; ++i) failure[i] = true;
        } else {
          failure[count(item, fk, 0, 999)] = true;
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
  }
  if (auto h = n["half_open"]) {
    const std::string p = key("half_open");
    requireMap(h, p);
    checkKeys(h, p, {"probe_share", "success_streak", "release", "max_probes"});
    if (auto v = h["max_probes"]) b.halfOpen.maxProbes = count(v, join(p, "max_probes"), 1, 100000);
    if (auto v = h["release"]) release(v, join(p, "release"), slot(b.halfOpen.release));
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

void Reader::checkBreaker(const YAML::Node& n, const std::string& path,
                          const BreakerConfig& b) const {
  const std::optional<BreakerFlaw> flaw = breakerFlaw(b);
  if (!flaw) return;
  if (flaw->release >= 0) {
    const YAML::Node rules = n["half_open"] ? n["half_open"]["release"] : YAML::Node();
    if (rules && rules.IsSequence() && rules.size() > std::size_t(flaw->release))
      fail(rules[flaw->release].Mark(), join(path, flaw->field), flaw->what);
  }
  // Blame the key the file wrote: the flawed one when given, else the other one involved.
  for (const std::string& dotted : {flaw->field, flaw->other}) {
    const auto dot = dotted.find('.');
    const std::string section = dotted.substr(0, dot), key = dotted.substr(dot + 1);
    const YAML::Node s = n[section];
    if (s && s.IsMap() && s[key]) fail(keyMark(s, key), join(path, dotted), flaw->what);
  }
  fail(n.Mark(), join(path, flaw->field), flaw->what);
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

namespace {

// A stream's documents as text, cut at the lines that start one (`---`) or end one (`...`) at
// column 0 — document markers, which end any scalar too — with the line each starts at. Parts
// with nothing but blank lines, comments and markers are left out. Each is then loaded on its
// own: yaml-cpp's LoadAll looped for minutes, growing to gigabytes, on a 674-byte input the
// fuzzer found, where Load of one document returns.
struct DocumentText {
  std::string_view text;
  int firstLine = 0;
};

bool isMarker(std::string_view line) {
  if (line.size() < 3 || (line.substr(0, 3) != "---" && line.substr(0, 3) != "...")) return false;
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r' ||
         line[3] == '\n';
}

bool holdsContent(std::string_view line) {
  const std::size_t i = line.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && line[i] != '#' && !isMarker(line);
}

std::vector<DocumentText> splitDocuments(std::string_view text) {
  std::vector<DocumentText> out;
  std::size_t partStart = 0, pos = 0;
  int line = 0, partLine = 0;
  bool content = false;
  auto close = [&](std::size_t end) {
    if (content) out.push_back({text.substr(partStart, end - partStart), partLine});
    content = false;
  };
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    const std::string_view l = text.substr(pos, end - pos);
    if (isMarker(l) && l.substr(0, 3) == "---") {  // starts the next document
      close(pos);
      partStart = pos;
      partLine = line;
      const std::size_t rest = l.find_first_not_of(" \t\r\n", 3);  // "--- value"
      content = rest != std::string_view::npos && l[rest] != '#';
    } else {
      content = content || holdsContent(l);
      if (isMarker(l)) {  // "...": ends this one
        close(end);
        partStart = end;
        partLine = line + 1;
      }
    }
    pos = end;
    ++line;
  }
  close(text.size());
  return out;
}

YAML::Node loadOne(const DocumentText& d, const std::string& source) {
  try {
    return YAML::Load(std::string(d.text));
  } catch (const YAML::Exception& e) {
    // ParserException (syntax, nesting too deep) and anything else yaml-cpp throws while
    // building the nodes: always a named error, never an uncaught YAML exception.
    throw InputError(source, e.mark.is_null() ? 0 : d.firstLine + e.mark.line + 1, "",
                     "YAML syntax: " + e.msg);
  }
}

}  // namespace

std::vector<YamlDocument> loadYamlDocuments(std::string_view text, const std::string& source) {
  std::vector<YamlDocument> out;
  for (const DocumentText& d : splitDocuments(text)) {
    YAML::Node n = loadOne(d, source);
    if (n && !n.IsNull()) out.push_back({std::move(n), d.firstLine});
  }
  return out;
}

YAML::Node loadYamlText(std::string_view text, const std::string& source) {
  // One document: a second one (after ---) would otherwise be dropped unread, errors and all,
  // while the file looked accepted. It is refused unread.
  const std::vector<DocumentText> docs = splitDocuments(text);
  if (docs.size() > 1)  // at the --- that starts it
    throw InputError(source, docs[1].firstLine + 1, "",
                     "a second YAML document (after ---): a file holds one");
  return docs.empty() ? YAML::Node() : loadOne(docs.front(), source);
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
  if (auto v = root["breaker"]) {
    r.breaker(v, "breaker", p.breaker);
    r.checkBreaker(v, "breaker", p.breaker);
  }
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
        BreakerOverride o;
        r.breaker(it->second, path + "." + name, o);
        // Check it on the policy's breaker now, so errors carry the file's line numbers.
        BreakerConfig layered = p.breaker;
        applyOverride(o, layered);
        r.checkBreaker(it->second, path + "." + name, layered);
        o.line = it->first.Mark().line + 1;
        out[name] = std::move(o);
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

namespace {

std::string dur(Micros d) {
  return d == 0 ? std::string("off") : formatDuration(d);
}

// A whole config as an override that sets every field, except the keys a policy file carries
// only when they are in use (so that a policy without them reads as before).
BreakerOverride everyField(const BreakerConfig& b) {
  BreakerOverride o;
  forEachBreakerField([&](auto get) { get(o) = get(b); });
  if (b.trip.weight == 1.0) o.trip.weight.reset();
  if (!b.trip.loadFactor.enabled) o.trip.loadFactor.reset();
  if (b.slow.spreadMax == 1.0) o.slow.spreadMax.reset();
  if (b.halfOpen.release.empty()) {
    o.halfOpen.release.reset();
    o.halfOpen.maxProbes.reset();
  }
  return o;
}

void emitFailureStatuses(YAML::Emitter& e, const std::array<bool, 1000>& failure) {
  e << YAML::Flow << YAML::BeginSeq;
  for (int cls = 1; cls <= 9; ++cls) {
    bool all = true;
    for (int i = cls * 100; i < cls * 100 + 100; ++i) all = all && failure[i];
    if (all) e << std::to_string(cls) + "xx";
  }
  for (int i = 0; i < 1000; ++i) {
    if (!failure[i]) continue;
    const int cls = i / 100;
    bool all = cls >= 1;
    for (int j = cls * 100; all && j < cls * 100 + 100; ++j) all = failure[j];
    if (!all) e << i;
  }
  e << YAML::EndSeq;
}

// A `breaker` section with the fields `o` sets, in the policy file's order.
void emitBreaker(YAML::Emitter& e, const BreakerOverride& o) {
  auto key = [&](const char* k) -> YAML::Emitter& { return e << YAML::Key << k << YAML::Value; };
  auto section = [&](const char* k, bool any, auto body) {
    if (!any) return;
    key(k) << YAML::BeginMap;
    body();
    e << YAML::EndMap;
  };
  e << YAML::BeginMap;
  const char* modes[] = {"normal", "metrics_only", "disabled", "forced_open"};
  if (o.mode) key("mode") << modes[static_cast<int>(*o.mode)];
  const auto& w = o.window;
  section("window", w.type || w.length || w.bucket || w.calls, [&] {
    if (w.type) key("type") << (*w.type == WindowType::Time ? "time" : "count");
    if (w.length) key("length") << formatDuration(*w.length);
    if (w.bucket) key("bucket") << formatDuration(*w.bucket);
    if (w.calls) key("calls") << *w.calls;
  });
  if (o.minCalls) key("min_calls") << *o.minCalls;
  const auto& t = o.trip;
  section("trip", t.errorRate || t.slowRate || t.sustain || t.weight || t.loadFactor, [&] {
    if (t.errorRate) key("error_rate") << yamlNumber(*t.errorRate);
    if (t.slowRate) key("slow_rate") << yamlNumber(*t.slowRate);
    if (t.sustain) key("sustain") << formatDuration(*t.sustain);
    if (t.weight) key("weight") << yamlNumber(*t.weight);
    if (const auto& l = t.loadFactor)
      key("load_factor") << YAML::Flow << YAML::BeginMap << YAML::Key << "min" << YAML::Value
                         << yamlNumber(l->min) << YAML::Key << "max" << YAML::Value
                         << yamlNumber(l->max) << YAML::Key << "source" << YAML::Value
                         << (l->source == LoadSource::Queue ? "queue" : "saturation")
                         << YAML::EndMap;
  });
  const auto& c = o.classify;
  const char* ce[] = {"ignore", "success", "failure"};
  section("classify", c.failureStatus || c.clientErrors || c.timeoutIsFailure || c.resetIsFailure,
          [&] {
            if (c.failureStatus) {
              key("failure_statuses");
              emitFailureStatuses(e, *c.failureStatus);
            }
            if (c.clientErrors) key("client_errors") << ce[static_cast<int>(*c.clientErrors)];
            if (c.timeoutIsFailure) key("timeout") << (*c.timeoutIsFailure ? "failure" : "success");
            if (c.resetIsFailure) key("reset") << (*c.resetIsFailure ? "failure" : "success");
          });
  const auto& sl = o.slow;
  section("slow", sl.k || sl.floor || sl.absolute || sl.initialBaseline || sl.spreadMax, [&] {
    if (sl.k) key("k") << yamlNumber(*sl.k);
    if (sl.floor) key("floor") << formatDuration(*sl.floor);
    if (sl.absolute) key("absolute") << dur(*sl.absolute);
    if (sl.initialBaseline) key("initial_baseline") << dur(*sl.initialBaseline);
    if (sl.spreadMax) key("spread_max") << yamlNumber(*sl.spreadMax);
  });
  const auto& bl = o.baseline;
  section(
      "baseline",
      bl.horizon || bl.minCalls || bl.freezeErrorRate || bl.freezeSlowRate || bl.freezeDriftRatio,
      [&] {
        if (bl.horizon) key("horizon") << formatDuration(*bl.horizon);
        if (bl.minCalls) key("min_calls") << *bl.minCalls;
        if (bl.freezeErrorRate) key("freeze_error_rate") << yamlNumber(*bl.freezeErrorRate);
        if (bl.freezeSlowRate) key("freeze_slow_rate") << yamlNumber(*bl.freezeSlowRate);
        if (bl.freezeDriftRatio) key("freeze_drift_ratio") << yamlNumber(*bl.freezeDriftRatio);
      });
  const auto& op = o.open;
  section("open",
          op.duration || op.backoffMultiplier || op.maxDuration || op.jitter || op.decayAfter, [&] {
            if (op.duration) key("duration") << formatDuration(*op.duration);
            if (op.backoffMultiplier)
              key("backoff_multiplier") << yamlNumber(*op.backoffMultiplier);
            if (op.maxDuration) key("max_duration") << formatDuration(*op.maxDuration);
            if (op.jitter) key("jitter") << yamlNumber(*op.jitter);
            if (op.decayAfter) key("decay_after") << formatDuration(*op.decayAfter);
          });
  const auto& h = o.halfOpen;
  section("half_open", h.probeShare || h.successStreak || h.release || h.maxProbes, [&] {
    if (h.probeShare) key("probe_share") << yamlNumber(*h.probeShare);
    if (h.successStreak) key("success_streak") << *h.successStreak;
    if (h.release) {
      key("release") << YAML::BeginSeq;
      for (const ReleaseRule& r : *h.release)
        e << YAML::Flow << YAML::BeginMap << YAML::Key << "success" << YAML::Value
          << yamlNumber(r.success) << YAML::Key << "probes" << YAML::Value << r.probes << YAML::Key
          << "start" << YAML::Value << yamlNumber(r.start) << YAML::Key << "cap" << YAML::Value
          << yamlNumber(r.cap) << YAML::EndMap;
      e << YAML::EndSeq;
    }
    if (h.maxProbes) key("max_probes") << *h.maxProbes;
  });
  const auto& r = o.ramp;
  section("ramp", r.duration || r.shape || r.steps || r.relapseReopens, [&] {
    if (r.duration) key("duration") << dur(*r.duration);
    if (r.shape) key("shape") << (*r.shape == RampShape::Linear ? "linear" : "step");
    if (r.steps) key("steps") << *r.steps;
    if (r.relapseReopens) key("relapse_reopens") << *r.relapseReopens;
  });
  e << YAML::EndMap;
}

}  // namespace

// The shortest text that reads back as the same double: 0.3, not 0.29999999999999999 (a
// fixed precision of 17 digits round-trips but shows binary noise to the SRE).
std::string yamlNumber(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string policyToYaml(const Policy& p) {
  YAML::Emitter e;
  e.SetDoublePrecision(17);
  e << YAML::BeginMap;
  e << YAML::Key << "version" << YAML::Value << 1;
  e << YAML::Key << "name" << YAML::Value << p.name;
  e << YAML::Key << "breaker" << YAML::Value;
  emitBreaker(e, everyField(p.breaker));
  e << YAML::Key << "calibration" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "fp_target" << YAML::Value << yamlNumber(p.calibration.fpTarget);
  e << YAML::Key << "period" << YAML::Value << formatDuration(p.calibration.period);
  e << YAML::Key << "min_blocked" << YAML::Value << p.calibration.minBlocked;
  e << YAML::Key << "rate_step" << YAML::Value << yamlNumber(p.calibration.rateStep);
  e << YAML::Key << "sustain_step" << YAML::Value << formatDuration(p.calibration.sustainStep);
  e << YAML::EndMap;
  if (!p.modelOverrides.empty() || !p.instanceOverrides.empty()) {
    e << YAML::Key << "overrides" << YAML::Value << YAML::BeginMap;
    auto scope = [&](const char* name, const std::map<std::string, BreakerOverride>& m) {
      if (m.empty()) return;
      e << YAML::Key << name << YAML::Value << YAML::BeginMap;
      for (const auto& [k, o] : m) {
        e << YAML::Key << k << YAML::Value;
        emitBreaker(e, o);
      }
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

namespace {

// A policy file as (key path, value text) in file order: maps descend ("breaker.trip.error_rate"),
// sequences and scalars are leaves, a sequence written in flow style ("[500, 502]").
void flatten(const YAML::Node& n, const std::string& path,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (n.IsMap() && n.size() > 0) {
    for (const auto& kv : n)
      flatten(kv.second, path.empty() ? kv.first.Scalar() : path + "." + kv.first.Scalar(), out);
    return;
  }
  if (n.IsScalar()) {
    out.emplace_back(path, n.Scalar());
    return;
  }
  YAML::Emitter e;
  e << YAML::Flow << n;
  out.emplace_back(path, e.c_str());
}

std::vector<std::pair<std::string, std::string>> flatPolicy(const Policy& p) {
  std::vector<std::pair<std::string, std::string>> out;
  flatten(YAML::Load(policyToYaml(p)), "", out);
  return out;
}

// One comment line: a newline in a name must not end the comment and start YAML.
std::string commentLine(const std::string& text) {
  std::string line = "# " + text;
  std::replace(line.begin(), line.end(), '\n', ' ');
  std::replace(line.begin(), line.end(), '\r', ' ');
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

}  // namespace

std::vector<std::string> policyChanges(const Policy& base, const Policy& changed) {
  const auto before = flatPolicy(base);
  const auto after = flatPolicy(changed);
  auto find = [](const auto& v, const std::string& key) -> const std::string* {
    for (const auto& [k, val] : v)
      if (k == key) return &val;
    return nullptr;
  };
  std::vector<std::string> lines;
  for (const auto& [key, value] : after) {
    const std::string* old = find(before, key);
    if (!old || *old != value)
      lines.push_back(key + ": " + (old ? *old : "(unset)") + " \u2192 " + value);
  }
  for (const auto& [key, value] : before)
    if (!find(after, key)) lines.push_back(key + ": " + value + " \u2192 (unset)");
  return lines;
}

std::string policyToYamlWithHeader(const Policy& p, const PolicyHeader& h) {
  std::string out = commentLine("Spillway breaker policy '" + p.name + "' (docs/policy.md).");
  if (!h.source.empty()) out += commentLine("Source: " + h.source);
  if (h.base) {
    const std::string baseName = h.baseName.empty() ? "'" + h.base->name + "'" : h.baseName;
    const std::vector<std::string> changes = policyChanges(*h.base, p);
    out += commentLine("Changed vs " + baseName + (changes.empty() ? ": nothing" : ":"));
    for (const std::string& c : changes) out += commentLine("  " + c);
  }
  if (!h.kpis.empty()) out += commentLine("Headline KPIs:");
  for (const std::string& k : h.kpis) out += commentLine("  " + k);
  for (const std::string& n : h.notes) out += commentLine(n);
  return out + "\n" + policyToYaml(p);
}

}  // namespace spillway
