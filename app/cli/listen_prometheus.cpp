#include "listen_prometheus.hpp"

#include "spillway/input_error.hpp"
#include "spillway/live/prometheus_source.hpp"

namespace spillway::cli {
namespace {

Micros durationOption(const QCommandLineParser& p, const char* name, Micros lo, Micros hi) {
  const std::string text = p.value(name).toStdString();
  const auto d = parseDuration(text);
  if (!d || *d < lo || *d > hi || *d % kMicrosPerMilli)
    throw InputError(std::string("--") + name, 0, "",
                     "expected a duration from " + formatDuration(lo) + " to " +
                         formatDuration(hi) + " in whole milliseconds, got '" + text + "'");
  return *d;
}

}  // namespace

void addPrometheusOptions(QCommandLineParser& p) {
  p.addOption({"prometheus",
               "pull per-step counts from this Prometheus server (query_range), e.g. "
               "http://127.0.0.1:9090",
               "URL"});
  p.addOption({"prom-preset",
               "PromQL for a gateway's metric names: envoy, litellm, kong, apisix, spillway; "
               "'list' prints them",
               "NAME"});
  p.addOption({"prom-query",
               "PromQL for one role (calls, failures, slow, p99), replacing the preset's; "
               "${step}, ${le}, ${by} are filled in (repeatable)",
               "ROLE=PROMQL"});
  p.addOption({"prom-step", "the step the counts cover", "D", "5s"});
  p.addOption({"prom-poll", "how often to look for complete steps", "D", "1s"});
  p.addOption({"prom-delay", "ask for a step this long after it ended (scrapes land)", "D", "2s"});
  p.addOption({"prom-slow-le",
               "the latency bucket bound that makes a call slow, in the histogram's unit "
               "(default: the preset's)",
               "X"});
  p.addOption(
      {"prom-instance-label", "the label naming an instance (default: the preset's)", "LABEL"});
  p.addOption({"prom-model-label",
               "the label naming the model, 'none' for none (default: the preset's)", "LABEL"});
  p.addOption({"prom-timeout", "give up on a poll's queries after D", "D", "10s"});
  p.addOption({"prom-backfill", "the first poll also asks for D of history", "D", "0s"});
}

live::PullerOptions prometheusOptions(const QCommandLineParser& p) {
  live::PromSourceSpec s;
  s.url = p.value("prometheus").toStdString();
  if (p.isSet("prom-preset")) s.preset = p.value("prom-preset").toStdString();
  for (const QString& q : p.values("prom-query")) {
    const qsizetype eq = q.indexOf('=');
    if (eq <= 0 || eq == q.size() - 1)
      throw InputError("--prom-query", 0, "",
                       "expected ROLE=PROMQL with ROLE calls, failures, slow or p99, got '" +
                           q.toStdString() + "'");
    s.queries.emplace_back(q.left(eq).toStdString(), q.mid(eq + 1).toStdString());
  }
  s.step = durationOption(p, "prom-step", seconds(1), seconds(3600));
  s.poll = durationOption(p, "prom-poll", millis(100), seconds(3600));
  s.delay = durationOption(p, "prom-delay", 0, seconds(3600));
  s.backfill = durationOption(p, "prom-backfill", 0, seconds(7 * 24 * 3600));
  s.timeout = durationOption(p, "prom-timeout", millis(100), seconds(300));
  if (p.isSet("prom-slow-le")) s.slowLe = p.value("prom-slow-le").toStdString();
  if (p.isSet("prom-instance-label"))
    s.instanceLabel = p.value("prom-instance-label").toStdString();
  if (p.isSet("prom-model-label")) s.modelLabel = p.value("prom-model-label").toStdString();
  return live::pullerOptions(s, "--");
}

std::string describePuller(const live::PullerOptions& o) {
  std::string out = "pulling " + o.server.toString().toStdString() + " every " +
                    formatDuration(o.poll) + ": steps of " + formatDuration(o.step) +
                    ", each asked for " + formatDuration(o.delay) + " after it ends\n";
  for (const auto& [role, q] : o.queries)
    out += "  " + std::string(formats::promRoleName(role)) + ": " + q + "\n";
  return out;
}

}  // namespace spillway::cli
