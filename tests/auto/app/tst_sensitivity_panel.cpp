// The sensitivity panel (issue 23): compute() runs off the UI thread and computed() brings one
// pair of bars per parameter and chart; a newer request supersedes a stale one, whose result
// never reaches the screen.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <qcustomplot.h>

#include "sensitivity_panel.hpp"
#include "spillway/library/library.hpp"
#include "spillway/policy_params.hpp"
#include "spillway/sim/scenario_yaml.hpp"

using namespace spillway;
using namespace spillway::console;

namespace {

sim::Scenario seed000() {
  return sim::loadScenarioFile(SPILLWAY_RESOURCES_DIR "/scenarios/seed-000.yaml");
}

std::size_t stepsOf(const view::Sensitivity& s) {
  std::size_t n = 0;
  for (const view::SensitivityRow& r : s.rows) n += r.down.has_value() + r.up.has_value();
  return n;
}

}  // namespace

class TestSensitivityPanel : public QObject {
  Q_OBJECT
 private slots:
  void computeDrawsTwoBarsPerRow();
  void newerRequestWins();
  void libraryIncidentReplays();
  void aStepThatMissesIsWorse();
};

// A step whose mean TTD is shorter only because it no longer opens on one fault: its TTD bar
// is the red "misses" bar at the worse edge, not a shorter (better-looking) blue one.
void TestSensitivityPanel::aStepThatMissesIsWorse() {
  view::Sensitivity s;
  s.source = "crafted";
  s.current = {0.02, 20.0, 0.99, 0};
  view::SensitivityRow row;
  row.key = "trip.slow_rate";
  row.unit = "share";
  row.current = 0.5;
  view::SensitivityStep down, up;
  down.value = 0.4;
  down.ttdSeconds = 4.0;  // slower
  up.value = 0.6;
  up.ttdSeconds = -12.0;  // "faster": the slow fault it used to catch is gone from the mean
  up.missed = 1;
  row.down = down;
  row.up = up;
  s.rows = {row};
  SensitivityPanel panel;
  panel.resize(1000, 400);
  panel.display(s);
  auto* ttdDown = static_cast<QCPBars*>(panel.ttdPlot()->plottable(0));
  auto* ttdUp = static_cast<QCPBars*>(panel.ttdPlot()->plottable(1));
  auto* missed = static_cast<QCPBars*>(panel.ttdPlot()->plottable(2));
  QCOMPARE(ttdDown->dataCount(), 1);
  QCOMPARE(ttdUp->dataCount(), 0);
  QCOMPARE(missed->dataCount(), 1);
  QVERIFY(missed->data()->constBegin()->value > 0);  // worse: right of zero
  QCOMPARE(missed->data()->constBegin()->value, panel.ttdPlot()->xAxis->range().upper);
  QCOMPARE(panel.barCount(), 4);
  const QString label =
      panel.falsePositivePlot()->yAxis->ticker().dynamicCast<QCPAxisTickerText>()->ticks().value(
          1.0);
  QVERIFY2(label.contains("misses a real fault"), qPrintable(label));
}

void TestSensitivityPanel::computeDrawsTwoBarsPerRow() {
  SensitivityPanel panel;
  panel.resize(1280, 600);
  QSignalSpy computed(&panel, &SensitivityPanel::computed);
  QSignalSpy progress(&panel, &SensitivityPanel::progress);
  QCOMPARE(panel.result(), nullptr);
  const sim::Scenario sc = seed000();
  panel.compute(sc, sc.policy);
  QVERIFY(panel.running());
  QVERIFY(computed.wait(120000));
  QCOMPARE(computed.count(), 1);
  QVERIFY(!panel.running());
  QVERIFY(!progress.isEmpty());
  QCOMPARE(progress.last().at(0).toInt(), 100);
  const view::Sensitivity* s = panel.result();
  QVERIFY(s);
  qInfo("%s", qPrintable(panel.statusText()));
  // For docs/img: SPILLWAY_SCREENSHOT_DIR=DIR keeps what the panel drew.
  if (const QString dir = qEnvironmentVariable("SPILLWAY_SCREENSHOT_DIR"); !dir.isEmpty())
    QVERIFY(panel.grab().save(dir + "/sensitivity-seed-000.png"));
  QCOMPARE(s->seeds, 3u);  // the panel's default: one seed is an anecdote
  QCOMPARE(s->runs, (s->rows.size() * 2 + 1) * 3);
  QCOMPARE(s->rows.size(), view::sensitivityKeys().size());
  // seed-000's policy sits on no edge of a valid range: every row steps both ways.
  QCOMPARE(stepsOf(*s), s->rows.size() * 2);
  QCOMPARE(panel.barCount(), static_cast<int>(s->rows.size() * 2 * 2));
  for (QCustomPlot* plot : {panel.falsePositivePlot(), panel.ttdPlot()}) {
    int bars = 0;  // the TTD chart's third series: steps that miss a real fault
    for (int i = 0; i < plot->plottableCount(); ++i)
      bars += plot->plottable(i)->interface1D()->dataCount();
    QCOMPARE(bars, static_cast<int>(s->rows.size() * 2));
  }
  QCOMPARE(panel.falsePositivePlot()->plottableCount(), 2);
  QCOMPARE(panel.ttdPlot()->plottableCount(), 3);
  // The top row is the largest impact, labelled with the values it stepped to.
  auto ticker = panel.falsePositivePlot()->yAxis->ticker().dynamicCast<QCPAxisTickerText>();
  QVERIFY(ticker);
  const QString top = ticker->ticks().value(static_cast<double>(s->rows.size()));
  QVERIFY2(top.startsWith(QString::fromStdString(s->rows.front().key)), qPrintable(top));
  QVERIFY2(top.contains(QString::fromStdString(
               view::formatParamValue(s->rows.front().up->value, s->rows.front().unit))),
           qPrintable(top));
  // The bar of the top row's step up is its Δ误伤.
  auto* fpUp = static_cast<QCPBars*>(panel.falsePositivePlot()->plottable(1));
  const double key = static_cast<double>(s->rows.size()) - 0.2;
  const auto it = fpUp->data()->findBegin(key - 1e-9, false);
  QVERIFY(it != fpUp->data()->constEnd());
  QCOMPARE(it->value, s->rows.front().up->falsePositivePp.value_or(0));
}

// Two requests in a row: the first is cancelled, only the second's result is shown.
void TestSensitivityPanel::newerRequestWins() {
  SensitivityPanel panel;
  QSignalSpy computed(&panel, &SensitivityPanel::computed);
  const sim::Scenario sc = seed000();
  Policy first = sc.policy, second = sc.policy;
  setBreakerParam(first.breaker, "trip.slow_rate", 0.2);
  setBreakerParam(second.breaker, "trip.slow_rate", 0.6);
  panel.compute(sc, first);
  panel.compute(sc, second);
  QCOMPARE(panel.started(), 2);
  QVERIFY(computed.wait(120000));
  QCOMPARE(computed.count(), 1);
  for (const view::SensitivityRow& r : panel.result()->rows)
    if (r.key == "trip.slow_rate") QCOMPARE(r.current, 0.6);
  // Nothing of the stale one arrives later.
  QTest::qWait(200);
  QCOMPARE(computed.count(), 1);
}

// A library incident: read on the worker and replayed through the sweep engine, one candidate
// per step; the current policy's 误伤 is what a plain replay of the incident gives.
void TestSensitivityPanel::libraryIncidentReplays() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("incidents.db").toStdString();
  const std::string trace = SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.jsonl";
  {
    library::Library lib(path);
    lib.importFile(trace, formats::Format::Jsonl, {}, "sample");
  }
  SensitivityPanel panel;
  QSignalSpy computed(&panel, &SensitivityPanel::computed);
  panel.computeIncident(QString::fromStdString(path), "sample", Policy{});
  QVERIFY(computed.wait(120000));
  const view::Sensitivity* s = panel.result();
  QVERIFY(!s->simulated);
  QCOMPARE(s->source, std::string("sample"));
  QCOMPARE(s->rows.size(), view::sensitivityKeys().size());
  QCOMPARE(panel.barCount(), static_cast<int>(stepsOf(*s) * 2));
  library::Library lib(path);
  auto src = lib.open("sample");
  const IncidentTrace incident =
      IncidentTrace::read([&](CallRecord& r) { return src->next(r); }, "sample", {});
  SweepScore base;
  base.add(replayIncident(Policy{}, incident));
  QCOMPARE(s->current.falsePositive, base.fpRateOrNa());
  QVERIFY(s->current.falsePositive.has_value());
}

QTEST_MAIN(TestSensitivityPanel)
#include "tst_sensitivity_panel.moc"
