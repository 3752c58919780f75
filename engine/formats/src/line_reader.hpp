#pragma once
// Private to the importers: a file (or memory) read in 4 MiB chunks and cut into lines, each
// followed by at least simdjson::SIMDJSON_PADDING readable bytes, so a line parses in place.
// Memory stays bounded by the longest line whatever the file size.
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/input_error.hpp"

namespace spillway::formats {

// The importers' refill of a read buffer padded for simdjson whose data is [0, end): grown when
// less than half of it is free (by its size, at most `chunk` at a time), then read into behind
// the data, and the padding after the new end zeroed. Returns false at the end of the input.
bool refillPadded(std::vector<char>& buf, std::size_t& end, std::size_t chunk,
                  const std::function<std::size_t(char* dst, std::size_t n)>& read);

// "line longer than the 8 MiB limit for one record", at `line` of `source`.
InputError lineTooLong(const std::string& source, long line);

class LineReader {
 public:
  using ReadFn = std::function<std::size_t(char* dst, std::size_t n)>;
  // `capacity`: the first buffer's size (a small in-memory input need not pay for 4 MiB).
  LineReader(std::string name, ReadFn read, std::size_t capacity = std::size_t{1} << 22);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Throws InputError(path, 0, "", ...) when the file cannot be opened or read.
  static std::unique_ptr<LineReader> openFile(const std::string& path);
  static std::unique_ptr<LineReader> fromMemory(std::string name, std::string_view data);

  // Next line without its '\n' / "\r\n"; false at the end. Valid until the next call.
  bool next(std::string_view& line);
  long lineNo() const { return line_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  ReadFn read_;
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  long line_ = 0;
  std::FILE* file_ = nullptr;
};

// Reads a whole file ("-" = stdin) into a string. Throws InputError.
std::string readWholeFile(const std::string& path);

}  // namespace spillway::formats
