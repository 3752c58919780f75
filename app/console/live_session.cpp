#include "live_session.hpp"

#include <QMetaObject>
#include <QTimer>

#include <algorithm>
#include <string>

#include "spillway/input_error.hpp"
#include "spillway/library/live_recorder.hpp"
#include "spillway/live/bearer_token.hpp"
#include "spillway/live/listen_address.hpp"
#include "spillway/live/log_tail.hpp"
#include "spillway/live/otlp_receiver.hpp"
#include "spillway/live/prometheus_pull.hpp"
#include "spillway/live/shadow.hpp"
#include "spillway/view/live_timeline.hpp"

namespace spillway::console {
namespace {

// Calls per second over the last 10 whole seconds of data.
double callsPerSecond(const view::RunTimeline& timeline) {
  double sum = 0;
  int secs = 0;
  for (const view::InstanceTimeline& it : timeline.instances()) {
    const std::size_t n = it.calls.size();
    const std::size_t from = n > 11 ? n - 11 : 0;
    double s = 0;
    for (std::size_t k = from; k + 1 < n; ++k) s += it.calls[k];
    sum += s;
    secs = std::max(secs, static_cast<int>(n > 0 ? n - 1 - from : 0));
  }
  return secs > 0 ? sum / secs : 0;
}

}  // namespace

LiveSession::LiveSession(LiveConfig cfg) : cfg_(std::move(cfg)) {}

LiveSession::~LiveSession() = default;

void LiveSession::noteData(qint64 receivedNs) {
  dirty_ = true;
  if (oldestNew_ == 0 || receivedNs < oldestNew_) oldestNew_ = receivedNs;
}

// A recorder that cannot keep up (the library locked for a minute) says so once a snapshot;
// the live view goes on without the recording rather than stopping the sources.
void LiveSession::record(const std::function<void()>& append) {
  try {
    append();
  } catch (const std::exception& e) {
    sourceErrors_.push_back(tr("recording stopped: %1").arg(QString::fromUtf8(e.what())));
    recorder_.reset();
  }
}

void LiveSession::start() {
  try {
    openShadow();
    quint16 port = 0;
    if (!cfg_.otlp.isEmpty()) port = openOtlp();
    if (!cfg_.tailFile.isEmpty()) openTail();
    if (cfg_.prometheus) openPrometheus();
    if (!otlp_ && !tail_ && !prom_)
      throw InputError("live", 0, "", "no source: give an OTLP port, a log or a Prometheus URL");
    timer_ = new QTimer(this);
    timer_->setInterval(std::max(20, cfg_.refreshMs));
    connect(timer_, &QTimer::timeout, this, &LiveSession::publish);
    timer_->start();
    emit started(port);
    dirty_ = true;
    publish();  // the empty view: the console shows Live mode at once
  } catch (const std::exception& e) {
    closeSources();
    recorder_.reset();
    emit failed(QString::fromUtf8(e.what()));
  }
}

// The shadow engine, the rolling timeline and the recorder, and what the engine tells them.
void LiveSession::openShadow() {
  live::ShadowOptions so;
  so.format = cfg_.tailFormat;
  so.sourceName = cfg_.tailFile.isEmpty() ? "live" : cfg_.tailFile.toStdString();
  // The live timeline reads one shared engine by dense ids, so instances are never evicted:
  // the bound is a hard cap on the names every source can bring (the timeline's per-second
  // cells are per engine instance, so they are bounded by it too).
  so.sharedEngine = true;
  cfg_.maxInstances = std::clamp<std::size_t>(cfg_.maxInstances, 1, 1'000'000);
  so.maxInstances = cfg_.maxInstances;
  shadow_ = std::make_unique<live::ShadowMonitor>(cfg_.policy.value_or(Policy{}), so);
  timeline_ = std::make_unique<view::LiveTimeline>(shadow_->engine(),
                                                   view::LiveTimelineOptions{.span = cfg_.span});
  if (!cfg_.recordLibrary.isEmpty()) {
    library::RecorderOptions ro;
    ro.retention = cfg_.retention;
    recorder_ = std::make_unique<library::LiveRecorder>(cfg_.recordLibrary.toStdString(),
                                                        cfg_.recording.toStdString(), ro);
  }
  shadow_->onRecorded = [this](const live::RecordedCall& c) {
    timeline_->onCall(c.id, c.rec->end(), c.rec->latency, c.failure, c.slow);
    if (recorder_) {
      CallRecord r = *c.rec;
      r.instance = c.instance;  // as the engine names it (aliases applied)
      record([&] { recorder_->append(r); });
    }
  };
  shadow_->onAggregated = [this](InstanceId id, const formats::AggregateSample& s) {
    timeline_->onAggregate(id, s.end, s.step, s.calls, s.failures, s.slow);
    if (recorder_) record([&] { recorder_->append(s); });
  };
  shadow_->onWouldOpen = [this](const live::WouldOpenVerdict& v) {
    // The mark's label is the verdict without its clock and instance (the lane says which).
    const auto at = v.text.find("would open");
    timeline_->onEvent(v.event, at == std::string::npos ? v.text : v.text.substr(at));
    verdicts_.push_back(QString::fromStdString(v.text));
  };
}

// The OTLP/HTTP receiver, listening; its port.
quint16 LiveSession::openOtlp() {
  const live::ListenAddress a =
      live::parseListenAddress(cfg_.otlp.toStdString(), cfg_.otlpAllowRemote, "OTLP receiver");
  live::OtlpReceiverOptions o;
  o.address = a.address;
  o.port = a.port;
  // The same reader as `listen --otlp-token-file`: a file without a token is an error,
  // never authentication silently off; beyond loopback a token is required.
  if (!cfg_.otlpTokenFile.isEmpty())
    o.bearerToken = live::readBearerTokenFile(cfg_.otlpTokenFile.toStdString());
  if (!o.address.isLoopback() && o.bearerToken.empty())
    throw InputError("OTLP receiver", 0, "",
                     "listening on " + o.address.toString().toStdString() +
                         " needs a token file (anyone who can reach it could send spans)");
  // The instance bound is applied before a request is acknowledged, as in `listen`: a span
  // of a name over it is answered in partialSuccess, an admitted one reaches the engine.
  otlp_ = new live::OtlpReceiver(
      o, [this](const formats::SpanCall& s) { shadow_->addReservedCall(s.view()); }, this);
  otlp_->admit = [this](const formats::SpanCall& c) {
    return shadow_->reserve(c.instance, c.model, c.ts + c.latency);
  };
  otlp_->admitRefusal = "their instance is over the console's Live mode bound of " +
                        std::to_string(cfg_.maxInstances) +
                        " instances (--live-max-instances; kept until Live mode restarts)";
  otlp_->onBatchApplied = [this](std::size_t, std::int64_t latencyUs) {
    noteData(steadyNowNs() - latencyUs * 1000);  // from the request's arrival
  };
  if (!otlp_->start())
    throw InputError(
        "OTLP receiver", 0, "",
        "cannot listen on " + cfg_.otlp.toStdString() + ": " + otlp_->errorString().toStdString());
  return otlp_->port();
}

void LiveSession::openTail() {
  live::TailOptions to;
  to.pollMs = 100;  // a line is on screen within a poll plus a refresh
  to.fromStart = cfg_.tailFromStart;
  tail_ = new live::LogTail(
      cfg_.tailFile, to,
      [this](std::string_view line) {
        shadow_->addLine(line);
        noteData(steadyNowNs());
      },
      this);
  tail_->start();
}

void LiveSession::openPrometheus() {
  prom_ = new live::PrometheusPuller(
      live::pullerOptions(*cfg_.prometheus, "Prometheus: "),
      [this](const live::PromSample& s) {
        shadow_->addAggregate(s.view(), s.p99Ms);
        noteData(steadyNowNs());
      },
      this);
  connect(prom_, &live::PrometheusPuller::failed, this,
          [this](const QString& m) { sourceErrors_.push_back(m); });
  prom_->start();
}

void LiveSession::closeSources() {
  delete otlp_;
  otlp_ = nullptr;
  delete tail_;
  tail_ = nullptr;
  delete prom_;
  prom_ = nullptr;
}

void LiveSession::stop() {
  if (tail_) tail_->poll();
  if (otlp_) otlp_->drain();  // what was acknowledged reaches the engine
  publish();
  closeSources();
  if (timer_) timer_->stop();
  if (recorder_) {
    try {
      recorder_->close();
    } catch (const std::exception& e) {
      emit failed(QString::fromUtf8(e.what()));
    }
    recorder_.reset();
  }
}

bool LiveSession::flushRecording(QString* error) {
  if (!recorder_) {
    if (error) *error = tr("Live mode is not recording");
    return false;
  }
  try {
    if (recorder_->flush(5000)) return true;
    if (error) *error = tr("the library stayed busy; the recording is still buffered");
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
  }
  return false;
}

void LiveSession::publish() {
  if (!shadow_) return;
  shadow_->flush();  // the lines the last polls brought
  // The recorder commits by data time; a quiet source still gets its calls committed within
  // a second of wall time.
  if (recorder_ && steadyNowNs() - lastFlushNs_ > 1'000'000'000) {
    lastFlushNs_ = steadyNowNs();
    try {
      recorder_->flush(0);
    } catch (const std::exception& e) {
      sourceErrors_.push_back(QString::fromUtf8(e.what()));
    }
  }
  const live::InstanceBoundStats& bound = shadow_->bound();
  if (!boundReported_ && (bound.callsRejected || bound.samplesRejected)) {
    // Once, in red in the verdict list: from now on new names are refused until a restart.
    boundReported_ = true;
    sourceErrors_.push_back(
        tr("instance bound reached: %L1 instances kept; the calls and samples of any other "
           "instance are refused until Live mode is restarted (Max instances, "
           "--live-max-instances)")
            .arg(static_cast<qulonglong>(cfg_.maxInstances)));
  }
  // Refusals alone (every span of a flood over the bound) change the counts on screen too.
  const std::uint64_t refused = bound.callsRejected + bound.samplesRejected;
  if (!dirty_ && verdictsSent_ == verdicts_.size() && sourceErrors_.empty() &&
      refused == refusedSent_)
    return;
  refusedSent_ = refused;
  auto c = std::make_shared<Comparison>();
  c->mode = view::Mode::Live;
  c->scenarioName = "live";
  c->protectedRun.timeline = timeline_->snapshot();
  c->origin = timeline_->origin() == kNever ? 0 : timeline_->origin();
  LiveStatus st;
  st.otlpPort = otlp_ ? otlp_->port() : 0;
  st.calls = timeline_->calls();
  st.lines = shadow_->lines();
  st.badLines = shadow_->badLines();
  st.late = timeline_->late();
  st.instances = bound.tracked;
  st.maxInstances = cfg_.maxInstances;
  st.callsRefused = bound.callsRejected;
  st.samplesRefused = bound.samplesRejected;
  if (otlp_) {
    st.spansAcked = otlp_->stats().callsAcked;
    st.spansRejected = otlp_->stats().spansRejected;
    st.requestsShed = otlp_->stats().shed;
  }
  st.callsPerSecond = callsPerSecond(c->protectedRun.timeline);
  for (; verdictsSent_ < verdicts_.size(); ++verdictsSent_) st.verdicts << verdicts_[verdictsSent_];
  if (prom_) {
    st.promSamples = prom_->stats().samples;
    st.promFailedPolls = prom_->stats().failedPolls;
  }
  if (recorder_) {
    st.recorded = recorder_->stats().committed;
    st.recordPending = recorder_->stats().pending;
  }
  for (const QString& m : sourceErrors_) st.errors << m;
  sourceErrors_.clear();
  const auto& errors = shadow_->errors();
  for (; errorsSent_ < errors.size(); ++errorsSent_)
    st.errors << QString::fromStdString(errors[errorsSent_]);
  st.oldestNewDataNs = oldestNew_;
  oldestNew_ = 0;
  dirty_ = false;
  emit snapshot(std::shared_ptr<const Comparison>(std::move(c)), st);
}

LiveController::LiveController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<spillway::console::LiveStatus>("spillway::console::LiveStatus");
  qRegisterMetaType<std::shared_ptr<const Comparison>>(
      "std::shared_ptr<const spillway::console::Comparison>");
  thread_.setObjectName("spillway-live");
}

// The window closes Live mode before it goes (MainWindow::closeEvent waits for closed()), so
// this finds the thread idle; only a controller destroyed with a session still open (a test
// tearing down) blocks here, since the session must commit its recording before its thread
// ends.
LiveController::~LiveController() {
  stop(Qt::BlockingQueuedConnection);
  thread_.quit();
  thread_.wait();
}

void LiveController::start(const LiveConfig& cfg) {
  stop();
  if (!thread_.isRunning()) thread_.start();
  session_ = new LiveSession(cfg);
  session_->moveToThread(&thread_);
  connect(session_, &LiveSession::started, this, &LiveController::started);
  connect(session_, &LiveSession::failed, this, [this](const QString& m) {
    stop();
    emit failed(m);
  });
  connect(session_, &LiveSession::snapshot, this, &LiveController::snapshot);
  QMetaObject::invokeMethod(session_, &LiveSession::start, Qt::QueuedConnection);
}

void LiveController::flushRecording(std::function<void(bool ok, const QString& error)> done) {
  if (!session_) {
    done(false, tr("Live mode is off"));
    return;
  }
  // Queued before any stop() of this session, so it runs while the session exists; the answer
  // comes back to this object, which outlives the session thread (its destructor waits).
  LiveSession* s = session_;
  QMetaObject::invokeMethod(
      s,
      [this, s, done = std::move(done)] {
        QString message;
        const bool ok = s->flushRecording(&message);
        QMetaObject::invokeMethod(
            this, [done, ok, message] { done(ok, message); }, Qt::QueuedConnection);
      },
      Qt::QueuedConnection);
}

void LiveController::stop() {
  stop(Qt::QueuedConnection);
}

void LiveController::stop(Qt::ConnectionType how) {
  if (!session_) return;
  LiveSession* s = session_;
  session_ = nullptr;
  ++closing_;
  // Delivered on this thread once the session is deleted on its own; dropped if this
  // controller is gone by then.
  connect(
      s, &QObject::destroyed, this,
      [this] {
        if (--closing_ == 0) emit closed();
      },
      Qt::QueuedConnection);
  // Closed on its own thread (its sockets and timers live there), then deleted there; a new
  // session's start is queued behind it, so a port it held is free again by then.
  QMetaObject::invokeMethod(
      s,
      [s] {
        s->stop();
        delete s;
      },
      how);
  emit stopped();
}

}  // namespace spillway::console
