// The live drill runner of `spillway-cli drill --gateway` (drill_live.hpp): serves the runbook's
// instances, drives its clients through the gateway in real time and judges the callers' KPIs.
#include <QCoreApplication>
#include <QTimer>
#include <QUrl>

#include <cstdio>

#include "cli_common.hpp"
#include "drill_live.hpp"
#include "spillway/drill/live_drill.hpp"
#include "spillway/input_error.hpp"

namespace spillway::cli {

sim::DrillResult runLiveDrill(const sim::Runbook& rb, const LiveDrillRequest& rq) {
  const QUrl url(rq.gateway, QUrl::StrictMode);
  if (!url.isValid() || url.scheme() != "http" || url.host().isEmpty() || url.port() <= 0)
    throw InputError("--gateway", 0, "",
                     "expected http://HOST:PORT[/path], got '" + rq.gateway.toStdString() + "'");
  drill::LiveDrillOptions o;
  o.gateway = url;
  o.basePort = static_cast<quint16>(rq.basePort);
  o.speed = rq.speed;
  o.rateScale = rq.rateScale;
  o.maxInFlight = rq.maxInFlight;
  drill::LiveDrill rig(rb.scenario, o);
  QObject::connect(&rig.farm(), &drill::InstanceFarm::faultTransition,
                   [](const QString& text) { std::fprintf(stderr, "%s\n", qPrintable(text)); });
  if (!rig.start()) throw InputError("--base-port", 0, "", rig.errorString().toStdString());
  for (const drill::FakeInstance* in : rig.farm().instances())
    std::fprintf(stderr, "%s listening on 127.0.0.1:%u\n", in->name().c_str(), in->port());
  const Micros wall = static_cast<Micros>(static_cast<double>(rb.scenario.duration) / rq.speed);
  std::fprintf(stderr, "drill %s: load through %s for %s (fault timeline x%g)\n", rb.name.c_str(),
               qPrintable(rq.gateway), humanDuration(wall).c_str(), rq.speed);
  std::fflush(stderr);
  // The scenario's duration, then every call ends within its client's timeout.
  Micros longest = 0;
  for (const sim::ClientSpec& cs : rb.scenario.clients) longest = std::max(longest, cs.timeout);
  QTimer guard;
  guard.setSingleShot(true);
  QObject::connect(&guard, &QTimer::timeout, QCoreApplication::instance(), &QCoreApplication::quit);
  guard.start(static_cast<int>(std::min<Micros>((wall + longest) / 1000 + 5000, 86'400'000)));
  QObject::connect(&rig, &drill::LiveDrill::finished, QCoreApplication::instance(),
                   &QCoreApplication::quit, Qt::QueuedConnection);
  QCoreApplication::exec();

  std::uint64_t answered = 0, hit = 0, degraded = 0, anyAnswer = 0, sent = 0;
  for (const drill::LiveCall& c : rig.calls()) {
    answered += c.status == 200;
    hit += c.gatewayFault;
    degraded += c.degraded;
    sent += !c.gatewayFault;
    anyAnswer += !c.gatewayFault && c.status != 0;
  }
  // Not a drill result: a gateway that never answered is a setup mistake, not a failed
  // expectation a CI job would chart.
  if (sent > 0 && anyAnswer == 0)
    throw InputError("--gateway", 0, "",
                     "no HTTP answer from " + rq.gateway.toStdString() + " to any of " +
                         std::to_string(sent) +
                         " requests: is the gateway running, and are its upstreams the "
                         "instances' ports (--base-port)?");
  std::fprintf(stderr,
               "drill %s: %zu requests sent, %llu answered 200 (%llu by another model), %llu hit "
               "by ingress faults, %llu not sent (over --max-in-flight)\n",
               rb.name.c_str(), rig.calls().size(), static_cast<unsigned long long>(answered),
               static_cast<unsigned long long>(degraded), static_cast<unsigned long long>(hit),
               static_cast<unsigned long long>(rig.notSent()));
  // Every drill KPI, null where the callers cannot measure it (as a simulated run's n/a).
  const auto measured = drill::liveKpis(rb.scenario, rig.calls());
  std::vector<std::pair<std::string, std::optional<double>>> kpis;
  for (const std::string& key : sim::drillKpis()) {
    std::optional<double> v;
    for (const auto& [k, x] : measured)
      if (k == key) v = x;
    kpis.emplace_back(key, v);
  }
  sim::DrillResult d = sim::judgeDrill(rb, std::move(kpis));
  d.target = "gateway " + rq.gateway.toStdString();
  return d;
}

}  // namespace spillway::cli
