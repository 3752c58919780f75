// `spillway-cli listen`: shadow mode over live telemetry. Tails an access log (rotation-safe),
// receives OTLP/HTTP traces and/or pulls per-step counts from Prometheus, turns each line, GenAI
// span or sample into call records or aggregates, runs them through the policy with every
// breaker in METRICS_ONLY and prints each "would open" as it happens, then a summary
// (docs/live.md).
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFileInfo>
#include <QTimer>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "listen_prometheus.hpp"
#include "spillway/input_error.hpp"
#include "spillway/library/live_recorder.hpp"
#include "spillway/live/bearer_token.hpp"
#include "spillway/live/listen_address.hpp"
#include "spillway/live/log_tail.hpp"
#include "spillway/live/otlp_receiver.hpp"
#include "spillway/live/prometheus_presets.hpp"
#include "spillway/live/prometheus_pull.hpp"
#include "spillway/live/shadow.hpp"

namespace spillway::cli {
namespace {

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

// A duration option as whole milliseconds within [min, max].
int parseMillis(const QCommandLineParser& p, const char* opt, Micros min, Micros max) {
  const auto d = parseDuration(p.value(opt).toStdString());
  if (!d || *d < min || *d > max)
    throw InputError(std::string("--") + opt, 0, "",
                     "expected a duration from " + formatDuration(min) + " to " +
                         formatDuration(max) + ", got '" + p.value(opt).toStdString() + "'");
  return static_cast<int>(*d / kMicrosPerMilli);
}

// The receiver's bounds from the command line (defaults: OtlpReceiverOptions, docs/live.md).
void parseOtlpLimits(const QCommandLineParser& p, live::OtlpReceiverOptions& oo) {
  constexpr std::size_t kMiB = 1024 * 1024;
  oo.limits.maxBodyBytes = parseCount(p, "otlp-max-body", 1024, 64 * kMiB);
  oo.maxInflatedBytes = std::max(oo.maxInflatedBytes, oo.limits.maxBodyBytes);
  oo.maxBufferedBytes = parseCount(p, "otlp-max-buffered", 64 * 1024, 1024 * kMiB);
  if (oo.maxBufferedBytes < oo.limits.maxBodyBytes)
    throw InputError(
        "--otlp-max-buffered", 0, "",
        "must be at least --otlp-max-body (" + std::to_string(oo.limits.maxBodyBytes) + " bytes)");
  oo.maxQueuedCalls = parseCount(p, "otlp-queue", 1, std::size_t{1} << 26);
  oo.maxConnections = static_cast<int>(parseCount(p, "otlp-max-connections", 1, 65536));
  oo.maxConnectionsPerPeer =
      static_cast<int>(parseCount(p, "otlp-max-connections-per-peer", 1, 65536));
  oo.headerTimeoutMs = parseMillis(p, "otlp-header-timeout", millis(10), seconds(600));
  oo.idleTimeoutMs = parseMillis(p, "otlp-idle-timeout", millis(10), seconds(3600));
  oo.minBodyBytesPerSecond = parseCount(p, "otlp-min-body-rate", 1, 1024 * kMiB);
  oo.bodyGraceMs = parseMillis(p, "otlp-body-grace", millis(10), seconds(600));
  oo.requestTimeoutMs = parseMillis(p, "otlp-request-timeout", millis(10), seconds(3600));
  oo.shutdownGraceMs = parseMillis(p, "otlp-shutdown-grace", 0, seconds(600));
  oo.decodeThreads = static_cast<int>(parseCount(p, "otlp-decode-threads", 0, 64));
}

// The bearer token and what remote listening without one means: plain HTTP from anywhere,
// so it needs --insecure, and is said on stderr either way.
void setUpAuthentication(const QCommandLineParser& p, live::OtlpReceiverOptions& oo) {
  if (p.isSet("otlp-token-file"))
    oo.bearerToken = live::readBearerTokenFile(p.value("otlp-token-file").toStdString());
  if (oo.address.isLoopback()) return;
  if (oo.bearerToken.empty()) {
    if (!p.isSet("insecure"))
      throw InputError("--otlp-allow-remote", 0, "",
                       "listening on " + oo.address.toString().toStdString() +
                           " without --otlp-token-file lets anyone who can reach it feed the "
                           "shadow engine; give a token file, or --insecure to do it anyway");
    std::fprintf(stderr,
                 "warning: OTLP receiver on %s without authentication (--insecure): anyone who "
                 "can reach it can send spans\n",
                 qPrintable(oo.address.toString()));
  } else {
    std::fprintf(stderr,
                 "warning: OTLP receiver on %s speaks plain HTTP: the bearer token crosses the "
                 "network in clear text (put TLS in front of it)\n",
                 qPrintable(oo.address.toString()));
  }
}

// What `listen` was asked to do, checked before anything is opened.
struct ListenOptions {
  live::ShadowOptions shadow;
  std::string format;  // as given, for the "listening to" line
  bool tail = false;
  std::string file;  // --tail's value (empty without it)
  bool otlp = false;
  live::OtlpReceiverOptions receiver;
  bool prometheus = false;
  live::PullerOptions puller;
  live::TailOptions tailOptions;
  Micros wall = 0;  // --duration; 0: until Ctrl-C
  bool json = false;
  std::string policy;
  bool record = false;
  std::string recordLibrary;
  std::string recordingName;
  library::RecorderOptions recorder;
};

// The sources that feed the engine, alive from the first line to the summary.
struct ListenSources {
  std::unique_ptr<live::LogTail> tail;
  std::unique_ptr<live::OtlpReceiver> otlp;
  std::unique_ptr<live::PrometheusPuller> prom;
};

// --otlp and the receiver's authentication and bounds.
void addOtlpOptions(QCommandLineParser& p) {
  p.addOption({"otlp",
               "receive OTLP/HTTP traces on POST /v1/traces at [HOST:]PORT (4318 is the "
               "OTLP default; loopback unless --otlp-allow-remote)",
               "ADDR"});
  p.addOption({"otlp-allow-remote",
               "let --otlp listen on a non-loopback address (needs --otlp-token-file, or "
               "--insecure)"});
  p.addOption({"otlp-token-file",
               "require \"Authorization: Bearer <token>\"; the token is FILE's first line that "
               "is neither empty nor a # comment (none: exit 2)",
               "FILE"});
  p.addOption({"insecure", "with --otlp-allow-remote: listen without a token anyway"});
  p.addOption({"otlp-max-body", "largest request body in bytes (413 above; at most 64 MiB)",
               "BYTES", "8388608"});
  p.addOption({"otlp-max-buffered",
               "request bytes buffered over all connections; beyond it 503 + Retry-After", "BYTES",
               "67108864"});
  p.addOption({"otlp-queue", "intake bound in calls; beyond it requests get 429 + Retry-After",
               "CALLS", "65536"});
  p.addOption({"otlp-max-connections", "open connections; more are answered 503", "N", "256"});
  p.addOption({"otlp-max-connections-per-peer",
               "open connections per remote address; more are answered 503", "N", "16"});
  p.addOption({"otlp-header-timeout",
               "a new connection's first byte and a request's whole head must arrive within D "
               "(408)",
               "D", "5s"});
  p.addOption({"otlp-min-body-rate",
               "a body must average at least this many bytes/s once --otlp-body-grace has "
               "passed (408)",
               "BYTES", "16384"});
  p.addOption(
      {"otlp-body-grace", "how long a body may take before its rate is checked", "D", "5s"});
  p.addOption({"otlp-request-timeout", "a whole request, whatever its rate (408)", "D", "60s"});
  p.addOption({"otlp-idle-timeout", "a keep-alive connection between requests is closed after D",
               "D", "15s"});
  p.addOption({"otlp-shutdown-grace",
               "on SIGTERM/SIGINT, requests in flight get D to arrive whole (then 503)", "D",
               "5s"});
  p.addOption({"otlp-decode-threads",
               "threads that inflate and decode request bodies (0: the event loop's own); the "
               "engine sees the calls in the same order either way",
               "N", "2"});
}

void addListenOptions(QCommandLineParser& p) {
  p.setApplicationDescription(
      "Shadow mode over live telemetry: tail an access log (surviving rotation) and/or receive\n"
      "OTLP/HTTP traces (GenAI spans) and/or pull per-step counts from Prometheus, run every\n"
      "call through the policy with each breaker in METRICS_ONLY, and print each \"would open\"\n"
      "as it happens, then a per-instance summary.\n"
      "Exit 1 when something would have opened.");
  p.addHelpOption();
  p.addOption({"tail", "the access log to follow", "FILE"});
  addOtlpOptions(p);
  p.addOption({"max-instances",
               "instances tracked at once (~6 KiB each); a new one over the bound is rejected "
               "(OTLP: partialSuccess) unless an idle one can be evicted",
               "N", "1024"});
  p.addOption({"instance-idle",
               "evict an instance without data for D of data time ('never': keep them)", "D",
               "10m"});
  p.addOption({"format", QString::fromStdString(formats::formatChoices(formats::kTailFormats)), "F",
               "nginx"});
  p.addOption({"policy", "policy file (default: the built-in default policy)", "P.yaml"});
  p.addOption({"duration", "stop after D of wall-clock time (default: until Ctrl-C)", "D"});
  p.addOption({"from-start", "read the file's existing lines too, not only new ones"});
  p.addOption({"alias", "name an upstream in the output: ADDR=NAME (repeatable)", "ADDR=NAME"});
  p.addOption({"map", "field map overrides: field=key,... (docs/formats.md)", "MAP"});
  p.addOption({"poll", "poll interval", "D", "200ms"});
  p.addOption({"json", "JSON lines: one per verdict, then the summary object"});
  p.addOption({"record",
               "record every call and sample into this library's recording (created when "
               "missing), to cut incidents from later: spillway-cli library cut",
               "LIBRARY"});
  p.addOption({"recording", "the recording's name", "NAME", "live"});
  p.addOption(
      {"retain", "with --record: keep this much data time ('none': no age bound)", "D", "24h"});
  addPrometheusOptions(p);
}

// --format, --map, --alias and the instance bound: how lines become calls of which instances.
live::ShadowOptions readShadowOptions(const QCommandLineParser& p, const std::string& fmt) {
  live::ShadowOptions opt;
  opt.keepWindowHistograms = false;  // read for the table, never plotted
  if (!formats::parseFormat(fmt, opt.format) || !formats::isTailFormat(opt.format))
    throw InputError(
        "--format", 0, "",
        "expected " + formats::formatChoices(formats::kTailFormats) + ", got '" + fmt + "'");
  if (p.isSet("map")) opt.map = formats::parseFieldMap(p.value("map").toStdString(), opt.format);
  for (const QString& a : p.values("alias")) {
    const qsizetype eq = a.indexOf('=');
    if (eq <= 0 || eq == a.size() - 1)
      throw InputError("--alias", 0, "", "expected ADDR=NAME, got '" + a.toStdString() + "'");
    opt.aliases[a.left(eq).toStdString()] = a.mid(eq + 1).toStdString();
  }
  opt.maxInstances = parseCount(p, "max-instances", 1, 1'000'000);
  opt.wallClock = live::wallClockMicros;
  if (p.value("instance-idle") == "never") {
    opt.idleHorizon = 0;
  } else {
    const auto idle = parseDuration(p.value("instance-idle").toStdString());
    if (!idle || *idle < millis(1))
      throw InputError("--instance-idle", 0, "",
                       "expected a duration like 10m or never, got '" +
                           p.value("instance-idle").toStdString() + "'");
    opt.idleHorizon = *idle;
  }
  return opt;
}

// --otlp with its bounds and authentication (warnings on stderr); the token options need it.
live::OtlpReceiverOptions readReceiverOptions(const QCommandLineParser& p) {
  live::OtlpReceiverOptions oo;
  if (p.isSet("otlp")) {
    {
      const live::ListenAddress a =
          live::parseListenAddress(p.value("otlp").toStdString(), p.isSet("otlp-allow-remote"),
                                   "--otlp", "add --otlp-allow-remote to listen there");
      oo.address = a.address;
      oo.port = a.port;
    }
    parseOtlpLimits(p, oo);
    setUpAuthentication(p, oo);
  } else if (p.isSet("otlp-token-file") || p.isSet("insecure")) {
    throw InputError(p.isSet("insecure") ? "--insecure" : "--otlp-token-file", 0, "",
                     "only with --otlp");
  }
  return oo;
}

// --record, --recording and --retain.
void readRecordingOptions(const QCommandLineParser& p, ListenOptions& o) {
  o.record = p.isSet("record");
  if (!o.record) return;
  const std::string retain = p.value("retain").toStdString();
  if (retain == "none") {
    o.recorder.retention.maxAge = 0;
  } else {
    const auto d = parseDuration(retain);
    if (!d || *d <= 0)
      throw InputError("--retain", 0, "",
                       "expected a duration like 24h or none, got '" + retain + "'");
    o.recorder.retention.maxAge = *d;
  }
  o.recordLibrary = p.value("record").toStdString();
  o.recordingName = p.value("recording").toStdString();
}

ListenOptions readListenOptions(const QCommandLineParser& p) {
  if (!p.isSet("tail") && !p.isSet("otlp") && !p.isSet("prometheus"))
    throw InputError("--tail", 0, "",
                     "required: a log file to follow, --otlp ADDR or --prometheus URL");
  if (!p.positionalArguments().isEmpty())
    throw InputError(p.positionalArguments().front().toStdString(), 0, "", "unexpected argument");
  ListenOptions o;
  o.format = p.value("format").toStdString();
  o.shadow = readShadowOptions(p, o.format);
  o.tail = p.isSet("tail");
  o.otlp = p.isSet("otlp");
  o.prometheus = p.isSet("prometheus");
  o.file = p.value("tail").toStdString();
  // A file that is not there yet is followed until it appears; a directory never will be one.
  if (o.tail && QFileInfo(QString::fromStdString(o.file)).isDir())
    throw InputError(o.file, 0, "--tail", "is a directory: name the access log file");
  o.shadow.sourceName = o.tail ? o.file : o.otlp ? "otlp" : "prometheus";
  o.receiver = readReceiverOptions(p);
  if (o.prometheus) o.puller = prometheusOptions(p);
  const auto poll = parseDuration(p.value("poll").toStdString());
  if (!poll || *poll < millis(10) || *poll > seconds(60))
    throw InputError("--poll", 0, "", "expected a duration from 10ms to 60s");
  o.tailOptions.pollMs = static_cast<int>(*poll / 1000);
  o.tailOptions.fromStart = p.isSet("from-start");
  if (p.isSet("duration")) {
    const auto d = parseDuration(p.value("duration").toStdString());
    if (!d || *d <= 0) throw InputError("--duration", 0, "", "expected a duration like 30s");
    o.wall = *d;
  }
  o.json = p.isSet("json");
  o.policy = p.value("policy").toStdString();
  readRecordingOptions(p, o);
  return o;
}

// The recording keeps what the engine saw, under the engine's names (aliases applied).
// A library that stays locked past the recorder's stall bound stops the recording, not
// the shadow monitor (an exception must not cross the event loop).
void recordWhatTheEngineSees(live::ShadowMonitor& monitor,
                             std::unique_ptr<library::LiveRecorder>& recorder) {
  auto record = [&recorder](const auto& what) {
    if (!recorder) return;
    try {
      recorder->append(what);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "recording stopped: %s\n", e.what());
      recorder.reset();
    }
  };
  if (!recorder) return;
  monitor.onRecorded = [record](const live::RecordedCall& c) {
    CallRecord r = *c.rec;
    r.instance = c.instance;
    record(r);
  };
  monitor.onAggregated = [record](InstanceId, const formats::AggregateSample& a) { record(a); };
}

// Spans arrive on the same thread as the lines: one engine, several sources.
std::unique_ptr<live::OtlpReceiver> startReceiver(const ListenOptions& o,
                                                  live::ShadowMonitor& monitor) {
  // The instance bound is applied before a request is acknowledged: a refused span is
  // reported in partialSuccess, an admitted one is recorded whatever comes after.
  auto otlp = std::make_unique<live::OtlpReceiver>(
      o.receiver, [&monitor](const formats::SpanCall& c) { monitor.addReservedCall(c.view()); });
  otlp->admit = [&monitor](const formats::SpanCall& c) {
    return monitor.reserve(c.instance, c.model, c.ts + c.latency);
  };
  otlp->admitRefusal = "their instance is over --max-instances " +
                       std::to_string(o.shadow.maxInstances) + " (no idle instance to evict), " +
                       live::otherRefusals(o.shadow);
  if (!otlp->start())
    throw InputError("--otlp", 0, "",
                     "cannot listen on " + o.receiver.address.toString().toStdString() + ":" +
                         std::to_string(o.receiver.port) + ": " +
                         otlp->errorString().toStdString());
  return otlp;
}

// Samples of whole steps, in time order, into the engine's aggregate path.
std::unique_ptr<live::PrometheusPuller> preparePuller(const ListenOptions& o,
                                                      live::ShadowMonitor& monitor) {
  auto prom = std::make_unique<live::PrometheusPuller>(
      o.puller, [&monitor](const live::PromSample& s) { monitor.addAggregate(s.view(), s.p99Ms); });
  auto say = [](const QString& m) {
    std::fprintf(stderr, "%s\n", qPrintable(m));
    std::fflush(stderr);
  };
  QObject::connect(prom.get(), &live::PrometheusPuller::failed, say);
  QObject::connect(prom.get(), &live::PrometheusPuller::warning, say);
  std::fputs(describePuller(o.puller).c_str(), stderr);
  return prom;
}

void announceSources(const ListenOptions& o, const ListenSources& s) {
  std::string sources;
  if (s.tail) sources = o.file + " (" + o.format + ")";
  if (s.otlp)
    sources += (sources.empty() ? "" : " and ") + std::string("OTLP/HTTP on ") +
               o.receiver.address.toString().toStdString() + ":" + std::to_string(s.otlp->port());
  if (s.prom)
    sources += (sources.empty() ? "" : " and ") + std::string("Prometheus at ") +
               o.puller.server.toString().toStdString();
  std::fprintf(stderr, "listening to %s in shadow mode%s\n", sources.c_str(),
               o.wall ? (" for " + humanDuration(o.wall)).c_str() : "; Ctrl-C for the summary");
}

// The event loop, until a signal or --duration.
void runUntilStopped(Micros wall, const std::unique_ptr<live::OtlpReceiver>& otlp,
                     std::unique_ptr<library::LiveRecorder>& recorder) {
  // Stopping (a signal or --duration): the receiver stops accepting, answers or refuses what
  // it has, and hands every answer to the kernel before the loop ends; then the summary.
  auto stop = [&otlp] {
    if (!otlp) return QCoreApplication::quit();
    if (otlp->stopping()) return;
    QObject::connect(otlp.get(), &live::OtlpReceiver::stopped, QCoreApplication::instance(),
                     &QCoreApplication::quit);
    otlp->shutdown();
  };
  const StopOnSignal stopOnSignal(stop, std::chrono::milliseconds(50));
  // The recorder commits by data time; a quiet source is committed within a second anyway.
  QTimer commit;
  if (recorder) {
    QObject::connect(&commit, &QTimer::timeout, [&recorder] {
      try {
        if (recorder) recorder->flush(0);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "recording stopped: %s\n", e.what());
        recorder.reset();
      }
    });
    commit.start(1000);
  }
  if (wall)
    QTimer::singleShot(std::chrono::milliseconds(wall / 1000), Qt::PreciseTimer,
                       QCoreApplication::instance(), stop);
  QCoreApplication::exec();
}

// After the loop: everything the sources took in reaches the engine and the recording.
void drainSources(const ListenOptions& o, ListenSources& s, live::ShadowMonitor& monitor,
                  std::unique_ptr<library::LiveRecorder>& recorder) {
  if (s.tail) s.tail->poll();  // what arrived since the last poll
  monitor.flush();
  if (s.otlp) s.otlp->drain();  // every acknowledged span reaches the engine before the summary
  if (s.prom) s.prom->stop();   // a poll still out is dropped: its steps were never handed on
  if (recorder) {
    recorder->close();  // everything the engine saw is committed before the summary
    std::fprintf(stderr, "recorded %llu records into %s (recording '%s')\n",
                 static_cast<unsigned long long>(recorder->stats().committed),
                 o.recordLibrary.c_str(), o.recordingName.c_str());
  }
}

nlohmann::json instanceJson(const live::InstanceSummary& r) {
  return {{"instance", r.instance},
          {"calls", r.calls},
          {"failures", r.failures},
          {"slow", r.slow},
          {"would_opens", r.wouldOpens},
          {"error_rate", r.errorRate},
          {"slow_rate", r.slowRate},
          {"p99_ms", r.p99Ms},
          {"reported_p99_ms",
           r.reportedP99Ms < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.reportedP99Ms)},
          {"slow_threshold_ms", r.slowThresholdUs == kForever
                                    ? nlohmann::json(nullptr)
                                    : nlohmann::json(static_cast<double>(r.slowThresholdUs) / 1e3)},
          {"first_would_open", r.firstWouldOpen == kNever
                                   ? nlohmann::json(nullptr)
                                   : nlohmann::json(static_cast<double>(r.firstWouldOpen) / 1e3)}};
}

nlohmann::json receiverJson(const live::OtlpReceiverStats& st) {
  return {{"requests", st.requests},
          {"accepted", st.accepted},
          {"partial", st.partial},
          {"rejected_4xx", st.rejected4xx},
          {"shed", st.shed},
          {"timeouts", st.timeouts},
          {"spans", st.spans},
          {"calls", st.callsApplied},
          {"spans_rejected", st.spansRejected},
          {"spans_over_bound", st.spansOverBound},
          {"calls_acked", st.callsAcked},
          {"idle_closed", st.idleClosed},
          {"refused_connections", st.refusedConnections},
          {"over_budget", st.overBudget},
          {"continues", st.continues},
          {"max_buffered", st.maxBuffered}};
}

nlohmann::json pullerJson(const live::PrometheusPuller& prom) {
  const auto& st = prom.stats();
  return {{"polls", st.polls},
          {"failed_polls", st.failedPolls},
          {"samples", st.samples},
          {"steps", st.steps},
          {"skipped_steps", st.skippedSteps},
          {"bad_series", st.badSeries},
          {"last_step_end", prom.lastEnd() == kNever
                                ? nlohmann::json(nullptr)
                                : nlohmann::json(static_cast<double>(prom.lastEnd()) / 1e3)}};
}

void printSummaryJson(const ListenOptions& o, const ListenSources& s,
                      const live::ShadowMonitor& monitor,
                      const std::vector<live::InstanceSummary>& rows, std::uint64_t opens) {
  nlohmann::json inst = nlohmann::json::array();
  for (const auto& r : rows) inst.push_back(instanceJson(r));
  nlohmann::json j = {{"summary", true},
                      {"file", o.file},
                      {"lines", monitor.lines()},
                      {"records", monitor.records()},
                      {"bad_lines", monitor.badLines()},
                      {"ignored_lines", monitor.ignored()},
                      {"would_opens", opens},
                      {"instances", inst},
                      {"errors", monitor.errors()},
                      {"instance_bound",
                       {{"max_instances", o.shadow.maxInstances},
                        {"tracked", monitor.bound().tracked},
                        {"high_water", monitor.bound().highWater},
                        {"evicted", monitor.bound().evicted},
                        {"instances_rejected", monitor.bound().instancesRejected},
                        {"names_too_long", monitor.bound().namesTooLong},
                        {"from_the_future", monitor.bound().fromTheFuture},
                        {"calls_rejected", monitor.bound().callsRejected},
                        {"samples_rejected", monitor.bound().samplesRejected}}}};
  if (s.tail)
    j["tail"] = {{"lines", s.tail->lines()},
                 {"dropped_long_lines", s.tail->droppedLongLines()},
                 {"rotations", s.tail->rotations()},
                 {"truncations", s.tail->truncations()}};
  if (s.otlp) j["otlp"] = receiverJson(s.otlp->stats());
  if (s.prom) j["prometheus"] = pullerJson(*s.prom);
  std::printf("%s\n", j.dump().c_str());
}

void printInstanceTable(const live::ShadowMonitor& monitor,
                        const std::vector<live::InstanceSummary>& rows) {
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
                static_cast<unsigned long long>(r.slow),
                // Aggregates carry no latencies: the p99 Prometheus reported instead.
                r.p99Ms == 0 && r.reportedP99Ms >= 0 ? r.reportedP99Ms : r.p99Ms, thr,
                r.wouldOpens ? ("yes @" + live::clockTime(r.firstWouldOpen)).c_str() : "no");
  }
}

void printSourceCounters(const ListenSources& s) {
  if (s.tail && s.tail->droppedLongLines())
    std::printf("log: %llu lines dropped over the %s line limit\n",
                static_cast<unsigned long long>(s.tail->droppedLongLines()),
                formatByteLimit(input_limits::kLine).c_str());
  if (s.prom) {
    const auto& st = s.prom->stats();
    std::printf(
        "Prometheus: %llu polls (%llu failed), %llu samples over %llu steps, %llu steps "
        "skipped, %llu bad series\n",
        static_cast<unsigned long long>(st.polls), static_cast<unsigned long long>(st.failedPolls),
        static_cast<unsigned long long>(st.samples), static_cast<unsigned long long>(st.steps),
        static_cast<unsigned long long>(st.skippedSteps),
        static_cast<unsigned long long>(st.badSeries));
  }
  if (s.otlp) {
    const auto& st = s.otlp->stats();
    std::printf(
        "OTLP: %llu requests, %llu spans, %llu calls, %llu spans rejected (not calls, "
        "invalid or %llu over the instance bound), %llu requests refused (4xx), %llu shed "
        "(429/503), %llu timed out, %llu connections refused, %llu closed idle\n",
        static_cast<unsigned long long>(st.requests), static_cast<unsigned long long>(st.spans),
        static_cast<unsigned long long>(st.callsApplied),
        static_cast<unsigned long long>(st.spansRejected),
        static_cast<unsigned long long>(st.spansOverBound),
        static_cast<unsigned long long>(st.rejected4xx), static_cast<unsigned long long>(st.shed),
        static_cast<unsigned long long>(st.timeouts),
        static_cast<unsigned long long>(st.refusedConnections),
        static_cast<unsigned long long>(st.idleClosed));
  }
}

void printSummaryText(const ListenOptions& o, const ListenSources& s,
                      const live::ShadowMonitor& monitor,
                      const std::vector<live::InstanceSummary>& rows) {
  printInstanceTable(monitor, rows);
  for (const auto& e : monitor.errors()) std::fprintf(stderr, "bad line: %s\n", e.c_str());
  const auto& b = monitor.bound();
  std::printf(
      "instances: %zu tracked (at most %zu at once, bound %zu), %llu evicted idle, %llu "
      "refused over the bound, %llu with a name over %zu bytes, %llu ending over %s after "
      "the clock (%llu calls, %llu samples rejected)\n",
      b.tracked, b.highWater, o.shadow.maxInstances, static_cast<unsigned long long>(b.evicted),
      static_cast<unsigned long long>(b.instancesRejected),
      static_cast<unsigned long long>(b.namesTooLong), o.shadow.maxNameBytes,
      static_cast<unsigned long long>(b.fromTheFuture), formatDuration(o.shadow.maxAhead).c_str(),
      static_cast<unsigned long long>(b.callsRejected),
      static_cast<unsigned long long>(b.samplesRejected));
  printSourceCounters(s);
}

// The per-instance summary; exit 1 when something would have opened.
int printSummary(const ListenOptions& o, const ListenSources& s,
                 const live::ShadowMonitor& monitor) {
  const auto rows = monitor.summary();
  std::uint64_t opens = 0;
  for (const auto& r : rows) opens += r.wouldOpens;
  if (o.json)
    printSummaryJson(o, s, monitor, rows, opens);
  else
    printSummaryText(o, s, monitor, rows);
  return opens ? kFindings : kOk;
}

int listen(const ListenOptions& o) {
  std::unique_ptr<library::LiveRecorder> recorder;
  if (o.record)
    recorder =
        std::make_unique<library::LiveRecorder>(o.recordLibrary, o.recordingName, o.recorder);
  live::ShadowMonitor monitor(loadPolicy(o.policy), o.shadow);
  recordWhatTheEngineSees(monitor, recorder);
  monitor.onWouldOpen = [json = o.json](const live::WouldOpenVerdict& v) {
    if (json)
      std::printf("%s\n", verdictJson(v).dump().c_str());
    else
      std::printf("%s\n", v.text.c_str());
    std::fflush(stdout);
  };
  ListenSources s;
  if (o.tail)
    s.tail = std::make_unique<live::LogTail>(
        QString::fromStdString(o.file), o.tailOptions,
        [&monitor](std::string_view line) { monitor.addLine(line); });
  // Lines are parsed in batches: whatever one poll brought.
  QTimer flush;
  QObject::connect(&flush, &QTimer::timeout, [&monitor] { monitor.flush(); });
  flush.start(o.tailOptions.pollMs);
  if (o.otlp) s.otlp = startReceiver(o, monitor);
  if (o.prometheus) s.prom = preparePuller(o, monitor);
  if (s.tail) s.tail->start();
  if (s.prom) s.prom->start();
  monitor.flush();
  announceSources(o, s);
  runUntilStopped(o.wall, s.otlp, recorder);
  drainSources(o, s, monitor, recorder);
  return printSummary(o, s, monitor);
}

}  // namespace

int runListen(const QStringList& args) {
  QCommandLineParser p;
  addListenOptions(p);
  if (const auto done = parseCommandLine(p, args, {"alias", "prom-query"})) return *done;
  if (p.value("prom-preset") == "list") {
    std::fputs(live::formatPromPresets().c_str(), stdout);
    return kOk;
  }
  try {
    return listen(readListenOptions(p));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spillway-cli listen: %s\n", e.what());
    return kInputError;
  }
}

}  // namespace spillway::cli
