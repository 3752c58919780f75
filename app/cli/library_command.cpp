// `spillway-cli library list|show|export|annotate|delete|record|record-info|cut`: the incident
// library and its live recordings by hand (docs/library.md).
#include <QCommandLineParser>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "spillway/input_error.hpp"
#include "spillway/library/copy.hpp"
#include "spillway/library/library.hpp"
#include "spillway/library/live_recorder.hpp"
#include "spillway/library/time_text.hpp"

namespace spillway::cli {
namespace {

std::string rfc3339(Micros t) {
  return library::formatUtc(t);
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

std::string retentionText(const library::Retention& r) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  if (r.maxAge > 0) add(formatDuration(r.maxAge) + " of data");
  if (r.maxRecords > 0) add(std::to_string(r.maxRecords) + " records");
  if (r.maxBytes > 0) add(std::to_string(r.maxBytes) + " bytes");
  return out.empty() ? "none" : out;
}

// Recordings appear in `library list --json` next to the incidents, as kind "recording".
nlohmann::json recordingJson(const library::RecordingInfo& r) {
  return {{"name", r.name},
          {"kind", "recording"},
          {"start_ms", ms(r.tStart)},
          {"end_ms", ms(r.tEnd)},
          {"records", r.calls + r.samples},
          {"calls", r.calls},
          {"samples", r.samples},
          {"blocks", r.blocks},
          {"bytes", r.bytes},
          {"recorded", r.recorded},
          {"dropped", r.dropped},
          {"retention",
           {{"max_age_ms", ms(r.retention.maxAge)},
            {"max_records", r.retention.maxRecords},
            {"max_bytes", r.retention.maxBytes}}},
          {"created", r.created}};
}

nlohmann::json annotationsJson(const std::vector<library::Annotation>& notes) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& a : notes)
    j.push_back({{"instance", a.instance},
                 {"start_ms", ms(a.start)},
                 {"end_ms", ms(a.end)},
                 {"kind", a.kind},
                 {"origin", a.origin}});
  return j;
}

void printAnnotations(const std::vector<library::Annotation>& notes) {
  if (!notes.empty()) std::printf("\nfault annotations:\n");
  for (const auto& a : notes)
    std::printf("  %-22s %-16s %s .. %s (%s)\n", printable(a.instance).c_str(),
                printable(a.kind).c_str(), rfc3339(a.start).c_str(), rfc3339(a.end).c_str(),
                printable(a.origin).c_str());
}

void printRecordings(const std::vector<library::RecordingInfo>& all) {
  std::printf("\n%-28s %10s %8s %10s  %-24s %10s  %s\n", "recording", "calls", "samples", "bytes",
              "retained from", "span", "retention");
  for (const auto& r : all)
    std::printf(
        "%-28s %10llu %8llu %10llu  %-24s %10s  %s\n", printable(r.name).c_str(),
        static_cast<unsigned long long>(r.calls), static_cast<unsigned long long>(r.samples),
        static_cast<unsigned long long>(r.bytes), r.blocks ? rfc3339(r.tStart).c_str() : "(empty)",
        humanDuration(r.blocks ? r.tEnd - r.tStart : 0).c_str(),
        retentionText(r.retention).c_str());
}

int recordInfo(library::Library& lib, const std::string& name, bool json) {
  const auto r = lib.requireRecording(name);
  const auto notes = lib.recordingAnnotations(name);
  if (json) {
    nlohmann::json j = recordingJson(r);
    j["annotations"] = annotationsJson(notes);
    std::printf("%s\n", j.dump(2).c_str());
    return kOk;
  }
  std::printf("Recording '%s': %llu calls, %llu samples in %llu blocks (%llu bytes)\n",
              printable(r.name).c_str(), static_cast<unsigned long long>(r.calls),
              static_cast<unsigned long long>(r.samples), static_cast<unsigned long long>(r.blocks),
              static_cast<unsigned long long>(r.bytes));
  if (r.blocks)
    std::printf("retained: %s .. %s (%s)\n", rfc3339(r.tStart).c_str(), rfc3339(r.tEnd).c_str(),
                humanDuration(r.tEnd - r.tStart).c_str());
  else
    std::printf("retained: nothing yet\n");
  std::printf("retention: %s\n", retentionText(r.retention).c_str());
  std::printf("recorded %llu records since %s, %llu dropped by retention\n",
              static_cast<unsigned long long>(r.recorded), printable(r.created).c_str(),
              static_cast<unsigned long long>(r.dropped));
  printAnnotations(notes);
  return kOk;
}

int listRecordings(library::Library& lib, bool json) {
  const auto all = lib.recordings();
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : all) j.push_back(recordingJson(r));
    std::printf("%s\n", j.dump(2).c_str());
  } else if (all.empty()) {
    std::printf("no recordings\n");
  } else {
    printRecordings(all);
  }
  return kOk;
}

int list(library::Library& lib, bool json) {
  const auto all = lib.incidents();
  const auto recs = lib.recordings();
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& i : all) j.push_back(incidentJson(i));
    for (const auto& r : recs) j.push_back(recordingJson(r));
    std::printf("%s\n", j.dump(2).c_str());
    return kOk;
  }
  std::printf("%-28s %-10s %10s %9s  %-24s %10s  %s\n", "incident", "kind", "records", "instances",
              "start", "duration", "source");
  for (const auto& i : all)
    std::printf("%-28s %-10s %10llu %9llu  %-24s %10s  %s\n", printable(i.name).c_str(),
                printable(i.kind).c_str(), static_cast<unsigned long long>(i.records),
                static_cast<unsigned long long>(i.instances), rfc3339(i.tStart).c_str(),
                humanDuration(i.tEnd - i.tStart).c_str(), printable(i.source).c_str());
  if (!recs.empty()) printRecordings(recs);
  return kOk;
}

// Everything `library show` prints about one incident.
struct IncidentDetail {
  library::IncidentInfo incident;
  std::vector<library::InstanceInfo> instances;
  std::vector<library::SourceInfo> sources;
  std::vector<library::Annotation> annotations;
  std::vector<library::RunInfo> runs;
};

IncidentDetail loadIncidentDetail(library::Library& lib, const std::string& name) {
  IncidentDetail d;
  d.incident = lib.requireIncident(name);
  d.instances = lib.instances(name);
  d.sources = lib.sources(name);
  d.annotations = lib.annotations(name);
  d.runs = lib.runs(name);
  return d;
}

nlohmann::json incidentDetailJson(const IncidentDetail& d) {
  nlohmann::json j = incidentJson(d.incident);
  j["instances"] = nlohmann::json::array();
  for (const auto& x : d.instances)
    j["instances"].push_back({{"name", x.name},
                              {"model", x.model},
                              {"records", x.records},
                              {"start_ms", ms(x.tStart)},
                              {"end_ms", ms(x.tEnd)}});
  j["sources"] = nlohmann::json::array();
  for (const auto& s : d.sources)
    j["sources"].push_back({{"path", s.path},
                            {"format", s.format},
                            {"hash", s.hash},
                            {"records", s.records},
                            {"skipped_lines", s.skipped},
                            {"imported", s.imported}});
  j["annotations"] = annotationsJson(d.annotations);
  j["runs"] = nlohmann::json::array();
  for (const auto& r : d.runs) j["runs"].push_back({{"id", r.id}, {"created", r.created}});
  return j;
}

void printIncidentDetail(const IncidentDetail& d) {
  const auto& inc = d.incident;
  std::printf("Incident '%s' (%s): %llu %s on %llu instances, %s .. %s (%s)\n",
              printable(inc.name).c_str(), printable(inc.kind).c_str(),
              static_cast<unsigned long long>(inc.records),
              inc.kind == "aggregates" ? "samples" : "records",
              static_cast<unsigned long long>(inc.instances), rfc3339(inc.tStart).c_str(),
              rfc3339(inc.tEnd).c_str(), humanDuration(inc.tEnd - inc.tStart).c_str());
  if (!inc.tags.empty()) std::printf("tags: %s\n", printable(inc.tags).c_str());
  if (!inc.notes.empty()) std::printf("notes: %s\n", printable(inc.notes).c_str());
  std::printf("\n%-24s %-14s %10s  %-24s %10s\n", "instance", "model",
              inc.kind == "aggregates" ? "calls" : "records", "start", "duration");
  for (const auto& x : d.instances)
    std::printf("%-24s %-14s %10llu  %-24s %10s\n", printable(x.name).c_str(),
                printable(x.model).c_str(), static_cast<unsigned long long>(x.records),
                rfc3339(x.tStart).c_str(), humanDuration(x.tEnd - x.tStart).c_str());
  if (!d.sources.empty()) std::printf("\nsources:\n");
  for (const auto& s : d.sources)
    std::printf("  %s (%s): %llu stored, %llu bad lines skipped, imported %s\n",
                printable(s.path).c_str(), printable(s.format).c_str(),
                static_cast<unsigned long long>(s.records),
                static_cast<unsigned long long>(s.skipped), printable(s.imported).c_str());
  printAnnotations(d.annotations);
  if (!d.runs.empty()) std::printf("\nsaved runs:\n");
  for (const auto& r : d.runs)
    std::printf("  #%lld %s\n", static_cast<long long>(r.id), printable(r.created).c_str());
}

int show(library::Library& lib, const std::string& name, bool json) {
  const IncidentDetail d = loadIncidentDetail(lib, name);
  if (json)
    std::printf("%s\n", incidentDetailJson(d).dump(2).c_str());
  else
    printIncidentDetail(d);
  return kOk;
}

int exportIncident(library::Library& lib, const QCommandLineParser& p, const std::string& name) {
  if (!p.isSet("out")) {
    std::fprintf(stderr, "library export: --out FILE is required ('-' = stdout)\n");
    return kInputError;
  }
  const std::string out = p.value("out").toStdString();
  lib.requireIncident(name);
  std::uint64_t n = 0;
  if (out == "-") {
    n = lib.exportJsonl(name, stdout);
    std::fflush(stdout);
  } else {
    // Atomic: a failed export leaves no partial file (and an earlier one intact).
    n = lib.exportJsonlFile(name, out);
  }
  std::fprintf(stderr, "exported %llu lines of incident '%s' to %s\n",
               static_cast<unsigned long long>(n), name.c_str(), out.c_str());
  return kOk;
}

constexpr const char* kTimeForms =
    "expected epoch ms, RFC 3339, 'end' or -DURATION before the recording's end (e.g. -15m)";

int cut(library::Library& lib, const QCommandLineParser& p, bool json) {
  const std::string recording = p.value("recording").toStdString();
  const std::string name = p.value("name").toStdString();
  if (recording.empty() || name.empty() || !p.isSet("from")) {
    std::fprintf(stderr, "library cut: --recording, --from and --name are required\n");
    return kInputError;
  }
  // Relative times count back from the recording's newest data, its own clock.
  const library::RecordingInfo info = lib.requireRecording(recording);
  const std::string fromText = p.value("from").toStdString();
  const std::string toText = p.isSet("to") ? p.value("to").toStdString() : "end";
  const auto from = library::parseTimePoint(fromText, info.tEnd);
  const auto to = library::parseTimePoint(toText, info.tEnd);
  if (!from || !to) {
    std::fprintf(stderr, "library cut: %s: %s, not '%s'\n", from ? "--to" : "--from", kTimeForms,
                 (from ? toText : fromText).c_str());
    return kInputError;
  }
  const library::CutResult c =
      lib.cutRecording(recording, *from, *to, name, p.value("kind").toStdString());
  const char* other = c.kind == "calls" ? "aggregate samples" : "calls";
  if (json) {
    std::printf("%s\n", nlohmann::json{{"incident", c.incident},
                                       {"recording", recording},
                                       {"kind", c.kind},
                                       {"records", c.records},
                                       {"annotations", c.annotations},
                                       {"from_ms", ms(c.from)},
                                       {"to_ms", ms(c.to)},
                                       {"clipped", c.clipped},
                                       {"other_kind_in_range", c.otherKindInRange}}
                            .dump(2)
                            .c_str());
    return kOk;
  }
  std::printf("cut %llu %s of recording '%s' [%s, %s) into incident '%s' (%llu annotations)\n",
              static_cast<unsigned long long>(c.records),
              c.kind == "calls" ? "calls" : "aggregate samples", recording.c_str(),
              rfc3339(c.from).c_str(), rfc3339(c.to).c_str(), c.incident.c_str(),
              static_cast<unsigned long long>(c.annotations));
  if (c.clipped)
    std::printf("note: the recording retains data from %s on; the incident starts there\n",
                rfc3339(c.retainedStart).c_str());
  if (c.otherKindInRange)
    std::printf(
        "note: the range also holds %s, not cut (an incident holds one kind; "
        "--kind %s cuts them into another incident)\n",
        other, c.kind == "calls" ? "aggregates" : "calls");
  return kOk;
}

// What `library record` feeds where, read from its options.
struct RecordOptions {
  std::string recording;
  formats::Format format = formats::Format::Jsonl;
  library::RecorderOptions recorder;
  formats::ImportOptions import;
};

// Prints the first bad option and returns nothing.
std::optional<RecordOptions> readRecordOptions(const QCommandLineParser& p) {
  RecordOptions o;
  o.recording = p.value("recording").toStdString();
  if (o.recording.empty()) {
    std::fprintf(stderr, "library record: --recording NAME is required\n");
    return std::nullopt;
  }
  if (p.isSet("format") && !formats::parseFormat(p.value("format").toStdString(), o.format)) {
    std::fprintf(stderr, "library record: --format: expected %s\n",
                 formats::formatChoices(formats::kFormats).c_str());
    return std::nullopt;
  }
  auto& retention = o.recorder.retention;
  if (p.isSet("retain")) {
    const QString v = p.value("retain");
    const auto d = parseDuration(v.toStdString());
    if (v == "none" || v == "0") {
      retention.maxAge = 0;
    } else if (!d || *d <= 0) {
      std::fprintf(stderr,
                   "library record: --retain: expected a duration of data (24h, 90m) or none, "
                   "not '%s'\n",
                   qPrintable(v));
      return std::nullopt;
    } else {
      retention.maxAge = *d;
    }
  }
  for (const char* opt : {"retain-records", "retain-bytes"}) {
    if (!p.isSet(opt)) continue;
    bool ok = false;
    const qulonglong v = p.value(opt).toULongLong(&ok);
    if (!ok) {
      std::fprintf(stderr, "library record: --%s: expected a whole number, not '%s'\n", opt,
                   qPrintable(p.value(opt)));
      return std::nullopt;
    }
    (std::string(opt) == "retain-records" ? retention.maxRecords : retention.maxBytes) = v;
  }
  o.import.skipBadLines = p.isSet("skip-bad-lines");
  return o;
}

// Feeds files into a recording through the LiveRecorder, as the live path would: a backfill,
// and the way to try retention and cuts on a log at hand.
int record(const std::string& lp, const QCommandLineParser& p, const QStringList& files,
           bool json) {
  const auto o = readRecordOptions(p);
  if (!o) return kInputError;
  library::LiveRecorder rec(lp, o->recording, o->recorder);
  nlohmann::json jout = nlohmann::json::array();
  for (const QString& f : files) {
    auto src = formats::openSource(o->format, f.toStdString(), o->import);
    std::uint64_t n = 0;
    if (src->aggregates()) {
      formats::AggregateSample s;
      while (src->nextAggregate(s)) {
        rec.append(s);
        ++n;
      }
    } else {
      CallRecord c;
      while (src->next(c)) {
        rec.append(c);
        ++n;
      }
    }
    // Each file ends committed: an error in the next one keeps this one.
    rec.close();
    if (json)
      jout.push_back({{"file", f.toStdString()}, {"records", n}, {"skipped", src->skipped()}});
    else
      std::printf("%s: %llu records into recording '%s'\n", qPrintable(f),
                  static_cast<unsigned long long>(n), o->recording.c_str());
  }
  if (json) std::printf("%s\n", jout.dump(2).c_str());
  return kOk;
}

// The action and NAME of `library ACTION [NAME]`, checked against what the action takes.
struct LibraryArgs {
  QString action;
  QStringList pos;
  bool onRecording = false;
  std::string name;  // the incident, for actions that take one
  bool json = false;
};

int annotate(library::Library& lib, const QCommandLineParser& p, const LibraryArgs& a) {
  library::Annotation note;
  note.instance = p.value("instance").toStdString();
  if (note.instance.empty()) {
    std::fprintf(stderr, "library annotate: --instance is required\n");
    return kInputError;
  }
  // On a recording, times may also count back from its newest data (-15m, end).
  const std::string rec = p.value("recording").toStdString();
  std::optional<Micros> end;
  if (a.onRecording) end = lib.requireRecording(rec).tEnd;
  const auto from = library::parseTimePoint(p.value("from").toStdString(), end);
  const auto to = library::parseTimePoint(p.value("to").toStdString(), end);
  if (!from || !to) {
    std::fprintf(stderr, "library annotate: --from and --to: %s\n",
                 a.onRecording ? kTimeForms : "expected epoch ms or RFC 3339 times");
    return kInputError;
  }
  note.start = *from;
  note.end = *to;
  note.kind = p.value("kind").toStdString();
  note.origin = "operator";
  if (a.onRecording)
    lib.annotateRecording(rec, note);
  else
    lib.annotate(a.name, note);
  if (!a.json)
    std::printf("annotated %s on %s'%s': %s .. %s\n", note.instance.c_str(),
                a.onRecording ? "recording " : "", a.onRecording ? rec.c_str() : a.name.c_str(),
                rfc3339(note.start).c_str(), rfc3339(note.end).c_str());
  return kOk;
}

int deleteEntry(library::Library& lib, const std::string& lp, const QCommandLineParser& p,
                const LibraryArgs& a) {
  if (a.onRecording) {
    const std::string rec = p.value("recording").toStdString();
    if (!lib.deleteRecording(rec))
      throw InputError(lp, 0, "recording", "no recording '" + rec + "'");
    if (!a.json) std::printf("deleted recording '%s'\n", rec.c_str());
    return kOk;
  }
  if (!lib.deleteIncident(a.name))
    throw InputError(lp, 0, "incident", "no incident '" + a.name + "'");
  if (!a.json) std::printf("deleted incident '%s'\n", a.name.c_str());
  return kOk;
}

int copyLibrary(const QCommandLineParser& p, const LibraryArgs& a) {
  library::Library from(a.pos.at(1).toStdString(),
                        library::OpenOptions{.mustExist = true, .readOnly = true});
  library::Library to(a.pos.at(2).toStdString());
  std::vector<std::string> names;
  for (const QString& n : p.values("incident")) names.push_back(n.toStdString());
  const library::CopyResult r = library::copyIncidents(from, to, names);
  auto joined = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  // A damaged incident is an input error (exit 2), after the whole ones went across.
  const int code = r.damaged.empty() ? kOk : kInputError;
  if (a.json) {
    nlohmann::json damaged = nlohmann::json::array();
    for (const auto& [name, why] : r.damaged) damaged.push_back({{"name", name}, {"error", why}});
    const nlohmann::json o = {{"copied", r.copied}, {"present", r.present}, {"damaged", damaged}};
    std::printf("%s\n", o.dump().c_str());
    return code;
  }
  std::printf("copied %zu incident(s) from %s to %s%s%s\n", r.copied.size(), from.path().c_str(),
              to.path().c_str(), r.copied.empty() ? "" : ": ", joined(r.copied).c_str());
  if (!r.present.empty())
    std::printf("already in %s, left as they are: %s\n", to.path().c_str(),
                joined(r.present).c_str());
  for (const auto& [name, why] : r.damaged)
    std::fprintf(stderr, "not copied: incident '%s' does not read whole: %s\n", name.c_str(),
                 why.c_str());
  return code;
}

void addLibraryOptions(QCommandLineParser& p) {
  p.setApplicationDescription(
      "The incident library (docs/library.md):\n"
      "  list                      incidents and recordings with their size and time span\n"
      "  show NAME                 instances, sources, annotations and saved runs\n"
      "  export NAME --out F       canonical JSONL ('-' = stdout)\n"
      "  annotate NAME --instance X --from T1 --to T2 [--kind K]   a fault interval\n"
      "           (--recording R instead of NAME: on a recording; cuts copy it)\n"
      "  delete NAME | --recording R   an incident (or a recording) and all attached to it\n"
      "  copy FROM TO [--incident NAME]...   incidents (all by default) from one library to\n"
      "           another: files and postgresql:// URLs alike, byte for byte; an incident\n"
      "           already in TO is left as it is\n"
      "Live recordings (docs/library.md, \"Live recording\"):\n"
      "  record FILE... --recording R [--format F] [--retain 24h] [--retain-records N]\n"
      "         [--retain-bytes N]   feed files through the live recorder\n"
      "  record-info [R | --recording R]   retained span, size, retention, annotations\n"
      "  cut --recording R --from T [--to T] --name NEW [--kind calls|aggregates]\n"
      "         the recording's [from, to) as a new incident. T: epoch ms, RFC 3339, 'end', or\n"
      "         -DURATION before the recording's newest data (--from -15m; --to defaults to end)");
  p.addHelpOption();
  p.addPositionalArgument("action",
                          "list, show, export, annotate, delete, copy, record, record-info or cut");
  p.addPositionalArgument("NAME", "The incident (record: the files).", "[NAME]");
  p.addOption(libraryOption());
  p.addOption({"json", "Print JSON."});
  p.addOption({"out", "export: the output file ('-' = stdout).", "FILE"});
  p.addOption({"instance", "annotate: the faulty instance.", "X"});
  p.addOption({"from", "annotate: fault start; cut: range start (see above).", "T1"});
  p.addOption({"to", "annotate: fault end; cut: range end, excluded (default: end).", "T2"});
  p.addOption({"kind",
               "annotate: the fault's kind (free text, e.g. latency_drift); cut: calls or "
               "aggregates (default: calls when the range has any).",
               "K"});
  p.addOption({"recording", "The recording (record, record-info, cut, annotate, delete).", "R"});
  p.addOption({"name", "cut: the new incident.", "NEW"});
  p.addOption({"incident", "copy: this incident only (repeat for more).", "NAME"});
  p.addOption({"format",
               QString::fromStdString("record: " + formats::formatChoices(formats::kFormats) +
                                      " (default: jsonl)."),
               "F"});
  p.addOption({"retain", "record: keep this much data time (default 24h; none).", "D"});
  p.addOption({"retain-records", "record: keep at most N calls + samples.", "N"});
  p.addOption({"retain-bytes", "record: keep at most N bytes of blocks.", "N"});
  p.addOption({"skip-bad-lines", "record: count malformed lines and go on."});
}

// Prints what is wrong with the action or its NAMEs and returns nothing.
std::optional<LibraryArgs> readLibraryArgs(const QCommandLineParser& p) {
  LibraryArgs a;
  a.pos = p.positionalArguments();
  const QStringList& pos = a.pos;
  if (pos.isEmpty()) {
    std::fprintf(stderr,
                 "library: expected list, show, export, annotate, delete, copy, record, "
                 "record-info or cut\n");
    return std::nullopt;
  }
  a.action = pos.first();
  const QString& action = a.action;
  static const QStringList kActions = {"list",   "show",        "export", "annotate", "delete",
                                       "record", "record-info", "cut",    "copy"};
  if (!kActions.contains(action)) {
    std::fprintf(stderr, "library: unknown action '%s'\n", qPrintable(action));
    return std::nullopt;
  }
  a.onRecording = p.isSet("recording");
  const bool onRecording = a.onRecording;
  // How many NAMEs each action takes: annotate and delete name an incident unless
  // --recording names a recording; record takes files.
  const bool wantsName = action == "show" || action == "export" ||
                         ((action == "annotate" || action == "delete") && !onRecording);
  const bool noName = action == "list" || action == "cut" ||
                      ((action == "annotate" || action == "delete") && onRecording);
  if (action == "copy" && pos.size() != 3) {
    std::fprintf(stderr, "library copy: expected FROM and TO (library files or URLs)\n");
    return std::nullopt;
  }
  if (action == "record" && pos.size() < 2) {
    std::fprintf(stderr, "library record: expected one or more FILEs\n");
    return std::nullopt;
  }
  if (action == "record-info" && (pos.size() > 2 || (pos.size() == 2 && onRecording))) {
    std::fprintf(stderr, "library record-info: expected one recording, as R or --recording R\n");
    return std::nullopt;
  }
  if ((wantsName && pos.size() != 2) || (noName && pos.size() != 1)) {
    const char* what = wantsName         ? "expected one incident NAME"
                       : action == "cut" ? "takes no NAME (--recording R --name NEW)"
                       : onRecording     ? "takes no NAME with --recording"
                                         : "takes no NAME";
    std::fprintf(stderr, "library %s: %s\n", qPrintable(action), what);
    return std::nullopt;
  }
  a.name = wantsName ? pos.at(1).toStdString() : std::string();
  a.json = p.isSet("json");
  return a;
}

int runAction(const QCommandLineParser& p, const LibraryArgs& a) {
  try {
    const std::string lp = libraryPathOf(p);
    // Recording creates the library, as import does.
    if (a.action == "record") return record(lp, p, a.pos.mid(1), a.json);
    if (a.action == "copy") return copyLibrary(p, a);
    // Reading never creates a library; annotate, delete and cut need one that exists, too.
    library::Library lib(lp, library::OpenOptions{.mustExist = true});
    if (a.action == "cut") return cut(lib, p, a.json);
    if (a.action == "record-info") {
      if (a.pos.size() == 2 || a.onRecording)
        return recordInfo(
            lib, a.onRecording ? p.value("recording").toStdString() : a.pos.at(1).toStdString(),
            a.json);
      return listRecordings(lib, a.json);
    }
    if (a.action == "list") return list(lib, a.json);
    if (a.action == "show") return show(lib, a.name, a.json);
    if (a.action == "export") return exportIncident(lib, p, a.name);
    if (a.action == "annotate") return annotate(lib, p, a);
    return deleteEntry(lib, lp, p, a);
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kInputError;
  }
}

}  // namespace

int runLibrary(const QStringList& args) {
  QCommandLineParser p;
  addLibraryOptions(p);
  if (const auto done = parseCommandLine(p, args, {"incident"})) return *done;
  const auto a = readLibraryArgs(p);
  if (!a) return kInputError;
  return runAction(p, *a);
}

}  // namespace spillway::cli
