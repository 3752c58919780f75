// libFuzzer: the canonical JSONL reader (engine JsonlReader::fromMemory), skipping bad lines
// or stopping at the first one, as the first byte's low bit says. One reader per input: each
// allocates and zero-fills a 4 MiB read buffer, which dominates the time per input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "spillway/input_error.hpp"
#include "spillway/telemetry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const bool skip = size > 0 && (data[0] & 1);
  try {
    auto r = spillway::JsonlReader::fromMemory("fuzz", in, skip);
    spillway::CallRecord rec;
    while (r->next(rec)) {
    }
  } catch (const spillway::InputError&) {
  }
  return 0;
}
