#include "spillway/live/bearer_token.hpp"

#include <cctype>
#include <sstream>

#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"

namespace spillway::live {
namespace {

constexpr std::size_t kMaxTokenFileBytes = 64 * 1024;

std::string_view trimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// b64token of RFC 6750 §2.1: what may follow "Bearer " on the wire.
bool isB64TokenChar(unsigned char c) {
  return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' ||
         c == '=';
}

}  // namespace

std::string readBearerTokenFile(const std::string& path) {
  // Read with its bound: getline on /dev/zero held one endless line (5.4 GB in 8 s) before a
  // size was ever checked.
  std::istringstream in(readInputFile(path, kMaxTokenFileBytes, "token file"));
  std::string line;
  long lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    const std::string_view t = trimBlanks(line);
    if (t.empty() || t.front() == '#') continue;
    for (char c : t)
      if (!isB64TokenChar(static_cast<unsigned char>(c)))
        throw InputError(path, lineNo, "",
                         "the token has a character a bearer token cannot have (allowed: "
                         "letters, digits and -._~+/=)");
    return std::string(t);
  }
  throw InputError(path, 0, "",
                   "no token: the file has no line that is neither empty nor a # comment "
                   "(an empty token would turn authentication off)");
}

bool bearerMatches(std::string_view authorization, std::string_view token) {
  // credentials = auth-scheme 1*SP token68; the scheme is compared without regard to case.
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size()) return false;
  for (std::size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return false;
  std::string_view got = authorization.substr(kScheme.size());
  if (got.front() != ' ') return false;
  while (!got.empty() && got.front() == ' ') got.remove_prefix(1);
  // Constant time in the token's bytes: the answer's timing says nothing about how much of a
  // guess was right (the length is not secret enough to hide).
  unsigned diff = got.size() != token.size();
  for (std::size_t i = 0; i < token.size(); ++i)
    diff |= static_cast<unsigned char>(token[i]) ^
            static_cast<unsigned char>(i < got.size() ? got[i] : 0);
  return diff == 0 && !token.empty();
}

}  // namespace spillway::live
