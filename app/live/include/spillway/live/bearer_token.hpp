#pragma once
// The shared secret of a live receiver (`listen --otlp-token-file`, the console's Live panel):
// read from a file, checked against "Authorization: Bearer <token>" (RFC 6750; the scheme name
// is case-insensitive, RFC 9110 §11.1). One reader for every front end, so a file that the CLI
// refuses is refused by the console too.
#include <string>
#include <string_view>

namespace spillway::live {

// The first line of FILE that is neither empty (after trimming blanks and a CR) nor a comment
// ('#' first), trimmed. Throws InputError(FILE, line, "", why) when the file cannot be read, holds
// no such line (an empty token would turn authentication off), is larger than 64 KiB, or the
// token has characters a bearer token cannot have (RFC 6750 b64token).
std::string readBearerTokenFile(const std::string& path);

// Whether an Authorization header value carries `token` with the Bearer scheme (any case).
// The token comparison takes the same time whatever bytes differ.
bool bearerMatches(std::string_view authorization, std::string_view token);

}  // namespace spillway::live
