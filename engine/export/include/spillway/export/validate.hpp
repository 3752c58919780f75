#pragma once
// Validating an export: replay incidents under the native policy and under the target's
// dialect with the exported text, compare the KPIs, name every gap in plain words, and gate on
// `--require` terms (fp<=0.03,ttd<=30s,...). Pure engine code: the CLI only reads files and
// prints.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/dialect_replay.hpp"
#include "spillway/export/export.hpp"
#include "spillway/kpi_terms.hpp"

namespace spillway::exporter {

// A recorded incident: canonical telemetry JSONL (docs/telemetry.md) and its known faults.
struct Incident {
  std::string name;  // shown in reports ("seed000-sample.jsonl")
  std::string text;
  std::vector<NamedFault> faults;
  // Its clients' SLOs: a blocked call answered within it would have succeeded (docs/kpis.md).
  ReplayTruthOptions truth;
};

struct NativeRun {
  ReplayKpis kpis;
  std::map<std::string, Micros> baselineP99;  // learned, per model (median of its instances)
  std::vector<std::pair<std::string, std::string>> instances;  // (instance, model), first seen
};
// Throws InputError on a bad trace line.
NativeRun replayNative(const Policy& policy, const Incident& incident, std::uint64_t seed = 1);

// What the exporter should know from the native runs: baselines (median per model over the
// incidents) and the instances seen.
ExportContext contextFrom(const std::vector<NativeRun>& runs, const std::string& source);

ReplayKpis replayTarget(const ExportResult& exported, const Incident& incident,
                        std::uint64_t seed = 1);

// Differences between the native and the target KPIs on one incident, each in plain words with
// the mapping note that explains it ("envoy: Envoy has no slow-call ejection — on X the faulty
// instance chat-72b-3 is never ejected: TTD inf vs 18.0s native").
std::vector<std::string> nameGaps(const ExportResult& exported, const std::string& incident,
                                  const ReplayKpis& native, const ReplayKpis& target);

// ---- --require -------------------------------------------------------------------------------

enum class Metric : std::uint8_t {
  Fp,
  Ttd,
  Mttr,
  FromTrip,
  RecoveryLag,
  Blocked,
  Opens,
  FalseTrips,  // false-trip episodes per hour of traffic
  Collateral,  // would-succeed blocks during real faults ÷ all blocks
};
using Op = KpiOp;

struct Requirement {
  Metric metric = Metric::Fp;
  Op op = Op::Le;
  double value = 0;  // share for fp, µs for durations, a count otherwise
  std::string text;  // the term as written
};

// "fp<=0.03,ttd<=30s,mttr<=120s,blocked<=500,opens<=3" in the KPI-term grammar
// (kpi_terms.hpp); fp may be written 3%. Throws InputError("--require", 0, term, what).
std::vector<Requirement> parseRequirements(std::string_view spec);

struct RequirementResult {
  Requirement req;
  bool passed = false;
  double actual = 0;   // the worst value over the incidents (share, µs or count)
  std::string detail;  // "inf: chat-72b-3 never detected on seed000-sample.jsonl"
};
// Every requirement against the worst incident. A metric that cannot be measured (TTD without
// an annotated fault) fails, saying why.
std::vector<RequirementResult> checkRequirements(const std::vector<Requirement>& reqs,
                                                 const std::vector<std::string>& incidentNames,
                                                 const std::vector<ReplayKpis>& runs);
std::string formatMetric(Metric m, double v);  // "3.0%", "18.0s", "inf", "42"

}  // namespace spillway::exporter
