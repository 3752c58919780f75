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

// `program` with `env` in `cwd` (empty: the test's own), its stdin `input`, at most `timeoutMs`.
inline Run runWith(const QString& program, const QStringList& args, const QProcessEnvironment& env,
                   const QString& cwd = {}, const QByteArray& input = {}, int timeoutMs = 60000) {
  QProcess p;
  p.setProgram(program);
  p.setArguments(args);
  p.setProcessEnvironment(env);
  if (!cwd.isEmpty()) p.setWorkingDirectory(cwd);
  p.start();
  Run r;
  if (!p.waitForStarted(10000)) {
    r.err = "could not start " + program.toUtf8();
    return r;
  }
  if (!input.isEmpty()) p.write(input);
  p.closeWriteChannel();
  if (!p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished();
    r.err = "timed out: " + program.toUtf8() + " " + args.join(' ').toUtf8();
    return r;
  }
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  return r;
}

inline Run run(const QString& program, const QStringList& args, const QByteArray& input = {}) {
  return runWith(program, args, QProcessEnvironment::systemEnvironment(), {}, input);
}
