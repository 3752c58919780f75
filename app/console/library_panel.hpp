#pragma once
// The incident library as a dock: the library file, its incidents (name, source, time range,
// calls, tags) with a filter, Import… (file, format, skip bad lines, optional fault
// annotations) running off the UI thread with progress and cancel, tags and notes saved to the
// library, the incident's annotations. Selecting an incident asks the window to replay it.
// Errors are a message in the panel (`file:line: field: …`); a failed or cancelled import
// leaves the library as it was (one transaction per file).
#include <QStringList>
#include <QWidget>

#include <atomic>
#include <memory>
#include <optional>

#include "background_job.hpp"
#include "spillway/formats/source.hpp"

class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTableWidget;
class QVBoxLayout;

namespace spillway::library {
class Library;
struct Annotation;
}  // namespace spillway::library

namespace spillway::console {

class DrillBoard;

struct ImportRequest {
  QStringList files;
  formats::Format format = formats::Format::Jsonl;
  bool skipBadLines = false;
  QString incident;    // empty: the first file's base name
  QString faultsFile;  // optional fault annotations (JSON Lines), stored with origin operator
};

class LibraryPanel : public QWidget {
  Q_OBJECT
 public:
  explicit LibraryPanel(QWidget* parent = nullptr);
  ~LibraryPanel() override;

  // Opens (create: or creates) the library file; false + a message when it is not one.
  bool openLibrary(const QString& path, bool create, QString* error = nullptr);
  QString libraryPath() const { return path_; }
  library::Library* library() const { return lib_.get(); }  // the UI thread's connection
  void refresh();

  QStringList shownIncidents() const;  // after the filter, in table order
  bool selectIncident(const QString& name);
  QString selectedIncident() const;
  // Multi-selection in the table (the sweep dialog takes it as its default).
  QStringList selectedIncidents() const;

  void startImport(const ImportRequest& r);
  void cancelImport();
  bool importing() const { return importing_; }
  // Tags and notes of the selected incident, saved to the library.
  bool saveNotes(const QString& tags, const QString& notes);
  QString message() const;

  QTableWidget* table() const { return table_; }
  QLineEdit* filter() const { return filter_; }
  QLineEdit* tagsEdit() const { return tags_; }
  QPlainTextEdit* notesEdit() const { return notes_; }
  QListWidget* annotationList() const { return annotations_; }
  // The selected incident's annotation at `row` of the list: removed, or its kind changed
  // (annotationsChanged follows); false + a message when the library refuses.
  bool removeAnnotation(int row, QString* error = nullptr);
  bool setAnnotationKind(int row, const QString& kind, QString* error = nullptr);

 signals:
  void annotationsChanged(const QString& incident);  // the ground truth TTD is scored against
  void incidentSelected(const QString& name);
  void importFinished(bool ok, const QString& message);
  void libraryOpened(const QString& path);

 private:
  void buildIncidentList(QVBoxLayout* layout);
  void buildImportRow(QVBoxLayout* layout);
  void buildDetails(QVBoxLayout* layout);
  void connectSignals();
  void showMessage(const QString& text, bool error);
  void applyFilter();
  void selectOnly(int row);
  void showDetails();
  void importDialog();
  void deleteSelected();
  void annotationMenu(const QPoint& at);
  bool editAnnotation(int row, const std::optional<QString>& kind, QString* error);

 public:
  // The drill board over this library's stored drill runs (a new dialog, not shown).
  DrillBoard* openDrillBoard();

 private:
  QString importFiles(const ImportRequest& r, const QString& path,
                      const std::atomic<bool>& cancelled, const BackgroundJob::Context& job);
  void finishImport(bool ok, const QString& msg, const QString& path, const QString& incident);

  QString path_;
  std::unique_ptr<library::Library> lib_;
  QLabel *pathLabel_, *message_;
  QLineEdit *filter_, *tags_;
  QTableWidget* table_;
  QPlainTextEdit* notes_;
  QListWidget* annotations_;
  std::vector<library::Annotation> shownAnnotations_;  // the list's rows
  QPushButton *import_, *cancel_, *delete_, *drills_, *saveNotes_;
  QProgressBar* progress_;
  BackgroundJob job_;  // the import
  std::shared_ptr<std::atomic<bool>> cancelFlag_;
  bool importing_ = false;
};

// "2025-11-30 05:20:00 – 05:35:00" (UTC; the end's date only when it differs).
QString timeRange(Micros start, Micros end);

}  // namespace spillway::console
