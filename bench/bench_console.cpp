// Console speed, offscreen (QT_QPA_PLATFORM=offscreen is set by main):
//  - the what-if round trip on seed-000: a policy edit → the coalescing delay → the protected
//    re-run in the worker → timelines built → plots, tiles and KPIs redrawn;
//  - replot of a timeline graph with 1 M points (QCustomPlot's adaptive sampling).
// A small harness (median of repeated runs), not Google Benchmark: both need a QApplication
// and an event loop.
#include <QApplication>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QSignalSpy>

#include <algorithm>
#include <cstdio>
#include <vector>

#include <qcustomplot.h>

#include "main_window.hpp"
#include "policy_editor.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QApplication::setApplicationName("spillway-bench");

  // 1. What-if round trip (includes the editor's 150 ms coalescing delay, reported apart).
  spillway::console::MainWindow w;
  w.resize(1500, 950);
  w.show();
  QSignalSpy shown(&w, &spillway::console::MainWindow::runShown);
  w.runScenario("seed-000");
  if (!shown.wait(60000)) return 1;
  QDoubleSpinBox* slow = w.policyEditor()->control("trip.slow_rate");
  std::vector<double> total, rerun;
  for (int i = 0; i < 15; ++i) {
    QElapsedTimer t;
    t.start();
    slow->setValue(i % 2 ? 0.4 : 0.5);
    if (!shown.wait(30000)) return 1;
    total.push_back(static_cast<double>(t.elapsed()));
    rerun.push_back(static_cast<double>(w.lastRoundTripMs()));
  }
  std::printf(
      "what-if on seed-000 (15 edits): edit→redrawn median %.0f ms "
      "(of which the 150 ms coalescing delay); re-run+redraw median %.0f ms\n",
      median(total), median(rerun));

  // 2. Replot of 1 M points.
  QCustomPlot plot;
  plot.resize(1400, 400);
  QVector<double> x(1000000), y(1000000);
  for (int i = 0; i < x.size(); ++i) {
    x[i] = i * 0.01;
    y[i] = std::sin(i * 0.001) + 0.1 * ((i * 7919) % 100) / 100.0;
  }
  QCPGraph* g = plot.addGraph();
  g->setAdaptiveSampling(true);
  g->setData(x, y, true);
  plot.rescaleAxes();
  plot.show();
  std::vector<double> ms;
  for (int i = 0; i < 30; ++i) {
    QElapsedTimer t;
    t.start();
    plot.replot(QCustomPlot::rpImmediateRefresh);
    ms.push_back(t.nsecsElapsed() / 1e6);
  }
  std::printf("replot of a 1,000,000-point graph (adaptive sampling, 1400x400): median %.2f ms\n",
              median(ms));
  return 0;
}
