// bench_otlp_decode: the OTLP receiver's per-span work without sockets — decoding a request
// body (protobuf and JSON, the bench_otlp load's 512-span request) and applying its calls to
// ShadowMonitor (reserve + addReservedCall, as `listen --otlp` does). Spans per second per
// core: what bounds the receiver's threads in bench_otlp.
#include <benchmark/benchmark.h>

#include "otlp_load.hpp"
#include "spillway/formats/otlp.hpp"
#include "spillway/formats/otlp_protobuf.hpp"
#include "spillway/live/shadow.hpp"
#include "spillway/policy_yaml.hpp"

using namespace spillway;

namespace {

constexpr int kSpans = 512;
constexpr std::uint64_t kStartNs = 1'700'000'000'000'000'000ULL;

otlp_load::Template request(bool proto) {
  std::uint64_t seq = 0;
  return proto ? otlp_load::protoRequest(kSpans, kStartNs, seq)
               : otlp_load::jsonRequest(kSpans, kStartNs, seq);
}

void BM_DecodeProtobuf(benchmark::State& state) {
  const otlp_load::Template tp = request(true);
  formats::OtlpBatch batch;
  std::string err;
  for (auto _ : state) {
    batch.calls.clear();
    if (!formats::decodeOtlpProtobuf(tp.body, batch, err)) state.SkipWithError(err.c_str());
    benchmark::DoNotOptimize(batch.calls.data());
  }
  state.SetItemsProcessed(state.iterations() * kSpans);
}
BENCHMARK(BM_DecodeProtobuf);

void BM_DecodeJson(benchmark::State& state) {
  const otlp_load::Template tp = request(false);
  formats::OtlpBatch batch;
  for (auto _ : state) {
    batch.calls.clear();
    formats::decodeOtlpJson(tp.body, batch, "bench");
    benchmark::DoNotOptimize(batch.calls.data());
  }
  state.SetItemsProcessed(state.iterations() * kSpans);
}
BENCHMARK(BM_DecodeJson);

// The calls of one request applied as the receiver's sink applies them, time moving on by a
// request's span each round so that windows turn over.
void BM_ApplyToShadow(benchmark::State& state) {
  const otlp_load::Template tp = request(true);
  formats::OtlpBatch batch;
  std::string err;
  formats::decodeOtlpProtobuf(tp.body, batch, err);
  live::ShadowMonitor monitor(loadPolicyFile(SPILLWAY_DEFAULT_POLICY), live::ShadowOptions{});
  Micros shift = 0;
  for (auto _ : state) {
    for (formats::SpanCall& c : batch.calls) {
      c.ts += shift;
      if (monitor.reserve(c.instance, c.model, c.ts + c.latency)) monitor.addReservedCall(c.view());
      c.ts -= shift;
    }
    shift += Micros{kSpans} * 1000;
  }
  state.SetItemsProcessed(state.iterations() * kSpans);
}
BENCHMARK(BM_ApplyToShadow);

}  // namespace

BENCHMARK_MAIN();
