#pragma once
// One simulated run for the sim suites: the scenario stays alive next to its report and
// series (the Simulator only references its Scenario). `after` reads the simulator before it
// goes away (e.g. breaker counters).
#include <functional>
#include <string>

#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/simulator.hpp"

struct SimRun {
  spillway::sim::Scenario sc;
  spillway::sim::RunReport report;
  spillway::sim::VectorSeries series;
};

inline void simulateInto(SimRun& r, const std::string& yaml, bool protection,
                         const std::function<void(const spillway::sim::Simulator&)>& after = {}) {
  r.sc = spillway::sim::parseScenario(yaml, "rig.yaml");
  spillway::sim::SimOptions opt;
  opt.protection = protection;
  opt.series = &r.series;
  spillway::sim::Simulator sim(r.sc, opt);
  sim.run();
  r.report = sim.report();
  if (after) after(sim);
}
