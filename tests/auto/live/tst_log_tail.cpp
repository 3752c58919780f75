// The access-log tail: appended lines, partial writes held until their newline, rotation by
// rename + new file and by copytruncate, a file that appears late, overlong lines dropped.
// poll() is called directly where the order matters; one test runs on the timer + watcher.
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "spillway/live/log_tail.hpp"

using spillway::live::LogTail;
using spillway::live::TailOptions;

namespace {

void append(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::Append));
  QCOMPARE(f.write(bytes), bytes.size());
}

struct Collector {
  QStringList lines;
  LogTail::LineFn fn() {
    return [this](std::string_view l) { lines << QString::fromUtf8(l.data(), l.size()); };
  }
};

}  // namespace

class TstLogTail : public QObject {
  Q_OBJECT
 private slots:
  void appendedLinesOnly() {
    QTemporaryDir dir;
    const QString log = dir.filePath("access.log");
    append(log, "old 1\nold 2\n");
    Collector c;
    LogTail t(log, TailOptions{}, c.fn());
    t.start();
    t.poll();
    QVERIFY(c.lines.isEmpty());  // like tail -F -n 0
    append(log, "new 1\nnew 2\r\n");
    t.poll();
    QCOMPARE(c.lines, (QStringList{"new 1", "new 2"}));
  }

  void fromStart() {
    QTemporaryDir dir;
    const QString log = dir.filePath("access.log");
    append(log, "a\nb\n");
    Collector c;
    TailOptions o;
    o.fromStart = true;
    LogTail t(log, o, c.fn());
    t.start();
    QCOMPARE(c.lines, (QStringList{"a", "b"}));
  }

  void partialLine() {
    QTemporaryDir dir;
    const QString log = dir.filePath("access.log");
    append(log, "");
    Collector c;
    LogTail t(log, TailOptions{}, c.fn());
    t.start();
    append(log, "{\"msec\":\"1.0\",\"half");
    t.poll();
    QVERIFY(c.lines.isEmpty());
    append(log, "\":1}\n{\"next");
    t.poll();
    QCOMPARE(c.lines, (QStringList{"{\"msec\":\"1.0\",\"half\":1}"}));
    append(log, "\":2}\n");
    t.poll();
    QCOMPARE(c.lines.size(), 2);
    QCOMPARE(c.lines[1], QString("{\"next\":2}"));
  }

  void rotation_data() {
    QTest::addColumn<bool>("copytruncate");
    QTest::newRow("rename + new file") << false;
    QTest::newRow("copytruncate") << true;
  }
  void rotation() {
    QFETCH(bool, copytruncate);
    QTemporaryDir dir;
    const QString log = dir.filePath("access.log");
    append(log, "");
    Collector c;
    LogTail t(log, TailOptions{}, c.fn());
    QSignalSpy rotated(&t, &LogTail::rotated);
    QSignalSpy truncated(&t, &LogTail::truncated);
    t.start();
    append(log, "before 1\nbefore 2\n");
    t.poll();
    if (copytruncate) {
      QVERIFY(QFile::copy(log, log + ".1"));
      QFile f(log);
      QVERIFY(f.resize(0));
      append(log, "after\n");  // shorter than what was read: the tail starts over
    } else {
      append(log, "late to the old file\n");  // written before the tail noticed the rename
      QVERIFY(QFile::rename(log, log + ".1"));
      append(log + ".1", "still the old file\n");
      append(log, "after\n");
    }
    t.poll();
    QStringList want{"before 1", "before 2"};
    if (!copytruncate)
      want << "late to the old file"
           << "still the old file";
    want << "after";
    QCOMPARE(c.lines, want);
    QCOMPARE(rotated.count(), copytruncate ? 0 : 1);
    QCOMPARE(truncated.count(), copytruncate ? 1 : 0);
    append(log, "more\n");
    t.poll();
    QCOMPARE(c.lines.last(), QString("more"));
  }

  void fileAppearsLater() {
    QTemporaryDir dir;
    const QString log = dir.filePath("later.log");
    Collector c;
    LogTail t(log, TailOptions{}, c.fn());
    t.start();
    t.poll();
    append(log, "first\n");  // a file created after the start is read from its beginning
    t.poll();
    QCOMPARE(c.lines, QStringList{"first"});
  }

  void overlongLineDropped() {
    QTemporaryDir dir;
    const QString log = dir.filePath("access.log");
    append(log, "");
    Collector c;
    TailOptions o;
    o.maxLineBytes = 100;
    LogTail t(log, o, c.fn());
    t.start();
    append(log, QByteArray(150, 'x') + "\nok\n" + QByteArray(60, 'y'));
    t.poll();
    append(log, QByteArray(60, 'y') + "\nok2\n");
    t.poll();
    QCOMPARE(c.lines, (QStringList{"ok", "ok2"}));
    QCOMPARE(t.droppedLongLines(), 2u);
  }

  void followsOnItsOwn() {
    // The timer (and the watcher's hint) alone: lines arrive and a rotation is followed.
    QTemporaryDir dir;
    const QString log = dir.filePath("access.log");
    append(log, "");
    Collector c;
    TailOptions o;
    o.pollMs = 50;
    LogTail t(log, o, c.fn());
    QSignalSpy rotated(&t, &LogTail::rotated);
    t.start();
    append(log, "one\n");
    QTRY_COMPARE_WITH_TIMEOUT(c.lines.size(), 1, 5000);
    QVERIFY(QFile::rename(log, log + ".1"));
    append(log, "two\n");
    QVERIFY(rotated.wait(5000) || rotated.count() == 1);
    QTRY_COMPARE_WITH_TIMEOUT(c.lines, (QStringList{"one", "two"}), 5000);
  }
};

QTEST_GUILESS_MAIN(TstLogTail)
#include "tst_log_tail.moc"
