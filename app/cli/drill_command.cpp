// `spillway-cli drill RUNBOOK`: runs a drill runbook against the simulator, checks its
// expectations (exit 1 when one breaks) and keeps the result in the library (docs/drills.md).
#include <QCommandLineParser>
#include <QFile>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli_common.hpp"
#include "drill_live.hpp"
#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/library/library.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/sim/runbook.hpp"

namespace spillway::cli {
namespace {

sim::Runbook loadRunbook(const std::string& path) {
  sim::RunbookLoaders loaders;
  loaders.scenario = [](const std::string& ref, const std::string& baseDir) {
    const bool builtin = ref.find('/') == std::string::npos &&
                         QFile::exists(QString::fromStdString(kBuiltinScenarioDir + ref + ".yaml"));
    if (builtin || baseDir.empty() || std::filesystem::path(ref).is_absolute())
      return loadScenario(ref);
    return loadScenario((std::filesystem::path(baseDir) / ref).string());
  };
  loaders.policy = [](const std::string& p) { return loadPolicyFile(p); };
  const std::string text = readWhole(path, input_limits::kScenario, "runbook");
  return sim::parseRunbook(text, path, std::filesystem::path(path).parent_path().string(), loaders);
}

double numberOption(const QCommandLineParser& p, const char* name, double lo, double hi) {
  bool ok = false;
  const double v = p.value(name).toDouble(&ok);
  if (!ok || !(v > lo) || v > hi)
    throw InputError(std::string("--") + name, 0, "",
                     "expected a number in (" + std::to_string(lo).substr(0, 4) + ", " +
                         std::to_string(hi).substr(0, 8) + "], got '" +
                         p.value(name).toStdString() + "'");
  return v;
}

LiveDrillRequest liveRequest(const QCommandLineParser& p) {
  LiveDrillRequest rq;
  rq.gateway = p.value("gateway");
  rq.basePort = static_cast<unsigned>(numberOption(p, "base-port", -1, 65535));
  rq.speed = numberOption(p, "speed", 0, 1e4);
  rq.rateScale = numberOption(p, "rate-scale", 0, 1e3);
  rq.maxInFlight = static_cast<int>(numberOption(p, "max-in-flight", 0, 10000));
  return rq;
}

// "pass", "FAIL", or "UNSURE" for a run that broke nothing but had a check its seeds could
// not tell.
const char* runResult(bool passed, const nlohmann::json& result) {
  if (passed) return "pass";
  bool unsure = false;
  if (result.is_object() && result.contains("checks") && result["checks"].is_array())
    for (const auto& c : result["checks"]) {
      const std::string v = c.is_object() ? c.value("verdict", "") : "";
      if (v == "fail" || v == "not_measured") return "FAIL";
      unsure = unsure || v == "unsure";
    }
  return unsure ? "UNSURE" : "FAIL";
}

// The trend of each drill's expectations across its stored runs, oldest first.
int history(library::Library& lib, const std::string& runbook, bool json) {
  const std::vector<library::DrillRunInfo> runs = lib.drillRuns(runbook);
  if (json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : runs)
      arr.push_back({{"id", r.id},
                     {"runbook", r.runbook},
                     {"revision", r.revision},
                     {"spillway_version", r.spillwayVersion},
                     {"created", r.created},
                     {"passed", r.passed},
                     {"result", nlohmann::json::parse(r.resultJson, nullptr, false)}});
    std::printf("%s\n", arr.dump(2).c_str());
    return kOk;
  }
  std::printf("%-6s %-20s %-22s %-4s %-10s %-6s %s\n", "run", "runbook", "created", "rev",
              "version", "result", "measured (expectation)");
  for (const auto& r : runs) {
    std::string measured;
    const nlohmann::json j = nlohmann::json::parse(r.resultJson, nullptr, false);
    if (j.is_object() && j.contains("checks"))
      for (const auto& c : j["checks"]) {
        char buf[96];
        const auto& m = c["measured"];
        // Four significant digits, rounded as the drill's own table shows them (not cut).
        char value[32] = "n/a";
        if (m.is_number()) std::snprintf(value, sizeof value, "%.4g", m.get<double>());
        if (m.is_string()) std::snprintf(value, sizeof value, "%s", m.get<std::string>().c_str());
        std::snprintf(buf, sizeof buf, "%s%s %s", measured.empty() ? "" : ", ",
                      c.value("kpi", "?").c_str(), value);
        measured += buf;
      }
    std::printf("%-6lld %-20s %-22s %-4u %-10s %-6s %s\n", static_cast<long long>(r.id),
                r.runbook.c_str(), r.created.c_str(), r.revision, r.spillwayVersion.c_str(),
                runResult(r.passed, j), measured.c_str());
  }
  if (runs.empty()) std::printf("(no drill runs%s)\n", runbook.empty() ? "" : " of this runbook");
  return kOk;
}

void addDrillOptions(QCommandLineParser& p) {
  p.setApplicationDescription(
      "Run a drill runbook (docs/drills.md): its scenario, faults and traffic in the simulator,\n"
      "over its seeds; print each expectation against the measured KPI. Exit 0 when all hold,\n"
      "1 when one breaks (or could not be measured), 2 on a bad runbook.");
  p.addHelpOption();
  p.addPositionalArgument("RUNBOOK", "runbook YAML file (with --history: a runbook's name)");
  p.addOption({"history",
               "list the stored runs (of RUNBOOK's name, or of every runbook) "
               "with their measured KPIs, oldest first"});
  p.addOption({"seeds", "override the runbook's number of seeds", "N"});
  p.addOption({"json", "print JSON instead of the table"});
  p.addOption({"save", "keep the result in the incident library (the console plots the trend)"});
  p.addOption(libraryOption());
  p.addOption({"gateway",
               "run against a real gateway at URL instead of the simulator: serve the runbook's "
               "instances on --base-port …, send its clients' requests through URL in real time, "
               "measure at the callers (docs/drills.md)",
               "URL"});
  p.addOption({"base-port", "with --gateway: instance i listens on P + i", "P", "18000"});
  p.addOption(
      {"speed", "with --gateway: the fault timeline and load profiles X times faster", "X", "1"});
  p.addOption({"rate-scale", "with --gateway: every client's rate × F", "F", "1"});
  p.addOption({"max-in-flight", "with --gateway: requests in flight at most", "N", "256"});
}

// What `drill` was asked to do. --seeds and the --gateway options are checked only once the
// runbook has loaded (drillResult).
struct DrillOptions {
  std::string library;
  bool history = false;
  std::string runbook;  // with --history: a runbook's name, or empty for every runbook
  bool json = false;
  bool save = false;
};

// Nothing, after saying why on stderr, when RUNBOOK is missing or repeated.
std::optional<DrillOptions> readDrillOptions(const QCommandLineParser& p) {
  DrillOptions o;
  o.library = libraryPathOf(p);
  o.history = p.isSet("history");
  const QStringList runbooks = p.positionalArguments();
  if (o.history && runbooks.size() > 1) {
    std::fprintf(stderr, "spillway-cli drill: --history takes at most one runbook name\n");
    return std::nullopt;
  }
  if (!o.history && runbooks.size() != 1) {
    std::fprintf(stderr, "spillway-cli drill: expected one RUNBOOK\n");
    return std::nullopt;
  }
  o.runbook = runbooks.isEmpty() ? std::string() : runbooks.front().toStdString();
  o.json = p.isSet("json");
  o.save = p.isSet("save");
  return o;
}

int showHistory(const DrillOptions& o) {
  try {
    library::Library lib(o.library);
    return history(lib, o.runbook, o.json);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kInputError;
  }
}

// The runbook over its seeds, in the simulator or through --gateway.
sim::DrillResult drillResult(const QCommandLineParser& p, sim::Runbook& rb) {
  if (p.isSet("seeds")) {
    bool ok = false;
    rb.seeds = p.value("seeds").toUInt(&ok);
    if (!ok || rb.seeds < 1 || rb.seeds > 100)
      throw InputError("--seeds", 0, "", "expected 1 … 100");
  }
  if (p.isSet("gateway")) return runLiveDrill(rb, liveRequest(p));
  return sim::runDrill(rb);
}

void saveDrillRun(const sim::Runbook& rb, const sim::DrillResult& d, const std::string& lp) {
  library::Library lib(lp);
  library::DrillRunInfo run;
  run.runbook = rb.name;
  run.revision = rb.revision;
  run.spillwayVersion = SPILLWAY_VERSION;
  run.policyYaml = policyToYaml(rb.scenario.policy);
  run.resultJson = sim::drillJson(rb, d, -1);
  run.passed = d.passed;
  const std::int64_t id = lib.saveDrillRun(run);
  std::fprintf(stderr, "drill: saved as run %lld of '%s' in %s\n", static_cast<long long>(id),
               rb.name.c_str(), lp.c_str());
}

}  // namespace

int runDrill(const QStringList& args) {
  QCommandLineParser p;
  addDrillOptions(p);
  if (const auto done = parseCommandLine(p, args)) return *done;
  const std::optional<DrillOptions> o = readDrillOptions(p);
  if (!o) return kInputError;
  if (o->history) return showHistory(*o);
  try {
    sim::Runbook rb = loadRunbook(o->runbook);
    warnUnmatchedNames("drill", rb.scenario);
    const sim::DrillResult d = drillResult(p, rb);
    const std::string json = sim::drillJson(rb, d);
    if (o->save) saveDrillRun(rb, d, o->library);
    std::fputs((o->json ? json + "\n" : sim::drillTable(rb, d)).c_str(), stdout);
    return d.passed ? kOk : kFindings;
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kInputError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spillway-cli drill: %s\n", e.what());
    return kInputError;
  }
}

}  // namespace spillway::cli
