#pragma once
// The incident library: imported incidents (their calls or aggregate samples), fault
// annotations and saved runs (docs/library.md), in one SQLite file (the embedded default) or a
// team's PostgreSQL database (a postgresql:// URL). Plain sqlite3 and libpq C APIs, no Qt.
//
// Guarantees: one import = one transaction (a crash leaves the library as it was before that
// file); a file whose content was imported before is reported, not imported twice; a file that
// is not a Spillway library (not SQLite, another application's database, a newer schema) is an
// InputError naming the file. Errors are InputError(libraryPath or input file, line, field, …).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/dialect_replay.hpp"
#include "spillway/formats/source.hpp"
#include "spillway/library/recording.hpp"
#include "spillway/time.hpp"

struct sqlite3;

namespace spillway::library {

namespace detail {
class Connection;
}

inline constexpr int kSchemaVersion = 5;

// True for a team library's location (a postgresql:// or postgres:// URL), false for a file.
bool isDatabaseUrl(std::string_view location);

// $XDG_DATA_HOME/spillway/library.db, else ~/.local/share/spillway/library.db.
std::string defaultLibraryPath();

struct OpenOptions {
  bool mustExist = false;  // read commands: a missing file is an error, not a new library
  int schemaVersion = kSchemaVersion;  // tests create older libraries with this
  // Open read-only even when the file could be written. A library that cannot be written
  // (read-only file or directory, read-only file system) opens read-only by itself.
  bool readOnly = false;
};

struct IncidentInfo {
  std::int64_t id = 0;
  std::string name;
  std::string kind;             // "calls" or "aggregates"
  std::string source;           // the first imported file (or "simulate seed-000", …)
  Micros tStart = 0, tEnd = 0;  // first start, last end (0 when empty)
  std::uint64_t records = 0;    // calls, or aggregate samples
  std::uint64_t instances = 0;
  std::string tags, notes, created;
};

struct InstanceInfo {
  std::string name, model;
  std::uint64_t records = 0;
  Micros tStart = 0, tEnd = 0;
};

struct Annotation {
  std::string instance;
  Micros start = 0, end = 0;
  std::string kind;
  std::string origin = "operator";  // "simulator" or "operator"
};

struct SourceInfo {
  std::string path, format, hash, imported;
  std::uint64_t records = 0, skipped = 0;
};

struct RunInfo {
  std::int64_t id = 0;
  std::string policyYaml, kpisJson, transitionsJson, created;
};

// One run of a drill runbook (docs/drills.md).
struct DrillRunInfo {
  std::int64_t id = 0;
  std::string runbook;
  std::uint32_t revision = 0;
  std::string spillwayVersion, policyYaml, resultJson, created;
  bool passed = false;
};

// The rows one sweep shard wrote (docs/scale-out.md), as kept in the library.
struct SweepShardRows {
  std::uint32_t shard = 0, shards = 0;
  std::string rows, created;
};

struct ImportResult {
  std::string incident;
  bool alreadyImported = false;  // same content imported before (into `incident`)
  std::uint64_t records = 0;     // calls or samples stored by this import
  std::uint64_t skipped = 0;     // bad lines skipped (with skipBadLines)
  std::uint64_t ignored = 0;     // well-formed lines with no upstream call
  std::vector<std::string> skippedMessages;
};

// Called every block during an import with the records stored so far.
using ProgressFn = std::function<void(std::uint64_t records)>;

// 64-bit content hash of a file, as "<16 hex digits>-<size>". Throws InputError.
std::string hashFile(const std::string& path);

class Library {
 public:
  // Opens or creates the library at `path` (a file, or a postgresql:// URL whose password, if
  // any, comes from libpq's environment or ~/.pgpass), migrating an older schema. Writers
  // take turns (one write lock per library), readers never wait. Throws InputError.
  explicit Library(std::string path, OpenOptions opt = {});
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  const std::string& path() const { return path_; }
  int schemaVersion() const;

  std::vector<IncidentInfo> incidents();
  std::optional<IncidentInfo> incident(std::string_view name);
  // Throws InputError(path, 0, "incident", "no incident 'X'") when missing.
  IncidentInfo requireIncident(std::string_view name);
  std::vector<InstanceInfo> instances(std::string_view incident);
  std::vector<SourceInfo> sources(std::string_view incident);

  // Imports one file into `incident` (created when missing; appended to otherwise) in one
  // transaction. Re-importing the same content (same bytes and format) returns
  // alreadyImported and changes nothing. "-" reads stdin; it, and anything but a regular
  // file (a pipe, a device), is read once and never deduplicated.
  ImportResult importFile(const std::string& file, formats::Format format,
                          const formats::ImportOptions& opt, std::string_view incident,
                          const ProgressFn& progress = {});
  // Imports an open source; `hash` (may be empty) marks the content as imported.
  ImportResult importSource(formats::RecordSource& src, std::string_view incident,
                            std::string_view format, std::string_view hash,
                            const ProgressFn& progress = {});

  // Streams an incident's calls (or samples: aggregates() is true) in import order. The
  // Library must outlive the source; views stay valid until the next read.
  std::unique_ptr<formats::RecordSource> open(std::string_view incident);
  // Writes the incident as canonical JSONL (formats/canonical.hpp); returns lines written.
  std::uint64_t exportJsonl(std::string_view incident, std::FILE* out);

  void annotate(std::string_view incident, const Annotation& a);
  std::vector<Annotation> annotations(std::string_view incident);
  // Removes one annotation equal to `a` (instance, start, end, kind); false when none is.
  bool removeAnnotation(std::string_view incident, const Annotation& a);
  // The annotations as the fault ground truth a replay scores against.
  std::vector<NamedFault> faults(std::string_view incident);
  void setNotes(std::string_view incident, std::string_view tags, std::string_view notes);

  std::int64_t saveRun(std::string_view incident, std::string_view policyYaml,
                       std::string_view kpisJson, std::string_view transitionsJson);
  std::vector<RunInfo> runs(std::string_view incident);

  std::int64_t saveDrillRun(const DrillRunInfo& run);
  // Runs of one runbook (all runbooks when empty), oldest first.
  std::vector<DrillRunInfo> drillRuns(std::string_view runbook = {});

  // Keeps shard `shard` of `shards` of sweep `sweep` (its key): a second save of the same
  // shard replaces the first, so a task run again never doubles rows.
  void saveSweepShard(std::string_view sweep, std::uint32_t shard, std::uint32_t shards,
                      std::string_view rows);
  // The shards kept of one sweep, by shard number.
  std::vector<SweepShardRows> sweepShards(std::string_view sweep);

  // Writes the incident as canonical JSONL to `file` (not "-") atomically: into a temporary
  // file in the same directory, renamed over `file` once complete. A failure (a full disk, a
  // damaged library) leaves `file` as it was and no temporary behind. Returns lines written.
  std::uint64_t exportJsonlFile(std::string_view incident, const std::string& file);

  // Deletes an incident and everything attached to it; false when there was none.
  bool deleteIncident(std::string_view name);

  // Why this library cannot be written ("the directory /x is not writable"), empty when it
  // can. Set at open; reads work either way.
  const std::string& readOnlyReason() const { return readOnlyReason_; }
  // Every write calls this first. Throws InputError(path, 0, "", "cannot ACTION: ...") when
  // the library is open read-only, or when it is damaged: the first write of a Library runs
  // `PRAGMA quick_check` (a scan of every page) and refuses to add to a damaged file.
  void requireWritable(std::string_view action);

  // Live recordings (docs/library.md, "Live recording"): written by a LiveRecorder on its own
  // connection, read and cut here. Names are their own namespace, apart from incidents'.
  std::vector<RecordingInfo> recordings();
  std::optional<RecordingInfo> recording(std::string_view name);
  // Throws InputError(path, 0, "recording", "no recording 'X'") when missing.
  RecordingInfo requireRecording(std::string_view name);
  // Streams the calls (or samples) of a recording whose start — a sample's end - step — is in
  // [from, to), in recording order. Same lifetime rules as open().
  std::unique_ptr<formats::RecordSource> openRecording(std::string_view name, RecordKind kind,
                                                       Micros from, Micros to);
  // Makes the new incident `incident` of the recording's calls (or samples) in [from, to) and
  // the recording's annotations that overlap the range, in one transaction: replay, sweep and
  // the console then see an ordinary incident. `kind` "calls" or "aggregates"; empty = calls
  // when the range holds any, else samples (an incident holds one kind). Throws InputError
  // naming the field (recording, name, kind, range) for a missing recording, an existing or
  // empty name, from >= to, a range outside the retained data or one with nothing in it.
  // Holds the write lock while it copies (≈ 3 M calls/s): a LiveRecorder buffers meanwhile.
  CutResult cutRecording(std::string_view recording, Micros from, Micros to,
                         std::string_view incident, std::string_view kind = {},
                         const ProgressFn& progress = {});
  void annotateRecording(std::string_view recording, const Annotation& a);
  std::vector<Annotation> recordingAnnotations(std::string_view recording);
  // Deletes a recording and its data in one transaction; false when there was none.
  bool deleteRecording(std::string_view name);

  // True for a team library on PostgreSQL (a postgresql:// URL), false for an SQLite file.
  bool isPostgres() const;
  // The SQLite handle (tests and tools), null on PostgreSQL.
  sqlite3* handle();
  detail::Connection& connection() { return *db_; }

 private:
  [[noreturn]] void fail(const std::string& what) const;
  void exec(const char* sql);
  void openOrCreate(const OpenOptions& opt);
  void migrate(int from, int to);
  // The import of this content, if one is stored.
  std::optional<ImportResult> alreadyImported(std::string_view hash);
  // importSource's body, inside the caller's transaction. `mustBeNew`: refuse an existing
  // incident instead of appending (a cut makes a new one).
  ImportResult store(formats::RecordSource& src, std::string_view incident, std::string_view format,
                     std::string_view hash, const ProgressFn& progress, bool mustBeNew);

  std::string path_;
  std::unique_ptr<detail::Connection> db_;
  std::string readOnlyReason_;
  std::string damage_;    // quick_check's first complaint, once checked
  bool checked_ = false;  // quick_check has run
};

}  // namespace spillway::library
