// Deterministic synthetic telemetry in the canonical JSONL format: a group of model instances
// with lognormal latency, light background errors, one instance that leaks memory (latency
// drifts up without errors, then times out), and a short error blip elsewhere that a good
// policy must *not* trip on. Used for the bundled sample trace and to feed benchmarks.
// This is a trace fixture, not the simulator: no queueing, no retries (see sim/).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <string>
#include <vector>

#include "spillway/rng.hpp"

namespace {

struct Options {
  int instances = 4;
  double durationS = 900;
  double rps = 6;  // per instance
  std::uint64_t seed = 42;
  int leakInstance = 2;  // 0-based; -1 = none
  double leakStartS = 240, leakRampS = 180, leakEndS = 600;
  double leakPeak = 8;                 // latency multiplier at the end of the ramp
  double blipStartS = 120, blipS = 2;  // error blip on instance 0
  double timeoutS = 30;
  double medianMs = 900, sigma = 0.35;
  std::int64_t epochMs = 1764480000000;  // 2025-11-30T05:20:00Z
  std::string out = "-";
  std::string faultsOut;
};

double normal(spillway::Rng& r) {
  // Box–Muller: deterministic everywhere, unlike std::normal_distribution.
  double u1 = r.uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  const double u2 = r.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

// A number that is all of `text`, finite and within [lo, hi]; else the usage error names it.
bool number(const char* text, double lo, double hi, double& out) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) return false;
  out = v;
  return true;
}

void usage() {
  std::fputs(
      "usage: spillway-tracegen [--instances N] [--duration S] [--rps R] [--seed N]\n"
      "                         [--leak-instance I|-1] [--out FILE] [--faults-out FILE]\n"
      "Writes canonical telemetry JSONL (docs/telemetry.md), sorted by start time.\n",
      stderr);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    // Each bounded: --duration nan wrote without end, --instances 1e9 spun without output, and
    // --seed abc was seed 0.
    double v = 0;
    const bool known = a == "--instances" || a == "--duration" || a == "--rps" || a == "--seed" ||
                       a == "--leak-instance";
    if (known) {
      const char* text = val();
      const bool whole = a == "--instances" || a == "--seed" || a == "--leak-instance";
      const double lo = a == "--leak-instance" ? -1 : a == "--seed" ? 0 : whole ? 1 : 1e-3;
      const double hi = a == "--instances"  ? 1e6
                        : a == "--duration" ? 7 * 86400
                        : a == "--rps"      ? 1e5
                        : a == "--seed"     ? 9e15
                                            : 9999;
      if (!number(text, lo, hi, v) || (whole && v != std::floor(v))) {
        std::fprintf(stderr, "spillway-tracegen: %s: expected %s from %g to %g, got '%s'\n",
                     a.c_str(), whole ? "a whole number" : "a number", lo, hi, text);
        return 2;
      }
    }
    if (a == "--instances")
      o.instances = static_cast<int>(v);
    else if (a == "--duration")
      o.durationS = v;
    else if (a == "--rps")
      o.rps = v;
    else if (a == "--seed")
      o.seed = static_cast<std::uint64_t>(v);
    else if (a == "--leak-instance")
      o.leakInstance = static_cast<int>(v);
    else if (a == "--out")
      o.out = val();
    else if (a == "--faults-out")
      o.faultsOut = val();
    else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else {
      usage();
      return 2;
    }
  }
  if (o.leakInstance >= o.instances) {
    std::fprintf(stderr,
                 "spillway-tracegen: --leak-instance: %d is not one of the %d instances "
                 "(0 to %d, or -1 for none)\n",
                 o.leakInstance, o.instances, o.instances - 1);
    return 2;
  }
  std::FILE* out = o.out == "-" ? stdout : std::fopen(o.out.c_str(), "w");
  if (!out) {
    std::perror(o.out.c_str());
    return 2;
  }
  static char buf[1 << 20];
  std::setvbuf(out, buf, _IOFBF, sizeof buf);

  // One stream per instance so the instances' draws are independent of each other.
  struct Inst {
    spillway::Rng rng;
    double next;
  };
  std::vector<Inst> inst;
  for (int i = 0; i < o.instances; ++i) {
    spillway::Rng r(o.seed ^ spillway::stableHash("instance-" + std::to_string(i)));
    const double first = -std::log(1.0 - r.uniform()) / o.rps;
    inst.push_back({r, first});
  }
  const char* tenants[] = {"cs-bot", "search", "report-gen", "code-assist"};
  // The instance due next (the lowest index on a tie), from a heap: a fleet of 10⁵ instances
  // is a bench input.
  const auto later = [&inst](int a, int b) {
    return inst[a].next != inst[b].next ? inst[a].next > inst[b].next : a > b;
  };
  std::priority_queue<int, std::vector<int>, decltype(later)> due(later);
  for (int i = 0; i < o.instances; ++i) due.push(i);
  for (;;) {
    const int k = due.top();
    due.pop();
    const double t = inst[k].next;
    if (t >= o.durationS) break;
    spillway::Rng& r = inst[k].rng;
    inst[k].next += -std::log(1.0 - r.uniform()) / o.rps;
    due.push(k);

    double mult = 1.0;
    if (k == o.leakInstance && t >= o.leakStartS && t < o.leakEndS) {
      const double f = std::min(1.0, (t - o.leakStartS) / o.leakRampS);
      mult = 1.0 + (o.leakPeak - 1.0) * f;
    }
    double latMs = o.medianMs * std::exp(o.sigma * normal(r)) * mult;
    int status = 200;
    const char* outcome = "ok";
    const double u = r.uniform();
    const bool blip = k == 0 && t >= o.blipStartS && t < o.blipStartS + o.blipS;
    if (latMs > o.timeoutS * 1000) {
      latMs = o.timeoutS * 1000;
      status = 0;
      outcome = "timeout";
    } else if (blip ? u < 0.9 : u < 0.004) {
      status = 503;
      latMs = std::min(latMs, 50.0 + 30 * r.uniform());
      outcome = "error";
    } else if (u < 0.006) {
      status = 429;
      latMs = 5 + 5 * r.uniform();
      outcome = "error";
    } else if (u < 0.010) {
      status = 400;  // client error: ignored by default policies
    }
    const int tenant = static_cast<int>(r.uniform() * 4);
    const long long tokIn = 200 + static_cast<long long>(r.uniform() * 1800);
    const long long tokOut = status == 200 ? 50 + static_cast<long long>(r.uniform() * 600) : 0;
    std::fprintf(out,
                 "{\"ts\":%.3f,\"instance\":\"chat-72b-%d\",\"model\":\"chat-72b\","
                 "\"latency_ms\":%.3f,\"status\":%d,\"outcome\":\"%s\",\"tenant\":\"%s\","
                 "\"critical\":%s,\"tokens_in\":%lld,\"tokens_out\":%lld}\n",
                 static_cast<double>(o.epochMs) + t * 1000.0, k + 1, latMs, status, outcome,
                 tenants[tenant], tenant == 0 ? "true" : "false", tokIn, tokOut);
  }
  // A full disk shows when the buffer is written out: a trace cut short is not a success.
  const bool written =
      !std::ferror(out) && (out == stdout ? std::fflush(out) : std::fclose(out)) == 0;
  if (!written) {
    std::fprintf(stderr, "spillway-tracegen: %s: cannot write (the disk is full?)\n",
                 o.out.c_str());
    return 2;
  }

  if (!o.faultsOut.empty() && o.leakInstance >= 0 && o.leakInstance < o.instances) {
    std::FILE* f = std::fopen(o.faultsOut.c_str(), "w");
    if (!f) {
      std::perror(o.faultsOut.c_str());
      return 2;
    }
    std::fprintf(f,
                 "{\"instance\":\"chat-72b-%d\",\"start\":%lld,\"end\":%lld,"
                 "\"kind\":\"latency_drift\",\"note\":\"GPU memory leak: latency x1 -> x%.0f over "
                 "%.0fs, no errors until timeouts\"}\n",
                 o.leakInstance + 1, static_cast<long long>(o.epochMs + o.leakStartS * 1000),
                 static_cast<long long>(o.epochMs + o.leakEndS * 1000), o.leakPeak, o.leakRampS);
    if (std::ferror(f) || std::fclose(f) != 0) {
      std::fprintf(stderr, "spillway-tracegen: %s: cannot write\n", o.faultsOut.c_str());
      return 2;
    }
  }
  return 0;
}
