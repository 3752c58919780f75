#pragma once
// Live mode's worker: the sources (OTLP/HTTP receiver, access-log tail), the shadow engine
// (the policy with every breaker METRICS_ONLY) and the rolling timeline all live on one
// worker thread, so decoding 100 k spans/s never blocks the UI. Every `refresh` the worker
// publishes an immutable snapshot — the rolling timeline as a Comparison the console draws as
// it draws a run — with the new "would open" verdicts and its counters. The UI thread only
// draws; it never touches the engine.
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>
#include <QTimer>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "run_controller.hpp"
#include "spillway/formats/source.hpp"
#include "spillway/library/recording.hpp"
#include "spillway/live/prometheus_source.hpp"
#include "spillway/policy.hpp"

namespace spillway::live {
class LogTail;
class PrometheusPuller;
class OtlpReceiver;
class ShadowMonitor;
}  // namespace spillway::live

namespace spillway::view {
class LiveTimeline;
}

namespace spillway::library {
class LiveRecorder;
}

namespace spillway::console {

struct LiveConfig {
  QString otlp;  // "[HOST:]PORT" of the OTLP/HTTP receiver; empty: none
  bool otlpAllowRemote = false;
  // "Authorization: Bearer <token>" required; the token is the file's first line that is
  // neither empty nor a # comment (live::readBearerTokenFile). Empty: none (loopback only).
  QString otlpTokenFile;
  QString tailFile;  // an access log to follow; empty: none
  formats::Format tailFormat = formats::Format::Nginx;
  bool tailFromStart = false;
  std::optional<live::PromSourceSpec> prometheus;  // per-step counts from a Prometheus server
  // Records every call and sample into this library's recording (empty: no recording), with
  // its retention bound, so any moment can be cut into an incident (Library::cutRecording).
  QString recordLibrary;
  QString recording = "live";
  library::Retention retention;
  std::optional<Policy> policy;  // forced to METRICS_ONLY (shadow mode); none: the default
  // The instance names every source brings (span server.address:port, a log's upstream, a
  // Prometheus label) come from the network: at most this many instances are kept. The live
  // timeline reads one shared engine, which cannot drop an instance, so this is a hard cap for
  // the session: past it, a new name's spans are answered in OTLP partialSuccess and its log
  // lines and samples are refused, all counted (LiveStatus). 1 to 1,000,000.
  std::size_t maxInstances = 1024;
  Micros span = seconds(600);  // data kept and drawn
  int refreshMs = 250;         // snapshot period while data arrives
};

// One source's health as the worker sees it: a row of the Live dock, so that a missing log,
// a refused request or a failing Prometheus is said where the source is configured, not in
// the verdict list. Times are the wall clock (what an operator compares with their own).
struct SourceHealth {
  enum class Source { Otlp, Tail, Prometheus, Recording };
  enum class State { Waiting, Receiving, Failing };
  Source source = Source::Otlp;
  State state = State::Waiting;
  QString target;  // the OTLP address, the log's path, the Prometheus URL, the library
  // Waiting: what for ("waiting for file …: not there yet"); failing: what went wrong.
  QString reason;
  quint64 total = 0;      // spans acknowledged, log lines, samples, records committed
  double perSecond = 0;   // of those, per second of wall time (the last second or more)
  qint64 lastDataMs = 0;  // ms since the epoch when data last came in; 0: never
  qint64 lastOkMs = 0;    // when the source last worked (data, or a poll that succeeded)
};

struct LiveStatus {
  quint16 otlpPort = 0;
  quint64 calls = 0;  // into the engine since the start
  quint64 lines = 0, badLines = 0;
  quint64 spansAcked = 0, spansRejected = 0, requestsShed = 0;
  quint64 late = 0;                              // too old for their tick (still in the engine)
  quint64 promSamples = 0, promFailedPolls = 0;  // Prometheus: samples in, polls that failed
  quint64 recorded = 0, recordPending = 0;       // committed into the recording, still buffered
  // The instance bound (LiveConfig::maxInstances): tracked now, and what was refused over it
  // — calls (OTLP spans, log lines) and Prometheus samples of names that found it full.
  quint64 instances = 0, maxInstances = 0;
  quint64 callsRefused = 0, samplesRefused = 0;
  double callsPerSecond = 0;  // data time, over the last 10 s
  QStringList verdicts;       // new since the previous snapshot, oldest first
  // Said once in the verdict list (the instance bound reached: verdicts of new names are
  // missing from now on). A source's own errors are in its health row instead.
  QStringList errors;
  std::vector<SourceHealth> sources;  // one per configured source (and the recording), as now
  // Steady-clock ns when the oldest data in this snapshot that no earlier one had was
  // received (a span's request, a log line's poll); 0: nothing new.
  qint64 oldestNewDataNs = 0;
};

// Monotonic ns for latency stamps (the same clock on both threads).
inline qint64 steadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class LiveSession : public QObject {
  Q_OBJECT
 public:
  explicit LiveSession(LiveConfig cfg);
  ~LiveSession() override;

  // On the worker thread: opens the sources. Emits started() or failed().
  void start();
  void stop();  // closes the sources; a final snapshot follows
  // Commits what the recorder buffers (before a cut). false + message when it cannot.
  bool flushRecording(QString* error);

 signals:
  void started(quint16 otlpPort);
  void failed(const QString& message);
  void snapshot(std::shared_ptr<const spillway::console::Comparison> view,
                spillway::console::LiveStatus status);

 private:
  void openShadow();
  quint16 openOtlp();
  void openTail();
  void openPrometheus();
  void noteData(qint64 receivedNs);
  void closeSources();
  void record(const std::function<void()>& append);
  void publish();

  // One source's health between snapshots: what it brought, when it last worked or failed.
  struct Watch {
    SourceHealth h;
    qint64 lastDataNs = 0, lastOkNs = 0, lastFailNs = 0;  // steady clock; 0: never
    static constexpr qint64 kRateWindowNs = 5'000'000'000;
    std::deque<std::pair<qint64, quint64>> history;  // (steady ns, total) over the window
    QString failure;                                 // the last failure's reason
    QString waitingFor;              // set while the source cannot start (a log not there yet)
    QString idle;                    // what "waiting" means for it before any data
    QString note;                    // said while receiving (a log's bad lines)
    qint64 quietNs = 5'000'000'000;  // no data for this long: waiting again
    void count(quint64 total, qint64 nowNs);
    void ok(qint64 nowNs);
    void fail(const QString& why, qint64 nowNs);
    void settle(qint64 nowNs);  // the state and reason from the above
  };
  Watch* watch(SourceHealth::Source s);
  void addWatch(SourceHealth::Source s, const QString& target, const QString& idle);
  void watchOtlp(Watch& w, qint64 nowNs);
  void watchTail(Watch& w, qint64 nowNs);
  bool updateHealth();  // true when a row's state or reason changed

  LiveConfig cfg_;
  std::unique_ptr<live::ShadowMonitor> shadow_;
  std::unique_ptr<view::LiveTimeline> timeline_;
  live::OtlpReceiver* otlp_ = nullptr;
  live::LogTail* tail_ = nullptr;
  live::PrometheusPuller* prom_ = nullptr;
  std::unique_ptr<library::LiveRecorder> recorder_;
  qint64 lastFlushNs_ = 0;
  std::vector<QString> notices_;  // for the verdict list (the instance bound)
  std::vector<Watch> watches_;    // in the dock's order: OTLP, log, Prometheus, recording
  quint64 refusedSeen_ = 0, tailLinesSeen_ = 0, badLinesSeen_ = 0, promFailedSeen_ = 0;
  bool tailOpened_ = false;
  std::shared_ptr<const Comparison> lastView_;  // re-sent when only the health changed
  QTimer* timer_ = nullptr;
  bool dirty_ = false;
  qint64 oldestNew_ = 0;
  std::size_t verdictsSent_ = 0;
  bool boundReported_ = false;     // the first refusal is said once in the verdict list
  std::uint64_t refusedSent_ = 0;  // calls + samples refused, as last published
  std::vector<QString> verdicts_;
};

// The GUI side: runs a LiveSession on its own thread and relays its signals.
class LiveController : public QObject {
  Q_OBJECT
 public:
  explicit LiveController(QObject* parent = nullptr);
  ~LiveController() override;
  void start(const LiveConfig& cfg);
  // Ends the session: it closes its sources on its own thread; the UI does not wait for it.
  void stop();
  bool running() const { return session_ != nullptr; }
  // A stopped session still closing its sources and recording on its thread.
  bool closing() const { return closing_ > 0; }
  // Has the session commit its recording buffer (a cut follows), then calls `done` on the UI
  // thread: ok, or the reason it could not.
  void flushRecording(std::function<void(bool ok, const QString& error)> done);

 signals:
  void started(quint16 otlpPort);
  void failed(const QString& message);
  void snapshot(std::shared_ptr<const spillway::console::Comparison> view,
                spillway::console::LiveStatus status);
  void stopped();
  // Every stopped session has closed (its recording committed): nothing is left to wait for.
  void closed();

 private:
  void stop(Qt::ConnectionType how);
  QThread thread_;
  LiveSession* session_ = nullptr;
  int closing_ = 0;
};

}  // namespace spillway::console

Q_DECLARE_METATYPE(spillway::console::LiveStatus)
