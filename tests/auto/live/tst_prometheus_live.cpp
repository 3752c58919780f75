// The Prometheus path end to end with the real Debian server: `spillway-cli simulate
// --serve-metrics` plays three instances in real time (x2; chat-3 gets +800 ms nine seconds in),
// /usr/bin/prometheus scrapes it every second from a temporary directory, and
// `spillway-cli listen --prometheus … --prom-preset spillway` pulls the per-step counts back
// through query_range into the shadow monitor: chat-3, and no other instance, would open.
// Also: every preset's PromQL is accepted by the real server, and a query it refuses is
// reported with its own error. When /usr/bin/prometheus is missing it fails under CI=true and
// skips elsewhere (SPW_REQUIRE_PEER; .ci/install-deps installs it).
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
#include <QTemporaryDir>
#include <QTest>

#include "live_testing.hpp"
#include "require_peer.hpp"
#include "spillway/live/prometheus_presets.hpp"
#include "spillway/live/prometheus_pull.hpp"

using namespace spillway;

using namespace live_testing;

namespace {

constexpr const char* kPrometheus = "/usr/bin/prometheus";
constexpr int kFaultAtWallMs = 9000;  // scenario 18 s at --speed 2

const char* const kScenario = R"(version: 1
name: prometheus-drill
duration: 5m
seed: 11
routing: round_robin  # chat-3 keeps a third of the calls while it is slow
models:
  - name: chat
    instances: 3
    slots: 16
    queue: 64
    service: {base: 40ms, sigma: 0.2}
clients:
  - {name: app, model: chat, rate: 15}
faults:
  - {type: delay, target: chat-3, at: 18s, duration: 4m, delay: 800ms}
)";

// A 5 s window, 10 calls, slow rate over 0.4 (slow: the calls over the 0.5 s bucket bound, as
// counted by the preset's PromQL), sustained 2 s.
const char* const kPolicy = R"(version: 1
name: prom-drill
breaker:
  window: {type: time, length: 5s, bucket: 1s}
  min_calls: 10
  trip: {error_rate: 0.5, slow_rate: 0.4, sustain: 2s}
)";

// Prometheus in the foreground on a free loopback port, storage in `dir`; false (with its
// output in `log`) unless it answers /-/ready within 15 s.
bool startPrometheus(QProcess& prom, const QString& dir, const QByteArray& config, quint16& port,
                     QByteArray& log) {
  {
    QTcpServer s;  // a free port, released for Prometheus to take
    port = s.listen(QHostAddress::LocalHost, 0) ? s.serverPort() : 0;
  }
  QFile f(dir + "/prometheus.yml");
  if (!port || !f.open(QIODevice::WriteOnly) || f.write(config) != config.size()) return false;
  f.close();
  prom.setProcessChannelMode(QProcess::MergedChannels);
  prom.start(kPrometheus,
             {"--config.file=" + dir + "/prometheus.yml", "--storage.tsdb.path=" + dir + "/data",
              "--web.listen-address=127.0.0.1:" + QString::number(port), "--log.level=warn"});
  if (!prom.waitForStarted(5000)) return false;
  QNetworkAccessManager nam;
  const QUrl ready(QString("http://127.0.0.1:%1/-/ready").arg(port));
  const bool ok = QTest::qWaitFor(
      [&] {
        if (prom.state() == QProcess::NotRunning) return true;
        QNetworkReply* r = nam.get(QNetworkRequest(ready));
        (void)QTest::qWaitFor([&] { return r->isFinished(); }, 1000);
        const bool up = r->isFinished() && r->error() == QNetworkReply::NoError;
        r->deleteLater();
        if (!up) QTest::qWait(200);
        return up;
      },
      15000);
  log = prom.readAll();
  return ok && prom.state() == QProcess::Running;
}

}  // namespace

class TstPrometheusLive : public QObject {
  Q_OBJECT
 private slots:
  void delayedInstanceWouldOpen() {
    SPW_REQUIRE_PEER(
        QFileInfo(kPrometheus).isExecutable(),
        "/usr/bin/prometheus is missing: install prometheus (.ci/install-deps) for this test");
    QElapsedTimer total;
    total.start();
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString dir = tmp.path();
    QVERIFY(writeFile(dir + "/drill.yaml", kScenario));
    QVERIFY(writeFile(dir + "/policy.yaml", kPolicy));

    // 1. The simulation behind /metrics, on any free loopback port (read from stderr).
    QProcess sim;
    sim.start(SPILLWAY_CLI, {"simulate", dir + "/drill.yaml", "--serve-metrics", "127.0.0.1:0",
                             "--speed", "2", "--no-protection"});
    QVERIFY2(sim.waitForStarted(5000), qPrintable(sim.errorString()));
    QElapsedTimer sinceSim;
    sinceSim.start();
    QProcess prom;
    auto cleanup = qScopeGuard([&] {
      stop(prom);
      stop(sim);
    });
    QByteArray simErr;
    quint16 simPort = 0;
    const QRegularExpression serving("serving metrics on http://127\\.0\\.0\\.1:(\\d+)/metrics");
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                   simErr += sim.readAllStandardError();
                   const auto m = serving.match(QString::fromUtf8(simErr));
                   if (m.hasMatch()) simPort = static_cast<quint16>(m.captured(1).toUInt());
                   return simPort || sim.state() == QProcess::NotRunning;
                 },
                 10000) &&
                 simPort,
             simErr.constData());

    // 2. Prometheus: foreground, temporary storage, loopback only, a 1 s scrape. honor_labels
    //    keeps the simulator's own `instance` label (the model instance, not the target).
    quint16 promPort = 0;
    QByteArray promLog;
    const QByteArray conf =
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: spillway-sim\n    honor_labels: true\n"
        "    static_configs:\n      - targets: ['127.0.0.1:" +
        QByteArray::number(simPort) + "']\n";
    QVERIFY2(startPrometheus(prom, dir, conf, promPort, promLog), promLog.constData());
    QNetworkAccessManager nam;
    // Prometheus hands new targets to its scrape loops in batches every 5 s: wait for the
    // first scrape, so that listen sees healthy steps before the fault.
    const QUrl scraped(QString("http://127.0.0.1:%1/api/v1/query?query=spillway_sim_requests_total")
                           .arg(promPort));
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                   QNetworkReply* r = nam.get(QNetworkRequest(scraped));
                   (void)QTest::qWaitFor([&] { return r->isFinished(); }, 1000);
                   const QJsonObject o = QJsonDocument::fromJson(r->readAll()).object();
                   r->deleteLater();
                   const bool ok = !o["data"].toObject()["result"].toArray().isEmpty();
                   if (!ok) QTest::qWait(200);
                   return ok;
                 },
                 15000),
             prom.readAll().constData());
    qInfo("prometheus scraped the simulation %lld ms after it started",
          static_cast<long long>(sinceSim.elapsed()));

    // 3. listen pulls from it with the spillway preset; 1 s steps, slow = over 0.5 s.
    QProcess listen;
    const qint64 listenStart = sinceSim.elapsed();
    listen.start(
        SPILLWAY_CLI,
        {"listen", "--prometheus", QString("http://127.0.0.1:%1").arg(promPort), "--prom-preset",
         "spillway", "--prom-step", "1s", "--prom-poll", "250ms", "--prom-delay", "1500ms",
         "--prom-slow-le", "0.5", "--policy", dir + "/policy.yaml", "--duration", "15s", "--json"});
    QVERIFY2(listen.waitForStarted(5000), qPrintable(listen.errorString()));
    std::vector<std::pair<QString, qint64>> verdicts;  // instance, ms since the simulation began
    QByteArray pending, all;
    QJsonObject summary;
    auto readLines = [&] {
      const QByteArray got = listen.readAllStandardOutput();
      all += got;
      pending += got;
      for (qsizetype nl; (nl = pending.indexOf('\n')) >= 0; pending.remove(0, nl + 1)) {
        const QJsonObject o = QJsonDocument::fromJson(pending.left(nl)).object();
        if (o["event"].toString() == "would_open")
          verdicts.emplace_back(o["instance"].toString(), sinceSim.elapsed());
        if (o["summary"].toBool()) summary = o;
      }
    };
    const bool finished = QTest::qWaitFor(
        [&] {
          readLines();
          return !summary.isEmpty() || listen.state() == QProcess::NotRunning;
        },
        30000);
    listen.waitForFinished(5000);
    // The process may end between a read and the state check: its last lines (the summary)
    // are still in the pipe.
    readLines();
    const QByteArray err = listen.readAllStandardError();
    QVERIFY2(finished, err.constData());

    // 4. The verdicts and the summary.
    // A run that ends without its summary says how it ended (a crash at exit, a kill).
    const QByteArray ended = QString("\nlisten: state %1, exit status %2, exit code %3\n")
                                 .arg(listen.state())
                                 .arg(listen.exitStatus())
                                 .arg(listen.exitCode())
                                 .toUtf8();
    QVERIFY2(summary["summary"].toBool(), (all + err + ended).constData());
    const QJsonObject pulled = summary["prometheus"].toObject();
    qInfo("listen: %d polls, %d failed, %d samples over %d steps; stderr:\n%s",
          pulled["polls"].toInt(), pulled["failed_polls"].toInt(), pulled["samples"].toInt(),
          pulled["steps"].toInt(), err.constData());
    std::map<QString, QJsonObject> rows;
    for (const QJsonValue& v : summary["instances"].toArray())
      rows[v.toObject()["instance"].toString()] = v.toObject();
    for (const auto& [name, r] : rows)
      qInfo("  %s: %d calls, %d slow, reported p99 %.0f ms, would open %d", qPrintable(name),
            r["calls"].toInt(), r["slow"].toInt(), r["reported_p99_ms"].toDouble(),
            r["would_opens"].toInt());
    QCOMPARE(pulled["failed_polls"].toInt(), 0);
    QVERIFY(pulled["samples"].toInt() >= 30);
    QCOMPARE(rows.size(), std::size_t{3});  // the simulator's names: honor_labels and the join
    for (const char* healthy : {"chat-1", "chat-2"}) {
      QVERIFY2(rows.count(healthy), healthy);
      QVERIFY(rows[healthy]["calls"].toInt() >= 50);
      QCOMPARE(rows[healthy]["slow"].toInt(), 0);
      QCOMPARE(rows[healthy]["would_opens"].toInt(), 0);
    }
    QVERIFY(rows.count("chat-3"));
    QVERIFY(rows["chat-3"]["slow"].toInt() >= 20);
    QVERIFY(rows["chat-3"]["calls"].toInt() >= 50);
    QVERIFY(rows["chat-3"]["reported_p99_ms"].toDouble() > 500);
    QVERIFY2(!verdicts.empty(), (all + err).constData());
    for (const auto& [inst, ms] : verdicts)
      QVERIFY2(inst == "chat-3", qPrintable("would open for a healthy instance: " + inst));
    qInfo(
        "fault onset -> \"would open\" printed by listen: %lld ms (listen started %lld ms "
        "after the simulation); whole test %lld ms",
        static_cast<long long>(verdicts.front().second - kFaultAtWallMs),
        static_cast<long long>(listenStart), static_cast<long long>(total.elapsed()));
    QVERIFY(verdicts.front().second > kFaultAtWallMs);
    QCOMPARE(listen.exitCode(), 1);
  }

  // Every preset's PromQL, expanded as listen expands it, is accepted by Prometheus 2.42 (an
  // empty server answers "success" with no series); a query it refuses fails the poll with the
  // server's own message, the URL and the role.
  void presetsAcceptedByTheServer() {
    SPW_REQUIRE_PEER(
        QFileInfo(kPrometheus).isExecutable(),
        "/usr/bin/prometheus is missing: install prometheus (.ci/install-deps) for this test");
    QTemporaryDir tmp;
    QProcess prom;
    auto cleanup = qScopeGuard([&] { stop(prom); });
    quint16 port = 0;
    QByteArray log;
    QVERIFY2(startPrometheus(prom, tmp.path(), "global:\n  scrape_interval: 1s\n", port, log),
             log.constData());
    std::vector<std::pair<std::string, live::PullerOptions>> cases;
    for (const live::PromPreset& p : live::promPresets()) {
      live::PullerOptions o;
      o.server = QUrl(QString("http://127.0.0.1:%1").arg(port));
      o.step = seconds(5);
      o.delay = 0;
      o.backfill = seconds(60);
      o.labels = {{"instance", p.instanceLabel}, {"model", p.modelLabel}};
      live::PromPlaceholders ph;
      ph.step = "5s";
      ph.by = p.instanceLabel + (p.modelLabel.empty() ? "" : ", " + p.modelLabel);
      QVERIFY(live::leRegex(p.slowLe, ph.le));
      for (const auto& [role, q] : p.queries) {
        std::string err;
        QVERIFY2(live::expandPromQuery(q, ph, o.queries[role], err), err.c_str());
      }
      cases.emplace_back(p.name, o);
    }
    live::PullerOptions bad = cases.front().second;
    bad.queries = {{formats::PromRole::Calls, "sum by (instance) (x"}};
    cases.emplace_back("bad PromQL", bad);
    for (auto& [name, o] : cases) {
      live::PrometheusPuller puller(o, nullptr);
      QStringList failures;
      int polls = 0;
      connect(&puller, &live::PrometheusPuller::failed, [&](const QString& m) { failures << m; });
      connect(&puller, &live::PrometheusPuller::polled, [&](int) { ++polls; });
      puller.pollNow();
      QVERIFY2(QTest::qWaitFor([&] { return polls > 0; }, 10000), name.c_str());
      if (name == "bad PromQL") {
        QCOMPARE(failures.size(), 1);
        QVERIFY2(
            failures[0].contains("(role calls): HTTP 400: the query failed:") &&
                failures[0].contains("parse error") &&
                failures[0].contains(QString("http://127.0.0.1:%1/api/v1/query_range").arg(port)),
            qPrintable(failures[0]));
      } else {
        QVERIFY2(failures.isEmpty(),
                 qPrintable(QString::fromStdString(name) + ": " + failures.join("; ")));
        QCOMPARE(puller.stats().failedPolls, std::uint64_t{0});
        QVERIFY(puller.lastEnd() != kNever);
      }
    }
  }
};

QTEST_GUILESS_MAIN(TstPrometheusLive)
#include "tst_prometheus_live.moc"
