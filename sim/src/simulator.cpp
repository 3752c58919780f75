// The simulator: setup from a scenario, the event loop, and the public API.
#include "simulator_impl.hpp"
#include "spillway/input_error.hpp"

namespace spillway::sim {

// Scans the request pool: a slot is in use unless it is on the free list.
std::uint64_t Simulator::Impl::unanswered(bool overdueOnly) const {
  std::vector<bool> free(requests.size(), false);
  for (std::uint32_t ri : freeRequests) free[ri] = true;
  std::uint64_t n = 0;
  for (std::size_t ri = 0; ri < requests.size(); ++ri) {
    const Request& r = requests[ri];
    if (free[ri] || r.thinking) continue;
    const ClientSpec& cs = *clients[r.client].spec;
    const Micros patience = cs.deadline > 0 ? cs.deadline : cs.timeout;
    n += !overdueOnly || now - r.start > patience;
  }
  return n;
}

// ---- setup -------------------------------------------------------------------------------
void Simulator::Impl::build() {
  if (sc.tick <= 0) throw std::invalid_argument("tick must be positive");
  // Only the series plots the breakers' window quantiles every tick; without it they are read
  // once per slice for the drift check, which counts over the slices instead.
  engine.keepWindowHistograms(opt.series != nullptr);
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
  if (sc.routing == Routing::LeastOutstanding)
    for (ModelGroup& mg : models)
      if (!mg.instances.empty() && mg.instances.size() <= 64) mg.index();
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
    st.slo = cs.effectiveSlo();
    st.constantRate = cs.profile.empty();
    if (st.constantRate && cs.rate > 0) st.meanGap = 1e6 / cs.rate;
    st.rep.name = cs.name;
    st.rep.criticality = cs.criticality;
    st.rep.drill = cs.drill;
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

// The client's SLA class (seed 001): its budget is measured in every mode, its degrade list is
// used when the degrade layer runs. A class the policy does not define is an error: the
// client's traffic would otherwise be judged by no class at all.
void Simulator::Impl::resolveSlaClass(ClientState& cl) {
  const ClientSpec& cs = *cl.spec;
  if (cs.slaClass.empty()) return;
  const auto it = sc.policy.slaClasses.find(cs.slaClass);
  if (it == sc.policy.slaClasses.end()) {
    std::string known;
    for (const auto& [name, k] : sc.policy.slaClasses) known += (known.empty() ? "" : ", ") + name;
    const auto index = static_cast<std::size_t>(&cl - clients.data());
    throw InputError(sc.source, cs.line, "clients[" + std::to_string(index) + "].sla_class",
                     "client '" + cs.name + "': the policy '" + sc.policy.name +
                         "' has no class '" + cs.slaClass + "' (" +
                         (known.empty() ? "it defines none" : "it has " + known) + ")");
  }
  cl.classBudget = it->second.latency;
  cl.rep.slaClass = cs.slaClass;
  if (degrading) cl.slaClass = router->slaClass(cs.slaClass);
}

void Simulator::Impl::buildDegradeAndLimits() {
  const Policy& p = sc.policy;
  // Cost (seed 002): per 1k tokens from the models' profiles, charged in every mode.
  costPerToken.assign(sc.models.size(), 0.0);
  for (std::size_t m = 0; m < sc.models.size(); ++m) {
    const auto it = p.models.find(sc.models[m].name);
    if (it != p.models.end() && it->second.cost > 0) {
      costPerToken[m] = it->second.cost / 1000.0;
      costed = true;
    }
  }
  if (opt.protection && opt.layers.degrade && p.degrade.enabled) {
    std::vector<std::string> names;
    for (const ModelSpec& m : sc.models) names.push_back(m.name);
    router.emplace(p, std::move(names));
    degrading = true;
  }
  if (opt.protection && opt.layers.limits && (p.limits.any() || p.limits.adaptive)) {
    limiter.emplace(p.limits);
    limiting = true;
  }
  for (ClientState& cl : clients) {
    const ClientSpec& cs = *cl.spec;
    cl.critical = cs.criticality == Criticality::Core;
    resolveSlaClass(cl);
    if (limiting) {
      cl.limitKey.tenant = limiter->id(LimitScope::Tenant, cs.tenant.empty() ? cs.name : cs.tenant);
      cl.limitKey.route = limiter->id(LimitScope::Route, cs.route);
      cl.limitKey.model = limiter->id(LimitScope::Model, cs.model);
    }
    if (degrading) cl.tags = router->tagMask(cs.tags);
    if (cs.cache.keys > 0) {
      // Zipf popularity: P(key k) ∝ 1 / (k+1)^s, drawn in O(1) (Boost's alias table).
      std::vector<double> weights(cs.cache.keys);
      for (std::uint32_t k = 0; k < cs.cache.keys; ++k)
        weights[k] = 1.0 / std::pow(static_cast<double>(k) + 1.0, cs.cache.zipf);
      cl.keys.emplace(weights.begin(), weights.end());
      cl.cachedAt.assign(cs.cache.keys, kNever);
    }
  }
}

// Every fault becomes one interval per affected instance; a `recover` ends the intervals of
// its target that started before it.
void Simulator::Impl::buildFaults() {
  auto targets = [&](const std::string& t) {
    std::vector<std::uint32_t> out;
    for (std::uint32_t i = 0; i < inst.size(); ++i)
      if (instanceNames[i] == t || sc.models[inst[i].model].name == t) out.push_back(i);
    if (out.empty()) throw std::invalid_argument("fault targets unknown '" + t + "'");
    return out;
  };
  for (std::uint32_t f = 0; f < sc.faults.size(); ++f) {
    const FaultSpec& fs = sc.faults[f];
    if (fs.target == kGatewayTarget) {
      if (fs.kind != FaultKind::Recover)
        gatewayIntervals.push_back(
            {f, kNone, fs.at, fs.duration == kForever ? kForever : fs.at + fs.duration});
      else
        for (Interval& iv : gatewayIntervals)
          if (iv.start < fs.at && iv.end > fs.at) iv.end = fs.at, iv.byHand = true;
      continue;
    }
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
    if (fs.kind != FaultKind::Recover || fs.target == kGatewayTarget) continue;
    for (std::uint32_t i : targets(fs.target))
      for (Interval& iv : intervals)
        if (iv.instance == i && iv.start < fs.at && iv.end > fs.at) {
          iv.end = fs.at;
          iv.byHand = true;
        }
  }
  bool anyReal = false;
  for (std::uint32_t k = 0; k < intervals.size(); ++k) {
    const Interval& iv = intervals[k];
    if (!sc.faults[iv.fault].benign) {
      blocks.addFault(inst[iv.instance].eid, iv.start, iv.end);
      anyReal = true;
    }
    inst[iv.instance].intervals.push_back(k);
    agenda.push(iv.start, kPrioEdge, kEdge, iv.instance);
    if (iv.end != kForever) agenda.push(iv.end, kPrioEdge, kEdge, iv.instance);
  }
  if (anyReal) {
    groupHistory.resize(models.size());
    groupTick.resize(models.size());
  }
}

// With tens of thousands of calls in flight, the job and request an event names have left the
// cache by the time it pops: the agenda calls this as the event enters the current grain
// (about a millisecond of simulated time, dozens of events, before it pops).
void Simulator::Impl::prefetchFor(const void* context, const SimEvent& e) {
  const auto* self = static_cast<const Impl*>(context);
  if (e.kind == kJobDone) {
    platform::prefetch(&self->jobs[e.target]);
    if (e.gen != kNone) {
      platform::prefetch(&self->requests[e.gen]);
      self->engine.breaker(e.aux).prefetch();
    }
  } else if (e.kind != kTick && e.kind != kEdge) {
    platform::prefetch(&self->requests[e.target]);
  }
}

bool Simulator::Impl::runUntil(Micros t) {
  platform::clearUpperVectorState();
  SimEvent e;
  while (!done) {
    const Agenda::Lane lane = agenda.popDue(t, e);
    if (lane == Agenda::kNoEvent) break;
    now = e.time;
    ++events;
    if (lane == Agenda::kArrivalLane) {  // only arrivals ride there
      onArrival(e.target, e.gen == 1);
      continue;
    }
    switch (e.kind) {
      case kArrival:  // (never in the main lane)
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
// Built on request from the clients' histograms: a success is added to one histogram, not two.
const LatencyHistogram& Simulator::answeredLatency() const {
  d_->answered.clear();
  for (const detail::ClientState& cl : d_->clients) d_->answered.merge(cl.e2e);
  return d_->answered;
}
std::uint64_t Simulator::unanswered() const {
  return d_->unanswered(false);
}
std::uint64_t Simulator::overdue() const {
  return d_->unanswered(true);
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
