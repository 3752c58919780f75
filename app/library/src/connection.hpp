#pragma once
// Private: what the library needs of a database, so that one set of statements runs on SQLite
// (the embedded default, a file) and on PostgreSQL (a team library, a postgresql:// URL).
// Statements are written once in the SQL both understand (`?` parameters, ON CONFLICT upserts,
// RETURNING); a connection translates what differs (parameters, column types of the schema).
#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>

#include "spillway/input_error.hpp"

struct sqlite3;

namespace spillway::library::detail {

// The creation stamp of incidents, runs and recordings (metadata only: no data time comes
// from the clock).
inline std::string nowUtc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// One prepared statement of a backend. Parameters count from 1, columns from 0.
class Statement {
 public:
  virtual ~Statement() = default;
  virtual void bind(int i, std::int64_t v) = 0;
  virtual void bind(int i, std::string_view v) = 0;
  // The bytes must stay valid until the statement is reset.
  virtual void bindBlob(int i, const void* p, std::size_t n) = 0;
  virtual bool step() = 0;  // true while there is a row
  virtual void reset() = 0;
  virtual std::int64_t i64(int c) const = 0;
  virtual bool isNull(int c) const = 0;
  virtual std::string_view bytes(int c) const = 0;  // text or blob, as stored
};

// What a library's schema bookkeeping holds: SQLite keeps it in PRAGMAs, PostgreSQL in a
// table of its own.
struct SchemaState {
  bool empty = false;  // no object at all: a new library
  bool ours = false;   // marked as a Spillway library
  int version = 0;
};

class Connection {
 public:
  explicit Connection(std::string name) : name_(std::move(name)) {}
  virtual ~Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The library's name in messages: a file path, or the URL without credentials.
  const std::string& name() const { return name_; }
  virtual bool isPostgres() const = 0;

  virtual std::unique_ptr<Statement> prepare(std::string_view sql) = 0;
  // Runs statements that return nothing (several, separated by ';').
  virtual void exec(std::string_view sql) = 0;
  // Starts a write transaction holding the library's one write lock (SQLite: BEGIN IMMEDIATE;
  // PostgreSQL: a transaction-scoped advisory lock), waiting up to waitMs for it. False when
  // another writer held it that long.
  virtual bool begin(int waitMs) = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;

  virtual SchemaState schemaState() = 0;
  // Inside the creating transaction: marks the database as a Spillway library.
  virtual void markOurs() = 0;
  virtual void setVersion(int version) = 0;
  // A migration script (written for SQLite) in this backend's dialect.
  virtual std::string dialect(const char* script) const = 0;
  // Before the first write of a session (SQLite: WAL journal, NORMAL sync).
  virtual void tuneForWrites() {}
  // The first problem an integrity scan finds, "" when none (or when the server keeps its own).
  virtual std::string integrityProblem() = 0;

  [[noreturn]] void fail(const std::string& what) const { throw InputError(name_, 0, "", what); }

 private:
  std::string name_;
};

// A statement that binds in a chain and reads by column.
class Stmt {
 public:
  Stmt(Connection& c, std::string_view sql) : s_(c.prepare(sql)) {}
  Stmt& bind(int i, std::int64_t v) {
    s_->bind(i, v);
    return *this;
  }
  Stmt& bind(int i, std::string_view v) {
    s_->bind(i, v);
    return *this;
  }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bindBlob(int i, const void* p, std::size_t n) {
    s_->bindBlob(i, p, n);
    return *this;
  }
  bool step() { return s_->step(); }
  void run() {
    step();
    reset();
  }
  void reset() { s_->reset(); }
  // The id an INSERT … RETURNING id made.
  std::int64_t returnedId() {
    const std::int64_t id = step() ? i64(0) : 0;
    reset();
    return id;
  }
  std::int64_t i64(int c) const { return s_->i64(c); }
  bool isNull(int c) const { return s_->isNull(c); }
  std::string_view text(int c) const { return s_->bytes(c); }
  const unsigned char* blob(int c, std::size_t& n) const {
    const std::string_view b = s_->bytes(c);
    n = b.size();
    return reinterpret_cast<const unsigned char*>(b.data());
  }

 private:
  std::unique_ptr<Statement> s_;
};

// The connection's default wait for the write lock.
inline constexpr int kWriteLockWaitMs = 10000;

// A write transaction that rolls back unless committed: an exception (or a crash) midway leaves
// the library as it was. It takes the write lock up front, so it never fails halfway for want
// of it.
class Tx {
 public:
  explicit Tx(Connection& c, int waitMs = kWriteLockWaitMs) : c_(c) {
    if (!c_.begin(waitMs))
      c_.fail("another writer held the library for " + std::to_string(waitMs / 1000) +
              " s (an import or a cut?); try again");
  }
  ~Tx() {
    if (!done_) c_.rollback();
  }
  Tx(const Tx&) = delete;
  Tx& operator=(const Tx&) = delete;
  void commit() {
    c_.commit();
    done_ = true;
  }

 private:
  Connection& c_;
  bool done_ = false;
};

// The backends. `location` is a file path, or a postgresql:// (postgres://) URL.
bool isPostgresUrl(std::string_view location);
struct SqliteOpen {
  bool readOnly = false, create = false;
};
std::unique_ptr<Connection> openSqlite(const std::string& path, SqliteOpen how);
std::unique_ptr<Connection> openPostgres(const std::string& url);
// The SQLite handle of an SQLite connection (tests and tools), null for PostgreSQL.
::sqlite3* sqliteHandle(Connection& c);

}  // namespace spillway::library::detail
