// The OTLP/HTTP receiver: one QTcpServer, requests parsed by HttpRequestParser and answered
// synchronously (decode → queue → answer), the intake queue drained by the event loop in
// bounded turns so that new requests are read, and shed when the queue is full, while the
// sink catches up. Answers follow the OTLP/HTTP spec (opentelemetry-proto
// docs/specification.md): the response in the request's encoding, google.rpc.Status bodies
// for errors, Retry-After on 429 / 503.
#include "spillway/live/otlp_receiver.hpp"

#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include <algorithm>
#include <cctype>

#include <zlib.h>

#include "spillway/input_error.hpp"
#include "spillway/live/otlp_protobuf.hpp"

namespace spillway::live {

namespace {

constexpr qint64 kSocketBuffer = 64 * 1024;      // Qt stops reading a socket past this
constexpr qint64 kMaxPendingWrite = 256 * 1024;  // a client that does not read is not read

std::string lowerTrim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The media type without parameters: "application/json; charset=utf-8" → "application/json".
std::string mediaType(std::string_view v) {
  return lowerTrim(v.substr(0, v.find(';')));
}

std::string jsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

// google.rpc.Code for an HTTP status, as grpc-gateway maps them.
int rpcCode(int status) {
  switch (status) {
    case 400:
      return 3;  // INVALID_ARGUMENT
    case 401:
      return 16;  // UNAUTHENTICATED
    case 404:
      return 5;  // NOT_FOUND
    case 408:
      return 4;  // DEADLINE_EXCEEDED
    case 413:
    case 429:
    case 431:
      return 8;  // RESOURCE_EXHAUSTED
    case 503:
      return 14;  // UNAVAILABLE
    default:
      return status >= 500 ? 13 : 9;  // INTERNAL, FAILED_PRECONDITION
  }
}

enum class Inflate { Ok, Bad, TooLarge };

// gzip → bytes, never more than `limit` (a small body may inflate a thousandfold).
Inflate gunzip(std::string_view in, std::size_t limit, std::string& out, std::string& error) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
    error = "cannot start zlib";
    return Inflate::Bad;
  }
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());  // the body limit keeps this far below 4 GiB
  out.clear();
  char buf[64 * 1024];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      error = std::string("gzip: ") + (z.msg ? z.msg : "corrupt or truncated stream");
      inflateEnd(&z);
      return Inflate::Bad;
    }
    const std::size_t got = sizeof buf - z.avail_out;
    if (out.size() + got > limit) {
      error = "gzip body inflates past " + std::to_string(limit) + " bytes";
      inflateEnd(&z);
      return Inflate::TooLarge;
    }
    out.append(buf, got);
    if (rc == Z_OK && got == 0 && z.avail_in == 0) {
      error = "gzip: truncated stream";
      inflateEnd(&z);
      return Inflate::Bad;
    }
  }
  inflateEnd(&z);
  return Inflate::Ok;
}

}  // namespace

// One client connection. `receiving` is set from a request's first byte to its last: the
// request timer runs from that first byte and is not restarted by later bytes, so a client
// that drips a byte at a time is cut off (slowloris) instead of holding the slot forever.
struct OtlpReceiver::Conn : QObject {
  Conn(QTcpSocket* s, const HttpLimits& l, QObject* parent)
      : QObject(parent), sock(s), parser(l), timer(this) {
    s->setParent(this);
    timer.setSingleShot(true);
  }
  QTcpSocket* sock;
  HttpRequestParser parser;
  QTimer timer;
  bool receiving = false;
  bool closing = false;
  bool keepAlive = true;
};

OtlpReceiver::OtlpReceiver(OtlpReceiverOptions opt, Sink sink, QObject* parent)
    : QObject(parent), opt_(std::move(opt)), sink_(std::move(sink)) {}

OtlpReceiver::~OtlpReceiver() = default;

bool OtlpReceiver::start() {
  server_ = new QTcpServer(this);
  if (!server_->listen(opt_.address, opt_.port)) {
    error_ = server_->errorString();
    return false;
  }
  port_ = server_->serverPort();
  connect(server_, &QTcpServer::newConnection, this, &OtlpReceiver::onNewConnection);
  return true;
}

void OtlpReceiver::onNewConnection() {
  while (QTcpSocket* s = server_->nextPendingConnection()) {
    s->setReadBufferSize(kSocketBuffer);
    auto* c = new Conn(s, opt_.limits, this);
    ++connections_;
    connect(s, &QTcpSocket::readyRead, c, [this, c] { onReadable(c); });
    connect(s, &QTcpSocket::bytesWritten, c, [this, c] {
      if (!c->closing && c->sock->bytesToWrite() < kMaxPendingWrite && c->sock->bytesAvailable())
        onReadable(c);
    });
    connect(s, &QTcpSocket::disconnected, c, [this, c] {
      --connections_;
      c->closing = true;
      c->timer.stop();
      c->deleteLater();
    });
    connect(&c->timer, &QTimer::timeout, c, [this, c] { onTimeout(c); });
    if (connections_ > opt_.maxConnections) {
      ++stats_.shed;
      c->keepAlive = false;
      respondStatus(c, 503, false, "too many connections",
                    "Retry-After: " + QByteArray::number(opt_.retryAfterSeconds) + "\r\n");
      continue;
    }
    armTimer(c);
  }
}

void OtlpReceiver::armTimer(Conn* c) {
  c->timer.start(c->receiving ? opt_.requestTimeoutMs : opt_.idleTimeoutMs);
}

void OtlpReceiver::onTimeout(Conn* c) {
  if (c->closing) return;
  if (!c->receiving) {  // idle keep-alive connection: close quietly
    c->closing = true;
    c->sock->disconnectFromHost();
    return;
  }
  ++stats_.timeouts;
  c->keepAlive = false;
  respondStatus(c, 408, false,
                "request not received within " + std::to_string(opt_.requestTimeoutMs) + " ms");
}

void OtlpReceiver::onReadable(Conn* c) {
  if (c->closing) return;
  // Backpressure: answers the client has not read yet stay bounded.
  if (c->sock->bytesToWrite() >= kMaxPendingWrite) return;
  const QByteArray data = c->sock->readAll();
  if (data.isEmpty()) return;
  if (!c->receiving) {
    c->receiving = true;
    armTimer(c);
  }
  auto st = c->parser.feed(std::string_view(data.constData(), data.size()));
  // Pipelined requests are answered in order; each answer is small and synchronous.
  bool completed = false;
  while (st == HttpRequestParser::State::Ready && !c->closing) {
    const HttpRequest req = c->parser.take();
    ++stats_.requests;
    completed = true;
    c->keepAlive = req.keepAlive;
    handle(c, req);
    st = c->parser.state();
  }
  if (c->closing) return;
  if (st == HttpRequestParser::State::Error) {
    ++stats_.requests;
    ++stats_.rejected4xx;
    c->keepAlive = false;
    respondStatus(c, c->parser.errorStatus(), false, c->parser.errorMessage());
    return;
  }
  // After a complete request, a partial next one starts its own clock, else the connection is
  // idle. Without one, the running request's clock goes on from its first byte.
  if (completed) {
    c->receiving = c->parser.midRequest();
    armTimer(c);
  }
}

void OtlpReceiver::handle(Conn* c, const HttpRequest& req) {
  const auto ctype = req.header("content-type");
  const std::string media = ctype ? mediaType(*ctype) : std::string();
  const bool protobuf = media == "application/x-protobuf" || media == "application/protobuf";
  auto reject = [&](int status, const std::string& msg, const QByteArray& extra = {}) {
    ++stats_.rejected4xx;
    respondStatus(c, status, protobuf, msg, extra);
  };
  if (!opt_.bearerToken.empty()) {
    // Constant-time comparison: the token's bytes do not leak through the answer's timing.
    const std::string want = "Bearer " + opt_.bearerToken;
    const std::string_view got = req.header("authorization").value_or("");
    unsigned diff = got.size() != want.size();
    for (std::size_t i = 0; i < want.size(); ++i)
      diff |= static_cast<unsigned char>(want[i]) ^
              static_cast<unsigned char>(i < got.size() ? got[i] : 0);
    if (diff) return reject(401, "missing or wrong bearer token", "WWW-Authenticate: Bearer\r\n");
  }
  if (req.path() != "/v1/traces")
    return reject(404, "no route " + std::string(req.path()) + " (OTLP traces: POST /v1/traces)");
  if (req.method != "POST") return reject(405, "use POST", "Allow: POST\r\n");
  if (!protobuf && media != "application/json")
    return reject(415, "Content-Type must be application/json or application/x-protobuf, got '" +
                           std::string(ctype.value_or("")) + "'");
  std::string inflated;
  std::string_view body = req.body;
  const std::string encoding = lowerTrim(req.header("content-encoding").value_or(""));
  if (encoding == "gzip") {
    std::string err;
    switch (gunzip(body, opt_.maxInflatedBytes, inflated, err)) {
      case Inflate::Ok:
        body = inflated;
        break;
      case Inflate::Bad:
        return reject(400, err);
      case Inflate::TooLarge:
        return reject(413, err);
    }
  } else if (!encoding.empty() && encoding != "identity") {
    return reject(415, "Content-Encoding '" + encoding + "' is not supported (gzip is)");
  }

  formats::OtlpBatch batch;
  if (protobuf) {
    std::string err;
    if (!decodeOtlpProtobuf(body, batch, err)) return reject(400, "protobuf: " + err);
  } else {
    try {
      formats::decodeOtlpJson(body, batch, "body");
    } catch (const InputError& e) {
      return reject(400, e.what());
    }
  }
  stats_.spans += batch.spans;
  // Shed before acknowledging: a 200 promises that every call reaches the sink. A batch larger
  // than the whole bound is taken when the queue is empty, or it could never be.
  const std::size_t n = batch.calls.size();
  if (n && queued_ && queued_ + n > opt_.maxQueuedCalls) {
    ++stats_.shed;
    respondStatus(c, 429, protobuf,
                  "intake queue full (" + std::to_string(queued_) + " calls waiting); retry later",
                  "Retry-After: " + QByteArray::number(opt_.retryAfterSeconds) + "\r\n");
    return;
  }
  if (n) {
    queue_.push_back(Batch{std::move(batch.calls), 0, std::chrono::steady_clock::now()});
    queued_ += n;
    stats_.maxQueued = std::max(stats_.maxQueued, queued_);
    stats_.callsAcked += n;
    scheduleDrain();
  }
  const std::uint64_t rejected = batch.notCalls + batch.invalid;
  std::string message;
  if (rejected) {
    ++stats_.partial;
    stats_.spansRejected += rejected;
    if (batch.notCalls)
      message = std::to_string(batch.notCalls) + " span(s) are not GenAI calls (ignored)";
    if (batch.invalid) {
      if (!message.empty()) message += "; ";
      message += std::to_string(batch.invalid) + " invalid span(s), first: " + batch.firstError;
    }
  }
  ++stats_.accepted;
  if (protobuf) {
    respond(c, 200, true, encodeOtlpProtobufResponse(rejected, message));
  } else if (rejected) {
    respond(c, 200, false,
            "{\"partialSuccess\":{\"rejectedSpans\":\"" + std::to_string(rejected) +
                "\",\"errorMessage\":\"" + jsonEscape(message) + "\"}}");
  } else {
    respond(c, 200, false, "{}");
  }
}

void OtlpReceiver::respondStatus(Conn* c, int status, bool protobuf, const std::string& message,
                                 const QByteArray& extraHeaders) {
  if (protobuf)
    respond(c, status, true, encodeRpcStatusProtobuf(rpcCode(status), message), extraHeaders);
  else
    respond(c, status, false,
            "{\"code\":" + std::to_string(rpcCode(status)) + ",\"message\":\"" +
                jsonEscape(message) + "\"}",
            extraHeaders);
}

void OtlpReceiver::respond(Conn* c, int status, bool protobuf, const std::string& body,
                           const QByteArray& extraHeaders) {
  const bool keep = c->keepAlive && !c->closing;
  QByteArray out =
      "HTTP/1.1 " + QByteArray::number(status) + ' ' +
      QByteArray::fromStdString(std::string(reasonPhrase(status))) + "\r\nContent-Type: " +
      (protobuf ? QByteArray("application/x-protobuf") : QByteArray("application/json")) +
      "\r\nContent-Length: " + QByteArray::number(static_cast<qint64>(body.size())) +
      "\r\nConnection: " + (keep ? "keep-alive" : "close") + "\r\n" + extraHeaders + "\r\n";
  out.append(body.data(), static_cast<qsizetype>(body.size()));
  c->sock->write(out);
  emit requestAnswered(status);
  if (!keep) {
    c->closing = true;
    c->timer.stop();
    c->sock->disconnectFromHost();  // after the answer is written
  }
}

void OtlpReceiver::scheduleDrain() {
  if (drainScheduled_ || paused_ || queue_.empty()) return;
  drainScheduled_ = true;
  QTimer::singleShot(0, this, [this] {
    drainScheduled_ = false;
    drainSome(opt_.drainPerTurn);
    scheduleDrain();  // the rest on a later turn: sockets are read in between
  });
}

void OtlpReceiver::drainSome(std::size_t budget) {
  std::size_t applied = 0;
  while (!queue_.empty() && applied < budget) {
    Batch& b = queue_.front();
    const std::size_t take = std::min(budget - applied, b.calls.size() - b.next);
    for (std::size_t i = 0; i < take; ++i) sink_(b.calls[b.next + i]);
    b.next += take;
    applied += take;
    if (b.next == b.calls.size()) {
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::steady_clock::now() - b.received)
                          .count();
      stats_.maxLatencyUs = std::max<std::int64_t>(stats_.maxLatencyUs, us);
      const std::size_t calls = b.calls.size();
      queue_.pop_front();
      if (onBatchApplied) onBatchApplied(calls, us);
    }
  }
  queued_ -= applied;
  stats_.callsApplied += applied;
  if (applied) emit callsApplied(static_cast<int>(applied));
}

void OtlpReceiver::drain() {
  drainSome(queued_);
}

void OtlpReceiver::setPaused(bool paused) {
  paused_ = paused;
  scheduleDrain();
}

}  // namespace spillway::live
