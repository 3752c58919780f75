// LiveRecorder: buffer, commit in blocks, enforce retention a little at each commit.
#include "spillway/library/live_recorder.hpp"

#include <algorithm>

#include "connection.hpp"
#include "recording_store.hpp"

namespace spillway::library {

using detail::Connection;
using detail::Stmt;

namespace {

void checkOptions(const std::string& path, const RecorderOptions& o) {
  auto bad = [&](const char* field, const char* what) { throw InputError(path, 0, field, what); };
  if (o.retention.maxAge < 0) bad("retention.max_age", "must not be negative");
  if (o.commitEvery <= 0) bad("commit_every", "must be positive");
  if (o.commitRecords == 0) bad("commit_records", "must be positive");
  if (o.maxPendingRecords < o.commitRecords)
    bad("max_pending_records", "must be at least commit_records");
  if (o.busyWaitMs < 0 || o.stallTimeoutMs < 0) bad("busy_wait", "must not be negative");
}

std::string waited(int ms) {
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

}  // namespace

LiveRecorder::LiveRecorder(const std::string& libraryPath, std::string_view recording,
                           RecorderOptions opt)
    : opt_(opt), name_(recording), lib_(libraryPath) {
  if (name_.empty()) throw InputError(lib_.path(), 0, "recording", "needs a name");
  checkOptions(lib_.path(), opt_);
  lib_.requireWritable("record");
  Connection& db = lib_.connection();
  detail::Tx tx(db);
  ensureRow();
  Stmt up(db, "UPDATE recordings SET max_age=?, max_records=?, max_bytes=? WHERE name=?");
  up.bind(1, opt_.retention.maxAge)
      .bind(2, static_cast<std::int64_t>(opt_.retention.maxRecords))
      .bind(3, static_cast<std::int64_t>(opt_.retention.maxBytes))
      .bind(4, name_);
  up.run();
  tx.commit();
}

LiveRecorder::~LiveRecorder() {
  try {
    commit(opt_.stallTimeoutMs);
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; close() reports
  }
}

std::int64_t LiveRecorder::ensureRow() {
  Connection& db = lib_.connection();
  {
    Stmt q(db, "SELECT id FROM recordings WHERE name=?");
    q.bind(1, name_);
    if (q.step()) return q.i64(0);
  }
  // Missing: new, or deleted by `library delete --recording` while this recorder ran; the live
  // feed goes on into a fresh recording of the same name.
  Stmt ins(db,
           "INSERT INTO recordings(name, max_age, max_records, max_bytes, created) "
           "VALUES(?,?,?,?,?) RETURNING id");
  ins.bind(1, name_).bind(2, opt_.retention.maxAge);
  ins.bind(3, static_cast<std::int64_t>(opt_.retention.maxRecords));
  ins.bind(4, static_cast<std::int64_t>(opt_.retention.maxBytes)).bind(5, detail::nowUtc());
  return ins.returnedId();
}

void LiveRecorder::seal(RecordingBlockBuilder& b) {
  if (b.size() == 0) return;
  Pending p{b.kind(), static_cast<std::uint32_t>(b.size()), b.tMin(), b.tMax(), {}};
  b.encodeTo(p.data);
  pending_.push_back(std::move(p));
}

void LiveRecorder::noted(Micros t) {
  ++buffered_;
  ++sinceAttempt_;
  stats_.pending = buffered_;
  if (!timed_) {
    firstTime_ = lastTime_ = t;
    timed_ = true;
  } else {
    lastTime_ = std::max(lastTime_, t);
  }
  // Over the cap, every record waits for the lock (backpressure) instead of growing the buffer
  // without bound; under it, a busy library costs one short wait per commit interval.
  if (buffered_ < opt_.maxPendingRecords) {
    if (sinceAttempt_ >= opt_.commitRecords || lastTime_ - firstTime_ >= opt_.commitEvery)
      commit(opt_.busyWaitMs);
    return;
  }
  if (!commit(opt_.stallTimeoutMs))
    throw InputError(lib_.path(), 0, "recording",
                     "'" + name_ + "': the library stayed busy for " + waited(opt_.stallTimeoutMs) +
                         " with " + std::to_string(buffered_) +
                         " records buffered (a long cut or import?); nothing was dropped");
}

void LiveRecorder::append(const CallRecord& call) {
  calls_.add(call);
  ++stats_.calls;
  if (calls_.full()) seal(calls_);
  noted(call.ts);
}

void LiveRecorder::append(const formats::AggregateSample& sample) {
  samples_.add(sample);
  ++stats_.samples;
  if (samples_.full()) seal(samples_);
  noted(sample.end);
}

bool LiveRecorder::flush(int waitMs) {
  return commit(waitMs < 0 ? opt_.busyWaitMs : waitMs);
}

void LiveRecorder::close() {
  if (!commit(opt_.stallTimeoutMs))
    throw InputError(lib_.path(), 0, "recording",
                     "'" + name_ + "': the library stayed busy for " + waited(opt_.stallTimeoutMs) +
                         "; " + std::to_string(buffered_) +
                         " records could not be committed (they stay buffered)");
}

bool LiveRecorder::commit(int waitMs) {
  // Whatever happens below, the next commit point is a full interval away: a busy library is
  // retried once per interval, not at every append.
  sinceAttempt_ = 0;
  timed_ = false;
  if (buffered_ == 0) return true;
  Connection& db = lib_.connection();
  if (!db.begin(waitMs)) {
    ++stats_.busy;
    return false;
  }
  std::uint64_t records = 0;
  Dropped dropped;
  try {
    // Partial blocks are sealed only now that the lock is ours: a busy period does not cut
    // the buffer into small blocks.
    seal(calls_);
    seal(samples_);
    const std::int64_t recId = ensureRow();
    RecordingInfo t;
    std::int64_t seq = totals(recId, t);
    const std::int64_t firstSeq = seq;
    Stmt ins(db,
             "INSERT INTO rec_blocks(recording_id, seq, kind, n, t_min, t_max, data) "
             "VALUES(?,?,?,?,?,?,?)");
    for (const Pending& p : pending_) {
      ins.bind(1, recId).bind(2, seq++).bind(3, static_cast<std::int64_t>(p.kind));
      ins.bind(4, static_cast<std::int64_t>(p.n)).bind(5, p.tMin).bind(6, p.tMax);
      ins.bindBlob(7, p.data.data(), p.data.size());
      ins.run();
      (p.kind == RecordKind::Calls ? t.calls : t.samples) += p.n;
      t.tStart = t.blocks == 0 ? p.tMin : std::min(t.tStart, p.tMin);
      t.tEnd = t.blocks == 0 ? p.tMax : std::max(t.tEnd, p.tMax);
      ++t.blocks;
      t.bytes += p.data.size();
      records += p.n;
    }
    const std::size_t budget = std::max(opt_.dropBudget, 2 * pending_.size());
    dropped = dropExpired(recId, firstSeq, budget, t);
    Stmt up(db,
            "UPDATE recordings SET next_seq=?, calls=?, samples=?, blocks=?, bytes=?, t_start=?, "
            "t_end=?, recorded=recorded+?, dropped=dropped+? WHERE id=?");
    up.bind(1, seq).bind(2, static_cast<std::int64_t>(t.calls));
    up.bind(3, static_cast<std::int64_t>(t.samples)).bind(4, static_cast<std::int64_t>(t.blocks));
    up.bind(5, static_cast<std::int64_t>(t.bytes)).bind(6, t.tStart).bind(7, t.tEnd);
    up.bind(8, static_cast<std::int64_t>(records));
    up.bind(9, static_cast<std::int64_t>(dropped.records));
    up.bind(10, recId);
    up.run();
    db.commit();
  } catch (...) {
    // Nothing was committed: the buffer (now sealed blocks) is kept for the next attempt.
    db.rollback();
    throw;
  }
  stats_.droppedBlocks += dropped.blocks;
  stats_.droppedRecords += dropped.records;
  pending_.clear();
  buffered_ = 0;
  stats_.pending = 0;
  stats_.committed += records;
  ++stats_.commits;
  return true;
}

std::int64_t LiveRecorder::totals(std::int64_t recId, RecordingInfo& t) {
  Stmt q(lib_.connection(),
         "SELECT next_seq, calls, samples, blocks, bytes, t_start, t_end FROM recordings "
         "WHERE id=?");
  q.bind(1, recId);
  if (!q.step()) throw InputError(lib_.path(), 0, "recording", "'" + name_ + "' vanished");
  t.calls = static_cast<std::uint64_t>(q.i64(1));
  t.samples = static_cast<std::uint64_t>(q.i64(2));
  t.blocks = static_cast<std::uint64_t>(q.i64(3));
  t.bytes = static_cast<std::uint64_t>(q.i64(4));
  t.tStart = q.i64(5);
  t.tEnd = q.i64(6);
  return q.i64(0);
}

LiveRecorder::Dropped LiveRecorder::dropExpired(std::int64_t recId, std::int64_t keepFromSeq,
                                                std::size_t budget, RecordingInfo& t) {
  Connection& db = lib_.connection();
  const Retention& r = opt_.retention;
  if (r.maxAge == 0 && r.maxRecords == 0 && r.maxBytes == 0) return {};
  // Oldest first; the blocks of this commit (seq >= keepFromSeq) are never candidates, so the
  // newest data always survives its own commit.
  struct Victim {
    std::int64_t id;
    RecordKind kind;
    std::uint64_t n, bytes;
  };
  std::vector<Victim> victims;
  {
    Stmt q(db,
           "SELECT id, kind, n, length(data), t_max FROM rec_blocks WHERE recording_id=? AND "
           "seq<? ORDER BY seq LIMIT ?");
    q.bind(1, recId).bind(2, keepFromSeq).bind(3, static_cast<std::int64_t>(budget));
    std::uint64_t records = t.calls + t.samples, bytes = t.bytes;
    while (q.step()) {
      const bool old = r.maxAge > 0 && q.i64(4) < t.tEnd - r.maxAge;
      const bool many = r.maxRecords > 0 && records > r.maxRecords;
      const bool big = r.maxBytes > 0 && bytes > r.maxBytes;
      if (!old && !many && !big) break;
      Victim v{q.i64(0), static_cast<RecordKind>(q.i64(1)), static_cast<std::uint64_t>(q.i64(2)),
               static_cast<std::uint64_t>(q.i64(3))};
      records -= v.n;
      bytes -= v.bytes;
      victims.push_back(v);
    }
  }
  if (victims.empty()) return {};
  Stmt del(db, "DELETE FROM rec_blocks WHERE id=?");
  Dropped dropped;
  for (const Victim& v : victims) {
    del.bind(1, v.id);
    del.run();
    (v.kind == RecordKind::Calls ? t.calls : t.samples) -= v.n;
    t.bytes -= v.bytes;
    --t.blocks;
    ++dropped.blocks;
    dropped.records += v.n;
  }
  {
    Stmt q(db, "SELECT min(t_min) FROM rec_blocks WHERE recording_id=?");
    q.bind(1, recId);
    if (q.step() && !q.isNull(0)) t.tStart = q.i64(0);
  }
  // Annotations wholly before what is kept describe data that is gone.
  Stmt prune(db, "DELETE FROM rec_annotations WHERE recording_id=? AND t2<?");
  prune.bind(1, recId).bind(2, t.tStart);
  prune.run();
  return dropped;
}

std::uint64_t LiveRecorder::enforceRetention(std::size_t maxBlocks) {
  Connection& db = lib_.connection();
  detail::Tx tx(db, opt_.stallTimeoutMs);
  const std::int64_t recId = ensureRow();
  RecordingInfo t;
  const std::int64_t seq = totals(recId, t);
  // The newest block stays, as after a commit: a recording never empties itself.
  const Dropped d = dropExpired(recId, seq - 1, maxBlocks, t);
  Stmt up(db,
          "UPDATE recordings SET calls=?, samples=?, blocks=?, bytes=?, t_start=?, "
          "dropped=dropped+? WHERE id=?");
  up.bind(1, static_cast<std::int64_t>(t.calls)).bind(2, static_cast<std::int64_t>(t.samples));
  up.bind(3, static_cast<std::int64_t>(t.blocks)).bind(4, static_cast<std::int64_t>(t.bytes));
  up.bind(5, t.tStart).bind(6, static_cast<std::int64_t>(d.records)).bind(7, recId);
  up.run();
  tx.commit();
  stats_.droppedBlocks += d.blocks;
  stats_.droppedRecords += d.records;
  return d.blocks;
}

}  // namespace spillway::library
