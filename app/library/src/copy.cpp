// copyIncidents: the rows of an incident, table by table, with the incident's id remapped.
// Rows are read in pages of their own key so that neither backend holds a large incident at
// once (a PostgreSQL result is whole in memory).
#include "spillway/library/copy.hpp"

#include "connection.hpp"

namespace spillway::library {

using detail::Connection;
using detail::Stmt;
using detail::Tx;

namespace {

// One per-incident table: its columns after incident_id, their kinds ('i' integer, 't' text,
// 'b' blob), and the column that orders and pages it.
struct TableCopy {
  const char* table;
  const char* columns;
  const char* kinds;
  const char* key;
  const char* conflict;  // appended to the INSERT
};

constexpr TableCopy kTables[] = {
    {"instances", "idx, name, model, records, t_start, t_end", "ittiii", "idx", ""},
    {"strings", "idx, text", "it", "idx", ""},
    {"blocks", "seq, n, t_min, t_max, data", "iiiib", "seq", ""},
    {"samples", "seq, instance_idx, t_end, step, calls, failures, slow", "iiiiiii", "seq", ""},
    // The same content may sit in another incident of the target: that import stands.
    {"sources", "hash, path, format, records, skipped, imported", "tttiit", "hash",
     " ON CONFLICT DO NOTHING"},
    {"annotations", "instance, t1, t2, kind, origin", "tiitt", "id", ""},
    {"runs", "policy_yaml, kpis_json, transitions_json, created", "tttt", "id", ""},
};

constexpr std::int64_t kPage = 256;

std::string placeholders(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i <= n; ++i) s += i ? ",?" : "?";
  return s;
}

// Copies one table's rows of incident `fromId` to incident `toId`, a page at a time. The key
// is selected last (text keys page by text, integer keys by value).
void copyTable(Connection& from, Connection& to, const TableCopy& t, std::int64_t fromId,
               std::int64_t toId) {
  const std::string cols = t.columns;
  const std::size_t n = std::string_view(t.kinds).size();
  const bool textKey = std::string_view(t.key) == "hash";
  Stmt read(from, "SELECT " + cols + ", " + t.key + " FROM " + t.table +
                      " WHERE incident_id=? AND " + t.key + ">? ORDER BY " + t.key + " LIMIT ?");
  Stmt write(to, "INSERT INTO " + std::string(t.table) + "(incident_id, " + cols + ") VALUES(" +
                     placeholders(n) + ")" + t.conflict);
  std::int64_t lastInt = -1;
  std::string lastText;
  for (;;) {
    read.reset();
    read.bind(1, fromId);
    if (textKey)
      read.bind(2, lastText);
    else
      read.bind(2, lastInt);
    read.bind(3, kPage);
    std::int64_t rows = 0;
    while (read.step()) {
      ++rows;
      write.bind(1, toId);
      for (std::size_t c = 0; c < n; ++c) {
        const int col = static_cast<int>(c), param = static_cast<int>(c) + 2;
        if (t.kinds[c] == 'i') {
          write.bind(param, read.i64(col));
        } else if (t.kinds[c] == 't') {
          write.bind(param, read.text(col));
        } else {
          std::size_t len = 0;
          const unsigned char* p = read.blob(col, len);
          write.bindBlob(param, p, len);
        }
      }
      write.run();
      if (textKey)
        lastText = read.text(static_cast<int>(n));
      else
        lastInt = read.i64(static_cast<int>(n));
    }
    if (rows < kPage) return;
  }
}

// Why incident `name` does not read whole (every call or sample, as export reads it); empty
// when it does.
std::string damageOf(Library& lib, const std::string& name) {
  try {
    const auto src = lib.open(name);
    if (src->aggregates()) {
      formats::AggregateSample s;
      while (src->nextAggregate(s)) {
      }
    } else {
      CallRecord r;
      while (src->next(r)) {
      }
    }
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

// False when the target gained the incident (another copy) since the caller looked.
bool copyOne(Library& from, Library& to, const IncidentInfo& inc) {
  Connection& src = from.connection();
  Connection& dst = to.connection();
  Tx tx(dst);
  if (to.incident(inc.name)) return false;
  Stmt ins(dst,
           "INSERT INTO incidents(name, kind, source, t_start, t_end, records, tags, notes, "
           "created) VALUES(?,?,?,?,?,?,?,?,?) RETURNING id");
  ins.bind(1, inc.name).bind(2, inc.kind).bind(3, inc.source).bind(4, inc.tStart);
  ins.bind(5, inc.tEnd).bind(6, static_cast<std::int64_t>(inc.records)).bind(7, inc.tags);
  ins.bind(8, inc.notes).bind(9, inc.created);
  const std::int64_t id = ins.returnedId();
  for (const TableCopy& t : kTables) copyTable(src, dst, t, inc.id, id);
  tx.commit();
  return true;
}

}  // namespace

CopyResult copyIncidents(Library& from, Library& to, const std::vector<std::string>& names) {
  std::vector<IncidentInfo> todo;
  if (names.empty()) {
    todo = from.incidents();
  } else {
    for (const std::string& n : names) todo.push_back(from.requireIncident(n));
  }
  to.requireWritable("copy incidents");
  CopyResult r;
  for (const IncidentInfo& inc : todo) {
    if (to.incident(inc.name)) {
      r.present.push_back(inc.name);
      continue;
    }
    if (std::string why = damageOf(from, inc.name); !why.empty()) {
      r.damaged.emplace_back(inc.name, std::move(why));
      continue;
    }
    (copyOne(from, to, inc) ? r.copied : r.present).push_back(inc.name);
  }
  return r;
}

}  // namespace spillway::library
