#pragma once
// `drill RUNBOOK --gateway URL`: the runbook against a real gateway (app/drill's LiveDrill).
// drill_command.cpp parses the options; drill_live_command.cpp runs.
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
sim::DrillResult runLiveDrill(const sim::Runbook& rb, const LiveDrillRequest& rq);

}  // namespace spillway::cli
