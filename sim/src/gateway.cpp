// The gateway: limits, routing to an instance (breakers with re-picks, bulkheads), the degrade
// chain and its lock, the last resorts, and the gateway's own re-route budget.
#include "simulator_impl.hpp"

namespace spillway::sim {

// The gateway: pick an instance, ask its breaker; a blocked attempt moves on to the next
// instance of the model (the breaker ejects the instance from the pool); when every breaker
// blocks, the attempt fails fast.
void Simulator::Impl::dispatch(std::uint32_t ri) {
  Request& r = requests[ri];
  ClientState& cl = clients[r.client];
  if (cl.spec->deadline > 0 && now >= r.start + cl.spec->deadline)
    return finish(ri, End::Timeout);  // the backoff ate the rest of the deadline
  if (!gatewayIntervals.empty() && !r.gatewayDelayed && gatewayFault(ri)) return;
  r.gatewayDelayed = false;
  ++r.attempts;
  ++cl.rep.tries;
  if (cl.spec->concurrency > 0 && cl.inFlight >= cl.spec->concurrency) {
    // The caller's connection pool is exhausted: the attempt fails before leaving it.
    ++cl.rep.poolExhausted;
    return attemptEnded(ri, Result::PoolFull);
  }
  // Limits first (seed 001): a refused request never reaches routing. The original keeps
  // its admission across retries; it is released when the original ends.
  if (limiting && !r.limitHeld) {
    const LimitDecision d =
        limiter->admit(cl.limitKey, now, r.estTokens, cl.critical, gatewayLoad(), saturation());
    if (!d) {
      noteLimited(ri, d);
      return attemptEnded(ri, Result::Limited);
    }
    r.limitHeld = true;
  }
  r.quotaRefused = false;
  r.lockedRoute = false;
  r.costRouted = false;
  // A session never locked has nothing in the lock table: the lookup (a hash probe per
  // attempt) is skipped, with the same answer.
  if (degrading && r.sessionLocked) {
    // The degrade lock (seed 003): a degraded session stays on its degraded route — a
    // retry never jumps back to the broken primary.
    if (const DegradeLock* lock = router->locked(r.session, now)) {
      ++cl.rep.lockHits;
      r.lockedRoute = true;
      if (lock->route >= 0) {
        const std::uint32_t trim = trimFor(lock->route, r);
        // Under `context_overflow: skip`, a request too long for the locked backup does not
        // follow the lock there; the chain below finds one that can hold it.
        const bool fits = trim == 0 || router->config().contextOverflow == ContextOverflow::Trim;
        if (fits && tryModel(ri, static_cast<std::uint32_t>(lock->route), trim)) {
          r.degraded = true;
          if (trim) ++cl.rep.trimmed;
          return;
        }
      }
      return degrade(ri, lock->route);
    }
  }
  if (degrading && tryCheaper(ri)) return;
  if (tryModel(ri, cl.model, 0)) return;
  if (degrading) return degrade(ri, -3);
  attemptEnded(ri, lastFailure);
}

// Tries the instances of model group `m` (bulkhead budget, then breakers with re-picks);
// true when the attempt was sent. On false, `lastFailure` says why.
bool Simulator::Impl::tryModel(std::uint32_t ri, std::uint32_t m, std::uint32_t trimmedTo) {
  Request& r = requests[ri];
  ClientState& cl = clients[r.client];
  ModelGroup& mg = models[m];
  r.trimmedTo = trimmedTo;  // the ground truth of a block sizes the call as it would be sent
  const std::size_t n = mg.instances.size();
  std::size_t k = pick(mg);
  if ((mg.spec->maxRequests > 0 && mg.inFlight >= mg.spec->maxRequests) || sharedPoolFull()) {
    // Over the group's budget (its bulkhead) or the one pool all models share: a local 503
    // from the gateway before any breaker is asked (Envoy checks cluster circuit breakers
    // first). Not an instance outcome, so no breaker records it; the picked instance's tick
    // notes it.
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
    if (breakerLayer(opt)) d = engine.admit(in.eid, now);
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
    blocks.noteBlock(in.eid, now, would);
    if (m == cl.model) r.primaryFailed = true;  // the route it was picked for was unavailable
    ++rejectedBy[d.reason];
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

void Simulator::Impl::answerFromCache(std::uint32_t ri) {
  Request& r = requests[ri];
  r.sessionLocked = true;
  router->lock(r.session, DegradeLock::kCache, now);
  r.model = kNone;           // answered by the cache, not a model
  finish(ri, End::Success);  // a cached answer: usable, at once
}

// The primary cannot take the attempt: walk the capability-matched backups, then the last
// resort (cache, fast-fail for non-critical, static answer). `locked`: the route a degrade
// lock already tried (-3: none; kCache / kStatic: go straight to that resort).
void Simulator::Impl::degrade(std::uint32_t ri, std::int32_t locked) {
  Request& r = requests[ri];
  ClientState& cl = clients[r.client];
  r.primaryFailed = true;
  r.degraded = true;
  const bool mayUseBackups = cl.critical || router->config().nonCriticalBackups;
  const bool walk =
      mayUseBackups && locked != DegradeLock::kCache && locked != DegradeLock::kStatic;
  if (walk) {
    router->plan(cl.model, cl.tags, static_cast<std::uint32_t>(r.inTokens), plan_, cl.slaClass);
    for (const RouteStep& step : plan_) {
      if (step.model == RouteStep::kCache) {  // the SLA class puts the cache here
        if (cacheHit(r, cl)) return answerFromCache(ri);
        continue;
      }
      if (static_cast<std::int32_t>(step.model) == locked) continue;  // just tried
      if (tryModel(ri, step.model, step.trimmedTo)) {
        r.sessionLocked = true;
        router->lock(r.session, static_cast<std::int32_t>(step.model), now);
        if (step.trimmedTo) ++cl.rep.trimmed;
        return;
      }
    }
  }
  // A class's list already tried the cache where it put it (or excludes it).
  const bool cacheLeft =
      walk ? router->cacheAfterPlan(cl.slaClass) : router->cacheAllowed(cl.slaClass);
  const bool hit = cacheLeft && cacheHit(r, cl);
  switch (router->lastResort(cl.critical, hit)) {
    case LastResort::Cache:
      return answerFromCache(ri);
    case LastResort::FastFail:
      r.deliberate = true;
      ++cl.rep.fastFail;
      ++degradeRejects[0];
      break;
    case LastResort::Static:
      r.deliberate = true;
      r.sessionLocked = true;
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

// Faults on the gateway itself (seed 003's gateway-layer drills): CPU saturation holds the
// attempt `delay` before routing; an error or a connection reset ends it at the gateway, before
// limits and breakers (no instance saw it). A `drill_only` fault reaches drill-tagged clients
// only. True when the attempt was taken over.
bool Simulator::Impl::gatewayFault(std::uint32_t ri) {
  Request& r = requests[ri];
  ClientState& cl = clients[r.client];
  Micros delay = 0;
  double errorP = 0, resetP = 0;
  int status = 503;
  for (const Interval& iv : gatewayIntervals) {
    if (now < iv.start || now >= iv.end) continue;
    const FaultSpec& fs = sc.faults[iv.fault];
    if (fs.drillOnly && !cl.spec->drill) continue;
    if (fs.kind == FaultKind::Delay) delay += fs.delay;
    if (fs.kind == FaultKind::Errors) errorP = std::max(errorP, fs.value), status = fs.status;
    if (fs.kind == FaultKind::Reset) resetP = std::max(resetP, fs.value);
  }
  if (delay > 0) {
    ++cl.rep.gatewayFaultHits;
    r.gatewayDelayed = true;
    agenda.push(now + delay, kPrioWork, kRetry, ri);
    return true;
  }
  const bool reset = resetP > 0 && gatewayFaultRng.bernoulli(resetP);
  const bool error = !reset && errorP > 0 && gatewayFaultRng.bernoulli(errorP);
  if (!reset && !error) return false;
  ++cl.rep.gatewayFaultHits;
  ++r.attempts;
  ++cl.rep.tries;
  r.instance = kNone;  // no instance answered: nothing for the breakers, no gateway re-route
  r.status = status;
  attemptEnded(ri, reset ? Result::Reset : Result::Error);
  return true;
}

// A refusal by the limiter (seed 003's "限流又误杀了一部分正常请求"): a mis-kill when the
// primary group had a free slot on an instance its breaker admits and the call would have
// succeeded there (the breaker's ground truth, the client's SLO).
void Simulator::Impl::noteLimited(std::uint32_t ri, const LimitDecision& d) {
  Request& r = requests[ri];
  ClientState& cl = clients[r.client];
  ++limitedBy[d.reason];
  ++cl.rep.limited;
  ++limitRefusals;
  const int kind = d.reason == LimitReason::Shed ? 3 : static_cast<int>(d.scope);
  r.quotaRefused = kind == 0;
  if (capacityFree(cl.model, r)) {
    ++misKills;
    ++misKillBy[kind];
  }
}

bool Simulator::Impl::capacityFree(std::uint32_t m, const Request& r) {
  // Spare capacity: the instances the breakers admit have at least 10 % of their slots free
  // (a free slot here and there under a saturated group is not room for more), and the call
  // would have succeeded on the least busy of them.
  std::uint32_t free = 0, slots = 0, best = kNone, bestFree = 0;
  for (std::uint32_t i : models[m].instances) {
    const Instance& in = inst[i];
    const Breaker& b = engine.breaker(in.eid);
    const BreakerState s = b.state();
    const bool admits = s == BreakerState::MetricsOnly || s == BreakerState::Disabled ||
                        (s == BreakerState::Closed && !b.ramping());
    if (!admits) continue;
    slots += in.slotsEff;
    const std::uint32_t f =
        in.busy < in.slotsEff && in.queue.size() == 0 ? in.slotsEff - in.busy : 0;
    free += f;
    if (f > bestFree) best = i, bestFree = f;
  }
  if (best == kNone || 10 * free < slots) return false;
  return wouldSucceed(best, r, limitTruth);
}

// Cost routing (degrade.prefer_cheaper_for): a non-core or simple request goes to the
// cheapest capability-matched model that is cheaper than its primary, if one admits it.
bool Simulator::Impl::tryCheaper(std::uint32_t ri) {
  Request& r = requests[ri];
  ClientState& cl = clients[r.client];
  const DegradeConfig& dc = router->config();
  const bool simple = r.inTokens + r.outTokens <= dc.simpleMaxTokens;
  if (!((dc.cheaperForNonCore && !cl.critical) || (dc.cheaperForSimple && simple))) return false;
  router->plan(cl.model, cl.tags, static_cast<std::uint32_t>(r.inTokens), plan_);
  const RouteStep* best = nullptr;
  for (const RouteStep& step : plan_)
    if (costPerToken[step.model] < costPerToken[cl.model] &&
        (!best || costPerToken[step.model] < costPerToken[best->model]))
      best = &step;
  if (!best) return false;
  const RouteStep step = *best;
  r.costRouted = tryModel(ri, step.model, step.trimmedTo);
  return r.costRouted;
}

// The context a backup can take (0 = all of it), as the plan would trim it.
std::uint32_t Simulator::Impl::trimFor(std::int32_t model, const Request& r) const {
  const ModelProfile* p = router->profile(static_cast<ModelId>(model));
  if (!p || p->context == 0 || r.inTokens <= p->context) return 0;
  return p->context;
}

bool Simulator::Impl::cacheHit(const Request& r, const ClientState& cl) const {
  if (r.cacheKey < 0 || !router->config().cache) return false;
  const Micros at = cl.cachedAt[static_cast<std::size_t>(r.cacheKey)];
  return at != kNever && now - at <= router->config().cacheMaxAge;
}

// Without pool isolation (`shared_pool`), attempts in flight to every model count against one
// budget: a primary whose calls hang holds it, and its backups starve.
bool Simulator::Impl::sharedPoolFull() const {
  if (sc.sharedPool == 0) return false;
  std::uint64_t inFlight = 0;
  for (const ModelGroup& mg : models) inFlight += mg.inFlight;
  return inFlight >= sc.sharedPool;
}

// Share of the gateway's capacity in use (for shedding): attempts in flight over the sum of
// the model groups' budgets (or their slots when a group has no budget).
double Simulator::Impl::gatewayLoad() const {
  double inFlight = 0, cap = 0;
  for (const ModelGroup& mg : models) {
    inFlight += mg.inFlight;
    cap += mg.spec->maxRequests > 0 ? mg.spec->maxRequests
                                    : static_cast<double>(mg.spec->slotCount) * mg.instances.size();
  }
  return cap > 0 ? inFlight / cap : 0;
}

// Busy share of all instances' slots (for adaptive limits).
double Simulator::Impl::saturation() const {
  if (!sc.policy.limits.adaptive) return 0;
  double busy = 0, slots = 0;
  for (const Instance& in : inst) busy += in.busy, slots += in.slots;
  return slots > 0 ? busy / slots : 0;
}

// After a breaker blocked an instance, the gateway picks again among the instances not
// tried yet — as a load balancer does with an ejected host: least outstanding among the
// rest, or a weighted random draw, so the blocked instance's share spreads evenly instead
// of landing on its neighbour.
std::size_t Simulator::Impl::repick(ModelGroup& mg) {
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

std::size_t Simulator::Impl::pick(ModelGroup& mg) {
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
  // Least outstanding; ties go round robin so equal instances share the load: the first
  // instance with the fewest outstanding at or after the cursor, wrapping around.
  const std::size_t start = nextCursor(mg);
  if (mg.indexed) {
    const std::uint64_t hit = mg.withCount[mg.minOut];
    const std::uint64_t after = hit >> start;  // start < n <= 64
    return after ? start + static_cast<std::size_t>(std::countr_zero(after))
                 : static_cast<std::size_t>(std::countr_zero(hit));
  }
  const std::uint32_t* out = mg.outstanding.data();
  std::size_t best = start;
  std::uint32_t bestOut = out[start];
  for (std::size_t idx = start + 1; idx < n; ++idx)
    if (out[idx] < bestOut) bestOut = out[idx], best = idx;
  for (std::size_t idx = 0; idx < start; ++idx)
    if (out[idx] < bestOut) bestOut = out[idx], best = idx;
  return best;
}

std::size_t Simulator::Impl::nextCursor(ModelGroup& mg) {
  const std::size_t c = mg.rr;
  mg.rr = c + 1 == mg.instances.size() ? 0 : c + 1;
  return c;
}

// Gateway re-routes may add at most `degrade.retry_budget` × the originals of the last
// 10–20 s (at least 10).
bool Simulator::Impl::rerouteAllowed(ClientState& cl) {
  budgetTouch(cl);
  const double orig = static_cast<double>(cl.budgetOrig[0] + cl.budgetOrig[1]);
  const double done = static_cast<double>(cl.gatewayReroutes[0] + cl.gatewayReroutes[1]);
  return done < std::max(10.0, router->config().retryBudget * orig);
}

}  // namespace spillway::sim
