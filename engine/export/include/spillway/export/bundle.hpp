#pragma once
// A review bundle for a pull request (docs/export.md, "Review bundle"): the policy YAML with a
// provenance header, the target's native configuration with its placeholder addresses marked
// `TODO: address`, and validation.md — the verdict first, then before/after KPIs against the
// targets, the gaps, the mapping notes grouped as dropped / approximated / exact, and the
// incidents used. One implementation for `spillway-cli export --bundle DIR` and the console's
// "Export bundle…". No Qt.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/export/export.hpp"
#include "spillway/export/validate.hpp"

namespace spillway::exporter {

// The targets a bundle is judged by when none are given: the seed's 误伤 bar (≤ ~3 %) and the
// detection time calibrate's example asks for.
inline constexpr std::string_view kDefaultRequirements = "fp<=0.03,ttd<=30s";

// An export and its validation on every incident (what `export --validate` computes).
struct ValidatedExport {
  Policy policy;
  ExportResult exported;
  std::vector<std::string> incidents;        // names, in the order given
  std::vector<std::size_t> annotatedFaults;  // per incident
  std::vector<NativeRun> native;             // per incident: the policy, natively
  std::vector<ReplayKpis> target;            // per incident: the exported text, emulated
  std::vector<std::vector<std::string>> gaps;
  std::optional<Policy> base;      // the policy this one replaces, when compared
  std::vector<ReplayKpis> before;  // per incident: `base`, natively (empty without a base)
  std::string requireSpec;         // the terms the verdict is judged by
  std::vector<RequirementResult> results;
  bool passed = true;  // every term met on the target
};

// Replays each incident under the native policy (which teaches `ctx` the baselines and the
// instances; the addresses and options already in `ctx` stay), exports once with that context,
// reads the text back under the target's parser and replays exactly that text under the
// target's emulation. The exported text depends on the policy, the target, `ctx` and the
// incidents — never on whether the replays pass. `base`, when given, is replayed natively too
// (the report's "before"). Throws InputError (a bad trace line, a bad requirement).
ValidatedExport validateExport(const Policy& policy, DialectKind target,
                               const std::vector<Incident>& incidents, ExportContext ctx,
                               std::string_view requireSpec,
                               const std::optional<Policy>& base = std::nullopt);

// Verdict first: "PASS: the nginx export meets fp<=0.03,ttd<=30s on every incident" or
// "FAIL: …" followed by each failed term and why.
std::vector<std::string> verdictLines(const ValidatedExport& v);

// The mapping notes as a reviewer reads them: what the target drops, what it approximates,
// what it keeps exactly.
struct GroupedNotes {
  std::vector<MappingNote> dropped, approximated, exact;
};
GroupedNotes groupNotes(const std::vector<MappingNote>& notes);
std::string noteText(const MappingNote& n);  // "[chat-72b] text" or "text"

// What goes into the bundle besides the validation.
struct BundleInfo {
  std::string policySource;  // where the policy came from: a file, "console: seed-000"
  std::string baseName;      // how to name the base in the header ("" = its own name)
  std::string version;       // Spillway's version
  std::string commandLine;   // how it was made (the CLI's arguments, or the console's action)
  bool defaultRequirements = false;  // requireSpec is kDefaultRequirements, not given
};

struct BundleFile {
  std::string name;  // file name inside the bundle directory
  std::string text;
};
// policy.yaml, the native file under the target's own name, validation.md.
std::vector<BundleFile> makeBundle(const ValidatedExport& v, const BundleInfo& info);
// The headline KPI lines the policy header and the console share ("seed000-sample: 误伤 …").
std::vector<std::string> headlineKpis(const ValidatedExport& v);

// Writes the files into `dir` (created if missing, its parent must exist); returns their
// paths. Throws InputError naming `dir` when it cannot be created or written.
std::vector<std::string> writeBundle(const std::string& dir, const std::vector<BundleFile>& files);

}  // namespace spillway::exporter
