// spillway-cli: headless Spillway. `spillway-cli <command> [options]`; `--help` on each.
#include <QCoreApplication>
#include <QStringList>

#include <cstdio>

#include "cli_common.hpp"

namespace {

void usage(std::FILE* to) {
  std::fputs(
      "Usage: spillway-cli <command> [options]\n"
      "\n"
      "Commands:\n"
      "  replay    replay recorded telemetry (JSONL) through a breaker policy\n"
      "  simulate  run a scenario (built-in seed-000..003 or a file) and report its KPIs;\n"
      "            --serve-metrics ADDR runs it in real time with a Prometheus /metrics\n"
      "  knee      stepped load 30 %..300 %: find the capacity knee of a scenario\n"
      "  drill     run a drill runbook (faults, traffic, expectations); exit 1 on a broken one\n"
      "  import    import telemetry (jsonl, csv, nginx, envoy, otlp, prometheus) into the library\n"
      "  library   list, show, export, annotate or delete incidents in the library; record,\n"
      "            record-info and cut live recordings\n"
      "  sweep     replay incidents under a grid of breaker parameters: table + Pareto front\n"
      "  calibrate  the policy that meets targets (fp<=0.03,ttd<=30s) on incidents, or why not\n"
      "  compare   several policies on the same incidents, side by side\n"
      "  serve-instances  fake OpenAI-compatible instances of a scenario on 127.0.0.1 (drills)\n"
      "  listen    shadow mode over live telemetry (access log, OTLP/HTTP, Prometheus):\n"
      "            would-open verdicts; --record keeps it in the library for cutting\n"
      "  export    write a policy as resilience4j/envoy/istio/sentinel/haproxy/nginx/litellm "
      "config;\n"
      "            --validate replays incidents under it, --require gates on the KPIs\n"
      "  import-config  resilience4j/envoy/sentinel config -> a Spillway policy\n"
      "\n"
      "Run 'spillway-cli <command> --help' for a command's options.\n"
      "Exit codes: 0 success, 1 findings, 2 usage or input error.\n",
      to);
}

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  QCoreApplication::setApplicationName("spillway-cli");
  QCoreApplication::setApplicationVersion(SPILLWAY_VERSION);
  QStringList args = QCoreApplication::arguments();
  if (args.size() < 2) {
    usage(stderr);
    return spillway::cli::kInputError;
  }
  const QString cmd = args.at(1);
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    usage(stdout);
    return spillway::cli::kOk;
  }
  if (cmd == "--version") {
    std::printf("spillway-cli %s\n", SPILLWAY_VERSION);
    return spillway::cli::kOk;
  }
  // The subcommand sees "spillway-cli <command>" as its program name.
  args.removeAt(1);
  args[0] = "spillway-cli " + cmd;
  // Whatever a command lets escape ends as exit 2 with a message, never as an abort.
  try {
    if (cmd == "replay") return spillway::cli::runReplay(args);
    if (cmd == "simulate") return spillway::cli::runSimulate(args);
    if (cmd == "knee") return spillway::cli::runKnee(args);
    if (cmd == "drill") return spillway::cli::runDrill(args);
    if (cmd == "import") return spillway::cli::runImport(args);
    if (cmd == "library") return spillway::cli::runLibrary(args);
    if (cmd == "sweep") return spillway::cli::runSweepCommand(args);
    if (cmd == "calibrate") return spillway::cli::runCalibrate(args);
    if (cmd == "compare") return spillway::cli::runCompare(args);
    if (cmd == "serve-instances") return spillway::cli::runServeInstances(args);
    if (cmd == "listen") return spillway::cli::runListen(args);
    if (cmd == "export") return spillway::cli::runExport(args);
    if (cmd == "import-config") return spillway::cli::runImportConfig(args);
  } catch (...) {
    return spillway::cli::reportUncaught(cmd);
  }
  std::fprintf(stderr, "spillway-cli: unknown command '%s'\n\n", qPrintable(cmd));
  usage(stderr);
  return spillway::cli::kInputError;
}
