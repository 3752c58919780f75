#include "line_reader.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/telemetry.hpp"

namespace spillway::formats {

namespace {
constexpr std::size_t kChunk = 1 << 22;
}

bool refillPadded(std::vector<char>& buf, std::size_t& end, std::size_t chunk,
                  const std::function<std::size_t(char* dst, std::size_t n)>& read) {
  const std::size_t cap = buf.size() - simdjson::SIMDJSON_PADDING;
  if (cap - end < std::min(cap, chunk) / 2) buf.resize(buf.size() + std::min(cap, chunk));
  const std::size_t room = buf.size() - simdjson::SIMDJSON_PADDING - end;
  const std::size_t got = read(buf.data() + end, room);
  end += got;
  std::memset(buf.data() + end, 0, simdjson::SIMDJSON_PADDING);
  return got != 0;
}

LineReader::LineReader(std::string name, ReadFn read, std::size_t capacity)
    : name_(std::move(name)), read_(std::move(read)) {
  buf_.resize(std::clamp<std::size_t>(capacity, 4096, kChunk) + simdjson::SIMDJSON_PADDING);
}

LineReader::~LineReader() {
  if (file_) std::fclose(file_);
}

std::unique_ptr<LineReader> LineReader::openFile(const std::string& path) {
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) throw InputError(path, 0, "", std::string("cannot open: ") + std::strerror(errno));
  auto r = std::make_unique<LineReader>(path, JsonlReader::fileReader(f, path));
  if (f != stdin) r->file_ = f;
  return r;
}

std::unique_ptr<LineReader> LineReader::fromMemory(std::string name, std::string_view data) {
  return std::make_unique<LineReader>(std::move(name), JsonlReader::memoryReader(data),
                                      data.size() + 1);
}

bool LineReader::next(std::string_view& line) {
  for (;;) {
    const char* start = buf_.data() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    if (nl || (eof_ && begin_ != end_)) {
      const auto len =
          nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - start) : end_ - begin_;
      if (len > input_limits::kLine) throw lineTooLong(name_, line_ + 1);  // ended in the last read
      line = std::string_view(start, len);
      begin_ += nl ? len + 1 : len;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++line_;
      return true;
    }
    if (eof_) return false;
    // Keep the partial line, refill behind it; a line longer than the chunk grows the buffer,
    // up to the limit of one line (a file without newlines, /dev/zero, must not take it all).
    const std::size_t keep = end_ - begin_;
    if (keep > input_limits::kLine) throw lineTooLong(name_, line_ + 1);
    if (keep) std::memmove(buf_.data(), start, keep);
    begin_ = 0;
    end_ = keep;
    // A file's buffer starts at a chunk, so it grows as it always did.
    if (!refillPadded(buf_, end_, kChunk, read_)) eof_ = true;
  }
}

InputError lineTooLong(const std::string& source, long line) {
  return InputError(source, line, "",
                    "line longer than the " + formatByteLimit(input_limits::kLine) +
                        " limit for one record (docs/limits.md)");
}

std::string readWholeFile(const std::string& path) {
  return readInputFile(path, input_limits::kWholeTrace, "trace read whole (OTLP, Prometheus)");
}

}  // namespace spillway::formats
