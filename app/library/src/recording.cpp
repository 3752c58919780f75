// Library's side of live recordings: listing, streaming a time range, cutting a range into an
// ordinary incident, annotations, deletion. The writing side is LiveRecorder
// (live_recorder.cpp); both go through the `recordings` row (recording_store.hpp).
#include "annotation_rows.hpp"
#include "connection.hpp"
#include "recording_store.hpp"
#include "spillway/library/library.hpp"
#include "spillway/library/recording_block.hpp"
#include "spillway/library/time_text.hpp"

namespace spillway::library {

using detail::Connection;
using detail::Stmt;
using detail::Tx;

namespace {

// Blocks that may hold a record starting in [from, to): a record starts no later than it ends,
// so its block ends at or after `from`, and the block starts before `to`. Only ids are sorted
// (16 bytes a block); selecting `data` here would make SQLite sort the blobs themselves.
constexpr const char* kBlocksInRange =
    "SELECT id FROM rec_blocks WHERE recording_id=? AND kind=? AND t_max>=? AND t_min<? "
    "ORDER BY seq";

// A recording's calls or samples whose start is in [from, to), in recording order, one decoded
// block in memory at a time.
class RangeSource final : public formats::RecordSource {
 public:
  RangeSource(Connection& db, std::int64_t recording, RecordKind kind, Micros from, Micros to,
              std::string name)
      : RecordSource(std::move(name), false),
        path_(db.name()),
        kind_(kind),
        from_(from),
        to_(to),
        q_(db, "SELECT data FROM rec_blocks WHERE id=?") {
    Stmt ids(db, kBlocksInRange);
    ids.bind(1, recording).bind(2, static_cast<std::int64_t>(kind)).bind(3, from).bind(4, to);
    while (ids.step()) ids_.push_back(ids.i64(0));
  }
  bool aggregates() const override { return kind_ == RecordKind::Samples; }
  bool next(CallRecord& rec) override {
    if (kind_ != RecordKind::Calls) return false;
    for (;;) {
      while (pos_ < block_.size()) {
        const std::size_t i = pos_++;
        const Micros t = block_.calls.ts[i];
        if (t < from_ || t >= to_) continue;
        block_.call(i, rec);
        rec.line = static_cast<long>(++count_);
        return true;
      }
      if (!load()) return false;
    }
  }
  bool nextAggregate(formats::AggregateSample& s) override {
    if (kind_ != RecordKind::Samples) return false;
    for (;;) {
      while (pos_ < block_.size()) {
        const std::size_t i = pos_++;
        const Micros t = block_.samples.end[i] - block_.samples.step[i];
        if (t < from_ || t >= to_) continue;
        block_.sample(i, s);
        s.line = static_cast<long>(++count_);
        return true;
      }
      if (!load()) return false;
    }
  }

 private:
  bool load() {
    // Retention may delete blocks between reads when this source runs outside a transaction
    // (openRecording): a vanished block is skipped, the stream stays in order.
    do {
      if (next_ >= ids_.size()) return false;
      q_.reset();
      q_.bind(1, ids_[next_++]);
    } while (!q_.step());
    std::size_t n = 0;
    const unsigned char* p = q_.blob(0, n);
    if (!decodeRecordingBlock(p, n, block_) || block_.kind != kind_)
      throw InputError(path_, 0, "", "the library is damaged: a recording block cannot be read");
    pos_ = 0;
    return true;
  }

  const std::string& path_;
  RecordKind kind_;
  Micros from_, to_;
  Stmt q_;
  std::vector<std::int64_t> ids_;
  std::size_t next_ = 0;
  RecordingBlock block_;
  std::size_t pos_ = 0;
  std::uint64_t count_ = 0;
};

std::string rangeText(Micros from, Micros to) {
  return "[" + formatUtc(from) + ", " + formatUtc(to) + ")";
}

}  // namespace

std::vector<RecordingInfo> Library::recordings() {
  std::vector<RecordingInfo> out;
  Stmt q(*db_, (std::string(detail::kRecordingColumns) + "ORDER BY name").c_str());
  while (q.step()) out.push_back(detail::readRecording(q));
  return out;
}

std::optional<RecordingInfo> Library::recording(std::string_view name) {
  Stmt q(*db_, (std::string(detail::kRecordingColumns) + "WHERE name=?").c_str());
  q.bind(1, name);
  if (!q.step()) return std::nullopt;
  return detail::readRecording(q);
}

RecordingInfo Library::requireRecording(std::string_view name) {
  auto r = recording(name);
  if (!r) throw InputError(path_, 0, "recording", "no recording '" + std::string(name) + "'");
  return *r;
}

std::unique_ptr<formats::RecordSource> Library::openRecording(std::string_view name,
                                                              RecordKind kind, Micros from,
                                                              Micros to) {
  const RecordingInfo rec = requireRecording(name);
  return std::make_unique<RangeSource>(*db_, rec.id, kind, from, to,
                                       "recording " + rec.name + " " + rangeText(from, to));
}

namespace {

void checkCutRequest(const std::string& path, std::string_view name, std::string_view kind,
                     Micros from, Micros to) {
  if (name.empty()) throw InputError(path, 0, "name", "the new incident needs a name");
  if (!kind.empty() && kind != "calls" && kind != "aggregates")
    throw InputError(path, 0, "kind",
                     "expected calls or aggregates, not '" + std::string(kind) + "'");
  if (from >= to)
    throw InputError(path, 0, "range",
                     "from (" + formatUtc(from) + ") must be before to (" + formatUtc(to) + ")");
}

// The range must reach data the recording still retains.
void checkCutRange(const std::string& path, const RecordingInfo& rec, Micros from, Micros to) {
  if (rec.blocks == 0)
    throw InputError(path, 0, "range",
                     "recording '" + rec.name +
                         "' holds no data yet (nothing recorded, or all of "
                         "it dropped by retention)");
  if (to <= rec.tStart || from > rec.tEnd)
    throw InputError(path, 0, "range",
                     rangeText(from, to) + " is outside the data recording '" + rec.name +
                         "' retains (" + formatUtc(rec.tStart) + " .. " + formatUtc(rec.tEnd) +
                         ")");
}

// The recording's annotations that overlap the range, unclipped: a fault that began before
// `from` still began then, and TTD is measured from its real onset. Returns how many.
std::uint64_t copyCutAnnotations(Connection& db, std::int64_t incidentId, std::int64_t recordingId,
                                 Micros from, Micros to) {
  Stmt copy(db,
            "INSERT INTO annotations(incident_id, instance, t1, t2, kind, origin) "
            "SELECT ?, instance, t1, t2, kind, origin FROM rec_annotations "
            "WHERE recording_id=? AND t1<? AND t2>=? ORDER BY t1, id RETURNING id");
  copy.bind(1, incidentId).bind(2, recordingId).bind(3, to).bind(4, from);
  std::uint64_t n = 0;
  while (copy.step()) ++n;
  return n;
}

}  // namespace

CutResult Library::cutRecording(std::string_view recordingName, Micros from, Micros to,
                                std::string_view name, std::string_view kind,
                                const ProgressFn& progress) {
  checkCutRequest(path_, name, kind, from, to);
  requireWritable("cut a recording");
  // One transaction: the checks and the copy see the same state of the recording (a recorder's
  // commits and retention wait), and the incident appears whole or not at all.
  Tx tx(*db_);
  const RecordingInfo rec = requireRecording(recordingName);
  if (incident(name))
    throw InputError(path_, 0, "name", "incident '" + std::string(name) + "' already exists");
  checkCutRange(path_, rec, from, to);
  auto reaches = [&](RecordKind k) {
    Stmt q(*db_,
           "SELECT 1 FROM rec_blocks WHERE recording_id=? AND kind=? AND t_max>=? AND t_min<? "
           "LIMIT 1");
    q.bind(1, rec.id).bind(2, static_cast<std::int64_t>(k)).bind(3, from).bind(4, to);
    return q.step();
  };
  const bool hasCalls = reaches(RecordKind::Calls), hasSamples = reaches(RecordKind::Samples);
  // Copies one kind; nothing is left of an attempt that found no record (the savepoint), so
  // "calls, else samples" can fall through when call blocks only brush the range.
  auto attempt = [&](RecordKind k) {
    exec("SAVEPOINT cut_kind");
    RangeSource src(*db_, rec.id, k, from, to, "recording " + rec.name + " " + rangeText(from, to));
    const ImportResult ir = store(src, name, "recording", "", progress, true);
    if (ir.records == 0) exec("ROLLBACK TO cut_kind");
    exec("RELEASE cut_kind");
    return ir.records;
  };
  CutResult r;
  r.incident = name;
  r.from = from;
  r.to = to;
  r.retainedStart = rec.tStart;
  r.retainedEnd = rec.tEnd;
  r.clipped = from < rec.tStart;
  std::vector<RecordKind> kinds;
  if (kind != "aggregates") kinds.push_back(RecordKind::Calls);
  if (kind != "calls") kinds.push_back(RecordKind::Samples);
  RecordKind k = kinds.front();
  for (RecordKind c : kinds) {
    if (!(c == RecordKind::Calls ? hasCalls : hasSamples)) continue;
    k = c;
    if ((r.records = attempt(c)) > 0) break;
  }
  if (r.records == 0) {
    const std::string what = kind == "calls"        ? "no calls"
                             : kind == "aggregates" ? "no aggregate samples"
                                                    : "no calls or aggregate samples";
    throw InputError(path_, 0, "range",
                     what + " of recording '" + rec.name + "' start in " + rangeText(from, to));
  }
  r.kind = k == RecordKind::Calls ? "calls" : "aggregates";
  r.otherKindInRange = k == RecordKind::Calls ? hasSamples : hasCalls;
  r.annotations = copyCutAnnotations(*db_, requireIncident(name).id, rec.id, from, to);
  tx.commit();
  return r;
}

void Library::annotateRecording(std::string_view name, const Annotation& a) {
  requireWritable("annotate a recording");
  detail::insertAnnotation(*db_, "rec_annotations", "recording_id", requireRecording(name).id, a);
}

std::vector<Annotation> Library::recordingAnnotations(std::string_view name) {
  return detail::selectAnnotations(*db_, "rec_annotations", "recording_id",
                                   requireRecording(name).id);
}

bool Library::deleteRecording(std::string_view name) {
  requireWritable("delete a recording");
  Tx tx(*db_);
  const auto rec = recording(name);
  if (!rec) return false;
  for (const char* t : {"rec_blocks", "rec_annotations"}) {
    Stmt q(*db_, (std::string("DELETE FROM ") + t + " WHERE recording_id=?").c_str());
    q.bind(1, rec->id);
    q.run();
  }
  Stmt q(*db_, "DELETE FROM recordings WHERE id=?");
  q.bind(1, rec->id);
  q.run();
  tx.commit();
  return true;
}

}  // namespace spillway::library
