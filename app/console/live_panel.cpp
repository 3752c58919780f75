#include "live_panel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

#include "spillway/input_error.hpp"
#include "spillway/live/bearer_token.hpp"
#include "spillway/live/prometheus_presets.hpp"

namespace spillway::console {

LivePanel::LivePanel(QWidget* parent) : QWidget(parent) {
  QSettings settings;
  QPushButton* browse = buildSources(settings);
  buildSession(settings);
  layOut(browse);
  connect(start_, &QPushButton::clicked, this, &LivePanel::startRequested);
  connect(stop_, &QPushButton::clicked, this, &LivePanel::stopRequested);
}

// The source fields (OTLP receiver, access log, Prometheus) as the last session left them;
// returns the log's browse button, which the form places.
QPushButton* LivePanel::buildSources(const QSettings& settings) {
  useOtlp_ = new QCheckBox(tr("OTLP/HTTP receiver"), this);
  useOtlp_->setChecked(settings.value("live/useOtlp", true).toBool());
  otlp_ = new QLineEdit(settings.value("live/otlp", "127.0.0.1:4318").toString(), this);
  otlp_->setToolTip(
      tr("[HOST:]PORT for POST /v1/traces (JSON or protobuf GenAI spans); loopback only. "
         "Point OTEL_EXPORTER_OTLP_TRACES_ENDPOINT at http://HOST:PORT/v1/traces."));
  token_ = new QLineEdit(settings.value("live/otlpTokenFile").toString(), this);
  token_->setPlaceholderText(tr("no token (loopback only)"));
  token_->setToolTip(
      tr("A file whose first line that is neither empty nor a # comment is the bearer token "
         "the receiver requires (Authorization: Bearer <token>), as spillway-cli listen "
         "--otlp-token-file reads it"));
  useTail_ = new QCheckBox(tr("Access log"), this);
  useTail_->setChecked(settings.value("live/useTail", false).toBool());
  tail_ = new QLineEdit(settings.value("live/tail").toString(), this);
  tail_->setPlaceholderText(tr("/var/log/nginx/ai.log"));
  tail_->setToolTip(tr("Followed like tail -F: survives rename and copytruncate rotation"));
  auto* browse = new QPushButton(tr("…"), this);
  browse->setMaximumWidth(32);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Access log to follow"), tail_->text());
    if (!f.isEmpty()) {
      tail_->setText(f);
      useTail_->setChecked(true);
    }
  });
  format_ = new QComboBox(this);
  format_->addItem("nginx (escape=json)", static_cast<int>(formats::Format::Nginx));
  format_->addItem("Envoy JSON", static_cast<int>(formats::Format::Envoy));
  format_->addItem("canonical JSONL", static_cast<int>(formats::Format::Jsonl));
  format_->setCurrentIndex(settings.value("live/format", 0).toInt());
  fromStart_ = new QCheckBox(tr("read existing lines too"), this);
  useProm_ = new QCheckBox(tr("Prometheus"), this);
  useProm_->setChecked(settings.value("live/useProm", false).toBool());
  prom_ = new QLineEdit(settings.value("live/prom", "http://127.0.0.1:9090").toString(), this);
  prom_->setToolTip(tr("query_range every step: calls, failures and slow calls per instance"));
  preset_ = new QComboBox(this);
  for (const live::PromPreset& p : live::promPresets()) {
    preset_->addItem(QString::fromStdString(p.name), QString::fromStdString(p.name));
    preset_->setItemData(preset_->count() - 1, QString::fromStdString(p.gateway), Qt::ToolTipRole);
  }
  preset_->setCurrentIndex(
      std::max(0, preset_->findData(settings.value("live/promPreset", "envoy").toString())));
  preset_->setToolTip(tr("The gateway's metric names (spillway-cli listen --prom-preset list)"));
  promStep_ = new QSpinBox(this);
  promStep_->setRange(1, 300);
  promStep_->setSuffix(tr(" s step"));
  promStep_->setValue(settings.value("live/promStep", 5).toInt());
  return browse;
}

// Recording, the timelines' span, the instance bound, Go live / Stop and what the session says.
void LivePanel::buildSession(const QSettings& settings) {
  record_ = new QCheckBox(tr("Record into the library"), this);
  record_->setChecked(settings.value("live/record", true).toBool());
  record_->setToolTip(
      tr("Every call and sample goes into the open library's recording 'live'; Shift+drag "
         "over the timelines cuts that stretch into an incident to replay and tune"));
  retainHours_ = new QSpinBox(this);
  retainHours_->setRange(1, 24 * 30);
  retainHours_->setSuffix(tr(" h kept"));
  retainHours_->setValue(settings.value("live/retainHours", 24).toInt());
  retainHours_->setToolTip(tr("The recording keeps this much data time; older blocks go"));
  spanMinutes_ = new QSpinBox(this);
  spanMinutes_->setRange(1, 120);
  spanMinutes_->setSuffix(tr(" min"));
  spanMinutes_->setValue(settings.value("live/spanMinutes", 10).toInt());
  spanMinutes_->setToolTip(tr("How much of the live data the timelines keep (rolling)"));
  maxInstances_ = new QSpinBox(this);
  maxInstances_->setRange(1, 1'000'000);
  maxInstances_->setGroupSeparatorShown(true);
  maxInstances_->setValue(settings.value("live/maxInstances", 1024).toInt());
  maxInstances_->setToolTip(
      tr("Instance names come from the network (span server.address:port, a log's upstream, a "
         "Prometheus label). Live mode keeps at most this many for the session (about 6 KiB "
         "each, plus their timelines); the spans, log lines and samples of any other name are "
         "refused and counted (OTLP answers them in partialSuccess) until the next Go live"));
  start_ = new QPushButton(tr("Go live"), this);
  stop_ = new QPushButton(tr("Stop"), this);
  stop_->setEnabled(false);
  status_ = new QLabel(tr("Not live"), this);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  verdicts_ = new QListWidget(this);
  verdicts_->setToolTip(tr("What the policy would have done (shadow mode: nothing is blocked)"));
}

void LivePanel::layOut(QPushButton* browse) {
  auto* form = new QFormLayout;
  auto* otlpRow = new QHBoxLayout;
  otlpRow->addWidget(useOtlp_);
  otlpRow->addWidget(otlp_, 1);
  form->addRow(otlpRow);
  form->addRow(tr("OTLP token file"), token_);
  auto* tailRow = new QHBoxLayout;
  tailRow->addWidget(useTail_);
  tailRow->addWidget(tail_, 1);
  tailRow->addWidget(browse);
  form->addRow(tailRow);
  auto* fmtRow = new QHBoxLayout;
  fmtRow->addWidget(format_, 1);
  fmtRow->addWidget(fromStart_);
  form->addRow(tr("Log format"), fmtRow);
  auto* promRow = new QHBoxLayout;
  promRow->addWidget(useProm_);
  promRow->addWidget(prom_, 1);
  form->addRow(promRow);
  auto* presetRow = new QHBoxLayout;
  presetRow->addWidget(preset_, 1);
  presetRow->addWidget(promStep_);
  form->addRow(tr("Metric names"), presetRow);
  form->addRow(tr("Timelines keep"), spanMinutes_);
  form->addRow(tr("Max instances"), maxInstances_);
  auto* recordRow = new QHBoxLayout;
  recordRow->addWidget(record_, 1);
  recordRow->addWidget(retainHours_);
  form->addRow(recordRow);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(start_);
  buttons->addWidget(stop_);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addWidget(status_);
  layout->addWidget(new QLabel(tr("Would open (newest first):"), this));
  layout->addWidget(verdicts_, 1);
}

bool LivePanel::config(LiveConfig& out, QString* error) const {
  auto fail = [error](const QString& m) {
    if (error) *error = m;
    return false;
  };
  out.otlp = useOtlp_->isChecked() ? otlp_->text().trimmed() : QString();
  out.tailFile = useTail_->isChecked() ? tail_->text().trimmed() : QString();
  if (useOtlp_->isChecked() && out.otlp.isEmpty())
    return fail(tr("Live: OTLP receiver: give [HOST:]PORT"));
  out.otlpTokenFile = useOtlp_->isChecked() ? token_->text().trimmed() : QString();
  if (!out.otlpTokenFile.isEmpty()) {
    try {
      live::readBearerTokenFile(out.otlpTokenFile.toStdString());  // the message at once
    } catch (const std::exception& e) {
      return fail(tr("Live: OTLP token file: %1").arg(QString::fromUtf8(e.what())));
    }
  }
  if (useTail_->isChecked() && out.tailFile.isEmpty())
    return fail(tr("Live: access log: give a file"));
  out.prometheus.reset();
  if (useProm_->isChecked()) {
    live::PromSourceSpec spec;
    spec.url = prom_->text().trimmed().toStdString();
    spec.preset = preset_->currentData().toString().toStdString();
    spec.step = seconds(promStep_->value());
    try {
      live::pullerOptions(spec, "Prometheus: ");  // checked here, so the message is at once
    } catch (const std::exception& e) {
      return fail(tr("Live: %1").arg(QString::fromUtf8(e.what())));
    }
    out.prometheus = spec;
  }
  if (out.otlp.isEmpty() && out.tailFile.isEmpty() && !out.prometheus)
    return fail(tr("Live: choose a source (OTLP receiver, access log or Prometheus)"));
  out.tailFormat = static_cast<formats::Format>(format_->currentData().toInt());
  out.tailFromStart = fromStart_->isChecked();
  out.span = seconds(60 * spanMinutes_->value());
  out.maxInstances = static_cast<std::size_t>(maxInstances_->value());
  out.retention.maxAge = seconds(3600 * retainHours_->value());
  QSettings settings;
  settings.setValue("live/useOtlp", useOtlp_->isChecked());
  settings.setValue("live/otlp", otlp_->text());
  settings.setValue("live/otlpTokenFile", token_->text());
  settings.setValue("live/useTail", useTail_->isChecked());
  settings.setValue("live/tail", tail_->text());
  settings.setValue("live/format", format_->currentIndex());
  settings.setValue("live/spanMinutes", spanMinutes_->value());
  settings.setValue("live/maxInstances", maxInstances_->value());
  settings.setValue("live/record", record_->isChecked());
  settings.setValue("live/retainHours", retainHours_->value());
  settings.setValue("live/useProm", useProm_->isChecked());
  settings.setValue("live/prom", prom_->text());
  settings.setValue("live/promPreset", preset_->currentData());
  settings.setValue("live/promStep", promStep_->value());
  return true;
}

void LivePanel::setConfig(const LiveConfig& cfg) {
  useOtlp_->setChecked(!cfg.otlp.isEmpty());
  if (!cfg.otlp.isEmpty()) otlp_->setText(cfg.otlp);
  token_->setText(cfg.otlpTokenFile);
  useTail_->setChecked(!cfg.tailFile.isEmpty());
  if (!cfg.tailFile.isEmpty()) tail_->setText(cfg.tailFile);
  const int f = format_->findData(static_cast<int>(cfg.tailFormat));
  if (f >= 0) format_->setCurrentIndex(f);
  fromStart_->setChecked(cfg.tailFromStart);
  useProm_->setChecked(cfg.prometheus.has_value());
  if (cfg.prometheus) {
    prom_->setText(QString::fromStdString(cfg.prometheus->url));
    const int i = preset_->findData(QString::fromStdString(cfg.prometheus->preset));
    if (i >= 0) preset_->setCurrentIndex(i);
    promStep_->setValue(static_cast<int>(cfg.prometheus->step / seconds(1)));
  }
  spanMinutes_->setValue(static_cast<int>(std::max<Micros>(1, cfg.span / seconds(60))));
  maxInstances_->setValue(
      static_cast<int>(std::clamp<std::size_t>(cfg.maxInstances, 1, 1'000'000)));
  record_->setChecked(!cfg.recordLibrary.isEmpty());
  if (cfg.retention.maxAge > 0)
    retainHours_->setValue(
        static_cast<int>(std::max<Micros>(1, cfg.retention.maxAge / seconds(3600))));
}

void LivePanel::setRunning(bool running, quint16 otlpPort) {
  start_->setEnabled(!running);
  stop_->setEnabled(running);
  for (QWidget* w : std::initializer_list<QWidget*>{
           useOtlp_, otlp_, token_, useTail_, tail_, format_, fromStart_, useProm_, prom_, preset_,
           promStep_, spanMinutes_, maxInstances_, record_, retainHours_})
    w->setEnabled(!running);
  if (running)
    status_->setText(otlpPort ? tr("Live; OTLP on port %1, waiting for data…").arg(otlpPort)
                              : tr("Live; waiting for data…"));
  else
    status_->setText(tr("Not live"));
}

void LivePanel::showStatus(const LiveStatus& st, double latencyMs) {
  QString text;
  // First, where an SRE looks: the bound refuses data, and the view is missing those names.
  if (st.callsRefused || st.samplesRefused)
    text += tr("Instance bound %L1 reached: %L2 calls and %L3 samples of new instances "
               "refused · ")
                .arg(st.maxInstances)
                .arg(st.callsRefused)
                .arg(st.samplesRefused);
  text += tr("%L1 calls, %2/s").arg(st.calls).arg(st.callsPerSecond, 0, 'f', 0);
  if (st.instances) text += tr(" · %L1 instances").arg(st.instances);
  if (st.otlpPort)
    text += tr(" · OTLP :%1 %L2 acked, %L3 rejected, %L4 shed")
                .arg(st.otlpPort)
                .arg(st.spansAcked)
                .arg(st.spansRejected)
                .arg(st.requestsShed);
  if (st.lines) text += tr(" · %L1 log lines, %L2 bad").arg(st.lines).arg(st.badLines);
  if (st.promSamples || st.promFailedPolls)
    text += tr(" · Prometheus %L1 samples, %L2 failed polls")
                .arg(st.promSamples)
                .arg(st.promFailedPolls);
  if (st.late) text += tr(" · %L1 late").arg(st.late);
  if (st.recorded || st.recordPending)
    text += tr(" · recorded %L1 (+%L2 buffered)").arg(st.recorded).arg(st.recordPending);
  if (latencyMs >= 0) text += tr(" · on screen %1 ms after arrival").arg(latencyMs, 0, 'f', 0);
  status_->setText(text);
  for (const QString& v : st.verdicts) verdicts_->insertItem(0, v);
  for (const QString& e : st.errors) {
    verdicts_->insertItem(0, e);
    verdicts_->item(0)->setForeground(QColor(190, 40, 40));
  }
  while (verdicts_->count() > 500) delete verdicts_->takeItem(verdicts_->count() - 1);
}

void LivePanel::clearVerdicts() {
  verdicts_->clear();
}

bool LivePanel::record() const {
  return record_->isChecked();
}

void LivePanel::setRecord(bool on) {
  record_->setChecked(on);
}

QString LivePanel::statusText() const {
  return status_->text();
}

}  // namespace spillway::console
