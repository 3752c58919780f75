#pragma once
// An OTLP/HTTP trace receiver (POST /v1/traces, JSON or protobuf, optionally gzip) on the hand-
// written HTTP parser: GenAI spans become calls (formats::spanToCall) and wait in a bounded
// intake queue, which the event loop drains into a sink (the shadow monitor). A request is
// acknowledged (200) only once all its calls are queued; when they would not fit it is shed
// with 429 + Retry-After, so an acknowledged span always reaches the sink. Slow or idle
// connections time out; bad input is answered with its status, never a crash. docs/live.md.
#include <QHostAddress>
#include <QObject>
#include <QString>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "spillway/formats/otlp.hpp"
#include "spillway/live/http_request.hpp"

class QTcpServer;

namespace spillway::live {

struct OtlpReceiverOptions {
  QHostAddress address = QHostAddress::LocalHost;  // anything else only by explicit choice
  quint16 port = 4318;                             // 0: any free port
  // Header bytes, body bytes, header fields, chunked bodies (Node's exporter streams them).
  HttpLimits limits{16 * 1024, 8 * 1024 * 1024, 100, true};
  std::size_t maxInflatedBytes = 32 * 1024 * 1024;  // a gzip body, decompressed
  std::size_t maxQueuedCalls = 64 * 1024;           // the intake bound
  std::size_t drainPerTurn = 16 * 1024;             // calls applied per event-loop turn
  int retryAfterSeconds = 1;
  int requestTimeoutMs = 10'000;  // a request must arrive whole within this of its first byte
  int idleTimeoutMs = 60'000;     // a keep-alive connection without a request is closed
  int maxConnections = 64;        // more are answered 503 (each may buffer a whole body)
  std::string bearerToken;        // non-empty: "Authorization: Bearer <token>" is required
};

struct OtlpReceiverStats {
  std::uint64_t requests = 0;       // complete HTTP requests (and protocol errors)
  std::uint64_t accepted = 0;       // 200s
  std::uint64_t partial = 0;        // 200s with partialSuccess
  std::uint64_t rejected4xx = 0;    // 400, 401, 404, 405, 413, 415, 431, …
  std::uint64_t shed = 0;           // 429 / 503: intake queue or connections over their bound
  std::uint64_t timeouts = 0;       // connections closed for a slow or stalled request (408)
  std::uint64_t spans = 0;          // spans in decoded requests (acknowledged or not)
  std::uint64_t callsAcked = 0;     // calls in 200 answers: each must reach the sink
  std::uint64_t callsApplied = 0;   // calls handed to the sink
  std::uint64_t spansRejected = 0;  // reported in partialSuccess (not calls, or invalid)
  std::size_t maxQueued = 0;        // high-water mark of the intake queue (calls)
  std::int64_t maxLatencyUs = 0;    // request received → its last call applied
};

class OtlpReceiver : public QObject {
  Q_OBJECT
 public:
  // Gets every acknowledged call, in acknowledgement order, on this object's thread.
  using Sink = std::function<void(const formats::SpanCall&)>;

  OtlpReceiver(OtlpReceiverOptions opt, Sink sink, QObject* parent = nullptr);
  ~OtlpReceiver() override;

  bool start();
  quint16 port() const { return port_; }
  QString errorString() const { return error_; }
  const OtlpReceiverOptions& options() const { return opt_; }
  const OtlpReceiverStats& stats() const { return stats_; }
  std::size_t queued() const { return queued_; }

  // Applies every queued call now (before a summary, at shutdown).
  void drain();
  // While paused the queue is not drained (tests: an engine that has fallen behind).
  void setPaused(bool paused);
  // Called after each applied batch: its calls and µs from request received to applied.
  std::function<void(std::size_t calls, std::int64_t latencyUs)> onBatchApplied;

 signals:
  void requestAnswered(int status);
  void callsApplied(int count);

 private:
  struct Conn;
  struct Batch {
    std::vector<formats::SpanCall> calls;
    std::size_t next = 0;
    std::chrono::steady_clock::time_point received;
  };

  void onNewConnection();
  void onReadable(Conn* c);
  void handle(Conn* c, const HttpRequest& req);
  void respond(Conn* c, int status, bool protobuf, const std::string& body,
               const QByteArray& extraHeaders = {});
  void respondStatus(Conn* c, int status, bool protobuf, const std::string& message,
                     const QByteArray& extraHeaders = {});
  void armTimer(Conn* c);
  void onTimeout(Conn* c);
  void scheduleDrain();
  void drainSome(std::size_t budget);

  OtlpReceiverOptions opt_;
  Sink sink_;
  QTcpServer* server_ = nullptr;
  quint16 port_ = 0;
  QString error_;
  int connections_ = 0;
  std::deque<Batch> queue_;
  std::size_t queued_ = 0;
  bool paused_ = false;
  bool drainScheduled_ = false;
  OtlpReceiverStats stats_;
};

}  // namespace spillway::live
