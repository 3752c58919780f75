// `spillway-cli simulate SCENARIO --serve-metrics [HOST:]PORT [--speed X]`: the simulator paced
// by the wall clock behind a Prometheus /metrics endpoint, so that a real Prometheus can scrape
// a simulated incident as it unfolds (and `listen --prometheus` can pull it back). Stops at the
// scenario's end, on SIGINT / SIGTERM; then prints the run's report (docs/live.md).
#include <QCoreApplication>
#include <QTimer>

#include <cstdio>

#include "cli_common.hpp"
#include "serve_metrics.hpp"
#include "spillway/drill/metrics_server.hpp"
#include "spillway/drill/paced_simulation.hpp"
#include "spillway/drill/sim_metrics.hpp"
#include "spillway/input_error.hpp"
#include "spillway/live/listen_address.hpp"
#include "spillway/sim/report.hpp"

namespace spillway::cli {

int runServeMetrics(const sim::Scenario& sc, const ServeMetricsRequest& rq) {
  live::ListenAddress at;
  try {
    at = live::parseListenAddress(rq.address, rq.allowRemote, "--serve-metrics");
  } catch (const InputError& e) {
    if (e.detail().find("loopback") == std::string::npos) throw;
    throw InputError(e.file(), 0, "", e.detail() + " (--metrics-allow-remote)");
  }
  drill::SimMetrics metrics(sc);
  sim::SimOptions opt;
  opt.protection = rq.protection;
  opt.series = &metrics;
  opt.attempts = &metrics;
  drill::PacedSimulation paced(sc, opt, rq.speed);
  drill::MetricsServerOptions mo;
  mo.address = at.address;
  mo.port = at.port;
  drill::MetricsServer server(mo, [&] {
    metrics.setTime(paced.now());
    return metrics.render();
  });
  QString host = at.address.toString();
  if (at.address.protocol() == QAbstractSocket::IPv6Protocol) host = "[" + host + "]";
  if (!server.start())
    throw InputError("--serve-metrics", 0, "",
                     "cannot listen on " + host.toStdString() + ":" + std::to_string(at.port) +
                         ": " + server.errorString().toStdString());
  const std::string target = host.toStdString() + ":" + std::to_string(server.port());
  std::size_t instances = 0;
  for (const auto& m : sc.models) instances += m.instances.size();
  std::fprintf(
      stderr,
      "serving metrics on http://%s/metrics: %s, %zu instances, protection %s, "
      "scenario time = wall time x %g, %s of scenario time (%s of wall time)\n",
      target.c_str(), sc.name.c_str(), instances, rq.protection ? "on" : "off", rq.speed,
      humanDuration(sc.duration).c_str(),
      humanDuration(static_cast<Micros>(static_cast<double>(sc.duration) / rq.speed)).c_str());
  // The sim's `instance` label names a model instance, not the scrape target: Prometheus must
  // keep it (honor_labels), or it renames it exported_instance.
  std::fprintf(stderr,
               "scrape with: {job_name: spillway-sim, honor_labels: true, scrape_interval: 1s, "
               "static_configs: [{targets: ['%s']}]}\n",
               target.c_str());
  std::fflush(stderr);

  const StopOnSignal stopOnSignal;
  QObject::connect(&paced, &drill::PacedSimulation::done, QCoreApplication::instance(),
                   &QCoreApplication::quit);
  paced.start();
  QCoreApplication::exec();
  paced.stop();

  std::fprintf(stderr, "%s at scenario time %s, %llu scrapes; the simulator lagged at most %s\n",
               paced.finished() ? "scenario over" : "stopped", humanDuration(paced.now()).c_str(),
               static_cast<unsigned long long>(server.stats().scrapes),
               humanDuration(paced.maxLag()).c_str());
  std::fputs(sim::reportTable(paced.simulator().report()).c_str(), stdout);
  return kOk;
}

}  // namespace spillway::cli
