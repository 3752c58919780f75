// The narrative panel (issue 23): a click or Enter on a line asks the window to seek to its
// moment and zoom to its range, with its instance; "Copy as text" copies what the CLI prints.
#include <QAction>
#include <QClipboard>
#include <QGuiApplication>
#include <QSignalSpy>
#include <QTest>
#include <QTreeWidget>

#include "narrative_panel.hpp"
#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/simulator.hpp"
#include "spillway/view/time_format.hpp"

using namespace spillway;
using namespace spillway::view;
using namespace spillway::console;

Q_DECLARE_METATYPE(spillway::view::NarrativeKind)

namespace {

NarrativeLine make(Micros at, Micros from, Micros to, std::size_t index, NarrativeKind kind,
                   std::string text) {
  NarrativeLine l;
  l.at = at;
  l.from = from;
  l.to = to;
  l.instanceIndex = index;
  l.instance = index == kNoInstance ? "" : "chat-72b-" + std::to_string(index + 1);
  l.kind = kind;
  l.text = std::move(text);
  return l;
}

std::vector<NarrativeLine> story() {
  return {make(seconds(300), seconds(285), seconds(1215), 2, NarrativeKind::FaultStart,
               "latency drift on chat-72b-3"),
          make(seconds(372), seconds(285), seconds(387), 2, NarrativeKind::Trip,
               "chat-72b-3 tripped OPEN — TTD 1m 12s"),
          make(seconds(1290), seconds(372), seconds(1400), 2, NarrativeKind::Restored,
               "chat-72b-3 back to full traffic"),
          make(seconds(2580), 0, seconds(2580), kNoInstance, NarrativeKind::Summary,
               "summary: 误伤 12.9 %")};
}

}  // namespace

class TstNarrativePanel : public QObject {
  Q_OBJECT

 private slots:
  void activateLine_data();
  void activateLine();
  void emptyShowsHint();
  void copyAsText();
  void wallClock();
  void fromAComparison();
};

void TstNarrativePanel::activateLine_data() {
  QTest::addColumn<int>("row");
  QTest::addColumn<bool>("byKey");
  QTest::newRow("click the trip") << 1 << false;
  QTest::newRow("click the summary") << 3 << false;
  QTest::newRow("Enter on the fault") << 0 << true;
  QTest::newRow("Enter on full traffic") << 2 << true;
}

// The signal carries the clicked line's own time, range and instance.
void TstNarrativePanel::activateLine() {
  QFETCH(int, row);
  QFETCH(bool, byKey);
  NarrativePanel panel;
  panel.resize(700, 300);
  panel.setLines(story());
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  QSignalSpy spy(&panel, &NarrativePanel::lineActivated);
  QTreeWidget* list = panel.list();
  QCOMPARE(list->topLevelItemCount(), 4);
  QTreeWidgetItem* item = list->topLevelItem(row);
  if (byKey) {
    list->setFocus();
    list->setCurrentItem(item);
    QTest::keyClick(list, Qt::Key_Return);
  } else {
    const QRect r = list->visualItemRect(item);
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, r.center());
  }
  QCOMPARE(spy.count(), 1);
  const NarrativeLine want = story()[static_cast<std::size_t>(row)];
  const QList<QVariant> args = spy.takeFirst();
  QCOMPARE(args.at(0).value<Micros>(), want.at);
  QCOMPARE(args.at(1).value<Micros>(), want.from);
  QCOMPARE(args.at(2).value<Micros>(), want.to);
  QCOMPARE(args.at(3).value<std::size_t>(), want.instanceIndex);
  // The time column reads as the CLI's.
  const bool summary = want.kind == NarrativeKind::Summary;
  QCOMPARE(item->text(0).toStdString(), summary ? "summary" : formatOffset(want.at));
  QCOMPARE("summary: " + item->text(1).toStdString(),
           summary ? want.text : "summary: " + want.text);
}

void TstNarrativePanel::emptyShowsHint() {
  NarrativePanel panel;
  panel.setLines(story());
  QVERIFY(panel.copyAction()->isEnabled());
  panel.setLines({});
  QCOMPARE(panel.list()->topLevelItemCount(), 0);
  QVERIFY(!panel.copyAction()->isEnabled());
}

// The clipboard gets exactly the CLI's text for the same lines.
void TstNarrativePanel::copyAsText() {
  NarrativePanel panel;
  panel.setLines(story());
  QGuiApplication::clipboard()->clear();
  panel.copyAction()->trigger();
  const QString copied = QGuiApplication::clipboard()->text();
  QCOMPARE(copied, QString::fromStdString(narrativeText(story())));
  QVERIFY(copied.contains("T+00:06:12  chat-72b-3 tripped OPEN — TTD 1m 12s\n"));
}

// A recording's narrative reads in wall-clock time.
void TstNarrativePanel::wallClock() {
  NarrativePanel panel;
  panel.setLines(story());
  panel.setClock(NarrativeClock{seconds(1718083440), true});  // 2024-06-11 05:24:00 UTC
  QCOMPARE(panel.list()->topLevelItem(1)->text(0), QString("05:30:12"));
  QVERIFY(panel.text().contains("05:30:12  chat-72b-3 tripped OPEN"));
}

// A simulated comparison as the window holds it: the protected run told, its opens against
// the baseline's would-opens, on the run's own axis.
void TstNarrativePanel::fromAComparison() {
  const sim::Scenario sc = sim::loadScenarioFile(SPILLWAY_RESOURCES_DIR "/scenarios/seed-000.yaml");
  Comparison c;
  c.mode = Mode::Simulation;
  for (RunResult* out : {&c.baseline, &c.protectedRun}) {
    VectorSink events;
    sim::SimOptions opt;
    opt.protection = out == &c.protectedRun;
    opt.events = &events;
    sim::Simulator s(sc, opt);
    s.run();
    out->report = s.report();
    out->events = std::move(events.events);
  }
  const Narrative n = narrativeOf(c, &sc);
  QVERIFY(!n.clock.wallOrigin);
  QCOMPARE(n.lines.size(),
           simulationNarrative(c.protectedRun.report, c.protectedRun.events, &sc).size());
  QVERIFY(c.baseline.report.wouldOpens > 0);
  const std::string opens = std::to_string(c.protectedRun.report.opens) + " breaker opens";
  const std::string would = std::to_string(c.baseline.report.wouldOpens) + " would-opens";
  QVERIFY(n.lines.back().text.find(opens) != std::string::npos);
  QVERIFY2(n.lines.back().text.find(would) != std::string::npos, n.lines.back().text.c_str());
  c.mode = Mode::Live;
  QVERIFY(narrativeOf(c, &sc).lines.empty());
}

QTEST_MAIN(TstNarrativePanel)
#include "tst_narrative_panel.moc"
