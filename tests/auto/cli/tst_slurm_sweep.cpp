// A 10,000-candidate sweep of the built-in sample on a real single-node Slurm cluster
// (tests/peers/slurm/cluster.sh: munged, slurmctld, slurmd on 127.0.0.1, started here and
// stopped after): the script of `sweep --emit slurm` submits 8 array tasks and the dependent
// merge, whose output is the one-machine sweep's bytes; a task Slurm runs again does not
// double rows; the merge job refuses a missing shard by name.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.hpp"
#include "require_peer.hpp"

namespace {

const QString kCli = SPILLWAY_CLI;
const QString kCluster = SOURCE_DIR "/tests/peers/slurm/cluster.sh";

// 20 × 20 × 25 = 10,000 candidates.
const QStringList kSpace{"--param", "trip.slow_rate=0.05:1:0.05",
                         "--param", "trip.error_rate=0.05:1:0.05",
                         "--param", "trip.sustain=0s:24s:1s"};

Run runIn(const QString& program, const QStringList& args, const QProcessEnvironment& env,
          const QString& cwd, int timeoutMs) {
  return runWith(program, args, env, cwd, {}, timeoutMs);
}

QByteArray slurp(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing " + path.toUtf8() + ">");
}

// The cluster of one test: started in `dir`, stopped whatever happens to the test.
struct Cluster {
  QString dir;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  bool up = false;
  ~Cluster() {
    if (up) runIn("bash", {kCluster, "stop", dir}, env, QDir::tempPath(), 120000);
  }
  QString start() {
    const Run r = runIn("bash", {kCluster, "start", dir}, env, QDir::tempPath(), 120000);
    up = true;  // stop even what a failed start left running
    if (r.code != 0) return QString::fromUtf8(r.out + r.err);
    env.insert("SLURM_CONF", dir + "/slurm.conf");
    env.insert("PATH", QFileInfo(kCli).absolutePath() + ":" + env.value("PATH"));
    return {};
  }
  // `scontrol show job` of one job or array task: its state (COMPLETED, PENDING, …).
  // `scontrol show job -o` of one job or array: one line per task.
  QString show(const QString& job) const {
    return QString::fromUtf8(runIn("scontrol", {"show", "job", "-o", job}, env, dir, 30000).out);
  }
  // The (first) task's state: COMPLETED, PENDING, …
  static QString stateIn(const QString& shown) {
    const auto m = QRegularExpression("JobState=(\\S+)").match(shown);
    return m.hasMatch() ? m.captured(1) : QString("UNKNOWN");
  }
  QString state(const QString& job) const { return stateIn(show(job)); }
  // Waits until `job` (every task of an array) has ended; its last state. An answer without a
  // state (scontrol could not reach a controller busy with the other tests) is asked again.
  QString wait(const QString& job, int seconds) const {
    QString text;
    for (int i = 0; i < seconds * 2; ++i) {
      text = show(job);
      if (text.contains("JobState=") &&
          !text.contains(QRegularExpression("JobState=(PENDING|RUNNING|CONFIGURING|COMPLETING|"
                                            "REQUEUED|REQUEUE_HOLD|SUSPENDED)")))
        return stateIn(text);
      QTest::qWait(500);
    }
    return "no end after " + QString::number(seconds) + " s: " + text;
  }
};

}  // namespace

class TstSlurmSweep : public QObject {
  Q_OBJECT

 private slots:
  void arrayJobMergesToTheOneMachineSweep();
};

void TstSlurmSweep::arrayJobMergesToTheOneMachineSweep() {
  SPW_REQUIRE_PEER(!QStandardPaths::findExecutable("sbatch").isEmpty() &&
                       QFileInfo::exists("/usr/sbin/slurmctld") &&
                       QFileInfo::exists("/usr/sbin/slurmd") &&
                       QFileInfo::exists("/usr/sbin/munged"),
                   "Slurm is missing: apt-get install munge slurmctld slurmd slurm-client");
  QTemporaryDir tmp;
  Cluster cluster;
  cluster.dir = tmp.filePath("cluster");
  const QString failed = cluster.start();
  QVERIFY2(failed.isEmpty(), qPrintable(failed));
  const QString work = tmp.filePath("work"), rows = work + "/rows";
  QVERIFY(QDir().mkpath(work));
  cluster.env.insert("SPILLWAY_ROWS", rows);

  // The script of --emit, run as an SRE would on the submit host.
  const Run emitted = run(kCli, QStringList{"sweep", "--emit", "slurm", "--shards", "8"} + kSpace +
                                    QStringList{"--top", "30", "--csv", "sweep.csv"});
  QVERIFY2(emitted.code == 0, emitted.err.constData());
  QFile script(work + "/submit.sh");
  QVERIFY(script.open(QIODevice::WriteOnly));
  script.write(emitted.out);
  script.close();
  const Run submit = runIn("bash", {"submit.sh"}, cluster.env, work, 60000);
  QVERIFY2(submit.code == 0, submit.err.constData());
  const auto ids = QRegularExpression("array job (\\d+) \\(8 tasks\\), merge job (\\d+)")
                       .match(QString::fromUtf8(submit.out));
  QVERIFY2(ids.hasMatch(), submit.out.constData());
  const QString array = ids.captured(1), merge = ids.captured(2);
  QCOMPARE(cluster.wait(merge, 240), QString("COMPLETED"));
  for (int i = 0; i < 8; ++i)
    QCOMPARE(cluster.state(array + "_" + QString::number(i)), QString("COMPLETED"));

  // The one-machine sweep, here.
  const QString oneCsv = tmp.filePath("one.csv");
  const Run one =
      run(kCli, QStringList{"sweep"} + kSpace + QStringList{"--top", "30", "--csv", oneCsv});
  QVERIFY2(one.code == 0, one.err.constData());
  QVERIFY(one.out.startsWith("10000 candidates"));
  QCOMPARE(slurp(rows + "/merge.out"), one.out);
  QCOMPARE(slurp(work + "/sweep.csv"), slurp(oneCsv));

  // Slurm runs task 3 again (what a requeue after a node failure does): its rows are
  // replaced, not added to, and the merge still agrees.
  const QByteArray shard3 = slurp(rows + "/shard-3.jsonl");
  QCOMPARE(shard3.count('\n'), 1 + 1250 + 1);
  QFile::remove(rows + "/shard-3.jsonl");
  const Run requeue = runIn("scontrol", {"requeue", array + "_3"}, cluster.env, work, 30000);
  QVERIFY2(requeue.code == 0, requeue.err.constData());
  QCOMPARE(cluster.wait(array + "_3", 240), QString("COMPLETED"));
  QCOMPARE(slurp(rows + "/shard-3.jsonl"), shard3);
  QStringList shards;
  for (int i = 0; i < 8; ++i) shards << QString("%1/shard-%2.jsonl").arg(rows).arg(i);
  QCOMPARE(run(kCli, QStringList{"sweep", "merge", "--top", "30"} + shards).out, one.out);

  // A shard lost: the merge job fails and names it; nothing partial is printed.
  QVERIFY(QFile::remove(rows + "/shard-5.jsonl"));
  const Run refused = runIn(
      "sbatch", {"--wait", "--output=" + work + "/refused.out", rows + "/merge.sbatch", rows, "8"},
      cluster.env, work, 120000);
  QVERIFY(refused.code != 0);
  const QByteArray out = slurp(work + "/refused.out");
  QVERIFY2(out.contains("shard-5.jsonl") && !out.contains("Pareto"), out.constData());
}

QTEST_GUILESS_MAIN(TstSlurmSweep)
#include "tst_slurm_sweep.moc"
