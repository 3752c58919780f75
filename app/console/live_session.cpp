#include "live_session.hpp"

#include <QDateTime>
#include <QFileInfo>
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
    if (Watch* w = watch(SourceHealth::Source::Recording))
      w->fail(tr("recording stopped: %1").arg(QString::fromUtf8(e.what())), steadyNowNs());
    recorder_.reset();
  }
}

// --- Source health -------------------------------------------------------------------------

void LiveSession::Watch::count(quint64 total, qint64 nowNs) {
  if (total > h.total) {
    lastDataNs = lastOkNs = nowNs;
    h.lastDataMs = h.lastOkMs = QDateTime::currentMSecsSinceEpoch();
  }
  h.total = total;
  // The rate over the last few seconds of wall time (a snapshot's few hundred ms would
  // jitter), from the counts the watch saw at each tick.
  history.emplace_back(nowNs, total);
  while (history.size() > 2 && nowNs - history[1].first >= kRateWindowNs) history.pop_front();
  const auto [t0, n0] = history.front();
  if (nowNs - t0 >= kRateWindowNs / 10)
    h.perSecond = static_cast<double>(total - n0) * 1e9 / static_cast<double>(nowNs - t0);
}

void LiveSession::Watch::ok(qint64 nowNs) {
  lastOkNs = nowNs;
  h.lastOkMs = QDateTime::currentMSecsSinceEpoch();
}

void LiveSession::Watch::fail(const QString& why, qint64 nowNs) {
  lastFailNs = nowNs;
  failure = why;
}

// Failing while the last thing that happened was a failure; then waiting for what the source
// needs (a file); receiving while data came within quietNs; otherwise waiting (idle).
void LiveSession::Watch::settle(qint64 nowNs) {
  if (lastFailNs != 0 && lastFailNs > std::max(lastOkNs, lastDataNs)) {
    h.state = SourceHealth::State::Failing;
    h.reason = failure;
  } else if (!waitingFor.isEmpty()) {
    h.state = SourceHealth::State::Waiting;
    h.reason = waitingFor;
  } else if (lastDataNs != 0 && nowNs - lastDataNs < quietNs) {
    h.state = SourceHealth::State::Receiving;
    h.reason = note;
  } else {
    h.state = SourceHealth::State::Waiting;
    h.reason = lastDataNs != 0 ? tr("no new data") : idle;
  }
  if (h.state != SourceHealth::State::Receiving) h.perSecond = 0;
}

LiveSession::Watch* LiveSession::watch(SourceHealth::Source s) {
  for (Watch& w : watches_)
    if (w.h.source == s) return &w;
  return nullptr;
}

void LiveSession::addWatch(SourceHealth::Source s, const QString& target, const QString& idle) {
  Watch w;
  w.h.source = s;
  w.h.target = target;
  w.idle = idle;
  w.history.emplace_back(steadyNowNs(), 0);  // what comes at once counts in the first rate
  w.settle(w.history.back().first);
  watches_.push_back(std::move(w));
}

// Spans acknowledged are data; requests refused with 4xx (a bad body, a wrong token) fail it
// until spans are acknowledged again.
void LiveSession::watchOtlp(Watch& w, qint64 nowNs) {
  const live::OtlpReceiverStats& s = otlp_->stats();
  if (s.rejected4xx > refusedSeen_) {
    refusedSeen_ = s.rejected4xx;
    w.fail(tr("%L1 request(s) refused with 4xx so far (a malformed body, a missing or wrong "
              "token, too large)")
               .arg(static_cast<qulonglong>(s.rejected4xx)),
           nowNs);
  }
  w.count(s.callsAcked, nowNs);
}

// A log that is not there (yet, or since a rotation) is waited for, and said so; one that
// cannot be read, or whose new lines all fail to parse, fails.
void LiveSession::watchTail(Watch& w, qint64 nowNs) {
  const QFileInfo fi(cfg_.tailFile);
  w.waitingFor.clear();
  if (!fi.exists())
    w.waitingFor = tailOpened_
                       ? tr("waiting for file %1: gone (rotated?), read again when it is back")
                             .arg(cfg_.tailFile)
                       : tr("waiting for file %1: not there yet").arg(cfg_.tailFile);
  else if (fi.isDir())
    w.fail(tr("%1 is a directory, not a log file").arg(cfg_.tailFile), nowNs);
  else if (!tailOpened_ && !fi.isReadable())
    w.fail(tr("cannot read %1: permission denied").arg(cfg_.tailFile), nowNs);
  const quint64 lines = tail_->lines(), bad = shadow_->badLines();
  const quint64 newLines = lines - tailLinesSeen_, newBad = bad - badLinesSeen_;
  tailLinesSeen_ = lines;
  badLinesSeen_ = bad;
  if (newBad > 0 && newBad >= newLines) {
    const auto& errors = shadow_->errors();
    w.fail(
        tr("%L1 new line(s) do not parse as %2%3")
            .arg(static_cast<qulonglong>(newBad))
            .arg(QString::fromUtf8(formats::formatName(cfg_.tailFormat).data(),
                                   static_cast<int>(formats::formatName(cfg_.tailFormat).size())))
            .arg(errors.empty() ? QString() : ": " + QString::fromStdString(errors.back())),
        nowNs);
    w.h.total = lines;  // lines read, but no data
    return;
  }
  if (bad > 0) {
    const auto& errors = shadow_->errors();
    w.note =
        tr("%L1 bad line(s)%2")
            .arg(static_cast<qulonglong>(bad))
            .arg(errors.empty() ? QString() : ", e.g. " + QString::fromStdString(errors.back()));
  }
  w.count(lines, nowNs);
}

bool LiveSession::updateHealth() {
  const qint64 now = steadyNowNs();
  bool changed = false;
  for (Watch& w : watches_) {
    const SourceHealth::State state = w.h.state;
    const QString reason = w.h.reason;
    switch (w.h.source) {
      case SourceHealth::Source::Otlp:
        if (otlp_) watchOtlp(w, now);
        break;
      case SourceHealth::Source::Tail:
        if (tail_) watchTail(w, now);
        break;
      case SourceHealth::Source::Prometheus:
        if (prom_) w.count(prom_->stats().samples, now);
        break;
      case SourceHealth::Source::Recording:
        if (recorder_) w.count(recorder_->stats().committed, now);
        break;
    }
    w.settle(now);
    changed = changed || state != w.h.state || reason != w.h.reason;
  }
  return changed;
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
    if (recorder_)
      addWatch(SourceHealth::Source::Recording, cfg_.recordLibrary, tr("nothing to commit yet"));
    updateHealth();
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
  // A span dated far ahead would move the live edge (and the whole view) there.
  so.wallClock = live::wallClockMicros;
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
                        " instances (--live-max-instances; kept until Live mode restarts), " +
                        live::otherRefusals(shadow_->options());
  otlp_->onBatchApplied = [this](std::size_t, std::int64_t latencyUs) {
    noteData(steadyNowNs() - latencyUs * 1000);  // from the request's arrival
  };
  if (!otlp_->start())
    throw InputError(
        "OTLP receiver", 0, "",
        "cannot listen on " + cfg_.otlp.toStdString() + ": " + otlp_->errorString().toStdString());
  addWatch(SourceHealth::Source::Otlp,
           QString("%1:%2").arg(a.address.toString()).arg(otlp_->port()),
           tr("listening, no spans yet"));
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
  // Connected before start(): a file already there is opened inside it.
  connect(tail_, &live::LogTail::opened, this, [this] { tailOpened_ = true; });
  addWatch(
      SourceHealth::Source::Tail, cfg_.tailFile,
      cfg_.tailFromStart ? tr("no lines yet") : tr("following from its end: no new lines yet"));
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
  addWatch(SourceHealth::Source::Prometheus, QString::fromStdString(cfg_.prometheus->url),
           tr("no complete step yet"));
  // Samples come once a step (or a poll): quiet for a few of those before "no new data".
  const live::PullerOptions& po = prom_->options();
  watch(SourceHealth::Source::Prometheus)->quietNs =
      std::max<qint64>(5'000'000'000, 3 * (po.step + std::max<Micros>(po.poll, po.step)) * 1000);
  // A poll ends in polled() even when it failed (failed() comes first, and only when its
  // message changes): the failed-poll count tells which it was, so a server still failing
  // keeps the row failing and one that answers again clears it.
  connect(prom_, &live::PrometheusPuller::polled, this, [this] {
    Watch* w = watch(SourceHealth::Source::Prometheus);
    if (!w) return;
    const quint64 failed = prom_->stats().failedPolls;
    if (failed > promFailedSeen_)
      w->fail(w->failure, steadyNowNs());
    else
      w->ok(steadyNowNs());
    promFailedSeen_ = failed;
  });
  connect(prom_, &live::PrometheusPuller::failed, this, [this](const QString& m) {
    if (Watch* w = watch(SourceHealth::Source::Prometheus)) w->failure = m;
  });
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
      if (Watch* w = watch(SourceHealth::Source::Recording))
        w->fail(QString::fromUtf8(e.what()), steadyNowNs());
    }
  }
  const live::InstanceBoundStats& bound = shadow_->bound();
  if (!boundReported_ && (bound.callsRejected || bound.samplesRejected)) {
    // Once, in red in the verdict list: from now on new names are refused until a restart.
    boundReported_ = true;
    notices_.push_back(
        tr("instance bound reached: %L1 instances kept; the calls and samples of any other "
           "instance are refused until Live mode is restarted (Max instances, "
           "--live-max-instances)")
            .arg(static_cast<qulonglong>(cfg_.maxInstances)));
  }
  // Refusals alone (every span of a flood over the bound) change the counts on screen too.
  const std::uint64_t refused = bound.callsRejected + bound.samplesRejected;
  // A source's health changing state (a log appearing, a poll failing, data stopping) is sent
  // too, but an idle session with steady health sends nothing.
  const bool healthChanged = updateHealth();
  if (!dirty_ && verdictsSent_ == verdicts_.size() && notices_.empty() && refused == refusedSent_ &&
      !healthChanged)
    return;
  refusedSent_ = refused;
  if (dirty_ || !lastView_ || verdictsSent_ != verdicts_.size()) {
    auto c = std::make_shared<Comparison>();
    c->mode = view::Mode::Live;
    c->scenarioName = "live";
    c->protectedRun.timeline = timeline_->snapshot();
    c->origin = timeline_->origin() == kNever ? 0 : timeline_->origin();
    lastView_ = std::move(c);
  }
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
  st.callsPerSecond = callsPerSecond(lastView_->protectedRun.timeline);
  for (; verdictsSent_ < verdicts_.size(); ++verdictsSent_) st.verdicts << verdicts_[verdictsSent_];
  if (prom_) {
    st.promSamples = prom_->stats().samples;
    st.promFailedPolls = prom_->stats().failedPolls;
  }
  if (recorder_) {
    st.recorded = recorder_->stats().committed;
    st.recordPending = recorder_->stats().pending;
  }
  for (const QString& m : notices_) st.errors << m;
  notices_.clear();
  for (const Watch& w : watches_) st.sources.push_back(w.h);
  st.oldestNewDataNs = oldestNew_;
  oldestNew_ = 0;
  dirty_ = false;
  emit snapshot(lastView_, st);
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
