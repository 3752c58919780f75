#include "library_panel.hpp"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QMetaObject>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QTableWidget>
#include <QVBoxLayout>

#include "drill_board.hpp"
#include "spillway/input_error.hpp"
#include "spillway/library/library.hpp"
#include "spillway/view/drill_trend.hpp"

namespace spillway::console {
namespace {

constexpr int kNameRole = Qt::UserRole + 1;

struct ImportCancelled {};

QDateTime utc(Micros t) {
  return QDateTime::fromMSecsSinceEpoch(t / 1000, Qt::UTC);
}

// A fault annotation's time: epoch ms (a number) or RFC 3339 (a string).
std::optional<Micros> faultTime(const QJsonValue& v) {
  if (v.isDouble()) return instantFromMillis(v.toDouble());
  if (v.isString()) return parseInstant(v.toString().toStdString());
  return std::nullopt;
}

// Fault annotations, one JSON object a line: {"instance", "start", "end", "kind"}.
// Throws InputError naming file:line: field.
std::vector<library::Annotation> readFaults(const QString& path) {
  QFile f(path);
  const std::string name = path.toStdString();
  if (!f.open(QIODevice::ReadOnly)) throw InputError(name, 0, "", "cannot read");
  std::vector<library::Annotation> out;
  long line = 0;
  while (!f.atEnd()) {
    const QByteArray text = f.readLine().trimmed();
    ++line;
    if (text.isEmpty()) continue;
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(text, &err);
    if (!doc.isObject()) throw InputError(name, line, "", "not a JSON object");
    const QJsonObject o = doc.object();
    library::Annotation a;
    a.instance = o.value("instance").toString().toStdString();
    if (a.instance.empty()) throw InputError(name, line, "instance", "missing required field");
    const auto s = faultTime(o.value("start")), e = faultTime(o.value("end"));
    if (!s) throw InputError(name, line, "start", "expected epoch ms or RFC 3339");
    if (!e) throw InputError(name, line, "end", "expected epoch ms or RFC 3339");
    if (*e < *s) throw InputError(name, line, "end", "before start");
    a.start = *s;
    a.end = *e;
    a.kind = o.value("kind").toString("fault").toStdString();
    a.origin = "operator";
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

QString timeRange(Micros start, Micros end) {
  if (start == 0 && end == 0) return "—";
  const QDateTime a = utc(start), b = utc(end);
  return a.toString("yyyy-MM-dd HH:mm:ss") + " – " +
         b.toString(a.date() == b.date() ? "HH:mm:ss" : "yyyy-MM-dd HH:mm:ss");
}

LibraryPanel::LibraryPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  buildIncidentList(layout);
  buildImportRow(layout);
  buildDetails(layout);
  connectSignals();
  pathLabel_->setText(tr("No library open. Import… creates one."));
}

// The library's path, the filter and the incidents table.
void LibraryPanel::buildIncidentList(QVBoxLayout* layout) {
  pathLabel_ = new QLabel(this);
  pathLabel_->setWordWrap(true);
  pathLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(pathLabel_);
  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(tr("Filter by name, source or tag"));
  filter_->setClearButtonEnabled(true);
  layout->addWidget(filter_);
  table_ = new QTableWidget(this);
  table_->setColumnCount(5);
  table_->setHorizontalHeaderLabels(
      {tr("incident"), tr("source"), tr("time (UTC)"), tr("calls"), tr("tags")});
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setToolTip(tr("Select an incident to replay it under the editor's policy"));
  layout->addWidget(table_, 2);
}

// Import…, Delete, Drills…, the import's progress and cancel, and the panel's message line.
void LibraryPanel::buildImportRow(QVBoxLayout* layout) {
  auto* buttons = new QHBoxLayout;
  import_ = new QPushButton(tr("Import…"), this);
  import_->setToolTip(tr("Import a recorded trace (JSONL, CSV, nginx, Envoy, OTLP, Prometheus)"));
  delete_ = new QPushButton(tr("Delete"), this);
  drills_ = new QPushButton(tr("Drills…"), this);
  drills_->setToolTip(
      tr("The trend of the drill runbooks stored in this library (docs/drills.md)"));
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setVisible(false);
  progress_ = new QProgressBar(this);
  progress_->setVisible(false);
  progress_->setRange(0, 0);
  buttons->addWidget(import_);
  buttons->addWidget(delete_);
  buttons->addWidget(drills_);
  buttons->addWidget(progress_, 1);
  buttons->addWidget(cancel_);
  layout->addLayout(buttons);
  message_ = new QLabel(this);
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(message_);
}

// The selected incident's tags, notes and fault annotations.
void LibraryPanel::buildDetails(QVBoxLayout* layout) {
  auto* details = new QGroupBox(tr("Incident"), this);
  auto* form = new QFormLayout(details);
  tags_ = new QLineEdit(details);
  tags_->setPlaceholderText(tr("comma-separated, e.g. gpu-leak, chat-72b"));
  notes_ = new QPlainTextEdit(details);
  notes_->setPlaceholderText(tr("What happened, what was learned"));
  notes_->setMaximumHeight(80);
  saveNotes_ = new QPushButton(tr("Save tags and notes"), details);
  annotations_ = new QListWidget(details);
  annotations_->setMaximumHeight(90);
  annotations_->setToolTip(
      tr("Fault annotations: the ground truth TTD and MTTR are scored against. Shift+drag over "
         "the timelines to mark the focused instance bad; right-click (or Delete) to remove one "
         "or change its kind."));
  annotations_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(annotations_, &QListWidget::customContextMenuRequested, this,
          &LibraryPanel::annotationMenu);
  auto* del = new QAction(tr("Delete annotation"), annotations_);
  del->setShortcut(QKeySequence::Delete);
  del->setShortcutContext(Qt::WidgetShortcut);
  annotations_->addAction(del);
  connect(del, &QAction::triggered, this, [this] {
    QString error;
    if (annotations_->currentRow() >= 0 && !removeAnnotation(annotations_->currentRow(), &error))
      showMessage(error, true);
  });
  form->addRow(tr("tags"), tags_);
  form->addRow(tr("notes"), notes_);
  form->addRow(saveNotes_);
  form->addRow(tr("faults"), annotations_);
  layout->addWidget(details, 1);
}

void LibraryPanel::connectSignals() {
  connect(filter_, &QLineEdit::textChanged, this, &LibraryPanel::applyFilter);
  connect(table_, &QTableWidget::itemSelectionChanged, this, [this] {
    showDetails();
    const QString name = selectedIncident();
    if (!name.isEmpty() && table_->selectionModel()->selectedRows().size() == 1)
      emit incidentSelected(name);
  });
  connect(import_, &QPushButton::clicked, this, &LibraryPanel::importDialog);
  connect(cancel_, &QPushButton::clicked, this, &LibraryPanel::cancelImport);
  connect(delete_, &QPushButton::clicked, this, &LibraryPanel::deleteSelected);
  connect(drills_, &QPushButton::clicked, this, [this] {
    DrillBoard* b = openDrillBoard();
    b->setAttribute(Qt::WA_DeleteOnClose);
    b->show();
  });
  connect(saveNotes_, &QPushButton::clicked, this,
          [this] { saveNotes(tags_->text(), notes_->toPlainText()); });
}

// An import in flight stops at its next block and rolls its file back on its own.
LibraryPanel::~LibraryPanel() {
  if (cancelFlag_) cancelFlag_->store(true);
}

bool LibraryPanel::openLibrary(const QString& path, bool create, QString* error) {
  try {
    auto lib = std::make_unique<library::Library>(path.toStdString(),
                                                  library::OpenOptions{.mustExist = !create});
    lib_ = std::move(lib);
    path_ = path;
    pathLabel_->setText(tr("Library: %1").arg(path));
    refresh();
    emit libraryOpened(path);
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    showMessage(QString::fromUtf8(e.what()), true);
    return false;
  }
}

void LibraryPanel::refresh() {
  const QString keep = selectedIncident();
  const QSignalBlocker block(table_);
  table_->setRowCount(0);
  if (!lib_) return;
  try {
    const auto list = lib_->incidents();
    table_->setRowCount(static_cast<int>(list.size()));
    for (int r = 0; r < static_cast<int>(list.size()); ++r) {
      const library::IncidentInfo& i = list[static_cast<std::size_t>(r)];
      auto* name = new QTableWidgetItem(QString::fromStdString(i.name));
      name->setData(kNameRole, QString::fromStdString(i.name));
      name->setToolTip(QString::fromStdString(i.notes));
      table_->setItem(r, 0, name);
      auto* src = new QTableWidgetItem(QFileInfo(QString::fromStdString(i.source)).fileName());
      src->setToolTip(QString::fromStdString(i.source));
      table_->setItem(r, 1, src);
      table_->setItem(r, 2, new QTableWidgetItem(timeRange(i.tStart, i.tEnd)));
      auto* calls = new QTableWidgetItem;
      calls->setData(Qt::DisplayRole, QVariant::fromValue<qulonglong>(i.records));
      calls->setToolTip(i.kind == "aggregates" ? tr("aggregate samples (metrics)") : tr("calls"));
      table_->setItem(r, 3, calls);
      table_->setItem(r, 4, new QTableWidgetItem(QString::fromStdString(i.tags)));
    }
  } catch (const std::exception& e) {
    showMessage(QString::fromUtf8(e.what()), true);
  }
  applyFilter();
  if (!keep.isEmpty()) {
    for (int r = 0; r < table_->rowCount(); ++r)
      if (table_->item(r, 0)->data(kNameRole).toString() == keep) selectOnly(r);
  }
  showDetails();
}

void LibraryPanel::applyFilter() {
  const QString f = filter_->text().trimmed();
  for (int r = 0; r < table_->rowCount(); ++r) {
    bool match = f.isEmpty();
    for (int c : {0, 1, 4})
      match = match || table_->item(r, c)->text().contains(f, Qt::CaseInsensitive);
    table_->setRowHidden(r, !match);
  }
}

QStringList LibraryPanel::shownIncidents() const {
  QStringList out;
  for (int r = 0; r < table_->rowCount(); ++r)
    if (!table_->isRowHidden(r)) out << table_->item(r, 0)->data(kNameRole).toString();
  return out;
}

bool LibraryPanel::selectIncident(const QString& name) {
  for (int r = 0; r < table_->rowCount(); ++r)
    if (table_->item(r, 0)->data(kNameRole).toString() == name) {
      table_->setRowHidden(r, false);
      if (selectedIncident() == name && selectedIncidents().size() == 1) {
        emit incidentSelected(name);  // already selected: replay again
      } else {
        selectOnly(r);
      }
      return true;
    }
  return false;
}

// The row alone, whatever modifier keys are down (QTableView::selectRow honours Shift/Ctrl,
// which a Shift+drag on the timelines may still hold).
void LibraryPanel::selectOnly(int row) {
  table_->selectionModel()->select(table_->model()->index(row, 0),
                                   QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  table_->setCurrentCell(row, 0, QItemSelectionModel::NoUpdate);
}

QString LibraryPanel::selectedIncident() const {
  const auto rows = table_->selectionModel()->selectedRows();
  if (rows.isEmpty()) return {};
  return table_->item(rows.front().row(), 0)->data(kNameRole).toString();
}

QStringList LibraryPanel::selectedIncidents() const {
  QStringList out;
  for (const QModelIndex& i : table_->selectionModel()->selectedRows())
    out << table_->item(i.row(), 0)->data(kNameRole).toString();
  return out;
}

void LibraryPanel::showDetails() {
  const QString name = selectedIncident();
  tags_->clear();
  notes_->clear();
  annotations_->clear();
  shownAnnotations_.clear();
  const bool have = lib_ && !name.isEmpty();
  tags_->setEnabled(have);
  notes_->setEnabled(have);
  saveNotes_->setEnabled(have);
  delete_->setEnabled(have && !importing_);
  if (!have) return;
  try {
    if (auto info = lib_->incident(name.toStdString())) {
      tags_->setText(QString::fromStdString(info->tags));
      notes_->setPlainText(QString::fromStdString(info->notes));
    }
    shownAnnotations_ = lib_->annotations(name.toStdString());
    for (const library::Annotation& a : shownAnnotations_)
      annotations_->addItem(QString("%1  %2  %3 (%4)")
                                .arg(QString::fromStdString(a.instance), timeRange(a.start, a.end),
                                     QString::fromStdString(a.kind),
                                     QString::fromStdString(a.origin)));
  } catch (const std::exception& e) {
    showMessage(QString::fromUtf8(e.what()), true);
  }
}

void LibraryPanel::annotationMenu(const QPoint& at) {
  const int row = annotations_->indexAt(at).row();
  if (row < 0) return;
  QMenu menu(this);
  QString error;
  menu.addAction(tr("Delete"), this, [this, row, &error] {
    if (!removeAnnotation(row, &error)) showMessage(error, true);
  });
  menu.addAction(tr("Change kind…"), this, [this, row, &error] {
    bool ok = false;
    const QString kind = QInputDialog::getText(
        this, tr("Annotation kind"), tr("Kind (e.g. latency_drift, errors, marked bad):"),
        QLineEdit::Normal,
        QString::fromStdString(shownAnnotations_[static_cast<std::size_t>(row)].kind), &ok);
    if (ok && !setAnnotationKind(row, kind.trimmed(), &error)) showMessage(error, true);
  });
  menu.exec(annotations_->viewport()->mapToGlobal(at));
}

bool LibraryPanel::removeAnnotation(int row, QString* error) {
  return editAnnotation(row, std::nullopt, error);
}

bool LibraryPanel::setAnnotationKind(int row, const QString& kind, QString* error) {
  return editAnnotation(row, kind, error);
}

// The row's annotation removed, and with `kind` written back under that kind.
bool LibraryPanel::editAnnotation(int row, const std::optional<QString>& kind, QString* error) {
  const QString name = selectedIncident();
  if (!lib_ || name.isEmpty() || row < 0 || row >= static_cast<int>(shownAnnotations_.size())) {
    if (error) *error = tr("No annotation selected");
    return false;
  }
  library::Annotation a = shownAnnotations_[static_cast<std::size_t>(row)];
  try {
    lib_->removeAnnotation(name.toStdString(), a);
    if (kind) {
      a.kind = kind->toStdString();
      lib_->annotate(name.toStdString(), a);
    }
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
  showDetails();
  emit annotationsChanged(name);
  return true;
}

bool LibraryPanel::saveNotes(const QString& tags, const QString& notes) {
  const QString name = selectedIncident();
  if (!lib_ || name.isEmpty()) return false;
  try {
    lib_->setNotes(name.toStdString(), tags.toStdString(), notes.toStdString());
    refresh();
    showMessage(tr("Saved tags and notes of %1").arg(name), false);
    return true;
  } catch (const std::exception& e) {
    showMessage(QString::fromUtf8(e.what()), true);
    return false;
  }
}

DrillBoard* LibraryPanel::openDrillBoard() {
  std::vector<view::DrillRunRow> rows;
  try {
    if (lib_)
      for (const library::DrillRunInfo& d : lib_->drillRuns())
        rows.push_back(
            {d.id, d.runbook, d.revision, d.spillwayVersion, d.created, d.resultJson, d.passed});
  } catch (const std::exception& e) {
    showMessage(QString::fromUtf8(e.what()), true);
  }
  return new DrillBoard(view::drillTrends(std::move(rows)), this);
}

void LibraryPanel::deleteSelected() {
  const QString name = selectedIncident();
  if (!lib_ || name.isEmpty()) return;
  if (QMessageBox::question(this, tr("Delete incident"),
                            tr("Delete %1 with its calls, annotations and runs?").arg(name)) !=
      QMessageBox::Yes)
    return;
  try {
    lib_->deleteIncident(name.toStdString());
  } catch (const std::exception& e) {
    showMessage(QString::fromUtf8(e.what()), true);
  }
  refresh();
}

void LibraryPanel::showMessage(const QString& text, bool error) {
  message_->setText(text);
  message_->setStyleSheet(error ? "color: #c62828;" : QString());
}

QString LibraryPanel::message() const {
  return message_->text();
}

void LibraryPanel::importDialog() {
  QDialog d(this);
  d.setWindowTitle(tr("Import a recorded trace"));
  auto* form = new QFormLayout(&d);
  auto* file = new QLineEdit(&d);
  auto* browse = new QPushButton(tr("Browse…"), &d);
  auto* fileRow = new QHBoxLayout;
  fileRow->addWidget(file, 1);
  fileRow->addWidget(browse);
  auto* format = new QComboBox(&d);
  for (const formats::Format f : formats::kFormats)
    format->addItem(QString::fromStdString(std::string(formats::formatName(f))));
  auto* skip = new QCheckBox(tr("Skip bad lines (count them, keep the first 20 messages)"), &d);
  auto* incident = new QLineEdit(&d);
  incident->setPlaceholderText(tr("the file's base name"));
  auto* faults = new QLineEdit(&d);
  faults->setPlaceholderText(tr("optional: fault annotations (.faults.jsonl)"));
  form->addRow(tr("File"), fileRow);
  form->addRow(tr("Format"), format);
  form->addRow(skip);
  form->addRow(tr("Incident"), incident);
  form->addRow(tr("Faults"), faults);
  auto* box = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &d);
  box->button(QDialogButtonBox::Ok)->setText(tr("Import"));
  form->addRow(box);
  connect(box, &QDialogButtonBox::accepted, &d, &QDialog::accept);
  connect(box, &QDialogButtonBox::rejected, &d, &QDialog::reject);
  connect(browse, &QPushButton::clicked, &d, [&] {
    QSettings settings;
    const QString path = QFileDialog::getOpenFileName(
        &d, tr("Import trace"), settings.value("files/lastTraceDir").toString(),
        tr("Traces (*.jsonl *.json *.csv *.log);;All files (*)"));
    if (path.isEmpty()) return;
    settings.setValue("files/lastTraceDir", QFileInfo(path).absolutePath());
    file->setText(path);
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == "csv") format->setCurrentText("csv");
    // The generator writes X.faults.jsonl next to X.jsonl: offer it.
    const QFileInfo fi(path);
    const QString sibling = fi.absolutePath() + "/" + fi.completeBaseName() + ".faults.jsonl";
    if (QFileInfo::exists(sibling) && faults->text().isEmpty()) faults->setText(sibling);
  });
  if (d.exec() != QDialog::Accepted || file->text().trimmed().isEmpty()) return;
  ImportRequest r;
  r.files = {file->text().trimmed()};
  formats::parseFormat(format->currentText().toStdString(), r.format);
  r.skipBadLines = skip->isChecked();
  r.incident = incident->text().trimmed();
  r.faultsFile = faults->text().trimmed();
  startImport(r);
}

void LibraryPanel::startImport(const ImportRequest& req) {
  if (importing_) {
    showMessage(tr("An import is running"), true);
    return;
  }
  QString path = path_;
  if (path.isEmpty()) path = QString::fromStdString(library::defaultLibraryPath());
  ImportRequest r = req;
  if (r.incident.isEmpty() && !r.files.isEmpty())
    r.incident = QFileInfo(r.files.front()).completeBaseName();
  importing_ = true;
  cancelFlag_ = std::make_shared<std::atomic<bool>>(false);
  import_->setEnabled(false);
  delete_->setEnabled(false);
  cancel_->setVisible(true);
  progress_->setVisible(true);
  progress_->setFormat(tr("importing…"));
  showMessage(tr("Importing %1…").arg(r.files.join(", ")), false);
  job_.start([this, r, path, flag = cancelFlag_](const BackgroundJob::Context& job) {
    bool ok = true;
    QString msg;
    try {
      msg = importFiles(r, path, *flag, job);
    } catch (const ImportCancelled&) {
      ok = false;
      msg = tr("Import cancelled; the library is as it was before that file");
    } catch (const std::exception& e) {
      ok = false;
      msg = QString::fromUtf8(e.what());
    }
    job.deliver(
        [this, ok, msg, path, incident = r.incident] { finishImport(ok, msg, path, incident); });
  });
}

// On the import worker: the files (and the fault annotations) into the library at `path`;
// what was imported, as the panel says it. Throws ImportCancelled once `cancelled` is set.
QString LibraryPanel::importFiles(const ImportRequest& r, const QString& path,
                                  const std::atomic<bool>& cancelled,
                                  const BackgroundJob::Context& job) {
  QStringList notes;
  // Its own connection, created if missing (the first import makes the library).
  library::Library lib(path.toStdString(), library::OpenOptions{.mustExist = false});
  formats::ImportOptions opt;
  opt.skipBadLines = r.skipBadLines;
  bool stored = false;
  std::uint64_t records = 0, skipped = 0;
  for (const QString& f : r.files) {
    const auto res = lib.importFile(
        f.toStdString(), r.format, opt, r.incident.toStdString(), [&](std::uint64_t n) {
          if (cancelled.load()) throw ImportCancelled{};  // rolls the file's transaction back
          job.post([this, n] { progress_->setFormat(tr("%L1 records").arg(n)); });
        });
    if (res.alreadyImported) {
      notes << tr("%1 was already imported into %2")
                   .arg(QFileInfo(f).fileName(), QString::fromStdString(res.incident));
      continue;
    }
    stored = true;
    records += res.records;
    skipped += res.skipped;
    for (const std::string& m : res.skippedMessages) notes << QString::fromStdString(m);
  }
  if (stored && !r.faultsFile.isEmpty())
    for (const library::Annotation& a : readFaults(r.faultsFile))
      lib.annotate(r.incident.toStdString(), a);
  QString msg = stored ? tr("Imported %L1 records into %2").arg(records).arg(r.incident)
                       : tr("Nothing new imported");
  if (skipped) msg += tr(" (%L1 bad lines skipped)").arg(skipped);
  if (!notes.isEmpty()) msg += "\n" + notes.mid(0, 20).join("\n");
  return msg;
}

// Back on the UI thread: the panel's controls again, the library reopened or refreshed, the
// imported incident selected.
void LibraryPanel::finishImport(bool ok, const QString& msg, const QString& path,
                                const QString& incident) {
  importing_ = false;
  import_->setEnabled(true);
  cancel_->setVisible(false);
  progress_->setVisible(false);
  showMessage(msg, !ok);
  if (path_ != path || !lib_) {
    QString error;
    if (library::isDatabaseUrl(path.toStdString()) || QFileInfo::exists(path))
      openLibrary(path, false, &error);
  } else {
    refresh();
  }
  if (ok) selectIncident(incident);
  emit importFinished(ok, msg);
}

void LibraryPanel::cancelImport() {
  if (cancelFlag_) cancelFlag_->store(true);
}

}  // namespace spillway::console
