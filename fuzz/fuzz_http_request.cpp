// libFuzzer: the incremental HTTP/1.1 request parser (app/live http_request.hpp) of the OTLP
// receiver and the fake instances. The first byte picks the limits (chunked bodies on or off)
// and how the rest is cut into feed() calls, as TCP would deliver it; every request that
// parses is taken. The parser must never throw or crash, and an error is one of the statuses
// its header promises.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "spillway/live/http_request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t mode = data[0];
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  spillway::live::HttpLimits limits;
  limits.chunkedBodies = mode & 1;
  limits.maxHeaderBytes = (mode & 2) ? 256 : 16 * 1024;
  limits.maxBodyBytes = (mode & 4) ? 64 : 1024 * 1024;
  limits.maxHeaders = (mode & 8) ? 4 : 100;
  const std::size_t piece = 1 + (mode >> 4) * 7;  // 1 … 106 bytes per read
  spillway::live::HttpRequestParser parser(limits);
  using State = spillway::live::HttpRequestParser::State;
  while (!in.empty()) {
    const std::size_t n = std::min(piece, in.size());
    State st = parser.feed(in.substr(0, n));
    in.remove_prefix(n);
    while (st == State::Ready) {
      const spillway::live::HttpRequest r = parser.take();
      if (r.body.size() > limits.maxBodyBytes) std::abort();
      st = parser.state();
    }
    if (st == State::Error) {
      const int s = parser.errorStatus();
      if (s != 400 && s != 408 && s != 413 && s != 417 && s != 431 && s != 501 && s != 505)
        std::abort();
      break;
    }
  }
  return 0;
}
