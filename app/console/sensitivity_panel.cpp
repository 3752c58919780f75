#include "sensitivity_panel.hpp"

#include <qcustomplot.h>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QScrollArea>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "spillway/input_error.hpp"
#include "spillway/library/library.hpp"

namespace spillway::console {
namespace {

const QColor kDownColour(70, 120, 190);  // the step down
const QColor kUpColour(225, 130, 40);    // the step up

QString value(double v, const std::string& unit) {
  return QString::fromStdString(view::formatParamValue(v, unit));
}

// "trip.slow_rate  0.36 ◂ 0.45 ▸ 0.56": the parameter, its current value and the values the
// bars stepped to ("—": that side sits on the edge of the valid range).
QString rowLabel(const view::SensitivityRow& r) {
  QString label = QString::fromStdString(r.key) + "  " +
                  (r.down ? value(r.down->value, r.unit) : QStringLiteral("—")) + " ◂ " +
                  value(r.current, r.unit) + " ▸ " +
                  (r.up ? value(r.up->value, r.unit) : QStringLiteral("—"));
  const int missed = std::max(r.down ? r.down->missed : 0, r.up ? r.up->missed : 0);
  if (missed > 0)
    label += (missed == 1 ? QObject::tr("  (a step misses a real fault)")
                          : QObject::tr("  (a step misses %1 real faults)").arg(missed));
  return label;
}

QString share(const std::optional<double>& v) {
  return v ? QString::number(*v * 100, 'f', 2) + " %" : QObject::tr("n/a");
}

QString signedValue(const std::optional<double>& v, const char* unit, int decimals) {
  if (!v) return QObject::tr("n/a");
  return (*v >= 0 ? "+" : "−") + QString::number(std::abs(*v), 'f', decimals) + unit;
}

// What a bar stands for, with the numbers behind it.
QString stepTip(const view::SensitivityRow& r, const view::SensitivityStep& s,
                const view::SensitivityKpis& current) {
  QString tip =
      QObject::tr("%1 %2 → %3\n误伤 %4 (%5 → %6)\nTTD %7\navailability %8")
          .arg(QString::fromStdString(r.key), value(r.current, r.unit), value(s.value, r.unit),
               signedValue(s.falsePositivePp, " pp", 2), share(current.falsePositive),
               share(s.kpis.falsePositive), signedValue(s.ttdSeconds, " s", 1),
               signedValue(s.availabilityPp, " pp", 2));
  if (s.missed > 0)
    tip += QObject::tr("\nmisses %1 more real fault(s): TTD ∞ (the mean above is over the rest)")
               .arg(s.missed);
  else if (s.missed < 0)
    tip += QObject::tr("\ncatches %1 real fault(s) the current policy misses").arg(-s.missed);
  return tip;
}

void styleBars(QCPBars* b, const QColor& c, const QString& name) {
  b->setName(name);
  b->setWidth(0.38);
  b->setPen(QPen(c.darker(130)));
  b->setBrush(c);
}

}  // namespace

SensitivityPanel::SensitivityPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  status_ = new QLabel(tr("Sensitivity: not computed yet"), this);
  status_->setWordWrap(true);
  progressBar_ = new QProgressBar(this);
  progressBar_->setRange(0, 100);
  progressBar_->setMaximumWidth(160);
  progressBar_->hide();
  top->addWidget(status_, 1);
  // One legend for both charts, outside them: it never covers a bar.
  auto* legend =
      new QLabel(tr("<span style='color:%1'>■</span> step down (×0.8 or one step) &nbsp; "
                    "<span style='color:%2'>■</span> step up (×1.25 or one step)")
                     .arg(kDownColour.name(), kUpColour.name()),
                 this);
  top->addWidget(legend);
  top->addWidget(progressBar_);
  layout->addLayout(top);
  // The charts scroll: a row per parameter keeps a legible height however short the bottom
  // panel is, and the panel never forces the window taller than a laptop screen.
  charts_ = new QWidget(this);
  auto* charts = new QHBoxLayout(charts_);
  charts->setContentsMargins(0, 0, 0, 0);
  fpPlot_ = makePlot(tr("Δ误伤 (pp) — right is worse"), fpDown_, fpUp_);
  ttdPlot_ = makePlot(tr("ΔTTD (s) — right is slower"), ttdDown_, ttdUp_);
  ttdPlot_->yAxis->setTickLabels(false);  // the rows are named once, on the left chart
  ttdMissed_ = new QCPBars(ttdPlot_->yAxis, ttdPlot_->xAxis);
  styleBars(ttdMissed_, QColor(198, 40, 40), tr("misses a real fault (TTD ∞)"));
  ttdMissed_->setBrush(QBrush(QColor(198, 40, 40), Qt::BDiagPattern));
  charts->addWidget(fpPlot_, 3);
  charts->addWidget(ttdPlot_, 2);
  auto* scroll = new QScrollArea(this);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidgetResizable(true);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setWidget(charts_);
  layout->addWidget(scroll, 1);
  connect(&job_, &BackgroundJob::progress, this, [this](int pct) {
    progressBar_->setValue(pct);
    emit progress(pct);
  });
}

QCustomPlot* SensitivityPanel::makePlot(const QString& title, QCPBars*& down, QCPBars*& up) {
  auto* plot = new QCustomPlot(this);
  plot->setMouseTracking(true);
  connect(plot, &QCustomPlot::mouseMove, this,
          [this, plot](QMouseEvent* e) { showTip(plot, e->pos()); });
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title));
  plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
  plot->yAxis->grid()->setVisible(false);
  plot->xAxis->grid()->setZeroLinePen(QPen(palette().color(QPalette::WindowText), 1));
  // Horizontal bars: the rows are the keys on the left axis, the change the value below.
  down = new QCPBars(plot->yAxis, plot->xAxis);
  up = new QCPBars(plot->yAxis, plot->xAxis);
  styleBars(down, kDownColour, tr("step down"));
  styleBars(up, kUpColour, tr("step up"));
  return plot;
}

void SensitivityPanel::compute(const sim::Scenario& scenario, const Policy& policy) {
  start(
      [scenario, policy, seeds = seeds_](const view::SensitivityOptions& o) {
        view::SensitivityOptions withSeeds = o;
        withSeeds.seeds = seeds;
        return view::computeSensitivity(scenario, policy, withSeeds);
      },
      QString::fromStdString(scenario.name));
}

void SensitivityPanel::computeIncidents(std::shared_ptr<const std::vector<IncidentTrace>> incidents,
                                        const Policy& policy) {
  QStringList names;
  for (const IncidentTrace& i : *incidents) names << QString::fromStdString(i.name());
  start(
      [incidents, policy](const view::SensitivityOptions& o) {
        return view::computeSensitivity(*incidents, policy, o);
      },
      names.join(", "));
}

void SensitivityPanel::computeIncident(const QString& libraryPath, const QString& incident,
                                       const Policy& policy) {
  const std::string path = libraryPath.toStdString(), name = incident.toStdString();
  start(
      [path, name, policy](const view::SensitivityOptions& o) {
        // Its own connection: SQLite handles are not shared across threads.
        library::Library lib(path, library::OpenOptions{.mustExist = true});
        auto src = lib.open(name);
        if (src->aggregates())
          throw InputError(path, 0, name, "holds aggregate samples (metrics); this replays calls");
        const std::vector<IncidentTrace> traces{IncidentTrace::read(
            [&](CallRecord& r) { return src->next(r); }, name, lib.faults(name))};
        return view::computeSensitivity(traces, policy, o);
      },
      incident);
}

void SensitivityPanel::cancel() {
  job_.cancel();
  progressBar_->hide();
  status_->setText(tr("Sensitivity: cancelled"));
}

void SensitivityPanel::start(std::function<view::Sensitivity(const view::SensitivityOptions&)> run,
                             const QString& what) {
  clock_.start();
  progressBar_->setValue(0);
  progressBar_->show();
  status_->setText(tr("Sensitivity on %1: one step down and up per parameter…").arg(what));
  job_.start([this, run = std::move(run)](const BackgroundJob::Context& job) {
    view::SensitivityOptions o;
    o.cancel = &job.cancelFlag();
    o.progress = [&job](std::size_t done, std::size_t total) {
      job.progress(static_cast<double>(done) /
                   static_cast<double>(std::max<std::size_t>(total, 1)));
    };
    try {
      auto s = std::make_shared<view::Sensitivity>(run(o));
      // Cancelled: its rows are incomplete; a newer request or cancel() has the screen.
      if (s->cancelled) return job.deliver([] {});
      job.deliver([this, s] { display(std::move(*s)); });
    } catch (const std::exception& e) {
      job.deliver([this, msg = QString::fromUtf8(e.what())] {
        progressBar_->hide();
        status_->setText(tr("Sensitivity failed: %1").arg(msg));
        emit failed(msg);
      });
    }
  });
}

void SensitivityPanel::display(view::Sensitivity s) {
  result_ = std::move(s);
  progressBar_->hide();
  const view::Sensitivity& r = *result_;
  const QString how = r.simulated ? (r.seeds == 1 ? tr("simulated, one seed")
                                                  : tr("simulated, mean of %1 seeds").arg(r.seeds))
                                  : tr("replayed by the sweep engine");
  status_->setText(tr("%1 — %2 runs in %3 s (%4). Current policy: 误伤 %5, TTD %6, "
                      "availability %7. Rows by impact, largest first.")
                       .arg(QString::fromStdString(r.source))
                       .arg(r.runs)
                       .arg(clock_.elapsed() / 1000.0, 0, 'f', 1)
                       .arg(how)
                       .arg(share(r.current.falsePositive))
                       .arg(r.current.ttdSeconds
                                ? QString::number(*r.current.ttdSeconds, 'f', 1) + " s"
                                : tr("n/a"))
                       .arg(share(r.current.availability)));
  draw();
  emit computed();
}

void SensitivityPanel::draw() {
  for (QCPBars* b : {fpDown_, fpUp_, ttdDown_, ttdUp_, ttdMissed_}) b->data()->clear();
  std::vector<double> missedAt;  // keys of the steps that miss a real fault
  auto ticker = fpPlot_->yAxis->ticker().dynamicCast<QCPAxisTickerText>();
  auto ttdTicker = ttdPlot_->yAxis->ticker().dynamicCast<QCPAxisTickerText>();
  ticker->clear();
  ttdTicker->clear();
  const auto& rows = result_->rows;
  const int n = static_cast<int>(rows.size());
  for (int i = 0; i < n; ++i) {
    const view::SensitivityRow& r = rows[static_cast<std::size_t>(i)];
    const double key = n - i;  // the largest impact on top
    ticker->addTick(key, rowLabel(r));
    ttdTicker->addTick(key, QString::fromStdString(r.key));
    // The mean TTD of a step that misses a fault is over the faults left: it can look faster.
    if (r.down) {
      fpDown_->addData(key + 0.2, r.down->falsePositivePp.value_or(0));
      if (r.down->missed > 0)
        missedAt.push_back(key + 0.2);
      else
        ttdDown_->addData(key + 0.2, r.down->ttdSeconds.value_or(0));
    }
    if (r.up) {
      fpUp_->addData(key - 0.2, r.up->falsePositivePp.value_or(0));
      if (r.up->missed > 0)
        missedAt.push_back(key - 0.2);
      else
        ttdUp_->addData(key - 0.2, r.up->ttdSeconds.value_or(0));
    }
  }
  // A row a line of text and a half: its label never overlaps the next one's.
  const int rowHeight = fontMetrics().height() * 3 / 2;
  charts_->setMinimumHeight(n * rowHeight + 4 * fontMetrics().height());
  for (QCustomPlot* p : {fpPlot_, ttdPlot_}) {
    p->yAxis->setRange(0.4, n + 0.6);
    p->xAxis->rescale(true);
    const QCPRange x = p->xAxis->range();
    const double m = std::max(0.1, std::max(std::abs(x.lower), std::abs(x.upper)) * 1.1);
    p->xAxis->setRange(-m, m);  // symmetric: zero in the middle, better left, worse right
    if (p == ttdPlot_)
      for (double key : missedAt) ttdMissed_->addData(key, m);  // to the worse edge
    p->replot();
  }
}

// The bar under the pointer: rows sit at whole keys, the step down 0.2 above, the step up
// 0.2 below.
void SensitivityPanel::showTip(QCustomPlot* plot, const QPoint& at) {
  if (!result_ || result_->rows.empty()) return;
  const int n = static_cast<int>(result_->rows.size());
  const double key = plot->yAxis->pixelToCoord(at.y());
  const int i = n - static_cast<int>(std::lround(key));
  if (i < 0 || i >= n || std::abs(key - (n - i)) > 0.45) return QToolTip::hideText();
  const view::SensitivityRow& r = result_->rows[static_cast<std::size_t>(i)];
  const auto& step = key > n - i ? r.down : r.up;
  if (!step) return QToolTip::hideText();
  QToolTip::showText(plot->mapToGlobal(at), stepTip(r, *step, result_->current), plot);
}

QString SensitivityPanel::statusText() const {
  return status_->text();
}

int SensitivityPanel::barCount() const {
  int n = 0;
  for (QCPBars* b : {fpDown_, fpUp_, ttdDown_, ttdUp_, ttdMissed_}) n += b->dataCount();
  return n;
}

}  // namespace spillway::console
