// `spillway-cli serve-instances`: the scenario's model instances as fake OpenAI-compatible
// HTTP servers on 127.0.0.1, in real time, for drills against a real gateway (docs/live.md).
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QTimer>

#include <chrono>
#include <cstdio>

#include "cli_common.hpp"
#include "spillway/drill/instance_farm.hpp"
#include "spillway/input_error.hpp"

namespace spillway::cli {
namespace {

// What to serve and for how long, checked against the scenario it is served from.
struct ServeOptions {
  drill::FarmOptions farm;
  Micros wall = 0;  // the scenario's duration at --speed, or --duration
};

ServeOptions readServeOptions(const QCommandLineParser& p, const sim::Scenario& sc) {
  ServeOptions o;
  drill::FarmOptions& opt = o.farm;
  bool ok = false;
  const uint port = p.value("base-port").toUInt(&ok);
  if (!ok || port > 65535) throw InputError("--base-port", 0, "", "expected a port 0..65535");
  opt.basePort = static_cast<quint16>(port);
  opt.speed = p.value("speed").toDouble(&ok);
  if (!ok || !(opt.speed > 0) || opt.speed > 1e6)
    throw InputError("--speed", 0, "", "expected a number in (0, 1000000]");
  if (p.isSet("seed")) {
    opt.seed = p.value("seed").toULongLong(&ok);
    if (!ok) throw InputError("--seed", 0, "", "expected a whole number");
  }
  const qulonglong maxBody = p.value("max-body").toULongLong(&ok);
  // Below a chat request's size every call gets 413: the farm would serve nothing.
  if (!ok || maxBody < 1024 || maxBody > (1ULL << 30))
    throw InputError("--max-body", 0, "",
                     "expected a byte count from 1024 to 1073741824, got '" +
                         p.value("max-body").toStdString() + "'");
  opt.limits.maxBodyBytes = maxBody;
  o.wall = static_cast<Micros>(static_cast<double>(sc.duration) / opt.speed);
  if (p.isSet("duration")) {
    const auto d = parseDuration(p.value("duration").toStdString());
    if (!d || *d <= 0) throw InputError("--duration", 0, "", "expected a duration like 30s");
    o.wall = *d;
  }
  return o;
}

// One line per listener, then what is served for how long.
void announceListeners(const drill::InstanceFarm& farm, const ServeOptions& o) {
  for (const drill::FakeInstance* in : farm.instances()) {
    const sim::ModelSpec* m = nullptr;
    for (const auto& ms : farm.scenario().models)
      for (const auto& is : ms.instances)
        if (is.name == in->name()) m = &ms;
    std::fprintf(stderr, "%s listening on 127.0.0.1:%u (model %s, %u slots, queue %u)\n",
                 in->name().c_str(), in->port(), m ? m->name.c_str() : "?", m ? m->slotCount : 0,
                 m ? m->queue : 0);
  }
  std::fprintf(stderr, "serving %zu instances of %s for %s (fault timeline x%g)\n",
               farm.instances().size(), farm.scenario().name.c_str(), humanDuration(o.wall).c_str(),
               o.farm.speed);
  std::fflush(stderr);
}

// The event loop, until a signal or the wall-clock duration.
void serveUntilStopped(Micros wall) {
  const StopOnSignal stopOnSignal;
  QTimer::singleShot(std::chrono::milliseconds(wall / 1000), Qt::PreciseTimer,
                     QCoreApplication::instance(), &QCoreApplication::quit);
  QCoreApplication::exec();
}

void printInstanceStats(const drill::InstanceFarm& farm) {
  for (const drill::FakeInstance* in : farm.instances()) {
    const drill::InstanceStats& s = in->stats();
    std::fprintf(
        stderr,
        "%s: %llu requests, %llu answered, %llu errors, %llu throttled, %llu queue "
        "full, %llu reset, %llu hung, %llu bad requests\n",
        in->name().c_str(), static_cast<unsigned long long>(s.requests),
        static_cast<unsigned long long>(s.answered), static_cast<unsigned long long>(s.errors),
        static_cast<unsigned long long>(s.throttled), static_cast<unsigned long long>(s.queueFull),
        static_cast<unsigned long long>(s.resets), static_cast<unsigned long long>(s.hangs),
        static_cast<unsigned long long>(s.badRequests));
  }
}

int serve(sim::Scenario sc, const ServeOptions& o) {
  drill::InstanceFarm farm(std::move(sc), o.farm);
  QObject::connect(&farm, &drill::InstanceFarm::faultTransition,
                   [](const QString& text) { std::fprintf(stderr, "%s\n", qPrintable(text)); });
  if (!farm.start()) {
    std::fprintf(stderr, "spillway-cli serve-instances: %s\n", qPrintable(farm.errorString()));
    return kInputError;
  }
  announceListeners(farm, o);
  serveUntilStopped(o.wall);
  printInstanceStats(farm);
  return kOk;
}

}  // namespace

int runServeInstances(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Serve every instance of a scenario as a fake OpenAI-compatible model server on\n"
      "127.0.0.1 (POST /v1/chat/completions with JSON or SSE, GET /health), with the\n"
      "scenario's slots, queue, service times and fault timeline played in real time.\n"
      "One line per listener on stderr, then one per fault transition.");
  p.addHelpOption();
  p.addPositionalArgument("SCENARIO", "scenario file or built-in name (seed-000 ...)");
  p.addOption(
      {"base-port", "first port; instance i listens on P + i (0: any free ports)", "P", "18000"});
  p.addOption(
      {"speed", "play the fault timeline X times faster (service times stay real)", "X", "1"});
  p.addOption({"duration",
               "stop after D of wall-clock time (default: the scenario's duration"
               " at --speed)",
               "D"});
  p.addOption({"seed", "override the scenario's seed", "N"});
  p.addOption({"max-body", "largest request body in bytes (larger: 413)", "BYTES", "1048576"});
  if (const auto done = parseCommandLine(p, args)) return *done;
  if (p.positionalArguments().size() != 1) {
    std::fprintf(stderr, "spillway-cli serve-instances: expected one SCENARIO\n");
    return kInputError;
  }
  try {
    sim::Scenario sc = loadScenario(p.positionalArguments().front().toStdString());
    const ServeOptions o = readServeOptions(p, sc);
    return serve(std::move(sc), o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spillway-cli serve-instances: %s\n", e.what());
    return kInputError;
  }
}

}  // namespace spillway::cli
