// `spillway-cli sweep | calibrate | compare`: the tuning loop over recorded incidents.
//   sweep      a parameter grid (or random samples) replayed over incidents on every core;
//              the results table and the Pareto front of FP rate, TTD and availability.
//   calibrate  the same, then the candidate that meets the targets (fp<=0.03,ttd<=30s) as a
//              policy file, or which target cannot be met and why (seed 000's closed loop).
//   compare    N policies on the same incidents, side by side.
#include <QCommandLineParser>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "spillway/fault_annotations.hpp"
#include "spillway/formats/source.hpp"
#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/library/library.hpp"
#include "spillway/policy_params.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/sim/sweep_scenario.hpp"
#include "spillway/sweep.hpp"

namespace spillway::cli {
namespace {

void addIncidentOptions(QCommandLineParser& p) {
  p.addOption({"trace",
               "An incident as a canonical JSONL trace; its faults from TRACE.faults.jsonl next "
               "to it when present. Repeatable.",
               "T.jsonl"});
  p.addOption({"incident", "An incident from the library. Repeatable.", "NAME"});
  p.addOption(
      {"library", "The incident library (default $XDG_DATA_HOME/spillway/library.db).", "FILE"});
  p.addOption({"slo",
               "The clients' SLO latency: a blocked call the recording answered within it "
               "would have succeeded (docs/kpis.md; default 5s; per tenant: "
               "'code-assist=3s,report-gen=20s,5s').",
               "D", "5s"});
}

std::string faultsPathFor(const std::string& trace) {
  const std::string stem =
      trace.size() > 6 && trace.ends_with(".jsonl") ? trace.substr(0, trace.size() - 6) : trace;
  return stem + ".faults.jsonl";
}

IncidentTrace fromSource(formats::RecordSource& src, std::string name,
                         std::vector<NamedFault> faults) {
  if (src.aggregates())
    throw InputError(name, 0, "",
                     "an aggregate incident (e.g. Prometheus) has no single calls to "
                     "block: sweeps need call-level telemetry");
  return IncidentTrace::read([&](CallRecord& r) { return src.next(r); }, std::move(name),
                             std::move(faults));
}

// Without --trace or --incident: the built-in seed-000 sample and its faults.
std::vector<IncidentTrace> loadIncidents(const QCommandLineParser& p) {
  std::vector<IncidentTrace> out;
  for (const QString& t : p.values("trace")) {
    const std::string path = t.toStdString();
    std::vector<NamedFault> faults;
    const std::string fp = faultsPathFor(path);
    if (std::ifstream(fp).good())
      faults = parseFaultAnnotations(readWhole(fp, input_limits::kFaults, "faults file"), fp);
    auto src = formats::openSource(formats::Format::Jsonl, path, {});
    out.push_back(fromSource(*src, path, std::move(faults)));
  }
  if (p.isSet("incident")) {
    const std::string lp =
        p.isSet("library") ? p.value("library").toStdString() : library::defaultLibraryPath();
    library::Library lib(lp, library::OpenOptions{.mustExist = true});
    for (const QString& n : p.values("incident")) {
      const std::string name = n.toStdString();
      auto src = lib.open(name);
      out.push_back(fromSource(*src, name, lib.faults(name)));
    }
  }
  if (out.empty()) {
    const std::string text = readWhole(kSampleTrace, input_limits::kWholeTrace, "trace");
    auto src = formats::sourceFromMemory(formats::Format::Jsonl, "seed000-sample", text, {});
    out.push_back(fromSource(
        *src, "seed000-sample",
        parseFaultAnnotations(readWhole(kSampleFaults, input_limits::kFaults, "faults file"),
                              "seed000-sample.faults.jsonl (built-in)")));
  }
  return out;
}

void addSpaceOptions(QCommandLineParser& p) {
  p.addOption({"param",
               "A swept parameter: KEY=FROM:TO:STEP or KEY=V1,V2,… (durations take units: "
               "trip.sustain=2s:10s:2s). Repeatable.",
               "KEY=SPEC"});
  p.addOption({"spec", "A sweep spec (YAML: mode, samples, seed, params).", "S.yaml"});
  p.addOption({"random", "Random search: N samples from the parameters' ranges.", "N"});
  p.addOption({"seed", "Seed of the random search and of the replays (default 1).", "N", "1"});
  p.addOption({"threads", "Worker threads (default: every core).", "N", "0"});
  p.addOption({"policy", "The base policy (default: the built-in default).", "P.yaml"});
}

// The space from --spec or --param; without either, the trip rule's usual suspects.
SweepSpec loadSpace(const QCommandLineParser& p) {
  SweepSpec spec;
  if (p.isSet("spec")) {
    const std::string path = p.value("spec").toStdString();
    spec = parseSweepSpec(readWhole(path, input_limits::kSweepSpec, "sweep spec"), path);
  }
  for (const QString& v : p.values("param"))
    spec.params.push_back(parseSweepParam(v.toStdString(), "--param"));
  if (spec.params.empty()) {
    for (const char* d : {"trip.slow_rate=0.2:0.8:0.1", "trip.error_rate=0.3:0.7:0.2",
                          "trip.sustain=0s:20s:5s", "slow.k=2:5:1"})
      spec.params.push_back(parseSweepParam(d, "default space"));
  }
  if (p.isSet("random")) {
    bool ok = false;
    const uint n = p.value("random").toUInt(&ok);
    if (!ok || n == 0) throw InputError("--random", 0, "", "expected a positive number");
    spec.mode = SweepSpec::Mode::Random;
    spec.samples = n;
  }
  bool ok = false;
  const qulonglong seed = p.value("seed").toULongLong(&ok);
  if (!ok) throw InputError("--seed", 0, "", "expected a non-negative integer");
  if (!p.isSet("spec") || p.isSet("seed")) spec.seed = seed;
  return spec;
}

ReplayTruthOptions truthOptions(const QCommandLineParser& p) {
  return parseSlo(p.value("slo"));
}

// What each candidate is scored on: a simulated scenario (--scenario) or recorded incidents.
struct Bench {
  std::optional<sim::Scenario> scenario;
  std::uint32_t simSeeds = 3;
  std::vector<IncidentTrace> incidents;
};

Bench loadBench(const QCommandLineParser& p) {
  Bench b;
  if (!p.isSet("scenario")) {
    b.incidents = loadIncidents(p);
    return b;
  }
  if (p.isSet("trace") || p.isSet("incident"))
    throw InputError("--scenario", 0, "", "give --scenario or --trace/--incident, not both");
  b.scenario = loadScenario(p.value("scenario").toStdString());
  if (p.isSet("policy")) usePolicy(*b.scenario, loadPolicy(p.value("policy").toStdString()));
  bool ok = false;
  b.simSeeds = p.value("sim-seeds").toUInt(&ok);
  if (!ok || b.simSeeds == 0 || b.simSeeds > 100)
    throw InputError("--sim-seeds", 0, "", "expected a whole number from 1 to 100");
  return b;
}

SweepResult runWithProgress(std::vector<SweepCandidate> candidates, const Bench& bench,
                            const QCommandLineParser& p) {
  SweepRunOptions opt;
  opt.threads = p.value("threads").toUInt();
  opt.seed = p.value("seed").toULongLong();
  opt.truth = truthOptions(p);
  std::size_t calls = 0;
  for (const IncidentTrace& i : bench.incidents) calls += i.calls().size();
  if (bench.scenario)
    std::fprintf(stderr, "sweep: %zu candidates × %s (%u seeds from %llu)\n", candidates.size(),
                 bench.scenario->name.c_str(), bench.simSeeds,
                 static_cast<unsigned long long>(bench.scenario->seed));
  else
    std::fprintf(stderr, "sweep: %zu candidates × %zu incidents (%zu calls)\n", candidates.size(),
                 bench.incidents.size(), calls);
  std::atomic<std::size_t> shown{0};
  opt.progress = [&](std::size_t done, std::size_t total) {
    const std::size_t pct = done * 100 / total;
    std::size_t prev = shown.load();
    if (pct >= prev + 10 && shown.compare_exchange_strong(prev, pct))
      std::fprintf(stderr, "sweep: %zu %%\n", pct);
  };
  if (bench.scenario)
    return runSweep(std::move(candidates), sim::scenarioScorer(*bench.scenario, bench.simSeeds),
                    opt);
  return runSweep(std::move(candidates), bench.incidents, opt);
}

std::optional<double> pct(std::optional<double> share) {
  if (!share) return std::nullopt;
  return *share * 100;
}

std::string num(std::optional<double> v, int decimals, const char* unit) {
  if (!v) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f%s", decimals, *v, unit);
  return buf;
}

nlohmann::json scoreJson(const SweepScore& s) {
  nlohmann::json j;
  j["fp_rate"] = s.fpRateOrNa() ? nlohmann::json(*s.fpRateOrNa()) : nlohmann::json(nullptr);
  putBlockFigures(j, s.blocks, s.falseTripsPerHour());
  j["ttd_mean_s"] = s.meanTtdSeconds() ? nlohmann::json(*s.meanTtdSeconds()) : nlohmann::json();
  j["mttr_mean_s"] = s.meanMttrSeconds() ? nlohmann::json(*s.meanMttrSeconds()) : nlohmann::json();
  j["availability"] = s.availability();
  j["faults"] = s.faults;
  j["missed"] = s.faults - s.detected;
  j["rejected"] = s.rejected;
  j["blocked_would_succeed"] = s.blockedWouldSucceed;
  j["records"] = s.records;
  if (s.simulated) {
    auto opt = [](std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
    j["limiter_mis_kill_rate"] = opt(s.misKillRate());
    j["resource_waste"] = opt(s.wasteShare());
    j["cost_per_1k_requests"] = opt(s.costPer1k());
  }
  return j;
}

void printTable(const SweepResult& r, std::size_t top) {
  // Front first, then by TTD and FP rate: the candidates worth a look on top.
  std::vector<std::size_t> order(r.candidates.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (r.pareto[a] != r.pareto[b]) return static_cast<bool>(r.pareto[a]);
    const double ta = r.scores[a].meanTtdSeconds().value_or(0);
    const double tb = r.scores[b].meanTtdSeconds().value_or(0);
    if (ta != tb) return ta < tb;
    return r.scores[a].fpRate() < r.scores[b].fpRate();
  });
  std::size_t front = 0;
  for (bool f : r.pareto) front += f;
  std::printf("%zu candidates, %zu on the Pareto front (误伤, TTD, availability)\n\n",
              r.candidates.size(), front);
  std::printf("%-5s %-6s", "#", "front");
  if (!r.candidates.empty())
    for (const auto& [k, v] : r.candidates.front().values) std::printf(" %16s", k.c_str());
  // Simulated candidates (--scenario) also show the seeds' system figures.
  const bool sim = !r.scores.empty() && r.scores.front().simulated;
  std::printf(" %8s %8s %8s %9s %9s %8s %7s%s\n", "误伤", "f.trip/h", "collat", "TTD", "MTTR",
              "avail", "missed", sim ? "  mis-kill    waste  cost/1k" : "");
  for (std::size_t n = 0; n < order.size() && n < top; ++n) {
    const std::size_t i = order[n];
    const SweepScore& s = r.scores[i];
    std::printf("%-5zu %-6s", i, r.pareto[i] ? "*" : "");
    for (const auto& [k, v] : r.candidates[i].values) std::printf(" %16.4g", v);
    std::printf(" %8s %8s %8s %9s %9s %8s %7u", num(pct(s.fpRateOrNa()), 2, "%").c_str(),
                num(s.falseTripsPerHour(), 2, "").c_str(),
                num(pct(s.blocks.collateralShare()), 1, "%").c_str(),
                num(s.meanTtdSeconds(), 1, "s").c_str(), num(s.meanMttrSeconds(), 1, "s").c_str(),
                num(s.availability() * 100, 2, "%").c_str(), s.faults - s.detected);
    if (sim)
      std::printf(" %9s %8s %8s", num(pct(s.misKillRate()), 1, "%").c_str(),
                  num(pct(s.wasteShare()), 1, "%").c_str(), num(s.costPer1k(), 2, "").c_str());
    std::printf("\n");
  }
  if (order.size() > top) std::printf("… %zu more (--top N, --csv FILE)\n", order.size() - top);
}

void writeCsv(const SweepResult& r, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw InputError(path, 0, "", "cannot write");
  out << "candidate,pareto";
  if (!r.candidates.empty())
    for (const auto& [k, v] : r.candidates.front().values) out << ',' << k;
  const bool sim = !r.scores.empty() && r.scores.front().simulated;
  out << ",fp_rate,false_trips_per_h,collateral_share,ttd_mean_s,mttr_mean_s,availability,faults,"
         "missed,rejected";
  out << (sim ? ",limiter_mis_kill_rate,resource_waste,cost_per_1k_requests\n" : "\n");
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const SweepScore& s = r.scores[i];
    out << i << ',' << (r.pareto[i] ? 1 : 0);
    for (const auto& [k, v] : r.candidates[i].values) out << ',' << v;
    out << ',' << s.fpRate() << ',' << s.falseTripsPerHour().value_or(0) << ','
        << s.blocks.collateralShare().value_or(0) << ',';
    if (s.meanTtdSeconds()) out << *s.meanTtdSeconds();
    out << ',';
    if (s.meanMttrSeconds()) out << *s.meanMttrSeconds();
    out << ',' << s.availability() << ',' << s.faults << ',' << s.faults - s.detected << ','
        << s.rejected;
    if (sim) {
      out << ',';
      if (s.misKillRate()) out << *s.misKillRate();
      out << ',';
      if (s.wasteShare()) out << *s.wasteShare();
      out << ',';
      if (s.costPer1k()) out << *s.costPer1k();
    }
    out << '\n';
  }
}

void addSweepOptions(QCommandLineParser& p, bool calibrateMode) {
  p.setApplicationDescription(
      calibrateMode
          ? "Find the policy that meets the targets on the incidents, or say which target "
            "cannot be met and why."
          : "Replay incidents under a grid (or random samples) of breaker parameters; print "
            "the results and the Pareto front of FP rate, TTD and availability.");
  p.addHelpOption();
  addIncidentOptions(p);
  p.addOption({"scenario",
               "Score each candidate on a simulated scenario (built-in name or YAML file) "
               "instead of recorded incidents; --policy then replaces the scenario's breaker.",
               "NAME"});
  p.addOption(
      {"sim-seeds", "With --scenario: runs per candidate, seeds from the scenario's.", "N", "3"});
  addSpaceOptions(p);
  p.addOption({"json", "Print JSON instead of the table."});
  if (calibrateMode) {
    p.addOption({"target",
                 "Targets, e.g. 'fp<=0.03,ttd<=30s' (fp, ttd, mttr, availability, "
                 "missed, false_trips per hour, collateral).",
                 "T", "fp<=0.03,ttd<=30s"});
    p.addOption({"out", "Write the chosen policy (YAML) here.", "P.yaml"});
  } else {
    p.addOption({"top", "Rows to print (default 20).", "N", "20"});
    p.addOption({"csv", "Write every candidate's scores as CSV.", "FILE"});
  }
}

// How the result is reported. Only the options the mode registered are read: asking the
// parser about any other one warns on stderr.
struct SweepOutput {
  bool json = false;
  std::size_t top = 20;            // sweep: rows to print
  std::optional<std::string> csv;  // sweep: every candidate's scores
  std::optional<std::string> out;  // calibrate: the chosen policy
};

SweepOutput readSweepOutput(const QCommandLineParser& p, bool calibrateMode) {
  SweepOutput o;
  o.json = p.isSet("json");
  if (calibrateMode) {
    if (p.isSet("out")) o.out = p.value("out").toStdString();
  } else {
    o.top = p.value("top").toUInt();
    if (p.isSet("csv")) o.csv = p.value("csv").toStdString();
  }
  return o;
}

// What the candidates are expanded from and scored on, loaded in the order errors are reported.
struct SweepJob {
  Bench bench;
  Policy base;
  SweepSpec spec;
  std::vector<Target> targets;  // calibrate only
};

SweepJob loadSweepJob(const QCommandLineParser& p, bool calibrateMode) {
  Bench bench = loadBench(p);
  Policy base =
      bench.scenario ? bench.scenario->policy : loadPolicy(p.value("policy").toStdString());
  SweepSpec spec = loadSpace(p);
  std::vector<Target> targets = calibrateMode
                                    ? parseTargets(p.value("target").toStdString(), "--target")
                                    : std::vector<Target>{};
  for (const Target& t : targets)
    if (t.simulatedOnly() && !bench.scenario)
      throw InputError("--target", 0, t.text,
                       "mis_kill, waste and cost are measured on simulated runs only: use "
                       "--scenario (a recording holds no slot time, limiter or prices)");
  return {std::move(bench), std::move(base), std::move(spec), std::move(targets)};
}

nlohmann::json sweepJson(const SweepResult& r) {
  nlohmann::json j = nlohmann::json::array();
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    nlohmann::json c = scoreJson(r.scores[i]);
    for (const auto& [k, v] : r.candidates[i].values) c["params"][k] = v;
    c["pareto"] = static_cast<bool>(r.pareto[i]);
    j.push_back(c);
  }
  return j;
}

void printSweep(const SweepResult& r, const SweepOutput& o) {
  if (o.csv) writeCsv(r, *o.csv);
  if (o.json)
    std::printf("%s\n", sweepJson(r).dump(2).c_str());
  else
    printTable(r, o.top);
}

void printCalibration(const SweepResult& r, const Calibration& c, bool json) {
  if (json) {
    nlohmann::json j;
    j["met"] = c.chosen.has_value();
    j["findings"] = c.findings;
    if (c.chosen) {
      j["score"] = scoreJson(r.scores[*c.chosen]);
      for (const auto& [k, v] : r.candidates[*c.chosen].values) j["params"][k] = v;
    }
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("%s over %zu candidates:\n", c.chosen ? "targets met" : "targets NOT met",
              r.candidates.size());
  for (const std::string& f : c.findings) std::printf("  %s\n", f.c_str());
  if (c.chosen) {
    std::printf("chosen:");
    for (const auto& [k, v] : r.candidates[*c.chosen].values) std::printf(" %s=%g", k.c_str(), v);
    std::printf("\n");
  }
}

void writePolicy(const Policy& policy, const std::string& out, const char* command) {
  std::ofstream f(out, std::ios::binary);
  f << policyToYaml(policy);
  if (!f) throw InputError(out, 0, "", "cannot write");
  std::fprintf(stderr, "%s: wrote %s\n", command, out.c_str());
}

int runSweepLike(const QStringList& args, bool calibrateMode) {
  const char* name = calibrateMode ? "calibrate" : "sweep";
  QCommandLineParser p;
  addSweepOptions(p, calibrateMode);
  if (const auto done = parseCommandLine(p, args)) return *done;
  try {
    const SweepOutput output = readSweepOutput(p, calibrateMode);
    const SweepJob job = loadSweepJob(p, calibrateMode);
    const SweepResult r = runWithProgress(expandSweep(job.base, job.spec), job.bench, p);
    if (!calibrateMode) {
      printSweep(r, output);
      return kOk;
    }
    const Calibration c = calibrate(r, job.targets);
    printCalibration(r, c, output.json);
    if (c.chosen && output.out) writePolicy(r.candidates[*c.chosen].policy, *output.out, name);
    return c.chosen ? kOk : kFindings;
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());  // FILE:LINE: KEY: what
    return kInputError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return kInputError;
  }
}

}  // namespace

int runSweepCommand(const QStringList& args) {
  return runSweepLike(args, false);
}

int runCalibrate(const QStringList& args) {
  return runSweepLike(args, true);
}

// N policies over the same incidents: one row per policy and incident, then per policy.
int runCompare(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription("Compare policies on the same incidents, side by side.");
  p.addHelpOption();
  addIncidentOptions(p);
  p.addOption(
      {"policy", "A policy to compare (repeatable; 'default' = the built-in one).", "P.yaml"});
  p.addOption({"seed", "Seed of the replays (default 1).", "N", "1"});
  p.addOption({"json", "Print JSON instead of the table."});
  if (const auto done = parseCommandLine(p, args)) return *done;
  try {
    QStringList names = p.values("policy");
    if (names.isEmpty()) names << "default";
    std::vector<Policy> policies;
    for (const QString& n : names)
      policies.push_back(loadPolicy(n == "default" ? "" : n.toStdString()));
    const std::vector<IncidentTrace> incidents = loadIncidents(p);
    const std::uint64_t seed = p.value("seed").toULongLong();
    const ReplayTruthOptions truth = truthOptions(p);
    nlohmann::json j = nlohmann::json::array();
    if (!p.isSet("json"))
      std::printf("%-28s %-24s %8s %9s %9s %8s %7s %8s\n", "policy", "incident", "FP", "TTD",
                  "MTTR", "avail", "missed", "blocked");
    for (std::size_t k = 0; k < policies.size(); ++k) {
      SweepScore total;
      for (const IncidentTrace& inc : incidents) {
        const ReplayKpis kpis = replayIncident(policies[k], inc, seed, truth);
        SweepScore s;
        s.add(kpis);
        total.add(kpis);
        nlohmann::json row = scoreJson(s);
        row["policy"] = names[static_cast<int>(k)].toStdString();
        row["incident"] = inc.name();
        j.push_back(row);
        if (!p.isSet("json"))
          std::printf(
              "%-28.28s %-24.24s %8s %9s %9s %8s %7u %8llu\n",
              qPrintable(names[static_cast<int>(k)]), inc.name().c_str(),
              num(pct(s.fpRateOrNa()), 2, "%").c_str(), num(s.meanTtdSeconds(), 1, "s").c_str(),
              num(s.meanMttrSeconds(), 1, "s").c_str(), num(s.availability() * 100, 2, "%").c_str(),
              s.faults - s.detected, static_cast<unsigned long long>(s.rejected));
      }
      if (!p.isSet("json") && incidents.size() > 1)
        std::printf("%-28.28s %-24s %8s %9s %9s %8s %7u %8llu\n",
                    qPrintable(names[static_cast<int>(k)]), "(all)",
                    num(pct(total.fpRateOrNa()), 2, "%").c_str(),
                    num(total.meanTtdSeconds(), 1, "s").c_str(),
                    num(total.meanMttrSeconds(), 1, "s").c_str(),
                    num(total.availability() * 100, 2, "%").c_str(), total.faults - total.detected,
                    static_cast<unsigned long long>(total.rejected));
    }
    if (p.isSet("json")) std::printf("%s\n", j.dump(2).c_str());
    return kOk;
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());  // FILE:LINE: KEY: what
    return kInputError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compare: %s\n", e.what());
    return kInputError;
  }
}

}  // namespace spillway::cli
