// The review bundle: validation of an export on every incident, the verdict, the grouped notes,
// and the three files a pull request carries (policy.yaml, the native file, validation.md).
#include "spillway/export/bundle.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "spillway/dialect.hpp"
#include "spillway/input_error.hpp"
#include "spillway/policy_yaml.hpp"

namespace spillway::exporter {

ValidatedExport validateExport(const Policy& policy, DialectKind target,
                               const std::vector<Incident>& incidents, ExportContext ctx,
                               std::string_view requireSpec, const std::optional<Policy>& base) {
  ValidatedExport v;
  v.policy = policy;
  v.base = base;
  v.requireSpec = std::string(requireSpec);
  // No terms: nothing to gate on (the CLI without --require); a bundle always has some.
  const std::vector<Requirement> reqs =
      requireSpec.empty() ? std::vector<Requirement>{} : parseRequirements(requireSpec);
  // Native runs first: they supply the learned baselines and the instances to the exporter.
  std::string names;
  for (const Incident& i : incidents) {
    v.native.push_back(replayNative(policy, i));
    if (base) v.before.push_back(replayNative(*base, i).kpis);
    v.incidents.push_back(i.name);
    v.annotatedFaults.push_back(i.faults.size());
    names += (names.empty() ? "" : ", ") + i.name;
  }
  const ExportContext learned = contextFrom(v.native, names);
  ctx.baselineP99 = learned.baselineP99;
  ctx.baselineSource = learned.baselineSource;
  ctx.instances = learned.instances;
  v.exported = exportPolicy(policy, target, ctx);
  const ExportResult& x = v.exported;
  // What is validated is what ships: the text must read back under the target's own parser.
  (void)makeDialect(x.target, x.text, x.fileName, 1, nullptr, x.select);
  for (std::size_t i = 0; i < incidents.size(); ++i) {
    v.target.push_back(replayTarget(x, incidents[i]));
    v.gaps.push_back(nameGaps(x, incidents[i].name, v.native[i].kpis, v.target.back()));
  }
  v.results = checkRequirements(reqs, v.incidents, v.target);
  v.passed =
      std::all_of(v.results.begin(), v.results.end(), [](const auto& r) { return r.passed; });
  return v;
}

std::vector<std::string> verdictLines(const ValidatedExport& v) {
  const std::string target(dialectName(v.exported.target));
  if (v.incidents.empty())
    return {"NOT VALIDATED: the " + target + " export was not replayed on any incident"};
  const std::string where =
      v.incidents.size() == 1
          ? "on " + v.incidents.front()
          : "on the worst of " + std::to_string(v.incidents.size()) + " incidents";
  if (v.passed) return {"PASS: the " + target + " export meets " + v.requireSpec + " " + where};
  std::vector<std::string> lines = {"FAIL: the " + target + " export does not meet " +
                                    v.requireSpec + " " + where};
  for (const RequirementResult& r : v.results)
    if (!r.passed) lines.push_back(r.req.text + ": " + r.detail);
  return lines;
}

GroupedNotes groupNotes(const std::vector<MappingNote>& notes) {
  GroupedNotes g;
  for (const MappingNote& n : notes)
    (n.gap ? g.dropped : n.exact ? g.exact : g.approximated).push_back(n);
  return g;
}

std::string noteText(const MappingNote& n) {
  return n.scope.empty() ? n.text : "[" + n.scope + "] " + n.text;
}

namespace {

std::string fpCell(const ReplayKpis& k) {
  const std::string n = " (n=" + std::to_string(k.blocked()) + ")";
  return k.fpRate() ? formatMetric(Metric::Fp, *k.fpRate()) + n : "n/a" + n;
}

std::string durCell(const FaultKpis& f, Micros FaultScore::*field) {
  return f.found ? formatMetric(Metric::Ttd, static_cast<double>(f.score.*field)) : "not in trace";
}

// One headline line: 误伤, then TTD and MTTR per fault, then opens.
std::string headline(const std::string& label, const ReplayKpis& k) {
  std::string s = label + ": 误伤 " + fpCell(k);
  for (const FaultKpis& f : k.faults)
    if (f.found)
      s += ", TTD " + f.fault.instance + " " + durCell(f, &FaultScore::ttd) + ", MTTR " +
           durCell(f, &FaultScore::mttr);
  return s + ", opens " + std::to_string(k.opens);
}

// The requirement terms on one metric, as the "target" column shows them ("<= 3.0%").
std::string targetCell(const ValidatedExport& v, Metric m) {
  std::string s;
  for (const RequirementResult& r : v.results) {
    if (r.req.metric == m) s += (s.empty() ? "" : ", ") + std::string("`") + r.req.text + "`";
  }
  return s.empty() ? "—" : s;
}

std::string mdEscape(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

struct Columns {
  const ReplayKpis* before;
  const ReplayKpis& native;
  const ReplayKpis& target;
};

void row(std::string& md, const std::string& kpi, const std::string& target, const Columns& c,
         const std::function<std::string(const ReplayKpis&)>& cell) {
  md += "| " + kpi + " | " + target + " | ";
  if (c.before) md += mdEscape(cell(*c.before)) + " | ";
  md += mdEscape(cell(c.native)) + " | " + mdEscape(cell(c.target)) + " |\n";
}

std::string faultCell(const ReplayKpis& k, std::size_t i, Micros FaultScore::*field) {
  return i < k.faults.size() ? durCell(k.faults[i], field) : "—";
}

void kpiTable(std::string& md, const ValidatedExport& v, std::size_t i) {
  const std::string target(dialectName(v.exported.target));
  const Columns c{v.before.empty() ? nullptr : &v.before[i], v.native[i].kpis, v.target[i]};
  md += "| KPI | target | ";
  if (c.before) md += "before: '" + mdEscape(v.base->name) + "' (native) | ";
  md += "after: '" + mdEscape(v.policy.name) + "' (native) | after on " + target + " |\n";
  md += c.before ? "|---|---|---|---|---|\n" : "|---|---|---|---|\n";
  row(md, "误伤 (false-positive rate)", targetCell(v, Metric::Fp), c, fpCell);
  for (std::size_t f = 0; f < c.native.faults.size(); ++f) {
    const std::string inst = c.native.faults[f].fault.instance;
    row(md, "TTD " + inst, targetCell(v, Metric::Ttd), c,
        [&](const ReplayKpis& k) { return faultCell(k, f, &FaultScore::ttd); });
    row(md, "MTTR " + inst, targetCell(v, Metric::Mttr), c,
        [&](const ReplayKpis& k) { return faultCell(k, f, &FaultScore::mttr); });
  }
  row(md, "collateral share", targetCell(v, Metric::Collateral), c, [](const ReplayKpis& k) {
    const auto s = k.blocks.collateralShare();
    return s ? formatMetric(Metric::Collateral, *s) : std::string("n/a");
  });
  row(md, "false trips", targetCell(v, Metric::FalseTrips), c,
      [](const ReplayKpis& k) { return std::to_string(k.blocks.falseTripEpisodes); });
  row(md, "calls blocked", targetCell(v, Metric::Blocked), c,
      [](const ReplayKpis& k) { return std::to_string(k.rejected); });
  row(md, "opens", targetCell(v, Metric::Opens), c,
      [](const ReplayKpis& k) { return std::to_string(k.opens); });
}

void requirementsSection(std::string& md, const ValidatedExport& v, bool defaults) {
  md += "\n## Targets\n\n";
  md += defaults ? "The default targets `" + std::string(kDefaultRequirements) +
                       "` (the seed's 误伤 ≤ ~3 % and a 30 s detection; `--require` sets "
                       "others), checked on the " +
                       std::string(dialectName(v.exported.target)) +
                       " export's KPIs on the worst incident.\n\n"
                 : "`" + v.requireSpec + "`, checked on the " +
                       std::string(dialectName(v.exported.target)) +
                       " export's KPIs on the worst incident.\n\n";
  md += "| term | worst value | result |\n|---|---|---|\n";
  for (const RequirementResult& r : v.results)
    md += "| `" + r.req.text + "` | " + mdEscape(r.detail) + " | " +
          (r.passed ? "met" : "**not met**") + " |\n";
}

void notesSection(std::string& md, const std::vector<MappingNote>& notes) {
  const GroupedNotes g = groupNotes(notes);
  md += "\n## Mapping notes\n";
  auto group = [&](const char* title, const std::vector<MappingNote>& ns) {
    md += std::string("\n**") + title + "** (" + std::to_string(ns.size()) + ")\n\n";
    if (ns.empty()) md += "- none\n";
    for (const MappingNote& n : ns) md += "- " + noteText(n) + "\n";
  };
  group("Dropped — the target cannot express it", g.dropped);
  group("Approximated", g.approximated);
  group("Exact", g.exact);
}

std::size_t countTodo(const std::string& text) {
  std::size_t n = 0;
  for (auto at = text.find("TODO: address"); at != std::string::npos;
       at = text.find("TODO: address", at + 1))
    ++n;
  return n;
}

std::string report(const ValidatedExport& v, const BundleInfo& info) {
  const std::string target(dialectName(v.exported.target));
  const std::vector<std::string> verdict = verdictLines(v);
  std::string md = "# Validation: policy '" + v.policy.name + "' exported to " + target + "\n\n";
  const std::size_t colon = verdict.front().find(':');
  md += "**" + verdict.front().substr(0, colon) + "**" + verdict.front().substr(colon) + "\n";
  for (std::size_t i = 1; i < verdict.size(); ++i) md += "- " + mdEscape(verdict[i]) + "\n";
  requirementsSection(md, v, info.defaultRequirements);
  md += "\n## Files\n\n- `policy.yaml` — the policy, with its source, what changed";
  md += v.base ? " against '" + v.base->name + "'" : "";
  md += " and the headline KPIs in its header\n- `" + v.exported.fileName + "` — the " + target +
        " configuration";
  const std::size_t todo = countTodo(v.exported.text);
  md += todo ? "; " + std::to_string(todo) +
                   " placeholder address(es) marked `TODO: address` must be replaced\n"
             : "\n";
  for (std::size_t i = 0; i < v.incidents.size(); ++i) {
    md += "\n## KPIs on " + v.incidents[i] + "\n\n";
    kpiTable(md, v, i);
    md += "\nGaps between native and " + target + ":\n\n";
    if (v.gaps[i].empty()) md += "- none on this incident\n";
    for (const std::string& g : v.gaps[i]) md += "- " + g + "\n";
  }
  notesSection(md, v.exported.notes);
  md += "\n## Incidents used\n\n| incident | records | real faults |\n|---|---|---|\n";
  for (std::size_t i = 0; i < v.incidents.size(); ++i)
    md += "| " + mdEscape(v.incidents[i]) + " | " + std::to_string(v.native[i].kpis.records) +
          " | " +
          (v.native[i].kpis.faultsFromRecording
               ? "read from the recording"
               : std::to_string(v.annotatedFaults[i]) + " annotated") +
          " |\n";
  md += "\n## Provenance\n\n- Spillway " + info.version +
        "\n- Policy source: " + info.policySource + "\n- Made by: `" + info.commandLine + "`\n";
  return md;
}

}  // namespace

std::vector<std::string> headlineKpis(const ValidatedExport& v) {
  std::vector<std::string> lines;
  const std::string target(dialectName(v.exported.target));
  for (std::size_t i = 0; i < v.incidents.size(); ++i) {
    if (!v.before.empty())
      lines.push_back(headline(v.incidents[i] + " before (native)", v.before[i]));
    lines.push_back(headline(v.incidents[i] + " after (native)", v.native[i].kpis));
    lines.push_back(headline(v.incidents[i] + " after on " + target, v.target[i]));
  }
  lines.push_back(verdictLines(v).front());
  return lines;
}

std::vector<BundleFile> makeBundle(const ValidatedExport& v, const BundleInfo& info) {
  PolicyHeader h;
  h.source = info.policySource;
  h.base = v.base ? &*v.base : nullptr;
  h.baseName = info.baseName;
  h.kpis = headlineKpis(v);
  h.notes = {"Written by Spillway " + info.version + ": " + info.commandLine};
  return {{"policy.yaml", policyToYamlWithHeader(v.policy, h)},
          {v.exported.fileName, v.exported.text},
          {"validation.md", report(v, info)}};
}

std::vector<std::string> writeBundle(const std::string& dir, const std::vector<BundleFile>& files) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec) && !fs::create_directory(dir, ec))
    throw InputError(dir, 0, "bundle",
                     "cannot create the directory: " +
                         (ec ? ec.message() : std::string("a file of that name exists")));
  std::vector<std::string> paths;
  for (const BundleFile& f : files) {
    const std::string path = (fs::path(dir) / f.name).string();
    std::ofstream out(path, std::ios::binary);
    out << f.text;
    out.close();
    if (!out)
      throw InputError(path, 0, "bundle", std::string("cannot write: ") + std::strerror(errno));
    paths.push_back(path);
  }
  return paths;
}

}  // namespace spillway::exporter
