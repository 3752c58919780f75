// The team backend: a PostgreSQL database named by a postgresql:// URL, through libpq.
// Credentials come from libpq's own sources (PGPASSWORD, ~/.pgpass or PGPASSFILE, a service
// file); a URL that carries a password is refused so that none lands in shell history or a
// process list. TLS and the other connection options pass through the URL untouched.
#include <libpq-fe.h>

#include <cstring>
#include <regex>

#include "connection.hpp"
#include "schema.hpp"

namespace spillway::library::detail {

namespace {

constexpr Oid kBool = 16, kBytea = 17, kInt8 = 20, kInt2 = 21, kInt4 = 23;
constexpr const char* kLockTimeout = "55P03";  // SQLSTATE lock_not_available

std::string trimmed(const char* msg) {
  std::string s = msg ? msg : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// `?` placeholders outside quoted text become $1, $2, …
std::string numberedParameters(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int n = 0;
  char quote = 0;
  for (char c : sql) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?') {
      out += '$' + std::to_string(++n);
      continue;
    }
    out += c;
  }
  return out;
}

// The result of one statement, freed with it.
struct Result {
  PGresult* r = nullptr;
  Result() = default;
  explicit Result(PGresult* p) : r(p) {}
  ~Result() { PQclear(r); }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  Result& operator=(Result&& o) noexcept {
    std::swap(r, o.r);
    return *this;
  }
  bool ok() const {
    const auto s = PQresultStatus(r);
    return s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK;
  }
  std::string error() const { return trimmed(PQresultErrorMessage(r)); }
  std::string_view sqlState() const {
    const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    return s ? s : "";
  }
};

std::uint64_t bigEndian(const char* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

class PgStatement final : public Statement {
 public:
  PgStatement(const Connection& c, PGconn* pg, std::string_view sql)
      : c_(c), pg_(pg), sql_(numberedParameters(sql)) {}

  void bind(int i, std::int64_t v) override {
    Param& p = param(i, kInt8);
    p.own.resize(8);
    for (int k = 0; k < 8; ++k)
      p.own[static_cast<std::size_t>(k)] =
          static_cast<char>(static_cast<std::uint64_t>(v) >> (56 - 8 * k));
    p.owned = true;
  }
  // Every text column is bytea on PostgreSQL (schema.hpp): bytes go in and come out as read.
  void bind(int i, std::string_view v) override {
    Param& p = param(i, kBytea);
    p.own.assign(v);
    p.owned = true;
  }
  void bindBlob(int i, const void* data, std::size_t n) override {
    Param& p = param(i, kBytea);
    p.data = static_cast<const char*>(data);
    p.size = n;
    p.owned = false;
  }
  bool step() override {
    if (!res_.r) {
      run();
      row_ = 0;
    } else if (row_ < rows_) {
      ++row_;
    }
    return row_ < rows_;
  }
  void reset() override {
    res_ = Result();
    params_.clear();
    row_ = rows_ = 0;
  }
  std::int64_t i64(int c) const override {
    if (PQgetisnull(res_.r, row_, c)) return 0;
    const char* v = PQgetvalue(res_.r, row_, c);
    switch (PQftype(res_.r, c)) {
      case kInt8:
        return static_cast<std::int64_t>(bigEndian(v, 8));
      case kInt4:
        return static_cast<std::int32_t>(bigEndian(v, 4));
      case kInt2:
        return static_cast<std::int16_t>(bigEndian(v, 2));
      case kBool:
        return v[0] != 0;
      default:
        c_.fail("column " + std::to_string(c) + " of '" + sql_ + "' is not an integer");
    }
  }
  bool isNull(int c) const override { return PQgetisnull(res_.r, row_, c) != 0; }
  std::string_view bytes(int c) const override {
    return {PQgetvalue(res_.r, row_, c), static_cast<std::size_t>(PQgetlength(res_.r, row_, c))};
  }

 private:
  // A value is copied (own) or borrowed (data, size: a blob the caller keeps); pointers into
  // `own` are taken only at execution, after params_ stopped growing.
  struct Param {
    Oid type = 0;
    bool owned = false;
    std::string own;
    const char* data = nullptr;
    std::size_t size = 0;
  };
  Param& param(int i, Oid type) {
    if (static_cast<std::size_t>(i) > params_.size()) params_.resize(static_cast<std::size_t>(i));
    Param& p = params_[static_cast<std::size_t>(i - 1)];
    p.type = type;
    return p;
  }
  void run() {
    const int n = static_cast<int>(params_.size());
    std::vector<Oid> types(params_.size());
    std::vector<const char*> values(params_.size());
    std::vector<int> lengths(params_.size()), formats(params_.size(), 1);
    for (std::size_t k = 0; k < params_.size(); ++k) {
      const Param& p = params_[k];
      types[k] = p.type;
      values[k] = p.owned ? p.own.data() : p.data ? p.data : "";
      lengths[k] = static_cast<int>(p.owned ? p.own.size() : p.size);
    }
    res_ = Result(PQexecParams(pg_, sql_.c_str(), n, types.data(), values.data(), lengths.data(),
                               formats.data(), 1));
    if (!res_.ok()) c_.fail("query failed: " + res_.error());
    rows_ = PQntuples(res_.r);
  }

  const Connection& c_;
  PGconn* pg_;
  std::string sql_;
  std::vector<Param> params_;
  Result res_;
  int row_ = 0, rows_ = 0;
};

// Two spellings of the SQLite scripts differ on PostgreSQL: 64-bit integers and identity keys;
// bytea for text (the exact bytes imported, ordered bytewise as SQLite's BINARY collation) and
// blobs; no WITHOUT ROWID.
std::string postgresDialect(const char* script) {
  std::string s = script;
  s = std::regex_replace(s, std::regex(R"(\bINTEGER PRIMARY KEY\b)"),
                         "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY");
  s = std::regex_replace(s, std::regex(R"(\bINTEGER\b)"), "BIGINT");
  s = std::regex_replace(s, std::regex(R"(\b(TEXT|BLOB)\b)"), "BYTEA");
  return std::regex_replace(s, std::regex(R"(\)\s*WITHOUT ROWID)"), ")");
}

class PgConnection final : public Connection {
 public:
  PgConnection(std::string name, PGconn* pg) : Connection(std::move(name)), pg_(pg) {
    PQsetNoticeProcessor(
        pg_, [](void*, const char*) {}, nullptr);
  }
  ~PgConnection() override { PQfinish(pg_); }

  bool isPostgres() const override { return true; }
  std::unique_ptr<Statement> prepare(std::string_view sql) override {
    return std::make_unique<PgStatement>(*this, pg_, sql);
  }
  void exec(std::string_view sql) override {
    Result r(PQexec(pg_, std::string(sql).c_str()));
    if (!r.ok()) fail("library query failed: " + r.error());
  }
  bool begin(int waitMs) override {
    exec("BEGIN");
    const std::string key = std::to_string(kApplicationId);
    if (waitMs <= 0) {
      Stmt q(*this, "SELECT pg_try_advisory_xact_lock(" + key + ")");
      if (q.step() && q.i64(0)) return true;
      rollback();
      return false;
    }
    exec("SET LOCAL lock_timeout = " + std::to_string(waitMs));
    Result r(PQexec(pg_, ("SELECT pg_advisory_xact_lock(" + key + ")").c_str()));
    if (r.ok()) return true;
    rollback();
    if (r.sqlState() == kLockTimeout) return false;
    fail("cannot start a transaction: " + r.error());
  }
  void commit() override {
    Result r(PQexec(pg_, "COMMIT"));
    if (!r.ok()) fail("cannot commit: " + r.error());
    // COMMIT of a transaction that failed midway answers ROLLBACK, not an error.
    if (std::strcmp(PQcmdStatus(r.r), "COMMIT") != 0)
      fail("cannot commit: the transaction was rolled back");
  }
  void rollback() noexcept override { PQclear(PQexec(pg_, "ROLLBACK")); }

  SchemaState schemaState() override {
    SchemaState s;
    s.empty = single(
                  "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = "
                  "current_schema()") == 0;
    if (!single("SELECT to_regclass('spillway_meta') IS NOT NULL")) return s;
    s.ours =
        single("SELECT value FROM spillway_meta WHERE key = 'application_id'") == kApplicationId;
    s.version =
        static_cast<int>(single("SELECT value FROM spillway_meta WHERE key = 'schema_version'"));
    return s;
  }
  void markOurs() override {
    exec(
        "CREATE TABLE spillway_meta(key TEXT PRIMARY KEY, value BIGINT NOT NULL);"
        "INSERT INTO spillway_meta VALUES('application_id', " +
        std::to_string(kApplicationId) + "), ('schema_version', 0)");
  }
  void setVersion(int version) override {
    exec("UPDATE spillway_meta SET value = " + std::to_string(version) +
         " WHERE key = 'schema_version'");
  }
  std::string dialect(const char* script) const override { return postgresDialect(script); }
  std::string integrityProblem() override { return {}; }  // the server keeps its own pages

 private:
  std::int64_t single(const std::string& sql) {
    Stmt q(*this, sql);
    return q.step() ? q.i64(0) : 0;
  }
  PGconn* pg_;
};

// The URL as messages show it: a password, should one be there, replaced.
std::string redacted(const std::string& url) {
  static const std::regex kPassword(R"(^([a-z]+://[^:@/]*):[^@/]*@)");
  return std::regex_replace(url, kPassword, "$1:***@");
}

}  // namespace

bool isPostgresUrl(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

std::unique_ptr<Connection> openPostgres(const std::string& url) {
  const std::string name = redacted(url);
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (!opts) {
    const std::string why = trimmed(err);
    PQfreemem(err);
    throw InputError(name, 0, "library", "not a PostgreSQL URL: " + why);
  }
  bool password = false;
  for (const PQconninfoOption* o = opts; o->keyword; ++o)
    if (std::strcmp(o->keyword, "password") == 0 && o->val && *o->val) password = true;
  PQconninfoFree(opts);
  if (password)
    throw InputError(name, 0, "library",
                     "the URL carries a password: put it in ~/.pgpass (or PGPASSFILE, a service "
                     "file, PGPASSWORD), never on a command line");
  // Defaults first, the URL after: what the URL says wins. A server that never answers must
  // not hang a command: connect_timeout unless the URL sets one.
  const char* keys[] = {"connect_timeout", "application_name", "dbname", nullptr};
  const char* values[] = {"10", "spillway", url.c_str(), nullptr};
  PGconn* pg = PQconnectdbParams(keys, values, 1);
  if (!pg) throw InputError(name, 0, "", "cannot connect: out of memory");
  if (PQstatus(pg) != CONNECTION_OK) {
    const std::string why = trimmed(PQerrorMessage(pg));
    PQfinish(pg);
    throw InputError(name, 0, "", "cannot connect: " + why);
  }
  return std::make_unique<PgConnection>(name, pg);
}

}  // namespace spillway::library::detail
