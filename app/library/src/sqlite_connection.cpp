// The embedded backend: one SQLite file in WAL mode.
#include <sqlite3.h>

#include <cstdio>

#include "connection.hpp"
#include "schema.hpp"

namespace spillway::library::detail {

namespace {

[[noreturn]] void sqliteFail(const Connection& c, sqlite3* db, const std::string& what) {
  const int code = db ? sqlite3_errcode(db) : SQLITE_ERROR;
  std::string msg = what;
  if (code == SQLITE_NOTADB)
    msg = "not a Spillway library: the file is not an SQLite database";
  else if (code == SQLITE_CORRUPT)
    msg = "the library is damaged (" + std::string(sqlite3_errmsg(db)) + ")";
  else if (db)
    msg.append(": ").append(sqlite3_errmsg(db));
  c.fail(msg);
}

class SqliteStatement final : public Statement {
 public:
  SqliteStatement(const Connection& c, sqlite3* db, std::string_view sql) : c_(c), db_(db) {
    if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &s_, nullptr) != SQLITE_OK)
      sqliteFail(c_, db_, "cannot prepare '" + std::string(sql) + "'");
  }
  ~SqliteStatement() override { sqlite3_finalize(s_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  void bind(int i, std::int64_t v) override { check(sqlite3_bind_int64(s_, i, v)); }
  void bind(int i, std::string_view v) override {
    check(sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  void bindBlob(int i, const void* p, std::size_t n) override {
    check(sqlite3_bind_blob64(s_, i, p, n, SQLITE_STATIC));
  }
  bool step() override {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    sqliteFail(c_, db_, "query failed");
  }
  void reset() override {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  std::int64_t i64(int c) const override { return sqlite3_column_int64(s_, c); }
  bool isNull(int c) const override { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  std::string_view bytes(int c) const override {
    const void* p = sqlite3_column_blob(s_, c);
    const auto n = static_cast<std::size_t>(sqlite3_column_bytes(s_, c));
    return p ? std::string_view(static_cast<const char*>(p), n) : std::string_view();
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) sqliteFail(c_, db_, "cannot bind a value");
  }
  const Connection& c_;
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
};

// `path` as an SQLite URI filename (https://sqlite.org/uri.html): '%', '?' and '#' escaped.
std::string uriOf(const std::string& path, const char* query) {
  std::string u = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      u += buf;
    } else {
      u += c;
    }
  }
  return u + "?" + query;
}

sqlite3* openWith(const std::string& name, int flags) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(name.c_str(), &db, flags, nullptr) == SQLITE_OK) return db;
  sqlite3_close(db);
  return nullptr;
}

// Read-only. A WAL library whose -shm cannot be created (a read-only directory) opens only as
// immutable: nobody can write it there, so nothing changes under the reader.
sqlite3* openReadOnly(const std::string& path) {
  if (sqlite3* db = openWith(uriOf(path, "mode=ro"), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI)) {
    const int rc =
        sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
    if (rc != SQLITE_CANTOPEN && rc != SQLITE_READONLY) return db;
    sqlite3_close(db);
  }
  return openWith(uriOf(path, "immutable=1"), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
}

class SqliteConnection final : public Connection {
 public:
  SqliteConnection(const std::string& path, sqlite3* db) : Connection(path), db_(db) {
    sqlite3_busy_timeout(db_, kWriteLockWaitMs);
    // No one value read from the file may take more than this (a damaged or hostile file could
    // claim a gigabyte blob); the largest Spillway writes is a block of 4096 calls.
    sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, 64 << 20);
  }
  ~SqliteConnection() override { sqlite3_close(db_); }

  bool isPostgres() const override { return false; }
  std::unique_ptr<Statement> prepare(std::string_view sql) override {
    return std::make_unique<SqliteStatement>(*this, db_, sql);
  }
  void exec(std::string_view sql) override {
    const std::string s(sql);
    if (sqlite3_exec(db_, s.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
      sqliteFail(*this, db_, "library query failed");
  }
  bool begin(int waitMs) override {
    sqlite3_busy_timeout(db_, waitMs);
    const int rc = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    sqlite3_busy_timeout(db_, kWriteLockWaitMs);
    if (rc == SQLITE_BUSY) return false;
    if (rc != SQLITE_OK) sqliteFail(*this, db_, "cannot start a transaction");
    return true;
  }
  void commit() override {
    if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
      sqliteFail(*this, db_, "cannot commit");
  }
  void rollback() noexcept override { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }

  SchemaState schemaState() override {
    SchemaState s;
    const std::int64_t appId = single("PRAGMA application_id");  // fails on a non-database
    const std::int64_t objects = single("SELECT count(*) FROM sqlite_master");
    s.version = static_cast<int>(single("PRAGMA user_version"));
    s.empty = objects == 0 && appId == 0 && s.version == 0;
    s.ours = appId == kApplicationId;
    return s;
  }
  void markOurs() override { exec("PRAGMA application_id=" + std::to_string(kApplicationId)); }
  void setVersion(int version) override { exec("PRAGMA user_version=" + std::to_string(version)); }
  std::string dialect(const char* script) const override { return script; }
  // WAL + NORMAL: durable at checkpoints, never corrupt. Checkpoints cannot pass a long-lived
  // reader (a replay from this library), so the WAL grows meanwhile; the size limit truncates
  // it back once a checkpoint completes instead of keeping its peak.
  void tuneForWrites() override {
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=NORMAL");
    exec("PRAGMA journal_size_limit=67108864");
  }
  std::string integrityProblem() override {
    try {
      Stmt q(*this, "PRAGMA quick_check(1)");
      if (q.step() && q.text(0) != "ok") return std::string(q.text(0));
    } catch (const InputError& e) {
      return e.detail();
    }
    return {};
  }
  sqlite3* handle() const { return db_; }

 private:
  std::int64_t single(const char* sql) {
    Stmt q(*this, sql);
    return q.step() ? q.i64(0) : 0;
  }
  sqlite3* db_;
};

}  // namespace

std::unique_ptr<Connection> openSqlite(const std::string& path, SqliteOpen how) {
  sqlite3* db = how.readOnly
                    ? openReadOnly(path)
                    : openWith(path, SQLITE_OPEN_READWRITE | (how.create ? SQLITE_OPEN_CREATE : 0));
  if (!db) throw InputError(path, 0, "", "cannot open the library");
  return std::make_unique<SqliteConnection>(path, db);
}

sqlite3* sqliteHandle(Connection& c) {
  if (c.isPostgres()) return nullptr;
  return static_cast<SqliteConnection&>(c).handle();
}

}  // namespace spillway::library::detail
