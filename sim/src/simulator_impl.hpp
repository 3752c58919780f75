#pragma once
// The simulator's internals, shared by its source files — one job each: simulator.cpp (setup,
// event loop, public API), clients.cpp, gateway.cpp, instances.cpp, ticks.cpp, run_report.cpp.
// Not installed, not part of the API.
#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/random/discrete_distribution.hpp>

#include "spillway/block_class.hpp"
#include "spillway/degrade.hpp"
#include "spillway/histogram.hpp"
#include "spillway/kpi.hpp"
#include "spillway/limits.hpp"
#include "spillway/platform.hpp"
#include "spillway/sim/bounded_fifo.hpp"
#include "spillway/sim/event_queue.hpp"
#include "spillway/sim/fault_effect.hpp"
#include "spillway/sim/random.hpp"
#include "spillway/sim/simulator.hpp"

namespace spillway::sim {
namespace detail {

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
constexpr int kByPrimary = 0, kByBackup = 1, kByCache = 2;
constexpr Micros kRefuseLatency = millis(1);  // connection refused / reset / queue full

// How one attempt ended, as the caller sees it.
// PoolFull: the caller's own connection pool had no room — the try never reached the gateway.
enum class Result : std::uint8_t {
  Ok,
  Error,
  Throttled,
  Timeout,
  Reset,
  Rejected,
  Limited,
  PoolFull
};

// One original request (and its current attempt). Hot and cold halves: the first cache line
// holds everything an attempt's end reads (the token check of a job or timeout, deliver,
// attemptEnded, finish), so completing a request that has been out of the cache for the length
// of a call costs one miss; the second holds what only its start or degradation and limits
// read.
struct alignas(64) Request {
  // ---- hot: read when an attempt ends
  std::uint32_t token = 0;  // current attempt; 0 = no attempt in flight
  std::uint32_t client = 0;
  std::uint32_t instance = kNone;
  std::uint32_t model = 0;  // model group of the current attempt
  Micros start = 0;         // of the original request
  Micros attemptStart = 0;
  Micros deadline = 0;
  int status = 0;              // pending fast answer
  std::uint32_t attempts = 0;  // attempts made (including rejected ones)
  std::uint32_t turnsLeft = 0;
  std::int32_t cacheKey = -1;  // -1 = not cacheable
  Outcome outcome = Outcome::Ok;
  bool probe = false;
  bool primaryFailed = false;
  bool timeoutArmed = false;
  bool inFault = false;          // the original started while an injected fault was active
  bool limitHeld = false;        // admitted by the limiter (released when the original ends)
  bool gatewayRerouted = false;  // the gateway already re-routed a failed try once
  bool modelDeadline = false;    // the attempt's deadline is the model's upstream timeout
  // ---- cold: the start of an original or an attempt, degradation and limits
  double inTokens = 0, outTokens = 0;
  double estTokens = 0;
  std::uint64_t session = 0;    // degrade-lock key: a conversation, or the request itself
  std::uint32_t trimmedTo = 0;  // context trimmed for a backup (0 = not)
  bool lockedRoute = false;     // the current attempt follows a degrade lock
  bool sessionLocked = false;   // a degrade lock was taken for this session (may have expired)
  bool thinking = false;        // answered; the session's next turn is not asked yet
  bool degraded = false;        // went down the degrade chain (backup, cache, static, fast-fail)
  bool deliberate = false;      // the chain ended in a configured resort (static, fast-fail)
  bool quotaRefused = false;    // the last try was refused by the tenant's quota
  bool costRouted = false;      // the current attempt went to a cheaper model by choice
  bool gatewayDelayed = false;  // the gateway's own delay fault already held this attempt
  bool tailCut = false;         // the model deadline is the long-tail cut (slow threshold)
};
static_assert(sizeof(Request) == 128, "a hot and a cold cache line");
static_assert(offsetof(Request, inTokens) == 64, "the hot fields fill the first line");

struct Job {
  std::uint32_t instance = 0, request = kNone, token = 0;
  std::uint32_t pos = 0;  // index in the instance's running list
  Micros finish = 0;
  Micros start = 0;  // the slot was taken (resource waste: how long it was held)
};

struct QueueEntry {
  std::uint32_t request = 0, token = 0;
  Micros deadline = 0;
  double work = 0;    // service time before batching, drift and delay (µs)
  double tokens = 0;  // what serving it costs (input + output), paid when it starts
};

// One injected fault on one instance, [start, end).
struct Interval {
  std::uint32_t fault = 0, instance = 0;
  Micros start = 0, end = kForever;
  bool byHand = false;  // ended by a `recover` (a manual fix), not by itself
  bool spread = false;
  std::uint32_t spreadTo = kNone;
  Micros spreadAt = 0;
};

// Answers of one model group's callers in one tick: the service's availability over time,
// for the service restoration time (kpis.md).
struct GroupTick {
  std::uint32_t finished = 0, available = 0;
  std::uint32_t coreFinished = 0, coreAvailable = 0;  // of the core callers
};

// The combined effect of the faults active on an instance at one moment.
// Capacity loss is applied where slots are counted (setCapacity), not through the effect.
using Effect = FaultEffect;

struct TickCounters {
  std::uint32_t responses = 0, failures = 0, rejected = 0, queueFull = 0, overflow = 0;
  std::uint32_t slowOverSlo = 0;  // answered, but later than the caller's SLO
  bool queueFullSeen = false, overflowSeen = false;
};

struct Instance {
  std::uint32_t model = 0;
  InstanceId eid = 0;
  std::uint32_t slots = 0, slotsEff = 0, busy = 0;
  std::uint32_t slot = 0;  // index within its model group (outstanding counts live there)
  double weight = 1, wrrCurrent = 0;
  BoundedFifo<QueueEntry> queue;
  std::vector<std::uint32_t> running;            // job ids
  std::vector<std::uint32_t> intervals, active;  // all / currently active interval ids
  Stream rng, gt;
  TickCounters tick;
  bool unhealthy = false;
  bool realFault = false;  // a non-benign injected fault is active
  // The spread judge's time-bounded window: the last `window` ticks' answers, and how many
  // ticks in a row the instance has been unhealthy.
  struct Health {
    std::uint32_t calls = 0, failures = 0, slow = 0;
    bool pressure = false;  // queue full or the gateway budget turned traffic away
  };
  std::vector<Health> healthRing;
  std::uint32_t unhealthyRun = 0;
  std::uint64_t judgedBefore = 0, wouldBefore = 0;  // block tally at the last tick
  // The ground truth's FIFO re-run (rerunFifo) depends only on the running jobs, the queue
  // and the faults in force; every change to those bumps `fifoEpoch`. While an open breaker
  // blocks call after call, the instance does not change between most of them, and the
  // re-run's answer is reused. (A queued caller giving up needs no bump: by then its deadline
  // has passed, and the re-run only counted it if a slot freed before that — a job end, which
  // bumped.)
  std::uint64_t fifoEpoch = 0;
  std::uint64_t rerunEpoch = ~std::uint64_t{0};  // fifoEpoch of rerunFree
  Micros rerunFree = 0;                          // when a new call would get a slot
  InstanceReport rep;
};

struct ClientState {
  const ClientSpec* spec = nullptr;
  std::uint32_t model = 0;
  Stream arrivals, draws, retry;
  Micros slo = 0;
  bool constantRate = false;   // no load profile: the rate is spec->rate, the mean gap meanGap
  double meanGap = 0;          // 1e6 / rate (µs)
  std::uint32_t inFlight = 0;  // attempts holding a connection of the caller's pool
  ClientReport rep;
  ClientTick tick;
  // Retry budget: retries and originals in the current and previous 10 s.
  std::int64_t budgetEpoch = -1;
  std::uint64_t budgetOrig[2] = {0, 0}, budgetRetry[2] = {0, 0};
  std::uint64_t gatewayReroutes[2] = {0, 0};  // the gateway's own re-routes, same windows
  LimitKey limitKey;
  TagMask tags = 0;
  bool critical = false;
  int slaClass = -1;       // the degrade router's index of the client's SLA class
  Micros classBudget = 0;  // its latency budget (0: no class)
  std::optional<boost::random::discrete_distribution<std::uint32_t, double>> keys;  // Zipf
  std::vector<Micros> cachedAt;  // when each key was last answered (kNever: never)
  std::uint64_t sessions = 0;
  // Last: 7 KB each. Ahead of the counters, they put every request's client fields on lines
  // 14 KB apart.
  LatencyHistogram e2e, tickE2e;
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
  // Least-outstanding routing over at most 64 instances keeps, per outstanding count, a bit
  // set of the instances with that count, and the smallest count in use: a pick is then a
  // shift and a count-trailing-zeros instead of a scan of every instance.
  bool indexed = false;
  std::uint32_t minOut = 0;
  std::vector<std::uint64_t> withCount;  // withCount[v]: bit k = instance k has v outstanding

  void index() {
    indexed = true;
    minOut = 0;
    withCount.assign(8, 0);
    for (std::size_t k = 0; k < outstanding.size(); ++k) {
      if (outstanding[k] >= withCount.size()) withCount.resize(outstanding[k] + 1, 0);
      withCount[outstanding[k]] |= std::uint64_t{1} << k;
    }
    while (!withCount[minOut]) ++minOut;
  }
  void addOutstanding(std::uint32_t k) {
    const std::uint32_t v = outstanding[k]++;
    if (!indexed) return;
    const std::uint64_t bit = std::uint64_t{1} << k;
    if (v + 1 >= withCount.size()) withCount.resize(2 * withCount.size(), 0);
    withCount[v] &= ~bit;
    withCount[v + 1] |= bit;
    if (v == minOut && !withCount[v]) minOut = v + 1;
  }
  void dropOutstanding(std::uint32_t k) {
    const std::uint32_t v = outstanding[k]--;
    if (!indexed) return;
    const std::uint64_t bit = std::uint64_t{1} << k;
    withCount[v] &= ~bit;
    withCount[v - 1] |= bit;
    if (v - 1 < minOut) minOut = v - 1;
  }
};

// Fans breaker events out to the caller's sink, keeps them for fault scoring and tells the
// block classifier where episodes start and end.
class Tee final : public EventSink {
 public:
  Tee(EventSink* next, BlockClassifier* blocks) : next_(next), blocks_(blocks) {}
  void onEvent(const Event& e) override {
    kept.push_back(e);
    blocks_->onEvent(e);
    if (next_) next_->onEvent(e);
  }
  std::vector<Event> kept;

 private:
  EventSink* next_;
  BlockClassifier* blocks_;
};

inline bool breakerLayer(const SimOptions& o) {
  return o.protection && o.layers.breaker;
}

inline Policy effectivePolicy(const Scenario& s, const SimOptions& o) {
  Policy p = s.policy;
  if (!breakerLayer(o)) p.breaker.mode = BreakerMode::MetricsOnly;
  return p;
}

inline double percentileMs(const LatencyHistogram& h, double q) {
  return h.total() ? h.quantile(q) / 1000.0 : 0.0;
}

}  // namespace detail

using namespace detail;

struct Simulator::Impl {
  const Scenario& sc;
  SimOptions opt;
  BlockClassifier blocks;  // the scenario's real faults, every breaker block classified
  Tee tee;
  Engine engine;
  Agenda agenda;
  Stream gatewayRng;
  Stream limitTruth;                       // the limiter's ground truth draws (see misKills)
  Stream gatewayFaultRng;                  // draws of faults on the gateway itself
  std::vector<Interval> gatewayIntervals;  // faults on the gateway (target: gateway)
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
  RejectCounts rejectedBy{};
  std::uint64_t overflow = 0;
  std::uint32_t activeFaults = 0;  // instances with a real (non-benign) fault right now
  Micros now = 0, lastTick = 0;
  bool done = false;
  std::vector<std::string> instanceNames, clientNames;
  LatencyHistogram answered;  // answeredLatency()'s result, merged from the clients on request
  std::vector<std::uint8_t> tried_;  // scratch for dispatch
  std::vector<Micros> gtScratch_;    // scratch for the ground truth's FIFO re-run
  // Degradation and limits (off in the baseline: a plain forwarder has neither).
  std::optional<Limiter> limiter;
  std::optional<DegradeRouter> router;
  bool limiting = false, degrading = false;
  std::vector<RouteStep> plan_;  // scratch for degrade
  Result lastFailure = Result::Rejected;
  LimitCounts limitedBy{};
  std::array<std::uint64_t, 3> degradeRejects{};  // fast_fail, static, no_backup
  // Seed 001 / 002 / 003 figures: slot time held and wasted (µs), limiter mis-kills (with
  // their own ground-truth stream, so the breaker's verdicts draw the same numbers as
  // without limits), model cost, and per model group its cost per token and load.
  std::uint64_t slotTime = 0, wastedSlotTime = 0;
  std::uint64_t limitRefusals = 0, misKills = 0;
  std::array<std::uint64_t, 4> misKillBy{};  // tenant quota, route, model, shed
  double cost = 0;
  bool costed = false;
  std::vector<double> costPerToken;  // by model group

  Impl(const Scenario& s, SimOptions o)
      : sc(s),
        opt(o),
        tee(o.events, &blocks),
        engine(effectivePolicy(s, o), s.seed, &tee),
        gatewayRng(s.seed, "gateway"),
        limitTruth(s.seed, "limiter-truth"),
        gatewayFaultRng(s.seed, "gateway-faults") {
    agenda.setPrefetch(&prefetchFor, this);  // Impl lives behind a pointer: `this` stays put
    build();
  }

  void build();

  void buildDegradeAndLimits();
  void answerFromCache(std::uint32_t ri);
  bool sharedPoolFull() const;
  void resolveSlaClass(ClientState& cl);

  void buildFaults();

  void onEdge(std::uint32_t i);

  Effect effectAt(const Instance& in, Micros t) const;

  double drawWork(Instance& in, const Request& r, Stream& s) const;
  double batchFactor(const Instance& in, std::uint32_t occupancy) const;
  Micros serviceTime(const Instance& in, double work, std::uint32_t occupancy, Micros t) const;

  // Free lists (last freed, first reused: its lines are the likeliest to be cached).
  static void prefetchFor(const void* context, const SimEvent& e);
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

  double rateAt(const ClientSpec& cs, Micros t) const;

  void scheduleArrival(std::uint32_t c, Micros from);

  void onArrival(std::uint32_t c, bool probeOnly);

  void beginOriginal(std::uint32_t ri, double carried);

  void dispatch(std::uint32_t ri);

  bool tryModel(std::uint32_t ri, std::uint32_t m, std::uint32_t trimmedTo);

  void degrade(std::uint32_t ri, std::int32_t locked);

  std::uint32_t trimFor(std::int32_t model, const Request& r) const;

  bool cacheHit(const Request& r, const ClientState& cl) const;

  double gatewayLoad() const;
  double saturation() const;

  std::size_t repick(ModelGroup& mg);

  std::size_t pick(ModelGroup& mg);

  static std::size_t nextCursor(ModelGroup& mg);

  void send(std::uint32_t ri, std::uint32_t i);

  void armTimeout(std::uint32_t ri);

  void answer(std::uint32_t ri, Micros at, int status, Outcome outcome);

  void hang(std::uint32_t ri, std::uint32_t i, Micros until);

  void startJob(std::uint32_t i, std::uint32_t ri, std::uint32_t token, double work, double tokens);

  void onJobDone(std::uint32_t j);

  void startQueued(std::uint32_t i);

  void onResponse(std::uint32_t ri, std::uint32_t token);

  void deliver(std::uint32_t ri);

  void onTimeout(std::uint32_t ri, std::uint32_t token);

  void budgetTouch(ClientState& cl);

  void attemptEnded(std::uint32_t ri, Result res);

  bool rerouteAllowed(ClientState& cl);

  void finish(std::uint32_t ri, End e);

  void onNextTurn(std::uint32_t ri);

  bool wouldSucceed(std::uint32_t i, const Request& r) { return wouldSucceed(i, r, inst[i].gt); }
  bool wouldSucceed(std::uint32_t i, const Request& r, Stream& draws);
  bool capacityFree(std::uint32_t m, const Request& r);
  void noteLimited(std::uint32_t ri, const LimitDecision& d);
  bool tryCheaper(std::uint32_t ri);
  void updateLoads();
  bool gatewayFault(std::uint32_t ri);
  Micros rerunFifo(const Instance& in, const ModelSpec& ms);

  void onTick();

  Micros endTime() const { return sc.duration + sc.drain; }

  bool ownFaultRecent(const Instance& in, Micros t, Micros grace) const;
  // Whether a fault on model group `from` can load model group `to`: the same group, or one
  // that takes its degraded traffic.
  bool reaches(std::uint32_t from, std::uint32_t to) const;
  std::size_t healthWindowTicks() const;
  bool judgeHealth(Instance& in, std::size_t window, std::uint64_t tickNo);
  std::uint64_t lastTickNo = 0;

  bool runUntil(Micros t);

  std::uint64_t unanswered(bool overdueOnly) const;

  RunReport report() const;
  std::optional<Micros> serviceRestoration(const Interval& iv, bool* left) const;
  std::optional<Micros> serviceSpreadAt(const Interval& iv) const;

  // Per model group, per tick; kept only when the scenario has real faults.
  std::vector<std::vector<GroupTick>> groupHistory;
  std::vector<GroupTick> groupTick;
};

}  // namespace spillway::sim
