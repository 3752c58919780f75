// bench_prometheus_pull: how long a Prometheus poll takes to give up on a server that accepts
// the connection and never answers (the figure tst_prometheus_pull's noAnswerInTime used to
// bound in the test, where a wall-clock bound is flaky under ASan or on a busy machine).
//
//   bench_prometheus_pull [POLLS=20] [TIMEOUT_MS=300]
//
// A loopback QTcpServer accepts and reads every request and never writes; a PrometheusPuller
// with the four roles and `timeoutMs` = TIMEOUT_MS polls it POLLS times, one poll at a time.
// Reported: poll started → `polled` (the poll over, its failure counted), median and max, and
// the overshoot past the timeout. Exits 1 when a poll does not fail as a timeout.
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "spillway/live/prometheus_pull.hpp"

using namespace spillway;

namespace {

double at(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  const int polls = argc > 1 ? std::atoi(argv[1]) : 20;
  const int timeoutMs = argc > 2 ? std::atoi(argv[2]) : 300;

  QTcpServer hung;  // reads, never answers
  QObject::connect(&hung, &QTcpServer::newConnection, [&hung] {
    while (QTcpSocket* s = hung.nextPendingConnection()) {
      QObject::connect(s, &QTcpSocket::readyRead, s, [s] { s->readAll(); });
      QObject::connect(s, &QTcpSocket::disconnected, s, &QObject::deleteLater);
    }
  });
  if (!hung.listen(QHostAddress::LocalHost, 0)) {
    std::fprintf(stderr, "bench_prometheus_pull: cannot listen\n");
    return 2;
  }

  live::PullerOptions o;
  o.server = QUrl(QString("http://127.0.0.1:%1/").arg(hung.serverPort()));
  o.queries = {{formats::PromRole::Calls, "CALLS"},
               {formats::PromRole::Failures, "FAILS"},
               {formats::PromRole::Slow, "SLOW"},
               {formats::PromRole::P99, "P99"}};
  o.step = seconds(5);
  o.delay = seconds(2);
  o.timeoutMs = timeoutMs;
  live::PrometheusPuller puller(o, [](const live::PromSample&) {});
  const Micros now = seconds(1764480000) + seconds(12);
  puller.setClock([now] { return now; });
  QStringList failures;
  QObject::connect(&puller, &live::PrometheusPuller::failed,
                   [&failures](const QString& m) { failures << m; });
  QSignalSpy done(&puller, &live::PrometheusPuller::polled);

  std::vector<double> ms;
  for (int i = 0; i < polls; ++i) {
    failures.clear();
    done.clear();
    QElapsedTimer t;
    t.start();
    puller.pollNow();
    if (!done.wait(timeoutMs + 30000)) {
      std::fprintf(stderr, "bench_prometheus_pull: poll %d never ended\n", i);
      return 1;
    }
    ms.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    // Each poll failed (a repeated message is reported once: the first one is checked).
    const bool named = i > 0 || failures.join('\n').contains("no answer within");
    if (puller.stats().failedPolls != static_cast<std::uint64_t>(i + 1) || !named) {
      std::fprintf(stderr, "bench_prometheus_pull: poll %d did not fail as a timeout: %s\n", i,
                   qPrintable(failures.join('\n')));
      return 1;
    }
  }
  std::printf(
      "bench_prometheus_pull: %d polls of 4 queries, timeout %d ms, a server that never "
      "answers\n",
      polls, timeoutMs);
  std::printf(
      "  poll -> given up: median %.1f ms, max %.1f ms (overshoot past the timeout: "
      "median %.1f ms, max %.1f ms)\n",
      at(ms, 0.5), at(ms, 1.0), at(ms, 0.5) - timeoutMs, at(ms, 1.0) - timeoutMs);
  return 0;
}
