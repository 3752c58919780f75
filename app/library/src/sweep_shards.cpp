// Sweep shard rows in the library: the batch tasks of one sweep write here (a team library on
// PostgreSQL, docs/scale-out.md) and `sweep merge --library --sweep KEY` reads them back.
#include "connection.hpp"
#include "spillway/library/library.hpp"

namespace spillway::library {

using detail::Stmt;
using detail::Tx;

void Library::saveSweepShard(std::string_view sweep, std::uint32_t shard, std::uint32_t shards,
                             std::string_view rows) {
  requireWritable("save sweep rows");
  Tx tx(*db_);
  Stmt q(*db_,
         "INSERT INTO sweep_shards(sweep, shard, shards, data, created) VALUES(?,?,?,?,?) "
         "ON CONFLICT(sweep, shard) DO UPDATE SET shards=excluded.shards, data=excluded.data, "
         "created=excluded.created");
  q.bind(1, sweep).bind(2, static_cast<std::int64_t>(shard));
  q.bind(3, static_cast<std::int64_t>(shards)).bind(4, rows).bind(5, detail::nowUtc());
  q.run();
  tx.commit();
}

std::vector<SweepShardRows> Library::sweepShards(std::string_view sweep) {
  std::vector<SweepShardRows> out;
  if (schemaVersion() < 5) return out;  // opened read-only at an older schema
  Stmt q(*db_,
         "SELECT shard, shards, data, created FROM sweep_shards WHERE sweep=? ORDER BY shard");
  q.bind(1, sweep);
  while (q.step())
    out.push_back({static_cast<std::uint32_t>(q.i64(0)), static_cast<std::uint32_t>(q.i64(1)),
                   std::string(q.text(2)), std::string(q.text(3))});
  return out;
}

}  // namespace spillway::library
