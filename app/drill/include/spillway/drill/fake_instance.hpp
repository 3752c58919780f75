#pragma once
// One fake OpenAI-compatible model instance on 127.0.0.1: the scenario's instance model
// (slots, FIFO queue, lognormal service time, batching knee, background errors) and its fault
// timeline, played against the wall clock. Routes: POST /v1/chat/completions (JSON, or SSE
// with "stream": true), GET /health, GET /v1/models. docs/live.md.
#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QString>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "spillway/drill/fault_timeline.hpp"
#include "spillway/live/http_request.hpp"
#include "spillway/sim/random.hpp"
#include "spillway/sim/scenario.hpp"

class QTcpServer;
class QTcpSocket;

namespace spillway::drill {

// Scenario time from the wall clock: t = elapsed × speed. Service times stay real; only the
// fault timeline runs `speed` times faster (a 5-minute onset in 30 s at --speed 10).
class ScenarioClock {
 public:
  explicit ScenarioClock(double speed = 1.0) : speed_(speed > 0 ? speed : 1.0) { wall_.start(); }
  void restart() { wall_.restart(); }
  Micros now() const {
    return static_cast<Micros>(static_cast<double>(wall_.nsecsElapsed()) / 1e3 * speed_);
  }
  // Wall-clock milliseconds until scenario time `t` (0 when it has passed).
  qint64 wallMsUntil(Micros t) const;
  double speed() const { return speed_; }

 private:
  double speed_;
  QElapsedTimer wall_;
};

struct InstanceStats {
  std::uint64_t requests = 0;   // chat completions received
  std::uint64_t answered = 0;   // 200s (JSON or a finished stream)
  std::uint64_t errors = 0;     // fault / background 5xx
  std::uint64_t throttled = 0;  // 429 from a throttle fault
  std::uint64_t queueFull = 0;
  std::uint64_t resets = 0;  // connections closed without an answer (reset, outage)
  std::uint64_t hangs = 0;
  std::uint64_t badRequests = 0;  // 4xx for malformed or oversized requests
  std::uint32_t busy = 0;         // slots in use now
  std::uint32_t queued = 0;
};

class FakeInstance : public QObject {
  Q_OBJECT
 public:
  struct Config {
    std::string name;
    const sim::ModelSpec* model = nullptr;  // must outlive the instance
    FaultTimeline faults;
    std::uint64_t seed = 1;
    live::HttpLimits limits;
  };

  FakeInstance(Config cfg, const ScenarioClock* clock, QObject* parent = nullptr);
  ~FakeInstance() override;

  // Listens on 127.0.0.1:`port` (0 = any free port) and arms the fault timers.
  bool start(quint16 port);
  quint16 port() const { return port_; }
  QString errorString() const { return error_; }
  const std::string& name() const { return cfg_.name; }
  const InstanceStats& stats() const { return stats_; }

 signals:
  // A fault of this instance started or ended; `text` is a ready-to-print line.
  void faultTransition(const QString& text);

 private:
  struct Conn;
  struct Job;

  void onNewConnection();
  void onReadable(Conn* c);
  void dispatch(Conn* c, live::HttpRequest req);
  void handleChat(Conn* c, const live::HttpRequest& req);
  void admit(const std::shared_ptr<Job>& job);
  void startJob(const std::shared_ptr<Job>& job);
  void finishJob(const std::shared_ptr<Job>& job);
  void pump();
  void answer(const std::shared_ptr<Job>& job);
  void streamChunk(const std::shared_ptr<Job>& job, int index, int count);
  void sendSimple(Conn* c, int status, const QByteArray& contentType, const QByteArray& body,
                  const QByteArray& extraHeaders = {});
  void sendError(Conn* c, int status, const QString& message, const char* type);
  void abortConn(Conn* c);
  void responseDone(Conn* c, bool close);
  void onEdge(Micros edge);
  void setOutage(bool on);
  std::uint32_t slotsNow(Micros t) const;
  void later(Micros delay, std::function<void()> fn);

  Config cfg_;
  const ScenarioClock* clock_;
  sim::Stream rng_;
  QTcpServer* server_ = nullptr;
  quint16 port_ = 0;
  QString error_;
  bool outage_ = false;
  std::deque<std::shared_ptr<Job>> queue_;
  std::vector<QPointer<Conn>> conns_;  // open connections, for an outage to drop
  InstanceStats stats_;
  std::uint64_t nextId_ = 1;
};

}  // namespace spillway::drill
