#pragma once
// Canonical telemetry: JSON Lines, one call per line (docs/telemetry.md). Parsed with simdjson
// in place, streaming in fixed-size chunks, so memory stays bounded whatever the file size.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/input_error.hpp"
#include "spillway/outcome.hpp"
#include "spillway/time.hpp"

namespace spillway {

struct CallRecord {
  Micros ts = 0;       // call start, µs since the Unix epoch
  Micros latency = 0;  // µs
  // µs from ts to the answer's status line and headers at the gateway (TTFB), -1 when not
  // known: a gateway judges an answer by its status when its headers arrive (HAProxy's
  // observe layer7), which for a streamed answer is long before its end.
  Micros ttfb = -1;
  int status = 0;  // HTTP status; 0 = no response
  Outcome outcome = Outcome::Ok;
  bool hasOutcome = false;
  std::string_view instance;  // views are valid until the next read
  std::string_view model;
  std::string_view tenant;
  std::string_view route;
  std::string_view session;
  std::optional<bool> critical;
  std::int64_t tokensIn = -1;
  std::int64_t tokensOut = -1;
  long line = 0;
  Micros end() const { return ts + latency; }
};

// Parses "2026-11-30T06:25:56.123Z" / "...+08:00" to µs since the epoch.
std::optional<Micros> parseRfc3339(std::string_view s);

// The instants telemetry may carry: from the Unix epoch to the end of year 9999 (RFC 3339's
// last). Anything else is a unit mistake (nanoseconds taken for milliseconds) or damage;
// accepted, it would stretch a replay, a library query or a fault span over millennia.
inline constexpr Micros kLastInstant = 253402300799999999;  // 9999-12-31T23:59:59.999999Z
inline constexpr const char* kInstantRange = "from 1970-01-01 to 9999-12-31";
constexpr bool plausibleInstant(Micros t) {
  return t >= 0 && t <= kLastInstant;
}
// A number of `microsPerUnit` µs since the epoch (1e3: milliseconds) as µs; nothing when not
// finite or not a plausible instant.
std::optional<Micros> instantFromNumber(double units, double microsPerUnit);
inline std::optional<Micros> instantFromMillis(double ms) {
  return instantFromNumber(ms, 1e3);
}
// An RFC 3339 time that is also a plausible instant.
std::optional<Micros> parseInstant(std::string_view rfc3339);

class JsonlReader {
 public:
  // Reads up to `n` bytes into `dst`; returns bytes read, 0 at end.
  using ReadFn = std::function<std::size_t(char* dst, std::size_t n)>;
  // Reads an open file. A read error (e.g. the path is a directory) throws an InputError
  // naming `path`: it must not pass for the end of the file.
  static ReadFn fileReader(std::FILE* f, std::string path);
  // Reads `data` from its start; it must outlive the reader.
  static ReadFn memoryReader(std::string_view data);

  // `capacity`: the first buffer's size (a small in-memory input need not pay for 4 MiB).
  JsonlReader(std::string sourceName, ReadFn read, bool skipBadLines,
              std::size_t capacity = std::size_t{1} << 22);
  ~JsonlReader();
  static std::unique_ptr<JsonlReader> openFile(const std::string& path, bool skipBadLines);
  static std::unique_ptr<JsonlReader> fromMemory(std::string name, std::string_view data,
                                                 bool skipBadLines);

  // Next record; false at the end. Throws InputError on a bad line unless skipping, in which
  // case the line is counted and the first few messages are kept.
  bool next(CallRecord& rec);

  std::uint64_t skipped() const { return skipped_; }
  const std::vector<std::string>& skippedMessages() const { return skippedMessages_; }
  long line() const { return line_; }
  const std::string& source() const { return source_; }

 private:
  bool nextLine(std::string_view& line);
  bool parseLine(std::string_view line, CallRecord& rec, std::string& field, std::string& err);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string source_;
  ReadFn read_;
  bool skipBad_;
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  long line_ = 0;
  std::uint64_t skipped_ = 0;
  std::vector<std::string> skippedMessages_;
  std::FILE* file_ = nullptr;
};

}  // namespace spillway
