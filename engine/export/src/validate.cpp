// Replaying incidents under the native policy and under an export, and naming the gaps.
#include "spillway/export/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "spillway/kpi_terms.hpp"
#include "spillway/replay.hpp"
#include "spillway/telemetry.hpp"

namespace spillway::exporter {

NativeRun replayNative(const Policy& policy, const Incident& incident, std::uint64_t seed) {
  auto reader = JsonlReader::fromMemory(incident.name, incident.text, false);
  ReplayOptions opt;
  opt.seed = seed;
  opt.truth = incident.truth;
  Replayer rep(policy, opt);
  CallRecord rec;
  NativeRun run;
  std::uint64_t calls = 0;
  while (reader->next(rec)) {
    rep.feed(rec);
    ++calls;
  }
  // An empty incident proves nothing: a --require gate passed on it (0 opens, 0 blocked).
  if (calls == 0)
    throw InputError(incident.name, 0, "", "holds no calls: an export cannot be validated on it");
  rep.finish();
  run.kpis = nativeReplayKpis(rep, incident.faults);
  const Engine& eng = rep.engine();
  std::map<std::string, std::vector<Micros>> byModel;
  for (InstanceId id = 0; id < eng.size(); ++id) {
    run.instances.emplace_back(eng.name(id), eng.model(id));
    const BreakerSnapshot s = eng.breaker(id).snapshot(rep.lastTime());
    if (s.baselineLearned && s.baselineP99 > 0)
      byModel[eng.model(id)].push_back(static_cast<Micros>(s.baselineP99));
  }
  for (auto& [model, v] : byModel) {
    std::sort(v.begin(), v.end());
    run.baselineP99[model] = v[v.size() / 2];
  }
  return run;
}

ExportContext contextFrom(const std::vector<NativeRun>& runs, const std::string& source) {
  ExportContext ctx;
  ctx.baselineSource = source;
  std::map<std::string, std::vector<Micros>> byModel;
  for (const NativeRun& r : runs) {
    for (const auto& [m, b] : r.baselineP99) byModel[m].push_back(b);
    for (const auto& im : r.instances)
      if (std::find(ctx.instances.begin(), ctx.instances.end(), im) == ctx.instances.end())
        ctx.instances.push_back(im);
  }
  for (auto& [m, v] : byModel) {
    std::sort(v.begin(), v.end());
    ctx.baselineP99[m] = v[v.size() / 2];
  }
  return ctx;
}

ReplayKpis replayTarget(const ExportResult& exported, const Incident& incident,
                        std::uint64_t seed) {
  auto reader = JsonlReader::fromMemory(incident.name, incident.text, false);
  DialectReplayOptions opt;
  opt.truth = incident.truth;
  return replayUnderDialect(exported.target, exported.text, exported.fileName, *reader,
                            incident.faults, seed, opt, exported.select);
}

// ---- gaps ------------------------------------------------------------------------------------

namespace {

std::string human(Micros d) {
  if (d == kForever) return "inf";
  char buf[32];
  const double s = static_cast<double>(d) / 1e6;
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  else
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return buf;
}

std::string pctText(std::optional<double> r) {
  if (!r) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", *r * 100);
  return buf;
}

// What the target does to a sick instance, in its own words.
std::string verb(DialectKind k) {
  switch (k) {
    case DialectKind::Envoy:
    case DialectKind::Istio:
      return "ejected";
    case DialectKind::Haproxy:
    case DialectKind::Nginx:
      return "marked down";
    case DialectKind::Litellm:
      return "cooled down";
    default:
      return "opened";
  }
}

// The short cause behind a gap: the first note on `topics` (gaps before approximations), cut
// at its first colon.
std::string cause(const ExportResult& x, std::initializer_list<Topic> topics) {
  for (bool gapsFirst : {true, false})
    for (Topic t : topics)
      for (const MappingNote& n : x.notes)
        if (n.topic == t && n.gap == gapsFirst && n.scope.empty()) {
          std::string s = n.text;
          for (const char* stop : {":", ";", " ("}) s = s.substr(0, s.find(stop));
          if (s.size() > 110) {  // cut on a character boundary (UTF-8 continuation bytes)
            std::size_t cut = 107;
            while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
            s = s.substr(0, cut) + "...";
          }
          return s;
        }
  return "";
}

bool latencyFault(const std::string& kind) {
  for (const char* w : {"latency", "slow", "drift", "leak"})
    if (kind.find(w) != std::string::npos) return true;
  return false;
}

// Two durations differ when apart by more than max(floor, 25 % of the native one).
bool apart(Micros a, Micros b, Micros floor) {
  if (a == kForever || b == kForever) return a != b;
  return std::llabs(a - b) > std::max<Micros>(floor, b / 4);
}

const InstanceKpis* findInstance(const ReplayKpis& k, const std::string& name) {
  for (const InstanceKpis& i : k.instances)
    if (i.name == name) return &i;
  return nullptr;
}

// The first time the run took `instance` out at or after `from`; kNever if it did not.
Micros firstDownAfter(const ReplayKpis& k, const std::string& instance, Micros from) {
  for (const InstanceKpis& i : k.instances)
    if (i.name == instance)
      for (const OutPeriod& o : i.outs)
        if (o.down >= from) return o.down;
  return kNever;
}

}  // namespace

std::vector<std::string> nameGaps(const ExportResult& x, const std::string& incident,
                                  const ReplayKpis& n, const ReplayKpis& t) {
  std::vector<std::string> out;
  const std::string who = std::string(dialectName(x.target));
  auto say = [&](const std::string& why, const std::string& what) {
    out.push_back(who + ": " + (why.empty() ? "" : why + " — ") + what);
  };
  for (std::size_t i = 0; i < n.faults.size() && i < t.faults.size(); ++i) {
    const FaultKpis& nf = n.faults[i];
    const FaultKpis& tf = t.faults[i];
    if (!nf.found || !tf.found) continue;
    const std::string inst = nf.fault.instance;
    const bool lat = latencyFault(nf.fault.kind);
    const std::string what = lat ? "the slow instance " + inst : "the faulty instance " + inst;
    const std::string detectWhy = lat ? cause(x, {Topic::Slow, Topic::Threshold})
                                      : cause(x, {Topic::Threshold, Topic::Window});
    const FaultScore& ns = nf.score;
    const FaultScore& ts = tf.score;
    if (ns.detected && !ts.detected) {
      // Taken out after the fault ended is not "never": say when.
      const Micros late = firstDownAfter(t, inst, tf.fault.start);
      if (late != kNever)
        say(detectWhy, "on " + incident + " " + what + " is " + verb(x.target) + " only " +
                           human(late - tf.fault.end) + " after the fault ended: TTD inf vs " +
                           human(ns.ttd) + " native");
      else
        say(detectWhy, "on " + incident + " " + what + " is never " + verb(x.target) +
                           ": TTD inf vs " + human(ns.ttd) + " native");
      continue;  // nothing to restore
    }
    if (!ns.detected && ts.detected)
      say(cause(x, {Topic::Threshold, Topic::Sustain}),
          "on " + incident + " " + what + " is " + verb(x.target) + " after " + human(ts.ttd) +
              "; the native policy never opens it");
    if (ns.detected && ts.detected && apart(ts.ttd, ns.ttd, seconds(2))) {
      const bool later = ts.ttd > ns.ttd;
      say(later ? detectWhy : cause(x, {Topic::Sustain, Topic::Threshold}),
          "on " + incident + " " + what + " is " + verb(x.target) + (later ? " later" : " sooner") +
              ": TTD " + human(ts.ttd) + " vs " + human(ns.ttd) + " native");
    }
    if (!ts.detected) continue;
    if (ns.restored && !ts.restored)
      say(cause(x, {Topic::HalfOpen, Topic::Ramp, Topic::Backoff}),
          "on " + incident + " " + inst +
              " never gets full traffic back after the fault: MTTR inf vs " + human(ns.mttr) +
              " native");
    else if (!ns.restored && ts.restored)
      say(cause(x, {Topic::HalfOpen, Topic::Ramp}),
          "on " + incident + " " + inst + " gets full traffic back (MTTR " + human(ts.mttr) +
              "); the native policy has not restored it by the end of the trace");
    else if (ns.restored && apart(ts.mttr, ns.mttr, seconds(5))) {
      const bool later = ts.mttr > ns.mttr;
      say(later ? cause(x, {Topic::HalfOpen, Topic::Backoff, Topic::Open})
                : cause(x, {Topic::Ramp, Topic::HalfOpen}),
          "on " + incident + " " + inst + " gets full traffic back " +
              (later ? "later" : "sooner") + ": MTTR " + human(ts.mttr) + " vs " + human(ns.mttr) +
              " native");
    }
  }
  // Good calls blocked that a better policy could have let through: the 误伤 rate and count.
  const auto nfp = n.fpRate(), tfp = t.fpRate();
  const double nv = nfp.value_or(0), tv = tfp.value_or(0);
  const std::uint64_t tn = t.falsePositives(), nn = n.falsePositives();
  if (tn > nn && tv > nv + 0.01)
    say(cause(x, {Topic::Sustain, Topic::Threshold, Topic::HalfOpen}),
        "on " + incident + " it blocks more calls that would have succeeded: 误伤 " + pctText(tfp) +
            " (" + std::to_string(tn) + " good calls) vs " + pctText(nfp) + " (" +
            std::to_string(nn) + ") native");
  else if (nn > tn && nv > tv + 0.01)
    say("", "on " + incident + " it blocks fewer calls that would have succeeded: 误伤 " +
                pctText(tfp) + " (" + std::to_string(tn) + ") vs " + pctText(nfp) + " (" +
                std::to_string(nn) + ") native");
  const auto bigger = [](std::uint64_t a, std::uint64_t b) {
    return a > b + 20 && static_cast<double>(a) > 1.25 * static_cast<double>(b);
  };
  if (bigger(t.rejected, n.rejected) || bigger(n.rejected, t.rejected))
    say(t.rejected > n.rejected ? cause(x, {Topic::HalfOpen, Topic::Open, Topic::Backoff})
                                : cause(x, {Topic::Slow, Topic::HalfOpen}),
        "on " + incident + " it blocks " + std::to_string(t.rejected) + " calls vs " +
            std::to_string(n.rejected) + " native");
  // Opens on instances without an annotated fault (only when faults are annotated).
  if (!n.faults.empty() && !n.faultsFromRecording) {
    for (const InstanceKpis& ti : t.instances) {
      const bool faulty = std::any_of(n.faults.begin(), n.faults.end(), [&](const FaultKpis& f) {
        return f.fault.instance == ti.name;
      });
      if (faulty) continue;
      const InstanceKpis* ni = findInstance(n, ti.name);
      const std::uint64_t no = ni ? ni->counters.opens : 0;
      if (ti.counters.opens > no)
        say(cause(x, {Topic::Threshold, Topic::Sustain}),
            "on " + incident + " " + ti.name + " (no annotated fault) is " + verb(x.target) + " " +
                std::to_string(ti.counters.opens) + " time(s); native: " + std::to_string(no));
      else if (ti.counters.opens < no)
        say("", "on " + incident + " " + ti.name + " (no annotated fault) is " + verb(x.target) +
                    " " + std::to_string(ti.counters.opens) + " time(s); native opens it " +
                    std::to_string(no) + " time(s)");
    }
  }
  return out;
}

// ---- --require -------------------------------------------------------------------------------

std::vector<Requirement> parseRequirements(std::string_view spec) {
  auto m = [](std::string_view name, Metric metric, KpiKind kind) {
    return KpiMetric{name, static_cast<int>(metric), kind};
  };
  static const KpiMetric kMetrics[] = {m("fp", Metric::Fp, KpiKind::Share),
                                       m("ttd", Metric::Ttd, KpiKind::Duration),
                                       m("mttr", Metric::Mttr, KpiKind::Duration),
                                       m("from_trip", Metric::FromTrip, KpiKind::Duration),
                                       m("recovery_lag", Metric::RecoveryLag, KpiKind::Duration),
                                       m("blocked", Metric::Blocked, KpiKind::Count),
                                       m("opens", Metric::Opens, KpiKind::Count),
                                       m("false_trips", Metric::FalseTrips, KpiKind::PerHour),
                                       m("collateral", Metric::Collateral, KpiKind::Share)};
  std::vector<Requirement> out;
  for (KpiTerm& t : parseKpiTerms(spec, "--require", {kMetrics, true}))
    out.push_back({static_cast<Metric>(t.id), t.op, t.value, std::move(t.text)});
  if (out.empty())
    throw InputError("--require", 0, "", "no term (expected e.g. fp<=0.03,ttd<=30s)");
  return out;
}

std::string formatMetric(Metric m, double v) {
  char buf[32];
  switch (m) {
    case Metric::Fp:
    case Metric::Collateral:
      std::snprintf(buf, sizeof buf, "%.1f%%", v * 100);
      return buf;
    case Metric::FalseTrips:
      std::snprintf(buf, sizeof buf, "%.2f/h", v);
      return buf;
    case Metric::Ttd:
    case Metric::Mttr:
    case Metric::FromTrip:
    case Metric::RecoveryLag:
      return v >= static_cast<double>(kForever) ? "inf" : human(static_cast<Micros>(v));
    case Metric::Blocked:
    case Metric::Opens:
      std::snprintf(buf, sizeof buf, "%.0f", v);
      return buf;
  }
  return "?";
}

std::vector<RequirementResult> checkRequirements(const std::vector<Requirement>& reqs,
                                                 const std::vector<std::string>& names,
                                                 const std::vector<ReplayKpis>& runs) {
  std::vector<RequirementResult> out;
  for (const Requirement& q : reqs) {
    RequirementResult res;
    res.req = q;
    bool any = false;
    // The worst value: the largest for <=/<, the smallest for >=/>.
    const bool upper = q.op == Op::Le || q.op == Op::Lt;
    double worst = upper ? -1.0 : 1e300;
    std::string where;
    bool worstIsNa = false;  // 误伤 over no block: n/a (kpis.md), never printed as 0
    auto consider = [&](double v, const std::string& at, bool na = false) {
      if (!any || (upper ? v > worst : v < worst)) {
        worst = v;
        where = at;
        worstIsNa = na;
      }
      any = true;
    };
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const ReplayKpis& k = runs[i];
      const std::string inc = i < names.size() ? names[i] : "incident " + std::to_string(i + 1);
      switch (q.metric) {
        case Metric::Fp:
          // Nothing blocked harmed nothing: it meets any fp bound, and reads n/a.
          if (k.fpRate())
            consider(*k.fpRate(), inc);
          else
            consider(0, inc + " (nothing blocked)", true);
          break;
        case Metric::Collateral:
          consider(k.blocks.collateralShare().value_or(0), inc);
          break;
        case Metric::FalseTrips:
          consider(k.falseTripsPerHour().value_or(0), inc);
          break;
        case Metric::Blocked:
          consider(static_cast<double>(k.rejected), inc);
          break;
        case Metric::Opens:
          consider(static_cast<double>(k.opens), inc);
          break;
        default:
          for (const FaultKpis& f : k.faults) {
            if (!f.found) continue;
            const FaultScore& s = f.score;
            const Micros v = q.metric == Metric::Ttd        ? s.ttd
                             : q.metric == Metric::Mttr     ? s.mttr
                             : q.metric == Metric::FromTrip ? s.fromTrip
                                                            : s.recoveryLag;
            std::string at = f.fault.instance + " on " + inc;
            if (v == kForever) at += s.detected ? " (never restored)" : " (never detected)";
            consider(static_cast<double>(v), at);
          }
      }
    }
    if (!any) {
      res.passed = false;
      res.detail =
          "not measurable: no annotated fault in the validation incidents (add a "
          "*.faults.jsonl next to the trace)";
      out.push_back(res);
      continue;
    }
    res.actual = worst;
    res.passed = satisfies(worst, q.op, q.value);
    res.detail =
        (worstIsNa ? std::string("n/a") : formatMetric(q.metric, worst)) + " (" + where + ")";
    out.push_back(res);
  }
  return out;
}

}  // namespace spillway::exporter
