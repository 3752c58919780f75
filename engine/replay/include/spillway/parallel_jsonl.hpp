#pragma once
// A canonical JSONL trace read and parsed on other threads while the caller consumes it (and
// decides: Replayer::feed), in file order. The trace is cut into chunks exactly where
// JsonlReader's buffer refills (formats/jsonl_chunks.hpp), and each chunk into pieces of about
// 256 KiB; worker threads read and parse them ahead into a bounded ring, and the consumer
// parses a piece itself whenever the next is not ready, so both cores stay busy whichever side
// is slower. Records, line numbers, errors (the first
// bad line stops the trace with its file:line: field message, after every record before it)
// and skipped-line counts are those of the one-thread source (openSource(Format::Jsonl, ...)).
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "spillway/formats/source.hpp"
#include "spillway/telemetry.hpp"

namespace spillway {

struct ParallelJsonlOptions {
  // Threads in all, the consumer's included: 0 = every core; 1 = the one-thread source.
  unsigned threads = 0;
  // The first buffer's size, as JsonlReader's (4 MiB for a file); tests make it small.
  std::size_t capacity = std::size_t{1} << 22;
  // A chunk is parsed in pieces of about this size, at most 16: small enough that a piece's
  // text and records are still in cache when the consumer reads them, and that the consumer,
  // parsing one while it waits, is soon back to deciding.
  std::size_t piece = std::size_t{256} << 10;
  // Chunks read ahead of the consumer, about (memory: this many buffers and their records,
  // 30 MB at 4 MiB).
  std::size_t ahead = 2;
};

// `path` as openSource(Format::Jsonl, path, {skipBadLines}) reads it; stdin ("-") and other
// non-regular files (a pipe a worker could block on) are read by the one-thread source.
std::unique_ptr<formats::RecordSource> openJsonlParallel(const std::string& path, bool skipBadLines,
                                                         const ParallelJsonlOptions& options);
// The same over text in memory (tests); `name` appears in errors.
std::unique_ptr<formats::RecordSource> jsonlParallelFromMemory(std::string name,
                                                               std::string_view data,
                                                               bool skipBadLines,
                                                               const ParallelJsonlOptions& options);
// The same over any reader (JsonlReader's ReadFn: 0 at the end; it may throw InputError),
// called by one thread at a time, not always the same one. With one thread: a JsonlReader.
std::unique_ptr<formats::RecordSource> jsonlParallelFromReader(std::string name,
                                                               JsonlReader::ReadFn read,
                                                               bool skipBadLines,
                                                               const ParallelJsonlOptions& options);

}  // namespace spillway
