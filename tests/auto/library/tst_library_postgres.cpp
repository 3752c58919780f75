// The team library on a real PostgreSQL 15 (tests/peers/postgresql/server.sh: initdb as an
// unprivileged user, listening on 127.0.0.1 only, a scram password that only a pgpass file
// holds; started here, stopped after). Each test works in a database of its own.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

#include "cli_run.hpp"
#include "library_testing.hpp"
#include "require_peer.hpp"
#include "spillway/library/copy.hpp"
#include "spillway/library/live_recorder.hpp"

using namespace spillway;
using spillway::testing::slurp;
using spillway::testing::spit;

namespace {

const QString kCli = SPILLWAY_CLI;
const QString kConsole = SPILLWAY_CONSOLE;
const QString kServer = SOURCE_DIR "/tests/peers/postgresql/server.sh";

bool postgresInstalled() {
  return !QDir("/usr/lib/postgresql").entryList({"1*"}, QDir::Dirs).isEmpty();
}

// n synthetic calls starting at t0, as canonical JSONL.
std::string callsFrom(std::size_t n, Micros t0, const std::string& prefix) {
  std::string out;
  CallRecord r;
  std::string inst, tenant;
  for (std::size_t i = 0; i < n; ++i) {
    spillway::testing::syntheticCall(i, r, inst, tenant, 137, t0);
    inst = prefix + inst;
    r.instance = inst;
    formats::appendCallJson(out, r);
  }
  return out;
}

QList<QByteArray> sortedLines(const QByteArray& text) {
  QList<QByteArray> lines = text.split('\n');
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace

class TstLibraryPostgres : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void cleanupTestCase();
  void importExportAndListMatchSqlite();
  void schemaMigratesAndForeignDatabasesAreRefused();
  void copyRoundTripIsByteIdentical();
  void concurrentWritersLoseAndDoubleNothing();
  void replayAndSweepReadTheTeamLibrary();  // and the console
  void credentialsNeverOnTheCommandLine();

 private:
  // A new empty database of this server, as a URL without credentials.
  QString freshDatabase(const QString& name);
  Run cli(const QStringList& args) const { return runWith(kCli, args, env_, {}, {}, 120000); }
  std::string path(const QString& name) const { return tmp_.filePath(name).toStdString(); }

  QTemporaryDir tmp_;
  QString dir_, port_;
  QProcessEnvironment env_ = QProcessEnvironment::systemEnvironment();
  bool up_ = false;
};

void TstLibraryPostgres::initTestCase() {
  SPW_REQUIRE_PEER(postgresInstalled(), "PostgreSQL is missing: apt-get install postgresql");
  dir_ = tmp_.filePath("pg");
  env_.insert("PG_HARNESS_OWNER", QString::number(QCoreApplication::applicationPid()));
  const Run r = runWith("bash", {kServer, "start", dir_}, env_, QDir::tempPath(), {}, 120000);
  up_ = true;  // stop even what a failed start left running
  QVERIFY2(r.code == 0, (r.out + r.err).constData());
  const QString sh = QString::fromUtf8(slurp((dir_ + "/env.sh").toStdString()));
  const auto vars = QRegularExpression("(\\w+)=(\\S+)").globalMatch(sh);
  for (auto it = vars; it.hasNext();) {
    const auto m = it.next();
    env_.insert(m.captured(1), m.captured(2));
    // libpq in this process reads the same: PGPASSFILE above all.
    qputenv(m.captured(1).toUtf8(), m.captured(2).toUtf8());
  }
  port_ = env_.value("PGPORT");
  QVERIFY2(!port_.isEmpty() && env_.contains("PGPASSFILE"), qPrintable(sh));
}

void TstLibraryPostgres::cleanupTestCase() {
  if (up_) runWith("bash", {kServer, "stop", dir_}, env_, QDir::tempPath(), {}, 120000);
}

QString TstLibraryPostgres::freshDatabase(const QString& name) {
  const Run r = runWith("bash", {kServer, "psql", dir_, "-c", "CREATE DATABASE " + name}, env_,
                        QDir::tempPath(), {}, 60000);
  if (r.code != 0) qWarning("%s", (r.out + r.err).constData());
  return "postgresql://spillway@127.0.0.1:" + port_ + "/" + name;
}

// The same files into an SQLite file and a PostgreSQL database: the same export bytes, the same
// listing, the same re-import answer.
void TstLibraryPostgres::importExportAndListMatchSqlite() {
  const QString url = freshDatabase("imports");
  spit(path("a.jsonl"), callsFrom(9000, 1764480000000000, ""));
  const QString sqlite = tmp_.filePath("imports.db");
  for (const QString& lib : {sqlite, url}) {
    Run r = cli({"import", tmp_.filePath("a.jsonl"), "--incident", "a", "--library", lib});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(r.out.contains("9000 records into incident 'a'"));
    r = cli({"import", tmp_.filePath("a.jsonl"), "--incident", "a", "--library", lib});
    QVERIFY2(r.out.contains("already imported into incident 'a'"), r.out.constData());
    QCOMPARE(cli({"library", "annotate", "a", "--instance", "gpu-3", "--from", "1764480000000",
                  "--to", "1764480000900", "--kind", "latency_drift", "--library", lib})
                 .code,
             0);
  }
  const Run fromFile = cli({"library", "export", "a", "--out", "-", "--library", sqlite});
  const Run fromServer = cli({"library", "export", "a", "--out", "-", "--library", url});
  QCOMPARE(fromServer.code, 0);
  QCOMPARE(fromServer.out.size(), fromFile.out.size());
  QVERIFY(fromServer.out == fromFile.out);
  QCOMPARE(fromServer.out,
           QByteArray::fromStdString(spillway::testing::canonicalize(path("a.jsonl"))));
  // `library show` names the same instances and annotation.
  const Run shown = cli({"library", "show", "a", "--library", url});
  QVERIFY(shown.out.contains("gpu-3"));
  QVERIFY(shown.out.contains("latency_drift"));
}

// A library made at schema v1 migrates to the current one on open, as an SQLite file does; a
// database of another application, and one that holds no library for a read, are refused.
void TstLibraryPostgres::schemaMigratesAndForeignDatabasesAreRefused() {
  const std::string url = freshDatabase("old").toStdString();
  {
    library::Library v1(url, library::OpenOptions{.schemaVersion = 1});
    QCOMPARE(v1.schemaVersion(), 1);
    QVERIFY(v1.isPostgres());
    QVERIFY(v1.handle() == nullptr);
    spit(path("old.jsonl"), callsFrom(100, 1764480000000000, "old-"));
    v1.importFile(path("old.jsonl"), formats::Format::Jsonl, {}, "old");
  }
  library::Library now(url);
  QCOMPARE(now.schemaVersion(), library::kSchemaVersion);
  QCOMPARE(now.requireIncident("old").records, std::uint64_t(100));
  QVERIFY(now.saveDrillRun({0, "rb", 1, "v", "p", "{}", "", true}) > 0);  // a v4 table

  const QString other = freshDatabase("other");
  runWith("bash", {kServer, "psql", dir_, "-d", "other", "-c", "CREATE TABLE orders(id int)"}, env_,
          QDir::tempPath(), {}, 60000);
  Run r = cli({"library", "list", "--library", other});
  QCOMPARE(r.code, 2);
  QVERIFY2(r.err.contains("not a Spillway library: a PostgreSQL database of another application"),
           r.err.constData());
  r = cli({"library", "list", "--library", freshDatabase("empty")});
  QCOMPARE(r.code, 2);
  QVERIFY2(r.err.contains("no Spillway library in this database"), r.err.constData());
}

// SQLite → PostgreSQL → SQLite: every incident comes back with the same export bytes, tags,
// notes, annotations, saved runs and sources; a second copy changes nothing.
void TstLibraryPostgres::copyRoundTripIsByteIdentical() {
  const std::string first = path("first.db"), back = path("back.db");
  const QString url = freshDatabase("copies");
  {
    library::Library lib(first);
    spit(path("c1.jsonl"), callsFrom(5000, 1764480000000000, "c1-"));
    spit(path("c2.jsonl"), callsFrom(300, 1764490000000000, "c2-"));
    lib.importFile(path("c1.jsonl"), formats::Format::Jsonl, {}, "c1");
    lib.importFile(path("c2.jsonl"), formats::Format::Jsonl, {}, "c2");
    lib.annotate("c1", {"c1-gpu-1", 1764480000000000, 1764480000500000, "error_burst"});
    lib.setNotes("c1", "gpu-leak", "slow, not failing");
    lib.saveRun("c2", "name: p\n", "{\"fp\":0.01}", "[]");
  }
  Run r = cli({"library", "copy", QString::fromStdString(first), url});
  QVERIFY2(r.code == 0, r.err.constData());
  QVERIFY2(r.out.contains("copied 2 incident(s)"), r.out.constData());
  r = cli({"library", "copy", QString::fromStdString(first), url, "--json"});
  QCOMPARE(r.out.trimmed(), QByteArray(R"({"copied":[],"damaged":[],"present":["c1","c2"]})"));
  QCOMPARE(cli({"library", "copy", url, QString::fromStdString(back)}).code, 0);

  library::Library a(first, {.mustExist = true}), b(back, {.mustExist = true});
  library::Library pg(url.toStdString(), {.mustExist = true});
  for (const char* name : {"c1", "c2"}) {
    const std::string want = spillway::testing::exportOf(a, name, tmp_.path().toStdString());
    QVERIFY(spillway::testing::exportOf(pg, name, tmp_.path().toStdString()) == want);
    QVERIFY(spillway::testing::exportOf(b, name, tmp_.path().toStdString()) == want);
    const auto ia = a.requireIncident(name), ib = b.requireIncident(name);
    QCOMPARE(ib.source, ia.source);
    QCOMPARE(ib.created, ia.created);
    QCOMPARE(ib.tags + ib.notes, ia.tags + ia.notes);
    QCOMPARE(ib.tStart, ia.tStart);
    QCOMPARE(ib.records, ia.records);
    QCOMPARE(b.sources(name).size(), a.sources(name).size());
    QCOMPARE(b.sources(name).front().hash, a.sources(name).front().hash);
  }
  QCOMPARE(b.annotations("c1").size(), std::size_t(1));
  QCOMPARE(b.annotations("c1").front().kind, std::string("error_burst"));
  QCOMPARE(b.runs("c2").front().kpisJson, std::string("{\"fp\":0.01}"));
  // The copied sources still deduplicate: the file is known in the team library.
  const auto again = pg.importFile(path("c1.jsonl"), formats::Format::Jsonl, {}, "c1");
  QVERIFY(again.alreadyImported);
  // Removing an annotation (the console's Delete) removes one of equal rows, on PostgreSQL as
  // on SQLite, and says when there is none.
  for (library::Library* lib : {&pg, &b}) {
    const library::Annotation x{"c1-gpu-1", 1764480001000000, 1764480002000000, "marked bad"};
    lib->annotate("c1", x);
    lib->annotate("c1", x);
    const std::size_t n = lib->annotations("c1").size();
    QVERIFY(lib->removeAnnotation("c1", x));
    QCOMPARE(lib->annotations("c1").size(), n - 1);
    QVERIFY(lib->removeAnnotation("c1", x));
    QVERIFY(!lib->removeAnnotation("c1", x));
    QCOMPARE(lib->annotations("c1").size(), n - 2);
  }
}

// Two imports into one incident, the same file twice more, a live recording and the two shards
// of a sweep, all at once from separate processes: every call lands once, the repeated file
// once, the shards' merge is the one-machine sweep.
void TstLibraryPostgres::concurrentWritersLoseAndDoubleNothing() {
  const QString url = freshDatabase("team");
  QCOMPARE(cli({"library", "copy", tmp_.filePath("none.db"), url}).code, 2);  // FROM must exist
  spit(path("w1.jsonl"), callsFrom(20000, 1764480000000000, "w1-"));
  spit(path("w2.jsonl"), callsFrom(20000, 1764490000000000, "w2-"));
  spit(path("live.jsonl"), callsFrom(12000, 1764500000000000, "live-"));
  const QList<QStringList> jobs = {
      {"import", tmp_.filePath("w1.jsonl"), "--incident", "team", "--library", url},
      {"import", tmp_.filePath("w2.jsonl"), "--incident", "team", "--library", url},
      {"import", tmp_.filePath("w1.jsonl"), "--incident", "team", "--library", url},
      {"import", tmp_.filePath("w2.jsonl"), "--incident", "team", "--library", url},
      {"library", "record", tmp_.filePath("live.jsonl"), "--recording", "edge", "--library", url},
  };
  // And the two shards of a sweep writing their rows into the same library meanwhile.
  const QStringList space{
      "--param", "trip.slow_rate=0.2:0.8:0.2", "--param", "trip.sustain=0s,5s", "--threads", "1"};
  const QList<QStringList> shards = {
      QStringList{"sweep", "--shard", "0/2", "--library", url} + space,
      QStringList{"sweep", "--shard", "1/2", "--library", url} + space,
  };
  const QList<QStringList> all = jobs + shards;
  std::vector<std::unique_ptr<QProcess>> procs;
  for (const QStringList& args : all) {
    auto p = std::make_unique<QProcess>();
    p->setProcessEnvironment(env_);
    p->start(kCli, args);
    procs.push_back(std::move(p));
  }
  int imported = 0, already = 0;
  QString key;
  for (std::size_t i = 0; i < procs.size(); ++i) {
    QProcess& p = *procs[i];
    QVERIFY2(p.waitForFinished(180000), qPrintable(all[int(i)].join(' ')));
    const QByteArray out = p.readAllStandardOutput(), err = p.readAllStandardError();
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0,
             (all[int(i)].join(' ').toUtf8() + ": " + err).constData());
    imported += out.contains("20000 records into incident 'team'");
    already += out.contains("already imported into incident 'team'");
    if (out.startsWith("sweep ")) key = QString::fromUtf8(out).section(' ', 1, 1).chopped(1);
  }
  QCOMPARE(imported, 2);
  QCOMPARE(already, 2);
  library::Library lib(url.toStdString(), {.mustExist = true});
  const auto team = lib.requireIncident("team");
  QCOMPARE(team.records, std::uint64_t(40000));
  QCOMPARE(team.instances, std::uint64_t(16));
  QCOMPARE(lib.sources("team").size(), std::size_t(2));
  const std::string both = spillway::testing::canonicalize(path("w1.jsonl")) +
                           spillway::testing::canonicalize(path("w2.jsonl"));
  QCOMPARE(sortedLines(QByteArray::fromStdString(
               spillway::testing::exportOf(lib, "team", tmp_.path().toStdString()))),
           sortedLines(QByteArray::fromStdString(both)));
  QCOMPARE(lib.requireRecording("edge").calls, std::uint64_t(12000));
  QCOMPARE(lib.sweepShards(key.toStdString()).size(), std::size_t(2));
  const Run merged = cli({"sweep", "merge", "--library", url, "--sweep", key, "--top", "50"});
  QVERIFY2(merged.code == 0, merged.err.constData());
  QCOMPARE(merged.out, cli(QStringList{"sweep", "--top", "50"} + space).out);
}

// replay --incident, sweep, export --validate and the console read the team library exactly as
// they read a file.
void TstLibraryPostgres::replayAndSweepReadTheTeamLibrary() {
  const QString url = freshDatabase("replays");
  const QString sqlite = tmp_.filePath("replays.db");
  const QString tiny = TEST_DATA_DIR "/tiny.jsonl", policy = TEST_DATA_DIR "/tiny-policy.yaml";
  for (const QString& lib : {sqlite, url}) {
    QCOMPARE(cli({"import", tiny, "--library", lib}).code, 0);
    QCOMPARE(cli({"library", "annotate", "tiny", "--instance", "gpu-2", "--from", "1764480000000",
                  "--to", "2025-11-30T05:20:17Z", "--kind", "error_burst", "--library", lib})
                 .code,
             0);
  }
  const Run a = cli({"replay", "--incident", "tiny", "--library", sqlite, "--policy", policy});
  const Run b = cli({"replay", "--incident", "tiny", "--library", url, "--policy", policy});
  QVERIFY2(b.code == 0, b.err.constData());
  QCOMPARE(b.out, a.out);
  const QStringList sweep = {
      "sweep", "--incident", "tiny", "--policy", policy, "--param", "trip.error_rate=0.1:0.5:0.1",
      "--top", "5"};
  const Run sa = cli(sweep + QStringList{"--library", sqlite});
  const Run sb = cli(sweep + QStringList{"--library", url});
  QVERIFY2(sb.code == 0, sb.err.constData());
  QCOMPARE(sb.out, sa.out);
  const QStringList calibrate = {"calibrate",
                                 "--incident",
                                 "tiny",
                                 "--policy",
                                 policy,
                                 "--param",
                                 "trip.error_rate=0.1:0.5:0.1",
                                 "--target",
                                 "fp<=0.5"};
  const Run ca = cli(calibrate + QStringList{"--library", sqlite});
  const Run cb = cli(calibrate + QStringList{"--library", url});
  QCOMPARE(cb.code, ca.code);
  QVERIFY(!cb.out.isEmpty());
  QCOMPARE(cb.out, ca.out);

  // export --validate replays the library's incident: the same configuration as from the file.
  const QStringList exportArgs{"export", "--target", "envoy", "--validate"};
  const Run ef = cli(exportArgs + QStringList{tiny});
  const Run el = cli(exportArgs + QStringList{"tiny", "--library", url});
  QVERIFY2(el.code == 0, el.err.constData());
  QCOMPARE(el.out, ef.out);
  QVERIFY2(el.err.contains("tiny"), el.err.constData());

  // The console opens the team library and replays the incident from it (offscreen, its own
  // settings); a URL with a password does not open.
  QProcessEnvironment gui = env_;
  gui.insert("QT_QPA_PLATFORM", "offscreen");
  gui.insert("HOME", tmp_.filePath("home"));
  gui.insert("XDG_CONFIG_HOME", tmp_.filePath("home/.config"));
  const QString shot = tmp_.filePath("console.png");
  const Run c = runWith(kConsole, {"--library", url, "--incident", "tiny", "--screenshot", shot},
                        gui, {}, {}, 120000);
  QVERIFY2(c.code == 0, c.err.constData());
  QVERIFY(QFileInfo(shot).size() > 0);
  QString withPassword = url;
  withPassword.replace("spillway@", "spillway:pw@");
  const Run bad =
      runWith(kConsole, {"--library", withPassword, "--screenshot", shot}, gui, {}, {}, 120000);
  QCOMPARE(bad.code, 2);
  QVERIFY2(bad.err.contains("~/.pgpass"), bad.err.constData());
}

// A password on the command line is refused (and not echoed); without the pgpass file the
// server's scram check refuses the connection: exit 2 with the reason, never a hang.
void TstLibraryPostgres::credentialsNeverOnTheCommandLine() {
  Run r = cli({"library", "list", "--library",
               "postgresql://spillway:hunter2@127.0.0.1:" + port_ + "/spillway"});
  QCOMPARE(r.code, 2);
  QVERIFY2(r.err.contains("~/.pgpass"), r.err.constData());
  QVERIFY(!r.err.contains("hunter2"));
  QProcessEnvironment bare = env_;
  bare.insert("PGPASSFILE", tmp_.filePath("no-such-pgpass"));
  bare.remove("PGPASSWORD");
  r = runWith(
      kCli,
      {"library", "list", "--library", "postgresql://spillway@127.0.0.1:" + port_ + "/spillway"},
      bare, {}, {}, 60000);
  QCOMPARE(r.code, 2);
  QVERIFY2(r.err.contains("cannot connect"), r.err.constData());
  // TLS options pass through to libpq: this server has no TLS, so requiring it fails to connect.
  r = cli({"library", "list", "--library",
           "postgresql://spillway@127.0.0.1:" + port_ + "/spillway?sslmode=require"});
  QCOMPARE(r.code, 2);
  QVERIFY2(r.err.contains("SSL"), r.err.constData());
  // A read-only open refuses writes.
  const std::string url = ("postgresql://spillway@127.0.0.1:" + port_ + "/spillway").toStdString();
  { library::Library create(url); }
  library::Library ro(url, {.mustExist = true, .readOnly = true});
  QVERIFY_THROWS_EXCEPTION(InputError, ro.annotate("x", {}));
}

QTEST_GUILESS_MAIN(TstLibraryPostgres)
#include "tst_library_postgres.moc"
