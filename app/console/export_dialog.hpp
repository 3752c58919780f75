#pragma once
// Export: the policy being tuned as the target gateway's own configuration (Resilience4j,
// Envoy, Istio, Sentinel, HAProxy, nginx, LiteLLM) in a highlighted preview with the mapping
// notes grouped as dropped / approximated / exact; Validate replays the incident under the
// native policy and under the target's emulated semantics (off the UI thread), puts the verdict
// on top, names every gap and checks the requirements; the Review report tab renders the
// bundle's validation.md as a reviewer will read it; Save, Copy, and Export bundle… (the
// policy, the native file and validation.md for a pull request, spillway/export/bundle.hpp).
//
// The preview is exported with what the incident teaches (its instances become servers, its
// learned P99 fixes slow thresholds), learned when the incident is chosen; Validate replays
// that same text and never changes it.
#include <QDialog>

#include <memory>
#include <optional>

#include "background_job.hpp"
#include "spillway/export/bundle.hpp"
#include "spillway/export/export.hpp"
#include "spillway/policy.hpp"

class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSplitter;
class QTabWidget;
class QTextBrowser;
class QVBoxLayout;

namespace spillway::console {

class ExportDialog : public QDialog {
  Q_OBJECT
 public:
  explicit ExportDialog(const Policy& policy, QWidget* parent = nullptr);
  // Where the policy came from and what it replaces, for the bundle's header and its "before"
  // column (default: "console", the built-in default policy).
  void setProvenance(const QString& source, const Policy& base, const QString& baseName);
  // For tests and scripting.
  bool setTarget(const QString& name);
  void setTrace(const QString& path);  // empty: the built-in seed-000 sample
  void setRequirements(const QString& spec);
  void validate();
  bool ready() const { return learned_.has_value(); }  // the preview is exported
  QString exportText() const;
  QString reportText() const;
  // validation.md of the bundle the last validation would write, as the Review report tab
  // renders it; empty before a validation.
  QString reportMarkdown() const;
  // Writes the bundle of the last validation into `dir`; returns the files written, or nothing
  // (and emits failed) when there is no current validation or `dir` cannot be written.
  QStringList exportBundle(const QString& dir);

 signals:
  void exportReady();  // the incident is learned and the preview holds the export
  void validated(bool requirementsMet);
  void failed(const QString& message);

 private:
  QPushButton* buildForm(QVBoxLayout* layout);
  void buildPanes(QVBoxLayout* layout);
  QHBoxLayout* buildButtons();
  void saveConfig();
  void chooseBundleDir();
  void learn();    // replays the incident natively (worker) for the export's context
  void refresh();  // re-export with the learned context, into the preview and the notes
  void finishValidation(std::shared_ptr<const exporter::ValidatedExport> v, bool ok,
                        const QString& error);
  DialectKind currentTarget() const;
  exporter::BundleInfo bundleInfo() const;
  void showReport();  // validation.md of the current validation, rendered
  Policy policy_;
  Policy base_;
  QString source_ = QStringLiteral("console");
  QString baseName_;
  std::optional<exporter::ExportContext> learned_;  // from the trace; unset while learning
  std::shared_ptr<const exporter::ValidatedExport> validation_;  // for the current target
  QString trace_;
  QComboBox* target_;
  QLineEdit* require_;
  QLabel* incident_;
  QPlainTextEdit* preview_;
  QPlainTextEdit* report_;  // notes, progress and messages
  QTextBrowser* review_;    // the rendered validation.md
  QTabWidget* lower_;
  QSplitter* split_;
  QString reviewMarkdown_;
  QPushButton* validate_;
  QPushButton* bundle_;
  QLabel* saved_;           // what Save… or Export bundle… last wrote, whichever tab is shown
  BackgroundJob learnJob_;  // the native replay that teaches the export
  BackgroundJob job_;       // the validation replays
};

}  // namespace spillway::console
