#pragma once
// nginx JSON access logs (log_format ... escape=json). One log line is one client request;
// $upstream_addr / $upstream_status / $upstream_response_time hold one entry per upstream
// attempt ("10.0.0.1:8000, 10.0.0.2:8000" after a retry, " : " after an internal redirect to
// another upstream group), so a line yields one CallRecord per attempt (docs/formats.md).
#include <string_view>
#include <vector>

namespace spillway::formats {

// Splits an nginx upstream variable at ", " and " : " into its per-attempt entries.
std::vector<std::string_view> splitUpstreamList(std::string_view v);

}  // namespace spillway::formats
