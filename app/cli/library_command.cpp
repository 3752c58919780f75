// `spillway-cli library list|show|export|annotate|delete`: the incident library by hand.
#include <QCommandLineParser>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "spillway/library/library.hpp"

namespace spillway::cli {
namespace {

// µs since the epoch as RFC 3339 UTC with milliseconds.
std::string rfc3339(Micros t) {
  const std::int64_t secs =
      t >= 0 ? t / kMicrosPerSecond : -((-t + kMicrosPerSecond - 1) / kMicrosPerSecond);
  const auto ms = static_cast<int>((t - secs * kMicrosPerSecond) / 1000);
  std::int64_t z = (secs >= 0 ? secs : secs - 86399) / 86400;
  const auto sod = static_cast<int>(secs - z * 86400);
  z += 719468;  // civil_from_days (Howard Hinnant)
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  char buf[96];  // sized for any int64 year: GCC checks the worst case
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<long long>(y),
                m, d, sod / 3600, sod / 60 % 60, sod % 60, ms);
  return buf;
}

std::optional<Micros> parseTimeArg(const QString& s) {
  bool ok = false;
  const double ms = s.toDouble(&ok);
  if (ok) return static_cast<Micros>(ms * 1000.0);
  return parseRfc3339(s.toStdString());
}

double ms(Micros t) {
  return static_cast<double>(t) / 1000.0;
}

nlohmann::json incidentJson(const library::IncidentInfo& i) {
  return {{"name", i.name},           {"kind", i.kind},       {"source", i.source},
          {"start_ms", ms(i.tStart)}, {"end_ms", ms(i.tEnd)}, {"records", i.records},
          {"instances", i.instances}, {"tags", i.tags},       {"notes", i.notes},
          {"created", i.created}};
}

}  // namespace

int runLibrary(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "The incident library (docs/library.md):\n"
      "  list                      incidents with their size and time span\n"
      "  show NAME                 instances, sources, annotations and saved runs\n"
      "  export NAME --out F       canonical JSONL ('-' = stdout)\n"
      "  annotate NAME --instance X --from T1 --to T2 [--kind K]   a fault interval\n"
      "  delete NAME               the incident and everything attached to it");
  p.addHelpOption();
  p.addPositionalArgument("action", "list, show, export, annotate or delete");
  p.addPositionalArgument("NAME", "The incident.", "[NAME]");
  p.addOption(
      {"library", "The incident library (default $XDG_DATA_HOME/spillway/library.db).", "FILE"});
  p.addOption({"json", "Print JSON."});
  p.addOption({"out", "export: the output file ('-' = stdout).", "FILE"});
  p.addOption({"instance", "annotate: the faulty instance.", "X"});
  p.addOption({"from", "annotate: fault start (epoch ms or RFC 3339).", "T1"});
  p.addOption({"to", "annotate: fault end (epoch ms or RFC 3339).", "T2"});
  p.addOption({"kind", "annotate: the fault's kind (free text, e.g. latency_drift).", "K"});
  if (!p.parse(args)) {
    std::fprintf(stderr, "%s\n", qPrintable(p.errorText()));
    return kInputError;
  }
  if (p.isSet("help")) {
    std::fputs(qPrintable(p.helpText()), stdout);
    return kOk;
  }
  const QStringList pos = p.positionalArguments();
  if (pos.isEmpty()) {
    std::fprintf(stderr, "library: expected list, show, export, annotate or delete\n");
    return kInputError;
  }
  const QString action = pos.first();
  const bool needsName = action != "list";
  if (action != "list" && action != "show" && action != "export" && action != "annotate" &&
      action != "delete") {
    std::fprintf(stderr, "library: unknown action '%s'\n", qPrintable(action));
    return kInputError;
  }
  if (static_cast<int>(needsName) + 1 != pos.size()) {
    std::fprintf(
        stderr,
        needsName ? "library %s: expected one incident NAME\n" : "library %s: takes no NAME\n",
        qPrintable(action));
    return kInputError;
  }
  const std::string name = needsName ? pos.at(1).toStdString() : std::string();
  const bool json = p.isSet("json");
  try {
    const std::string lp =
        p.isSet("library") ? p.value("library").toStdString() : library::defaultLibraryPath();
    // Reading never creates a library; annotate and delete need one that exists, too.
    library::Library lib(lp, library::OpenOptions{.mustExist = true});
    if (action == "list") {
      const auto all = lib.incidents();
      if (json) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto& i : all) j.push_back(incidentJson(i));
        std::printf("%s\n", j.dump(2).c_str());
        return kOk;
      }
      std::printf("%-28s %-10s %10s %9s  %-24s %10s  %s\n", "incident", "kind", "records",
                  "instances", "start", "duration", "source");
      for (const auto& i : all)
        std::printf("%-28s %-10s %10llu %9llu  %-24s %10s  %s\n", i.name.c_str(), i.kind.c_str(),
                    static_cast<unsigned long long>(i.records),
                    static_cast<unsigned long long>(i.instances), rfc3339(i.tStart).c_str(),
                    humanDuration(i.tEnd - i.tStart).c_str(), i.source.c_str());
      return kOk;
    }
    if (action == "show") {
      const auto inc = lib.requireIncident(name);
      const auto insts = lib.instances(name);
      const auto srcs = lib.sources(name);
      const auto notes = lib.annotations(name);
      const auto runs = lib.runs(name);
      if (json) {
        nlohmann::json j = incidentJson(inc);
        j["instances"] = nlohmann::json::array();
        for (const auto& x : insts)
          j["instances"].push_back({{"name", x.name},
                                    {"model", x.model},
                                    {"records", x.records},
                                    {"start_ms", ms(x.tStart)},
                                    {"end_ms", ms(x.tEnd)}});
        j["sources"] = nlohmann::json::array();
        for (const auto& s : srcs)
          j["sources"].push_back({{"path", s.path},
                                  {"format", s.format},
                                  {"hash", s.hash},
                                  {"records", s.records},
                                  {"skipped_lines", s.skipped},
                                  {"imported", s.imported}});
        j["annotations"] = nlohmann::json::array();
        for (const auto& a : notes)
          j["annotations"].push_back({{"instance", a.instance},
                                      {"start_ms", ms(a.start)},
                                      {"end_ms", ms(a.end)},
                                      {"kind", a.kind},
                                      {"origin", a.origin}});
        j["runs"] = nlohmann::json::array();
        for (const auto& r : runs) j["runs"].push_back({{"id", r.id}, {"created", r.created}});
        std::printf("%s\n", j.dump(2).c_str());
        return kOk;
      }
      std::printf("Incident '%s' (%s): %llu %s on %llu instances, %s .. %s (%s)\n",
                  inc.name.c_str(), inc.kind.c_str(), static_cast<unsigned long long>(inc.records),
                  inc.kind == "aggregates" ? "samples" : "records",
                  static_cast<unsigned long long>(inc.instances), rfc3339(inc.tStart).c_str(),
                  rfc3339(inc.tEnd).c_str(), humanDuration(inc.tEnd - inc.tStart).c_str());
      if (!inc.tags.empty()) std::printf("tags: %s\n", inc.tags.c_str());
      if (!inc.notes.empty()) std::printf("notes: %s\n", inc.notes.c_str());
      std::printf("\n%-24s %-14s %10s  %-24s %10s\n", "instance", "model",
                  inc.kind == "aggregates" ? "calls" : "records", "start", "duration");
      for (const auto& x : insts)
        std::printf("%-24s %-14s %10llu  %-24s %10s\n", x.name.c_str(), x.model.c_str(),
                    static_cast<unsigned long long>(x.records), rfc3339(x.tStart).c_str(),
                    humanDuration(x.tEnd - x.tStart).c_str());
      if (!srcs.empty()) std::printf("\nsources:\n");
      for (const auto& s : srcs)
        std::printf("  %s (%s): %llu stored, %llu bad lines skipped, imported %s\n", s.path.c_str(),
                    s.format.c_str(), static_cast<unsigned long long>(s.records),
                    static_cast<unsigned long long>(s.skipped), s.imported.c_str());
      if (!notes.empty()) std::printf("\nfault annotations:\n");
      for (const auto& a : notes)
        std::printf("  %-22s %-16s %s .. %s (%s)\n", a.instance.c_str(), a.kind.c_str(),
                    rfc3339(a.start).c_str(), rfc3339(a.end).c_str(), a.origin.c_str());
      if (!runs.empty()) std::printf("\nsaved runs:\n");
      for (const auto& r : runs)
        std::printf("  #%lld %s\n", static_cast<long long>(r.id), r.created.c_str());
      return kOk;
    }
    if (action == "export") {
      if (!p.isSet("out")) {
        std::fprintf(stderr, "library export: --out FILE is required ('-' = stdout)\n");
        return kInputError;
      }
      const std::string out = p.value("out").toStdString();
      lib.requireIncident(name);
      std::FILE* f = out == "-" ? stdout : std::fopen(out.c_str(), "wb");
      if (!f) throw InputError(out, 0, "", std::string("cannot write: ") + std::strerror(errno));
      std::uint64_t n = 0;
      try {
        n = lib.exportJsonl(name, f);
      } catch (...) {
        if (f != stdout) std::fclose(f);
        throw;
      }
      if (f != stdout && std::fclose(f) != 0)
        throw InputError(out, 0, "", std::string("cannot write: ") + std::strerror(errno));
      if (f == stdout) std::fflush(stdout);
      std::fprintf(stderr, "exported %llu lines of incident '%s' to %s\n",
                   static_cast<unsigned long long>(n), name.c_str(), out.c_str());
      return kOk;
    }
    if (action == "annotate") {
      library::Annotation a;
      a.instance = p.value("instance").toStdString();
      if (a.instance.empty()) {
        std::fprintf(stderr, "library annotate: --instance is required\n");
        return kInputError;
      }
      const auto from = parseTimeArg(p.value("from"));
      const auto to = parseTimeArg(p.value("to"));
      if (!from || !to) {
        std::fprintf(stderr,
                     "library annotate: --from and --to: expected epoch ms or RFC 3339 times\n");
        return kInputError;
      }
      a.start = *from;
      a.end = *to;
      a.kind = p.value("kind").toStdString();
      a.origin = "operator";
      lib.annotate(name, a);
      if (!json)
        std::printf("annotated %s on '%s': %s .. %s\n", a.instance.c_str(), name.c_str(),
                    rfc3339(a.start).c_str(), rfc3339(a.end).c_str());
      return kOk;
    }
    // delete
    if (!lib.deleteIncident(name))
      throw InputError(lp, 0, "incident", "no incident '" + name + "'");
    if (!json) std::printf("deleted incident '%s'\n", name.c_str());
    return kOk;
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kInputError;
  }
}

}  // namespace spillway::cli
