#pragma once
// Private: the `recordings` row as Library (reads, cuts) and LiveRecorder (commits) both see it.
#include "connection.hpp"
#include "spillway/library/recording.hpp"

namespace spillway::library::detail {

inline constexpr const char* kRecordingColumns =
    "SELECT id, name, max_age, max_records, max_bytes, calls, samples, blocks, bytes, t_start, "
    "t_end, recorded, dropped, created FROM recordings ";

inline RecordingInfo readRecording(const Stmt& q) {
  RecordingInfo r;
  r.id = q.i64(0);
  r.name = q.text(1);
  r.retention.maxAge = q.i64(2);
  r.retention.maxRecords = static_cast<std::uint64_t>(q.i64(3));
  r.retention.maxBytes = static_cast<std::uint64_t>(q.i64(4));
  r.calls = static_cast<std::uint64_t>(q.i64(5));
  r.samples = static_cast<std::uint64_t>(q.i64(6));
  r.blocks = static_cast<std::uint64_t>(q.i64(7));
  r.bytes = static_cast<std::uint64_t>(q.i64(8));
  r.tStart = q.i64(9);
  r.tEnd = q.i64(10);
  r.recorded = static_cast<std::uint64_t>(q.i64(11));
  r.dropped = static_cast<std::uint64_t>(q.i64(12));
  r.created = q.text(13);
  return r;
}

}  // namespace spillway::library::detail
