#pragma once
// The KPI report of one simulated run, with the definitions of docs/kpis.md. Every rate keeps
// its sample size; a rate over nothing is "n/a" (nullopt), never 0.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spillway/block_class.hpp"
#include "spillway/events.hpp"
#include "spillway/limits.hpp"
#include "spillway/sim/scenario.hpp"

namespace spillway::sim {

// How an original request ended. Every original ends exactly once (conservation).
enum class End : std::uint8_t { Success, Error, Timeout, Rejected, Shed };
inline constexpr int kEndCount = 5;
std::string_view endName(End e);

struct Ratio {
  std::uint64_t num = 0, den = 0;
  std::optional<double> value() const {
    if (den == 0) return std::nullopt;
    return static_cast<double>(num) / static_cast<double>(den);
  }
};

struct ClientReport {
  std::string name;
  Criticality criticality = Criticality::NonCritical;
  std::uint64_t originals = 0;
  std::array<std::uint64_t, kEndCount> ends{};
  Ratio availability;          // answered within SLO ÷ originals
  Ratio availabilityInFault;   // ... of originals started while an injected fault was active
  Ratio degradeSuccess;        // of originals that went down the degrade chain: within SLO
  Ratio reroutedSuccess;       // of originals whose primary failed or blocked a try, and that
                               // stayed in their group (retry, re-pick): within SLO
  std::uint64_t attempts = 0;  // sent to instances
  std::uint64_t tries = 0;     // every try the caller made, including ones that never left it
  std::uint64_t retries = 0;
  std::uint64_t retriesDenied = 0;  // by the retry budget
  std::uint64_t breakerBlocks = 0;  // blocks by a breaker (a try may be blocked on several
                                    // instances before one admits it)
  std::uint64_t poolExhausted = 0;  // tries failed because the caller's pool was full
  std::uint64_t overflow = 0;       // tries the gateway failed: the model's budget was full
  double p50Ms = 0, p99Ms = 0;      // end-to-end latency of successful originals
  std::uint64_t latencySamples = 0;
  // Degradation and limits.
  std::array<std::uint64_t, 3> answeredBy{};    // successes by primary, backup, cache
  std::array<std::uint64_t, 4> backupByTier{};  // backup answers by the backup's tier 1…4
  std::uint64_t qualityDrop = 0;                // answered by a backup of lower quality
  std::uint64_t trimmed = 0;                    // sent to a backup with a trimmed context
  std::uint64_t lockHits = 0;                   // tries that followed a degrade lock
  std::uint64_t misroutes = 0;                  // locked tries sent to the primary (must be 0)
  std::uint64_t reroutes = 0;                   // the gateway's own re-routes after a failed answer
  std::uint64_t fastFail = 0;          // non-critical tries failed fast (no matched backup)
  std::uint64_t staticAnswers = 0;     // "queued, retry later" answers
  std::uint64_t limited = 0;           // tries refused by the limiter
  Ratio slaInQuota;                    // availability over originals not refused by their quota
  std::uint64_t quotaRefused = 0;      // originals that ended refused by their tenant's quota
  Ratio degradeSwitch;                 // originals on the degrade chain that took a degraded path
  std::uint64_t costRouted = 0;        // successes by a cheaper model chosen for cost (not in
                                       // answeredBy: that is primary, fallback backup, cache)
  std::uint64_t gatewayFaultHits = 0;  // attempts a fault on the gateway itself hit
  std::uint64_t tailCuts = 0;          // attempts the gateway cut at the slow threshold
  bool drill = false;                  // drill-tagged traffic
  std::string slaClass;                // the policy's SLA class, empty = none
  Ratio withinClassBudget;  // in-quota originals answered within the class's latency budget
};

// One SLA class of the policy (seed 001): its target, its budget and what its clients got.
struct SlaClassReport {
  std::string name;
  double target = 0;   // availability the class promises
  Micros latency = 0;  // its latency budget
  Ratio attained;      // in-quota originals answered within the budget
  std::uint64_t quotaRefused = 0;
  bool met() const { return attained.den > 0 && *attained.value() >= target; }
};

struct TenantReport {
  std::string name;
  std::uint64_t admitted = 0;
  LimitCounts rejectedBy{};
  double tokens = 0;
  double rate = 0, burst = 0, tokensPerSecond = 0;  // the quota (0 = none)
  std::uint32_t maxConcurrent = 0;
};

struct FaultReport {
  FaultKind kind = FaultKind::Errors;
  std::string target;    // as written
  std::string instance;  // one row per affected instance
  Micros start = 0, end = 0;
  bool ended = false;       // false: still active at the end of the run
  bool benign = false;      // normal jitter: not in TTD, MTTR or interception
  bool selfEnding = false;  // ended by itself (not by a `recover`, not still active)
  // Onset → the faulted group's callers' availability back to its level (kpis.md).
  std::optional<Micros> serviceRestoration;
  bool serviceLeft = false;  // the callers' availability left its band during the fault's reach
  bool detected = false, restored = false;
  Micros ttd = kForever, mttr = kForever, fromTrip = kForever, recoveryLag = kForever;
  bool intercepted = true;
  std::string spreadTo;  // first healthy instance that turned unhealthy
  Micros spreadAt = 0;
};

struct InstanceReport {
  std::string name, model;
  std::uint64_t attempts = 0, failures = 0, queueFull = 0, rejected = 0, opens = 0;
  std::array<Micros, kStateCount> timeIn{};
  Micros unhealthyTime = 0;
};

struct RunReport {
  std::string scenario;
  std::uint64_t seed = 0;
  bool protection = true;
  Micros simulated = 0;  // simulated time including the drain
  std::uint64_t originals = 0;
  std::array<std::uint64_t, kEndCount> ends{};
  std::uint64_t inFlightAtEnd = 0;  // should be 0 when the drain is long enough
  std::uint64_t attempts = 0;       // sent to instances
  Ratio retryAmplification;         // attempts sent to instances ÷ originals
  Ratio triesPerRequest;  // every try the callers made (incl. local failures) ÷ originals
  Ratio availability, coreAvailability, degradeSuccess, reroutedSuccess;
  // The same over originals started while an injected fault was active (the seed's "during
  // downstream failures").
  Ratio availabilityInFault, coreAvailabilityInFault;
  // 误伤 (docs/kpis.md): would-succeed blocks in false-trip episodes and in recovery lag ÷ all
  // breaker blocks; its two parts; the collateral share of correct trips, beside it.
  Ratio falsePositive, fpFalseTrip, fpRecoveryLag, collateral;
  BlockTally blocks;
  std::optional<double> falseTripsPerHour;  // episodes opened without a real fault
  Ratio interception;        // fault rows that did not spread in this run ÷ fault rows
  Ratio pairedInterception;  // set by runSeeds: see pairedInterception()
  std::uint64_t opens = 0, wouldOpens = 0;
  RejectCounts rejectedBy{};
  std::uint64_t queueFull = 0;
  std::uint64_t overflow = 0;  // gateway budget (max_requests) overflows
  std::uint64_t events = 0;    // discrete events processed
  double p50Ms = 0, p99Ms = 0;
  std::optional<Micros> meanTtd, meanMttr, meanFromTrip;
  // Self-healing: trip → full traffic, over restored faults that ended by themselves; service
  // restoration: over faults whose callers' availability came back. With their n.
  std::optional<Micros> meanSelfHealing, meanServiceRestoration, worstServiceRestoration;
  std::uint64_t selfHealed = 0, serviceRestored = 0;
  // Real faults whose callers' availability left its band and was not back by the end of the
  // run: their restoration is ∞, so the worst is "never" (kpis.md), not the worst of the rest.
  std::uint64_t serviceNotRestored = 0;
  LimitCounts limitedBy{};
  std::array<std::uint64_t, 3> degradeRejects{};  // fast_fail, static, no_backup
  std::array<std::uint64_t, 3> answeredBy{};      // primary, backup, cache
  std::array<std::uint64_t, 4> backupByTier{};    // backup answers by tier 1…4
  Ratio qualityDropShare;                         // backup answers of lower quality ÷ successes
  std::uint64_t trimmed = 0, lockHits = 0, misroutes = 0, reroutes = 0, locksTaken = 0;
  bool degradeOn = false, limitsOn = false;
  // Seed 001's three-mode table, seed 002's cost, seed 003's limiter and drill figures
  // (docs/kpis.md). `mode`: off, limits, breaker+degrade, all, or another mix of layers.
  std::string mode = "all";
  Ratio slaInQuota;                // answered within SLO ÷ originals not refused by their quota
  std::uint64_t quotaRefused = 0;  // originals that ended refused by their tenant's quota
  Ratio waste;           // slot time held by calls whose answer nobody took ÷ all slot time (µs)
  Ratio cascade;         // real fault rows that spread ÷ real fault rows (1 − interception)
  Ratio limiterMisKill;  // limit refusals while capacity was free and the call would have
                         // succeeded ÷ limit refusals
  std::array<std::uint64_t, 4> misKillBy{};  // tenant quota, route, model, shed
  Ratio degradeSwitch;                 // originals on the degrade chain that took a degraded path
  std::optional<double> costPer1k;     // model cost per 1k original requests (n/a: no costs)
  std::uint64_t costRouted = 0;        // answers by a cheaper model chosen for cost
  std::uint64_t gatewayFaultHits = 0;  // attempts hit by a fault on the gateway itself
  std::uint64_t tailCuts = 0;          // attempts cut at the slow threshold (truncate_tail)
  // Seed 001's "平均恢复耗时": the fault's end → its callers' availability back (0 when the
  // service came back before the fault ended), mean over restored faults.
  std::optional<Micros> meanRecovery;
  std::vector<TenantReport> tenants;
  std::vector<SlaClassReport> slaClasses;  // the policy's, in name order
  std::vector<ClientReport> clients;
  std::vector<InstanceReport> instances;
  std::vector<FaultReport> faults;
};

// The worst of the real faults, in seconds, as kpis.md reads a fault never detected or a service
// never back: +∞ then. nullopt when there is nothing to take the worst of (no real fault; for the
// TTD, a run without protection: its breakers only watch).
std::optional<double> worstTtdSeconds(const RunReport& r);
std::optional<double> worstRestorationSeconds(const RunReport& r);

// JSON (docs/scenario.md "Report") and a human table.
std::string reportJson(const RunReport& r, int indent = 2);
std::string reportTable(const RunReport& r);
// Of the faults that spread in the baseline (same scenario and seed, no protection), the share
// that did not spread with protection; n/a (den 0) when nothing spread (kpis.md).
Ratio pairedInterception(const RunReport& baseline, const RunReport& protectedRun);

// Baseline (protection off) next to protected, with the seed's published figures.
std::string compareTable(const RunReport& baseline, const RunReport& protectedRun);
std::string compareJson(const RunReport& baseline, const RunReport& protectedRun, int indent = 2);

}  // namespace spillway::sim
