#include "spillway/view/timeline.hpp"
#include "kpi_table.hpp"
#include "spillway/view/time_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

namespace spillway::view {

std::vector<StateBand> bandsFromEvents(const std::vector<Event>& events, InstanceId instance,
                                       BreakerState initial, Micros end) {
  std::vector<StateBand> out;
  BreakerState state = initial;
  bool ramping = false;
  Micros start = 0;
  auto change = [&](Micros at, BreakerState s, bool r) {
    if (s == state && r == ramping) return;
    if (at > start) out.push_back(StateBand{start, at, state, ramping});
    start = std::max(start, at);
    state = s;
    ramping = r;
  };
  for (const Event& e : events) {
    if (e.instance != instance) continue;
    if (e.ts >= end) break;
    switch (e.kind) {
      case EventKind::Transition:
        // Closing after a probe streak starts the ramp (the engine publishes RampComplete at
        // once when the policy has no ramp, which ends a zero-length band).
        change(e.ts, e.to, e.to == BreakerState::Closed && e.reason == Reason::ProbeStreak);
        break;
      case EventKind::RampComplete:
        change(e.ts, state, false);
        break;
      case EventKind::WouldOpen:
        break;
    }
  }
  if (end > start) out.push_back(StateBand{start, end, state, ramping});
  return out;
}

namespace {

double perSecond(std::uint32_t n, Micros tick) {
  return static_cast<double>(n) * 1e6 / static_cast<double>(tick);
}

// The FP rate over a sliding minute (running sums: O(ticks)).
void fillFpRate(InstanceTimeline& it, Micros tick) {
  const std::size_t span = std::max<std::size_t>(1, static_cast<std::size_t>(seconds(60) / tick));
  double judged = 0, would = 0;
  it.fpRate.resize(it.t.size());
  for (std::size_t k = 0; k < it.t.size(); ++k) {
    judged += it.blockedJudged[k];
    would += it.blockedWouldSucceed[k];
    if (k >= span) {
      judged -= it.blockedJudged[k - span];
      would -= it.blockedWouldSucceed[k - span];
    }
    it.fpRate[k] = judged > 0.5 ? would / judged : std::numeric_limits<double>::quiet_NaN();
  }
}

}  // namespace

RunTimeline RunTimeline::build(const sim::VectorSeries& series, const std::vector<Event>& events,
                               const sim::RunReport& report, Micros tick) {
  RunTimeline tl;
  tl.tick_ = tick;
  tl.end_ = report.simulated;
  tl.instances_.resize(series.instanceNames.size());
  for (std::size_t i = 0; i < tl.instances_.size(); ++i) {
    tl.instances_[i].name = series.instanceNames[i];
    if (i < report.instances.size()) tl.instances_[i].model = report.instances[i].model;
  }
  for (const sim::InstanceTick& row : series.instances) {
    InstanceTimeline& it = tl.instances_.at(row.instance);
    it.t.push_back(static_cast<double>(row.t) / 1e6);
    it.errorRate.push_back(row.errorRate);
    it.slowRate.push_back(row.slowRate);
    // A window without calls has no p99 (NaN, a gap and a dash), not a fast 0 ms.
    it.p99Ms.push_back(row.windowCalls ? row.p99Ms : std::numeric_limits<double>::quiet_NaN());
    it.baselineP99Ms.push_back(row.baselineP99Ms);
    it.throughput.push_back(perSecond(row.responses, tick));
    it.rejected.push_back(perSecond(row.rejected, tick));
    it.queueFull.push_back(perSecond(row.queueFull, tick));
    it.overflow.push_back(perSecond(row.overflow, tick));
    it.busy.push_back(row.busy);
    it.queued.push_back(row.queued);
    it.blockedJudged.push_back(row.blockedJudged);
    it.blockedWouldSucceed.push_back(row.blockedWouldSucceed);
  }
  for (InstanceTimeline& it : tl.instances_) fillFpRate(it, tick);
  // The engine numbers instances in the order the simulator registered them, which is the
  // series' order; a baseline run's breakers only watch.
  const BreakerState initial = report.protection ? BreakerState::Closed : BreakerState::MetricsOnly;
  for (std::size_t i = 0; i < tl.instances_.size(); ++i) {
    InstanceTimeline& it = tl.instances_[i];
    it.bands = bandsFromEvents(events, static_cast<InstanceId>(i), initial, tl.end_);
    for (const Event& e : events)
      if (e.instance == i && e.kind == EventKind::WouldOpen)
        it.markers.push_back({e.ts, Marker::Kind::WouldOpen, "would open"});
  }
  for (const sim::FaultReport& f : report.faults) {
    auto pos = std::find_if(tl.instances_.begin(), tl.instances_.end(),
                            [&](const InstanceTimeline& x) { return x.name == f.instance; });
    if (pos == tl.instances_.end()) continue;
    // Benign jitter is marked (an SRE wants to see what a false trip tripped on), but it has
    // no detection or restoration to mark.
    const std::string kind = (f.benign ? "benign " : "") + std::string(sim::faultKindName(f.kind));
    pos->markers.push_back({f.start, Marker::Kind::FaultStart, kind + " starts"});
    if (f.ended) pos->markers.push_back({f.end, Marker::Kind::FaultEnd, kind + " ends"});
    if (f.benign) continue;
    if (f.detected)
      pos->markers.push_back({f.start + f.ttd, Marker::Kind::Detected, "detected", f.start});
    if (f.restored)
      pos->markers.push_back(
          {f.start + f.mttr, Marker::Kind::Restored, "full traffic back", f.start});
  }
  for (InstanceTimeline& it : tl.instances_)
    std::stable_sort(it.markers.begin(), it.markers.end(),
                     [](const Marker& a, const Marker& b) { return a.at < b.at; });

  tl.clients_.resize(series.clientNames.size());
  for (std::size_t c = 0; c < tl.clients_.size(); ++c) {
    tl.clients_[c].name = series.clientNames[c];
    if (c < report.clients.size())
      tl.clients_[c].core = report.clients[c].criticality == sim::Criticality::Core;
  }
  for (const sim::ClientTick& row : series.clients) {
    ClientTimeline& ct = tl.clients_.at(row.client);
    ct.t.push_back(static_cast<double>(row.t) / 1e6);
    ct.availability.push_back(row.finished ? static_cast<double>(row.available) / row.finished
                                           : std::numeric_limits<double>::quiet_NaN());
    ct.p99Ms.push_back(row.p99Ms);
    ct.originals.push_back(perSecond(row.originals, tick));
  }
  return tl;
}

RunTimeline RunTimeline::fromInstances(std::vector<InstanceTimeline> instances, Micros tick,
                                       Micros end, Micros start) {
  RunTimeline tl;
  tl.tick_ = tick;
  tl.start_ = start;
  tl.end_ = end;
  tl.instances_ = std::move(instances);
  for (InstanceTimeline& it : tl.instances_) fillFpRate(it, tick);
  return tl;
}

std::size_t RunTimeline::indexAt(Micros t) const {
  if (instances_.empty() || instances_.front().t.empty()) return 0;
  const std::vector<double>& ts = instances_.front().t;
  const double s = static_cast<double>(t) / 1e6;
  auto it = std::upper_bound(ts.begin(), ts.end(), s + 1e-9);
  return it == ts.begin() ? 0 : static_cast<std::size_t>(it - ts.begin()) - 1;
}

const StateBand* RunTimeline::bandAt(std::size_t instance, Micros t) const {
  const std::vector<StateBand>& bands = instances_.at(instance).bands;
  auto it = std::upper_bound(bands.begin(), bands.end(), t,
                             [](Micros x, const StateBand& b) { return x < b.end; });
  return it == bands.end() || t < it->start ? nullptr : &*it;
}

std::optional<double> KpiRow::deltaBaseline() const {
  if (!current || !baseline) return std::nullopt;
  return *current - *baseline;
}
std::optional<double> KpiRow::deltaPrevious() const {
  if (!current || !previous) return std::nullopt;
  return *current - *previous;
}

namespace {

struct KpiDef {
  const char* name;
  const char* unit;
  bool higherIsBetter;
  std::optional<double> (*get)(const sim::RunReport&);
};

std::optional<double> seconds(const std::optional<Micros>& d) {
  if (!d) return std::nullopt;
  return static_cast<double>(*d) / 1e6;
}

const KpiDef kKpis[] = {
    {"availability", "share", true, [](const sim::RunReport& r) { return r.availability.value(); }},
    {"core availability", "share", true,
     [](const sim::RunReport& r) { return r.coreAvailability.value(); }},
    {"core availability during faults", "share", true,
     [](const sim::RunReport& r) { return r.coreAvailabilityInFault.value(); }},
    {"degrade success rate", "share", true,
     [](const sim::RunReport& r) { return r.degradeSuccess.value(); }},
    {"degrade switch rate", "share", true,
     [](const sim::RunReport& r) { return r.degradeSwitch.value(); }},
    {"re-routed within group (answered)", "share", true,
     [](const sim::RunReport& r) { return r.reroutedSuccess.value(); }},
    {"SLA attainment (in-quota)", "share", true,
     [](const sim::RunReport& r) { return r.slaInQuota.value(); }},
    {"limiter mis-kill rate", "share", false,
     [](const sim::RunReport& r) { return r.limiterMisKill.value(); }},
    {"resource waste", "share", false, [](const sim::RunReport& r) { return r.waste.value(); }},
    {"cascade rate", "share", false, [](const sim::RunReport& r) { return r.cascade.value(); }},
    {"cost per 1k requests", "cost", false, [](const sim::RunReport& r) { return r.costPer1k; }},
    {"false-positive rate (误伤)", "share", false,
     [](const sim::RunReport& r) { return r.falsePositive.value(); }},
    {"  of which false trips", "share", false,
     [](const sim::RunReport& r) { return r.fpFalseTrip.value(); }},
    {"  of which recovery lag", "share", false,
     [](const sim::RunReport& r) { return r.fpRecoveryLag.value(); }},
    {"collateral share (correct trips)", "share", false,
     [](const sim::RunReport& r) { return r.collateral.value(); }},
    {"false trips per hour", "/h", false,
     [](const sim::RunReport& r) { return r.falseTripsPerHour; }},
    {"TTD (mean)", "s", false, [](const sim::RunReport& r) { return seconds(r.meanTtd); }},
    {"onset → full traffic (mean)", "s", false,
     [](const sim::RunReport& r) { return seconds(r.meanMttr); }},
    {"recovery after the fault", "s", false,
     [](const sim::RunReport& r) { return seconds(r.meanRecovery); }},
    {"self-healing (trip → full traffic)", "s", false,
     [](const sim::RunReport& r) { return seconds(r.meanSelfHealing); }},
    {"service restoration (worst)", "s", false,
     [](const sim::RunReport& r) { return sim::worstRestorationSeconds(r); }},
    {"retry amplification", "x", false,
     [](const sim::RunReport& r) { return r.retryAmplification.value(); }},
    {"breaker opens", "count", false,
     [](const sim::RunReport& r) -> std::optional<double> { return static_cast<double>(r.opens); }},
    {"would open (watching only)", "count", false,
     [](const sim::RunReport& r) -> std::optional<double> {
       return static_cast<double>(r.wouldOpens);
     }},
    {"latency p99", "ms", false,
     [](const sim::RunReport& r) -> std::optional<double> {
       if (r.ends[static_cast<int>(sim::End::Success)] == 0) return std::nullopt;
       return r.p99Ms;
     }},
};

}  // namespace

namespace {

// The policy's SLA classes (seed 001), each against its own target and budget, under the
// in-quota SLA row; other runs' classes are matched by name.
void insertSlaClasses(std::vector<KpiRow>& rows, const sim::RunReport& current,
                      const sim::RunReport* baseline, const sim::RunReport* previous) {
  auto find = [](const sim::RunReport* r, const std::string& name) -> std::optional<double> {
    if (!r) return std::nullopt;
    for (const sim::SlaClassReport& s : r->slaClasses)
      if (s.name == name) return s.attained.value();
    return std::nullopt;
  };
  std::vector<KpiRow> classes;
  for (const sim::SlaClassReport& s : current.slaClasses) {
    char target[64];
    std::snprintf(target, sizeof target, "%g %%, %s", s.target * 100,
                  spillway::formatDuration(s.latency).c_str());
    KpiRow row;
    row.name = "  SLA class · " + s.name + " (" + target + ")";
    row.unit = "share";
    row.current = s.attained.value();
    row.target = s.target;
    row.baseline = find(baseline, s.name);
    row.previous = find(previous, s.name);
    classes.push_back(std::move(row));
  }
  auto at = std::find_if(rows.begin(), rows.end(),
                         [](const KpiRow& r) { return r.name == "SLA attainment (in-quota)"; });
  rows.insert(at == rows.end() ? at : at + 1, classes.begin(), classes.end());
}

}  // namespace

namespace {

// TTD and MTTR of each real fault, so an A/B shows which fault a change moved (a mean hides a
// fault no longer caught). Matched to the other runs by position: the same scenario's faults.
void insertFaultRows(std::vector<KpiRow>& rows, const sim::RunReport& current,
                     const sim::RunReport* baseline, const sim::RunReport* previous) {
  // A real fault the protected run never detected has TTD ∞ (kpis.md), not "n/a": a blank
  // reads as nothing to see. The baseline's breakers only watch: its TTDs stay blank.
  auto seconds = [](const sim::FaultReport* f, bool ttd,
                    bool protectedRun = true) -> std::optional<double> {
    if (f && ttd && !f->detected && protectedRun) return std::numeric_limits<double>::infinity();
    if (!f || !(ttd ? f->detected : f->restored)) return std::nullopt;
    return static_cast<double>(ttd ? f->ttd : f->mttr) / 1e6;
  };
  auto nth = [](const sim::RunReport* r, std::size_t i) -> const sim::FaultReport* {
    return r && i < r->faults.size() ? &r->faults[i] : nullptr;
  };
  std::vector<KpiRow> perFault;
  for (std::size_t i = 0; i < current.faults.size(); ++i) {
    const sim::FaultReport& f = current.faults[i];
    if (f.benign) continue;
    const std::string what = std::string(sim::faultKindName(f.kind)) + " on " + f.instance +
                             " at " + formatOffset(f.start);
    for (bool ttd : {true, false}) {
      KpiRow row;
      // Onset → full traffic; kpis.md's MTTR is the self-healing time (trip → full traffic).
      row.name = std::string(ttd ? "  TTD · " : "  onset → full · ") + what;
      row.unit = "s";
      row.higherIsBetter = false;
      row.current = seconds(&f, ttd);
      row.baseline = seconds(nth(baseline, i), ttd, false);
      row.previous = seconds(nth(previous, i), ttd);
      perFault.push_back(std::move(row));
    }
  }
  auto at = std::find_if(rows.begin(), rows.end(),
                         [](const KpiRow& r) { return r.name == "onset → full traffic (mean)"; });
  rows.insert(at == rows.end() ? at : at + 1, perFault.begin(), perFault.end());
  // The mean TTD is over the faults detected: the misses beside it.
  auto missed = [](const sim::RunReport* r) -> std::optional<double> {
    if (!r) return std::nullopt;
    return static_cast<double>(
        std::count_if(r->faults.begin(), r->faults.end(),
                      [](const sim::FaultReport& f) { return !f.benign && !f.detected; }));
  };
  // The worst fault's TTD (∞ when one was never detected): the tile's figure, since a mean can
  // meet a target while one fault goes unseen for minutes. The baseline only watches.
  auto worst = [](const sim::RunReport* r) -> std::optional<double> {
    if (!r) return std::nullopt;
    std::optional<double> w;
    for (const sim::FaultReport& f : r->faults) {
      if (f.benign) continue;
      const double t =
          f.detected ? static_cast<double>(f.ttd) / 1e6 : std::numeric_limits<double>::infinity();
      w = std::max(w.value_or(t), t);
    }
    return w;
  };
  auto lowerIsBetter = [&](const char* name, const char* unit, auto get) {
    KpiRow r;
    r.name = name;
    r.unit = unit;
    r.higherIsBetter = false;
    r.current = get(&current);
    r.previous = get(previous);
    return r;
  };
  KpiRow worstRow = lowerIsBetter("TTD (worst)", "s", worst);
  KpiRow never = lowerIsBetter("real faults never detected", "count", missed);
  auto ttdAt = std::find_if(rows.begin(), rows.end(),
                            [](const KpiRow& r) { return r.name == "TTD (mean)"; });
  if (ttdAt == rows.end()) return;
  ttdAt = rows.insert(ttdAt + 1, std::move(never));
  rows.insert(ttdAt, std::move(worstRow));
}

}  // namespace

namespace {

// Interception is a paired figure (kpis.md): among the real faults that spread in the baseline
// run, the share that did not spread under the policy — n/a without a baseline, or when nothing
// spread there (a fault that did not spread without protection was intercepted by nothing).
void insertInterception(std::vector<KpiRow>& rows, const sim::RunReport& current,
                        const sim::RunReport* baseline, const sim::RunReport* previous) {
  KpiRow row;
  row.name = "fault interception rate";
  row.unit = "share";
  if (baseline) {
    row.current = sim::pairedInterception(*baseline, current).value();
    if (previous) row.previous = sim::pairedInterception(*baseline, *previous).value();
  }
  auto at = std::find_if(rows.begin(), rows.end(),
                         [](const KpiRow& r) { return r.name == "TTD (mean)"; });
  rows.insert(at, std::move(row));
}

}  // namespace

std::vector<KpiRow> kpiRows(const sim::RunReport& current, const sim::RunReport* baseline,
                            const sim::RunReport* previous) {
  std::vector<KpiRow> rows = detail::kpiTable(kKpis, current, baseline, previous);
  // Availability per client, core clients first, after the three availability totals; other
  // runs' clients are matched by name (a scenario edit may add or drop one).
  std::vector<const sim::ClientReport*> clients;
  for (const sim::ClientReport& c : current.clients) clients.push_back(&c);
  std::stable_sort(clients.begin(), clients.end(), [](const auto* a, const auto* b) {
    const bool ca = a->criticality == sim::Criticality::Core;
    const bool cb = b->criticality == sim::Criticality::Core;
    return ca != cb ? ca : a->name < b->name;
  });
  auto find = [](const sim::RunReport* r, const std::string& name) -> std::optional<double> {
    if (!r) return std::nullopt;
    for (const sim::ClientReport& c : r->clients)
      if (c.name == name) return c.availability.value();
    return std::nullopt;
  };
  std::vector<KpiRow> perClient;
  for (const sim::ClientReport* c : clients) {
    KpiRow row;
    row.name =
        "  availability · " + c->name + (c->criticality == sim::Criticality::Core ? " (core)" : "");
    row.unit = "share";
    row.perClient = true;
    row.current = c->availability.value();
    row.baseline = find(baseline, c->name);
    row.previous = find(previous, c->name);
    perClient.push_back(std::move(row));
  }
  rows.insert(rows.begin() + std::min<std::ptrdiff_t>(3, static_cast<std::ptrdiff_t>(rows.size())),
              perClient.begin(), perClient.end());
  insertSlaClasses(rows, current, baseline, previous);
  insertFaultRows(rows, current, baseline, previous);
  insertInterception(rows, current, baseline, previous);
  return rows;
}

std::vector<KpiRow> withIntervals(std::vector<KpiRow> rows, const sim::SeedRuns& runs) {
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> values;
  for (std::size_t i = 0; i < runs.protectedRuns.size() && i < runs.baseline.size(); ++i)
    for (const KpiRow& r : kpiRows(runs.protectedRuns[i], &runs.baseline[i], nullptr)) {
      auto& [cur, base] = values[r.name];
      if (r.current) cur.push_back(*r.current);
      if (r.baseline) base.push_back(*r.baseline);
    }
  // The values beside the intervals are the seeds' means, as `simulate --seeds` prints them:
  // the first seed's value could lie outside its own row's interval. The previous policy ran
  // one seed, so it has no mean to be compared with.
  for (KpiRow& r : rows) {
    r.previous.reset();
    const auto it = values.find(r.name);
    if (it == values.end()) continue;
    r.currentInterval = sim::seedInterval(it->second.first);
    r.baselineInterval = sim::seedInterval(it->second.second);
    r.current = r.currentInterval ? std::optional(r.currentInterval->mean) : std::nullopt;
    r.baseline = r.baselineInterval ? std::optional(r.baselineInterval->mean) : std::nullopt;
  }
  return rows;
}

std::vector<double> slowThresholdMs(const InstanceTimeline& it, const SlowConfig& slow) {
  const double floorMs = static_cast<double>(slow.floor) / 1e3;
  std::vector<double> out(it.t.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (slow.absolute > 0)
      out[k] = static_cast<double>(slow.absolute) / 1e3;
    else if (it.baselineP99Ms[k] > 0)
      out[k] = std::max(floorMs, slow.k * it.baselineP99Ms[k]);
    else if (slow.initialBaseline > 0)
      out[k] = std::max(floorMs, slow.k * static_cast<double>(slow.initialBaseline) / 1e3);
  }
  return out;
}

namespace {

// Lower = worse health: what an SRE wants to see first.
int stateRank(const StateBand* b) {
  if (!b) return 5;
  switch (b->state) {
    case BreakerState::Open:
    case BreakerState::ForcedOpen:
      return 0;
    case BreakerState::HalfOpen:
      return 1;
    default:
      return b->ramping ? 2 : 3;
  }
}

}  // namespace

bool naturalLess(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      // Compare the numbers by value without converting (no overflow): leading zeros off,
      // then the longer is larger, then digit by digit.
      std::string_view x = a.substr(i, ie - i), y = b.substr(j, je - j);
      while (x.size() > 1 && x.front() == '0') x.remove_prefix(1);
      while (y.size() > 1 && y.front() == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

std::vector<std::size_t> displayOrder(const RunTimeline& tl, TileOrder order, Micros t) {
  const auto& insts = tl.instances();
  std::vector<std::size_t> idx(insts.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::vector<std::string> models;  // first-seen order
  for (const InstanceTimeline& it : insts)
    if (std::find(models.begin(), models.end(), it.model) == models.end())
      models.push_back(it.model);
  auto modelRank = [&](std::size_t i) {
    return std::find(models.begin(), models.end(), insts[i].model) - models.begin();
  };
  const std::size_t k = tl.indexAt(t);
  auto badness = [&](std::size_t i) {
    const InstanceTimeline& it = insts[i];
    return k < it.t.size() ? it.errorRate[k] + it.slowRate[k] : 0.0;
  };
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    if (order == TileOrder::Model && modelRank(a) != modelRank(b))
      return modelRank(a) < modelRank(b);
    if (order == TileOrder::Health) {
      const int ra = stateRank(tl.bandAt(a, t)), rb = stateRank(tl.bandAt(b, t));
      if (ra != rb) return ra < rb;
      if (badness(a) != badness(b)) return badness(a) > badness(b);
    }
    return naturalLess(insts[a].name, insts[b].name);
  });
  return idx;
}

}  // namespace spillway::view
