// The console's Live mode, offscreen, over real loopback sockets and a real file: OTLP/HTTP
// spans (JSON, as an SDK posts them) reach the tiles and the timelines through the worker's
// shadow engine; a failing instance gets a "would open" verdict in the Live dock, a mark on
// its lane and a labelled line on its rates; every new span is on the tiles within a second
// of its arrival; an access log followed from its end rolls the timelines over a bounded span;
// bad sources fail with a message and leave the console usable; a run ends Live mode.
#include <QApplication>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QListWidget>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <memory>

#include "fake_prometheus.hpp"
#include "instance_tiles.hpp"
#include "library_panel.hpp"
#include "live_otlp_json.hpp"
#include "live_panel.hpp"
#include "main_window.hpp"
#include "spillway/library/library.hpp"
#include "spillway/policy_yaml.hpp"
#include "timeline_plot.hpp"

using namespace spillway;
using namespace spillway::console;
using namespace spillway::livetest;

namespace {

// The answer's status and JSON body (partialSuccess).
std::pair<int, QJsonObject> postForBody(QNetworkAccessManager& nam, quint16 port,
                                        const QByteArray& body) {
  QNetworkRequest req(QUrl(QString("http://127.0.0.1:%1/v1/traces").arg(port)));
  req.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
  std::unique_ptr<QNetworkReply> reply(nam.post(req, body));
  QSignalSpy done(reply.get(), &QNetworkReply::finished);
  if (!done.wait(5000)) return {0, {}};
  return {reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(),
          QJsonDocument::fromJson(reply->readAll()).object()};
}

long tileIndex(MainWindow& w, const QString& name) {
  if (!w.current()) return -1;
  const auto& insts = w.current()->protectedRun.timeline.instances();
  for (std::size_t i = 0; i < insts.size(); ++i)
    if (QString::fromStdString(insts[i].name) == name) return static_cast<long>(i);
  return -1;
}

quint16 busyPort(QTcpServer& s) {
  return s.listen(QHostAddress::LocalHost, 0) ? s.serverPort() : 0;
}

}  // namespace

class TstConsoleLive : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase();
  void otlpSpansReachTilesAndVerdicts();
  void logTailRollsOverTheSpan();
  void recordsAndCutsIntoAnIncident();
  void prometheusSamplesBecomeTiles();
  void instanceBoundRefusesAndShowsTheCount();
  void badSources_data();
  void badSources();
  void runEndsLiveMode();
  void snapshotsRefillInPlace();
  void closingWhileRecordingKeepsEveryCall();
  void cleanupTestCase();

 private:
  LiveConfig cfg() const {
    LiveConfig c;
    c.policy = parsePolicy(kLivePolicy, "test");
    c.refreshMs = 100;
    return c;
  }
  // Live mode on `w` with an OTLP/HTTP receiver on a free port, recording into `library`
  // unless it is empty: the port, or 0 with the reason in `error`.
  quint16 startOtlp(MainWindow& w, const QString& library, QString* error) const {
    LiveConfig c = cfg();
    c.otlp = "127.0.0.1:0";
    c.recordLibrary = library;
    c.retention.maxAge = seconds(3600);
    QSignalSpy started(&w, &MainWindow::liveStarted);
    if (!w.startLive(c, error)) return 0;
    if (!started.wait(5000)) {
      *error = "Live mode did not start";
      return 0;
    }
    return started.at(0).at(0).value<quint16>();
  }
  std::unique_ptr<MainWindow> w_;
  QTemporaryDir dir_;
};

void TstConsoleLive::initTestCase() {
  QApplication::setApplicationName("spillway-test-live");
  QVERIFY(dir_.isValid());
  w_ = std::make_unique<MainWindow>();
  w_->resize(1500, 950);
  w_->show();
}

void TstConsoleLive::otlpSpansReachTilesAndVerdicts() {
  MainWindow& w = *w_;
  QSignalSpy started(&w, &MainWindow::liveStarted);
  LiveConfig c = cfg();
  c.otlp = "127.0.0.1:0";
  QString error;
  QVERIFY2(w.startLive(c, &error), qPrintable(error));
  QVERIFY(started.wait(5000));
  const quint16 port = started.at(0).at(0).value<quint16>();
  QVERIFY(port != 0);
  QVERIFY(w.isLive());
  // Before any span: the toolbar says live (not the scenario it showed), the context bar the
  // port bound (not :0), and the tile column why it is empty (it was blank).
  QCOMPARE(w.sourcePicker()->currentText(), QString("live (shadow mode)"));
  QVERIFY(!w.seedsBox()->isEnabled());
  QVERIFY2(w.contextText().contains(QString("127.0.0.1:%1").arg(port)),
           qPrintable(w.contextText()));
  QTRY_VERIFY_WITH_TIMEOUT(w.current() != nullptr, 5000);  // the first (empty) snapshot
  QCOMPARE(w.tiles()->placeholderShown(),
           QString("Waiting for live data: no instance has reported yet"));
  QNetworkAccessManager nam;
  // Two instances for 8 s of data: 10.0.0.1 answers 200, 10.0.0.2 starts failing at 3 s.
  const qint64 t0 = nowNs();
  for (int s = 0; s < 8; ++s) {
    const qint64 end = t0 + s * 1'000'000'000LL;
    QCOMPARE(post(nam, port, spans("10.0.0.1", 20, end, 200)), 200);
    QCOMPARE(post(nam, port, spans("10.0.0.2", 20, end + 1'000'000, s >= 3 ? 503 : 200)), 200);
  }
  QTRY_VERIFY_WITH_TIMEOUT(w.livePanel()->verdicts()->count() >= 1, 5000);
  const QString verdict = w.livePanel()->verdicts()->item(0)->text();
  QVERIFY2(verdict.contains("10.0.0.2:8000 would open (error rate"), qPrintable(verdict));
  QTRY_COMPARE_WITH_TIMEOUT(
      tileIndex(w, "10.0.0.1:8000") >= 0 && tileIndex(w, "10.0.0.2:8000") >= 0, true, 5000);
  QVERIFY(w.current()->mode == view::Mode::Live);
  // The healthy one never would open; the failing one has its mark on the lane.
  for (int i = 0; i < w.livePanel()->verdicts()->count(); ++i)
    QVERIFY(!w.livePanel()->verdicts()->item(i)->text().contains("10.0.0.1:8000"));
  const auto& bad = w.current()->protectedRun.timeline.instances()[static_cast<std::size_t>(
      tileIndex(w, "10.0.0.2:8000"))];
  QCOMPARE(bad.markers.size(), std::size_t{1});
  QTRY_VERIFY_WITH_TIMEOUT(w.plot()->wouldOpenMarks() >= 1, 3000);
  QVERIFY(w.following());
  // The tile shows the failing instance's window (error % > 50).
  const QString tile = w.tiles()->tileText(static_cast<std::size_t>(tileIndex(w, "10.0.0.2:8000")));
  QVERIFY2(tile.contains("err"), qPrintable(tile));

  // One more span to a new instance reaches the tiles, and the drawing of it is timed (every
  // figure a duration, none negative). How fast: bench_live_console (docs/performance.md);
  // a wall-clock bound here would be flaky under ASan or on a busy machine.
  QSignalSpy shown(&w, &MainWindow::liveShown);
  const std::size_t before = w.liveLatenciesMs().size();
  QCOMPARE(post(nam, port, spans("10.0.0.3", 1, t0 + 8'100'000'000LL, 200)), 200);
  QTRY_VERIFY_WITH_TIMEOUT(tileIndex(w, "10.0.0.3:8000") >= 0, 10000);
  QVERIFY(w.liveLatenciesMs().size() > before);
  for (double ms : w.liveLatenciesMs()) QVERIFY2(ms >= 0, qPrintable(QString::number(ms)));
  QVERIFY(w.livePanel()->statusText().contains("acked"));
  w.stopLive();
  QVERIFY(!w.isLive());
  // The receiver is closed: a new post is refused.
  QCOMPARE(post(nam, port, spans("10.0.0.1", 1, t0, 200)), 0);
}

void TstConsoleLive::logTailRollsOverTheSpan() {
  MainWindow& w = *w_;
  const QString log = dir_.filePath("access.jsonl");
  QFile f(log);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write("{\"ts\":1764480000000,\"instance\":\"old\",\"latency_ms\":5,\"status\":200}\n");
  f.flush();
  LiveConfig c = cfg();
  c.tailFile = log;
  c.tailFormat = formats::Format::Jsonl;
  c.span = seconds(60);
  QSignalSpy started(&w, &MainWindow::liveStarted);
  QVERIFY(w.startLive(c));
  QVERIFY(started.wait(5000));
  // 200 s of data, 5 calls a second, appended in 4 writes as a gateway would.
  const double t0 = 1764480100000;
  for (int part = 0; part < 4; ++part) {
    QByteArray chunk;
    for (int s = part * 50; s < (part + 1) * 50; ++s)
      for (int i = 0; i < 5; ++i)
        chunk += QString(
                     "{\"ts\":%1,\"instance\":\"chat-1\",\"model\":\"m\",\"latency_ms\":40,"
                     "\"status\":200}\n")
                     .arg(t0 + s * 1000 + i * 200, 0, 'f', 0)
                     .toUtf8();
    f.write(chunk);
    f.flush();
    QTest::qWait(150);
  }
  QTRY_COMPARE_WITH_TIMEOUT(
      tileIndex(w, "chat-1") >= 0 &&
          w.current()->protectedRun.timeline.end() - w.current()->protectedRun.timeline.start() ==
              seconds(60),
      true, 5000);
  // Only what was appended after the start (not the "old" line), and only the last minute.
  QCOMPARE(tileIndex(w, "old"), -1L);
  const auto& it =
      w.current()
          ->protectedRun.timeline.instances()[static_cast<std::size_t>(tileIndex(w, "chat-1"))];
  QCOMPARE(it.t.size(), std::size_t{60});
  for (std::size_t k = 0; k + 1 < it.calls.size(); ++k) QCOMPARE(it.calls[k], 5.0);
  QCOMPARE(w.cursorTime(), w.current()->protectedRun.timeline.end());  // following
  w.stopLive();
}

void TstConsoleLive::recordsAndCutsIntoAnIncident() {
  MainWindow& w = *w_;
  const QString lib = dir_.filePath("live.db");
  QString error;
  const quint16 port = startOtlp(w, lib, &error);
  QVERIFY2(port, qPrintable(error));
  QCOMPARE(w.libraryPanel()->libraryPath(), lib);  // the dock shows where it records
  QNetworkAccessManager nam;
  // 10 s of data, 20 calls a second; the spans end on whole-second boundaries + 10 ms steps.
  const qint64 t0 = (nowNs() / 1'000'000'000LL) * 1'000'000'000LL;
  for (int s = 0; s < 10; ++s)
    QCOMPARE(post(nam, port, spans("10.0.0.9", 20, t0 + s * 1'000'000'000LL + 500'000'000LL, 200)),
             200);
  QTRY_VERIFY_WITH_TIMEOUT(
      tileIndex(w, "10.0.0.9:8000") >= 0 &&
          w.current()
                  ->protectedRun.timeline
                  .instances()[static_cast<std::size_t>(tileIndex(w, "10.0.0.9:8000"))]
                  .calls.size() >= 10,
      5000);
  // Seconds 3–7 of the live axis: 4 s × 20 calls, cut while Live mode still records.
  const double axis0 = static_cast<double>(t0 / 1000 - w.current()->origin) / 1e6;
  QSignalSpy cut(&w, &MainWindow::liveCut);
  QSignalSpy refused(&w, &MainWindow::liveCutFailed);
  QVERIFY2(w.cutLive(axis0 + 3, axis0 + 7, "drill-cut", &error), qPrintable(error));
  QVERIFY(cut.wait(10000));  // off the UI thread
  QCOMPARE(refused.count(), 0);
  QCOMPARE(cut.at(0).at(1).toULongLong(), 80ull);
  QVERIFY(w.libraryPanel()->shownIncidents().contains("drill-cut"));
  // The incident is an ordinary one: its calls stream back with the recorded times.
  library::Library check(lib.toStdString(), library::OpenOptions{.mustExist = true});
  auto src = check.open("drill-cut");
  CallRecord r;
  std::uint64_t n = 0;
  while (src->next(r)) {
    ++n;
    QVERIFY(r.ts >= t0 / 1000 + seconds(3) - millis(1000) && r.end() <= t0 / 1000 + seconds(8));
    QCOMPARE(QString::fromUtf8(r.instance.data(), r.instance.size()), QString("10.0.0.9:8000"));
  }
  QCOMPARE(n, std::uint64_t{80});
  // The same name again, and an empty stretch, are refused with the library's reason.
  QVERIFY(w.cutLive(axis0 + 3, axis0 + 7, "drill-cut", &error));
  QVERIFY(refused.wait(10000));
  QVERIFY2(refused.at(0).at(0).toString().contains("drill-cut"),
           qPrintable(refused.at(0).at(0).toString()));
  QVERIFY(w.cutLive(axis0 + 500, axis0 + 600, "nothing-there", &error));
  QVERIFY(refused.wait(10000));
  QVERIFY(!refused.at(1).at(0).toString().isEmpty());
  QCOMPARE(cut.count(), 1);
  w.stopLive();
  // Without recording there is nothing to cut.
  LiveConfig c = cfg();
  c.otlp = "127.0.0.1:0";
  QSignalSpy again(&w, &MainWindow::liveStarted);
  QVERIFY(w.startLive(c));
  QVERIFY(again.wait(5000));
  QVERIFY(!w.cutLive(0, 1, "x", &error));
  QVERIFY2(error.contains("recording"), qPrintable(error));
  w.stopLive();
}

void TstConsoleLive::prometheusSamplesBecomeTiles() {
  using namespace fake_prometheus;
  MainWindow& w = *w_;
  // Every step: "good" 100 calls, no failures; "bad" 100 calls, 80 failed. The fake answers
  // each role by its metric name and each step the puller asks for.
  FakePrometheus prom;
  prom.handler = [](const FakePrometheus::Request& r) {
    const bool fails = r.query.contains("failures_total"), calls = r.query.contains("requests");
    if (!fails && !calls) return Answer{200, matrix({})};  // slow, p99: no data
    const double start = r.start.toDouble(), end = r.end.toDouble(), step = r.step.toDouble();
    std::vector<Series> out;
    for (const char* inst : {"good", "bad"}) {
      Series s{QByteArray("\"instance\":\"") + inst + "\",\"model\":\"m\"", {}};
      const bool bad = QByteArray(inst) == "bad";
      for (double t = start; t <= end + 1e-6; t += step)
        s.points.emplace_back(static_cast<Micros>(t * 1e6),
                              fails ? QByteArray(bad ? "80" : "0") : QByteArray("100"));
      out.push_back(s);
    }
    return Answer{200, matrix(out)};
  };
  QVERIFY(prom.listen());
  LiveConfig c = cfg();
  live::PromSourceSpec spec;
  spec.url = QString("http://127.0.0.1:%1").arg(prom.port()).toStdString();
  spec.preset = "spillway";
  spec.step = seconds(1);
  spec.delay = 0;
  spec.backfill = seconds(20);  // the first poll brings 20 steps of history
  c.prometheus = spec;
  QSignalSpy started(&w, &MainWindow::liveStarted);
  QVERIFY(w.startLive(c));
  QVERIFY(started.wait(5000));
  QTRY_VERIFY_WITH_TIMEOUT(tileIndex(w, "good") >= 0 && tileIndex(w, "bad") >= 0, 5000);
  QTRY_VERIFY_WITH_TIMEOUT(w.livePanel()->verdicts()->count() >= 1, 5000);
  const QString verdict =
      w.livePanel()->verdicts()->item(w.livePanel()->verdicts()->count() - 1)->text();
  QVERIFY2(verdict.contains("bad would open (error rate 80.0 %"), qPrintable(verdict));
  for (int i = 0; i < w.livePanel()->verdicts()->count(); ++i)
    QVERIFY(!w.livePanel()->verdicts()->item(i)->text().contains("good would open"));
  // 100 calls per 1 s step, spread on the timeline's seconds.
  const auto& good =
      w.current()
          ->protectedRun.timeline.instances()[static_cast<std::size_t>(tileIndex(w, "good"))];
  QVERIFY(good.calls.size() >= 10);
  QCOMPARE(good.calls[good.calls.size() / 2], 100.0);
  QVERIFY(w.livePanel()->statusText().contains("Prometheus"));
  w.stopLive();
  // A bad URL is refused before anything starts, naming the field.
  spec.url = "not a url";
  c.prometheus = spec;
  QSignalSpy failed(&w.liveController(), &LiveController::failed);
  QVERIFY(w.startLive(c));
  QVERIFY(failed.wait(5000));
  QVERIFY2(failed.at(0).at(0).toString().startsWith("Prometheus: prometheus"),
           qPrintable(failed.at(0).at(0).toString()));
}

void TstConsoleLive::instanceBoundRefusesAndShowsTheCount() {
  // Issue 17: instance names come from the network. With a bound of 3, spans of 5 names: the
  // 2 over it are answered in partialSuccess, never reach the engine or a tile, and the dock
  // says how much was refused; the 3 admitted keep being served.
  MainWindow& w = *w_;
  LiveConfig c = cfg();
  c.otlp = "127.0.0.1:0";
  c.maxInstances = 3;
  QSignalSpy started(&w, &MainWindow::liveStarted);
  QString error;
  QVERIFY2(w.startLive(c, &error), qPrintable(error));
  QVERIFY(started.wait(5000));
  QCOMPARE(w.livePanel()->maxInstances()->value(), 3);  // the dock shows the bound in use
  const quint16 port = started.at(0).at(0).value<quint16>();
  QNetworkAccessManager nam;
  const qint64 t0 = nowNs();
  int rejected = 0;
  for (int k = 0; k < 5; ++k) {
    const auto [status, body] =
        postForBody(nam, port, spans(QString("10.0.5.%1").arg(k), 10, t0 + k * 1'000'000LL, 200));
    QCOMPARE(status, 200);
    const QJsonObject partial = body.value("partialSuccess").toObject();
    if (k < 3) {
      QVERIFY(partial.isEmpty());
    } else {
      QCOMPARE(partial.value("rejectedSpans").toString(), QString("10"));
      QVERIFY2(partial.value("errorMessage").toString().contains("bound of 3 instances"),
               qPrintable(partial.value("errorMessage").toString()));
      rejected += 10;
    }
  }
  QCOMPARE(rejected, 20);
  QTRY_VERIFY_WITH_TIMEOUT(
      w.livePanel()->statusText().contains("Instance bound 3 reached: 20 calls and 0 samples"),
      5000);
  QTRY_VERIFY_WITH_TIMEOUT(tileIndex(w, "10.0.5.2:8000") >= 0, 5000);
  QCOMPARE(w.current()->protectedRun.timeline.instances().size(), std::size_t{3});
  QCOMPARE(tileIndex(w, "10.0.5.3:8000"), -1L);
  QVERIFY2(w.livePanel()->statusText().contains("3 instances"),
           qPrintable(w.livePanel()->statusText()));
  bool said = false;
  for (int i = 0; i < w.livePanel()->verdicts()->count(); ++i)
    said = said || w.livePanel()->verdicts()->item(i)->text().contains("instance bound reached");
  QVERIFY(said);
  // A tracked name is still served in full; a new one is still refused (no eviction).
  QCOMPARE(postForBody(nam, port, spans("10.0.5.0", 5, t0 + 2'000'000'000LL, 200)).second,
           QJsonObject());
  QCOMPARE(postForBody(nam, port, spans("10.0.5.9", 1, t0 + 2'000'000'000LL, 200))
               .second.value("partialSuccess")
               .toObject()
               .value("rejectedSpans")
               .toString(),
           QString("1"));
  // 30 admitted calls and the 5 new ones of a tracked name in the engine; 21 refused.
  QTRY_VERIFY_WITH_TIMEOUT(w.livePanel()->statusText().contains("21 calls and 0 samples") &&
                               w.livePanel()->statusText().contains("· 35 calls,"),
                           5000);
  w.stopLive();
  // The panel's field is what Go live uses.
  LiveConfig fromPanel;
  w.livePanel()->maxInstances()->setValue(7);
  QVERIFY2(w.livePanel()->config(fromPanel, &error), qPrintable(error));
  QCOMPARE(fromPanel.maxInstances, std::size_t{7});
}

void TstConsoleLive::badSources_data() {
  QTest::addColumn<QString>("otlp");
  QTest::addColumn<QString>("expected");
  QTest::newRow("not loopback") << "10.1.2.3:4318"
                                << "not a loopback address";
  QTest::newRow("not a port") << "127.0.0.1:http"
                              << "expected [HOST:]PORT";
  QTest::newRow("port in use") << "busy"
                               << "cannot listen";
}

void TstConsoleLive::badSources() {
  QFETCH(QString, otlp);
  QFETCH(QString, expected);
  MainWindow& w = *w_;
  QTcpServer busy;
  if (otlp == "busy") otlp = QString("127.0.0.1:%1").arg(busyPort(busy));
  LiveConfig c = cfg();
  c.otlp = otlp;
  QSignalSpy failed(&w.liveController(), &LiveController::failed);
  QVERIFY(w.startLive(c));
  QVERIFY(failed.wait(5000));
  const QString msg = failed.at(0).at(0).toString();
  QVERIFY2(msg.contains(expected), qPrintable(msg));
  QTRY_VERIFY(!w.isLive());
  // No source at all is refused up front.
  QString error;
  QVERIFY(!w.startLive(cfg(), &error));
  QVERIFY2(error.contains("choose a source"), qPrintable(error));
}

void TstConsoleLive::runEndsLiveMode() {
  MainWindow& w = *w_;
  LiveConfig c = cfg();
  c.otlp = "127.0.0.1:0";
  QSignalSpy started(&w, &MainWindow::liveStarted);
  QVERIFY(w.startLive(c));
  QVERIFY(started.wait(5000));
  QSignalSpy shown(&w, &MainWindow::runShown);
  QVERIFY(w.runScenario("seed-003"));
  QVERIFY(!w.isLive());
  QVERIFY(shown.wait(120000));
  QVERIFY(w.current()->mode != view::Mode::Live);
  QVERIFY(w.current()->protectedRun.timeline.start() == 0);
}

// A live snapshot is a re-read: while the instances and their states stay the same, the
// graphs are refilled in place (none created) and nothing is recomputed.
void TstConsoleLive::snapshotsRefillInPlace() {
  MainWindow w;
  w.show();
  QString error;
  const quint16 port = startOtlp(w, {}, &error);
  QVERIFY2(port, qPrintable(error));
  QNetworkAccessManager nam;
  const qint64 t0 = (nowNs() / 1'000'000'000LL) * 1'000'000'000LL;
  QCOMPARE(post(nam, port, spans("10.0.0.5", 20, t0 + 1'000'000'000LL, 200)), 200);
  QTRY_VERIFY_WITH_TIMEOUT(tileIndex(w, "10.0.0.5:8000") >= 0, 5000);
  const TimelinePlot* plot = w.plot();
  QSignalSpy shown(&w, &MainWindow::liveShown);
  const int rereads = plot->rereads(), recomputes = plot->recomputes(), created = plot->created(),
            points = plot->ratePoints();
  for (int s = 2; s <= 4; ++s) {
    const int before = static_cast<int>(shown.count());
    QCOMPARE(post(nam, port, spans("10.0.0.5", 20, t0 + s * 1'000'000'000LL, 200)), 200);
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() > before, 5000);
  }
  QTRY_VERIFY_WITH_TIMEOUT(plot->ratePoints() > points, 5000);  // the new seconds are drawn
  QCOMPARE(plot->rereads() - rereads, static_cast<int>(shown.count()));  // one per snapshot
  QCOMPARE(plot->recomputes(), recomputes);
  QCOMPARE(plot->created(), created);
  QSignalSpy closed(&w.liveController(), &LiveController::closed);
  w.stopLive();
  QVERIFY(closed.wait(10000));
}

// Closing the window in Live mode hides it at once and does not wait for the session on the
// UI thread; the window goes when the session has committed its recording, which holds every
// acknowledged call.
void TstConsoleLive::closingWhileRecordingKeepsEveryCall() {
  MainWindow w;
  w.show();
  const QString lib = dir_.filePath("closing.db");
  QString error;
  const quint16 port = startOtlp(w, lib, &error);
  QVERIFY2(port, qPrintable(error));
  QNetworkAccessManager nam;
  const qint64 t0 = (nowNs() / 1'000'000'000LL) * 1'000'000'000LL;
  for (int s = 0; s < 3; ++s)
    QCOMPARE(post(nam, port, spans("10.0.0.7", 20, t0 + s * 1'000'000'000LL, 200)), 200);
  QSignalSpy closed(&w.liveController(), &LiveController::closed);
  QVERIFY(!w.close());  // deferred: Live mode is on
  QVERIFY(!w.isVisible());
  QVERIFY(!w.isLive());
  QVERIFY(w.liveController().closing());
  QVERIFY(closed.wait(10000));
  QVERIFY(!w.liveController().closing());
  library::Library check(lib.toStdString(), library::OpenOptions{.mustExist = true});
  const auto recs = check.recordings();
  QCOMPARE(recs.size(), std::size_t{1});
  QCOMPARE(recs.front().calls, std::uint64_t{60});
  QVERIFY(w.close());  // nothing left to wait for: an ordinary close
}

void TstConsoleLive::cleanupTestCase() {
  w_.reset();
}

QTEST_MAIN(TstConsoleLive)
#include "tst_console_live.moc"
