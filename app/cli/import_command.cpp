// `spillway-cli import FILE... --format F`: telemetry files into the incident library, one
// transaction per file (docs/library.md). A file already imported is reported and skipped.
#include <QCommandLineParser>
#include <QFileInfo>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "spillway/formats/source.hpp"
#include "spillway/library/library.hpp"

namespace spillway::cli {

int runImport(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Import telemetry into the incident library (docs/library.md, docs/formats.md).\n"
      "Each file is imported in one transaction; importing the same content again is a no-op.");
  p.addHelpOption();
  p.addPositionalArgument("FILE", "Telemetry files ('-' = stdin, never deduplicated).", "FILE...");
  p.addOption({"format",
               "jsonl (canonical, default), csv, nginx, envoy, otlp or prometheus. Default: "
               "csv for *.csv, else jsonl.",
               "F"});
  p.addOption({"map", "Field mapping for csv/nginx/envoy/prometheus: field=name,...", "MAP"});
  p.addOption(
      {"incident", "Incident to import into (default: the first file's base name).", "NAME"});
  p.addOption({"skip-bad-lines", "Count malformed lines and go on instead of stopping."});
  p.addOption(
      {"library", "The incident library (default $XDG_DATA_HOME/spillway/library.db).", "FILE"});
  p.addOption({"json", "Print the result as JSON."});
  if (!p.parse(args)) {
    std::fprintf(stderr, "%s\n", qPrintable(p.errorText()));
    return kInputError;
  }
  if (p.isSet("help")) {
    std::fputs(qPrintable(p.helpText()), stdout);
    return kOk;
  }
  const QStringList files = p.positionalArguments();
  if (files.isEmpty()) {
    std::fprintf(stderr, "import: no FILE given (see --help)\n");
    return kInputError;
  }
  formats::Format format = formats::Format::Jsonl;
  if (p.isSet("format")) {
    if (!formats::parseFormat(p.value("format").toStdString(), format)) {
      std::fprintf(stderr,
                   "import: --format: expected jsonl, csv, nginx, envoy, otlp or prometheus\n");
      return kInputError;
    }
  } else if (files.first().endsWith(".csv", Qt::CaseInsensitive)) {
    format = formats::Format::Csv;
  }
  std::string incident = p.value("incident").toStdString();
  if (incident.empty()) incident = QFileInfo(files.first()).completeBaseName().toStdString();
  if (incident.empty() || incident == "-") incident = "stdin";

  nlohmann::json jout = nlohmann::json::array();
  try {
    formats::ImportOptions opt;
    opt.skipBadLines = p.isSet("skip-bad-lines");
    if (p.isSet("map")) opt.map = formats::parseFieldMap(p.value("map").toStdString(), format);
    const std::string lp =
        p.isSet("library") ? p.value("library").toStdString() : library::defaultLibraryPath();
    library::Library lib(lp);
    for (const QString& f : files) {
      const std::string file = f.toStdString();
      const library::ImportResult r = lib.importFile(file, format, opt, incident);
      for (const auto& m : r.skippedMessages) std::fprintf(stderr, "skipped: %s\n", m.c_str());
      if (p.isSet("json")) {
        jout.push_back({{"file", file},
                        {"incident", r.incident},
                        {"already_imported", r.alreadyImported},
                        {"records", r.records},
                        {"skipped_lines", r.skipped},
                        {"ignored", r.ignored}});
        continue;
      }
      if (r.alreadyImported) {
        std::printf("%s: already imported into incident '%s'\n", file.c_str(), r.incident.c_str());
        continue;
      }
      std::printf("%s: %llu %s into incident '%s'", file.c_str(),
                  static_cast<unsigned long long>(r.records),
                  format == formats::Format::Prometheus ? "samples" : "records",
                  r.incident.c_str());
      if (r.skipped)
        std::printf(", %llu bad lines skipped", static_cast<unsigned long long>(r.skipped));
      if (r.ignored)
        std::printf(", %llu without an upstream call ignored",
                    static_cast<unsigned long long>(r.ignored));
      std::printf("\n");
    }
  } catch (const InputError& e) {
    // Files before the failing one stay imported: each is its own transaction.
    if (p.isSet("json")) std::printf("%s\n", jout.dump(2).c_str());
    std::fprintf(stderr, "%s\n", e.what());
    return kInputError;
  }
  if (p.isSet("json")) std::printf("%s\n", jout.dump(2).c_str());
  return kOk;
}

}  // namespace spillway::cli
