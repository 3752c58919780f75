// spillway-cli replay and spillway-tracegen, end to end: the real binaries through QProcess.
//
// The golden test replays data/tiny.jsonl (27 hand-written calls on two instances) under
// data/tiny-policy.yaml: 10 s window of 1 s buckets, min_calls 4, trip when more than half the
// calls failed or were slow (slow = over 1 s, fixed), no sustain, open 5 s doubling per
// consecutive open, every half-open request a probe, 2 good probes close, no ramp. Times below
// are ms after 1764480000000 (2025-11-30T05:20:00Z); outcomes are known at start + latency.
//
// gpu-2:
//   0, 200, 400, 600: 503 (50 ms) → failures at 50..650. At 650 the window holds 4 calls, 4
//     failed > 0.5 × 4: CLOSED→OPEN error_rate (calls 4, rate 1.0), open 5 s, until 5650.
//   2000 (200) and 3000 (503) are rejected; the first would have succeeded.
//   6000 (503): the open period is over: OPEN→HALF_OPEN stamped 5650 (window still holds the
//     4 failures of second 0: calls 4, rate 1.0); the call is a probe and fails at 6050:
//     HALF_OPEN→OPEN probe_failed (calls 5, rate 1.0), second consecutive open: 10 s, until
//     16050.
//   8000 (200), 16010 (200) rejected, both would have succeeded. At 16010 the window (seconds
//     7-16) no longer holds any call.
//   17000, 17200 (200, 100 ms): OPEN→HALF_OPEN stamped 16050 (calls 0); two good probes at
//     17100 and 17300: HALF_OPEN→CLOSED probe_streak at 17300 (calls 2, both good), ramp off so
//     ramp_complete at once (decision window restarted: calls 0).
//   18000, 18100, 18200, 18300: 200 but 1500 ms (slow, done at 19500..19800); 18050: 200 in
//     50 ms (good at 18100). At 19700 the decision window since the close holds 4 calls, 3
//     slow > 0.5 × 4, none failed: CLOSED→OPEN slow_rate (slow rate 0.75), third consecutive
//     open: 20 s, until 39700.
//   25000 (200) rejected: would have succeeded.
// gpu-1: 10 calls, one 503 among its first four and one 404 (ignored): never more than half
//   failed, so no event. Its last call (45000, RFC 3339 with +08:00) ends at 45040, the end of
//   the replay, where gpu-2's open period is over: OPEN→HALF_OPEN stamped 39700 (calls 0).
//
// With --slo 1s (a call answered later than 1 s would not have succeeded) gpu-2 has 3 opens,
// 5 rejected calls of which 4 would have succeeded: 2000, 3000 (fails anyway), 8000 and 16010
// fall in the annotated fault (collateral), 25000 in the episode opened 2.7 s after it ended
// (its late detection: recovery lag). 误伤 = 1 of 5, collateral 3 of 5. It spent
// 650 + 2400 = 3050 ms CLOSED, 5000 + 10000 + 20000 = 35000 ms OPEN and
// 400 + 1250 + 5340 = 6990 ms HALF_OPEN. Fault "error_burst" 0-17000 on gpu-2: detected at
// 650 (TTD 650), full traffic again at 17300 (MTTR 17300, 16650 from the trip, 300 after the
// fault ended). data/tiny.transitions.jsonl holds these 8 events.
#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QMap>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.hpp"

#include <algorithm>
#include <cmath>

namespace {

Run cli(const QStringList& args, const QByteArray& input = {}) {
  return run(QStringLiteral(SPILLWAY_CLI), args, input);
}

QString data(const QString& name) {
  return QStringLiteral(TEST_DATA_DIR "/") + name;
}

QByteArray readFile(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return f.readAll();
}

QList<QByteArray> nonEmptyLines(const QByteArray& text) {
  QList<QByteArray> out;
  for (const QByteArray& l : text.split('\n'))
    if (!l.trimmed().isEmpty()) out.push_back(l);
  return out;
}

QString diag(const Run& r) {
  return QStringLiteral("exit %1\n--- stdout\n%2\n--- stderr\n%3")
      .arg(r.code)
      .arg(QString::fromUtf8(r.out.left(4000)), QString::fromUtf8(r.err.left(4000)));
}

// A human duration from the table ("18.2s", "1m32s", "2h05m"), not "inf" or "n/a".
bool finiteDuration(const QString& s) {
  static const QRegularExpression re(QStringLiteral(R"(^(\d+\.\d+s|\d+m\d\ds|\d+h\d\dm)$)"));
  return re.match(s).hasMatch();
}

struct TableRow {
  QString instance;
  qint64 records = 0, rejected = 0, fp = 0;
};

// The per-instance table: the rows between the header and the "Blocked by breakers" line.
QList<TableRow> tableRows(const QByteArray& out) {
  QList<TableRow> rows;
  bool in = false;
  for (const QByteArray& raw : out.split('\n')) {
    const QString line = QString::fromUtf8(raw);
    if (line.startsWith(QLatin1String("instance "))) {
      in = true;
      continue;
    }
    if (!in) continue;
    if (line.trimmed().isEmpty() || line.startsWith(QLatin1String("Blocked"))) break;
    QStringList f = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (f.size() == 10) f.insert(1, QString());  // no model
    if (f.size() != 11) return {};
    rows.push_back({f[0], f[2].toLongLong(), f[7].toLongLong(), f[8].toLongLong()});
  }
  return rows;
}

}  // namespace

class TstCliReplay : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void help_data();
  void help();
  void builtinSample();
  void reportTotals();
  void transitionsChain();
  void goldenTinyTrace();
  void traceFromStdin();
  void faultsBesideTheTrace();
  void inputErrors_data();
  void inputErrors();
  void skipBadLines();
  void deterministicOutput();
  void threadsGiveTheSameOutput_data();
  void threadsGiveTheSameOutput();
  void tracegenDeterministic();
  void tracegenRefusesNonsense_data();
  void tracegenRefusesNonsense();
  void tracegenDefaultIsCommittedSample();

 private:
  QTemporaryDir tmp_;
};

void TstCliReplay::initTestCase() {
  QVERIFY2(QFile::exists(QStringLiteral(SPILLWAY_CLI)), SPILLWAY_CLI);
  QVERIFY2(QFile::exists(QStringLiteral(SPILLWAY_TRACEGEN)), SPILLWAY_TRACEGEN);
  QVERIFY(tmp_.isValid());
}

void TstCliReplay::help_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<QString>("mentions");
  QTest::newRow("--help") << QStringList{"--help"} << "replay";
  QTest::newRow("-h") << QStringList{"-h"} << "replay";
  QTest::newRow("replay --help") << QStringList{"replay", "--help"} << "--skip-bad-lines";
  QTest::newRow("replay -h") << QStringList{"replay", "-h"} << "--reorder-window";
  QTest::newRow("--version") << QStringList{"--version"} << "spillway-cli ";
}

void TstCliReplay::help() {
  QFETCH(QStringList, args);
  QFETCH(QString, mentions);
  const Run r = cli(args);
  QVERIFY2(r.code == 0, qPrintable(diag(r)));
  QVERIFY2(QString::fromUtf8(r.out).contains(mentions), qPrintable(diag(r)));
}

void TstCliReplay::builtinSample() {
  const Run r = cli({"replay"});
  QVERIFY2(r.code == 0, qPrintable(diag(r)));
  const QString out = QString::fromUtf8(r.out);

  // The table: the four instances of the sample, once each.
  const QList<TableRow> rows = tableRows(r.out);
  QStringList names;
  qint64 records = 0, rejected = 0, fp = 0;
  for (const TableRow& row : rows) {
    names << row.instance;
    records += row.records;
    rejected += row.rejected;
    fp += row.fp;
  }
  names.sort();
  QCOMPARE(names, (QStringList{"chat-72b-1", "chat-72b-2", "chat-72b-3", "chat-72b-4"}));
  // Its columns add up to the header and the summary line.
  const QString lines = QString::number(
      nonEmptyLines(readFile(QStringLiteral(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.jsonl")))
          .size());
  QCOMPARE(QString::number(records), lines);
  QVERIFY2(out.contains(QStringLiteral(": %1 records").arg(lines)), qPrintable(out));
  QVERIFY2(out.contains(QStringLiteral("Blocked by breakers: %1 (%2 answered within the SLO")
                            .arg(rejected)
                            .arg(fp)),
           qPrintable(out));
  // The leak's blocks are collateral and recovery lag, never a false trip (no false trip).
  QVERIFY2(out.contains(QLatin1String("false trips: 0 ")), qPrintable(out));
  // The loop asks for a faster return, not a less sensitive trip, and shows it replayed.
  QVERIFY2(out.contains(QLatin1String("proposal: open.duration")), qPrintable(out));
  QVERIFY2(!out.contains(QLatin1String("trip.slow_rate")), qPrintable(out));
  QVERIFY2(out.contains(QLatin1String("chat-72b-3: TTD ")), qPrintable(out));

  // The fault line of the leaking instance, with a finite time to detect.
  static const QRegularExpression faultRe(
      QStringLiteral(R"(^chat-72b-3\s+latency_drift\s+(\S+)\s+(\S+))"),
      QRegularExpression::MultilineOption);
  const auto m = faultRe.match(out);
  QVERIFY2(m.hasMatch(), qPrintable(out));
  QVERIFY2(finiteDuration(m.captured(1)), qPrintable(m.captured(0)));
  QVERIFY(out.indexOf(QLatin1String("fault on")) < m.capturedStart());
}

void TstCliReplay::reportTotals() {
  const QString report = tmp_.filePath("sample-report.json");
  const Run r = cli({"replay", "--report", report});
  QVERIFY2(r.code == 0, qPrintable(diag(r)));
  QJsonParseError perr;
  const QJsonDocument doc = QJsonDocument::fromJson(readFile(report), &perr);
  QVERIFY2(perr.error == QJsonParseError::NoError, qPrintable(perr.errorString()));
  QVERIFY(doc.isObject());
  const QJsonObject rep = doc.object();
  const QJsonArray inst = rep["instances"].toArray();
  QCOMPARE(inst.size(), 4);
  double rejected = 0, fp = 0, records = 0;
  for (const QJsonValue& v : inst) {
    const QJsonObject o = v.toObject();
    QVERIFY(o["rejected"].isDouble() && o["blocked_would_succeed"].isDouble());
    rejected += o["rejected"].toDouble();
    fp += o["blocked_would_succeed"].toDouble();
    records += o["records"].toDouble();
    // rejected_by breaks rejected down by reason.
    double by = 0;
    for (const QJsonValue& n : o["rejected_by"].toObject()) by += n.toDouble();
    QCOMPARE(by, o["rejected"].toDouble());
    // Every block is in exactly one class; 误伤 = avoidable would-succeed blocks ÷ blocks.
    const QJsonObject bc = o["blocks_by_class"].toObject();
    double blocks = 0, would = 0;
    for (const QJsonValue& c : bc) {
      blocks += c.toObject()["blocks"].toDouble();
      would += c.toObject()["would_succeed"].toDouble();
    }
    QCOMPARE(blocks, o["rejected"].toDouble());
    QCOMPARE(would, o["blocked_would_succeed"].toDouble());
    const double avoidable = bc["false_trip"].toObject()["would_succeed"].toDouble() +
                             bc["recovery_lag"].toObject()["would_succeed"].toDouble();
    if (blocks == 0)
      QVERIFY(o["false_positive_rate"].isNull());
    else
      QCOMPARE(o["false_positive_rate"].toDouble(), avoidable / blocks);
  }
  const QJsonObject tot = rep["totals"].toObject();
  QCOMPARE(tot["rejected"].toDouble(), rejected);
  QCOMPARE(tot["blocked_would_succeed"].toDouble(), fp);
  QVERIFY(rejected > 0);  // the sample's leak does trip the default policy
  const QJsonObject bc = tot["blocks_by_class"].toObject();
  QVERIFY(bc["collateral"].toObject()["blocks"].toDouble() > 0);
  QCOMPARE(bc["false_trip"].toObject()["blocks"].toDouble(), 0.0);
  QCOMPARE(tot["false_positive_rate"].toDouble(),
           bc["recovery_lag"].toObject()["would_succeed"].toDouble() / rejected);
  // The recalibration proposal was replayed: before/after 误伤 and a kept detection.
  const QJsonObject prop = rep["recalibration"].toObject();
  QCOMPARE(prop["part"].toString(), QStringLiteral("recovery_lag"));
  QVERIFY(!prop["withheld"].toBool());
  QCOMPARE(prop["fp_before"].toDouble(), tot["false_positive_rate"].toDouble());
  QVERIFY(prop["fp_after"].toDouble() < prop["fp_before"].toDouble());
  QCOMPARE(rep["records"].toDouble(), records);

  // The fault: detected, with a finite TTD inside the fault interval (06:24 - 06:30).
  const QJsonArray faults = rep["faults"].toArray();
  QCOMPARE(faults.size(), 1);
  const QJsonObject f = faults[0].toObject();
  QCOMPARE(f["instance"].toString(), QStringLiteral("chat-72b-3"));
  QVERIFY(f["detected"].toBool());
  QVERIFY(f["ttd_ms"].isDouble());
  QVERIFY(f["ttd_ms"].toDouble() >= 0);
  QVERIFY(f["ttd_ms"].toDouble() <= 360000);
}

void TstCliReplay::transitionsChain() {
  const QString out = tmp_.filePath("sample-transitions.jsonl");
  const QString report = tmp_.filePath("sample-chain-report.json");
  const Run r = cli({"replay", "--out", out, "--report", report});
  QVERIFY2(r.code == 0, qPrintable(diag(r)));
  const QByteArray text = readFile(out);
  QVERIFY(text.endsWith('\n'));
  const QList<QByteArray> lines = text.split('\n').mid(0, text.count('\n'));
  QVERIFY(!lines.isEmpty());
  QMap<QString, QString> state;  // instance → current state; every breaker starts CLOSED
  QMap<QString, double> lastTs;
  QMap<QString, int> opens;
  for (int i = 0; i < lines.size(); ++i) {
    const QString where = QStringLiteral("line %1: %2").arg(i + 1).arg(QString(lines[i]));
    QJsonParseError perr;
    const QJsonDocument d = QJsonDocument::fromJson(lines[i], &perr);
    QVERIFY2(perr.error == QJsonParseError::NoError && d.isObject(), qPrintable(where));
    const QJsonObject o = d.object();
    for (const char* k : {"ts", "error_rate", "slow_rate", "calls"})
      QVERIFY2(o[k].isDouble(), qPrintable(where + " (" + k + ")"));
    for (const char* k : {"instance", "from", "to", "reason", "event"})
      QVERIFY2(o[k].isString(), qPrintable(where + " (" + k + ")"));
    const QString inst = o["instance"].toString();
    const QString from = o["from"].toString(), to = o["to"].toString();
    QVERIFY2(from == state.value(inst, QStringLiteral("CLOSED")), qPrintable(where));
    state[inst] = to;
    QVERIFY2(o["ts"].toDouble() >= lastTs.value(inst, 0), qPrintable(where));
    lastTs[inst] = o["ts"].toDouble();
    QVERIFY(o["error_rate"].toDouble() >= 0 && o["error_rate"].toDouble() <= 1);
    QVERIFY(o["slow_rate"].toDouble() >= 0 && o["slow_rate"].toDouble() <= 1);
    if (o["event"].toString() == QLatin1String("transition") && to == QLatin1String("OPEN")) {
      ++opens[inst];
      QVERIFY2(o["open_for_ms"].toDouble() > 0, qPrintable(where));
    }
  }
  // The transitions file and the report tell the same story.
  const QJsonObject rep = QJsonDocument::fromJson(readFile(report)).object();
  int reportOpens = 0;
  for (const QJsonValue& v : rep["instances"].toArray()) {
    const QJsonObject o = v.toObject();
    const QString inst = o["instance"].toString();
    QCOMPARE(o["opens"].toInt(), opens.value(inst));
    QCOMPARE(o["final_state"].toString(), state.value(inst, QStringLiteral("CLOSED")));
    reportOpens += o["opens"].toInt();
  }
  QVERIFY(opens.value("chat-72b-3") > 0);
  QCOMPARE(reportOpens, opens.value("chat-72b-3") + opens.value("chat-72b-1") +
                            opens.value("chat-72b-2") + opens.value("chat-72b-4"));
}

void TstCliReplay::goldenTinyTrace() {
  const QString out = tmp_.filePath("tiny-transitions.jsonl");
  const QString report = tmp_.filePath("tiny-report.json");
  const Run r =
      cli({"replay", "--trace", data("tiny.jsonl"), "--policy", data("tiny-policy.yaml"),
           "--faults", data("tiny.faults.jsonl"), "--slo", "1s", "--out", out, "--report", report});
  QVERIFY2(r.code == 0, qPrintable(diag(r)));

  // Transitions: the 8 events reasoned out at the top of this file, compared as JSON values.
  const QList<QByteArray> got = nonEmptyLines(readFile(out));
  const QList<QByteArray> want = nonEmptyLines(readFile(data("tiny.transitions.jsonl")));
  QCOMPARE(want.size(), 8);
  QCOMPARE(got.size(), want.size());
  for (int i = 0; i < want.size(); ++i) {
    const QJsonObject g = QJsonDocument::fromJson(got[i]).object();
    const QJsonObject w = QJsonDocument::fromJson(want[i]).object();
    QVERIFY2(g == w, qPrintable(QStringLiteral("event %1\n got: %2\nwant: %3")
                                    .arg(i + 1)
                                    .arg(QString(got[i]), QString(want[i]))));
  }

  // Report.
  const QJsonObject rep = QJsonDocument::fromJson(readFile(report)).object();
  QCOMPARE(rep["policy"].toString(), QStringLiteral("tiny"));
  QCOMPARE(rep["records"].toInt(), 27);
  QCOMPARE(rep["skipped_lines"].toInt(), 0);
  QCOMPARE(rep["late_records"].toInt(), 0);
  QMap<QString, QJsonObject> inst;
  for (const QJsonValue& v : rep["instances"].toArray())
    inst[v.toObject()["instance"].toString()] = v.toObject();
  QCOMPARE(inst.size(), 2);
  const QJsonObject g2 = inst["gpu-2"], g1 = inst["gpu-1"];
  QCOMPARE(g2["records"].toInt(), 17);
  QCOMPARE(g2["admitted"].toInt(), 12);
  QCOMPARE(g2["rejected"].toInt(), 5);
  QCOMPARE(g2["rejected_by"].toObject()["breaker_open"].toInt(), 5);
  QCOMPARE(g2["blocked_would_succeed"].toInt(), 4);
  const QJsonObject bc = g2["blocks_by_class"].toObject();
  QCOMPARE(bc["collateral"].toObject()["blocks"].toInt(), 4);
  QCOMPARE(bc["collateral"].toObject()["would_succeed"].toInt(), 3);
  QCOMPARE(bc["recovery_lag"].toObject()["blocks"].toInt(), 1);
  QCOMPARE(bc["recovery_lag"].toObject()["would_succeed"].toInt(), 1);
  QCOMPARE(bc["false_trip"].toObject()["blocks"].toInt(), 0);
  QCOMPARE(g2["false_positive_rate"].toDouble(), 0.2);
  QCOMPARE(g2["collateral_share"].toDouble(), 0.6);
  // 200s answered within the 1 s SLO: starts 2000, 8000, 16010, 17000, 17200, 18050, 25000.
  QCOMPARE(g2["recorded_succeeded"].toInt(), 7);
  QCOMPARE(g2["opens"].toInt(), 3);
  QCOMPARE(g2["final_state"].toString(), QStringLiteral("HALF_OPEN"));
  const QJsonObject tis = g2["time_in_state_ms"].toObject();
  QCOMPARE(tis["CLOSED"].toDouble(), 3050.0);
  QCOMPARE(tis["OPEN"].toDouble(), 35000.0);
  QCOMPARE(tis["HALF_OPEN"].toDouble(), 6990.0);
  QCOMPARE(g2["slow_threshold_ms"].toDouble(), 1000.0);
  QCOMPARE(g1["records"].toInt(), 10);
  QCOMPARE(g1["rejected"].toInt(), 0);
  QCOMPARE(g1["opens"].toInt(), 0);
  QVERIFY(g1["false_positive_rate"].isNull());
  QCOMPARE(g1["time_in_state_ms"].toObject()["CLOSED"].toDouble(), 44940.0);  // 100 → 45040
  QCOMPARE(g1["final_state"].toString(), QStringLiteral("CLOSED"));
  const QJsonObject tot = rep["totals"].toObject();
  QCOMPARE(tot["rejected"].toInt(), 5);
  QCOMPARE(tot["blocked_would_succeed"].toInt(), 4);
  QCOMPARE(tot["false_trips"].toInt(), 0);
  QVERIFY(!tot["faults_from_recording"].toBool());

  const QJsonArray faults = rep["faults"].toArray();
  QCOMPARE(faults.size(), 1);
  const QJsonObject f = faults[0].toObject();
  QVERIFY(f["detected"].toBool());
  QVERIFY(f["restored"].toBool());
  QCOMPARE(f["ttd_ms"].toDouble(), 650.0);
  QCOMPARE(f["mttr_ms"].toDouble(), 17300.0);
  QCOMPARE(f["from_trip_ms"].toDouble(), 16650.0);
  QCOMPARE(f["recovery_lag_ms"].toDouble(), 300.0);

  // The console table agrees.
  const QString text = QString::fromUtf8(r.out);
  QVERIFY2(text.contains(QLatin1String("under policy 'tiny': 27 records; SLO 1s\n")),
           qPrintable(text));
  QVERIFY2(text.contains(QLatin1String("Blocked by breakers: 5 (4 answered within the SLO")),
           qPrintable(text));
  QVERIFY2(text.contains(QString::fromUtf8("误伤 (false-positive rate): 20.0 % (false trip 0.0 %, "
                                           "recovery lag 20.0 %; collateral 60.0 %; 5 blocks)")),
           qPrintable(text));
}

void TstCliReplay::traceFromStdin() {
  // `--trace -` reads standard input: same transitions as from the file.
  const QString out = tmp_.filePath("stdin-transitions.jsonl");
  const Run r = cli({"replay", "--trace", "-", "--policy", data("tiny-policy.yaml"), "--out", out},
                    readFile(data("tiny.jsonl")));
  QVERIFY2(r.code == 0, qPrintable(diag(r)));
  const QList<QByteArray> got = nonEmptyLines(readFile(out));
  const QList<QByteArray> want = nonEmptyLines(readFile(data("tiny.transitions.jsonl")));
  QCOMPARE(got.size(), want.size());
  for (int i = 0; i < want.size(); ++i)
    QCOMPARE(QJsonDocument::fromJson(got[i]).object(), QJsonDocument::fromJson(want[i]).object());
}

void TstCliReplay::inputErrors_data() {
  // {data} and {tmp} are replaced by the fixture and temporary directories.
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<QString>("stderrContains");
  QTest::newRow("malformed line") << QStringList{"replay", "--trace", "{data}/malformed.jsonl"}
                                  << "{data}/malformed.jsonl:3: latency_ms: ";
  QTest::newRow("bad policy") << QStringList{"replay", "--trace", "{data}/tiny.jsonl", "--policy",
                                             "{data}/bad-policy.yaml"}
                              << "{data}/bad-policy.yaml:4: breaker.trip.error_rate: ";
  QTest::newRow("missing trace") << QStringList{"replay", "--trace", "{tmp}/missing.jsonl"}
                                 << "{tmp}/missing.jsonl: ";
  QTest::newRow("trace is a directory")
      << QStringList{"replay", "--trace", "{tmp}"} << "{tmp}: cannot read";
  QTest::newRow("missing policy") << QStringList{"replay", "--policy", "{tmp}/missing.yaml"}
                                  << "{tmp}/missing.yaml: ";
  QTest::newRow("missing faults") << QStringList{"replay", "--trace", "{data}/tiny.jsonl",
                                                 "--faults", "{tmp}/missing.f"}
                                  << "{tmp}/missing.f: ";
  QTest::newRow("bad faults line")
      << QStringList{"replay", "--trace", "{data}/tiny.jsonl", "--faults", "{data}/tiny.jsonl"}
      << "{data}/tiny.jsonl:1: start: ";
  QTest::newRow("unknown option") << QStringList{"replay", "--frobnicate"} << "frobnicate";
  QTest::newRow("option without value") << QStringList{"replay", "--trace"} << "--trace";
  QTest::newRow("unexpected argument") << QStringList{"replay", "extra"} << "extra";
  QTest::newRow("unknown command") << QStringList{"frobnicate"} << "unknown command";
  QTest::newRow("no command") << QStringList{} << "Usage";
  QTest::newRow("reorder window without unit")
      << QStringList{"replay", "--reorder-window", "10"} << "--reorder-window";
  QTest::newRow("bad seed") << QStringList{"replay", "--seed", "many"} << "--seed";
  QTest::newRow("bad threads") << QStringList{"replay", "--threads", "two"} << "--threads";
}

void TstCliReplay::inputErrors() {
  QFETCH(QStringList, args);
  QFETCH(QString, stderrContains);
  const QString dataDir = QStringLiteral(TEST_DATA_DIR);
  const QString tmpDir = tmp_.path();
  for (QString& a : args) a.replace("{data}", dataDir).replace("{tmp}", tmpDir);
  stderrContains.replace("{data}", dataDir).replace("{tmp}", tmpDir);
  const Run r = cli(args);
  QVERIFY2(r.code == 2, qPrintable(diag(r)));
  QVERIFY2(QString::fromUtf8(r.err).contains(stderrContains), qPrintable(diag(r)));
  QVERIFY2(!r.out.contains("Blocked by breakers"), qPrintable(diag(r)));  // no partial table
}

void TstCliReplay::skipBadLines() {
  const QString report = tmp_.filePath("skip-report.json");
  const Run r =
      cli({"replay", "--trace", data("malformed.jsonl"), "--skip-bad-lines", "--report", report});
  QVERIFY2(r.code == 0, qPrintable(diag(r)));
  // 4 lines, the 3rd bad: 3 records replayed, 1 line skipped, and its message on stderr.
  QVERIFY2(r.out.contains(": 3 records, 1 bad lines skipped; SLO 5s\n"), qPrintable(diag(r)));
  QVERIFY2(
      r.err.contains(QString("skipped: " + data("malformed.jsonl") + ":3: latency_ms: ").toUtf8()),
      qPrintable(diag(r)));
  const QList<TableRow> rows = tableRows(r.out);
  QCOMPARE(rows.size(), 2);
  QCOMPARE(rows[0].records + rows[1].records, 3);
  const QJsonObject rep = QJsonDocument::fromJson(readFile(report)).object();
  QCOMPARE(rep["skipped_lines"].toInt(), 1);
  QCOMPARE(rep["records"].toInt(), 3);
}

void TstCliReplay::deterministicOutput() {
  const QString a = tmp_.filePath("det-a.jsonl"), b = tmp_.filePath("det-b.jsonl");
  const QString ra = tmp_.filePath("det-a.json"), rb = tmp_.filePath("det-b.json");
  const Run x = cli({"replay", "--out", a, "--report", ra, "--seed", "5"});
  const Run y = cli({"replay", "--out", b, "--report", rb, "--seed", "5"});
  QVERIFY2(x.code == 0, qPrintable(diag(x)));
  QVERIFY2(y.code == 0, qPrintable(diag(y)));
  const QByteArray ta = readFile(a);
  QVERIFY(!ta.isEmpty());
  QVERIFY(ta == readFile(b));
  QVERIFY(readFile(ra) == readFile(rb));
  QCOMPARE(x.out, y.out);
}

void TstCliReplay::threadsGiveTheSameOutput_data() {
  // A 7.5 MB trace (two of the reader's 4 MiB buffers; tst_parallel_replay makes them small),
  // as tracegen writes it, and with a blank line, CRLF endings and a bad line deep in it.
  QTest::addColumn<bool>("damaged");
  QTest::addColumn<bool>("skip");
  QTest::newRow("as written") << false << false;
  QTest::newRow("bad line stops it") << true << false;
  QTest::newRow("bad line skipped") << true << true;
}

void TstCliReplay::threadsGiveTheSameOutput() {
  QFETCH(bool, damaged);
  QFETCH(bool, skip);
  const QString trace = tmp_.filePath(damaged ? "threads-damaged.jsonl" : "threads.jsonl");
  const Run gen = run(QStringLiteral(SPILLWAY_TRACEGEN),
                      {"--instances", "4", "--rps", "25", "--duration", "400", "--seed", "3"});
  QVERIFY2(gen.code == 0, qPrintable(diag(gen)));
  QList<QByteArray> lines = gen.out.split('\n');
  QVERIFY(lines.size() > 30000);
  // Near the end, after the leaking instance's first trip: a transition is written before it.
  const qsizetype bad = lines.size() - 300;
  if (damaged) {
    lines[bad] = R"({"ts":1764480000000,"instance":"x","latency_ms":1,"status":1000})";
    for (int i = 20000; i < 20010; ++i) lines[i] += '\r';
    lines.insert(100, QByteArray());
  }
  {
    QFile f(trace);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(lines.join('\n'));
  }
  QByteArray first[4];
  for (const char* threads : {"1", "2"}) {
    const QString out = tmp_.filePath(QStringLiteral("threads-%1.jsonl").arg(threads));
    const QString report = tmp_.filePath(QStringLiteral("threads-%1.json").arg(threads));
    QFile::remove(report);
    QStringList args{"replay", "--trace", trace,      "--threads", threads,
                     "--out",  out,       "--report", report};
    if (skip) args << "--skip-bad-lines";
    const Run r = cli(args);
    QVERIFY2(r.code == (damaged && !skip ? 2 : 0), qPrintable(diag(r)));
    if (damaged && !skip)  // one line further down for the blank line
      QVERIFY2(
          r.err.contains(QStringLiteral(":%1: status: must be in [0, 999]").arg(bad + 2).toUtf8()),
          qPrintable(diag(r)));
    const QByteArray got[4] = {r.out, r.err, readFile(out), readFile(report)};
    if (threads[0] == '1') {
      QVERIFY2(!got[2].isEmpty(), "no transitions: the trace should trip a breaker");
      std::copy(got, got + 4, first);
      continue;
    }
    for (int i = 0; i < 4; ++i) QVERIFY2(got[i] == first[i], qPrintable(QString::number(i)));
  }
}

// Each was accepted: --duration nan wrote without end, --instances 1e9 spun, --seed abc was
// seed 0, a leak on an instance that is not there wrote no fault, and a full disk exited 0.
void TstCliReplay::tracegenRefusesNonsense_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<QString>("error");
  QTest::newRow("duration nan") << QStringList{"--duration", "nan"}
                                << "--duration: expected a number from 0.001 to 604800, got 'nan'";
  QTest::newRow("a billion instances")
      << QStringList{"--instances", "1000000000"}
      << "--instances: expected a whole number from 1 to 1e+06, got '1000000000'";
  QTest::newRow("seed abc") << QStringList{"--seed", "abc"}
                            << "--seed: expected a whole number from 0 to 9e+15, got 'abc'";
  QTest::newRow("leak on instance 7 of 4")
      << QStringList{"--leak-instance", "7"}
      << "--leak-instance: 7 is not one of the 4 instances (0 to 3, or -1 for none)";
  QTest::newRow("a full disk") << QStringList{"--duration", "60", "--out", "/dev/full"}
                               << "/dev/full: cannot write (the disk is full?)";
}

void TstCliReplay::tracegenRefusesNonsense() {
  QFETCH(QStringList, args);
  QFETCH(QString, error);
  const Run r = run(QStringLiteral(SPILLWAY_TRACEGEN), args);
  QCOMPARE(r.code, 2);
  QVERIFY2(QString(r.err).contains("spillway-tracegen: " + error), qPrintable(diag(r)));
}

void TstCliReplay::tracegenDeterministic() {
  const QStringList args{"--seed", "7", "--duration", "60", "--instances", "3"};
  const Run a = run(QStringLiteral(SPILLWAY_TRACEGEN), args);
  const Run b = run(QStringLiteral(SPILLWAY_TRACEGEN), args);
  QVERIFY2(a.code == 0, qPrintable(diag(a)));
  QVERIFY2(b.code == 0, qPrintable(diag(b)));
  QVERIFY(a.out.count('\n') > 500);  // ~6 calls/s × 3 instances × 60 s
  QVERIFY(a.out == b.out);
  // --out writes the same bytes as stdout.
  const QString file = tmp_.filePath("gen.jsonl");
  const Run c = run(QStringLiteral(SPILLWAY_TRACEGEN), args + QStringList{"--out", file});
  QVERIFY2(c.code == 0, qPrintable(diag(c)));
  QVERIFY(readFile(file) == a.out);
  // The seed is what makes it differ.
  const Run d = run(QStringLiteral(SPILLWAY_TRACEGEN),
                    {"--seed", "8", "--duration", "60", "--instances", "3"});
  QVERIFY2(d.code == 0, qPrintable(diag(d)));
  QVERIFY(d.out != a.out);
  // What it writes replays cleanly.
  const Run e = cli({"replay", "--trace", file});
  QVERIFY2(e.code == 0, qPrintable(diag(e)));
  QCOMPARE(tableRows(e.out).size(), 3);
}

void TstCliReplay::tracegenDefaultIsCommittedSample() {
  const QString faults = tmp_.filePath("sample.faults.jsonl");
  const Run r = run(QStringLiteral(SPILLWAY_TRACEGEN), {"--faults-out", faults});
  QVERIFY2(r.code == 0, qPrintable(diag(r)));
  const QByteArray committed =
      readFile(QStringLiteral(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.jsonl"));
  QVERIFY(!committed.isEmpty());
  QVERIFY2(r.out == committed, "tracegen's default output differs from the committed sample");
  QCOMPARE(readFile(faults),
           readFile(QStringLiteral(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.faults.jsonl")));
}

// TRACE.faults.jsonl beside the trace is read, as sweep and export read it: one trace gave a
// TTD of 1m06s here (faults read from the recording) and 2m32s in the sweep.
void TstCliReplay::faultsBesideTheTrace() {
  const QString trace = QStringLiteral(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.jsonl");
  const QString faults =
      QStringLiteral(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.faults.jsonl");
  const Run beside = cli({"replay", "--trace", trace});
  const Run named = cli({"replay", "--trace", trace, "--faults", faults});
  QVERIFY2(beside.code == 0 && named.code == 0, qPrintable(diag(beside)));
  QVERIFY2(beside.out.contains("real faults from the annotations"), beside.out.constData());
  QCOMPARE(beside.out, named.out);
  // Copied away from its annotations, the trace's faults come from the recording itself.
  const QString alone = tmp_.filePath("alone.jsonl");
  QVERIFY(QFile::copy(trace, alone));
  const Run own = cli({"replay", "--trace", alone});
  QVERIFY2(own.code == 0, qPrintable(diag(own)));
  QVERIFY(own.out.contains("no annotations"));
}

QTEST_GUILESS_MAIN(TstCliReplay)
#include "tst_cli_replay.moc"
