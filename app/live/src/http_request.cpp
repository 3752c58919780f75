// Incremental HTTP/1.1 request parsing (RFC 9112), strict where it matters for safety:
// bounded sizes, token-only header names, a single valid Content-Length, chunked request
// bodies only where enabled (model clients and nginx send Content-Length; Node's OTLP exporter
// streams chunked) and never together with a Content-Length (request smuggling).
#include "spillway/live/http_request.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace spillway::live {
namespace {

bool isTokenChar(unsigned char c) {
  // tchar of RFC 9110 §5.6.2.
  if (std::isalnum(c)) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Does a comma-separated header value (Connection) hold `token`, case-insensitively?
bool hasToken(std::string_view value, std::string_view token) {
  std::size_t pos = 0;
  while (pos <= value.size()) {
    const std::size_t comma = value.find(',', pos);
    const std::string_view item =
        trim(value.substr(pos, comma == std::string_view::npos ? value.npos : comma - pos));
    if (lower(item) == token) return true;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return false;
}

}  // namespace

std::optional<std::string_view> HttpRequest::header(std::string_view lowerName) const {
  for (const auto& [k, v] : headers)
    if (k == lowerName) return std::string_view(v);
  return std::nullopt;
}

std::string_view HttpRequest::path() const {
  const std::string_view t(target);
  return t.substr(0, t.find('?'));
}

HttpRequestParser::State HttpRequestParser::feed(std::string_view bytes) {
  if (state_ == State::Error) return state_;
  // A Content-Length body goes straight into the request: a large body is copied once.
  if (state_ == State::NeedMore && haveHead_ && !chunked_ && buf_.empty()) {
    const std::size_t n = std::min(bytes.size(), bodyLength_ - cur_.body.size());
    cur_.body.append(bytes.substr(0, n));
    bytes.remove_prefix(n);
  }
  buf_.append(bytes);
  if (state_ == State::Ready) return state_;  // the caller has not taken the last one yet
  return state_ = parse();
}

HttpRequest HttpRequestParser::take() {
  HttpRequest r = std::move(cur_);
  cur_ = HttpRequest{};
  haveHead_ = false;
  bodyLength_ = 0;
  chunked_ = false;
  chunk_ = Chunk::Size;
  chunkLeft_ = trailerBytes_ = 0;
  state_ = State::NeedMore;
  if (!buf_.empty()) state_ = parse();
  return r;
}

HttpRequestParser::State HttpRequestParser::fail(int status, std::string message) {
  errorStatus_ = status;
  errorMessage_ = std::move(message);
  buf_.clear();
  return State::Error;
}

HttpRequestParser::State HttpRequestParser::parse() {
  if (!haveHead_) {
    // RFC 9112 §2.2: ignore empty lines before the request line (keep-alive leftovers).
    while (buf_.size() >= 2 && buf_[0] == '\r' && buf_[1] == '\n') buf_.erase(0, 2);
    const std::size_t end = buf_.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (buf_.size() > limits_.maxHeaderBytes)
        return fail(
            431, "request header larger than " + std::to_string(limits_.maxHeaderBytes) + " bytes");
      return State::NeedMore;
    }
    if (end + 4 > limits_.maxHeaderBytes)
      return fail(
          431, "request header larger than " + std::to_string(limits_.maxHeaderBytes) + " bytes");
    if (!parseHead(std::string_view(buf_).substr(0, end + 2))) return State::Error;
    buf_.erase(0, end + 4);
    haveHead_ = true;
    if (!chunked_ && bodyLength_) {
      // Room for the whole body up to a bound (a declared length alone is no reason to hold
      // memory; beyond the bound the body grows as it arrives).
      if (bodyBuffer) cur_.body = bodyBuffer(bodyLength_);
      cur_.body.reserve(std::min<std::size_t>(bodyLength_, 1 << 20));
    }
  }
  if (chunked_) return parseChunked();
  if (const std::size_t n = std::min(buf_.size(), bodyLength_ - cur_.body.size())) {
    cur_.body.append(buf_, 0, n);
    buf_.erase(0, n);
  }
  return cur_.body.size() < bodyLength_ ? State::NeedMore : State::Ready;
}

// chunked-body = *chunk last-chunk trailer-section CRLF (RFC 9112 §7.1). Decoded bytes move
// to the body as they arrive; the consumed prefix of buf_ is erased once per call, so many
// tiny chunks cost linear time.
HttpRequestParser::State HttpRequestParser::parseChunked() {
  std::size_t off = 0;
  auto done = [this, &off](State st) {
    if (st != State::Error) buf_.erase(0, off);
    return st;
  };
  constexpr std::size_t kMaxSizeLine = 1024;  // hex size + extensions
  for (;;) {
    const std::string_view rest = std::string_view(buf_).substr(off);
    switch (chunk_) {
      case Chunk::Size: {
        const std::size_t eol = rest.find("\r\n");
        if (eol == std::string_view::npos) {
          if (rest.size() > kMaxSizeLine) return fail(400, "chunk size line too long");
          return done(State::NeedMore);
        }
        if (eol > kMaxSizeLine) return fail(400, "chunk size line too long");
        const std::string_view line = rest.substr(0, eol);
        std::size_t i = 0;
        std::uint64_t size = 0;
        while (i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i]))) {
          if (i == 15) return fail(400, "chunk size too large");
          const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(line[i])));
          size = size * 16 + static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
          ++i;
        }
        const std::string_view ext = line.substr(i);
        if (i == 0 ||
            (!ext.empty() && ext.front() != ';' && ext.front() != ' ' && ext.front() != '\t'))
          return fail(400, "invalid chunk size");
        if (std::any_of(ext.begin(), ext.end(), [](char c) {
              const auto u = static_cast<unsigned char>(c);
              return (u < 0x20 && u != '\t') || u == 0x7f;
            }))
          return fail(400, "control character in a chunk extension");
        if (size > limits_.maxBodyBytes - cur_.body.size())
          return fail(
              413, "request body larger than " + std::to_string(limits_.maxBodyBytes) + " bytes");
        off += eol + 2;
        chunkLeft_ = static_cast<std::size_t>(size);
        chunk_ = size == 0 ? Chunk::Trailer : Chunk::Data;
        break;
      }
      case Chunk::Data: {
        const std::size_t n = std::min(chunkLeft_, rest.size());
        cur_.body.append(rest.substr(0, n));
        off += n;
        chunkLeft_ -= n;
        if (chunkLeft_) return done(State::NeedMore);
        chunk_ = Chunk::DataEnd;
        break;
      }
      case Chunk::DataEnd:
        if (rest.size() < 2) return done(State::NeedMore);
        if (rest[0] != '\r' || rest[1] != '\n') return fail(400, "chunk data not followed by CRLF");
        off += 2;
        chunk_ = Chunk::Size;
        break;
      case Chunk::Trailer: {
        // Trailer fields are read and dropped: nothing here needs them.
        const std::size_t eol = rest.find("\r\n");
        if (eol == std::string_view::npos) {
          if (trailerBytes_ + rest.size() > limits_.maxHeaderBytes)
            return fail(431, "trailer section larger than " +
                                 std::to_string(limits_.maxHeaderBytes) + " bytes");
          return done(State::NeedMore);
        }
        off += eol + 2;
        if (eol == 0) return done(State::Ready);
        trailerBytes_ += eol + 2;
        if (trailerBytes_ > limits_.maxHeaderBytes)
          return fail(431, "trailer section larger than " + std::to_string(limits_.maxHeaderBytes) +
                               " bytes");
        break;
      }
    }
  }
}

bool HttpRequestParser::parseHead(std::string_view head) {
  // head: request line and header lines, each ending in CRLF.
  auto nextLine = [&head](std::string_view& line) {
    const std::size_t eol = head.find("\r\n");
    if (eol == std::string_view::npos) return false;
    line = head.substr(0, eol);
    head.remove_prefix(eol + 2);
    return true;
  };
  std::string_view line;
  nextLine(line);
  if (!parseRequestLine(line)) return false;

  std::optional<std::size_t> contentLength;
  bool chunked = false;
  while (nextLine(line)) {
    if (!parseHeaderField(line, contentLength, chunked)) return false;
  }
  if (chunked && contentLength) {
    fail(400, "both Content-Length and Transfer-Encoding");
    return false;
  }
  if (chunked && cur_.minorVersion == 0) {
    fail(400, "Transfer-Encoding in an HTTP/1.0 request");
    return false;
  }
  chunked_ = chunked;
  bodyLength_ = contentLength.value_or(0);
  if (bodyLength_ > limits_.maxBodyBytes) {
    fail(413, "request body larger than " + std::to_string(limits_.maxBodyBytes) + " bytes");
    return false;
  }
  const auto conn = cur_.header("connection");
  if (cur_.minorVersion == 0)
    cur_.keepAlive = conn && hasToken(*conn, "keep-alive");
  else
    cur_.keepAlive = !(conn && hasToken(*conn, "close"));
  return true;
}

bool HttpRequestParser::parseRequestLine(std::string_view line) {
  // request-line = method SP request-target SP HTTP-version
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == 0 || sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != line.npos) {
    fail(400, "malformed request line");
    return false;
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!std::all_of(method.begin(), method.end(),
                   [](char c) { return isTokenChar(static_cast<unsigned char>(c)); })) {
    fail(400, "malformed method");
    return false;
  }
  if (target.empty() || target.front() != '/' ||
      std::any_of(target.begin(), target.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u <= 0x20 || u == 0x7f;
      })) {
    fail(400, "malformed request target (expected an origin-form path)");
    return false;
  }
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' ||
      !std::isdigit(static_cast<unsigned char>(version[5])) ||
      !std::isdigit(static_cast<unsigned char>(version[7]))) {
    fail(400, "malformed HTTP version");
    return false;
  }
  if (version[5] != '1') {
    fail(505, "only HTTP/1.x is served");
    return false;
  }
  cur_.method = std::string(method);
  cur_.target = std::string(target);
  cur_.minorVersion = version[7] - '0';
  return true;
}

bool HttpRequestParser::parseHeaderField(std::string_view line,
                                         std::optional<std::size_t>& contentLength, bool& chunked) {
  if (cur_.headers.size() >= limits_.maxHeaders) {
    fail(431, "more than " + std::to_string(limits_.maxHeaders) + " header fields");
    return false;
  }
  if (!line.empty() && (line.front() == ' ' || line.front() == '\t')) {
    fail(400, "obsolete header line folding");
    return false;
  }
  const std::size_t colon = line.find(':');
  const std::string_view name = line.substr(0, colon);
  if (colon == std::string_view::npos || name.empty() ||
      !std::all_of(name.begin(), name.end(),
                   [](char c) { return isTokenChar(static_cast<unsigned char>(c)); })) {
    fail(400, "malformed header field");
    return false;
  }
  const std::string_view value = trim(line.substr(colon + 1));
  if (std::any_of(value.begin(), value.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return (u < 0x20 && u != '\t') || u == 0x7f;
      })) {
    fail(400, "control character in header '" + std::string(name) + "'");
    return false;
  }
  std::string key = lower(name);
  if (key == "content-length") {
    if (value.empty() || value.size() > 18 || !std::all_of(value.begin(), value.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      fail(400, "invalid Content-Length");
      return false;
    }
    const std::size_t n = std::stoull(std::string(value));
    if (contentLength && *contentLength != n) {
      fail(400, "conflicting Content-Length headers");
      return false;
    }
    contentLength = n;
  } else if (key == "transfer-encoding") {
    // Only a lone "chunked" (no other codings, no repeats) where chunked bodies are enabled.
    if (!limits_.chunkedBodies || chunked || lower(value) != "chunked") {
      fail(501, limits_.chunkedBodies ? "only Transfer-Encoding: chunked is supported"
                                      : "Transfer-Encoding is not supported; send Content-Length");
      return false;
    }
    chunked = true;
  }
  cur_.headers.emplace_back(std::move(key), std::string(value));
  return true;
}

std::string_view reasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return status >= 500 ? "Server Error" : status >= 400 ? "Client Error" : "Status";
  }
}

}  // namespace spillway::live
