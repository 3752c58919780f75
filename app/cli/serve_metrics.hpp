#pragma once
// `simulate --serve-metrics`: the simulation paced in real time behind a Prometheus /metrics
// endpoint (app/live). simulate_command.cpp parses the options; serve_metrics_command.cpp runs.
#include <string>

#include "spillway/sim/scenario.hpp"

namespace spillway::cli {

struct ServeMetricsRequest {
  std::string address;  // [HOST:]PORT as given
  bool allowRemote = false;
  double speed = 1;  // scenario time = wall time × speed
  bool protection = true;
};

// Serves until the scenario ends or SIGINT/SIGTERM; prints the report table. Returns the exit code.
int runServeMetrics(const sim::Scenario& sc, const ServeMetricsRequest& rq);

}  // namespace spillway::cli
