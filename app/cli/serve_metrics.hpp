#pragma once
// `simulate --serve-metrics`: the simulation paced in real time behind a Prometheus /metrics
// endpoint. It needs Qt Network (app/live), which only spillway-cli links: the console links
// spillway_cli_lib, and with it runSimulate, too. So simulate_command.cpp parses the options
// and calls whatever runner spillway-cli registered (serve_metrics_command.cpp); without one
// the option is refused.
#include <string>

#include "spillway/sim/scenario.hpp"

namespace spillway::cli {

struct ServeMetricsRequest {
  std::string address;  // [HOST:]PORT as given
  bool allowRemote = false;
  double speed = 1;  // scenario time = wall time × speed
  bool protection = true;
};

using ServeMetricsRunner = int (*)(const sim::Scenario& sc, const ServeMetricsRequest& rq);

void setServeMetricsRunner(ServeMetricsRunner r);
ServeMetricsRunner serveMetricsRunner();

}  // namespace spillway::cli
