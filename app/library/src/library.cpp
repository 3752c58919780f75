// The incident library: opening (schema checks and migrations), import, queries, export.
// Over 600 lines: one class over one schema, whose statements read best next to each other
// (recordings and drill runs live in their own files).
#include "spillway/library/library.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <unordered_map>

#include <sys/stat.h>
#include <unistd.h>

#include "annotation_rows.hpp"
#include "connection.hpp"
#include "schema.hpp"
#include "spillway/formats/canonical.hpp"
#include "spillway/library/block_codec.hpp"
#include "spillway/library/string_table.hpp"
#include "spillway/special_file.hpp"

namespace spillway::library {

using detail::Connection;
using detail::nowUtc;
using detail::Stmt;
using detail::Tx;

namespace {

using Index = StringTable::Index;

struct InstanceState {
  std::string name, model;
  std::uint64_t records = 0;
  Micros tStart = 0, tEnd = 0;
  bool dirty = false;
};

// An incident's dictionaries: instances by index, strings by 1 + index (0 = absent).
struct Dictionaries {
  std::vector<InstanceState> instances;
  Index instanceIndex;
  StringTable strings;
  std::size_t storedStrings = 0;

  void load(Connection& db, std::int64_t incident) {
    Stmt si(db,
            "SELECT idx, name, model, records, t_start, t_end FROM instances WHERE incident_id=? "
            "ORDER BY idx");
    si.bind(1, incident);
    while (si.step()) {
      InstanceState s{std::string(si.text(1)),
                      std::string(si.text(2)),
                      static_cast<std::uint64_t>(si.i64(3)),
                      si.i64(4),
                      si.i64(5),
                      false};
      instanceIndex.emplace(s.name, static_cast<std::uint32_t>(instances.size()));
      instances.push_back(std::move(s));
    }
    Stmt ss(db, "SELECT text FROM strings WHERE incident_id=? ORDER BY idx");
    ss.bind(1, incident);
    while (ss.step()) {
      strings.append(ss.text(0));
    }
    storedStrings = strings.size();
  }
  std::uint32_t str(std::string_view s) { return strings.intern(s); }
  std::uint32_t instance(std::string_view name, std::string_view model) {
    auto it = instanceIndex.find(name);
    if (it != instanceIndex.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(instances.size());
    instances.push_back(InstanceState{std::string(name), std::string(model)});
    instanceIndex.emplace(instances.back().name, id);
    return id;
  }
  void save(Connection& db, std::int64_t incident) {
    Stmt ins(db,
             "INSERT INTO instances(incident_id, idx, name, model, records, t_start, t_end) "
             "VALUES(?,?,?,?,?,?,?) ON CONFLICT(incident_id, idx) DO UPDATE SET "
             "name=excluded.name, model=excluded.model, records=excluded.records, "
             "t_start=excluded.t_start, t_end=excluded.t_end");
    for (std::size_t i = 0; i < instances.size(); ++i) {
      const auto& s = instances[i];
      if (!s.dirty) continue;
      ins.bind(1, incident).bind(2, static_cast<std::int64_t>(i)).bind(3, s.name).bind(4, s.model);
      ins.bind(5, static_cast<std::int64_t>(s.records)).bind(6, s.tStart).bind(7, s.tEnd);
      ins.run();
    }
    Stmt str(db, "INSERT INTO strings(incident_id, idx, text) VALUES(?,?,?)");
    for (std::size_t i = storedStrings; i < strings.size(); ++i) {
      str.bind(1, incident).bind(2, static_cast<std::int64_t>(i)).bind(3, strings.strings()[i]);
      str.run();
    }
    storedStrings = strings.size();
  }
  void note(std::uint32_t id, Micros start, Micros end, std::uint64_t n) {
    InstanceState& s = instances[id];
    if (s.records == 0) {
      s.tStart = start;
      s.tEnd = end;
    } else {
      s.tStart = std::min(s.tStart, start);
      s.tEnd = std::max(s.tEnd, end);
    }
    s.records += n;
    s.dirty = true;
  }
};

// An incident's rows of one table in seq order, read a page at a time: a PostgreSQL result is
// held whole in memory, and an incident can be larger than memory. Columns of row() count
// from 1 (0 is seq).
class SeqPager {
 public:
  SeqPager(Connection& db, std::string_view table, std::string_view columns, std::int64_t incident,
           std::int64_t page)
      : q_(db, "SELECT seq, " + std::string(columns) + " FROM " + std::string(table) +
                   " WHERE incident_id=? AND seq>=? ORDER BY seq LIMIT ?"),
        incident_(incident),
        page_(page) {}
  bool step() {
    while (!done_) {
      if (!started_) {
        q_.reset();
        q_.bind(1, incident_).bind(2, next_).bind(3, page_);
        started_ = true;
        rows_ = 0;
      }
      if (q_.step()) {
        next_ = q_.i64(0) + 1;
        ++rows_;
        return true;
      }
      started_ = false;
      done_ = rows_ < page_;
    }
    return false;
  }
  const Stmt& row() const { return q_; }

 private:
  Stmt q_;
  std::int64_t incident_, page_, next_ = 0, rows_ = 0;
  bool started_ = false, done_ = false;
};

// Streams a stored incident back as calls, block by block (memory: one block).
class CallsSource final : public formats::RecordSource {
 public:
  CallsSource(Connection& db, const IncidentInfo& info)
      : RecordSource("incident " + info.name, false),
        path_(db.name()),
        q_(db, "blocks", "data", info.id, 64),
        name_(info.name),
        expected_(info.records) {
    dict_.load(db, info.id);
  }
  bool next(CallRecord& rec) override {
    while (pos_ >= cols_.size()) {
      if (!q_.step()) {
        // Blocks deleted or lost: fewer calls than the incident was stored with is damage,
        // never a shorter incident exported or replayed as if whole.
        if (count_ != expected_)
          throw InputError(path_, 0, "",
                           "the library is damaged: incident '" + name_ + "' holds " +
                               std::to_string(count_) + " of its " + std::to_string(expected_) +
                               " records");
        return false;
      }
      std::size_t n = 0;
      const unsigned char* p = q_.row().blob(1, n);
      if (!decodeBlock(p, n, cols_) || !valid())
        throw InputError(path_, 0, "", "the library is damaged: a record block cannot be read");
      pos_ = 0;
    }
    const std::size_t i = pos_++;
    rec = CallRecord{};
    rec.ts = cols_.ts[i];
    rec.latency = cols_.latency[i];
    rec.status = cols_.status[i];
    rec.outcome = static_cast<Outcome>(cols_.outcome[i]);
    rec.hasOutcome = true;
    rec.instance = dict_.instances[cols_.instance[i]].name;
    rec.model = str(cols_.model[i]);
    rec.tenant = str(cols_.tenant[i]);
    rec.route = str(cols_.route[i]);
    rec.session = str(cols_.session[i]);
    if (cols_.critical[i]) rec.critical = cols_.critical[i] == 2;
    rec.tokensIn = cols_.tokensIn[i];
    rec.tokensOut = cols_.tokensOut[i];
    rec.ttfb = cols_.ttfb[i];
    rec.line = static_cast<long>(++count_);
    return true;
  }

 private:
  std::string_view str(std::uint32_t id) const { return dict_.strings.at(id); }
  bool valid() const {
    const std::size_t ni = dict_.instances.size(), ns = dict_.strings.size();
    for (auto x : cols_.instance)
      if (x >= ni) return false;
    for (const auto* v : {&cols_.model, &cols_.tenant, &cols_.route, &cols_.session})
      for (auto x : *v)
        if (x > ns) return false;
    return true;
  }
  const std::string& path_;
  SeqPager q_;
  std::string name_;
  std::uint64_t expected_;
  Dictionaries dict_;
  BlockColumns cols_;
  std::size_t pos_ = 0;
  std::uint64_t count_ = 0;
};

class SamplesSource final : public formats::RecordSource {
 public:
  SamplesSource(Connection& db, const IncidentInfo& info)
      : RecordSource("incident " + info.name, false),
        path_(db.name()),
        q_(db, "samples", "instance_idx, t_end, step, calls, failures, slow", info.id, 4096) {
    dict_.load(db, info.id);
  }
  bool aggregates() const override { return true; }
  bool next(CallRecord&) override { return false; }
  bool nextAggregate(formats::AggregateSample& s) override {
    if (!q_.step()) return false;
    const Stmt& q = q_.row();
    const auto idx = q.i64(1);
    if (idx < 0 || static_cast<std::size_t>(idx) >= dict_.instances.size())
      throw InputError(path_, 0, "", "the library is damaged: a sample names no instance");
    const InstanceState& in = dict_.instances[static_cast<std::size_t>(idx)];
    s = formats::AggregateSample{};
    s.instance = in.name;
    s.model = in.model;
    s.end = q.i64(2);
    s.step = q.i64(3);
    s.calls = static_cast<std::uint32_t>(q.i64(4));
    s.failures = static_cast<std::uint32_t>(q.i64(5));
    s.slow = q.i64(6);
    s.line = static_cast<long>(++count_);
    return true;
  }

 private:
  const std::string& path_;
  SeqPager q_;
  Dictionaries dict_;
  std::uint64_t count_ = 0;
};

IncidentInfo readIncident(const Stmt& q, const std::string& path) {
  for (int col : {6, 10})
    if (q.i64(col) < 0)
      throw InputError(path, 0, "",
                       "the library is damaged: incident '" + std::string(q.text(1)) +
                           "' has a negative " + (col == 6 ? "record" : "instance") + " count");
  IncidentInfo i;
  i.id = q.i64(0);
  i.name = q.text(1);
  i.kind = q.text(2);
  i.source = q.text(3);
  i.tStart = q.i64(4);
  i.tEnd = q.i64(5);
  i.records = static_cast<std::uint64_t>(q.i64(6));
  i.tags = q.text(7);
  i.notes = q.text(8);
  i.created = q.text(9);
  i.instances = static_cast<std::uint64_t>(q.i64(10));
  return i;
}

constexpr const char* kIncidentColumns =
    "SELECT id, name, kind, source, t_start, t_end, records, tags, notes, created, "
    "(SELECT count(*) FROM instances WHERE incident_id = incidents.id) FROM incidents ";

}  // namespace

bool isDatabaseUrl(std::string_view location) {
  return detail::isPostgresUrl(location);
}

std::string defaultLibraryPath() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  std::filesystem::path base;
  if (xdg && *xdg == '/') {
    base = xdg;
  } else {
    const char* home = std::getenv("HOME");
    base = std::filesystem::path(home && *home ? home : ".") / ".local" / "share";
  }
  return (base / "spillway" / "library.db").string();
}

std::string hashFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw InputError(path, 0, "", std::string("cannot open: ") + std::strerror(errno));
  // Four independent multiply-rotate lanes over 8-byte words (a few GB/s): enough to tell
  // files apart for deduplication, together with the size.
  constexpr std::uint64_t P1 = 0x9E3779B185EBCA87ULL, P2 = 0xC2B2AE3D27D4EB4FULL;
  std::uint64_t lane[4] = {P1, P2, P1 ^ P2, ~P1};
  std::uint64_t size = 0;
  std::vector<unsigned char> buf(1 << 20);
  auto rotl = [](std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
  for (;;) {
    std::size_t got = std::fread(buf.data(), 1, buf.size(), f);
    if (got == 0) break;
    size += got;
    while (got % 32) buf[got++] = 0;  // only the final chunk is short: zero-pad it
    for (std::size_t i = 0; i < got; i += 32) {
      for (int k = 0; k < 4; ++k) {
        std::uint64_t w;
        std::memcpy(&w, &buf[i + 8 * static_cast<std::size_t>(k)], 8);
        lane[k] = rotl(lane[k] + w * P2, 31) * P1;
      }
    }
  }
  const bool err = std::ferror(f);
  std::fclose(f);
  if (err) throw InputError(path, 0, "", "cannot read");
  std::uint64_t h = size * P1;
  for (int k = 0; k < 4; ++k) h = rotl(h ^ (lane[k] * P2), 27) * P1 + 0x85EBCA77C2B2AE63ULL;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  char out[48];
  std::snprintf(out, sizeof out, "%016llx-%llu", static_cast<unsigned long long>(h),
                static_cast<unsigned long long>(size));
  return out;
}

namespace {

// Why `path` cannot be written by this process, or "" when it can: the file itself, and the
// directory, where SQLite must create its -wal and -shm files next to it.
std::string whyNotWritable(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  if (::access(path.c_str(), W_OK) != 0 && errno != ENOENT)
    return "the file is not writable: " + std::string(std::strerror(errno));
  if (::access(dir.c_str(), W_OK) != 0)
    return "the directory " + dir.string() + " is not writable: " + std::strerror(errno);
  return {};
}

}  // namespace

Library::Library(std::string path, OpenOptions opt) : path_(std::move(path)) {
  if (detail::isPostgresUrl(path_)) {
    db_ = detail::openPostgres(path_);
    path_ = db_->name();
    if (opt.readOnly) readOnlyReason_ = "opened read-only";
    openOrCreate(opt);
    // The server refuses writes too, whatever path might forget requireWritable.
    if (opt.readOnly) db_->exec("SET default_transaction_read_only = on");
    return;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool exists = fs::exists(path_, ec);
  if (opt.mustExist && !exists)
    throw InputError(path_, 0, "", "no such library (import an incident first, or pass --library)");
  if (!opt.mustExist) {
    const fs::path parent = fs::path(path_).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
  }
  if (fs::is_directory(path_, ec))
    throw InputError(path_, 0, "", "is a directory, not a library file");
  if (opt.readOnly)
    readOnlyReason_ = "opened read-only";
  else if (exists)
    readOnlyReason_ = whyNotWritable(path_);
  else if (std::string why = whyNotWritable(path_); !why.empty())
    throw InputError(path_, 0, "", "cannot create the library: " + why);
  db_ = detail::openSqlite(path_, {!readOnlyReason_.empty(), !opt.mustExist});
  openOrCreate(opt);
}

void Library::requireWritable(std::string_view action) {
  if (!readOnlyReason_.empty())
    throw InputError(path_, 0, "",
                     "cannot " + std::string(action) + ": the library is read-only here (" +
                         readOnlyReason_ + ")");
  if (!checked_) {
    damage_ = db_->integrityProblem();
    checked_ = true;
  }
  if (!damage_.empty())
    throw InputError(path_, 0, "",
                     "cannot " + std::string(action) +
                         ": the library is damaged (quick_check: " + damage_ +
                         "); it takes no more writes. `library export` what still reads and "
                         "import it into a new library");
}

Library::~Library() = default;

void Library::fail(const std::string& what) const {
  throw InputError(path_, 0, "", what);
}

void Library::exec(const char* sql) {
  db_->exec(sql);
}

int Library::schemaVersion() const {
  return db_->schemaState().version;
}

bool Library::isPostgres() const {
  return db_->isPostgres();
}

sqlite3* Library::handle() {
  return detail::sqliteHandle(*db_);
}

void Library::openOrCreate(const OpenOptions& opt) {
  detail::SchemaState s = db_->schemaState();
  const bool ro = !readOnlyReason_.empty();
  if (s.empty && opt.mustExist && db_->isPostgres())
    fail("no Spillway library in this database (import an incident first)");
  if (s.empty) {
    if (ro)
      fail(std::string("not a Spillway library: an empty ") +
           (db_->isPostgres() ? "database" : "file") + " (and it is read-only here)");
    requireWritable("create the library");
    db_->tuneForWrites();
    Tx tx(*db_);
    // Another process may have created it while this one waited for the write lock.
    s = db_->schemaState();
    if (s.empty) {
      db_->markOurs();
      migrate(0, opt.schemaVersion);
      tx.commit();
      return;
    }
  }
  if (!s.ours)
    fail(std::string("not a Spillway library: ") +
         (db_->isPostgres() ? "a PostgreSQL database" : "an SQLite database") +
         " of another application");
  if (s.version > kSchemaVersion)
    fail("the library has schema v" + std::to_string(s.version) +
         ", newer than this Spillway understands (v" + std::to_string(kSchemaVersion) +
         "): use a newer spillway-cli");
  if (s.version < 1) fail("the library is damaged: it has no schema version");
  if (s.version >= opt.schemaVersion) {
    if (!ro) db_->tuneForWrites();
    return;
  }
  requireWritable("upgrade the library's schema from v" + std::to_string(s.version));
  db_->tuneForWrites();
  Tx tx(*db_);
  s = db_->schemaState();
  if (s.version < opt.schemaVersion) migrate(s.version, opt.schemaVersion);
  tx.commit();
}

void Library::migrate(int from, int to) {
  for (int v = from + 1; v <= to; ++v) db_->exec(db_->dialect(detail::kMigrations[v]));
  db_->setVersion(to);
}

std::vector<IncidentInfo> Library::incidents() {
  std::vector<IncidentInfo> out;
  Stmt q(*db_, (std::string(kIncidentColumns) + "ORDER BY name").c_str());
  while (q.step()) out.push_back(readIncident(q, path_));
  return out;
}

std::optional<IncidentInfo> Library::incident(std::string_view name) {
  Stmt q(*db_, (std::string(kIncidentColumns) + "WHERE name=?").c_str());
  q.bind(1, name);
  if (!q.step()) return std::nullopt;
  return readIncident(q, path_);
}

IncidentInfo Library::requireIncident(std::string_view name) {
  auto i = incident(name);
  if (!i) throw InputError(path_, 0, "incident", "no incident '" + std::string(name) + "'");
  return *i;
}

std::vector<InstanceInfo> Library::instances(std::string_view name) {
  const IncidentInfo inc = requireIncident(name);
  std::vector<InstanceInfo> out;
  Stmt q(*db_,
         "SELECT name, model, records, t_start, t_end FROM instances WHERE incident_id=? "
         "ORDER BY idx");
  q.bind(1, inc.id);
  while (q.step())
    out.push_back({std::string(q.text(0)), std::string(q.text(1)),
                   static_cast<std::uint64_t>(q.i64(2)), q.i64(3), q.i64(4)});
  return out;
}

std::vector<SourceInfo> Library::sources(std::string_view name) {
  const IncidentInfo inc = requireIncident(name);
  std::vector<SourceInfo> out;
  Stmt q(*db_,
         "SELECT path, format, hash, imported, records, skipped FROM sources WHERE incident_id=? "
         "ORDER BY imported, path");
  q.bind(1, inc.id);
  while (q.step())
    out.push_back({std::string(q.text(0)), std::string(q.text(1)), std::string(q.text(2)),
                   std::string(q.text(3)), static_cast<std::uint64_t>(q.i64(4)),
                   static_cast<std::uint64_t>(q.i64(5))});
  return out;
}

ImportResult Library::importFile(const std::string& file, formats::Format format,
                                 const formats::ImportOptions& opt, std::string_view incident,
                                 const ProgressFn& progress) {
  std::string hash;
  // Only a regular file can be hashed and then read again: stdin, a pipe or a device
  // (/dev/zero would be hashed forever) is read once and never deduplicated.
  std::error_code ec;
  if (file != "-" && std::filesystem::is_regular_file(file, ec)) {
    hash = hashFile(file) + "-" + std::string(formats::formatName(format));
    if (auto r = alreadyImported(hash)) return *r;
  }
  auto src = formats::openSource(format, file, opt);
  return importSource(*src, incident, formats::formatName(format), hash, progress);
}

ImportResult Library::importSource(formats::RecordSource& src, std::string_view incident,
                                   std::string_view format, std::string_view hash,
                                   const ProgressFn& progress) {
  if (incident.empty()) throw InputError(src.source(), 0, "incident", "needs a name");
  requireWritable("import");
  Tx tx(*db_);
  ImportResult r = store(src, incident, format, hash, progress, false);
  tx.commit();
  return r;
}

namespace {

// The incident a store appends to: its row, and what it held before.
struct IncidentRow {
  std::int64_t id = 0;
  std::uint64_t before = 0;  // records already stored
  Micros tStart = 0, tEnd = 0;
};

// The time span of what one store added.
struct Added {
  std::uint64_t stored = 0;
  Micros start = kForever, end = kNever;
  void note(Micros from, Micros to) {
    start = std::min(start, from);
    end = std::max(end, to);
  }
};

IncidentRow findOrCreateIncident(Connection& db, const formats::RecordSource& src,
                                 std::string_view incident, const char* kind, bool mustBeNew) {
  IncidentRow row;
  Stmt q(db, "SELECT id, kind, records, t_start, t_end FROM incidents WHERE name=?");
  q.bind(1, incident);
  if (q.step()) {
    if (mustBeNew)
      throw InputError(db.name(), 0, "name",
                       "incident '" + std::string(incident) + "' already exists");
    row.id = q.i64(0);
    if (q.text(1) != kind)
      throw InputError(src.source(), 0, "incident",
                       "incident '" + std::string(incident) + "' holds " + std::string(q.text(1)) +
                           "; this file has " + kind);
    row.before = static_cast<std::uint64_t>(q.i64(2));
    row.tStart = q.i64(3);
    row.tEnd = q.i64(4);
  } else {
    Stmt ins(db, "INSERT INTO incidents(name, kind, source, created) VALUES(?,?,?,?) RETURNING id");
    ins.bind(1, incident).bind(2, kind).bind(3, src.source()).bind(4, nowUtc());
    row.id = ins.returnedId();
  }
  return row;
}

// The next block (calls) or sample (aggregates) sequence number of an incident.
std::int64_t nextSeq(Connection& db, std::int64_t incId, bool agg) {
  Stmt q(db, agg ? "SELECT coalesce(max(seq) + 1, 0) FROM samples WHERE incident_id=?"
                 : "SELECT coalesce(max(seq) + 1, 0) FROM blocks WHERE incident_id=?");
  q.bind(1, incId);
  return q.step() ? q.i64(0) : 0;
}

void appendCall(BlockColumns& cols, Dictionaries& dict, const CallRecord& rec) {
  const std::uint32_t id = dict.instance(rec.instance, rec.model);
  dict.note(id, rec.ts, rec.end(), 1);
  cols.push(rec, id, [&dict](std::string_view s) { return dict.str(s); });
}

// Calls go in columnar blocks of kBlockCalls, each with its time span.
Added storeCalls(Connection& db, formats::RecordSource& src, std::int64_t incId, std::int64_t seq,
                 Dictionaries& dict, const ProgressFn& progress) {
  Stmt ins(db, "INSERT INTO blocks(incident_id, seq, n, t_min, t_max, data) VALUES(?,?,?,?,?,?)");
  Added added;
  BlockColumns cols;
  cols.reserve(kBlockCalls);
  std::string blob;
  Micros bMin = kForever, bMax = kNever;
  auto flush = [&] {
    if (cols.size() == 0) return;
    blob.clear();
    encodeBlock(cols, blob);
    ins.bind(1, incId).bind(2, seq++).bind(3, static_cast<std::int64_t>(cols.size()));
    ins.bind(4, bMin).bind(5, bMax).bindBlob(6, blob.data(), blob.size());
    ins.run();
    added.stored += cols.size();
    cols.clear();
    bMin = kForever;
    bMax = kNever;
    if (progress) progress(added.stored);
  };
  CallRecord rec;
  while (src.next(rec)) {
    appendCall(cols, dict, rec);
    bMin = std::min(bMin, rec.ts);
    bMax = std::max(bMax, rec.end());
    added.note(rec.ts, rec.end());
    if (cols.size() == kBlockCalls) flush();
  }
  flush();
  return added;
}

// Aggregate samples go one row each.
Added storeSamples(Connection& db, formats::RecordSource& src, std::int64_t incId, std::int64_t seq,
                   Dictionaries& dict, const ProgressFn& progress) {
  Stmt ins(db,
           "INSERT INTO samples(incident_id, seq, instance_idx, t_end, step, calls, failures, "
           "slow) VALUES(?,?,?,?,?,?,?,?)");
  Added added;
  formats::AggregateSample s;
  while (src.nextAggregate(s)) {
    const std::uint32_t id = dict.instance(s.instance, s.model);
    dict.note(id, s.end - s.step, s.end, s.calls);
    ins.bind(1, incId).bind(2, seq++).bind(3, static_cast<std::int64_t>(id)).bind(4, s.end);
    ins.bind(5, s.step).bind(6, static_cast<std::int64_t>(s.calls));
    ins.bind(7, static_cast<std::int64_t>(s.failures)).bind(8, s.slow);
    ins.run();
    added.note(s.end - s.step, s.end);
    if (++added.stored % kBlockCalls == 0 && progress) progress(added.stored);
  }
  return added;
}

// The incident's record count and time span with what was added.
void updateIncident(Connection& db, IncidentRow row, const Added& added) {
  if (added.stored) {
    if (row.before == 0) {
      row.tStart = added.start;
      row.tEnd = added.end;
    } else {
      row.tStart = std::min(row.tStart, added.start);
      row.tEnd = std::max(row.tEnd, added.end);
    }
  }
  Stmt up(db, "UPDATE incidents SET records=?, t_start=?, t_end=? WHERE id=?");
  up.bind(1, static_cast<std::int64_t>(row.before + added.stored)).bind(2, row.tStart);
  up.bind(3, row.tEnd).bind(4, row.id);
  up.run();
}

}  // namespace

std::optional<ImportResult> Library::alreadyImported(std::string_view hash) {
  Stmt q(*db_,
         "SELECT i.name FROM sources s JOIN incidents i ON i.id = s.incident_id WHERE s.hash=?");
  q.bind(1, hash);
  if (!q.step()) return std::nullopt;
  ImportResult r;
  r.incident = q.text(0);
  r.alreadyImported = true;
  return r;
}

ImportResult Library::store(formats::RecordSource& src, std::string_view incident,
                            std::string_view format, std::string_view hash,
                            const ProgressFn& progress, bool mustBeNew) {
  // Checked again under the write lock: another process may have imported the same file
  // since importFile looked.
  if (!hash.empty())
    if (auto r = alreadyImported(hash)) return *r;
  const bool agg = src.aggregates();
  const IncidentRow row =
      findOrCreateIncident(*db_, src, incident, agg ? "aggregates" : "calls", mustBeNew);
  Dictionaries dict;
  dict.load(*db_, row.id);
  const std::int64_t seq = nextSeq(*db_, row.id, agg);
  const Added added = agg ? storeSamples(*db_, src, row.id, seq, dict, progress)
                          : storeCalls(*db_, src, row.id, seq, dict, progress);
  dict.save(*db_, row.id);
  updateIncident(*db_, row, added);
  if (!hash.empty()) {
    Stmt ins(*db_,
             "INSERT INTO sources(hash, incident_id, path, format, records, skipped, imported) "
             "VALUES(?,?,?,?,?,?,?)");
    ins.bind(1, hash).bind(2, row.id).bind(3, src.source()).bind(4, format);
    ins.bind(5, static_cast<std::int64_t>(added.stored))
        .bind(6, static_cast<std::int64_t>(src.skipped()));
    ins.bind(7, nowUtc());
    ins.run();
  }
  ImportResult r;
  r.incident = incident;
  r.records = added.stored;
  r.skipped = src.skipped();
  r.ignored = src.ignored();
  r.skippedMessages = src.skippedMessages();
  return r;
}

std::unique_ptr<formats::RecordSource> Library::open(std::string_view name) {
  const IncidentInfo inc = requireIncident(name);
  if (inc.kind == "aggregates") return std::make_unique<SamplesSource>(*db_, inc);
  return std::make_unique<CallsSource>(*db_, inc);
}

std::uint64_t Library::exportJsonl(std::string_view name, std::FILE* out) {
  auto src = open(name);
  std::string buf;
  buf.reserve(1 << 20);
  std::uint64_t n = 0;
  auto drain = [&](bool force) {
    if (buf.size() < (1 << 20) && !force) return;
    if (std::fwrite(buf.data(), 1, buf.size(), out) != buf.size())
      throw InputError("export", 0, "", std::string("cannot write: ") + std::strerror(errno));
    buf.clear();
  };
  if (src->aggregates()) {
    formats::AggregateSample s;
    while (src->nextAggregate(s)) {
      formats::appendSampleJson(buf, s);
      ++n;
      drain(false);
    }
  } else {
    CallRecord r;
    while (src->next(r)) {
      formats::appendCallJson(buf, r);
      ++n;
      drain(false);
    }
  }
  drain(true);
  return n;
}

std::uint64_t Library::exportJsonlFile(std::string_view name, const std::string& file) {
  namespace fs = std::filesystem;
  requireIncident(name);
  if (isSpecialFile(file)) {  // /dev/null, a FIFO: written as it is
    std::FILE* f = std::fopen(file.c_str(), "wb");
    if (!f) throw InputError(file, 0, "", std::string("cannot write: ") + std::strerror(errno));
    std::uint64_t n = 0;
    try {
      n = exportJsonl(name, f);
    } catch (...) {
      std::fclose(f);
      throw;
    }
    if (std::fclose(f) != 0)
      throw InputError(file, 0, "", std::string("cannot write: ") + std::strerror(errno));
    return n;
  }
  // The temporary goes next to the target (same file system: rename is atomic), named after
  // it so a crash leaves an obvious leftover rather than a plausible partial export.
  const fs::path target(file);
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::string tmpl = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw InputError(file, 0, "", std::string("cannot write: ") + std::strerror(errno));
  std::FILE* f = ::fdopen(fd, "wb");
  if (!f) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw InputError(file, 0, "", std::string("cannot write: ") + std::strerror(err));
  }
  std::uint64_t n = 0;
  try {
    n = exportJsonl(name, f);
    if (std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0)
      throw InputError(file, 0, "", std::string("cannot write: ") + std::strerror(errno));
  } catch (const InputError& e) {
    std::fclose(f);
    ::unlink(tmpl.c_str());
    // exportJsonl names no file; the message should.
    if (e.file() == "export") throw InputError(file, 0, e.field(), e.detail());
    throw;
  } catch (...) {
    std::fclose(f);
    ::unlink(tmpl.c_str());
    throw;
  }
  if (std::fclose(f) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw InputError(file, 0, "", std::string("cannot write: ") + std::strerror(err));
  }
  // mkstemp makes it 0600; an export is an ordinary file (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tmpl.c_str(), 0666 & ~mask);
  if (std::rename(tmpl.c_str(), file.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw InputError(file, 0, "", std::string("cannot write: ") + std::strerror(err));
  }
  return n;
}

void Library::annotate(std::string_view name, const Annotation& a) {
  requireWritable("annotate");
  const IncidentInfo inc = requireIncident(name);
  // A fault the incident cannot hold is scored as a fault missed (TTD ∞, a miss in every
  // sweep): an instance it never saw, an empty or reversed span, a span outside its calls.
  const std::string where = "incident '" + inc.name + "'";
  if (a.end <= a.start)
    throw InputError(path_, 0, "to",
                     "the fault must end after it starts (" + std::to_string(a.start) + " µs → " +
                         std::to_string(a.end) + " µs)");
  const auto insts = instances(inc.name);
  if (std::none_of(insts.begin(), insts.end(),
                   [&](const InstanceInfo& i) { return i.name == a.instance; }))
    throw InputError(path_, 0, "instance", where + " has no instance '" + a.instance + "'");
  if (inc.records > 0 && (a.end <= inc.tStart || a.start > inc.tEnd))
    throw InputError(path_, 0, "from",
                     "the fault lies outside " + where +
                         "'s calls (from its first start to its "
                         "last end)");
  detail::insertAnnotation(*db_, "annotations", "incident_id", inc.id, a);
}

bool Library::removeAnnotation(std::string_view name, const Annotation& a) {
  requireWritable("remove an annotation");
  // One row of the equal ones (an annotation may have been made twice): by its id.
  Stmt q(*db_,
         "DELETE FROM annotations WHERE id = (SELECT id FROM annotations WHERE incident_id=? AND "
         "instance=? AND t1=? AND t2=? AND kind=? ORDER BY id LIMIT 1) RETURNING id");
  q.bind(1, requireIncident(name).id).bind(2, a.instance).bind(3, a.start).bind(4, a.end);
  q.bind(5, a.kind);
  return q.returnedId() != 0;
}

std::vector<Annotation> Library::annotations(std::string_view name) {
  return detail::selectAnnotations(*db_, "annotations", "incident_id", requireIncident(name).id);
}

std::vector<NamedFault> Library::faults(std::string_view name) {
  std::vector<NamedFault> out;
  for (const Annotation& a : annotations(name)) out.push_back({a.instance, a.start, a.end, a.kind});
  return out;
}

void Library::setNotes(std::string_view name, std::string_view tags, std::string_view notes) {
  requireWritable("set notes");
  const IncidentInfo inc = requireIncident(name);
  Stmt q(*db_, "UPDATE incidents SET tags=?, notes=? WHERE id=?");
  q.bind(1, tags).bind(2, notes).bind(3, inc.id);
  q.run();
}

std::int64_t Library::saveRun(std::string_view name, std::string_view policyYaml,
                              std::string_view kpisJson, std::string_view transitionsJson) {
  requireWritable("save a run");
  const IncidentInfo inc = requireIncident(name);
  Stmt q(*db_,
         "INSERT INTO runs(incident_id, policy_yaml, kpis_json, transitions_json, created) "
         "VALUES(?,?,?,?,?) RETURNING id");
  q.bind(1, inc.id).bind(2, policyYaml).bind(3, kpisJson).bind(4, transitionsJson);
  q.bind(5, nowUtc());
  return q.returnedId();
}

std::vector<RunInfo> Library::runs(std::string_view name) {
  const IncidentInfo inc = requireIncident(name);
  std::vector<RunInfo> out;
  Stmt q(*db_,
         "SELECT id, policy_yaml, kpis_json, transitions_json, created FROM runs "
         "WHERE incident_id=? ORDER BY id");
  q.bind(1, inc.id);
  while (q.step())
    out.push_back({q.i64(0), std::string(q.text(1)), std::string(q.text(2)), std::string(q.text(3)),
                   std::string(q.text(4))});
  return out;
}

std::int64_t Library::saveDrillRun(const DrillRunInfo& run) {
  requireWritable("save a drill run");
  Stmt q(*db_,
         "INSERT INTO drill_runs(runbook, revision, spillway_version, policy_yaml, result_json, "
         "passed, created) VALUES(?,?,?,?,?,?,?) RETURNING id");
  q.bind(1, run.runbook).bind(2, static_cast<std::int64_t>(run.revision));
  q.bind(3, run.spillwayVersion).bind(4, run.policyYaml).bind(5, run.resultJson);
  q.bind(6, static_cast<std::int64_t>(run.passed ? 1 : 0)).bind(7, nowUtc());
  return q.returnedId();
}

std::vector<DrillRunInfo> Library::drillRuns(std::string_view runbook) {
  std::vector<DrillRunInfo> out;
  if (schemaVersion() < 4) return out;  // opened read-only at an older schema: no drills yet
  std::string sql =
      "SELECT id, runbook, revision, spillway_version, policy_yaml, result_json, passed, created "
      "FROM drill_runs";
  sql += runbook.empty() ? " ORDER BY id" : " WHERE runbook=? ORDER BY id";
  Stmt q(*db_, sql.c_str());
  if (!runbook.empty()) q.bind(1, runbook);
  while (q.step()) {
    DrillRunInfo d;
    d.id = q.i64(0);
    d.runbook = std::string(q.text(1));
    d.revision = static_cast<std::uint32_t>(q.i64(2));
    d.spillwayVersion = std::string(q.text(3));
    d.policyYaml = std::string(q.text(4));
    d.resultJson = std::string(q.text(5));
    d.passed = q.i64(6) != 0;
    d.created = std::string(q.text(7));
    out.push_back(std::move(d));
  }
  return out;
}

bool Library::deleteIncident(std::string_view name) {
  requireWritable("delete an incident");
  auto inc = incident(name);
  if (!inc) return false;
  Tx tx(*db_);
  for (const char* t :
       {"blocks", "samples", "instances", "strings", "sources", "annotations", "runs"}) {
    Stmt q(*db_, (std::string("DELETE FROM ") + t + " WHERE incident_id=?").c_str());
    q.bind(1, inc->id);
    q.run();
  }
  Stmt q(*db_, "DELETE FROM incidents WHERE id=?");
  q.bind(1, inc->id);
  q.run();
  tx.commit();
  return true;
}

}  // namespace spillway::library
