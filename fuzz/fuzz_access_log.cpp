// libFuzzer: an access-log importer (engine formats, sourceFromMemory), as `import --format F`
// reads a file; one harness per format (SPILLWAY_FUZZ_FORMAT: Nginx, Envoy, Haproxy or Csv, set by
// fuzz/CMakeLists.txt). The first byte's low bit chooses --skip-bad-lines; every record is read.
// Any input must end in records or an InputError, never another exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spillway/formats/source.hpp"
#include "spillway/input_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using spillway::formats::Format;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  spillway::formats::ImportOptions opt;
  opt.skipBadLines = size > 0 && (data[0] & 1);
  try {
    auto src = spillway::formats::sourceFromMemory(Format::SPILLWAY_FUZZ_FORMAT, "fuzz", in, opt);
    spillway::CallRecord rec;
    while (src->next(rec)) {
    }
  } catch (const spillway::InputError&) {
  }
  return 0;
}
