#pragma once
// Size limits of the input files Spillway reads (docs/limits.md) and the one bounded reader
// they all go through. A file read whole is read with a cap — never sized up front — so a
// special file (/dev/zero, /dev/urandom, a FIFO) or a huge file ends in a named error after at
// most `limit + 1` bytes, not in std::bad_alloc. Streamed traces (JSONL, CSV, nginx, Envoy)
// may be of any size; only one line is held at a time, and a line has a limit too.
#include <cstddef>
#include <string>
#include <string_view>

namespace spillway {

namespace input_limits {
inline constexpr std::size_t kKiB = 1024, kMiB = 1024 * kKiB;
// YAML documents: yaml-cpp holds about 100 bytes of nodes per byte of text, so these keep a
// parse under ~100 MB. The largest real files are a few KiB (a policy ~1 KiB, seed-000 6 KiB).
inline constexpr std::size_t kPolicy = 256 * kKiB;
inline constexpr std::size_t kScenario = 1 * kMiB;  // with inline policies and many clients
inline constexpr std::size_t kSweepSpec = 256 * kKiB;
inline constexpr std::size_t kNativeConfig = 4 * kMiB;  // import-config / export --baseline
// Text read whole: fault annotations (JSONL, a few lines per fault).
inline constexpr std::size_t kFaults = 16 * kMiB;
// Traces that are read whole (OTLP JSON or protobuf, Prometheus, a trace for export
// --validate): their parsed form takes a few times the text.
inline constexpr std::size_t kWholeTrace = 256 * kMiB;
// One line of a streamed trace (JSONL, CSV, nginx, Envoy): the reader keeps one line in memory.
inline constexpr std::size_t kLine = 8 * kMiB;
}  // namespace input_limits

// Valid UTF-8: what a name or other text read from a file may hold, so that writing it back
// (YAML, JSON, a gateway's config) yields text that reads again (the YAML emitter's quoting
// rules misjudge invalid bytes).
bool isText(std::string_view s);

// "256 KiB", "8 MiB".
std::string formatByteLimit(std::size_t bytes);

// Reads `path` whole ("-" = stdin), at most `limit` bytes. Throws InputError(path, 0, "", ...)
// when it cannot be opened or read, or is larger than `limit` ("larger than the 256 KiB limit
// for a policy file"); `what` names the kind of file ("policy file").
std::string readInputFile(const std::string& path, std::size_t limit, std::string_view what);

// The same check for text already in memory (tests, the console's editor, built-in resources).
void checkInputSize(std::string_view text, const std::string& source, std::size_t limit,
                    std::string_view what);

}  // namespace spillway
