// spillway-cli sweep --shard I/N and sweep merge, end to end on the built-in seed-000 sample:
// the merged table, CSV and JSON are the one-machine sweep's bytes whatever the shard count;
// merge refuses a missing, doubled, foreign or cut-short shard by name; a shard run again
// replaces its rows instead of adding to them.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.hpp"

namespace {

const QString kCli = SPILLWAY_CLI;

// A 14-candidate grid (7 × 2), or 10 random samples, over the sample incident.
QStringList space(const QString& mode) {
  QStringList a{"--param", "trip.slow_rate=0.2:0.8:0.1", "--param", "trip.sustain=0s,5s"};
  if (mode == "random")
    a << "--random"
      << "10"
      << "--seed"
      << "7";
  return a;
}

QByteArray slurp(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

// Runs every shard of `n` into dir/rows-I.jsonl; the paths, or empty on a failure.
QStringList runShards(const QTemporaryDir& dir, const QString& mode, int n,
                      const QStringList& extra = {}) {
  QStringList paths;
  for (int i = 0; i < n; ++i) {
    const QString rows = dir.filePath(QString("rows-%1.jsonl").arg(i));
    const Run r = run(kCli, QStringList{"sweep", "--shard", QString("%1/%2").arg(i).arg(n),
                                        "--rows", rows, "--threads", "1"} +
                                space(mode) + extra);
    if (r.code != 0) {
      qWarning("%s", r.err.constData());
      return {};
    }
    paths << rows;
  }
  return paths;
}

Run merge(const QStringList& shards, const QStringList& extra = {}) {
  return run(kCli, QStringList{"sweep", "merge"} + extra + shards);
}

}  // namespace

class TstCliSweepShards : public QObject {
  Q_OBJECT

 private slots:
  void mergedIsTheOneMachineSweep_data();
  void mergedIsTheOneMachineSweep();
  void mergeRefuses_data();
  void mergeRefuses();
  void rerunReplacesRows();
  void libraryKeepsTheShards();
  void badShard_data();
  void badShard();
};

void TstCliSweepShards::mergedIsTheOneMachineSweep_data() {
  QTest::addColumn<QString>("mode");
  QTest::addColumn<int>("shards");
  QTest::newRow("grid, 1 shard") << "grid" << 1;
  QTest::newRow("grid, 3 shards") << "grid" << 3;
  QTest::newRow("grid, 8 shards") << "grid" << 8;
  QTest::newRow("grid, more shards than candidates") << "grid" << 20;
  QTest::newRow("random, 4 shards") << "random" << 4;
}

void TstCliSweepShards::mergedIsTheOneMachineSweep() {
  QFETCH(QString, mode);
  QFETCH(int, shards);
  QTemporaryDir dir;
  const QString oneCsv = dir.filePath("one.csv"), mergedCsv = dir.filePath("merged.csv");
  const Run one = run(kCli, QStringList{"sweep", "--top", "100", "--csv", oneCsv} + space(mode));
  QVERIFY2(one.code == 0, one.err.constData());
  QVERIFY(one.out.contains("on the Pareto front"));
  const QStringList rows = runShards(dir, mode, shards);
  QCOMPARE(rows.size(), shards);
  const Run merged = merge(rows, {"--top", "100", "--csv", mergedCsv});
  QVERIFY2(merged.code == 0, merged.err.constData());
  QCOMPARE(merged.out, one.out);  // the table and its front, byte for byte
  QCOMPARE(slurp(mergedCsv), slurp(oneCsv));
  const Run oneJson = run(kCli, QStringList{"sweep", "--json"} + space(mode));
  QCOMPARE(merge(rows, {"--json"}).out, oneJson.out);
  // The shards' order on the command line does not matter.
  QStringList reversed(rows.rbegin(), rows.rend());
  QCOMPARE(merge(reversed, {"--top", "100"}).out, one.out);
}

void TstCliSweepShards::mergeRefuses_data() {
  QTest::addColumn<QString>("fault");
  QTest::addColumn<QString>("message");
  QTest::newRow("missing") << "missing"
                           << "missing shards 2 of 4";
  QTest::newRow("doubled") << "doubled"
                           << "given twice";
  QTest::newRow("another space") << "space"
                                 << "another candidate space";
  QTest::newRow("another SLO") << "slo"
                               << "another replay seed or SLO";
  QTest::newRow("cut short") << "cut"
                             << "cut short";
  QTest::newRow("not a shard") << "garbage"
                               << "not JSON";
}

void TstCliSweepShards::mergeRefuses() {
  QFETCH(QString, fault);
  QFETCH(QString, message);
  QTemporaryDir dir;
  QStringList rows = runShards(dir, "grid", 4);
  QCOMPARE(rows.size(), 4);
  QTemporaryDir other;
  if (fault == "missing") {
    rows.removeAt(2);
  } else if (fault == "doubled") {
    rows << rows.at(1);
  } else if (fault == "space" || fault == "slo") {
    const QStringList extra =
        fault == "space" ? QStringList{"--param", "slow.k=2,3"} : QStringList{"--slo", "2s"};
    const QStringList foreign = runShards(other, "grid", 4, extra);
    QCOMPARE(foreign.size(), 4);
    rows[3] = foreign[3];
  } else {
    QFile f(rows[1]);
    QVERIFY(f.open(QIODevice::ReadWrite));
    const QByteArray all = f.readAll();
    f.resize(0);
    f.seek(0);
    // Cut short: a task killed after a few rows (no trailer); garbage: not a shard at all.
    f.write(fault == "cut" ? all.left(all.indexOf('\n', all.indexOf('\n') + 1) + 1) : "{oops\n");
  }
  const Run r = merge(rows);
  QCOMPARE(r.code, 2);
  QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
  QVERIFY2(r.out.isEmpty(), r.out.constData());  // no partial front
  if (fault == "cut" || fault == "garbage" || fault == "space")
    QVERIFY2(r.err.contains(QFileInfo(fault == "space" ? rows[3] : rows[1]).fileName().toUtf8()),
             r.err.constData());
}

// A task the engine runs again (Slurm requeue, a Job's retry) rewrites its own file: the
// rows are not doubled and merge still agrees with the one-machine sweep.
void TstCliSweepShards::rerunReplacesRows() {
  QTemporaryDir dir;
  const QStringList rows = runShards(dir, "grid", 2);
  QCOMPARE(rows.size(), 2);
  const QByteArray first = slurp(rows[0]);
  QCOMPARE(runShards(dir, "grid", 1).size(), 1);  // a different sweep (1 shard) into rows-0
  QVERIFY(slurp(rows[0]) != first);
  QCOMPARE(runShards(dir, "grid", 2).size(), 2);  // the tasks again
  QCOMPARE(slurp(rows[0]), first);
  QCOMPARE(first.count('\n'), 1 + 7 + 1);  // header, candidates 0, 2, …, 12, trailer
  QVERIFY(!QFile::exists(rows[0] + ".part"));
  const Run one = run(kCli, QStringList{"sweep", "--top", "100"} + space("grid"));
  QCOMPARE(merge(rows, {"--top", "100"}).out, one.out);
}

// Shards written into a library (no --rows) under the sweep's key: a shard run twice is kept
// once, the merge of the kept shards is the one-machine sweep, a shard not yet there is named.
void TstCliSweepShards::libraryKeepsTheShards() {
  QTemporaryDir dir;
  const QString lib = dir.filePath("team.db");
  auto shard = [&](int i) {
    return run(kCli, QStringList{"sweep", "--shard", QString("%1/3").arg(i), "--library", lib,
                                 "--threads", "1"} +
                         space("grid"));
  };
  Run r = shard(0);
  QVERIFY2(r.code == 0, r.err.constData());
  QVERIFY2(r.out.contains("shard 0/3 saved in " + lib.toUtf8()), r.out.constData());
  const QString key = QString::fromUtf8(r.out).section(' ', 1, 1).chopped(1);  // "sweep KEY: …"
  QCOMPARE(key.size(), 16);
  QCOMPARE(shard(2).code, 0);
  const Run partial = merge({}, {"--library", lib, "--sweep", key});
  QCOMPARE(partial.code, 2);
  QVERIFY2(partial.err.contains("missing shards 1 of 3"), partial.err.constData());
  QCOMPARE(shard(1).code, 0);
  r = shard(2);  // a task run again
  QVERIFY(r.out.startsWith("sweep " + key.toUtf8() + ": shard 2/3"));
  const Run merged = merge({}, {"--library", lib, "--sweep", key, "--top", "100"});
  QVERIFY2(merged.code == 0, merged.err.constData());
  QCOMPARE(merged.out, run(kCli, QStringList{"sweep", "--top", "100"} + space("grid")).out);
  const Run none = merge({}, {"--library", lib, "--sweep", "0123456789abcdef"});
  QCOMPARE(none.code, 2);
  QVERIFY(none.err.contains("no shard of sweep '0123456789abcdef'"));
}

void TstCliSweepShards::badShard_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<QString>("message");
  QTest::newRow("index past the count") << QStringList{"--shard", "3/3", "--rows", "x"} << "I/N";
  QTest::newRow("no count") << QStringList{"--shard", "1", "--rows", "x"} << "I/N";
  QTest::newRow("not a number") << QStringList{"--shard", "a/2", "--rows", "x"} << "I/N";
  QTest::newRow("no rows file") << QStringList{"--shard", "0/2"}
                                << "--rows FILE or into the --library";
  QTest::newRow("rows without shard") << QStringList{"--rows", "x.jsonl"} << "goes with --shard";
  QTest::newRow("shard prints nothing")
      << QStringList{"--shard", "0/2", "--rows", "x", "--json"} << "sweep merge";
}

void TstCliSweepShards::badShard() {
  QFETCH(QStringList, args);
  QFETCH(QString, message);
  const Run r = run(kCli, QStringList{"sweep"} + args);
  QCOMPARE(r.code, 2);
  QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
}

QTEST_APPLESS_MAIN(TstCliSweepShards)
#include "tst_cli_sweep_shards.moc"
