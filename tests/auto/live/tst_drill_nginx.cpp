// The nginx drill, end to end on loopback: `spillway-cli serve-instances` plays three fake
// instances (one gets +800 ms four seconds in), the Debian nginx binary balances over them and
// writes a JSON access log, bounded load goes through nginx, and shadow mode over the tailed
// log must say "would open" for the delayed instance and for no other. When
// /usr/sbin/nginx is missing it fails under CI=true and skips elsewhere (SPW_REQUIRE_PEER;
// .ci/install-deps installs nginx-light).
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

#include <memory>
#include <vector>

#include "live_testing.hpp"
#include "nginx_testing.hpp"
#include "require_peer.hpp"
#include "spillway/live/log_tail.hpp"
#include "spillway/live/shadow.hpp"
#include "spillway/policy_yaml.hpp"

using namespace spillway;

using namespace live_testing;
using namespace nginx_testing;

namespace {

constexpr int kFaultAtMs = 4000;   // chat-3 gets +800 ms at 4 s (scenario and wall time)
constexpr int kLoadForMs = 12000;  // load through nginx from the start of serve-instances

const char* const kScenario = R"(version: 1
name: nginx-drill
duration: 60s
seed: 42
models:
  - name: chat
    instances: 3
    slots: 16
    queue: 64
    service: {base: 40ms, sigma: 0.2}
clients:
  - {name: drill, model: chat, rate: 1}
faults:
  - {type: delay, target: chat-3, at: 4s, duration: 50s, delay: 800ms}
)";

// Short window and sustain so that a drill of seconds can trip; slow = over 300 ms (the
// instances answer in ~40 ms, the delayed one in ~840 ms).
const char* const kPolicy = R"(version: 1
name: drill
breaker:
  window: {type: time, length: 5s, bucket: 1s}
  min_calls: 10
  trip: {error_rate: 0.5, slow_rate: 0.4, sustain: 2s}
  slow: {absolute: 300ms}
)";

QByteArray nginxConf(const QString& dir, quint16 port, const QStringList& upstreams,
                     const QByteArray& serverOptions, const QByteArray& location) {
  QByteArray block = "  upstream models {\n";
  for (const QString& u : upstreams) block += "    server " + u.toUtf8() + serverOptions + ";\n";
  block += "    keepalive 16;\n  }\n";
  return nginxConfAround(dir, port, block, "models", location);
}

// A drill against nginx (`drill RUNBOOK --gateway`), 150 s of scenario at ×5: chat-3 answers
// 503 during [55 s, 75 s) — nginx retries those on another instance and takes chat-3 out
// (max_fails) — and the gateway's ingress cuts the connections of drill-tagged requests during
// [57 s, 72 s). The core client is not drill-tagged: its availability must hold.
const char* const kLiveScenario = R"(version: 1
name: nginx-live-drill
duration: 150s
seed: 7
policy:
  breaker: {window: {type: time, length: 10s, bucket: 1s}}
models:
  - {name: chat, instances: 3, slots: 16, queue: 64, service: {base: 20ms, sigma: 0.2}}
clients:
  - {name: app, model: chat, criticality: core, rate: 16, timeout: 2s, slo: 1s}
  - {name: probe, model: chat, rate: 4, timeout: 2s, drill: true}
faults:
  - {type: errors, target: chat-3, at: 55s, duration: 20s, rate: 1.0, status: 503}
  - {type: reset, target: gateway, at: 57s, duration: 15s, rate: 1.0, drill_only: true}
)";

const char* const kLiveRunbook = R"(version: 1
name: nginx-live
revision: 2
scenario: scenario.yaml
expect:
  - {kpi: core_availability_during_faults, min: 0.97}
  - {kpi: availability_during_faults, max: 0.95}
  - {kpi: recovery_after_fault_s, max: 40}
)";

// The faults of kLiveScenario in 40 s of scenario (8 s of wall time at ×5).
const char* const kLiveScenarioShort = R"(version: 1
name: nginx-live-drill-short
duration: 40s
seed: 7
policy:
  breaker: {window: {type: time, length: 10s, bucket: 1s}}
models:
  - {name: chat, instances: 3, slots: 16, queue: 64, service: {base: 20ms, sigma: 0.2}}
clients:
  - {name: app, model: chat, criticality: core, rate: 16, timeout: 2s, slo: 1s}
  - {name: probe, model: chat, rate: 4, timeout: 2s, drill: true}
faults:
  - {type: errors, target: chat-3, at: 10s, duration: 20s, rate: 1.0, status: 503}
  - {type: reset, target: gateway, at: 12s, duration: 15s, rate: 1.0, drill_only: true}
)";

// A shorter drill with an expectation no gateway meets and one the callers cannot measure.
const char* const kLiveRunbookBroken = R"(version: 1
name: nginx-live
revision: 3
scenario: short.yaml
expect:
  - {kpi: core_availability_during_faults, min: 0.97}
  - {kpi: p99_ms, max: 1}
  - {kpi: degrade_switch_rate, min: 0.9}
)";

// The exported nginx config on the real nginx under POST traffic (issue 19): 30 calls/s over
// three instances, chat-3 answers 503 to 60 % of them during [15 s, 40 s) of a 50 s scenario
// played ×4. As exported (non_idempotent), nginx retries the 503s on another server and takes
// chat-3 out; with --idempotent-only it does neither, and the 503s reach the callers.
const char* const kExportScenario = R"(version: 1
name: nginx-export-drill
duration: 50s
seed: 11
models:
  - {name: chat, instances: 3, slots: 16, queue: 64, service: {base: 20ms, sigma: 0.2}}
clients:
  - {name: app, model: chat, criticality: core, rate: 30, timeout: 2s, slo: 1s}
faults:
  - {type: errors, target: chat-3, at: 15s, duration: 25s, rate: 0.6, status: 503}
)";

const char* const kExportRunbook = R"(version: 1
name: nginx-export
scenario: scenario.yaml
expect:
  - {kpi: core_availability_during_faults, min: 0.97}
)";

const char* const kExportPolicy = R"(version: 1
name: export-drill
breaker:
  window: {type: time, length: 10s, bucket: 1s}
  min_calls: 10
  trip: {error_rate: 0.5, sustain: 0s}
  open: {duration: 5s}
)";

}  // namespace

class TstDrillNginx : public QObject {
  Q_OBJECT
 private slots:
  void serveInstancesErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("no scenario") << QStringList{} << "expected one SCENARIO";
    QTest::newRow("missing file") << QStringList{"nope/x.yaml"} << "nope/x.yaml";
    QTest::newRow("bad speed") << QStringList{"@", "--speed", "0"} << "--speed: expected";
    QTest::newRow("bad port") << QStringList{"@", "--base-port", "70000"} << "--base-port";
    QTest::newRow("port in use") << QStringList{"@", "--base-port", "BUSY"} << "cannot listen";
  }
  void serveInstancesErrors() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    QVERIFY(writeFile(tmp.path() + "/drill.yaml", kScenario));
    QTcpServer busy;  // holds a port the instances cannot take
    QVERIFY(busy.listen(QHostAddress::LocalHost, 0));
    for (QString& a : args) {
      if (a == "@") a = tmp.path() + "/drill.yaml";
      if (a == "BUSY") a = QString::number(busy.serverPort());
    }
    QProcess p;
    p.start(SPILLWAY_CLI, QStringList{"serve-instances"} + args + QStringList{"--duration", "2s"});
    QVERIFY(p.waitForFinished(10000));
    const QByteArray err = p.readAllStandardError();
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(err.contains(message.toUtf8()), err.constData());
  }

  // The runbook against nginx: the callers' KPIs judged (exit 0), the ingress fault reached
  // nginx as client disconnects (499) of drill-tagged requests only, and a broken runbook
  // exits 1 naming what failed and what could not be measured.
  void liveRunbookThroughNginx() {
    SPW_REQUIRE_PEER(
        QFileInfo(kNginx).isExecutable(),
        "/usr/sbin/nginx is missing: install nginx-light (.ci/install-deps) for the drill");
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString dir = tmp.path();
    QVERIFY(writeFile(dir + "/scenario.yaml", kLiveScenario));
    QVERIFY(writeFile(dir + "/drill.yaml", kLiveRunbook));
    QVERIFY(writeFile(dir + "/broken.yaml", kLiveRunbookBroken));
    QVERIFY(writeFile(dir + "/short.yaml", kLiveScenarioShort));
    const quint16 base = freePorts(3), port = freePort();
    QVERIFY(base && port);
    QStringList upstreams;
    for (int i = 0; i < 3; ++i) upstreams << QString("127.0.0.1:%1").arg(base + i);
    QVERIFY(
        writeFile(dir + "/nginx.conf",
                  nginxConf(dir, port, upstreams, " max_fails=1 fail_timeout=10s",
                            "      proxy_next_upstream error timeout http_503 non_idempotent;\n")));
    QProcess nginx;
    auto cleanup = qScopeGuard([&] { stop(nginx); });
    const QByteArray why = startNginx(nginx, dir, port);
    QVERIFY2(why.isEmpty(), why.constData());

    auto drill = [&](const QString& runbook, QByteArray* err) {
      QProcess p;
      p.start(SPILLWAY_CLI, {"drill", dir + "/" + runbook, "--gateway",
                             QString("http://127.0.0.1:%1/v1/chat/completions").arg(port),
                             "--base-port", QString::number(base), "--speed", "5", "--json"});
      const bool ended = p.waitForFinished(120000);
      if (!ended) stop(p);
      *err = p.readAllStandardError();
      return std::make_pair(ended ? p.exitCode() : -1, p.readAllStandardOutput());
    };
    QByteArray err;
    const auto [code, out] = drill("drill.yaml", &err);
    qInfo("%s", err.constData());
    QVERIFY2(code == 0, (out + err).constData());
    const QJsonObject j = QJsonDocument::fromJson(out).object();
    QCOMPARE(j.value("target").toString(),
             QString("gateway http://127.0.0.1:%1/v1/chat/completions").arg(port));
    QVERIFY(j.value("passed").toBool());
    const QJsonObject k = j.value("kpis").toObject();
    qInfo("core during faults %.4f, during faults %.4f, recovery %.1f s, p99 %.1f ms",
          k.value("core_availability_during_faults").toDouble(),
          k.value("availability_during_faults").toDouble(),
          k.value("recovery_after_fault_s").toDouble(), k.value("p99_ms").toDouble());
    QVERIFY(k.value("false_positive_rate").isNull());  // not measurable at the callers
    // The ingress fault: nginx saw drill-tagged clients go away (499), no one else.
    const QList<QByteArray> lines = readFile(dir + "/access.log").split('\n');
    int drillClosed = 0, otherClosed = 0, lineCount = 0;
    for (const QByteArray& l : lines) {
      if (l.isEmpty()) continue;
      ++lineCount;
      if (!l.contains("\"status\":\"499\"")) continue;
      (l.contains("\"drill\":\"1\"") ? drillClosed : otherClosed)++;
    }
    qInfo("%d access-log lines, %d drill-tagged 499s, %d others", lineCount, drillClosed,
          otherClosed);
    QVERIFY(lineCount > 500);
    QVERIFY2(drillClosed > 0, "no drill-tagged client disconnect reached nginx");
    QCOMPARE(otherClosed, 0);

    const auto [brokenCode, brokenOut] = drill("broken.yaml", &err);
    QVERIFY2(brokenCode == 1, (brokenOut + err).constData());
    const QJsonArray checks = QJsonDocument::fromJson(brokenOut).object().value("checks").toArray();
    QCOMPARE(checks.size(), 3);
    QVERIFY(checks[0].toObject().value("passed").toBool());
    QVERIFY(!checks[1].toObject().value("passed").toBool());
    QVERIFY(checks[1].toObject().value("measured").toDouble() > 1);
    QVERIFY(!checks[2].toObject().value("passed").toBool());
    QVERIFY(checks[2].toObject().value("measured").isNull());
  }

  void exportedConfigTakesTheFailingPeerOut_data() {
    QTest::addColumn<bool>("idempotentOnly");
    QTest::newRow("as exported (non_idempotent)") << false;
    QTest::newRow("--idempotent-only") << true;
  }
  void exportedConfigTakesTheFailingPeerOut() {
    SPW_REQUIRE_PEER(
        QFileInfo(kNginx).isExecutable(),
        "/usr/sbin/nginx is missing: install nginx-light (.ci/install-deps) for the drill");
    QFETCH(bool, idempotentOnly);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString dir = tmp.path();
    QVERIFY(writeFile(dir + "/scenario.yaml", kExportScenario));
    QVERIFY(writeFile(dir + "/drill.yaml", kExportRunbook));
    QVERIFY(writeFile(dir + "/policy.yaml", kExportPolicy));
    QVERIFY(writeFile(dir + "/trace.jsonl", threeInstanceTrace()));

    // 1. The export, as a user runs it.
    QStringList args{"export",
                     "--target",
                     "nginx",
                     "--policy",
                     dir + "/policy.yaml",
                     "--validate",
                     dir + "/trace.jsonl",
                     "--out",
                     dir + "/upstreams.conf"};
    if (idempotentOnly) args << "--idempotent-only";
    QProcess exporter;
    exporter.start(SPILLWAY_CLI, args);
    QVERIFY(exporter.waitForFinished(60000));
    QVERIFY2(exporter.exitCode() == 0, exporter.readAllStandardError().constData());
    QByteArray conf = readFile(dir + "/upstreams.conf");
    QCOMPARE(conf.contains("non_idempotent"), !idempotentOnly);

    // 2. Its placeholder addresses → the instances' ports; nginx includes the file as is.
    const quint16 base = freePorts(3), port = freePort();
    QVERIFY(base && port);
    const QRegularExpression server(R"(server (\S+) ([^;]*);\s*# chat-(\d))");
    int servers = 0;
    for (auto it = server.globalMatch(QString::fromUtf8(conf)); it.hasNext(); ++servers) {
      const auto m = it.next();
      conf.replace(m.captured(1).toUtf8() + " " + m.captured(2).toUtf8(),
                   "127.0.0.1:" + QByteArray::number(base + m.captured(3).toInt() - 1) + " " +
                       m.captured(2).toUtf8());
    }
    QCOMPARE(servers, 3);
    QVERIFY(writeFile(dir + "/upstreams.conf", conf));
    const auto name = QRegularExpression(R"(upstream (\S+) \{)").match(QString::fromUtf8(conf));
    QVERIFY(name.hasMatch());
    QVERIFY(writeFile(dir + "/nginx.conf",
                      nginxConfAround(dir, port, "  include " + dir.toUtf8() + "/upstreams.conf;\n",
                                      name.captured(1).toUtf8(), "")));
    QProcess nginx;
    auto cleanup = qScopeGuard([&] { stop(nginx); });
    const QByteArray why = startNginx(nginx, dir, port);
    QVERIFY2(why.isEmpty(), why.constData());

    // 3. The drill through it: POST calls, the 503 wave on chat-3.
    QProcess drill;
    drill.start(SPILLWAY_CLI, {"drill", dir + "/drill.yaml", "--gateway",
                               QString("http://127.0.0.1:%1/v1/chat/completions").arg(port),
                               "--base-port", QString::number(base), "--speed", "4", "--json"});
    const bool ended = drill.waitForFinished(90000);
    if (!ended) stop(drill);
    QVERIFY(ended);
    const QByteArray out = drill.readAllStandardOutput();
    const double coreInFault = QJsonDocument::fromJson(out)
                                   .object()
                                   .value("kpis")
                                   .toObject()
                                   .value("core_availability_during_faults")
                                   .toDouble(-1);

    // 4. nginx's own record: chat-3's share of the calls during the wave, 503s to callers.
    const QByteArray chat3 = "127.0.0.1:" + QByteArray::number(base + 2);
    std::vector<std::pair<double, QJsonObject>> lines;
    for (const QByteArray& l : readFile(dir + "/access.log").split('\n'))
      if (!l.isEmpty()) {
        const QJsonObject o = QJsonDocument::fromJson(l).object();
        lines.emplace_back(o.value("msec").toString().toDouble(), o);
      }
    // The wave: from nginx's first 503 for its 25 s of scenario (6.25 s at ×4).
    double t0 = 1e300;
    for (const auto& [t, o] : lines)
      if (o.value("upstream_status").toString().contains("503")) t0 = std::min(t0, t);
    const double t1 = t0 + 25.0 / 4;
    int inWave = 0, onChat3 = 0, to503 = 0;
    for (const auto& [t, o] : lines) {
      to503 += o.value("status").toString() == "503";
      if (t < t0 || t > t1) continue;
      ++inWave;
      onChat3 += o.value("upstream_addr").toString().contains(QString::fromUtf8(chat3));
    }
    const double share = inWave ? static_cast<double>(onChat3) / inWave : -1;
    qInfo(
        "%s: %zu calls, %d during the wave (%.1f s), chat-3 tried on %.1f %% of them, %d 503s "
        "to callers; drill exit %d, core availability during the fault %.4f",
        idempotentOnly ? "--idempotent-only" : "as exported", lines.size(), inWave, t1 - t0,
        share * 100, to503, drill.exitCode(), coreInFault);
    QVERIFY(inWave > 50);
    if (!idempotentOnly) {
      QVERIFY2(drill.exitCode() == 0, (out + drill.readAllStandardError()).constData());
      QVERIFY2(share < 0.2, "nginx kept sending to the failing peer");
      QCOMPARE(to503, 0);  // every 503 was retried on another server
    } else {
      QCOMPARE(drill.exitCode(), 1);  // the runbook's availability bar breaks
      QVERIFY2(share > 0.25, "chat-3 was taken out without non_idempotent");
      QVERIFY(to503 > 0);
    }
  }

  void delayedInstanceWouldOpen() {
    SPW_REQUIRE_PEER(
        QFileInfo(kNginx).isExecutable(),
        "/usr/sbin/nginx is missing: install nginx-light (.ci/install-deps) for the drill");
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString dir = tmp.path();
    QVERIFY(writeFile(dir + "/drill.yaml", kScenario));

    // 1. The fake instances, on any free ports; their addresses come on stderr.
    QProcess serve;
    serve.start(SPILLWAY_CLI,
                {"serve-instances", dir + "/drill.yaml", "--base-port", "0", "--duration", "40s"});
    QVERIFY2(serve.waitForStarted(5000), qPrintable(serve.errorString()));
    QElapsedTimer sinceServe;
    sinceServe.start();
    QByteArray serveErr;
    std::map<std::string, std::string, std::less<>> aliases;  // 127.0.0.1:port → chat-N
    QStringList upstreams;
    const QRegularExpression listening("^(\\S+) listening on (127\\.0\\.0\\.1:\\d+)",
                                       QRegularExpression::MultilineOption);
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                   serveErr += serve.readAllStandardError();
                   aliases.clear();
                   upstreams.clear();
                   for (auto it = listening.globalMatch(QString::fromUtf8(serveErr));
                        it.hasNext();) {
                     const auto m = it.next();
                     aliases[m.captured(2).toStdString()] = m.captured(1).toStdString();
                     upstreams << m.captured(2);
                   }
                   return upstreams.size() == 3 || serve.state() == QProcess::NotRunning;
                 },
                 10000) &&
                 upstreams.size() == 3,
             serveErr.constData());

    // 2. nginx in front of them: foreground, temp prefix, loopback only, a JSON access log.
    const quint16 port = freePort();
    QVERIFY(port);
    QVERIFY(writeFile(dir + "/nginx.conf",
                      nginxConf(dir, port, upstreams, "", "      proxy_next_upstream off;\n")));
    QProcess nginx;
    auto cleanup = qScopeGuard([&] {
      stop(nginx);
      stop(serve);
    });
    const QByteArray nginxWhy = startNginx(nginx, dir, port);
    QVERIFY2(nginxWhy.isEmpty(), nginxWhy.constData());

    // 3. Shadow mode over nginx's log, as `listen --tail` runs it.
    live::ShadowOptions opt;
    opt.format = formats::Format::Nginx;
    opt.aliases = aliases;
    opt.sourceName = "access.log";
    live::ShadowMonitor monitor(parsePolicy(kPolicy, "drill.yaml"), opt);
    std::vector<std::pair<std::string, qint64>> verdicts;  // instance, ms since serve start
    monitor.onWouldOpen = [&](const live::WouldOpenVerdict& v) {
      verdicts.emplace_back(v.instance, sinceServe.elapsed());
      qInfo("%s", v.text.c_str());
    };
    live::TailOptions to;
    to.pollMs = 100;
    to.fromStart = true;
    live::LogTail tail(dir + "/access.log", to, [&](std::string_view l) { monitor.addLine(l); });
    tail.start();
    QTimer flush;
    connect(&flush, &QTimer::timeout, [&] { monitor.flush(); });
    flush.start(100);

    // 4. Bounded load: 6 callers in a loop with 100 ms of think time, until kLoadForMs.
    QNetworkAccessManager nam;
    const QByteArray body =
        R"({"model":"chat","messages":[{"role":"user","content":"drill"}],"max_tokens":4})";
    int sent = 0, ok = 0, failed = 0, active = 0;
    std::function<void()> call = [&] {
      if (sinceServe.elapsed() >= kLoadForMs) return;
      QNetworkRequest rq(QUrl(QString("http://127.0.0.1:%1/v1/chat/completions").arg(port)));
      rq.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
      rq.setTransferTimeout(10000);
      QNetworkReply* r = nam.post(rq, body);
      ++sent;
      ++active;
      connect(r, &QNetworkReply::finished, r, [&, r] {
        --active;
        (r->error() == QNetworkReply::NoError ? ok : failed)++;
        r->deleteLater();
        QTimer::singleShot(100, &nam, call);
      });
    };
    for (int i = 0; i < 6; ++i) call();
    QVERIFY(QTest::qWaitFor([&] { return sinceServe.elapsed() >= kLoadForMs && active == 0; },
                            kLoadForMs + 15000));
    QTest::qWait(300);  // nginx writes the last lines
    tail.poll();
    monitor.flush();

    // 5. The verdicts.
    qInfo("%d requests through nginx (%d ok, %d failed), %llu log lines, %llu calls", sent, ok,
          failed, static_cast<unsigned long long>(monitor.lines()),
          static_cast<unsigned long long>(monitor.records()));
    for (const auto& r : monitor.summary())
      qInfo("  %s: %llu calls, %llu slow, p99 %.0f ms, would open %llu", r.instance.c_str(),
            static_cast<unsigned long long>(r.calls), static_cast<unsigned long long>(r.slow),
            r.p99Ms, static_cast<unsigned long long>(r.wouldOpens));
    QVERIFY2(monitor.errors().empty(),
             monitor.errors().empty() ? "" : monitor.errors().front().c_str());
    QVERIFY2(failed == 0, qPrintable(QString("%1 failed requests").arg(failed)));
    QVERIFY(monitor.records() >= 100);
    QVERIFY2(!verdicts.empty(), "no would-open verdict for the delayed instance");
    for (const auto& [inst, ms] : verdicts)
      QVERIFY2(inst == "chat-3", ("would open for a healthy instance: " + inst).c_str());
    const qint64 detect = verdicts.front().second - kFaultAtMs;
    qInfo("fault onset -> \"would open\" seen by the tail: %lld ms",
          static_cast<long long>(detect));
    QVERIFY2(detect > 0 && detect < kLoadForMs, qPrintable(QString::number(detect)));
    QVERIFY2(serveErr.contains("chat-3 fault started: delay +800ms") ||
                 serve.readAllStandardError().contains("chat-3 fault started: delay +800ms"),
             serveErr.constData());
  }
};

QTEST_GUILESS_MAIN(TstDrillNginx)
#include "tst_drill_nginx.moc"
