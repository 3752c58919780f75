#pragma once
// Export: the policy being tuned as the target gateway's own configuration (Resilience4j,
// Envoy, Istio, Sentinel, HAProxy, nginx, LiteLLM) in a highlighted preview with the mapping
// notes; Validate replays an incident under the native policy and under the target's emulated
// semantics (off the UI thread), names every gap and checks the requirements; Save and Copy.
#include <QDialog>

#include <memory>

#include "background_job.hpp"
#include "spillway/export/export.hpp"
#include "spillway/policy.hpp"

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QVBoxLayout;

namespace spillway::console {

class ExportDialog : public QDialog {
  Q_OBJECT
 public:
  explicit ExportDialog(const Policy& policy, QWidget* parent = nullptr);
  // For tests and scripting.
  bool setTarget(const QString& name);
  void setTrace(const QString& path);  // empty: the built-in seed-000 sample
  void setRequirements(const QString& spec);
  void validate();
  QString exportText() const;
  QString reportText() const;

 signals:
  void validated(bool requirementsMet);
  void failed(const QString& message);

 private:
  QPushButton* buildForm(QVBoxLayout* layout);
  void buildPanes(QVBoxLayout* layout);
  void saveConfig();
  void refresh();  // re-export with what validation learned, into the preview
  void finishValidation(exporter::ExportContext ctx, QString report, bool met);
  Policy policy_;
  exporter::ExportContext context_;  // learned baselines and instances, once validated
  QString trace_;
  QComboBox* target_;
  QLineEdit* require_;
  QLabel* incident_;
  QPlainTextEdit* preview_;
  QPlainTextEdit* report_;
  QPushButton* validate_;
  BackgroundJob job_;  // the validation replays
};

}  // namespace spillway::console
