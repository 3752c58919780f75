#pragma once
// "What moves what" (issue 23): for each tunable breaker parameter, the change in 误伤 (pp) and
// TTD (s) one step down and one step up from the current policy, as horizontal bars sorted by
// impact — which knob matters on this incident. The runs (view/sensitivity.hpp) go off the UI
// thread; a newer request cancels the stale one, progress shows while it runs.
#include <QElapsedTimer>
#include <QWidget>

#include <algorithm>
#include <memory>
#include <optional>

#include "background_job.hpp"
#include "spillway/policy.hpp"
#include "spillway/sim/scenario.hpp"
#include "spillway/view/sensitivity.hpp"

class QCustomPlot;
class QCPBars;
class QLabel;
class QProgressBar;

namespace spillway::console {

class SensitivityPanel : public QWidget {
  Q_OBJECT
 public:
  explicit SensitivityPanel(QWidget* parent = nullptr);

  // Starts the runs for `policy` on `scenario` (its own policy is replaced); cancels a stale
  // computation. computed() follows when it is done.
  void compute(const sim::Scenario& scenario, const Policy& policy);
  // The same over recorded incidents (the sweep engine's replays; the seeds do not apply).
  void computeIncidents(std::shared_ptr<const std::vector<IncidentTrace>> incidents,
                        const Policy& policy);
  // One incident of a library, read off the UI thread (its annotations are the faults).
  void computeIncident(const QString& libraryPath, const QString& incident, const Policy& policy);
  void cancel();
  // Seeds per simulated policy (the KPIs are their means; default 3, as `sweep --scenario`):
  // one seed's change can be its luck. Takes effect at the next compute().
  void setSeeds(std::uint32_t n) { seeds_ = std::max<std::uint32_t>(n, 1); }
  std::uint32_t seeds() const { return seeds_; }
  bool running() const { return job_.running(); }
  int started() const { return job_.started(); }  // computations started (for tests)
  // The last finished computation; null before the first.
  const view::Sensitivity* result() const { return result_ ? &*result_ : nullptr; }

  // The two charts (Δ误伤, ΔTTD) and their step-down / step-up bars, for tests.
  QCustomPlot* falsePositivePlot() const { return fpPlot_; }
  QCustomPlot* ttdPlot() const { return ttdPlot_; }
  // Puts a finished computation on screen (what compute() ends with; tests pass their own).
  void display(view::Sensitivity s);
  int barCount() const;        // data points over the bar series (misses included)
  QString statusText() const;  // what the line above the charts says

 signals:
  void computed();
  void failed(const QString& message);
  void progress(int percent);

 private:
  void start(std::function<view::Sensitivity(const view::SensitivityOptions&)> run,
             const QString& what);
  void draw();
  void showTip(QCustomPlot* plot, const QPoint& at);
  QCustomPlot* makePlot(const QString& title, QCPBars*& down, QCPBars*& up);

  BackgroundJob job_;
  std::uint32_t seeds_ = 3;
  QElapsedTimer clock_;  // since the request: the status line says how long it took
  std::optional<view::Sensitivity> result_;
  QLabel* status_ = nullptr;
  QProgressBar* progressBar_ = nullptr;
  QWidget* charts_ = nullptr;  // both charts, in a scroll area
  QCustomPlot* fpPlot_ = nullptr;
  QCustomPlot* ttdPlot_ = nullptr;
  QCPBars *fpDown_ = nullptr, *fpUp_ = nullptr, *ttdDown_ = nullptr, *ttdUp_ = nullptr;
  // A step that misses a real fault: its TTD is ∞ (kpis.md), drawn to the worse edge in red,
  // never as the shorter mean of the faults it still caught.
  QCPBars* ttdMissed_ = nullptr;
};

}  // namespace spillway::console
