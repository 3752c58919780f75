#include "save_incident.hpp"

#include <cmath>
#include <functional>

#include "spillway/formats/source.hpp"
#include "spillway/library/library.hpp"
#include "spillway/sim/scenario.hpp"

namespace spillway::cli {
namespace {

// The run's per-tick rows as aggregate samples, in time order.
class SeriesSource final : public formats::RecordSource {
 public:
  SeriesSource(const sim::VectorSeries& s, const sim::RunReport& r, Micros tick)
      : RecordSource("simulated run", false), s_(s), r_(r), tick_(tick) {}
  bool aggregates() const override { return true; }
  bool next(CallRecord&) override { return false; }
  bool nextAggregate(formats::AggregateSample& out) override {
    while (at_ < s_.instances.size()) {
      const sim::InstanceTick& row = s_.instances[at_++];
      if (row.responses == 0) continue;  // an idle tick says nothing
      out.end = row.t;
      out.step = tick_;
      out.instance = s_.instanceNames.at(row.instance);
      out.model = row.instance < r_.instances.size()
                      ? std::string_view(r_.instances[row.instance].model)
                      : std::string_view();
      out.calls = row.responses;
      out.failures = std::min(row.failures, row.responses);
      // The window's slow share applied to this tick's answers: an estimate, kept so a slow
      // fault (seed 000's leak) is still a slow fault when the incident is replayed.
      out.slow = std::llround(row.slowRate * static_cast<double>(row.responses - out.failures));
      out.line = static_cast<long>(at_);
      return true;
    }
    return false;
  }

 private:
  const sim::VectorSeries& s_;
  const sim::RunReport& r_;
  Micros tick_;
  std::size_t at_ = 0;
};

}  // namespace

std::uint64_t saveSimulatedIncident(const std::string& libraryPath, const std::string& incident,
                                    const sim::VectorSeries& series, const sim::RunReport& report,
                                    const std::string& runKey, Micros tick) {
  library::Library lib(libraryPath);
  SeriesSource src(series, report, tick);
  // Same scenario, seed and options → same run → the same key: a re-save is recognized.
  const std::string hash = "sim:" + std::to_string(std::hash<std::string>{}(runKey));
  if (lib.incident(incident))
    for (const library::SourceInfo& s : lib.sources(incident))
      if (s.hash == hash) return 0;
  const library::ImportResult r = lib.importSource(src, incident, "simulator", hash);
  if (r.alreadyImported) return 0;
  for (const sim::FaultReport& f : report.faults) {
    library::Annotation a;
    a.instance = f.instance;
    a.start = f.start;
    a.end = f.ended ? f.end : report.simulated;
    a.kind = std::string(sim::faultKindName(f.kind));
    a.origin = "simulator";
    lib.annotate(incident, a);
  }
  return r.records;
}

}  // namespace spillway::cli
