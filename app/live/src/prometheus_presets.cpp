// The gateway presets of `listen --prometheus` and the placeholder expansion of their PromQL.
//
// Counts over a step are written as per-series differences, clamp_min(x - x offset STEP, 0),
// not increase(x[STEP]): the difference of the last samples at or before each step end tiles
// exactly (consecutive steps add up to the counter's growth, in whole calls), and it works when
// the step is as short as the scrape interval, where increase() over one sample returns
// nothing. A counter reset clamps that one step to 0. docs/live.md says more.
#include "spillway/live/prometheus_presets.hpp"

#include <cctype>

namespace spillway::live {
namespace {

using formats::PromRole;

// Calls of the selector over the step, per instance (and model).
std::string counts(const std::string& sel) {
  return "sum by (${by}) (clamp_min(" + sel + " - " + sel + " offset ${step}, 0))";
}

// `name{matchers}` with one more matcher.
std::string withMatcher(const std::string& name, const std::string& matchers,
                        const std::string& extra) {
  return name + "{" + (matchers.empty() ? extra : matchers + "," + extra) + "}";
}

// Slow calls from a histogram: all observations minus those at or under the slow bound.
std::string slowFromHistogram(const std::string& base, const std::string& matchers) {
  const std::string count = matchers.empty() ? base + "_count" : base + "_count{" + matchers + "}";
  return counts(count) + " - " + counts(withMatcher(base + "_bucket", matchers, "le=~\"${le}\""));
}

std::string p99FromHistogram(const std::string& base, const std::string& matchers, bool seconds) {
  const std::string b = matchers.empty() ? base + "_bucket" : base + "_bucket{" + matchers + "}";
  return "histogram_quantile(0.99, sum by (${by}, le) (clamp_min(" + b + " - " + b +
         " offset ${step}, 0)))" + (seconds ? " * 1000" : "");
}

std::vector<PromPreset> build() {
  std::vector<PromPreset> v;
  v.push_back(
      {"envoy",
       "Envoy cluster stats (/stats/prometheus, default tag extraction)",
       "envoy_cluster_name",
       "",
       "5000",
       "ms",
       {{PromRole::Calls, counts("envoy_cluster_upstream_rq_total")},
        {PromRole::Failures,
         counts("envoy_cluster_upstream_rq_xx{envoy_response_code_class=\"5\"}")},
        {PromRole::Slow, slowFromHistogram("envoy_cluster_upstream_rq_time", "")},
        {PromRole::P99, p99FromHistogram("envoy_cluster_upstream_rq_time", "", false)}},
       "An instance is a cluster: Envoy's Prometheus output has no per-endpoint counters by "
       "default. upstream_rq_total counts a request when it is sent, the others when it ends. "
       "Istio names the label cluster_name (--prom-instance-label cluster_name)."});
  v.push_back(
      {"litellm",
       "LiteLLM proxy /metrics (prometheus callback)",
       "api_base",
       "litellm_model_name",
       "5.0",
       "s",
       // prometheus_client exposes a Counter named x as x_total: both spellings are matched.
       {{PromRole::Calls, counts("{__name__=~\"litellm_deployment_total_requests(_total)?\"}")},
        {PromRole::Failures,
         counts("{__name__=~\"litellm_deployment_failure_responses(_total)?\"}")},
        {PromRole::Slow, slowFromHistogram("litellm_llm_api_latency_metric", "")},
        {PromRole::P99, p99FromHistogram("litellm_llm_api_latency_metric", "", true)}},
       "UNVERIFIED against a live LiteLLM. In the LiteLLM source read, "
       "litellm_llm_api_latency_metric is labelled by model, key, team and user, not api_base: "
       "its series are then reported as lacking the instance label and slow stays unknown "
       "(calls and failures still count); give --prom-query slow=... over a histogram that "
       "carries api_base."});
  v.push_back({"kong",
               "Kong Gateway prometheus plugin (status_code_metrics, latency_metrics)",
               "service",
               "",
               "5000",
               "ms",
               {{PromRole::Calls, counts("kong_http_requests_total")},
                {PromRole::Failures, counts("kong_http_requests_total{code=~\"5..\"}")},
                {PromRole::Slow, slowFromHistogram("kong_upstream_latency_ms", "")},
                {PromRole::P99, p99FromHistogram("kong_upstream_latency_ms", "", false)}},
               "An instance is a Kong service, not an upstream target. kong_http_requests_total "
               "also counts requests Kong answered itself (auth, rate limits)."});
  v.push_back(
      {"apisix",
       "Apache APISIX prometheus plugin",
       "node",
       "route",
       "5000",
       "ms",
       {{PromRole::Calls, counts("apisix_http_status")},
        {PromRole::Failures, counts("apisix_http_status{code=~\"5..\"}")},
        {PromRole::Slow, slowFromHistogram("apisix_http_latency", "type=\"upstream\"")},
        {PromRole::P99, p99FromHistogram("apisix_http_latency", "type=\"upstream\"", false)}},
       "An instance is an upstream node. apisix_http_status counts every response, including "
       "those APISIX produced itself."});
  v.push_back({"spillway",
               "spillway-cli simulate --serve-metrics (scrape it with honor_labels: true)",
               "instance",
               "model",
               "5",
               "s",
               {{PromRole::Calls, counts("spillway_sim_requests_total")},
                {PromRole::Failures, counts("spillway_sim_failures_total")},
                {PromRole::Slow, slowFromHistogram("spillway_sim_latency_seconds", "")},
                {PromRole::P99, p99FromHistogram("spillway_sim_latency_seconds", "", true)}},
               "Without honor_labels: true, Prometheus renames the exported instance label to "
               "exported_instance (then: --prom-instance-label exported_instance)."});
  return v;
}

bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

}  // namespace

const std::vector<PromPreset>& promPresets() {
  static const std::vector<PromPreset> presets = build();
  return presets;
}

const PromPreset* findPromPreset(std::string_view name) {
  for (const PromPreset& p : promPresets())
    if (p.name == name) return &p;
  return nullptr;
}

bool parsePromRole(std::string_view s, formats::PromRole& out) {
  for (PromRole r : {PromRole::Calls, PromRole::Failures, PromRole::Slow, PromRole::P99})
    if (formats::promRoleName(r) == s) {
      out = r;
      return true;
    }
  return false;
}

std::string promDuration(Micros d) {
  if (d % kMicrosPerSecond == 0) return std::to_string(d / kMicrosPerSecond) + "s";
  return std::to_string(d / kMicrosPerMilli) + "ms";
}

bool leRegex(std::string_view le, std::string& out) {
  const std::size_t dot = le.find('.');
  std::string_view whole = le.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view{} : le.substr(dot + 1);
  if (whole.empty() && frac.empty()) return false;
  for (std::string_view part : {whole, frac})
    for (char c : part)
      if (c < '0' || c > '9') return false;
  if (dot != std::string_view::npos && frac.empty()) return false;  // "5." is not a bound
  while (!whole.empty() && whole.front() == '0') whole.remove_prefix(1);
  while (!frac.empty() && frac.back() == '0') frac.remove_suffix(1);
  // Go writes 5000, Python 5000.0, nginx-lua-prometheus (Kong, APISIX) 05000.0: one number.
  out = "0*" + std::string(whole);
  out += frac.empty() ? "(\\\\.0*)?" : "\\\\." + std::string(frac) + "0*";
  return true;
}

bool expandPromQuery(std::string_view tmpl, const PromPlaceholders& p, std::string& out,
                     std::string& error) {
  out.clear();
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] != '$') {
      out += tmpl[i];
      continue;
    }
    std::string_view name;
    std::size_t next = i + 1;
    if (next < tmpl.size() && tmpl[next] == '{') {
      const std::size_t close = tmpl.find('}', next);
      if (close == std::string_view::npos) {
        error = "unterminated ${ at offset " + std::to_string(i);
        return false;
      }
      name = tmpl.substr(next + 1, close - next - 1);
      next = close + 1;
    } else {
      std::size_t e = next;
      while (e < tmpl.size() && isNameChar(tmpl[e])) ++e;
      name = tmpl.substr(next, e - next);
      next = e;
    }
    if (name.empty()) {
      out += '$';
      continue;
    }
    if (name == "step")
      out += p.step;
    else if (name == "le")
      out += p.le;
    else if (name == "by")
      out += p.by;
    else {
      error = "unknown placeholder $" + std::string(name) + " (known: ${step}, ${le}, ${by})";
      return false;
    }
    i = next - 1;
  }
  return true;
}

std::string formatPromPresets() {
  std::string out =
      "Presets of listen --prometheus (--prom-preset NAME). Placeholders: ${step} = --prom-step\n"
      "as a PromQL duration, ${le} = a regex for the --prom-slow-le bucket bound, ${by} = the\n"
      "instance label and the model label. p99 is in milliseconds. --prom-query ROLE=PROMQL\n"
      "replaces one role.\n";
  for (const PromPreset& p : promPresets()) {
    out += "\n" + p.name + ": " + p.gateway + "\n";
    out += "  instance label: " + p.instanceLabel +
           ", model label: " + (p.modelLabel.empty() ? "(none)" : p.modelLabel) +
           ", slow bound (--prom-slow-le): " + p.slowLe + " " + p.latencyUnit + "\n";
    for (const auto& [role, q] : p.queries)
      out += "  " + std::string(formats::promRoleName(role)) + ": " + q + "\n";
    out += "  note: " + p.notes + "\n";
  }
  return out;
}

}  // namespace spillway::live
