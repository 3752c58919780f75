// The console's tuning and reading tools, offscreen, on one seed-000 run: swimlanes follow the
// tiles' hide/show, the crosshair reads the focused instance's values, "would open" marks of
// the unprotected run, the previous policy's ghost after a what-if, sliders drive spin boxes,
// a per-model override writes only what differs, the scenario panel's edits reach the
// simulator (and bad ones are a message), and the dark theme reaches the plots.
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>

#include <cmath>

#include "instance_tiles.hpp"
#include "main_window.hpp"
#include "policy_editor.hpp"
#include "scenario_panel.hpp"
#include "spillway/policy_yaml.hpp"
#include "timeline_plot.hpp"

using namespace spillway;
using namespace spillway::console;

class TstConsoleTuning : public QObject {
  Q_OBJECT
  std::unique_ptr<MainWindow> w_;
  std::unique_ptr<QSignalSpy> shown_;

  bool waitRun() { return shown_->wait(60000); }

 private slots:
  void initTestCase();
  void lanesFollowVisibility();
  void crosshairReadsValues();
  void wouldOpenMarks();
  void sliderDrivesSpinBox();
  void modelOverrideWritesOnlyTheDifference();
  void everyControlRoundTrips();
  void previousPolicyGhost();
  void scenarioEditsReachTheRun();
  void badFaultIsAMessage();
  void darkThemeReachesPlots();
  void cleanupTestCase() { w_.reset(); }
};

void TstConsoleTuning::initTestCase() {
  QApplication::setApplicationName("spillway-test-tuning");
  w_ = std::make_unique<MainWindow>();
  w_->show();
  shown_ = std::make_unique<QSignalSpy>(w_.get(), &MainWindow::runShown);
  QVERIFY(w_->runScenario("seed-000"));
  QVERIFY(waitRun());
}

void TstConsoleTuning::lanesFollowVisibility() {
  const int n = static_cast<int>(w_->current()->protectedRun.timeline.instances().size());
  QCOMPARE(w_->plot()->laneCount(), n);
  QSignalSpy changed(w_->tiles(), &InstanceTiles::visibilityChanged);
  const TimelinePlot* plot = w_->plot();
  const int rereads = plot->rereads(), recomputes = plot->recomputes(), created = plot->created();
  // A lane hidden and shown again: two recomputes (each coalesced, on the next event-loop
  // turn), no re-read, and the bands shown again are the ones hidden: nothing created.
  w_->tiles()->setHidden(0, true);
  QCOMPARE(changed.count(), 1);
  QTRY_COMPARE(plot->laneCount(), n - 1);
  QCOMPARE(plot->recomputes(), recomputes + 1);
  w_->tiles()->setHidden(0, true);  // no change, no signal
  QCOMPARE(changed.count(), 1);
  w_->tiles()->setHidden(0, false);
  QTRY_COMPARE(plot->laneCount(), n);
  QCOMPARE(changed.count(), 2);
  QCOMPARE(plot->recomputes(), recomputes + 2);
  QCOMPARE(plot->rereads(), rereads);
  QCOMPARE(plot->created(), created);
}

// The readout at t shows the focused instance's error rate of the tick at or before t.
void TstConsoleTuning::crosshairReadsValues() {
  const auto& tl = w_->current()->protectedRun.timeline;
  const auto& it = tl.instances()[w_->tiles()->selected()];
  std::size_t k = 0;  // a tick with a clearly non-zero slow rate
  for (std::size_t j = 0; j < it.t.size(); ++j)
    if (it.slowRate[j] > 0.3) {
      k = j;
      break;
    }
  QVERIFY(k > 0);
  w_->plot()->setCrosshair(it.t[k] + 0.01);
  const QString text = w_->plot()->crosshairText();
  const QString want = QString("slow rate %1 %").arg(it.slowRate[k] * 100, 0, 'f', 1);
  QVERIFY2(text.contains(want), qPrintable(text + " | want " + want));
  QVERIFY2(text.contains("p99 "), qPrintable(text));
  QVERIFY2(text.contains("answers "), qPrintable(text));
}

// With protection off the policy only watches: where it would have opened is marked.
void TstConsoleTuning::wouldOpenMarks() {
  int want = 0;
  for (const auto& it : w_->current()->baseline.timeline.instances())
    for (const auto& m : it.markers) want += m.kind == view::Marker::Kind::WouldOpen;
  QVERIFY(want > 0);
  QCOMPARE(w_->plot()->wouldOpenMarks(), want);
}

void TstConsoleTuning::sliderDrivesSpinBox() {
  PolicyEditor* e = w_->policyEditor();
  QSlider* s = e->slider("trip.error_rate");
  QDoubleSpinBox* box = e->control("trip.error_rate");
  QVERIFY(s && box);
  QSignalSpy edited(e, &PolicyEditor::policyEdited);
  s->setValue(s->maximum());
  QCOMPARE(box->value(), box->maximum());
  QCOMPARE(edited.count(), 1);
  QCOMPARE(e->policy().breaker.trip.errorRate, box->maximum());
  // Log-scaled: the middle of "open for" (0.1 s … 600 s) is ~7.7 s, not ~300 s.
  QSlider* open = e->slider("open.duration");
  open->setValue(open->maximum() / 2);
  QVERIFY2(e->control("open.duration")->value() < 10,
           qPrintable(QString::number(e->control("open.duration")->value())));
  box->setValue(0.5);  // the spin box moves the slider back
  QCOMPARE(s->value(), static_cast<int>(std::lround((0.5 - 0.01) / 0.99 * 1000)));
  QVERIFY(waitRun());  // the coalesced what-if of these edits
}

void TstConsoleTuning::modelOverrideWritesOnlyTheDifference() {
  PolicyEditor* e = w_->policyEditor();
  const double defaultSlow = e->policy().breaker.trip.slowRate;
  e->setScope("chat-32b");
  QCOMPARE(e->scope(), QString("chat-32b"));
  QSignalSpy edited(e, &PolicyEditor::policyEdited);
  e->control("trip.slow_rate")->setValue(0.9);
  QCOMPARE(edited.count(), 1);
  const Policy& p = e->policy();
  QCOMPARE(p.breaker.trip.slowRate, defaultSlow);  // the default is untouched
  QVERIFY(p.modelOverrides.count("chat-32b"));
  const BreakerOverride& o = p.modelOverrides.at("chat-32b");
  QCOMPARE(o.trip.slowRate, std::optional<double>(0.9));
  QVERIFY(!o.trip.errorRate);  // only what differs
  QVERIFY(!o.window.length);
  QCOMPARE(resolveBreaker(p, "chat-32b", {}).trip.slowRate, 0.9);
  QCOMPARE(resolveBreaker(p, "chat-72b", {}).trip.slowRate, defaultSlow);
  // The override survives a save and load.
  const Policy back = parsePolicy(policyToYaml(p), "<test>");
  QCOMPARE(resolveBreaker(back, "chat-32b", {}).trip.slowRate, 0.9);
  // Setting it back to the default drops the override.
  e->control("trip.slow_rate")->setValue(defaultSlow);
  QVERIFY(!e->policy().modelOverrides.count("chat-32b"));
  e->setScope({});
  QVERIFY(waitRun());
}

// Each control reaches the policy: a value set in the editor survives policy → YAML → policy
// → editor. (A control not wired to the policy would come back as its old value.)
void TstConsoleTuning::everyControlRoundTrips() {
  PolicyEditor e;
  Policy start = w_->policyEditor()->policy();
  e.setPolicy(start);
  const auto boxes = e.findChildren<QDoubleSpinBox*>();
  QVERIFY(boxes.size() >= 20);
  for (QDoubleSpinBox* box : boxes) {
    if (!box->isEnabled()) continue;  // degrade rows without a degrade section
    const double want =
        box->value() == box->minimum() ? box->minimum() + 2 * box->singleStep() : box->minimum();
    box->setValue(want);
    const double shown = box->value();  // rounded to the box's decimals
    PolicyEditor back;
    back.setPolicy(parsePolicy(policyToYaml(e.policy()), "<roundtrip>"));
    QCOMPARE(back.control(box->objectName())->value(), shown);
    box->setValue(e.control(box->objectName())->value());  // keep it (constraints may clamp)
  }
  for (const char* key :
       {"degrade.cache", "degrade.lock", "degrade.non_critical_backups", "degrade.truncate_tail",
        "degrade.cheaper_non_core", "degrade.cheaper_simple"}) {
    QCheckBox* c = e.check(key);
    QVERIFY(c);
    if (!c->isEnabled()) continue;
    c->setChecked(!c->isChecked());
    PolicyEditor back;
    back.setPolicy(parsePolicy(policyToYaml(e.policy()), "<roundtrip>"));
    QCOMPARE(back.check(key)->isChecked(), c->isChecked());
  }
}

void TstConsoleTuning::previousPolicyGhost() {
  QVERIFY(w_->previous());
  QCPGraph* ghost = w_->plot()->graphNamed("previous policy (dashed)");
  QVERIFY(ghost);
  QCOMPARE(ghost->pen().style(), Qt::DashLine);
  QVERIFY(ghost->data()->size() > 1000);
}

// Seed, duration, load and the fault list all reach the simulator.
void TstConsoleTuning::scenarioEditsReachTheRun() {
  ScenarioPanel* panel = w_->scenarioPanel();
  const int faults = panel->faultTable()->rowCount();
  QCOMPARE(faults, 7);  // leak, recover, errors at 28m, outage at 34m, 3 benign events
  panel->durationBox()->setValue(25);
  panel->loadBox()->setValue(1.5);
  panel->seedBox()->setValue(7);
  panel->removeFault(faults - 1);  // the benign hiccup at 31m
  QString error;
  QVERIFY(!w_->runEdited(&error));  // the 28m fault now starts after the end
  QVERIFY2(error.contains("scenario panel:3: start"), qPrintable(error));
  panel->removeFault(3);  // the outage at 34m
  panel->removeFault(2);  // the errors at 28m
  const sim::Scenario edited = panel->edited();
  QCOMPARE(edited.duration, seconds(1500));
  QCOMPARE(edited.seed, std::uint64_t{7});
  QCOMPARE(static_cast<int>(edited.faults.size()), faults - 3);
  QVERIFY2(w_->runEdited(&error), qPrintable(error));
  QVERIFY(waitRun());
  const auto& report = w_->current()->protectedRun.report;
  QVERIFY(report.simulated >= seconds(1500) && report.simulated < seconds(1800));
  std::size_t injected = 0;  // a recover ends faults, it is not one
  for (const auto& f : edited.faults) injected += f.kind != sim::FaultKind::Recover;
  QCOMPARE(w_->current()->baseline.report.faults.size(), injected);
  // 1.5× the load: the originals follow the scaled rates (sessions and shapes aside).
  double rate = 0;
  for (const auto& c : edited.clients) rate += c.rate;
  QVERIFY2(report.originals > 0.8 * rate * 1500, qPrintable(QString::number(report.originals)));
}

void TstConsoleTuning::badFaultIsAMessage() {
  ScenarioPanel* panel = w_->scenarioPanel();
  sim::FaultSpec f;
  f.kind = sim::FaultKind::Errors;
  f.target = "chat-72b-1";
  f.at = seconds(3600);  // after the 25-minute end
  panel->addFault(f);
  const auto before = w_->current();
  QString error;
  QVERIFY(!w_->runEdited(&error));
  QVERIFY2(error.contains("start") && error.contains("scenario panel"), qPrintable(error));
  QCOMPARE(w_->current(), before);  // nothing shown is lost
  panel->removeFault(panel->faultTable()->rowCount() - 1);
}

void TstConsoleTuning::darkThemeReachesPlots() {
  w_->setTheme(MainWindow::Theme::Dark);
  QCoreApplication::processEvents();
  const QColor bg = w_->plot()->axisRect(1)->backgroundBrush().color();
  QVERIFY2(bg.lightness() < 80, qPrintable(bg.name()));
  w_->setTheme(MainWindow::Theme::Light);
  QCoreApplication::processEvents();
  QVERIFY(w_->plot()->axisRect(1)->backgroundBrush().color().lightness() > 200);
  w_->setTheme(MainWindow::Theme::System);
}

QTEST_MAIN(TstConsoleTuning)
#include "tst_console_tuning.moc"
