// `spillway-cli export`: write a policy in another gateway's native configuration, with the
// mapping notes; optionally replay incidents under the native policy and under the target's
// emulation with the exported values, name every gap, and gate on --require.
#include <QCommandLineParser>
#include <QFileInfo>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "spillway/export/export.hpp"
#include "spillway/export/validate.hpp"
#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"

namespace spillway::cli {
namespace {

using namespace spillway::exporter;

// Fault annotations next to a trace: JSON Lines {"instance","start","end","kind"} with epoch ms
// or RFC 3339 times (the format `spillway-cli replay --faults` reads).
std::vector<NamedFault> readFaultsFile(const std::string& path, const std::string& text) {
  std::vector<NamedFault> out;
  long lineNo = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++lineNo;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(path, lineNo, "", std::string("invalid JSON: ") + e.what());
    }
    if (!j.is_object()) throw InputError(path, lineNo, "", "expected a JSON object per line");
    auto time = [&](const char* key) -> Micros {
      if (!j.contains(key)) throw InputError(path, lineNo, key, "missing required field");
      const auto& v = j[key];
      if (v.is_number()) return static_cast<Micros>(v.get<double>() * 1000.0);
      if (v.is_string())
        if (auto t = parseRfc3339(v.get<std::string>())) return *t;
      throw InputError(path, lineNo, key, "expected epoch milliseconds or an RFC 3339 string");
    };
    if (!j.contains("instance") || !j["instance"].is_string())
      throw InputError(path, lineNo, "instance", "missing or not a string");
    NamedFault f;
    f.instance = j["instance"].get<std::string>();
    f.start = time("start");
    f.end = time("end");
    if (f.end < f.start) throw InputError(path, lineNo, "end", "is before start");
    if (j.contains("kind") && j["kind"].is_string()) f.kind = j["kind"].get<std::string>();
    out.push_back(std::move(f));
  }
  return out;
}

// An incident file, or "sample" for the built-in seed-000 sample; faults from X.faults.jsonl
// next to X.jsonl when it exists.
Incident loadIncident(const std::string& arg) {
  Incident inc;
  if (arg == "sample") {
    inc.name = "seed000-sample";
    inc.text = readWhole(kSampleTrace, input_limits::kWholeTrace, "trace");
    inc.faults = readFaultsFile("seed000-sample.faults.jsonl (built-in)",
                                readWhole(kSampleFaults, input_limits::kFaults, "faults file"));
    return inc;
  }
  inc.name = QFileInfo(QString::fromStdString(arg)).fileName().toStdString();
  inc.text = readWhole(arg, input_limits::kWholeTrace, "trace read whole");
  std::string stem = arg;
  if (stem.size() > 6 && stem.compare(stem.size() - 6, 6, ".jsonl") == 0)
    stem.resize(stem.size() - 6);
  const std::string faults = stem + ".faults.jsonl";
  if (QFileInfo::exists(QString::fromStdString(faults)))
    inc.faults = readFaultsFile(faults, readWhole(faults, input_limits::kFaults, "faults file"));
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
                  {"opens", i.counters.opens}});
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

}  // namespace

int runExport(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Export a breaker policy to another gateway's native configuration (docs/export.md):\n"
      "resilience4j (application.yml), envoy (clusters), istio (DestinationRule), sentinel\n"
      "(DegradeRule JSON), haproxy (backend), nginx (upstream), litellm (router_settings).\n"
      "Prints the mapping notes: what was approximated and what the target cannot express.\n"
      "--validate replays incidents (canonical JSONL; X.faults.jsonl next to X.jsonl is read as\n"
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
               "incidents may follow as arguments). 'sample' = the built-in seed-000 sample.",
               "INCIDENT"});
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
  p.addOption({"idempotent-only",
               "nginx: leave non_idempotent out of proxy_next_upstream (failed POST requests, "
               "every LLM call, are then neither retried nor counted against max_fails)."});
  if (!p.parse(args)) {
    std::fprintf(stderr, "export: %s\n", qPrintable(p.errorText()));
    return kInputError;
  }
  if (p.isSet("help")) {
    std::fputs(qPrintable(p.helpText()), stdout);
    return kOk;
  }
  const std::string targetName = p.value("target").toStdString();
  const auto target = parseDialectKind(targetName);
  if (targetName.empty() || !target || !exportable(*target)) {
    std::fprintf(stderr,
                 "export: --target: expected resilience4j, envoy, istio, sentinel, haproxy, "
                 "nginx or litellm%s\n",
                 targetName.empty() ? "" : (", got '" + targetName + "'").c_str());
    return kInputError;
  }
  std::vector<std::string> incidents;
  for (const QString& v : p.values("validate")) incidents.push_back(v.toStdString());
  if (!p.positionalArguments().isEmpty()) {
    if (incidents.empty()) {
      std::fprintf(stderr, "export: unexpected argument '%s' (incidents follow --validate)\n",
                   qPrintable(p.positionalArguments().first()));
      return kInputError;
    }
    for (const QString& v : p.positionalArguments()) incidents.push_back(v.toStdString());
  }
  std::vector<Requirement> reqs;
  if (p.isSet("require")) {
    if (incidents.empty()) {
      std::fprintf(stderr, "export: --require needs --validate INCIDENT (KPIs to check)\n");
      return kInputError;
    }
    try {
      reqs = parseRequirements(p.value("require").toStdString());
    } catch (const InputError& e) {
      std::fprintf(stderr, "export: %s\n", e.what());
      return kInputError;
    }
  }
  const bool json = p.isSet("json");
  const bool toFile = p.isSet("out");
  std::FILE* rep = (toFile || json) ? stdout : stderr;  // the report's stream
  try {
    const Policy policy = loadPolicy(p.value("policy").toStdString());
    const ReplayTruthOptions truth = parseSlo(p.value("slo"));
    std::vector<Incident> incs;
    for (const std::string& a : incidents) {
      incs.push_back(loadIncident(a));
      incs.back().truth = truth;
    }
    // Native runs first: they supply the learned baselines and the instances to the exporter.
    std::vector<NativeRun> native;
    std::string names;
    for (const Incident& i : incs) {
      native.push_back(replayNative(policy, i));
      names += (names.empty() ? "" : ", ") + i.name;
    }
    ExportContext ctx = contextFrom(native, names);
    ctx.idempotentOnly = p.isSet("idempotent-only");
    const ExportResult x = exportPolicy(policy, *target, ctx);
    // The exported text must read back under the target's own parser.
    (void)makeDialect(x.target, x.text, x.fileName, 1, nullptr, x.select);

    std::vector<ReplayKpis> targetRuns;
    std::vector<std::vector<std::string>> gaps;
    std::vector<std::string> incNames;
    for (std::size_t i = 0; i < incs.size(); ++i) {
      targetRuns.push_back(replayTarget(x, incs[i]));
      gaps.push_back(nameGaps(x, incs[i].name, native[i].kpis, targetRuns.back()));
      incNames.push_back(incs[i].name);
    }
    const auto results = checkRequirements(reqs, incNames, targetRuns);
    const bool passed =
        std::all_of(results.begin(), results.end(), [](const auto& r) { return r.passed; });

    if (toFile) {
      const std::string op = p.value("out").toStdString();
      std::ofstream f(op);
      if (!f) throw InputError(op, 0, "", "cannot write");
      f << x.text;
      if (!f) throw InputError(op, 0, "", "write failed");
    } else if (!json) {
      std::fputs(x.text.c_str(), stdout);
      std::fflush(stdout);
    }

    if (json) {
      nlohmann::json j;
      j["target"] = targetName;
      j["policy"] = policy.name;
      j["file_name"] = x.fileName;
      j["config"] = x.text;
      nlohmann::json notes = nlohmann::json::array();
      for (const MappingNote& n : x.notes)
        notes.push_back({{"topic", std::string(topicName(n.topic))},
                         {"gap", n.gap},
                         {"scope", n.scope},
                         {"text", n.text}});
      j["notes"] = notes;
      nlohmann::json v = nlohmann::json::array();
      for (std::size_t i = 0; i < incs.size(); ++i)
        v.push_back({{"incident", incs[i].name},
                     {"native", kpisJson(native[i].kpis)},
                     {"target", kpisJson(targetRuns[i])},
                     {"gaps", gaps[i]}});
      j["validation"] = v;
      if (!reqs.empty()) {
        nlohmann::json rs = nlohmann::json::array();
        for (const auto& r : results)
          rs.push_back({{"term", r.req.text}, {"passed", r.passed}, {"detail", r.detail}});
        j["require"] = {
            {"spec", p.value("require").toStdString()}, {"passed", passed}, {"results", rs}};
      }
      std::fputs((j.dump(2) + "\n").c_str(), stdout);
    } else {
      std::fprintf(rep, "%sExport of policy '%s' to %s%s\n", toFile ? "" : "\n",
                   policy.name.c_str(), targetName.c_str(),
                   toFile ? (": " + p.value("out").toStdString() + " written").c_str() : "");
      std::fprintf(rep, "\nMapping notes (~ approximated, x not expressible):\n");
      for (const MappingNote& n : x.notes)
        std::fprintf(rep, "  %s %s%s\n", n.gap ? "x" : "~",
                     n.scope.empty() ? "" : ("[" + n.scope + "] ").c_str(), n.text.c_str());
      for (std::size_t i = 0; i < incs.size(); ++i) {
        std::fprintf(rep, "\nValidation on %s (%llu records, %zu annotated fault%s):\n",
                     incs[i].name.c_str(), static_cast<unsigned long long>(native[i].kpis.records),
                     incs[i].faults.size(), incs[i].faults.size() == 1 ? "" : "s");
        printTable(rep, targetName, native[i].kpis, targetRuns[i]);
        if (gaps[i].empty())
          std::fprintf(rep, "  No KPI gap between native and %s on this incident.\n",
                       targetName.c_str());
        else
          std::fprintf(rep, "  Gaps:\n");
        for (const std::string& g : gaps[i]) std::fprintf(rep, "  - %s\n", g.c_str());
      }
      if (!reqs.empty()) {
        std::fprintf(rep, "\nRequirements on %s (worst incident):\n", targetName.c_str());
        for (const auto& r : results)
          std::fprintf(rep, "  %-4s %-14s %s\n", r.passed ? "ok" : "FAIL", r.req.text.c_str(),
                       r.detail.c_str());
        std::fprintf(rep, "%s: %s\n", passed ? "PASS" : "FAIL",
                     passed ? ("the " + targetName + " export meets '" +
                               p.value("require").toStdString() + "'")
                                  .c_str()
                            : ("the " + targetName + " export does not meet '" +
                               p.value("require").toStdString() + "'")
                                  .c_str());
      }
    }
    return passed ? kOk : kFindings;
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kInputError;
  }
}

}  // namespace spillway::cli
