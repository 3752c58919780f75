#include "spillway/drill/paced_simulation.hpp"

#include <QTimer>

#include <algorithm>

namespace spillway::drill {
namespace {

constexpr int kTickMs = 10;  // how often the simulator catches up with the wall clock
// Scenario time one step may cover: a simulator slower than real time × speed still returns to
// the event loop (scrapes are answered) at least this often in scenario time.
constexpr Micros kMaxChunk = seconds(1);

}  // namespace

PacedSimulation::PacedSimulation(const sim::Scenario& sc, sim::SimOptions opt, double speed,
                                 QObject* parent)
    : QObject(parent),
      sim_(std::make_unique<sim::Simulator>(sc, opt)),
      speed_(speed),
      timer_(new QTimer(this)) {
  timer_->setTimerType(Qt::PreciseTimer);
  connect(timer_, &QTimer::timeout, this, &PacedSimulation::advance);
}

PacedSimulation::~PacedSimulation() = default;

void PacedSimulation::start() {
  wall_.start();
  timer_->start(kTickMs);
}

void PacedSimulation::stop() {
  timer_->stop();
}

Micros PacedSimulation::due() const {
  if (!wall_.isValid()) return 0;
  return static_cast<Micros>(static_cast<double>(wall_.nsecsElapsed()) / 1e3 * speed_);
}

void PacedSimulation::advance() {
  if (finished_) return;
  const Micros target = std::min(due(), sim_->now() + kMaxChunk);
  if (!sim_->runUntil(target)) {
    finished_ = true;
    timer_->stop();
    emit done();
    return;
  }
  maxLag_ = std::max(maxLag_, due() - sim_->now());
}

}  // namespace spillway::drill
