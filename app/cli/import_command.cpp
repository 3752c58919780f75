// `spillway-cli import FILE... --format F`: telemetry files into the incident library, one
// transaction per file (docs/library.md). A file already imported is reported and skipped.
#include <QCommandLineParser>
#include <QFileInfo>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "spillway/formats/sniff.hpp"
#include "spillway/formats/source.hpp"
#include "spillway/input_error.hpp"
#include "spillway/library/library.hpp"

namespace spillway::cli {
namespace {

// What `import` reads, and into which incident and library.
struct ImportJob {
  QStringList files;
  std::optional<formats::Format> format;  // --format; unset: told per file
  std::optional<std::string> map;
  std::string incident;
  bool skipBadLines = false;
  std::optional<std::string> library;  // unset: the default library
  bool json = false;
};

void addImportOptions(QCommandLineParser& p) {
  p.setApplicationDescription(
      "Import telemetry into the incident library (docs/library.md, docs/formats.md).\n"
      "Each file is imported in one transaction; importing the same content again is a no-op.");
  p.addHelpOption();
  p.addPositionalArgument("FILE", "Telemetry files ('-' = stdin, never deduplicated).", "FILE...");
  p.addOption({"format",
               QString::fromStdString(formats::formatChoices(formats::kFormats) +
                                      ". Default: told from the first line (csv for *.csv; "
                                      "jsonl, the canonical form, when unsure)."),
               "F"});
  p.addOption(
      {"map", "Field mapping for csv/nginx/envoy/haproxy/prometheus: field=name,...", "MAP"});
  p.addOption(
      {"incident", "Incident to import into (default: the first file's base name).", "NAME"});
  p.addOption({"skip-bad-lines", "Count malformed lines and go on instead of stopping."});
  p.addOption(libraryOption());
  p.addOption({"json", "Print the result as JSON."});
}

// Prints what is wrong with the command line and returns nothing.
std::optional<ImportJob> readImportOptions(const QCommandLineParser& p) {
  ImportJob job;
  job.files = p.positionalArguments();
  if (job.files.isEmpty()) {
    std::fprintf(stderr, "import: no FILE given (see --help)\n");
    return std::nullopt;
  }
  formats::Format given = formats::Format::Jsonl;
  if (p.isSet("format") && !formats::parseFormat(p.value("format").toStdString(), given)) {
    std::fprintf(stderr, "import: --format: expected %s\n",
                 formats::formatChoices(formats::kFormats).c_str());
    return std::nullopt;
  }
  if (p.isSet("format")) job.format = given;
  if (p.isSet("map")) job.map = p.value("map").toStdString();
  job.incident = p.value("incident").toStdString();
  if (job.incident.empty())
    job.incident = QFileInfo(job.files.first()).completeBaseName().toStdString();
  if (job.incident.empty() || job.incident == "-") job.incident = "stdin";
  job.skipBadLines = p.isSet("skip-bad-lines");
  if (p.isSet("library")) job.library = p.value("library").toStdString();
  job.json = p.isSet("json");
  return job;
}

// Without --format each file's format is told from its first line (formats/sniff.hpp); what
// was decided, and why, goes into the error when the import fails, with the --format to use.
struct FormatChoice {
  formats::Format format;
  std::string hint;  // appended to an error
};

FormatChoice chooseFormat(const ImportJob& job, const std::string& file) {
  if (job.format) return {*job.format, ""};
  const std::string alternatives = "give --format " + formats::formatChoices(formats::kFormats);
  if (QString::fromStdString(file).endsWith(".csv", Qt::CaseInsensitive))
    return {formats::Format::Csv, " (read as csv for its name; " + alternatives + ")"};
  const formats::Sniffed s = formats::sniffFile(file);
  // Canonical JSONL is the default anyway: its errors need no word on the format.
  if (s.format == formats::Format::Jsonl) return {formats::Format::Jsonl, ""};
  if (s.format)
    return {*s.format, " (read as " + std::string(formats::formatName(*s.format)) +
                           ", told from line " + std::to_string(s.line) + ": " + s.why +
                           "; give --format to choose another)"};
  return {formats::Format::Jsonl,
          " (read as jsonl: the format could not be told from " +
              (s.line ? "line " + std::to_string(s.line) + ", " : std::string()) + s.why + "; " +
              alternatives + ")"};
}

library::ImportResult importOneFile(library::Library& lib, const ImportJob& job,
                                    const std::string& file, const FormatChoice& c) {
  formats::ImportOptions opt;
  opt.skipBadLines = job.skipBadLines;
  try {
    if (job.map) opt.map = formats::parseFieldMap(*job.map, c.format);
    return lib.importFile(file, c.format, opt, job.incident);
  } catch (const InputError& e) {
    // A line over the size limit is too long in any format: the format is not the question.
    if (c.hint.empty() || e.detail().rfind("line longer than", 0) == 0) throw;
    throw InputError(e.file(), e.line(), e.field(), e.detail() + c.hint);
  }
}

nlohmann::json importedJson(const std::string& file, const library::ImportResult& r) {
  return {
      {"file", file},         {"incident", r.incident},     {"already_imported", r.alreadyImported},
      {"records", r.records}, {"skipped_lines", r.skipped}, {"ignored", r.ignored}};
}

void printImported(const std::string& file, formats::Format format,
                   const library::ImportResult& r) {
  if (r.alreadyImported) {
    std::printf("%s: already imported into incident '%s'\n", file.c_str(), r.incident.c_str());
    return;
  }
  std::printf("%s: %llu %s into incident '%s'", file.c_str(),
              static_cast<unsigned long long>(r.records),
              format == formats::Format::Prometheus ? "samples" : "records", r.incident.c_str());
  if (r.skipped)
    std::printf(", %llu bad lines skipped", static_cast<unsigned long long>(r.skipped));
  if (r.ignored)
    std::printf(", %llu without an upstream call ignored",
                static_cast<unsigned long long>(r.ignored));
  std::printf("\n");
}

int importFiles(const ImportJob& job) {
  nlohmann::json jout = nlohmann::json::array();
  try {
    const std::string lp = job.library ? *job.library : library::defaultLibraryPath();
    library::Library lib(lp);
    for (const QString& f : job.files) {
      const std::string file = f.toStdString();
      const FormatChoice c = chooseFormat(job, file);
      const library::ImportResult r = importOneFile(lib, job, file, c);
      for (const auto& m : r.skippedMessages) std::fprintf(stderr, "skipped: %s\n", m.c_str());
      if (job.json)
        jout.push_back(importedJson(file, r));
      else
        printImported(file, c.format, r);
    }
  } catch (const InputError& e) {
    // Files before the failing one stay imported: each is its own transaction.
    if (job.json) std::printf("%s\n", jout.dump(2).c_str());
    std::fprintf(stderr, "%s\n", e.what());
    return kInputError;
  }
  if (job.json) std::printf("%s\n", jout.dump(2).c_str());
  return kOk;
}

}  // namespace

int runImport(const QStringList& args) {
  QCommandLineParser p;
  addImportOptions(p);
  if (const auto done = parseCommandLine(p, args)) return *done;
  const auto job = readImportOptions(p);
  if (!job) return kInputError;
  return importFiles(*job);
}

}  // namespace spillway::cli
