// The console's policy workflow and navigation, offscreen on seed-000: the editor's policy
// survives a re-run and a scenario switch, undo / redo, "previous" is only what was let go
// (never a drag's intermediate value), a pinned reference and the Δ against it, headline badges
// against targets, the time axis' labels in both modes, the navigation keys with a spin box
// focused, the wheel over an unfocused slider, click-to-seek, box zoom and the zoom clamp, and
// the window at a laptop's 1280×800.
#include <QApplication>
#include <QDoubleSpinBox>
#include <QHeaderView>
#include <QLineEdit>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>
#include <QUndoStack>
#include <QWheelEvent>

#include "compare_dialog.hpp"
#include "headline_strip.hpp"
#include "instance_tiles.hpp"
#include "kpi_text.hpp"
#include "main_window.hpp"
#include "narrative_panel.hpp"
#include "policy_editor.hpp"
#include "sensitivity_panel.hpp"
#include "session.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/view/headline.hpp"
#include "spillway/view/time_format.hpp"
#include "timeline_plot.hpp"

using namespace spillway;
using namespace spillway::console;

class TstConsoleWorkflow : public QObject {
  Q_OBJECT
  std::unique_ptr<MainWindow> w_;
  std::unique_ptr<QSignalSpy> shown_;

  bool waitRun() { return shown_->wait(60000); }
  PolicyEditor* editor() { return w_->policyEditor(); }
  double slowRate() { return editor()->policy().breaker.trip.slowRate; }
  // The value a KPI row shows in a column, by its name.
  QString kpiCell(const QString& name, int column) {
    QTableWidget* t = w_->kpiTable();
    for (int r = 0; r < t->rowCount(); ++r)
      if (t->item(r, 0) && t->item(r, 0)->text() == name) return t->item(r, column)->text();
    return "(no row " + name + ")";
  }

 private slots:
  void initTestCase();
  void editsSurviveRunAndScenarioSwitch();
  void undoRedo();
  void previousIsOnlyTheReleasedValue();
  void pinnedReference();
  void headlineBadgesAgainstTargets();
  void axisTicksInBothTimeModes();
  void keysWorkWithASpinBoxFocused();
  void wheelOverUnfocusedSliderChangesNothing();
  void clickSeeks();
  void boxZoomAndClamp();
  void narrativeLineSeeksAndZooms();
  void saveWritesNameAndProvenance();
  void nWayCompare();
  void sensitivityTabComputesOnShow();
  void sessionRoundTrip();
  void badSessionIsAMessage_data();
  void badSessionIsAMessage();
  void fitsALaptopScreen();
  void policyNamesTheScenarioLacks();
  void cleanupTestCase() { w_.reset(); }
};

void TstConsoleWorkflow::initTestCase() {
  QApplication::setApplicationName("spillway-test-workflow");
  QSettings().clear();
  w_ = std::make_unique<MainWindow>();
  w_->show();
  QVERIFY(QTest::qWaitForWindowExposed(w_.get()));
  shown_ = std::make_unique<QSignalSpy>(w_.get(), &MainWindow::runShown);
  QVERIFY(w_->runScenario("seed-000"));
  QVERIFY(waitRun());
}

void TstConsoleWorkflow::editsSurviveRunAndScenarioSwitch() {
  const double own = slowRate();
  QVERIFY(!editor()->isModified());
  const double edited = own + 0.05;
  editor()->control("trip.slow_rate")->setValue(edited);
  QVERIFY(waitRun());
  QVERIFY(editor()->isModified());
  QVERIFY(editor()->displayName().endsWith('*'));
  QVERIFY2(w_->contextText().contains("trip.slow_rate"), qPrintable(w_->contextText()));
  // Run on the same scenario: the edit stays and is what runs.
  QVERIFY(w_->runScenario("seed-000"));
  QVERIFY(waitRun());
  QCOMPARE(slowRate(), edited);
  QVERIFY(!w_->stale());  // the shown run used the editor's policy
  // Another scenario: still the edited policy, until the user asks for the scenario's own.
  QVERIFY(w_->runScenario("seed-002"));
  QVERIFY(waitRun());
  QCOMPARE(slowRate(), edited);
  QVERIFY(w_->windowTitle().contains("seed-002"));
  QVERIFY(w_->useScenarioPolicy(false));
  QVERIFY(!editor()->isModified());
  QVERIFY(editor()->source().contains("seed-002"));
  QVERIFY(waitRun());
  QVERIFY(!w_->stale());
  // Back to seed-000: an unedited scenario policy follows the scenario.
  QVERIFY(w_->runScenario("seed-000"));
  QVERIFY(waitRun());
  QCOMPARE(slowRate(), own);
}

void TstConsoleWorkflow::undoRedo() {
  QUndoStack* undo = editor()->undoStack();
  const double a = slowRate();
  const int steps = undo->count();
  editor()->control("trip.slow_rate")->setValue(a + 0.1);
  editor()->control("trip.slow_rate")->setValue(a + 0.2);
  QCOMPARE(undo->count(), steps + 2);
  QSignalSpy edited(editor(), &PolicyEditor::policyEdited);
  undo->undo();
  QCOMPARE(slowRate(), a + 0.1);
  QCOMPARE(editor()->control("trip.slow_rate")->value(), a + 0.1);
  undo->undo();
  QCOMPARE(slowRate(), a);
  QVERIFY(!editor()->isModified());
  undo->redo();
  QCOMPARE(slowRate(), a + 0.1);
  QCOMPARE(edited.count(), 3);  // each step is an edit: the what-if follows
  editor()->revert();
  QCOMPARE(slowRate(), a);
  undo->undo();  // the revert itself is one step
  QCOMPARE(slowRate(), a + 0.1);
  editor()->revert();
  QVERIFY(waitRun());
}

// A drag previews every value it passes, but the comparison is with the policy before the
// drag began, and the next edit compares with the value let go.
void TstConsoleWorkflow::previousIsOnlyTheReleasedValue() {
  QTRY_VERIFY_WITH_TIMEOUT(!w_->stale(), 60000);
  const auto beforeDrag = w_->current();
  QSlider* s = editor()->slider("trip.slow_rate");
  s->setSliderDown(true);
  s->setValue(s->value() + 60);
  QVERIFY(waitRun());
  QCOMPARE(w_->previous(), beforeDrag);
  s->setValue(s->value() + 60);
  QVERIFY(waitRun());
  QCOMPARE(w_->previous(), beforeDrag);  // not the first step of the drag
  const int steps = editor()->undoStack()->count();
  s->setSliderDown(false);  // let go: one committed edit
  QCOMPARE(editor()->undoStack()->count(), steps + 1);
  QVERIFY(!w_->stale());  // the drag's last preview already is the released value's run
  const auto released = w_->current();
  QCOMPARE(w_->previous(), beforeDrag);
  editor()->control("trip.error_rate")->setValue(editor()->control("trip.error_rate")->value() / 2);
  QVERIFY(waitRun());
  QCOMPARE(w_->previous(), released);
}

void TstConsoleWorkflow::pinnedReference() {
  w_->pinReference();
  const auto a = w_->current();
  QCOMPARE(w_->reference(), a);
  QCOMPARE(w_->kpiTable()->horizontalHeaderItem(4)->text(), QString("Δ reference A"));
  for (double step : {0.1, 0.2}) {
    editor()
        ->control("trip.sustain")
        ->setValue(editor()->control("trip.sustain")->value() + step * 50);
    QVERIFY(waitRun());
    QCOMPARE(w_->previous(), a);  // every later run against A
  }
  const double want = *w_->current()->protectedRun.report.availability.value() -
                      *a->protectedRun.report.availability.value();
  QCOMPARE(kpiCell("availability", 4), kpiDelta(want, "share"));
  QVERIFY(w_->contextText().contains("reference"));
  w_->unpinReference();
  QVERIFY(!w_->reference());
  QCOMPARE(w_->kpiTable()->horizontalHeaderItem(4)->text(), QString("Δ previous policy"));
}

void TstConsoleWorkflow::headlineBadgesAgainstTargets() {
  HeadlineStrip* h = w_->headline();
  const double avail = *w_->current()->protectedRun.report.availability.value();
  const double fp = *w_->current()->protectedRun.report.falsePositive.value();
  view::HeadlineTargets t;
  t.bounds = {{"availability", avail - 0.001}, {"fp", fp / 2}};
  h->setTargets(t);
  QCOMPARE(h->badge("availability"), QString("PASS"));
  QCOMPARE(h->badge("fp"), fp > 0 ? QString("FAIL") : QString("PASS"));
  QCOMPARE(h->badge("ttd"), QString("—"));  // no target set
  QCOMPARE(h->valueText("availability"), kpiValue(avail, "share"));
  t.bounds = {{"availability", avail + 0.001}, {"fp", fp + 0.01}};
  h->setTargets(t);
  QCOMPARE(h->badge("availability"), QString("FAIL"));
  QCOMPARE(h->badge("fp"), QString("PASS"));
  // Kept for the next session.
  QCOMPARE(QSettings().value("targets/availability").toDouble(), avail + 0.001);
}

void TstConsoleWorkflow::axisTicksInBothTimeModes() {
  TimelinePlot* p = w_->plot();
  p->setTimeMode(TimeTicker::Mode::Offset, 0, true);
  p->replot();
  QStringList labels = p->tickLabels();
  QVERIFY(labels.size() >= 3);
  const QRegularExpression offset("^T\\+\\d\\d:\\d\\d:\\d\\d$");
  for (const QString& l : labels) QVERIFY2(offset.match(l).hasMatch(), qPrintable(l));
  const Micros origin = 1'700'000'000'000'000;  // 2023-11-14T22:13:20Z
  p->setTimeMode(TimeTicker::Mode::Clock, origin, true);
  p->replot();
  labels = p->tickLabels();
  const QRegularExpression clock("^\\d\\d:\\d\\d:\\d\\d$");
  for (const QString& l : labels) QVERIFY2(clock.match(l).hasMatch(), qPrintable(l));
  QCOMPARE(p->timeTicker().label(0), QString("22:13:20"));
  QCOMPARE(p->timeTicker().label(3600 + 61), QString("23:14:21"));
  p->setTimeMode(TimeTicker::Mode::Offset, 0, true);
  QCOMPARE(p->timeTicker().label(3723), QString("T+01:02:03"));
}

void TstConsoleWorkflow::keysWorkWithASpinBoxFocused() {
  QTRY_VERIFY_WITH_TIMEOUT(!w_->stale(), 60000);
  w_->activateWindow();
  QTRY_VERIFY(QApplication::activeWindow() == w_.get());
  QDoubleSpinBox* box = editor()->control("min_calls");
  box->setFocus();
  QTRY_VERIFY(box->hasFocus());
  const double value = box->value();
  w_->setCursorTime(seconds(100));
  QTest::keyClick(QApplication::focusWidget(), Qt::Key_Right);
  QCOMPARE(w_->cursorTime(), seconds(101));
  QTest::keyClick(QApplication::focusWidget(), Qt::Key_Right, Qt::ShiftModifier);
  QCOMPARE(w_->cursorTime(), seconds(111));
  QTest::keyClick(QApplication::focusWidget(), Qt::Key_Left, Qt::ControlModifier);
  QCOMPARE(w_->cursorTime(), seconds(51));
  QTest::keyClick(QApplication::focusWidget(), Qt::Key_End);
  QCOMPARE(w_->cursorTime(), w_->current()->protectedRun.timeline.end());
  QTest::keyClick(QApplication::focusWidget(), Qt::Key_Home);
  QCOMPARE(w_->cursorTime(), w_->current()->protectedRun.timeline.start());
  // N: the next transition or fault of the focused instance.
  const auto marks = w_->marks();
  QVERIFY(!marks.empty());
  QTest::keyClick(QApplication::focusWidget(), Qt::Key_N);
  QCOMPARE(w_->cursorTime(), marks.front());
  QCOMPARE(box->value(), value);  // the keys never reached the spin box
  // Typing in it (a digit starts that): now the arrows move the text cursor, not time.
  w_->setCursorTime(seconds(100));
  QTest::keyClick(QApplication::focusWidget(), Qt::Key_5);
  QVERIFY(box->findChild<QLineEdit*>()->isModified());
  QTest::keyClick(QApplication::focusWidget(), Qt::Key_Left);
  QTest::keyClick(QApplication::focusWidget(), Qt::Key_Home);
  QCOMPARE(w_->cursorTime(), seconds(100));
  box->setValue(value);
  QVERIFY(!box->findChild<QLineEdit*>()->isModified());
  QTRY_VERIFY_WITH_TIMEOUT(!w_->stale(), 60000);
}

void TstConsoleWorkflow::wheelOverUnfocusedSliderChangesNothing() {
  QSlider* s = editor()->slider("window.length");
  w_->plot()->setFocus();
  QVERIFY(!s->hasFocus());
  const int before = s->value();
  const QPointF at(s->width() / 2.0, s->height() / 2.0);
  QWheelEvent up(at, s->mapToGlobal(at), {}, {0, 120}, Qt::NoButton, Qt::NoModifier,
                 Qt::NoScrollPhase, false);
  QApplication::sendEvent(s, &up);
  QCOMPARE(s->value(), before);
  s->setFocus();
  QTRY_VERIFY(s->hasFocus());
  QWheelEvent again(at, s->mapToGlobal(at), {}, {0, 120}, Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
  QApplication::sendEvent(s, &again);
  QVERIFY(s->value() != before);  // focused: the wheel is the user's intent
  s->setValue(before);
  QTRY_VERIFY_WITH_TIMEOUT(!w_->stale(), 60000);
}

void TstConsoleWorkflow::clickSeeks() {
  TimelinePlot* p = w_->plot();
  p->resetZoom();
  p->replot();
  QCPAxisRect* rates = p->axisRect(1);
  const int x = static_cast<int>(rates->axis(QCPAxis::atBottom)->coordToPixel(600));
  const QPoint at(x, rates->rect().center().y());
  QTest::mouseClick(p, Qt::LeftButton, {}, at);
  const double got = static_cast<double>(w_->cursorTime()) / 1e6;
  const double perPixel = p->timeRange().size() / rates->width();
  QVERIFY2(std::abs(got - 600) <= 2 * perPixel, qPrintable(QString::number(got)));
}

void TstConsoleWorkflow::boxZoomAndClamp() {
  TimelinePlot* p = w_->plot();
  p->resetZoom();
  p->replot();
  const QCPRange data = p->dataRange();
  QCOMPARE(p->timeRange().lower, data.lower);
  QCOMPARE(p->timeRange().upper, data.upper);
  QCPAxisRect* rates = p->axisRect(1);
  QCPAxis* x = rates->axis(QCPAxis::atBottom);
  const QPoint from(static_cast<int>(x->coordToPixel(300)), rates->rect().center().y());
  const QPoint to(static_cast<int>(x->coordToPixel(900)), from.y());
  QTest::mousePress(p, Qt::LeftButton, {}, from);
  QMouseEvent move(QEvent::MouseMove, to, p->mapToGlobal(to), Qt::NoButton, Qt::LeftButton,
                   Qt::NoModifier);
  QApplication::sendEvent(p, &move);
  QTest::mouseRelease(p, Qt::LeftButton, {}, to);
  const double perPixel = data.size() / rates->width();
  QVERIFY2(std::abs(p->timeRange().lower - 300) <= 2 * perPixel,
           qPrintable(QString::number(p->timeRange().lower)));
  QVERIFY(std::abs(p->timeRange().upper - 900) <= 2 * perPixel);
  // Zooming out or panning never leaves the data; zooming in stops at kMinSpan.
  p->zoomTo(-500, data.upper + 1000);
  QCOMPARE(p->timeRange().lower, data.lower);
  QCOMPARE(p->timeRange().upper, data.upper);
  p->zoomTo(-100, 50);
  QCOMPARE(p->timeRange().lower, data.lower);
  QCOMPARE(p->timeRange().size(), 150.0);
  p->zoomTo(1000, 1000.5);
  QCOMPARE(p->timeRange().size(), TimelinePlot::kMinSpan);
  // Double-click: the whole run again.
  QTest::mouseDClick(p, Qt::LeftButton, {}, from);
  QCOMPARE(p->timeRange().lower, data.lower);
  QCOMPARE(p->timeRange().upper, data.upper);
  // Key 0 as well.
  p->zoomTo(100, 200);
  QTest::keyClick(w_.get(), Qt::Key_0);
  QCOMPARE(p->timeRange().upper, data.upper);
}

// A trip line of seed-000's narrative: the cursor goes to it, the plots zoom to its range and
// its instance is focused.
void TstConsoleWorkflow::narrativeLineSeeksAndZooms() {
  NarrativePanel* n = w_->narrative();
  QVERIFY(!n->lines().empty());
  std::size_t trip = n->lines().size();
  for (std::size_t i = 0; i < n->lines().size(); ++i)
    if (n->lines()[i].kind == view::NarrativeKind::Trip) {
      trip = i;
      break;
    }
  QVERIFY(trip < n->lines().size());
  const view::NarrativeLine line = n->lines()[trip];
  QTreeWidgetItem* item = n->list()->topLevelItem(static_cast<int>(trip));
  QVERIFY(item);
  n->list()->setCurrentItem(item);
  QTest::keyClick(n->list(), Qt::Key_Return);
  QCOMPARE(w_->cursorTime(), line.at);
  const QCPRange shown = w_->plot()->timeRange();
  QVERIFY(shown.lower <= line.from / 1e6 + 1e-6 || shown.size() <= TimelinePlot::kMinSpan);
  QVERIFY(shown.upper >= line.to / 1e6 - 1e-6 || shown.size() <= TimelinePlot::kMinSpan);
  QVERIFY(shown.size() < w_->plot()->dataRange().size());
  QCOMPARE(w_->tiles()->selected(), line.instanceIndex);
}

// Saved policies are review-ready: the new name, where it came from, what changed, the
// headline KPIs, shortest numbers; and the file loads back to the same policy.
void TstConsoleWorkflow::saveWritesNameAndProvenance() {
  QTRY_VERIFY_WITH_TIMEOUT(!w_->stale(), 60000);
  editor()->control("trip.slow_rate")->setValue(0.45);
  QVERIFY(waitRun());
  QTemporaryDir dir;
  const QString path = dir.filePath("tuned.yaml");
  QString error;
  QVERIFY2(editor()->saveTo(path, "seed-000-tuned", &error), qPrintable(error));
  QFile f(path);
  QVERIFY(f.open(QIODevice::ReadOnly));
  const QString text = QString::fromUtf8(f.readAll());
  QVERIFY2(text.startsWith("#"), qPrintable(text.left(200)));
  QVERIFY(text.contains(editor()->source()));
  QVERIFY2(text.contains("slow_rate: 0.45\n"), qPrintable(text));  // no float noise
  QVERIFY(text.contains("→ 0.45"));                                // what changed
  QVERIFY(text.contains("误伤"));                                  // the headline KPIs
  const Policy back = loadPolicyFile(path.toStdString());
  QCOMPARE(back.name, std::string("seed-000-tuned"));
  Policy mine = editor()->policy();
  QCOMPARE(policyToYaml(back), policyToYaml(mine));
  editor()->revert();
  QVERIFY(waitRun());
}

// N policies side by side on the scenario on screen: each column is that policy's own run (the
// same figures as the main view's for the editor's and the pinned policy), a file adds one.
void TstConsoleWorkflow::nWayCompare() {
  QTRY_VERIFY_WITH_TIMEOUT(!w_->stale(), 60000);
  w_->pinReference();
  const auto a = w_->current();
  editor()->control("trip.sustain")->setValue(editor()->control("trip.sustain")->value() + 9);
  QVERIFY(waitRun());
  CompareDialog* d = w_->openCompare();
  QSignalSpy done(d, &CompareDialog::finished);
  QVERIFY(done.wait(120000));
  QVERIFY(d->policies().size() >= 2);
  QCOMPARE(d->table()->columnCount(), static_cast<int>(d->policies().size()));
  auto availability = [](const std::vector<view::HeadlineTile>& tiles) {
    for (const auto& t : tiles)
      if (t.key == "availability") return t.value;
    return std::optional<double>();
  };
  QCOMPARE(availability(d->results()[0]), w_->current()->protectedRun.report.availability.value());
  QCOMPARE(availability(d->results()[1]), a->protectedRun.report.availability.value());
  QString error;
  QVERIFY2(
      d->addPolicyFile(QStringLiteral(SPILLWAY_RESOURCES_DIR "/policies/default.yaml"), &error),
      qPrintable(error));
  QVERIFY(!d->addPolicyFile("/nonexistent.yaml", &error));
  QVERIFY(error.contains("nonexistent.yaml"));
  d->start();
  QVERIFY(done.wait(120000));
  QCOMPARE(d->results().size(), d->policies().size());
  QCOMPARE(d->table()->columnCount(), static_cast<int>(d->policies().size()));
  d->close();
  w_->unpinReference();
  editor()->revert();
  QVERIFY(waitRun());
}

// The sensitivity runs dozens of simulations: only once its tab is shown, on the run shown.
void TstConsoleWorkflow::sensitivityTabComputesOnShow() {
  QTRY_VERIFY_WITH_TIMEOUT(!w_->stale(), 60000);
  QSignalSpy computed(w_->sensitivity(), &SensitivityPanel::computed);
  QVERIFY(!w_->sensitivity()->result() || computed.isEmpty());
  QVERIFY(w_->showPanel("sensitivity"));
  QVERIFY(computed.wait(120000));
  const view::Sensitivity* r = w_->sensitivity()->result();
  QVERIFY(r && !r->cancelled && !r->rows.empty());
  QVERIFY(r->current.falsePositive.has_value());
  QCOMPARE(QString::fromStdString(r->source), w_->current()->scenarioName);
  QVERIFY(w_->showPanel("kpis"));
}

// Save: an edited policy, a pinned reference, the focus, the zoom, the cursor and a target; a
// new window opens the file and shows the same.
void TstConsoleWorkflow::sessionRoundTrip() {
  QTRY_VERIFY_WITH_TIMEOUT(!w_->stale(), 60000);
  w_->pinReference();
  const std::string reference = policyToYaml(w_->referencePolicy());
  editor()->control("trip.sustain")->setValue(editor()->control("trip.sustain")->value() + 7);
  QVERIFY(waitRun());
  w_->plot()->zoomTo(400, 700);
  w_->setCursorTime(seconds(512));
  view::HeadlineTargets t = view::HeadlineTargets::defaults();
  t.bounds["ttd"] = 12;
  w_->headline()->setTargets(t);
  QTemporaryDir dir;
  const QString path = dir.filePath("tuning.spillway");
  QString error;
  QVERIFY2(w_->saveSession(path, &error), qPrintable(error));

  MainWindow other;
  other.show();
  QSignalSpy restored(&other, &MainWindow::sessionRestored);
  QVERIFY2(other.openSession(path, &error), qPrintable(error));
  QVERIFY(restored.wait(120000));
  QCOMPARE(policyToYaml(other.policyEditor()->policy()), policyToYaml(editor()->policy()));
  QCOMPARE(policyToYaml(other.policyEditor()->loaded()), policyToYaml(editor()->loaded()));
  QVERIFY(other.policyEditor()->isModified());
  QVERIFY(other.reference());
  QCOMPARE(policyToYaml(other.referencePolicy()), reference);
  QCOMPARE(other.previous(), other.reference());
  QCOMPARE(other.cursorTime(), seconds(512));
  QCOMPARE(other.plot()->timeRange().lower, 400.0);
  QCOMPARE(other.plot()->timeRange().upper, 700.0);
  QCOMPARE(other.tiles()->selected(), w_->tiles()->selected());
  QCOMPARE(other.headline()->targets().of("ttd"), std::optional<double>(12));
  QVERIFY(!other.stale());
  w_->unpinReference();
}

void TstConsoleWorkflow::badSessionIsAMessage_data() {
  QTest::addColumn<QByteArray>("text");
  QTest::addColumn<QString>("want");
  QTest::newRow("not json") << QByteArray("{\n\"spillway_session\": 1,\n oops") << ":3: ";
  QTest::newRow("no version") << QByteArray("{\"scenario\": \"seed-000\"}")
                              << "spillway_session: expected version 1";
  QTest::newRow("no source") << QByteArray(
                                    "{\"spillway_session\": 1,\n\"policy\": \"name: a\",\n"
                                    "\"loaded_policy\": \"name: a\"}")
                             << "scenario: expected either a scenario or a library incident";
  QTest::newRow("bad policy")
      << QByteArray(
             "{\"spillway_session\": 1, \"scenario\": \"seed-000\",\n"
             "\"policy\": \"breaker: [1\",\n\"loaded_policy\": \"name: a\"}")
      << ":2: policy: ";
  QTest::newRow("bad zoom") << QByteArray(
                                   "{\"spillway_session\": 1, \"scenario\": \"seed-000\",\n"
                                   "\"policy\": \"name: a\", \"loaded_policy\": \"name: a\",\n"
                                   "\"zoom_s\": [9, 3]}")
                            << ":3: zoom_s: expected [from, to]";
}

void TstConsoleWorkflow::badSessionIsAMessage() {
  QFETCH(QByteArray, text);
  QFETCH(QString, want);
  QTemporaryDir dir;
  const QString path = dir.filePath("bad.spillway");
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(text);
  f.close();
  QString error;
  const auto before = w_->current();
  QVERIFY(!w_->openSession(path, &error));
  QVERIFY2(error.startsWith(path) && error.contains(want), qPrintable(error));
  QCOMPARE(w_->current(), before);  // what is on screen stays
}

QTEST_MAIN(TstConsoleWorkflow)
#include "tst_console_workflow.moc"

// At 1280×800 the window is that size (nothing forces it bigger), the headline tiles wrap onto
// a second row inside the strip and the policy editor needs no horizontal scrolling.
void TstConsoleWorkflow::fitsALaptopScreen() {
  w_->showPanel("kpis");
  w_->resize(1280, 800);
  QTest::qWait(200);
  QVERIFY2(
      w_->minimumSizeHint().width() <= 1280 && w_->minimumSizeHint().height() <= 800,
      qPrintable(
          QString("%1x%2").arg(w_->minimumSizeHint().width()).arg(w_->minimumSizeHint().height())));
  QCOMPARE(w_->size(), QSize(1280, 800));
  HeadlineStrip* strip = w_->headline();
  QSet<int> rows;
  for (QFrame* tile : strip->findChildren<QFrame*>(Qt::FindDirectChildrenOnly)) {
    if (!tile->isVisible()) continue;
    QVERIFY2(strip->rect().contains(tile->geometry()), qPrintable(tile->objectName()));
    rows.insert(tile->y());
  }
  QVERIFY2(rows.size() >= 2, "the tiles wrap at this width");
  // Under wrapped tiles the table keeps five rows (the page scrolls to them); it was squeezed
  // to nothing at 1280x720.
  w_->resize(1280, 720);
  QTest::qWait(200);
  QTableWidget* table = w_->kpiTable();
  QVERIFY2(table->height() >= table->horizontalHeader()->height() + 5 * table->rowHeight(0),
           qPrintable(QString("%1 px").arg(table->height())));
  w_->resize(1280, 800);
  QTest::qWait(100);
  QScrollArea* editorScroll = nullptr;
  for (QWidget* p = editor(); p && !editorScroll; p = p->parentWidget())
    editorScroll = qobject_cast<QScrollArea*>(p);
  QVERIFY(editorScroll);
  QVERIFY(!editorScroll->horizontalScrollBar()->isVisible());
  // 720 px high with seed-002's ten instances, on every bottom tab: the lanes squeeze and
  // the charts scroll (the lanes' fixed 15 px made the window 742 px at least).
  QVERIFY(w_->runScenario("seed-002"));
  QVERIFY(waitRun());
  for (const char* panel : {"kpis", "sensitivity", "comparison"}) {
    QVERIFY(w_->showPanel(panel));
    QTest::qWait(100);
    QVERIFY2(w_->minimumSizeHint().height() <= 720,
             qPrintable(QString("%1: %2 px").arg(panel).arg(w_->minimumSizeHint().height())));
  }
  // Squeezed lanes name every k-th one, the focused one — and the one whose breaker spent
  // longest away from full traffic, which could go unnamed.
  w_->resize(1280, 720);
  QTest::qWait(200);
  const view::RunTimeline& tl = w_->current()->protectedRun.timeline;
  std::size_t busiest = 0;
  Micros most = -1;
  for (std::size_t i = 0; i < tl.instances().size(); ++i) {
    Micros away = 0;
    for (const view::StateBand& b : tl.instances()[i].bands)
      if (b.state != BreakerState::Closed || b.ramping) away += b.end - b.start;
    if (away > most) most = away, busiest = i;
  }
  QVERIFY(most > 0);
  const QStringList shown = w_->plot()->laneNamesShown();
  QVERIFY2(shown.size() < static_cast<int>(tl.instances().size()), "the lanes are squeezed");
  const QString name = QString::fromStdString(tl.instances()[busiest].name);
  QVERIFY2(
      std::any_of(shown.begin(), shown.end(), [&](const QString& s) { return s.startsWith(name); }),
      qPrintable(name + " not in " + shown.join(", ")));
}

// A policy naming a model the scenario lacks (here an override for "chat-99b") says so in
// the context bar: that part of the policy is dropped without a word otherwise.
void TstConsoleWorkflow::policyNamesTheScenarioLacks() {
  QVERIFY(w_->runScenario("seed-000"));
  QVERIFY(waitRun());
  QVERIFY(w_->unmatchedNames().isEmpty());
  QVERIFY(!w_->contextText().contains("⚠"));
  const Policy own = editor()->policy();
  Policy typo = own;
  typo.modelOverrides["chat-99b"] = {};
  editor()->applyPolicy(typo, "typo");
  QVERIFY(waitRun());
  QCOMPARE(w_->unmatchedNames(),
           QStringList{"overrides.models.chat-99b: the scenario has no model 'chat-99b' (the "
                       "override is unused)"});
  QVERIFY2(w_->contextText().contains("⚠ 1 policy name(s) the scenario lacks"),
           qPrintable(w_->contextText()));
  // The status bar names it after the run, without hovering.
  QVERIFY2(w_->statusBar()->currentMessage().contains(
               "unused by this scenario: overrides.models.chat-99b"),
           qPrintable(w_->statusBar()->currentMessage()));
  editor()->applyPolicy(own, "back");
  QVERIFY(waitRun());
  QVERIFY(w_->unmatchedNames().isEmpty());
}
