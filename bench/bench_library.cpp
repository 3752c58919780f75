// bench_library: the incident library's import and replay throughput (docs/performance.md).
//
//   BM_ImportJsonl     `spillway-cli import` of a canonical JSONL file: read, parse, encode,
//                      store (2 M calls, 20 instances), one transaction, fresh library each time
//   BM_ImportStoreOnly the store alone: calls generated in memory (no parse), 2 M calls
//   BM_ReplayIncident  `spillway-cli replay --incident`: a 10 M-call incident streamed out of the
//                      library through the Replayer with the default policy; reports peak RSS
//   BM_RecordSustained LiveRecorder at full speed: 10 M calls at 100 k calls/s of data time
//                      (100 s), a commit per second of data, retention 30 s of data (active
//                      from 30 % of the run on) or none, and 50 M calls (the 30 s turned over 16
//                      times); calls/s, retained calls, file size and its peak
//   BM_CutRecording    Library::cutRecording of 3 M calls out of a 4 M-call recording: how long a
//                      cut holds the write lock (a recorder buffers meanwhile)
//   BM_ImportJsonlPostgres, BM_ReplayIncidentPostgres
//                      the first and third on a team library: the PostgreSQL database of
//                      SPILLWAY_BENCH_PG_URL (tests/peers/postgresql/server.sh starts one; its
//                      env.sh sets the password file); skipped without it
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "spillway/formats/canonical.hpp"
#include "spillway/library/library.hpp"
#include "spillway/library/live_recorder.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/replay.hpp"

using namespace spillway;

namespace {

std::string tempPath(const std::string& what) {
  return (std::filesystem::temp_directory_path() /
          ("spillway-bench-lib-" + std::to_string(::getpid()) + "-" + what))
      .string();
}

void removeDb(const std::string& p) {
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(p + s);
}

// 20 instances × ~4000 calls/s; one instance (gpu-7) slow and failing from 40 % of the run, so
// breakers trip, probe and recover during the replay.
class SyntheticSource final : public formats::RecordSource {
 public:
  explicit SyntheticSource(std::uint64_t n, Micros gap = 250)
      : RecordSource("synthetic", false), n_(n), gap_(gap) {
    for (int i = 0; i < 20; ++i) names_.push_back("gpu-" + std::to_string(i));
  }
  bool next(CallRecord& r) override {
    if (i_ >= n_) return false;
    const std::uint64_t i = i_++;
    r = CallRecord{};
    r.ts = 1764480000000000 + static_cast<Micros>(i) * gap_;  // 4000 calls/s by default
    const std::size_t inst = (i * 7919) % 20;
    r.instance = names_[inst];
    r.model = "chat-72b";
    r.tenant = kTenants[i % 4];
    const bool bad = inst == 7 && i > n_ * 2 / 5 && i < n_ * 3 / 5;
    r.latency = bad ? 8000000 : 200000 + static_cast<Micros>((i * 2654435761u) % 900000);
    r.status = bad && i % 3 == 0 ? 503 : 200;
    r.outcome = r.status == 0 ? Outcome::Error : Outcome::Ok;
    r.tokensIn = static_cast<std::int64_t>(i % 2000);
    r.tokensOut = static_cast<std::int64_t>(i % 500);
    return true;
  }

 private:
  static constexpr const char* kTenants[] = {"code-assist", "report-gen", "customer-service",
                                             "order-assistant"};
  std::uint64_t n_, i_ = 0;
  Micros gap_;
  std::vector<std::string> names_;
};

const std::string& jsonlFile() {
  static const std::string path = [] {
    const std::string p = tempPath("2m.jsonl");
    SyntheticSource src(2'000'000);
    std::string buf;
    std::ofstream f(p, std::ios::binary);
    CallRecord r;
    while (src.next(r)) {
      formats::appendCallJson(buf, r);
      if (buf.size() > (1 << 20)) {
        f << buf;
        buf.clear();
      }
    }
    f << buf;
    std::atexit([] { std::filesystem::remove(tempPath("2m.jsonl")); });
    return p;
  }();
  return path;
}

void BM_ImportJsonl(benchmark::State& state) {
  const std::string& file = jsonlFile();
  const std::string db = tempPath("import.db");
  std::uint64_t n = 0;
  for (auto _ : state) {
    state.PauseTiming();
    removeDb(db);
    state.ResumeTiming();
    library::Library lib(db);
    n = lib.importFile(file, formats::Format::Jsonl, {}, "bench").records;
  }
  state.counters["records/s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["db_bytes/record"] =
      static_cast<double>(std::filesystem::file_size(db)) / static_cast<double>(n);
  state.counters["file_bytes/record"] =
      static_cast<double>(std::filesystem::file_size(file)) / static_cast<double>(n);
  removeDb(db);
}
BENCHMARK(BM_ImportJsonl)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

void BM_ImportStoreOnly(benchmark::State& state) {
  const std::string db = tempPath("store.db");
  const auto n = static_cast<std::uint64_t>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    removeDb(db);
    state.ResumeTiming();
    library::Library lib(db);
    SyntheticSource src(n);
    lib.importSource(src, "bench", "synthetic", "");
  }
  state.counters["records/s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  removeDb(db);
}
BENCHMARK(BM_ImportStoreOnly)
    ->Arg(2'000'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

long maxRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

Policy defaultPolicy() {
  std::ifstream pf(SPILLWAY_DEFAULT_POLICY);
  const std::string yaml((std::istreambuf_iterator<char>(pf)), std::istreambuf_iterator<char>());
  return parsePolicy(yaml, SPILLWAY_DEFAULT_POLICY);
}

// Replays incident "big" of the library at `location` under `policy`: calls fed, breaker opens.
std::pair<std::uint64_t, std::uint64_t> replayBig(const std::string& location,
                                                  const Policy& policy) {
  library::Library lib(location, library::OpenOptions{.mustExist = true});
  auto src = lib.open("big");
  Replayer rp(policy, ReplayOptions{});
  CallRecord rec;
  while (src->next(rec)) rp.feed(rec);
  rp.finish();
  return {rp.fed(), rp.engine().totals().opens};
}

void BM_ReplayIncident(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const std::string db = tempPath("replay.db");
  removeDb(db);
  {
    library::Library lib(db);
    SyntheticSource src(n);
    lib.importSource(src, "big", "synthetic", "");
  }
  const Policy policy = defaultPolicy();
  const long rssBefore = maxRssKb();
  std::uint64_t fed = 0, opens = 0;
  for (auto _ : state) std::tie(fed, opens) = replayBig(db, policy);
  state.counters["records/s"] =
      benchmark::Counter(static_cast<double>(fed), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["opens"] = static_cast<double>(opens);
  state.counters["db_MB"] = static_cast<double>(std::filesystem::file_size(db)) / 1e6;
  state.counters["peak_rss_MB"] = static_cast<double>(maxRssKb()) / 1024.0;
  state.counters["rss_growth_MB"] = static_cast<double>(maxRssKb() - rssBefore) / 1024.0;
  removeDb(db);
}
BENCHMARK(BM_ReplayIncident)
    ->Arg(10'000'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

// The team library of SPILLWAY_BENCH_PG_URL, or empty (the benchmark is then skipped).
std::string postgresUrl(benchmark::State& state) {
  const char* url = std::getenv("SPILLWAY_BENCH_PG_URL");
  if (!url || !*url) state.SkipWithError("SPILLWAY_BENCH_PG_URL is not set");
  return url ? url : "";
}

void BM_ImportJsonlPostgres(benchmark::State& state) {
  const std::string url = postgresUrl(state);
  if (url.empty()) return;
  const std::string& file = jsonlFile();
  std::uint64_t n = 0;
  library::Library lib(url);
  for (auto _ : state) {
    state.PauseTiming();
    lib.deleteIncident("bench");
    state.ResumeTiming();
    n = lib.importFile(file, formats::Format::Jsonl, {}, "bench").records;
  }
  lib.deleteIncident("bench");
  state.counters["records/s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ImportJsonlPostgres)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

void BM_ReplayIncidentPostgres(benchmark::State& state) {
  const std::string url = postgresUrl(state);
  if (url.empty()) return;
  const auto n = static_cast<std::uint64_t>(state.range(0));
  {
    library::Library lib(url);
    lib.deleteIncident("big");
    SyntheticSource src(n);
    lib.importSource(src, "big", "synthetic", "");
  }
  const Policy policy = defaultPolicy();
  const long rssBefore = maxRssKb();
  std::uint64_t fed = 0;
  for (auto _ : state) fed = replayBig(url, policy).first;
  library::Library(url).deleteIncident("big");
  state.counters["records/s"] =
      benchmark::Counter(static_cast<double>(fed), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["rss_growth_MB"] = static_cast<double>(maxRssKb() - rssBefore) / 1024.0;
}
BENCHMARK(BM_ReplayIncidentPostgres)
    ->Arg(10'000'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

std::uint64_t diskBytes(const std::string& db) {
  std::uint64_t n = 0;
  for (const char* s : {"", "-wal"}) {
    std::error_code ec;
    const auto sz = std::filesystem::file_size(db + s, ec);
    if (!ec) n += sz;
  }
  return n;
}

void BM_RecordSustained(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const std::string db = tempPath("record.db");
  library::RecordingInfo info;
  library::RecorderStats stats;
  std::uint64_t peak = 0;
  for (auto _ : state) {
    state.PauseTiming();
    removeDb(db);
    state.ResumeTiming();
    library::RecorderOptions o;
    o.retention.maxAge = state.range(1) ? seconds(30) : 0;
    library::LiveRecorder rec(db, "live", o);
    SyntheticSource src(n, 10);  // 100 k calls/s of data time
    CallRecord r;
    std::uint64_t i = 0;
    while (src.next(r)) {
      rec.append(r);
      if (++i % 500'000 == 0) peak = std::max(peak, diskBytes(db));
    }
    rec.close();
    info = rec.info();
    stats = rec.stats();
  }
  state.counters["calls/s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["retained"] = static_cast<double>(info.calls);
  state.counters["dropped"] = static_cast<double>(info.dropped);
  state.counters["commits"] = static_cast<double>(stats.commits);
  state.counters["block_bytes/call"] =
      static_cast<double>(info.bytes) / static_cast<double>(info.calls);
  state.counters["db_MB"] = static_cast<double>(diskBytes(db)) / 1e6;
  state.counters["peak_db_MB"] = static_cast<double>(peak) / 1e6;
  state.counters["peak_rss_MB"] = static_cast<double>(maxRssKb()) / 1024.0;
  removeDb(db);
}
BENCHMARK(BM_RecordSustained)
    ->Args({10'000'000, 1})  // retention 30 s of data
    ->Args({50'000'000, 1})  // 500 s of data: the retained 30 s turned over 16 times
    ->Args({10'000'000, 0})  // no retention: the cost of enforcing it, by difference
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

void BM_CutRecording(benchmark::State& state) {
  const std::string db = tempPath("cut.db");
  removeDb(db);
  constexpr std::uint64_t kRecorded = 4'000'000, kCut = 3'000'000;
  {
    library::RecorderOptions o;
    o.retention.maxAge = 0;
    library::LiveRecorder rec(db, "live", o);
    SyntheticSource src(kRecorded, 10);
    CallRecord r;
    while (src.next(r)) rec.append(r);
  }
  const Micros t0 = 1764480000000000;
  std::uint64_t cut = 0;
  int k = 0;
  for (auto _ : state) {
    library::Library lib(db);
    cut = lib.cutRecording("live", t0, t0 + static_cast<Micros>(kCut) * 10,
                           "cut-" + std::to_string(k++))
              .records;
  }
  state.counters["calls/s"] =
      benchmark::Counter(static_cast<double>(cut), benchmark::Counter::kIsIterationInvariantRate);
  removeDb(db);
}
BENCHMARK(BM_CutRecording)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
