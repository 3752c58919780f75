#pragma once
// Drill runbooks (seed 003: "设计—演练—度量—整改"): a versioned YAML file that names a scenario,
// the faults and traffic of the drill, and the expectations its KPIs must meet (degrade switch
// ≥ 97 %, recovery ≤ 90 s, …). `spillway-cli drill RUNBOOK` runs it and exits 1 on a broken
// expectation, so a CI job can run the runbooks weekly (docs/drills.md).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/policy.hpp"
#include "spillway/sim/modes.hpp"
#include "spillway/sim/scenario.hpp"
#include "spillway/sim/seeds.hpp"

namespace spillway::sim {

struct Expectation {
  std::string kpi;  // a key of the report's "kpis" (docs/drills.md lists them)
  std::optional<double> min, max;
  int line = 0;
};

struct Runbook {
  std::string name, description, source;
  std::uint32_t revision = 1;  // the runbook's own version: trends are kept per revision
  Scenario scenario;           // with the drill's policy, faults and traffic applied
  Mode mode;                   // the layers of defence under drill (default: all)
  std::uint32_t seeds = 3;
  std::vector<Expectation> expectations;
  // Whether an expectation reads a paired KPI (fault interception: the same seeds without
  // protection run beside the drill).
  bool needsBaseline() const;
};

// How a runbook finds its scenario (a built-in name or a path relative to the runbook) and a
// policy file; both throw InputError naming their own file.
struct RunbookLoaders {
  std::function<Scenario(const std::string& ref, const std::string& baseDir)> scenario;
  std::function<Policy(const std::string& path)> policy;
};

// Throws InputError (source:line: key: what).
Runbook parseRunbook(std::string_view yamlText, const std::string& source,
                     const std::string& baseDir, const RunbookLoaders& loaders);

// The KPI keys an expectation may name.
const std::vector<std::string>& drillKpis();

// Over several seeds the 95 % interval decides (kpis.md: "the seed comparison uses the
// interval"): Pass when all of it meets the bounds, Fail when none of it does, Unsure when it
// straddles one — not a pass: more seeds narrow it. One seed: its value decides.
enum class CheckVerdict { Pass, Fail, Unsure, NotMeasured };

struct CheckResult {
  Expectation expectation;
  std::optional<double> measured;  // mean over the seeds where it is defined; none: n/a
  std::optional<SeedInterval> interval;
  CheckVerdict verdict = CheckVerdict::NotMeasured;
  bool passed = false;     // verdict == Pass
  bool straddles = false;  // verdict == Unsure
};

struct DrillResult {
  std::vector<CheckResult> checks;
  std::vector<std::pair<std::string, std::optional<double>>> kpis;  // every drill KPI, mean
  bool passed = false;
  std::string target;  // empty: the simulator; else what the drill ran against (a gateway URL)
};

DrillResult runDrill(const Runbook& runbook, unsigned threads = 0);

// The runbook's expectations judged on measured KPIs (a key missing or n/a: not measured,
// broken); `kpis` is kept in the result. With the seeds' intervals by key, each check is
// judged on its interval (CheckVerdict).
DrillResult judgeDrill(const Runbook& runbook,
                       std::vector<std::pair<std::string, std::optional<double>>> kpis,
                       const std::map<std::string, SeedInterval>& intervals = {});

std::string drillTable(const Runbook& runbook, const DrillResult& result);
std::string drillJson(const Runbook& runbook, const DrillResult& result, int indent = 2);

}  // namespace spillway::sim
