// The console's UI thread while background work is in flight, offscreen: a 2 ms timer ticks on
// the UI thread and the longest gap between two ticks is the longest stall. Measured while a
// simulated run is superseded by another and cancelled, while a library replay is superseded
// and cancelled, while a cut of the live recording runs, and across a live stop. The gap that
// holds a result's redraw (after the work ends) is not counted: that is drawing, not waiting.
// A plain program (needs a QApplication): bench_console_stall [ROUNDS]
#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "library_panel.hpp"
#include "live_session.hpp"
#include "main_window.hpp"
#include "spillway/library/library.hpp"

using namespace spillway;
using console::MainWindow;

namespace {

// Ticks of the UI thread's clock (ms since start) while something is in flight.
class StallMeter {
 public:
  StallMeter() {
    clock_.start();
    timer_.setInterval(2);
    QObject::connect(&timer_, &QTimer::timeout, [this] { ticks_.push_back(clock_.elapsed()); });
    timer_.start();
  }
  void begin() {
    ticks_.clear();
    ticks_.push_back(clock_.elapsed());
  }
  // The longest gap between ticks up to the last tick before `endMs` (the work's end).
  qint64 longest(qint64 endMs) const {
    qint64 worst = 0, at = 0;
    for (std::size_t i = 1; i < ticks_.size() && ticks_[i] <= endMs; ++i)
      if (ticks_[i] - ticks_[i - 1] > worst) {
        worst = ticks_[i] - ticks_[i - 1];
        at = ticks_[i - 1] - ticks_.front();
      }
    if (std::getenv("STALL_DEBUG"))
      std::fprintf(stderr, "longest gap %lld ms, from %lld ms after the start\n",
                   static_cast<long long>(worst), static_cast<long long>(at));
    return worst;
  }
  qint64 now() const { return clock_.elapsed(); }

 private:
  QElapsedTimer clock_;
  QTimer timer_;
  std::vector<qint64> ticks_;
};

void pump(int ms) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < ms) QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
}

// Starts work, supersedes it after `ms` with a second start, cancels that after `ms`: the UI
// must never wait for either worker.
template <class Start, class Cancel>
qint64 supersedeAndCancel(MainWindow& w, StallMeter& m, Start start, Cancel cancel, int ms) {
  m.begin();
  QElapsedTimer t;
  t.start();
  QSignalSpy shownSpy(&w, &MainWindow::runShown);
  start();
  const qint64 a = t.restart();
  pump(ms);
  t.restart();
  start();
  const qint64 b = t.restart();
  pump(ms);
  t.restart();
  cancel();
  if (std::getenv("STALL_DEBUG"))
    std::fprintf(stderr, "start %lld ms, restart %lld ms, cancel %lld ms, shown %lld\n",
                 static_cast<long long>(a), static_cast<long long>(b),
                 static_cast<long long>(t.elapsed()), static_cast<long long>(shownSpy.count()));
  const qint64 end = m.now();
  pump(50);
  return m.longest(end);
}

}  // namespace

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QApplication::setApplicationName("spillway-bench");
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  QTemporaryDir dir;
  MainWindow w;
  w.resize(1500, 950);
  w.show();
  StallMeter meter;
  QSignalSpy shown(&w, &MainWindow::runShown);
  w.runScenario("seed-000");
  if (!shown.wait(60000)) return 1;

  // A library incident to replay (the built-in sample).
  const QString lib = dir.filePath("bench.db");
  {
    library::Library l(lib.toStdString());
    l.importFile(SPILLWAY_SAMPLE_TRACE, formats::Format::Jsonl, {}, "sample");
  }
  if (!w.openLibrary(lib)) return 1;
  // The first run's extra seeds (the KPI intervals) finish and are drawn before measuring.
  QSignalSpy intervals(&w, &MainWindow::intervalsShown);
  if (!w.seedRuns()) (void)intervals.wait(30000);
  pump(200);

  qint64 run = 0, replay = 0, cut = 0, stop = 0;
  for (int r = 0; r < rounds; ++r) {
    run = std::max(run, supersedeAndCancel(
                            w, meter, [&] { w.runScenario("seed-001"); },
                            [&] { w.controller().cancel(); }, 150));
    replay = std::max(replay, supersedeAndCancel(
                                  w, meter, [&] { w.replayIncident("sample"); },
                                  [&] { w.replayController().cancel(); }, 20));
    // Live mode recording, a cut of it (refused or not, it runs off the UI thread), then stop.
    console::LiveConfig cfg;
    cfg.otlp = "127.0.0.1:0";
    cfg.recordLibrary = dir.filePath(QString("live-%1.db").arg(r));
    QSignalSpy started(&w, &MainWindow::liveStarted);
    if (!w.startLive(cfg) || !started.wait(5000)) return 1;
    QSignalSpy cutDone(&w, &MainWindow::liveCut), cutRefused(&w, &MainWindow::liveCutFailed);
    pump(300);  // a snapshot makes the view Live
    meter.begin();
    QString why;
    const bool cutStarted = w.cutLive(0, 1, QString("cut-%1").arg(r), &why);
    if (cutStarted) (void)(cutRefused.wait(5000) || cutDone.count() || cutDone.wait(5000));
    if (std::getenv("STALL_DEBUG"))
      std::fprintf(stderr, "cut %s: %d done, %d refused %s\n",
                   cutStarted ? "started" : "not started", static_cast<int>(cutDone.count()),
                   static_cast<int>(cutRefused.count()), qPrintable(cutStarted ? QString() : why));
    cut = std::max(cut, meter.longest(meter.now()));
    meter.begin();
    w.stopLive();
    pump(100);
    stop = std::max(stop, meter.longest(meter.now()));
  }
  std::printf(
      "longest UI-thread stall over %d rounds (ms): run superseded+cancelled %lld, "
      "replay superseded+cancelled %lld, live cut %lld, live stop %lld\n",
      rounds, static_cast<long long>(run), static_cast<long long>(replay),
      static_cast<long long>(cut), static_cast<long long>(stop));
  return 0;
}
