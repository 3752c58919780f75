// Over 600 lines: one protocol end to end (HTTP framing, auth, gzip, both encodings, the
// spec's answers, the decoding threads and the bounded intake), which docs/live.md describes
// as one unit.
// The OTLP/HTTP receiver: one QTcpServer, requests parsed by HttpRequestParser; a request's
// body is inflated and decoded (on the decoding threads, or in place), then its calls are
// queued and it is answered, in the order requests arrived whole. The intake queue is drained
// by the event loop in bounded turns so that new requests are read, and shed when the queue is
// full, while the sink catches up. Answers follow the OTLP/HTTP spec (opentelemetry-proto
// docs/specification.md): the response in the request's encoding, google.rpc.Status bodies
// for errors, Retry-After on 429 / 503.
#include "spillway/live/otlp_receiver.hpp"

#include <QElapsedTimer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <zlib.h>

#include "spillway/formats/otlp_protobuf.hpp"
#include "spillway/input_error.hpp"
#include "spillway/live/bearer_token.hpp"

namespace spillway::live {

namespace {

constexpr qint64 kSocketBuffer = 64 * 1024;      // Qt stops reading a socket past this
constexpr qint64 kMaxPendingWrite = 256 * 1024;  // a client that does not read is not read
// Spare buffers (bodies, decoded calls): at most this many of each, each at most this large.
constexpr std::size_t kSpares = 8;
constexpr std::size_t kSpareBytes = 1 << 20;

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
    // A gzip body may hold several members (RFC 1952), each inflated in turn: reading only the
    // first acknowledged the others' spans and dropped them. Anything else after a member is
    // refused, never ignored.
    if (rc == Z_STREAM_END && z.avail_in > 0) {
      if (z.avail_in < 2 || z.next_in[0] != 0x1f || z.next_in[1] != 0x8b) {
        error = "gzip: " + std::to_string(z.avail_in) + " bytes after the end of the stream";
        inflateEnd(&z);
        return Inflate::Bad;
      }
      inflateReset(&z);
      rc = Z_OK;
    }
  }
  inflateEnd(&z);
  return Inflate::Ok;
}

}  // namespace

// One client connection and its clocks (ms on `clock`, started at accept). The deadline that
// applies depends on where the connection is: waiting for a request's first byte (a fresh
// connection: headerTimeoutMs; between keep-alive requests: idleTimeoutMs), in a request's head
// (headerTimeoutMs from its first byte) or in its body (a minimum average rate after a grace,
// and requestTimeoutMs overall). Later bytes never restart a clock, so a client that drips a
// byte at a time is cut off (slowloris) instead of holding its slot.
struct OtlpReceiver::Conn : QObject {
  Conn(QTcpSocket* s, const HttpLimits& l, QObject* parent)
      : QObject(parent), sock(s), parser(l), timer(this) {
    s->setParent(this);
    timer.setSingleShot(true);
    clock.start();
  }
  QTcpSocket* sock;
  HttpRequestParser parser;
  QTimer timer;
  QElapsedTimer clock;
  std::string peer;        // remote address, for the per-peer limit
  bool admitted = false;   // holds a connection slot
  bool fresh = true;       // no request yet
  bool receiving = false;  // a request's first byte has arrived
  bool headSeen = false;   // …and its head is parsed: the body is due
  bool closing = false;
  bool keepAlive = true;
  bool gone = false;   // disconnected while its request was being decoded
  Job* job = nullptr;  // its request with the decoders: nothing more is read or answered
  qint64 idleSinceMs = 0, requestStartMs = 0, bodyStartMs = 0;
  std::size_t held = 0;  // this connection's share of buffered_
};

// A request whose body is inflated and decoded off the receiver's thread. The worker writes
// status, error and batch, then sets `done`; the receiver's thread reads them only after.
struct OtlpReceiver::Job {
  Conn* conn = nullptr;
  std::string body;  // as received; freed once decoded
  bool protobuf = false, gzip = false;
  int status = 200;  // else refused (400, 413, 500) with `error`
  std::string error;
  formats::OtlpBatch batch;
  std::atomic<bool> done{false};
};

namespace {

// The body → calls, or the status a bad body is answered with.
void decodeBody(std::string_view body, bool protobuf, bool gzip, std::size_t maxInflated,
                int& status, std::string& error, formats::OtlpBatch& batch) {
  std::string inflated;
  if (gzip) {
    switch (gunzip(body, maxInflated, inflated, error)) {
      case Inflate::Ok:
        body = inflated;
        break;
      case Inflate::Bad:
        status = 400;
        return;
      case Inflate::TooLarge:
        status = 413;
        return;
    }
  }
  try {
    if (protobuf) {
      std::string err;
      if (!decodeOtlpProtobuf(body, batch, err)) {
        status = 400;
        error = "protobuf: " + err;
      }
    } else {
      formats::decodeOtlpJson(body, batch, "body");
    }
  } catch (const InputError& e) {
    status = 400;
    error = e.what();
  } catch (const std::exception& e) {  // out of memory: the request is refused, not the process
    status = 500;
    error = std::string("cannot decode the request: ") + e.what();
  }
  if (status != 200) batch.clear();
}

}  // namespace

// The decoding threads: a FIFO of jobs; a finished job wakes the receiver's thread once
// (onDecoded answers every finished job at the front of jobs_).
class OtlpReceiver::Decoders {
 public:
  Decoders(OtlpReceiver* rx, int threads) : rx_(rx) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
  }
  ~Decoders() {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  void submit(Job* j) {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      todo_.push_back(j);
    }
    cv_.notify_one();
  }
  // Called by the receiver's thread before it looks at the jobs: a job finished after this
  // wakes it again.
  void rearm() { wakePosted_.store(false); }
  void hold(bool held) {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      held_ = held;
    }
    cv_.notify_all();
  }

 private:
  void run() {
    for (;;) {
      Job* j = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || (!held_ && !todo_.empty()); });
        if (stop_) return;
        j = todo_.front();
        todo_.pop_front();
      }
      decodeBody(j->body, j->protobuf, j->gzip, rx_->opt_.maxInflatedBytes, j->status, j->error,
                 j->batch);
      j->body.clear();  // the buffer goes back to the receiver's spares
      j->done.store(true);
      if (!wakePosted_.exchange(true))
        QMetaObject::invokeMethod(
            rx_, [rx = rx_] { rx->onDecoded(); }, Qt::QueuedConnection);
    }
  }

  OtlpReceiver* rx_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job*> todo_;
  bool stop_ = false, held_ = false;
  std::atomic<bool> wakePosted_{false};
};

namespace {

// IPv4-mapped IPv6 addresses count as the IPv4 peer they are.
std::string peerKey(const QHostAddress& a) {
  bool v4 = false;
  const quint32 ip = a.toIPv4Address(&v4);
  return (v4 ? QHostAddress(ip) : a).toString().toStdString();
}

QByteArray retryAfter(int seconds) {
  return "Retry-After: " + QByteArray::number(seconds) + "\r\n";
}

}  // namespace

OtlpReceiver::OtlpReceiver(OtlpReceiverOptions opt, Sink sink, QObject* parent)
    : QObject(parent), opt_(std::move(opt)), sink_(std::move(sink)) {}

// The threads stop before the connections their jobs point to go.
OtlpReceiver::~OtlpReceiver() {
  decoders_.reset();
}

bool OtlpReceiver::start() {
  server_ = new QTcpServer(this);
  if (!server_->listen(opt_.address, opt_.port)) {
    error_ = server_->errorString();
    return false;
  }
  port_ = server_->serverPort();
  connect(server_, &QTcpServer::newConnection, this, &OtlpReceiver::onNewConnection);
  if (opt_.decodeThreads > 0 && !decoders_)
    decoders_ = std::make_unique<Decoders>(this, opt_.decodeThreads);
  return true;
}

void OtlpReceiver::onNewConnection() {
  while (QTcpSocket* s = server_->nextPendingConnection()) {
    s->setReadBufferSize(kSocketBuffer);
    auto* c = new Conn(s, opt_.limits, this);
    c->parser.bodyBuffer = [this](std::size_t) { return spareBody(); };
    c->peer = peerKey(s->peerAddress());
    conns_.insert(c);
    connect(s, &QTcpSocket::readyRead, c, [this, c] { onReadable(c); });
    connect(s, &QTcpSocket::bytesWritten, c, [this, c] {
      if (!c->closing && c->sock->bytesToWrite() < kMaxPendingWrite && c->sock->bytesAvailable())
        onReadable(c);
    });
    connect(s, &QTcpSocket::disconnected, c, [this, c] {
      c->closing = true;
      c->timer.stop();
      release(c);
      if (c->admitted) {
        c->admitted = false;
        --admitted_;
        if (auto it = perPeer_.find(c->peer); it != perPeer_.end() && --it->second <= 0)
          perPeer_.erase(it);
      }
      conns_.erase(c);
      if (c->job)
        c->gone = true;  // deleted once its job is back (answerDecoded)
      else
        c->deleteLater();
      maybeStopped();
    });
    connect(&c->timer, &QTimer::timeout, c, [this, c] { onTimeout(c); });
    admitConnection(c);
  }
}

// A slot per connection, at most maxConnectionsPerPeer of them per address: idle or slow
// connections from one host cannot take the slots every other client needs.
void OtlpReceiver::admitConnection(Conn* c) {
  auto refuse = [&](const std::string& why) {
    ++stats_.refusedConnections;
    ++stats_.shed;
    c->keepAlive = false;
    respondStatus(c, 503, false, why, retryAfter(opt_.retryAfterSeconds));
  };
  if (stopping_) return refuse("shutting down");
  if (admitted_ >= opt_.maxConnections)
    return refuse("too many connections (" + std::to_string(opt_.maxConnections) + ")");
  const auto it = perPeer_.find(c->peer);
  if (it != perPeer_.end() && it->second >= opt_.maxConnectionsPerPeer)
    return refuse("too many connections from " + c->peer + " (" +
                  std::to_string(opt_.maxConnectionsPerPeer) + " per address)");
  c->admitted = true;
  ++admitted_;
  ++perPeer_[c->peer];
  armTimer(c);
}

std::int64_t OtlpReceiver::deadlineMs(const Conn* c) const {
  if (!c->receiving) return c->idleSinceMs + (c->fresh ? opt_.headerTimeoutMs : opt_.idleTimeoutMs);
  const std::int64_t whole = c->requestStartMs + opt_.requestTimeoutMs;
  if (!c->headSeen) return std::min<std::int64_t>(whole, c->requestStartMs + opt_.headerTimeoutMs);
  // The body is on time while bytes so far ≥ rate × elapsed: the next check is when that
  // stops being true, never before the grace is over.
  const std::size_t rate = std::max<std::size_t>(1, opt_.minBodyBytesPerSecond);
  const std::size_t got = c->parser.bodyBytesReceived();
  const auto dueBy = static_cast<std::int64_t>(std::min<std::size_t>(
      (got + 1) * 1000 / rate, static_cast<std::size_t>(opt_.requestTimeoutMs)));
  return std::min<std::int64_t>(whole,
                                c->bodyStartMs + std::max<std::int64_t>(opt_.bodyGraceMs, dueBy));
}

void OtlpReceiver::armTimer(Conn* c) {
  if (c->closing) return;
  c->timer.start(static_cast<int>(std::max<std::int64_t>(0, deadlineMs(c) - c->clock.elapsed())));
}

void OtlpReceiver::onTimeout(Conn* c) {
  if (c->closing) {  // an answer the client does not read: give up on it
    c->sock->abort();
    return;
  }
  const qint64 now = c->clock.elapsed();
  if (now < deadlineMs(c)) return armTimer(c);  // more body arrived: a later deadline
  if (!c->receiving) {  // no request: close quietly (HTTP allows it between requests)
    ++stats_.idleClosed;
    closeQuietly(c);
    return;
  }
  ++stats_.timeouts;
  c->keepAlive = false;
  std::string why;
  if (now - c->requestStartMs >= opt_.requestTimeoutMs)
    why = "request not received within " + std::to_string(opt_.requestTimeoutMs) + " ms";
  else if (!c->headSeen)
    why = "request header not received within " + std::to_string(opt_.headerTimeoutMs) + " ms";
  else
    why = "request body slower than " + std::to_string(opt_.minBodyBytesPerSecond) + " bytes/s";
  respondStatus(c, 408, false, why);
}

void OtlpReceiver::closeQuietly(Conn* c) {
  c->closing = true;
  release(c);
  c->timer.start(std::max(1, opt_.headerTimeoutMs));  // then abort (onTimeout)
  c->sock->disconnectFromHost();  // once what is written has gone (may disconnect at once)
}

void OtlpReceiver::onReadable(Conn* c) {
  if (c->closing || c->job) return;  // a request being decoded is answered first
  // Backpressure: answers the client has not read yet stay bounded.
  if (c->sock->bytesToWrite() >= kMaxPendingWrite) return;
  // Read into one buffer reused for every read (no allocation per read).
  const auto avail = static_cast<std::size_t>(std::max<qint64>(c->sock->bytesAvailable(), 1));
  if (readBuf_.size() < avail) readBuf_.resize(avail);
  const qint64 got = c->sock->read(readBuf_.data(), static_cast<qint64>(avail));
  if (got <= 0) return;
  const std::string_view data(readBuf_.data(), static_cast<std::size_t>(got));
  const qint64 now = c->clock.elapsed();
  if (!c->receiving) {
    c->receiving = true;
    c->fresh = false;
    c->requestStartMs = now;
  }
  // The bytes just read count before they are parsed: a request that arrived whole in one
  // read is held too.
  accountBuffered(c, data.size());
  if (c->closing) return;
  c->parser.feed(data);
  serve(c, now, false);
}

void OtlpReceiver::serve(Conn* c, qint64 now, bool completed) {
  auto st = c->parser.state();
  // Pipelined requests are answered in order. While stopping, the last request a connection
  // has sent is answered with Connection: close.
  while (st == HttpRequestParser::State::Ready && !c->closing) {
    HttpRequest req = c->parser.take();
    ++stats_.requests;
    completed = true;
    c->headSeen = false;
    const bool more = c->parser.state() == HttpRequestParser::State::Ready;
    c->keepAlive = req.keepAlive && (!stopping_ || more);
    handle(c, req);
    keepBody(std::move(req.body));  // unless the decoders have it
    // With the decoders: no clock runs for the connection until its answer, which resumes
    // here; its body stays counted in the buffer budget until then.
    if (c->job) return c->timer.stop();
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
    if (c->receiving)
      c->requestStartMs = now;
    else
      c->idleSinceMs = now;
  }
  if (c->receiving && !c->headSeen && c->parser.headComplete()) {
    c->headSeen = true;
    c->bodyStartMs = now;
    onHeadComplete(c);
    if (c->closing) return;
  }
  accountBuffered(c);
  if (c->closing) return;
  if (stopping_ && !c->receiving) return closeQuietly(c);  // answered; no more requests now
  armTimer(c);
}

// Before the body is read: its declared size against the global buffer budget, and an
// Expect: 100-continue request is answered now — 100 Continue when its head is acceptable,
// else its final status without reading the body.
void OtlpReceiver::onHeadComplete(Conn* c) {
  accountBuffered(c);
  if (c->closing) return;
  const HttpRequest& head = c->parser.head();
  const auto expect = head.header("expect");
  if (!expect || head.minorVersion == 0) return;  // HTTP/1.0 ignores 100-continue
  if (lowerTrim(*expect) != "100-continue") {
    ++stats_.rejected4xx;
    c->keepAlive = false;
    respondStatus(c, 417, false, "only Expect: 100-continue is supported");
    return;
  }
  if (refuseEarly(c, head)) return;
  ++stats_.continues;
  c->sock->write("HTTP/1.1 100 Continue\r\n\r\n");
}

// The checks handle() makes that need no body. Answers and closes (the body may already be on
// its way and is not read) when one fails.
bool OtlpReceiver::refuseEarly(Conn* c, const HttpRequest& head) {
  const auto ctype = head.header("content-type");
  const std::string media = ctype ? mediaType(*ctype) : std::string();
  const bool protobuf = media == "application/x-protobuf" || media == "application/protobuf";
  const std::string encoding = lowerTrim(head.header("content-encoding").value_or(""));
  int status = 0;
  std::string why;
  QByteArray extra;
  if (!opt_.bearerToken.empty() &&
      !bearerMatches(head.header("authorization").value_or(""), opt_.bearerToken)) {
    status = 401;
    why = "missing or wrong bearer token";
    extra = "WWW-Authenticate: Bearer\r\n";
  } else if (head.path() != "/v1/traces") {
    status = 404;
    why = "no route " + std::string(head.path()) + " (OTLP traces: POST /v1/traces)";
  } else if (head.method != "POST") {
    status = 405;
    why = "use POST";
    extra = "Allow: POST\r\n";
  } else if (!protobuf && media != "application/json") {
    status = 415;
    why = "Content-Type must be application/json or application/x-protobuf";
  } else if (!encoding.empty() && encoding != "identity" && encoding != "gzip") {
    status = 415;
    why = "Content-Encoding '" + encoding + "' is not supported (gzip is)";
  }
  if (!status) return false;
  ++stats_.requests;
  ++stats_.rejected4xx;
  c->keepAlive = false;
  respondStatus(c, status, protobuf, why, extra);
  return true;
}

// Keeps buffered_ — the request bytes held over all connections, a declared body counted in
// full — within maxBufferedBytes: a request that would go past it is refused 503 (413 when it
// alone is larger than the whole budget) before more of it is read.
void OtlpReceiver::accountBuffered(Conn* c, std::size_t incoming) {
  const std::size_t want =
      c->closing ? 0 : std::max(c->parser.bytesHeld() + incoming, c->parser.declaredBodyLength());
  if (want > c->held && buffered_ - c->held + want > opt_.maxBufferedBytes) {
    ++stats_.requests;
    ++stats_.overBudget;
    c->keepAlive = false;
    release(c);
    if (want > opt_.maxBufferedBytes) {
      ++stats_.rejected4xx;
      respondStatus(c, 413, false,
                    "request larger than the receiver's buffer budget (" +
                        std::to_string(opt_.maxBufferedBytes) + " bytes)");
    } else {
      ++stats_.shed;
      respondStatus(c, 503, false,
                    "receiver buffer budget in use (" + std::to_string(buffered_) + " of " +
                        std::to_string(opt_.maxBufferedBytes) + " bytes); retry later",
                    retryAfter(opt_.retryAfterSeconds));
    }
    return;
  }
  buffered_ = buffered_ - c->held + want;
  c->held = want;
  stats_.maxBuffered = std::max(stats_.maxBuffered, buffered_);
}

void OtlpReceiver::release(Conn* c) {
  buffered_ -= c->held;
  c->held = 0;
}

void OtlpReceiver::shutdown() {
  if (stopping_) return;
  if (server_) {
    onNewConnection();  // connections Qt has accepted already: refused below
    server_->close();   // the kernel refuses new ones from now on
  }
  stopping_ = true;
  const std::vector<Conn*> open(conns_.begin(), conns_.end());
  for (Conn* c : open) {
    if (c->closing || c->job) continue;  // a request being decoded: closed after its answer
    if (c->sock->bytesAvailable()) onReadable(c);  // bytes Qt has read: answered, not dropped
    if (!c->closing && !c->receiving) closeQuietly(c);
  }
  QTimer::singleShot(std::max(0, opt_.shutdownGraceMs), this, &OtlpReceiver::finishShutdown);
  maybeStopped();
}

// The grace is over: what is still partial is refused (not counted, not acknowledged), and a
// second later whatever the clients have not read is dropped.
void OtlpReceiver::finishShutdown() {
  const std::vector<Conn*> open(conns_.begin(), conns_.end());
  for (Conn* c : open) {
    if (c->closing || c->job) continue;  // being decoded: answered (and closed) when it is
    if (!c->receiving) {
      closeQuietly(c);
      continue;
    }
    ++stats_.shed;
    c->keepAlive = false;
    respondStatus(c, 503, false, "shutting down before the request arrived whole",
                  retryAfter(opt_.retryAfterSeconds));
  }
  QTimer::singleShot(1000, this, [this] {
    const std::vector<Conn*> left(conns_.begin(), conns_.end());
    for (Conn* c : left) c->sock->abort();
    if (!stoppedEmitted_) {
      stoppedEmitted_ = true;
      emit stopped();
    }
  });
}

void OtlpReceiver::maybeStopped() {
  if (!stopping_ || !conns_.empty() || stoppedEmitted_) return;
  stoppedEmitted_ = true;
  QTimer::singleShot(0, this, [this] { emit stopped(); });
}

void OtlpReceiver::handle(Conn* c, HttpRequest& req) {
  const auto ctype = req.header("content-type");
  const std::string media = ctype ? mediaType(*ctype) : std::string();
  const bool protobuf = media == "application/x-protobuf" || media == "application/protobuf";
  auto reject = [&](int status, const std::string& msg, const QByteArray& extra = {}) {
    ++stats_.rejected4xx;
    respondStatus(c, status, protobuf, msg, extra);
  };
  if (!opt_.bearerToken.empty() &&
      !bearerMatches(req.header("authorization").value_or(""), opt_.bearerToken))
    return reject(401, "missing or wrong bearer token", "WWW-Authenticate: Bearer\r\n");
  if (req.path() != "/v1/traces")
    return reject(404, "no route " + std::string(req.path()) + " (OTLP traces: POST /v1/traces)");
  if (req.method != "POST") return reject(405, "use POST", "Allow: POST\r\n");
  if (!protobuf && media != "application/json")
    return reject(415, "Content-Type must be application/json or application/x-protobuf, got '" +
                           std::string(ctype.value_or("")) + "'");
  const std::string encoding = lowerTrim(req.header("content-encoding").value_or(""));
  if (!encoding.empty() && encoding != "identity" && encoding != "gzip")
    return reject(415, "Content-Encoding '" + encoding + "' is not supported (gzip is)");
  auto job = std::make_unique<Job>();
  job->batch.calls = spareCalls();
  job->conn = c;
  job->protobuf = protobuf;
  job->gzip = encoding == "gzip";
  if (decoders_) {
    job->body = std::move(req.body);
    return dispatch(std::move(job));
  }
  decodeBody(req.body, protobuf, job->gzip, opt_.maxInflatedBytes, job->status, job->error,
             job->batch);
  if (job->status != 200) return reject(job->status, job->error);
  acknowledge(c, job->batch, protobuf);
}

void OtlpReceiver::dispatch(std::unique_ptr<Job> job) {
  job->conn->job = job.get();
  jobs_.push_back(std::move(job));
  submitJobs();
}

void OtlpReceiver::submitJobs() {
  // Two per thread: one decoding, one ready for it; the rest wait in their connections.
  const std::size_t cap = 2 * static_cast<std::size_t>(opt_.decodeThreads);
  for (; running_ < jobs_.size() && running_ < cap; ++running_)
    decoders_->submit(jobs_[running_].get());
}

void OtlpReceiver::onDecoded() {
  decoders_->rearm();
  while (!jobs_.empty() && jobs_.front()->done.load()) {
    const std::unique_ptr<Job> j = std::move(jobs_.front());
    jobs_.pop_front();
    --running_;
    answerDecoded(*j);
  }
  submitJobs();
}

// A decoded request, in arrival order: answered as handle() answers one decoded in place,
// then the connection goes on with what it sent meanwhile.
void OtlpReceiver::answerDecoded(Job& j) {
  Conn* c = j.conn;
  c->job = nullptr;
  keepBody(std::move(j.body));
  if (c->gone) {  // nobody to acknowledge it to: its calls are dropped, never queued
    c->deleteLater();
    return;
  }
  if (stopping_ && c->parser.state() != HttpRequestParser::State::Ready) c->keepAlive = false;
  if (j.status != 200) {
    ++stats_.rejected4xx;
    respondStatus(c, j.status, j.protobuf, j.error);
  } else {
    acknowledge(c, j.batch, j.protobuf);
  }
  if (c->closing) return;
  serve(c, c->clock.elapsed(), true);
  if (!c->closing && !c->job && c->sock->bytesAvailable()) onReadable(c);
}

void OtlpReceiver::acknowledge(Conn* c, formats::OtlpBatch& batch, bool protobuf) {
  stats_.spans += batch.spans;
  // Shed before acknowledging: a 200 promises that every call reaches the sink. A batch larger
  // than the whole bound is taken when the queue is empty, or it could never be.
  const std::size_t n = batch.calls.size();
  if (n && queued_ && queued_ + n > opt_.maxQueuedCalls) {
    ++stats_.shed;
    respondStatus(c, 429, protobuf,
                  "intake queue full (" + std::to_string(queued_) + " calls waiting); retry later",
                  retryAfter(opt_.retryAfterSeconds));
    return;
  }
  // The instance bound: a call whose instance is refused is reported, not queued.
  std::uint64_t overBound = 0;
  if (admit && n) {
    const auto kept =
        std::remove_if(batch.calls.begin(), batch.calls.end(),
                       [this](const formats::SpanCall& call) { return !admit(call); });
    overBound = static_cast<std::uint64_t>(batch.calls.end() - kept);
    batch.calls.erase(kept, batch.calls.end());
  }
  if (const std::size_t kept = batch.calls.size()) {
    queue_.push_back(Batch{std::move(batch.calls), 0, std::chrono::steady_clock::now()});
    queued_ += kept;
    stats_.maxQueued = std::max(stats_.maxQueued, queued_);
    stats_.callsAcked += kept;
    scheduleDrain();
  }
  const std::uint64_t rejected = batch.notCalls + batch.invalid + overBound;
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
    if (overBound) {
      stats_.spansOverBound += overBound;
      if (!message.empty()) message += "; ";
      message += std::to_string(overBound) + " span(s) refused: " + admitRefusal;
    }
  }
  ++stats_.accepted;
  if (protobuf) {
    respond(c, 200, true, formats::encodeOtlpProtobufResponse(rejected, message));
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
    respond(c, status, true, formats::encodeRpcStatusProtobuf(rpcCode(status), message),
            extraHeaders);
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
  if (!keep) closeQuietly(c);  // after the answer is written
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
      keepCalls(std::move(b.calls));
      queue_.pop_front();
      if (onBatchApplied) onBatchApplied(calls, us);
    }
  }
  queued_ -= applied;
  stats_.callsApplied += applied;
  if (applied) emit callsApplied(static_cast<int>(applied));
}

std::string OtlpReceiver::spareBody() {
  if (spareBodies_.empty()) return {};
  std::string b = std::move(spareBodies_.back());
  spareBodies_.pop_back();
  return b;
}

void OtlpReceiver::keepBody(std::string&& body) {
  if (spareBodies_.size() >= kSpares || body.capacity() < 4096 || body.capacity() > kSpareBytes)
    return;
  body.clear();
  spareBodies_.push_back(std::move(body));
}

std::vector<formats::SpanCall> OtlpReceiver::spareCalls() {
  if (spareCalls_.empty()) return {};
  std::vector<formats::SpanCall> v = std::move(spareCalls_.back());
  spareCalls_.pop_back();
  return v;
}

void OtlpReceiver::keepCalls(std::vector<formats::SpanCall>&& calls) {
  if (spareCalls_.size() >= kSpares || calls.capacity() < 16 ||
      calls.capacity() * sizeof(formats::SpanCall) > kSpareBytes)
    return;
  calls.clear();
  spareCalls_.push_back(std::move(calls));
}

void OtlpReceiver::drain() {
  drainSome(queued_);
}

void OtlpReceiver::setDecodersHeld(bool held) {
  if (decoders_) decoders_->hold(held);
}

void OtlpReceiver::setPaused(bool paused) {
  paused_ = paused;
  scheduleDrain();
}

}  // namespace spillway::live
