// Shadow mode over access-log lines: nginx, Envoy and canonical JSONL lines through the engine
// in METRICS_ONLY; the slow (or failing) upstream gets a "would open" verdict, the healthy ones
// do not; bad lines are reported with their line number and skipped. Then `spillway-cli listen`
// end to end on a file.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "spillway/live/shadow.hpp"
#include "spillway/policy_yaml.hpp"

using namespace spillway;

namespace {

// Window 5 s, 10 calls, slow = over 300 ms, sustained 2 s.
const char* const kPolicy =
    "version: 1\nname: drill\nbreaker:\n"
    "  window: {type: time, length: 5s, bucket: 1s}\n"
    "  min_calls: 10\n"
    "  trip: {error_rate: 0.5, slow_rate: 0.4, sustain: 2s}\n"
    "  slow: {absolute: 300ms}\n";

constexpr double kT0 = 1764480000.0;  // epoch seconds

QString nginxLine(double end, const QString& addr, int status, double secs) {
  return QString(
             "{\"msec\":\"%1\",\"upstream_addr\":\"%2\",\"upstream_status\":\"%3\","
             "\"upstream_response_time\":\"%4\",\"request_time\":\"%4\",\"status\":\"%3\"}")
      .arg(end, 0, 'f', 3)
      .arg(addr)
      .arg(status)
      .arg(secs, 0, 'f', 3);
}

// 20 s of traffic, 10 calls/s per upstream: :9002 turns slow (850 ms) at 5 s, :9003 answers
// 503 from 10 s, :9001 stays healthy. Lines are in end-time order, as nginx writes them.
QStringList traffic(const std::function<QString(double, const QString&, int, double)>& line) {
  struct Call {
    double end;
    QString addr;
    int status;
    double secs;
  };
  std::vector<Call> calls;
  for (int i = 0; i < 200; ++i) {
    const double t = kT0 + i * 0.1;
    calls.push_back({t + 0.05, "127.0.0.1:9001", 200, 0.05});
    const bool slow = t >= kT0 + 5;
    calls.push_back({t + (slow ? 0.85 : 0.05), "127.0.0.1:9002", 200, slow ? 0.85 : 0.05});
    const bool failing = t >= kT0 + 10;
    calls.push_back({t + (failing ? 0.02 : 0.05), "127.0.0.1:9003", failing ? 503 : 200,
                     failing ? 0.02 : 0.05});
  }
  std::stable_sort(calls.begin(), calls.end(),
                   [](const Call& a, const Call& b) { return a.end < b.end; });
  QStringList out;
  for (const Call& c : calls) out << line(c.end, c.addr, c.status, c.secs);
  return out;
}

}  // namespace

class TstShadow : public QObject {
  Q_OBJECT
 private slots:
  void verdicts_data() {
    QTest::addColumn<int>("format");
    QTest::newRow("nginx") << static_cast<int>(formats::Format::Nginx);
    QTest::newRow("jsonl") << static_cast<int>(formats::Format::Jsonl);
    QTest::newRow("envoy") << static_cast<int>(formats::Format::Envoy);
  }
  void verdicts() {
    QFETCH(int, format);
    const auto f = static_cast<formats::Format>(format);
    live::ShadowOptions opt;
    opt.format = f;
    opt.aliases["127.0.0.1:9002"] = "chat-2";
    live::ShadowMonitor m(parsePolicy(kPolicy, "drill.yaml"), opt);
    std::vector<std::string> seen;
    m.onWouldOpen = [&](const live::WouldOpenVerdict& v) { seen.push_back(v.text); };
    const auto lines = traffic([f](double end, const QString& addr, int status, double secs) {
      if (f == formats::Format::Nginx) return nginxLine(end, addr, status, secs);
      const double start = end - secs;
      if (f == formats::Format::Jsonl)
        return QString("{\"ts\":%1,\"instance\":\"%2\",\"latency_ms\":%3,\"status\":%4}")
            .arg(start * 1e3, 0, 'f', 3)
            .arg(addr)
            .arg(secs * 1e3, 0, 'f', 3)
            .arg(status);
      return QString(
                 "{\"start_time\":\"%1\",\"upstream_host\":\"%2\",\"response_code\":%3,"
                 "\"duration\":%4,\"response_flags\":\"-\"}")
          .arg(QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(start * 1e3), Qt::UTC)
                   .toString(Qt::ISODateWithMs))
          .arg(addr)
          .arg(status)
          .arg(qRound64(secs * 1e3));
    });
    for (const QString& l : lines) {
      const QByteArray b = l.toUtf8();
      m.addLine(std::string_view(b.constData(), b.size()));
    }
    m.flush();
    QVERIFY2(m.errors().empty(), m.errors().empty() ? "" : m.errors().front().c_str());
    QCOMPARE(m.records(), 600u);
    QCOMPARE(m.verdicts().size(), 2u);
    const auto& slow = m.verdicts()[0];
    QCOMPARE(slow.instance, std::string("chat-2"));
    QCOMPARE(slow.event.reason, Reason::SlowRate);
    // Onset at 5 s: the first slow answer ends at 5.85 s, the rate passes 0.4 and holds 2 s.
    const double at = static_cast<double>(slow.event.ts) / 1e6 - kT0;
    QVERIFY2(at > 7.0 && at < 10.0, qPrintable(QString::number(at)));
    QVERIFY2(QString::fromStdString(slow.text).contains(
                 QRegularExpression("^\\d\\d:\\d\\d:\\d\\d \\S+ chat-2 would open \\(slow rate "
                                    "\\d+\\.\\d % > 40\\.0 % for [0-9.]+ s\\)$")),
             slow.text.c_str());
    QCOMPARE(m.verdicts()[1].instance, std::string("127.0.0.1:9003"));
    QCOMPARE(m.verdicts()[1].event.reason, Reason::ErrorRate);
    QVERIFY(QString::fromStdString(m.verdicts()[1].text).contains("error rate 100.0 % > 50.0 %"));
    for (const auto& r : m.summary())
      QCOMPARE(r.wouldOpens, r.instance == "127.0.0.1:9001" ? 0u : 1u);
  }

  // `listen` builds each window's histogram when read instead of following every call: the
  // same verdicts and the same table, window P99 and slow threshold included.
  void windowBuiltWhenReadAnswersAlike() {
    auto run = [](bool keep) {
      live::ShadowOptions opt;
      opt.keepWindowHistograms = keep;
      live::ShadowMonitor m(parsePolicy(kPolicy, "drill.yaml"), opt);
      for (const QString& l : traffic(nginxLine)) {
        const QByteArray b = l.toUtf8();
        m.addLine(std::string_view(b.constData(), b.size()));
      }
      m.flush();
      QStringList out;
      for (const auto& v : m.verdicts()) out << QString::fromStdString(v.text);
      for (const auto& r : m.summary())
        out << QString("%1 %2 %3 %4 p99 %5 slow> %6")
                   .arg(QString::fromStdString(r.instance))
                   .arg(r.calls)
                   .arg(r.slow)
                   .arg(r.wouldOpens)
                   .arg(r.p99Ms, 0, 'g', 17)
                   .arg(r.slowThresholdUs);
      return out;
    };
    const QStringList kept = run(true), onRead = run(false);
    QCOMPARE(onRead, kept);
    QVERIFY(kept.size() >= 5 && kept.join('\n').contains("p99 "));  // verdicts and rows
    QVERIFY(!kept.join('\n').contains("p99 0 "));                   // every window held latencies
  }

  void badLinesNamed() {
    live::ShadowOptions opt;
    opt.sourceName = "access.log";
    live::ShadowMonitor m(parsePolicy(kPolicy, "drill.yaml"), opt);
    m.addLine(nginxLine(kT0, "127.0.0.1:1", 200, 0.01).toStdString());
    m.flush();
    m.addLine(nginxLine(kT0 + 1, "127.0.0.1:1", 200, 0.01).toStdString());
    m.addLine("{not json");
    m.addLine("{\"msec\":\"x\",\"upstream_addr\":\"127.0.0.1:1\",\"upstream_status\":\"200\"}");
    m.addLine(nginxLine(kT0 + 2, "127.0.0.1:1", 200, 0.01).toStdString());
    m.addLine("{\"msec\":\"1.0\",\"upstream_addr\":\"-\",\"status\":\"404\"}");  // no upstream
    m.flush();
    QCOMPARE(m.records(), 3u);
    QCOMPARE(m.badLines(), 2u);
    QCOMPARE(m.ignored(), 1u);
    QCOMPARE(m.errors().size(), 2u);
    QVERIFY2(QString::fromStdString(m.errors()[0]).startsWith("access.log:3: "),
             m.errors()[0].c_str());
    QVERIFY2(QString::fromStdString(m.errors()[1]).startsWith("access.log:4: msec: "),
             m.errors()[1].c_str());
  }

  void listenCli_data() {
    QTest::addColumn<bool>("json");
    QTest::newRow("text") << false;
    QTest::newRow("json") << true;
  }
  void listenCli() {
    QFETCH(bool, json);
    QTemporaryDir dir;
    QFile log(dir.filePath("access.log")), pol(dir.filePath("p.yaml"));
    QVERIFY(log.open(QIODevice::WriteOnly) && pol.open(QIODevice::WriteOnly));
    for (const QString& l : traffic(nginxLine)) log.write(l.toUtf8() + "\n");
    pol.write(kPolicy);
    log.close();
    pol.close();
    QStringList args{"listen",     "--tail",   log.fileName(), "--format",
                     "nginx",      "--policy", pol.fileName(), "--from-start",
                     "--duration", "500ms",    "--alias",      "127.0.0.1:9002=chat-2"};
    if (json) args << "--json";
    QProcess p;
    p.start(SPILLWAY_CLI, args);
    QVERIFY(p.waitForFinished(20000));
    const QByteArray out = p.readAllStandardOutput();
    QCOMPARE(p.exitCode(), 1);  // findings
    if (!json) {
      QVERIFY2(out.contains(" chat-2 would open (slow rate "), out.constData());
      QVERIFY2(out.contains(" 127.0.0.1:9003 would open (error rate "), out.constData());
      QVERIFY2(out.contains("600 calls"), out.constData());
      return;
    }
    const QList<QByteArray> lines = out.trimmed().split('\n');
    QCOMPARE(lines.size(), 3);
    QCOMPARE(QJsonDocument::fromJson(lines[0]).object().value("instance").toString(),
             QString("chat-2"));
    const QJsonObject sum = QJsonDocument::fromJson(lines[2]).object();
    QCOMPARE(sum.value("records").toInt(), 600);
    QCOMPARE(sum.value("would_opens").toInt(), 2);
  }

  // listen --record: the calls the engine saw (aliases applied) land in a library recording,
  // and a cut of it replays like any incident.
  void listenRecordsForCutting() {
    QTemporaryDir dir;
    QFile log(dir.filePath("access.log")), pol(dir.filePath("p.yaml"));
    QVERIFY(log.open(QIODevice::WriteOnly) && pol.open(QIODevice::WriteOnly));
    for (const QString& l : traffic(nginxLine)) log.write(l.toUtf8() + "\n");
    pol.write(kPolicy);
    log.close();
    pol.close();
    const QString lib = dir.filePath("lib.db");
    auto run = [](const QStringList& args, int expectExit) {
      QProcess p;
      p.start(SPILLWAY_CLI, args);
      if (!p.waitForFinished(20000)) return QByteArray("timeout");
      const QByteArray out = p.readAllStandardOutput() + p.readAllStandardError();
      if (p.exitCode() != expectExit)
        return QByteArray("exit ") + QByteArray::number(p.exitCode()) + ": " + out;
      return out;
    };
    QByteArray out = run({"listen", "--tail", log.fileName(), "--format", "nginx", "--policy",
                          pol.fileName(), "--from-start", "--duration", "500ms", "--alias",
                          "127.0.0.1:9002=chat-2", "--record", lib, "--retain", "168h"},
                         1);
    QVERIFY2(out.contains("recorded 600 records into"), out.constData());
    out = run({"library", "cut", "--library", lib, "--recording", "live", "--from", "-1h", "--name",
               "drill"},
              0);
    QVERIFY2(out.contains("600"), out.constData());
    out = run({"replay", "--incident", "drill", "--library", lib, "--policy", pol.fileName()}, 0);
    QVERIFY2(out.contains("chat-2"), out.constData());
    QVERIFY2(!out.contains("127.0.0.1:9002"), out.constData());
    out = run({"listen", "--tail", log.fileName(), "--record", lib, "--retain", "soon"}, 2);
    QVERIFY2(out.contains("--retain: expected a duration"), out.constData());
  }

  void listenCliErrors() {
    QProcess p;
    p.start(SPILLWAY_CLI, {"listen", "--tail", "x.log", "--format", "csv"});
    QVERIFY(p.waitForFinished(20000));
    QCOMPARE(p.exitCode(), 2);
    QVERIFY(p.readAllStandardError().contains("--format: expected nginx, envoy, haproxy or jsonl"));
  }
};

QTEST_GUILESS_MAIN(TstShadow)
#include "tst_shadow.moc"
