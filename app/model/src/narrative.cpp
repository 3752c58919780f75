#include "spillway/view/narrative.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>
#include <utility>

#include "spillway/block_class.hpp"
#include "spillway/kpi.hpp"
#include "spillway/sweep.hpp"
#include "spillway/view/time_format.hpp"

namespace spillway::view {

std::string_view narrativeKindName(NarrativeKind k) {
  switch (k) {
    case NarrativeKind::FaultStart:
      return "fault";
    case NarrativeKind::Jitter:
      return "jitter";
    case NarrativeKind::FaultEnd:
      return "fault end";
    case NarrativeKind::Trip:
      return "trip";
    case NarrativeKind::FalseTrip:
      return "false trip";
    case NarrativeKind::Probing:
      return "probing";
    case NarrativeKind::Relapse:
      return "relapse";
    case NarrativeKind::Recovered:
      return "recovered";
    case NarrativeKind::Restored:
      return "restored";
    case NarrativeKind::ServiceRestored:
      return "service restored";
    case NarrativeKind::WouldOpen:
      return "would open";
    case NarrativeKind::Other:
      return "transition";
    case NarrativeKind::Summary:
      return "summary";
  }
  return "?";
}

namespace {

// Would-open marks of one instance closer than this read as one stretch of "would have opened".
constexpr Micros kWouldOpenGap = seconds(300);
// This many consecutive like episodes of one instance (false trips, re-trips during one fault)
// become one line with a count: an instance flapping 20 times is one fact, not 100 lines.
constexpr std::size_t kClusterEpisodes = 3;

std::string printf1(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string pct(std::optional<double> v) {
  return v ? printf1("%.1f %%", *v * 100) : "n/a";
}

std::string pctN(const sim::Ratio& r) {
  return pct(r.value()) + " (n=" + std::to_string(r.den) + ")";
}

std::string spaced(std::string_view name) {
  std::string s(name);
  std::replace(s.begin(), s.end(), '_', ' ');
  return s;
}

// The range a click zooms to: [a, b] with a margin, inside the run.
std::pair<Micros, Micros> around(Micros a, Micros b, Micros end) {
  const Micros pad = std::max(seconds(15), (b - a) / 8);
  Micros from = std::max<Micros>(0, a - pad), to = b + pad;
  if (end > 0) to = std::min(to, std::max(end, b));
  if (to <= from) to = from + seconds(1);
  return {from, to};
}

// One fault as the narrative tells it, from a simulated report row or a replay's annotation,
// on the run's axis. The scores are the report's own.
struct FaultRow {
  std::string instance, group, name;  // name: "latency drift"
  std::string strength;               // "latency ×12 over 8m 00s", may be empty
  std::size_t index = kNoInstance;
  Micros start = 0, end = 0;
  bool ended = true, benign = false, real = true;
  std::optional<bool> selfEnding;  // simulated only: ended by itself (not a `recover`)
  FaultScore score;
  std::optional<Micros> serviceRestoration;  // simulated only
  bool serviceLeft = false;
};

// Everything the episode walk needs, the same for a simulated run and a replay.
struct Story {
  std::vector<std::string> names;  // by InstanceId
  std::vector<FaultRow> faults;
  std::vector<Event> events;  // on the run's axis, time order
  Micros end = 0;
  bool simulated = true;
  Micros origin = 0;  // a replay's: epoch µs of t = 0
};

// A moment inside a line's text, written as the line's own time column writes it (a replay's
// in UTC, as the CLI prints it).
std::string when(const Story& s, Micros t) {
  return s.simulated ? formatOffset(t) : formatClock(s.origin + t, true);
}

std::string nameOf(const Story& s, std::size_t id) {
  return id < s.names.size() ? s.names[id] : "instance " + std::to_string(id);
}

// `id`: the instance's index, or kNoInstance (a fault on an instance the run never saw).
NarrativeLine line(const Story& s, NarrativeKind kind, Micros at, Micros a, Micros b,
                   std::size_t id, std::string text, std::uint32_t count = 1) {
  NarrativeLine l;
  l.at = at;
  std::tie(l.from, l.to) = around(a, b, s.end);
  if (id < s.names.size()) {
    l.instance = s.names[id];
    l.instanceIndex = id;
  }
  l.kind = kind;
  l.text = std::move(text);
  l.count = count;
  return l;
}

std::string strengthOf(const sim::FaultSpec& f) {
  const double share = f.value * 100;
  switch (f.kind) {
    case sim::FaultKind::LatencyDrift:
      return printf1("latency ×%g", f.value) +
             (f.ramp > 0 ? " over " + durationText(f.ramp) : std::string());
    case sim::FaultKind::Delay:
      return "+" + durationText(f.delay) + " per call" +
             (f.value < 1 ? printf1(" on %.0f %% of calls", share) : std::string());
    case sim::FaultKind::Errors:
      return printf1("%.0f %% of calls answer ", share) + std::to_string(f.status);
    case sim::FaultKind::Throttle:
      return printf1("%.0f %% of calls answer 429", share);
    case sim::FaultKind::Hang:
      return printf1("%.0f %% of calls hang", share);
    case sim::FaultKind::Reset:
      return printf1("%.0f %% of connections reset", share);
    case sim::FaultKind::CapacityLoss:
      return printf1("slots down to %.0f %%", share);
    case sim::FaultKind::Outage:
      return "every call refused";
    case sim::FaultKind::Recover:
      return {};
  }
  return {};
}

const sim::FaultSpec* specOf(const sim::Scenario* sc, const sim::FaultReport& f) {
  if (!sc) return nullptr;
  for (const sim::FaultSpec& s : sc->faults)
    if (s.kind == f.kind && s.target == f.target && s.at == f.start) return &s;
  return nullptr;
}

std::size_t indexOf(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? kNoInstance : static_cast<std::size_t>(it - names.begin());
}

FaultRow simulatedFault(const sim::FaultReport& f, const sim::RunReport& r,
                        const std::vector<std::string>& names, const sim::Scenario* sc) {
  FaultRow row;
  row.instance = f.instance;
  row.index = indexOf(names, f.instance);
  if (row.index != kNoInstance) row.group = r.instances[row.index].model;
  row.name = spaced(sim::faultKindName(f.kind));
  if (const sim::FaultSpec* spec = specOf(sc, f)) row.strength = strengthOf(*spec);
  if (f.target != f.instance)
    row.strength =
        "on every instance of " + f.target + (row.strength.empty() ? "" : ": " + row.strength);
  row.start = f.start;
  row.end = f.end;
  row.ended = f.ended;
  row.benign = f.benign;
  // GroundTruthRules: shorter than a window is a blip, whatever the scenario calls it.
  row.real = !f.benign && (!f.ended || f.end - f.start >= GroundTruthRules{}.minFault);
  row.selfEnding = f.selfEnding;
  row.score.detected = f.detected;
  row.score.restored = f.restored;
  row.score.ttd = f.ttd;
  row.score.mttr = f.mttr;
  row.score.fromTrip = f.fromTrip;
  row.score.recoveryLag = f.recoveryLag;
  if (f.detected) row.score.firstOpen = f.start + f.ttd;
  if (f.restored) row.score.restoredAt = f.start + f.mttr;
  row.serviceRestoration = f.serviceRestoration;
  row.serviceLeft = f.serviceLeft;
  return row;
}

// ---- fault lines ----

std::string faultTitle(const FaultRow& f) {
  return f.name + " on " + f.instance + (f.strength.empty() ? "" : " (" + f.strength + ")");
}

std::string faultExtent(const FaultRow& f, bool simulated) {
  if (!f.ended) return "still active when the run ended";
  if (!simulated || f.selfEnding.value_or(true)) return "for " + durationText(f.end - f.start);
  return "until a hand fix (recover) at " + formatOffset(f.end);
}

void faultLines(const Story& s, const FaultRow& f, std::vector<NarrativeLine>& out) {
  const std::size_t id = f.index;
  if (!f.real) {
    const std::string why = f.benign ? "benign jitter" : "shorter than a breaker window";
    out.push_back(line(s, NarrativeKind::Jitter, f.start, f.start, f.end, id,
                       faultTitle(f) + ", " + faultExtent(f, s.simulated) + " — " + why +
                           ", not a real fault: a trip on it would be a false trip"));
    return;
  }
  std::string text = faultTitle(f) + ", " + faultExtent(f, s.simulated);
  if (!f.score.detected) text += " — never detected (TTD ∞)";
  out.push_back(line(s, NarrativeKind::FaultStart, f.start, f.start, f.end, id, std::move(text)));
  if (f.ended) {
    const bool byHand = s.simulated && !f.selfEnding.value_or(true);
    out.push_back(line(s, NarrativeKind::FaultEnd, f.end, f.start, f.end, id,
                       f.name + " on " + f.instance + " ended" +
                           (byHand        ? " (fixed by hand)"
                            : s.simulated ? " by itself"
                                          : "")));
  }
  if (f.serviceRestoration) {
    const Micros at = f.start + *f.serviceRestoration;
    const std::string callers = (f.group.empty() ? f.instance : f.group) + "'s callers";
    out.push_back(line(
        s, NarrativeKind::ServiceRestored, at, f.start, at, id,
        f.serviceLeft ? "service restoration " + durationText(*f.serviceRestoration) +
                            " after the onset: " + callers +
                            " back within 5 points of their pre-fault availability, held for a "
                            "minute"
                      : "service unaffected: " + callers +
                            " stayed within 5 points of their pre-fault availability"));
  }
}

// ---- episodes: a breaker's OPEN from full traffic to RAMP_COMPLETE ----

struct Episode {
  InstanceId id = 0;
  std::vector<const Event*> events;  // events[0] opens it
  bool falseTrip = false;
  const FaultRow* fault = nullptr;  // the real fault it opened in (or just after), if any
  bool detects = false;             // its open is that fault's first OPEN: TTD
};

bool opens(const Event& e) {
  return e.kind == EventKind::Transition &&
         (e.to == BreakerState::Open || e.to == BreakerState::ForcedOpen);
}

// The real fault an open at `t` belongs to: active, or ended less than lateTrip before.
const FaultRow* faultAt(const Story& s, InstanceId id, Micros t) {
  const FaultRow* best = nullptr;
  for (const FaultRow& f : s.faults)
    if (f.real && f.index == id && f.start <= t &&
        (!f.ended || t < f.end + GroundTruthRules{}.lateTrip))
      best = &f;
  return best;
}

// Cuts the events into episodes, and says which opened without a real fault by the engine's
// own BlockClassifier over the faults the report judged real.
std::vector<Episode> episodes(const Story& s, std::vector<const Event*>& loose) {
  BlockClassifier judge;
  for (const FaultRow& f : s.faults)
    if (!f.benign && f.index != kNoInstance)
      judge.addFault(static_cast<InstanceId>(f.index), f.start, f.ended ? f.end : kForever);
  std::vector<Episode> all;
  std::map<InstanceId, std::size_t> open;  // instance → its episode in progress
  for (const Event& e : s.events) {
    const std::uint64_t before = judge.tallyOf(e.instance).falseTripEpisodes;
    judge.onEvent(e);
    const auto cur = open.find(e.instance);
    if (cur != open.end()) {
      all[cur->second].events.push_back(&e);
      if (e.kind == EventKind::RampComplete) open.erase(cur);
    } else if (opens(e)) {
      Episode ep;
      ep.id = e.instance;
      ep.events.push_back(&e);
      ep.falseTrip = judge.tallyOf(e.instance).falseTripEpisodes > before;
      ep.fault = ep.falseTrip ? nullptr : faultAt(s, e.instance, e.ts);
      ep.detects = ep.fault && ep.fault->score.detected && ep.fault->score.firstOpen == e.ts;
      open[e.instance] = all.size();
      all.push_back(std::move(ep));
    } else {
      loose.push_back(&e);  // would-opens, and transitions outside an episode
    }
  }
  return all;
}

std::string tripCause(const Event& e) {
  std::string why;
  switch (e.reason) {
    case Reason::ErrorRate:
      why = "error rate " + pct(e.errorRate);
      break;
    case Reason::SlowRate:
      why = "slow-call rate " + pct(e.slowRate);
      break;
    case Reason::ErrorAndSlow:
      why = "error rate " + pct(e.errorRate) + " and slow-call rate " + pct(e.slowRate);
      break;
    default:  // a relapse or a manual open: both rates, as the engine saw them
      why = "error rate " + pct(e.errorRate) + ", slow-call rate " + pct(e.slowRate);
      break;
  }
  if (e.calls) why += " over " + std::to_string(e.calls) + " calls";
  if (e.sustained > 0) why += ", held " + durationText(e.sustained);
  return why;
}

std::string tripText(const Story& s, const Episode& ep) {
  const Event& e = *ep.events.front();
  const std::string who = nameOf(s, ep.id);
  const std::string verb =
      e.to == BreakerState::ForcedOpen ? " forced OPEN (" : " tripped OPEN on ";
  std::string text = who + verb + tripCause(e) + (e.to == BreakerState::ForcedOpen ? ")" : "");
  if (ep.falseTrip) {
    for (const FaultRow& f : s.faults)  // the jitter it tripped on, if the run knows it
      if (!f.real && f.index == ep.id && f.start <= e.ts &&
          e.ts < f.end + GroundTruthRules{}.lateTrip)
        return text + " — a false trip on benign " + f.name +
               " (no real fault): its blocks count toward 误伤";
    return text + " with no real fault — a false trip: its blocks count toward 误伤";
  }
  if (!ep.fault) return text;
  if (ep.detects)
    return text + " — TTD " + durationText(ep.fault->score.ttd) + " after the " + ep.fault->name +
           " began";
  if (ep.fault->ended && e.ts >= ep.fault->end)
    return text + " — " + durationText(e.ts - ep.fault->end) + " after the " + ep.fault->name +
           " ended: its late detection, not a false trip";
  return text + " — re-tripped during the " + ep.fault->name;
}

std::string restoredText(const Story& s, const Episode& ep, const Event& e) {
  const std::string who = nameOf(s, ep.id);
  const FaultRow* f = ep.fault;
  if (!f || !f->score.restored || f->score.restoredAt != e.ts)
    return who + " back to full traffic (ramp complete), " +
           durationText(e.ts - ep.events.front()->ts) + " after this open";
  std::string text = who + " back to full traffic (ramp complete): ";
  if (s.simulated && f->selfEnding.value_or(false))
    text += "self-healing " + durationText(f->score.fromTrip) + " (trip → full traffic)";
  else if (s.simulated)
    text += durationText(f->score.fromTrip) +
            " after the trip (the fault was fixed by hand: not self-healing)";
  else
    text += durationText(f->score.fromTrip) + " from the trip";
  return text + "; recovery lag " + durationText(f->score.recoveryLag) + " after the fault ended";
}

// A run of failed probe rounds: OPEN_ELAPSED / PROBE_FAILED pairs, as one line.
NarrativeLine probingLine(const Story& s, InstanceId id, const std::vector<const Event*>& run) {
  std::uint32_t rounds = 0, failed = 0;
  Micros longest = 0;
  for (const Event* e : run) {
    rounds += e->reason == Reason::OpenElapsed;
    if (e->reason == Reason::ProbeFailed) {
      ++failed;
      longest = std::max(longest, e->openFor);
    }
  }
  std::string text = nameOf(s, id) + " half-open: ";
  if (failed == 0)
    text += "probing";
  else
    text += std::to_string(rounds) + (rounds == 1 ? " probe round, " : " probe rounds, ") +
            std::to_string(failed) + " failed and re-opened it (for up to " +
            durationText(longest) + ")";
  return line(s, NarrativeKind::Probing, run.front()->ts, run.front()->ts, run.back()->ts, id,
              std::move(text), static_cast<std::uint32_t>(run.size()));
}

bool probing(const Event& e) {
  return e.kind == EventKind::Transition &&
         (e.reason == Reason::OpenElapsed || e.reason == Reason::ProbeFailed);
}

NarrativeLine otherLine(const Story& s, const Event& e) {
  const std::string text = nameOf(s, e.instance) + " " + std::string(stateName(e.from)) + " → " +
                           std::string(stateName(e.to)) + " (" + std::string(reasonName(e.reason)) +
                           ")";
  return line(s, NarrativeKind::Other, e.ts, e.ts, e.ts, e.instance, text);
}

NarrativeLine stepLine(const Story& s, const Episode& ep, const Event& e) {
  const std::string who = nameOf(s, ep.id);
  if (e.kind == EventKind::RampComplete)
    return line(s, NarrativeKind::Restored, e.ts, ep.events.front()->ts, e.ts, ep.id,
                restoredText(s, ep, e));
  if (e.reason == Reason::ProbeStreak)
    return line(s, NarrativeKind::Recovered, e.ts, e.ts, e.ts, ep.id,
                who + " probes passed: CLOSED, ramping traffic back");
  if (e.reason == Reason::RampRelapse)
    return line(s, NarrativeKind::Relapse, e.ts, e.ts, e.ts, ep.id,
                who + " re-opened while ramping back (" + tripCause(e) + ")");
  return otherLine(s, e);
}

// Ramping back, relapsing, probing and closing again, several times over: one line.
NarrativeLine relapseCycles(const Story& s, const Episode& ep, std::size_t first, std::size_t last,
                            std::size_t relapses) {
  std::uint32_t failed = 0;
  for (std::size_t i = first; i <= last; ++i) failed += ep.events[i]->reason == Reason::ProbeFailed;
  const Micros a = ep.events[first]->ts, b = ep.events[last]->ts;
  std::string text = nameOf(s, ep.id) + " relapsed " + std::to_string(relapses) +
                     " times while ramping back (first on " + tripCause(*ep.events[first]) + ")" +
                     (failed ? ", " + std::to_string(failed) + " failed probes" : "") +
                     "; closed again at " + when(s, b);
  return line(s, NarrativeKind::Relapse, a, a, b, ep.id, std::move(text),
              static_cast<std::uint32_t>(last - first + 1));
}

// One episode in detail: the open, its probing clustered, closing, relapses, full traffic.
void episodeLines(const Story& s, const Episode& ep, std::vector<NarrativeLine>& out) {
  const Event& first = *ep.events.front();
  const Micros zoomFrom = ep.fault ? std::min(ep.fault->start, first.ts) : first.ts;
  out.push_back(line(s, ep.falseTrip ? NarrativeKind::FalseTrip : NarrativeKind::Trip, first.ts,
                     zoomFrom, first.ts, ep.id, tripText(s, ep)));
  // From the first of several relapses to the last close before full traffic: one line.
  std::size_t relapses = 0, firstRelapse = 0, lastClose = 0;
  for (std::size_t i = 1; i < ep.events.size(); ++i) {
    const Reason r = ep.events[i]->reason;
    if (r == Reason::RampRelapse && relapses++ == 0) firstRelapse = i;
    if (r == Reason::ProbeStreak) lastClose = i;
  }
  const bool cycles = relapses >= 2 && lastClose > firstRelapse;
  std::vector<const Event*> run;
  for (std::size_t i = 1; i < ep.events.size(); ++i) {
    const Event& e = *ep.events[i];
    if (cycles && i == firstRelapse) {
      if (!run.empty()) out.push_back(probingLine(s, ep.id, run));
      run.clear();
      out.push_back(relapseCycles(s, ep, firstRelapse, lastClose, relapses));
      i = lastClose;
      continue;
    }
    if (probing(e)) {
      run.push_back(&e);
      continue;
    }
    if (!run.empty()) out.push_back(probingLine(s, ep.id, run));
    run.clear();
    out.push_back(stepLine(s, ep, e));
  }
  if (!run.empty()) out.push_back(probingLine(s, ep.id, run));
}

// Consecutive like episodes (false trips, or re-trips in one fault) as one line with a count.
void clusterLine(const Story& s, const std::vector<const Episode*>& group,
                 std::vector<NarrativeLine>& out) {
  const Episode& first = *group.front();
  const Micros a = first.events.front()->ts, b = group.back()->events.back()->ts;
  std::uint32_t errors = 0, slow = 0, events = 0;
  for (const Episode* ep : group) {
    const Reason r = ep->events.front()->reason;
    errors += r == Reason::ErrorRate || r == Reason::ErrorAndSlow;
    slow += r == Reason::SlowRate || r == Reason::ErrorAndSlow;
    events += static_cast<std::uint32_t>(ep->events.size());
  }
  std::string text = nameOf(s, first.id) + " flapped: " + std::to_string(group.size()) +
                     " trips until " + when(s, b) + " (" + std::to_string(errors) +
                     " on error rate, " + std::to_string(slow) + " on slow-call rate, " +
                     std::to_string(events) + " transitions)";
  if (first.falseTrip)
    text += " with no real fault — false trips: their blocks count toward 误伤";
  else if (first.fault)
    text += " — re-tripping during the " + first.fault->name;
  NarrativeLine l = line(s, first.falseTrip ? NarrativeKind::FalseTrip : NarrativeKind::Trip, a, a,
                         b, first.id, std::move(text), static_cast<std::uint32_t>(group.size()));
  out.push_back(std::move(l));
}

bool sameKind(const Episode& a, const Episode& b) {
  return a.id == b.id && !a.detects && !b.detects && a.falseTrip == b.falseTrip &&
         a.fault == b.fault;
}

void episodeGroups(const Story& s, const std::vector<Episode>& all,
                   std::vector<NarrativeLine>& out) {
  std::map<InstanceId, std::vector<const Episode*>> byInstance;
  for (const Episode& ep : all) byInstance[ep.id].push_back(&ep);
  for (const auto& [id, eps] : byInstance) {
    for (std::size_t i = 0; i < eps.size();) {
      std::size_t j = i + 1;
      while (j < eps.size() && sameKind(*eps[i], *eps[j])) ++j;
      if (j - i >= kClusterEpisodes)
        clusterLine(s,
                    {eps.begin() + static_cast<std::ptrdiff_t>(i),
                     eps.begin() + static_cast<std::ptrdiff_t>(j)},
                    out);
      else
        for (std::size_t k = i; k < j; ++k) episodeLines(s, *eps[k], out);
      i = j;
    }
  }
}

// Would-open marks (a watching breaker) per instance, a stretch of them as one line.
void wouldOpenLines(const Story& s, const std::vector<const Event*>& loose,
                    std::vector<NarrativeLine>& out) {
  std::map<InstanceId, std::vector<const Event*>> byInstance;
  for (const Event* e : loose) {
    if (e->kind == EventKind::WouldOpen)
      byInstance[e->instance].push_back(e);
    else
      out.push_back(otherLine(s, *e));
  }
  for (const auto& [id, marks] : byInstance) {
    for (std::size_t i = 0; i < marks.size();) {
      std::size_t j = i + 1;
      while (j < marks.size() && marks[j]->ts - marks[j - 1]->ts < kWouldOpenGap) ++j;
      const Event& first = *marks[i];
      std::string text = nameOf(s, id) + " would have opened on " + tripCause(first);
      if (j - i > 1)
        text +=
            ", and " +
            (j - i == 2 ? std::string("once more") : std::to_string(j - i - 1) + " more times") +
            " until " + when(s, marks[j - 1]->ts);
      out.push_back(line(s, NarrativeKind::WouldOpen, first.ts, first.ts, marks[j - 1]->ts, id,
                         text + " — the breaker only watched", static_cast<std::uint32_t>(j - i)));
      i = j;
    }
  }
}

std::vector<NarrativeLine> tell(const Story& s) {
  std::vector<NarrativeLine> out;
  for (const FaultRow& f : s.faults) {
    const std::size_t first = out.size();
    faultLines(s, f, out);
    for (std::size_t i = first; i < out.size(); ++i) out[i].instance = f.instance;
  }
  std::vector<const Event*> loose;
  episodeGroups(s, episodes(s, loose), out);
  wouldOpenLines(s, loose, out);
  std::stable_sort(out.begin(), out.end(),
                   [](const NarrativeLine& a, const NarrativeLine& b) { return a.at < b.at; });
  // A fault on a model has a row per instance, and each row the same group's restoration.
  const auto twin = [](const NarrativeLine& a, const NarrativeLine& b) {
    return a.kind == NarrativeKind::ServiceRestored && b.kind == a.kind && a.at == b.at &&
           a.text == b.text;
  };
  out.erase(std::unique(out.begin(), out.end(), twin), out.end());
  return out;
}

NarrativeLine summaryLine(Micros end, std::string text) {
  NarrativeLine l;
  l.at = end;
  l.from = 0;
  l.to = std::max<Micros>(end, 1);
  l.kind = NarrativeKind::Summary;
  l.text = std::move(text);
  l.count = 0;
  return l;
}

std::string fpText(const BlockTally& b, std::optional<double> perHour) {
  return "误伤 " + pct(b.falsePositiveRate()) + " of " + std::to_string(b.total()) +
         " breaker blocks (false trips " + pct(b.partRate(BlockClass::FalseTrip)) +
         " + recovery lag " + pct(b.partRate(BlockClass::RecoveryLag)) +
         "; collateral of correct trips " + pct(b.collateralShare()) + ", beside it); " +
         std::to_string(b.falseTripEpisodes) + " false trips" +
         (perHour ? printf1(" (%.1f/h)", *perHour) : std::string());
}

std::string optDuration(const std::optional<Micros>& d) {
  return d ? durationText(*d) : std::string("n/a");
}

void simulationSummary(const sim::RunReport& r, const sim::RunReport* baseline,
                       std::vector<NarrativeLine>& out) {
  const Micros end = r.simulated;
  out.push_back(summaryLine(end, "summary: availability " + pctN(r.availability) + ", core " +
                                     pct(r.coreAvailability.value()) + ", during faults " +
                                     pct(r.availabilityInFault.value()) + ", core during faults " +
                                     pct(r.coreAvailabilityInFault.value())));
  if (!r.protection) {
    out.push_back(summaryLine(end, "summary: protection off — the breakers only watched: " +
                                       std::to_string(r.wouldOpens) + " would-opens"));
    return;
  }
  out.push_back(summaryLine(end, "summary: " + fpText(r.blocks, r.falseTripsPerHour)));
  std::uint64_t real = 0, detected = 0;
  for (const sim::FaultReport& f : r.faults)
    if (!f.benign) {
      ++real;
      detected += f.detected;
    }
  out.push_back(summaryLine(
      end, "summary: TTD " + optDuration(r.meanTtd) + " (mean, " + std::to_string(detected) +
               " of " + std::to_string(real) + " faults detected); self-healing " +
               optDuration(r.meanSelfHealing) + " (n=" + std::to_string(r.selfHealed) +
               "); onset → full traffic " + optDuration(r.meanMttr) + "; service restoration " +
               optDuration(r.meanServiceRestoration) + " mean, " +
               (r.serviceNotRestored ? std::string("never back for ") +
                                           std::to_string(r.serviceNotRestored) + " fault(s) at"
                                     : optDuration(r.worstServiceRestoration)) +
               " worst (n=" + std::to_string(r.serviceRestored) + ")"));
  std::string opensText = "summary: " + std::to_string(r.opens) + " breaker opens (" +
                          std::to_string(r.blocks.episodes) +
                          " from full traffic, the rest after failed probes or relapses)";
  if (baseline)
    opensText += " vs " + std::to_string(baseline->wouldOpens) + " would-opens unprotected";
  out.push_back(summaryLine(end, opensText));
}

}  // namespace

std::vector<NarrativeLine> simulationNarrative(const sim::RunReport& report,
                                               const std::vector<Event>& events,
                                               const sim::Scenario* scenario,
                                               const sim::RunReport* baseline) {
  Story s;
  s.simulated = true;
  s.end = report.simulated;
  for (const sim::InstanceReport& i : report.instances) s.names.push_back(i.name);
  for (const sim::FaultReport& f : report.faults)
    s.faults.push_back(simulatedFault(f, report, s.names, scenario));
  s.events = events;
  std::vector<NarrativeLine> out = tell(s);
  simulationSummary(report, baseline, out);
  return out;
}

namespace {

FaultRow replayedFault(const FaultKpis& f, const ReplayKpis& k,
                       const std::vector<std::string>& names, Micros origin) {
  FaultRow row;
  row.instance = f.fault.instance;
  row.index = f.found ? indexOf(names, f.fault.instance) : kNoInstance;
  if (row.index != kNoInstance) row.group = k.instances[row.index].group;
  row.name = f.fault.kind.empty() ? "fault" : spaced(f.fault.kind);
  if (k.faultsFromRecording) row.name = "fault read from the recording";
  row.start = f.fault.start - origin;
  row.end = f.fault.end - origin;
  row.benign = f.fault.benign;
  row.real = !f.fault.benign && f.fault.end - f.fault.start >= GroundTruthRules{}.minFault;
  row.score = f.score;
  if (row.score.detected) row.score.firstOpen -= origin;
  if (row.score.restored) row.score.restoredAt -= origin;
  return row;
}

void replaySummary(const ReplayKpis& k, const ReplayKpis* baseline, Micros end,
                   std::vector<NarrativeLine>& out) {
  SweepScore score;
  score.add(k);
  out.push_back(summaryLine(
      end, "summary: availability " +
               pct(k.records ? std::optional(score.availability()) : std::nullopt) +
               " (recorded successes not blocked, n=" + std::to_string(k.records) + ")"));
  out.push_back(summaryLine(end, "summary: " + fpText(k.blocks, k.falseTripsPerHour())));
  const auto secs = [](std::optional<double> v) {
    return v ? durationText(static_cast<Micros>(*v * 1e6)) : std::string("n/a");
  };
  out.push_back(summaryLine(end, "summary: TTD " + secs(score.meanTtdSeconds()) +
                                     " (mean; a miss counts the fault's " + "length), " +
                                     std::to_string(score.detected) + " of " +
                                     std::to_string(score.faults) + " faults detected; MTTR " +
                                     secs(score.meanMttrSeconds()) + " (mean, " +
                                     std::to_string(score.restored) + " restored)"));
  std::string opensText = "summary: " + std::to_string(k.opens) + " breaker opens (" +
                          std::to_string(k.blocks.episodes) +
                          " from full traffic, the rest after failed probes or relapses)";
  if (baseline) {
    std::uint64_t would = 0;
    for (const InstanceKpis& i : baseline->instances) would += i.counters.wouldOpens;
    opensText += " vs " + std::to_string(would) + " would-opens unprotected";
  }
  out.push_back(summaryLine(end, opensText));
}

}  // namespace

std::vector<NarrativeLine> replayNarrative(const ReplayKpis& kpis, const std::vector<Event>& events,
                                           Micros origin, const ReplayKpis* baseline) {
  Story s;
  s.simulated = false;
  s.origin = origin;
  s.end = kpis.last == kNever ? 0 : kpis.last - origin;
  for (const InstanceKpis& i : kpis.instances) s.names.push_back(i.name);
  for (const FaultKpis& f : kpis.faults)
    s.faults.push_back(replayedFault(f, kpis, s.names, origin));
  s.events = events;
  for (Event& e : s.events) e.ts -= origin;
  std::vector<NarrativeLine> out = tell(s);
  replaySummary(kpis, baseline, s.end, out);
  return out;
}

std::string narrativeTime(const NarrativeLine& line, const NarrativeClock& clock) {
  if (clock.wallOrigin) return formatClock(*clock.wallOrigin + line.at, clock.utc);
  return formatOffset(line.at);
}

std::string narrativeText(const std::vector<NarrativeLine>& lines, const NarrativeClock& clock) {
  std::string out;
  // The summary has no moment of its own: its time column is left blank.
  const std::size_t width = narrativeTime(NarrativeLine{}, clock).size();
  for (const NarrativeLine& l : lines) {
    out += l.kind == NarrativeKind::Summary ? std::string(width, ' ') : narrativeTime(l, clock);
    out += "  " + l.text + "\n";
  }
  return out;
}

}  // namespace spillway::view
