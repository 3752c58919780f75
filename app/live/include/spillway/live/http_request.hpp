#pragma once
// A small incremental HTTP/1.1 request parser for the fake model instances and the OTLP
// receiver (docs/live.md says why it is hand-written): request line, headers, Content-Length
// bodies, chunked bodies where enabled (Node's HTTP client streams OTLP bodies chunked),
// keep-alive and pipelining. Header and body sizes are bounded; anything malformed becomes an error
// status (400, 413, 431, 501, 505), never an exception or a crash. No Qt: plain bytes in, requests
// out.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spillway::live {

struct HttpRequest {
  std::string method;    // "GET", "POST", … (case-sensitive, as RFC 9110 says)
  std::string target;    // "/v1/chat/completions"; the query string is kept
  int minorVersion = 1;  // HTTP/1.<minor>
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  bool keepAlive = true;

  // The first header of that (lower-case) name.
  std::optional<std::string_view> header(std::string_view lowerName) const;
  // The target without its query string.
  std::string_view path() const;
};

struct HttpLimits {
  std::size_t maxHeaderBytes = 16 * 1024;  // request line + headers
  std::size_t maxBodyBytes = 1024 * 1024;
  std::size_t maxHeaders = 100;
  // Accept "Transfer-Encoding: chunked" bodies (decoded; maxBodyBytes bounds the decoded
  // size, maxHeaderBytes the trailers). Off: 501, as the fake instances answer.
  bool chunkedBodies = false;
};

class HttpRequestParser {
 public:
  enum class State { NeedMore, Ready, Error };

  explicit HttpRequestParser(HttpLimits limits = {}) : limits_(limits) {}

  // Appends bytes and parses as far as possible. Ready: take() the request (further bytes,
  // a pipelined request, stay buffered). Error: errorStatus() / errorMessage() say why; the
  // connection must be answered and closed, the parser is not usable any more.
  State feed(std::string_view bytes);
  // After Ready: the request; parses the next one from buffered bytes (state() tells).
  HttpRequest take();
  // Where a Content-Length body starts (its length given): an empty string, whose capacity
  // the body may reuse. Unset: a new string.
  std::function<std::string(std::size_t length)> bodyBuffer;

  State state() const { return state_; }
  int errorStatus() const { return errorStatus_; }
  const std::string& errorMessage() const { return errorMessage_; }
  std::size_t buffered() const { return buf_.size(); }
  // Part of a request has arrived (a head without its whole body, or bytes of a head).
  bool midRequest() const { return haveHead_ || !buf_.empty(); }
  // The current request's head is parsed and its body is still due: head() is its method,
  // target and headers (body empty), so a server can answer before reading the body
  // (Expect: 100-continue, an early 401 or 503).
  bool headComplete() const { return haveHead_ && state_ == State::NeedMore; }
  const HttpRequest& head() const { return cur_; }
  // Body bytes of the current request received so far (after its head).
  std::size_t bodyBytesReceived() const { return haveHead_ ? cur_.body.size() + buf_.size() : 0; }
  // Bytes this parser holds: buffered input plus the body decoded so far.
  std::size_t bytesHeld() const { return buf_.size() + cur_.body.size(); }
  // The Content-Length of the current request once its head is parsed (0: none or chunked).
  std::size_t declaredBodyLength() const { return haveHead_ && !chunked_ ? bodyLength_ : 0; }

 private:
  State parse();
  State parseChunked();
  State fail(int status, std::string message);
  bool parseHead(std::string_view head);
  bool parseRequestLine(std::string_view line);
  // One header field line; tracks Content-Length and chunked across the head's fields.
  bool parseHeaderField(std::string_view line, std::optional<std::size_t>& contentLength,
                        bool& chunked);

  HttpLimits limits_;
  std::string buf_;
  State state_ = State::NeedMore;
  bool haveHead_ = false;
  std::size_t bodyLength_ = 0;
  // Chunked body: where the decoder is, bytes of the current chunk still due, trailer bytes.
  enum class Chunk { Size, Data, DataEnd, Trailer };
  bool chunked_ = false;
  Chunk chunk_ = Chunk::Size;
  std::size_t chunkLeft_ = 0, trailerBytes_ = 0;
  HttpRequest cur_;
  int errorStatus_ = 0;
  std::string errorMessage_;
};

// "Bad Request", "Payload Too Large", … for the status line.
std::string_view reasonPhrase(int status);

}  // namespace spillway::live
