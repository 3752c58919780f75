// Model instances: faults in force, service times (tokens, batching knee, drift), slots and
// the bounded queue, answers and caller timeouts, and the ground truth for blocked calls.
#include "simulator_impl.hpp"

namespace spillway::sim {

// ---- faults ------------------------------------------------------------------------------
void Simulator::Impl::onEdge(std::uint32_t i) {
  Instance& in = inst[i];
  ++in.fifoEpoch;
  if (in.realFault) --activeFaults;
  in.active.clear();
  in.realFault = false;
  double capacity = 1.0;
  for (std::uint32_t k : in.intervals) {
    const Interval& iv = intervals[k];
    if (iv.start <= now && now < iv.end) {
      in.active.push_back(k);
      const FaultSpec& fs = sc.faults[iv.fault];
      in.realFault = in.realFault || !fs.benign;
      if (fs.kind == FaultKind::CapacityLoss) capacity = std::min(capacity, fs.value);
    }
  }
  if (in.realFault) ++activeFaults;
  in.slotsEff = std::max<std::uint32_t>(
      capacity >= 1.0 ? in.slots : static_cast<std::uint32_t>(std::floor(in.slots * capacity)),
      capacity > 0 ? 1u : 0u);
  startQueued(i);
}

Effect Simulator::Impl::effectAt(const Instance& in, Micros t) const {
  Effect fx;
  for (std::uint32_t k : in.active) {
    const Interval& iv = intervals[k];
    addFaultEffect(fx, sc.faults[iv.fault], iv.start, iv.end, t);
  }
  return fx;
}

// Per-request service work (µs) before batching, drift and delay.
double Simulator::Impl::drawWork(Instance& in, const Request& r, Stream& s) const {
  const ModelSpec& ms = *models[in.model].spec;
  const double input = r.trimmedTo ? std::min<double>(r.inTokens, r.trimmedTo) : r.inTokens;
  const double base =
      static_cast<double>(ms.baseTime) + ms.perInputToken * input + ms.perOutputToken * r.outTokens;
  return s.lognormal(base, ms.sigma);
}

double Simulator::Impl::batchFactor(const Instance& in, std::uint32_t occupancy) const {
  const Batching& b = models[in.model].spec->batching;
  if (b.knee == 0 || occupancy <= b.knee) return 1.0;
  return 1.0 + b.slope * static_cast<double>(occupancy - b.knee);
}

Micros Simulator::Impl::serviceTime(const Instance& in, double work, std::uint32_t occupancy,
                                    Micros t) const {
  double d = work * batchFactor(in, occupancy);
  Micros delay = 0;
  if (!in.active.empty()) {
    const Effect fx = effectAt(in, t);
    d *= fx.multiplier;
    delay = fx.delay;
  }
  return std::max<Micros>(1, static_cast<Micros>(d) + delay);
}

// The attempt reaches instance i.
void Simulator::Impl::send(std::uint32_t ri, std::uint32_t i) {
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
    r.tailCut = false;
    // Long-tail truncation (seed 001, 4.3 "长尾请求截断"): the gateway cuts the attempt at its
    // instance's slow threshold (k × the P99 baseline, once learned) and degrades the request
    // while the caller still waits.
    if (router->config().truncateTail) {
      const Micros cut = engine.breaker(in.eid).slowThreshold();
      if (cut != kForever && now + cut < r.deadline) {
        r.deadline = now + cut;
        r.modelDeadline = r.tailCut = true;
      }
    }
  }
  r.timeoutArmed = false;
  models[in.model].addOutstanding(in.slot);
  ++cl.inFlight;
  ++models[in.model].inFlight;
  ++in.rep.attempts;
  ++cl.rep.attempts;
  ++cl.tick.attempts;
  if (!in.active.empty()) {
    const Effect fx = effectAt(in, now);
    if (fx.outage) return answer(ri, now + kRefuseLatency, 0, Outcome::Reset);
    if (in.rng.bernoulli(fx.resetP)) return answer(ri, now + kRefuseLatency, 0, Outcome::Reset);
    if (in.rng.bernoulli(fx.throttleP)) return answer(ri, now + ms.errorLatency, 429, Outcome::Ok);
    if (in.rng.bernoulli(fx.errorP))
      return answer(ri, now + ms.errorLatency, fx.errorStatus, Outcome::Ok);
    if (in.rng.bernoulli(fx.hangP)) return hang(ri, i, fx.hangUntil);
  }
  // An HTTP answer with a 5xx status: whether it is a failure is the policy's `classify`.
  if (in.rng.bernoulli(ms.errorRate)) return answer(ri, now + ms.errorLatency, 500, Outcome::Ok);
  const double work = drawWork(in, r, in.rng);
  if (in.busy < in.slotsEff && in.queue.size() == 0)
    return startJob(i, ri, r.token, work, r.inTokens + r.outTokens);
  if (!in.queue.full()) {
    in.queue.push(QueueEntry{ri, r.token, r.deadline, work, r.inTokens + r.outTokens});
    ++in.fifoEpoch;
    armTimeout(ri);
    return;
  }
  ++in.tick.queueFull;
  in.tick.queueFullSeen = true;
  ++in.rep.queueFull;
  answer(ri, now + kRefuseLatency, ms.queueFullStatus, Outcome::Ok);
}

void Simulator::Impl::armTimeout(std::uint32_t ri) {
  Request& r = requests[ri];
  if (r.timeoutArmed) return;
  r.timeoutArmed = true;
  agenda.push(r.deadline, kPrioTimeout, kTimeout, ri, r.token);
}

// A quick answer (error, throttle, reset, queue full) at `at` — unless the caller gives up
// first.
void Simulator::Impl::answer(std::uint32_t ri, Micros at, int status, Outcome outcome) {
  Request& r = requests[ri];
  if (at >= r.deadline) return armTimeout(ri);
  r.status = status;
  r.outcome = outcome;
  agenda.push(at, kPrioDone, kResponse, ri, r.token);
}

// A hung call holds a slot (when one is free) until the fault ends; its caller times out.
void Simulator::Impl::hang(std::uint32_t ri, std::uint32_t i, Micros until) {
  Instance& in = inst[i];
  armTimeout(ri);
  if (in.busy >= in.slotsEff) return;
  ++in.busy;
  ++in.fifoEpoch;
  const std::uint32_t j = allocJob();
  jobs[j] = Job{
      i, kNone, 0, static_cast<std::uint32_t>(in.running.size()), std::min(until, endTime()), now};
  in.running.push_back(j);
  agenda.push(jobs[j].finish, kPrioDone, kJobDone, j, kNone);
}

void Simulator::Impl::startJob(std::uint32_t i, std::uint32_t ri, std::uint32_t token, double work,
                               double tokens) {
  Instance& in = inst[i];
  ++in.busy;
  ++in.fifoEpoch;
  cost += costPerToken[in.model] * tokens;
  const Micros finish = now + serviceTime(in, work, in.busy, now);
  const std::uint32_t j = allocJob();
  jobs[j] = Job{i, ri, token, static_cast<std::uint32_t>(in.running.size()), finish, now};
  in.running.push_back(j);
  // gen, aux: the request and the instance's breaker, to prefetch (simulator.cpp)
  agenda.push(finish, kPrioDone, kJobDone, j, ri, in.eid);
  if (ri != kNone && requests[ri].token == token && finish > requests[ri].deadline) armTimeout(ri);
}

void Simulator::Impl::onJobDone(std::uint32_t j) {
  const Job job = jobs[j];
  Instance& in = inst[job.instance];
  // Remove from the running list (swap with the last).
  const std::uint32_t last = in.running.back();
  in.running[job.pos] = last;
  jobs[last].pos = job.pos;
  in.running.pop_back();
  --in.busy;
  ++in.fifoEpoch;
  freeJobs.push_back(j);
  // Resource waste: slot time whose answer is of no use — nobody takes it (the caller gave
  // up, a hung call), or it comes too late for the caller's SLO.
  const auto held = static_cast<std::uint64_t>(now - job.start);
  slotTime += held;
  const bool taken = job.request != kNone && requests[job.request].token == job.token;
  if (!taken || now - requests[job.request].start > clients[requests[job.request].client].slo)
    wastedSlotTime += held;
  if (taken) {
    Request& r = requests[job.request];
    r.status = 200;
    r.outcome = Outcome::Ok;
    deliver(job.request);
  }
  startQueued(job.instance);
}

void Simulator::Impl::startQueued(std::uint32_t i) {
  Instance& in = inst[i];
  const bool serveAbandoned = models[in.model].spec->serveAbandoned;
  while (in.busy < in.slotsEff && in.queue.size() > 0) {
    const QueueEntry e = in.queue.pop();
    ++in.fifoEpoch;
    const bool alive = requests[e.request].token == e.token;
    if (alive) {
      startJob(i, e.request, e.token, e.work, e.tokens);
    } else if (serveAbandoned) {
      startJob(i, kNone, 0, e.work, e.tokens);
    }
  }
}

void Simulator::Impl::onResponse(std::uint32_t ri, std::uint32_t token) {
  if (requests[ri].token != token) return;
  deliver(ri);
}

// The gateway sees the instance's answer: record it into the engine, tell the caller.
void Simulator::Impl::deliver(std::uint32_t ri) {
  Request& r = requests[ri];
  Instance& in = inst[r.instance];
  const Micros latency = now - r.attemptStart;
  models[in.model].dropOutstanding(in.slot);
  --clients[r.client].inFlight;
  --models[in.model].inFlight;
  engine.record(in.eid, Decision{true, r.probe, RejectReason::None}, now, latency, r.status,
                r.outcome);
  if (opt.attempts) [[unlikely]]
    opt.attempts->onAttempt(r.instance, now, latency, r.status, r.outcome);
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
  } else if (latency > clients[r.client].slo) {
    ++in.tick.slowOverSlo;  // the spread judge's "slow": the client's bar, not the policy's
  }
  r.token = 0;
  attemptEnded(ri, res);
}

void Simulator::Impl::onTimeout(std::uint32_t ri, std::uint32_t token) {
  Request& r = requests[ri];
  if (r.token != token) return;
  Instance& in = inst[r.instance];
  models[in.model].dropOutstanding(in.slot);
  --clients[r.client].inFlight;
  --models[in.model].inFlight;
  engine.record(in.eid, Decision{true, r.probe, RejectReason::None}, now, now - r.attemptStart, 0,
                Outcome::Timeout);
  if (opt.attempts) [[unlikely]]
    opt.attempts->onAttempt(r.instance, now, now - r.attemptStart, 0, Outcome::Timeout);
  ++in.tick.responses;
  ++in.tick.failures;
  ++in.rep.failures;
  r.token = 0;
  if (r.modelDeadline && r.tailCut) ++clients[r.client].rep.tailCuts;
  attemptEnded(ri, Result::Timeout);
}

// When a call arriving now would get a slot of the instance: slots free at their jobs' finish
// times (a min-heap in a reused scratch vector), and the live queued calls (later arrivals
// cannot overtake them) take them in FIFO order.
Micros Simulator::Impl::rerunFifo(const Instance& in, const ModelSpec& ms) {
  std::vector<Micros>& free = gtScratch_;
  const auto later = std::greater<>();
  free.clear();
  for (std::uint32_t j : in.running) free.push_back(jobs[j].finish);
  std::make_heap(free.begin(), free.end(), later);
  while (free.size() > in.slotsEff) {  // capacity shrank: extra jobs finish first
    std::pop_heap(free.begin(), free.end(), later);
    free.pop_back();
  }
  while (free.size() < in.slotsEff) {
    free.push_back(now);
    std::push_heap(free.begin(), free.end(), later);
  }
  for (std::size_t q = 0; q < in.queue.size(); ++q) {
    const QueueEntry& e = in.queue.at(q);
    const Micros t = free.front();
    const bool alive = requests[e.request].token == e.token && t < e.deadline;
    if (!alive && !ms.serveAbandoned) continue;
    std::pop_heap(free.begin(), free.end(), later);
    free.back() = t + serviceTime(in, e.work, in.slotsEff, t);
    std::push_heap(free.begin(), free.end(), later);
  }
  return free.front();
}

// Ground truth for a blocked attempt: would it have succeeded on instance i right now? The
// instance is sampled without taking capacity: fault and error draws from the ground-truth
// stream, then the exact FIFO start time given the running calls and the queue (rerunFifo),
// then the call's own service time. Success = no failure, within the caller's timeout and its
// SLO latency — the client's bar, never the policy's slow threshold, so that every candidate
// policy is judged by the same yardstick (docs/kpis.md).
bool Simulator::Impl::wouldSucceed(std::uint32_t i, const Request& r, Stream& draws) {
  Instance& in = inst[i];
  const ModelSpec& ms = *models[in.model].spec;
  const ClientSpec& cs = *clients[r.client].spec;
  if (!in.active.empty()) {
    const Effect fx = effectAt(in, now);
    if (fx.outage || draws.bernoulli(fx.resetP) || draws.bernoulli(fx.throttleP) ||
        draws.bernoulli(fx.errorP) || draws.bernoulli(fx.hangP))
      return false;
  }
  if (draws.bernoulli(ms.errorRate)) return false;
  const double work = drawWork(in, r, draws);
  if (in.slotsEff == 0) return false;  // no capacity left at all
  Micros start = now;
  std::uint32_t occupancy = in.busy + 1;
  if (in.busy >= in.slotsEff || in.queue.size() > 0) {
    if (in.queue.full()) return false;
    if (in.rerunEpoch != in.fifoEpoch || !opt.reuseRerun) {
      in.rerunFree = rerunFifo(in, ms);
      // Idle slots enter the re-run at `now`: only an answer without them holds later on.
      in.rerunEpoch = in.running.size() >= in.slotsEff ? in.fifoEpoch : ~std::uint64_t{0};
    }
    start = std::max(now, in.rerunFree);
    occupancy = in.slotsEff;
  }
  const Micros latency = start - now + serviceTime(in, work, occupancy, start);
  // The caller waits at most its per-try timeout, and never past its overall deadline.
  Micros limit = cs.timeout;
  if (cs.deadline > 0) limit = std::min(limit, r.start + cs.deadline - now);
  return latency < limit && latency <= clients[r.client].slo;
}

}  // namespace spillway::sim
