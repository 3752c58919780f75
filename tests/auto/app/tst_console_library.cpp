// The console's incident library, offscreen: importing the built-in seed-000 sample (and its
// fault annotations) into a temporary library lists it and replays it into the timelines (bands,
// fault markers, replay KPIs); a malformed file is a `file:line: field:` message and leaves the
// library as it was; the filter, tags and notes; a policy edit re-replays with the previous
// replay as the ghost; Shift+drag over the rates marks the focused instance bad in the library
// and re-scores; the sweep dialog's 2×3 grid equals replayIncident run candidate by candidate,
// a row or a Pareto point loads the candidate into the editor, calibration picks one; cancel.
#include <QApplication>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QListWidget>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "instance_tiles.hpp"
#include "library_menu.hpp"
#include "library_panel.hpp"
#include "main_window.hpp"
#include "policy_editor.hpp"
#include "spillway/library/library.hpp"
#include "spillway/policy_params.hpp"
#include "spillway/sweep.hpp"
#include "sweep_dialog.hpp"
#include "timeline_plot.hpp"

using namespace spillway;
using namespace spillway::console;

namespace {

const QString kTrace = SPILLWAY_SOURCE_DIR "/resources/traces/seed000-sample.jsonl";
const QString kFaults = SPILLWAY_SOURCE_DIR "/resources/traces/seed000-sample.faults.jsonl";
const QString kMalformed = SPILLWAY_SOURCE_DIR "/tests/auto/cli/data/malformed.jsonl";

}  // namespace

class TstConsoleLibrary : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString libPath_;
  std::unique_ptr<MainWindow> w_;
  std::unique_ptr<QSignalSpy> shown_;

  bool waitRun() { return shown_->wait(60000); }
  LibraryPanel* panel() { return w_->libraryPanel(); }
  bool import(const ImportRequest& r, QString* message) {
    QSignalSpy done(panel(), &LibraryPanel::importFinished);
    panel()->startImport(r);
    if (!done.wait(60000)) return false;
    *message = done.front().at(1).toString();
    return done.front().at(0).toBool();
  }

 private slots:
  void initTestCase();
  void importListsAndReplays();
  void badFileIsAMessage();
  void filterTagsNotes();
  void policyEditReReplays();
  void shiftDragAnnotates();
  void annotationRemovedAndRescored();
  void sweepGridMatchesReplayIncident();
  void cancelStopsSweep();
  void recentLibrariesRemembered();
  void runReplaysWhatThePickerShows();  // last: it leaves a simulated run on screen
  void cleanupTestCase();
};

void TstConsoleLibrary::initTestCase() {
  QApplication::setApplicationName("spillway-test-library");
  QVERIFY(dir_.isValid());
  libPath_ = dir_.filePath("library.db");
  w_ = std::make_unique<MainWindow>();
  w_->resize(1500, 950);
  w_->show();
  shown_ = std::make_unique<QSignalSpy>(w_.get(), &MainWindow::runShown);
  QString error;
  QVERIFY2(w_->openLibrary(libPath_, &error), qPrintable(error));
  QVERIFY(panel()->shownIncidents().isEmpty());
}

void TstConsoleLibrary::importListsAndReplays() {
  ImportRequest r;
  r.files = {kTrace};
  r.faultsFile = kFaults;
  QString msg;
  QVERIFY2(import(r, &msg), qPrintable(msg));
  QVERIFY2(msg.contains("21,413") || msg.contains("21413"), qPrintable(msg));
  QCOMPARE(panel()->shownIncidents(), QStringList{"seed000-sample"});
  QCOMPARE(panel()->table()->item(0, 3)->data(Qt::DisplayRole).toULongLong(), 21413ull);
  QCOMPARE(panel()->annotationList()->count(), 1);  // the leak, from the faults file
  // The import selects the incident, which replays it.
  QVERIFY(waitRun());
  const auto c = w_->current();
  QVERIFY(c->mode == view::Mode::Replay);
  QCOMPARE(c->incident, QString("seed000-sample"));
  const auto& insts = c->protectedRun.timeline.instances();
  QCOMPARE(insts.size(), std::size_t{4});
  QCOMPARE(insts[w_->tiles()->selected()].name, std::string("chat-72b-3"));  // the fault's
  QVERIFY(w_->plot()->laneCount() == 4);
  QVERIFY(w_->plot()->bandCount() > 4);  // the leaking instance's lane holds OPEN bands
  QVERIFY(w_->plot()->faultMarkers() >= 2);
  QVERIFY(w_->plot()->ratePoints() > 0);
  QCOMPARE(c->protectedRun.replayKpis.records, std::uint64_t{21413});
  QVERIFY(c->protectedRun.replayKpis.rejected > 0);
  QCOMPARE(c->baseline.replayKpis.rejected, std::uint64_t{0});  // watch only
  QVERIFY(w_->plot()->wouldOpenMarks() > 0);
  QCOMPARE(w_->kpiTable()->item(0, 0)->text().left(12), QString("availability"));
  QVERIFY(w_->cursorTime() > 0);  // at the detection
  QVERIFY(!w_->tiles()->tileText(w_->tiles()->selected()).contains("nan"));
}

// The toolbar said "Scenario seed-000 [Run]" over a replayed incident, and Run then simulated
// seed-000. It shows the incident, and Run replays it; seeds are the simulator's.
void TstConsoleLibrary::runReplaysWhatThePickerShows() {
  QVERIFY(w_->replayIncident("seed000-sample"));
  QVERIFY(waitRun());
  QCOMPARE(w_->sourcePicker()->currentText(), QString("incident seed000-sample"));
  QVERIFY(!w_->seedsBox()->isEnabled());
  QVERIFY(w_->runButton()->isEnabled());
  w_->runButton()->click();
  QVERIFY(waitRun());
  QVERIFY(w_->current()->mode == view::Mode::Replay);
  QCOMPARE(w_->current()->incident, QString("seed000-sample"));
  QCOMPARE(w_->sourcePicker()->count(), 5);  // the built-ins and the incident, once
  // A built-in picked and run: a simulation again, with its seeds.
  w_->sourcePicker()->setCurrentIndex(0);
  w_->runButton()->click();
  QVERIFY(waitRun());
  QVERIFY(w_->current()->mode != view::Mode::Replay);
  QVERIFY(w_->seedsBox()->isEnabled());
  QCOMPARE(w_->sourcePicker()->currentText(), QString("seed-000"));
}

void TstConsoleLibrary::badFileIsAMessage() {
  library::Library lib(libPath_.toStdString());
  const auto before = lib.incidents();
  ImportRequest r;
  r.files = {kMalformed};
  r.incident = "seed000-sample";  // appending to an existing incident: nothing may change
  QString msg;
  QVERIFY(!import(r, &msg));
  QVERIFY2(msg.contains("malformed.jsonl:3: latency_ms"), qPrintable(msg));
  QVERIFY(panel()->message().contains("malformed.jsonl:3"));
  const auto after = lib.incidents();
  QCOMPARE(after.size(), before.size());
  QCOMPARE(after[0].records, before[0].records);
  QCOMPARE(panel()->shownIncidents(), QStringList{"seed000-sample"});
  // With skip-bad-lines the good lines go in, as a new incident.
  r.skipBadLines = true;
  r.incident = "malformed";
  QVERIFY2(import(r, &msg), qPrintable(msg));
  QVERIFY2(msg.contains("1 bad lines skipped"), qPrintable(msg));
  QVERIFY(waitRun());  // selecting it replayed it
  QCOMPARE(panel()->shownIncidents().size(), 2);
}

void TstConsoleLibrary::filterTagsNotes() {
  panel()->filter()->setText("seed000");
  QCOMPARE(panel()->shownIncidents(), QStringList{"seed000-sample"});
  panel()->filter()->setText("nothing-like-this");
  QVERIFY(panel()->shownIncidents().isEmpty());
  panel()->filter()->clear();
  QCOMPARE(panel()->shownIncidents().size(), 2);
  QVERIFY(panel()->selectIncident("seed000-sample"));
  QVERIFY(waitRun());
  QVERIFY(panel()->saveNotes("gpu-leak, chat-72b", "latency drift on chat-72b-3"));
  library::Library lib(libPath_.toStdString());
  QCOMPARE(lib.incident("seed000-sample")->tags, std::string("gpu-leak, chat-72b"));
  QCOMPARE(lib.incident("seed000-sample")->notes, std::string("latency drift on chat-72b-3"));
  panel()->filter()->setText("gpu-leak");  // tags are searchable
  QCOMPARE(panel()->shownIncidents(), QStringList{"seed000-sample"});
  panel()->filter()->clear();
  QCOMPARE(panel()->tagsEdit()->text(), QString("gpu-leak, chat-72b"));
}

void TstConsoleLibrary::policyEditReReplays() {
  QVERIFY(w_->current()->mode == view::Mode::Replay);
  QVERIFY(!w_->previous());
  const int started = w_->replayController().started();
  QDoubleSpinBox* box = w_->policyEditor()->control("trip.slow_rate");
  box->setValue(box->value() + 0.1);
  box->setValue(box->value() + 0.05);  // two quick edits: one replay
  QVERIFY(waitRun());
  QCOMPARE(w_->replayController().started(), started + 1);
  QVERIFY(w_->previous() && w_->previous()->mode == view::Mode::Replay);
  QVERIFY(w_->plot()->graphNamed("previous policy (dashed)"));
  QVERIFY(w_->kpiTable()->item(1, 4)->text() != "—");  // Δ previous policy is filled
}

void TstConsoleLibrary::shiftDragAnnotates() {
  library::Library lib(libPath_.toStdString());
  const std::size_t before = lib.annotations("seed000-sample").size();
  const auto origin = w_->current()->origin;
  // Focus another instance, then Shift+drag over its rates from 1:00 to 2:00.
  const auto& insts = w_->current()->protectedRun.timeline.instances();
  std::size_t focus = 0;
  while (insts[focus].name != "chat-72b-1") ++focus;
  emit w_->plot()->laneClicked(focus);
  QCOMPARE(w_->tiles()->selected(), focus);
  QTRY_COMPARE(w_->plot()->faultMarkers(), 0);  // the recorded fault is on chat-72b-3
  QCPAxisRect* rates = w_->plot()->axisRect(1);
  QCPAxis* x = rates->axis(QCPAxis::atBottom);
  const int y = rates->rect().center().y();
  const QPoint from(static_cast<int>(x->coordToPixel(60)), y),
      to(static_cast<int>(x->coordToPixel(120)), y);
  QTest::mousePress(w_->plot(), Qt::LeftButton, Qt::ShiftModifier, from);
  QVERIFY(w_->plot()->marking());
  QMouseEvent move(QEvent::MouseMove, QPointF(to), w_->plot()->mapToGlobal(QPointF(to)),
                   Qt::NoButton, Qt::LeftButton, Qt::ShiftModifier);
  QApplication::sendEvent(w_->plot(), &move);
  QTest::mouseRelease(w_->plot(), Qt::LeftButton, Qt::ShiftModifier, to);
  const auto after = lib.annotations("seed000-sample");
  QCOMPARE(after.size(), before + 1);
  auto mark = std::find_if(after.begin(), after.end(),
                           [](const library::Annotation& x) { return x.kind == "marked bad"; });
  QVERIFY(mark != after.end());
  const library::Annotation& a = *mark;
  QCOMPARE(a.instance, std::string("chat-72b-1"));
  QCOMPARE(a.origin, std::string("operator"));
  QVERIFY(std::abs(static_cast<double>(a.start - origin) / 1e6 - 60) < 1.5);
  QVERIFY(std::abs(static_cast<double>(a.end - origin) / 1e6 - 120) < 1.5);
  // The re-replay scores the new fault and draws its markers; the ghost is still the policy's.
  QVERIFY(waitRun());
  QCOMPARE(w_->current()->protectedRun.replayKpis.faults.size(), before + 1);
  QCOMPARE(w_->tiles()->selected(), focus);
  QVERIFY(w_->plot()->faultMarkers() >= 2);  // onset and end of the operator's mark
  QVERIFY(w_->previous());
  QCOMPARE(panel()->annotationList()->count(), static_cast<int>(before + 1));
  // A plain click (no range) marks nothing.
  w_->plot()->markRange(30, 30.1);
  QCOMPARE(lib.annotations("seed000-sample").size(), before + 1);
}

// The operator's mark, deleted from the panel: gone from the library, and the re-replay scores
// without it; a kind changed in place is one annotation still.
void TstConsoleLibrary::annotationRemovedAndRescored() {
  library::Library lib(libPath_.toStdString());
  const auto before = lib.annotations("seed000-sample");
  int row = -1;
  for (std::size_t i = 0; i < before.size(); ++i)
    if (before[i].kind == "marked bad") row = static_cast<int>(i);
  QVERIFY(row >= 0);
  const std::size_t faults = w_->current()->protectedRun.replayKpis.faults.size();
  QString error;
  QVERIFY2(panel()->setAnnotationKind(row, "latency_drift", &error), qPrintable(error));
  QCOMPARE(lib.annotations("seed000-sample").size(), before.size());
  QVERIFY(waitRun());
  QCOMPARE(w_->current()->protectedRun.replayKpis.faults.size(), faults);
  const auto renamed = lib.annotations("seed000-sample");
  const auto it = std::find_if(renamed.begin(), renamed.end(), [](const library::Annotation& a) {
    return a.kind == "latency_drift" && a.instance == "chat-72b-1";
  });
  QVERIFY(it != renamed.end());
  QVERIFY(panel()->removeAnnotation(static_cast<int>(it - renamed.begin()), &error));
  QCOMPARE(lib.annotations("seed000-sample").size(), before.size() - 1);
  QCOMPARE(panel()->annotationList()->count(), static_cast<int>(before.size() - 1));
  QVERIFY(waitRun());
  QCOMPARE(w_->current()->protectedRun.replayKpis.faults.size(), faults - 1);
  QVERIFY(!panel()->removeAnnotation(99, &error));
  // Marked again (the sweep below relies on a fault no breaker sees).
  std::size_t focus = 0;
  while (w_->current()->protectedRun.timeline.instances()[focus].name != "chat-72b-1") ++focus;
  QVERIFY2(w_->annotateRange(focus, 60, 120, &error), qPrintable(error));
  QVERIFY(waitRun());
  QCOMPARE(w_->current()->protectedRun.replayKpis.faults.size(), faults);
}

void TstConsoleLibrary::sweepGridMatchesReplayIncident() {
  SweepDialog* d = w_->openSweep();
  d->setLibrary(libPath_, {"seed000-sample", "malformed"}, {"seed000-sample"});
  d->setParams({{"trip.slow_rate", 0.4, 0.5, 0.1}, {"trip.sustain", 2, 6, 2}});
  d->setThreads(2);
  QSignalSpy finished(d, &SweepDialog::finished);
  QVERIFY2(d->start(), qPrintable(d->message()));
  QVERIFY(finished.wait(120000));
  const SweepResult* r = d->result();
  QVERIFY(r);
  QCOMPARE(r->candidates.size(), std::size_t{6});
  QCOMPARE(d->resultsTable()->rowCount(), 6);
  // Each row's scores are those of replaying the incident under that candidate alone.
  library::Library lib(libPath_.toStdString());
  auto src = lib.open("seed000-sample");
  std::vector<NamedFault> faults;
  for (const library::Annotation& a : lib.annotations("seed000-sample"))
    faults.push_back(NamedFault{a.instance, a.start, a.end, a.kind});
  const IncidentTrace trace =
      IncidentTrace::read([&](CallRecord& c) { return src->next(c); }, "seed000-sample", faults);
  for (std::size_t i = 0; i < r->candidates.size(); ++i) {
    SweepScore alone;
    alone.add(replayIncident(r->candidates[i].policy, trace));
    const SweepScore& s = r->scores[i];
    QCOMPARE(s.records, alone.records);
    QCOMPARE(s.rejected, alone.rejected);
    QCOMPARE(s.blocks.avoidable(), alone.blocks.avoidable());
    QCOMPARE(s.ttdSum, alone.ttdSum);
    QCOMPARE(s.detected, alone.detected);
    QCOMPARE(s.availability(), alone.availability());
  }
  // The table shows the same numbers: the FP column of every row.
  QTableWidget* t = d->resultsTable();
  for (int row = 0; row < t->rowCount(); ++row) {
    const auto i = t->item(row, 0)->data(Qt::UserRole + 1).toULongLong();
    const auto fp = r->scores[i].fpRateOrNa();
    QCOMPARE(t->item(row, 2)->text(),
             fp ? QString::number(*fp * 100, 'f', 2) + " %" : QStringLiteral("n/a"));
  }
  // Clicking a row loads its candidate into the editor (and the what-if replays it).
  t->sortItems(2, Qt::DescendingOrder);
  const int row = 3;
  const auto i = t->item(row, 0)->data(Qt::UserRole + 1).toULongLong();
  QTest::mouseClick(t->viewport(), Qt::LeftButton, {}, t->visualItemRect(t->item(row, 1)).center());
  PolicyEditor* e = w_->policyEditor();
  QCOMPARE(e->control("trip.slow_rate")->value(), r->candidates[i].values[0].second);
  QCOMPARE(e->control("trip.sustain")->value(), r->candidates[i].values[1].second);
  QVERIFY(waitRun());
  QCOMPARE(w_->current()->protectedRun.replayKpis.rejected, r->scores[i].rejected);
  // Clicking a point of the Pareto plot loads that one.
  std::size_t other = (i + 1) % r->candidates.size();
  QCPAxisRect* rect = d->paretoPlot()->axisRect();
  const QPointF px(rect->axis(QCPAxis::atBottom)->coordToPixel(r->scores[other].fpRate() * 100),
                   rect->axis(QCPAxis::atLeft)->coordToPixel(*r->scores[other].meanTtdSeconds()));
  QVERIFY(d->candidateAt(px) >= 0);
  other = static_cast<std::size_t>(d->candidateAt(px));  // coinciding points: the nearest
  QSignalSpy chosen(d, &SweepDialog::candidateChosen);
  QTest::mouseClick(d->paretoPlot(), Qt::LeftButton, {}, px.toPoint());
  QCOMPARE(chosen.count(), 1);
  QCOMPARE(e->control("trip.sustain")->value(), r->candidates[other].values[1].second);
  QVERIFY(waitRun());
  // Calibration: a reachable target picks a candidate; an impossible one says why. The
  // operator's mark above is a "fault" no breaker sees: missed faults must be allowed, or the
  // implied missed<=0 rules every candidate out.
  QVERIFY(!d->calibrateTargets("fp<=1,ttd<=100000s"));
  QVERIFY2(d->calibrationText().contains("missed<=0 (implied)"), qPrintable(d->calibrationText()));
  QVERIFY(d->calibrateTargets("fp<=1,ttd<=100000s,missed<=1"));
  QVERIFY2(d->calibrationText().startsWith("Chosen:"), qPrintable(d->calibrationText()));
  QVERIFY(waitRun());
  QVERIFY(!d->calibrateTargets("ttd<=1ms"));
  QVERIFY2(d->calibrationText().contains("ttd"), qPrintable(d->calibrationText()));
  QVERIFY(!d->calibrateTargets("fp<=banana"));
  QVERIFY2(d->calibrationText().contains("fp<=banana"), qPrintable(d->calibrationText()));
}

void TstConsoleLibrary::cancelStopsSweep() {
  SweepDialog* d = w_->openSweep();
  d->setLibrary(libPath_, {"seed000-sample"}, {"seed000-sample"});
  // open.duration is not a trip threshold: every candidate is a whole replay, so a thousand
  // of them are still running when the first progress shows (trip thresholds alone would
  // share most of the work and could finish first).
  d->setParams({{"open.duration", 5, 60, 0}});
  d->setRandom(true, 1000, 7);
  d->setThreads(1);
  QSignalSpy cancelled(d, &SweepDialog::cancelled);
  QSignalSpy finished(d, &SweepDialog::finished);
  auto* bar = d->findChild<QProgressBar*>();
  QVERIFY(bar);
  connect(bar, &QProgressBar::valueChanged, d, [d](int pct) {
    if (pct > 0 && d->running()) d->cancel();
  });
  QVERIFY(d->start());
  QVERIFY(cancelled.wait(30000));
  QCOMPARE(finished.count(), 0);
  QVERIFY(!d->running());
}

void TstConsoleLibrary::cleanupTestCase() {
  w_.reset();
}

// Every library that opens goes to the front of File → Recent libraries (once, at most eight);
// a team library's URL counts as reachable at startup, a vanished file does not.
void TstConsoleLibrary::recentLibrariesRemembered() {
  QCOMPARE(LibraryMenu::recent().value(0), libPath_);
  const QString second = dir_.filePath("second.db");
  QString error;
  QVERIFY2(w_->openLibrary(second, &error), qPrintable(error));
  QCOMPARE(LibraryMenu::recent().mid(0, 2), (QStringList{second, libPath_}));
  QVERIFY2(w_->openLibrary(libPath_, &error), qPrintable(error));
  QCOMPARE(LibraryMenu::recent().mid(0, 2), (QStringList{libPath_, second}));
  QCOMPARE(LibraryMenu::recent().count(libPath_), 1);
  for (int i = 0; i < 10; ++i) LibraryMenu::remember(dir_.filePath(QString("n%1.db").arg(i)));
  QCOMPARE(LibraryMenu::recent().size(), LibraryMenu::kRecent);
  QCOMPARE(LibraryMenu::recent().front(), dir_.filePath("n9.db"));
  QVERIFY(LibraryMenu::reachable("postgresql://sre@db.internal/spillway"));
  QVERIFY(LibraryMenu::reachable(libPath_));
  QVERIFY(!LibraryMenu::reachable(dir_.filePath("n9.db")));  // remembered, never created
}

QTEST_MAIN(TstConsoleLibrary)
#include "tst_console_library.moc"
