// libFuzzer: the Prometheus query_range response parser (engine/src/formats/prometheus.cpp)
// through formats::sourceFromMemory, the way `spillway-cli import --format prometheus` reads.
#include <cstddef>
#include <cstdint>
#include <string>

#include "spillway/formats/source.hpp"
#include "spillway/input_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  for (const bool skip : {true, false}) {
    try {
      spillway::formats::ImportOptions opt;
      opt.skipBadLines = skip;
      auto src = spillway::formats::sourceFromMemory(spillway::formats::Format::Prometheus, "fuzz",
                                                     in, opt);
      spillway::formats::AggregateSample s;
      spillway::CallRecord rec;
      if (src->aggregates()) {
        while (src->nextAggregate(s)) {
        }
      } else {
        while (src->next(rec)) {
        }
      }
    } catch (const spillway::InputError&) {
    }
  }
  return 0;
}
