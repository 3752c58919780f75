// The export dialog, offscreen: each target's real format in the preview, validation off the
// UI thread naming the gaps and checking the requirements with the verdict on top, the learned
// baseline in the export before validation and the text unchanged by it, notes grouped, the
// review bundle's files and its report rendered before it is written, and bad input as a
// message.
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

#include "export_dialog.hpp"
#include "spillway/app/resources.hpp"
#include "spillway/policy_yaml.hpp"

using namespace spillway;
using namespace spillway::console;

class TstExportDialog : public QObject {
  Q_OBJECT

 private slots:
  void previewPerTarget_data();
  void previewPerTarget();
  void envoyGapIsNamed();
  void learnedBaselineReachesTheExport();
  void exportTextIndependentOfValidation();
  void bundleHoldsTheValidation();
  void bundleIntoBadDirIsAMessage();
  void unreadableTraceIsAMessage();
  void badRequirementIsAMessage();
};

namespace {
Policy seedPolicy() {
  return app::loadScenario("seed-000").policy;
}

// The preview is exported once the incident is learned (a native replay on a worker).
bool waitReady(ExportDialog& d) {
  if (d.ready()) return true;
  QSignalSpy ready(&d, &ExportDialog::exportReady);
  return ready.wait(30000);
}

QString readText(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.readAll());
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
  QVERIFY(waitReady(d));
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
  // The verdict first, the notes grouped below it.
  QVERIFY2(r.startsWith("FAIL: the envoy export does not meet ttd<=30s on seed000-sample\n  "
                        "ttd<=30s: inf (chat-72b-3 on seed000-sample (never detected))\n"),
           qPrintable(r));
  const auto at = [&](const char* s) { return r.indexOf(s); };
  QVERIFY(at("Dropped — the target cannot express it") > at("Requirements:"));
  QVERIFY(at("Approximated (") > at("Dropped — the target cannot express it"));
  QVERIFY(at("Exact (") > at("Approximated ("));
  QVERIFY(r.contains("  x Envoy has no slow-call ejection"));
}

// The learned P99 reaches Resilience4j's slowCallDurationThreshold as soon as the incident is
// learned: before any validation.
void TstExportDialog::learnedBaselineReachesTheExport() {
  ExportDialog d(seedPolicy());
  QVERIFY(d.exportText().isEmpty());  // nothing shown that would change
  QVERIFY(waitReady(d));
  QVERIFY(d.setTarget("resilience4j"));
  QVERIFY2(d.exportText().contains("slowCallDurationThreshold: 6218ms"),
           qPrintable(d.exportText()));
}

// Validate replays the previewed text and leaves it as it is (issue 23: it used to re-export
// with what the replay learned and mix in the trace's instances).
void TstExportDialog::exportTextIndependentOfValidation() {
  for (const char* target : {"nginx", "haproxy", "envoy", "resilience4j"}) {
    ExportDialog d(seedPolicy());
    QVERIFY(waitReady(d));
    QVERIFY(d.setTarget(target));
    const QString before = d.exportText();
    QSignalSpy done(&d, &ExportDialog::validated);
    d.setRequirements("fp<=1");
    d.validate();
    QVERIFY(done.wait(30000));
    QCOMPARE(d.exportText(), before);
    QTemporaryDir tmp;
    const QStringList files = d.exportBundle(tmp.path());
    QCOMPARE(files.size(), 3);
    QCOMPARE(readText(files[1]), before);  // what was validated is what is shown
  }
}

// Export bundle…: policy.yaml (header, loads back), the native file with its TODO markers, and
// validation.md whose verdict is the dialog's and whose sections are all there.
void TstExportDialog::bundleHoldsTheValidation() {
  Policy tuned = seedPolicy();
  tuned.name = "seed-000-tuned";
  tuned.breaker.trip.slowRate = 0.45;
  ExportDialog d(tuned);
  QCOMPARE(d.exportBundle(QDir::tempPath()), QStringList());  // nothing validated yet
  d.setProvenance("scenario seed-000 (console)", seedPolicy(), "the scenario's policy");
  QVERIFY(d.setTarget("nginx"));
  QSignalSpy done(&d, &ExportDialog::validated);
  d.setRequirements("fp<=1,opens<=1000");
  d.validate();
  QVERIFY(done.wait(30000));
  QCOMPARE(done.first().first().toBool(), true);
  QTemporaryDir tmp;
  const QString dir = tmp.filePath("bundle");
  const QStringList files = d.exportBundle(dir);
  QCOMPARE(files,
           QStringList({dir + "/policy.yaml", dir + "/upstreams.conf", dir + "/validation.md"}));
  const QString yaml = readText(files[0]);
  QVERIFY2(yaml.contains("# Source: scenario seed-000 (console)\n") &&
               yaml.contains("# Changed vs the scenario's policy:\n") &&
               yaml.contains("\u2192 0.45\n") && yaml.contains("slow_rate: 0.45\n"),
           qPrintable(yaml));
  QCOMPARE(parsePolicy(yaml.toStdString(), "policy.yaml").breaker.trip.slowRate, 0.45);
  QVERIFY(readText(files[1]).contains("TODO: address"));
  const QString md = readText(files[2]);
  QVERIFY2(md.contains("\n**PASS**: the nginx export meets fp<=1,opens<=1000 on seed000-sample"),
           qPrintable(md));
  for (const char* section : {"## Targets", "## Files", "## KPIs on seed000-sample",
                              "## Mapping notes", "## Incidents used", "## Provenance"})
    QVERIFY2(md.contains(section), section);
  QVERIFY(md.contains("before: 'seed-000-default' (native)"));
  QVERIFY(d.reportText().contains("Bundle written: " + files.join(", ")));
  const QList<QLabel*> labels = d.findChildren<QLabel*>();
  QVERIFY(std::any_of(labels.begin(), labels.end(), [&](const QLabel* l) {
    return !l->isHidden() && l->text() == "Bundle written to " + dir;
  }));  // said beside the buttons, whichever tab is shown
  // The Review report tab showed the same validation.md before it was written.
  QCOMPARE(d.reportMarkdown(), md);
  QVERIFY(d.setTarget("envoy"));  // another target's report is not this one
  QVERIFY(d.reportMarkdown().isEmpty());
}

void TstExportDialog::bundleIntoBadDirIsAMessage() {
  ExportDialog d(seedPolicy());
  QSignalSpy done(&d, &ExportDialog::validated);
  d.setRequirements("fp<=1");
  d.validate();  // before the incident is learned: it runs once the preview is there
  QVERIFY(done.wait(30000));
  QSignalSpy failed(&d, &ExportDialog::failed);
  const QString bad = "/nonexistent-spillway-dir/bundle";
  QCOMPARE(d.exportBundle(bad), QStringList());
  QCOMPARE(failed.count(), 1);
  QVERIFY2(failed.first().first().toString().startsWith(bad + ": bundle: cannot create"),
           qPrintable(failed.first().first().toString()));
}

// A trace that cannot be read: a message naming it, and no export shown as if it were learned.
void TstExportDialog::unreadableTraceIsAMessage() {
  ExportDialog d(seedPolicy());
  QVERIFY(waitReady(d));
  QSignalSpy failed(&d, &ExportDialog::failed);
  d.setTrace("/nonexistent/incident.jsonl");
  QVERIFY(failed.wait(30000));
  QVERIFY2(failed.first().first().toString().contains("/nonexistent/incident.jsonl"),
           qPrintable(failed.first().first().toString()));
  QVERIFY(!d.ready());
  QVERIFY(d.exportText().isEmpty());
  QCOMPARE(d.exportBundle(QDir::tempPath()), QStringList());
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
