// Compare modes in the console (issue 24): the dialog runs the scenario being edited in four
// modes off the UI thread and shows the same rows `simulate --modes` prints, with the seed's
// figures under them; a second run replaces the first.
#include <QFile>
#include <QSignalSpy>
#include <QTableWidget>
#include <QtTest>

#include "modes_dialog.hpp"
#include "spillway/sim/scenario_yaml.hpp"

using namespace spillway;

class TstModesDialog : public QObject {
  Q_OBJECT

 private slots:
  void showsTheCliRows() {
    QFile f(SPILLWAY_RESOURCES_DIR "/scenarios/seed-001.yaml");
    QVERIFY(f.open(QIODevice::ReadOnly));
    sim::Scenario sc = sim::parseScenario(f.readAll().toStdString(), "seed-001.yaml");
    sc.duration = seconds(600);  // the faults, not the burst: a quicker run
    console::ModesDialog d;
    QSignalSpy done(&d, &console::ModesDialog::finished);
    d.run(sc, 1);
    QVERIFY(done.wait(60000));
    QTableWidget* t = d.table();
    QCOMPARE(t->columnCount(), 5);
    QCOMPARE(t->horizontalHeaderItem(1)->text(), QString("off"));
    QCOMPARE(t->horizontalHeaderItem(4)->text(), QString("all"));
    const sim::ModeRuns runs =
        sim::runModes(sc, sim::parseModes("off,limits,breaker+degrade,all"), 1, 1);
    const std::vector<sim::ModesRow> rows = sim::modesRows(runs, sc);
    // Row 0 is MTTR, row 1 its seed figures (seed 001 publishes one per mode).
    QCOMPARE(t->item(0, 0)->text().toStdString(), rows[0].kpi);
    for (int m = 0; m < 4; ++m) {
      QCOMPARE(t->item(0, m + 1)->text().toStdString(), rows[0].cells[m]);
      QCOMPARE(t->item(1, m + 1)->text().toStdString(), rows[0].seedFigures[m]);
    }
    QVERIFY(t->item(1, 0)->text().contains("seed figure"));
    QVERIFY(d.status().contains("1 seed"));
    // Again with two seeds: intervals.
    d.run(sc, 2);
    QVERIFY(done.wait(60000));
    QCOMPARE(t->item(2, 0)->text(), QString("SLA attainment (in-quota)"));
    QVERIFY(t->item(2, 4)->text().contains('['));
  }
};

QTEST_MAIN(TstModesDialog)
#include "tst_modes_dialog.moc"
