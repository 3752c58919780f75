// `spillway-cli export`: write a policy in another gateway's native configuration, with the
// mapping notes; optionally replay incidents under the native policy and under the target's
// emulation with the exported values, name every gap, and gate on --require.
#include <QCommandLineParser>
#include <QFileInfo>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli_common.hpp"
#include "spillway/export/bundle.hpp"
#include "spillway/export/export.hpp"
#include "spillway/export/validate.hpp"
#include "spillway/fault_annotations.hpp"
#include "spillway/formats/canonical.hpp"
#include "spillway/formats/sniff.hpp"
#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/library/library.hpp"

namespace spillway::cli {
namespace {

using namespace spillway::exporter;

// An access log (HAProxy's in the export's log-format, nginx's, ...) as the canonical JSONL a
// validation replays: read by its importer, held whole as a canonical file is.
std::string canonicalText(formats::Format f, const std::string& path) {
  auto src = formats::openSource(f, path, {});
  if (src->aggregates())
    throw InputError(path, 0, "", "holds aggregate samples; validation replays calls");
  std::string text;
  CallRecord rec;
  while (src->next(rec)) {
    formats::appendCallJson(text, rec);
    if (text.size() > input_limits::kWholeTrace)
      throw InputError(path, rec.line, "",
                       "larger than a validation replay reads whole (" +
                           std::to_string(input_limits::kWholeTrace >> 20) +
                           " MiB as canonical JSONL): cut a shorter incident");
  }
  return text;
}

// An incident file (canonical JSONL, or a file whose first line tells its format), or "sample"
// for the built-in seed-000 sample; faults from X.faults.jsonl next to X.jsonl when it exists.
Incident loadIncident(const std::string& arg) {
  Incident inc;
  if (arg == "sample") {
    inc.name = "seed000-sample";
    inc.text = readWhole(kSampleTrace, input_limits::kWholeTrace, "trace");
    inc.faults =
        parseFaultAnnotations(readWhole(kSampleFaults, input_limits::kFaults, "faults file"),
                              "seed000-sample.faults.jsonl (built-in)");
    return inc;
  }
  inc.name = QFileInfo(QString::fromStdString(arg)).fileName().toStdString();
  const auto format = formats::nonCanonicalFormat(arg);
  inc.text = format ? canonicalText(*format, arg)
                    : readWhole(arg, input_limits::kWholeTrace, "trace read whole");
  std::string stem = arg;
  if (stem.size() > 6 && stem.compare(stem.size() - 6, 6, ".jsonl") == 0)
    stem.resize(stem.size() - 6);
  const std::string faults = stem + ".faults.jsonl";
  if (QFileInfo::exists(QString::fromStdString(faults)))
    inc.faults =
        parseFaultAnnotations(readWhole(faults, input_limits::kFaults, "faults file"), faults);
  return inc;
}

// An incident of the library: its calls as canonical JSONL (what replay reads from a file),
// its annotations as the fault ground truth. Held whole, as a file is: within kWholeTrace.
Incident loadLibraryIncident(library::Library& lib, const std::string& name) {
  const library::IncidentInfo info = lib.requireIncident(name);
  auto tooBig = [&] {
    return InputError(lib.path(), 0, "incident",
                      "'" + name + "' is larger than a validation replay reads whole (" +
                          std::to_string(input_limits::kWholeTrace >> 20) +
                          " MiB of JSONL): cut a shorter incident");
  };
  if (info.kind != "calls")
    throw InputError(lib.path(), 0, "incident",
                     "'" + name + "' holds aggregate samples; validation replays calls");
  if (info.records > input_limits::kWholeTrace / 64) throw tooBig();  // ≥ 64 bytes a call
  Incident inc;
  inc.name = name;
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* f = ::open_memstream(&buf, &len);
  if (!f) throw InputError(lib.path(), 0, "", "out of memory");
  try {
    lib.exportJsonl(name, f);
  } catch (...) {
    std::fclose(f);
    std::free(buf);
    throw;
  }
  std::fclose(f);
  inc.text.assign(buf, len);
  std::free(buf);
  if (inc.text.size() > input_limits::kWholeTrace) throw tooBig();
  inc.faults = lib.faults(name);
  return inc;
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

// Each out period as {down_ms, up_ms (null: still down at the trace's end), failed_trials}.
nlohmann::json outsJson(const std::vector<OutPeriod>& outs) {
  nlohmann::json a = nlohmann::json::array();
  for (const OutPeriod& o : outs)
    a.push_back({{"down_ms", static_cast<double>(o.down) / 1000.0},
                 {"up_ms", o.up == kNever ? nlohmann::json(nullptr)
                                          : nlohmann::json(static_cast<double>(o.up) / 1000.0)},
                 {"failed_trials", o.failedTrials}});
  return a;
}

nlohmann::json kpisJson(const ReplayKpis& k) {
  nlohmann::json j;
  j["engine"] = k.engine;
  j["records"] = k.records;
  j["rejected"] = k.rejected;
  putBlockFigures(j, k.blocks, k.falseTripsPerHour());
  j["faults_from_recording"] = k.faultsFromRecording;
  j["opens"] = k.opens;
  j["admitted_share"] =
      k.records ? 1.0 - static_cast<double>(k.rejected) / static_cast<double>(k.records) : 1.0;
  nlohmann::json fs = nlohmann::json::array();
  for (const FaultKpis& f : k.faults)
    fs.push_back({{"instance", f.fault.instance},
                  {"kind", f.fault.kind},
                  {"found", f.found},
                  {"detected", f.score.detected},
                  {"restored", f.score.restored},
                  {"ttd_ms", msOrNull(f.score.ttd)},
                  {"mttr_ms", msOrNull(f.score.mttr)},
                  {"from_trip_ms", msOrNull(f.score.fromTrip)},
                  {"recovery_lag_ms", msOrNull(f.score.recoveryLag)}});
  j["faults"] = fs;
  nlohmann::json is = nlohmann::json::array();
  for (const InstanceKpis& i : k.instances)
    is.push_back({{"instance", i.name},
                  {"group", i.group},
                  {"records", i.stats.records},
                  {"rejected", i.counters.rejected},
                  {"blocked_would_succeed", i.counters.blockedWouldSucceed},
                  {"opens", i.counters.opens},
                  {"outs", outsJson(i.outs)}});
  j["instances"] = is;
  return j;
}

void printTable(std::FILE* o, const std::string& target, const ReplayKpis& n, const ReplayKpis& t) {
  std::fprintf(o, "  %-30s %-22s %-22s\n", "KPI", "native", target.c_str());
  auto row = [&](const std::string& k, const std::string& a, const std::string& b) {
    std::fprintf(o, "  %-30s %-22s %-22s\n", k.c_str(), a.c_str(), b.c_str());
  };
  for (std::size_t i = 0; i < n.faults.size() && i < t.faults.size(); ++i) {
    const FaultKpis& a = n.faults[i];
    const FaultKpis& b = t.faults[i];
    if (!a.found) {
      row("fault on " + a.fault.instance, "(not in the trace)", "");
      continue;
    }
    row("TTD " + a.fault.instance, humanDuration(a.score.ttd), humanDuration(b.score.ttd));
    row("MTTR " + a.fault.instance, humanDuration(a.score.mttr), humanDuration(b.score.mttr));
    row("  from trip", humanDuration(a.score.fromTrip), humanDuration(b.score.fromTrip));
  }
  auto fp = [](const ReplayKpis& k) {
    return pct(k.fpRate()) + " (n=" + std::to_string(k.blocked()) + ")";
  };
  auto part = [](const ReplayKpis& k, BlockClass c) { return pct(k.blocks.partRate(c)); };
  row("误伤 (false-positive rate)", fp(n), fp(t));
  row("  false trip", part(n, BlockClass::FalseTrip), part(t, BlockClass::FalseTrip));
  row("  recovery lag", part(n, BlockClass::RecoveryLag), part(t, BlockClass::RecoveryLag));
  row("collateral share", pct(n.blocks.collateralShare()), pct(t.blocks.collateralShare()));
  row("false trips", std::to_string(n.blocks.falseTripEpisodes),
      std::to_string(t.blocks.falseTripEpisodes));
  row("good calls blocked", std::to_string(n.blockedWouldSucceed),
      std::to_string(t.blockedWouldSucceed));
  row("calls blocked", std::to_string(n.rejected), std::to_string(t.rejected));
  auto adm = [](const ReplayKpis& k) {
    return pct(k.records ? 1.0 - static_cast<double>(k.rejected) / static_cast<double>(k.records)
                         : 1.0);
  };
  row("calls admitted", adm(n), adm(t));
  row("opens", std::to_string(n.opens), std::to_string(t.opens));
}

void addExportOptions(QCommandLineParser& p) {
  p.setApplicationDescription(
      "Export a breaker policy to another gateway's native configuration (docs/export.md):\n"
      "resilience4j (application.yml), envoy (clusters), istio (DestinationRule), sentinel\n"
      "(DegradeRule JSON), haproxy (backend), nginx (upstream), litellm (router_settings).\n"
      "Prints the mapping notes: what was approximated and what the target cannot express.\n"
      "--validate replays incidents (canonical JSONL or an access log whose first line tells its\n"
      "format, as import does; X.faults.jsonl next to X.jsonl is read as\n"
      "the fault ground truth; 'sample' is the built-in seed-000 sample) under the native policy\n"
      "and under the target's emulation with the exported values, and names every gap.\n"
      "--require makes it a pipeline gate: exit 1 when the target's KPIs fail a term.\n"
      "Without --out the configuration goes to stdout and the report to stderr.");
  p.addHelpOption();
  p.addOption(
      {"target", "resilience4j | envoy | istio | sentinel | haproxy | nginx | litellm.", "TARGET"});
  p.addOption({"policy", "Policy YAML (docs/policy.md). Default: the built-in default.", "P.yaml"});
  p.addOption({"validate",
               "Replay this incident under the native policy and the target (repeatable; further "
               "incidents may follow as arguments). 'sample' = the built-in seed-000 sample; "
               "with --library, an incident of that library (its annotations are the faults).",
               "INCIDENT"});
  p.addOption(libraryOption());
  p.addOption({"require",
               "Gate on the target's KPIs over the validation incidents (the worst one), e.g. "
               "'fp<=0.03,ttd<=30s,mttr<=120s'; metrics: fp, ttd, mttr, from_trip, "
               "recovery_lag, blocked, opens, false_trips (per hour), collateral.",
               "TERMS"});
  p.addOption({"slo",
               "The validation incidents' SLO latency: a blocked call the recording answered "
               "within it would have succeeded (docs/kpis.md; default 5s).",
               "D", "5s"});
  p.addOption({"out", "Write the configuration here (the report then goes to stdout).", "FILE"});
  p.addOption({"json", "Print the report (configuration, notes, validation) as JSON."});
  p.addOption({"addresses",
               "Where the instances are served, for server lines (nginx, HAProxy, Envoy): a file "
               "of 'INSTANCE HOST:PORT' lines ('#' comments), or 'auto' (the default: an "
               "instance named HOST:PORT is its own address, the others get placeholders).",
               "FILE|auto"});
  p.addOption({"bundle",
               "Write a review bundle for a pull request into DIR (created if missing): "
               "policy.yaml with a provenance header, the native configuration, and "
               "validation.md (verdict, KPIs before/after against the targets, gaps, notes, "
               "incidents). Needs --validate; without --require the targets are " +
                   QString::fromUtf8(kDefaultRequirements.data(),
                                     static_cast<int>(kDefaultRequirements.size())) +
                   ".",
               "DIR"});
  p.addOption({"base",
               "With --bundle: the policy this one replaces, for 'what changed' and the 'before' "
               "KPIs (default: the built-in default policy).",
               "P.yaml"});
  p.addOption({"idempotent-only",
               "nginx: leave non_idempotent out of proxy_next_upstream (failed POST requests, "
               "every LLM call, are then neither retried nor counted against max_fails)."});
}

struct ExportOptions {
  std::string targetName;  // as given to --target
  DialectKind target = DialectKind::Resilience4j;
  std::vector<std::string> incidents;  // --validate, then the positional arguments
  std::vector<Requirement> reqs;
  std::string requireSpec;  // --require as given
  std::string policyPath;
  QString slo;
  std::string outPath;
  bool toFile = false;  // --out
  bool json = false;
  bool idempotentOnly = false;
  std::string addressesPath;         // --addresses FILE; empty: auto
  std::string library;               // --library: --validate names its incidents
  std::string bundleDir;             // --bundle DIR; empty: no bundle
  std::string basePath;              // --base; empty: the built-in default
  bool defaultRequirements = false;  // --bundle without --require: kDefaultRequirements
  std::string commandLine;           // as typed, for the bundle's provenance
};

// `--addresses FILE`: one `INSTANCE HOST:PORT` per line, '#' comments and blank lines ignored.
std::map<std::string, std::string> readAddresses(const std::string& path) {
  const std::string text = readWhole(path, input_limits::kNativeConfig, "addresses file");
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  for (long lineNo = 1; std::getline(in, line); ++lineNo) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string instance, address, extra;
    if (!(words >> instance)) continue;
    if (!(words >> address))
      throw InputError(path, lineNo, "address", "missing: expected 'INSTANCE HOST:PORT'");
    if (words >> extra)
      throw InputError(path, lineNo, "", "unexpected '" + extra + "' after the address");
    if (!isServerAddress(address))
      throw InputError(path, lineNo, "address",
                       "expected HOST:PORT (port 1-65535), got '" + address + "'");
    if (!out.emplace(instance, address).second)
      throw InputError(path, lineNo, "instance", "'" + instance + "' is given twice");
  }
  return out;
}

// --bundle and --base; a bundle is judged by the default targets when --require is not given.
bool readBundleOptions(const QCommandLineParser& p, ExportOptions& o) {
  if (p.isSet("base") && !p.isSet("bundle")) {
    std::fprintf(stderr, "export: --base needs --bundle DIR (it is the report's 'before')\n");
    return false;
  }
  if (!p.isSet("bundle")) return true;
  o.bundleDir = p.value("bundle").toStdString();
  o.basePath = p.value("base").toStdString();
  if (o.bundleDir.empty()) {
    std::fprintf(stderr, "export: --bundle: expected a directory, got ''\n");
    return false;
  }
  if (o.incidents.empty()) {
    std::fprintf(stderr, "export: --bundle needs --validate INCIDENT (its report replays them)\n");
    return false;
  }
  if (o.requireSpec.empty()) {
    o.requireSpec = std::string(kDefaultRequirements);
    o.reqs = parseRequirements(o.requireSpec);
    o.defaultRequirements = true;
  }
  return true;
}

// The command as typed, for the bundle's provenance: arguments with spaces or shell characters
// in single quotes.
std::string commandLineOf(const QStringList& args) {
  std::string line;
  for (const QString& a : args) {
    std::string s = a.toStdString();
    const bool plain =
        !s.empty() && s.find_first_of(" \t'\"$&|;<>*?()[]{}!`\\") == std::string::npos;
    if (!plain && &a != &args.front()) {
      std::string q = "'";
      for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      s = q + "'";
    }
    line += (line.empty() ? "" : " ") + s;
  }
  return line;
}

// Prints the error and returns nothing when the options do not fit together.
std::optional<ExportOptions> readExportOptions(const QCommandLineParser& p) {
  ExportOptions o;
  o.targetName = p.value("target").toStdString();
  const auto target = parseDialectKind(o.targetName);
  if (o.targetName.empty() || !target || !exportable(*target)) {
    std::fprintf(stderr,
                 "export: --target: expected resilience4j, envoy, istio, sentinel, haproxy, "
                 "nginx or litellm%s\n",
                 o.targetName.empty() ? "" : (", got '" + o.targetName + "'").c_str());
    return std::nullopt;
  }
  o.target = *target;
  // It changes nginx's output only; elsewhere it was ignored while the user relied on it.
  if (p.isSet("idempotent-only") && o.target != DialectKind::Nginx) {
    std::fprintf(stderr, "export: --idempotent-only: applies to --target nginx only, not %s\n",
                 o.targetName.c_str());
    return std::nullopt;
  }
  for (const QString& v : p.values("validate")) o.incidents.push_back(v.toStdString());
  if (p.isSet("library")) o.library = p.value("library").toStdString();
  if (!p.positionalArguments().isEmpty()) {
    if (o.incidents.empty()) {
      std::fprintf(stderr, "export: unexpected argument '%s' (incidents follow --validate)\n",
                   qPrintable(p.positionalArguments().first()));
      return std::nullopt;
    }
    for (const QString& v : p.positionalArguments()) o.incidents.push_back(v.toStdString());
  }
  if (p.isSet("require")) {
    if (o.incidents.empty()) {
      std::fprintf(stderr, "export: --require needs --validate INCIDENT (KPIs to check)\n");
      return std::nullopt;
    }
    o.requireSpec = p.value("require").toStdString();
    try {
      o.reqs = parseRequirements(o.requireSpec);
    } catch (const InputError& e) {
      std::fprintf(stderr, "export: %s\n", e.what());
      return std::nullopt;
    }
  }
  if (!readBundleOptions(p, o)) return std::nullopt;
  o.policyPath = p.value("policy").toStdString();
  o.slo = p.value("slo");
  o.outPath = p.value("out").toStdString();
  o.toFile = p.isSet("out");
  o.json = p.isSet("json");
  o.idempotentOnly = p.isSet("idempotent-only");
  if (p.isSet("addresses") && p.value("addresses") != "auto")
    o.addressesPath = p.value("addresses").toStdString();
  return o;
}

// The export and its validation (spillway/export/bundle.hpp): each incident under the native
// policy and under the target, and with --bundle the base policy as "before".
ValidatedExport exportAndValidate(const ExportOptions& o) {
  const Policy policy = loadPolicy(o.policyPath);
  const ReplayTruthOptions truth = parseSlo(o.slo);
  std::unique_ptr<library::Library> lib;
  if (!o.library.empty())
    lib = std::make_unique<library::Library>(o.library, library::OpenOptions{.mustExist = true});
  std::vector<Incident> incidents;
  for (const std::string& a : o.incidents) {
    incidents.push_back(lib && a != "sample" ? loadLibraryIncident(*lib, a) : loadIncident(a));
    incidents.back().truth = truth;
  }
  ExportContext ctx;
  ctx.idempotentOnly = o.idempotentOnly;
  if (!o.policyPath.empty()) ctx.policySource = o.policyPath;
  if (!o.addressesPath.empty()) ctx.addresses = readAddresses(o.addressesPath);
  std::optional<Policy> base;
  if (!o.bundleDir.empty()) base = loadPolicy(o.basePath);
  return validateExport(policy, o.target, incidents, ctx, o.requireSpec, base);
}

// --bundle DIR: policy.yaml, the native file and validation.md (spillway/export/bundle.hpp).
void writeBundleDir(const ExportOptions& o, const ValidatedExport& run, std::FILE* rep) {
  BundleInfo info;
  info.policySource = o.policyPath.empty() ? "the built-in default policy" : o.policyPath;
  info.baseName = o.basePath.empty() ? "the built-in default policy '" + run.base->name + "'"
                                     : "'" + run.base->name + "' (" + o.basePath + ")";
  info.version = SPILLWAY_VERSION;
  info.commandLine = o.commandLine;
  info.defaultRequirements = o.defaultRequirements;
  for (const std::string& path : writeBundle(o.bundleDir, makeBundle(run, info)))
    std::fprintf(rep, "bundle: %s written\n", path.c_str());
}

// The configuration itself: to --out, or to stdout ahead of the text report.
void writeConfig(const ExportOptions& o, const ExportResult& x) {
  if (o.toFile) {
    std::ofstream f(o.outPath);
    if (!f) throw InputError(o.outPath, 0, "", "cannot write");
    f << x.text;
    if (!f) throw InputError(o.outPath, 0, "", "write failed");
  } else if (!o.json) {
    std::fputs(x.text.c_str(), stdout);
    std::fflush(stdout);
  }
}

nlohmann::json reportJson(const ExportOptions& o, const ValidatedExport& run) {
  const ExportResult& x = run.exported;
  nlohmann::json j;
  j["target"] = o.targetName;
  j["policy"] = run.policy.name;
  j["file_name"] = x.fileName;
  j["config"] = x.text;
  nlohmann::json notes = nlohmann::json::array();
  for (const MappingNote& n : x.notes)
    notes.push_back({{"topic", std::string(topicName(n.topic))},
                     {"gap", n.gap},
                     {"kind", n.gap     ? "dropped"
                              : n.exact ? "exact"
                                        : "approximated"},
                     {"scope", n.scope},
                     {"text", n.text}});
  j["notes"] = notes;
  nlohmann::json v = nlohmann::json::array();
  for (std::size_t i = 0; i < run.incidents.size(); ++i)
    v.push_back({{"incident", run.incidents[i]},
                 {"native", kpisJson(run.native[i].kpis)},
                 {"target", kpisJson(run.target[i])},
                 {"gaps", run.gaps[i]}});
  j["validation"] = v;
  if (!o.reqs.empty()) {
    nlohmann::json rs = nlohmann::json::array();
    for (const auto& r : run.results)
      rs.push_back({{"term", r.req.text}, {"passed", r.passed}, {"detail", r.detail}});
    j["require"] = {{"spec", o.requireSpec}, {"passed", run.passed}, {"results", rs}};
  }
  return j;
}

// HH:MM:SS.mmm UTC of an epoch time.
std::string clockUtc(Micros t) {
  const std::time_t secs = static_cast<std::time_t>(t / kMicrosPerSecond);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%02d.%03lld", tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(t % kMicrosPerSecond / 1000));
  return buf;
}

// When the target would take each server out and bring it back: "∞" only when the trace
// ended first, and it says so.
void printOuts(std::FILE* rep, const std::string& targetName, const ReplayKpis& k) {
  bool any = false;
  for (const InstanceKpis& i : k.instances)
    for (const OutPeriod& o : i.outs) {
      if (!any) std::fprintf(rep, "  Predicted on %s, per server (UTC):\n", targetName.c_str());
      any = true;
      const std::string trials =
          o.failedTrials ? ", " + std::to_string(o.failedTrials) + " failed trial(s)" : "";
      if (o.up == kNever)
        std::fprintf(rep, "    %-18s down %s, still down when the trace ends at %s (%s+)%s\n",
                     i.name.c_str(), clockUtc(o.down).c_str(), clockUtc(k.last).c_str(),
                     humanDuration(k.last - o.down).c_str(), trials.c_str());
      else
        std::fprintf(rep, "    %-18s down %s, up %s (%s out)%s\n", i.name.c_str(),
                     clockUtc(o.down).c_str(), clockUtc(o.up).c_str(),
                     humanDuration(o.up - o.down).c_str(), trials.c_str());
    }
  if (!any) std::fprintf(rep, "  Predicted on %s: no server taken out.\n", targetName.c_str());
}

void printValidation(std::FILE* rep, const std::string& targetName, const ValidatedExport& run) {
  for (std::size_t i = 0; i < run.incidents.size(); ++i) {
    const std::size_t faults = run.annotatedFaults[i];
    std::fprintf(rep, "\nValidation on %s (%llu records, %zu annotated fault%s):\n",
                 run.incidents[i].c_str(),
                 static_cast<unsigned long long>(run.native[i].kpis.records), faults,
                 faults == 1 ? "" : "s");
    printTable(rep, targetName, run.native[i].kpis, run.target[i]);
    printOuts(rep, targetName, run.target[i]);
    if (run.gaps[i].empty())
      std::fprintf(rep, "  No KPI gap between native and %s on this incident.\n",
                   targetName.c_str());
    else
      std::fprintf(rep, "  Gaps:\n");
    for (const std::string& g : run.gaps[i]) std::fprintf(rep, "  - %s\n", g.c_str());
  }
}

void printRequirements(std::FILE* rep, const ExportOptions& o, const ValidatedExport& run) {
  std::fprintf(rep, "\nRequirements on %s (worst incident):\n", o.targetName.c_str());
  for (const auto& r : run.results)
    std::fprintf(rep, "  %-4s %-14s %s\n", r.passed ? "ok" : "FAIL", r.req.text.c_str(),
                 r.detail.c_str());
  std::fprintf(
      rep, "%s: %s\n", run.passed ? "PASS" : "FAIL",
      run.passed
          ? ("the " + o.targetName + " export meets '" + o.requireSpec + "'").c_str()
          : ("the " + o.targetName + " export does not meet '" + o.requireSpec + "'").c_str());
}

void printReport(std::FILE* rep, const ExportOptions& o, const ValidatedExport& run) {
  std::fprintf(rep, "%sExport of policy '%s' to %s%s\n", o.toFile ? "" : "\n",
               run.policy.name.c_str(), o.targetName.c_str(),
               o.toFile ? (": " + o.outPath + " written").c_str() : "");
  // The verdict first: it is what a reviewer reads before anything else.
  if (!o.reqs.empty())
    for (bool first = true; const std::string& line : verdictLines(run)) {
      std::fprintf(rep, "%s%s\n", first ? "" : "  ", line.c_str());
      first = false;
    }
  const GroupedNotes g = groupNotes(run.exported.notes);
  std::fprintf(rep, "\nMapping notes:\n");
  auto group = [&](const char* title, const char* mark, const std::vector<MappingNote>& ns) {
    if (ns.empty()) return;
    std::fprintf(rep, "  %s:\n", title);
    for (const MappingNote& n : ns) std::fprintf(rep, "  %s %s\n", mark, noteText(n).c_str());
  };
  group("dropped (x, the target cannot express it)", "x", g.dropped);
  group("approximated (~)", "~", g.approximated);
  group("exact (=)", "=", g.exact);
  printValidation(rep, o.targetName, run);
  if (!o.reqs.empty()) printRequirements(rep, o, run);
}

}  // namespace

int runExport(const QStringList& args) {
  QCommandLineParser p;
  addExportOptions(p);
  if (const auto done = parseCommandLine(p, args, {"validate"})) return *done;
  std::optional<ExportOptions> o = readExportOptions(p);
  if (o) o->commandLine = commandLineOf(args);
  if (!o) return kInputError;
  std::FILE* rep = (o->toFile || o->json) ? stdout : stderr;  // the report's stream
  try {
    const ValidatedExport run = exportAndValidate(*o);
    writeConfig(*o, run.exported);
    if (o->json)
      std::fputs((reportJson(*o, run).dump(2) + "\n").c_str(), stdout);
    else
      printReport(rep, *o, run);
    if (!o->bundleDir.empty()) writeBundleDir(*o, run, o->json ? stderr : rep);
    return run.passed ? kOk : kFindings;
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kInputError;
  }
}

}  // namespace spillway::cli
