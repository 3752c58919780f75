#include "spillway/sim/simulator.hpp"

#include <algorithm>
#include <cassert>
#include <optional>
#include <cmath>
#include <queue>
#include <stdexcept>

#include "spillway/degrade.hpp"
#include "spillway/histogram.hpp"
#include "spillway/limits.hpp"
#include "spillway/kpi.hpp"
#include "spillway/sim/event_queue.hpp"
#include "spillway/sim/random.hpp"

namespace spillway::sim {
namespace {

// Some libraries in the host process (seen with Qt) leave the upper halves of the AVX
// registers dirty; every later call into libm's VEX-encoded exp() then pays an SSE/AVX
// transition penalty — it made the whole simulator 3x slower inside spillway-cli. Clearing
// the state on entry to the event loop is one instruction.
inline void clearUpperVectorState() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool hasAvx = __builtin_cpu_supports("avx");
  // Clobbers: the compiler must not keep anything in vector registers across it.
  if (hasAvx)
    asm volatile("vzeroupper" ::
                     : "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                       "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
#endif
}

// What an event does. Priorities order same-time events: fault edges first (an instance is
// faulted from its onset on), then answers, then caller timeouts, then new work, ticks last
// (a tick sees everything that happened up to its time).
enum Kind : std::uint32_t {
  kArrival,
  kNextTurn,
  kRetry,
  kResponse,
  kTimeout,
  kJobDone,
  kEdge,
  kTick
};
enum Prio : std::uint8_t {
  kPrioEdge = 0,
  kPrioDone = 1,
  kPrioTimeout = 2,
  kPrioWork = 3,
  kPrioTick = 4
};

constexpr std::uint32_t kNone = 0xffffffffu;
// Who answered a successful original.
constexpr int kTierPrimary = 0, kTierBackup = 1, kTierCache = 2;
constexpr Micros kRefuseLatency = millis(1);  // connection refused / reset / queue full

// How one attempt ended, as the caller sees it.
enum class Result : std::uint8_t { Ok, Error, Throttled, Timeout, Reset, Rejected, Limited };

struct Request {
  std::uint32_t client = 0;
  std::uint32_t token = 0;  // current attempt; 0 = no attempt in flight
  Micros start = 0;         // of the original request
  Micros attemptStart = 0;
  Micros deadline = 0;
  std::uint32_t instance = kNone;
  std::uint32_t attempts = 0;  // attempts made (including rejected ones)
  std::uint32_t turnsLeft = 0;
  double inTokens = 0, outTokens = 0;
  int status = 0;  // pending fast answer
  Outcome outcome = Outcome::Ok;
  bool probe = false;
  bool primaryFailed = false;
  bool timeoutArmed = false;
  bool inFault = false;  // the original started while an injected fault was active
  // Degradation and limits.
  std::uint64_t session = 0;     // degrade-lock key: a conversation, or the request itself
  std::uint32_t model = 0;       // model group of the current attempt
  std::uint32_t trimmedTo = 0;   // context trimmed for a backup (0 = not)
  std::int32_t cacheKey = -1;    // -1 = not cacheable
  bool limitHeld = false;        // admitted by the limiter (released when the original ends)
  bool lockedRoute = false;      // the current attempt follows a degrade lock
  bool gatewayRerouted = false;  // the gateway already re-routed a failed try once
  bool modelDeadline = false;    // the attempt's deadline is the model's upstream timeout
  double estTokens = 0;
};

struct Job {
  std::uint32_t instance = 0, request = kNone, token = 0;
  std::uint32_t pos = 0;  // index in the instance's running list
  Micros finish = 0;
};

struct QueueEntry {
  std::uint32_t request = 0, token = 0;
  Micros deadline = 0;
  double work = 0;  // service time before batching, drift and delay (µs)
};

// Fixed-capacity FIFO (the instance's bounded queue).
class Ring {
 public:
  void init(std::size_t cap) {
    buf_.resize(cap ? cap : 1);
    cap_ = cap;
  }
  std::size_t size() const { return count_; }
  bool full() const { return count_ >= cap_; }
  void push(const QueueEntry& e) {
    buf_[(head_ + count_) % buf_.size()] = e;
    ++count_;
  }
  QueueEntry pop() {
    QueueEntry e = buf_[head_];
    head_ = (head_ + 1) % buf_.size();
    --count_;
    return e;
  }
  const QueueEntry& at(std::size_t i) const { return buf_[(head_ + i) % buf_.size()]; }

 private:
  std::vector<QueueEntry> buf_;
  std::size_t head_ = 0, count_ = 0, cap_ = 0;
};

// One injected fault on one instance, [start, end).
struct Interval {
  std::uint32_t fault = 0, instance = 0;
  Micros start = 0, end = kForever;
  bool spread = false;
  std::uint32_t spreadTo = kNone;
  Micros spreadAt = 0;
};

// The combined effect of the faults active on an instance at one moment.
struct Effect {
  double multiplier = 1, errorP = 0, throttleP = 0, hangP = 0, resetP = 0;
  int errorStatus = 503;
  Micros delay = 0, hangUntil = kForever;
  bool outage = false;
};

struct TickCounters {
  std::uint32_t responses = 0, failures = 0, rejected = 0, queueFull = 0, overflow = 0;
  bool queueFullSeen = false, overflowSeen = false;
};

struct Instance {
  std::uint32_t model = 0;
  InstanceId eid = 0;
  std::uint32_t slots = 0, slotsEff = 0, busy = 0;
  std::uint32_t slot = 0;  // index within its model group (outstanding counts live there)
  double weight = 1, wrrCurrent = 0;
  Ring queue;
  std::vector<std::uint32_t> running;            // job ids
  std::vector<std::uint32_t> intervals, active;  // all / currently active interval ids
  Stream rng, gt;
  TickCounters tick;
  bool unhealthy = false;
  InstanceReport rep;
};

struct ClientState {
  const ClientSpec* spec = nullptr;
  std::uint32_t model = 0;
  Stream arrivals, draws, retry;
  Micros slo = 0;
  std::uint32_t inFlight = 0;  // attempts holding a connection of the caller's pool
  LatencyHistogram e2e, tickE2e;
  ClientReport rep;
  ClientTick tick;
  // Retry budget: retries and originals in the current and previous 10 s.
  std::int64_t budgetEpoch = -1;
  std::uint64_t budgetOrig[2] = {0, 0}, budgetRetry[2] = {0, 0};
  std::uint64_t gatewayReroutes[2] = {0, 0};  // the gateway's own re-routes, same windows
  LimitKey limitKey;
  TagMask tags = 0;
  bool critical = false;
  std::vector<double> keyCdf;          // Zipf CDF over cache keys
  std::vector<Micros> cachedAt;        // when each key was last answered (kNever: never)
  std::uint64_t sessions = 0;
};

struct ModelGroup {
  const ModelSpec* spec = nullptr;
  std::vector<std::uint32_t> instances;
  std::size_t rr = 0;  // round-robin cursor, kept in [0, n)
  double weightTotal = 0;
  // Attempts the gateway has in flight per instance, contiguous so least-outstanding scans a
  // small array instead of whole Instance records.
  std::vector<std::uint32_t> outstanding;
  std::uint32_t inFlight = 0;  // attempts in flight to the group (gateway budget)
};

// Fans breaker events out to the caller's sink and keeps them for fault scoring.
class Tee final : public EventSink {
 public:
  explicit Tee(EventSink* next) : next_(next) {}
  void onEvent(const Event& e) override {
    kept.push_back(e);
    if (next_) next_->onEvent(e);
  }
  std::vector<Event> kept;

 private:
  EventSink* next_;
};

Policy effectivePolicy(const Scenario& s, bool protection) {
  Policy p = s.policy;
  if (!protection) p.breaker.mode = BreakerMode::MetricsOnly;
  return p;
}

double percentileMs(const LatencyHistogram& h, double q) {
  return h.total() ? h.quantile(q) / 1000.0 : 0.0;
}

}  // namespace

struct Simulator::Impl {
  const Scenario& sc;
  SimOptions opt;
  Tee tee;
  Engine engine;
  EventQueue agenda;
  Stream gatewayRng;
  std::vector<ModelGroup> models;
  std::vector<Instance> inst;
  std::vector<ClientState> clients;
  std::vector<Interval> intervals;
  std::vector<Request> requests;
  std::vector<std::uint32_t> freeRequests;
  std::vector<Job> jobs;
  std::vector<std::uint32_t> freeJobs;
  std::uint32_t nextToken = 1;
  std::uint64_t live = 0;  // original requests in progress (incl. backoff and think time)
  std::uint64_t originals = 0, events = 0;
  std::array<std::uint64_t, kRejectReasonCount> rejectedBy{};
  std::uint64_t overflow = 0;
  std::uint32_t activeFaults = 0;  // instances with an injected fault right now
  Micros now = 0, lastTick = 0;
  bool done = false;
  std::vector<std::string> instanceNames, clientNames;
  LatencyHistogram answered;
  std::vector<std::uint8_t> tried_;  // scratch for dispatch
  // Degradation and limits (off in the baseline: a plain forwarder has neither).
  std::optional<Limiter> limiter;
  std::optional<DegradeRouter> router;
  bool limiting = false, degrading = false;
  std::vector<RouteStep> plan_;  // scratch for degrade
  Result lastFailure = Result::Rejected;
  std::array<std::uint64_t, 5> limitedBy{};      // by LimitReason
  std::array<std::uint64_t, 3> degradeRejects{};  // fast_fail, static, no_backup

  Impl(const Scenario& s, SimOptions o)
      : sc(s),
        opt(o),
        tee(o.events),
        engine(effectivePolicy(s, o.protection), s.seed, &tee),
        gatewayRng(s.seed, "gateway") {
    build();
  }

  // ---- setup -------------------------------------------------------------------------------
  void build() {
    if (sc.tick <= 0) throw std::invalid_argument("tick must be positive");
    models.resize(sc.models.size());
    for (std::size_t m = 0; m < sc.models.size(); ++m) {
      const ModelSpec& ms = sc.models[m];
      models[m].spec = &ms;
      for (const InstanceSpec& is : ms.instances) {
        Instance in;
        in.model = static_cast<std::uint32_t>(m);
        in.eid = engine.addInstance(is.name, ms.name);
        in.slots = in.slotsEff = ms.slotCount;
        in.weight = is.weight;
        in.queue.init(ms.queue);
        in.running.reserve(ms.slotCount);
        in.rng = Stream(sc.seed, is.name, "instance");
        in.gt = Stream(sc.seed, is.name, "ground-truth");
        in.rep.name = is.name;
        in.rep.model = ms.name;
        in.slot = static_cast<std::uint32_t>(models[m].instances.size());
        models[m].instances.push_back(static_cast<std::uint32_t>(inst.size()));
        models[m].outstanding.push_back(0);
        models[m].weightTotal += is.weight;
        instanceNames.push_back(is.name);
        inst.push_back(std::move(in));
      }
    }
    auto modelIndex = [&](const std::string& name) -> std::uint32_t {
      for (std::size_t m = 0; m < sc.models.size(); ++m)
        if (sc.models[m].name == name) return static_cast<std::uint32_t>(m);
      throw std::invalid_argument("client calls unknown model '" + name + "'");
    };
    clients.resize(sc.clients.size());
    for (std::size_t c = 0; c < sc.clients.size(); ++c) {
      const ClientSpec& cs = sc.clients[c];
      ClientState& st = clients[c];
      st.spec = &cs;
      st.model = modelIndex(cs.model);
      st.arrivals = Stream(sc.seed, cs.name, "arrivals");
      st.draws = Stream(sc.seed, cs.name, "requests");
      st.retry = Stream(sc.seed, cs.name, "retries");
      st.slo = cs.slo > 0 ? cs.slo : cs.timeout;
      st.rep.name = cs.name;
      st.rep.criticality = cs.criticality;
      st.tick.client = static_cast<std::uint32_t>(c);
      clientNames.push_back(cs.name);
    }
    buildDegradeAndLimits();
    buildFaults();
    for (std::size_t c = 0; c < clients.size(); ++c)
      scheduleArrival(static_cast<std::uint32_t>(c), 0);
    agenda.push(sc.tick, kPrioTick, kTick, 0);
    if (opt.series) opt.series->begin(instanceNames, clientNames);
  }

  void buildDegradeAndLimits() {
    const Policy& p = sc.policy;
    if (opt.protection && p.degrade.enabled) {
      std::vector<std::string> names;
      for (const ModelSpec& m : sc.models) names.push_back(m.name);
      router.emplace(p, std::move(names));
      degrading = true;
    }
    if (opt.protection && (p.limits.any() || p.limits.adaptive)) {
      limiter.emplace(p.limits);
      limiting = true;
    }
    for (ClientState& cl : clients) {
      const ClientSpec& cs = *cl.spec;
      cl.critical = cs.criticality == Criticality::Core;
      if (limiting) {
        cl.limitKey.tenant = limiter->id(LimitScope::Tenant, cs.tenant.empty() ? cs.name : cs.tenant);
        cl.limitKey.route = limiter->id(LimitScope::Route, cs.route);
        cl.limitKey.model = limiter->id(LimitScope::Model, cs.model);
      }
      if (degrading) cl.tags = router->tagMask(cs.tags);
      if (cs.cache.keys > 0) {
        // Zipf popularity: P(key k) ∝ 1 / (k+1)^s.
        cl.keyCdf.resize(cs.cache.keys);
        double sum = 0;
        for (std::uint32_t k = 0; k < cs.cache.keys; ++k)
          cl.keyCdf[k] = (sum += 1.0 / std::pow(static_cast<double>(k) + 1.0, cs.cache.zipf));
        for (double& x : cl.keyCdf) x /= sum;
        cl.cachedAt.assign(cs.cache.keys, kNever);
      }
    }
  }

  // Every fault becomes one interval per affected instance; a `recover` ends the intervals of
  // its target that started before it.
  void buildFaults() {
    auto targets = [&](const std::string& t) {
      std::vector<std::uint32_t> out;
      for (std::uint32_t i = 0; i < inst.size(); ++i)
        if (instanceNames[i] == t || sc.models[inst[i].model].name == t) out.push_back(i);
      if (out.empty()) throw std::invalid_argument("fault targets unknown '" + t + "'");
      return out;
    };
    for (std::uint32_t f = 0; f < sc.faults.size(); ++f) {
      const FaultSpec& fs = sc.faults[f];
      if (fs.kind == FaultKind::Recover) continue;
      for (std::uint32_t i : targets(fs.target)) {
        Interval iv;
        iv.fault = f;
        iv.instance = i;
        iv.start = fs.at;
        iv.end = fs.duration == kForever ? kForever : fs.at + fs.duration;
        intervals.push_back(iv);
      }
    }
    for (const FaultSpec& fs : sc.faults) {
      if (fs.kind != FaultKind::Recover) continue;
      for (std::uint32_t i : targets(fs.target))
        for (Interval& iv : intervals)
          if (iv.instance == i && iv.start < fs.at && iv.end > fs.at) iv.end = fs.at;
    }
    for (std::uint32_t k = 0; k < intervals.size(); ++k) {
      const Interval& iv = intervals[k];
      inst[iv.instance].intervals.push_back(k);
      agenda.push(iv.start, kPrioEdge, kEdge, iv.instance);
      if (iv.end != kForever) agenda.push(iv.end, kPrioEdge, kEdge, iv.instance);
    }
  }

  // ---- faults ------------------------------------------------------------------------------
  void onEdge(std::uint32_t i) {
    Instance& in = inst[i];
    if (!in.active.empty()) --activeFaults;
    in.active.clear();
    double capacity = 1.0;
    for (std::uint32_t k : in.intervals) {
      const Interval& iv = intervals[k];
      if (iv.start <= now && now < iv.end) {
        in.active.push_back(k);
        const FaultSpec& fs = sc.faults[iv.fault];
        if (fs.kind == FaultKind::CapacityLoss) capacity = std::min(capacity, fs.value);
      }
    }
    if (!in.active.empty()) ++activeFaults;
    in.slotsEff = std::max<std::uint32_t>(
        capacity >= 1.0 ? in.slots : static_cast<std::uint32_t>(std::floor(in.slots * capacity)),
        capacity > 0 ? 1u : 0u);
    startQueued(i);
  }

  Effect effectAt(const Instance& in, Micros t) const {
    Effect fx;
    for (std::uint32_t k : in.active) {
      const Interval& iv = intervals[k];
      const FaultSpec& fs = sc.faults[iv.fault];
      const double s =
          fs.ramp > 0 ? std::min(1.0, static_cast<double>(t - iv.start) / fs.ramp) : 1.0;
      switch (fs.kind) {
        case FaultKind::LatencyDrift:
          fx.multiplier *= 1.0 + (fs.value - 1.0) * s;
          break;
        case FaultKind::Delay:
          fx.delay += static_cast<Micros>(fs.delay * s);
          break;
        case FaultKind::Errors:
          fx.errorP = std::max(fx.errorP, fs.value * s);
          fx.errorStatus = fs.status;
          break;
        case FaultKind::Throttle:
          fx.throttleP = std::max(fx.throttleP, fs.value * s);
          break;
        case FaultKind::Hang:
          fx.hangP = std::max(fx.hangP, fs.value * s);
          fx.hangUntil = std::min(fx.hangUntil, iv.end);
          break;
        case FaultKind::Reset:
          fx.resetP = std::max(fx.resetP, fs.value * s);
          break;
        case FaultKind::Outage:
          fx.outage = true;
          break;
        case FaultKind::CapacityLoss:
        case FaultKind::Recover:
          break;
      }
    }
    return fx;
  }

  // Per-request service work (µs) before batching, drift and delay.
  double drawWork(Instance& in, const Request& r, Stream& s) const {
    const ModelSpec& ms = *models[in.model].spec;
    const double input = r.trimmedTo ? std::min<double>(r.inTokens, r.trimmedTo) : r.inTokens;
    const double base = static_cast<double>(ms.baseTime) + ms.perInputToken * input +
                        ms.perOutputToken * r.outTokens;
    return s.lognormal(base, ms.sigma);
  }
  double batchFactor(const Instance& in, std::uint32_t occupancy) const {
    const Batching& b = models[in.model].spec->batching;
    if (b.knee == 0 || occupancy <= b.knee) return 1.0;
    return 1.0 + b.slope * static_cast<double>(occupancy - b.knee);
  }
  Micros serviceTime(const Instance& in, double work, std::uint32_t occupancy, Micros t) const {
    double d = work * batchFactor(in, occupancy);
    Micros delay = 0;
    if (!in.active.empty()) {
      const Effect fx = effectAt(in, t);
      d *= fx.multiplier;
      delay = fx.delay;
    }
    return std::max<Micros>(1, static_cast<Micros>(d) + delay);
  }

  // ---- requests ----------------------------------------------------------------------------
  std::uint32_t allocRequest() {
    if (!freeRequests.empty()) {
      const std::uint32_t r = freeRequests.back();
      freeRequests.pop_back();
      return r;
    }
    requests.emplace_back();
    return static_cast<std::uint32_t>(requests.size() - 1);
  }
  std::uint32_t allocJob() {
    if (!freeJobs.empty()) {
      const std::uint32_t j = freeJobs.back();
      freeJobs.pop_back();
      return j;
    }
    jobs.emplace_back();
    return static_cast<std::uint32_t>(jobs.size() - 1);
  }

  double rateAt(const ClientSpec& cs, Micros t) const {
    double f = cs.rate;
    for (const LoadShape& ls : cs.profile) {
      switch (ls.kind) {
        case ProfileKind::Constant:
          break;
        case ProfileKind::Step: {
          double m = 1.0;
          for (const auto& [at, factor] : ls.steps)
            if (t >= at) m = factor;
          f *= m;
          break;
        }
        case ProfileKind::Ramp:
          if (t <= ls.start) {
            f *= ls.from;
          } else if (t >= ls.end) {
            f *= ls.to;
          } else {
            f *= ls.from + (ls.to - ls.from) * static_cast<double>(t - ls.start) /
                               static_cast<double>(ls.end - ls.start);
          }
          break;
        case ProfileKind::Diurnal:
          f *= std::max(0.0, 1.0 + ls.amplitude * std::sin(6.283185307179586 *
                                                           static_cast<double>(t + ls.phase) /
                                                           static_cast<double>(ls.period)));
          break;
        case ProfileKind::Burst:
          if (t >= ls.start && t < ls.end) f *= ls.multiplier;
          break;
      }
    }
    return f;
  }

  // Poisson arrivals with the rate of the moment. A gap is never trusted past the next tick:
  // if the draw lands beyond it, the client looks again at the tick with the rate then in
  // force (memorylessness makes this exact for rates that change at tick boundaries) — so a
  // trickle that turns into a burst is seen at once, not after one long, stale gap.
  void scheduleArrival(std::uint32_t c, Micros from) {
    ClientState& cl = clients[c];
    const double rate = rateAt(*cl.spec, from);
    const Micros recheck = from + sc.tick;
    Micros next = recheck;
    if (rate > 0)
      next = from + std::max<Micros>(1, static_cast<Micros>(cl.arrivals.exponential(1e6 / rate)));
    const bool probe = next > recheck;
    if (probe) next = recheck;
    if (next < sc.duration) agenda.push(next, kPrioWork, kArrival, c, probe ? 1 : 0);
  }

  void onArrival(std::uint32_t c, bool probeOnly) {
    scheduleArrival(c, now);
    if (probeOnly) return;
    ClientState& cl = clients[c];
    const std::uint32_t ri = allocRequest();
    Request& r = requests[ri];
    r = Request{};
    r.client = c;
    const SessionSpec& ss = cl.spec->sessions;
    r.turnsLeft = ss.turns > 0 ? cl.draws.geometric(ss.turns) - 1 : 0;
    r.session = (static_cast<std::uint64_t>(c) << 40) | ++cl.sessions;
    ++live;
    beginOriginal(ri, 0);
  }

  void beginOriginal(std::uint32_t ri, double carried) {
    Request& r = requests[ri];
    ClientState& cl = clients[r.client];
    const ClientSpec& cs = *cl.spec;
    r.start = now;
    r.attempts = 0;
    r.primaryFailed = false;
    r.inFault = activeFaults > 0;
    r.inTokens = carried + (cs.inputTokens.median > 0
                                ? cl.draws.lognormal(cs.inputTokens.median, cs.inputTokens.sigma)
                                : 0);
    r.outTokens = cs.outputTokens.median > 0
                      ? cl.draws.lognormal(cs.outputTokens.median, cs.outputTokens.sigma)
                      : 0;
    r.limitHeld = false;
    r.gatewayRerouted = false;
    r.model = cl.model;
    r.trimmedTo = 0;
    // The gateway sizes a request by its prompt and the output it usually gets.
    r.estTokens = r.inTokens + cs.outputTokens.median;
    r.cacheKey = -1;
    if (!cl.keyCdf.empty()) {
      const double u = cl.draws.uniform();
      r.cacheKey = static_cast<std::int32_t>(
          std::lower_bound(cl.keyCdf.begin(), cl.keyCdf.end(), u) - cl.keyCdf.begin());
      if (r.cacheKey >= static_cast<std::int32_t>(cl.keyCdf.size()))
        r.cacheKey = static_cast<std::int32_t>(cl.keyCdf.size()) - 1;
    }
    ++originals;
    ++cl.rep.originals;
    ++cl.tick.originals;
    budgetTouch(cl);
    ++cl.budgetOrig[0];
    dispatch(ri);
  }

  // The gateway: pick an instance, ask its breaker; a blocked attempt moves on to the next
  // instance of the model (the breaker ejects the instance from the pool); when every breaker
  // blocks, the attempt fails fast.
  void dispatch(std::uint32_t ri) {
    Request& r = requests[ri];
    ClientState& cl = clients[r.client];
    if (cl.spec->deadline > 0 && now >= r.start + cl.spec->deadline)
      return finish(ri, End::Timeout);  // the backoff ate the rest of the deadline
    ++r.attempts;
    ++cl.rep.tries;
    if (cl.spec->concurrency > 0 && cl.inFlight >= cl.spec->concurrency) {
      // The caller's connection pool is exhausted: the attempt fails before leaving it.
      ++cl.rep.poolExhausted;
      return attemptEnded(ri, Result::Error);
    }
    // Limits first (seed 001): a refused request never reaches routing. The original keeps
    // its admission across retries; it is released when the original ends.
    if (limiting && !r.limitHeld) {
      const LimitDecision d =
          limiter->admit(cl.limitKey, now, r.estTokens, cl.critical, gatewayLoad(), saturation());
      if (!d) {
        ++limitedBy[static_cast<int>(d.reason)];
        ++cl.rep.limited;
        return attemptEnded(ri, Result::Limited);
      }
      r.limitHeld = true;
    }
    r.lockedRoute = false;
    if (degrading) {
      // The degrade lock (seed 003): a degraded session stays on its degraded route — a
      // retry never jumps back to the broken primary.
      if (const DegradeLock* lock = router->locked(r.session, now)) {
        ++cl.rep.lockHits;
        r.lockedRoute = true;
        if (lock->route >= 0 && tryModel(ri, static_cast<std::uint32_t>(lock->route), 0)) return;
        return degrade(ri, lock->route);
      }
    }
    if (tryModel(ri, cl.model, 0)) return;
    if (degrading) return degrade(ri, -3);
    attemptEnded(ri, lastFailure);
  }

  // Tries the instances of model group `m` (bulkhead budget, then breakers with re-picks);
  // true when the attempt was sent. On false, `lastFailure` says why.
  bool tryModel(std::uint32_t ri, std::uint32_t m, std::uint32_t trimmedTo) {
    Request& r = requests[ri];
    ClientState& cl = clients[r.client];
    ModelGroup& mg = models[m];
    r.trimmedTo = trimmedTo;  // the ground truth of a block sizes the call as it would be sent
    const std::size_t n = mg.instances.size();
    std::size_t k = pick(mg);
    if (mg.spec->maxRequests > 0 && mg.inFlight >= mg.spec->maxRequests) {
      // Over the group's budget (its bulkhead): a local 503 from the gateway before any
      // breaker is asked (Envoy checks cluster circuit breakers first). Not an instance
      // outcome, so no breaker records it; the picked instance's tick notes it.
      Instance& in = inst[mg.instances[k]];
      ++overflow;
      ++in.tick.overflow;
      in.tick.overflowSeen = true;
      ++cl.rep.overflow;
      if (m == cl.model) r.primaryFailed = true;
      lastFailure = Result::Error;
      return false;
    }
    bool anyBlocked = false;  // the scratch list is reset only when needed (rare path)
    for (std::size_t left = n; left > 0; --left) {
      const std::uint32_t i = mg.instances[k];
      Instance& in = inst[i];
      Decision d;
      if (opt.protection) d = engine.admit(in.eid, now);
      if (d.admitted) {
        r.probe = d.probe;
        r.model = m;
        r.trimmedTo = trimmedTo;
        if (r.lockedRoute && m == cl.model) ++cl.rep.misroutes;  // must never happen
        send(ri, i);
        return true;
      }
      const bool would = wouldSucceed(i, r);
      engine.noteBlocked(in.eid, would);
      if (m == cl.model) r.primaryFailed = true;  // the route it was picked for was unavailable
      ++rejectedBy[static_cast<int>(d.reason)];
      ++in.tick.rejected;
      ++in.rep.rejected;
      ++cl.rep.breakerBlocks;
      ++cl.tick.blocked;
      if (!anyBlocked) {
        tried_.assign(n, 0);
        anyBlocked = true;
      }
      tried_[k] = 1;
      if (left > 1) k = repick(mg);
    }
    lastFailure = Result::Rejected;
    return false;
  }

  // The primary cannot take the attempt: walk the capability-matched backups, then the last
  // resort (cache, fast-fail for non-critical, static answer). `locked`: the route a degrade
  // lock already tried (-3: none; kCache / kStatic: go straight to that resort).
  void degrade(std::uint32_t ri, std::int32_t locked) {
    Request& r = requests[ri];
    ClientState& cl = clients[r.client];
    r.primaryFailed = true;
    const bool mayUseBackups = cl.critical || router->config().nonCriticalBackups;
    if (mayUseBackups && locked != DegradeLock::kCache && locked != DegradeLock::kStatic) {
      router->plan(cl.model, cl.tags, static_cast<std::uint32_t>(r.inTokens), plan_);
      for (const RouteStep& step : plan_) {
        if (static_cast<std::int32_t>(step.model) == locked) continue;  // just tried
        if (tryModel(ri, step.model, step.trimmedTo)) {
          router->lock(r.session, static_cast<std::int32_t>(step.model), now);
          if (step.trimmedTo) ++cl.rep.trimmed;
          return;
        }
      }
    }
    const bool hit = cacheHit(r, cl);
    switch (router->lastResort(cl.critical, hit)) {
      case LastResort::Cache:
        router->lock(r.session, DegradeLock::kCache, now);
        r.model = kNone;                  // answered by the cache, not a model
        return finish(ri, End::Success);  // a cached answer: usable, at once
      case LastResort::FastFail:
        ++cl.rep.fastFail;
        ++degradeRejects[0];
        break;
      case LastResort::Static:
        router->lock(r.session, DegradeLock::kStatic, now);
        ++cl.rep.staticAnswers;
        ++degradeRejects[1];
        break;
      case LastResort::NoBackup:
        ++degradeRejects[2];
        break;
    }
    attemptEnded(ri, Result::Rejected);
  }

  bool cacheHit(const Request& r, const ClientState& cl) const {
    if (r.cacheKey < 0 || !router->config().cache) return false;
    const Micros at = cl.cachedAt[static_cast<std::size_t>(r.cacheKey)];
    return at != kNever && now - at <= router->config().cacheMaxAge;
  }

  // Share of the gateway's capacity in use (for shedding): attempts in flight over the sum of
  // the model groups' budgets (or their slots when a group has no budget).
  double gatewayLoad() const {
    double inFlight = 0, cap = 0;
    for (const ModelGroup& mg : models) {
      inFlight += mg.inFlight;
      cap += mg.spec->maxRequests > 0 ? mg.spec->maxRequests
                                      : static_cast<double>(mg.spec->slotCount) * mg.instances.size();
    }
    return cap > 0 ? inFlight / cap : 0;
  }
  // Busy share of all instances' slots (for adaptive limits).
  double saturation() const {
    if (!sc.policy.limits.adaptive) return 0;
    double busy = 0, slots = 0;
    for (const Instance& in : inst) busy += in.busy, slots += in.slots;
    return slots > 0 ? busy / slots : 0;
  }

  // After a breaker blocked an instance, the gateway picks again among the instances not
  // tried yet — as a load balancer does with an ejected host: least outstanding among the
  // rest, or a weighted random draw, so the blocked instance's share spreads evenly instead
  // of landing on its neighbour.
  std::size_t repick(ModelGroup& mg) {
    const std::size_t n = mg.instances.size();
    if (sc.routing == Routing::LeastOutstanding) {
      std::size_t best = n;
      for (std::size_t k = 0; k < n; ++k) {
        if (tried_[k]) continue;
        if (best == n || mg.outstanding[k] < mg.outstanding[best]) best = k;
      }
      return best;
    }
    double total = 0;
    for (std::size_t k = 0; k < n; ++k)
      if (!tried_[k]) total += inst[mg.instances[k]].weight;
    double x = gatewayRng.uniform() * total;
    std::size_t last = n;
    for (std::size_t k = 0; k < n; ++k) {
      if (tried_[k]) continue;
      last = k;
      x -= inst[mg.instances[k]].weight;
      if (x < 0) return k;
    }
    return last;
  }

  std::size_t pick(ModelGroup& mg) {
    const std::size_t n = mg.instances.size();
    switch (sc.routing) {
      case Routing::RoundRobin:
        return nextCursor(mg);
      case Routing::Weighted: {
        // Smooth weighted round robin (nginx): deterministic and evenly interleaved.
        std::size_t best = 0;
        for (std::size_t k = 0; k < n; ++k) {
          Instance& in = inst[mg.instances[k]];
          in.wrrCurrent += in.weight;
          if (in.wrrCurrent > inst[mg.instances[best]].wrrCurrent) best = k;
        }
        inst[mg.instances[best]].wrrCurrent -= mg.weightTotal;
        return best;
      }
      case Routing::LeastOutstanding:
        break;
    }
    // Least outstanding; ties go round robin so equal instances share the load.
    const std::size_t start = nextCursor(mg);
    const std::uint32_t* out = mg.outstanding.data();
    std::size_t best = start;
    std::uint32_t bestOut = out[start];
    for (std::size_t idx = start + 1; idx < n; ++idx)
      if (out[idx] < bestOut) bestOut = out[idx], best = idx;
    for (std::size_t idx = 0; idx < start; ++idx)
      if (out[idx] < bestOut) bestOut = out[idx], best = idx;
    return best;
  }

  static std::size_t nextCursor(ModelGroup& mg) {
    const std::size_t c = mg.rr;
    mg.rr = c + 1 == mg.instances.size() ? 0 : c + 1;
    return c;
  }

  // The attempt reaches instance i.
  void send(std::uint32_t ri, std::uint32_t i) {
    Request& r = requests[ri];
    ClientState& cl = clients[r.client];
    Instance& in = inst[i];
    const ModelSpec& ms = *models[in.model].spec;
    r.token = nextToken++;
    if (nextToken == 0) nextToken = 1;
    r.instance = i;
    r.attemptStart = now;
    r.deadline = now + cl.spec->timeout;
    if (cl.spec->deadline > 0) r.deadline = std::min(r.deadline, r.start + cl.spec->deadline);
    r.modelDeadline = false;
    if (degrading) {
      // Per-model upstream timeouts (seed 002): the gateway gives up on a slow model first
      // and may re-route while the caller still waits.
      const ModelProfile* prof = router->profile(in.model);
      if (prof && prof->timeout > 0 && now + prof->timeout < r.deadline) {
        r.deadline = now + prof->timeout;
        r.modelDeadline = true;
      }
    }
    r.timeoutArmed = false;
    ++models[in.model].outstanding[in.slot];
    ++cl.inFlight;
    ++models[in.model].inFlight;
    ++in.rep.attempts;
    ++cl.rep.attempts;
    ++cl.tick.attempts;
    if (!in.active.empty()) {
      const Effect fx = effectAt(in, now);
      if (fx.outage) return answer(ri, now + kRefuseLatency, 0, Outcome::Reset);
      if (in.rng.bernoulli(fx.resetP)) return answer(ri, now + kRefuseLatency, 0, Outcome::Reset);
      if (in.rng.bernoulli(fx.throttleP))
        return answer(ri, now + ms.errorLatency, 429, Outcome::Ok);
      if (in.rng.bernoulli(fx.errorP))
        return answer(ri, now + ms.errorLatency, fx.errorStatus, Outcome::Ok);
      if (in.rng.bernoulli(fx.hangP)) return hang(ri, i, fx.hangUntil);
    }
    // An HTTP answer with a 5xx status: whether it is a failure is the policy's `classify`.
    if (in.rng.bernoulli(ms.errorRate)) return answer(ri, now + ms.errorLatency, 500, Outcome::Ok);
    const double work = drawWork(in, r, in.rng);
    if (in.busy < in.slotsEff && in.queue.size() == 0) return startJob(i, ri, r.token, work);
    if (!in.queue.full()) {
      in.queue.push(QueueEntry{ri, r.token, r.deadline, work});
      armTimeout(ri);
      return;
    }
    ++in.tick.queueFull;
    in.tick.queueFullSeen = true;
    ++in.rep.queueFull;
    answer(ri, now + kRefuseLatency, ms.queueFullStatus, Outcome::Ok);
  }

  void armTimeout(std::uint32_t ri) {
    Request& r = requests[ri];
    if (r.timeoutArmed) return;
    r.timeoutArmed = true;
    agenda.push(r.deadline, kPrioTimeout, kTimeout, ri, r.token);
  }

  // A quick answer (error, throttle, reset, queue full) at `at` — unless the caller gives up
  // first.
  void answer(std::uint32_t ri, Micros at, int status, Outcome outcome) {
    Request& r = requests[ri];
    if (at >= r.deadline) return armTimeout(ri);
    r.status = status;
    r.outcome = outcome;
    agenda.push(at, kPrioDone, kResponse, ri, r.token);
  }

  // A hung call holds a slot (when one is free) until the fault ends; its caller times out.
  void hang(std::uint32_t ri, std::uint32_t i, Micros until) {
    Instance& in = inst[i];
    armTimeout(ri);
    if (in.busy >= in.slotsEff) return;
    ++in.busy;
    const std::uint32_t j = allocJob();
    jobs[j] =
        Job{i, kNone, 0, static_cast<std::uint32_t>(in.running.size()), std::min(until, endTime())};
    in.running.push_back(j);
    agenda.push(jobs[j].finish, kPrioDone, kJobDone, j);
  }

  void startJob(std::uint32_t i, std::uint32_t ri, std::uint32_t token, double work) {
    Instance& in = inst[i];
    ++in.busy;
    const Micros finish = now + serviceTime(in, work, in.busy, now);
    const std::uint32_t j = allocJob();
    jobs[j] = Job{i, ri, token, static_cast<std::uint32_t>(in.running.size()), finish};
    in.running.push_back(j);
    agenda.push(finish, kPrioDone, kJobDone, j);
    if (ri != kNone && requests[ri].token == token && finish > requests[ri].deadline)
      armTimeout(ri);
  }

  void onJobDone(std::uint32_t j) {
    const Job job = jobs[j];
    Instance& in = inst[job.instance];
    // Remove from the running list (swap with the last).
    const std::uint32_t last = in.running.back();
    in.running[job.pos] = last;
    jobs[last].pos = job.pos;
    in.running.pop_back();
    --in.busy;
    freeJobs.push_back(j);
    if (job.request != kNone && requests[job.request].token == job.token) {
      Request& r = requests[job.request];
      r.status = 200;
      r.outcome = Outcome::Ok;
      deliver(job.request);
    }
    startQueued(job.instance);
  }

  void startQueued(std::uint32_t i) {
    Instance& in = inst[i];
    const bool serveAbandoned = models[in.model].spec->serveAbandoned;
    while (in.busy < in.slotsEff && in.queue.size() > 0) {
      const QueueEntry e = in.queue.pop();
      const bool alive = requests[e.request].token == e.token;
      if (alive) {
        startJob(i, e.request, e.token, e.work);
      } else if (serveAbandoned) {
        startJob(i, kNone, 0, e.work);
      }
    }
  }

  void onResponse(std::uint32_t ri, std::uint32_t token) {
    if (requests[ri].token != token) return;
    deliver(ri);
  }

  // The gateway sees the instance's answer: record it into the engine, tell the caller.
  void deliver(std::uint32_t ri) {
    Request& r = requests[ri];
    Instance& in = inst[r.instance];
    const Micros latency = now - r.attemptStart;
    --models[in.model].outstanding[in.slot];
    --clients[r.client].inFlight;
    --models[in.model].inFlight;
    engine.record(in.eid, Decision{true, r.probe, RejectReason::None}, now, latency, r.status,
                  r.outcome);
    ++in.tick.responses;
    Result res = Result::Ok;
    if (r.outcome == Outcome::Reset) {
      res = Result::Reset;
    } else if (r.status == 429) {
      res = Result::Throttled;
    } else if (r.outcome == Outcome::Error || r.status >= 500) {
      res = Result::Error;
    }
    if (res != Result::Ok) {
      ++in.tick.failures;
      ++in.rep.failures;
    }
    r.token = 0;
    attemptEnded(ri, res);
  }

  void onTimeout(std::uint32_t ri, std::uint32_t token) {
    Request& r = requests[ri];
    if (r.token != token) return;
    Instance& in = inst[r.instance];
    --models[in.model].outstanding[in.slot];
    --clients[r.client].inFlight;
    --models[in.model].inFlight;
    engine.record(in.eid, Decision{true, r.probe, RejectReason::None}, now, now - r.attemptStart, 0,
                  Outcome::Timeout);
    ++in.tick.responses;
    ++in.tick.failures;
    ++in.rep.failures;
    r.token = 0;
    attemptEnded(ri, Result::Timeout);
  }

  void budgetTouch(ClientState& cl) {
    const std::int64_t epoch = now / seconds(10);
    if (epoch == cl.budgetEpoch) return;
    const bool adjacent = epoch == cl.budgetEpoch + 1;
    cl.budgetOrig[1] = adjacent ? cl.budgetOrig[0] : 0;
    cl.budgetRetry[1] = adjacent ? cl.budgetRetry[0] : 0;
    cl.gatewayReroutes[1] = adjacent ? cl.gatewayReroutes[0] : 0;
    cl.budgetOrig[0] = cl.budgetRetry[0] = cl.gatewayReroutes[0] = 0;
    cl.budgetEpoch = epoch;
  }

  void attemptEnded(std::uint32_t ri, Result res) {
    Request& r = requests[ri];
    ClientState& cl = clients[r.client];
    if (res == Result::Ok) return finish(ri, End::Success);
    r.primaryFailed = true;
    // The gateway's own re-route (within the caller's try): a failed answer from the primary,
    // or its upstream timeout, goes down the degrade chain once — within the retry budget.
    const bool upstreamFailure = res == Result::Error || res == Result::Reset ||
                                 res == Result::Throttled ||
                                 (res == Result::Timeout && r.modelDeadline);
    if (degrading && upstreamFailure && r.model == cl.model && !r.gatewayRerouted &&
        r.instance != kNone && rerouteAllowed(cl)) {
      r.gatewayRerouted = true;
      ++cl.gatewayReroutes[0];
      ++cl.rep.reroutes;
      return degrade(ri, -3);
    }
    const RetrySpec& rs = cl.spec->retries;
    const bool retriable =
        (res == Result::Error && rs.onError) || (res == Result::Reset && rs.onError) ||
        ((res == Result::Throttled || res == Result::Limited) && rs.onThrottle) ||
        (res == Result::Timeout && rs.onTimeout) || (res == Result::Rejected && rs.onRejected);
    const bool timeLeft = cl.spec->deadline == 0 || now < r.start + cl.spec->deadline;
    if (retriable && timeLeft && r.attempts <= rs.max) {
      bool allowed = true;
      if (rs.budget > 0) {
        // Retries may add at most `budget` × the originals of the last 10–20 s (at least 10).
        budgetTouch(cl);
        const double orig = static_cast<double>(cl.budgetOrig[0] + cl.budgetOrig[1]);
        const double retried = static_cast<double>(cl.budgetRetry[0] + cl.budgetRetry[1]);
        allowed = retried < std::max(10.0, rs.budget * orig);
        if (!allowed) ++cl.rep.retriesDenied;
      }
      if (allowed) {
        ++cl.budgetRetry[0];
        ++cl.rep.retries;
        ++cl.tick.retries;
        double b = static_cast<double>(rs.backoff) * std::pow(rs.multiplier, r.attempts - 1);
        b = std::min(b, static_cast<double>(rs.maxBackoff));
        switch (rs.jitter) {
          case RetrySpec::Jitter::None:
            break;
          case RetrySpec::Jitter::Full:
            b *= cl.retry.uniform();
            break;
          case RetrySpec::Jitter::Equal:
            b = b / 2 + b / 2 * cl.retry.uniform();
            break;
        }
        agenda.push(now + static_cast<Micros>(b), kPrioWork, kRetry, ri);
        return;
      }
    }
    End e = End::Error;
    if (res == Result::Timeout) e = End::Timeout;
    if (res == Result::Rejected) e = End::Rejected;
    if (res == Result::Limited) e = End::Shed;
    finish(ri, e);
  }

  // Gateway re-routes may add at most `degrade.retry_budget` × the originals of the last
  // 10–20 s (at least 10).
  bool rerouteAllowed(ClientState& cl) {
    budgetTouch(cl);
    const double orig = static_cast<double>(cl.budgetOrig[0] + cl.budgetOrig[1]);
    const double done = static_cast<double>(cl.gatewayReroutes[0] + cl.gatewayReroutes[1]);
    return done < std::max(10.0, router->config().retryBudget * orig);
  }

  void finish(std::uint32_t ri, End e) {
    Request& r = requests[ri];
    ClientState& cl = clients[r.client];
    const Micros e2e = now - r.start;
    ++cl.rep.ends[static_cast<int>(e)];
    ++cl.tick.finished;
    bool available = false;
    if (r.limitHeld) {
      // Settle with the limiter: the prompt was spent either way, the output only on success.
      limiter->complete(cl.limitKey, now, r.estTokens,
                        r.inTokens + (e == End::Success ? r.outTokens : 0.0));
      r.limitHeld = false;
    }
    if (e == End::Success) {
      if (r.model == kNone) {
        ++cl.rep.answeredBy[kTierCache];
      } else if (r.model == cl.model) {
        ++cl.rep.answeredBy[kTierPrimary];
      } else {
        ++cl.rep.answeredBy[kTierBackup];
        if (degrading) {
          const ModelProfile* prim = router->profile(cl.model);
          const ModelProfile* used = router->profile(r.model);
          if (prim && used && used->quality < prim->quality) ++cl.rep.qualityDrop;
        }
      }
      if (r.cacheKey >= 0 && r.model != kNone) cl.cachedAt[static_cast<std::size_t>(r.cacheKey)] = now;
      cl.e2e.add(static_cast<std::uint64_t>(e2e));
      if (opt.series) cl.tickE2e.add(static_cast<std::uint64_t>(e2e));
      answered.add(static_cast<std::uint64_t>(e2e));
      available = e2e <= cl.slo;
    } else {
      ++cl.tick.failed;
    }
    if (available) {
      ++cl.rep.availability.num;
      ++cl.tick.available;
    }
    ++cl.rep.availability.den;
    if (r.inFault) {
      ++cl.rep.availabilityInFault.den;
      if (available) ++cl.rep.availabilityInFault.num;
    }
    if (r.primaryFailed) {
      ++cl.rep.degradeSuccess.den;
      if (available) ++cl.rep.degradeSuccess.num;
    }
    const SessionSpec& ss = cl.spec->sessions;
    if (r.turnsLeft > 0) {
      --r.turnsLeft;
      const Micros think = static_cast<Micros>(cl.draws.exponential(static_cast<double>(ss.think)));
      if (now + think < sc.duration) {
        agenda.push(now + think, kPrioWork, kNextTurn, ri);
        return;
      }
    }
    --live;
    freeRequests.push_back(ri);
  }

  void onNextTurn(std::uint32_t ri) {
    Request& r = requests[ri];
    const ClientSpec& cs = *clients[r.client].spec;
    const double carried = cs.sessions.contextGrowth * (r.inTokens + r.outTokens);
    beginOriginal(ri, carried);
  }

  // Ground truth for a blocked attempt: would it have succeeded on instance i right now? The
  // instance is sampled without taking capacity: fault and error draws from the ground-truth
  // stream, then the exact FIFO start time given the running calls and the queue (later
  // arrivals cannot overtake it), then the call's own service time. Success = no failure,
  // within the caller's timeout, and not slow by the breaker's own threshold.
  bool wouldSucceed(std::uint32_t i, const Request& r) {
    Instance& in = inst[i];
    const ModelSpec& ms = *models[in.model].spec;
    const ClientSpec& cs = *clients[r.client].spec;
    if (!in.active.empty()) {
      const Effect fx = effectAt(in, now);
      if (fx.outage || in.gt.bernoulli(fx.resetP) || in.gt.bernoulli(fx.throttleP) ||
          in.gt.bernoulli(fx.errorP) || in.gt.bernoulli(fx.hangP))
        return false;
    }
    if (in.gt.bernoulli(ms.errorRate)) return false;
    const double work = drawWork(in, r, in.gt);
    if (in.slotsEff == 0) return false;  // no capacity left at all
    Micros start = now;
    std::uint32_t occupancy = in.busy + 1;
    if (in.busy >= in.slotsEff || in.queue.size() > 0) {
      if (in.queue.full()) return false;
      // Replay the FIFO: slots free at their jobs' finish times.
      std::priority_queue<Micros, std::vector<Micros>, std::greater<>> free;
      for (std::uint32_t j : in.running) free.push(jobs[j].finish);
      while (free.size() > in.slotsEff) free.pop();  // capacity shrank: extra jobs finish first
      while (free.size() < in.slotsEff) free.push(now);
      for (std::size_t q = 0; q < in.queue.size(); ++q) {
        const QueueEntry& e = in.queue.at(q);
        const Micros t = free.top();
        const bool alive = requests[e.request].token == e.token && t < e.deadline;
        if (!alive && !ms.serveAbandoned) continue;
        free.pop();
        free.push(t + serviceTime(in, e.work, in.slotsEff, t));
      }
      start = std::max(now, free.top());
      occupancy = in.slotsEff;
    }
    const Micros latency = start - now + serviceTime(in, work, occupancy, start);
    const Micros slow = engine.breaker(in.eid).slowThreshold();
    // The caller waits at most its per-try timeout, and never past its overall deadline.
    Micros limit = cs.timeout;
    if (cs.deadline > 0) limit = std::min(limit, r.start + cs.deadline - now);
    return latency < limit && latency <= slow;
  }

  // ---- ticks -------------------------------------------------------------------------------
  void onTick() {
    engine.advanceAll(now);
    const Micros grace = sc.policy.breaker.window.length;
    std::vector<std::uint32_t> spreading;  // healthy (unfaulted) instances that are unhealthy
    for (std::uint32_t i = 0; i < inst.size(); ++i) {
      Instance& in = inst[i];
      const Breaker& b = engine.breaker(in.eid);
      const BreakerConfig& cfg = b.config();
      std::uint32_t calls;
      double errorRate, slowRate;
      b.decisionRates(calls, errorRate, slowRate);
      const bool overThresholds =
          calls >= cfg.minCalls && (errorRate > cfg.trip.errorRate || slowRate > cfg.trip.slowRate);
      // A full gateway budget in front of the instance counts like its own queue being full.
      in.unhealthy = overThresholds || in.tick.queueFullSeen || in.tick.overflowSeen;
      if (in.unhealthy) in.rep.unhealthyTime += now - lastTick;
      // A spread target has no injected fault of its own, active or ended within the grace
      // period (an instance recovering from its own fault is not a victim of another).
      if (in.unhealthy && !ownFaultRecent(in, now, grace)) spreading.push_back(i);
      if (opt.series) {
        const BreakerSnapshot s = b.snapshot(now);
        InstanceTick row;
        row.t = now;
        row.instance = i;
        row.state = s.state;
        row.ramping = s.ramping;
        row.admitShare = s.admitShare;
        row.errorRate = s.errorRate;
        row.slowRate = s.slowRate;
        row.windowCalls = s.decision.calls;
        row.p99Ms = s.p99 / 1000.0;
        row.baselineP99Ms = s.baselineP99 / 1000.0;
        row.responses = in.tick.responses;
        row.failures = in.tick.failures;
        row.rejected = in.tick.rejected;
        row.queueFull = in.tick.queueFull;
        row.overflow = in.tick.overflow;
        row.busy = in.busy;
        row.queued = static_cast<std::uint32_t>(in.queue.size());
        row.outstanding = models[in.model].outstanding[in.slot];
        row.faultMultiplier = in.active.empty() ? 1.0 : effectAt(in, now).multiplier;
        row.faulted = !in.active.empty();
        row.unhealthy = in.unhealthy;
        opt.series->onInstance(row);
      }
      in.tick = TickCounters{};
    }
    if (!spreading.empty()) {
      for (Interval& iv : intervals) {
        if (iv.spread || now < iv.start) continue;
        if (iv.end != kForever && now > iv.end + grace) continue;
        iv.spread = true;
        iv.spreadTo = spreading.front();
        iv.spreadAt = now;
      }
    }
    for (ClientState& cl : clients) {
      if (opt.series) {
        cl.tick.t = now;
        cl.tick.p50Ms = percentileMs(cl.tickE2e, 0.5);
        cl.tick.p99Ms = percentileMs(cl.tickE2e, 0.99);
        opt.series->onClient(cl.tick);
      }
      if (opt.series) cl.tickE2e.clear();
      const std::uint32_t id = cl.tick.client;
      cl.tick = ClientTick{};
      cl.tick.client = id;
    }
    lastTick = now;
    if ((now >= sc.duration && live == 0) || now >= endTime()) {
      done = true;
      if (opt.series) opt.series->end();
      return;
    }
    agenda.push(now + sc.tick, kPrioTick, kTick, 0);
  }

  Micros endTime() const { return sc.duration + sc.drain; }

  bool ownFaultRecent(const Instance& in, Micros t, Micros grace) const {
    for (std::uint32_t k : in.intervals) {
      const Interval& iv = intervals[k];
      if (iv.start <= t && (iv.end == kForever || t <= iv.end + grace)) return true;
    }
    return false;
  }

  bool runUntil(Micros t) {
    clearUpperVectorState();
    while (!done && !agenda.empty() && agenda.top().time <= t) {
      const SimEvent e = agenda.pop();
      now = e.time;
      ++events;
      switch (e.kind) {
        case kArrival:
          onArrival(e.target, e.gen == 1);
          break;
        case kNextTurn:
          onNextTurn(e.target);
          break;
        case kRetry:
          dispatch(e.target);
          break;
        case kResponse:
          onResponse(e.target, e.gen);
          break;
        case kTimeout:
          onTimeout(e.target, e.gen);
          break;
        case kJobDone:
          onJobDone(e.target);
          break;
        case kEdge:
          onEdge(e.target);
          break;
        case kTick:
          onTick();
          break;
      }
    }
    if (agenda.empty()) done = true;
    return !done;
  }

  RunReport report() const;
};

RunReport Simulator::Impl::report() const {
  RunReport rep;
  rep.scenario = sc.name;
  rep.seed = sc.seed;
  rep.protection = opt.protection;
  rep.simulated = now;
  rep.originals = originals;
  rep.inFlightAtEnd = live;
  rep.events = events;
  rep.rejectedBy = rejectedBy;
  rep.overflow = overflow;
  LatencyHistogram all;
  for (const ClientState& cl : clients) {
    ClientReport c = cl.rep;
    c.p50Ms = percentileMs(cl.e2e, 0.5);
    c.p99Ms = percentileMs(cl.e2e, 0.99);
    c.latencySamples = cl.e2e.total();
    for (int k = 0; k < kEndCount; ++k) rep.ends[k] += c.ends[k];
    rep.attempts += c.attempts;
    rep.availability.num += c.availability.num;
    rep.availability.den += c.availability.den;
    rep.degradeSuccess.num += c.degradeSuccess.num;
    rep.degradeSuccess.den += c.degradeSuccess.den;
    rep.availabilityInFault.num += c.availabilityInFault.num;
    rep.availabilityInFault.den += c.availabilityInFault.den;
    if (c.criticality == Criticality::Core) {
      rep.coreAvailability.num += c.availability.num;
      rep.coreAvailability.den += c.availability.den;
      rep.coreAvailabilityInFault.num += c.availabilityInFault.num;
      rep.coreAvailabilityInFault.den += c.availabilityInFault.den;
    }
    all.merge(cl.e2e);
    rep.clients.push_back(std::move(c));
  }
  rep.limitedBy = limitedBy;
  rep.degradeRejects = degradeRejects;
  rep.degradeOn = degrading;
  rep.limitsOn = limiting;
  std::uint64_t successes = 0, drops = 0;
  for (const ClientReport& c : rep.clients) {
    for (int k = 0; k < 3; ++k) rep.answeredBy[k] += c.answeredBy[k];
    drops += c.qualityDrop;
    successes += c.ends[static_cast<int>(End::Success)];
    rep.trimmed += c.trimmed;
    rep.lockHits += c.lockHits;
    rep.misroutes += c.misroutes;
    rep.reroutes += c.reroutes;
  }
  rep.qualityDropShare = Ratio{drops, successes};
  if (degrading) rep.locksTaken = router->counters().locksTaken;
  if (limiting) {
    for (std::uint32_t t = 0; t < limiter->size(LimitScope::Tenant); ++t) {
      TenantReport tr;
      tr.name = limiter->name(LimitScope::Tenant, t);
      const LimitCounters& lc = limiter->counters(LimitScope::Tenant, t);
      tr.admitted = lc.admitted;
      tr.rejectedBy = lc.rejectedBy;
      tr.tokens = lc.tokens;
      if (const LimitRule* rule = limiter->rule(LimitScope::Tenant, t)) {
        tr.rate = rule->rate;
        tr.burst = rule->burst > 0 ? rule->burst : rule->rate;
        tr.tokensPerSecond = rule->tokensPerSecond;
        tr.maxConcurrent = rule->maxConcurrent;
      }
      rep.tenants.push_back(std::move(tr));
    }
  }
  rep.p50Ms = percentileMs(all, 0.5);
  rep.p99Ms = percentileMs(all, 0.99);
  rep.retryAmplification = Ratio{rep.attempts, rep.originals};
  std::uint64_t gw = 0;
  for (const ClientReport& c : rep.clients) gw += c.tries;
  rep.triesPerRequest = Ratio{gw, rep.originals};
  const EngineTotals tot = engine.totals();
  rep.falsePositive = Ratio{tot.blockedWouldSucceed, tot.verdicts};
  rep.opens = tot.opens;
  rep.wouldOpens = tot.wouldOpens;
  for (const Instance& in : inst) {
    InstanceReport ir = in.rep;
    // The snapshot adds the time spent in the current state since its last transition.
    const BreakerCounters bc = engine.breaker(in.eid).snapshot(now).counters;
    ir.opens = bc.opens;
    ir.timeIn = bc.timeIn;
    rep.queueFull += ir.queueFull;
    rep.instances.push_back(std::move(ir));
  }
  Micros ttdSum = 0, mttrSum = 0, tripSum = 0;
  int ttdN = 0, mttrN = 0;
  for (const Interval& iv : intervals) {
    const FaultSpec& fs = sc.faults[iv.fault];
    FaultReport fr;
    fr.kind = fs.kind;
    fr.target = fs.target;
    fr.instance = instanceNames[iv.instance];
    fr.start = iv.start;
    fr.ended = iv.end != kForever && iv.end <= now;
    fr.end = iv.end == kForever ? now : std::min(iv.end, now);
    if (iv.start > now) continue;  // not reached yet
    FaultInterval fi{inst[iv.instance].eid, iv.start, fr.ended ? iv.end : kForever - 1, ""};
    const FaultScore s = scoreFault(fi, tee.kept);
    fr.detected = s.detected;
    fr.restored = s.restored;
    fr.ttd = s.ttd;
    fr.mttr = s.mttr;
    fr.fromTrip = s.fromTrip;
    fr.recoveryLag = s.recoveryLag;
    fr.intercepted = !iv.spread;
    if (iv.spread) {
      fr.spreadTo = instanceNames[iv.spreadTo];
      fr.spreadAt = iv.spreadAt;
    }
    if (s.detected) {
      ttdSum += s.ttd;
      ++ttdN;
    }
    if (s.restored) {
      mttrSum += s.mttr;
      tripSum += s.fromTrip;
      ++mttrN;
    }
    ++rep.interception.den;
    if (fr.intercepted) ++rep.interception.num;
    rep.faults.push_back(std::move(fr));
  }
  if (ttdN) rep.meanTtd = ttdSum / ttdN;
  if (mttrN) {
    rep.meanMttr = mttrSum / mttrN;
    rep.meanFromTrip = tripSum / mttrN;
  }
  return rep;
}

Simulator::Simulator(const Scenario& scenario, SimOptions options)
    : d_(std::make_unique<Impl>(scenario, options)) {}
Simulator::~Simulator() = default;
bool Simulator::runUntil(Micros t) {
  return d_->runUntil(t);
}
void Simulator::run() {
  d_->runUntil(kForever);
}
Micros Simulator::now() const {
  return d_->now;
}
Micros Simulator::endTime() const {
  return d_->endTime();
}
bool Simulator::finished() const {
  return d_->done;
}
std::uint64_t Simulator::originals() const {
  return d_->originals;
}
std::uint64_t Simulator::eventsProcessed() const {
  return d_->events;
}
const Engine& Simulator::engine() const {
  return d_->engine;
}
const LatencyHistogram& Simulator::answeredLatency() const {
  return d_->answered;
}
RunReport Simulator::report() const {
  return d_->report();
}

RunReport simulate(const Scenario& scenario, SimOptions options) {
  Simulator s(scenario, options);
  s.run();
  return s.report();
}

}  // namespace spillway::sim
