// Live mode is quiet when idle and loud when it matters (issue 23, item 10), offscreen:
// - the Live dock has one health row per source, fed by the worker: a log that is not there
//   is "waiting for file …" and turns to receiving once it appears; a Prometheus that answers
//   500 is failing with its reason and "last success never", then receiving once it answers;
//   a receiver that cannot listen is failing on its own row; none of it in the verdict list;
// - the dock's fields are checked as they are typed and marked next to the field;
// - the dock is narrow enough for 1280 px;
// - a tile whose instance would open is amber, carries a badge and sorts first in health
//   order (by hand-built timeline, and live over OTLP); names sort naturally; the sparkline
//   prints its scale; clear() empties the tiles.
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSettings>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <memory>

#include "fake_prometheus.hpp"
#include "instance_tiles.hpp"
#include "live_otlp_json.hpp"
#include "live_panel.hpp"
#include "main_window.hpp"
#include "spillway/policy_yaml.hpp"
#include "timeline_plot.hpp"

using namespace spillway;
using namespace spillway::console;
using namespace spillway::livetest;
using Source = SourceHealth::Source;
using State = SourceHealth::State;

namespace {

LiveConfig baseConfig() {
  LiveConfig c;
  c.policy = parsePolicy(kLivePolicy, "test");
  c.refreshMs = 100;
  return c;
}

long indexOf(const std::shared_ptr<const Comparison>& c, const QString& name) {
  if (!c) return -1;
  const auto& insts = c->protectedRun.timeline.instances();
  for (std::size_t i = 0; i < insts.size(); ++i)
    if (QString::fromStdString(insts[i].name) == name) return static_cast<long>(i);
  return -1;
}

// A Live-mode view of 120 one-second ticks: each instance with its error rate, `peak` answers
// per second at tick 30 (10 elsewhere), and a would-open mark at `wouldOpenAt` seconds (< 0:
// none). Every breaker watches (METRICS_ONLY), as in shadow mode.
struct Inst {
  std::string name;
  double errorRate = 0;
  double wouldOpenAt = -1;
  double peak = 10;
};
std::shared_ptr<const Comparison> liveView(const std::vector<Inst>& spec) {
  const std::size_t n = 120;
  std::vector<view::InstanceTimeline> out;
  for (const Inst& s : spec) {
    view::InstanceTimeline it;
    it.name = s.name;
    it.model = "m";
    for (auto* v : {&it.t, &it.errorRate, &it.slowRate, &it.p99Ms, &it.baselineP99Ms,
                    &it.throughput, &it.rejected, &it.queueFull, &it.overflow, &it.busy, &it.queued,
                    &it.blockedJudged, &it.blockedWouldSucceed, &it.calls, &it.failures, &it.slow})
      v->assign(n, 0);
    for (std::size_t k = 0; k < n; ++k) {
      it.t[k] = static_cast<double>(k + 1);
      it.errorRate[k] = s.errorRate;
      it.throughput[k] = k == 30 ? s.peak : 10;
      it.p99Ms[k] = 80;
    }
    it.bands.push_back({0, seconds(static_cast<std::int64_t>(n)), BreakerState::MetricsOnly});
    if (s.wouldOpenAt >= 0)
      it.markers.push_back({static_cast<Micros>(s.wouldOpenAt * 1e6), view::Marker::Kind::WouldOpen,
                            "would open (error rate 60.0 % > 50.0 % for 1.00 s)"});
    out.push_back(std::move(it));
  }
  auto c = std::make_shared<Comparison>();
  c->mode = view::Mode::Live;
  c->protectedRun.timeline = view::RunTimeline::fromInstances(
      std::move(out), seconds(1), seconds(static_cast<std::int64_t>(n)));
  return c;
}

bool amberish(QColor c) {
  return c.red() > 200 && c.green() > 130 && c.blue() < 160 && c.red() - c.blue() > 80;
}

}  // namespace

class TstConsoleLiveHealth : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase();
  void missingTailFileIsWaitedFor();
  void prometheusFailingThenReceiving();
  void receiverThatCannotListenFailsOnItsRow();
  void fieldsAreMarkedInline();
  void dockIsNarrow();
  void wouldOpenTileIsAmberAndFirst();
  void tileRateIsTheLastTenSeconds();
  void namesSortNaturally();
  void sparklinePrintsItsScale();
  void clearEmptiesTheTiles();
  void liveWouldOpenTileSortsFirst();
  void goLiveLeavesNoStaleTilesOrLanes();

 private:
  QTemporaryDir dir_;
};

void TstConsoleLiveHealth::initTestCase() {
  QApplication::setApplicationName("spillway-test-live-health");
  QSettings().clear();
  QVERIFY(dir_.isValid());
}

void TstConsoleLiveHealth::missingTailFileIsWaitedFor() {
  MainWindow w;
  w.show();
  const QString log = dir_.filePath("later/access.jsonl");
  LiveConfig c = baseConfig();
  c.tailFile = log;
  c.tailFormat = formats::Format::Jsonl;
  QSignalSpy started(&w, &MainWindow::liveStarted);
  QString error;
  QVERIFY2(w.startLive(c, &error), qPrintable(error));
  QVERIFY(started.wait(5000));
  LivePanel* panel = w.livePanel();
  QTRY_COMPARE_WITH_TIMEOUT(panel->healthState(Source::Tail), std::optional(State::Waiting), 5000);
  const QString waiting = panel->healthText(Source::Tail);
  QVERIFY2(waiting.contains("waiting for file " + log + ": not there yet"), qPrintable(waiting));
  // The row is on screen, and nothing of it went into the verdict list.
  QVERIFY(panel->findChildren<QLabel*>().size() > 0);
  QCOMPARE(panel->verdicts()->count(), 0);
  // The file appears (with its directory): read from its start, the row turns to receiving.
  QVERIFY(QDir().mkpath(dir_.filePath("later")));
  QFile f(log);
  QVERIFY(f.open(QIODevice::WriteOnly));
  const qint64 t0 = nowNs() / 1'000'000;
  for (int i = 0; i < 20; ++i)
    f.write(QString("{\"ts\":%1,\"instance\":\"chat-1\",\"model\":\"m\",\"latency_ms\":40,"
                    "\"status\":200}\n")
                .arg(t0 + i * 50)
                .toUtf8());
  f.flush();
  QTRY_COMPARE_WITH_TIMEOUT(panel->healthState(Source::Tail), std::optional(State::Receiving),
                            5000);
  const QString receiving = panel->healthText(Source::Tail);
  QVERIFY2(receiving.contains("receiving") && receiving.contains("last data at"),
           qPrintable(receiving));
  QTRY_VERIFY_WITH_TIMEOUT(indexOf(w.current(), "chat-1") >= 0, 5000);
  // Lines that do not parse fail the row with the importer's reason, not the verdict list.
  f.write("this is not json\nneither is this\n");
  f.flush();
  QTRY_COMPARE_WITH_TIMEOUT(panel->healthState(Source::Tail), std::optional(State::Failing), 5000);
  const QString failing = panel->healthText(Source::Tail);
  QVERIFY2(failing.contains("do not parse as jsonl") && failing.contains("last success"),
           qPrintable(failing));
  QCOMPARE(panel->verdicts()->count(), 0);
  QSignalSpy closed(&w.liveController(), &LiveController::closed);
  w.stopLive();
  QVERIFY(closed.wait(10000));
  // Stopped, the last failure is still said (the operator has to fix the log format).
  QVERIFY2(panel->healthText(Source::Tail).contains("failing"),
           qPrintable(panel->healthText(Source::Tail)));
}

void TstConsoleLiveHealth::prometheusFailingThenReceiving() {
  using namespace fake_prometheus;
  MainWindow w;
  w.show();
  FakePrometheus prom;
  bool up = false;
  prom.handler = [&up](const FakePrometheus::Request& r) {
    if (!up) return Answer{500, R"({"status":"error","error":"boom"})"};
    const bool fails = r.query.contains("failures_total"), calls = r.query.contains("requests");
    if (!fails && !calls) return Answer{200, matrix({})};
    Series s{"\"instance\":\"p-1\",\"model\":\"m\"", {}};
    for (double t = r.start.toDouble(); t <= r.end.toDouble() + 1e-6; t += r.step.toDouble())
      s.points.emplace_back(static_cast<Micros>(t * 1e6), QByteArray(fails ? "0" : "50"));
    return Answer{200, matrix({s})};
  };
  QVERIFY(prom.listen());
  LiveConfig c = baseConfig();
  live::PromSourceSpec spec;
  spec.url = QString("http://127.0.0.1:%1").arg(prom.port()).toStdString();
  spec.preset = "spillway";
  spec.step = seconds(1);
  spec.delay = 0;
  spec.backfill = seconds(10);
  c.prometheus = spec;
  QSignalSpy started(&w, &MainWindow::liveStarted);
  QVERIFY(w.startLive(c));
  QVERIFY(started.wait(5000));
  LivePanel* panel = w.livePanel();
  QTRY_COMPARE_WITH_TIMEOUT(panel->healthState(Source::Prometheus), std::optional(State::Failing),
                            5000);
  const QString failing = panel->healthText(Source::Prometheus);
  QVERIFY2(failing.contains("500") && failing.contains("last success never"), qPrintable(failing));
  QCOMPARE(panel->verdicts()->count(), 0);  // the failure is not a verdict
  up = true;
  QTRY_COMPARE_WITH_TIMEOUT(panel->healthState(Source::Prometheus), std::optional(State::Receiving),
                            10000);
  // Its rate over the last seconds (wall time: the figure itself is not asserted).
  QTRY_VERIFY2(panel->healthText(Source::Prometheus).contains("samples/s, last data at"),
               qPrintable(panel->healthText(Source::Prometheus)));
  QSignalSpy closed(&w.liveController(), &LiveController::closed);
  w.stopLive();
  QVERIFY(closed.wait(10000));
  prom.close();
}

// The session fails to start; the window hands the message to the dock (MainWindow's failed
// handler calls showFailure), which puts it on the receiver's row.
void TstConsoleLiveHealth::receiverThatCannotListenFailsOnItsRow() {
  MainWindow w;
  w.show();
  QTcpServer busy;
  QVERIFY(busy.listen(QHostAddress::LocalHost, 0));
  LiveConfig c = baseConfig();
  c.otlp = QString("127.0.0.1:%1").arg(busy.serverPort());
  QSignalSpy failed(&w.liveController(), &LiveController::failed);
  // Until the window makes the call itself, the test makes it (a second call changes nothing).
  connect(&w.liveController(), &LiveController::failed, w.livePanel(), &LivePanel::showFailure);
  QVERIFY(w.startLive(c));
  QVERIFY(failed.wait(5000));
  LivePanel* panel = w.livePanel();
  QTRY_COMPARE(panel->healthState(Source::Otlp), std::optional(State::Failing));
  const QString row = panel->healthText(Source::Otlp);
  QVERIFY2(row.contains("failing: cannot listen on") && row.contains("last success never"),
           qPrintable(row));
  QCOMPARE(panel->verdicts()->count(), 0);
  busy.close();
}

void TstConsoleLiveHealth::fieldsAreMarkedInline() {
  LivePanel panel;
  panel.show();
  LiveConfig c;
  c.otlp = "127.0.0.1:4318";
  panel.setConfig(c);
  QVERIFY(panel.fieldProblem(LivePanel::Field::Otlp).isEmpty());
  // Typed, not yet Go live: the address is marked next to the field, icon and words.
  panel.otlpAddress()->setText("127.0.0.1:http");
  QVERIFY2(panel.fieldProblem(LivePanel::Field::Otlp).contains("expected [HOST:]PORT"),
           qPrintable(panel.fieldProblem(LivePanel::Field::Otlp)));
  auto* icon = panel.otlpAddress()->findChild<QAction*>("liveFieldMark");
  QVERIFY(icon && icon->isVisible());
  QCOMPARE(icon->toolTip(), panel.fieldProblem(LivePanel::Field::Otlp));
  bool shown = false;
  for (QLabel* l : panel.findChildren<QLabel*>())
    shown = shown || (l->isVisible() && l->text() == panel.fieldProblem(LivePanel::Field::Otlp));
  QVERIFY(shown);
  LiveConfig out;
  QString error;
  QVERIFY(!panel.config(out, &error));
  QVERIFY2(error.startsWith("Live: OTLP receiver: ") && error.contains("[HOST:]PORT"),
           qPrintable(error));
  panel.otlpAddress()->setText("10.1.2.3:4318");
  QVERIFY(panel.fieldProblem(LivePanel::Field::Otlp).contains("not a loopback address"));
  panel.otlpAddress()->setText("127.0.0.1:4318");
  QVERIFY(panel.fieldProblem(LivePanel::Field::Otlp).isEmpty());
  QVERIFY(!icon->isVisible());
  // A token file without a token: marked, and Advanced opens so the mark is seen.
  panel.setAdvancedShown(false);
  const QString token = dir_.filePath("empty.token");
  QFile t(token);
  QVERIFY(t.open(QIODevice::WriteOnly));
  t.write("# no token here\n\n");
  t.close();
  panel.otlpTokenFile()->setText(token);
  QVERIFY(!panel.fieldProblem(LivePanel::Field::TokenFile).isEmpty());
  QVERIFY(panel.advancedShown());
  panel.otlpTokenFile()->clear();
  // A log: a directory is an error; a file not there yet only a note, and Go live goes on.
  c.tailFile = dir_.path();
  panel.setConfig(c);
  QVERIFY(panel.fieldProblem(LivePanel::Field::Tail).contains("directory"));
  panel.tailFile()->setText(dir_.filePath("not-yet.log"));
  QVERIFY(panel.fieldProblem(LivePanel::Field::Tail).isEmpty());
  QVERIFY2(panel.fieldNote(LivePanel::Field::Tail).contains("not there yet"),
           qPrintable(panel.fieldNote(LivePanel::Field::Tail)));
  QVERIFY2(panel.config(out, &error), qPrintable(error));
  QCOMPARE(out.tailFile, dir_.filePath("not-yet.log"));
  // A Prometheus URL that is no URL.
  live::PromSourceSpec spec;
  spec.url = "not a url";
  spec.preset = "envoy";
  c.prometheus = spec;
  panel.setConfig(c);
  QVERIFY(!panel.fieldProblem(LivePanel::Field::Prometheus).isEmpty());
  panel.prometheusUrl()->setText("http://127.0.0.1:9090");
  QVERIFY(panel.fieldProblem(LivePanel::Field::Prometheus).isEmpty());
}

// At 1280×800 the dock is a narrow column, not a third of the window.
void TstConsoleLiveHealth::dockIsNarrow() {
  LivePanel panel;
  QVERIFY2(panel.minimumSizeHint().width() <= 280,
           qPrintable(QString::number(panel.minimumSizeHint().width())));
  panel.setAdvancedShown(true);
  QVERIFY2(panel.minimumSizeHint().width() <= 280,
           qPrintable(QString::number(panel.minimumSizeHint().width())));
  QVERIFY2(panel.sizeHint().width() <= 1280 / 4,
           qPrintable(QString::number(panel.sizeHint().width())));
}

// The tile's answers/s is the mean of the last 10 s up to the cursor, as the table's "calls per
// second (last 10 s)": one second alone (in Live the newest, still filling) read 2.1/s beside a
// sparkline peaking at 13/s.
void TstConsoleLiveHealth::tileRateIsTheLastTenSeconds() {
  InstanceTiles tiles;
  tiles.setRun(liveView({{"chat-1", 0.0, -1, 100}}));
  tiles.setCursorTime(seconds(31));  // the 100/s second, after nine of 10/s
  QVERIFY2(tiles.tileText(0).contains("19.0 /s"), qPrintable(tiles.tileText(0)));
  tiles.setCursorTime(seconds(60));  // ten ordinary seconds
  QVERIFY2(tiles.tileText(0).contains("10.0 /s"), qPrintable(tiles.tileText(0)));
}

void TstConsoleLiveHealth::wouldOpenTileIsAmberAndFirst() {
  InstanceTiles tiles;
  tiles.resize(300, 400);
  tiles.show();
  // chat-1 has the worst window but never would open; chat-10 would open at 50 s.
  tiles.setRun(liveView({{"chat-1", 0.3}, {"chat-2", 0.0}, {"chat-10", 0.1, 50}}));
  tiles.setOrder(view::TileOrder::Health);
  tiles.setCursorTime(seconds(40));  // before the mark: nothing would open yet
  QVERIFY(!tiles.wouldOpen(2));
  QCOMPARE(tiles.displayed().front(), std::size_t{0});
  tiles.setCursorTime(seconds(60));
  QVERIFY(tiles.wouldOpen(2));
  QVERIFY(!tiles.wouldOpen(0) && !tiles.wouldOpen(1));
  QCOMPARE(tiles.displayed().front(), std::size_t{2});
  QVERIFY2(tiles.tileText(2).contains("would open"), qPrintable(tiles.tileText(2)));
  // Drawn amber: a point of the tile's background, clear of text, stripe and sparkline.
  const QImage img = tiles.grab().toImage();
  const QRect r = tiles.tileGeometry(2);
  QVERIFY(!r.isEmpty());
  const QPoint inside(r.left() + 90, r.bottom() - 3);
  QVERIFY2(amberish(img.pixelColor(inside)), qPrintable(img.pixelColor(inside).name()));
  const QRect other = tiles.tileGeometry(0);
  QVERIFY(!amberish(img.pixelColor(other.left() + 90, other.bottom() - 3)));
  // The badge: a darker amber pill on the first line.
  bool badge = false;
  for (int x = r.left() + 22; x < r.right() - 30 && !badge; ++x)
    for (int y = r.top() + 4; y < r.top() + r.height() / 2 && !badge; ++y) {
      const QColor px = img.pixelColor(x, y);
      badge =
          px.red() > 150 && px.red() < 220 && px.green() > 90 && px.green() < 150 && px.blue() < 40;
    }
  QVERIFY(badge);
  // Past the hold a real breaker would stay open at most, the tile is itself again.
  tiles.setCursorTime(seconds(115));
  QVERIFY(!tiles.wouldOpen(2));
  QCOMPARE(tiles.displayed().front(), std::size_t{0});
  tiles.setWouldOpenHold(seconds(120));
  QVERIFY(tiles.wouldOpen(2));
  QCOMPARE(tiles.displayed().front(), std::size_t{2});
}

void TstConsoleLiveHealth::namesSortNaturally() {
  InstanceTiles tiles;
  tiles.setRun(liveView({{"chat-10"}, {"chat-2"}, {"chat-1"}, {"chat-02b"}}));
  tiles.setOrder(view::TileOrder::Name);
  const std::vector<std::size_t> byName{2, 1, 3, 0};  // chat-1, chat-2, chat-02b, chat-10
  QCOMPARE(tiles.displayed(), byName);
  tiles.setOrder(view::TileOrder::Model);  // one model: by name within it
  QCOMPARE(tiles.displayed(), byName);
}

void TstConsoleLiveHealth::sparklinePrintsItsScale() {
  InstanceTiles tiles;
  tiles.setRun(liveView({{"a", 0, -1, 12}, {"b", 0, -1, 1.5}, {"c", 0, -1, 3200}}));
  tiles.setCursorTime(seconds(60));  // tick 30 is within the last two minutes
  QCOMPARE(tiles.sparklineScale(0), QString("12/s"));
  QCOMPARE(tiles.sparklineScale(1), QString("10/s"));  // the other ticks' 10/s is the peak
  QCOMPARE(tiles.sparklineScale(2), QString("3.2k/s"));
  tiles.setCursorTime(seconds(20));  // before the peak
  QCOMPARE(tiles.sparklineScale(0), QString("10/s"));
}

void TstConsoleLiveHealth::clearEmptiesTheTiles() {
  InstanceTiles tiles;
  tiles.show();
  tiles.setRun(liveView({{"x-1", 0, 5}, {"x-2"}}));
  tiles.setCursorTime(seconds(10));
  tiles.setHidden(1, true);
  QCOMPARE(tiles.displayed().size(), std::size_t{2});
  tiles.clear(tr("Waiting for live data…"));
  QVERIFY(tiles.displayed().empty());
  QVERIFY(tiles.visible().empty());
  QVERIFY(!tiles.isHidden(1));
  QVERIFY(!tiles.wouldOpen(0));
  QVERIFY(tiles.tileText(0).isEmpty());
  QVERIFY(tiles.tileGeometry(0).isEmpty());
  QVERIFY(!tiles.grab().isNull());  // paints the message, not stale tiles
}

// Over OTLP: the instance that starts failing would open, and with the tiles in health order
// its tile comes first and is amber while the cursor follows the newest data.
void TstConsoleLiveHealth::liveWouldOpenTileSortsFirst() {
  MainWindow w;
  w.resize(1280, 800);
  w.show();
  LiveConfig c = baseConfig();
  c.otlp = "127.0.0.1:0";
  QSignalSpy started(&w, &MainWindow::liveStarted);
  QString error;
  QVERIFY2(w.startLive(c, &error), qPrintable(error));
  QVERIFY(started.wait(5000));
  const quint16 port = started.at(0).at(0).value<quint16>();
  QTRY_COMPARE(w.livePanel()->healthState(Source::Otlp), std::optional(State::Waiting));
  QVERIFY2(w.livePanel()->healthText(Source::Otlp).contains("listening, no spans yet"),
           qPrintable(w.livePanel()->healthText(Source::Otlp)));
  w.tiles()->setOrder(view::TileOrder::Health);
  QNetworkAccessManager nam;
  const qint64 t0 = nowNs();
  for (int s = 0; s < 8; ++s) {
    const qint64 end = t0 + s * 1'000'000'000LL;
    QCOMPARE(post(nam, port, spans("10.0.0.1", 20, end, 200)), 200);
    QCOMPARE(post(nam, port, spans("10.0.0.2", 20, end + 1'000'000, s >= 3 ? 503 : 200)), 200);
  }
  QTRY_VERIFY_WITH_TIMEOUT(w.livePanel()->verdicts()->count() >= 1, 5000);
  QTRY_VERIFY_WITH_TIMEOUT(indexOf(w.current(), "10.0.0.2:8000") >= 0, 5000);
  const auto bad = static_cast<std::size_t>(indexOf(w.current(), "10.0.0.2:8000"));
  QTRY_VERIFY_WITH_TIMEOUT(w.tiles()->wouldOpen(bad), 5000);
  QCOMPARE(w.tiles()->displayed().front(), bad);
  QVERIFY(!w.tiles()->wouldOpen(static_cast<std::size_t>(indexOf(w.current(), "10.0.0.1:8000"))));
  QTRY_COMPARE(w.livePanel()->healthState(Source::Otlp), std::optional(State::Receiving));
  // While spans keep coming, the row says how many a second (over the last seconds of wall
  // time: the figure itself is not asserted).
  bool rated = false;
  for (int k = 0; k < 100 && !rated; ++k) {
    QCOMPARE(post(nam, port, spans("10.0.0.1", 5, t0 + 8'000'000'000LL + k * 50'000'000LL, 200)),
             200);
    QTest::qWait(50);
    rated = w.livePanel()->healthText(Source::Otlp).contains("spans/s, last data at");
  }
  QVERIFY2(rated, qPrintable(w.livePanel()->healthText(Source::Otlp)));
  QSignalSpy closed(&w.liveController(), &LiveController::closed);
  w.stopLive();
  QVERIFY(closed.wait(10000));
  QVERIFY2(w.livePanel()->healthText(Source::Otlp).contains("stopped · last data at"),
           qPrintable(w.livePanel()->healthText(Source::Otlp)));
}

// A run on screen, then Go live on a log not there yet: no tile and no lane of the run stays
// (the live view starts empty and waits, and says what for).
void TstConsoleLiveHealth::goLiveLeavesNoStaleTilesOrLanes() {
  MainWindow w;
  w.show();
  QSignalSpy shown(&w, &MainWindow::runShown);
  QVERIFY(w.runScenario("seed-000"));
  QVERIFY(shown.wait(120000));
  QVERIFY(!w.tiles()->displayed().empty());
  QTRY_VERIFY(w.plot()->laneCount() > 0);
  LiveConfig c = baseConfig();
  c.tailFile = dir_.filePath("never.log");
  QSignalSpy started(&w, &MainWindow::liveStarted);
  QVERIFY(w.startLive(c));
  QVERIFY(started.wait(5000));
  QTRY_COMPARE(w.livePanel()->healthState(Source::Tail), std::optional(State::Waiting));
  QTRY_VERIFY(w.current() && w.current()->mode == view::Mode::Live);
  QVERIFY(w.tiles()->displayed().empty());
  QTRY_COMPARE(w.plot()->laneCount(), 0);
  QCOMPARE(w.plot()->bandCount(), 0);
  QSignalSpy closed(&w.liveController(), &LiveController::closed);
  w.stopLive();
  QVERIFY(closed.wait(10000));
}

QTEST_MAIN(TstConsoleLiveHealth)
#include "tst_console_live_health.moc"
