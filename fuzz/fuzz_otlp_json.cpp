// libFuzzer: the OTLP/JSON request decoder (engine/src/formats/otlp.cpp, decodeOtlpJson) and
// the file importer over the same bytes (one request per file or per line).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "spillway/formats/otlp.hpp"
#include "spillway/formats/source.hpp"
#include "spillway/input_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  try {
    spillway::formats::OtlpBatch batch;
    spillway::formats::decodeOtlpJson(in, batch, "fuzz");
    if (batch.calls.size() + batch.notCalls + batch.invalid != batch.spans) std::abort();
  } catch (const spillway::InputError&) {
  }
  try {
    spillway::formats::ImportOptions opt;
    opt.skipBadLines = true;
    auto src =
        spillway::formats::sourceFromMemory(spillway::formats::Format::Otlp, "fuzz", in, opt);
    spillway::CallRecord rec;
    while (src->next(rec)) {
    }
  } catch (const spillway::InputError&) {
  }
  return 0;
}
