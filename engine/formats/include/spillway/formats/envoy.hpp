#pragma once
// Envoy JSON access logs (json_format with %START_TIME%, %UPSTREAM_HOST%, %RESPONSE_CODE%,
// %DURATION%, %RESPONSE_FLAGS%; key names via the field map, docs/formats.md).
#include <string_view>

#include "spillway/outcome.hpp"

namespace spillway::formats {

// How a call ended from %RESPONSE_FLAGS% ("-", "UT", "UF,URX" …) and %RESPONSE_CODE%:
// UT → timeout; UR/UC/DC → reset; UF/UH/UO/URX/LH → error; otherwise by status (0 → error).
Outcome envoyOutcome(std::string_view flags, int status);

}  // namespace spillway::formats
