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

// What one validation brings back from the worker: the report, and what the native replay
// taught the exporter.
struct Validation {
  QString report;
  exporter::ExportContext ctx;
  bool met = false, ok = true;
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

// The native and the emulated replay's KPIs side by side.
QString kpiLines(const exporter::ExportResult& r, const std::string& incident, DialectKind target,
                 const ReplayKpis& native, const ReplayKpis& t) {
  QString report = QString("%1 on %2: native vs %3\n")
                       .arg(QString::fromStdString(r.fileName), QString::fromStdString(incident),
                            QString::fromStdString(std::string(dialectName(target))));
  report +=
      QString("  blocked %1 vs %2, opens %3 vs %4, FP rate %5 vs %6\n")
          .arg(native.rejected)
          .arg(t.rejected)
          .arg(native.opens)
          .arg(t.opens)
          .arg(native.fpRate() ? QString::number(*native.fpRate() * 100, 'f', 1) + " %" : "n/a")
          .arg(t.fpRate() ? QString::number(*t.fpRate() * 100, 'f', 1) + " %" : "n/a");
  return report;
}

// On the worker: replays the incident under the native policy and under the target's
// emulation, names the gaps and checks the requirements. Never touches the dialog.
Validation replayBoth(const Policy& policy, DialectKind target,
                      const std::vector<exporter::Requirement>& reqs, const std::string& trace) {
  Validation v;
  try {
    const exporter::Incident inc = loadIncident(trace);
    const exporter::NativeRun native = exporter::replayNative(policy, inc);
    v.ctx = exporter::contextFrom({native}, inc.name);
    const exporter::ExportResult r = exporter::exportPolicy(policy, target, v.ctx);
    const ReplayKpis t = exporter::replayTarget(r, inc);
    v.report += kpiLines(r, inc.name, target, native.kpis, t);
    v.report += "Gaps:\n";
    const auto gaps = exporter::nameGaps(r, inc.name, native.kpis, t);
    if (gaps.empty()) v.report += "  none on this incident\n";
    for (const std::string& g : gaps) v.report += "  - " + QString::fromStdString(g) + "\n";
    v.met = true;
    for (const auto& res : exporter::checkRequirements(reqs, {inc.name}, {t})) {
      v.met = v.met && res.passed;
      v.report +=
          QString("  %1 %2  %3 (%4)\n")
              .arg(res.passed ? "ok  " : "FAIL", QString::fromStdString(res.req.text),
                   QString::fromStdString(exporter::formatMetric(res.req.metric, res.actual)),
                   QString::fromStdString(res.detail));
    }
    v.report += v.met ? "PASS: the export meets the requirements on this incident\n"
                      : "FAIL: the export does not meet the requirements\n";
  } catch (const std::exception& e) {
    v.ok = false;
    v.report = QString::fromUtf8(e.what());
  }
  return v;
}

}  // namespace

ExportDialog::ExportDialog(const Policy& policy, QWidget* parent)
    : QDialog(parent), policy_(policy) {
  setWindowTitle(tr("Export policy '%1'").arg(QString::fromStdString(policy.name)));
  resize(1000, 760);
  auto* layout = new QVBoxLayout(this);
  QPushButton* pick = buildForm(layout);
  buildPanes(layout);
  auto* buttons = new QHBoxLayout;
  validate_ = new QPushButton(tr("Validate"), this);
  auto* copy = new QPushButton(tr("Copy"), this);
  auto* save = new QPushButton(tr("Save…"), this);
  auto* close = new QPushButton(tr("Close"), this);
  buttons->addWidget(validate_);
  buttons->addStretch(1);
  buttons->addWidget(copy);
  buttons->addWidget(save);
  buttons->addWidget(close);
  layout->addLayout(buttons);
  connect(target_, &QComboBox::currentIndexChanged, this, [this] {
    refresh();
    report_->setPlainText(tr("Validate to replay the incident under this target's semantics."));
  });
  connect(validate_, &QPushButton::clicked, this, &ExportDialog::validate);
  connect(pick, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Validation trace"), {}, tr("Telemetry (*.jsonl)"));
    if (!path.isEmpty()) setTrace(path);
  });
  connect(copy, &QPushButton::clicked, this,
          [this] { QApplication::clipboard()->setText(exportText()); });
  connect(save, &QPushButton::clicked, this, [this] { saveConfig(); });
  connect(close, &QPushButton::clicked, this, &QDialog::accept);
  setTrace({});
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

// The highlighted preview over the mapping notes and validation report.
void ExportDialog::buildPanes(QVBoxLayout* layout) {
  auto* split = new QSplitter(Qt::Vertical, this);
  const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  preview_ = new QPlainTextEdit(this);
  preview_->setReadOnly(true);
  preview_->setFont(mono);
  preview_->setLineWrapMode(QPlainTextEdit::NoWrap);
  new ConfigHighlighter(preview_->document());
  report_ = new QPlainTextEdit(this);
  report_->setReadOnly(true);
  report_->setFont(mono);
  split->addWidget(preview_);
  split->addWidget(report_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  layout->addWidget(split, 1);
}

// Save…: the exported configuration under the file name the target expects.
void ExportDialog::saveConfig() {
  const exporter::ExportResult r = exporter::exportPolicy(
      policy_, static_cast<DialectKind>(target_->currentData().toInt()), context_);
  const QString path = QFileDialog::getSaveFileName(this, tr("Save configuration"),
                                                    QString::fromStdString(r.fileName));
  if (path.isEmpty()) return;
  std::ofstream out(path.toStdString(), std::ios::binary);
  out << r.text;
  if (!out) report_->appendPlainText(tr("Could not write %1").arg(path));
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
  context_ = {};  // baselines learned on another incident do not carry over
  incident_->setText(path.isEmpty() ? tr("built-in seed-000 sample (chat-72b-3 leaks)")
                                    : QFileInfo(path).fileName());
  refresh();
}

void ExportDialog::setRequirements(const QString& spec) {
  require_->setText(spec);
}

QString ExportDialog::exportText() const {
  return preview_->toPlainText();
}

QString ExportDialog::reportText() const {
  return report_->toPlainText();
}

void ExportDialog::refresh() {
  try {
    const exporter::ExportResult r = exporter::exportPolicy(
        policy_, static_cast<DialectKind>(target_->currentData().toInt()), context_);
    preview_->setPlainText(QString::fromStdString(r.text));
    QString notes = tr("%1 — mapping notes:\n").arg(QString::fromStdString(r.fileName));
    for (const exporter::MappingNote& n : r.notes)
      notes +=
          "  • " + QString::fromStdString((n.scope.empty() ? "" : n.scope + ": ") + n.text) + "\n";
    report_->setPlainText(notes);
  } catch (const std::exception& e) {
    report_->setPlainText(QString::fromUtf8(e.what()));
  }
}

void ExportDialog::validate() {
  const auto target = static_cast<DialectKind>(target_->currentData().toInt());
  std::vector<exporter::Requirement> reqs;
  try {
    reqs = exporter::parseRequirements(require_->text().toStdString());
  } catch (const std::exception& e) {
    report_->setPlainText(QString::fromUtf8(e.what()));
    emit failed(QString::fromUtf8(e.what()));
    return;
  }
  validate_->setEnabled(false);
  report_->setPlainText(tr("Replaying…"));
  const std::string trace = trace_.toStdString();
  // The replays run on a worker: a long trace must not freeze the window. A newer Validate or
  // closing the dialog abandons it.
  job_.start([this, target, reqs, trace, policy = policy_](const BackgroundJob::Context& job) {
    const Validation v = replayBoth(policy, target, reqs, trace);
    job.deliver([this, v] {
      if (!v.ok) {
        report_->setPlainText(v.report);
        validate_->setEnabled(true);
        emit failed(v.report);
        return;
      }
      finishValidation(v.ctx, v.report, v.met);
    });
  });
}

void ExportDialog::finishValidation(exporter::ExportContext ctx, QString report, bool met) {
  context_ = std::move(ctx);
  refresh();  // the learned baselines change the exported slow thresholds
  report_->appendPlainText("\n" + report);
  validate_->setEnabled(true);
  emit validated(met);
}

}  // namespace spillway::console
