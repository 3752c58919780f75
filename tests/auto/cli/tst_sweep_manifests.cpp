// packaging/kubernetes/sweep-job.yaml: the Indexed Job's index and env reach --shard and
// --rows, the merge covers every shard, and the containers' commands, run here as the Job
// controller would run them (one per completion index, then the merge), print the bytes of
// the one-machine sweep. No cluster needed: the commands are plain /bin/sh.
#include <yaml-cpp/yaml.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.hpp"

namespace {

const QString kCli = SPILLWAY_CLI;
const QString kManifest = SOURCE_DIR "/packaging/kubernetes/sweep-job.yaml";
const QString kLibraryManifest = SOURCE_DIR "/packaging/kubernetes/sweep-job-library.yaml";
const QString kSample = SOURCE_DIR "/resources/traces/seed000-sample";

struct Job {
  YAML::Node spec, container;
  QString args;  // the container's `sh -c` script
  std::map<std::string, std::string> env;
};

Job job(const std::vector<YAML::Node>& docs, const std::string& step) {
  for (const YAML::Node& d : docs)
    if (d["metadata"]["labels"]["step"].as<std::string>() == step) {
      Job j;
      j.spec = d["spec"];
      j.container = d["spec"]["template"]["spec"]["containers"][0];
      j.args = QString::fromStdString(j.container["args"][0].as<std::string>());
      for (const YAML::Node& e : j.container["env"])
        j.env[e["name"].as<std::string>()] = e["value"].as<std::string>();
      return j;
    }
  return {};
}

// The container's command as the kubelet runs it: /bin/sh -c ARGS, with the container's env,
// the Job's index, the volumes at local directories and spillway-cli on the PATH.
Run runContainer(const Job& j, const QProcessEnvironment& base) {
  QProcessEnvironment env = base;
  for (const auto& [k, v] : j.env)
    if (!env.contains(QString::fromStdString(k)))
      env.insert(QString::fromStdString(k), QString::fromStdString(v));
  return runWith("/bin/sh", {"-c", j.args}, env);
}

// The system environment with spillway-cli first on the PATH.
QProcessEnvironment cliEnv() {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("PATH", QFileInfo(kCli).absolutePath() + ":" + env.value("PATH"));
  return env;
}

// The Job's pods for these completion indices, in order; the first failure's stderr, or empty.
QByteArray runPods(const Job& j, const QProcessEnvironment& env, const QList<int>& indices) {
  for (int i : indices) {
    QProcessEnvironment pod = env;
    pod.insert("JOB_COMPLETION_INDEX", QString::number(i));
    const Run r = runContainer(j, pod);
    if (r.code != 0) return "pod " + QByteArray::number(i) + ": " + r.err;
  }
  return {};
}

}  // namespace

class TstSweepManifests : public QObject {
  Q_OBJECT

 private slots:
  void kubernetesJobWiring();
  void kubernetesJobRunsAsTheControllerWould();
  void libraryJobRunsAsTheControllerWould();
};

void TstSweepManifests::kubernetesJobWiring() {
  const std::vector<YAML::Node> docs = YAML::LoadAllFromFile(kManifest.toStdString());
  QCOMPARE(docs.size(), std::size_t{2});
  const Job sweep = job(docs, "sweep"), merge = job(docs, "merge");
  QVERIFY(sweep.spec && merge.spec);
  QCOMPARE(QString::fromStdString(sweep.spec["completionMode"].as<std::string>()),
           QString("Indexed"));
  const int completions = sweep.spec["completions"].as<int>();
  QVERIFY(completions > 1);
  QCOMPARE(std::stoi(sweep.env.at("SHARDS")), completions);  // every index a shard
  QCOMPARE(std::stoi(merge.env.at("SHARDS")), completions);  // and the merge waits for all
  QVERIFY(sweep.spec["parallelism"].as<int>() <= completions);
  QVERIFY(sweep.spec["backoffLimitPerIndex"].as<int>() > 0);  // a dead pod is retried
  QCOMPARE(sweep.spec["maxFailedIndexes"].as<int>(), 0);      // and a shard never given up
  QCOMPARE(
      QString::fromStdString(sweep.spec["template"]["spec"]["restartPolicy"].as<std::string>()),
      QString("Never"));
  QVERIFY2(sweep.args.contains(R"(--shard "$JOB_COMPLETION_INDEX/$SHARDS")"),
           qPrintable(sweep.args));
  QVERIFY2(sweep.args.contains(R"(--rows "$ROWS_DIR/shard-$JOB_COMPLETION_INDEX.jsonl")"),
           qPrintable(sweep.args));
  QVERIFY(merge.args.contains("sweep merge"));
  // Both mount the rows volume where ROWS_DIR says.
  for (const Job* j : {&sweep, &merge}) {
    bool mounted = false;
    for (const YAML::Node& m : j->container["volumeMounts"])
      mounted = mounted || (m["name"].as<std::string>() == "rows" &&
                            m["mountPath"].as<std::string>() == j->env.at("ROWS_DIR"));
    QVERIFY(mounted);
  }
}

void TstSweepManifests::kubernetesJobRunsAsTheControllerWould() {
  const std::vector<YAML::Node> docs = YAML::LoadAllFromFile(kManifest.toStdString());
  const Job sweep = job(docs, "sweep"), merge = job(docs, "merge");
  QTemporaryDir dir;
  QVERIFY(QDir(dir.path()).mkpath("rows") && QDir(dir.path()).mkpath("data"));
  const QString data = dir.filePath("data"), rows = dir.filePath("rows");
  QVERIFY(QFile::copy(kSample + ".jsonl", data + "/incident.jsonl"));
  QVERIFY(QFile::copy(kSample + ".faults.jsonl", data + "/incident.faults.jsonl"));
  QProcessEnvironment env = cliEnv();
  env.insert("ROWS_DIR", rows);
  env.insert("DATA_DIR", data);
  QList<int> all;
  for (int i = 0; i < sweep.spec["completions"].as<int>(); ++i) all << i;
  const QByteArray failed = runPods(sweep, env, all);
  QVERIFY2(failed.isEmpty(), failed.constData());
  const Run merged = runContainer(merge, env);
  QVERIFY2(merged.code == 0, merged.err.constData());
  // The manifest's sweep, on one machine.
  QVERIFY(sweep.args.contains("--param trip.slow_rate=0.2:0.8:0.1 --param trip.sustain=0s,5s"));
  const QString csv = dir.filePath("one.csv");
  const Run one = run(
      kCli, {"sweep", "--trace", data + "/incident.jsonl", "--param", "trip.slow_rate=0.2:0.8:0.1",
             "--param", "trip.sustain=0s,5s", "--top", "20", "--csv", csv});
  QVERIFY2(one.code == 0, one.err.constData());
  QCOMPARE(merged.out, one.out);
  QFile a(csv), b(rows + "/sweep.csv");
  QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
  QCOMPARE(b.readAll(), a.readAll());
  // A pod run again (backoffLimitPerIndex) rewrites its shard: the merge is unchanged.
  QProcessEnvironment pod = env;
  pod.insert("JOB_COMPLETION_INDEX", "3");
  QCOMPARE(runContainer(sweep, pod).code, 0);
  QCOMPARE(runContainer(merge, env).out, one.out);
  // A shard lost: the merge names it instead of printing a partial front.
  QVERIFY(QFile::remove(rows + "/shard-5.jsonl"));
  const Run partial = runContainer(merge, env);
  QCOMPARE(partial.code, 2);
  QVERIFY2(partial.err.contains("shard-5.jsonl"), partial.err.constData());
  QVERIFY(partial.out.isEmpty());
}

// sweep-job-library.yaml: the incident read from the library, each pod's rows kept in it under
// SWEEP, the merge reading them back. Run here over an SQLite library file in place of the
// team's PostgreSQL URL (the same commands; tst_library_postgres runs shards on PostgreSQL).
void TstSweepManifests::libraryJobRunsAsTheControllerWould() {
  const std::vector<YAML::Node> docs = YAML::LoadAllFromFile(kLibraryManifest.toStdString());
  QCOMPARE(docs.size(), std::size_t{2});
  const Job sweep = job(docs, "sweep"), merge = job(docs, "merge");
  QCOMPARE(QString::fromStdString(sweep.spec["completionMode"].as<std::string>()),
           QString("Indexed"));
  const int completions = sweep.spec["completions"].as<int>();
  QCOMPARE(std::stoi(sweep.env.at("SHARDS")), completions);
  QCOMPARE(sweep.spec["maxFailedIndexes"].as<int>(), 0);
  QCOMPARE(merge.env.at("SWEEP"), sweep.env.at("SWEEP"));
  QCOMPARE(merge.env.at("LIBRARY"), sweep.env.at("LIBRARY"));
  QVERIFY(QString::fromStdString(sweep.env.at("LIBRARY")).startsWith("postgresql://"));
  QVERIFY(!QString::fromStdString(sweep.env.at("LIBRARY")).contains(':' + QString("pass")));
  QVERIFY2(sweep.args.contains(R"(--shard "$JOB_COMPLETION_INDEX/$SHARDS")"),
           qPrintable(sweep.args));
  QVERIFY(!sweep.args.contains("--rows"));

  QTemporaryDir dir;
  const QString lib = dir.filePath("team.db");
  const QString incident = QString::fromStdString(sweep.env.at("INCIDENT"));
  QCOMPARE(run(kCli, {"import", kSample + ".jsonl", "--incident", incident, "--library", lib}).code,
           0);
  QProcessEnvironment env = cliEnv();
  env.insert("LIBRARY", lib);
  QList<int> pods;
  for (int i = 0; i < completions; ++i) pods << i;
  const QByteArray failed = runPods(sweep, env, pods << 3);  // index 3 retried
  QVERIFY2(failed.isEmpty(), failed.constData());
  const Run merged = runContainer(merge, env);
  QVERIFY2(merged.code == 0, merged.err.constData());
  const Run one =
      run(kCli, {"sweep", "--incident", incident, "--library", lib, "--param",
                 "trip.slow_rate=0.2:0.8:0.1", "--param", "trip.sustain=0s,5s", "--top", "20"});
  QVERIFY2(one.code == 0, one.err.constData());
  QCOMPARE(merged.out, one.out);
}

QTEST_APPLESS_MAIN(TstSweepManifests)
#include "tst_sweep_manifests.moc"
