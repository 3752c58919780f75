#pragma once
// LiveRecorder: live calls and aggregate samples appended continuously into a recording in the
// library, within a retention bound, so that any moment can later be cut into an ordinary
// incident (Library::cutRecording) and replayed, swept or tuned (docs/library.md, "Live
// recording").
//
// Threading: one LiveRecorder per thread. It is not locked and owns its own SQLite connection;
// never call it from two threads at once. Anything else — replays, cuts, `library list`, the
// console — opens its own Library (its own connection), in this process on another thread or
// in another process. With WAL, readers never wait for the recorder nor the recorder for them;
// a cut holds the write lock while it copies, and the recorder keeps buffering meanwhile.
//
// Time: the recorder reads no clock. It commits when what it buffered spans `commitEvery` of
// *data* time (the records' own times) or holds `commitRecords` records. A feeder that wants a
// wall-clock bound when traffic stops calls flush() on its own timer.
//
// Durability: each commit is one transaction. A process that is killed or crashes loses only
// what was buffered since the last commit (stats().pending): at most commitEvery of data or
// commitRecords records, more only while the library was busy. With WAL and
// synchronous=NORMAL an OS crash or power cut may also lose the last commits, never the
// library's consistency.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/formats/source.hpp"
#include "spillway/library/library.hpp"
#include "spillway/library/recording_block.hpp"

namespace spillway::library {

struct RecorderOptions {
  // Stored with the recording (the latest recorder's bounds win) and enforced at each commit.
  Retention retention;
  Micros commitEvery = kMicrosPerSecond;  // of data time
  std::size_t commitRecords = std::size_t{1} << 17;
  // A commit waits this long for the write lock (a cut, an import, another recorder). If it
  // cannot have it, the data stays buffered and the next commit point tries again.
  int busyWaitMs = 20;
  // Past this many buffered records, append() waits for the lock (backpressure) up to
  // stallTimeoutMs, then throws; buffered records are never dropped. ~20 bytes a call.
  std::size_t maxPendingRecords = std::size_t{1} << 23;
  int stallTimeoutMs = 60000;
  // Retention deletes at most max(dropBudget, 2 × blocks written) blocks per commit: a lowered
  // bound or a long pause drains over several commits, never in one long DELETE.
  std::size_t dropBudget = 64;
};

struct RecorderStats {
  std::uint64_t calls = 0, samples = 0;  // appended
  std::uint64_t committed = 0;           // records committed by this recorder
  std::uint64_t pending = 0;             // buffered, not committed yet: what a kill would lose
  std::uint64_t commits = 0;
  std::uint64_t busy = 0;  // commit attempts that found the library busy (data kept)
  std::uint64_t droppedBlocks = 0, droppedRecords = 0;  // deleted by retention
};

class LiveRecorder {
 public:
  // Opens (creating or migrating) the library at `libraryPath` and the recording `recording`
  // (created when missing; appended to otherwise). Throws InputError naming the library, or
  // the option that is out of range.
  LiveRecorder(const std::string& libraryPath, std::string_view recording,
               RecorderOptions opt = {});
  // Commits what is buffered (waiting up to stallTimeoutMs). Errors are swallowed here: call
  // close() first to see them.
  ~LiveRecorder();
  LiveRecorder(const LiveRecorder&) = delete;
  LiveRecorder& operator=(const LiveRecorder&) = delete;

  // Buffers one record and commits when a commit point is reached. The views in the record
  // are copied. Throws InputError only when a commit fails for another reason than a busy
  // library (disk full, I/O error, damaged library) or stays busy past stallTimeoutMs: the
  // record and everything buffered are kept, and the next flush() tries again.
  void append(const CallRecord& call);
  void append(const formats::AggregateSample& sample);

  // Commits everything buffered now. False when the library stayed busy for `waitMs`
  // (< 0: busyWaitMs): the data stays buffered. Throws InputError like append().
  bool flush(int waitMs = -1);
  // flush() waiting up to stallTimeoutMs; throws InputError when the data cannot be committed.
  void close();

  // Deletes up to `maxBlocks` blocks that the retention bound no longer keeps, in one
  // transaction (commits already do this a little at a time). Returns the blocks deleted.
  std::uint64_t enforceRetention(std::size_t maxBlocks);

  const RecorderStats& stats() const { return stats_; }
  const std::string& recording() const { return name_; }
  RecordingInfo info() { return lib_.requireRecording(name_); }
  // The recorder's own connection (tests, tools); same thread rule as the recorder.
  Library& library() { return lib_; }

 private:
  struct Pending {
    RecordKind kind;
    std::uint32_t n;
    Micros tMin, tMax;
    std::string data;
  };
  void seal(RecordingBlockBuilder& b);
  void noted(Micros t);
  bool commit(int waitMs);
  struct Dropped {
    std::uint64_t blocks = 0, records = 0;
  };
  // Deletes the oldest blocks the retention no longer keeps (seq < keepFromSeq, at most
  // `budget`), adjusting the totals `t`; inside the caller's transaction.
  Dropped dropExpired(std::int64_t recId, std::int64_t keepFromSeq, std::size_t budget,
                      RecordingInfo& t);
  // Reads the recording's running totals into `t`; returns its next block seq.
  std::int64_t totals(std::int64_t recId, RecordingInfo& t);
  std::int64_t ensureRow();

  RecorderOptions opt_;
  std::string name_;
  Library lib_;
  RecordingBlockBuilder calls_{RecordKind::Calls}, samples_{RecordKind::Samples};
  std::vector<Pending> pending_;
  std::uint64_t buffered_ = 0;           // records in pending_ and in the builders
  std::uint64_t sinceAttempt_ = 0;       // records appended since the last commit attempt
  Micros firstTime_ = 0, lastTime_ = 0;  // data time spanned since the last attempt
  bool timed_ = false;
  RecorderStats stats_;
};

}  // namespace spillway::library
