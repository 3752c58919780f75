// Does the HAProxy emulation decide what the real HAProxy decides (issue 19)? For each fault
// timeline: `spillway-cli export --target haproxy --addresses`, the real Debian HAProxy 2.6
// running that backend behind a frontend that logs with the log-format the export carries in
// its header, POST traffic from `drill --gateway` while chat-3 plays the timeline, and a prober
// recording what each instance's /health answers (every 100 ms, the changes). Then HAProxy's
// log replayed under the emulation of the same backend with those health answers (`replay
// --dialect haproxy --from-export --health`). HAProxy's own "is DOWN" / "is UP" lines, read as
// it writes them, are the real decisions; the replay's transitions to OPEN / CLOSED the
// predicted ones. They must pair one to one, per server, within one check interval (`inter`,
// issue 19): a mark-down comes from the error limit (an instant), a mark-up from `rise` checks
// whose phase HAProxy sets at start-up. Then the same replay without --health, as a trace
// alone allows: its mark-up error is printed, not bounded (docs/dialects.md).
// Fails under CI=true when /usr/sbin/haproxy is missing (.ci/install-deps installs haproxy).
#include <QDateTime>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <map>
#include <memory>
#include <vector>

#include "agreement.hpp"
#include "live_testing.hpp"
#include "require_peer.hpp"
#include "spillway/formats/sniff.hpp"
#include "spillway/formats/source.hpp"

using namespace live_testing;
using agreement::cli;

namespace {

constexpr const char* kHaproxy = "/usr/sbin/haproxy";
constexpr double kCheckIntervalMs = 2000;  // the export's `inter 2s`
constexpr int kScenarioS = 35;             // see below: the fault ends at 20 s

// 35 s of scenario at ×5, `%1` is chat-3's fault (16 s of scenario, 3.2 s of wall time, ending at
// 20 s). The traffic goes on for 15 s (3 s of wall time) after the fault: a mark-down as late as
// the fault's end is marked up by `rise` checks 1 s apart, 2 s of wall time later, so every
// decision a timeline causes lies ~1 s of wall time inside the trace the replay reads. A
// decision due after the last logged call could not be predicted, and HAProxy would take it or
// not depending on whether the drill's instances were still up: a race with the drill's exit.
// The replay cannot know the phase HAProxy gave its checks at start-up, and a passing check
// clears the error count: 150 calls/s keep a run of error-limit errors short (~0.1 s on
// chat-3), so a check between them that HAProxy did not make (or the reverse) moves a
// mark-down by a few calls, not past the wave.
// error-limit 6 with on-error mark-down; rise 2 checks every fastinter 1 s (open 2 s / streak 2).
// No ramp: slowstart decides which calls a server gets, and HAProxy's log holds only the calls
// it sent — a replay of it would thin them out a second time.
const char* const kPolicy = R"(version: 1
name: agreement
breaker:
  window: {type: time, length: 10s, bucket: 1s}
  min_calls: 10
  trip: {error_rate: 0.5, sustain: 0s}
  open: {duration: 2s}
  half_open: {success_streak: 2}
  ramp: {duration: off}
)";

// Polls every instance's /health and writes each change of its answer as a health observation.
class Prober : public QObject {
 public:
  Prober(quint16 base, int n) : base_(base), last_(n, -1) {
    connect(&timer_, &QTimer::timeout, this, [this] { probeAll(); });
    timer_.start(100);
  }
  void stop() { timer_.stop(); }
  QByteArray jsonl() const { return out_; }

 private:
  void probeAll() {
    for (int i = 0; i < static_cast<int>(last_.size()); ++i) {
      QNetworkRequest rq(QUrl(QString("http://127.0.0.1:%1/health").arg(base_ + i)));
      rq.setTransferTimeout(300);
      QNetworkReply* r = nam_.get(rq);
      connect(r, &QNetworkReply::finished, this, [this, r, i] {
        const int healthy = r->error() == QNetworkReply::NoError ? 1 : 0;
        r->deleteLater();
        if (healthy == last_[i]) return;
        last_[i] = healthy;
        out_ += R"({"ts":)" + QByteArray::number(QDateTime::currentMSecsSinceEpoch()) +
                R"(,"instance":"chat-)" + QByteArray::number(i + 1) + R"(","healthy":)" +
                (healthy ? "true" : "false") + "}\n";
      });
    }
  }

  quint16 base_;
  std::vector<int> last_;  // -1 before the first answer
  QNetworkAccessManager nam_;
  QTimer timer_;
  QByteArray out_;
};

// HAProxy in front of the exported backend: its log to stdout in the export's log-format.
QByteArray haproxyConf(quint16 port, const QByteArray& backend) {
  const auto fmt = QRegularExpression(R"(log-format '([^']*)')").match(QString::fromUtf8(backend));
  const auto name = QRegularExpression(R"(\nbackend (\S+))").match(QString::fromUtf8(backend));
  if (!fmt.hasMatch() || !name.hasMatch()) return {};
  // `log global` in the frontend only: a backend with a log target would also write its
  // servers' state changes there, between the calls.
  return "global\n    log stdout format raw local0\n"
         "defaults\n    mode http\n    timeout connect 1s\n"
         "    timeout client 10s\n    timeout server 10s\n    timeout check 1s\n"
         "frontend fe\n    bind 127.0.0.1:" +
         QByteArray::number(port) + "\n    log global\n    log-format '" +
         fmt.captured(1).toUtf8() + "'\n    default_backend " + name.captured(1).toUtf8() + "\n" +
         backend;
}

struct Timeline {
  QString name, fault;
  int seed;
  bool bounded;  // false: a known gap, measured and printed
};

std::vector<Timeline> timelines() {
  return {
      {"503 wave, every call",
       "{type: errors, target: chat-3, at: 4s, duration: 16s, rate: 1.0, status: 503}", 31, true},
      {"503 wave, 60 %",
       "{type: errors, target: chat-3, at: 4s, duration: 16s, rate: 0.6, status: 503}", 32, true},
      {"blip of 1 s (0.2 s of wall time)",
       "{type: errors, target: chat-3, at: 4s, duration: 1s, rate: 1.0, status: 503}", 33, true},
      // HAProxy counts errors in a row: at 50 % six in a row are rare, at 90 % they come.
      {"resets, 90 %", "{type: reset, target: chat-3, at: 4s, duration: 16s, rate: 0.9}", 35, true},
      // HAProxy counts each refused connection as it happens, then retries after a 1 s
      // turn-around; its log has the request once, when the retries are over: the replay sees
      // the errors `retries` seconds late (docs/dialects.md).
      {"outage, then recovery (known gap: refused connections)",
       "{type: outage, target: chat-3, at: 4s, duration: 16s}", 34, false},
  };
}

// One timeline's drill: its files, ports, `drill --gateway`, HAProxy (its DOWN / UP lines as
// they arrive, its log) and the prober.
struct Run {
  Run(Timeline t, agreement::Ports p) : timeline(std::move(t)), ports(p) {
    tmp.setAutoRemove(!qEnvironmentVariableIsSet("SPW_KEEP_FILES"));  // to look at a failure
  }
  ~Run() {
    stop(haproxy);
    stop(drill);
  }
  Timeline timeline;
  agreement::Ports ports;
  QTemporaryDir tmp;
  QProcess drill, haproxy;
  std::unique_ptr<Prober> prober;
  std::map<QString, std::vector<agreement::Interval>> downs, ups;
  QByteArray pending, log;
  qint64 started = 0;  // HAProxy's launch: its checks' phase
};

// HAProxy's "is DOWN" / "is UP" lines read so far, each stamped as it arrives.
void takeStateLines(Run& r) {
  static const QRegularExpression state(R"(Server \S+/(chat-\d) is (DOWN|UP))");
  r.pending += r.haproxy.readAllStandardError();
  const double now = static_cast<double>(QDateTime::currentMSecsSinceEpoch());
  qsizetype nl;
  while ((nl = r.pending.indexOf('\n')) >= 0) {
    const auto m = state.match(QString::fromUtf8(r.pending.left(nl)));
    r.pending.remove(0, nl + 1);
    if (m.hasMatch())
      (m.captured(2) == "DOWN" ? r.downs : r.ups)[m.captured(1)].push_back({now, now});
  }
}

// Files, the export, the drill (its instances first), HAProxy and the prober; why not.
QString start(Run& r) {
  const QString dir = r.tmp.path();
  const quint16 base = r.ports.base, port = r.ports.gateway;
  if (!r.tmp.isValid() || !base) return "no temporary directory or ports";
  const QString why = agreement::writeAndExport(
      dir,
      agreement::scenario("haproxy-agreement", kScenarioS, 150, r.timeline.fault, r.timeline.seed),
      kPolicy, r.ports, "haproxy", "backend.cfg");
  if (!why.isEmpty()) return why;
  const QByteArray backend = readFile(dir + "/backend.cfg");
  const QByteArray conf = haproxyConf(port, backend);
  if (!backend.contains("inter 2s") || !backend.contains("rise 2") || conf.isEmpty() ||
      !writeFile(dir + "/haproxy.cfg", conf))
    return "unexpected export: " + QString::fromUtf8(backend);
  r.drill.start(SPILLWAY_CLI, {"drill", dir + "/drill.yaml", "--gateway",
                               QString("http://127.0.0.1:%1/v1/chat/completions").arg(port),
                               "--base-port", QString::number(base), "--speed", "5", "--json"});
  if (!r.drill.waitForStarted(5000)) return r.drill.errorString();
  QObject::connect(&r.haproxy, &QProcess::readyReadStandardError, &r.haproxy,
                   [&r] { takeStateLines(r); });
  QObject::connect(&r.haproxy, &QProcess::readyReadStandardOutput, &r.haproxy,
                   [&r] { r.log += r.haproxy.readAllStandardOutput(); });
  r.started = QDateTime::currentMSecsSinceEpoch();
  r.haproxy.start(kHaproxy, {"-db", "-f", dir + "/haproxy.cfg"});
  if (!r.haproxy.waitForStarted(5000)) return r.haproxy.errorString();
  r.prober = std::make_unique<Prober>(base, 3);
  return {};
}

// The emulation of the run's backend over its HAProxy's log, with the prober's health and
// HAProxy's start, then from the trace alone (measured, not bounded); what disagrees, or empty.
QString judge(Run& r) {
  // The drill has ended: every call has its answer, so HAProxy has written its log line. Stopped
  // now, before its checks find the drill's instances gone; once it has exited, its pipes hold
  // all it wrote.
  r.prober->stop();
  stop(r.haproxy);
  r.log += r.haproxy.readAllStandardOutput();
  takeStateLines(r);
  const QString dir = r.tmp.path(), name = r.timeline.name;
  if (!writeFile(dir + "/haproxy.jsonl", r.log) ||
      !writeFile(dir + "/health.jsonl", r.prober->jsonl()))
    return "cannot write the log";
  if (!r.downs.count("chat-3")) return "HAProxy never took chat-3 out: nothing to compare";
  QString failure;
  for (const bool withHealth : {true, false}) {
    QStringList args{"replay",
                     "--trace",
                     dir + "/haproxy.jsonl",
                     "--dialect",
                     "haproxy",
                     "--from-export",
                     dir + "/backend.cfg",
                     "--out",
                     dir + "/emulated.jsonl"};
    if (withHealth)
      args << "--health" << dir + "/health.jsonl"
           << "--gateway-start" << QString::number(r.started);
    QByteArray out, err;
    if (cli(args, &out, &err) != 0) return "replay: " + QString::fromUtf8(err);
    const QByteArray emulated = readFile(dir + "/emulated.jsonl");
    const auto d = agreement::compare(r.downs, agreement::transitionsTo(emulated, "OPEN"),
                                      kCheckIntervalMs, "mark-downs");
    const auto u = agreement::compare(r.ups, agreement::transitionsTo(emulated, "CLOSED"),
                                      kCheckIntervalMs, "mark-ups");
    if (!withHealth) {
      // A trace alone: no calls reach a server HAProxy took out, so checks read its last
      // failure.
      qInfo("%s, trace only: mark-downs %s; mark-ups %s (worst %.0f ms)", qPrintable(name),
            qPrintable(d.failure.isEmpty() ? "agree" : "differ"),
            qPrintable(u.failure.isEmpty() ? "agree" : u.failure), u.worstMs);
    } else if (!r.timeline.bounded) {
      qInfo("%s: mark-downs %s (worst %.0f ms); mark-ups %s (worst %.0f ms)", qPrintable(name),
            qPrintable(d.failure.isEmpty() ? "agree" : d.failure), d.worstMs,
            qPrintable(u.failure.isEmpty() ? "agree" : u.failure), u.worstMs);
    } else {
      for (const QString& l : d.servers + u.servers)
        qInfo("%s: %s", qPrintable(name), qPrintable(l));
      failure = !d.failure.isEmpty() ? d.failure : u.failure;
      if (failure.isEmpty())
        qInfo("%s: %zu mark-downs within %.0f ms, %zu mark-ups within %.0f ms (bound %.0f ms)",
              qPrintable(name), d.pairs, d.worstMs, u.pairs, u.worstMs, kCheckIntervalMs);
    }
  }
  return failure;
}

// POSTs one chat call through the gateway and waits for its answer; false when none came.
// One chat call; `http2`: HTTP/2 with prior knowledge (HAProxy detects its preface on the same
// bind), and the call only counts as answered when it did go over HTTP/2.
bool chat(QNetworkAccessManager& nam, quint16 port, bool http2 = false) {
  QNetworkRequest rq(QUrl(QString("http://127.0.0.1:%1/v1/chat/completions").arg(port)));
  rq.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
  rq.setTransferTimeout(5000);
  if (http2) rq.setAttribute(QNetworkRequest::Http2DirectAttribute, true);
  QNetworkReply* reply =
      nam.post(rq, R"({"model":"chat","messages":[{"role":"user","content":"hi"}]})");
  const bool done = QTest::qWaitFor([reply] { return reply->isFinished(); }, 6000);
  const bool ok = done && reply->error() == QNetworkReply::NoError &&
                  reply->attribute(QNetworkRequest::Http2WasUsedAttribute).toBool() == http2;
  reply->deleteLater();
  return ok;
}

// A request HAProxy cannot parse: it logs it without a server (<NOSRV>, 400).
void sendGarbage(quint16 port) {
  QTcpSocket s;
  s.connectToHost(QHostAddress::LocalHost, port);
  if (!s.waitForConnected(2000)) return;
  s.write("GARBAGE\r\n\r\n");
  s.waitForBytesWritten(1000);
  s.waitForReadyRead(2000);
}

}  // namespace

class TstHaproxyAgreement : public QObject {
  Q_OBJECT
 private slots:
  // One timeline after the other: the replay phases HAProxy's checks from its launch, which a
  // loaded host (five HAProxys and drills starting at once) delays by hundreds of ms.
  void decisionsAsPredicted() {
    SPW_REQUIRE_PEER(QFileInfo(kHaproxy).isExecutable(),
                     "/usr/sbin/haproxy is missing: install haproxy (.ci/install-deps)");
    QStringList failures;
    for (const Timeline& t : timelines()) {
      Run r(t, agreement::freshPorts({}));
      const QString why = start(r);
      QVERIFY2(why.isEmpty(), qPrintable(t.name + ": " + why));
      QVERIFY(QTest::qWaitFor([&] { return r.drill.state() == QProcess::NotRunning; }, 60000));
      const QString f = judge(r);
      if (!f.isEmpty()) failures << t.name + ": " + f;
    }
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join("\n")));
  }

  // On a kept-alive connection HAProxy's accept date (%Ts) is when the previous request ended:
  // a caller idle for 400 ms between calls would have each call start 400 ms early. The
  // export's log-format carries the idle time, and the import starts a call when it was sent.
  // A line without a server (a request HAProxy could not parse) is still JSON, and ignored.
  // HTTP/2 the same: a stream's accept date is when the connection's previous stream ended.
  void keptAliveCallsStartWhenSent_data() {
    QTest::addColumn<bool>("http2");
    QTest::newRow("http/1.1 kept alive") << false;
    QTest::newRow("http/2 streams on one connection") << true;
  }
  void keptAliveCallsStartWhenSent() {
    QFETCH(bool, http2);
    SPW_REQUIRE_PEER(QFileInfo(kHaproxy).isExecutable(),
                     "/usr/sbin/haproxy is missing: install haproxy (.ci/install-deps)");
    QTemporaryDir tmp;
    const agreement::Ports ports = agreement::freshPorts({});
    QVERIFY(tmp.isValid() && ports.base);
    const QString dir = tmp.path();
    const QString why = agreement::writeAndExport(
        dir,
        agreement::scenario("kept-alive", 600, 1,
                            "{type: errors, target: chat-3, at: 500s, duration: 1s, rate: 1.0}", 1),
        kPolicy, ports, "haproxy", "backend.cfg");
    QVERIFY2(why.isEmpty(), qPrintable(why));
    const QByteArray conf = haproxyConf(ports.gateway, readFile(dir + "/backend.cfg"));
    QVERIFY(!conf.isEmpty() && writeFile(dir + "/haproxy.cfg", conf));
    QProcess instances, haproxy;
    instances.start(SPILLWAY_CLI, {"serve-instances", dir + "/scenario.yaml", "--base-port",
                                   QString::number(ports.base)});
    QByteArray listeners;  // a line per instance listening, then "serving ..."
    QVERIFY(QTest::qWaitFor(
        [&] {
          listeners += instances.readAllStandardError();
          return listeners.contains("serving") || instances.state() == QProcess::NotRunning;
        },
        10000));
    QVERIFY2(instances.state() == QProcess::Running, listeners.constData());
    haproxy.start(kHaproxy, {"-db", "-f", dir + "/haproxy.cfg"});
    QVERIFY(haproxy.waitForStarted(5000));
    QNetworkAccessManager nam;
    std::vector<qint64> sent;
    QTest::qWait(300);  // HAProxy listening
    for (int i = 0; i < 6; ++i) {
      if (i > 0) QTest::qWait(400);  // the connection idles
      sent.push_back(QDateTime::currentMSecsSinceEpoch());
      QVERIFY2(chat(nam, ports.gateway, http2),
               qPrintable(QString("call %1 got no answer (over the wanted protocol)").arg(i)));
    }
    sendGarbage(ports.gateway);
    stop(haproxy);
    stop(instances);
    const QByteArray log = haproxy.readAllStandardOutput();
    namespace formats = spillway::formats;
    const std::string text = log.toStdString();
    QCOMPARE(formats::sniffFormat(text).format, std::optional(formats::Format::Haproxy));
    auto src = formats::sourceFromMemory(formats::Format::Haproxy, "haproxy.log", text, {});
    spillway::CallRecord rec;
    std::vector<spillway::Micros> starts;
    while (src->next(rec)) starts.push_back(rec.ts);
    QCOMPARE(src->ignored(), std::uint64_t{1});  // the garbage
    QCOMPARE(starts.size(), sent.size());
    int idled = 0;
    for (std::size_t i = 0; i < sent.size(); ++i) {
      const double off = static_cast<double>(starts[i]) / 1000.0 - static_cast<double>(sent[i]);
      qInfo("call %zu: started %.0f ms after it was sent", i, off);
      QVERIFY2(std::abs(off) < 150, qPrintable(QString("call %1: %2 ms off").arg(i).arg(off)));
    }
    // The calls did share a connection: HAProxy's accept dates alone are 400 ms early.
    for (const QByteArray& line : log.split('\n'))
      idled += QJsonDocument::fromJson(line).object().value("Ti").toInt() >= 300;
    QVERIFY2(idled >= 3, log.constData());
  }
};

QTEST_GUILESS_MAIN(TstHaproxyAgreement)
#include "tst_haproxy_agreement.moc"
