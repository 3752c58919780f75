#pragma once
// Canonical JSONL cut into chunks that parse independently, so that several threads can parse
// one trace while another consumes it in file order (engine/replay's parallel source). A chunk
// is exactly what JsonlReader holds after one refill of its buffer: the same buffer sizes, the
// same reads, the same "line longer than the limit" decision, so a trace read in chunks gives
// the records, line numbers and errors JsonlReader gives. Nothing here starts a thread.
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/telemetry.hpp"

namespace spillway::formats {

// Parses one line as JsonlReader does, with its own simdjson parser (one per thread). Lines in
// the shape the canonical writer and tracegen produce (no whitespace, escapes or unknown keys)
// take a direct path; anything else, and every bad line, goes through simdjson, so the
// records and the errors are the same either way.
class JsonlLineParser {
 public:
  JsonlLineParser();
  ~JsonlLineParser();
  JsonlLineParser(const JsonlLineParser&) = delete;
  JsonlLineParser& operator=(const JsonlLineParser&) = delete;

  // `line` without '\n' or '\r'; `capacity` bytes readable from line.data() (at least
  // line.size() + simdjson's padding). On false, `field` and `err` say what is wrong. String
  // views point into the line or into this parser (until its next parse).
  bool parse(std::string_view line, std::size_t capacity, CallRecord& rec, std::string& field,
             std::string& err);
  // The simdjson path alone (tests compare the two).
  bool parseGeneral(std::string_view line, std::size_t capacity, CallRecord& rec,
                    std::string& field, std::string& err);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The direct path alone: true only when `line` is in the canonical shape and `rec` then holds
// exactly what the simdjson path would give; false means "not decided here", never "bad".
bool parseCanonicalLine(std::string_view line, CallRecord& rec);

// Bytes of the trace in whole lines (the last chunk's last line may lack its '\n'), followed
// by readable padding. `tooLong`: after these lines comes one longer than the limit for a line;
// `error`: reading failed after these lines. Either ends the trace.
struct JsonlChunk {
  std::vector<char> buf;
  std::size_t size = 0;
  bool tooLong = false;
  std::exception_ptr error;
  std::string_view text() const { return {buf.data(), size}; }
};

// JsonlReader's buffering without the parsing: each refill of the buffer gives the whole
// lines in it as a chunk (in a buffer of its own), and the partial last line moves on to the
// next buffer. `capacity`: the first buffer's size, as JsonlReader's.
class JsonlSplitter {
 public:
  JsonlSplitter(JsonlReader::ReadFn read, std::size_t capacity = std::size_t{1} << 22);
  // The next chunk into `out` (its buffer reused when large enough); false at the end of the
  // trace. Never throws for the trace's sake: a read error or a line over the limit comes as
  // a chunk.
  bool next(JsonlChunk& out);

 private:
  void refill();

  JsonlReader::ReadFn read_;
  std::vector<char> buf_;  // the partial line at [0, end_)
  std::size_t end_ = 0;
  bool eof_ = false, done_ = false;
};

// A chunk (or a piece of one) parsed: its records in order, their `line` counted from its
// first line (1), and its bad lines (at most one unless skipping: parsing stops at the first).
struct JsonlBatch {
  struct Bad {
    long line;
    std::string field, err;
  };
  std::vector<CallRecord> records;
  std::vector<Bad> bad;
  long lines = 0;                   // lines in the chunk, blank and bad ones included
  std::deque<std::string> strings;  // what records parsed by simdjson point to
  void clear();
};

// The lines of chunk bytes [from, to) (both at line starts: 0, lineBoundary or chunk.size).
void parseJsonlChunk(JsonlLineParser& parser, const JsonlChunk& chunk, std::size_t from,
                     std::size_t to, bool skipBadLines, JsonlBatch& out);
// The start of the line after the one holding byte `at` (chunk.size at the end): where a chunk
// is cut to be parsed in pieces.
std::size_t lineBoundary(const JsonlChunk& chunk, std::size_t at);

}  // namespace spillway::formats
