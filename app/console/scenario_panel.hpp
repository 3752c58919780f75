#pragma once
// The scenario panel: seed, duration, load multiplier and the fault timeline of the loaded
// scenario, editable (add / remove / move faults, change kind, target, strength). "Run"
// emits the edited scenario; the loaded one is kept, so edits never lose the original.
#include <QWidget>

#include "spillway/sim/scenario.hpp"

class QDoubleSpinBox;
class QSpinBox;
class QTableWidget;
class QLabel;

namespace spillway::console {

class ScenarioPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ScenarioPanel(QWidget* parent = nullptr);
  void setScenario(const sim::Scenario& s);  // no signal
  // The loaded scenario with the panel's edits applied. Throws InputError naming the fault row
  // and column on a value that cannot be used.
  sim::Scenario edited() const;
  // For tests.
  QSpinBox* seedBox() const { return seed_; }
  QDoubleSpinBox* durationBox() const { return duration_; }
  QDoubleSpinBox* loadBox() const { return load_; }
  QTableWidget* faultTable() const { return faults_; }
  void addFault(const sim::FaultSpec& f);
  void removeFault(int row);

 signals:
  void runRequested();

 private:
  QStringList targets() const;
  sim::Scenario base_;
  QSpinBox* seed_;
  QDoubleSpinBox *duration_, *load_;
  QTableWidget* faults_;
  QLabel* summary_;
};

}  // namespace spillway::console
