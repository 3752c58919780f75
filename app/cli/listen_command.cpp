// `spillway-cli listen`: shadow mode over a live access log. Tails the file (rotation-safe),
// turns each line into call records, runs them through the policy with every breaker in
// METRICS_ONLY and prints each "would open" as it happens, then a summary (docs/live.md).
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QTimer>

#include <chrono>
#include <csignal>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "spillway/input_error.hpp"
#include "spillway/live/log_tail.hpp"
#include "spillway/live/shadow.hpp"

namespace spillway::cli {
namespace {

volatile std::sig_atomic_t gStop = 0;
void onSignal(int) {
  gStop = 1;
}

nlohmann::json verdictJson(const live::WouldOpenVerdict& v) {
  return {{"ts", static_cast<double>(v.event.ts) / 1e3},
          {"instance", v.instance},
          {"event", "would_open"},
          {"reason", std::string(reasonName(v.event.reason))},
          {"error_rate", v.event.errorRate},
          {"slow_rate", v.event.slowRate},
          {"error_threshold", v.errorThreshold},
          {"slow_threshold", v.slowThreshold},
          {"calls", v.event.calls},
          {"sustained_ms", static_cast<double>(v.event.sustained) / 1e3}};
}

}  // namespace

int runListen(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Shadow mode over a live access log: tail FILE (surviving rotation), run every call\n"
      "through the policy with each breaker in METRICS_ONLY, and print each \"would open\"\n"
      "as it happens, then a per-instance summary. Exit 1 when something would have opened.");
  p.addHelpOption();
  p.addOption({"tail", "the access log to follow", "FILE"});
  p.addOption({"format", "nginx, envoy or jsonl", "F", "nginx"});
  p.addOption({"policy", "policy file (default: the built-in default policy)", "P.yaml"});
  p.addOption({"duration", "stop after D of wall-clock time (default: until Ctrl-C)", "D"});
  p.addOption({"from-start", "read the file's existing lines too, not only new ones"});
  p.addOption({"alias", "name an upstream in the output: ADDR=NAME (repeatable)", "ADDR=NAME"});
  p.addOption({"map", "field map overrides: field=key,... (docs/formats.md)", "MAP"});
  p.addOption({"poll", "poll interval", "D", "200ms"});
  p.addOption({"json", "JSON lines: one per verdict, then the summary object"});
  if (!p.parse(args)) {
    std::fprintf(stderr, "spillway-cli listen: %s\n", qPrintable(p.errorText()));
    return kInputError;
  }
  if (p.isSet("help")) {
    std::fputs(qPrintable(p.helpText()), stdout);
    return kOk;
  }
  try {
    if (!p.isSet("tail")) throw InputError("--tail", 0, "", "required: the log file to follow");
    if (!p.positionalArguments().isEmpty())
      throw InputError(p.positionalArguments().front().toStdString(), 0, "", "unexpected argument");
    live::ShadowOptions opt;
    const std::string fmt = p.value("format").toStdString();
    if (!formats::parseFormat(fmt, opt.format) ||
        (opt.format != formats::Format::Nginx && opt.format != formats::Format::Envoy &&
         opt.format != formats::Format::Jsonl))
      throw InputError("--format", 0, "", "expected nginx, envoy or jsonl, got '" + fmt + "'");
    if (p.isSet("map")) opt.map = formats::parseFieldMap(p.value("map").toStdString(), opt.format);
    for (const QString& a : p.values("alias")) {
      const qsizetype eq = a.indexOf('=');
      if (eq <= 0 || eq == a.size() - 1)
        throw InputError("--alias", 0, "", "expected ADDR=NAME, got '" + a.toStdString() + "'");
      opt.aliases[a.left(eq).toStdString()] = a.mid(eq + 1).toStdString();
    }
    const std::string file = p.value("tail").toStdString();
    opt.sourceName = file;
    const auto poll = parseDuration(p.value("poll").toStdString());
    if (!poll || *poll < millis(10) || *poll > seconds(60))
      throw InputError("--poll", 0, "", "expected a duration from 10ms to 60s");
    Micros wall = 0;
    if (p.isSet("duration")) {
      const auto d = parseDuration(p.value("duration").toStdString());
      if (!d || *d <= 0) throw InputError("--duration", 0, "", "expected a duration like 30s");
      wall = *d;
    }
    const bool json = p.isSet("json");
    live::ShadowMonitor monitor(loadPolicy(p.value("policy").toStdString()), opt);
    monitor.onWouldOpen = [json](const live::WouldOpenVerdict& v) {
      if (json)
        std::printf("%s\n", verdictJson(v).dump().c_str());
      else
        std::printf("%s\n", v.text.c_str());
      std::fflush(stdout);
    };

    live::TailOptions to;
    to.pollMs = static_cast<int>(*poll / 1000);
    to.fromStart = p.isSet("from-start");
    live::LogTail tail(QString::fromStdString(file), to,
                       [&monitor](std::string_view line) { monitor.addLine(line); });
    // Lines are parsed in batches: whatever one poll brought.
    QTimer flush;
    QObject::connect(&flush, &QTimer::timeout, [&monitor] { monitor.flush(); });
    flush.start(to.pollMs);
    tail.start();
    monitor.flush();
    std::fprintf(stderr, "listening to %s (%s) in shadow mode%s\n", file.c_str(), fmt.c_str(),
                 wall ? (" for " + humanDuration(wall)).c_str() : "; Ctrl-C for the summary");

    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    QTimer stopCheck;
    QObject::connect(&stopCheck, &QTimer::timeout, [] {
      if (gStop) QCoreApplication::quit();
    });
    stopCheck.start(100);
    if (wall)
      QTimer::singleShot(std::chrono::milliseconds(wall / 1000), Qt::PreciseTimer,
                         QCoreApplication::instance(), &QCoreApplication::quit);
    QCoreApplication::exec();
    tail.poll();  // what arrived since the last poll
    monitor.flush();

    const auto rows = monitor.summary();
    std::uint64_t opens = 0;
    for (const auto& r : rows) opens += r.wouldOpens;
    if (json) {
      nlohmann::json inst = nlohmann::json::array();
      for (const auto& r : rows)
        inst.push_back({{"instance", r.instance},
                        {"calls", r.calls},
                        {"failures", r.failures},
                        {"slow", r.slow},
                        {"would_opens", r.wouldOpens},
                        {"error_rate", r.errorRate},
                        {"slow_rate", r.slowRate},
                        {"p99_ms", r.p99Ms},
                        {"slow_threshold_ms",
                         r.slowThresholdUs == kForever
                             ? nlohmann::json(nullptr)
                             : nlohmann::json(static_cast<double>(r.slowThresholdUs) / 1e3)},
                        {"first_would_open",
                         r.firstWouldOpen == kNever
                             ? nlohmann::json(nullptr)
                             : nlohmann::json(static_cast<double>(r.firstWouldOpen) / 1e3)}});
      nlohmann::json s = {{"summary", true},
                          {"file", file},
                          {"lines", monitor.lines()},
                          {"records", monitor.records()},
                          {"bad_lines", monitor.badLines()},
                          {"ignored_lines", monitor.ignored()},
                          {"would_opens", opens},
                          {"instances", inst},
                          {"errors", monitor.errors()}};
      std::printf("%s\n", s.dump().c_str());
    } else {
      std::printf("\n%llu lines, %llu calls, %llu bad lines, %llu without an upstream\n",
                  static_cast<unsigned long long>(monitor.lines()),
                  static_cast<unsigned long long>(monitor.records()),
                  static_cast<unsigned long long>(monitor.badLines()),
                  static_cast<unsigned long long>(monitor.ignored()));
      std::printf("  %-28s %8s %8s %8s %10s %10s %11s\n", "instance", "calls", "errors", "slow",
                  "p99 (ms)", "slow > ms", "would open");
      for (const auto& r : rows) {
        char thr[32] = "learning";
        if (r.slowThresholdUs != kForever)
          std::snprintf(thr, sizeof thr, "%.0f", static_cast<double>(r.slowThresholdUs) / 1e3);
        std::printf("  %-28s %8llu %8llu %8llu %10.0f %10s %11s\n", r.instance.c_str(),
                    static_cast<unsigned long long>(r.calls),
                    static_cast<unsigned long long>(r.failures),
                    static_cast<unsigned long long>(r.slow), r.p99Ms, thr,
                    r.wouldOpens ? ("yes @" + live::clockTime(r.firstWouldOpen)).c_str() : "no");
      }
      for (const auto& e : monitor.errors()) std::fprintf(stderr, "bad line: %s\n", e.c_str());
    }
    return opens ? kFindings : kOk;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spillway-cli listen: %s\n", e.what());
    return kInputError;
  }
}

}  // namespace spillway::cli
