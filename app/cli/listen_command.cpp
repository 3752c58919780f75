// `spillway-cli listen`: shadow mode over live telemetry. Tails an access log (rotation-safe)
// and/or receives OTLP/HTTP traces, turns each line or GenAI span into call records, runs them
// through the policy with every breaker in METRICS_ONLY and prints each "would open" as it
// happens, then a summary (docs/live.md).
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QTimer>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "spillway/input_error.hpp"
#include "spillway/live/log_tail.hpp"
#include "spillway/live/otlp_receiver.hpp"
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

// "4318", "127.0.0.1:4318", "[::1]:4318" → the receiver's address and port. Anything but
// loopback needs --otlp-allow-remote: the receiver has no TLS.
void parseOtlpAddress(const std::string& text, bool allowRemote, live::OtlpReceiverOptions& o) {
  std::string host = "127.0.0.1", port = text;
  if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
  }
  bool ok = false;
  const uint n = QString::fromStdString(port).toUInt(&ok);
  if (!ok || n > 65535)
    throw InputError("--otlp", 0, "", "expected [HOST:]PORT, got '" + text + "'");
  QHostAddress addr;
  if (host == "localhost") host = "127.0.0.1";
  if (!addr.setAddress(QString::fromStdString(host)))
    throw InputError("--otlp", 0, "", "expected an IP address, got '" + host + "'");
  if (!addr.isLoopback() && !allowRemote)
    throw InputError("--otlp", 0, "",
                     host +
                         " is not a loopback address; add --otlp-allow-remote to listen there "
                         "(plain HTTP: put it behind TLS and set --otlp-token-file)");
  o.address = addr;
  o.port = static_cast<quint16>(n);
}

std::size_t parseCount(const QCommandLineParser& p, const char* opt, std::size_t min,
                       std::size_t max) {
  bool ok = false;
  const qulonglong n = p.value(opt).toULongLong(&ok);
  if (!ok || n < min || n > max)
    throw InputError(std::string("--") + opt, 0, "",
                     "expected a number from " + std::to_string(min) + " to " +
                         std::to_string(max) + ", got '" + p.value(opt).toStdString() + "'");
  return static_cast<std::size_t>(n);
}

}  // namespace

int runListen(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Shadow mode over live telemetry: tail an access log (surviving rotation) and/or receive\n"
      "OTLP/HTTP traces (GenAI spans), run every call through the policy with each breaker in\n"
      "METRICS_ONLY, and print each \"would open\" as it happens, then a per-instance summary.\n"
      "Exit 1 when something would have opened.");
  p.addHelpOption();
  p.addOption({"tail", "the access log to follow", "FILE"});
  p.addOption({"otlp",
               "receive OTLP/HTTP traces on POST /v1/traces at [HOST:]PORT (4318 is the "
               "OTLP default; loopback unless --otlp-allow-remote)",
               "ADDR"});
  p.addOption({"otlp-allow-remote", "let --otlp listen on a non-loopback address"});
  p.addOption(
      {"otlp-token-file", "require \"Authorization: Bearer <first line of FILE>\"", "FILE"});
  p.addOption({"otlp-max-body", "largest request body in bytes (413 above)", "BYTES", "8388608"});
  p.addOption({"otlp-queue", "intake bound in calls; beyond it requests get 429 + Retry-After",
               "CALLS", "65536"});
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
    if (!p.isSet("tail") && !p.isSet("otlp"))
      throw InputError("--tail", 0, "", "required: a log file to follow, or --otlp ADDR");
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
    opt.sourceName = p.isSet("tail") ? file : "otlp";
    live::OtlpReceiverOptions oo;
    if (p.isSet("otlp")) {
      parseOtlpAddress(p.value("otlp").toStdString(), p.isSet("otlp-allow-remote"), oo);
      oo.limits.maxBodyBytes = parseCount(p, "otlp-max-body", 1024, std::size_t{1} << 30);
      oo.maxInflatedBytes = std::max(oo.maxInflatedBytes, oo.limits.maxBodyBytes);
      oo.maxQueuedCalls = parseCount(p, "otlp-queue", 1, std::size_t{1} << 26);
      if (p.isSet("otlp-token-file")) {
        std::ifstream in(p.value("otlp-token-file").toStdString());
        std::getline(in, oo.bearerToken);
        while (!oo.bearerToken.empty() &&
               (oo.bearerToken.back() == '\r' || oo.bearerToken.back() == ' '))
          oo.bearerToken.pop_back();
        if (!in && oo.bearerToken.empty())
          throw InputError(p.value("otlp-token-file").toStdString(), 0, "",
                           "cannot read the token (first line)");
      }
    }
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
    std::unique_ptr<live::LogTail> tail;
    if (p.isSet("tail"))
      tail = std::make_unique<live::LogTail>(
          QString::fromStdString(file), to,
          [&monitor](std::string_view line) { monitor.addLine(line); });
    // Lines are parsed in batches: whatever one poll brought.
    QTimer flush;
    QObject::connect(&flush, &QTimer::timeout, [&monitor] { monitor.flush(); });
    flush.start(to.pollMs);
    // Spans arrive on the same thread as the lines: one engine, several sources.
    std::unique_ptr<live::OtlpReceiver> otlp;
    if (p.isSet("otlp")) {
      otlp = std::make_unique<live::OtlpReceiver>(
          oo, [&monitor](const formats::SpanCall& c) { monitor.addCall(c.view()); });
      if (!otlp->start())
        throw InputError("--otlp", 0, "",
                         "cannot listen on " + oo.address.toString().toStdString() + ":" +
                             std::to_string(oo.port) + ": " + otlp->errorString().toStdString());
    }
    if (tail) tail->start();
    monitor.flush();
    std::string sources;
    if (tail) sources = file + " (" + fmt + ")";
    if (otlp)
      sources += (sources.empty() ? "" : " and ") + std::string("OTLP/HTTP on ") +
                 oo.address.toString().toStdString() + ":" + std::to_string(otlp->port());
    std::fprintf(stderr, "listening to %s in shadow mode%s\n", sources.c_str(),
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
    if (tail) tail->poll();  // what arrived since the last poll
    monitor.flush();
    if (otlp) otlp->drain();  // every acknowledged span reaches the engine before the summary

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
      if (otlp) {
        const auto& st = otlp->stats();
        s["otlp"] = {{"requests", st.requests},
                     {"accepted", st.accepted},
                     {"partial", st.partial},
                     {"rejected_4xx", st.rejected4xx},
                     {"shed", st.shed},
                     {"timeouts", st.timeouts},
                     {"spans", st.spans},
                     {"calls", st.callsApplied},
                     {"spans_rejected", st.spansRejected}};
      }
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
      if (otlp) {
        const auto& st = otlp->stats();
        std::printf(
            "OTLP: %llu requests, %llu spans, %llu calls, %llu spans rejected (not calls "
            "or invalid), %llu requests refused (4xx), %llu shed (429/503), %llu timed "
            "out\n",
            static_cast<unsigned long long>(st.requests), static_cast<unsigned long long>(st.spans),
            static_cast<unsigned long long>(st.callsApplied),
            static_cast<unsigned long long>(st.spansRejected),
            static_cast<unsigned long long>(st.rejected4xx),
            static_cast<unsigned long long>(st.shed), static_cast<unsigned long long>(st.timeouts));
      }
    }
    return opens ? kFindings : kOk;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spillway-cli listen: %s\n", e.what());
    return kInputError;
  }
}

}  // namespace spillway::cli
