// `spillway-cli simulate`: run a scenario through the discrete-event simulator with the engine
// in the loop; print the KPI table (or JSON), optionally baseline vs protected, and write the
// report, breaker events and time series to a directory.
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>

#include "cli_common.hpp"
#include "save_incident.hpp"
#include "serve_metrics.hpp"
#include "spillway/event_format.hpp"
#include "spillway/event_tee.hpp"
#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/library/library.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/sim/modes.hpp"
#include "spillway/sim/report.hpp"
#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/seeds.hpp"
#include "spillway/sim/simulator.hpp"
#include "spillway/view/narrative.hpp"

namespace spillway::cli {
namespace {

// Runs one simulation; streams events/series into `dir` when given; progress on stderr once
// the run has taken more than a second of wall time. `keepEvents`: the breaker events as well
// (the narrative tells them).
sim::RunReport runOne(const sim::Scenario& sc, bool protection, const QString& dir,
                      const char* label, sim::SeriesSink* keep = nullptr,
                      std::vector<Event>* keepEvents = nullptr) {
  std::FILE* eventsOut = nullptr;
  std::ofstream instOut, cliOut;
  std::unique_ptr<JsonlEventWriter> events;
  std::unique_ptr<sim::CsvSeriesWriter> series;
  if (!dir.isEmpty()) {
    if (!QDir().mkpath(dir))
      throw InputError(dir.toStdString(), 0, "--out", "cannot create the directory");
    const std::string d = dir.toStdString() + "/";
    eventsOut = std::fopen((d + "events.jsonl").c_str(), "wb");
    instOut.open(d + "series-instances.csv", std::ios::binary);
    cliOut.open(d + "series-clients.csv", std::ios::binary);
    if (!eventsOut || !instOut || !cliOut)
      throw InputError(d, 0, "--out", "cannot write into the directory");
    events = std::make_unique<JsonlEventWriter>(eventsOut);
    series = std::make_unique<sim::CsvSeriesWriter>(instOut, cliOut);
  }
  sim::SimOptions opt;
  opt.protection = protection;
  opt.events = events.get();
  std::optional<EventTee> eventTee;
  if (keepEvents) opt.events = &eventTee.emplace(*keepEvents, events.get());
  TeeSeries tee(series.get(), keep);
  opt.series = keep ? static_cast<sim::SeriesSink*>(&tee) : series.get();
  sim::Simulator s(sc, opt);
  if (events) events->setEngine(&s.engine());
  QElapsedTimer wall;
  wall.start();
  bool shown = false;
  qint64 lastShown = 0;
  const Micros step = seconds(10);
  for (Micros t = step; s.runUntil(t); t += step) {
    const qint64 ms = wall.elapsed();
    if (ms > 1000 && ms - lastShown >= 500) {
      shown = true;
      lastShown = ms;
      std::fprintf(stderr, "\r[%s] %s / %s simulated, %llu requests, %.2f M req/s   ", label,
                   humanDuration(s.now()).c_str(), humanDuration(sc.duration).c_str(),
                   static_cast<unsigned long long>(s.originals()),
                   s.originals() / (wall.elapsed() * 1000.0));
    }
  }
  if (shown) std::fprintf(stderr, "\n");
  if (eventsOut) std::fclose(eventsOut);
  sim::RunReport r = s.report();
  if (!dir.isEmpty()) {
    std::ofstream rep(dir.toStdString() + "/report.json", std::ios::binary);
    rep << sim::reportJson(r) << "\n";
  }
  return r;
}

// --serve-metrics: checks the options that go with it and hands over to the registered runner.
int serveMetrics(const QCommandLineParser& p, const sim::Scenario& sc) {
  for (const char* opt : {"compare", "out", "json", "save-incident", "narrative"})
    if (p.isSet(opt))
      throw InputError("--serve-metrics", 0, "",
                       std::string("cannot be combined with --") + opt +
                           " (it runs one simulation in real time)");
  ServeMetricsRequest rq;
  rq.address = p.value("serve-metrics").toStdString();
  rq.allowRemote = p.isSet("metrics-allow-remote");
  rq.protection = !p.isSet("no-protection");
  bool ok = false;
  rq.speed = p.value("speed").toDouble(&ok);
  if (!ok || !(rq.speed > 0) || rq.speed > 1e6)
    throw InputError(
        "--speed", 0, "",
        "expected a number in (0, 1000000], got '" + p.value("speed").toStdString() + "'");
  return runServeMetrics(sc, rq);
}

void addSimulateOptions(QCommandLineParser& p) {
  p.setApplicationDescription(
      "Simulate a scenario (model instances, clients with retries, faults) with the engine in\n"
      "the loop and report the KPIs of docs/kpis.md. SCENARIO is a YAML file or a built-in\n"
      "name: seed-000 (default), seed-001, seed-002, seed-003. With --serve-metrics it runs\n"
      "in real time (x --speed) behind a Prometheus /metrics endpoint (docs/live.md).");
  p.addHelpOption();
  p.addPositionalArgument("SCENARIO", "scenario file or built-in name", "[SCENARIO]");
  p.addOption({"seed", "override the scenario's seed", "N"});
  p.addOption({"policy", "use this policy file instead of the scenario's", "P.yaml"});
  p.addOption({"compare", "run twice, protection off (baseline) and on, side by side"});
  p.addOption({"seeds",
               "run N seeds (the scenario's, +1, …), baseline and protected, on every core: each "
               "KPI as mean and 95 % interval",
               "N"});
  p.addOption({"modes",
               "run these layers of defence side by side (seed 001's table): a comma list of "
               "off, all, or limits, breaker, degrade joined by '+' — e.g. "
               "limits,breaker+degrade,all; with --seeds N, each KPI as mean and 95 % interval",
               "LIST"});
  p.addOption({"no-protection", "run the baseline only (breakers watch, never block)"});
  p.addOption({"duration", "override the scenario's duration (e.g. 5m)", "D"});
  p.addOption({"out", "write report.json, events.jsonl, series-*.csv here", "DIR"});
  p.addOption({"json", "print the JSON report instead of the table"});
  p.addOption({"narrative",
               "after the table, tell the run as a time-ordered account: faults, trips with "
               "their TTD, false trips, probing, full traffic restored, and a summary (with "
               "--compare: the protected run's, beside the baseline's would-opens)"});
  p.addOption({"save-incident",
               "store the unprotected run (the baseline) in the incident library as NAME: "
               "per-tick samples per instance and the faults as annotations",
               "NAME"});
  p.addOption(libraryOption());
  p.addOption({"serve-metrics",
               "run in real time and serve Prometheus metrics on GET /metrics at [HOST:]PORT "
               "(loopback unless --metrics-allow-remote; port 0: any free port)",
               "ADDR"});
  p.addOption({"speed", "with --serve-metrics: scenario time = wall time x X", "X", "1"});
  p.addOption({"metrics-allow-remote", "let --serve-metrics listen on a non-loopback address"});
}

// The scenario named on the command line with --seed, --policy and --duration applied.
sim::Scenario loadSimulateScenario(const QCommandLineParser& p) {
  const std::string name = p.positionalArguments().isEmpty()
                               ? "seed-000"
                               : p.positionalArguments().front().toStdString();
  sim::Scenario sc = loadScenario(name);
  if (p.isSet("seed")) {
    bool ok = false;
    sc.seed = p.value("seed").toULongLong(&ok);
    if (!ok) throw InputError("--seed", 0, "", "expected a whole number");
  }
  if (p.isSet("policy")) sim::usePolicy(sc, loadPolicyFile(p.value("policy").toStdString()));
  warnUnmatchedNames("simulate", sc);
  if (p.isSet("duration")) {
    const auto d = parseDuration(p.value("duration").toStdString());
    if (!d || *d <= 0) throw InputError("--duration", 0, "", "expected a duration like 5m");
    sc.duration = *d;
    std::erase_if(sc.faults, [&](const sim::FaultSpec& f) { return f.at >= sc.duration; });
    try {
      sim::checkScenarioBudget(sc);
    } catch (const InputError& e) {
      throw InputError("--duration", 0, e.field() == "duration" ? "" : e.field(), e.detail());
    }
  }
  return sc;
}

struct ModesOptions {
  std::vector<sim::Mode> modes;
  uint seeds = 1;
  bool json = false;
};

ModesOptions readModesOptions(const QCommandLineParser& p) {
  ModesOptions o;
  try {
    o.modes = sim::parseModes(p.value("modes").toStdString());
  } catch (const std::invalid_argument& e) {
    throw InputError("--modes", 0, "", e.what());
  }
  if (p.isSet("seeds")) {
    bool ok = false;
    o.seeds = p.value("seeds").toUInt(&ok);
    if (!ok || o.seeds < 1 || o.seeds > 1000)
      throw InputError("--seeds", 0, "", "expected 1 … 1000");
  }
  for (const char* opt : {"out", "save-incident", "no-protection", "compare", "narrative"})
    if (p.isSet(opt)) throw InputError(std::string("--") + opt, 0, "", "not with --modes");
  o.json = p.isSet("json");
  return o;
}

// --modes: the layers of defence side by side.
int simulateModes(const sim::Scenario& sc, ModesOptions o) {
  const sim::ModeRuns runs = sim::runModes(sc, std::move(o.modes), o.seeds);
  std::fputs((o.json ? sim::modesJson(runs, sc) + "\n" : sim::modesTable(runs, sc)).c_str(),
             stdout);
  return kOk;
}

struct SeedsOptions {
  uint seeds = 2;
  bool json = false;
};

SeedsOptions readSeedsOptions(const QCommandLineParser& p) {
  SeedsOptions o;
  bool ok = false;
  o.seeds = p.value("seeds").toUInt(&ok);
  if (!ok || o.seeds < 2 || o.seeds > 1000) throw InputError("--seeds", 0, "", "expected 2 … 1000");
  for (const char* opt : {"out", "save-incident", "no-protection", "narrative"})
    if (p.isSet(opt)) throw InputError(std::string("--") + opt, 0, "", "not with --seeds");
  o.json = p.isSet("json");
  return o;
}

// --seeds: baseline and protected over N seeds, each KPI as mean and interval.
int simulateSeeds(const sim::Scenario& sc, const SeedsOptions& o) {
  const sim::SeedRuns runs = sim::runSeeds(sc, o.seeds);
  std::fputs((o.json ? sim::seedsJson(runs, sc) + "\n" : sim::seedsTable(runs, sc)).c_str(),
             stdout);
  return kOk;
}

// One run, or --compare's two.
struct RunOptions {
  QString out;
  bool compare = false;
  bool protection = true;
  bool json = false;
  bool save = false;
  bool narrative = false;              // --narrative: the account after the table
  std::string incident;                // --save-incident NAME
  std::optional<std::string> library;  // --library, else the default library
};

RunOptions readRunOptions(const QCommandLineParser& p) {
  for (const char* opt : {"speed", "metrics-allow-remote"})
    if (p.isSet(opt)) throw InputError(std::string("--") + opt, 0, "", "only with --serve-metrics");
  RunOptions o;
  o.out = p.value("out");
  o.compare = p.isSet("compare");
  o.protection = !p.isSet("no-protection");
  o.json = p.isSet("json");
  o.save = p.isSet("save-incident");
  o.narrative = p.isSet("narrative");
  if (o.narrative && o.json)
    throw InputError("--narrative", 0, "", "not with --json (the narrative is text)");
  o.incident = p.value("save-incident").toStdString();
  if (p.isSet("library")) o.library = p.value("library").toStdString();
  // The incident to save is what a gateway without protection would have recorded.
  if (o.save && o.protection && !o.compare)
    throw InputError("--save-incident", 0, "",
                     "saves the unprotected run: use it with --compare or --no-protection");
  return o;
}

void saveRun(const RunOptions& o, const sim::Scenario& sc, const sim::VectorSeries& kept,
             const sim::RunReport& r) {
  const std::string lp = o.library ? *o.library : library::defaultLibraryPath();
  const std::string& name = o.incident;
  const std::string key = sc.name + "|" + std::to_string(sc.seed) + "|" +
                          std::to_string(sc.duration) + "|" + sim::reportJson(r);
  const std::uint64_t n = saveSimulatedIncident(lp, name, kept, r, key, sc.tick);
  if (n)
    std::fprintf(stderr, "simulate: saved %llu samples as incident '%s' in %s\n",
                 static_cast<unsigned long long>(n), name.c_str(), lp.c_str());
  else
    std::fprintf(stderr, "simulate: incident '%s' already holds this run\n", name.c_str());
}

// --narrative: the run told line by line, after its table.
void printNarrative(const sim::Scenario& sc, const sim::RunReport& r,
                    const std::vector<Event>& events, const sim::RunReport* baseline) {
  std::printf("\nNarrative (%s run; times from the start of the run):\n",
              r.protection ? "protected" : "unprotected");
  std::fputs(view::narrativeText(view::simulationNarrative(r, events, &sc, baseline)).c_str(),
             stdout);
}

int simulateCompare(const sim::Scenario& sc, const RunOptions& o) {
  const QString& out = o.out;
  sim::VectorSeries kept;
  const sim::RunReport base = runOne(sc, false, out.isEmpty() ? out : out + "/baseline", "baseline",
                                     o.save ? &kept : nullptr);
  if (o.save) saveRun(o, sc, kept, base);
  std::vector<Event> events;
  const sim::RunReport prot = runOne(sc, true, out.isEmpty() ? out : out + "/protected",
                                     "protected", nullptr, o.narrative ? &events : nullptr);
  if (!out.isEmpty()) {
    std::ofstream cmp(out.toStdString() + "/compare.json", std::ios::binary);
    cmp << sim::compareJson(base, prot) << "\n";
  }
  std::fputs((o.json ? sim::compareJson(base, prot) + "\n" : sim::compareTable(base, prot)).c_str(),
             stdout);
  if (o.narrative) printNarrative(sc, prot, events, &base);
  return kOk;
}

int simulateOnce(const sim::Scenario& sc, const RunOptions& o) {
  sim::VectorSeries kept;
  std::vector<Event> events;
  const sim::RunReport r = runOne(sc, o.protection, o.out, o.protection ? "protected" : "baseline",
                                  o.save ? &kept : nullptr, o.narrative ? &events : nullptr);
  if (o.save) saveRun(o, sc, kept, r);
  std::fputs((o.json ? sim::reportJson(r) + "\n" : sim::reportTable(r)).c_str(), stdout);
  if (o.narrative) printNarrative(sc, r, events, nullptr);
  return kOk;
}

}  // namespace

int runSimulate(const QStringList& args) {
  QCommandLineParser p;
  addSimulateOptions(p);
  if (const auto done = parseCommandLine(p, args)) return *done;
  if (p.positionalArguments().size() > 1) {
    std::fprintf(stderr, "spillway-cli simulate: one scenario at a time\n");
    return kInputError;
  }
  try {
    const sim::Scenario sc = loadSimulateScenario(p);
    if (p.isSet("serve-metrics")) return serveMetrics(p, sc);
    if (p.isSet("modes")) return simulateModes(sc, readModesOptions(p));
    if (p.isSet("seeds")) return simulateSeeds(sc, readSeedsOptions(p));
    const RunOptions o = readRunOptions(p);
    return o.compare ? simulateCompare(sc, o) : simulateOnce(sc, o);
  } catch (const InputError& e) {
    // FILE:LINE: KEY: what, as every command prints an input error (it names the file).
    std::fprintf(stderr, "%s\n", e.what());
    return kInputError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spillway-cli simulate: %s\n", e.what());
    return kInputError;
  }
}

}  // namespace spillway::cli
