#pragma once
// Live recordings in the library: what a recording keeps (Retention), what it holds
// (RecordingInfo) and what a cut made of it (CutResult). Written by LiveRecorder
// (live_recorder.hpp), read and cut by Library (library.hpp); docs/library.md, "Live recording".
#include <cstdint>
#include <string>

#include "spillway/time.hpp"

namespace spillway::library {

enum class RecordKind : std::uint8_t { Calls = 0, Samples = 1 };

// Bounds on what a recording keeps; 0 = no bound of that kind. Enforcement deletes whole
// blocks, oldest first, so a bound is met to within one block (≤ 4096 records), and never
// deletes the blocks of the commit that is being made.
struct Retention {
  Micros maxAge = 24 * 3600 * kMicrosPerSecond;  // data time behind the newest record
  std::uint64_t maxRecords = 0;                  // calls + samples
  std::uint64_t maxBytes = 0;                    // encoded block bytes (≈ 13–20 a call)
};

struct RecordingInfo {
  std::int64_t id = 0;
  std::string name;
  Retention retention;
  std::uint64_t calls = 0, samples = 0;  // retained
  std::uint64_t blocks = 0, bytes = 0;   // retained blocks and their encoded bytes
  Micros tStart = 0, tEnd = 0;           // retained span: earliest start, newest end (0: empty)
  std::uint64_t recorded = 0;            // records ever committed
  std::uint64_t dropped = 0;             // records deleted by retention
  std::string created;
};

struct CutResult {
  std::string incident;
  std::string kind;                           // "calls" or "aggregates"
  std::uint64_t records = 0;                  // calls or samples copied into the incident
  std::uint64_t annotations = 0;              // annotations of the recording copied with them
  bool otherKindInRange = false;              // the range also holds the other kind (not copied)
  bool clipped = false;                       // `from` is before the oldest retained record
  Micros from = 0, to = 0;                    // the range asked for, [from, to)
  Micros retainedStart = 0, retainedEnd = 0;  // the recording's retained span at the cut
};

}  // namespace spillway::library
