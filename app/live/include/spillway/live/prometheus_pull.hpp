#pragma once
// Pulls per-step call counts from a Prometheus server (docs/live.md, "Prometheus pull"). Every
// poll asks /api/v1/query_range, one PromQL expression per role (calls, failures, slow, p99),
// for the steps that completed since the last poll; the answers are joined by the engine's
// query_range parser (formats::PromMatrixJoin) and handed on per instance per step, in time
// order, each step exactly once. A server that is down, answers an HTTP error or a
// "status":"error", or times out is reported with the URL and the role, and the same steps are
// asked again at the next poll: nothing is skipped, nothing is counted twice.
#include <QByteArray>
#include <QObject>
#include <QString>
#include <QUrl>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "spillway/formats/prometheus.hpp"
#include "spillway/time.hpp"

class QNetworkAccessManager;
class QNetworkReply;
class QTimer;

namespace spillway::live {

struct PullerOptions {
  QUrl server;  // http://127.0.0.1:9090; a path prefix (behind a proxy) is kept
  // PromQL per role, placeholders already expanded (prometheus_presets.hpp). Calls is required.
  std::map<formats::PromRole, std::string> queries;
  formats::FieldMap labels;  // "instance" / "model" → label names (formats::PromMatrixJoin)
  Micros step = seconds(5);
  Micros poll = 0;  // 0: every step
  // A step is asked for once it ended this long ago, so that the scrapes stamped inside it
  // have been stored (a scrape is stamped when it starts and appended when it returns).
  Micros delay = seconds(2);
  Micros backfill = 0;  // the first poll also asks for this much history
  int timeoutMs = 10'000;
  std::size_t maxSteps = 10'000;             // per query (Prometheus refuses 11 000 points)
  qint64 maxBodyBytes = 64LL * 1024 * 1024;  // per answer
};

// One instance (and model) over (end - step, end]; slow -1 when unknown, p99Ms -1 when none.
struct PromSample {
  Micros end = 0, step = 0;
  std::string instance, model;
  std::uint32_t calls = 0, failures = 0;
  std::int64_t slow = -1;
  double p99Ms = -1;
  // A view for ShadowMonitor::addAggregate (valid while this sample lives).
  formats::AggregateSample view() const;
};

struct PullerStats {
  std::uint64_t polls = 0;         // polls that sent queries
  std::uint64_t failedPolls = 0;   // ... of which some query failed (the steps are asked again)
  std::uint64_t samples = 0;       // handed to the sink
  std::uint64_t steps = 0;         // complete steps covered
  std::uint64_t skippedSteps = 0;  // older than maxSteps behind, given up
  std::uint64_t badSeries = 0;     // series without the labels, malformed points
  std::uint64_t busy = 0;          // polls not started because the previous one was running
};

class PrometheusPuller : public QObject {
  Q_OBJECT
 public:
  using Sink = std::function<void(const PromSample&)>;
  // Wall-clock µs since the epoch. The default reads the system clock; tests set their own.
  using Clock = std::function<Micros()>;

  PrometheusPuller(PullerOptions opt, Sink sink, QObject* parent = nullptr);
  ~PrometheusPuller() override;

  void setClock(Clock c) { clock_ = std::move(c); }
  // Polls now, then every poll interval.
  void start();
  void stop();
  // One poll now (if none is running); polled() or failed() follows.
  void pollNow();
  bool busy() const { return !pending_.empty(); }

  // The end of the last step handed on (kNever before the first).
  Micros lastEnd() const { return lastEnd_; }
  const PullerStats& stats() const { return stats_; }
  const PullerOptions& options() const { return opt_; }
  // POST target: <server>/api/v1/query_range.
  QUrl queryUrl() const;

 signals:
  // A poll finished and handed on `samples` samples (0: no new complete step, or no data).
  void polled(int samples);
  // A poll failed; `message` names the URL and the role. Repeats of the same message are not
  // signalled again until it changes or the server recovers.
  void failed(const QString& message);
  // Something worth telling that did not stop the poll (a role without data for an instance,
  // series without the instance label, the server answering again after failures).
  void warning(const QString& message);

 private:
  struct Pending {
    formats::PromRole role;
    QNetworkReply* reply;
    QByteArray body;
    QString error;  // empty: answered 2xx
    bool done = false;
  };
  Pending* find(QNetworkReply* reply);
  void onFinished(QNetworkReply* reply);
  void finishPoll();
  // Joins the roles' answers; false (after fail()) when one of them is malformed.
  bool joinAnswers(const std::vector<Pending>& done, const QString& url,
                   formats::PromMatrixJoin& join, std::map<std::string, std::uint64_t>& bad);
  void warnBadSeries(const std::map<std::string, std::uint64_t>& bad);
  // Hands the new complete steps to the sink; returns how many samples.
  int handOn(formats::PromMatrixJoin& join);
  void fail(const QString& message);
  void warnOnce(const std::string& key, const QString& message);
  QString roleText(formats::PromRole r) const;

  PullerOptions opt_;
  Sink sink_;
  Clock clock_;
  QNetworkAccessManager* nam_ = nullptr;
  QTimer* timer_ = nullptr;
  QTimer* timeout_ = nullptr;
  std::vector<Pending> pending_;
  bool timedOut_ = false;
  Micros queryStart_ = 0, queryEnd_ = 0;
  Micros lastEnd_ = kNever;
  QString lastFailure_;
  std::uint64_t failuresInARow_ = 0;
  std::set<std::string> warned_;
  PullerStats stats_;
};

}  // namespace spillway::live
