// `spillway-cli replay`: stream a recorded trace through a policy; write transitions, print the
// per-instance summary, optionally a JSON report and fault scores (TTD / MTTR).
#include <QCommandLineParser>

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli_common.hpp"
#include "spillway/calibration.hpp"
#include "spillway/event_format.hpp"
#include "spillway/fault_annotations.hpp"
#include "spillway/formats/source.hpp"
#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/kpi.hpp"
#include "spillway/library/library.hpp"
#include "spillway/replay.hpp"
#include "spillway/telemetry.hpp"

namespace spillway::cli {
namespace {

std::optional<double> rate(std::uint64_t num, std::uint64_t den) {
  if (den == 0) return std::nullopt;
  return static_cast<double>(num) / static_cast<double>(den);
}

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

}  // namespace

int runReplay(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Replay recorded telemetry (canonical JSONL, docs/telemetry.md) through a breaker policy.\n"
      "Without --trace, replays the built-in seed-000 sample (a GPU memory leak on one of four\n"
      "instances) with its fault annotations.");
  p.addHelpOption();
  p.addOption({"trace", "Trace to replay ('-' = stdin). Default: the built-in sample.", "T.jsonl"});
  p.addOption({"policy", "Policy YAML (docs/policy.md). Default: the built-in default.", "P.yaml"});
  p.addOption({"out", "Write every transition as one JSON object per line.", "transitions.jsonl"});
  p.addOption({"report", "Write the per-instance summary as JSON.", "report.json"});
  p.addOption({"faults", "Fault annotations (JSONL) to score TTD/MTTR against.", "F.jsonl"});
  p.addOption({"skip-bad-lines", "Count malformed lines and go on instead of stopping."});
  p.addOption({"reorder-window",
               "How far out of start-time order records may arrive (default 10s).", "duration",
               "10s"});
  p.addOption({"seed", "Seed for probe sampling (default 1).", "N", "1"});
  p.addOption({"incident",
               "Replay an incident from the library (docs/library.md) instead of a trace; its "
               "annotations are the fault ground truth unless --faults is given.",
               "NAME"});
  p.addOption(
      {"library", "The incident library (default $XDG_DATA_HOME/spillway/library.db).", "FILE"});
  if (!p.parse(args)) {
    std::fprintf(stderr, "%s\n", qPrintable(p.errorText()));
    return kInputError;
  }
  if (p.isSet("help")) {
    std::fputs(qPrintable(p.helpText()), stdout);
    return kOk;
  }
  if (!p.positionalArguments().isEmpty()) {
    std::fprintf(stderr, "replay: unexpected argument '%s'\n",
                 qPrintable(p.positionalArguments().first()));
    return kInputError;
  }

  const std::string tracePath = p.value("trace").toStdString();
  const std::string incident = p.value("incident").toStdString();
  if (!tracePath.empty() && !incident.empty()) {
    std::fprintf(stderr, "replay: give --trace or --incident, not both\n");
    return kInputError;
  }
  const bool builtin = tracePath.empty() && incident.empty();
  ReplayOptions opt;
  {
    auto w = parseDuration(p.value("reorder-window").toStdString());
    if (!w || *w < 0) {
      std::fprintf(stderr, "replay: --reorder-window: expected a duration such as 10s\n");
      return kInputError;
    }
    opt.reorderWindow = *w;
    bool ok = false;
    opt.seed = p.value("seed").toULongLong(&ok);
    if (!ok) {
      std::fprintf(stderr, "replay: --seed: expected a non-negative integer\n");
      return kInputError;
    }
  }

  std::FILE* out = nullptr;
  std::unique_ptr<char[]> outBuf;
  int rc = kOk;
  try {
    Policy policy = loadPolicy(p.value("policy").toStdString());
    const CalibrationConfig calCfg = policy.calibration;
    const double errTh = policy.breaker.trip.errorRate, slowTh = policy.breaker.trip.slowRate;

    std::vector<NamedFault> faults;
    if (p.isSet("faults")) {
      const std::string fp = p.value("faults").toStdString();
      faults = parseFaultAnnotations(readWhole(fp, input_limits::kFaults, "faults file"), fp);
    } else if (builtin) {
      faults = parseFaultAnnotations(readWhole(kSampleFaults, input_limits::kFaults, "faults file"),
                                     "seed000-sample.faults.jsonl (built-in)");
    }

    // The library (when replaying an incident) must outlive the reader streaming from it.
    std::unique_ptr<library::Library> lib;
    std::unique_ptr<formats::RecordSource> reader;
    std::string sampleText;
    const bool skip = p.isSet("skip-bad-lines");
    if (!incident.empty()) {
      const std::string lp =
          p.isSet("library") ? p.value("library").toStdString() : library::defaultLibraryPath();
      lib = std::make_unique<library::Library>(lp, library::OpenOptions{.mustExist = true});
      reader = lib->open(incident);
      if (!p.isSet("faults")) {
        for (const library::Annotation& a : lib->annotations(incident))
          faults.push_back({a.instance, a.start, a.end, a.kind});
      }
    } else if (builtin) {
      sampleText = readWhole(kSampleTrace, input_limits::kWholeTrace, "trace");
      reader = formats::sourceFromMemory(formats::Format::Jsonl, "seed000-sample.jsonl (built-in)",
                                         sampleText, formats::ImportOptions{skip, {}});
      std::fprintf(stderr,
                   "replay: built-in seed-000 sample trace (4 instances, 15 min; chat-72b-3 "
                   "leaks GPU memory from 05:24 to 05:30 UTC)\n");
    } else {
      reader =
          formats::openSource(formats::Format::Jsonl, tracePath, formats::ImportOptions{skip, {}});
    }
    if (p.isSet("out")) {
      const std::string op = p.value("out").toStdString();
      out = op == "-" ? stdout : std::fopen(op.c_str(), "w");
      if (!out) throw InputError(op, 0, "", "cannot write");
      outBuf = std::make_unique<char[]>(1 << 16);
      std::setvbuf(out, outBuf.get(), _IOFBF, 1 << 16);
    }
    JsonlEventWriter writer(out);
    Replayer replayer(std::move(policy), opt, &writer);
    writer.setEngine(&replayer.engine());
    Calibrator calibrator(calCfg);
    std::vector<CalibrationProposal> proposals;

    CallRecord rec;
    Micros nextTick = kNever;
    formats::AggregateSample sample;
    // Aggregate incidents (e.g. Prometheus) feed counts per interval instead of calls.
    while (reader->aggregates() && reader->nextAggregate(sample)) {
      replayer.feedAggregate(sample.instance, sample.model, sample.end, sample.calls,
                             sample.failures, sample.slow);
      if (sample.end >= nextTick) {
        nextTick = sample.end + kMicrosPerSecond;
        if (auto prop = calibrator.observe(sample.end, replayer.engine()))
          proposals.push_back(*prop);
      }
    }
    while (reader->next(rec)) {
      replayer.feed(rec);
      if (rec.ts >= nextTick) {  // the calibration loop looks once per replayed second
        nextTick = rec.ts + kMicrosPerSecond;
        if (auto prop = calibrator.observe(rec.ts, replayer.engine())) proposals.push_back(*prop);
      }
    }
    replayer.finish();
    if (out && out != stdout)
      std::fclose(out);
    else if (out)
      std::fflush(out);
    out = nullptr;

    const Engine& eng = replayer.engine();
    const Micros end = replayer.lastTime();

    // Per-instance table.
    std::printf("Replay of %s under policy '%s': %llu records", reader->source().c_str(),
                eng.policy().name.c_str(), static_cast<unsigned long long>(replayer.fed()));
    if (reader->skipped())
      std::printf(", %llu bad lines skipped", static_cast<unsigned long long>(reader->skipped()));
    if (replayer.late())
      std::printf(", %llu late", static_cast<unsigned long long>(replayer.late()));
    std::printf("\n\n");
    std::printf("%-18s %-12s %8s %5s %9s %9s %9s %8s %6s %7s  %-9s\n", "instance", "model",
                "records", "opens", "closed", "open", "half-open", "rejected", "FP", "FP rate",
                "state");
    nlohmann::json jinst = nlohmann::json::array();
    std::uint64_t totRej = 0, totFp = 0, totVerdicts = 0;
    for (InstanceId id = 0; id < eng.size(); ++id) {
      const BreakerSnapshot s = eng.breaker(id).snapshot(end);
      const BreakerCounters& c = s.counters;
      const auto fpRate = rate(c.blockedWouldSucceed, c.verdicts);
      totRej += c.rejected;
      totFp += c.blockedWouldSucceed;
      totVerdicts += c.verdicts;
      auto tin = [&](BreakerState st) { return c.timeIn[static_cast<int>(st)]; };
      std::printf("%-18s %-12s %8llu %5llu %9s %9s %9s %8llu %6llu %7s  %-9s\n",
                  eng.name(id).c_str(), eng.model(id).c_str(),
                  static_cast<unsigned long long>(replayer.instanceStats(id).records),
                  static_cast<unsigned long long>(c.opens),
                  humanDuration(tin(BreakerState::Closed)).c_str(),
                  humanDuration(tin(BreakerState::Open)).c_str(),
                  humanDuration(tin(BreakerState::HalfOpen)).c_str(),
                  static_cast<unsigned long long>(c.rejected),
                  static_cast<unsigned long long>(c.blockedWouldSucceed), pct(fpRate).c_str(),
                  std::string(stateName(s.state)).c_str());
      nlohmann::json j;
      j["instance"] = eng.name(id);
      j["model"] = eng.model(id);
      j["records"] = replayer.instanceStats(id).records;
      j["recorded_succeeded"] = replayer.instanceStats(id).recordedSucceeded;
      j["admitted"] = c.admitted;
      j["rejected"] = c.rejected;
      nlohmann::json by;
      for (int r = 1; r < kRejectReasonCount; ++r)
        by[std::string(rejectReasonName(static_cast<RejectReason>(r)))] = c.rejectedBy[r];
      j["rejected_by"] = by;
      j["false_positives"] = c.blockedWouldSucceed;
      j["fp_rate"] = fpRate ? nlohmann::json(*fpRate) : nlohmann::json(nullptr);
      j["opens"] = c.opens;
      j["would_opens"] = c.wouldOpens;
      nlohmann::json tis;
      for (int st = 0; st < kStateCount; ++st)
        tis[std::string(stateName(static_cast<BreakerState>(st)))] =
            static_cast<double>(c.timeIn[st]) / 1000.0;
      j["time_in_state_ms"] = tis;
      j["final_state"] = std::string(stateName(s.state));
      j["baseline_p99_ms"] =
          s.baselineLearned ? nlohmann::json(s.baselineP99 / 1000.0) : nlohmann::json(nullptr);
      j["slow_threshold_ms"] = msOrNull(s.slowThreshold);
      jinst.push_back(j);
    }
    const auto totFpRate = rate(totFp, totVerdicts);
    std::printf(
        "\nBlocked by breakers: %llu; would have succeeded: %llu; false-positive rate %s "
        "(n=%llu)\n",
        static_cast<unsigned long long>(totRej), static_cast<unsigned long long>(totFp),
        pct(totFpRate).c_str(), static_cast<unsigned long long>(totVerdicts));

    // Fault scores.
    nlohmann::json jfaults = nlohmann::json::array();
    if (!faults.empty()) {
      std::printf("\n%-18s %-14s %8s %8s %10s %13s\n", "fault on", "kind", "TTD", "MTTR",
                  "from trip", "recovery lag");
      for (const NamedFault& f : faults) {
        nlohmann::json jf;
        jf["instance"] = f.instance;
        jf["kind"] = f.kind;
        const auto id = eng.find(f.instance);
        if (!id) {
          std::printf("%-18s %-14s  (instance not in the trace)\n", f.instance.c_str(),
                      f.kind.c_str());
          jf["error"] = "instance not in the trace";
          jfaults.push_back(jf);
          continue;
        }
        const FaultInterval fi{*id, f.start, f.end, f.kind};
        const FaultScore s = scoreFault(fi, replayer.events());
        std::printf("%-18s %-14s %8s %8s %10s %13s\n", f.instance.c_str(), fi.kind.c_str(),
                    humanDuration(s.ttd).c_str(), humanDuration(s.mttr).c_str(),
                    humanDuration(s.fromTrip).c_str(), humanDuration(s.recoveryLag).c_str());
        jf["detected"] = s.detected;
        jf["restored"] = s.restored;
        jf["ttd_ms"] = msOrNull(s.ttd);
        jf["mttr_ms"] = msOrNull(s.mttr);
        jf["from_trip_ms"] = msOrNull(s.fromTrip);
        jf["recovery_lag_ms"] = msOrNull(s.recoveryLag);
        jfaults.push_back(jf);
      }
    }
    nlohmann::json jprops = nlohmann::json::array();
    for (const auto& prop : proposals) {
      std::printf("\ncalibration: %s\n", prop.reason.c_str());
      jprops.push_back({{"at_ms", static_cast<double>(prop.at) / 1000.0},
                        {"fp_rate", prop.fpRate},
                        {"reason", prop.reason},
                        {"error_rate", prop.proposed.trip.errorRate},
                        {"slow_rate", prop.proposed.trip.slowRate},
                        {"sustain_ms", static_cast<double>(prop.proposed.trip.sustain) / 1000.0}});
    }
    for (const auto& m : reader->skippedMessages())
      std::fprintf(stderr, "skipped: %s\n", m.c_str());
    (void)errTh;
    (void)slowTh;

    if (p.isSet("report")) {
      nlohmann::json rep;
      rep["trace"] = reader->source();
      rep["policy"] = eng.policy().name;
      rep["records"] = replayer.fed();
      rep["skipped_lines"] = reader->skipped();
      rep["late_records"] = replayer.late();
      rep["instances"] = jinst;
      rep["totals"] = {
          {"rejected", totRej},
          {"false_positives", totFp},
          {"verdicts", totVerdicts},
          {"fp_rate", totFpRate ? nlohmann::json(*totFpRate) : nlohmann::json(nullptr)}};
      rep["faults"] = jfaults;
      rep["calibration"] = jprops;
      const std::string rp = p.value("report").toStdString();
      std::ofstream f(rp);
      if (!f) throw InputError(rp, 0, "", "cannot write");
      f << rep.dump(2) << "\n";
    }
  } catch (const InputError& e) {
    if (out && out != stdout)
      std::fclose(out);
    else if (out)
      std::fflush(out);
    std::fprintf(stderr, "%s\n", e.what());
    rc = kInputError;
  }
  return rc;
}

}  // namespace spillway::cli
