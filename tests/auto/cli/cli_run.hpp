#pragma once
// Runs a real binary for the CLI suites and captures what it printed: the tests drive
// spillway-cli exactly as a user (or CI) does.
#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>

struct Run {
  int code = -1;  // exit code; -2 = crashed, -1 = did not run
  QByteArray out;
  QByteArray err;
};

inline Run run(const QString& program, const QStringList& args, const QByteArray& input = {}) {
  QProcess p;
  p.setProgram(program);
  p.setArguments(args);
  p.start();
  Run r;
  if (!p.waitForStarted(10000)) {
    r.err = "could not start " + program.toUtf8();
    return r;
  }
  if (!input.isEmpty()) p.write(input);
  p.closeWriteChannel();
  if (!p.waitForFinished(60000)) {
    p.kill();
    p.waitForFinished();
    r.err = "timed out";
    return r;
  }
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  return r;
}
