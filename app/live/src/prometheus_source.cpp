#include "spillway/live/prometheus_source.hpp"

#include <cctype>

#include "spillway/input_error.hpp"
#include "spillway/live/prometheus_presets.hpp"

namespace spillway::live {

using formats::PromRole;

namespace {

QUrl serverUrl(const std::string& urlText, const std::string& prefix) {
  const QUrl server(QString::fromStdString(urlText), QUrl::StrictMode);
  if (!server.isValid() || (server.scheme() != "http" && server.scheme() != "https") ||
      server.host().isEmpty() || server.hasQuery() || server.hasFragment())
    throw InputError(prefix + "prometheus", 0, "",
                     "expected http://HOST:PORT[/PREFIX], got '" + urlText + "'");
  return server;
}

// nullptr when the spec names no preset.
const PromPreset* specPreset(const PromSourceSpec& spec, const std::string& prefix) {
  if (spec.preset.empty()) return nullptr;
  const std::string& name = spec.preset;
  const PromPreset* preset = findPromPreset(name);
  if (!preset)
    throw InputError(prefix + "prom-preset", 0, "",
                     "expected envoy, litellm, kong, apisix, spillway or list, got '" + name + "'");
  return preset;
}

// The preset's PromQL per role, overridden by the spec's own queries.
std::map<PromRole, std::string> queryTemplates(const PromSourceSpec& spec, const PromPreset* preset,
                                               const std::string& prefix) {
  std::map<PromRole, std::string> templates;
  if (preset) templates = preset->queries;
  for (const auto& [roleName, tmpl] : spec.queries) {
    PromRole role;
    if (!parsePromRole(roleName, role) || tmpl.empty())
      throw InputError(prefix + "prom-query", 0, "",
                       "expected ROLE=PROMQL with ROLE calls, failures, slow or p99, got '" +
                           roleName + "=" + tmpl + "'");
    templates[role] = tmpl;
  }
  if (!templates.count(PromRole::Calls))
    throw InputError(prefix + "prometheus", 0, "",
                     "needs --prom-preset NAME or --prom-query calls=PROMQL "
                     "(--prom-preset list shows the presets)");
  return templates;
}

struct SeriesLabels {
  std::string instance, model;  // model empty: no model label
};

SeriesLabels seriesLabels(const PromSourceSpec& spec, const PromPreset* preset,
                          const std::string& prefix) {
  std::string instanceLabel = preset ? preset->instanceLabel : "instance";
  std::string modelLabel = preset ? preset->modelLabel : "model";
  if (!spec.instanceLabel.empty()) instanceLabel = spec.instanceLabel;
  if (!spec.modelLabel.empty()) modelLabel = spec.modelLabel;
  if (modelLabel == "none") modelLabel.clear();
  for (const auto& [opt, label] :
       {std::pair<std::string, const std::string&>{prefix + "prom-instance-label", instanceLabel},
        {prefix + "prom-model-label", modelLabel}})
    for (char c : label)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
        throw InputError(opt, 0, "", "expected a label name, got '" + label + "'");
  if (instanceLabel.empty())
    throw InputError(prefix + "prom-instance-label", 0, "", "expected a label name");
  return {instanceLabel, modelLabel};
}

// ph: step and by filled in; the slow bound's ${le} is added here.
std::map<PromRole, std::string> expandQueries(const PromSourceSpec& spec, const PromPreset* preset,
                                              const std::map<PromRole, std::string>& templates,
                                              PromPlaceholders ph, const std::string& prefix) {
  const std::string le = !spec.slowLe.empty() ? spec.slowLe
                         : preset             ? preset->slowLe
                                              : std::string();
  const bool leValid = leRegex(le, ph.le);
  if (!spec.slowLe.empty() && !leValid)
    throw InputError(prefix + "prom-slow-le", 0, "",
                     "expected a bucket bound like 5000 or 0.5, got '" + le + "'");
  std::map<PromRole, std::string> queries;
  for (const auto& [role, tmpl] : templates) {
    const std::string roleName(formats::promRoleName(role));
    const bool usesLe =
        tmpl.find("$le") != std::string::npos || tmpl.find("${le}") != std::string::npos;
    if (usesLe && !leValid)
      throw InputError(prefix + "prom-slow-le", 0, "",
                       le.empty() ? "required: the " + roleName + " query uses ${le}"
                                  : "expected a bucket bound like 5000 or 0.5, got '" + le + "'");
    std::string expanded, error;
    if (!expandPromQuery(tmpl, ph, expanded, error))
      throw InputError(prefix + "prom-query", 0, roleName, error);
    queries[role] = expanded;
  }
  return queries;
}

}  // namespace

PullerOptions pullerOptions(const PromSourceSpec& spec, const std::string& prefix) {
  PullerOptions o;
  o.server = serverUrl(spec.url, prefix);
  const PromPreset* preset = specPreset(spec, prefix);
  const std::map<PromRole, std::string> templates = queryTemplates(spec, preset, prefix);

  if (spec.step < seconds(1) || spec.step > seconds(3600) || spec.step % kMicrosPerMilli)
    throw InputError(prefix + "prom-step", 0, "",
                     "expected a duration from 1s to 1h in whole milliseconds");
  o.step = spec.step;
  o.poll = spec.poll;
  o.delay = spec.delay;
  o.backfill = spec.backfill;
  o.timeoutMs = static_cast<int>(spec.timeout / kMicrosPerMilli);

  const SeriesLabels labels = seriesLabels(spec, preset, prefix);
  o.labels["instance"] = labels.instance;
  o.labels["model"] = labels.model;  // empty: every sample's model is empty

  PromPlaceholders ph;
  ph.step = promDuration(o.step);
  ph.by = labels.instance + (labels.model.empty() ? "" : ", " + labels.model);
  o.queries = expandQueries(spec, preset, templates, ph, prefix);
  return o;
}

}  // namespace spillway::live
