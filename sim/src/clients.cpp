// Business systems: arrivals (profiles, sessions), request sizes, retries with backoff and
// budgets, and how each original request ends.
#include "simulator_impl.hpp"

namespace spillway::sim {

double Simulator::Impl::rateAt(const ClientSpec& cs, Micros t) const {
  return clientRateAt(cs, t);
}

double clientRateAt(const ClientSpec& cs, Micros t) {
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
void Simulator::Impl::scheduleArrival(std::uint32_t c, Micros from) {
  ClientState& cl = clients[c];
  // A client without a load profile has one rate and one mean gap (computed once, the same
  // double as here).
  const double rate = cl.constantRate ? cl.spec->rate : rateAt(*cl.spec, from);
  const Micros recheck = from + sc.tick;
  // No rate, or a gap past the next tick: only look again then. The gap is compared before it
  // becomes an integer: a rate of 1e-20 draws gaps of 1e26 µs, past int64 (which made them
  // 1 µs, a flood).
  bool probe = true;
  Micros next = recheck;
  if (rate > 0) {
    const double meanGap = cl.constantRate ? cl.meanGap : 1e6 / rate;
    const double gap = cl.arrivals.exponential(meanGap);
    if (gap <= static_cast<double>(sc.tick)) {
      next = from + std::max<Micros>(1, static_cast<Micros>(gap));
      probe = next > recheck;
      if (probe) next = recheck;
    }
  }
  if (next < sc.duration) agenda.pushArrival(next, kPrioWork, kArrival, c, probe ? 1 : 0);
}

void Simulator::Impl::onArrival(std::uint32_t c, bool probeOnly) {
  scheduleArrival(c, now);
  if (probeOnly) return;
  ClientState& cl = clients[c];
  const std::uint32_t ri = allocRequest();
  Request& r = requests[ri];
  static constexpr Request kFresh{};
  r = kFresh;  // a block copy (Request{} is built field by field)
  r.client = c;
  const SessionSpec& ss = cl.spec->sessions;
  r.turnsLeft = ss.turns > 0 ? cl.draws.geometric(ss.turns) - 1 : 0;
  r.session = (static_cast<std::uint64_t>(c) << 40) | ++cl.sessions;
  ++live;
  beginOriginal(ri, 0);
}

void Simulator::Impl::beginOriginal(std::uint32_t ri, double carried) {
  Request& r = requests[ri];
  ClientState& cl = clients[r.client];
  const ClientSpec& cs = *cl.spec;
  r.start = now;
  r.attempts = 0;
  r.primaryFailed = false;
  r.degraded = false;
  r.deliberate = false;
  r.quotaRefused = false;
  r.costRouted = false;
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
  if (cl.keys) r.cacheKey = static_cast<std::int32_t>((*cl.keys)(cl.draws));
  ++originals;
  ++cl.rep.originals;
  ++cl.tick.originals;
  budgetTouch(cl);
  ++cl.budgetOrig[0];
  dispatch(ri);
}

void Simulator::Impl::budgetTouch(ClientState& cl) {
  const std::int64_t epoch = now / seconds(10);
  if (epoch == cl.budgetEpoch) return;
  const bool adjacent = epoch == cl.budgetEpoch + 1;
  cl.budgetOrig[1] = adjacent ? cl.budgetOrig[0] : 0;
  cl.budgetRetry[1] = adjacent ? cl.budgetRetry[0] : 0;
  cl.gatewayReroutes[1] = adjacent ? cl.gatewayReroutes[0] : 0;
  cl.budgetOrig[0] = cl.budgetRetry[0] = cl.gatewayReroutes[0] = 0;
  cl.budgetEpoch = epoch;
}

void Simulator::Impl::attemptEnded(std::uint32_t ri, Result res) {
  Request& r = requests[ri];
  ClientState& cl = clients[r.client];
  if (res == Result::Ok) return finish(ri, End::Success);
  // Primary route unavailable (kpis.md): a failed or timed-out try, or a block — not a refusal
  // by the limiter, nor the caller's own full pool.
  if (res != Result::Limited && res != Result::PoolFull) r.primaryFailed = true;
  // The gateway's own re-route (within the caller's try): a failed answer from the primary,
  // or its upstream timeout, goes down the degrade chain once — within the retry budget.
  const bool upstreamFailure = res == Result::Error || res == Result::Reset ||
                               res == Result::Throttled ||
                               (res == Result::Timeout && r.modelDeadline);
  if (degrading && upstreamFailure && (cl.critical || router->config().nonCriticalBackups) &&
      r.model == cl.model && !r.gatewayRerouted && r.instance != kNone && rerouteAllowed(cl)) {
    r.gatewayRerouted = true;
    ++cl.gatewayReroutes[0];
    ++cl.rep.reroutes;
    return degrade(ri, -3);
  }
  const RetrySpec& rs = cl.spec->retries;
  const bool retriable =
      (res == Result::Error && rs.onError) || (res == Result::Reset && rs.onError) ||
      (res == Result::PoolFull && rs.onError) ||
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

void Simulator::Impl::finish(std::uint32_t ri, End e) {
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
      ++cl.rep.answeredBy[kByCache];
    } else if (r.model == cl.model) {
      ++cl.rep.answeredBy[kByPrimary];
    } else if (r.costRouted) {
      ++cl.rep.costRouted;  // by choice (cost routing), not a fallback
    } else {
      ++cl.rep.answeredBy[kByBackup];
      if (degrading) {
        const ModelProfile* prim = router->profile(cl.model);
        const ModelProfile* used = router->profile(r.model);
        if (prim && used && used->quality < prim->quality) ++cl.rep.qualityDrop;
        if (used) ++cl.rep.backupByTier[std::clamp(used->tier, 1, 4) - 1];
      }
    }
    if (r.cacheKey >= 0 && r.model != kNone)
      cl.cachedAt[static_cast<std::size_t>(r.cacheKey)] = now;
    cl.e2e.add(static_cast<std::uint64_t>(e2e));
    if (opt.series) cl.tickE2e.add(static_cast<std::uint64_t>(e2e));
    available = e2e <= cl.slo;
  } else {
    ++cl.tick.failed;
  }
  if (available) {
    ++cl.rep.availability.num;
    ++cl.tick.available;
  }
  if (!groupTick.empty()) {
    GroupTick& g = groupTick[cl.model];
    ++g.finished;
    g.available += available;
    if (cl.critical) {
      ++g.coreFinished;
      g.coreAvailable += available;
    }
  }
  ++cl.rep.availability.den;
  // SLA attainment over in-quota traffic (seed 001): a refusal by the tenant's own quota is
  // the quota working, reported beside it, not an SLA miss.
  if (e == End::Shed && r.quotaRefused) {
    ++cl.rep.quotaRefused;
  } else {
    ++cl.rep.slaInQuota.den;
    if (available) ++cl.rep.slaInQuota.num;
    if (cl.classBudget > 0) {
      ++cl.rep.withinClassBudget.den;
      if (e == End::Success && e2e <= cl.classBudget) ++cl.rep.withinClassBudget.num;
    }
  }
  // Degrade switch (seed 003): the request really took the degraded path — a backup or cache
  // answer, or a configured resort (static answer, fast-fail) — whatever its latency.
  if (r.degraded) {
    ++cl.rep.degradeSwitch.den;
    const bool degradedAnswer = e == End::Success && r.model != cl.model && !r.costRouted;
    if (degradedAnswer || r.deliberate) ++cl.rep.degradeSwitch.num;
  }
  if (r.inFault) {
    ++cl.rep.availabilityInFault.den;
    if (available) ++cl.rep.availabilityInFault.num;
  }
  // Degradation is the chain (kpis.md); a retry or re-pick within the group is its own row.
  Ratio& route = r.degraded ? cl.rep.degradeSuccess : cl.rep.reroutedSuccess;
  if (r.primaryFailed || r.degraded) {
    ++route.den;
    if (available) ++route.num;
  }
  const SessionSpec& ss = cl.spec->sessions;
  if (r.turnsLeft > 0) {
    --r.turnsLeft;
    const Micros think = static_cast<Micros>(cl.draws.exponential(static_cast<double>(ss.think)));
    if (now + think < sc.duration) {
      r.thinking = true;
      agenda.push(now + think, kPrioWork, kNextTurn, ri);
      return;
    }
  }
  --live;
  freeRequests.push_back(ri);
}

void Simulator::Impl::onNextTurn(std::uint32_t ri) {
  Request& r = requests[ri];
  const ClientSpec& cs = *clients[r.client].spec;
  const double carried = cs.sessions.contextGrowth * (r.inTokens + r.outTokens);
  r.thinking = false;
  beginOriginal(ri, carried);
}

}  // namespace spillway::sim
