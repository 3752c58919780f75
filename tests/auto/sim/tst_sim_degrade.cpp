// Degradation and limits inside the simulator (sim/src/gateway.cpp, clients.cpp), end to end:
//  - the degrade lock: a degraded session and its retries stay off the broken primary until
//    the lock expires, then traffic goes back to the primary;
//  - bulkheads: a primary that hangs every call fills its own gateway budget, not the
//    backup's, and the backup keeps answering;
//  - tenant isolation: one tenant's burst leaves another tenant's admissions untouched;
//  - conservation with limits and degradation on and off, over the four seed scenarios;
//  - the seeds' published bars (seed 000, 002, 003).
// Small rigs use a deterministic service time (sigma 0) and round-number loads, so most
// expectations follow from the scenario, not from one run's figures.
#include <QtTest>

#include <array>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "sim_run.hpp"
#include "spillway/input_error.hpp"
#include "spillway/limits.hpp"
#include "spillway/sim/report.hpp"
#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/series.hpp"
#include "spillway/sim/simulator.hpp"

using namespace spillway;
using namespace spillway::sim;

namespace {

constexpr int kPrimary = 0, kBackup = 1, kCache = 2;  // answeredBy tiers

std::uint64_t sumEnds(const std::array<std::uint64_t, kEndCount>& ends) {
  return std::accumulate(ends.begin(), ends.end(), std::uint64_t{0});
}
std::uint64_t success(const ClientReport& c) {
  return c.ends[static_cast<int>(End::Success)];
}

// One run: the scenario stays alive next to the report (the Simulator only references it).
struct Run : SimRun {
  // Responses (answers and timeouts) of the instances of `model`, over ticks from < t ≤ to.
  std::uint64_t responses(const std::string& model, Micros from, Micros to) const {
    std::uint64_t n = 0;
    for (const InstanceTick& row : series.instances)
      if (row.t > from && row.t <= to && report.instances[row.instance].model == model)
        n += row.responses;
    return n;
  }
  std::uint64_t attempts(const std::string& model) const {
    std::uint64_t n = 0;
    for (const InstanceReport& in : report.instances)
      if (in.model == model) n += in.attempts;
    return n;
  }
  const TenantReport* tenant(const std::string& name) const {
    for (const TenantReport& t : report.tenants)
      if (t.name == name) return &t;
    return nullptr;
  }
};

Run simulateYaml(const std::string& yaml, bool protection = true) {
  Run r;
  simulateInto(r, yaml, protection);
  return r;
}

QString pct(const Ratio& r) {
  return r.value() ? QStringLiteral("%1 % (n=%2)").arg(*r.value() * 100, 0, 'f', 2).arg(r.den)
                   : QStringLiteral("n/a");
}

// ---- the degrade-lock rig --------------------------------------------------------------
// Conversations of ~6 turns (3 s think) on `prim`; every primary call fails (503) during
// [60 s, 120 s). The breaker is disabled, so the primary is always tried unless a lock says
// otherwise: each failure is the gateway's re-route onto `back`, which takes the lock. The
// backup fails 20 % of calls (answers in 20 ms), which makes the callers retry — the retries
// the lock must keep on the backup. The primary never fails outside the fault, so nothing
// else ever degrades.
const Micros kLockFaultAt = seconds(60), kLockFaultEnd = seconds(120), kLockTtl = seconds(30);

// `primaryMode`: the breaker mode of the primary's instances (an override; the backup's
// breaker stays disabled).
std::string lockRig(const std::string& primaryMode, bool lock) {
  return R"(name: lock-rig
duration: 240s
drain: 30s
seed: 11
routing: round_robin
policy:
  breaker: {mode: disabled}
  overrides:
    models:
      prim: {mode: )" +
         primaryMode + R"(}
  models:
    prim: {tier: 1, quality: 0.9, tags: [chat]}
    back: {tier: 2, quality: 0.8, tags: [chat]}
  degrade:
    max_quality_drop: 0.2
    retry_budget: 1.0
    lock: {enabled: )" +
         (lock ? "true" : "false") + R"(, ttl: 30s}
models:
  - {name: prim, instances: 2, slots: 64, queue: 64, service: {base: 50ms, sigma: 0}}
  - {name: back, instances: 1, slots: 64, queue: 64, service: {base: 50ms, sigma: 0},
     error_rate: 0.2}
clients:
  - {name: conv, model: prim, criticality: core, rate: 2, timeout: 2s,
     retries: {max: 3, backoff: 100ms}, sessions: {turns: 6, think: 3s}}
faults:
  - {type: errors, target: prim, at: 60s, duration: 60s, rate: 1.0, status: 503}
)";
}

// ---- the bulkhead rig -------------------------------------------------------------------
// 40 req/s of core traffic, 100 ms calls: 4 in flight in steady state. During [30 s, 90 s)
// every call to `prim` hangs until the caller's 5 s timeout. The primary's gateway budget
// (max_requests 20) fills with stuck calls within half a second; `back` has its own budget
// (40), ten times what the whole load needs.
// `shared`: no per-model budgets, one pool of 60 for both models (seed 002's failure mode).
std::string bulkheadRig(bool degrade, bool shared = false) {
  std::string yaml = std::string(R"(name: bulkhead-rig
duration: 120s
drain: 30s
seed: 5
routing: least_outstanding
policy:
  models:
    prim: {tier: 1, quality: 0.9, tags: [chat]}
    back: {tier: 2, quality: 0.8, tags: [chat]}
)") + (degrade ? "  degrade: {max_quality_drop: 0.2}\n" : "") +
                     R"(models:
  - {name: prim, instances: 2, slots: 32, queue: 32, max_requests: 20,
     service: {base: 100ms, sigma: 0}}
  - {name: back, instances: 2, slots: 32, queue: 32, max_requests: 40,
     service: {base: 100ms, sigma: 0}}
clients:
  - {name: core, model: prim, criticality: core, rate: 40, timeout: 5s,
     retries: {max: 1, backoff: 200ms}}
faults:
  - {type: hang, target: prim, at: 30s, duration: 60s, rate: 1.0}
)";
  if (shared) {
    for (const char* budget : {", max_requests: 20", ", max_requests: 40"})
      yaml.erase(yaml.find(budget), std::string(budget).size());
    yaml.insert(yaml.find("policy:"), "shared_pool: 60\n");
  }
  return yaml;
}

// ---- the tenant rig ---------------------------------------------------------------------
// One model, 2 × 16 slots of 200 ms: 160 req/s. `quiet` offers 30 req/s throughout; `noisy`
// offers 40 req/s, ×10 (400 req/s) during [20 s, 40 s) — far beyond the model. Both tenants
// have a quota of 50/s (burst 50). No retries: every original is one admission decision.
std::string tenantRig(bool limits) {
  return std::string(R"(name: tenant-rig
duration: 60s
drain: 20s
seed: 3
routing: least_outstanding
)") +
         (limits ? R"(policy:
  limits:
    tenants:
      noisy: {rate: 50, burst: 50}
      quiet: {rate: 50, burst: 50}
)"
                 : "") +
         R"(models:
  - {name: m, instances: 2, slots: 16, queue: 16, service: {base: 200ms, sigma: 0}}
clients:
  - {name: noisy-app, model: m, tenant: noisy, rate: 40, timeout: 5s, retries: {max: 0},
     profile: {type: burst, start: 20s, duration: 20s, multiplier: 10}}
  - {name: quiet-app, model: m, tenant: quiet, rate: 30, timeout: 5s, retries: {max: 0}}
)";
}

// ---- the SLA-class rig (seed 001, 3.1) ----------------------------------------------------
// `prim` answers in 50 ms until it goes down at 20 s (every call refused); the breaker and the
// lock are off, so every later request is refused by `prim` and degrades. `quant` answers in
// 50 ms, `tiny` in 20 ms; both are chat models within the drop. One client per run, with the
// class `cls` (empty: none); every class has a 30 ms budget, so only tiny and cache answers
// are within it.
std::string slaRig(const std::string& cls, bool core) {
  return std::string(R"(name: sla-rig
duration: 60s
drain: 20s
seed: 9
policy:
  breaker: {mode: disabled}
  models:
    prim: {tier: 1, quality: 0.9, tags: [chat]}
    quant: {tier: 2, quality: 0.88, tags: [chat]}
    tiny: {tier: 3, quality: 0.6, tags: [chat]}
  degrade:
    lock: {enabled: false}
    cache: {enabled: true, max_age: 10m}
  sla_classes:
    full: {availability: 0.9999, latency: 30ms, degrade_to: [quant]}
    quantized: {availability: 0.999, latency: 30ms, degrade_to: [tiny, cache]}
    cached: {availability: 0.99, latency: 30ms, degrade_to: [cache]}
    open: {availability: 0.99, latency: 30ms}
models:
  - {name: prim, instances: 1, slots: 64, service: {base: 50ms, sigma: 0}}
  - {name: quant, instances: 1, slots: 64, service: {base: 50ms, sigma: 0}}
  - {name: tiny, instances: 1, slots: 64, service: {base: 20ms, sigma: 0}}
clients:
  - {name: app, model: prim, rate: 5, timeout: 2s, retries: {max: 0}, cache: {keys: 3},
     criticality: )") +
         (core ? "core" : "non_critical") + (cls.empty() ? "" : ", sla_class: " + cls) + R"(}
faults:
  - {type: outage, target: prim, at: 20s, duration: 40s}
)";
}

// ---- the long-tail rig (seed 001, 4.3) ----------------------------------------------------
// 20 req/s of core traffic over two primaries (round robin) with 100 ms calls; prim-1 hangs
// every call during [40 s, 100 s). The breakers only measure (metrics_only): nothing blocks, so
// what the tail cut does is all there is. The callers wait 5 s, their SLO is 2 s, no retries.
std::string tailRig(bool truncate) {
  return std::string(R"(name: tail-rig
duration: 120s
drain: 30s
seed: 5
routing: round_robin
policy:
  breaker: {mode: metrics_only}
  models:
    prim: {tier: 1, quality: 0.9, tags: [chat]}
    back: {tier: 2, quality: 0.8, tags: [chat]}
  degrade: {max_quality_drop: 0.2, retry_budget: 1.0, truncate_tail: )") +
         (truncate ? "true" : "false") + R"(}
models:
  - {name: prim, instances: 2, slots: 32, queue: 32, service: {base: 100ms, sigma: 0.1}}
  - {name: back, instances: 2, slots: 32, queue: 32, service: {base: 100ms, sigma: 0.1}}
clients:
  - {name: core, model: prim, criticality: core, rate: 20, timeout: 5s, slo: 2s,
     retries: {max: 0}}
faults:
  - {type: hang, target: prim-1, at: 40s, duration: 60s, rate: 1.0}
)";
}

const char* const kSeeds[] = {"seed-000", "seed-001", "seed-002", "seed-003"};

}  // namespace

class TstSimDegrade : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void lockKeepsRetriesOffThePrimary();
  void forcedOpenPrimaryNeverReached();
  void lockedSessionsTrimmedEachTime_data();
  void lockedSessionsTrimmedEachTime();
  void noRerouteOfTriesThatNeverLeft();
  void bulkheadUnderPrimaryHang();
  void tenantIsolation();
  void tenantReportShowsEffectiveBurst();
  void slaClassesRouteAndMeasure_data();
  void slaClassesRouteAndMeasure();
  void slaClassUnknown();
  void tailTruncation();
  void sharedPoolStarvesBackup();
  void conservation_data();
  void conservation();
  void seed000Bar();
  void seed002Tiers();
  void seed003Lock();

 private:
  // The four seeds, baseline ([0]) and protected ([1]), run once for several tests.
  Scenario seeds_[4];
  RunReport seedRuns_[4][2];
};

void TstSimDegrade::initTestCase() {
  for (int s = 0; s < 4; ++s) {
    try {
      seeds_[s] =
          loadScenarioFile(std::string(SPILLWAY_RESOURCES_DIR "/scenarios/") + kSeeds[s] + ".yaml");
    } catch (const InputError& e) {
      QFAIL(e.what());
    }
    for (int p = 0; p < 2; ++p) {
      SimOptions opt;
      opt.protection = p == 1;
      Simulator sim(seeds_[s], opt);  // seeds_[s] outlives the simulator
      sim.run();
      QVERIFY(sim.finished());
      seedRuns_[s][p] = sim.report();
    }
  }
}

void TstSimDegrade::lockKeepsRetriesOffThePrimary() {
  const Run on = simulateYaml(lockRig("disabled", true));
  const Run off = simulateYaml(lockRig("disabled", false));
  const RunReport& r = on.report;
  const ClientReport& c = r.clients[0];
  QVERIFY(r.degradeOn);
  QCOMPARE(r.inFlightAtEnd, std::uint64_t{0});

  // The lock was used, by retries and later turns, and never sent a locked try to `prim`.
  QCOMPARE(r.misroutes, std::uint64_t{0});
  QVERIFY2(r.lockHits > 100, qPrintable(QString::number(r.lockHits)));
  QVERIFY(r.locksTaken > 0);
  QVERIFY(c.retries > 0);  // the backup's errors made the callers retry
  QVERIFY(r.answeredBy[kBackup] > 0);
  QVERIFY(r.reroutes > 0);
  QCOMPARE(r.answeredBy[kCache], std::uint64_t{0});  // no cache configured

  // Nothing degrades before the fault.
  QCOMPARE(on.responses("back", 0, kLockFaultAt), std::uint64_t{0});
  QVERIFY(on.responses("prim", 0, kLockFaultAt) > 0);
  // The lock outlives the fault: locked sessions stay on the backup for up to a TTL.
  QVERIFY(on.responses("back", kLockFaultEnd + seconds(1), kLockFaultEnd + kLockTtl) > 0);
  // Locks are only taken on a primary failure, i.e. up to the fault's end (+ 20 ms for the
  // last 503); a TTL later they have all expired and no try goes to the backup any more (+
  // 1 s for a backup call still in flight at that moment to be answered).
  const Micros quiet = kLockFaultEnd + kLockTtl + seconds(2);
  QCOMPARE(on.responses("back", quiet, seconds(300)), std::uint64_t{0});
  QVERIFY(on.responses("prim", quiet, seconds(300)) > 0);

  // Without the lock every turn and every retry tries the primary first; with it a session
  // tries it about once per lock (conversations of ~6 turns, shorter than the TTL). During
  // the fault the primary sees far fewer calls with the lock.
  const std::uint64_t primOn = on.responses("prim", kLockFaultAt, kLockFaultEnd);
  const std::uint64_t primOff = off.responses("prim", kLockFaultAt, kLockFaultEnd);
  QVERIFY2(primOn * 2 < primOff,
           qPrintable(QStringLiteral("primary calls in the fault: %1 locked vs %2 unlocked")
                          .arg(primOn)
                          .arg(primOff)));
  QCOMPARE(off.report.lockHits, std::uint64_t{0});
  QCOMPARE(off.report.locksTaken, std::uint64_t{0});
  // ... and it is what keeps the retries answered: unlocked, a retry goes back to the failing
  // primary (the one re-route per original is spent), locked it goes to the backup.
  const double aOn = r.availabilityInFault.value().value_or(0);
  const double aOff = off.report.availabilityInFault.value().value_or(1);
  QVERIFY2(aOn > aOff + 0.05, qPrintable(QStringLiteral("availability in the fault: %1 locked vs "
                                                        "%2 unlocked")
                                             .arg(pct(r.availabilityInFault))
                                             .arg(pct(off.report.availabilityInFault))));
}

// The primary's breakers forced open: it is never admitted, every try degrades.
void TstSimDegrade::forcedOpenPrimaryNeverReached() {
  const Run run = simulateYaml(lockRig("forced_open", true));
  const RunReport& r = run.report;
  QVERIFY(r.answeredBy[kBackup] > 0);
  QCOMPARE(run.attempts("prim"), std::uint64_t{0});
  QCOMPARE(r.answeredBy[kPrimary], std::uint64_t{0});
  QCOMPARE(r.misroutes, std::uint64_t{0});
  QVERIFY(r.lockHits > 0);
  QCOMPARE(r.reroutes, std::uint64_t{0});  // nothing ever came back from the primary
  // Every answer is a backup answer of lower quality (0.8 < 0.9), from tier 2.
  QCOMPARE(r.answeredBy[kBackup], r.ends[static_cast<int>(End::Success)]);
  QCOMPARE(r.qualityDropShare.num, r.qualityDropShare.den);
  QCOMPARE(r.backupByTier[1], r.answeredBy[kBackup]);
  QCOMPARE(run.attempts("back"), r.attempts);
}

// Each class's degraded requests take its own versions (full → quant, quantized → tiny,
// cached → the cache), a client without a class the policy's chain (quant first); the class's
// budget is measured beside the client's SLO: answers within 30 ms (tiny, cache) attain it,
// 50 ms answers (prim, quant) are available but miss it.
void TstSimDegrade::slaClassesRouteAndMeasure_data() {
  QTest::addColumn<QString>("cls");
  QTest::addColumn<bool>("quant");
  QTest::addColumn<bool>("tiny");
  QTest::addColumn<bool>("cache");
  QTest::newRow("full: the full-quality backup") << "full" << true << false << false;
  QTest::newRow("quantized: tiny before the cache") << "quantized" << false << true << false;
  QTest::newRow("cached: the cache alone") << "cached" << false << false << true;
  QTest::newRow("open: no list, the chain") << "open" << true << false << false;
  QTest::newRow("no class") << "" << true << false << false;
}

void TstSimDegrade::slaClassesRouteAndMeasure() {
  QFETCH(QString, cls);
  QFETCH(bool, quant);
  QFETCH(bool, tiny);
  QFETCH(bool, cache);
  const Run run = simulateYaml(slaRig(cls.toStdString(), true));
  const RunReport& r = run.report;
  const ClientReport& c = r.clients[0];
  QCOMPARE(r.inFlightAtEnd, std::uint64_t{0});
  QCOMPARE(run.attempts("quant") > 0, quant);
  QCOMPARE(run.attempts("tiny") > 0, tiny);
  QCOMPARE(c.answeredBy[kCache] > 0, cache);
  QVERIFY(c.answeredBy[kPrimary] > 0);  // before the outage
  QCOMPARE(r.slaClasses.size(), std::size_t{4});
  if (cls.isEmpty()) {
    QCOMPARE(c.withinClassBudget.den, std::uint64_t{0});
    for (const SlaClassReport& s : r.slaClasses) QCOMPARE(s.attained.den, std::uint64_t{0});
    return;
  }
  QCOMPARE(c.slaClass, cls.toStdString());
  const SlaClassReport* s = nullptr;
  for (const SlaClassReport& k : r.slaClasses)
    if (k.name == cls.toStdString()) s = &k;
  QVERIFY(s);
  QCOMPARE(s->attained.den, c.originals);
  // Within 30 ms: exactly the tiny and cache answers (deterministic service, light load).
  const std::uint64_t fast = (tiny ? c.answeredBy[kBackup] : 0) + c.answeredBy[kCache];
  QCOMPARE(s->attained.num, fast);
  QCOMPARE(s->met(), false);  // the 50 ms primary answers before the outage miss 30 ms
  // The client's own SLO (its 2 s timeout) is another bar: every answer is available.
  QCOMPARE(c.availability.num, success(c));
  // The budget is a measuring stick, not a layer: the baseline measures it too.
  const Run base = simulateYaml(slaRig(cls.toStdString(), true), false);
  for (const SlaClassReport& k : base.report.slaClasses)
    if (k.name == cls.toStdString()) QCOMPARE(k.attained.den, base.report.clients[0].originals);
}

// A client naming a class the policy does not define is an error naming the client's line.
void TstSimDegrade::slaClassUnknown() {
  try {
    const Run run = simulateYaml(slaRig("gold", true));
    QFAIL("a client of an undefined SLA class ran");
  } catch (const InputError& e) {
    // An input error like any other: the scenario's file, the client's line, the key.
    const QString what = QString::fromUtf8(e.what());
    QCOMPARE(e.file(), std::string("rig.yaml"));
    QCOMPARE(e.line(), 24L);
    QCOMPARE(e.field(), std::string("clients[0].sla_class"));
    QVERIFY2(what.contains("'gold'") && what.contains("full"), e.what());
  }
}

// Long-tail truncation: without it, the calls prim-1 hangs wait out the callers' 5 s and miss
// the 2 s SLO (half the traffic during the fault); with it, the gateway cuts each at prim-1's
// slow threshold (3 × its ~0.13 s P99 baseline) and the backup answers within the SLO. Outside
// the fault no call is that slow: every cut is a hung call, each re-routed.
void TstSimDegrade::tailTruncation() {
  const Run off = simulateYaml(tailRig(false));
  const Run on = simulateYaml(tailRig(true));
  const RunReport &a = off.report, &b = on.report;
  QCOMPARE(a.tailCuts, std::uint64_t{0});
  QVERIFY(b.tailCuts > 0);
  QCOMPARE(b.reroutes, b.tailCuts);
  QCOMPARE(b.answeredBy[kBackup], b.tailCuts);
  // prim-1 takes every other call for 60 s at 20/s: ~600 cuts.
  QVERIFY2(b.tailCuts > 500 && b.tailCuts < 700, qPrintable(QString::number(b.tailCuts)));
  qInfo("during the fault: %s without the cut, %s with it", qPrintable(pct(a.availabilityInFault)),
        qPrintable(pct(b.availabilityInFault)));
  QVERIFY(*a.availabilityInFault.value() < 0.6);
  QVERIFY(*b.availabilityInFault.value() > 0.99);
}

// Seed 002's failure mode without pool isolation: one pool for both models. The primary's hung
// calls fill it, and the backup — idle, healthy — turns tries away for want of a connection:
// its instances overflow (never with isolated budgets, bulkheadUnderPrimaryHang) and core
// availability during the hang falls below the isolated gateway's.
void TstSimDegrade::sharedPoolStarvesBackup() {
  const Run shared = simulateYaml(bulkheadRig(true, true));
  const Run isolated = simulateYaml(bulkheadRig(true));
  std::uint64_t backOverflow = 0;
  for (const InstanceTick& row : shared.series.instances)
    if (shared.report.instances[row.instance].model == "back") backOverflow += row.overflow;
  QVERIFY(backOverflow > 0);
  const double s = *shared.report.coreAvailabilityInFault.value();
  const double i = *isolated.report.coreAvailabilityInFault.value();
  qInfo("core availability during the hang: shared pool %s, isolated %s",
        qPrintable(pct(shared.report.coreAvailabilityInFault)),
        qPrintable(pct(isolated.report.coreAvailabilityInFault)));
  QVERIFY(s < i - 0.05);
}

void TstSimDegrade::lockedSessionsTrimmedEachTime_data() {
  QTest::addColumn<QString>("overflow");
  QTest::newRow("trim") << "trim";
  QTest::newRow("skip") << "skip";
}

// Prompts of 20 000 tokens, a backup with an 8k window, a forced-open primary, multi-turn
// sessions: under `trim` every call to the backup — the first degrade of a session and every
// later, locked one — is sent trimmed and counted; under `skip` the backup is never eligible
// and core traffic gets the static answer.
void TstSimDegrade::lockedSessionsTrimmedEachTime() {
  QFETCH(QString, overflow);
  const std::string yaml = R"(name: trim-rig
duration: 60s
drain: 20s
seed: 8
policy:
  overrides:
    models:
      prim: {mode: forced_open}
  models:
    prim: {tier: 1, quality: 0.9, context: 32k, tags: [chat]}
    small: {tier: 3, quality: 0.7, context: 8k, tags: [chat]}
  degrade:
    context_overflow: )" + overflow.toStdString() +
                           R"(
    lock: {ttl: 10m}
models:
  - {name: prim, instances: 1, service: {base: 50ms, sigma: 0}}
  - {name: small, instances: 1, slots: 64, service: {base: 50ms, sigma: 0}}
clients:
  - {name: long-prompts, model: prim, criticality: core, rate: 2, timeout: 2s,
     retries: {max: 1, backoff: 100ms}, sessions: {turns: 4, think: 1s},
     tokens: {input: {median: 20000, sigma: 0}, output: {median: 50, sigma: 0}}}
)";
  const Run run = simulateYaml(yaml);
  const RunReport& r = run.report;
  const ClientReport& c = r.clients[0];
  QCOMPARE(r.inFlightAtEnd, std::uint64_t{0});
  if (overflow == "trim") {
    QVERIFY(r.lockHits > 0);
    QVERIFY(run.attempts("small") > 0);
    QCOMPARE(c.trimmed, run.attempts("small"));
    QCOMPARE(success(c), c.answeredBy[kBackup]);
  } else {
    QCOMPARE(run.attempts("small"), std::uint64_t{0});
    QCOMPARE(c.trimmed, std::uint64_t{0});
    QVERIFY(c.staticAnswers > 0);
    QCOMPARE(success(c), std::uint64_t{0});
  }
}

// A try that never left the caller (its own connection pool full) is not an upstream failure:
// the gateway must not re-route it. Here the primary hangs every call until the caller's
// timeout (no model timeout, breaker disabled), so the primary never answers a failure and
// nothing may ever reach the backup.
void TstSimDegrade::noRerouteOfTriesThatNeverLeft() {
  const Run run = simulateYaml(R"(name: pool-rig
duration: 40s
drain: 20s
seed: 4
policy:
  breaker: {mode: disabled}
  models:
    prim: {tier: 1, quality: 0.9, tags: [chat]}
    back: {tier: 2, quality: 0.8, tags: [chat]}
  degrade: {retry_budget: 1.0}
models:
  - {name: prim, instances: 1, slots: 64, service: {base: 50ms, sigma: 0}}
  - {name: back, instances: 1, slots: 64, service: {base: 50ms, sigma: 0}}
clients:
  - {name: c, model: prim, criticality: core, rate: 20, timeout: 1s, concurrency: 2,
     retries: {max: 3, backoff: 50ms}}
faults:
  - {type: hang, target: prim, at: 10s, duration: 20s, rate: 1.0}
)");
  const ClientReport& c = run.report.clients[0];
  QVERIFY(c.poolExhausted > 0);
  QCOMPARE(c.reroutes, std::uint64_t{0});
  QCOMPARE(run.attempts("back"), std::uint64_t{0});
  QCOMPARE(c.answeredBy[kBackup], std::uint64_t{0});
  // Each try either left the caller (one attempt) or failed on its pool, never both.
  QVERIFY(c.attempts + c.poolExhausted <= c.tries);
}

void TstSimDegrade::bulkheadUnderPrimaryHang() {
  const Run with = simulateYaml(bulkheadRig(true));
  const Run without = simulateYaml(bulkheadRig(false));
  const RunReport& r = with.report;

  // The primary's budget filled with stuck calls: its instances turned tries away.
  std::uint64_t primOverflow = 0;
  for (const InstanceTick& row : with.series.instances) {
    const std::string& model = r.instances[row.instance].model;
    if (model == "prim") {
      primOverflow += row.overflow;
      continue;
    }
    // The backup never overflows or queues past its slots: the stuck calls hold the
    // primary's budget, not the backup's.
    QVERIFY2(row.overflow == 0, qPrintable(QStringLiteral("t=%1 s").arg(row.t / 1e6)));
    QVERIFY2(row.queueFull == 0, qPrintable(QStringLiteral("t=%1 s").arg(row.t / 1e6)));
    QVERIFY(row.outstanding <= 40);
  }
  QVERIFY(primOverflow > 0);
  for (const InstanceReport& in : r.instances)
    if (in.model == "back") QCOMPARE(in.failures, std::uint64_t{0});  // nothing hung there

  // The backup answers, and keeps core traffic available: at most the primary's budget (20
  // calls) hangs per caller timeout (5 s), i.e. ≤ 10 % of the 200 originals of those 5 s.
  // (The breakers need not open for this: the budget lets through only 10 calls per
  // instance per 5 s, below min_calls in a 10 s window most of the time.)
  QVERIFY(r.answeredBy[kBackup] > 0);
  const double core = r.coreAvailabilityInFault.value().value_or(0);
  const double coreWithout = without.report.coreAvailabilityInFault.value().value_or(1);
  const QString msg = QStringLiteral(
                          "core availability during the hang: %1 with degrade, %2 "
                          "without")
                          .arg(pct(r.coreAvailabilityInFault))
                          .arg(pct(without.report.coreAvailabilityInFault));
  QVERIFY2(core >= 0.85, qPrintable(msg));
  // Without degrade nothing can answer a request started during the hang except a retry
  // that lands after the fault — and that one is past its 5 s SLO.
  QVERIFY2(coreWithout <= 0.02, qPrintable(msg));
  QCOMPARE(without.report.answeredBy[kBackup], std::uint64_t{0});
  QCOMPARE(without.attempts("back"), std::uint64_t{0});
}

void TstSimDegrade::tenantIsolation() {
  const Run limited = simulateYaml(tenantRig(true));
  const Run open = simulateYaml(tenantRig(false));
  const RunReport& r = limited.report;
  QVERIFY(r.limitsOn);
  QCOMPARE(r.tenants.size(), std::size_t{2});
  const TenantReport* noisy = limited.tenant("noisy");
  const TenantReport* quiet = limited.tenant("quiet");
  QVERIFY(noisy && quiet);
  QCOMPARE(quiet->rate, 50.0);
  const ClientReport& qc = r.clients[1];
  const ClientReport& nc = r.clients[0];
  QCOMPARE(qc.name, std::string("quiet-app"));

  // The quiet tenant's offered load is a Poisson count around 30/s × 60 s.
  const double mean = 30.0 * 60;
  QVERIFY2(std::abs(static_cast<double>(qc.originals) - mean) <= 4.5 * std::sqrt(mean),
           qPrintable(QString::number(qc.originals)));
  // Every one of its requests was admitted, whatever the noisy tenant did.
  QCOMPARE(quiet->admitted, qc.originals);
  QCOMPARE(std::accumulate(quiet->rejectedBy.begin(), quiet->rejectedBy.end(), std::uint64_t{0}),
           std::uint64_t{0});
  QCOMPARE(qc.limited, std::uint64_t{0});
  // The noisy tenant got no more than its bucket holds over the run: 50 + 50/s × 60 s.
  QVERIFY2(noisy->admitted <= 3050, qPrintable(QString::number(noisy->admitted)));
  QVERIFY(noisy->rejectedBy[LimitReason::RateLimited] > 0);
  QCOMPARE(noisy->admitted + nc.ends[static_cast<int>(End::Shed)], nc.originals);
  // With the quotas the model (160/s) carries both (≤ 50 + 30/s): the quiet tenant is served.
  const double aq = qc.availability.value().value_or(0);
  const double aqOpen = open.report.clients[1].availability.value().value_or(1);
  QVERIFY2(aq >= 0.99, qPrintable(pct(qc.availability)));
  // Without them the noisy burst (400/s) fills the queues and the quiet tenant loses calls.
  QVERIFY2(aqOpen < aq - 0.05, qPrintable(QStringLiteral("quiet availability %1 with quotas, "
                                                         "%2 without")
                                              .arg(pct(qc.availability))
                                              .arg(pct(open.report.clients[1].availability))));
  QVERIFY(open.report.tenants.empty());
  QVERIFY(!open.report.limitsOn);
}

// The tenant rows report the quota in force. limits.cpp gives a rule without `burst` a
// bucket of max(1, rate) requests; the report should say so.
void TstSimDegrade::tenantReportShowsEffectiveBurst() {
  const Run run = simulateYaml(R"(name: slow-tenant
duration: 20s
drain: 5s
policy:
  limits:
    tenants:
      trickle: {rate: 0.5}
models:
  - {name: m, instances: 1, service: {base: 10ms, sigma: 0}}
clients:
  - {name: c, model: m, tenant: trickle, rate: 5, retries: {max: 0}}
)");
  const TenantReport* t = run.tenant("trickle");
  QVERIFY(t);
  QCOMPARE(t->rate, 0.5);
  // The bucket starts with one request and gains one every 2 s: 1 + 0.5 × 20 s, ± 1.
  QVERIFY2(t->admitted >= 10 && t->admitted <= 12, qPrintable(QString::number(t->admitted)));
  QCOMPARE(t->burst, 1.0);
}

void TstSimDegrade::conservation_data() {
  QTest::addColumn<int>("seed");
  QTest::addColumn<bool>("protection");
  for (int s = 0; s < 4; ++s) {
    QTest::addRow("%s, protected", kSeeds[s]) << s << true;
    QTest::addRow("%s, baseline", kSeeds[s]) << s << false;
  }
}

// Every original ends exactly once, per client and in total, with limits and degradation
// on (protected) and off (baseline); the degradation and limit counters add up.
void TstSimDegrade::conservation() {
  QFETCH(int, seed);
  QFETCH(bool, protection);
  const RunReport& r = seedRuns_[seed][protection ? 1 : 0];
  const Scenario& sc = seeds_[seed];
  QCOMPARE(r.protection, protection);
  QVERIFY(r.originals > 0);
  QCOMPARE(r.inFlightAtEnd, std::uint64_t{0});
  QCOMPARE(sumEnds(r.ends), r.originals);
  std::uint64_t originals = 0, limited = 0, fastFail = 0, statics = 0, answered[3] = {0, 0, 0};
  for (const ClientReport& c : r.clients) {
    QVERIFY2(sumEnds(c.ends) == c.originals, c.name.c_str());
    // Every success was answered by exactly one of primary, backup, cache, or the cheaper
    // model cost routing chose.
    QVERIFY2(c.answeredBy[0] + c.answeredBy[1] + c.answeredBy[2] + c.costRouted == success(c),
             c.name.c_str());
    QVERIFY(c.backupByTier[0] + c.backupByTier[1] + c.backupByTier[2] + c.backupByTier[3] ==
            c.answeredBy[kBackup]);
    QVERIFY(c.qualityDrop <= c.answeredBy[kBackup]);
    QCOMPARE(c.misroutes, std::uint64_t{0});
    // A try sends at most one attempt; a gateway re-route adds one inside the same try.
    QVERIFY2(c.attempts + c.poolExhausted + c.limited <= c.tries + c.reroutes, c.name.c_str());
    QVERIFY(c.lockHits <= c.tries);
    QVERIFY(c.degradeSuccess.den <= c.originals);
    // An original that ended shed was refused by the limiter on its last try.
    QVERIFY(c.ends[static_cast<int>(End::Shed)] <= c.limited);
    originals += c.originals;
    limited += c.limited;
    fastFail += c.fastFail;
    statics += c.staticAnswers;
    for (int k = 0; k < 3; ++k) answered[k] += c.answeredBy[k];
  }
  QCOMPARE(originals, r.originals);
  for (int k = 0; k < 3; ++k) QCOMPARE(answered[k], r.answeredBy[k]);
  QCOMPARE(std::accumulate(r.limitedBy.begin(), r.limitedBy.end(), std::uint64_t{0}), limited);
  QCOMPARE(r.degradeRejects[0], fastFail);
  QCOMPARE(r.degradeRejects[1], statics);
  QCOMPARE(r.misroutes, std::uint64_t{0});

  const bool degradeConfigured = sc.policy.degrade.enabled;
  const bool limitsConfigured = sc.policy.limits.any() || sc.policy.limits.adaptive;
  QCOMPARE(r.degradeOn, protection && degradeConfigured);
  QCOMPARE(r.limitsOn, protection && limitsConfigured);
  if (!r.degradeOn) {
    // A plain forwarder: every answer is the primary's.
    QCOMPARE(r.answeredBy[kBackup] + r.answeredBy[kCache], std::uint64_t{0});
    QCOMPARE(r.lockHits + r.reroutes + r.trimmed + r.locksTaken, std::uint64_t{0});
    QCOMPARE(r.degradeRejects[0] + r.degradeRejects[1] + r.degradeRejects[2], std::uint64_t{0});
  }
  if (!r.limitsOn) {
    QCOMPARE(limited, std::uint64_t{0});
    QCOMPARE(r.ends[static_cast<int>(End::Shed)], std::uint64_t{0});
    QVERIFY(r.tenants.empty());
  } else {
    // Per tenant: every decision counted once; an original is admitted at most once and an
    // original that ended shed never was.
    std::uint64_t admitted = 0, refused = 0;
    for (const TenantReport& t : r.tenants) {
      admitted += t.admitted;
      refused += std::accumulate(t.rejectedBy.begin(), t.rejectedBy.end(), std::uint64_t{0});
    }
    QCOMPARE(refused, limited);
    QVERIFY(admitted + r.ends[static_cast<int>(End::Shed)] <= r.originals);
  }
}

// Seed 000 with protection, against the issue's bar: degrade success ≥ 97 %, core
// availability ≥ 92 % (over the whole run and during the faults).
void TstSimDegrade::seed000Bar() {
  const RunReport& p = seedRuns_[0][1];
  const RunReport& b = seedRuns_[0][0];
  const QString figures =
      QStringLiteral("degrade success %1, core availability %2, during faults %3 (baseline %4)")
          .arg(pct(p.degradeSuccess), pct(p.coreAvailability), pct(p.coreAvailabilityInFault),
               pct(b.coreAvailabilityInFault));
  QVERIFY2(p.degradeSuccess.value().value_or(0) >= 0.97, qPrintable(figures));
  QVERIFY2(p.coreAvailability.value().value_or(0) >= 0.92, qPrintable(figures));
  QVERIFY2(p.coreAvailabilityInFault.value().value_or(0) >= 0.92, qPrintable(figures));
  QVERIFY2(
      p.coreAvailabilityInFault.value().value_or(0) > b.coreAvailabilityInFault.value().value_or(1),
      qPrintable(figures));
  // Only core traffic may use the backup (non_critical_backups: false).
  for (const ClientReport& c : p.clients)
    if (c.criticality != Criticality::Core) QVERIFY2(c.answeredBy[kBackup] == 0, c.name.c_str());
  qInfo("seed-000: %s", qPrintable(figures));
}

// Seed 002: the protected run beats the baseline on availability; answers come from the
// primary and from backups; part of them at lower quality.
void TstSimDegrade::seed002Tiers() {
  const RunReport& p = seedRuns_[2][1];
  const RunReport& b = seedRuns_[2][0];
  const QString figures =
      QStringLiteral(
          "availability %1 vs baseline %2; answers primary/backup/cache %3/%4/%5, "
          "backups by tier 2/3: %6/%7; quality-drop share %8")
          .arg(pct(p.availability), pct(b.availability))
          .arg(p.answeredBy[kPrimary])
          .arg(p.answeredBy[kBackup])
          .arg(p.answeredBy[kCache])
          .arg(p.backupByTier[1])
          .arg(p.backupByTier[2])
          .arg(pct(p.qualityDropShare));
  QVERIFY2(p.availability.value().value_or(0) > b.availability.value().value_or(1),
           qPrintable(figures));
  int tiers = 0;
  for (std::uint64_t n : {p.answeredBy[kPrimary], p.backupByTier[1], p.backupByTier[2],
                          p.backupByTier[3], p.answeredBy[kCache]})
    tiers += n > 0 ? 1 : 0;
  QVERIFY2(tiers >= 2, qPrintable(figures));
  QVERIFY2(p.answeredBy[kPrimary] > 0 && p.answeredBy[kBackup] > 0, qPrintable(figures));
  QVERIFY2(p.qualityDropShare.value().value_or(0) > 0, qPrintable(figures));
  // The backups are all of lower quality than deepseek-r1 (0.95): every backup answer is a
  // quality drop.
  QCOMPARE(p.qualityDropShare.num, p.answeredBy[kBackup]);
  QCOMPARE(p.misroutes, std::uint64_t{0});
  qInfo("seed-002: %s", qPrintable(figures));
}

// Seed 003: the chaos drill's degraded conversations follow their lock, never the primary.
void TstSimDegrade::seed003Lock() {
  const RunReport& p = seedRuns_[3][1];
  const QString figures = QStringLiteral(
                              "lock hits %1, locks taken %2, misroutes %3, backup "
                              "answers %4")
                              .arg(p.lockHits)
                              .arg(p.locksTaken)
                              .arg(p.misroutes)
                              .arg(p.answeredBy[kBackup]);
  QVERIFY2(p.lockHits > 0, qPrintable(figures));
  QVERIFY2(p.locksTaken > 0, qPrintable(figures));
  QCOMPARE(p.misroutes, std::uint64_t{0});
  QVERIFY2(p.answeredBy[kBackup] > 0, qPrintable(figures));
  // Only the multi-turn client has sessions that return under a lock... and retries, which
  // every client has: both may hit locks, but the conversations must.
  for (const ClientReport& c : p.clients)
    if (c.name == "orchestration") QVERIFY2(c.lockHits > 0, qPrintable(figures));
  qInfo("seed-003: %s", qPrintable(figures));
}

QTEST_GUILESS_MAIN(TstSimDegrade)
#include "tst_sim_degrade.moc"
