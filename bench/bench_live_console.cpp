// bench_live_console: the console in Live mode under OTLP load — span received → tiles
// repainted, and how responsive the UI thread stays meanwhile.
//
//   QT_QPA_PLATFORM=offscreen bench_live_console [SECONDS=10] [SPANS_PER_S=100000] [CLIENTS=2]
//                                                [json|proto]
//
// The console (MainWindow, 1500×950, offscreen) goes live with its OTLP receiver on a free
// loopback port; CLIENTS threads each POST 512-span requests paced to SPANS_PER_S / CLIENTS,
// with span times on the wall clock (data time = now, 8 instances, 1 % errors). Reported:
// spans acknowledged and reaching the engine per second (they must be equal: nothing
// acknowledged is lost), the console's own arrival → tiles latency per drawn snapshot
// (MainWindow::liveLatenciesMs, p50 / p99 / max), and the UI thread's lag: a 10 ms timer's
// lateness (p50 / p99 / max). Exits 1 when an acknowledged span is missing.
#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTimer>

#include <cstdio>
#include <thread>

#include "main_window.hpp"
#include "otlp_load.hpp"

using namespace spillway;
using namespace spillway::console;

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("spillway-bench-live");
  const int secs = argc > 1 ? std::atoi(argv[1]) : 10;
  const double rate = argc > 2 ? std::atof(argv[2]) : 100000;
  const int clients = argc > 3 ? std::atoi(argv[3]) : 2;
  const bool proto = argc > 4 ? std::string(argv[4]) != "json" : true;
  constexpr int kSpans = 512;

  MainWindow w;
  w.resize(1500, 950);
  w.show();
  QSignalSpy started(&w, &MainWindow::liveStarted);
  LiveConfig cfg;
  cfg.otlp = "127.0.0.1:0";
  QString error;
  if (!w.startLive(cfg, &error) || !started.wait(5000)) {
    std::fprintf(stderr, "bench_live_console: cannot go live: %s\n", qPrintable(error));
    return 2;
  }
  const quint16 port = started.at(0).at(0).value<quint16>();
  LiveStatus last;
  QObject::connect(&w.liveController(), &LiveController::snapshot,
                   [&last](const auto&, const LiveStatus& st) { last = st; });

  // The UI thread's lag: how late a 10 ms timer fires.
  std::vector<std::int64_t> lagUs;
  QElapsedTimer since;
  QTimer probe;
  probe.setTimerType(Qt::PreciseTimer);
  probe.setInterval(10);
  QObject::connect(&probe, &QTimer::timeout, [&] {
    if (since.isValid()) lagUs.push_back(std::max<qint64>(0, since.nsecsElapsed() / 1000 - 10000));
    since.start();
  });
  probe.start();

  std::atomic<bool> stop{false};
  std::vector<otlp_load::ClientResult> results(static_cast<std::size_t>(clients));
  std::vector<std::thread> threads;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < clients; ++i)
    threads.emplace_back(otlp_load::client, port, i, kSpans, proto, std::ref(stop),
                         std::ref(results[static_cast<std::size_t>(i)]), rate / clients);
  otlp_load::runFor(app, secs, stop, threads);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  probe.stop();
  w.stopLive();  // drains the receiver into the engine; a final snapshot follows
  QSignalSpy shown(&w, &MainWindow::liveShown);
  shown.wait(2000);

  otlp_load::ClientResult sum;
  for (const auto& r : results) {
    sum.ok += r.ok;
    sum.shed += r.shed;
    sum.ackedSpans += r.ackedSpans;
  }
  std::vector<std::int64_t> lat;
  for (double ms : w.liveLatenciesMs()) lat.push_back(static_cast<std::int64_t>(ms * 1000));
  std::printf("bench_live_console: %s, %d clients, target %.0f spans/s, %.1f s\n",
              proto ? "protobuf" : "json", clients, rate, wall);
  std::printf("  requests: %llu answered 200, %llu shed\n", static_cast<unsigned long long>(sum.ok),
              static_cast<unsigned long long>(sum.shed));
  std::printf("  spans acknowledged %llu (%.0f/s), in the engine %llu\n",
              static_cast<unsigned long long>(sum.ackedSpans),
              static_cast<double>(sum.ackedSpans) / wall,
              static_cast<unsigned long long>(last.calls));
  std::printf(
      "  arrival -> tiles repainted: p50 %.0f ms, p99 %.0f ms, max %.0f ms (%zu snapshots)\n",
      otlp_load::pct(lat, 0.5) / 1e3, otlp_load::pct(lat, 0.99) / 1e3,
      otlp_load::pct(lat, 1.0) / 1e3, lat.size());
  std::printf("  UI thread lag (10 ms timer): p50 %.1f ms, p99 %.1f ms, max %.1f ms (%zu ticks)\n",
              otlp_load::pct(lagUs, 0.5) / 1e3, otlp_load::pct(lagUs, 0.99) / 1e3,
              otlp_load::pct(lagUs, 1.0) / 1e3, lagUs.size());
  if (last.calls != sum.ackedSpans) {
    std::fprintf(stderr, "LOST: %llu acknowledged, %llu in the engine\n",
                 static_cast<unsigned long long>(sum.ackedSpans),
                 static_cast<unsigned long long>(last.calls));
    return 1;
  }
  return 0;
}
