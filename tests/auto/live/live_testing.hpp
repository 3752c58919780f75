#pragma once
// Helpers the live tests share: files, a free loopback port, stopping a child process (a real
// nginx or Prometheus, or spillway-cli itself).
#include <QFile>
#include <QHostAddress>
#include <QProcess>
#include <QTcpServer>

#include <memory>
#include <vector>

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

// A first port of `n` consecutive ones free right now on 127.0.0.1 (a farm's base port).
inline quint16 freePorts(int n) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    const quint16 base = freePort();
    if (!base || base + n > 65535) continue;
    std::vector<std::unique_ptr<QTcpServer>> held;
    bool all = true;
    for (int i = 0; i < n && all; ++i) {
      held.push_back(std::make_unique<QTcpServer>());
      all = held.back()->listen(QHostAddress::LocalHost, static_cast<quint16>(base + i));
    }
    if (all) return base;
  }
  return 0;
}

// A healthy minute of chat-1 … chat-3 (model chat), one call a second, canonical JSONL: what an
// export validated on it names its servers after.
inline QByteArray threeInstanceTrace() {
  QByteArray t;
  for (int i = 0; i < 60; ++i)
    t += QByteArray(R"({"ts":)") + QByteArray::number(1764480000000.0 + i * 1000.0, 'f', 0) +
         R"(,"instance":"chat-)" + QByteArray::number(i % 3 + 1) +
         R"(","model":"chat","latency_ms":25,"status":200,"outcome":"ok"})" + "\n";
  return t;
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
