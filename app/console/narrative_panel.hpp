#pragma once
// The incident narrative (issue 23) as a list: one row per line of view::NarrativeLine — its
// time (T+ offset of a simulated run, or the recording's wall clock) and its text, with a
// coloured mark by kind (fault, trip, false trip, probing, restored, would open, summary).
// Clicking a row or pressing Enter on it asks the window to seek to the line's moment and zoom
// to its range (lineActivated); "Copy as text" puts the same text as `spillway-cli simulate
// --narrative` on the clipboard. The panel only shows what it is given: the lines come from
// view::simulationNarrative / view::replayNarrative, built off the widget.
#include <QWidget>

#include <cstddef>
#include <vector>

#include "run_controller.hpp"
#include "spillway/view/narrative.hpp"

class QAction;
class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace spillway::console {

// What the panel shows for a finished comparison: the protected run told (a simulated run, or a
// replayed incident on its own axis), its opens against the baseline's would-opens, and the
// clock its times read in (a replay's wall clock in UTC: setClock with utc = false for local).
// `scenario`: the simulated scenario, for the faults' strengths (may be null). Live mode and an
// empty comparison tell nothing.
struct Narrative {
  std::vector<view::NarrativeLine> lines;
  view::NarrativeClock clock;
};
Narrative narrativeOf(const Comparison& c, const sim::Scenario* scenario = nullptr);

class NarrativePanel : public QWidget {
  Q_OBJECT
 public:
  explicit NarrativePanel(QWidget* parent = nullptr);

  // Replaces the list (an empty vector shows the "nothing yet" hint).
  void setLines(std::vector<view::NarrativeLine> lines);
  const std::vector<view::NarrativeLine>& lines() const { return lines_; }
  // How the time column reads: run offsets (the default) or a recording's wall clock.
  void setClock(view::NarrativeClock clock);
  // The narrative as "Copy as text" copies it (view::narrativeText with this clock).
  QString text() const;

  QTreeWidget* list() const { return list_; }
  QAction* copyAction() const { return copy_; }

 public slots:
  void copyAsText();

 signals:
  // A line was clicked or activated with Enter: seek to `at`, zoom to [from, to], focus the
  // instance (view::kNoInstance: a run-wide line, keep the focus).
  void lineActivated(spillway::Micros at, spillway::Micros from, spillway::Micros to,
                     std::size_t instanceIndex);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void fill();
  void activate(QTreeWidgetItem* item);

  std::vector<view::NarrativeLine> lines_;
  view::NarrativeClock clock_;
  QTreeWidget* list_ = nullptr;
  QLabel* empty_ = nullptr;
  QAction* copy_ = nullptr;
};

}  // namespace spillway::console
