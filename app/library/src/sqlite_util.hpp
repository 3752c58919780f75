#pragma once
// Private: a prepared statement that finalizes itself and turns SQLite errors into InputError
// naming the library file.
#include <sqlite3.h>

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

#include "spillway/input_error.hpp"

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

[[noreturn]] inline void sqliteFail(const std::string& path, sqlite3* db, const std::string& what) {
  const int code = db ? sqlite3_errcode(db) : SQLITE_ERROR;
  std::string msg = what;
  if (code == SQLITE_NOTADB)
    msg = "not a Spillway library: the file is not an SQLite database";
  else if (code == SQLITE_CORRUPT)
    msg = "the library is damaged (" + std::string(sqlite3_errmsg(db)) + ")";
  else if (db)
    msg.append(": ").append(sqlite3_errmsg(db));
  throw InputError(path, 0, "", msg);
}

class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& path, const char* sql) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK)
      sqliteFail(path_, db_, std::string("cannot prepare '") + sql + "'");
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, std::int64_t v) {
    check(sqlite3_bind_int64(s_, i, v));
    return *this;
  }
  Stmt& bind(int i, std::string_view v) {
    check(sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bindBlob(int i, const void* p, std::size_t n) {
    check(sqlite3_bind_blob64(s_, i, p, n, SQLITE_STATIC));  // bytes outlive step()
    return *this;
  }
  // True while there is a row; false when done. Throws on errors.
  bool step() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    sqliteFail(path_, db_, "query failed");
  }
  void run() {
    step();
    reset();
  }
  void reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  std::int64_t i64(int c) const { return sqlite3_column_int64(s_, c); }
  bool isNull(int c) const { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  std::string_view text(int c) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, c));
    return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(s_, c)))
             : std::string_view();
  }
  const unsigned char* blob(int c, std::size_t& n) const {
    const void* p = sqlite3_column_blob(s_, c);
    n = static_cast<std::size_t>(sqlite3_column_bytes(s_, c));
    return static_cast<const unsigned char*>(p);
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) sqliteFail(path_, db_, "cannot bind a value");
  }
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* s_ = nullptr;
};

// A transaction that rolls back unless committed: an exception (or a crash) midway leaves the
// library as it was. BEGIN IMMEDIATE takes the write lock up front, so a transaction never
// fails halfway for want of it.
class Tx {
 public:
  Tx(sqlite3* db, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK)
      sqliteFail(path_, db_, "cannot start a transaction");
  }
  ~Tx() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Tx(const Tx&) = delete;
  Tx& operator=(const Tx&) = delete;
  void commit() {
    if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
      sqliteFail(path_, db_, "cannot commit");
    done_ = true;
  }

 private:
  sqlite3* db_;
  const std::string& path_;
  bool done_ = false;
};

}  // namespace spillway::library::detail
