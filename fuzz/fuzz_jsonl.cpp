// libFuzzer: the canonical JSONL reader (engine JsonlReader::fromMemory), skipping bad lines
// or stopping at the first one, as the first byte's low bit says. One reader per input: each
// allocates and zero-fills a 4 MiB read buffer, which dominates the time per input. Each line
// is also parsed both ways: a line the direct parse accepts must give simdjson's record.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "spillway/formats/jsonl_chunks.hpp"
#include "spillway/input_error.hpp"
#include "spillway/telemetry.hpp"

namespace {

bool same(const spillway::CallRecord& a, const spillway::CallRecord& b) {
  return a.ts == b.ts && a.latency == b.latency && a.status == b.status && a.outcome == b.outcome &&
         a.hasOutcome == b.hasOutcome && a.instance == b.instance && a.model == b.model &&
         a.tenant == b.tenant && a.route == b.route && a.session == b.session &&
         a.critical == b.critical && a.tokensIn == b.tokensIn && a.tokensOut == b.tokensOut;
}

void parseBothWays(std::string_view in) {
  static spillway::formats::JsonlLineParser parser;
  std::vector<char> buf;
  while (!in.empty()) {
    const std::size_t nl = in.find('\n');
    const std::string_view line = in.substr(0, nl);
    in.remove_prefix(nl == std::string_view::npos ? in.size() : nl + 1);
    buf.assign(line.begin(), line.end());
    buf.resize(line.size() + 64, '\0');  // simdjson's padding
    const std::string_view view(buf.data(), line.size());
    spillway::CallRecord direct, general;
    std::string field, err;
    if (spillway::formats::parseCanonicalLine(view, direct) &&
        (!parser.parseGeneral(view, buf.size(), general, field, err) || !same(direct, general)))
      std::abort();
  }
}

}  // namespace

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
  parseBothWays(in);
  return 0;
}
