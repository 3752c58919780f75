#pragma once
// `drill RUNBOOK --gateway URL`: the runbook against a real gateway (app/live's LiveDrill). Like
// `simulate --serve-metrics` (serve_metrics.hpp) it needs Qt Network, which only spillway-cli
// links: drill_command.cpp parses the options and calls the runner spillway-cli registered
// (drill_live_command.cpp); without one the option is refused.
#include <QString>

#include "spillway/sim/runbook.hpp"

namespace spillway::cli {

struct LiveDrillRequest {
  QString gateway;  // http://HOST:PORT[/path]
  unsigned basePort = 18000;
  double speed = 1;
  double rateScale = 1;
  int maxInFlight = 256;
};

// Runs the drill and judges it; throws InputError for bad options or ports it cannot take.
using LiveDrillRunner = sim::DrillResult (*)(const sim::Runbook& rb, const LiveDrillRequest& rq);

void setLiveDrillRunner(LiveDrillRunner r);
LiveDrillRunner liveDrillRunner();

}  // namespace spillway::cli
