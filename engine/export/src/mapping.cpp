// Value choices and spellings shared by every exporter (see mapping.hpp).
#include "mapping.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "spillway/policy_yaml.hpp"

namespace spillway::exporter {

std::string_view topicName(Topic t) {
  switch (t) {
    case Topic::Window:
      return "window";
    case Topic::Threshold:
      return "threshold";
    case Topic::Sustain:
      return "sustain";
    case Topic::Slow:
      return "slow";
    case Topic::Open:
      return "open";
    case Topic::Backoff:
      return "backoff";
    case Topic::HalfOpen:
      return "half_open";
    case Topic::Ramp:
      return "ramp";
    case Topic::Classify:
      return "classify";
    case Topic::Mode:
      return "mode";
    case Topic::Scope:
      return "scope";
    case Topic::Degrade:
      return "degrade";
    case Topic::Limits:
      return "limits";
  }
  return "?";
}

namespace detail {

Plan makePlan(const Policy& policy, const ExportContext& ctx) {
  Plan p;
  p.base = policy.breaker;
  std::vector<std::string> order;
  auto addModel = [&](const std::string& m) {
    if (m.empty() || std::find(order.begin(), order.end(), m) != order.end()) return;
    order.push_back(m);
  };
  for (const auto& [inst, model] : ctx.instances) addModel(model);
  for (const auto& [model, ov] : policy.modelOverrides) addModel(model);
  for (const std::string& m : order) {
    Entry e;
    e.name = m;
    e.cfg = resolveBreaker(policy, m, "");
    for (const auto& [inst, model] : ctx.instances)
      if (model == m) e.instances.push_back(inst);
    p.models.push_back(std::move(e));
  }
  // Instances recorded without a model (a plain access-log import) still become servers of
  // their own: one placeholder server for several instances would never be marked down, and
  // would not be what the validation replayed.
  Entry unnamed{"default", policy.breaker, {}};
  for (const auto& [inst, model] : ctx.instances)
    if (model.empty()) unnamed.instances.push_back(inst);
  if (!unnamed.instances.empty()) p.models.push_back(std::move(unnamed));
  for (const auto& [inst, ov] : policy.instanceOverrides) {
    InstanceOverride o;
    o.instance = inst;
    for (const auto& [i, model] : ctx.instances)
      if (i == inst) o.model = model;
    o.cfg = resolveBreaker(policy, o.model, inst);
    p.instances.push_back(std::move(o));
  }
  return p;
}

std::vector<Entry> Plan::entries() const {
  if (!models.empty()) return models;
  return {Entry{"default", base, {}}};
}

SlowChoice chooseSlow(const BreakerConfig& cfg, const std::string& model,
                      const ExportContext& ctx) {
  SlowChoice s;
  const SlowConfig& sc = cfg.slow;
  char buf[256];
  if (sc.absolute > 0) {
    s.threshold = sc.absolute;
    s.how = "slow.absolute " + formatDuration(sc.absolute);
    return s;
  }
  // The model's learned baseline; for the default entry, the median over the models seen.
  Micros p99 = 0;
  std::string from;
  if (auto it = ctx.baselineP99.find(model); it != ctx.baselineP99.end()) {
    p99 = it->second;
    from = "baseline P99 of " + model + " learned on " + ctx.baselineSource;
  } else if (!ctx.baselineP99.empty() && (model.empty() || model == "default")) {
    std::vector<Micros> v;
    for (const auto& [m, b] : ctx.baselineP99) v.push_back(b);
    std::sort(v.begin(), v.end());
    p99 = v[v.size() / 2];
    from = "median baseline P99 of the models learned on " + ctx.baselineSource;
  } else if (sc.initialBaseline > 0) {
    p99 = sc.initialBaseline;
    from = "the policy's slow.initial_baseline";
  }
  if (p99 <= 0) return s;
  // Whole milliseconds: every target spells this threshold in ms or coarser.
  const Micros raw =
      std::max<Micros>(sc.floor, static_cast<Micros>(sc.k * static_cast<double>(p99)));
  s.threshold = std::max<Micros>(millis(1), (raw + 500) / 1000 * 1000);
  std::snprintf(buf, sizeof buf, "%s × %s (%s)", num(sc.k).c_str(),
                formatDuration((p99 + 500) / 1000 * 1000).c_str(), from.c_str());
  s.how = buf;
  if (raw == sc.floor && sc.k * static_cast<double>(p99) < static_cast<double>(sc.floor))
    s.how += ", raised to the floor " + formatDuration(sc.floor);
  return s;
}

std::string slowNote(const std::string& key, const SlowChoice& s, const BreakerConfig& cfg) {
  if (s.threshold > 0)
    return "slow = " + num(cfg.slow.k) + " × P99 baseline → " + key + " = " + s.how + " = " +
           formatDuration(s.threshold);
  return "slow = " + num(cfg.slow.k) +
         " × P99 baseline, but no baseline is known (no --validate incident, no "
         "slow.initial_baseline): slow-call detection is left off, as the native breaker calls "
         "nothing slow until it has learned one (the floor " +
         formatDuration(cfg.slow.floor) + " alone would call most LLM calls slow)";
}

std::uint32_t effectiveMinCalls(const BreakerConfig& cfg) {
  std::uint32_t m = std::max<std::uint32_t>(1, cfg.minCalls);
  if (cfg.window.type == WindowType::Count) m = std::min(m, cfg.window.calls);
  return m;
}

std::uint32_t failuresToTrip(const BreakerConfig& cfg) {
  const double n = std::floor(cfg.trip.errorRate * effectiveMinCalls(cfg) + 1e-9) + 1;
  return static_cast<std::uint32_t>(std::max(1.0, n));
}

std::string dur(Micros d) {
  if (d % kMicrosPerSecond == 0) {
    const Micros s = d / kMicrosPerSecond;
    if (s != 0 && s % 3600 == 0) return std::to_string(s / 3600) + "h";
    if (s != 0 && s % 60 == 0) return std::to_string(s / 60) + "m";
    return std::to_string(s) + "s";
  }
  return std::to_string((d + 500) / 1000) + "ms";
}

std::string protoDur(Micros d) {
  const Micros ms = (d + 500) / 1000;
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return num(static_cast<double>(ms) / 1000.0) + "s";
}

std::string num(double v) {
  char buf[64];
  // Whole numbers as integers: "%.1g" would write 50 as 5e+01, which YAML reads as a string.
  if (std::fabs(v) < 1e15 && v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    return buf;
  }
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string pct(double share) {
  // Shares are written as percent; round off binary noise (0.29 × 100 = 28.999999999999996).
  return num(std::round(share * 100 * 1e6) / 1e6);
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string placeholderAddress(std::size_t i) {
  return "127.0.0.1:" + std::to_string(8001 + i);
}

std::string serverAddress(const ExportContext& ctx, const std::string& instance,
                          std::size_t& placeholders) {
  if (const auto it = ctx.addresses.find(instance); it != ctx.addresses.end()) return it->second;
  return isServerAddress(instance) ? instance : placeholderAddress(placeholders++);
}

void Notes::add(Topic t, bool gap, const std::string& scope, const std::string& text) {
  for (const MappingNote& n : v_)
    if (n.text == text && n.scope == scope) return;
  v_.push_back({t, gap, scope, text});
}

void noteSustain(Notes& n, const std::string& target, const BreakerConfig& cfg) {
  if (cfg.trip.sustain > 0)
    n.gap(Topic::Sustain, target +
                              " has no sustain: it trips on the first evaluation over the "
                              "threshold (trip.sustain " +
                              formatDuration(cfg.trip.sustain) + " dropped)");
}

void noteRamp(Notes& n, const std::string& target, const BreakerConfig& cfg) {
  if (cfg.ramp.duration > 0)
    n.gap(Topic::Ramp, target + " has no ramp after recovery: full traffic at once (ramp " +
                           formatDuration(cfg.ramp.duration) + " dropped)");
}

void noteClassify(Notes& n, const std::string& target, const BreakerConfig& cfg) {
  const ClassifyConfig def;
  if (cfg.classify.failureStatus != def.failureStatus ||
      cfg.classify.clientErrors != def.clientErrors ||
      cfg.classify.timeoutIsFailure != def.timeoutIsFailure ||
      cfg.classify.resetIsFailure != def.resetIsFailure)
    n.gap(Topic::Classify,
          target +
              ": the policy's classify section is not the default; what counts as a "
              "failure must be set where the target decides it (exception handlers, "
              "retry_on / proxy_next_upstream) — the export assumes 5xx, no response, "
              "timeouts and resets, and 429 where the target counts it");
}

std::string windowText(const BreakerConfig& c) {
  return c.window.type == WindowType::Count ? "window.calls " + std::to_string(c.window.calls)
                                            : "window.length " + formatDuration(c.window.length);
}

void noteUncountedStatuses(Notes& n, const std::string& target, const BreakerConfig& cfg,
                           bool (*targetCounts)(int status), const std::string& scope) {
  std::string list;
  for (int s = 100; s < 600; ++s) {
    if (!cfg.classify.failureStatus[static_cast<std::size_t>(s)] || targetCounts(s)) continue;
    int e = s;  // a run of statuses as one range: 400–499
    while (e + 1 < 600 && cfg.classify.failureStatus[static_cast<std::size_t>(e + 1)] &&
           !targetCounts(e + 1))
      ++e;
    list += (list.empty() ? "" : ", ") + std::to_string(s) +
            (e > s ? "–" + std::to_string(e) : std::string());
    s = e;
  }
  if (!list.empty())
    n.gap(Topic::Classify,
          target + " never counts " + list +
              " as a failure, which the policy does: instances answering so are never taken out" +
              (cfg.classify.failureStatus[429] && !targetCounts(429)
                   ? std::string(" (LLM upstreams often fail with 429)")
                   : std::string()),
          scope);
}

void noteOpenAtSweeps(Notes& n, const std::string& target, const std::string& key,
                      const BreakerConfig& cfg) {
  const Micros interval = std::max<Micros>(1, cfg.window.length);
  const Micros out = (cfg.open.duration + interval - 1) / interval * interval;
  const std::string text = "open.duration " + formatDuration(cfg.open.duration) + " → " + key +
                           " " + protoDur(cfg.open.duration);
  if (out == cfg.open.duration)
    n.exact(Topic::Open, text);
  else
    n.approx(Topic::Open, text + ", but " + target +
                              " returns an ejected host only at its sweeps every interval " +
                              protoDur(interval) + ": out about " + formatDuration(out));
}

void noteJitterDecay(Notes& n, const std::string& target, const BreakerConfig& cfg) {
  if (cfg.open.jitter > 0)
    n.gap(Topic::Backoff, target + " has no open-duration jitter (open.jitter " +
                              num(cfg.open.jitter) + " dropped)");
}

}  // namespace detail

bool isServerAddress(std::string_view s) {
  const std::size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= s.size() ||
      s.size() - colon - 1 > 5)
    return false;
  const auto hostChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
  };
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  if (!std::all_of(s.begin(), s.begin() + static_cast<long>(colon), hostChar) ||
      !std::all_of(s.begin() + static_cast<long>(colon) + 1, s.end(), digit))
    return false;
  const long port = std::stol(std::string(s.substr(colon + 1)));
  return port >= 1 && port <= 65535;
}

}  // namespace spillway::exporter
