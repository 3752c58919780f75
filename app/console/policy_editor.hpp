#pragma once
// The policy editor: the breaker's detect / trip / open / probe / ramp parameters and the
// degrade and shedding settings, each a slider with a spin box (units, range), grouped as the
// policy file is. A scope picker edits the default breaker or one model's override (only the
// keys that differ from the default are written). Every change emits the edited policy (the
// window coalesces changes into one what-if re-run); a *committed* change — a slider let go, a
// typed value finished, a box ticked — is also one undo step. The editor knows the policy it
// loaded (and from where), so it can say what changed and revert to it.
#include <QWidget>

#include "spillway/policy.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QPushButton;
class QSlider;
class QUndoStack;
class QVBoxLayout;

namespace spillway::console {

// Two policies that write the same file: what "modified", "stale" and an undo step compare.
bool samePolicy(const Policy& a, const Policy& b);

class PolicyEditor : public QWidget {
  Q_OBJECT
 public:
  explicit PolicyEditor(QWidget* parent = nullptr);
  ~PolicyEditor() override;
  void setPolicy(const Policy& p);  // no policyEdited signal, no undo step
  // A policy loaded from `source` ("scenario seed-000", a file, …): what "modified" and
  // Revert refer to. Clears the undo history; no policyEdited signal.
  void loadPolicy(const Policy& p, const QString& source);
  // An edit from outside (a sweep's candidate): one undo step, policyEdited and committed.
  void applyPolicy(const Policy& p, const QString& what);
  void revert();  // back to the loaded policy, as one undo step
  const Policy& loaded() const { return loaded_; }
  QString source() const { return source_; }
  bool isModified() const;
  // "name*" when modified.
  QString displayName() const;
  // What changed from the loaded policy, one line per key ("breaker.trip.slow_rate: 0.4 → 0.45").
  QStringList changes() const;
  QUndoStack* undoStack() const { return undo_; }
  // Writes the policy as `name` with a header (source, changes from the loaded policy, the
  // headline KPIs set by setHeaderKpis). false + a message when the file cannot be written.
  bool saveTo(const QString& path, const QString& name, QString* error = nullptr);
  void setHeaderKpis(std::vector<std::string> lines) { headerKpis_ = std::move(lines); }
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
  // The edit that just emitted policyEdited is final (not a step of a drag or of typing).
  void committed();
  // The loaded policy, the modified mark or the undo history changed.
  void stateChanged();

 private:
  struct Row {
    QString key;
    QDoubleSpinBox* box;
    QSlider* slider;
    enum class Scale { Linear, Log, Square } scale;
    QLabel* label;
  };
  void buildScopeRow(QVBoxLayout* layout);
  void buildFileButtons(QVBoxLayout* layout);
  void connectScope();
  QFormLayout* addGroup(QVBoxLayout* layout, const QString& title, const char* key);
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
  void markOverrides();
  void commit(const QString& what);
  void edited(bool final, const QString& what);
  void load();
  void save();

  Policy policy_, loaded_, committed_;
  QString source_;
  std::vector<std::string> headerKpis_;
  QUndoStack* undo_;
  bool updating_ = false;
  QComboBox* scope_;
  QPushButton* resetOverride_;
  QList<Row> rows_;
  QList<QPair<QString, QCheckBox*>> checks_;
};

}  // namespace spillway::console
