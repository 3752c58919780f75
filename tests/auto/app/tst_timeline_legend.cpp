// The timelines explain themselves (issue 23, item 6), offscreen on one seed-000 run: a state
// legend over the lanes that covers no data, a tooltip on an OPEN band naming the state, its
// from–to and the rates against the thresholds, fault / detection / restore lines labelled
// and drawn in all four rects with labels that never overlap, would-open marks clustered with
// counts that add up to the events, and a readout with units and "—" for no data.
#include <QApplication>
#include <QSignalSpy>
#include <QTest>

#include <cmath>
#include <numeric>

#include "instance_tiles.hpp"
#include "main_window.hpp"
#include "policy_editor.hpp"
#include "spillway/policy.hpp"
#include "spillway/view/time_format.hpp"
#include "timeline_plot.hpp"

using namespace spillway;
using namespace spillway::console;

class TstTimelineLegend : public QObject {
  Q_OBJECT
  std::unique_ptr<MainWindow> w_;

  TimelinePlot* plot() { return w_->plot(); }
  const view::InstanceTimeline& focused() {
    return w_->current()->protectedRun.timeline.instances()[w_->tiles()->selected()];
  }
  // The focused instance's lane in the plot, and the y pixel of its middle.
  int focusedLaneY() {
    const auto& lanes = plot()->lanes();
    const auto pos = std::find(lanes.begin(), lanes.end(), w_->tiles()->selected());
    const double lane = static_cast<double>(pos - lanes.begin());
    const double n = static_cast<double>(lanes.size());
    return static_cast<int>(
        std::lround(plot()->axisRect(0)->axis(QCPAxis::atLeft)->coordToPixel(n - lane - 0.43)));
  }
  void zoom(double from, double to) {
    plot()->zoomTo(from, to);
    plot()->replot();  // lays out: clusters and labels follow the zoom
  }
  // Visible text items whose text is one of `texts`, as drawn (pixels).
  std::vector<QRectF> textRects(const QStringList& texts) {
    std::vector<QRectF> out;
    for (int i = 0; i < plot()->itemCount(); ++i)
      if (auto* t = qobject_cast<QCPItemText*>(plot()->item(i)))
        if (t->visible() && texts.contains(t->text()))
          out.emplace_back(t->topLeft->pixelPosition(), t->bottomRight->pixelPosition());
    return out;
  }

 private slots:
  void initTestCase();
  void stateLegendListsStatesOutsideTheData();
  void openBandTooltip();
  void markersLabelledInEveryRect();
  void wouldOpenMarksClustered();
  void tripRulesOffAreNotDrawn();
  void readoutHasUnitsAndDashes();
  void cleanupTestCase() { w_.reset(); }
};

void TstTimelineLegend::initTestCase() {
  QApplication::setApplicationName("spillway-test-timeline-legend");
  w_ = std::make_unique<MainWindow>();
  w_->resize(1500, 950);
  w_->show();
  QSignalSpy shown(w_.get(), &MainWindow::runShown);
  QVERIFY(w_->runScenario("seed-000"));
  QVERIFY(shown.wait(60000));
  plot()->replot();
  QVERIFY(plot()->axisRect(0)->width() > 200);
}

// Every state the lanes can show and the ▼, in legends that lie outside every rect.
void TstTimelineLegend::stateLegendListsStatesOutsideTheData() {
  const QStringList legend = plot()->stateLegend();
  for (const char* s :
       {"CLOSED", "ramping", "HALF_OPEN", "OPEN", "FORCED_OPEN", "METRICS_ONLY", "would open"})
    QVERIFY2(legend.contains(s), qPrintable(s + (" missing from " + legend.join(", "))));
  int legends = 0;
  for (QCPLayoutElement* e : plot()->plotLayout()->elements(true))
    if (auto* l = qobject_cast<QCPLegend*>(e)) {
      ++legends;
      QVERIFY(l->outerRect().height() > 0);
      for (int r = 0; r < plot()->axisRectCount(); ++r)
        QVERIFY2(!l->outerRect().intersects(plot()->axisRect(r)->rect()),
                 qPrintable(QString("a legend covers rect %1").arg(r)));
    }
  QCOMPARE(legends, 4);  // states, rates, latency, traffic
}

// Over the first OPEN band of the focused instance: its name, OPEN, from–to on the run's axis,
// and the rates of the tick it tripped in against the policy's thresholds.
void TstTimelineLegend::openBandTooltip() {
  const view::InstanceTimeline& it = focused();
  const auto band = std::find_if(it.bands.begin(), it.bands.end(), [](const view::StateBand& b) {
    return b.state == BreakerState::Open;
  });
  QVERIFY(band != it.bands.end());
  zoom(band->start / 1e6 - 20, band->end / 1e6 + 20);
  const QCPAxis* x = plot()->axisRect(0)->axis(QCPAxis::atBottom);
  const QPoint at(static_cast<int>(x->coordToPixel((band->start + band->end) / 2e6)),
                  focusedLaneY());
  const QString tip = plot()->bandTooltipAt(at);
  QVERIFY2(tip.startsWith(QString::fromStdString(it.name) + " · OPEN\n"), qPrintable(tip));
  const QString fromTo = QString::fromStdString(view::formatOffset(band->start)) + " – " +
                         QString::fromStdString(view::formatOffset(band->end));
  QVERIFY2(tip.contains(fromTo), qPrintable(tip + " | want " + fromTo));
  QVERIFY2(tip.contains(QString::fromStdString(view::durationText(band->end - band->start))),
           qPrintable(tip));
  const BreakerConfig cfg = resolveBreaker(w_->policyEditor()->policy(), it.model, it.name);
  const QString slowTrip =
      QString::number(cfg.trip.slowRate * cfg.trip.weight * 100, 'f', 1) + " %";
  QVERIFY2(tip.contains("tripped: error rate "), qPrintable(tip));
  QVERIFY2(tip.contains("slow rate ") && tip.contains(slowTrip), qPrintable(tip));
  // Left of the band the lane is CLOSED; above the lanes there is no band.
  const QPoint before(static_cast<int>(x->coordToPixel(band->start / 1e6 - 10)), at.y());
  QVERIFY2(plot()->bandTooltipAt(before).contains(" · CLOSED"),
           qPrintable(plot()->bandTooltipAt(before)));
  QVERIFY(plot()->bandTooltipAt(QPoint(at.x(), plot()->axisRect(0)->top() - 5)).isEmpty());
  plot()->resetZoom();
}

// Every fault, detection and restore line in all four rects; the labels name them with the
// TTD, and the labels shown never overlap.
void TstTimelineLegend::markersLabelledInEveryRect() {
  const view::InstanceTimeline& it = focused();
  int markers = 0;
  Micros onset = -1, detected = -1;
  for (const view::Marker& m : it.markers) {
    markers += m.kind != view::Marker::Kind::WouldOpen;
    if (m.kind == view::Marker::Kind::FaultStart && onset < 0) onset = m.at;
    if (m.kind == view::Marker::Kind::Detected && detected < 0) detected = m.at;
  }
  QVERIFY(markers >= 3 && onset >= 0 && detected > onset);
  for (int r = 0; r < 4; ++r)
    QVERIFY2(plot()->markerLines(plot()->axisRect(r)) == markers,
             qPrintable(QString("rect %1: %2 of %3 lines")
                            .arg(r)
                            .arg(plot()->markerLines(plot()->axisRect(r)))
                            .arg(markers)));
  zoom(onset / 1e6 - 60, detected / 1e6 + 60);
  const QStringList labels = plot()->markerLabels();
  const QString ttd =
      "detected (TTD " + QString::fromStdString(view::durationText(detected - onset)) + ")";
  QVERIFY2(labels.contains(ttd), qPrintable(labels.join(" | ") + " | want " + ttd));
  QVERIFY2(std::any_of(
               labels.begin(), labels.end(),
               [](const QString& l) { return l.startsWith("fault: ") && l.endsWith(" starts"); }),
           qPrintable(labels.join(" | ")));
  // At the whole run's scale the labels crowd: staggered or left out, never on top of each other.
  plot()->resetZoom();
  plot()->replot();
  const std::vector<QRectF> rects = textRects(plot()->markerLabels());
  QVERIFY(!rects.empty());
  for (std::size_t a = 0; a < rects.size(); ++a)
    for (std::size_t b = a + 1; b < rects.size(); ++b) {
      const QRectF& u = rects[a];
      const QRectF& v = rects[b];
      QVERIFY2(!u.intersects(v), qPrintable(QString("%1 | %2,%3 %4x%5 and %6,%7 %8x%9")
                                                .arg(plot()->markerLabels().join(" | "))
                                                .arg(u.x())
                                                .arg(u.y())
                                                .arg(u.width())
                                                .arg(u.height())
                                                .arg(v.x())
                                                .arg(v.y())
                                                .arg(v.width())
                                                .arg(v.height())));
    }
}

// Marks closer than kClusterPx merge into one ▼ with its count; the counts add up to the
// events, and zoomed in far enough every mark stands alone. On a plot of its own, narrow enough
// that the two closest marks of a lane are ~4 px apart.
void TstTimelineLegend::wouldOpenMarksClustered() {
  QCOMPARE(plot()->wouldOpenMarks(),
           plot()->wouldOpenClusterCounts().empty()
               ? 0
               : std::accumulate(plot()->wouldOpenClusterCounts().begin(),
                                 plot()->wouldOpenClusterCounts().end(), 0));
  const auto& instances = w_->current()->baseline.timeline.instances();
  int events = 0;
  double gap = 1e9, closest = 0;
  for (std::size_t i = 0; i < instances.size(); ++i) {
    double last = -1e9;
    for (const view::Marker& m : instances[i].markers)
      if (m.kind == view::Marker::Kind::WouldOpen) {
        ++events;
        if (m.at / 1e6 - last < gap) {
          gap = m.at / 1e6 - last;
          closest = last;
        }
        last = m.at / 1e6;
      }
  }
  QVERIFY(events > 1 && gap > 0 && gap < 600);
  TimelinePlot p;
  PlotInput in;
  in.run = w_->current();
  in.focus = w_->tiles()->selected();
  for (std::size_t i = 0; i < instances.size(); ++i) in.lanes.push_back(i);
  in.policy = w_->policyEditor()->policy();
  p.show(in);
  const double span = w_->current()->protectedRun.timeline.end() / 1e6;
  p.resize(static_cast<int>(4 * span / gap) + 200, 500);  // the rect: roughly 4 / gap px/s
  p.replot();
  const double pxPerSecond = p.axisRect(0)->width() / span;
  QVERIFY2(gap * pxPerSecond < TimelinePlot::kClusterPx,
           qPrintable(QString("closest marks %1 px apart").arg(gap * pxPerSecond)));
  QCOMPARE(p.wouldOpenMarks(), events);
  const std::vector<int>& counts = p.wouldOpenClusterCounts();
  QCOMPARE(std::accumulate(counts.begin(), counts.end(), 0), events);
  QVERIFY2(p.wouldOpenClusters() < events,
           qPrintable(QString("%1 clusters of %2").arg(p.wouldOpenClusters()).arg(events)));
  QVERIFY(std::any_of(counts.begin(), counts.end(), [](int n) { return n > 1; }));
  // Zoomed in on the closest pair, every mark is its own ▼ again.
  p.zoomTo(closest - 1, closest + gap + 1);
  p.replot();
  QCOMPARE(p.wouldOpenClusters(), events);
  QCOMPARE(std::accumulate(counts.begin(), counts.end(), 0), events);
}

// A trip rate of 100 % can never be exceeded: the rule is off. Seed 001's policy drew a dashed
// "slow trip > 100.0 %" line for it.
void TstTimelineLegend::tripRulesOffAreNotDrawn() {
  TimelinePlot p;
  PlotInput in;
  in.run = w_->current();
  in.focus = w_->tiles()->selected();
  for (std::size_t i = 0; i < w_->current()->protectedRun.timeline.instances().size(); ++i)
    in.lanes.push_back(i);
  Policy policy = w_->policyEditor()->policy();
  in.policy = policy;
  p.show(in);
  p.replot();
  QVERIFY(p.tripLinesShown());
  QVERIFY2(p.tripLegend().at(1).startsWith("slow trip > "), qPrintable(p.tripLegend().join("|")));
  policy.breaker.trip.slowRate = 1.0;
  policy.breaker.trip.errorRate = 1.0;
  in.policy = policy;
  p.show(in);
  p.replot();
  QVERIFY(!p.tripLinesShown());
  QCOMPARE(p.tripLegend(), (QStringList{"error trip off", "slow trip off"}));
}

// One line per series with its unit; a second with no answer reads "p99 —", never "p99 0",
// and 误伤 before anything was blocked reads "—".
void TstTimelineLegend::readoutHasUnitsAndDashes() {
  const view::InstanceTimeline& it = focused();
  std::size_t idle = it.t.size(), busy = it.t.size();
  for (std::size_t k = 1; k < it.t.size(); ++k) {
    if (idle == it.t.size() && it.throughput[k] == 0 && it.throughput[k - 1] == 0) idle = k;
    if (busy == it.t.size() && it.throughput[k] > 0 && it.p99Ms[k] > 0 && std::isnan(it.fpRate[k]))
      busy = k;
  }
  QVERIFY(idle < it.t.size() && busy < it.t.size());
  plot()->setCrosshair(it.t[idle] + 0.01);
  const QString none = plot()->crosshairText();
  QVERIFY2(none.contains("\np99 —"), qPrintable(none));
  QVERIFY2(!none.contains("p99 0"), qPrintable(none));
  plot()->setCrosshair(it.t[busy] + 0.01);
  const QString text = plot()->crosshairText();
  const QStringList lines = text.split('\n');
  QCOMPARE(lines.first(), QString::fromStdString(view::formatOffset(
                              static_cast<Micros>(std::llround((it.t[busy] + 0.01) * 1e6)))));
  QVERIFY2(text.contains(QString("\np99 %1 ms").arg(it.p99Ms[busy], 0, 'f', 0)), qPrintable(text));
  QVERIFY2(text.contains(QString("\nerror rate %1 %").arg(it.errorRate[busy] * 100, 0, 'f', 1)),
           qPrintable(text));
  QVERIFY2(text.contains(QString("\nanswers %1 /s").arg(it.throughput[busy], 0, 'f', 1)),
           qPrintable(text));
  QVERIFY2(text.contains("\n误伤 (60 s) —"), qPrintable(text));
  for (qsizetype k = 1; k < lines.size(); ++k)
    QVERIFY2(lines[k].endsWith(" %") || lines[k].endsWith(" ms") || lines[k].endsWith(" /s") ||
                 lines[k].endsWith(" —"),
             qPrintable(lines[k]));
}

QTEST_MAIN(TstTimelineLegend)
#include "tst_timeline_legend.moc"
