#pragma once
// The policy editor: the breaker's detect / trip / open / probe / ramp parameters as spin
// boxes with units and ranges, grouped as the policy file is. Every change emits the edited
// policy (the window coalesces changes into one what-if re-run); load and save use the same
// YAML as the CLI.
#include <QWidget>

#include "spillway/policy.hpp"

class QDoubleSpinBox;
class QSpinBox;

namespace spillway::console {

class PolicyEditor : public QWidget {
  Q_OBJECT
 public:
  explicit PolicyEditor(QWidget* parent = nullptr);
  void setPolicy(const Policy& p);  // no policyEdited signal
  const Policy& policy() const { return policy_; }
  // For tests: a control by its YAML key (e.g. "trip.slow_rate").
  QDoubleSpinBox* control(const QString& key) const;

 signals:
  void policyEdited(const spillway::Policy& policy);

 private:
  QDoubleSpinBox* add(const QString& key, const QString& label, double lo, double hi, double step,
                      int decimals, const QString& suffix);
  void load();
  void save();
  void readControls();

  Policy policy_;
  bool updating_ = false;
  QList<QPair<QString, QDoubleSpinBox*>> controls_;
};

}  // namespace spillway::console
