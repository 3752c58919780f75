#pragma once
// Helpers the live tests share: files, a free loopback port, stopping a child process (a real
// nginx or Prometheus, or spillway-cli itself).
#include <QFile>
#include <QHostAddress>
#include <QProcess>
#include <QTcpServer>

namespace live_testing {

// A port free right now on 127.0.0.1 (released for the child to take).
inline quint16 freePort() {
  QTcpServer s;
  return s.listen(QHostAddress::LocalHost, 0) ? s.serverPort() : 0;
}

inline bool writeFile(const QString& path, const QByteArray& text) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(text) == text.size();
}

inline QByteArray readFile(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Stops a child process and waits for it (SIGTERM, then SIGKILL).
inline void stop(QProcess& p) {
  if (p.state() == QProcess::NotRunning) return;
  p.terminate();
  if (!p.waitForFinished(5000)) {
    p.kill();
    p.waitForFinished(2000);
  }
}

}  // namespace live_testing
