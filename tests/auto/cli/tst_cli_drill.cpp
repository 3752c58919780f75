// `spillway-cli drill` end to end (issue 24): a runbook whose expectations hold exits 0, a
// broken expectation exits 1 and says which, a bad runbook exits 2 naming file:line: key, and
// --save keeps each run in the library with the revision and version, listed by --history.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QtTest>

#include "cli_run.hpp"

namespace {

QString write(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
  const QString path = dir.filePath(name);
  QFile f(path);
  f.open(QIODevice::WriteOnly);
  f.write(text);
  return path;
}

const QByteArray kRunbook =
    "version: 1\nname: hang\nrevision: 3\nscenario: seed-000\nseeds: 2\n"
    "traffic: {duration: 12m}\n"
    "faults:\n  - {type: hang, target: chat-72b-2, at: 4m, duration: 3m, rate: 0.5}\n"
    "expect:\n"
    "  - {kpi: degrade_switch_rate, min: 0.97}\n";

}  // namespace

class TstCliDrill : public QObject {
  Q_OBJECT

 private slots:
  void passingDrillExitsZero() {
    QTemporaryDir dir;
    const Run r = run(SPILLWAY_CLI, {"drill", write(dir, "ok.yaml", kRunbook)});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(r.out.contains("degrade_switch_rate"));
    QVERIFY(r.out.contains("PASSED"));
  }

  // The runbooks that ship in resources/drills hold on the built-in scenarios (a change that
  // breaks one is caught here, not in a user's weekly job).
  void shippedRunbooksPass_data() {
    QTest::addColumn<QString>("file");
    for (const QString& f : QDir(SPILLWAY_RESOURCES_DIR "/drills").entryList({"*.yaml"}))
      QTest::newRow(qPrintable(f)) << QString(SPILLWAY_RESOURCES_DIR "/drills/") + f;
  }
  void shippedRunbooksPass() {
    QFETCH(QString, file);
    const Run r = run(SPILLWAY_CLI, {"drill", file});
    QVERIFY2(r.code == 0, (r.out + r.err).constData());
  }

  // A gateway that never answers is a setup mistake (exit 2 with what to check), not a drill
  // that failed its expectations.
  void silentGatewayIsAnInputError() {
    QTemporaryDir dir;
    write(dir, "s.yaml",
          "version: 1\nname: tiny\nduration: 2s\nmodels:\n  - {name: chat, instances: 1}\n"
          "clients:\n  - {name: app, model: chat, rate: 20, timeout: 500ms}\n");
    const QString rb = write(dir, "rb.yaml",
                             "version: 1\nname: silent\nscenario: s.yaml\nexpect:\n"
                             "  - {kpi: availability, min: 0.9}\n");
    QTcpServer closed;  // a port nobody listens on once released
    QVERIFY(closed.listen(QHostAddress::LocalHost, 0));
    const quint16 port = closed.serverPort();
    closed.close();
    const Run r = run(
        SPILLWAY_CLI,
        {"drill", rb, "--gateway", QString("http://127.0.0.1:%1/").arg(port), "--base-port", "0"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("no HTTP answer from http://127.0.0.1:") &&
                 r.err.contains("is the gateway running"),
             r.err.constData());
  }

  void brokenExpectationExitsOne() {
    QTemporaryDir dir;
    const QByteArray text = kRunbook + "  - {kpi: availability, min: 0.99999}\n";
    const Run r = run(SPILLWAY_CLI, {"drill", write(dir, "broken.yaml", text), "--json"});
    QCOMPARE(r.code, 1);
    QVERIFY(r.out.contains("\"passed\": false"));
    QVERIFY(r.out.contains("\"kpi\": \"availability\""));
  }

  void badRunbookExitsTwoWithTheLine() {
    QTemporaryDir dir;
    const QByteArray text =
        "version: 1\nname: x\nscenario: seed-000\nexpect:\n"
        "  - {kpi: uptime, min: 1}\n";
    const QString path = write(dir, "bad.yaml", text);
    const Run r = run(SPILLWAY_CLI, {"drill", path});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.startsWith((path + ":5: expect[0].kpi: unknown KPI 'uptime'").toUtf8()),
             r.err.constData());
  }

  void savedRunsMakeATrend() {
    QTemporaryDir dir;
    const QString lib = dir.filePath("lib.db");
    const QString path = write(dir, "ok.yaml", kRunbook);
    for (int i = 0; i < 2; ++i) {
      const Run r = run(SPILLWAY_CLI, {"drill", path, "--save", "--library", lib});
      QVERIFY2(r.code == 0, r.err.constData());
      QVERIFY(r.err.contains("saved as run"));
    }
    const Run h = run(SPILLWAY_CLI, {"drill", "--history", "hang", "--library", lib, "--json"});
    QCOMPARE(h.code, 0);
    const QJsonArray runs = QJsonDocument::fromJson(h.out).array();
    QCOMPARE(runs.size(), 2);
    QCOMPARE(runs[0].toObject()["revision"].toInt(), 3);
    QVERIFY(!runs[0].toObject()["spillway_version"].toString().isEmpty());
    QCOMPARE(runs[1].toObject()["result"].toObject()["checks"].toArray().size(), 1);
    // The table shows each measured value as the drill printed it: rounded to four
    // significant digits, not cut (0.99686 read 0.9968).
    const double measured = runs[0]
                                .toObject()["result"]
                                .toObject()["checks"]
                                .toArray()[0]
                                .toObject()["measured"]
                                .toDouble();
    const Run table = run(SPILLWAY_CLI, {"drill", "--history", "hang", "--library", lib});
    QVERIFY2(table.out.contains(QString::asprintf("%.4g", measured).toUtf8()),
             table.out.constData());
    const Run none = run(SPILLWAY_CLI, {"drill", "--history", "other", "--library", lib});
    QVERIFY(none.out.contains("no drill runs"));
  }
};

QTEST_GUILESS_MAIN(TstCliDrill)
#include "tst_cli_drill.moc"
