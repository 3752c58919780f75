// libFuzzer: the envoy importer (engine formats, sourceFromMemory(Format::Envoy)), as `import
// --format envoy` reads a file. The first byte's low bit chooses --skip-bad-lines; every record
// is read. Any input must end in records or an InputError, never another exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spillway/formats/source.hpp"
#include "spillway/input_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  spillway::formats::ImportOptions opt;
  opt.skipBadLines = size > 0 && (data[0] & 1);
  try {
    auto src =
        spillway::formats::sourceFromMemory(spillway::formats::Format::Envoy, "fuzz", in, opt);
    spillway::CallRecord rec;
    while (src->next(rec)) {
    }
  } catch (const spillway::InputError&) {
  }
  return 0;
}
