// `spillway-cli knee`: stepped load from 30 % to 300 % of a scenario's base load (seed 003);
// per step P99, error rate and throughput, and the knee.
#include <QCommandLineParser>

#include <cstdio>

#include "cli_common.hpp"
#include "spillway/input_error.hpp"
#include "spillway/sim/knee.hpp"

namespace spillway::cli {

namespace {

void addKneeOptions(QCommandLineParser& p) {
  p.setApplicationDescription(
      "Find the capacity knee of a scenario: fresh runs without faults at stepped load, each\n"
      "run until P99 and error rate settle. Knee = first step with P99 > 1.8 x the first\n"
      "step's P99 and error rate > 1 % (seed 003). SCENARIO: a file or a built-in name.");
  p.addHelpOption();
  p.addPositionalArgument("SCENARIO", "scenario file or built-in name", "[SCENARIO]");
  p.addOption({"from", "first load factor (default 0.3)", "F"});
  p.addOption({"to", "last load factor (default 3.0)", "F"});
  p.addOption({"step", "load factor increment (default 0.3)", "F"});
  p.addOption({"step-duration", "longest simulated time per step (default 10m)", "D"});
  p.addOption({"no-protection", "breakers watch only"});
  p.addOption({"degrade",
               "keep the scenario's degrade chain: the capacity with backups, not of the "
               "primary path alone"});
  p.addOption({"degrade-level",
               "capacity at one degrade level: 0 primary, 1 + backups, 2 + cache (seed 003)", "L"});
  p.addOption({"levels",
               "one knee per degrade level (0, 1, 2) and the scale-out threshold each "
               "implies"});
  p.addOption({"json", "print JSON instead of the table"});
}

struct KneeCliOptions {
  sim::KneeOptions knee;
  bool levels = false;  // one knee per degrade level
  bool json = false;
};

std::string scenarioName(const QCommandLineParser& p) {
  return p.positionalArguments().isEmpty() ? "seed-003"
                                           : p.positionalArguments().front().toStdString();
}

constexpr int kMaxKneeSteps = 1000;

// Throws InputError naming the offending option.
KneeCliOptions readKneeOptions(const QCommandLineParser& p) {
  KneeCliOptions opts;
  sim::KneeOptions& o = opts.knee;
  auto factor = [&](const char* opt, double& out) {
    if (!p.isSet(opt)) return;
    bool ok = false;
    out = p.value(opt).toDouble(&ok);
    if (!ok || !(out > 0 && out <= 100))  // (NaN fails both)
      throw InputError(std::string("--") + opt, 0, p.value(opt).toStdString(),
                       "expected a load factor in (0, 100]");
  };
  factor("from", o.from);
  factor("to", o.to);
  factor("step", o.step);
  if (o.to < o.from) throw InputError("--to", 0, "", "must not be below --from");
  // Each step is a run of its own (a minute or more of simulated time).
  if ((o.to - o.from) / o.step + 1 > kMaxKneeSteps)
    throw InputError("--step", 0, p.value("step").toStdString(),
                     "gives " +
                         std::to_string(static_cast<long long>((o.to - o.from) / o.step + 1)) +
                         " load steps from --from to --to, more than " +
                         std::to_string(kMaxKneeSteps) + ": a larger step");
  if (p.isSet("step-duration")) {
    const auto d = parseDuration(p.value("step-duration").toStdString());
    if (!d || *d < seconds(60)) throw InputError("--step-duration", 0, "", "expected >= 1m");
    o.maxStep = *d;
    o.minStep = std::min(o.minStep, *d);
  }
  o.protection = !p.isSet("no-protection");
  o.degrade = p.isSet("degrade");
  if (p.isSet("degrade-level")) {
    bool ok = false;
    o.level = p.value("degrade-level").toInt(&ok);
    if (!ok || o.level < 0 || o.level >= sim::kDegradeLevels)
      throw InputError("--degrade-level", 0, "", "expected 0, 1 or 2");
  }
  if (int(p.isSet("degrade")) + int(p.isSet("degrade-level")) + int(p.isSet("levels")) > 1)
    throw InputError("--degrade", 0, "", "use one of --degrade, --degrade-level, --levels");
  opts.levels = p.isSet("levels");
  opts.json = p.isSet("json");
  return opts;
}

void printProgress(const sim::KneeStep& s) {
  std::fprintf(stderr, "load %3.0f %%: p99 %.0f ms, %s\n", s.factor * 100, s.p99Ms,
               s.stable ? "settled" : "did not settle");
}

// Fails before any run when the scenario has no degrade section for LEVEL.
void checkLevel(const sim::Scenario& sc, int level, bool levelsMode) {
  sim::Scenario probe = sc;
  try {
    sim::applyDegradeLevel(probe, level);
  } catch (const std::invalid_argument& e) {
    throw InputError(levelsMode ? "--levels" : "--degrade-level", 0, "", e.what());
  }
}

// `--levels`: one knee per degrade level, printed together.
int runLevels(const sim::Scenario& sc, KneeCliOptions opts) {
  sim::KneeOptions& o = opts.knee;
  std::vector<sim::LevelKnee> levels;
  for (int l = 0; l < sim::kDegradeLevels; ++l) checkLevel(sc, l, true);
  for (int l = 0; l < sim::kDegradeLevels; ++l) {
    std::fprintf(stderr, "degrade level %s\n", sim::degradeLevelName(l));
    o.level = l;
    levels.push_back({l, sim::findKnee(sc, o, printProgress)});
  }
  std::fputs((opts.json ? sim::levelsJson(levels, o) + "\n" : sim::levelsTable(levels, o)).c_str(),
             stdout);
  return kOk;
}

int runOneKnee(const sim::Scenario& sc, const KneeCliOptions& opts) {
  const sim::KneeOptions& o = opts.knee;
  if (o.level >= 0) checkLevel(sc, o.level, false);
  const sim::KneeResult r = sim::findKnee(sc, o, printProgress);
  std::fputs((opts.json ? sim::kneeJson(r, o) + "\n" : sim::kneeTable(r, o)).c_str(), stdout);
  return kOk;
}

}  // namespace

int runKnee(const QStringList& args) {
  QCommandLineParser p;
  addKneeOptions(p);
  if (const auto done = parseCommandLine(p, args)) return *done;
  try {
    const sim::Scenario sc = loadScenario(scenarioName(p));
    warnUnmatchedNames("knee", sc);
    const KneeCliOptions opts = readKneeOptions(p);
    return opts.levels ? runLevels(sc, opts) : runOneKnee(sc, opts);
  } catch (const InputError& e) {
    // FILE:LINE: KEY: what, as every command prints an input error (it names the file).
    std::fprintf(stderr, "%s\n", e.what());
    return kInputError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spillway-cli knee: %s\n", e.what());
    return kInputError;
  }
}

}  // namespace spillway::cli
