#pragma once
// One emulated breaker of a dialect on one instance, driven call by call: the test rig the
// per-dialect suites share (each adds what its rules need to read out).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/dialect.hpp"

namespace spillway::test {

struct DialectRig {
  DialectRig(DialectKind kind, const std::string& config, const std::string& source,
             std::string_view instance, std::string_view group)
      : d(makeDialect(kind, config, source, 1, &sink)), id(d->addInstance(instance, group)) {}
  // One call from `start`, answered after `lat` (500 when it fails); how it was admitted.
  Admission call(Micros start, bool fail, Micros lat = millis(10)) {
    const DialectDecision dec = d->admit(id, start);
    if (dec.admitted()) d->record(id, dec, start + lat, lat, fail ? 500 : 200, Outcome::Ok);
    return dec.kind;
  }
  std::vector<Event> transitions() const {
    std::vector<Event> v;
    for (const Event& e : sink.events)
      if (e.kind == EventKind::Transition) v.push_back(e);
    return v;
  }
  VectorSink sink;  // declared before `d`: the dialect publishes into it
  std::unique_ptr<DialectCluster> d;
  InstanceId id;
};

}  // namespace spillway::test
