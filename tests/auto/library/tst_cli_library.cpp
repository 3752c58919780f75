// spillway-cli import / library / replay --incident, end to end through QProcess.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "../cli/cli_run.hpp"

namespace {

Run cli(const QStringList& args) {
  return run(QStringLiteral(SPILLWAY_CLI), args);
}
QString data(const QString& name) {
  return QStringLiteral(TEST_DATA_DIR "/") + name;
}
QByteArray readFile(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
QString diag(const Run& r) {
  return QStringLiteral("exit %1\n%2\n%3")
      .arg(r.code)
      .arg(QString::fromUtf8(r.out), QString::fromUtf8(r.err));
}

}  // namespace

class TstCliLibrary : public QObject {
  Q_OBJECT
 private slots:
  // The same KPI table and report whether the trace comes from the file or the library.
  void replayIncidentEqualsTrace() {
    QTemporaryDir dir;
    const QString lib = dir.filePath("lib.db");
    Run r = cli({"import", data("tiny.jsonl"), "--library", lib});
    QVERIFY2(r.code == 0, qPrintable(diag(r)));
    QCOMPARE(r.out,
             QByteArray(data("tiny.jsonl").toUtf8() + ": 27 records into incident 'tiny'\n"));
    r = cli({"import", data("tiny.jsonl"), "--library", lib});
    QCOMPARE(r.out,
             QByteArray(data("tiny.jsonl").toUtf8() + ": already imported into incident 'tiny'\n"));
    r = cli({"library", "annotate", "tiny", "--instance", "gpu-2", "--from", "1764480000000",
             "--to", "2025-11-30T05:20:17Z", "--kind", "error_burst", "--library", lib});
    QVERIFY2(r.code == 0, qPrintable(diag(r)));
    const Run a = cli({"replay", "--incident", "tiny", "--library", lib, "--policy",
                       data("tiny-policy.yaml"), "--report", dir.filePath("a.json")});
    const Run b =
        cli({"replay", "--trace", data("tiny.jsonl"), "--faults", data("tiny.faults.jsonl"),
             "--policy", data("tiny-policy.yaml"), "--report", dir.filePath("b.json")});
    QVERIFY2(a.code == 0, qPrintable(diag(a)));
    QVERIFY2(b.code == 0, qPrintable(diag(b)));
    auto body = [](const QByteArray& out) {
      return out.mid(out.indexOf('\n'));
    };  // after the title
    QCOMPARE(body(a.out), body(b.out));
    QVERIFY(a.out.startsWith("Replay of incident tiny under policy 'tiny': 27 records"));
    QJsonObject ja = QJsonDocument::fromJson(readFile(dir.filePath("a.json"))).object();
    QJsonObject jb = QJsonDocument::fromJson(readFile(dir.filePath("b.json"))).object();
    ja.remove("trace");
    jb.remove("trace");
    QCOMPARE(ja, jb);
  }

  void listShowExportDelete() {
    QTemporaryDir dir;
    const QString lib = dir.filePath("lib.db");
    QCOMPARE(cli({"import", data("tiny.jsonl"), "--incident", "t", "--library", lib}).code, 0);
    Run r = cli({"library", "list", "--json", "--library", lib});
    QVERIFY2(r.code == 0, qPrintable(diag(r)));
    const auto list = QJsonDocument::fromJson(r.out).array();
    QCOMPARE(list.size(), 1);
    QCOMPARE(list[0].toObject()["records"].toInt(), 27);
    r = cli({"library", "show", "t", "--library", lib});
    QVERIFY2(r.code == 0 && r.out.contains("gpu-2"), qPrintable(diag(r)));
    r = cli({"library", "export", "t", "--out", dir.filePath("t.jsonl"), "--library", lib});
    QVERIFY2(r.code == 0, qPrintable(diag(r)));
    // The export re-imports as the same content: a new file, so a new incident, same bytes.
    QCOMPARE(cli({"import", dir.filePath("t.jsonl"), "--incident", "t2", "--library", lib}).code,
             0);
    QCOMPARE(
        cli({"library", "export", "t2", "--out", dir.filePath("t2.jsonl"), "--library", lib}).code,
        0);
    QCOMPARE(readFile(dir.filePath("t2.jsonl")), readFile(dir.filePath("t.jsonl")));
    QCOMPARE(cli({"library", "delete", "t", "--library", lib}).code, 0);
    r = cli({"library", "show", "t", "--library", lib});
    QCOMPARE(r.code, 2);
    QCOMPARE(r.err, (lib + ": incident: no incident 't'\n").toUtf8());
  }

  void errors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("err");  // %L = the library, %D = the data dir
    QTest::newRow("bad line") << QStringList{"import", "%D/malformed.jsonl"}
                              << "%D/malformed.jsonl:3: latency_ms: expected a number\n";
    QTest::newRow("not a library") << QStringList{"library", "list", "--library", "%D/tiny.jsonl"}
                                   << "%D/tiny.jsonl: not a Spillway library: the file is not an "
                                      "SQLite database\n";
    QTest::newRow("no library")
        << QStringList{"replay", "--incident", "x"}
        << "%L: no such library (import an incident first, or pass --library)\n";
    QTest::newRow("bad map") << QStringList{"import", "x.csv", "--map", "when=time"}
                             << "--map: when: not a field of the csv format";
    QTest::newRow("bad format")
        << QStringList{"import", "x", "--format", "xml"}
        << "import: --format: expected jsonl, csv, nginx, envoy, otlp or prometheus\n";
  }
  void errors() {
    QFETCH(QStringList, args);
    QFETCH(QString, err);
    QTemporaryDir dir;
    const QString lib = dir.filePath("lib.db");
    for (QString& a : args) a.replace("%D", TEST_DATA_DIR);
    if (!args.contains("--library")) args << "--library" << lib;
    err.replace("%D", TEST_DATA_DIR).replace("%L", lib);
    const Run r = cli(args);
    QCOMPARE(r.code, 2);
    QVERIFY2(QString::fromUtf8(r.err).startsWith(err), qPrintable(diag(r)));
  }
};

QTEST_GUILESS_MAIN(TstCliLibrary)
#include "tst_cli_library.moc"
