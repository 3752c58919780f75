#include "spillway/input_limits.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <simdjson.h>

#include "spillway/input_error.hpp"

namespace spillway {

bool isText(std::string_view s) {
  return simdjson::validate_utf8(s.data(), s.size());
}

std::string formatByteLimit(std::size_t bytes) {
  using namespace input_limits;
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes >= kKiB && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
  return std::to_string(bytes) + " bytes";
}

namespace {
[[noreturn]] void tooLarge(const std::string& source, std::size_t limit, std::string_view what) {
  std::string msg = "larger than the ";
  msg.append(formatByteLimit(limit)).append(" limit for a ").append(what);
  msg.append(" (docs/limits.md)");
  throw InputError(source, 0, "", msg);
}
}  // namespace

std::string readInputFile(const std::string& path, std::size_t limit, std::string_view what) {
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) throw InputError(path, 0, "", std::string("cannot open: ") + std::strerror(errno));
  struct Closer {
    std::FILE* f;
    ~Closer() {
      if (f != stdin) std::fclose(f);
    }
  } closer{f};
  std::string out;
  char buf[1 << 16];
  for (;;) {
    // Never ask for more than one byte past the limit: /dev/zero ends here, not in bad_alloc.
    const std::size_t want = std::min(sizeof buf, limit + 1 - out.size());
    const std::size_t got = std::fread(buf, 1, want, f);
    if (got == 0) {
      if (std::ferror(f))
        throw InputError(path, 0, "", std::string("cannot read: ") + std::strerror(errno));
      return out;
    }
    out.append(buf, got);
    if (out.size() > limit) tooLarge(path, limit, what);
  }
}

void checkInputSize(std::string_view text, const std::string& source, std::size_t limit,
                    std::string_view what) {
  if (text.size() > limit) tooLarge(source, limit, what);
}

}  // namespace spillway
