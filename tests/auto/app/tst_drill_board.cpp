// The drill board (issue 24): the trend model groups stored runs by runbook, oldest first,
// with each expectation's measured values, bound and verdict; the board in the library dock
// draws one plot per expectation from a real library, failed runs marked.
#include <qcustomplot.h>
#include <QListWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "drill_board.hpp"
#include "library_panel.hpp"
#include "spillway/library/library.hpp"
#include "spillway/view/drill_trend.hpp"

using namespace spillway;

namespace {

std::string result(double availability, bool passed, const char* extraCheck = "") {
  return std::string(R"({"runbook":"hang","checks":[{"kpi":"availability","min":0.9,"max":null,)") +
         R"("measured":)" + std::to_string(availability) + R"(,"passed":)" +
         (passed ? "true" : "false") + "}" + extraCheck + "]}";
}

// A check over several seeds, as drill --json writes it: its interval and verdict.
std::string seededResult(double mean, double lo, double hi, const char* verdict) {
  const bool passed = std::string(verdict) == "pass";
  return std::string(R"({"runbook":"hang","checks":[{"kpi":"availability","min":0.9,"max":null,)") +
         R"("measured":)" + std::to_string(mean) + R"(,"passed":)" + (passed ? "true" : "false") +
         R"(,"verdict":")" + verdict + R"(","interval":{"lo":)" + std::to_string(lo) + R"(,"hi":)" +
         std::to_string(hi) + R"(,"n":10},"straddles":)" +
         (std::string(verdict) == "unsure" ? "true" : "false") + "}]}";
}

}  // namespace

class TstDrillBoard : public QObject {
  Q_OBJECT

 private slots:
  void trendsGroupAndOrderRuns() {
    std::vector<view::DrillRunRow> rows = {
        {7, "hang", 2, "1.0", "", result(0.85, false), false},
        {3, "hang", 1, "1.0", "", result(0.95, true), true},
        {5, "burst", 1, "1.0", "", "not json", false},
        {9, "hang", 2, "1.0", "",
         result(
             0.97, true,
             R"(,{"kpi":"recovery_after_fault_s","min":null,"max":90,"measured":null,"passed":false})"),
         false},
    };
    const std::vector<view::DrillTrend> t = view::drillTrends(rows);
    QCOMPARE(t.size(), std::size_t(2));
    QCOMPARE(t[0].runbook, std::string("burst"));
    QCOMPARE(t[0].runs, std::size_t(1));
    QVERIFY(t[0].kpis.empty());  // unreadable result: a run with nothing measured
    const view::DrillTrend& hang = t[1];
    QCOMPARE(hang.runs, std::size_t(3));
    QCOMPARE(hang.passedRuns, std::size_t(1));
    QCOMPARE(hang.kpis.size(), std::size_t(2));
    const view::DrillKpiTrend& a = hang.kpis[0];
    QCOMPARE(a.kpi, std::string("availability"));
    QCOMPARE(a.points.size(), std::size_t(3));
    QCOMPARE(a.points[0].run, std::int64_t(3));  // oldest first, whatever the input order
    QCOMPARE(a.points[1].run, std::int64_t(7));
    QVERIFY(!a.points[1].passed);
    QCOMPARE(*a.min, 0.9);
    QVERIFY(!a.max);
    const view::DrillKpiTrend& r = hang.kpis[1];
    QCOMPARE(r.points.size(), std::size_t(1));
    QVERIFY(!r.points[0].measured);
    QCOMPARE(*r.max, 90.0);
  }

  void boardDrawsTheLibrarysRuns() {
    QTemporaryDir dir;
    const QString path = dir.filePath("lib.db");
    {
      library::Library lib(path.toStdString());
      lib.saveDrillRun({0, "hang", 1, "1.0", "p", result(0.95, true), "", true});
      lib.saveDrillRun({0, "hang", 2, "1.0", "p", result(0.80, false), "", false});
      lib.saveDrillRun({0, "hang", 2, "1.0", "p", result(0.96, true), "", true});
    }
    console::LibraryPanel panel;
    QVERIFY(panel.openLibrary(path, false));
    std::unique_ptr<console::DrillBoard> board(panel.openDrillBoard());
    QCOMPARE(board->runbooks()->count(), 1);
    QVERIFY(board->runbooks()->item(0)->text().contains("2/3 passed"));
    QCOMPARE(board->plotCount(), 1);
    QCustomPlot* p = board->plot(0);
    QCOMPARE(p->graph(0)->data()->size(), 3);  // every run's measured value
    QCOMPARE(p->graph(1)->data()->size(), 1);  // the run that broke it, in red
    QCOMPARE(p->graph(1)->data()->at(0)->value, 0.80);
    QCOMPARE(p->itemCount(), 1);  // the bound
  }

  // Runs over several seeds carry their interval: a bar per run that has one, and a run whose
  // interval crossed the bound (UNSURE) in amber, apart from the runs that broke it.
  void boardDrawsIntervalsAndUnsureRuns() {
    std::vector<view::DrillRunRow> rows = {
        {1, "hang", 2, "1.0", "", seededResult(0.95, 0.93, 0.97, "pass"), true},
        {2, "hang", 2, "1.0", "", seededResult(0.91, 0.87, 0.95, "unsure"), false},
        {3, "hang", 2, "1.0", "", seededResult(0.80, 0.75, 0.85, "fail"), false},
        {4, "hang", 1, "1.0", "", result(0.96, true), true},
    };
    const std::vector<view::DrillTrend> t = view::drillTrends(rows);
    QCOMPARE(t.size(), std::size_t(1));
    const std::vector<view::DrillPoint>& pts = t[0].kpis[0].points;
    QCOMPARE(*pts[1].lo, 0.87);
    QCOMPARE(*pts[1].hi, 0.95);
    QVERIFY(pts[1].unsure && !pts[1].passed);
    QVERIFY(!pts[2].unsure && !pts[2].passed);
    QVERIFY(!pts[3].lo && !pts[3].unsure);  // one seed: no interval
    console::DrillBoard board(t);
    QCustomPlot* p = board.plot(0);
    QCOMPARE(p->graph(0)->data()->size(), 4);
    QCOMPARE(p->graph(1)->data()->size(), 1);  // broke it: red
    QCOMPARE(p->graph(1)->data()->at(0)->value, 0.80);
    QCOMPARE(p->graph(2)->data()->size(), 1);  // its seeds could not tell: amber
    QCOMPARE(p->graph(2)->data()->at(0)->value, 0.91);
    QCOMPARE(p->graph(3)->data()->size(), 3);  // the runs with an interval carry a bar
    QCPErrorBars* bars = nullptr;
    for (int i = 0; i < p->plottableCount(); ++i)
      if (auto* b = qobject_cast<QCPErrorBars*>(p->plottable(i))) bars = b;
    QVERIFY(bars);
    QCOMPARE(bars->data()->size(), 3);
    QCOMPARE(bars->data()->at(1).errorMinus, 0.91 - 0.87);
    QVERIFY(p->yAxis->range().lower < 0.75);  // the widest bar is in view
  }

  void emptyLibrarySaysHow() {
    QTemporaryDir dir;
    console::LibraryPanel panel;
    QVERIFY(panel.openLibrary(dir.filePath("lib.db"), true));
    std::unique_ptr<console::DrillBoard> board(panel.openDrillBoard());
    QCOMPARE(board->runbooks()->count(), 0);
    QVERIFY(board->summary().contains("spillway-cli drill"));
  }
};

QTEST_MAIN(TstDrillBoard)
#include "tst_drill_board.moc"
