#pragma once
// An OTLP/HTTP trace receiver (POST /v1/traces, JSON or protobuf, optionally gzip) on the hand-
// written HTTP parser: GenAI spans become calls (formats::spanToCall) and wait in a bounded
// intake queue, which the event loop drains into a sink (the shadow monitor). A request is
// acknowledged (200) only once all its calls are queued; when they would not fit it is shed
// with 429 + Retry-After, so an acknowledged span always reaches the sink. Slow or idle
// connections time out; bad input is answered with its status, never a crash. docs/live.md.
//
// Bodies are inflated and decoded on `decodeThreads` worker threads; everything else (sockets,
// the HTTP framing, the instance bound, the queue, the answers and the sink) stays on the
// receiver's thread, which takes the decoded requests in the order they arrived whole: the
// sink sees the same calls in the same order as with decoding on the receiver's thread.
#include <QHostAddress>
#include <QObject>
#include <QString>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "spillway/formats/otlp.hpp"
#include "spillway/live/http_request.hpp"

class QTcpServer;

namespace spillway::live {

// Every bound a client could otherwise exhaust, with its default (docs/live.md, "Limits").
struct OtlpReceiverOptions {
  QHostAddress address = QHostAddress::LocalHost;  // anything else only by explicit choice
  quint16 port = 4318;                             // 0: any free port
  // Header bytes, body bytes, header fields, chunked bodies (Node's exporter streams them).
  HttpLimits limits{16 * 1024, 8 * 1024 * 1024, 100, true};
  std::size_t maxInflatedBytes = 32 * 1024 * 1024;  // a gzip body, decompressed
  // Request bytes held across all connections (a declared Content-Length counts in full as
  // soon as the head is read); a request that would go past it is refused 503 + Retry-After.
  std::size_t maxBufferedBytes = 64 * 1024 * 1024;
  std::size_t maxQueuedCalls = 64 * 1024;  // the intake bound
  std::size_t drainPerTurn = 16 * 1024;    // calls applied per event-loop turn
  int retryAfterSeconds = 1;
  // A new connection's first byte, and a request's whole header section from its first byte.
  int headerTimeoutMs = 5'000;
  // A body must average at least this many bytes/s from the end of its head, checked once
  // bodyGraceMs have passed (a client dripping a byte at a time is cut off with 408).
  std::size_t minBodyBytesPerSecond = 16 * 1024;
  int bodyGraceMs = 5'000;
  int requestTimeoutMs = 60'000;   // a whole request from its first byte, whatever its rate
  int idleTimeoutMs = 15'000;      // a keep-alive connection between requests
  int maxConnections = 256;        // more are answered 503 + Retry-After
  int maxConnectionsPerPeer = 16;  // per remote address, so one host cannot take every slot
  int shutdownGraceMs = 5'000;     // shutdown(): how long requests in flight may take
  std::string bearerToken;         // non-empty: "Authorization: Bearer <token>" is required
  // Threads that inflate and decode bodies (0: on the receiver's thread). At most two requests
  // per thread are decoded or waiting for a thread at once; the bodies of the others stay in
  // their connections, counted in maxBufferedBytes, and those connections are not read until
  // they are answered.
  int decodeThreads = 2;
};

struct OtlpReceiverStats {
  std::uint64_t requests = 0;            // complete HTTP requests (and protocol errors)
  std::uint64_t accepted = 0;            // 200s
  std::uint64_t partial = 0;             // 200s with partialSuccess
  std::uint64_t rejected4xx = 0;         // 400, 401, 404, 405, 413, 415, 417, 431, …
  std::uint64_t shed = 0;                // 429 / 503: queue, connections, buffer budget, shutdown
  std::uint64_t timeouts = 0;            // requests cut off with 408 (header, body rate, total)
  std::uint64_t idleClosed = 0;          // connections closed without a request (idle, first byte)
  std::uint64_t refusedConnections = 0;  // over maxConnections or maxConnectionsPerPeer
  std::uint64_t overBudget = 0;          // requests refused for the global buffer budget
  std::uint64_t continues = 0;           // 100 Continue sent
  std::uint64_t spans = 0;               // spans in decoded requests (acknowledged or not)
  std::uint64_t callsAcked = 0;          // calls in 200 answers: each must reach the sink
  std::uint64_t callsApplied = 0;        // calls handed to the sink
  std::uint64_t spansRejected = 0;       // reported in partialSuccess (not calls, invalid, bound)
  std::uint64_t spansOverBound = 0;      // of those: their instance was refused by `admit`
  std::size_t maxQueued = 0;             // high-water mark of the intake queue (calls)
  std::size_t maxBuffered = 0;           // high-water mark of the buffered request bytes
  std::int64_t maxLatencyUs = 0;         // request received → its last call applied
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
  // While held the decoding threads take no request (tests: a request caught mid-decode).
  void setDecodersHeld(bool held);
  std::size_t decoding() const { return jobs_.size(); }  // requests with the decoders
  // Called after each applied batch: its calls and µs from request received to applied.
  std::function<void(std::size_t calls, std::int64_t latencyUs)> onBatchApplied;
  // Asked for each call before its request is acknowledged (the instance bound). A call it
  // refuses is not queued and is reported in partialSuccess.rejectedSpans with
  // admitRefusal as the reason. Unset: every call is admitted.
  std::function<bool(const formats::SpanCall&)> admit;
  std::string admitRefusal = "their instance is over the receiver's instance bound";

  // Graceful stop: listens no more, answers every request already received (Connection:
  // close), gives requests in flight shutdownGraceMs to arrive whole, refuses what is still
  // partial then with 503 + Retry-After, closes idle connections, and emits stopped() once
  // every answer has been handed to the kernel (or a last second has passed). Call drain()
  // after it: every acknowledged call then reaches the sink.
  void shutdown();
  bool stopping() const { return stopping_; }
  int connections() const { return static_cast<int>(conns_.size()); }
  std::size_t bufferedBytes() const { return buffered_; }  // request bytes held now

 signals:
  void requestAnswered(int status);
  void callsApplied(int count);
  void stopped();

 private:
  struct Conn;
  struct Job;
  class Decoders;
  struct Batch {
    std::vector<formats::SpanCall> calls;
    std::size_t next = 0;
    std::chrono::steady_clock::time_point received;
  };

  void onNewConnection();
  void admitConnection(Conn* c);
  void onReadable(Conn* c);
  void onHeadComplete(Conn* c);
  bool refuseEarly(Conn* c, const HttpRequest& head);
  // Answers the requests the connection's parser holds, in order, up to one that goes to the
  // decoders; `completed`: a request was just answered.
  void serve(Conn* c, qint64 now, bool completed);
  void handle(Conn* c, HttpRequest& req);
  void dispatch(std::unique_ptr<Job> job);
  void submitJobs();
  void onDecoded();  // on this thread: answers the decoded requests in arrival order
  void answerDecoded(Job& j);
  // A decoded request: sheds it (429) or queues its admitted calls and answers 200.
  void acknowledge(Conn* c, formats::OtlpBatch& batch, bool protobuf);
  void accountBuffered(Conn* c, std::size_t incoming = 0);
  void release(Conn* c);
  void finishShutdown();
  void closeQuietly(Conn* c);
  void maybeStopped();
  void respond(Conn* c, int status, bool protobuf, const std::string& body,
               const QByteArray& extraHeaders = {});
  void respondStatus(Conn* c, int status, bool protobuf, const std::string& message,
                     const QByteArray& extraHeaders = {});
  void armTimer(Conn* c);
  void onTimeout(Conn* c);
  std::int64_t deadlineMs(const Conn* c) const;
  void scheduleDrain();
  void drainSome(std::size_t budget);
  // Buffers of requests already answered, kept for the next ones: a fresh large buffer per
  // request costs page faults, as the allocator hands large freed blocks back to the kernel.
  std::string spareBody();
  void keepBody(std::string&& body);
  std::vector<formats::SpanCall> spareCalls();
  void keepCalls(std::vector<formats::SpanCall>&& calls);

  OtlpReceiverOptions opt_;
  Sink sink_;
  QTcpServer* server_ = nullptr;
  quint16 port_ = 0;
  QString error_;
  std::unordered_set<Conn*> conns_;               // every open connection
  int admitted_ = 0;                              // of those: given a slot
  std::unordered_map<std::string, int> perPeer_;  // admitted connections per address
  std::size_t buffered_ = 0;                      // request bytes held, all connections
  bool stopping_ = false, stoppedEmitted_ = false;
  std::deque<Batch> queue_;
  std::size_t queued_ = 0;
  bool paused_ = false;
  bool drainScheduled_ = false;
  OtlpReceiverStats stats_;
  // Requests handed to the decoders, in the order they arrived whole; the first `running_`
  // not yet answered are with the threads, the rest wait for one.
  std::deque<std::unique_ptr<Job>> jobs_;
  std::size_t running_ = 0;
  std::unique_ptr<Decoders> decoders_;
  std::vector<char> readBuf_;  // one socket read at a time
  std::vector<std::string> spareBodies_;
  std::vector<std::vector<formats::SpanCall>> spareCalls_;
};

}  // namespace spillway::live
