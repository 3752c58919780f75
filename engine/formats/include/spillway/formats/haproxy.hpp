#pragma once
// HAProxy JSON access logs: the log-format `spillway-cli export --target haproxy` writes in its
// header (spillway::exporter::haproxyLogFormat), its own timers and names as keys; key names
// via the field map (docs/formats.md).
#include <string_view>

#include "spillway/outcome.hpp"

namespace spillway::formats {

// How a call ended from the termination state (%ts: "--", "SD", "sH" …) and %ST: a server-side
// timeout (s?) → timeout; the server aborting once connected (SH, SD, SL) → reset; a failed
// connection (SC) → error; otherwise by status (none → error).
Outcome haproxyOutcome(std::string_view termination, int status);

}  // namespace spillway::formats
