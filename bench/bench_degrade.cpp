// Per-request cost of the gateway's limit and route decision (DegradeRouter + Limiter), with
// 50 model profiles and 1,000 tenant rules built in code, under realistic time: 10 k requests/s,
// so simulated time moves 100 µs per decision, and token buckets refill, concurrency is held for
// ~0.8 s and degrade locks live and expire at the rates they would in production. The requests
// (tenant, route, session, primary, tags, context, tokens, criticality, load) are pregenerated
// (65,536, read sequentially), so generation is not timed.
//
// One iteration = one request, as the simulator's gateway does it (sim/src/gateway.cpp):
//
//   BM_Decision/plan:0/locked_pct:L   Limiter::admit once per original; if admitted,
//                        DegradeRouter::locked(session) and, kInFlight requests later,
//                        Limiter::complete with what admission charged. The healthy path: the
//                        primary takes the request, no plan. L % of the 200 k sessions hold a
//                        degrade lock (0: an empty lock table, the common case).
//   BM_Decision/plan:1/locked_pct:10  the same plus DegradeRouter::plan(primary, tags, context)
//                        for every admitted request, as if every primary were unavailable (the
//                        degraded path; it plans even after a lock hit, so an upper bound).
//   BM_Decision/plan:2/locked_pct:10  plan:1 plus DegradeRouter::lock(session, first step or
//                        static), what the gateway does once a backup is chosen.
//   BM_LimiterOnly       admit + complete only.
//   BM_LockedOnly        DegradeRouter::locked only (10 % of sessions locked).
//   BM_PlanOnly          DegradeRouter::plan only.
// The components do not add up to a decision exactly: each has the caches to itself.
//
// Every benchmark runs a fixed 2^21 iterations (210 s of simulated time, under the 300 s lock
// TTL) after an untimed warm-up that fills the in-flight ring, on a fresh router and limiter.
// Counters: admitted (share of requests the limiter let through), lock_hits (share of looked-up
// sessions that were locked), plan_steps (mean eligible backups per plan), trimmed (trimmed
// steps per plan), locked_sessions (lock table size at the end).
// Docs: docs/performance.md, "Degradation and limits".
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "spillway/degrade.hpp"
#include "spillway/limits.hpp"
#include "spillway/policy.hpp"
#include "spillway/rng.hpp"

namespace {

using namespace spillway;

constexpr int kModels = 50;
constexpr int kTenants = 1000;
constexpr int kRoutes = 5;
constexpr std::uint32_t kSessions = 200'000;
constexpr Micros kStep = 100;                    // 10 k requests/s
constexpr std::size_t kRequests = 1 << 16;       // pregenerated, read sequentially
constexpr std::size_t kInFlight = 1 << 13;       // completed 8192 requests (~0.82 s) later
constexpr std::int64_t kIterations = 1 << 21;    // 210 s of simulated time
constexpr std::int64_t kWarmup = 2 * kInFlight;  // untimed
constexpr double kLatencyS = kInFlight * 1e-6 * kStep;

const std::array<const char*, 8> kTagNames = {"chat",  "code", "reasoning", "vision",
                                              "tools", "json", "long",      "audio"};
const std::array<const char*, kRoutes> kRouteNames = {"/v1/chat", "/v1/code", "/v1/agent",
                                                      "/v1/batch", "/v1/vision"};

double normal(Rng& r) {  // Box–Muller
  double u1 = r.uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * r.uniform());
}

std::string modelName(int m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "model-%02d", m);
  return buf;
}
std::string tenantName(int t) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "tenant-%04d", t);
  return buf;
}

// Tag sets requests ask for (bits of kTagNames), and the route each one goes to.
struct Combo {
  unsigned bits;
  int route;
};
const std::array<Combo, 10> kCombos = {{{0b00000001, 0},
                                        {0b00000001, 0},
                                        {0b00000001, 0},
                                        {0b00000011, 1},
                                        {0b00000010, 1},
                                        {0b00010101, 2},
                                        {0b00110001, 2},
                                        {0b00100001, 3},
                                        {0b01000001, 3},
                                        {0b00001001, 4}}};

std::vector<std::string> tagsOf(unsigned bits) {
  std::vector<std::string> v;
  for (std::size_t b = 0; b < kTagNames.size(); ++b)
    if (bits & (1u << b)) v.emplace_back(kTagNames[b]);
  return v;
}

struct Req {
  std::uint32_t session;
  std::uint16_t tenant;
  std::uint8_t route, primary;
  std::uint32_t context;  // input tokens
  float estTokens, actualTokens;
  float load, saturation;
  std::uint8_t combo;
  bool critical;
};

// The policy, the model names and the requests: built once.
struct World {
  Policy policy;
  std::vector<std::string> models;
  std::vector<Req> reqs;
};

World makeWorld() {
  World w;
  Rng r(20240517);
  Policy& p = w.policy;
  p.name = "bench-degrade";

  // 50 profiles: chat on 90 %, each other tag on ~35 %; quality 0.5–0.98; mixed windows.
  const std::array<std::uint32_t, 6> windows = {8'192, 16'384, 32'768, 65'536, 131'072, 0};
  std::vector<unsigned> modelBits(kModels);
  for (int m = 0; m < kModels; ++m) {
    unsigned bits = r.uniform() < 0.9 ? 1u : 0u;
    for (std::size_t b = 1; b < kTagNames.size(); ++b)
      if (r.uniform() < 0.35) bits |= 1u << b;
    if (!bits) bits = 1u << (1 + r.next() % (kTagNames.size() - 1));
    modelBits[m] = bits;
    ModelProfile prof;
    prof.quality = 0.5 + 0.48 * r.uniform();
    prof.tier = prof.quality > 0.85 ? 1 : prof.quality > 0.7 ? 2 : 3;
    prof.context = windows[r.next() % windows.size()];
    prof.tags = tagsOf(bits);
    prof.cost = 0.1 + r.uniform();
    w.models.push_back(modelName(m));
    p.models.emplace(w.models.back(), std::move(prof));
  }
  // Degradation: enabled with the lock (TTL 300 s), trim, cache, explicit chains of 4 for
  // every fifth model; the others get every profiled model, best quality first.
  DegradeConfig& d = p.degrade;
  d.enabled = true;
  d.maxQualityDrop = 0.3;
  d.contextOverflow = ContextOverflow::Trim;
  d.cache = true;
  d.lock = true;
  d.lockTtl = seconds(300);
  for (int m = 0; m < kModels; m += 5) {
    std::vector<std::string> chain;
    while (chain.size() < 4) {
      const int b = static_cast<int>(r.next() % kModels);
      if (b != m && std::find(chain.begin(), chain.end(), modelName(b)) == chain.end())
        chain.push_back(modelName(b));
    }
    d.chains.emplace(modelName(m), std::move(chain));
  }

  // Traffic: tenants by a Zipf law (s = 0.8: the top tenant has ~6 % of the traffic).
  std::vector<double> weight(kTenants), cdf(kTenants);
  double sum = 0;
  for (int t = 0; t < kTenants; ++t) sum += weight[t] = 1.0 / std::pow(t + 1.0, 0.8);
  double acc = 0;
  for (int t = 0; t < kTenants; ++t) cdf[t] = (acc += weight[t] / sum);
  // Primaries: models covering the request's tags (any model when none covers them).
  std::vector<std::vector<int>> primaries(kCombos.size());
  for (std::size_t c = 0; c < kCombos.size(); ++c) {
    for (int m = 0; m < kModels; ++m)
      if ((modelBits[m] & kCombos[c].bits) == kCombos[c].bits) primaries[c].push_back(m);
    if (primaries[c].empty())
      for (int m = 0; m < kModels; ++m) primaries[c].push_back(m);
  }
  w.reqs.resize(kRequests);
  double estSum = 0;
  std::vector<double> routeShare(kRoutes), modelShare(kModels);
  for (Req& q : w.reqs) {
    const double u = r.uniform();
    q.tenant =
        static_cast<std::uint16_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
    if (q.tenant >= kTenants) q.tenant = kTenants - 1;
    q.combo = static_cast<std::uint8_t>(r.next() % kCombos.size());
    const Combo& c = kCombos[q.combo];
    q.route = static_cast<std::uint8_t>(c.route);
    q.primary = static_cast<std::uint8_t>(primaries[q.combo][r.next() % primaries[q.combo].size()]);
    q.session = static_cast<std::uint32_t>(r.next() % kSessions);
    const double ctx = std::min(200'000.0, 3000.0 * std::exp(1.0 * normal(r)));
    q.context = static_cast<std::uint32_t>(ctx);
    const double out = 250.0 * std::exp(0.6 * normal(r));
    q.estTokens = static_cast<float>(q.context + 300.0);
    q.actualTokens = static_cast<float>(q.context + out);
    q.critical = r.uniform() < 0.3;
    // Gateway load 0.6–0.9, with 1 % spikes over the shedding threshold; instance saturation
    // 0.6–0.95 (adaptive limits tighten above 0.8).
    q.load = static_cast<float>(r.uniform() < 0.01 ? 0.97 : 0.6 + 0.3 * r.uniform());
    q.saturation = static_cast<float>(0.6 + 0.35 * r.uniform());
    estSum += q.estTokens;
    routeShare[q.route] += 1.0 / kRequests;
    modelShare[q.primary] += 1.0 / kRequests;
  }
  const double meanEst = estSum / kRequests;
  const double rps = 1e6 / kStep;

  // Limits: a rule per tenant sized from its traffic, most with headroom, ~15 % under it.
  LimitsConfig& l = p.limits;
  for (int t = 0; t < kTenants; ++t) {
    const double traffic = rps * weight[t] / sum;
    const double headroom = r.uniform() < 0.15 ? 0.6 + 0.4 * r.uniform() : 1.5 + 2.0 * r.uniform();
    LimitRule rule;
    rule.rate = std::max(1.0, traffic * headroom);
    rule.burst = 2 * rule.rate;
    rule.maxConcurrent = static_cast<std::uint32_t>(std::ceil(traffic * kLatencyS * 2)) + 4;
    rule.tokensPerSecond = std::max(20'000.0, traffic * meanEst * (headroom + 0.5));
    rule.tokenBurst = 2 * rule.tokensPerSecond;
    l.tenants.emplace(tenantName(t), rule);
  }
  // Routes: generous except batch (a rate and a token budget) and agent (concurrency).
  for (int rt = 0; rt < kRoutes; ++rt) {
    const double traffic = rps * routeShare[rt];
    LimitRule rule;
    rule.rate = traffic * (rt == 3 ? 1.1 : 3.0);
    if (rt == 2) rule.maxConcurrent = static_cast<std::uint32_t>(traffic * kLatencyS * 1.5);
    if (rt == 3) rule.tokensPerSecond = traffic * meanEst * 1.2;
    l.routes.emplace(kRouteNames[rt], rule);
  }
  // Models: a rule on every second model.
  for (int m = 0; m < kModels; m += 2) {
    const double traffic = rps * modelShare[m];
    LimitRule rule;
    rule.rate = std::max(5.0, traffic * 2.5);
    rule.maxConcurrent = static_cast<std::uint32_t>(traffic * kLatencyS * 2) + 8;
    l.models.emplace(modelName(m), rule);
  }
  l.shedAt = 0.95;
  l.shedCriticalAt = 0.99;
  l.adaptive = true;
  l.adaptiveFrom = 0.8;
  l.adaptiveMin = 0.5;
  return w;
}

const World& world() {
  static const World w = makeWorld();
  return w;
}

// One fresh gateway: router, limiter, requests with this router's tag masks, in-flight ring.
struct Gateway {
  struct Held {
    LimitKey key;
    float taken = 0, actual = 0;  // tokens admission charged, tokens used
    bool held = false;
  };
  const World& w;
  DegradeRouter router;
  Limiter limiter;
  std::vector<TagMask> masks;  // per request (the router assigns tag bits)
  std::vector<LimitKey> keys;  // per request
  std::vector<Held> ring;
  std::vector<RouteStep> plan;
  Micros now = seconds(1);
  std::size_t next = 0;
  std::uint64_t admitted = 0, looked = 0, hits = 0, plans = 0, steps = 0;

  // `lockedPct`: share of the sessions in the lock table (degraded earlier), 0–100.
  explicit Gateway(const World& world, int lockedPct = 10)
      : w(world), router(world.policy, world.models), limiter(world.policy.limits) {
    for (int t = 0; t < kTenants; ++t) limiter.id(LimitScope::Tenant, tenantName(t));
    for (int rt = 0; rt < kRoutes; ++rt) limiter.id(LimitScope::Route, kRouteNames[rt]);
    for (int m = 0; m < kModels; ++m) limiter.id(LimitScope::Model, world.models[m]);
    std::array<TagMask, kCombos.size()> comboMask{};
    for (std::size_t c = 0; c < kCombos.size(); ++c)
      comboMask[c] = router.tagMask(tagsOf(kCombos[c].bits));
    masks.resize(kRequests);
    keys.resize(kRequests);
    for (std::size_t i = 0; i < kRequests; ++i) {
      const Req& q = w.reqs[i];
      masks[i] = comboMask[q.combo];
      keys[i] = LimitKey{q.tenant, q.route, q.primary};  // ids were registered in order
    }
    ring.resize(kInFlight);
    plan.reserve(kModels);
    // Sessions degraded before: lockedPct % of them are locked to some backup.
    for (std::uint32_t s = 0; s < kSessions; ++s)
      if (s % 100 < static_cast<std::uint32_t>(lockedPct))
        router.lock(s, static_cast<std::int32_t>(s % kModels), now);
  }

  // mode 0: admit/locked/complete; 1: + plan; 2: + lock.
  template <int Mode>
  void decide() {
    const std::size_t i = next;
    next = (next + 1) & (kRequests - 1);
    now += kStep;
    const Req& q = w.reqs[i];
    // The ring slot of this request held the one admitted kInFlight requests ago: it ends now.
    Held& slot = ring[static_cast<std::size_t>(now / kStep) & (kInFlight - 1)];
    if (slot.held) {
      limiter.complete(slot.key, now, slot.taken, slot.actual);
      slot.held = false;
    }
    const LimitDecision d =
        limiter.admit(keys[i], now, q.estTokens, q.critical, q.load, q.saturation);
    if (!d) return;
    ++admitted;
    slot = Held{keys[i], static_cast<float>(d.tokensTaken), q.actualTokens, true};
    ++looked;
    if (router.locked(q.session, now)) ++hits;
    if constexpr (Mode >= 1) {
      router.plan(q.primary, masks[i], q.context, plan);
      ++plans;
      steps += plan.size();
      if constexpr (Mode >= 2) {
        router.lock(q.session,
                    plan.empty() ? DegradeLock::kStatic : static_cast<std::int32_t>(plan[0].model),
                    now);
      }
    }
  }

  void counters(benchmark::State& state, std::int64_t n) {
    state.counters["admitted"] = static_cast<double>(admitted) / static_cast<double>(n);
    state.counters["lock_hits"] = looked ? static_cast<double>(hits) / looked : 0;
    if (plans) state.counters["plan_steps"] = static_cast<double>(steps) / plans;
    state.counters["locked_sessions"] = static_cast<double>(router.lockedSessions());
  }
  void reset() { admitted = looked = hits = plans = steps = 0; }
};

template <int Mode>
void runDecisions(benchmark::State& state) {
  Gateway g(world(), static_cast<int>(state.range(1)));
  for (std::int64_t k = 0; k < kWarmup; ++k) g.decide<Mode>();
  g.reset();
  const std::uint64_t trimmedBefore = g.router.counters().trimmed;
  for (auto _ : state) g.decide<Mode>();
  g.counters(state, state.iterations());
  if (g.plans)
    state.counters["trimmed"] =
        static_cast<double>(g.router.counters().trimmed - trimmedBefore) / g.plans;
}

void BM_Decision(benchmark::State& state) {
  switch (state.range(0)) {
    case 0:
      return runDecisions<0>(state);
    case 1:
      return runDecisions<1>(state);
    default:
      return runDecisions<2>(state);
  }
}
BENCHMARK(BM_Decision)
    ->ArgNames({"plan", "locked_pct"})
    ->Args({0, 0})
    ->Args({0, 10})
    ->Args({1, 10})
    ->Args({2, 10})
    ->Iterations(kIterations);

// Components, same traffic and time.
void BM_LimiterOnly(benchmark::State& state) {
  Gateway g(world());
  for (std::int64_t k = 0; k < kWarmup; ++k) g.decide<0>();
  std::uint64_t admitted = 0;
  for (auto _ : state) {
    const std::size_t i = g.next;
    g.next = (g.next + 1) & (kRequests - 1);
    g.now += kStep;
    const Req& q = g.w.reqs[i];
    Gateway::Held& slot = g.ring[static_cast<std::size_t>(g.now / kStep) & (kInFlight - 1)];
    if (slot.held) {
      g.limiter.complete(slot.key, g.now, slot.taken, slot.actual);
      slot.held = false;
    }
    const LimitDecision d =
        g.limiter.admit(g.keys[i], g.now, q.estTokens, q.critical, q.load, q.saturation);
    if (d) {
      ++admitted;
      slot = Gateway::Held{g.keys[i], static_cast<float>(d.tokensTaken), q.actualTokens, true};
    }
  }
  state.counters["admitted"] = static_cast<double>(admitted) / state.iterations();
}
BENCHMARK(BM_LimiterOnly)->Iterations(kIterations);

void BM_LockedOnly(benchmark::State& state) {
  Gateway g(world());
  std::uint64_t hits = 0;
  for (auto _ : state) {
    const Req& q = g.w.reqs[g.next];
    g.next = (g.next + 1) & (kRequests - 1);
    g.now += kStep;
    if (g.router.locked(q.session, g.now)) ++hits;
  }
  state.counters["lock_hits"] = static_cast<double>(hits) / state.iterations();
}
BENCHMARK(BM_LockedOnly)->Iterations(kIterations);

void BM_PlanOnly(benchmark::State& state) {
  Gateway g(world());
  std::uint64_t steps = 0;
  for (auto _ : state) {
    const std::size_t i = g.next;
    g.next = (g.next + 1) & (kRequests - 1);
    const Req& q = g.w.reqs[i];
    g.router.plan(q.primary, g.masks[i], q.context, g.plan);
    steps += g.plan.size();
  }
  state.counters["plan_steps"] = static_cast<double>(steps) / state.iterations();
  state.counters["trimmed"] = static_cast<double>(g.router.counters().trimmed) / state.iterations();
}
BENCHMARK(BM_PlanOnly)->Iterations(kIterations);

}  // namespace

BENCHMARK_MAIN();
