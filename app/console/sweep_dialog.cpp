#include "sweep_dialog.hpp"

#include "kpi_text.hpp"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMetaObject>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>
#include <thread>

#include "spillway/input_error.hpp"
#include "spillway/library/library.hpp"
#include "spillway/next_grid.hpp"
#include "spillway/policy_params.hpp"

namespace spillway::console {
namespace {

constexpr int kCandidateRole = Qt::UserRole + 1;
constexpr int kSortRole = Qt::UserRole + 2;

// A cell shown formatted and sorted by its number (n/a sorts last).
class NumItem : public QTableWidgetItem {
 public:
  NumItem(const QString& text, double key) : QTableWidgetItem(text) { setData(kSortRole, key); }
  bool operator<(const QTableWidgetItem& o) const override {
    return data(kSortRole).toDouble() < o.data(kSortRole).toDouble();
  }
};

// As the KPI table writes durations ("6m 28s", not "388.4 s").
QString seconds(std::optional<double> s) {
  return kpiValue(s, "s");
}

// Availability from red (the worst candidate) through amber to green (the best): the eye
// reads red as bad, as everywhere else in the console (a jet scale put the best in red).
QCPColorGradient availabilityGradient() {
  QCPColorGradient g;
  g.setColorStopAt(0.0, QColor(198, 40, 40));
  g.setColorStopAt(0.5, QColor(249, 168, 37));
  g.setColorStopAt(1.0, QColor(46, 125, 50));
  g.setLevelCount(50);
  return g;
}

// The candidates' availability span (%) for the colour scale; never empty.
QCPRange availabilityRange(const SweepResult& r) {
  double lo = 1, hi = 0;
  for (const SweepScore& s : r.scores) {
    lo = std::min(lo, s.availability());
    hi = std::max(hi, s.availability());
  }
  if (hi - lo < 1e-6) {
    lo -= 0.0005;
    hi += 0.0005;
  }
  return QCPRange(lo * 100, hi * 100);
}

// An axis range widened by 8 % (at least 0.5) each side, never below zero: no point on the
// frame.
void pad(QCPAxis* a) {
  const QCPRange rg = a->range();
  const double m = std::max(rg.size() * 0.08, 0.5);
  a->setRange(std::max(0.0, rg.lower - m), rg.upper + m);
}

// The chosen incidents' calls, each read once for every candidate; stops early once cancelled.
std::vector<IncidentTrace> readTraces(library::Library& lib, const std::string& path,
                                      const QStringList& names, const std::atomic<bool>& cancel) {
  std::vector<IncidentTrace> traces;
  for (const QString& n : names) {
    const std::string name = n.toStdString();
    auto src = lib.open(name);
    if (src->aggregates())
      throw InputError(path, 0, name, "holds aggregate samples (metrics); a sweep replays calls");
    traces.push_back(
        IncidentTrace::read([&](CallRecord& r) { return src->next(r); }, name, lib.faults(name)));
    if (cancel.load()) break;
  }
  return traces;
}

// The sweep's grid; a row without a usable step sweeps `from` alone.
std::vector<double> gridValues(double from, double to, double step) {
  std::vector<double> v = gridSteps(from, to, step);
  return v.empty() ? std::vector<double>{from} : v;
}

}  // namespace

SweepDialog::SweepDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Sweep thresholds over recorded incidents"));
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  const ParamButtons rowButtons = buildParams(top);
  buildIncidents(top);
  layout->addLayout(top);
  buildRunRow(layout);
  buildResults(layout);
  QPushButton* calibrate = buildCalibration(layout);
  resize(1100, 780);
  connectSignals(rowButtons, calibrate);
  setParams({{"trip.slow_rate", 0.3, 0.5, 0.1}, {"trip.sustain", 2, 6, 2}});
}

// The parameter space: the key / from / to / step rows with Add and Remove, mode, samples,
// seed and threads.
SweepDialog::ParamButtons SweepDialog::buildParams(QBoxLayout* top) {
  auto* space = new QGroupBox(tr("Parameters"), this);
  auto* spaceLayout = new QVBoxLayout(space);
  params_ = new QTableWidget(0, 4, space);
  params_->setHorizontalHeaderLabels({tr("key"), tr("from"), tr("to"), tr("step")});
  params_->verticalHeader()->hide();
  params_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  params_->setMaximumHeight(150);  // the results need the room
  spaceLayout->addWidget(params_);
  auto* paramButtons = new QHBoxLayout;
  auto* add = new QPushButton(tr("Add"), space);
  auto* remove = new QPushButton(tr("Remove"), space);
  paramButtons->addWidget(add);
  paramButtons->addWidget(remove);
  paramButtons->addStretch(1);
  spaceLayout->addLayout(paramButtons);
  auto* opts = new QFormLayout;
  mode_ = new QComboBox(space);
  mode_->addItems({tr("grid (from, to, step)"), tr("random (uniform in [from, to])")});
  samples_ = new QSpinBox(space);
  samples_->setRange(1, 100000);
  samples_->setValue(100);
  seed_ = new QSpinBox(space);
  seed_->setRange(0, 1 << 30);
  seed_->setValue(1);
  threads_ = new QSpinBox(space);
  threads_->setRange(1, 256);
  threads_->setValue(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  opts->addRow(tr("mode"), mode_);
  opts->addRow(tr("samples"), samples_);
  opts->addRow(tr("seed"), seed_);
  opts->addRow(tr("threads"), threads_);
  spaceLayout->addLayout(opts);
  top->addWidget(space, 3);
  return {add, remove};
}

void SweepDialog::buildIncidents(QBoxLayout* top) {
  auto* incBox = new QGroupBox(tr("Incidents"), this);
  auto* incLayout = new QVBoxLayout(incBox);
  incidents_ = new QListWidget(incBox);
  incidents_->setToolTip(tr("Every checked incident is replayed under every candidate"));
  incidents_->setMaximumHeight(190);
  incLayout->addWidget(incidents_);
  top->addWidget(incBox, 2);
}

void SweepDialog::buildRunRow(QBoxLayout* layout) {
  auto* runRow = new QHBoxLayout;
  run_ = new QPushButton(tr("Run sweep"), this);
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setEnabled(false);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 100);
  runRow->addWidget(run_);
  runRow->addWidget(cancel_);
  runRow->addWidget(progress_, 1);
  layout->addLayout(runRow);
  message_ = new QLabel(this);
  message_->setWordWrap(true);
  layout->addWidget(message_);
}

// The results table and the Pareto plot side by side.
void SweepDialog::buildResults(QBoxLayout* layout) {
  auto* split = new QSplitter(Qt::Horizontal, this);
  table_ = new QTableWidget(split);
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setSortingEnabled(true);
  table_->setToolTip(tr("Click a row to load its policy into the editor"));
  plot_ = new QCustomPlot(split);
  plot_->setMinimumSize(380, 300);
  plot_->setToolTip(tr("Click a point to load its policy into the editor"));
  split->addWidget(table_);
  split->addWidget(plot_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  layout->addWidget(split, 1);
}

// The table as wide as its columns (the Pareto front's ★ is the last one) when the plot keeps
// its minimum width beside it; else the two share what there is.
void SweepDialog::showWholeTable() {
  auto* split = qobject_cast<QSplitter*>(table_->parentWidget());
  if (!split) return;
  int wanted = table_->frameWidth() * 2 + table_->verticalScrollBar()->sizeHint().width();
  for (int c = 0; c < table_->columnCount(); ++c) wanted += table_->columnWidth(c);
  const QList<int> sizes = split->sizes();
  const int total = sizes.value(0) + sizes.value(1);
  if (total <= 0) return;
  const int table = std::min(wanted, std::max(total / 2, total - plot_->minimumWidth()));
  split->setSizes({table, total - table});
}

// Calibration targets and their answer; returns the Calibrate button.
QPushButton* SweepDialog::buildCalibration(QBoxLayout* layout) {
  auto* calRow = new QHBoxLayout;
  targets_ = new QLineEdit("fp<=0.03,ttd<=30s", this);
  targets_->setToolTip(
      tr("Targets: fp, ttd, mttr, missed with <=; availability with >= (e.g. "
         "fp<=0.03,ttd<=30s,availability>=0.99)"));
  auto* calibrate = new QPushButton(tr("Calibrate…"), this);
  calRow->addWidget(new QLabel(tr("Targets"), this));
  calRow->addWidget(targets_, 1);
  calRow->addWidget(calibrate);
  layout->addLayout(calRow);
  calibration_ = new QLabel(this);
  calibration_->setWordWrap(true);
  calibration_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(calibration_);
  return calibrate;
}

void SweepDialog::connectSignals(const ParamButtons& rowButtons, QPushButton* calibrate) {
  connect(rowButtons.add, &QPushButton::clicked, this, [this] {
    addParamRow({"trip.error_rate", 0.3, 0.7, 0.1});
  });
  connect(rowButtons.remove, &QPushButton::clicked, this, [this] {
    if (params_->rowCount() > 0)
      params_->removeRow(params_->currentRow() >= 0 ? params_->currentRow()
                                                    : params_->rowCount() - 1);
  });
  connect(run_, &QPushButton::clicked, this, [this] { start(); });
  connect(cancel_, &QPushButton::clicked, this, &SweepDialog::cancel);
  connect(calibrate, &QPushButton::clicked, this, [this] { calibrateTargets(targets_->text()); });
  connect(table_, &QTableWidget::cellClicked, this, [this](int row, int) {
    chooseCandidate(table_->item(row, 0)->data(kCandidateRole).toULongLong());
  });
  connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
    const long i = candidateAt(e->position());
    if (i >= 0) chooseCandidate(static_cast<std::size_t>(i));
  });
}

// A sweep in flight stops at its next candidate check, on its own.
SweepDialog::~SweepDialog() {
  if (cancelFlag_) cancelFlag_->store(true);
}

void SweepDialog::addParamRow(const SweepParamRow& r) {
  const int row = params_->rowCount();
  params_->insertRow(row);
  auto* key = new QComboBox(params_);
  for (const BreakerParam& p : breakerParams())
    key->addItem(QString::fromUtf8(p.key.data(), static_cast<int>(p.key.size())) + " (" +
                     QString::fromUtf8(p.unit.data(), static_cast<int>(p.unit.size())) + ")",
                 QString::fromUtf8(p.key.data(), static_cast<int>(p.key.size())));
  key->setCurrentIndex(std::max(0, key->findData(r.key)));
  params_->setCellWidget(row, 0, key);
  int col = 1;
  for (double v : {r.from, r.to, r.step}) {
    auto* box = new QDoubleSpinBox(params_);
    box->setDecimals(3);
    box->setRange(0, 1e7);
    box->setValue(v);
    params_->setCellWidget(row, col++, box);
  }
}

void SweepDialog::setParams(const std::vector<SweepParamRow>& rows) {
  params_->setRowCount(0);
  for (const SweepParamRow& r : rows) addParamRow(r);
}

void SweepDialog::setRandom(bool random, int samples, int seed) {
  mode_->setCurrentIndex(random ? 1 : 0);
  samples_->setValue(samples);
  seed_->setValue(seed);
}

void SweepDialog::setThreads(int n) {
  threads_->setValue(n);
}

void SweepDialog::setLibrary(const QString& path, const QStringList& incidents,
                             const QStringList& chosen) {
  libraryPath_ = path;
  incidents_->clear();
  for (const QString& name : incidents) {
    auto* item = new QListWidgetItem(name, incidents_);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(chosen.contains(name) ? Qt::Checked : Qt::Unchecked);
  }
}

QStringList SweepDialog::chosenIncidents() const {
  QStringList out;
  for (int i = 0; i < incidents_->count(); ++i)
    if (incidents_->item(i)->checkState() == Qt::Checked) out << incidents_->item(i)->text();
  return out;
}

bool SweepDialog::readSpec(SweepSpec& spec, QString& error) const {
  spec.mode = mode_->currentIndex() == 1 ? SweepSpec::Mode::Random : SweepSpec::Mode::Grid;
  spec.samples = static_cast<std::uint32_t>(samples_->value());
  spec.seed = static_cast<std::uint64_t>(seed_->value());
  for (int r = 0; r < params_->rowCount(); ++r) {
    const QString key =
        qobject_cast<QComboBox*>(params_->cellWidget(r, 0))->currentData().toString();
    auto num = [&](int c) {
      return qobject_cast<QDoubleSpinBox*>(params_->cellWidget(r, c))->value();
    };
    const double from = num(1), to = num(2), step = num(3);
    const BreakerParam* p = findBreakerParam(key.toStdString());
    if (!p) {
      error = tr("sweep:%1: key: unknown parameter '%2'").arg(r + 1).arg(key);
      return false;
    }
    if (from < p->min || to > p->max || from > to) {
      error = tr("sweep:%1: %2: the range %3…%4 is outside %5…%6 or reversed")
                  .arg(r + 1)
                  .arg(key)
                  .arg(from)
                  .arg(to)
                  .arg(p->min)
                  .arg(p->max);
      return false;
    }
    if (spec.mode == SweepSpec::Mode::Grid && step <= 0 && to > from) {
      error = tr("sweep:%1: %2: step must be > 0").arg(r + 1).arg(key);
      return false;
    }
    SweepParamRange range;
    range.key = key.toStdString();
    range.values = gridValues(from, to, step);
    range.lo = from;
    range.hi = to;
    spec.params.push_back(std::move(range));
  }
  if (spec.params.empty()) {
    error = tr("sweep: add at least one parameter");
    return false;
  }
  return true;
}

void SweepDialog::setRunning(bool on) {
  running_ = on;
  run_->setEnabled(!on);
  cancel_->setEnabled(on);
}

bool SweepDialog::start() {
  if (running_) return false;
  SweepSpec spec;
  QString error;
  if (!readSpec(spec, error)) {
    message_->setText(error);
    return false;
  }
  const QStringList names = chosenIncidents();
  if (names.isEmpty() || libraryPath_.isEmpty()) {
    message_->setText(tr("Check at least one incident of the library"));
    return false;
  }
  cancelFlag_ = std::make_shared<std::atomic<bool>>(false);
  setRunning(true);
  progress_->setValue(0);
  message_->setText(tr("Loading %1 incident(s)…").arg(names.size()));
  auto flag = cancelFlag_;
  const std::string path = libraryPath_.toStdString();
  const unsigned threads = static_cast<unsigned>(threads_->value());
  const Policy base = base_;
  job_.start([this, spec, names, flag, path, threads, base](const BackgroundJob::Context& job) {
    try {
      std::vector<SweepCandidate> candidates = expandSweep(base, spec, 20000);
      library::Library lib(path, library::OpenOptions{.mustExist = true});
      const std::vector<IncidentTrace> traces = readTraces(lib, path, names, *flag);
      const std::size_t total = candidates.size();
      job.post([this, total] { message_->setText(tr("Replaying %1 candidates…").arg(total)); });
      auto lastPct = std::make_shared<std::atomic<int>>(-1);
      SweepRunOptions opt;
      opt.threads = threads;
      opt.cancel = flag.get();
      opt.progress = [this, lastPct, &job](std::size_t done, std::size_t all) {
        const int pct = static_cast<int>(100 * done / std::max<std::size_t>(all, 1));
        if (lastPct->exchange(pct) == pct) return;
        job.post([this, pct] { progress_->setValue(pct); });
      };
      auto result = std::make_shared<SweepResult>(
          flag->load() ? SweepResult{} : runSweep(std::move(candidates), traces, opt));
      if (flag->load()) result->cancelled = true;
      job.deliver([this, result] {
        setRunning(false);
        if (result->cancelled) {
          message_->setText(tr("Cancelled"));
          emit cancelled();
          return;
        }
        result_ = std::make_unique<SweepResult>(std::move(*result));
        progress_->setValue(100);
        showResult();
        emit finished();
      });
    } catch (const std::exception& e) {
      const QString msg = QString::fromUtf8(e.what());
      job.deliver([this, msg] {
        setRunning(false);
        message_->setText(msg);
        emit failed(msg);
      });
    }
  });
  return true;
}

void SweepDialog::cancel() {
  if (cancelFlag_) cancelFlag_->store(true);
}

QString SweepDialog::message() const {
  return message_->text();
}

void SweepDialog::showResult() {
  const SweepResult& r = *result_;
  chosen_ = -1;
  const std::size_t nParams = r.candidates.empty() ? 0 : r.candidates.front().values.size();
  QStringList headers;
  if (!r.candidates.empty())
    for (const auto& [key, v] : r.candidates.front().values) headers << QString::fromStdString(key);
  // Short headers: the last column (the front's ★) stays on screen beside the plot.
  headers << tr("误伤") << tr("TTD") << tr("MTTR") << tr("avail.") << tr("missed") << tr("front");
  table_->setSortingEnabled(false);
  table_->clear();
  table_->setColumnCount(headers.size());
  table_->setHorizontalHeaderLabels(headers);
  table_->setRowCount(static_cast<int>(r.candidates.size()));
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const int row = static_cast<int>(i);
    const SweepScore& s = r.scores[i];
    int col = 0;
    for (const auto& [key, v] : r.candidates[i].values)
      table_->setItem(row, col++, new NumItem(QString::number(v, 'g', 4), v));
    const auto fp = s.fpRateOrNa();  // n/a: the candidate blocked nothing
    table_->setItem(
        row, col++,
        new NumItem(fp ? QString::number(*fp * 100, 'f', 2) + " %" : tr("n/a"), s.fpRate()));
    table_->setItem(row, col++,
                    new NumItem(seconds(s.meanTtdSeconds()), s.meanTtdSeconds().value_or(1e18)));
    table_->setItem(row, col++,
                    new NumItem(seconds(s.meanMttrSeconds()), s.meanMttrSeconds().value_or(1e18)));
    table_->setItem(
        row, col++,
        new NumItem(QString::number(s.availability() * 100, 'f', 2) + " %", s.availability()));
    table_->setItem(row, col++,
                    new NumItem(QString::number(s.faults - s.detected), s.faults - s.detected));
    table_->setItem(row, col++, new NumItem(r.pareto[i] ? "★" : "", r.pareto[i] ? 0 : 1));
    table_->item(row, 0)->setData(kCandidateRole, static_cast<qulonglong>(i));
  }
  const QStringList tips = {
      tr("false-positive rate: would-succeed blocks in false trips and recovery lag ÷ blocks"),
      tr("mean time to detect over the incidents' real faults (a miss counts the fault's "
         "length)"),
      tr("mean onset → full traffic over the restored faults"),
      tr("availability"),
      tr("real faults never detected"),
      tr("★: on the Pareto front (FP ↓, TTD ↓, availability ↑, missed ↓)")};
  for (int k = 0; k < tips.size(); ++k)
    table_->horizontalHeaderItem(static_cast<int>(nParams) + k)->setToolTip(tips[k]);
  table_->setSortingEnabled(true);
  table_->resizeColumnsToContents();
  showWholeTable();
  std::size_t front = 0;
  for (bool b : r.pareto) front += b;
  message_->setText(
      tr("%1 candidates, %2 on the Pareto front (FP ↓, TTD ↓, availability ↑, missed ↓). "
         "Click a row or a point to load its policy.")
          .arg(r.candidates.size())
          .arg(front));
  drawPareto();
}

// 误伤 against mean TTD, coloured by availability; the front circled, the chosen one marked.
void SweepDialog::drawPareto() {
  plot_->clearPlottables();
  plot_->clearItems();
  plot_->plotLayout()->clear();
  auto* rect = new QCPAxisRect(plot_);
  // A title row instead of a legend: a legend inside the rect would hide points.
  auto* title =
      new QCPTextElement(plot_, tr("○ Pareto front   ⊗ loaded"), QFont(font().family(), 8));
  plot_->plotLayout()->addElement(0, 0, title);
  plot_->plotLayout()->addElement(1, 0, rect);
  auto* scale = new QCPColorScale(plot_);
  plot_->plotLayout()->addElement(1, 1, scale);
  scale->setLabel(tr("availability (%)"));
  QCPColorGradient gradient = availabilityGradient();
  scale->setGradient(gradient);
  QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
  x->setLabel(tr("误伤, false-positive rate (%)"));
  y->setLabel(tr("mean TTD (s)"));
  points_.clear();
  if (!result_ || result_->candidates.empty()) {
    plot_->replot();
    return;
  }
  const SweepResult& r = *result_;
  const QCPRange range = availabilityRange(r);
  scale->setDataRange(range);
  for (std::size_t i = 0; i < r.scores.size(); ++i)
    points_.emplace_back(r.scores[i].fpRate() * 100, r.scores[i].meanTtdSeconds().value_or(0));
  plotCandidates(x, y, gradient, range);
  plotFront(x, y);
  rect->setupFullAxesBox();
  plot_->rescaleAxes();
  pad(x);
  pad(y);
  plot_->replot();
}

// One graph per colour level (availability in 32 steps): thousands of candidates stay a few
// dozen plottables.
void SweepDialog::plotCandidates(QCPAxis* x, QCPAxis* y, QCPColorGradient& gradient,
                                 const QCPRange& range) {
  const SweepResult& r = *result_;
  constexpr int kLevels = 32;
  std::vector<QCPGraph*> levels(kLevels, nullptr);
  for (std::size_t i = 0; i < r.scores.size(); ++i) {
    const double a = r.scores[i].availability() * 100;
    const int level =
        std::clamp(static_cast<int>((a - range.lower) / range.size() * kLevels), 0, kLevels - 1);
    if (!levels[level]) {
      const QColor c = gradient.color(range.lower + (level + 0.5) * range.size() / kLevels, range);
      levels[level] = plot_->addGraph(x, y);
      levels[level]->setLineStyle(QCPGraph::lsNone);
      levels[level]->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 7));
    }
    levels[level]->addData(points_[i].x(), points_[i].y());
  }
}

// The Pareto front circled, and the loaded candidate marked.
void SweepDialog::plotFront(QCPAxis* x, QCPAxis* y) {
  const SweepResult& r = *result_;
  auto addPoint = [&](std::size_t i, QCPScatterStyle style) {
    QCPGraph* g = plot_->addGraph(x, y);
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(style);
    g->addData(points_[i].x(), points_[i].y());
    return g;
  };
  QVector<double> fx, fy;
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < r.scores.size(); ++i)
    if (r.pareto[i]) front.push_back(i);
  std::sort(front.begin(), front.end(),
            [&](std::size_t a, std::size_t b) { return points_[a].x() < points_[b].x(); });
  for (std::size_t i : front) {
    fx << points_[i].x();
    fy << points_[i].y();
  }
  QCPGraph* f = plot_->addGraph(x, y);
  f->setName(tr("Pareto front"));
  f->setLineStyle(QCPGraph::lsNone);
  f->setScatterStyle(
      QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(Qt::black, 1.5), Qt::NoBrush, 14));
  f->setData(fx, fy, true);
  if (chosen_ >= 0) {
    QCPGraph* c = addPoint(
        static_cast<std::size_t>(chosen_),
        QCPScatterStyle(QCPScatterStyle::ssCrossCircle, QPen(Qt::black, 2), Qt::NoBrush, 18));
    c->setName(tr("loaded"));
  }
}

long SweepDialog::candidateAt(const QPointF& pixel) const {
  if (points_.empty() || plot_->axisRectCount() == 0) return -1;
  QCPAxisRect* rect = plot_->axisRect();
  const QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
  long best = -1;
  double bestD = 8.0 * 8.0;
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const double dx = x->coordToPixel(points_[i].x()) - pixel.x();
    const double dy = y->coordToPixel(points_[i].y()) - pixel.y();
    if (dx * dx + dy * dy <= bestD) {
      bestD = dx * dx + dy * dy;
      best = static_cast<long>(i);
    }
  }
  return best;
}

QString SweepDialog::describe(std::size_t i) const {
  QStringList parts;
  for (const auto& [key, v] : result_->candidates[i].values)
    parts << QString("%1 = %2").arg(QString::fromStdString(key)).arg(v, 0, 'g', 4);
  return parts.join(", ");
}

void SweepDialog::chooseCandidate(std::size_t index) {
  if (!result_ || index >= result_->candidates.size()) return;
  chosen_ = static_cast<long>(index);
  for (int row = 0; row < table_->rowCount(); ++row)
    if (table_->item(row, 0)->data(kCandidateRole).toULongLong() == index) {
      const QSignalBlocker block(table_);
      table_->selectRow(row);
    }
  drawPareto();
  emit candidateChosen(result_->candidates[index].policy, describe(index));
}

bool SweepDialog::calibrateTargets(const QString& text) {
  if (!result_) {
    calibration_->setText(tr("Run a sweep first"));
    return false;
  }
  try {
    const auto targets = parseTargets(text.toStdString(), "targets");
    const Calibration c = calibrate(*result_, targets);
    QStringList lines;
    if (c.chosen) {
      const SweepScore& s = result_->scores[*c.chosen];
      lines << tr("Chosen: %1 — FP %2 %, mean TTD %3, availability %4 %")
                   .arg(describe(*c.chosen))
                   .arg(s.fpRate() * 100, 0, 'f', 2)
                   .arg(seconds(s.meanTtdSeconds()))
                   .arg(s.availability() * 100, 0, 'f', 2);
    } else {
      lines << tr("No candidate meets every target:");
    }
    for (const std::string& f : c.findings) lines << QString::fromStdString(f);
    if (const auto next = c.chosen ? std::nullopt : proposeNextGrid(*result_, targets)) {
      lines << tr("Next grid (around candidate %1, the closest): %2")
                   .arg(next->around)
                   .arg(QString::fromStdString(formatNextGrid(*next)));
      if (!next->why.empty()) lines << QString::fromStdString("(" + next->why + ")");
    }
    calibration_->setText(lines.join("\n"));
    if (c.chosen) chooseCandidate(*c.chosen);
    return c.chosen.has_value();
  } catch (const std::exception& e) {
    calibration_->setText(QString::fromUtf8(e.what()));
    return false;
  }
}

QString SweepDialog::calibrationText() const {
  return calibration_->text();
}

}  // namespace spillway::console
