// bench_otlp: sustained OTLP/HTTP intake over loopback into the engine in shadow mode.
//
//   bench_otlp [SECONDS=10] [CLIENTS=4] [SPANS_PER_REQUEST=512] [json|proto]
//
// The receiver (OtlpReceiver + ShadowMonitor with the default policy) runs on the main thread's
// event loop, as in `spillway-cli listen --otlp`. CLIENTS threads each hold one keep-alive
// connection (plain blocking sockets) and POST requests back to back; each request's spans are
// encoded fresh, with increasing timestamps over 8 instances (1 % errors). The bench reports
// acknowledged and applied spans/s, sheds (429), and the latency from a request received to
// its last call's verdict in the engine; it fails unless every acknowledged call was applied.
#include <QCoreApplication>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
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

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  const int secs = argc > 1 ? std::atoi(argv[1]) : 10;
  const int clients = argc > 2 ? std::atoi(argv[2]) : 4;
  const int spans = argc > 3 ? std::atoi(argv[3]) : 512;
  const bool proto = argc > 4 ? std::string(argv[4]) != "json" : true;

  live::ShadowOptions so;
  live::ShadowMonitor monitor(loadPolicyFile(SPILLWAY_DEFAULT_POLICY), so);
  std::uint64_t wouldOpens = 0;
  monitor.onWouldOpen = [&](const live::WouldOpenVerdict&) { ++wouldOpens; };
  live::OtlpReceiverOptions o;
  o.port = 0;
  live::OtlpReceiver rx(o, [&](const formats::SpanCall& c) { monitor.addCall(c.view()); });
  if (!rx.start()) {
    std::fprintf(stderr, "listen: %s\n", qPrintable(rx.errorString()));
    return 2;
  }
  std::vector<std::int64_t> latencies;  // µs per request, received → last call applied
  rx.onBatchApplied = [&](std::size_t, std::int64_t us) { latencies.push_back(us); };

  std::atomic<bool> stop{false};
  std::vector<ClientResult> results(static_cast<std::size_t>(clients));
  std::vector<std::thread> threads;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < clients; ++i)
    threads.emplace_back(client, rx.port(), i, spans, proto, std::ref(stop),
                         std::ref(results[static_cast<std::size_t>(i)]), 0.0);
  otlp_load::runFor(app, secs, stop, threads);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rx.drain();

  ClientResult sum;
  for (const auto& r : results) {
    sum.ok += r.ok;
    sum.shed += r.shed;
    sum.other += r.other;
    sum.ackedSpans += r.ackedSpans;
  }
  const auto& st = rx.stats();
  std::printf("bench_otlp: %s, %d clients, %d spans/request, %.1f s\n", proto ? "protobuf" : "json",
              clients, spans, wall);
  std::printf("  requests: %llu answered 200, %llu shed (429), %llu other\n",
              static_cast<unsigned long long>(sum.ok), static_cast<unsigned long long>(sum.shed),
              static_cast<unsigned long long>(sum.other));
  std::printf("  spans acknowledged: %llu (%.0f spans/s); applied to the engine: %llu (%.0f/s)\n",
              static_cast<unsigned long long>(sum.ackedSpans),
              static_cast<double>(sum.ackedSpans) / wall,
              static_cast<unsigned long long>(st.callsApplied),
              static_cast<double>(st.callsApplied) / wall);
  std::printf(
      "  received -> verdict per request: p50 %.0f us, p99 %.0f us, max %lld us "
      "(%zu requests); intake high-water %zu calls\n",
      pct(latencies, 0.5), pct(latencies, 0.99), static_cast<long long>(st.maxLatencyUs),
      latencies.size(), st.maxQueued);
  std::printf("  engine: %zu instances, %llu records, %llu would-opens\n", monitor.summary().size(),
              static_cast<unsigned long long>(monitor.records()),
              static_cast<unsigned long long>(wouldOpens));
  if (st.callsApplied != sum.ackedSpans || st.callsAcked != sum.ackedSpans) {
    std::fprintf(stderr, "LOST: %llu acknowledged, %llu applied\n",
                 static_cast<unsigned long long>(sum.ackedSpans),
                 static_cast<unsigned long long>(st.callsApplied));
    return 1;
  }
  return 0;
}
