// libFuzzer: the hand-written OTLP protobuf decoder (engine/formats/src/otlp_protobuf.cpp) and the
// span → call mapping behind it. Any input must decode or fail cleanly; a success must be
// self-consistent. The encoders run too, on what was decoded.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "spillway/formats/otlp_protobuf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  spillway::formats::OtlpBatch batch;
  std::string error;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  if (spillway::formats::decodeOtlpProtobuf(in, batch, error)) {
    if (batch.calls.size() + batch.notCalls + batch.invalid != batch.spans) std::abort();
    const std::string resp = spillway::formats::encodeOtlpProtobufResponse(
        batch.notCalls + batch.invalid, batch.firstError);
    if ((batch.notCalls + batch.invalid || !batch.firstError.empty()) && resp.empty()) std::abort();
  } else if (error.empty()) {
    std::abort();  // a failure always says why
  }
  return 0;
}
