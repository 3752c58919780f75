// The export dialog, offscreen: each target's real format in the preview, validation off the
// UI thread naming the gaps and checking the requirements, the learned baseline reaching the
// exported slow threshold, and a bad requirement as a message.
#include <QApplication>
#include <QSignalSpy>
#include <QTest>

#include "export_dialog.hpp"
#include "spillway/app/resources.hpp"

using namespace spillway;
using namespace spillway::console;

class TstExportDialog : public QObject {
  Q_OBJECT

 private slots:
  void previewPerTarget_data();
  void previewPerTarget();
  void envoyGapIsNamed();
  void learnedBaselineReachesTheExport();
  void badRequirementIsAMessage();
};

namespace {
Policy seedPolicy() {
  return app::loadScenario("seed-000").policy;
}
}  // namespace

void TstExportDialog::previewPerTarget_data() {
  QTest::addColumn<QString>("target");
  QTest::addColumn<QString>("marker");  // a key only that target's format has
  QTest::newRow("resilience4j") << "resilience4j"
                                << "failureRateThreshold";
  QTest::newRow("envoy") << "envoy"
                         << "outlier_detection";
  QTest::newRow("istio") << "istio"
                         << "DestinationRule";
  QTest::newRow("sentinel") << "sentinel"
                            << "minRequestAmount";
  QTest::newRow("haproxy") << "haproxy"
                           << "backend";
  QTest::newRow("nginx") << "nginx"
                         << "max_fails";
  QTest::newRow("litellm") << "litellm"
                           << "router_settings";
}

void TstExportDialog::previewPerTarget() {
  QFETCH(QString, target);
  QFETCH(QString, marker);
  ExportDialog d(seedPolicy());
  QVERIFY(d.setTarget(target));
  QVERIFY2(d.exportText().contains(marker), qPrintable(d.exportText().left(400)));
  QVERIFY(!d.setTarget("nonexistent"));
}

void TstExportDialog::envoyGapIsNamed() {
  ExportDialog d(seedPolicy());
  QVERIFY(d.setTarget("envoy"));
  QSignalSpy done(&d, &ExportDialog::validated);
  d.setRequirements("ttd<=30s");
  d.validate();
  QVERIFY(done.wait(30000));
  QCOMPARE(done.first().first().toBool(), false);  // Envoy never ejects the slow instance
  const QString r = d.reportText();
  QVERIFY2(r.contains("no slow-call ejection") && r.contains("chat-72b-3"), qPrintable(r));
  QVERIFY2(r.contains("FAIL ttd<=30s"), qPrintable(r));
}

// Before validation no baseline is known and no fixed slow threshold is exported; after it,
// Resilience4j gets slowCallDurationThreshold from the learned P99.
void TstExportDialog::learnedBaselineReachesTheExport() {
  ExportDialog d(seedPolicy());
  QVERIFY(d.setTarget("resilience4j"));
  const QString before = d.exportText();
  QSignalSpy done(&d, &ExportDialog::validated);
  d.setRequirements("fp<=1");
  d.validate();
  QVERIFY(done.wait(30000));
  QVERIFY2(d.exportText().contains("slowCallDurationThreshold"), qPrintable(d.exportText()));
  QVERIFY(d.exportText() != before);
}

void TstExportDialog::badRequirementIsAMessage() {
  ExportDialog d(seedPolicy());
  QSignalSpy failed(&d, &ExportDialog::failed);
  d.setRequirements("latency<=1s");
  d.validate();
  QCOMPARE(failed.count(), 1);
  QVERIFY2(d.reportText().contains("latency<=1s"), qPrintable(d.reportText()));
}

QTEST_MAIN(TstExportDialog)
#include "tst_export_dialog.moc"
