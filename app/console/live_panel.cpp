#include "live_panel.hpp"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

#include "spillway/input_error.hpp"
#include "spillway/live/bearer_token.hpp"
#include "spillway/live/listen_address.hpp"
#include "spillway/live/prometheus_presets.hpp"

namespace spillway::console {
namespace {

const QColor kReceiving(46, 125, 50), kWaiting(200, 130, 0), kFailing(198, 40, 40),
    kStopped(128, 128, 128);

// What an input error says about the field, without the origin the field already shows.
QString detailOf(const std::exception& e) {
  if (const auto* ie = dynamic_cast<const InputError*>(&e))
    return QString::fromStdString(ie->field().empty() ? ie->detail()
                                                      : ie->field() + ": " + ie->detail());
  return QString::fromUtf8(e.what());
}

QString clock(qint64 ms) {
  return QDateTime::fromMSecsSinceEpoch(ms).toString("HH:mm:ss t");  // with its zone
}

QString rate(double perSecond) {
  return perSecond >= 100 ? QString::number(perSecond, 'f', 0)
                          : QString::number(perSecond, 'g', perSecond >= 10 ? 3 : 2);
}

}  // namespace

LivePanel::LivePanel(QWidget* parent) : QWidget(parent) {
  QSettings settings;
  QPushButton* browse = buildSources(settings);
  buildSession(settings);
  layOut(browse);
  setAdvancedShown(settings.value("live/advanced", false).toBool());
  connect(start_, &QPushButton::clicked, this, &LivePanel::startRequested);
  connect(stop_, &QPushButton::clicked, this, &LivePanel::stopRequested);
  connectValidation();
  validate();
}

// The source fields (OTLP receiver, access log, Prometheus) as the last session left them;
// returns the log's browse button, which the form places.
QPushButton* LivePanel::buildSources(const QSettings& settings) {
  useOtlp_ = new QCheckBox(tr("OTLP"), this);
  useOtlp_->setToolTip(tr("An OTLP/HTTP receiver for the gateway's GenAI spans"));
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
  useTail_ = new QCheckBox(tr("Log"), this);
  useTail_->setToolTip(tr("Follow the gateway's access log"));
  useTail_->setChecked(settings.value("live/useTail", false).toBool());
  tail_ = new QLineEdit(settings.value("live/tail").toString(), this);
  tail_->setPlaceholderText(tr("/var/log/nginx/ai.log"));
  tail_->setToolTip(
      tr("Followed like tail -F: survives rename and copytruncate rotation; a "
         "file not there yet is waited for"));
  auto* browse = new QPushButton(tr("…"), this);
  browse->setMaximumWidth(28);
  browse->setToolTip(tr("Choose the access log"));
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
  format_->addItem("HAProxy (the export's log-format)", static_cast<int>(formats::Format::Haproxy));
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
  retainHours_->setSuffix(tr(" h"));
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
  QFont small = status_->font();
  small.setPointSizeF(small.pointSizeF() * 0.9);
  status_->setFont(small);
  // A verdict wraps rather than losing its reason (the rate and its threshold) at the dock's
  // width; at most 500 are kept.
  verdicts_ = new QListWidget(this);
  verdicts_->setToolTip(tr("What the policy would have done (shadow mode: nothing is blocked)"));
  verdicts_->setWordWrap(true);
  verdicts_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  const int line = verdicts_->fontMetrics().height() + 2;
  verdicts_->setMinimumHeight(3 * line);
  verdicts_->setMaximumHeight(10 * line);
}

// The rarely changed options, folded away (remembered) so the dock stays short and narrow.
QWidget* LivePanel::buildAdvanced() {
  advancedToggle_ = new QToolButton(this);
  advancedToggle_->setText(tr("Advanced"));
  advancedToggle_->setCheckable(true);
  advancedToggle_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  advancedToggle_->setAutoRaise(true);
  advanced_ = new QWidget(this);
  auto* form = new QFormLayout(advanced_);
  form->setContentsMargins(12, 0, 0, 0);
  form->setRowWrapPolicy(QFormLayout::WrapLongRows);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  checks_[static_cast<int>(Field::TokenFile)].hint = new QLabel(this);
  form->addRow(tr("OTLP token"), token_);
  form->addRow(checks_[static_cast<int>(Field::TokenFile)].hint);
  form->addRow(tr("Log format"), format_);
  form->addRow(QString(), fromStart_);
  auto* presetRow = new QHBoxLayout;
  presetRow->addWidget(preset_, 1);
  presetRow->addWidget(promStep_);
  form->addRow(tr("Metrics"), presetRow);
  form->addRow(tr("Keep"), spanMinutes_);
  form->addRow(tr("Max instances"), maxInstances_);
  form->addRow(tr("Retention"), retainHours_);
  for (QComboBox* c : {format_, preset_}) {
    // Narrow: the items' full names are in the popup.
    c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    c->setMinimumContentsLength(6);
  }
  connect(advancedToggle_, &QToolButton::toggled, this, [this](bool on) {
    setAdvancedShown(on);
    QSettings().setValue("live/advanced", on);
  });
  return advanced_;
}

void LivePanel::layOut(QPushButton* browse) {
  auto* grid = new QGridLayout;
  grid->setVerticalSpacing(2);
  grid->setColumnStretch(1, 1);
  auto sourceRow = [&](int row, QCheckBox* use, QLineEdit* field, Field f, QWidget* extra) {
    grid->addWidget(use, row, 0);
    grid->addWidget(field, row, 1, 1, extra ? 1 : 2);
    if (extra) grid->addWidget(extra, row, 2);
    auto* hint = new QLabel(this);
    checks_[static_cast<int>(f)].hint = hint;
    grid->addWidget(hint, row + 1, 1, 1, 2);
  };
  sourceRow(0, useOtlp_, otlp_, Field::Otlp, nullptr);
  sourceRow(2, useTail_, tail_, Field::Tail, browse);
  sourceRow(4, useProm_, prom_, Field::Prometheus, nullptr);
  grid->addWidget(record_, 6, 0, 1, 3);
  QWidget* advanced = buildAdvanced();
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(start_);
  buttons->addWidget(stop_);
  buttons->addStretch(1);
  // The health rows: one per source of the session, hidden until Go live.
  health_ = new QWidget(this);
  auto* rows = new QVBoxLayout(health_);
  rows->setContentsMargins(0, 0, 0, 0);
  rows->setSpacing(1);
  for (QLabel*& l : healthRows_) {
    l = new QLabel(health_);
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    rows->addWidget(l);
  }
  failureRow_ = new QLabel(health_);
  failureRow_->setWordWrap(true);
  failureRow_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  rows->addWidget(failureRow_);
  health_->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setSpacing(4);
  layout->addLayout(grid);
  layout->addWidget(advancedToggle_);
  layout->addWidget(advanced);
  layout->addLayout(buttons);
  layout->addWidget(health_);
  layout->addWidget(status_);
  layout->addWidget(new QLabel(tr("Would open (newest first):"), this));
  layout->addWidget(verdicts_);
  layout->addStretch(1);
  for (Check& c : checks_) {
    c.hint->setWordWrap(true);
    c.hint->hide();
  }
}

QSize LivePanel::sizeHint() const {
  const QSize natural = QWidget::sizeHint();
  return {std::max(minimumSizeHint().width(), std::min(natural.width(), 300)), natural.height()};
}

bool LivePanel::advancedShown() const {
  return advancedToggle_->isChecked();
}

void LivePanel::setAdvancedShown(bool shown) {
  {
    const QSignalBlocker block(advancedToggle_);
    advancedToggle_->setChecked(shown);
  }
  advancedToggle_->setArrowType(shown ? Qt::DownArrow : Qt::RightArrow);
  advanced_->setVisible(shown);
}

// --- Inline validation ---------------------------------------------------------------------

void LivePanel::connectValidation() {
  for (QLineEdit* e : {otlp_, token_, tail_, prom_})
    connect(e, &QLineEdit::textChanged, this, &LivePanel::validate);
  for (QCheckBox* c : {useOtlp_, useTail_, useProm_})
    connect(c, &QCheckBox::toggled, this, &LivePanel::validate);
  connect(preset_, &QComboBox::currentIndexChanged, this, &LivePanel::validate);
  connect(promStep_, &QSpinBox::valueChanged, this, &LivePanel::validate);
}

QString LivePanel::checkOtlp() const {
  if (!useOtlp_->isChecked()) return {};
  const QString text = otlp_->text().trimmed();
  if (text.isEmpty()) return tr("give [HOST:]PORT");
  try {
    live::parseListenAddress(text.toStdString(), false, "OTLP receiver",
                             "use 127.0.0.1, or spillway-cli listen --otlp-allow-remote");
  } catch (const std::exception& e) {
    return detailOf(e);
  }
  return {};
}

QString LivePanel::checkToken() const {
  const QString file = token_->text().trimmed();
  if (!useOtlp_->isChecked() || file.isEmpty()) return {};
  try {
    live::readBearerTokenFile(file.toStdString());
  } catch (const std::exception& e) {
    return detailOf(e);
  }
  return {};
}

// A log that is not there yet is fine (Live mode waits for it, and says so); a directory or an
// unreadable file is not.
void LivePanel::checkTail(QString& problem, QString& note) const {
  if (!useTail_->isChecked()) return;
  const QString path = tail_->text().trimmed();
  if (path.isEmpty()) {
    problem = tr("give a file");
    return;
  }
  const QFileInfo fi(path);
  if (fi.isDir())
    problem = tr("a directory, not a log file");
  else if (fi.exists() && !fi.isReadable())
    problem = tr("cannot be read (permission denied)");
  else if (!fi.exists())
    note = fi.absoluteDir().exists() ? tr("not there yet: Live mode waits for it")
                                     : tr("not there yet (nor its directory): Live mode waits");
}

QString LivePanel::checkProm() const {
  if (!useProm_->isChecked()) return {};
  live::PromSourceSpec spec;
  spec.url = prom_->text().trimmed().toStdString();
  spec.preset = preset_->currentData().toString().toStdString();
  spec.step = seconds(promStep_->value());
  try {
    live::pullerOptions(spec, "Prometheus: ");
  } catch (const std::exception& e) {
    return detailOf(e);
  }
  return {};
}

void LivePanel::validate() {
  mark(Field::Otlp, checkOtlp());
  mark(Field::TokenFile, checkToken());
  QString problem, note;
  checkTail(problem, note);
  mark(Field::Tail, problem, note);
  mark(Field::Prometheus, checkProm());
}

// The mark: a warning icon inside the field (its tooltip the reason) and the reason under it,
// in red; a note (not an error) in amber without the icon.
void LivePanel::mark(Field f, const QString& problem, const QString& note) {
  Check& c = checks_[static_cast<int>(f)];
  c.problem = problem;
  c.note = problem.isEmpty() ? note : QString();
  QLineEdit* edit = f == Field::Otlp        ? otlp_
                    : f == Field::TokenFile ? token_
                    : f == Field::Tail      ? tail_
                                            : prom_;
  QAction* icon = edit->findChild<QAction*>("liveFieldMark");
  if (!problem.isEmpty() && !icon) {
    icon = edit->addAction(style()->standardIcon(QStyle::SP_MessageBoxWarning),
                           QLineEdit::TrailingPosition);
    icon->setObjectName("liveFieldMark");
  }
  if (icon) {
    icon->setVisible(!problem.isEmpty());
    icon->setToolTip(problem);
  }
  const QString text = problem.isEmpty() ? c.note : problem;
  c.hint->setText(text);
  c.hint->setStyleSheet(QString("color: %1").arg((problem.isEmpty() ? kWaiting : kFailing).name()));
  c.hint->setVisible(!text.isEmpty());
  // A bad token file is inside Advanced: open it, or the mark would not be seen.
  if (f == Field::TokenFile && !problem.isEmpty() && !advancedShown()) setAdvancedShown(true);
}

QString LivePanel::fieldProblem(Field f) const {
  return checks_[static_cast<int>(f)].problem;
}

QString LivePanel::fieldNote(Field f) const {
  return checks_[static_cast<int>(f)].note;
}

bool LivePanel::config(LiveConfig& out, QString* error) const {
  auto fail = [error](const QString& m) {
    if (error) *error = m;
    return false;
  };
  const_cast<LivePanel*>(this)->validate();  // the marks show what Go live refuses
  const std::pair<Field, QString> names[] = {{Field::Otlp, tr("OTLP receiver")},
                                             {Field::TokenFile, tr("OTLP token file")},
                                             {Field::Tail, tr("access log")},
                                             {Field::Prometheus, tr("Prometheus")}};
  for (const auto& [f, name] : names)
    if (!fieldProblem(f).isEmpty()) return fail(tr("Live: %1: %2").arg(name, fieldProblem(f)));
  out.otlp = useOtlp_->isChecked() ? otlp_->text().trimmed() : QString();
  out.tailFile = useTail_->isChecked() ? tail_->text().trimmed() : QString();
  out.otlpTokenFile = useOtlp_->isChecked() ? token_->text().trimmed() : QString();
  out.prometheus.reset();
  if (useProm_->isChecked()) {
    live::PromSourceSpec spec;
    spec.url = prom_->text().trimmed().toStdString();
    spec.preset = preset_->currentData().toString().toStdString();
    spec.step = seconds(promStep_->value());
    out.prometheus = spec;
  }
  if (out.otlp.isEmpty() && out.tailFile.isEmpty() && !out.prometheus)
    return fail(tr("Live: choose a source (OTLP receiver, access log or Prometheus)"));
  out.tailFormat = static_cast<formats::Format>(format_->currentData().toInt());
  out.tailFromStart = fromStart_->isChecked();
  out.span = seconds(60 * spanMinutes_->value());
  out.maxInstances = static_cast<std::size_t>(maxInstances_->value());
  out.retention.maxAge = seconds(3600 * retainHours_->value());
  saveSettings();
  return true;
}

void LivePanel::saveSettings() const {
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
  validate();
}

// --- Running, health and counters ----------------------------------------------------------

void LivePanel::setRunning(bool running, quint16 otlpPort) {
  running_ = running;
  start_->setEnabled(!running);
  stop_->setEnabled(running);
  for (QWidget* w : std::initializer_list<QWidget*>{
           useOtlp_, otlp_, token_, useTail_, tail_, format_, fromStart_, useProm_, prom_, preset_,
           promStep_, spanMinutes_, maxInstances_, record_, retainHours_})
    w->setEnabled(!running);
  if (running) {
    // A new session: the rows come with its first status.
    sources_.clear();
    failure_.clear();
    status_->setText(otlpPort ? tr("Live; OTLP on port %1, waiting for data…").arg(otlpPort)
                              : tr("Live; waiting for data…"));
  } else {
    status_->setText(tr("Not live"));
  }
  renderHealth();
}

// The row's text: receiving with its rate and the last data's time; waiting with what for;
// failing with the reason and the last success; "stopped" once the session is over.
QString LivePanel::healthLine(const SourceHealth& h) const {
  using S = SourceHealth::Source;
  static const char* const names[] = {QT_TR_NOOP("OTLP"), QT_TR_NOOP("Log"),
                                      QT_TR_NOOP("Prometheus"), QT_TR_NOOP("Recording")};
  static const char* const units[] = {QT_TR_NOOP("spans"), QT_TR_NOOP("lines"),
                                      QT_TR_NOOP("samples"), QT_TR_NOOP("records")};
  const int k = static_cast<int>(h.source);
  QString line = tr(names[k]);
  if (h.source == S::Otlp && !h.target.isEmpty()) line += ' ' + h.target;
  line += ": ";
  if (!running_ && h.state != SourceHealth::State::Failing) {
    // Over: what is left to say is when it last brought data.
    return line + (h.lastDataMs ? tr("stopped · last data at %1").arg(clock(h.lastDataMs))
                                : tr("stopped · no data"));
  }
  switch (h.state) {
    case SourceHealth::State::Receiving:
      // A burst read at once (a log from its start) leaves no rate for the last second.
      line += h.perSecond >= 0.05 ? tr("receiving %1 %2/s, last data at %3")
                                        .arg(rate(h.perSecond), tr(units[k]), clock(h.lastDataMs))
                                  : tr("receiving, last data at %1").arg(clock(h.lastDataMs));
      if (!h.reason.isEmpty()) line += " · " + h.reason;
      break;
    case SourceHealth::State::Waiting:
      line += h.reason.startsWith("waiting") ? h.reason : tr("waiting: %1").arg(h.reason);
      if (h.lastDataMs) line += tr(" (last data at %1)").arg(clock(h.lastDataMs));
      break;
    case SourceHealth::State::Failing:
      line += tr("failing: %1 · last success %2")
                  .arg(h.reason, h.lastOkMs ? clock(h.lastOkMs) : tr("never"));
      break;
  }
  return line;
}

void LivePanel::renderHealth() {
  std::array<const SourceHealth*, 4> bySource{};
  for (const SourceHealth& h : sources_) bySource[static_cast<int>(h.source)] = &h;
  for (std::size_t k = 0; k < healthRows_.size(); ++k) {
    QLabel* row = healthRows_[k];
    if (!bySource[k]) {
      row->clear();
      row->hide();
      continue;
    }
    const SourceHealth& h = *bySource[k];
    const QColor c = h.state == SourceHealth::State::Failing     ? kFailing
                     : !running_                                 ? kStopped
                     : h.state == SourceHealth::State::Receiving ? kReceiving
                                                                 : kWaiting;
    const QString text = healthLine(h);
    row->setText(
        QString("<span style=\"color:%1\">&#9679;</span> %2").arg(c.name(), text.toHtmlEscaped()));
    row->setToolTip(h.target.isEmpty() ? text : h.target + "\n" + text);
    row->show();
  }
  failureRow_->setVisible(!failure_.isEmpty());
  failureRow_->setText(QString("<span style=\"color:%1\">&#9679; %2</span>")
                           .arg(kFailing.name(), failure_.toHtmlEscaped()));
  health_->setVisible(!sources_.empty() || !failure_.isEmpty());
}

QString LivePanel::healthText(SourceHealth::Source s) const {
  for (const SourceHealth& h : sources_)
    if (h.source == s) return healthLine(h);
  return {};
}

std::optional<SourceHealth::State> LivePanel::healthState(SourceHealth::Source s) const {
  for (const SourceHealth& h : sources_)
    if (h.source == s) return h.state;
  return std::nullopt;
}

void LivePanel::showFailure(const QString& message) {
  // The session names the source in front of its message ("OTLP receiver: …").
  const std::pair<const char*, SourceHealth::Source> owners[] = {
      {"OTLP", SourceHealth::Source::Otlp},
      {"Prometheus", SourceHealth::Source::Prometheus},
      {"recording", SourceHealth::Source::Recording}};
  for (const auto& [prefix, source] : owners) {
    if (!message.startsWith(prefix, Qt::CaseInsensitive)) continue;
    auto it = std::find_if(sources_.begin(), sources_.end(),
                           [s = source](const SourceHealth& h) { return h.source == s; });
    if (it == sources_.end()) {
      SourceHealth h;
      h.source = source;
      it = sources_.insert(sources_.end(), h);
    }
    it->state = SourceHealth::State::Failing;
    it->reason = message.section(": ", 1, -1);
    renderHealth();
    return;
  }
  failure_ = message;
  renderHealth();
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
  if (!st.sources.empty()) {
    sources_ = st.sources;
    renderHealth();
  }
  for (const QString& v : st.verdicts) {
    verdicts_->insertItem(0, v);
    verdicts_->item(0)->setToolTip(v);
  }
  for (const QString& e : st.errors) {
    verdicts_->insertItem(0, e);
    verdicts_->item(0)->setForeground(kFailing);
    verdicts_->item(0)->setToolTip(e);
  }
  while (verdicts_->count() > 500) delete verdicts_->takeItem(verdicts_->count() - 1);
}

// The window calls this as each Go live starts: the last session's verdicts, health rows and
// failure go with it.
void LivePanel::clearVerdicts() {
  verdicts_->clear();
  sources_.clear();
  failure_.clear();
  renderHealth();
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
