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
#include "spillway/formats/sniff.hpp"
#include "spillway/formats/source.hpp"
#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/library/library.hpp"
#include "spillway/next_grid.hpp"
#include "spillway/policy_params.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/sweep_scenario.hpp"
#include "spillway/sweep.hpp"
#include "sweep_render.hpp"
#include "sweep_shard.hpp"

namespace spillway::cli {
namespace {

void addIncidentOptions(QCommandLineParser& p) {
  p.addOption({"trace",
               "An incident as a trace (canonical JSONL, or a file whose first line tells its "
               "format, as import does); its faults from TRACE.faults.jsonl next to it when "
               "present. Repeatable.",
               "T.jsonl"});
  p.addOption({"incident", "An incident from the library. Repeatable.", "NAME"});
  p.addOption(libraryOption());
  p.addOption({"slo",
               "The clients' SLO latency: a blocked call the recording answered within it "
               "would have succeeded (docs/kpis.md; default 5s; per tenant: "
               "'code-assist=3s,report-gen=20s,5s').",
               "D", "5s"});
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
    auto src = formats::openSource(
        formats::nonCanonicalFormat(path).value_or(formats::Format::Jsonl), path, {});
    out.push_back(fromSource(*src, path, std::move(faults)));
  }
  if (p.isSet("incident")) {
    library::Library lib(libraryPathOf(p), library::OpenOptions{.mustExist = true});
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
  for (const QString& v : p.values("param")) {
    SweepParamRange r = parseSweepParam(v.toStdString(), "--param");
    // One axis per key: a second made two columns of which the last silently won.
    for (const SweepParamRange& had : spec.params)
      if (had.key == r.key)
        throw InputError("--param", 0, r.key,
                         p.isSet("spec") ? "already swept by the spec" : "given twice");
    spec.params.push_back(std::move(r));
  }
  if (spec.params.empty()) {
    for (const char* d : {"trip.slow_rate=0.2:0.8:0.1", "trip.error_rate=0.3:0.7:0.2",
                          "trip.sustain=0s:20s:5s", "slow.k=2:5:1"})
      spec.params.push_back(parseSweepParam(d, "default space"));
  }
  if (p.isSet("random")) {
    bool ok = false;
    const qulonglong n = p.value("random").toULongLong(&ok);
    if (!ok || n == 0 || n > kMaxSweepSamples)
      throw InputError("--random", 0, "",
                       "expected a whole number of samples from 1 to " +
                           std::to_string(kMaxSweepSamples) + ", got '" +
                           p.value("random").toStdString() + "'");
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
  if (p.isSet("policy")) sim::usePolicy(*b.scenario, loadPolicy(p.value("policy").toStdString()));
  warnUnmatchedNames("sweep", *b.scenario);
  bool ok = false;
  b.simSeeds = p.value("sim-seeds").toUInt(&ok);
  if (!ok || b.simSeeds == 0 || b.simSeeds > 100)
    throw InputError("--sim-seeds", 0, "", "expected a whole number from 1 to 100");
  return b;
}

SweepResult runWithProgress(std::vector<SweepCandidate> candidates, const Bench& bench,
                            const QCommandLineParser& p) {
  SweepRunOptions opt;
  bool ok = false;
  opt.threads = p.value("threads").toUInt(&ok);
  if (!ok || opt.threads > kMaxThreads)
    throw InputError("--threads", 0, p.value("threads").toStdString(),
                     "expected 0 (every core) to " + std::to_string(kMaxThreads));
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

void addSweepPrintOptions(QCommandLineParser& p) {
  p.addOption({"json", "Print JSON instead of the table."});
  p.addOption({"top", "Rows to print (default 20).", "N", "20"});
  p.addOption({"csv", "Write every candidate's scores as CSV.", "FILE"});
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
  if (calibrateMode) {
    p.addOption({"json", "Print JSON instead of the table."});
    p.addOption({"target",
                 "Targets, e.g. 'fp<=0.03,ttd<=30s' (fp, ttd, mttr, availability, "
                 "missed, false_trips per hour, collateral).",
                 "T", "fp<=0.03,ttd<=30s"});
    p.addOption({"out", "Write the chosen policy (YAML) here.", "P.yaml"});
  } else {
    addSweepPrintOptions(p);
    p.addOption({"shard",
                 "Evaluate only shard I of N (the candidates whose index is I modulo N) and "
                 "write their rows to --rows for `sweep merge` (docs/scale-out.md).",
                 "I/N"});
    p.addOption({"rows",
                 "With --shard: the shard's rows (JSON Lines); without it they go into "
                 "--library under the sweep's key.",
                 "FILE"});
    p.addOption({"sweep",
                 "With --shard into a library: keep the rows under this name instead of the "
                 "key derived from the sweep's inputs (a batch job names its merge up front).",
                 "NAME"});
    p.addOption({"emit",
                 "Print a script that runs this sweep on a batch engine instead of running it "
                 "here: 'slurm' (an array job of --shards tasks and a dependent merge).",
                 "ENGINE"});
    p.addOption({"shards", "With --emit: the number of tasks (default 8).", "N", "8"});
  }
}

// The options addSweepPrintOptions registered (sweep and sweep merge).
void readPrintOptions(const QCommandLineParser& p, SweepOutput& o) {
  o.json = p.isSet("json");
  bool ok = false;
  const qulonglong top = p.value("top").toULongLong(&ok);  // "-1" and "abc" read as 0 rows
  if (!ok || top > kMaxSweepSamples)
    throw InputError("--top", 0, "",
                     "expected a whole number of rows from 0 to " +
                         std::to_string(kMaxSweepSamples) + ", got '" +
                         p.value("top").toStdString() + "'");
  o.top = static_cast<std::size_t>(top);
  if (p.isSet("csv")) o.csv = p.value("csv").toStdString();
}

// A shard writes its rows to --rows FILE, else into the --library given.
void readShardOptions(const QCommandLineParser& p, SweepOutput& o) {
  if (p.isSet("rows") && !p.isSet("shard"))
    throw InputError("--rows", 0, "", "--rows FILE goes with --shard I/N");
  if (p.isSet("sweep") && !p.isSet("shard"))
    throw InputError("--sweep", 0, "", "names a shard's rows: it goes with --shard I/N");
  if (!p.isSet("shard")) return;
  if (!p.isSet("rows") && !p.isSet("library"))
    throw InputError("--shard", 0, "",
                     "--shard I/N writes its rows to --rows FILE or into the --library given");
  o.shard = parseShard(p.value("shard").toStdString(), "--shard");
  o.rows = p.value("rows").toStdString();
  if (o.csv || o.json)
    throw InputError("--shard", 0, "", "a shard writes --rows; `sweep merge` prints");
  if (p.isSet("sweep") &&
      (!o.rows.empty() || p.value("sweep").isEmpty() || p.value("sweep").size() > 200))
    throw InputError("--sweep", 0, p.value("sweep").toStdString(),
                     "names the rows a shard keeps in --library (1 to 200 characters, no --rows)");
}

SweepOutput readSweepOutput(const QCommandLineParser& p, bool calibrateMode) {
  SweepOutput o;
  if (calibrateMode) {
    o.json = p.isSet("json");
    if (p.isSet("out")) o.out = p.value("out").toStdString();
    return o;
  }
  readPrintOptions(p, o);
  readShardOptions(p, o);
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

nlohmann::json nextGridJson(const NextGrid& g) {
  nlohmann::json j;
  j["around"] = g.around;
  j["args"] = nextGridArgs(g);
  if (!g.why.empty()) j["why"] = g.why;
  for (const NextGridAxis& a : g.axes)
    j["params"].push_back({{"key", a.key}, {"from", a.from}, {"to", a.to}, {"step", a.step}});
  return j;
}

void printCalibration(const SweepResult& r, const Calibration& c,
                      const std::vector<Target>& targets, bool json) {
  // Nothing met: where to sweep next (next_grid.hpp); the output when met is unchanged.
  const std::optional<NextGrid> next = c.chosen ? std::nullopt : proposeNextGrid(r, targets);
  if (json) {
    nlohmann::json j;
    j["met"] = c.chosen.has_value();
    j["findings"] = c.findings;
    if (c.chosen) {
      j["score"] = scoreJson(r.scores[*c.chosen]);
      for (const auto& [k, v] : r.candidates[*c.chosen].values) j["params"][k] = v;
    }
    if (next) j["next_grid"] = nextGridJson(*next);
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
  if (next) {
    std::printf("next grid (around candidate %zu, the closest to the targets): %s\n", next->around,
                formatNextGrid(*next).c_str());
    std::printf("  %s\n", nextGridArgs(*next).c_str());
    if (!next->why.empty()) std::printf("  (%s)\n", next->why.c_str());
  }
}

void writePolicy(const Policy& policy, const std::string& out, const char* command) {
  std::ofstream f(out, std::ios::binary);
  f << policyToYaml(policy);
  if (!f) throw InputError(out, 0, "", "cannot write");
  std::fprintf(stderr, "%s: wrote %s\n", command, out.c_str());
}

// Everything that can change a candidate or its score, hashed (sweep_shard.hpp).
SweepIdentity identityOf(const SweepJob& job, std::size_t candidates, const QCommandLineParser& p) {
  std::string space = policyToYaml(job.base) + "\n--\nmode " +
                      (job.spec.mode == SweepSpec::Mode::Grid ? "grid" : "random") + " samples " +
                      std::to_string(job.spec.samples) + " seed " + std::to_string(job.spec.seed);
  char buf[64];
  for (const SweepParamRange& r : job.spec.params) {
    space += "\n" + r.key;
    for (double v : r.values) space.append(buf, std::snprintf(buf, sizeof buf, " %.17g", v));
    space.append(buf, std::snprintf(buf, sizeof buf, " [%.17g, %.17g]", r.lo, r.hi));
  }
  std::string bench;
  if (job.bench.scenario) {
    const std::string name = p.value("scenario").toStdString();
    bench = "scenario " + name + " seeds " + std::to_string(job.bench.simSeeds);
    if (std::ifstream(name).good())
      bench += "\n" + readWhole(name, input_limits::kScenario, "scenario");
  } else {
    bench = incidentsDigest(job.bench.incidents);
  }
  const std::string judgement =
      "seed " + p.value("seed").toStdString() + "\nslo " + p.value("slo").toStdString();
  return {SPILLWAY_VERSION, sha256Hex(space), sha256Hex(bench), sha256Hex(judgement), candidates};
}

int runShard(const SweepJob& job, Shard shard, const std::string& rows,
             const QCommandLineParser& p) {
  std::vector<SweepCandidate> all = expandSweep(job.base, job.spec);
  const SweepIdentity id = identityOf(job, all.size(), p);
  std::vector<SweepCandidate> mine;
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (shard.holds(i)) {
      indices.push_back(i);
      mine.push_back(std::move(all[i]));
    }
  std::fprintf(stderr, "sweep: shard %u/%u: candidates %zu of %zu\n", shard.index, shard.count,
               indices.size(), all.size());
  const SweepResult r = runWithProgress(std::move(mine), job.bench, p);
  if (!rows.empty()) {
    writeShardRows(rows, id, shard, indices, r);
    std::fprintf(stderr, "sweep: wrote %s\n", rows.c_str());
    return kOk;
  }
  library::Library lib(libraryPathOf(p));
  const std::string key = p.isSet("sweep") ? p.value("sweep").toStdString() : sweepKey(id);
  lib.saveSweepShard(key, shard.index, shard.count, shardRowsText(id, shard, indices, r));
  std::printf("sweep %s: shard %u/%u saved in %s\n", key.c_str(), shard.index, shard.count,
              lib.path().c_str());
  return kOk;
}

// The command line minus what the emitted script decides (--emit, --shards, --threads) and
// what its merge prints with (--top, --csv, --json): the tasks' arguments, and the merge's.
std::pair<std::vector<std::string>, std::vector<std::string>> splitForBatch(
    const QStringList& args) {
  static const QStringList kDropped{"--emit", "--shards", "--threads", "--shard", "--rows"};
  static const QStringList kMerge{"--top", "--csv"};
  std::vector<std::string> task, merge;
  for (qsizetype i = 1; i < args.size(); ++i) {
    const QString& a = args[i];
    const QString name = a.section('=', 0, 0);
    const bool inlineValue = a.contains('=');
    std::vector<std::string>* to = &task;
    if (kDropped.contains(name)) to = nullptr;
    if (kMerge.contains(name) || a == "--json") to = &merge;
    const bool takesValue = a != "--json" && (kDropped.contains(name) || kMerge.contains(name));
    if (to) to->push_back(a.toStdString());
    if (takesValue && !inlineValue && i + 1 < args.size()) {
      ++i;
      if (to) to->push_back(args[i].toStdString());
    }
  }
  return {task, merge};
}

int emitBatchScript(const QStringList& args, const QCommandLineParser& p) {
  if (p.value("emit") != "slurm")
    throw InputError("--emit", 0, p.value("emit").toStdString(),
                     "unknown batch engine (slurm; for Kubernetes see "
                     "packaging/kubernetes/sweep-job.yaml)");
  bool ok = false;
  const uint shards = p.value("shards").toUInt(&ok);
  if (!ok || shards == 0 || shards > 100000)
    throw InputError("--shards", 0, p.value("shards").toStdString(), "expected 1 to 100000");
  const auto [task, merge] = splitForBatch(args);
  std::fputs(slurmScript(shards, task, merge).c_str(), stdout);
  return kOk;
}

// The shards of --sweep KEY that the library keeps, as one sweep.
SweepResult mergeFromLibrary(const QCommandLineParser& p) {
  library::Library lib(libraryPathOf(p), library::OpenOptions{.mustExist = true});
  const std::string key = p.value("sweep").toStdString();
  std::vector<std::pair<std::string, std::string>> shards;
  for (library::SweepShardRows& s : lib.sweepShards(key))
    shards.emplace_back(lib.path() + " sweep " + key + " shard " + std::to_string(s.shard),
                        std::move(s.rows));
  if (shards.empty())
    throw InputError(lib.path(), 0, "sweep", "no shard of sweep '" + key + "' is kept here");
  return mergeShardTexts(shards);
}

// `sweep merge SHARD…`: the shards' rows as one sweep, printed as `sweep` prints it.
int runSweepMerge(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Merge the rows of every shard of one sweep (sweep --shard I/N --rows FILE, or kept in "
      "a library: --sweep KEY) and print them as the one-machine sweep does: same table, same "
      "Pareto front, same CSV and JSON.");
  p.addHelpOption();
  addSweepPrintOptions(p);
  p.addOption(libraryOption());
  p.addOption({"sweep",
               "The sweep whose shards the library keeps: the key (or --sweep NAME) the shards "
               "printed.",
               "KEY"});
  p.addPositionalArgument("shards", "Every shard's rows file (without --sweep).", "[SHARD…]");
  if (const auto done = parseCommandLine(p, args)) return *done;
  try {
    SweepOutput output;
    readPrintOptions(p, output);
    std::vector<std::string> paths;
    for (const QString& a : p.positionalArguments()) paths.push_back(a.toStdString());
    if (p.isSet("sweep") && !paths.empty())
      throw InputError("--sweep", 0, "", "merges the library's shards: give no SHARD files");
    printSweep(p.isSet("sweep") ? mergeFromLibrary(p) : mergeShardRows(paths), output);
    return kOk;
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());  // FILE:LINE: KEY: what
    return kInputError;
  }
}

int runSweepLike(const QStringList& args, bool calibrateMode) {
  const char* name = calibrateMode ? "calibrate" : "sweep";
  QCommandLineParser p;
  addSweepOptions(p, calibrateMode);
  if (const auto done = parseCommandLine(p, args, {"trace", "incident", "param"})) return *done;
  try {
    const SweepOutput output = readSweepOutput(p, calibrateMode);
    const SweepJob job = loadSweepJob(p, calibrateMode);
    if (!calibrateMode && p.isSet("emit")) return emitBatchScript(args, p);
    if (output.shard) return runShard(job, *output.shard, output.rows, p);
    const SweepResult r = runWithProgress(expandSweep(job.base, job.spec), job.bench, p);
    if (!calibrateMode) {
      printSweep(r, output);
      return kOk;
    }
    const Calibration c = calibrate(r, job.targets);
    printCalibration(r, c, job.targets, output.json);
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
  if (args.size() > 1 && args.at(1) == "merge") {
    QStringList rest = args;
    rest[0] = "sweep merge";
    rest.removeAt(1);
    return runSweepMerge(rest);
  }
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
  if (const auto done = parseCommandLine(p, args, {"policy", "trace", "incident"})) return *done;
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
