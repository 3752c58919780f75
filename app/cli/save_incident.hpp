#pragma once
// `simulate --save-incident NAME`: a simulated run stored in the incident library like a real
// one, so it is replayed, swept and compared with the same tools. The simulator keeps no
// per-call log, so the incident holds per-tick aggregate samples per instance (answers,
// failures, slow calls estimated from the breaker window's slow rate) and the scenario's faults
// as annotations (origin "simulator"). Simulated time starts at the epoch.
#include <string>

#include "spillway/sim/report.hpp"
#include "spillway/sim/series.hpp"

namespace spillway::cli {

// Stores `series` of the run `report` as `incident` in the library at `libraryPath`. Saving
// the same run again is recognized and stores nothing. Returns the samples stored.
std::uint64_t saveSimulatedIncident(const std::string& libraryPath, const std::string& incident,
                                    const sim::VectorSeries& series, const sim::RunReport& report,
                                    const std::string& runKey, Micros tick);

// Forwards every row to two sinks (the --out CSV files and the incident being saved).
class TeeSeries final : public sim::SeriesSink {
 public:
  TeeSeries(sim::SeriesSink* a, sim::SeriesSink* b) : a_(a), b_(b) {}
  void begin(const std::vector<std::string>& i, const std::vector<std::string>& c) override {
    for (auto* s : {a_, b_})
      if (s) s->begin(i, c);
  }
  void onInstance(const sim::InstanceTick& row) override {
    for (auto* s : {a_, b_})
      if (s) s->onInstance(row);
  }
  void onClient(const sim::ClientTick& row) override {
    for (auto* s : {a_, b_})
      if (s) s->onClient(row);
  }
  void end() override {
    for (auto* s : {a_, b_})
      if (s) s->end();
  }

 private:
  sim::SeriesSink *a_, *b_;
};

}  // namespace spillway::cli
