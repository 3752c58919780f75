#pragma once
// Shared by the library suites: files in and out, canonical JSONL, synthetic calls, and a
// replay digest (transitions + per-instance counters) to compare two replays by.
#include <fstream>
#include <sstream>
#include <string>

#include "spillway/formats/canonical.hpp"
#include "spillway/formats/source.hpp"
#include "spillway/library/library.hpp"
#include "spillway/replay.hpp"

namespace spillway::testing {

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void spit(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

// The input as canonical JSONL: read with the engine's reader, written by the canonical writer.
inline std::string canonicalize(const std::string& path) {
  auto r = JsonlReader::openFile(path, false);
  std::string out;
  CallRecord rec;
  while (r->next(rec)) formats::appendCallJson(out, rec);
  return out;
}

inline std::string exportOf(library::Library& lib, const std::string& name,
                            const std::string& dir) {
  const std::string out = dir + "/export.jsonl";
  std::FILE* f = std::fopen(out.c_str(), "wb");
  lib.exportJsonl(name, f);
  std::fclose(f);
  return slurp(out);
}

// Call i of a synthetic trace over 8 instances, in start order, `gap` µs apart.
inline void syntheticCall(std::size_t i, CallRecord& r, std::string& inst, std::string& tenant,
                          Micros gap = 137, Micros t0 = 1764480000000000) {
  r = CallRecord{};
  r.ts = t0 + static_cast<Micros>(i) * gap;
  r.latency = 1000 + static_cast<Micros>(i % 977) * 1000;
  r.status = i % 53 == 0 ? 503 : 200;
  inst = "gpu-" + std::to_string(i % 8);
  r.instance = inst;
  r.model = "chat-72b";
  tenant = "tenant-" + std::to_string(i % 5);
  r.tenant = tenant;
  r.tokensIn = static_cast<std::int64_t>(i % 1000);
}

// A synthetic trace of n calls as canonical JSONL.
inline std::string synthetic(std::size_t n, Micros gap = 137) {
  std::string out;
  out.reserve(n * 110);
  CallRecord r;
  std::string inst, tenant;
  for (std::size_t i = 0; i < n; ++i) {
    syntheticCall(i, r, inst, tenant, gap);
    formats::appendCallJson(out, r);
  }
  return out;
}

struct ReplayResult {
  std::string events;
  std::string counters;
};

inline ReplayResult replay(formats::RecordSource& src, const Policy& policy) {
  Replayer rp(policy, ReplayOptions{});
  CallRecord rec;
  formats::AggregateSample s;
  while (src.aggregates() && src.nextAggregate(s))
    rp.feedAggregate(s.instance, s.model, s.end, s.calls, s.failures, s.slow);
  while (src.next(rec)) rp.feed(rec);
  rp.finish();
  ReplayResult out;
  const Engine& e = rp.engine();
  for (const Event& ev : rp.events())
    out.events += std::to_string(ev.ts) + " " + e.name(ev.instance) + " " +
                  std::to_string(static_cast<int>(ev.to)) + "\n";
  for (InstanceId id = 0; id < e.size(); ++id) {
    const auto c = e.breaker(id).snapshot(rp.lastTime()).counters;
    out.counters += e.name(id) + " " + std::to_string(rp.instanceStats(id).records) + " " +
                    std::to_string(c.admitted) + " " + std::to_string(c.rejected) + " " +
                    std::to_string(c.blockedWouldSucceed) + " " + std::to_string(c.opens) + "\n";
  }
  return out;
}

}  // namespace spillway::testing
