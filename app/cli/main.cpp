// spillway-cli: headless Spillway. `spillway-cli <command> [options]`; `--help` on each.
#include <QCoreApplication>
#include <QStringList>

#include <cstdio>
#include <string>

#include "cli_common.hpp"

namespace {

using spillway::cli::kInputError;

// The one list of commands: dispatch and the usage text both read it. A summary's "\n"
// continues it on the next line, under the first.
struct Command {
  const char* name;
  int (*run)(const QStringList& args);
  const char* summary;
};

const Command kCommands[] = {
    {"replay", spillway::cli::runReplay,
     "replay recorded telemetry (JSONL or an access log) through a breaker policy"},
    {"simulate", spillway::cli::runSimulate,
     "run a scenario (built-in seed-000..003 or a file) and report its KPIs;\n"
     "--serve-metrics ADDR runs it in real time with a Prometheus /metrics"},
    {"knee", spillway::cli::runKnee,
     "stepped load 30 %..300 %: find the capacity knee of a scenario"},
    {"drill", spillway::cli::runDrill,
     "run a drill runbook (faults, traffic, expectations); exit 1 on a broken one"},
    {"import", spillway::cli::runImport,
     "import telemetry (jsonl, csv, nginx, envoy, haproxy, otlp, prometheus) into the library"},
    {"library", spillway::cli::runLibrary,
     "list, show, export, annotate, delete or copy incidents in the library (a file or\n"
     "a postgresql:// URL); record, record-info and cut live recordings"},
    {"sweep", spillway::cli::runSweepCommand,
     "replay incidents under a grid of breaker parameters: table + Pareto front;\n"
     "--shard I/N and 'sweep merge' cut it into batch tasks (Slurm, Kubernetes)"},
    {"calibrate", spillway::cli::runCalibrate,
     "the policy that meets targets (fp<=0.03,ttd<=30s) on incidents, or why not"},
    {"compare", spillway::cli::runCompare, "several policies on the same incidents, side by side"},
    {"serve-instances", spillway::cli::runServeInstances,
     "fake OpenAI-compatible instances of a scenario on 127.0.0.1 (drills)"},
    {"listen", spillway::cli::runListen,
     "shadow mode over live telemetry (access log, OTLP/HTTP, Prometheus):\n"
     "would-open verdicts; --record keeps it in the library for cutting"},
    {"export", spillway::cli::runExport,
     "write a policy as resilience4j/envoy/istio/sentinel/haproxy/nginx/litellm config;\n"
     "--validate replays incidents under it, --require gates on the KPIs"},
    {"import-config", spillway::cli::runImportConfig,
     "resilience4j/envoy/sentinel config -> a Spillway policy"},
};

void usage(std::FILE* to) {
  std::string text = "Usage: spillway-cli <command> [options]\n\nCommands:\n";
  for (const Command& c : kCommands) {
    const std::string name(c.name);
    text += "  " + name + std::string(name.size() < 8 ? 10 - name.size() : 2, ' ');
    for (const char* s = c.summary; *s; ++s)
      text += *s == '\n' ? std::string("\n") + std::string(12, ' ') : std::string(1, *s);
    text += "\n";
  }
  text +=
      "\nRun 'spillway-cli <command> --help' for a command's options.\n"
      "Exit codes: 0 success, 1 findings, 2 usage or input error.\n";
  std::fputs(text.c_str(), to);
}

const Command* find(const QString& name) {
  for (const Command& c : kCommands)
    if (name == QLatin1String(c.name)) return &c;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  QCoreApplication::setApplicationName("spillway-cli");
  QCoreApplication::setApplicationVersion(SPILLWAY_VERSION);
  QStringList args = QCoreApplication::arguments();
  if (args.size() < 2) {
    usage(stderr);
    return kInputError;
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
  const Command* command = find(cmd);
  if (!command) {
    std::fprintf(stderr, "spillway-cli: unknown command '%s'\n\n", qPrintable(cmd));
    usage(stderr);
    return kInputError;
  }
  // Whatever a command lets escape ends as exit 2 with a message, never as an abort.
  try {
    return command->run(args);
  } catch (...) {
    return spillway::cli::reportUncaught(cmd);
  }
}
