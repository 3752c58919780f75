#pragma once
// Annotation rows, the same for an incident (table `annotations`, owner column `incident_id`)
// and a recording (`rec_annotations`, `recording_id`): checked, inserted, read in time order.
#include <string>
#include <vector>

#include "connection.hpp"
#include "spillway/input_error.hpp"
#include "spillway/library/library.hpp"

namespace spillway::library::detail {

inline void insertAnnotation(Connection& db, const std::string& table, const std::string& owner,
                             std::int64_t id, const Annotation& a) {
  if (a.instance.empty()) throw InputError(db.name(), 0, "instance", "must not be empty");
  if (a.end < a.start) throw InputError(db.name(), 0, "to", "is before --from");
  if (a.origin != "simulator" && a.origin != "operator")
    throw InputError(db.name(), 0, "origin", "expected simulator or operator");
  const std::string sql = "INSERT INTO " + table + "(" + owner +
                          ", instance, t1, t2, kind, origin) VALUES(?,?,?,?,?,?)";
  Stmt q(db, sql.c_str());
  q.bind(1, id).bind(2, a.instance).bind(3, a.start).bind(4, a.end).bind(5, a.kind);
  q.bind(6, a.origin);
  q.run();
}

inline std::vector<Annotation> selectAnnotations(Connection& db, const std::string& table,
                                                 const std::string& owner, std::int64_t id) {
  const std::string sql = "SELECT instance, t1, t2, kind, origin FROM " + table + " WHERE " +
                          owner + "=? ORDER BY t1, id";
  Stmt q(db, sql.c_str());
  q.bind(1, id);
  std::vector<Annotation> out;
  while (q.step())
    out.push_back({std::string(q.text(0)), q.i64(1), q.i64(2), std::string(q.text(3)),
                   std::string(q.text(4))});
  return out;
}

}  // namespace spillway::library::detail
