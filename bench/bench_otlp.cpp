// bench_otlp: sustained OTLP/HTTP intake over loopback into the engine in shadow mode.
//
//   bench_otlp [SECONDS=10] [CLIENTS=4] [SPANS_PER_REQUEST=512] [json|proto] [DECODE_THREADS=2]
//
// The receiver (OtlpReceiver + ShadowMonitor with the default policy) runs on the main thread's
// event loop, as in `spillway-cli listen --otlp`, with DECODE_THREADS decoding threads
// (`--otlp-decode-threads`; 0: bodies decoded on the event loop). CLIENTS threads on the same
// cores each hold one keep-alive connection (plain blocking sockets) and POST requests back to
// back: a request encoded once, its span times patched per send (increasing, over 8
// instances, 1 % errors), head and body sent with one sendmsg. The bench reports acknowledged
// and applied spans/s, sheds (429), the latency from a request received to its last call's
// verdict in the engine, and the CPU the clients took of the process's, so the receiver's
// share of the cores is known; it fails unless every acknowledged call was applied.
//
// With SPILLWAY_BENCH_OTLP_PORT=P only the clients run, against a receiver already listening
// on 127.0.0.1:P (`spillway-cli listen --otlp 127.0.0.1:P`, whose summary counts what it took
// in): acknowledged spans/s and the clients' CPU.
#include <QCoreApplication>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "otlp_load.hpp"
#include "spillway/live/otlp_receiver.hpp"
#include "spillway/live/shadow.hpp"
#include "spillway/policy_yaml.hpp"

using namespace spillway;

namespace {

using namespace otlp_load;

struct Load {
  int secs = 10, clients = 4, spans = 512;
  bool proto = true;
};

struct LoadResult {
  ClientResult sum;
  double wall = 0, cpu = 0;  // seconds; the process's CPU over the run
};

// CLIENTS threads POSTing back to back for SECONDS, with the event loop serving meanwhile.
LoadResult drive(QCoreApplication& app, quint16 port, const Load& l) {
  std::atomic<bool> stop{false};
  LoadResult out;
  const double cpu0 = processCpuSeconds();
  std::vector<ClientResult> results(static_cast<std::size_t>(l.clients));
  std::vector<std::thread> threads;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < l.clients; ++i)
    threads.emplace_back(client, port, i, l.spans, l.proto, std::ref(stop),
                         std::ref(results[static_cast<std::size_t>(i)]), 0.0);
  otlp_load::runFor(app, l.secs, stop, threads);
  out.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.cpu = processCpuSeconds() - cpu0;
  for (const auto& r : results) {
    out.sum.ok += r.ok;
    out.sum.shed += r.shed;
    out.sum.other += r.other;
    out.sum.ackedSpans += r.ackedSpans;
    out.sum.cpuSeconds += r.cpuSeconds;
  }
  return out;
}

void printLoad(const LoadResult& r) {
  std::printf("  requests: %llu answered 200, %llu shed (429), %llu other\n",
              static_cast<unsigned long long>(r.sum.ok),
              static_cast<unsigned long long>(r.sum.shed),
              static_cast<unsigned long long>(r.sum.other));
  std::printf("  spans acknowledged: %llu (%.0f spans/s)\n",
              static_cast<unsigned long long>(r.sum.ackedSpans),
              static_cast<double>(r.sum.ackedSpans) / r.wall);
  std::printf("  CPU: clients %.2f cores", r.sum.cpuSeconds / r.wall);
}

// Clients only, against a receiver listening on 127.0.0.1:port.
int external(QCoreApplication& app, quint16 port, const Load& l) {
  const LoadResult r = drive(app, port, l);
  std::printf("bench_otlp: %s, %d clients, %d spans/request, to 127.0.0.1:%u, %.1f s\n",
              l.proto ? "protobuf" : "json", l.clients, l.spans, port, r.wall);
  printLoad(r);
  std::printf("\n");
  return r.sum.ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  Load l;
  l.secs = argc > 1 ? std::atoi(argv[1]) : 10;
  l.clients = argc > 2 ? std::atoi(argv[2]) : 4;
  l.spans = argc > 3 ? std::atoi(argv[3]) : 512;
  l.proto = argc > 4 ? std::string(argv[4]) != "json" : true;
  const int decodeThreads = argc > 5 ? std::atoi(argv[5]) : 2;
  if (const char* port = std::getenv("SPILLWAY_BENCH_OTLP_PORT"))
    return external(app, static_cast<quint16>(std::atoi(port)), l);

  live::ShadowOptions so;
  live::ShadowMonitor monitor(loadPolicyFile(SPILLWAY_DEFAULT_POLICY), so);
  std::uint64_t wouldOpens = 0;
  monitor.onWouldOpen = [&](const live::WouldOpenVerdict&) { ++wouldOpens; };
  live::OtlpReceiverOptions o;
  o.port = 0;
  o.decodeThreads = decodeThreads;
  // Wired as `listen --otlp` wires it: the instance bound is applied before acknowledging.
  live::OtlpReceiver rx(o, [&](const formats::SpanCall& c) { monitor.addReservedCall(c.view()); });
  rx.admit = [&](const formats::SpanCall& c) {
    return monitor.reserve(c.instance, c.model, c.ts + c.latency);
  };
  if (!rx.start()) {
    std::fprintf(stderr, "listen: %s\n", qPrintable(rx.errorString()));
    return 2;
  }
  std::vector<std::int64_t> latencies;  // µs per request, received → last call applied
  rx.onBatchApplied = [&](std::size_t, std::int64_t us) { latencies.push_back(us); };
  const LoadResult r = drive(app, rx.port(), l);
  rx.drain();

  const auto& st = rx.stats();
  std::printf("bench_otlp: %s, %d clients, %d spans/request, %d decoding threads, %.1f s\n",
              l.proto ? "protobuf" : "json", l.clients, l.spans, decodeThreads, r.wall);
  printLoad(r);
  std::printf(" (%.0f %% of the process's %.2f), receiver and engine %.2f cores\n",
              100 * r.sum.cpuSeconds / std::max(r.cpu, 1e-9), r.cpu / r.wall,
              (r.cpu - r.sum.cpuSeconds) / r.wall);
  std::printf("  applied to the engine: %llu (%.0f/s)\n",
              static_cast<unsigned long long>(st.callsApplied),
              static_cast<double>(st.callsApplied) / r.wall);
  std::printf(
      "  received -> verdict per request: p50 %.0f us, p99 %.0f us, max %lld us "
      "(%zu requests); intake high-water %zu calls\n",
      pct(latencies, 0.5), pct(latencies, 0.99), static_cast<long long>(st.maxLatencyUs),
      latencies.size(), st.maxQueued);
  std::printf("  engine: %zu instances, %llu records, %llu would-opens\n", monitor.summary().size(),
              static_cast<unsigned long long>(monitor.records()),
              static_cast<unsigned long long>(wouldOpens));
  if (st.callsApplied != r.sum.ackedSpans || st.callsAcked != r.sum.ackedSpans) {
    std::fprintf(stderr, "LOST: %llu acknowledged, %llu applied\n",
                 static_cast<unsigned long long>(r.sum.ackedSpans),
                 static_cast<unsigned long long>(st.callsApplied));
    return 1;
  }
  return 0;
}
