// spillway-cli import / library / replay --incident, and live recordings (library record,
// record-info, cut), end to end through QProcess.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <vector>

#include "../cli/cli_run.hpp"

using Micros = qint64;

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

  // Names come from the traces (or a library file someone sent): `library show` prints an
  // escape sequence in one as text, never as a control byte the terminal obeys.
  void namesArePrintedNotObeyed() {
    QTemporaryDir dir;
    const QString lib = dir.filePath("lib.db"), trace = dir.filePath("esc.jsonl");
    QFile f(trace);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(
        "{\"ts\":1764480000000,\"instance\":\"gpu\\u001b]0;owned\\u0007\","
        "\"model\":\"m\\u001b[31m\",\"latency_ms\":50,\"status\":200}\n");
    f.close();
    QCOMPARE(cli({"import", trace, "--incident", "e", "--library", lib}).code, 0);
    const Run r = cli({"library", "show", "e", "--library", lib});
    QVERIFY2(r.code == 0, qPrintable(diag(r)));
    QVERIFY2(r.out.contains("gpu\\x1b]0;owned\\x07") && r.out.contains("m\\x1b[31m"),
             r.out.constData());
    QVERIFY(!r.out.contains('\x1b') && !r.out.contains('\x07'));
  }

  // A trace fed through the live recorder, cut back out (whole, and its last seconds relative
  // to the recording's end): the cut replays exactly like the trace, annotations included.
  void recordCutReplay() {
    QTemporaryDir dir;
    const QString lib = dir.filePath("lib.db");
    Run r = cli({"library", "record", data("tiny.jsonl"), "--recording", "live", "--retain", "none",
                 "--library", lib});
    QVERIFY2(r.code == 0, qPrintable(diag(r)));
    QCOMPARE(r.out,
             QByteArray(data("tiny.jsonl").toUtf8() + ": 27 records into recording 'live'\n"));
    r = cli({"library", "annotate", "--recording", "live", "--instance", "gpu-2", "--from",
             "1764480000000", "--to", "2025-11-30T05:20:17Z", "--kind", "error_burst", "--library",
             lib});
    QVERIFY2(r.code == 0, qPrintable(diag(r)));
    r = cli({"library", "record-info", "live", "--library", lib});
    QVERIFY2(r.code == 0, qPrintable(diag(r)));
    // A commit per second of data time: the 45 s trace makes 8 small blocks.
    QVERIFY2(r.out.startsWith("Recording 'live': 27 calls, 0 samples in 8 blocks"), r.out.data());
    QVERIFY2(r.out.contains("retention: none"), r.out.data());
    QVERIFY2(r.out.contains("gpu-2"), r.out.data());

    r = cli({"library", "cut", "--recording", "live", "--from", "1764480000000", "--name", "cut",
             "--library", lib});
    QVERIFY2(r.code == 0, qPrintable(diag(r)));
    QVERIFY2(r.out.startsWith("cut 27 calls of recording 'live' [2025-11-30T05:20:00.000Z, "),
             r.out.data());
    QVERIFY2(r.out.contains("into incident 'cut' (1 annotations)"), r.out.data());
    const Run a = cli({"replay", "--incident", "cut", "--library", lib, "--policy",
                       data("tiny-policy.yaml"), "--report", dir.filePath("a.json")});
    const Run b =
        cli({"replay", "--trace", data("tiny.jsonl"), "--faults", data("tiny.faults.jsonl"),
             "--policy", data("tiny-policy.yaml"), "--report", dir.filePath("b.json")});
    QVERIFY2(a.code == 0, qPrintable(diag(a)));
    QVERIFY2(b.code == 0, qPrintable(diag(b)));
    auto body = [](const QByteArray& out) { return out.mid(out.indexOf('\n')); };
    QCOMPARE(body(a.out), body(b.out));
    QJsonObject ja = QJsonDocument::fromJson(readFile(dir.filePath("a.json"))).object();
    QJsonObject jb = QJsonDocument::fromJson(readFile(dir.filePath("b.json"))).object();
    ja.remove("trace");
    jb.remove("trace");
    QCOMPARE(ja, jb);

    // The last 5 s before the recording's newest data, written both ways.
    Micros end = 0;
    std::vector<Micros> starts;
    for (const QByteArray& line : readFile(data("tiny.jsonl")).split('\n')) {
      if (line.trimmed().isEmpty()) continue;
      const QJsonObject o = QJsonDocument::fromJson(line).object();
      const auto ts = static_cast<Micros>(o["ts"].toDouble() * 1000);
      starts.push_back(ts);
      end = std::max(end, ts + static_cast<Micros>(o["latency_ms"].toDouble() * 1000));
    }
    const auto tail =
        std::count_if(starts.begin(), starts.end(), [&](Micros t) { return t >= end - 5000000; });
    QVERIFY(tail > 0 && tail < 27);
    for (const QStringList& from : {QStringList{"--from", "-5s"}, QStringList{"--from=-5s"}}) {
      const QString name = "tail" + QString::number(from.size());
      r = cli(QStringList{"library", "cut", "--recording", "live", "--name", name, "--library", lib,
                          "--json"} +
              from);
      QVERIFY2(r.code == 0, qPrintable(diag(r)));
      QCOMPARE(QJsonDocument::fromJson(r.out).object()["records"].toInt(), int(tail));
    }

    r = cli({"library", "list", "--library", lib});
    QVERIFY2(r.code == 0, qPrintable(diag(r)));
    QVERIFY2(r.out.contains("\nrecording "), r.out.data());
    QVERIFY2(r.out.contains("\nlive "), r.out.data());
    r = cli({"library", "list", "--json", "--library", lib});
    const QJsonArray list = QJsonDocument::fromJson(r.out).array();
    QCOMPARE(list.size(), 4);  // cut, tail1, tail2 and the recording
    QCOMPARE(list[3].toObject()["kind"].toString(), QString("recording"));
    QCOMPARE(list[3].toObject()["calls"].toInt(), 27);
    QCOMPARE(cli({"library", "delete", "--recording", "live", "--library", lib}).code, 0);
    r = cli({"library", "record-info", "live", "--library", lib});
    QCOMPARE(r.code, 2);
    QCOMPARE(r.err, (lib + ": recording: no recording 'live'\n").toUtf8());
    QCOMPARE(cli({"replay", "--incident", "cut", "--library", lib}).code, 0);  // cuts stay
  }

  void cutErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("err");  // %L = the library; a prefix of stderr
    QTest::newRow("existing name")
        << QStringList{"cut", "--recording", "live", "--from", "-10s", "--name", "taken"}
        << "%L: name: incident 'taken' already exists\n";
    QTest::newRow("from after to")
        << QStringList{"cut", "--recording", "live", "--from", "-1s", "--to", "-2s", "--name", "x"}
        << "%L: range: from (2025-11-30T05:20:";
    QTest::newRow("outside")
        << QStringList{"cut",  "--recording",   "live",   "--from", "1700000000000",
                       "--to", "1700000001000", "--name", "x"}
        << "%L: range: [2023-11-14T22:13:20.000Z, 2023-11-14T22:13:21.000Z) is outside the data "
           "recording 'live' retains (2025-11-30T05:20:00.000Z .. ";
    QTest::newRow("bad time")
        << QStringList{"cut", "--recording", "live", "--from", "yesterday", "--name", "x"}
        << "library cut: --from: expected epoch ms, RFC 3339, 'end' or -DURATION before the "
           "recording's end (e.g. -15m), not 'yesterday'\n";
    QTest::newRow("no recording") << QStringList{"cut", "--recording", "nope", "--from",
                                                 "-1s", "--name",      "x"}
                                  << "%L: recording: no recording 'nope'\n";
    QTest::newRow("no name") << QStringList{"cut", "--recording", "live", "--from", "-1s"}
                             << "library cut: --recording, --from and --name are required\n";
    QTest::newRow("record without a recording") << QStringList{"record", data("tiny.jsonl")}
                                                << "library record: --recording NAME is required\n";
    QTest::newRow("bad retention")
        << QStringList{"record", data("tiny.jsonl"), "--recording", "r", "--retain", "soon"}
        << "library record: --retain: expected a duration of data (24h, 90m) or none, not "
           "'soon'\n";
    QTest::newRow("bad line in a recorded file")
        << QStringList{"record", data("malformed.jsonl"), "--recording", "r"}
        << data("malformed.jsonl") + ":3: latency_ms: expected a number\n";
  }
  void cutErrors() {
    QFETCH(QStringList, args);
    QFETCH(QString, err);
    QTemporaryDir dir;
    const QString lib = dir.filePath("lib.db");
    QCOMPARE(cli({"library", "record", data("tiny.jsonl"), "--recording", "live", "--library", lib})
                 .code,
             0);
    QCOMPARE(cli({"import", data("tiny.jsonl"), "--incident", "taken", "--library", lib}).code, 0);
    const Run r = cli(QStringList{"library"} + args + QStringList{"--library", lib});
    QCOMPARE(r.code, 2);
    QVERIFY2(QString::fromUtf8(r.err).startsWith(err.replace("%L", lib)), qPrintable(diag(r)));
    // Nothing was cut, and the recording is as it was.
    const QJsonArray list =
        QJsonDocument::fromJson(cli({"library", "list", "--json", "--library", lib}).out).array();
    QStringList names;
    for (const auto& v : list) {
      const QJsonObject o = v.toObject();
      names << o["kind"].toString() + " " + o["name"].toString();
      if (o["name"] == "live") QCOMPARE(o["calls"].toInt(), 27);
    }
    // A bad line stops `record`; the lines before it were accepted and stay recorded.
    if (args.first() == "record" && names.size() == 3)
      QCOMPARE(names.takeLast(), QString("recording r"));
    QCOMPARE(names, (QStringList{"calls taken", "recording live"}));
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
        << "import: --format: expected jsonl, csv, nginx, envoy, haproxy, otlp or prometheus\n";
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
