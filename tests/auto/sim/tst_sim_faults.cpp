// Every fault kind does what docs/scenario.md says, to the instance it targets and to nothing
// else; `recover` ends open-ended faults; the ground truth behind the false-positive rate
// judges blocked calls correctly.
//
// The fault rig: one model of two instances (16 slots, 100 ms service without noise), round
// robin, 20 req/s per instance, 2 s timeout, no retries, protection off (the breakers only
// watch), fault on m-1 during [20 s, 40 s). With round robin and no retries nothing couples
// the two instances: m-2 sees exactly the same calls as in a run without the fault, and m-1
// draws no random numbers outside the fault (service noise 0, no background errors). So m-2's
// series rows must equal those of a fault-free run, and so must m-1's before the onset and
// once the fault's effects have left its 10 s window — a much sharper isolation check than
// "within noise". The policy classifies only 5xx as failures, a reset as a success and leaves
// 429 out (ignored), so the breaker's counters tell 5xx, 429 and resets apart.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "sim_run.hpp"
#include "spillway/engine.hpp"
#include "spillway/sim/report.hpp"
#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/series.hpp"
#include "spillway/sim/simulator.hpp"

using namespace spillway;
using namespace spillway::sim;

namespace {

const Micros kAt = seconds(20), kEnd = seconds(40);
const double kPerInstance = 20;  // req/s per instance
const double kServiceMs = 100;
const std::uint32_t kSlots = 16;

std::string rig(const std::string& faults) {
  return R"(name: fault-rig
duration: 60s
drain: 10s
seed: 21
routing: round_robin
policy:
  breaker:
    classify: {failure_statuses: [5xx], client_errors: ignore, reset: success, timeout: failure}
models:
  - name: m
    instances: 2
    slots: 16
    queue: 64
    service: {base: 100ms, sigma: 0}
    error_latency: 20ms
clients:
  - {name: c, model: m, rate: 40, timeout: 2s}
)" + (faults.empty() ? std::string() : "faults:\n" + faults);
}

struct Run : SimRun {
  BreakerCounters m1, m2;  // breaker counters at the end

  std::vector<InstanceTick> rows(std::uint32_t instance) const {
    std::vector<InstanceTick> out;
    for (const InstanceTick& t : series.instances)
      if (t.instance == instance) out.push_back(t);
    return out;
  }
};

Run simulateRig(const std::string& yaml, bool protection = false) {
  Run r;
  simulateInto(r, yaml, protection, [&r](const Simulator& sim) {
    r.m1 = sim.engine().breaker(*sim.engine().find("m-1")).counters();
    if (auto id = sim.engine().find("m-2")) r.m2 = sim.engine().breaker(*id).counters();
  });
  return r;
}

// The fields of a row that depend only on the calls an instance saw (not on the learned
// latency baseline, which a fault may freeze or shift for good).
bool sameRow(const InstanceTick& a, const InstanceTick& b) {
  return a.t == b.t && a.instance == b.instance && a.state == b.state &&
         a.responses == b.responses && a.failures == b.failures && a.rejected == b.rejected &&
         a.queueFull == b.queueFull && a.overflow == b.overflow && a.busy == b.busy &&
         a.queued == b.queued && a.outstanding == b.outstanding && a.windowCalls == b.windowCalls &&
         a.errorRate == b.errorRate && a.p99Ms == b.p99Ms &&
         a.faultMultiplier == b.faultMultiplier && a.faulted == b.faulted;
}

QString rowText(const InstanceTick& r) {
  return QStringLiteral("t=%1s resp=%2 fail=%3 busy=%4 queued=%5 p99=%6 mult=%7 faulted=%8")
      .arg(r.t / 1e6)
      .arg(r.responses)
      .arg(r.failures)
      .arg(r.busy)
      .arg(r.queued)
      .arg(r.p99Ms)
      .arg(r.faultMultiplier)
      .arg(r.faulted);
}

struct Sums {
  std::uint64_t responses = 0, failures = 0, successes = 0;
};
// Over the rows with from ≤ t < to.
Sums sumRows(const std::vector<InstanceTick>& rows, Micros from, Micros to) {
  Sums s;
  for (const InstanceTick& r : rows)
    if (r.t >= from && r.t < to) {
      s.responses += r.responses;
      s.failures += r.failures;
      s.successes += r.responses - r.failures;
    }
  return s;
}

// A share p measured over n trials is within 4.5 binomial standard deviations.
bool binomialClose(std::uint64_t k, std::uint64_t n, double p) {
  if (n == 0) return false;
  const double sd = std::sqrt(n * p * (1 - p));
  return std::abs(static_cast<double>(k) - n * p) <= 4.5 * sd + 1;
}

}  // namespace

Q_DECLARE_METATYPE(spillway::sim::FaultKind)

class TstSimFaults : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void faultKinds_data();
  void faultKinds();
  void driftRamp();
  void overlappingDriftsMultiply();
  void recoverEqualsDuration();
  void openEndedFaultLastsToTheEnd();
  void recoverOfModelEndsInstanceFault();
  void modelTargetHitsEveryInstance();
  void groundTruthDuringErrors();
  void groundTruthForcedOpenHealthy();
  void groundTruthQueueFull();
  void groundTruthRespectsDeadline();
  void groundTruthRerunReuse_data();
  void groundTruthRerunReuse();
  void groundTruthIndependentOfPolicy();
  void benignBlipIsAFalseTrip();
  void serviceRestorationOfAnOutage();
  void interceptionPaired_data();
  void interceptionPaired();
  void spreadToTheService();
  void spreadIsAttributed();

 private:
  Run baseline_;
};

void TstSimFaults::initTestCase() {
  baseline_ = simulateRig(rig(""));
  // The fault-free rig is healthy: nothing failed, nothing queued beyond a few calls.
  QCOMPARE(baseline_.report.ends[static_cast<int>(End::Success)], baseline_.report.originals);
  QVERIFY(baseline_.report.originals > 2000);
}

void TstSimFaults::faultKinds_data() {
  QTest::addColumn<FaultKind>("kind");
  QTest::addColumn<QString>("fault");  // the fault's YAML, on m-1 from 20 s for 20 s
  const QString at = QStringLiteral("target: m-1, at: 20s, duration: 20s");
  QTest::newRow("latency_drift x3")
      << FaultKind::LatencyDrift
      << QStringLiteral("{type: latency_drift, %1, multiplier: 3}").arg(at);
  QTest::newRow("delay 250ms") << FaultKind::Delay
                               << QStringLiteral("{type: delay, %1, delay: 250ms}").arg(at);
  QTest::newRow("errors 30% 502")
      << FaultKind::Errors << QStringLiteral("{type: errors, %1, rate: 0.3, status: 502}").arg(at);
  QTest::newRow("throttle 50%") << FaultKind::Throttle
                                << QStringLiteral("{type: throttle, %1, rate: 0.5}").arg(at);
  QTest::newRow("hang") << FaultKind::Hang << QStringLiteral("{type: hang, %1}").arg(at);
  QTest::newRow("reset 40%") << FaultKind::Reset
                             << QStringLiteral("{type: reset, %1, rate: 0.4}").arg(at);
  QTest::newRow("capacity_loss to 1 slot")
      << FaultKind::CapacityLoss
      << QStringLiteral("{type: capacity_loss, %1, remaining: 0.0625}").arg(at);
  QTest::newRow("outage") << FaultKind::Outage << QStringLiteral("{type: outage, %1}").arg(at);
}

void TstSimFaults::faultKinds() {
  QFETCH(FaultKind, kind);
  QFETCH(QString, fault);
  const Run run = simulateRig(rig("  - " + fault.toStdString() + "\n"));
  const auto m1 = run.rows(0), m2 = run.rows(1);
  const auto b1 = baseline_.rows(0), b2 = baseline_.rows(1);

  // --- Isolation: what the fault must not touch.
  // The other instance, throughout.
  QCOMPARE(m2.size(), b2.size());
  for (std::size_t i = 0; i < m2.size(); ++i)
    QVERIFY2(sameRow(m2[i], b2[i]), qPrintable("m-2 " + rowText(m2[i]) + " vs " + rowText(b2[i])));
  QCOMPARE(run.m2.failures, std::uint64_t{0});
  // The target before the onset, and once the fault's calls (2 s timeout) have left its 10 s
  // window.
  QCOMPARE(m1.size(), b1.size());
  for (std::size_t i = 0; i < m1.size(); ++i)
    if (m1[i].t < kAt || m1[i].t >= kEnd + seconds(12))
      QVERIFY2(sameRow(m1[i], b1[i]),
               qPrintable("m-1 " + rowText(m1[i]) + " vs " + rowText(b1[i])));
  // The fault is on exactly during [at, end): edges run before the tick at the same time.
  for (const InstanceTick& r : m1) QCOMPARE(r.faulted, r.t >= kAt && r.t < kEnd);
  for (const InstanceTick& r : m2) QVERIFY(!r.faulted);
  // One report row for the one affected instance.
  QCOMPARE(run.report.faults.size(), std::size_t{1});
  const FaultReport& fr = run.report.faults[0];
  QCOMPARE(fr.kind, kind);
  QCOMPARE(fr.instance, std::string("m-1"));
  QCOMPARE(fr.start, kAt);
  QVERIFY(fr.ended);
  QCOMPARE(fr.end, kEnd);

  // --- What the fault must do, on m-1 while it is on. "Steady" rows leave the first
  // seconds to calls that started before the onset (100 ms) or time out after it (2 s).
  const Sums steady = sumRows(m1, kAt + seconds(3), kEnd);
  const Sums during = sumRows(m1, kAt + seconds(1), kEnd);
  const std::uint64_t totalFailures = run.report.instances[0].failures;
  switch (kind) {
    case FaultKind::LatencyDrift:
    case FaultKind::Delay: {
      // Slower calls, no failures; from 11 s into the fault the whole 10 s window holds
      // faulted calls: P99 = 100 ms × 3, or 100 ms + 250 ms (no noise; 0.78 % bins).
      const double want = kind == FaultKind::LatencyDrift ? 3 * kServiceMs : kServiceMs + 250;
      QCOMPARE(totalFailures, std::uint64_t{0});
      for (const InstanceTick& r : m1) {
        if (r.t >= kAt + seconds(11) && r.t < kEnd)
          QVERIFY2(std::abs(r.p99Ms - want) <= 0.01 * want, qPrintable(rowText(r)));
        if (r.faulted)  // the multiplier shows drifts only
          QCOMPARE(r.faultMultiplier, kind == FaultKind::LatencyDrift ? 3.0 : 1.0);
      }
      break;
    }
    case FaultKind::Errors:
    case FaultKind::Throttle:
    case FaultKind::Reset: {
      const double p = kind == FaultKind::Errors ? 0.3 : kind == FaultKind::Throttle ? 0.5 : 0.4;
      QVERIFY2(
          binomialClose(during.failures, during.responses, p),
          qPrintable(QStringLiteral("%1 of %2 failed").arg(during.failures).arg(during.responses)));
      // No failures outside the fault (answers come 20 ms after the call: allow a row more).
      QCOMPARE(totalFailures, sumRows(m1, kAt, kEnd + seconds(2)).failures);
      // What the failures were, as the breaker classified them: a 5xx is a failure, a 429 is
      // left out (ignored), a reset counts as a success under this policy.
      QCOMPARE(run.m1.failures, kind == FaultKind::Errors ? totalFailures : std::uint64_t{0});
      QCOMPARE(run.m1.ignored, kind == FaultKind::Throttle ? totalFailures : std::uint64_t{0});
      break;
    }
    case FaultKind::Hang: {
      // Every call times out; hung calls hold all 16 slots until the fault ends.
      QVERIFY(steady.responses > 0);
      QCOMPARE(steady.failures, steady.responses);
      for (const InstanceTick& r : m1) {
        if (r.t >= kAt + seconds(3) && r.t < kEnd)
          QVERIFY2(r.busy == kSlots, qPrintable(rowText(r)));
        if (r.t >= kEnd + seconds(1) && r.t < kEnd + seconds(5))
          QVERIFY2(r.busy < kSlots, qPrintable(rowText(r)));  // released at the end
      }
      QCOMPARE(run.m1.failures, totalFailures);  // timeouts count as failures
      QVERIFY(run.report.ends[static_cast<int>(End::Timeout)] >= steady.failures);
      break;
    }
    case FaultKind::CapacityLoss: {
      // 16 × 0.0625 = 1 slot for 20 req/s of 100 ms: overloaded, one call at a time, at most
      // 10 answers per second, a queue that does not empty, callers that time out.
      for (const InstanceTick& r : m1) {
        // Calls running at the onset finish normally (by 20.1 s), so judge from 21 s and, for
        // the answers per second, from 22 s.
        if (r.t >= kAt + seconds(1) && r.t < kEnd) QVERIFY2(r.busy <= 1, qPrintable(rowText(r)));
        if (r.t >= kAt + seconds(2) && r.t < kEnd) {
          QVERIFY2(r.responses - r.failures <= 10, qPrintable(rowText(r)));
          QVERIFY2(r.busy == 1, qPrintable(rowText(r)));
          QVERIFY2(r.queued > 0, qPrintable(rowText(r)));
        }
      }
      QVERIFY(steady.failures > 0);
      // The slots come back at the end: the backlog starts on all of them at once.
      const auto after = std::find_if(
          m1.begin(), m1.end(), [](const InstanceTick& r) { return r.t == kEnd + seconds(1); });
      QVERIFY(after != m1.end());
      QVERIFY2(after->busy > 1 || after->responses - after->failures > 10,
               qPrintable(rowText(*after)));
      break;
    }
    case FaultKind::Outage: {
      // Every call refused at once: nothing runs, everything fails (resets: successes for
      // this breaker).
      for (const InstanceTick& r : m1)
        if (r.t >= kAt + seconds(1) && r.t < kEnd) QVERIFY2(r.busy == 0, qPrintable(rowText(r)));
      const Sums s = sumRows(m1, kAt + seconds(2), kEnd);
      QVERIFY(s.responses > 0);
      QCOMPARE(s.failures, s.responses);
      QCOMPARE(run.m1.failures, std::uint64_t{0});
      break;
    }
    case FaultKind::Recover:
      QFAIL("not a fault of its own");
  }
}

// s = min(1, (t − at) / ramp): a ×3 drift with a 20 s ramp is at 1 + 2 × s.
void TstSimFaults::driftRamp() {
  const Run run =
      simulateRig(rig("  - {type: latency_drift, target: m-1, at: 20s, duration: 30s, ramp: 20s, "
                      "multiplier: 3}\n"));
  int checked = 0;
  for (const InstanceTick& r : run.rows(0)) {
    double want = 1;
    if (r.t >= kAt && r.t < seconds(50))
      want = 1 + 2 * std::min(1.0, static_cast<double>(r.t - kAt) / seconds(20));
    QVERIFY2(std::abs(r.faultMultiplier - want) < 1e-9, qPrintable(rowText(r)));
    checked += r.t == seconds(30);  // halfway: × 2
  }
  QCOMPARE(checked, 1);
}

void TstSimFaults::overlappingDriftsMultiply() {
  const Run run = simulateRig(
      rig("  - {type: latency_drift, target: m-1, at: 20s, duration: 20s, multiplier: 2}\n"
          "  - {type: latency_drift, target: m, at: 30s, duration: 20s, multiplier: 1.5}\n"));
  for (const InstanceTick& r : run.rows(0)) {
    const double want = (r.t >= kAt && r.t < kEnd ? 2.0 : 1.0) *
                        (r.t >= seconds(30) && r.t < seconds(50) ? 1.5 : 1.0);
    QCOMPARE(r.faultMultiplier, want);
  }
}

// An open-ended fault with a `recover` at 40 s is the same fault as one with duration 20 s:
// same series, same report, byte for byte.
void TstSimFaults::recoverEqualsDuration() {
  auto csvOf = [](const std::string& yaml, std::string& json) {
    const Scenario sc = parseScenario(yaml, "rig.yaml");
    std::ostringstream inst, cli;
    CsvSeriesWriter csv(inst, cli);
    SimOptions opt;
    opt.series = &csv;
    Simulator sim(sc, opt);
    sim.run();
    json = reportJson(sim.report());
    return inst.str() + cli.str();
  };
  std::string j1, j2;
  const std::string a =
      csvOf(rig("  - {type: errors, target: m-1, at: 20s, duration: 20s, rate: 0.7}\n"), j1);
  const std::string b = csvOf(rig("  - {type: errors, target: m-1, at: 20s, rate: 0.7}\n"
                                  "  - {type: recover, target: m-1, at: 40s}\n"),
                              j2);
  QVERIFY(a == b);
  // The same but for how the fault ended: by itself (a duration) or by hand (a recover).
  const std::string self = "\"self_ending\": true", byHand = "\"self_ending\": false";
  QVERIFY(j1.find(self) != std::string::npos && j2.find(byHand) != std::string::npos);
  j1.replace(j1.find(self), self.size(), byHand);
  QCOMPARE(j1, j2);
  // And it is not the fault-free run (the fault did something).
  std::string j0;
  QVERIFY(csvOf(rig(""), j0) != a);
}

void TstSimFaults::openEndedFaultLastsToTheEnd() {
  const Run run = simulateRig(rig("  - {type: errors, target: m-1, at: 20s, rate: 0.3}\n"));
  for (const InstanceTick& r : run.rows(0)) QCOMPARE(r.faulted, r.t >= kAt);
  QCOMPARE(run.report.faults.size(), std::size_t{1});
  QVERIFY(!run.report.faults[0].ended);
  QCOMPARE(run.report.faults[0].end, run.report.simulated);
  // Failures keep coming after 40 s.
  QVERIFY(sumRows(run.rows(0), kEnd, seconds(60)).failures > 0);
}

void TstSimFaults::recoverOfModelEndsInstanceFault() {
  const Run run =
      simulateRig(rig("  - {type: errors, target: m-1, at: 20s, rate: 0.5}\n"
                      "  - {type: outage, target: m-2, at: 25s}\n"
                      "  - {type: recover, target: m, at: 40s}\n"));
  for (const InstanceTick& r : run.series.instances)
    QCOMPARE(r.faulted, r.t >= (r.instance == 0 ? kAt : seconds(25)) && r.t < kEnd);
  QCOMPARE(run.report.faults.size(), std::size_t{2});
  for (const FaultReport& f : run.report.faults) {
    QVERIFY(f.ended);
    QCOMPARE(f.end, kEnd);
  }
  // Quick failures (20 ms, 1 ms) of calls sent just before 40 s land in the row of 41 s.
  QCOMPARE(sumRows(run.rows(0), kEnd + seconds(2), seconds(80)).failures, std::uint64_t{0});
  QCOMPARE(sumRows(run.rows(1), kEnd + seconds(2), seconds(80)).failures, std::uint64_t{0});
}

void TstSimFaults::modelTargetHitsEveryInstance() {
  const Run run =
      simulateRig(rig("  - {type: errors, target: m, at: 20s, duration: 20s, rate: 0.4}\n"));
  QCOMPARE(run.report.faults.size(), std::size_t{2});
  QCOMPARE(run.report.faults[0].instance, std::string("m-1"));
  QCOMPARE(run.report.faults[1].instance, std::string("m-2"));
  for (std::uint32_t i = 0; i < 2; ++i) {
    const Sums s = sumRows(run.rows(i), kAt + seconds(1), kEnd);
    QVERIFY2(binomialClose(s.failures, s.responses, 0.4),
             qPrintable(
                 QStringLiteral("instance %1: %2 of %3").arg(i).arg(s.failures).arg(s.responses)));
  }
}

// Protected, one instance, every call fails from 10 s on and the fault never ends: the breaker
// opens, and every call it blocks would have failed — no false positive. Then the same fault
// ending at 30 s: blocks after it (while the breaker is still open or probing) would all have
// succeeded (healthy, idle instance, 100 ms calls well under the slow threshold), blocks before
// it would not — the FP numerator is exactly the blocks after 30 s.
void TstSimFaults::groundTruthDuringErrors() {
  const std::string one = R"(duration: 60s
seed: 31
models: [{name: m, instances: 1, slots: 8, service: {base: 100ms, sigma: 0}}]
clients: [{name: c, model: m, rate: 20, timeout: 2s}]
faults:
)";
  {
    const Run run = simulateRig(one + "  - {type: errors, target: m, at: 10s, rate: 1}\n", true);
    QVERIFY(run.report.opens > 0);
    QVERIFY(run.report.faults[0].detected);
    QVERIFY(run.report.falsePositive.den > 0);
    QCOMPARE(run.report.falsePositive.num, std::uint64_t{0});
  }
  {
    const Run run =
        simulateRig(one + "  - {type: errors, target: m, at: 10s, duration: 20s, rate: 1}\n", true);
    std::uint64_t before = 0, after = 0;
    for (const InstanceTick& r : run.series.instances)
      (r.t <= seconds(30) ? before : after) += r.rejected;
    QVERIFY(before > 0);
    QVERIFY(after > 0);  // the breaker stays open past the fault's end (open 10 s, probes)
    QCOMPARE(run.report.falsePositive.den, before + after);
    QCOMPARE(run.report.falsePositive.num, after);
  }
}

// A breaker forced open in front of a healthy, idle instance blocks everything, and every
// blocked call would have succeeded: FP rate exactly 1 (one instance, so one block per original).
void TstSimFaults::groundTruthForcedOpenHealthy() {
  const Run run = simulateRig(R"(duration: 30s
seed: 32
policy: {breaker: {mode: forced_open}}
models: [{name: m, instances: 1, slots: 8, service: {base: 100ms, sigma: 0.3}}]
clients: [{name: c, model: m, rate: 20, timeout: 2s}]
)",
                              true);
  const RunReport& r = run.report;
  QVERIFY(r.originals > 400);
  QCOMPARE(r.ends[static_cast<int>(End::Rejected)], r.originals);
  QCOMPARE(r.rejectedBy[RejectReason::ForcedOpen], r.originals);
  QCOMPARE(r.falsePositive.den, r.originals);
  QCOMPARE(r.falsePositive.num, r.originals);
  QCOMPARE(r.attempts, std::uint64_t{0});
  // No answer at all: latencies are n/a (null) in the JSON, not 0.
  QVERIFY(reportJson(r).find("\"p99_ms\": null") != std::string::npos);
}

// One slot busy for 100 s, a queue of 4 filled within half a second, callers that wait
// 1000 s: from then on every call gets a queue-full 503, the breaker opens on them, and
// every call it blocks finds the queue still full (nothing leaves it before 100 s) — so none
// would have succeeded.
void TstSimFaults::groundTruthQueueFull() {
  const Run run = simulateRig(R"(duration: 60s
drain: 600s
seed: 33
models: [{name: m, instances: 1, slots: 1, queue: 4, service: {base: 100s, sigma: 0}}]
clients: [{name: c, model: m, rate: 10, timeout: 1000s}]
)",
                              true);
  const RunReport& r = run.report;
  QVERIFY(r.queueFull > 0);
  QVERIFY(r.opens > 0);
  QVERIFY(r.falsePositive.den > 0);
  QCOMPARE(r.falsePositive.num, std::uint64_t{0});
  QCOMPARE(r.inFlightAtEnd, std::uint64_t{0});
  // The five admitted calls are served one after the other.
  QCOMPARE(r.ends[static_cast<int>(End::Success)], std::uint64_t{5});
}

// A caller with a 1 s overall deadline (timeout 30 s) in front of a breaker forced open and a
// healthy instance with 500 ms calls. Each original gets two tries: at its start (1 s of
// deadline left: a 500 ms call would have made it) and, after a fixed 900 ms backoff, a retry
// with 100 ms left — a 500 ms call cannot make that: the caller gives up at the deadline. (The
// third would come after the deadline and is not made.) So exactly half the blocks would
// have succeeded. The ground truth compares the latency with the per-try `timeout` only, not
// with what is left of the `deadline`, and calls every block a false positive — see the
// report (sim/src/simulator.cpp, wouldSucceed).
void TstSimFaults::groundTruthRespectsDeadline() {
  const Run run = simulateRig(R"(duration: 30s
seed: 41
policy: {breaker: {mode: forced_open}}
models: [{name: m, instances: 1, slots: 8, service: {base: 500ms, sigma: 0}}]
clients:
  - {name: c, model: m, rate: 5, timeout: 30s, deadline: 1s,
     retries: {max: 3, backoff: 900ms, multiplier: 1, jitter: none}}
)",
                              true);
  const RunReport& r = run.report;
  QVERIFY(r.originals > 100);
  QCOMPARE(r.clients[0].tries, 2 * r.originals);
  QCOMPARE(r.falsePositive.den, 2 * r.originals);
  QCOMPARE(r.ends[static_cast<int>(End::Timeout)], r.originals);  // the deadline ends them all
  QCOMPARE(r.falsePositive.num, r.originals);
}

// The ground truth reuses an instance's FIFO re-run between blocks while nothing it depends
// on changed (SimOptions::reuseRerun). Each row has an instance whose breaker opens while it
// still holds a queue that changes under the blocks — calls finish, queued callers give up,
// probes are admitted, capacity drops, a drift keeps growing — and the verdicts must be
// exactly those of a re-run on every block: the whole report, byte for byte.
void TstSimFaults::groundTruthRerunReuse_data() {
  QTest::addColumn<QString>("fault");
  QTest::addColumn<bool>("serveAbandoned");
  QTest::addColumn<QString>("timeout");
  QTest::newRow("drift, queued callers give up")
      << "latency_drift, target: m-1, at: 10s, ramp: 5s, multiplier: 8" << false << "2s";
  QTest::newRow("drift, abandoned calls served")
      << "latency_drift, target: m-1, at: 10s, ramp: 5s, multiplier: 8" << true << "2s";
  QTest::newRow("drift, patient callers")
      << "latency_drift, target: m-1, at: 10s, ramp: 20s, multiplier: 6" << false << "20s";
  QTest::newRow("capacity loss")
      << "capacity_loss, target: m-1, at: 10s, duration: 20s, remaining: 0.25" << false << "3s";
  QTest::newRow("capacity loss, abandoned calls served")
      << "capacity_loss, target: m-1, at: 10s, duration: 20s, remaining: 0.25" << true << "3s";
  QTest::newRow("delay") << "delay, target: m-1, at: 10s, duration: 25s, delay: 1500ms" << false
                         << "4s";
  // A fault edge while the breaker is open and the queue is full: the replay must see it.
  const QString drift =
      "latency_drift, target: m-1, at: 10s, ramp: 5s, multiplier: 8}\n  - {type: ";
  for (const char* at : {"17500ms", "18500ms", "20500ms"}) {
    QTest::addRow("capacity drops while open, at %s", at)
        << drift + "capacity_loss, target: m-1, at: " + at + ", duration: 15s, remaining: 0.5"
        << false << "20s";
    QTest::addRow("delay starts while open, at %s", at)
        << drift + "delay, target: m-1, at: " + at + ", duration: 15s, delay: 700ms" << false
        << "20s";
  }
}

void TstSimFaults::groundTruthRerunReuse() {
  QFETCH(QString, fault);
  QFETCH(bool, serveAbandoned);
  QFETCH(QString, timeout);
  const std::string yaml = R"(name: replay-reuse
duration: 60s
drain: 30s
seed: 77
routing: round_robin
policy:
  breaker:
    window: {type: time, length: 5s, bucket: 1s}
    min_calls: 10
    trip: {slow_rate: 0.3, sustain: 1s}
    slow: {absolute: 4s}
    open: {duration: 3s}
    half_open: {probe_share: 0.3, success_streak: 3}
models:
  - {name: m, instances: 2, slots: 4, queue: 12, serve_abandoned: )" +
                           std::string(serveAbandoned ? "true" : "false") + R"(,
     service: {base: 150ms, sigma: 0.4}}
clients:
  - {name: c, model: m, rate: 40, timeout: )" +
                           timeout.toStdString() + R"(}
faults:
  - {type: )" + fault.toStdString() +
                           "}\n";
  const Scenario sc = parseScenario(yaml, "rig.yaml");
  auto run = [&sc](bool reuse) {
    SimOptions opt;
    opt.reuseRerun = reuse;
    Simulator sim(sc, opt);
    sim.run();
    return sim.report();
  };
  const RunReport reused = run(true), replayed = run(false);
  // The rig must exercise the replay: blocks of a busy instance, with both verdicts.
  const BlockTally& t = reused.blocks;
  const std::uint64_t would = t.wouldSucceed[0] + t.wouldSucceed[1] + t.wouldSucceed[2];
  QVERIFY2(t.total() > 50, qPrintable(QString::number(t.total())));
  QVERIFY2(would > 0 && would < t.total(),
           qPrintable(QStringLiteral("%1 of %2").arg(would).arg(t.total())));
  QCOMPARE(reused.blocks.wouldSucceed, replayed.blocks.wouldSucceed);
  QCOMPARE(reportJson(reused), reportJson(replayed));
}

// "Would have succeeded" is the client's bar (its SLO), never the policy's slow threshold: a
// breaker forced open blocks every call of a healthy instance with 500 ms calls, and whether
// the policy calls 300 ms or 5 s slow, every block would have met the 2 s SLO — the verdicts
// (all of them false trips: there is no fault) do not move with the policy. With a 400 ms SLO
// none would.
void TstSimFaults::groundTruthIndependentOfPolicy() {
  auto run = [](const char* slow, const char* slo) {
    return simulateRig(std::string(R"(duration: 30s
seed: 43
policy: {breaker: {mode: forced_open, slow: {absolute: )") +
                           slow + R"(}}}
models: [{name: m, instances: 1, slots: 8, service: {base: 500ms, sigma: 0}}]
clients: [{name: c, model: m, rate: 10, timeout: 10s, slo: )" +
                           slo + "}]\n",
                       true)
        .report;
  };
  const RunReport strict = run("300ms", "2s"), lax = run("5s", "2s"), tight = run("5s", "400ms");
  QVERIFY(strict.falsePositive.den > 200);
  QCOMPARE(strict.falsePositive.den, lax.falsePositive.den);
  QCOMPARE(strict.falsePositive.num, strict.falsePositive.den);
  QCOMPARE(lax.falsePositive.num, lax.falsePositive.den);
  QCOMPARE(strict.fpFalseTrip.num, strict.falsePositive.num);
  QCOMPARE(tight.falsePositive.num, std::uint64_t{0});
}

// Normal jitter is not a fault: a 5 s burst of 503s marked benign, and an oversensitive breaker
// (no sustain, a low error rate) trips on it — a false trip, and its blocks of a healthy
// instance count in 误伤. The same burst as a 30 s real fault: the trip is correct, its blocks
// during the fault are collateral and only those after it are recovery lag.
void TstSimFaults::benignBlipIsAFalseTrip() {
  auto run = [](const char* fault) {
    return simulateRig(std::string(R"(duration: 90s
seed: 44
policy:
  breaker:
    window: {type: time, length: 5s, bucket: 1s}
    min_calls: 5
    trip: {error_rate: 0.1, sustain: 0s}
    open: {duration: 10s}
models: [{name: m, instances: 2, slots: 8, service: {base: 100ms, sigma: 0}}]
clients: [{name: c, model: m, rate: 20, timeout: 2s}]
faults:
  - {type: errors, target: m-1, at: 30s, )") +
                           fault + "}\n",
                       true)
        .report;
  };
  const RunReport blip = run("duration: 5s, rate: 1, benign: true");
  QVERIFY(blip.opens > 0);
  QVERIFY(blip.blocks.falseTripEpisodes > 0);
  QVERIFY(blip.fpFalseTrip.num > 0);
  QCOMPARE(blip.collateral.num, std::uint64_t{0});
  QCOMPARE(blip.blocks.blocks[int(BlockClass::Collateral)], std::uint64_t{0});
  QVERIFY(*blip.falseTripsPerHour > 0);
  const RunReport real = run("duration: 30s, rate: 1");
  QCOMPARE(real.blocks.falseTripEpisodes, std::uint64_t{0});
  QCOMPARE(real.fpFalseTrip.num, std::uint64_t{0});
  QVERIFY(real.blocks.blocks[int(BlockClass::Collateral)] > 0);
  QCOMPARE(real.collateral.num, std::uint64_t{0});  // every call failed during the fault
  QVERIFY(real.fpRecoveryLag.num > 0);
  QCOMPARE(real.falsePositive.num, real.fpRecoveryLag.num);
  // Not marked benign, but shorter than the classes' shortest real fault (10 s): its blocks
  // are false trips, and so it is not a fault to detect either (it had a TTD row of its own,
  // and "never detected" when the breaker let it pass).
  const RunReport shortBlip = run("duration: 5s, rate: 1");
  QVERIFY(shortBlip.blocks.falseTripEpisodes > 0);
  QCOMPARE(shortBlip.faults.size(), std::size_t{1});
  QVERIFY(shortBlip.faults[0].benign);
  QVERIFY(!shortBlip.meanTtd);
  QCOMPARE(shortBlip.interception.den, std::uint64_t{0});
  QCOMPARE(real.faults.size(), std::size_t{1});
  QVERIFY(!real.faults[0].benign);
}

// One instance, no protection, an outage from 60 s to 120 s: its caller's availability is back
// once the first full window (10 s) after the outage is clean — 60 to 72 s after the onset —
// and it stays there. The outage ended by itself; a recover would have ended it by hand.
void TstSimFaults::serviceRestorationOfAnOutage() {
  auto run = [](const char* fault) {
    return simulateRig(std::string(R"(duration: 300s
seed: 45
models: [{name: m, instances: 1, slots: 8, service: {base: 100ms, sigma: 0}}]
clients: [{name: c, model: m, rate: 20, timeout: 2s}]
faults:
)") + fault,
                       false)
        .report;
  };
  const RunReport r = run("  - {type: outage, target: m-1, at: 60s, duration: 60s}\n");
  QCOMPARE(r.serviceRestored, std::uint64_t{1});
  const Micros t = *r.faults[0].serviceRestoration;
  QVERIFY2(t >= seconds(60) && t <= seconds(72), qPrintable(QString::number(t / 1e6)));
  QVERIFY(r.faults[0].selfEnding);
  const RunReport byHand =
      run("  - {type: outage, target: m-1, at: 60s}\n  - {type: recover, target: m-1, at: 120s}\n");
  QVERIFY(!byHand.faults[0].selfEnding);
  QCOMPARE(*byHand.faults[0].serviceRestoration, t);
  // Never back: an outage to the end of the run.
  const RunReport never = run("  - {type: outage, target: m-1, at: 60s}\n");
  QCOMPARE(never.serviceRestored, std::uint64_t{0});
  QVERIFY(!never.faults[0].serviceRestoration.has_value());
}

// Interception is judged on the faults that spread in the paired baseline. A cascade: m-1 drifts
// to 50× slow over a minute, its calls hold the group's gateway budget of 16, and it turns
// away m-2's traffic too — m-2, healthy, is unhealthy for well over a window without
// protection; with the breaker m-1 is cut off, the budget frees and m-2 stays healthy. The
// same fault without a shared budget does not spread: interception is n/a, not 100 %.
void TstSimFaults::interceptionPaired_data() {
  QTest::addColumn<QString>("budget");
  QTest::addColumn<bool>("cascade");
  QTest::newRow("shared budget: a cascade") << ", max_requests: 16" << true;
  QTest::newRow("no shared budget: no spread") << "" << false;
}

void TstSimFaults::interceptionPaired() {
  QFETCH(QString, budget);
  QFETCH(bool, cascade);
  const std::string yaml = R"(duration: 180s
seed: 46
routing: round_robin
policy: {breaker: {slow: {absolute: 500ms}, min_calls: 5}}
models: [{name: m, instances: 2, slots: 4, queue: 64)" +
                           budget.toStdString() +
                           R"(, service: {base: 100ms, sigma: 0.1}}]
clients: [{name: c, model: m, rate: 20, timeout: 5s}]
faults:
  - {type: latency_drift, target: m-1, at: 30s, duration: 100s, ramp: 60s, multiplier: 50}
)";
  const RunReport base = simulateRig(yaml, false).report, prot = simulateRig(yaml, true).report;
  const Ratio paired = pairedInterception(base, prot);
  if (!cascade) {
    QVERIFY(base.faults[0].intercepted);
    QCOMPARE(paired.den, std::uint64_t{0});
    QVERIFY(!paired.value().has_value());
    return;
  }
  QVERIFY(!base.faults[0].intercepted);
  QCOMPARE(base.faults[0].spreadTo, std::string("m-2"));
  QVERIFY(prot.faults[0].detected);
  QVERIFY(prot.faults[0].intercepted);
  QCOMPARE(paired.den, std::uint64_t{1});
  QCOMPARE(paired.num, std::uint64_t{1});
}

// Spread to the service: m-1 hangs, its calls hold the core caller's pool of 10 connections
// for the 2 s timeout, and calls meant for the healthy m-2 fail at once for want of a
// connection. Losing half the group explains at most half the availability; the caller loses
// far more, for far longer than a window — the fault spread to the service, though no other
// instance turned unhealthy. With the breaker (no sustain: a hang shows only as timeouts, 2 s
// late) m-1 is cut off within a window and the pool frees.
void TstSimFaults::spreadToTheService() {
  const std::string yaml = R"(duration: 120s
seed: 47
routing: round_robin
policy: {breaker: {min_calls: 5, trip: {sustain: 0s}}}
models: [{name: m, instances: 2, slots: 16, service: {base: 100ms, sigma: 0.1}}]
clients: [{name: c, model: m, criticality: core, rate: 20, timeout: 2s, concurrency: 10}]
faults:
  - {type: hang, target: m-1, at: 60s, duration: 40s}
)";
  const RunReport base = simulateRig(yaml, false).report, prot = simulateRig(yaml, true).report;
  QVERIFY(!base.faults[0].intercepted);
  QCOMPARE(base.faults[0].spreadTo, std::string("service (core availability)"));
  QVERIFY(base.faults[0].spreadAt > seconds(60) && base.faults[0].spreadAt < seconds(90));
  QVERIFY(prot.faults[0].detected);
  QVERIFY(prot.faults[0].intercepted);
  const Ratio paired = pairedInterception(base, prot);
  QCOMPARE(paired.den, std::uint64_t{1});
  QCOMPARE(paired.num, std::uint64_t{1});
}

// Spread is attributed to the fault whose traffic reaches the victim (kpis.md): group n is
// overloaded by its own caller the whole run (queue full: unhealthy, no fault of its own), but
// nothing of m's reaches it — no shared caller, no degrade — so m-1's drift did not spread.
void TstSimFaults::spreadIsAttributed() {
  const std::string yaml = R"(duration: 180s
seed: 46
routing: round_robin
policy: {breaker: {slow: {absolute: 500ms}, min_calls: 5}}
models:
  - {name: m, instances: 2, slots: 4, queue: 64, service: {base: 100ms, sigma: 0.1}}
  - {name: n, instances: 1, slots: 2, queue: 4, service: {base: 1s, sigma: 0.1}}
clients:
  - {name: c, model: m, rate: 20, timeout: 5s}
  - {name: d, model: n, rate: 10, timeout: 5s}
faults:
  - {type: latency_drift, target: m-1, at: 30s, duration: 100s, ramp: 60s, multiplier: 50}
)";
  const RunReport base = simulateRig(yaml, false).report;
  QCOMPARE(base.faults.size(), std::size_t{1});
  const InstanceReport* n1 = nullptr;
  for (const InstanceReport& i : base.instances)
    if (i.name == "n-1") n1 = &i;
  QVERIFY(n1);
  QVERIFY(n1->unhealthyTime > seconds(100));  // the bystander really is unhealthy
  QVERIFY2(base.faults[0].intercepted, base.faults[0].spreadTo.c_str());
  QVERIFY(base.faults[0].spreadTo.empty());
}

QTEST_GUILESS_MAIN(TstSimFaults)
#include "tst_sim_faults.moc"
