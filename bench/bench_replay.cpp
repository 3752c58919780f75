// Replay throughput in records/s over a synthetic trace written once per run by
// spillway-tracegen (20 instances × 200 calls/s × 500 s = 2 M records; instance chat-72b-3
// leaks memory from t = 240 s, so its breaker trips, probes and reopens).
//
//   BM_ParseOnly/file    JsonlReader::openFile + next(): read + parse
//   BM_ParseOnly/memory  JsonlReader::fromMemory + next(): parse without the file reads
//   BM_DecideOnly        Replayer::feed/finish + the KPIs (block classes) over pre-parsed records
//   BM_ParseParallel     openJsonlParallel + next(): read + parse on `threads` threads, consumed
//                        in file order on one of them
//   BM_ReplayEndToEnd    what `spillway-cli replay --trace T --out O --threads N` does: read,
//                        parse, decide, write the transitions JSONL (replay_command.cpp); with
//                        threads:2 the trace is read and parsed while the first thread decides
//
// SPILLWAY_BENCH_TRACE=path uses an existing trace instead of generating one.
// Docs: docs/performance.md.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "spillway/dialect_replay.hpp"
#include "spillway/event_format.hpp"
#include "spillway/parallel_jsonl.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/replay.hpp"
#include "spillway/telemetry.hpp"

namespace {

using namespace spillway;

constexpr const char* kTracegenArgs = "--instances 20 --rps 200 --duration 500 --seed 42";

const Policy& defaultPolicy() {
  static const Policy p = loadPolicyFile(SPILLWAY_DEFAULT_POLICY);
  return p;
}

std::string tempPath(const char* what) {
  return (std::filesystem::temp_directory_path() /
          ("spillway-bench-" + std::to_string(::getpid()) + "-" + what))
      .string();
}

struct Trace {
  std::string path;
  bool generated = false;
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;
  std::string text;  // loaded lazily for the in-memory benchmarks
  ~Trace() {
    if (generated) std::filesystem::remove(path);
  }
};

Trace& trace() {
  static Trace t = [] {
    Trace r;
    if (const char* p = std::getenv("SPILLWAY_BENCH_TRACE"); p && *p) {
      r.path = p;
    } else {
      r.path = tempPath("trace.jsonl");
      const std::string cmd =
          std::string("'") + SPILLWAY_TRACEGEN + "' " + kTracegenArgs + " --out '" + r.path + "'";
      if (std::system(cmd.c_str()) != 0) {
        std::fprintf(stderr, "bench_replay: failed: %s\n", cmd.c_str());
        std::exit(1);
      }
      r.generated = true;
    }
    auto reader = JsonlReader::openFile(r.path, false);
    CallRecord rec;
    while (reader->next(rec)) ++r.records;
    r.bytes = std::filesystem::file_size(r.path);
    return r;
  }();
  return t;
}

const std::string& traceText() {
  Trace& t = trace();
  if (t.text.empty()) {
    std::ifstream in(t.path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    t.text = ss.str();
  }
  return t.text;
}

void setCounters(benchmark::State& state, std::uint64_t records) {
  state.SetItemsProcessed(static_cast<std::int64_t>(records));
  state.SetBytesProcessed(static_cast<std::int64_t>(trace().bytes * state.iterations()));
  state.counters["records"] = static_cast<double>(trace().records);
}

// ---------------------------------------------------------------------------------------------

void BM_ParseOnly(benchmark::State& state) {
  const bool fromFile = state.range(0) == 0;
  const std::string& path = trace().path;
  if (!fromFile) traceText();
  std::uint64_t n = 0;
  for (auto _ : state) {
    auto reader = fromFile ? JsonlReader::openFile(path, false)
                           : JsonlReader::fromMemory("trace", traceText(), false);
    CallRecord rec;
    while (reader->next(rec)) {
      benchmark::DoNotOptimize(rec);
      ++n;
    }
  }
  if (n != trace().records * state.iterations()) state.SkipWithError("record count differs");
  setCounters(state, n);
}
BENCHMARK(BM_ParseOnly)
    ->ArgName("memory")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_ParseParallel(benchmark::State& state) {
  const ParallelJsonlOptions opt{static_cast<unsigned>(state.range(0))};
  std::uint64_t n = 0;
  for (auto _ : state) {
    auto source = openJsonlParallel(trace().path, false, opt);
    CallRecord rec;
    while (source->next(rec)) {
      benchmark::DoNotOptimize(rec);
      ++n;
    }
  }
  if (n != trace().records * state.iterations()) state.SkipWithError("record count differs");
  setCounters(state, n);
}
BENCHMARK(BM_ParseParallel)
    ->ArgName("threads")
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// ---------------------------------------------------------------------------------------------

struct Slim {
  Micros ts, latency;
  int status;
  Outcome outcome;
  std::uint32_t instance;
};

void BM_DecideOnly(benchmark::State& state) {
  // Pre-parse into a compact vector; instance and model names interned.
  std::vector<std::string> names, models;
  std::vector<Slim> recs;
  recs.reserve(trace().records);
  {
    auto reader = JsonlReader::openFile(trace().path, false);
    CallRecord rec;
    while (reader->next(rec)) {
      std::uint32_t i = 0;
      while (i < names.size() && names[i] != rec.instance) ++i;
      if (i == names.size()) {
        names.emplace_back(rec.instance);
        models.emplace_back(rec.model);
      }
      recs.push_back(Slim{rec.ts, rec.latency, rec.status, rec.outcome, i});
    }
  }
  std::uint64_t n = 0, events = 0;
  for (auto _ : state) {
    Replayer replayer(defaultPolicy(), ReplayOptions{}, nullptr);
    CallRecord rec;
    for (const Slim& s : recs) {
      rec.ts = s.ts;
      rec.latency = s.latency;
      rec.status = s.status;
      rec.outcome = s.outcome;
      rec.instance = names[s.instance];
      rec.model = models[s.instance];
      replayer.feed(rec);
    }
    replayer.finish();
    benchmark::DoNotOptimize(nativeReplayKpis(replayer));
    n += replayer.fed();
    events = replayer.events().size();
  }
  setCounters(state, n);
  state.counters["transitions"] = static_cast<double>(events);
}
BENCHMARK(BM_DecideOnly)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---------------------------------------------------------------------------------------------

void BM_ReplayEndToEnd(benchmark::State& state) {
  const std::string& path = trace().path;
  const std::string outPath = tempPath("transitions.jsonl");
  std::uint64_t n = 0, events = 0;
  const ParallelJsonlOptions opt{static_cast<unsigned>(state.range(0))};
  for (auto _ : state) {
    auto reader = openJsonlParallel(path, false, opt);
    std::FILE* out = std::fopen(outPath.c_str(), "w");
    if (!out) {
      state.SkipWithError("cannot write the transitions file");
      break;
    }
    auto outBuf = std::make_unique<char[]>(1 << 16);
    std::setvbuf(out, outBuf.get(), _IOFBF, 1 << 16);
    JsonlEventWriter writer(out);
    Replayer replayer(defaultPolicy(), ReplayOptions{}, &writer);
    writer.setEngine(&replayer.engine());
    CallRecord rec;
    while (reader->next(rec)) replayer.feed(rec);
    replayer.finish();
    benchmark::DoNotOptimize(nativeReplayKpis(replayer));
    std::fclose(out);
    n += replayer.fed();
    events = replayer.events().size();
  }
  std::filesystem::remove(outPath);
  setCounters(state, n);
  state.counters["transitions"] = static_cast<double>(events);
}
BENCHMARK(BM_ReplayEndToEnd)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
