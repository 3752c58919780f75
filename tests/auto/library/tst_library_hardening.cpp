// The incident library against hostile conditions (issue 17): a library in a directory this
// user cannot write still lists (it opens read-only, and says so only when a write is tried);
// a damaged file takes no more writes (quick_check before the first one); a failed export
// leaves no partial file and an earlier export intact (temporary file + rename).
//
// Read-only directories: the suite may run as root, for whom permission bits do not bite, so
// the spillway-cli runs there drop to nobody (65534) in the child before exec.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error_of.hpp"
#include "library_testing.hpp"
#include "spillway/formats/source.hpp"
#include "spillway/input_error.hpp"
#include "spillway/library/library.hpp"

using namespace spillway;
using spillway::testing::errorOf;
using namespace spillway::library;
using spillway::testing::slurp;
using spillway::testing::spit;

namespace {

const QString kCli = QStringLiteral(SPILLWAY_CLI);

void importSynthetic(Library& lib, const std::string& incident, std::size_t calls) {
  const std::string text = spillway::testing::synthetic(calls);
  auto src = formats::sourceFromMemory(formats::Format::Jsonl, "synthetic", text, {});
  lib.importSource(*src, incident, "jsonl", "");
}

// A library at `path` with incidents "inc" (20000 calls) and "other" (100), then the first
// ("MIN") or last ("MAX") record block of "inc" deleted behind the library's back.
bool withALostBlock(const std::string& path, const char* which) {
  {
    Library lib(path);
    importSynthetic(lib, "inc", 20000);
    importSynthetic(lib, "other", 100);
  }
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return false;
  const std::string edit = std::string("DELETE FROM blocks WHERE rowid = (SELECT ") + which +
                           "(b.rowid) FROM blocks b JOIN incidents i ON b.incident_id = i.id "
                           "WHERE i.name = 'inc');";
  const bool ok = sqlite3_exec(db, edit.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK &&
                  sqlite3_changes(db) == 1;
  sqlite3_close(db);
  return ok;
}

struct Run {
  int code = -1;
  QByteArray out, err;
};

// spillway-cli as an unprivileged user: as root, the child drops to nobody before exec.
Run runAsUser(const QStringList& args) {
  QProcess p;
  p.setProgram(kCli);
  p.setArguments(args);
  if (::geteuid() == 0) {
    p.setChildProcessModifier([] {
      const gid_t nobody = 65534;
      if (::setgroups(0, nullptr) != 0 || ::setresgid(nobody, nobody, nobody) != 0 ||
          ::setresuid(nobody, nobody, nobody) != 0)
        ::_exit(126);
    });
  }
  p.start();
  Run r;
  if (!p.waitForStarted(10000) || !p.waitForFinished(60000)) return r;
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  return r;
}

}  // namespace

class TstLibraryHardening : public QObject {
  Q_OBJECT

 private slots:
  void readOnlyOpenReadsAndRefusesWrites() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("lib.db").toStdString();
    {
      Library lib(path);
      importSynthetic(lib, "inc", 5000);
    }
    const std::string before = slurp(path);
    {
      Library lib(path, OpenOptions{.mustExist = true, .readOnly = true});
      QCOMPARE(lib.readOnlyReason(), std::string("opened read-only"));
      QCOMPARE(lib.incidents().size(), std::size_t{1});
      QCOMPARE(lib.requireIncident("inc").records, std::uint64_t{5000});
      const QString expected = QString::fromStdString(path) +
                               ": cannot import: the library is read-only here (opened read-only)";
      QCOMPARE(errorOf([&] { importSynthetic(lib, "other", 10); }), expected);
      QVERIFY(errorOf([&] { lib.annotate("inc", Annotation{}); }).contains("cannot annotate"));
      QVERIFY(errorOf([&] { lib.deleteIncident("inc"); }).contains("cannot delete an incident"));
      QVERIFY(errorOf([&] { lib.saveRun("inc", "", "", ""); }).contains("cannot save a run"));
    }
    QVERIFY(slurp(path) == before);  // not a byte changed
  }

  // issue 17: in a read-only directory even `library list` failed ("attempt to write a
  // readonly database"): SQLite could not create the -shm file of a WAL library.
  void readOnlyDirectoryStillLists() {
    QTemporaryDir dir;
    const QString lib = dir.filePath("lib.db");
    {
      Library l(lib.toStdString());
      importSynthetic(l, "inc", 3000);
    }
    // The file itself stays writable: only the directory is not (no -wal, no -shm).
    QVERIFY(::chmod(lib.toLocal8Bit().constData(), 0666) == 0);
    QVERIFY(::chmod(dir.path().toLocal8Bit().constData(), 0555) == 0);
    const Run list = runAsUser({"library", "list", "--library", lib});
    const Run show = runAsUser({"library", "show", "inc", "--library", lib});
    const Run import =
        runAsUser({"import", "--library", lib, QStringLiteral(TEST_DATA_DIR) + "/tiny.jsonl"});
    const QStringList left = QDir(dir.path()).entryList(QDir::Files | QDir::Hidden);
    QVERIFY(::chmod(dir.path().toLocal8Bit().constData(), 0700) == 0);

    QVERIFY2(list.code == 0, list.err.constData());
    QVERIFY2(list.out.contains("inc"), list.out.constData());
    QVERIFY2(list.err.isEmpty(), list.err.constData());  // reading says nothing of read-only
    QVERIFY2(show.code == 0, show.err.constData());
    QVERIFY2(show.out.contains("3000"), show.out.constData());
    QCOMPARE(import.code, 2);
    QVERIFY2(import.err.startsWith((lib +
                                    ": cannot import: the library is read-only here (the "
                                    "directory " +
                                    dir.path() + " is not writable: Permission denied)")
                                       .toUtf8()),
             import.err.constData());
    QCOMPARE(left, QStringList{"lib.db"});
    Library l(lib.toStdString(), OpenOptions{.mustExist = true});
    QCOMPARE(l.incidents().size(), std::size_t{1});  // the import added nothing
  }

  // issue 17: a damaged file still accepted imports.
  void damagedLibraryRefusesWrites() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("lib.db").toStdString();
    {
      Library lib(path);
      importSynthetic(lib, "inc", 40000);
    }
    // Damage the header of a b-tree leaf page past the first (page 1, the schema, stays
    // whole, so the library still opens): its cell count and content offset become garbage.
    std::string bytes = slurp(path);
    const std::size_t page = 4096;
    QVERIFY(bytes.size() > 8 * page);
    std::size_t damaged = 0;
    for (std::size_t p = bytes.size() / page - 1; p >= 2 && !damaged; --p) {
      const auto type = static_cast<unsigned char>(bytes[p * page]);
      if (type == 0x0d || type == 0x0a) {
        for (std::size_t i = 1; i < 8; ++i) bytes[p * page + i] = '\xff';
        damaged = p;
      }
    }
    QVERIFY(damaged);
    spit(path, bytes);

    Library lib(path);  // opens: reads of what is intact still work
    QVERIFY(lib.readOnlyReason().empty());
    const QString err = errorOf([&] { importSynthetic(lib, "more", 100); });
    QVERIFY2(err.startsWith(QString::fromStdString(path) +
                            ": cannot import: the library is damaged (quick_check: "),
             qPrintable(err));
    QVERIFY2(err.contains("it takes no more writes"), qPrintable(err));
    QVERIFY(errorOf([&] { lib.setNotes("inc", "t", "n"); }).contains("cannot set notes"));
    QVERIFY(slurp(path) == bytes);  // nothing written
  }

  // A library whose tables were edited behind its back: blocks gone from an incident read as a
  // shorter incident (`library export` wrote "0 lines", exit 0), and a negative count read as
  // 18446744073709551611. Both are damage, named.
  void missingBlocksAndNegativeCountsAreDamage() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("lib.db").toStdString();
    QVERIFY(withALostBlock(path, "MAX"));
    Library lib(path, OpenOptions{.mustExist = true});
    const QString err = errorOf([&] {
      auto src = lib.open("inc");
      CallRecord r;
      while (src->next(r)) {
      }
    });
    QVERIFY2(QRegularExpression("^.*lib\\.db: the library is damaged: incident 'inc' holds "
                                "\\d+ of its 20000 records$")
                 .match(err)
                 .hasMatch(),
             qPrintable(err));
    {
      auto whole = lib.open("other");  // the other incident is whole
      CallRecord r;
      std::size_t n = 0;
      while (whole->next(r)) ++n;
      QCOMPARE(n, std::size_t{100});
    }
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db, "UPDATE incidents SET records = -5 WHERE name = 'other';", nullptr,
                          nullptr, nullptr),
             SQLITE_OK);
    sqlite3_close(db);
    Library again(path, OpenOptions{.mustExist = true});
    QVERIFY2(errorOf([&] {
               again.incidents();
             }).endsWith("the library is damaged: incident 'other' has a negative record count"),
             qPrintable(errorOf([&] { again.incidents(); })));
  }

  // `library copy` copied rows byte for byte: an incident with a lost block went across and
  // the team library held the damage. Now it is read back first, left out and named.
  void damagedIncidentIsNotCopied() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("lib.db").toStdString();
    QVERIFY(withALostBlock(path, "MIN"));
    const QString target = dir.filePath("team.db");
    QProcess p;
    p.start(kCli, {"library", "copy", QString::fromStdString(path), target});
    QVERIFY(p.waitForFinished(60000));
    const QString err = p.readAllStandardError();
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(err.contains(QRegularExpression(
                 "^not copied: incident 'inc' does not read whole: .*lib\\.db: the library is "
                 "damaged: incident 'inc' holds \\d+ of its 20000 records\n$")),
             qPrintable(err));
    QVERIFY2(p.readAllStandardOutput().startsWith("copied 1 incident(s)"), "the whole one went");
    Library team(target.toStdString(), OpenOptions{.mustExist = true});
    QVERIFY(!team.incident("inc"));
    QVERIFY(team.incident("other"));
    // Nothing accepted is lost: a second run copies nothing new and names the damage again.
    p.start(kCli, {"library", "copy", QString::fromStdString(path), target, "--json"});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    const QByteArray out = p.readAllStandardOutput();
    QVERIFY2(out.startsWith("{\"copied\":[],\"damaged\":[{\"error\":\"") &&
                 out.contains("\"name\":\"inc\"}],\"present\":[\"other\"]}"),
             out.constData());
  }

  // `library export --out /dev/null` renamed its temporary over the device: /dev/null became a
  // regular file for the whole machine. A device or pipe is written as it is (a FIFO here, read
  // back; its 100 lines fit the pipe's buffer).
  void exportToAPipeLeavesThePipe() {
    QTemporaryDir dir;
    Library lib(dir.filePath("lib.db").toStdString());
    importSynthetic(lib, "small", 100);
    const std::string fifo = dir.filePath("pipe").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    QVERIFY(reader >= 0);
    QCOMPARE(lib.exportJsonlFile("small", fifo), std::uint64_t{100});
    struct stat st {};
    QCOMPARE(::stat(fifo.c_str(), &st), 0);
    QVERIFY2(S_ISFIFO(st.st_mode), "the pipe was replaced by a file");
    std::string got;
    char buf[4096];
    for (ssize_t n; (n = ::read(reader, buf, sizeof buf)) > 0;)
      got.append(buf, static_cast<std::size_t>(n));
    ::close(reader);
    QCOMPARE(std::count(got.begin(), got.end(), '\n'), 100);
  }

  // A fault the incident cannot hold was stored and scored as missed (TTD ∞ in every sweep):
  // an instance it never saw, an empty or reversed span, a span before its first call.
  void impossibleAnnotationsAreRefused_data() {
    QTest::addColumn<QString>("instance");
    QTest::addColumn<qint64>("from");  // µs after the incident's first call
    QTest::addColumn<qint64>("to");
    QTest::addColumn<QString>("error");  // empty: stored
    QTest::newRow("a real one") << "gpu-3" << qint64(10'000) << qint64(50'000) << "";
    QTest::newRow("an instance it never saw") << "gpu-9" << qint64(10'000) << qint64(50'000)
                                              << "instance: incident 'inc' has no instance 'gpu-9'";
    QTest::newRow("zero length") << "gpu-3" << qint64(10'000) << qint64(10'000)
                                 << "to: the fault must end after it starts";
    QTest::newRow("reversed") << "gpu-3" << qint64(50'000) << qint64(10'000)
                              << "to: the fault must end after it starts";
    QTest::newRow("in 1970") << "gpu-3" << qint64(-1764480000000000) << qint64(-1764479999000000)
                             << "from: the fault lies outside incident 'inc''s calls";
  }
  void impossibleAnnotationsAreRefused() {
    QFETCH(QString, instance);
    QFETCH(qint64, from);
    QFETCH(qint64, to);
    QFETCH(QString, error);
    QTemporaryDir dir;
    Library lib(dir.filePath("lib.db").toStdString());
    importSynthetic(lib, "inc", 1000);
    const Micros t0 = lib.requireIncident("inc").tStart;
    const Annotation a{instance.toStdString(), t0 + from, t0 + to, "latency_drift"};
    const QString err = errorOf([&] { lib.annotate("inc", a); });
    if (error.isEmpty()) {
      QVERIFY2(err.isEmpty(), qPrintable(err));
      QCOMPARE(lib.annotations("inc").size(), std::size_t{1});
    } else {
      QVERIFY2(err.contains(error), qPrintable(err));
      QVERIFY(lib.annotations("inc").empty());
    }
  }

  // issue 17: a failed `library export` left a partial file.
  void failedExportLeavesNoPartialFile() {
    QTemporaryDir dir;
    Library lib(dir.filePath("lib.db").toStdString());
    importSynthetic(lib, "inc", 20000);
    const std::string target = dir.filePath("inc.jsonl").toStdString();
    spit(target, "an earlier export\n");

    // The disk fills up after 64 KiB (RLIMIT_FSIZE: EFBIG, root included) — 20000 calls are
    // about 2 MB of JSONL.
    rlimit old{};
    QVERIFY(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    rlimit small = old;
    small.rlim_cur = 64 * 1024;
    const auto oldHandler = ::signal(SIGXFSZ, SIG_IGN);
    QVERIFY(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    const QString err = errorOf([&] { lib.exportJsonlFile("inc", target); });
    ::setrlimit(RLIMIT_FSIZE, &old);
    ::signal(SIGXFSZ, oldHandler);

    QVERIFY2(err.startsWith(QString::fromStdString(target) + ": cannot write: "), qPrintable(err));
    QCOMPARE(slurp(target), std::string("an earlier export\n"));
    // No temporary left behind (the library's own -wal and -shm are there while it is open).
    QCOMPARE(QDir(dir.path()).entryList({"*.tmp-*"}, QDir::Files | QDir::Hidden), QStringList());
    QVERIFY(QDir(dir.path()).entryList({"*jsonl*"}, QDir::Files | QDir::Hidden) ==
            QStringList{"inc.jsonl"});

    // Without the limit the same export completes, equal to a direct one, mode 0666 - umask.
    QCOMPARE(lib.exportJsonlFile("inc", target), std::uint64_t{20000});
    QVERIFY(slurp(target) == spillway::testing::exportOf(lib, "inc", dir.path().toStdString()));
    const mode_t mask = ::umask(0);
    ::umask(mask);
    struct stat st {};
    QVERIFY(::stat(target.c_str(), &st) == 0);
    QCOMPARE(st.st_mode & 0777, 0666 & ~mask);
  }

  void exportIntoAMissingDirectoryFailsCleanly() {
    QTemporaryDir dir;
    Library lib(dir.filePath("lib.db").toStdString());
    importSynthetic(lib, "inc", 10);
    const std::string target = dir.filePath("no/such/dir/inc.jsonl").toStdString();
    const QString err = errorOf([&] { lib.exportJsonlFile("inc", target); });
    QVERIFY2(err.startsWith(QString::fromStdString(target) + ": cannot write: "), qPrintable(err));
    QVERIFY(!QFileInfo::exists(QString::fromStdString(target)));
  }
};

QTEST_GUILESS_MAIN(TstLibraryHardening)
#include "tst_library_hardening.moc"
