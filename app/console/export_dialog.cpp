#include "export_dialog.hpp"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSplitter>
#include <QSyntaxHighlighter>
#include <QTabWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <fstream>

#include "spillway/app/resources.hpp"
#include "spillway/dialect.hpp"
#include "spillway/export/validate.hpp"
#include "spillway/fault_annotations.hpp"
#include "spillway/input_limits.hpp"

namespace spillway::console {
namespace {

// YAML, JSON and proxy configs alike: comments, keys, strings, numbers with units.
class ConfigHighlighter final : public QSyntaxHighlighter {
 public:
  explicit ConfigHighlighter(QTextDocument* doc) : QSyntaxHighlighter(doc) {
    auto fmt = [](const QColor& c, bool bold = false) {
      QTextCharFormat f;
      f.setForeground(c);
      if (bold) f.setFontWeight(QFont::Bold);
      return f;
    };
    rules_ = {
        {QRegularExpression(R"(\b\d+(\.\d+)?(ms|s|m|h|%)?\b)"), fmt(QColor(150, 80, 0))},
        {QRegularExpression(R"("[^"]*")"), fmt(QColor(20, 130, 60))},
        {QRegularExpression(R"(^\s*-?\s*[A-Za-z_][\w.\-]*(?=\s*:))"),
         fmt(QColor(30, 90, 200), true)},
        {QRegularExpression(R"("[\w.\-]+"(?=\s*:))"), fmt(QColor(30, 90, 200), true)},
        {QRegularExpression(R"(^\s*(backend|server|upstream|option|default-server)\b)"),
         fmt(QColor(140, 40, 160), true)},
        {QRegularExpression(R"(#.*$)"), fmt(QColor(128, 128, 128))},
    };
  }

 protected:
  void highlightBlock(const QString& text) override {
    for (const auto& [re, f] : rules_)
      for (auto it = re.globalMatch(text); it.hasNext();) {
        const auto m = it.next();
        setFormat(static_cast<int>(m.capturedStart()), static_cast<int>(m.capturedLength()), f);
      }
  }

 private:
  std::vector<std::pair<QRegularExpression, QTextCharFormat>> rules_;
};

// The incident to replay: the built-in seed-000 sample, or `trace` with its X.faults.jsonl
// sibling when there is one.
exporter::Incident loadIncident(const std::string& trace) {
  exporter::Incident inc;
  if (trace.empty()) {
    inc.name = "seed000-sample";
    inc.text = app::readWhole(app::kSampleTrace, input_limits::kWholeTrace, "trace");
    inc.faults = parseFaultAnnotations(
        app::readWhole(app::kSampleFaults, input_limits::kFaults, "faults file"),
        "seed000-sample.faults.jsonl (built-in)");
  } else {
    inc.name = QFileInfo(QString::fromStdString(trace)).fileName().toStdString();
    inc.text = app::readWhole(trace, input_limits::kWholeTrace, "trace");
    const std::string faults =
        (trace.ends_with(".jsonl") ? trace.substr(0, trace.size() - 6) : trace) + ".faults.jsonl";
    if (std::ifstream(faults).good())
      inc.faults = parseFaultAnnotations(
          app::readWhole(faults, input_limits::kFaults, "faults file"), faults);
  }
  return inc;
}

// The mapping notes as a reviewer reads them: dropped, approximated, exact.
QString notesText(const exporter::ExportResult& r) {
  const exporter::GroupedNotes g = exporter::groupNotes(r.notes);
  QString text = QString("%1 — mapping notes\n").arg(QString::fromStdString(r.fileName));
  auto group = [&](const QString& title, const char* mark,
                   const std::vector<exporter::MappingNote>& notes) {
    text += title + QString(" (%1):\n").arg(notes.size());
    if (notes.empty()) text += "  none\n";
    for (const exporter::MappingNote& n : notes)
      text += QString("  %1 %2\n").arg(mark, QString::fromStdString(exporter::noteText(n)));
  };
  group(QObject::tr("Dropped — the target cannot express it"), "x", g.dropped);
  group(QObject::tr("Approximated"), "~", g.approximated);
  group(QObject::tr("Exact"), "=", g.exact);
  return text;
}

QString fpText(const ReplayKpis& k) {
  return (k.fpRate()
              ? QString::fromStdString(exporter::formatMetric(exporter::Metric::Fp, *k.fpRate()))
              : QString("n/a")) +
         QString(" (n=%1)").arg(k.blocked());
}

// The verdict on top, then the KPIs side by side, the gaps and each requirement.
QString validationText(const exporter::ValidatedExport& v) {
  QString text;
  for (const std::string& line : exporter::verdictLines(v))
    text += (text.isEmpty() ? "" : "  ") + QString::fromStdString(line) + "\n";
  const std::string target(dialectName(v.exported.target));
  for (std::size_t i = 0; i < v.incidents.size(); ++i) {
    const ReplayKpis& n = v.native[i].kpis;
    const ReplayKpis& t = v.target[i];
    text += QString("\nKPIs on %1: native vs %2\n")
                .arg(QString::fromStdString(v.incidents[i]), QString::fromStdString(target));
    text += QString("  blocked %1 vs %2, opens %3 vs %4, 误伤 %5 vs %6\n")
                .arg(n.rejected)
                .arg(t.rejected)
                .arg(n.opens)
                .arg(t.opens)
                .arg(fpText(n), fpText(t));
    text += "Gaps:\n";
    if (v.gaps[i].empty()) text += "  none on this incident\n";
    for (const std::string& g : v.gaps[i]) text += "  - " + QString::fromStdString(g) + "\n";
  }
  text += "Requirements:\n";
  for (const exporter::RequirementResult& r : v.results)
    text += QString("  %1 %2  %3\n")
                .arg(r.passed ? "ok  " : "FAIL", QString::fromStdString(r.req.text),
                     QString::fromStdString(r.detail));
  return text;
}

}  // namespace

ExportDialog::ExportDialog(const Policy& policy, QWidget* parent)
    : QDialog(parent), policy_(policy), base_(app::loadPolicy({})) {
  baseName_ = tr("the built-in default policy '%1'").arg(QString::fromStdString(base_.name));
  setWindowTitle(tr("Export policy '%1'").arg(QString::fromStdString(policy.name)));
  resize(1000, 760);
  auto* layout = new QVBoxLayout(this);
  QPushButton* pick = buildForm(layout);
  buildPanes(layout);
  layout->addLayout(buildButtons());
  connect(target_, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
  connect(require_, &QLineEdit::textEdited, this, [this] { refresh(); });
  connect(pick, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Validation trace"), {}, tr("Telemetry (*.jsonl)"));
    if (!path.isEmpty()) setTrace(path);
  });
  setTrace({});
}

void ExportDialog::setProvenance(const QString& source, const Policy& base,
                                 const QString& baseName) {
  source_ = source;
  base_ = base;
  baseName_ = baseName;
  refresh();  // a validation against another base is not this bundle's
}

// Validate, Copy, Save…, Export bundle…, Close.
QHBoxLayout* ExportDialog::buildButtons() {
  auto* buttons = new QHBoxLayout;
  validate_ = new QPushButton(tr("Validate"), this);
  auto* copy = new QPushButton(tr("Copy"), this);
  auto* save = new QPushButton(tr("Save…"), this);
  bundle_ = new QPushButton(tr("Export bundle…"), this);
  bundle_->setToolTip(
      tr("For a pull request: policy.yaml with its provenance, the native configuration and "
         "validation.md (verdict, KPIs before/after against the targets, gaps, incidents). "
         "Validate first."));
  auto* close = new QPushButton(tr("Close"), this);
  saved_ = new QLabel(this);
  saved_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  buttons->addWidget(validate_);
  buttons->addWidget(saved_, 1);
  buttons->addWidget(copy);
  buttons->addWidget(save);
  buttons->addWidget(bundle_);
  buttons->addWidget(close);
  connect(validate_, &QPushButton::clicked, this, &ExportDialog::validate);
  connect(copy, &QPushButton::clicked, this,
          [this] { QApplication::clipboard()->setText(exportText()); });
  connect(save, &QPushButton::clicked, this, [this] { saveConfig(); });
  connect(bundle_, &QPushButton::clicked, this, [this] { chooseBundleDir(); });
  connect(close, &QPushButton::clicked, this, &QDialog::accept);
  return buttons;
}
// Target, the validation trace and the requirements; returns the trace picker's button.
QPushButton* ExportDialog::buildForm(QVBoxLayout* layout) {
  auto* form = new QFormLayout;
  target_ = new QComboBox(this);
  for (DialectKind k :
       {DialectKind::Resilience4j, DialectKind::Envoy, DialectKind::Istio, DialectKind::Sentinel,
        DialectKind::Haproxy, DialectKind::Nginx, DialectKind::Litellm}) {
    const auto n = dialectName(k);
    target_->addItem(QString::fromUtf8(n.data(), static_cast<int>(n.size())), static_cast<int>(k));
  }
  require_ = new QLineEdit("fp<=0.03,ttd<=30s", this);
  require_->setToolTip(tr("fp, ttd, mttr, from_trip, recovery_lag, blocked, opens"));
  incident_ = new QLabel(this);
  auto* pick = new QPushButton(tr("Trace…"), this);
  auto* incidentRow = new QHBoxLayout;
  incidentRow->addWidget(incident_, 1);
  incidentRow->addWidget(pick);
  form->addRow(tr("Target"), target_);
  form->addRow(tr("Validate on"), incidentRow);
  form->addRow(tr("Require"), require_);
  layout->addLayout(form);
  return pick;
}

// The highlighted preview over two tabs: the notes and validation messages, and the review
// report as the pull request will show it.
void ExportDialog::buildPanes(QVBoxLayout* layout) {
  auto* split = split_ = new QSplitter(Qt::Vertical, this);
  const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  preview_ = new QPlainTextEdit(this);
  preview_->setReadOnly(true);
  preview_->setFont(mono);
  preview_->setLineWrapMode(QPlainTextEdit::NoWrap);
  new ConfigHighlighter(preview_->document());
  report_ = new QPlainTextEdit(this);
  report_->setReadOnly(true);
  report_->setFont(mono);
  review_ = new QTextBrowser(this);
  review_->setOpenLinks(false);
  lower_ = new QTabWidget(this);
  lower_->addTab(report_, tr("Notes"));
  lower_->addTab(review_, tr("Review report (validation.md)"));
  split->addWidget(preview_);
  split->addWidget(lower_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  layout->addWidget(split, 1);
}

// Save…: the previewed configuration under the file name the target expects.
void ExportDialog::saveConfig() {
  if (!learned_) return;
  const exporter::ExportResult r = exporter::exportPolicy(policy_, currentTarget(), *learned_);
  const QString path = QFileDialog::getSaveFileName(this, tr("Save configuration"),
                                                    QString::fromStdString(r.fileName));
  if (path.isEmpty()) return;
  std::ofstream out(path.toStdString(), std::ios::binary);
  out << r.text;
  out.close();
  const QString what = out ? tr("Saved %1").arg(path) : tr("Could not write %1").arg(path);
  report_->appendPlainText(what);
  saved_->setText(what);
}

void ExportDialog::chooseBundleDir() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Export bundle into"));
  if (!dir.isEmpty()) exportBundle(dir);
}

exporter::BundleInfo ExportDialog::bundleInfo() const {
  exporter::BundleInfo info;
  info.policySource = source_.toStdString();
  info.baseName = baseName_.toStdString();
  info.version = SPILLWAY_VERSION;
  info.commandLine = QString("spillway console: Export bundle (target %1, incident %2, require %3)")
                         .arg(target_->currentText(), incident_->text(),
                              QString::fromStdString(validation_->requireSpec))
                         .toStdString();
  info.defaultRequirements = validation_->requireSpec == exporter::kDefaultRequirements;
  return info;
}

QStringList ExportDialog::exportBundle(const QString& dir) {
  if (!validation_) {
    const QString why = tr("Validate first: the bundle carries the validation report");
    report_->appendPlainText(why);
    emit failed(why);
    return {};
  }
  try {
    QStringList written;
    for (const std::string& p :
         exporter::writeBundle(dir.toStdString(), exporter::makeBundle(*validation_, bundleInfo())))
      written << QString::fromStdString(p);
    report_->appendPlainText(tr("Bundle written: %1").arg(written.join(", ")));
    saved_->setText(tr("Bundle written to %1").arg(dir));
    return written;
  } catch (const std::exception& e) {
    report_->appendPlainText(QString::fromUtf8(e.what()));
    emit failed(QString::fromUtf8(e.what()));
    return {};
  }
}

DialectKind ExportDialog::currentTarget() const {
  return static_cast<DialectKind>(target_->currentData().toInt());
}

bool ExportDialog::setTarget(const QString& name) {
  const int i = target_->findText(name);
  if (i < 0) return false;
  target_->setCurrentIndex(i);
  refresh();
  return true;
}

void ExportDialog::setTrace(const QString& path) {
  trace_ = path;
  incident_->setText(path.isEmpty() ? tr("built-in seed-000 sample (chat-72b-3 leaks)")
                                    : QFileInfo(path).fileName());
  learn();
}

void ExportDialog::setRequirements(const QString& spec) {
  require_->setText(spec);
  refresh();
}

QString ExportDialog::exportText() const {
  return learned_ ? preview_->toPlainText() : QString();
}

QString ExportDialog::reportText() const {
  return report_->toPlainText();
}

QString ExportDialog::reportMarkdown() const {
  return reviewMarkdown_;
}

void ExportDialog::showReport() {
  reviewMarkdown_.clear();
  for (const exporter::BundleFile& f : exporter::makeBundle(*validation_, bundleInfo()))
    if (f.name == "validation.md") reviewMarkdown_ = QString::fromStdString(f.text);
  review_->setMarkdown(reviewMarkdown_);
  lower_->setCurrentWidget(review_);
  // The report is what is read now: it takes most of the height, the preview stays in view.
  const int h = split_->height();
  split_->setSizes({h * 2 / 5, h - h * 2 / 5});
}

// The incident's servers and baselines (a native replay, on a worker) are what the export is
// written with; the preview waits for them rather than showing a text that would change.
void ExportDialog::learn() {
  learned_.reset();
  refresh();
  const std::string trace = trace_.toStdString();
  learnJob_.start([this, trace, policy = policy_](const BackgroundJob::Context& job) {
    std::optional<exporter::ExportContext> ctx;
    QString error;
    try {
      const exporter::Incident inc = loadIncident(trace);
      ctx = exporter::contextFrom({exporter::replayNative(policy, inc)}, inc.name);
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    }
    job.deliver([this, ctx, error] {
      learned_ = ctx;
      refresh();
      if (!learned_) {
        preview_->setPlainText(tr("# Nothing exported: %1").arg(error));
        report_->setPlainText(error);
        emit failed(error);
        return;
      }
      emit exportReady();
    });
  });
}

// The preview and the notes for the current target; any validation is of something else now.
void ExportDialog::refresh() {
  validation_.reset();
  job_.cancel();
  validate_->setEnabled(true);
  bundle_->setEnabled(false);
  reviewMarkdown_.clear();
  review_->setMarkdown(tr("*Validate to see the review report the bundle carries.*"));
  lower_->setCurrentWidget(report_);
  if (!learned_) {
    preview_->setPlainText(
        tr("# Learning the servers and slow thresholds from %1…").arg(incident_->text()));
    report_->setPlainText({});
    return;
  }
  try {
    const exporter::ExportResult r = exporter::exportPolicy(policy_, currentTarget(), *learned_);
    preview_->setPlainText(QString::fromStdString(r.text));
    report_->setPlainText(tr("Not validated: Validate replays %1 under the native policy and "
                             "under %2.\n\n")
                              .arg(incident_->text(), target_->currentText()) +
                          notesText(r));
  } catch (const std::exception& e) {
    report_->setPlainText(QString::fromUtf8(e.what()));
  }
}

void ExportDialog::validate() {
  const std::string spec = require_->text().toStdString();
  try {
    (void)exporter::parseRequirements(spec);
  } catch (const std::exception& e) {
    report_->setPlainText(QString::fromUtf8(e.what()));
    emit failed(QString::fromUtf8(e.what()));
    return;
  }
  if (!learned_) {  // validates the text the preview will show, once it shows it
    connect(this, &ExportDialog::exportReady, this, &ExportDialog::validate,
            Qt::SingleShotConnection);
    return;
  }
  validate_->setEnabled(false);
  report_->setPlainText(tr("Replaying…"));
  // The replays run on a worker: a long trace must not freeze the window. A newer Validate,
  // another target or trace, or closing the dialog abandons it.
  job_.start([this, target = currentTarget(), spec, trace = trace_.toStdString(), policy = policy_,
              base = base_](const BackgroundJob::Context& job) {
    std::shared_ptr<const exporter::ValidatedExport> v;
    QString error;
    try {
      v = std::make_shared<const exporter::ValidatedExport>(
          exporter::validateExport(policy, target, {loadIncident(trace)}, {}, spec, base));
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    }
    job.deliver([this, v, error] { finishValidation(v, v != nullptr, error); });
  });
}

// The verdict on top, the notes below; the preview is left as it is: the validation replayed
// exactly its text.
void ExportDialog::finishValidation(std::shared_ptr<const exporter::ValidatedExport> v, bool ok,
                                    const QString& error) {
  validate_->setEnabled(true);
  if (!ok) {
    report_->setPlainText(error);
    emit failed(error);
    return;
  }
  validation_ = std::move(v);
  report_->setPlainText(validationText(*validation_) + "\n" + notesText(validation_->exported));
  showReport();
  bundle_->setEnabled(true);
  emit validated(validation_->passed);
}

}  // namespace spillway::console
