// `spillway-cli replay`: stream a recorded trace through a policy; write transitions, print the
// per-instance summary, optionally a JSON report and fault scores (TTD / MTTR).
#include <QCommandLineParser>

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string_view>

#include "cli_common.hpp"
#include "spillway/calibration.hpp"
#include "spillway/dialect_replay.hpp"
#include "spillway/event_format.hpp"
#include "spillway/fault_annotations.hpp"
#include "spillway/formats/sniff.hpp"
#include "spillway/formats/source.hpp"
#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/kpi.hpp"
#include "spillway/library/library.hpp"
#include "spillway/parallel_jsonl.hpp"
#include "spillway/replay.hpp"
#include "spillway/sweep.hpp"
#include "spillway/telemetry.hpp"
#include "spillway/view/narrative.hpp"

namespace spillway::cli {
namespace {

std::string pct(std::optional<double> r) {
  if (!r) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", *r * 100);
  return buf;
}

nlohmann::json msOrNull(Micros d) {
  if (d == kForever) return nullptr;
  return static_cast<double>(d) / 1000.0;
}

// What `replay` replays, under which policy, and where it writes.
struct ReplayCliOptions {
  std::string tracePath, incident;
  bool builtin = false;  // neither --trace nor --incident: the built-in sample
  ReplayOptions replay;
  std::string policyPath;
  std::optional<std::string> faultsPath;
  bool skipBadLines = false;
  std::optional<std::string> library;  // unset: the default library
  std::optional<std::string> outPath;
  std::optional<std::string> reportPath;
  // --dialect with --from-export: the target's emulation decides instead of the policy.
  std::optional<DialectKind> dialect;
  std::string nativeConfig, select;
  std::optional<std::string> healthPath;  // --health: the endpoints' recorded answers
  std::optional<Micros> gatewayStart;     // --gateway-start: the target's timer phase
  bool narrative = false;                 // --narrative: the account after the report
  unsigned threads = 0;                   // --threads: 0 = every core
};

void addReplayOptions(QCommandLineParser& p) {
  p.setApplicationDescription(
      "Replay recorded telemetry (canonical JSONL, docs/telemetry.md) through a breaker policy.\n"
      "Without --trace, replays the built-in seed-000 sample (a GPU memory leak on one of four\n"
      "instances) with its fault annotations.");
  p.addHelpOption();
  p.addOption({"trace",
               "Trace to replay ('-' = stdin): canonical JSONL, or a file whose first line tells "
               "its format (as import does). Default: the built-in sample.",
               "T.jsonl"});
  p.addOption({"policy", "Policy YAML (docs/policy.md). Default: the built-in default.", "P.yaml"});
  p.addOption({"out", "Write every transition as one JSON object per line.", "transitions.jsonl"});
  p.addOption({"report", "Write the per-instance summary as JSON.", "report.json"});
  p.addOption({"faults", "Fault annotations (JSONL) to score TTD/MTTR against.", "F.jsonl"});
  p.addOption({"skip-bad-lines", "Count malformed lines and go on instead of stopping."});
  p.addOption({"threads",
               "Threads for a trace file: the others read and parse it while one decides "
               "(default: every core; 1: one thread does all). The output is the same.",
               "N", "0"});
  p.addOption({"reorder-window",
               "How far out of start-time order records may arrive (default 10s).", "duration",
               "10s"});
  p.addOption({"seed", "Seed for probe sampling (default 1).", "N", "1"});
  p.addOption({"slo",
               "The clients' SLO latency: a blocked call the recording answered within it "
               "would have succeeded (docs/kpis.md; default 5s; per tenant: "
               "'code-assist=3s,report-gen=20s,5s').",
               "D", "5s"});
  p.addOption({"incident",
               "Replay an incident from the library (docs/library.md) instead of a trace; its "
               "annotations are the fault ground truth unless --faults is given.",
               "NAME"});
  p.addOption(libraryOption());
  p.addOption({"narrative",
               "After the report, tell the replay as a time-ordered account (UTC times of the "
               "recording): faults, trips with their TTD, false trips, probing, full traffic "
               "restored, and a summary."});
  p.addOption({"dialect",
               "Replay under a gateway's emulation instead of the policy (docs/dialects.md): "
               "resilience4j, envoy, istio, sentinel, haproxy, nginx, litellm, opossum or "
               "cockatiel. Needs --from-export; --out writes its transitions.",
               "TARGET"});
  p.addOption({"from-export",
               "The target's native configuration the dialect runs (as `export` writes it, or "
               "the gateway's own file).",
               "FILE"});
  p.addOption({"select",
               "The entry of --from-export to emulate (an nginx upstream, an HAProxy backend, "
               "an Envoy cluster, an Istio DestinationRule, ...; default: the first).",
               "NAME"});
  p.addOption({"health",
               "With --dialect: the instances' health-endpoint answers over time (JSON Lines "
               "{\"ts\", \"instance\", \"healthy\"}, docs/telemetry.md), read by targets that "
               "check out of band (HAProxy) instead of the last call.",
               "H.jsonl"});
  p.addOption({"gateway-start",
               "With --dialect: when the gateway started (epoch ms or RFC 3339; HAProxy: `show "
               "info` Uptime on its runtime API), for targets that phase their timers from it "
               "(HAProxy's health checks). Default: each instance's checks start with its first "
               "call.",
               "TIME"});
}

// --dialect / --from-export / --select / --health; false after printing what is wrong.
bool readDialectOptions(const QCommandLineParser& p, ReplayCliOptions& o) {
  if (!p.isSet("dialect")) {
    for (const char* opt : {"from-export", "select", "health", "gateway-start"})
      if (p.isSet(opt)) {
        std::fprintf(stderr, "replay: --%s needs --dialect\n", opt);
        return false;
      }
    return true;
  }
  o.dialect = parseDialectKind(p.value("dialect").toStdString());
  if (!o.dialect) {
    std::fprintf(stderr,
                 "replay: --dialect: expected resilience4j, envoy, istio, sentinel, haproxy, "
                 "nginx, litellm, opossum or cockatiel, got '%s'\n",
                 qPrintable(p.value("dialect")));
    return false;
  }
  if (!p.isSet("from-export")) {
    std::fprintf(stderr, "replay: --dialect needs --from-export FILE (the target's config)\n");
    return false;
  }
  if (p.isSet("policy")) {
    std::fprintf(stderr, "replay: give --policy or --dialect, not both\n");
    return false;
  }
  o.nativeConfig = p.value("from-export").toStdString();
  o.select = p.value("select").toStdString();
  if (p.isSet("health")) o.healthPath = p.value("health").toStdString();
  if (p.isSet("gateway-start")) {
    const std::string v = p.value("gateway-start").toStdString();
    bool number = false;
    const double ms = p.value("gateway-start").toDouble(&number);
    o.gatewayStart = number ? instantFromMillis(ms) : parseInstant(v);
    if (!o.gatewayStart) {
      std::fprintf(stderr,
                   "replay: --gateway-start: expected epoch milliseconds or an RFC 3339 time "
                   "%s, got '%s'\n",
                   kInstantRange, v.c_str());
      return false;
    }
  }
  return true;
}

// Prints what is wrong with the command line and returns nothing.
std::optional<ReplayCliOptions> readReplayOptions(const QCommandLineParser& p) {
  if (!p.positionalArguments().isEmpty()) {
    std::fprintf(stderr, "replay: unexpected argument '%s'\n",
                 qPrintable(p.positionalArguments().first()));
    return std::nullopt;
  }
  ReplayCliOptions o;
  o.tracePath = p.value("trace").toStdString();
  o.incident = p.value("incident").toStdString();
  if (!o.tracePath.empty() && !o.incident.empty()) {
    std::fprintf(stderr, "replay: give --trace or --incident, not both\n");
    return std::nullopt;
  }
  o.builtin = o.tracePath.empty() && o.incident.empty();
  auto w = parseDuration(p.value("reorder-window").toStdString());
  if (!w || *w < 0) {
    std::fprintf(stderr, "replay: --reorder-window: expected a duration such as 10s\n");
    return std::nullopt;
  }
  o.replay.reorderWindow = *w;
  bool ok = false;
  o.replay.seed = p.value("seed").toULongLong(&ok);
  if (!ok) {
    std::fprintf(stderr, "replay: --seed: expected a non-negative integer\n");
    return std::nullopt;
  }
  try {
    o.replay.truth = parseSlo(p.value("slo"));
  } catch (const InputError& e) {
    std::fprintf(stderr, "replay: %s\n", e.what());
    return std::nullopt;
  }
  o.policyPath = p.value("policy").toStdString();
  if (p.isSet("faults")) o.faultsPath = p.value("faults").toStdString();
  o.skipBadLines = p.isSet("skip-bad-lines");
  o.threads = p.value("threads").toUInt(&ok);
  if (!ok || o.threads > kMaxThreads) {
    std::fprintf(stderr, "replay: --threads: expected 0 (every core) to %u\n", kMaxThreads);
    return std::nullopt;
  }
  if (p.isSet("library")) o.library = p.value("library").toStdString();
  if (p.isSet("out")) o.outPath = p.value("out").toStdString();
  if (p.isSet("report")) o.reportPath = p.value("report").toStdString();
  o.narrative = p.isSet("narrative");
  if (!readDialectOptions(p, o)) return std::nullopt;
  return o;
}

// Where the calls come from; reopened to replay a recalibration proposal over the same calls.
struct Input {
  std::string tracePath, incident;
  std::unique_ptr<library::Library> lib;  // outlives the sources streaming from it
  std::string sampleText;                 // the built-in sample, read once
  bool skip = false;
  unsigned threads = 0;
  bool rereadable() const { return tracePath != "-"; }
  std::unique_ptr<formats::RecordSource> open() {
    if (lib) return lib->open(incident);
    if (!sampleText.empty())
      return formats::sourceFromMemory(formats::Format::Jsonl, "seed000-sample.jsonl (built-in)",
                                       sampleText, formats::ImportOptions{skip, {}});
    // An access log (HAProxy's in the export's log-format, nginx's, ...) is read by its
    // importer; canonical JSONL, and anything not told apart, by the parallel reader.
    if (const auto f = formats::nonCanonicalFormat(tracePath))
      return formats::openSource(*f, tracePath, formats::ImportOptions{skip, {}});
    return openJsonlParallel(tracePath, skip, ParallelJsonlOptions{threads});
  }
};

nlohmann::json instanceJson(const Replayer& replayer, const InstanceKpis& k, InstanceId id,
                            const BreakerSnapshot& s) {
  const BreakerCounters& c = s.counters;
  nlohmann::json j;
  j["instance"] = k.name;
  j["model"] = k.group;
  j["records"] = replayer.instanceStats(id).records;
  j["recorded_succeeded"] = replayer.instanceStats(id).recordedSucceeded;
  j["admitted"] = c.admitted;
  j["rejected"] = c.rejected;
  nlohmann::json by;
  c.rejectedBy.forEach([&](RejectReason why, std::uint64_t n) {
    if (why != RejectReason::None) by[std::string(rejectReasonName(why))] = n;
  });
  j["rejected_by"] = std::move(by);
  j["blocked_would_succeed"] = c.blockedWouldSucceed;
  putBlockFigures(j, k.blocks, std::nullopt);
  j["opens"] = c.opens;
  j["would_opens"] = c.wouldOpens;
  nlohmann::json tis;
  for (int st = 0; st < kStateCount; ++st)
    tis[std::string(stateName(static_cast<BreakerState>(st)))] =
        static_cast<double>(c.timeIn[st]) / 1000.0;
  j["time_in_state_ms"] = std::move(tis);
  j["final_state"] = std::string(stateName(s.state));
  j["baseline_p99_ms"] =
      s.baselineLearned ? nlohmann::json(s.baselineP99 / 1000.0) : nlohmann::json(nullptr);
  j["slow_threshold_ms"] = msOrNull(s.slowThreshold);
  return j;
}

// The per-instance table; returns the instances' JSON.
void printInstances(const Replayer& replayer, const ReplayKpis& k) {
  const Engine& eng = replayer.engine();
  std::printf("%-18s %-12s %8s %5s %9s %9s %9s %8s %8s %7s  %-9s\n", "instance", "model", "records",
              "opens", "closed", "open", "half-open", "rejected", "good blk", "误伤", "state");
  for (InstanceId id = 0; id < eng.size(); ++id) {
    const BreakerSnapshot s = eng.breaker(id).snapshot(replayer.lastTime());
    const BreakerCounters& c = s.counters;
    auto tin = [&](BreakerState st) { return c.timeIn[static_cast<int>(st)]; };
    std::printf(
        "%-18s %-12s %8llu %5llu %9s %9s %9s %8llu %8llu %7s  %-9s\n", eng.name(id).c_str(),
        eng.model(id).c_str(), static_cast<unsigned long long>(replayer.instanceStats(id).records),
        static_cast<unsigned long long>(c.opens), humanDuration(tin(BreakerState::Closed)).c_str(),
        humanDuration(tin(BreakerState::Open)).c_str(),
        humanDuration(tin(BreakerState::HalfOpen)).c_str(),
        static_cast<unsigned long long>(c.rejected),
        static_cast<unsigned long long>(c.blockedWouldSucceed),
        pct(k.instances[id].blocks.falsePositiveRate()).c_str(),
        std::string(stateName(s.state)).c_str());
  }
}

// The report's "instances" array written one instance at a time, as dump(2) would write it two
// levels deep: on a fleet of 10⁵ instances the whole document was the largest thing a replay
// held (1.17 GB against 615 MB without it).
void writeInstances(std::ostream& f, const Replayer& replayer, const ReplayKpis& k) {
  const Engine& eng = replayer.engine();
  if (eng.size() == 0) {
    f << "[]";
    return;
  }
  f << "[\n";
  for (InstanceId id = 0; id < eng.size(); ++id) {
    const BreakerSnapshot s = eng.breaker(id).snapshot(replayer.lastTime());
    const std::string one = instanceJson(replayer, k.instances[id], id, s).dump(2);
    f << "    ";
    for (const char ch : one) {
      f << ch;
      if (ch == '\n') f << "    ";
    }
    f << (id + 1 < eng.size() ? ",\n" : "\n");
  }
  f << "  ]";
}

// The real faults and their scores; returns their JSON.
nlohmann::json printFaults(const ReplayKpis& k) {
  nlohmann::json jfaults = nlohmann::json::array();
  if (k.faults.empty()) return jfaults;
  std::printf("\n%-18s %-18s %8s %8s %10s %13s\n", "fault on", "kind", "TTD", "MTTR", "from trip",
              "recovery lag");
  for (const FaultKpis& f : k.faults) {
    nlohmann::json jf;
    jf["instance"] = f.fault.instance;
    jf["kind"] = f.fault.kind;
    if (!f.found) {
      std::printf("%-18s %-18s  (instance not in the trace)\n", f.fault.instance.c_str(),
                  f.fault.kind.c_str());
      jf["error"] = "instance not in the trace";
      jfaults.push_back(jf);
      continue;
    }
    const FaultScore& s = f.score;
    std::printf("%-18s %-18s %8s %8s %10s %13s\n", f.fault.instance.c_str(), f.fault.kind.c_str(),
                humanDuration(s.ttd).c_str(), humanDuration(s.mttr).c_str(),
                humanDuration(s.fromTrip).c_str(), humanDuration(s.recoveryLag).c_str());
    jf["start_ms"] = static_cast<double>(f.fault.start) / 1000.0;
    jf["end_ms"] = static_cast<double>(f.fault.end) / 1000.0;
    jf["detected"] = s.detected;
    jf["restored"] = s.restored;
    jf["ttd_ms"] = msOrNull(s.ttd);
    jf["mttr_ms"] = msOrNull(s.mttr);
    jf["from_trip_ms"] = msOrNull(s.fromTrip);
    jf["recovery_lag_ms"] = msOrNull(s.recoveryLag);
    jfaults.push_back(jf);
  }
  return jfaults;
}

// Seed 000's loop over this replay: a proposal from the worst review period, replayed over the
// same calls before it is shown, withheld when it would delay or miss a real fault.
nlohmann::json recalibrate(const Replayer& replayer, const ReplayKpis& before,
                           const std::vector<NamedFault>& faults, const ReplayOptions& opt,
                           Input& input) {
  const Policy& policy = replayer.engine().policy();
  const auto prop = proposeRecalibration(replayer, before);
  if (!prop) return nullptr;
  nlohmann::json j;
  j["period_start_ms"] = static_cast<double>(prop->period.start) / 1000.0;
  j["part"] = std::string(blockClassName(prop->part));
  j["reason"] = prop->reason;
  j["change"] = prop->change;
  std::printf("\nrecalibration: %s\n  proposal: %s\n", prop->reason.c_str(), prop->change.c_str());
  if (!input.rereadable()) {
    std::printf("  WITHHELD: not replayed (the trace came from stdin)\n");
    j["withheld"] = true;
    j["findings"] = {"not replayed: the trace came from stdin"};
    return j;
  }
  auto src = input.open();
  const IncidentTrace trace =
      IncidentTrace::read([&](CallRecord& r) { return src->next(r); }, src->source(), faults);
  Policy proposed = policy;
  proposed.breaker = prop->proposed;
  const ReplayKpis after = replayIncident(proposed, trace, opt.seed, opt.truth);
  const ProposalCheck check = checkProposal(before, after);
  std::printf("  replayed: 误伤 %s -> %s, false trips %llu -> %llu\n", pct(before.fpRate()).c_str(),
              pct(after.fpRate()).c_str(),
              static_cast<unsigned long long>(before.blocks.falseTripEpisodes),
              static_cast<unsigned long long>(after.blocks.falseTripEpisodes));
  for (const std::string& f : check.findings) std::printf("    %s\n", f.c_str());
  std::printf("  %s\n", check.withheld ? "WITHHELD: it would delay or miss a real fault"
                                       : "detection kept: worth trying");
  j["withheld"] = check.withheld;
  j["findings"] = check.findings;
  j["fp_before"] = before.fpRate() ? nlohmann::json(*before.fpRate()) : nlohmann::json(nullptr);
  j["fp_after"] = after.fpRate() ? nlohmann::json(*after.fpRate()) : nlohmann::json(nullptr);
  return j;
}

std::vector<NamedFault> readFaults(const ReplayCliOptions& o) {
  if (o.faultsPath)
    return parseFaultAnnotations(readWhole(*o.faultsPath, input_limits::kFaults, "faults file"),
                                 *o.faultsPath);
  if (o.builtin)
    return parseFaultAnnotations(readWhole(kSampleFaults, input_limits::kFaults, "faults file"),
                                 "seed000-sample.faults.jsonl (built-in)");
  // As sweep and export read them: one trace, one set of faults, the same TTD everywhere.
  if (!o.tracePath.empty() && o.tracePath != "-") {
    const std::string beside = faultsPathFor(o.tracePath);
    if (std::ifstream(beside).good())
      return parseFaultAnnotations(readWhole(beside, input_limits::kFaults, "faults file"), beside);
  }
  return {};
}

// An incident's annotations replace FAULTS unless --faults was given.
Input openInput(const ReplayCliOptions& o, std::vector<NamedFault>& faults) {
  Input input;
  input.tracePath = o.tracePath;
  input.incident = o.incident;
  input.skip = o.skipBadLines;
  input.threads = o.threads;
  if (!o.incident.empty()) {
    const std::string lp = o.library ? *o.library : library::defaultLibraryPath();
    input.lib = std::make_unique<library::Library>(lp, library::OpenOptions{.mustExist = true});
    if (!o.faultsPath) faults = input.lib->faults(o.incident);
  } else if (o.builtin) {
    input.sampleText = readWhole(kSampleTrace, input_limits::kWholeTrace, "trace");
    std::fprintf(stderr,
                 "replay: built-in seed-000 sample trace (4 instances, 15 min; chat-72b-3 "
                 "leaks GPU memory from 05:24 to 05:30 UTC)\n");
  }
  return input;
}

// `--out`: the transitions file ('-' = stdout). A file gets a 64 KiB buffer, which lives as
// long as this object; stdout keeps its own (it outlives the command).
struct TransitionsOut {
  std::FILE* file = nullptr;
  std::unique_ptr<char[]> buf;

  void open(const std::string& path) {
    file = path == "-" ? stdout : std::fopen(path.c_str(), "w");
    if (!file) throw InputError(path, 0, "", "cannot write");
    if (file == stdout) return;
    buf = std::make_unique<char[]>(1 << 16);
    std::setvbuf(file, buf.get(), _IOFBF, 1 << 16);
  }
  void close() {
    if (file && file != stdout)
      std::fclose(file);
    else if (file)
      std::fflush(file);
    file = nullptr;
  }
};

void feed(formats::RecordSource& reader, Replayer& replayer) {
  CallRecord rec;
  formats::AggregateSample sample;
  // Aggregate incidents (e.g. Prometheus) feed counts per interval instead of calls.
  while (reader.aggregates() && reader.nextAggregate(sample))
    replayer.feedAggregate(sample.instance, sample.model, sample.end, sample.calls, sample.failures,
                           sample.slow);
  while (reader.next(rec)) replayer.feed(rec);
  replayer.finish();
}

void printHeader(const formats::RecordSource& reader, const Replayer& replayer,
                 const ReplayTruthOptions& truth) {
  std::printf("Replay of %s under policy '%s': %llu records", reader.source().c_str(),
              replayer.engine().policy().name.c_str(),
              static_cast<unsigned long long>(replayer.fed()));
  if (reader.skipped())
    std::printf(", %llu bad lines skipped", static_cast<unsigned long long>(reader.skipped()));
  if (replayer.late()) std::printf(", %llu late", static_cast<unsigned long long>(replayer.late()));
  std::string slos;
  for (const auto& [tenant, slo] : truth.tenantSlo)
    slos += (slos.empty() ? " (" : ", ") + tenant + " " + formatDuration(slo);
  std::printf("; SLO %s%s\n\n", formatDuration(truth.slo).c_str(),
              slos.empty() ? "" : (slos + ")").c_str());
}

// --narrative: the replay told line by line, in the recording's own time of day (UTC).
void printNarrative(const ReplayKpis& k, const std::vector<Event>& events) {
  if (k.first == kNever) return;  // nothing was replayed
  const Micros origin =
      k.first - (k.first % kMicrosPerSecond + kMicrosPerSecond) % kMicrosPerSecond;
  std::printf("\nNarrative (times UTC):\n");
  std::fputs(view::narrativeText(view::replayNarrative(k, events, origin),
                                 view::NarrativeClock{origin, true})
                 .c_str(),
             stdout);
}

void printTotals(const ReplayKpis& k) {
  std::printf("\nBlocked by breakers: %llu (%llu answered within the SLO in the recording)\n",
              static_cast<unsigned long long>(k.rejected),
              static_cast<unsigned long long>(k.blockedWouldSucceed));
  std::printf("误伤 (false-positive rate): %s\n", fpSummary(k.blocks).c_str());
  std::printf(
      "false trips: %llu (%.1f/h); real faults %s\n",
      static_cast<unsigned long long>(k.blocks.falseTripEpisodes),
      k.falseTripsPerHour().value_or(0),
      k.faultsFromRecording ? "read from the recording (no annotations)" : "from the annotations");
}

// The JSON of what printFaults and recalibrate printed, and the dialect table's instances (a
// native report writes its instances itself: writeInstances).
struct PrintedJson {
  nlohmann::json instances, faults, recalibration;
};

void writeReport(const std::string& path, const formats::RecordSource& reader,
                 const Replayer& replayer, const ReplayTruthOptions& truth, const ReplayKpis& k,
                 PrintedJson printed) {
  nlohmann::json rep;
  rep["trace"] = reader.source();
  rep["policy"] = replayer.engine().policy().name;
  rep["slo_ms"] = static_cast<double>(truth.slo) / 1000.0;
  for (const auto& [tenant, slo] : truth.tenantSlo)
    rep["tenant_slo_ms"][tenant] = static_cast<double>(slo) / 1000.0;
  rep["records"] = replayer.fed();
  rep["skipped_lines"] = reader.skipped();
  rep["late_records"] = replayer.late();
  const std::string mark = "\x01instances\x01";  // where the streamed array goes
  rep["instances"] = mark;
  nlohmann::json tot = {{"rejected", k.rejected},
                        {"blocked_would_succeed", k.blockedWouldSucceed},
                        {"faults_from_recording", k.faultsFromRecording}};
  putBlockFigures(tot, k.blocks, k.falseTripsPerHour());
  rep["totals"] = tot;
  rep["faults"] = std::move(printed.faults);
  rep["recalibration"] = std::move(printed.recalibration);
  std::ofstream f(path);
  if (!f) throw InputError(path, 0, "", "cannot write");
  const std::string text = rep.dump(2), quoted = nlohmann::json(mark).dump();
  const std::size_t at = text.find(quoted);
  f << std::string_view(text).substr(0, at);
  writeInstances(f, replayer, k);
  f << std::string_view(text).substr(at + quoted.size()) << "\n";
}

int replayAndReport(const ReplayCliOptions& o) {
  TransitionsOut out;
  try {
    Policy policy = loadPolicy(o.policyPath);
    std::vector<NamedFault> faults = readFaults(o);
    Input input = openInput(o, faults);
    std::unique_ptr<formats::RecordSource> reader = input.open();
    if (o.outPath) out.open(*o.outPath);
    JsonlEventWriter writer(out.file);
    Replayer replayer(std::move(policy), o.replay, &writer);
    replayer.engine().keepWindowHistograms(false);  // read for the report, never plotted
    writer.setEngine(&replayer.engine());
    feed(*reader, replayer);
    out.close();

    const ReplayKpis k = nativeReplayKpis(replayer, faults);
    printHeader(*reader, replayer, o.replay.truth);
    PrintedJson printed;
    printInstances(replayer, k);
    printTotals(k);
    printed.faults = printFaults(k);
    printed.recalibration = recalibrate(replayer, k, faults, o.replay, input);
    if (o.narrative) printNarrative(k, replayer.events());
    for (const auto& m : reader->skippedMessages())
      std::fprintf(stderr, "skipped: %s\n", m.c_str());
    if (o.reportPath)
      writeReport(*o.reportPath, *reader, replayer, o.replay.truth, k, std::move(printed));
  } catch (const InputError& e) {
    out.close();
    std::fprintf(stderr, "%s\n", e.what());
    return kInputError;
  }
  return kOk;
}

// The per-instance table of a dialect replay (the target's own states); returns its JSON.
nlohmann::json printDialectInstances(const ReplayKpis& k) {
  std::printf("%-22s %-12s %8s %5s %9s %9s %9s %8s %8s  %-9s\n", "instance", "group", "records",
              "opens", "closed", "open", "half-open", "rejected", "good blk", "state");
  nlohmann::json out = nlohmann::json::array();
  for (const InstanceKpis& i : k.instances) {
    const BreakerCounters& c = i.counters;
    auto tin = [&](BreakerState st) { return c.timeIn[static_cast<int>(st)]; };
    std::printf("%-22s %-12s %8llu %5llu %9s %9s %9s %8llu %8llu  %-9s\n", i.name.c_str(),
                i.group.c_str(), static_cast<unsigned long long>(i.stats.records),
                static_cast<unsigned long long>(c.opens),
                humanDuration(tin(BreakerState::Closed)).c_str(),
                humanDuration(tin(BreakerState::Open)).c_str(),
                humanDuration(tin(BreakerState::HalfOpen)).c_str(),
                static_cast<unsigned long long>(c.rejected),
                static_cast<unsigned long long>(c.blockedWouldSucceed),
                std::string(stateName(i.finalState)).c_str());
    out.push_back({{"instance", i.name},
                   {"group", i.group},
                   {"records", i.stats.records},
                   {"admitted", c.admitted},
                   {"rejected", c.rejected},
                   {"blocked_would_succeed", c.blockedWouldSucceed},
                   {"opens", c.opens},
                   {"final_state", std::string(stateName(i.finalState))}});
  }
  return out;
}

// `--dialect`: the calls through the target's emulation built from its native config; the
// same transitions JSONL, table, totals and fault scores as a native replay.
int replayUnderDialectAndReport(const ReplayCliOptions& o) {
  TransitionsOut out;
  try {
    const std::string config =
        readWhole(o.nativeConfig, input_limits::kNativeConfig, "native config");
    std::vector<NamedFault> faults = readFaults(o);
    Input input = openInput(o, faults);
    std::unique_ptr<formats::RecordSource> reader = input.open();
    if (reader->aggregates())
      throw InputError(reader->source(), 0, "",
                       "holds per-interval counts, not calls: a dialect replays calls");
    if (o.outPath) out.open(*o.outPath);
    JsonlEventWriter writer(out.file);
    auto dialect =
        makeDialect(*o.dialect, config, o.nativeConfig, o.replay.seed, &writer, o.select);
    writer.setNames([&d = *dialect](InstanceId id) {
      return std::pair<std::string_view, std::string_view>(d.name(id), d.group(id));
    });
    if (o.healthPath)
      for (const HealthObservation& h : parseHealthObservations(
               readWhole(*o.healthPath, input_limits::kFaults, "health file"), *o.healthPath))
        dialect->recordHealth(h.instance, h.at, h.healthy);
    if (o.gatewayStart) dialect->setStartedAt(*o.gatewayStart);
    DialectReplayer replayer(*dialect, {o.replay.reorderWindow, o.replay.truth});
    CallRecord rec;
    while (reader->next(rec)) replayer.feed(rec);
    replayer.finish();
    out.close();

    const ReplayKpis k = replayer.kpis(faults);
    std::printf("Replay of %s under the %s emulation of %s: %llu records", reader->source().c_str(),
                std::string(dialectName(*o.dialect)).c_str(), o.nativeConfig.c_str(),
                static_cast<unsigned long long>(k.records));
    if (k.late) std::printf(", %llu late", static_cast<unsigned long long>(k.late));
    std::printf("\n\n");
    PrintedJson printed;
    printed.instances = printDialectInstances(k);
    printTotals(k);
    printed.faults = printFaults(k);
    if (o.narrative) printNarrative(k, replayer.events());
    for (const auto& m : reader->skippedMessages())
      std::fprintf(stderr, "skipped: %s\n", m.c_str());
    if (o.reportPath) {
      nlohmann::json rep = {
          {"trace", reader->source()}, {"dialect", std::string(dialectName(*o.dialect))},
          {"config", o.nativeConfig},  {"records", k.records},
          {"late_records", k.late},    {"instances", printed.instances},
          {"faults", printed.faults}};
      std::ofstream f(*o.reportPath);
      if (!f) throw InputError(*o.reportPath, 0, "", "cannot write");
      f << rep.dump(2) << "\n";
    }
  } catch (const InputError& e) {
    out.close();
    std::fprintf(stderr, "%s\n", e.what());
    return kInputError;
  }
  return kOk;
}

}  // namespace

int runReplay(const QStringList& args) {
  QCommandLineParser p;
  addReplayOptions(p);
  if (const auto done = parseCommandLine(p, args)) return *done;
  const auto o = readReplayOptions(p);
  if (!o) return kInputError;
  return o->dialect ? replayUnderDialectAndReport(*o) : replayAndReport(*o);
}

}  // namespace spillway::cli
