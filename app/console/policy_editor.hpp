#pragma once
// The policy editor: the breaker's detect / trip / open / probe / ramp parameters and the
// degrade and shedding settings, each a slider with a spin box (units, range), grouped as the
// policy file is. A scope picker edits the default breaker or one model's override (only the
// keys that differ from the default are written). Every change emits the edited policy (the
// window coalesces changes into one what-if re-run); load and save use the CLI's YAML.
#include <QWidget>

#include "spillway/policy.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QPushButton;
class QSlider;
class QVBoxLayout;

namespace spillway::console {

class PolicyEditor : public QWidget {
  Q_OBJECT
 public:
  explicit PolicyEditor(QWidget* parent = nullptr);
  void setPolicy(const Policy& p);  // no policyEdited signal
  // Models the scope picker offers (the scenario's), besides the default breaker.
  void setModels(const QStringList& models);
  const Policy& policy() const { return policy_; }
  // The scope being edited: empty = the default breaker, else a model name.
  QString scope() const;
  void setScope(const QString& model);
  // For tests: a control by its YAML key (e.g. "trip.slow_rate"), its slider, a checkbox.
  QDoubleSpinBox* control(const QString& key) const;
  QSlider* slider(const QString& key) const;
  QCheckBox* check(const QString& key) const;

 signals:
  void policyEdited(const spillway::Policy& policy);

 private:
  struct Row {
    QString key;
    QDoubleSpinBox* box;
    QSlider* slider;
    bool log;
  };
  void buildScopeRow(QVBoxLayout* layout);
  void buildFileButtons(QVBoxLayout* layout);
  void connectScope();
  QFormLayout* addGroup(QVBoxLayout* layout, const QString& title);
  // Builds one of the row tables (key, label, range, tip, typed field); a template so their
  // types stay in the .cpp, the only place it is instantiated.
  template <class Rows>
  void addRows(QVBoxLayout* layout, const Rows& rows);
  void addSliderRow(QFormLayout* form, const QString& key, const QString& label, double lo,
                    double hi, double step, int decimals, const QString& suffix,
                    const QString& tip);
  void addCheckRow(QFormLayout* form, const QString& key, const QString& label, const QString& tip);
  QDoubleSpinBox* add(const QString& key, double lo, double hi, double step, int decimals,
                      const QString& suffix);
  QCheckBox* addCheck(const QString& key, const QString& label, const QString& tip);
  void showBreaker(const BreakerConfig& b);
  void showSections();
  void readControls();
  void syncSlider(const Row& r);
  void load();
  void save();

  Policy policy_;
  bool updating_ = false;
  QComboBox* scope_;
  QPushButton* resetOverride_;
  QList<Row> rows_;
  QList<QPair<QString, QCheckBox*>> checks_;
};

}  // namespace spillway::console
