// Scenario files (sim::parseScenario / loadScenarioFile): every key of a full scenario lands
// where it should, defaults are the documented ones, and every kind of mistake is an
// InputError that names the file, the 1-based line and the key path, as
// `file:line: key: what is wrong`.
//
// The YAML texts below start on line 1 right after R"( so the line numbers in the tables can
// be counted by eye.
#include <QtTest>

#include <QFile>
#include <QTemporaryDir>

#include <string>

#include "spillway/input_error.hpp"
#include "spillway/sim/policy_match.hpp"
#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/simulator.hpp"

using namespace spillway;
using namespace spillway::sim;

namespace {

const char* const kSource = "test.yaml";

// Runs the parser and returns the error it throws; fails the test when it does not throw.
struct Caught {
  bool thrown = false;
  std::string file, field, detail, what;
  long line = -1;
};

Caught parseError(const QString& yaml, const std::string& baseDir = {}) {
  Caught c;
  try {
    parseScenario(yaml.toStdString(), kSource, baseDir);
  } catch (const InputError& e) {
    c.thrown = true;
    c.file = e.file();
    c.line = e.line();
    c.field = e.field();
    c.detail = e.detail();
    c.what = e.what();
  }
  return c;
}

bool writeFile(const QString& path, const QByteArray& text) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  return f.write(text) == text.size();
}

}  // namespace

class TstSimScenario : public QObject {
  Q_OBJECT

 private slots:
  void fullScenario();
  void defaults();
  void tinyRatesSendNothing_data();
  void tinyRatesSendNothing();
  void instanceCountNames();
  void errors_data();
  void errors();
  void emptyDocument();
  void policyFileRelativeToBaseDir();
  void policyFileRelativeToScenarioFile();
  void policyFileErrorNamesThePolicyFile();
  void missingScenarioFile();
  void builtinScenariosParse_data();
  void builtinScenariosParse();
  void policyNamesTheScenarioLacks();
};

// A typo in a backup's or override's name dropped it without a word; each is named now.
void TstSimScenario::policyNamesTheScenarioLacks() {
  sim::Scenario sc = sim::loadScenarioFile(
      QStringLiteral(SPILLWAY_RESOURCES_DIR "/scenarios/seed-000.yaml").toStdString());
  QVERIFY(sim::unmatchedPolicyNames(sc).empty());  // the seed as shipped names what it has
  Policy& p = sc.policy;
  p.models["chat-33b"] = p.models.at("chat-32b");
  p.modelOverrides["chat-999b"] = {};
  p.instanceOverrides["chat-72b-9"] = {};
  p.degrade.chains["chat-72b"] = {"chat-32b", "chat-33b"};
  const std::vector<std::string> want = {
      "models.chat-33b: the scenario has no model 'chat-33b' (its profile is unused)",
      "overrides.models.chat-999b: the scenario has no model 'chat-999b' (the override is "
      "unused)",
      "overrides.instances.chat-72b-9: the scenario has no instance 'chat-72b-9' (the override "
      "is unused)",
      "degrade.chains.chat-72b: the scenario has no model 'chat-33b' (a backup it cannot route "
      "to)"};
  QCOMPARE(sim::unmatchedPolicyNames(sc), want);
}

// A scenario that uses every key once; each value is distinct so a key read into the wrong
// field shows.
void TstSimScenario::fullScenario() {
  const QString yaml = QStringLiteral(R"(version: 1
name: full
description: every key
duration: 10m
tick: 500ms
drain: 45s
seed: 18446744073709551615
routing: weighted
policy:
  name: inline-policy
  breaker:
    min_calls: 7
    trip: {error_rate: 0.3, sustain: 2s}
models:
  - name: big
    instances: [big-a, {name: big-b, weight: 3}]
    slots: 12
    queue: 40
    queue_full: 429
    service: {base: 150ms, per_input_token: 0.1ms, per_output_token: 6ms, sigma: 0.2}
    batching: {knee: 6, slope: 0.05}
    error_rate: 0.002
    error_latency: 15ms
    serve_abandoned: true
    max_requests: 64
  - name: small
    instances: 3
clients:
  - name: shop
    model: big
    criticality: core
    rate: 2.5
    profile:
      - {type: constant}
      - {type: step, steps: [{at: 1m, factor: 2}, {at: 2m, factor: 0.5}]}
      - {type: ramp, start: 3m, end: 4m, from: 1, to: 3}
      - {type: diurnal, amplitude: 0.4, period: 1h, phase: 10m}
      - {type: burst, start: 5m, duration: 30s, multiplier: 4}
    timeout: 20s
    deadline: 45s
    slo: 4s
    concurrency: 16
    retries: {max: 3, backoff: 250ms, multiplier: 1.5, max_backoff: 5s, jitter: equal, budget: 0.2, on: [error, timeout]}
    tokens: {input: {median: 500, sigma: 0.3}, output: {median: 120}}
    sessions: {turns: 4, think: 15s, context_growth: 0.3}
  - {name: batch, model: small, rate: 1, profile: {type: burst, start: 1m, duration: 1m, multiplier: 2}}
faults:
  - {type: latency_drift, target: big-b, at: 1m, duration: 2m, ramp: 30s, multiplier: 8}
  - {type: delay, target: small, at: 2m, delay: 300ms}
  - {type: errors, target: small-1, at: 3m, duration: 1m, rate: 0.6, status: 502}
  - {type: throttle, target: small-2, at: 4m, rate: 0.25}
  - {type: hang, target: small-3, at: 4m, duration: 20s}
  - {type: reset, target: big-a, at: 5m, duration: 10s, rate: 0.5}
  - {type: capacity_loss, target: big, at: 6m, duration: 1m, remaining: 0.25}
  - {type: outage, target: big-a, at: 7m, duration: 40s}
  - {type: recover, target: small, at: 8m}
)");
  Scenario s;
  try {
    s = parseScenario(yaml.toStdString(), kSource);
  } catch (const InputError& e) {
    QFAIL(e.what());
  }
  QCOMPARE(s.name, std::string("full"));
  QCOMPARE(s.description, std::string("every key"));
  QCOMPARE(s.source, std::string(kSource));
  QCOMPARE(s.duration, seconds(600));
  QCOMPARE(s.tick, millis(500));
  QCOMPARE(s.drain, seconds(45));
  QCOMPARE(s.seed, std::uint64_t{18446744073709551615ULL});  // the full 64-bit range
  QCOMPARE(s.routing, Routing::Weighted);
  QCOMPARE(s.policy.name, std::string("inline-policy"));
  QCOMPARE(s.policy.breaker.minCalls, 7u);
  QCOMPARE(s.policy.breaker.trip.errorRate, 0.3);
  QCOMPARE(s.policy.breaker.trip.sustain, seconds(2));
  QCOMPARE(s.policy.breaker.trip.slowRate, BreakerConfig{}.trip.slowRate);  // not written

  QCOMPARE(s.models.size(), std::size_t{2});
  const ModelSpec& big = s.models[0];
  QCOMPARE(big.name, std::string("big"));
  QCOMPARE(big.line, 15);
  QCOMPARE(big.instances.size(), std::size_t{2});
  QCOMPARE(big.instances[0].name, std::string("big-a"));
  QCOMPARE(big.instances[0].weight, 1.0);
  QCOMPARE(big.instances[1].name, std::string("big-b"));
  QCOMPARE(big.instances[1].weight, 3.0);
  QCOMPARE(big.slotCount, 12u);
  QCOMPARE(big.queue, 40u);
  QCOMPARE(big.queueFullStatus, 429);
  QCOMPARE(big.baseTime, millis(150));
  QCOMPARE(big.perInputToken, 100.0);  // µs per token
  QCOMPARE(big.perOutputToken, 6000.0);
  QCOMPARE(big.sigma, 0.2);
  QCOMPARE(big.batching.knee, 6u);
  QCOMPARE(big.batching.slope, 0.05);
  QCOMPARE(big.errorRate, 0.002);
  QCOMPARE(big.errorLatency, millis(15));
  QVERIFY(big.serveAbandoned);
  QCOMPARE(big.maxRequests, 64u);
  const ModelSpec& small = s.models[1];
  QCOMPARE(small.line, 26);
  QCOMPARE(small.instances.size(), std::size_t{3});
  QCOMPARE(small.instances[2].name, std::string("small-3"));

  QCOMPARE(s.clients.size(), std::size_t{2});
  const ClientSpec& c = s.clients[0];
  QCOMPARE(c.name, std::string("shop"));
  QCOMPARE(c.line, 29);
  QCOMPARE(c.model, std::string("big"));
  QCOMPARE(c.criticality, Criticality::Core);
  QCOMPARE(c.rate, 2.5);
  QCOMPARE(c.profile.size(), std::size_t{5});
  QCOMPARE(c.profile[0].kind, ProfileKind::Constant);
  QCOMPARE(c.profile[1].kind, ProfileKind::Step);
  QCOMPARE(c.profile[1].steps.size(), std::size_t{2});
  QCOMPARE(c.profile[1].steps[0].first, seconds(60));
  QCOMPARE(c.profile[1].steps[0].second, 2.0);
  QCOMPARE(c.profile[1].steps[1].first, seconds(120));
  QCOMPARE(c.profile[1].steps[1].second, 0.5);
  QCOMPARE(c.profile[2].kind, ProfileKind::Ramp);
  QCOMPARE(c.profile[2].start, seconds(180));
  QCOMPARE(c.profile[2].end, seconds(240));
  QCOMPARE(c.profile[2].from, 1.0);
  QCOMPARE(c.profile[2].to, 3.0);
  QCOMPARE(c.profile[3].kind, ProfileKind::Diurnal);
  QCOMPARE(c.profile[3].amplitude, 0.4);
  QCOMPARE(c.profile[3].period, seconds(3600));
  QCOMPARE(c.profile[3].phase, seconds(600));
  QCOMPARE(c.profile[4].kind, ProfileKind::Burst);
  QCOMPARE(c.profile[4].start, seconds(300));
  QCOMPARE(c.profile[4].end, seconds(330));  // start + duration
  QCOMPARE(c.profile[4].multiplier, 4.0);
  QCOMPARE(c.timeout, seconds(20));
  QCOMPARE(c.deadline, seconds(45));
  QCOMPARE(c.slo, seconds(4));
  QCOMPARE(c.concurrency, 16u);
  QCOMPARE(c.retries.max, 3u);
  QCOMPARE(c.retries.backoff, millis(250));
  QCOMPARE(c.retries.multiplier, 1.5);
  QCOMPARE(c.retries.maxBackoff, seconds(5));
  QCOMPARE(c.retries.jitter, RetrySpec::Jitter::Equal);
  QCOMPARE(c.retries.budget, 0.2);
  // `on` lists exactly the outcomes that are retried.
  QVERIFY(c.retries.onError);
  QVERIFY(c.retries.onTimeout);
  QVERIFY(!c.retries.onThrottle);
  QVERIFY(!c.retries.onRejected);
  QCOMPARE(c.inputTokens.median, 500.0);
  QCOMPARE(c.inputTokens.sigma, 0.3);
  QCOMPARE(c.outputTokens.median, 120.0);
  QCOMPARE(c.outputTokens.sigma, 0.0);
  QCOMPARE(c.sessions.turns, 4.0);
  QCOMPARE(c.sessions.think, seconds(15));
  QCOMPARE(c.sessions.contextGrowth, 0.3);
  // A single map is a profile of one shape.
  QCOMPARE(s.clients[1].profile.size(), std::size_t{1});
  QCOMPARE(s.clients[1].profile[0].kind, ProfileKind::Burst);
  QCOMPARE(s.clients[1].criticality, Criticality::NonCritical);

  QCOMPARE(s.faults.size(), std::size_t{9});
  const auto& f = s.faults;
  QCOMPARE(f[0].kind, FaultKind::LatencyDrift);
  QCOMPARE(f[0].line, 48);
  QCOMPARE(f[0].target, std::string("big-b"));
  QCOMPARE(f[0].at, seconds(60));
  QCOMPARE(f[0].duration, seconds(120));
  QCOMPARE(f[0].ramp, seconds(30));
  QCOMPARE(f[0].value, 8.0);
  QCOMPARE(f[1].kind, FaultKind::Delay);
  QCOMPARE(f[1].delay, millis(300));
  QCOMPARE(f[1].duration, kForever);  // no duration: until a recover or the end
  QCOMPARE(f[2].kind, FaultKind::Errors);
  QCOMPARE(f[2].value, 0.6);
  QCOMPARE(f[2].status, 502);
  QCOMPARE(f[3].kind, FaultKind::Throttle);
  QCOMPARE(f[3].value, 0.25);
  QCOMPARE(f[4].kind, FaultKind::Hang);
  QCOMPARE(f[4].value, 1.0);  // rate defaults to every call
  QCOMPARE(f[4].duration, seconds(20));
  QCOMPARE(f[5].kind, FaultKind::Reset);
  QCOMPARE(f[5].value, 0.5);
  QCOMPARE(f[6].kind, FaultKind::CapacityLoss);
  QCOMPARE(f[6].value, 0.25);
  QCOMPARE(f[6].target, std::string("big"));  // a model target stays as written
  QCOMPARE(f[7].kind, FaultKind::Outage);
  QCOMPARE(f[7].duration, seconds(40));
  QCOMPARE(f[8].kind, FaultKind::Recover);
  QCOMPARE(f[8].at, seconds(480));
  QCOMPARE(f[8].line, 56);
}

// A minimal scenario takes every other value from the documented defaults (scenario.hpp and
// the policy defaults), so the parser must not invent values of its own.
void TstSimScenario::defaults() {
  const Scenario s = parseScenario(R"(duration: 1m
models: [{name: m, instances: 1}]
clients: [{name: c, model: m, rate: 3}]
)",
                                   kSource);
  QCOMPARE(s.name, std::string("unnamed"));
  QCOMPARE(s.duration, seconds(60));
  QCOMPARE(s.tick, seconds(1));
  QCOMPARE(s.drain, seconds(120));
  QCOMPARE(s.seed, std::uint64_t{1});
  QCOMPARE(s.routing, Routing::LeastOutstanding);
  QCOMPARE(s.policy.name, std::string("default"));
  QVERIFY(s.faults.empty());
  const ModelSpec want;
  const ModelSpec& m = s.models[0];
  QCOMPARE(m.slotCount, want.slotCount);
  QCOMPARE(m.queue, want.queue);
  QCOMPARE(m.queueFullStatus, want.queueFullStatus);
  QCOMPARE(m.baseTime, want.baseTime);
  QCOMPARE(m.sigma, want.sigma);
  QCOMPARE(m.batching.knee, 0u);
  QCOMPARE(m.errorRate, 0.0);
  QCOMPARE(m.maxRequests, 0u);
  QVERIFY(!m.serveAbandoned);
  const ClientSpec wantC;
  const ClientSpec& c = s.clients[0];
  QCOMPARE(c.rate, 3.0);
  QCOMPARE(c.timeout, wantC.timeout);
  QCOMPARE(c.deadline, Micros{0});
  QCOMPARE(c.slo, Micros{0});
  QCOMPARE(c.concurrency, 0u);
  QCOMPARE(c.retries.max, 0u);
  QVERIFY(c.retries.onError && c.retries.onTimeout && c.retries.onThrottle && c.retries.onRejected);
  QCOMPARE(c.sessions.turns, 0.0);
  QVERIFY(c.profile.empty());
}

// A rate of 1e-20 drew gaps of 1e26 µs, which overflowed into 1 µs: 114 million requests in
// two minutes. A rate of 0 (a step to factor 0) sent one request each tick.
void TstSimScenario::tinyRatesSendNothing_data() {
  QTest::addColumn<QString>("client");
  QTest::addColumn<qulonglong>("most");  // original requests at most
  QTest::newRow("rate 1e-20") << "rate: 1e-20" << 0ull;
  QTest::newRow("rate 1e-300") << "rate: 1e-300" << 0ull;
  QTest::newRow("a step to factor 0 for the whole run")
      << "rate: 50, profile: {type: step, steps: [{at: 0s, factor: 0}]}" << 0ull;
  QTest::newRow("factor 0 after 30 s: 30 s of 2/s")
      << "rate: 2, profile: {type: step, steps: [{at: 30s, factor: 0}]}" << 100ull;
}

void TstSimScenario::tinyRatesSendNothing() {
  QFETCH(QString, client);
  QFETCH(qulonglong, most);
  const std::string text =
      "duration: 2m\nmodels: [{name: m, instances: 1}]\nclients: [{name: c, "
      "model: m, " +
      client.toStdString() + "}]\n";
  const Scenario sc = parseScenario(text, kSource);
  Simulator sim(sc, SimOptions{});
  sim.run();
  QVERIFY2(sim.originals() <= most, qPrintable(QString::number(sim.originals())));
  if (most > 0) QVERIFY(sim.originals() >= most / 2);  // about 60 in the first 30 s
}

// `instances: N` names them model-1 … model-N, which is what fault targets refer to.
void TstSimScenario::instanceCountNames() {
  const Scenario s = parseScenario(R"(duration: 1m
models: [{name: gpu, instances: 4}]
clients: [{name: c, model: gpu, rate: 3}]
faults: [{type: outage, target: gpu-4, at: 10s}]
)",
                                   kSource);
  QCOMPARE(s.models[0].instances.size(), std::size_t{4});
  for (int i = 0; i < 4; ++i)
    QCOMPARE(s.models[0].instances[static_cast<std::size_t>(i)].name,
             "gpu-" + std::to_string(i + 1));
  QCOMPARE(s.faults[0].target, std::string("gpu-4"));
}

void TstSimScenario::errors_data() {
  QTest::addColumn<QString>("yaml");
  QTest::addColumn<int>("line");
  QTest::addColumn<QString>("field");
  QTest::addColumn<QString>("detail");  // a part of the message that says what is wrong

  // The tail every document needs; errors sit above it.
  const QString tail = QStringLiteral(
      "models: [{name: m, instances: 2}]\n"
      "clients: [{name: c, model: m, rate: 10}]\n");

  // Unknown keys: a typo must not fall back to a default.
  QTest::newRow("unknown top-level key") << "duration: 60s\ntik: 1s\n" + tail << 2 << "tik"
                                         << "unknown key";
  QTest::newRow("unknown model key") << QStringLiteral(R"(duration: 60s
models:
  - name: m
    instances: 2
    slot: 4
clients: [{name: c, model: m, rate: 10}]
)") << 5 << "models[0].slot"
                                     << "unknown key";
  QTest::newRow("unknown service key") << QStringLiteral(R"(duration: 60s
models:
  - name: m
    instances: 2
    service: {base: 1s, median: 2s}
clients: [{name: c, model: m, rate: 10}]
)") << 5 << "models[0].service.median"
                                       << "unknown key";
  QTest::newRow("unknown client key") << QStringLiteral(R"(duration: 60s
models: [{name: m, instances: 2}]
clients:
  - name: c
    model: m
    rate: 10
    timout: 5s
)") << 7 << "clients[0].timout"
                                      << "unknown key";
  QTest::newRow("key of another fault type") << "duration: 60s\n" + tail +
                                                    "faults:\n"
                                                    "  - {type: outage, target: m-1, at: 1s, "
                                                    "rate: 0.5}\n"
                                             << 5 << "faults[0].rate"
                                             << "unknown key";
  QTest::newRow("duplicate key") << "duration: 60s\nseed: 1\nduration: 90s\n" + tail << 3
                                 << "duration"
                                 << "duplicate key";

  // Wrong types.
  QTest::newRow("slots not a number") << QStringLiteral(R"(duration: 60s
models:
  - name: m
    instances: 2
    slots: many
clients: [{name: c, model: m, rate: 10}]
)") << 5 << "models[0].slots"
                                      << "expected a whole number";
  QTest::newRow("fractional slots") << QStringLiteral(R"(duration: 60s
models:
  - name: m
    instances: 2
    slots: 2.5
clients: [{name: c, model: m, rate: 10}]
)") << 5 << "models[0].slots"
                                    << "expected a whole number";
  QTest::newRow("rate not a number") << QStringLiteral(R"(duration: 60s
models: [{name: m, instances: 2}]
clients:
  - name: c
    model: m
    rate: fast
)") << 6 << "clients[0].rate"
                                     << "expected a number";
  QTest::newRow("models not a list") << "duration: 60s\nmodels: {name: m}\n"
                                        "clients: [{name: c, model: m, rate: 10}]\n"
                                     << 2 << "models"
                                     << "expected a list";
  QTest::newRow("model not a map") << "duration: 60s\nmodels: [m]\n"
                                      "clients: [{name: c, model: m, rate: 10}]\n"
                                   << 2 << "models[0]"
                                   << "expected a mapping";
  QTest::newRow("bool not a bool") << QStringLiteral(R"(duration: 60s
models:
  - name: m
    instances: 2
    serve_abandoned: sometimes
clients: [{name: c, model: m, rate: 10}]
)") << 5 << "models[0].serve_abandoned"
                                   << "expected true or false";
  QTest::newRow("seed not a number") << "duration: 60s\nseed: lucky\n" + tail << 2 << "seed"
                                     << "expected a whole number";
  QTest::newRow("unknown routing") << "duration: 60s\nrouting: random\n" + tail << 2 << "routing"
                                   << "expected one of least_outstanding, round_robin, weighted";
  QTest::newRow("unknown fault type")
      << "duration: 60s\n" + tail + "faults:\n  - {type: meteor, target: m-1, at: 1s}\n"
      << 5 << "faults[0].type"
      << "expected one of";
  QTest::newRow("unknown retry outcome") << QStringLiteral(R"(duration: 60s
models: [{name: m, instances: 2}]
clients:
  - name: c
    model: m
    rate: 10
    retries: {max: 2, on: [error, errors]}
)") << 7 << "clients[0].retries.on[1]"
                                         << "expected one of error, timeout, throttle, rejected";
  QTest::newRow("document not a map") << "- duration: 60s\n"
                                      << 1 << "(document)"
                                      << "expected a mapping";

  // Missing required keys: the line of the mapping that lacks them.
  QTest::newRow("missing duration") << "name: t\n" + tail << 1 << "duration"
                                    << "required key is missing";
  QTest::newRow("missing models") << "duration: 60s\nclients: [{name: c, model: m, rate: 10}]\n"
                                  << 1 << "models"
                                  << "required key is missing";
  QTest::newRow("missing clients") << "duration: 60s\nmodels: [{name: m, instances: 2}]\n"
                                   << 1 << "clients"
                                   << "required key is missing";
  QTest::newRow("missing model name") << QStringLiteral(R"(duration: 60s
models:
  - instances: 2
    slots: 4
clients: [{name: c, model: m, rate: 10}]
)") << 3 << "models[0].name"
                                      << "required key is missing";
  QTest::newRow("missing instances") << QStringLiteral(R"(duration: 60s
models:
  - name: m
clients: [{name: c, model: m, rate: 10}]
)") << 3 << "models[0].instances"
                                     << "required key is missing";
  QTest::newRow("missing client rate") << QStringLiteral(R"(duration: 60s
models: [{name: m, instances: 2}]
clients:
  - name: c
    model: m
)") << 4 << "clients[0].rate"
                                       << "required key is missing";
  QTest::newRow("missing fault target")
      << "duration: 60s\n" + tail + "faults:\n  - {type: outage, at: 1s}\n"
      << 5 << "faults[0].target"
      << "required key is missing";
  QTest::newRow("missing errors rate")
      << "duration: 60s\n" + tail + "faults:\n  - {type: errors, target: m, at: 1s}\n"
      << 5 << "faults[0].rate"
      << "required key is missing";
  QTest::newRow("missing step factor") << QStringLiteral(R"(duration: 60s
models: [{name: m, instances: 2}]
clients:
  - name: c
    model: m
    rate: 10
    profile:
      - type: step
        steps:
          - {at: 10s}
)") << 10 << "clients[0].profile[0].steps[0].factor"
                                       << "required key is missing";

  // References and names.
  QTest::newRow("unknown fault target")
      << "duration: 60s\n" + tail + "faults:\n  - {type: outage, target: m-3, at: 1s}\n"
      << 5 << "faults[0].target"
      << "no instance or model named 'm-3'";
  QTest::newRow("unknown client model") << "duration: 60s\nmodels: [{name: m, instances: 2}]\n"
                                           "clients: [{name: c, model: n, rate: 10}]\n"
                                        << 3 << "clients[0].model"
                                        << "no model named 'n'";
  QTest::newRow("duplicate model name") << QStringLiteral(R"(duration: 60s
models:
  - {name: m, instances: 1}
  - {name: m, instances: 1}
clients: [{name: c, model: m, rate: 10}]
)") << 4 << "models[1].name"
                                        << "duplicate name 'm'";
  // Instances and models share one namespace (a fault target names either).
  QTest::newRow("model named like an instance") << QStringLiteral(R"(duration: 60s
models:
  - {name: m, instances: 2}
  - {name: m-2, instances: 1}
clients: [{name: c, model: m, rate: 10}]
)") << 4 << "models[1].name"
                                                << "duplicate name 'm-2'";
  QTest::newRow("duplicate instance name") << QStringLiteral(R"(duration: 60s
models:
  - name: m
    instances: [x, y, x]
clients: [{name: c, model: m, rate: 10}]
)") << 4 << "models[0].instances"
                                           << "duplicate instance name 'x'";
  QTest::newRow("duplicate client name") << QStringLiteral(R"(duration: 60s
models: [{name: m, instances: 2}]
clients:
  - {name: c, model: m, rate: 10}
  - {name: c, model: m, rate: 5}
)") << 5 << "clients[1].name"
                                         << "duplicate client name 'c'";
  QTest::newRow("name with a space") << QStringLiteral(R"(duration: 60s
models:
  - name: big model
    instances: 2
clients: [{name: c, model: m, rate: 10}]
)") << 3 << "models[0].name"
                                     << "names may not contain";

  // Durations must carry a unit and be in range.
  QTest::newRow("duration without unit") << "duration: 60\n" + tail << 1 << "duration"
                                         << "expected a duration with a unit";
  QTest::newRow("duration with unknown unit") << "duration: 60 parsecs\n" + tail << 1 << "duration"
                                              << "expected a duration with a unit";
  QTest::newRow("zero duration") << "duration: 0s\n" + tail << 1 << "duration"
                                 << "must be greater than";
  QTest::newRow("tick below 10ms") << "duration: 60s\ntick: 5ms\n" + tail << 2 << "tick"
                                   << "must be at least 10ms";
  QTest::newRow("timeout without unit") << QStringLiteral(R"(duration: 60s
models: [{name: m, instances: 2}]
clients:
  - name: c
    model: m
    rate: 10
    timeout: 30
)") << 7 << "clients[0].timeout"
                                        << "expected a duration with a unit";

  // Numbers out of range.
  QTest::newRow("error_rate above 1") << QStringLiteral(R"(duration: 60s
models:
  - name: m
    instances: 2
    error_rate: 1.5
clients: [{name: c, model: m, rate: 10}]
)") << 5 << "models[0].error_rate"
                                      << "must be in [0, 1], got 1.5";
  QTest::newRow("zero slots") << QStringLiteral(R"(duration: 60s
models:
  - name: m
    instances: 2
    slots: 0
clients: [{name: c, model: m, rate: 10}]
)") << 5 << "models[0].slots"
                              << "must be in [1, 100000], got 0";
  QTest::newRow("negative rate") << QStringLiteral(R"(duration: 60s
models: [{name: m, instances: 2}]
clients:
  - name: c
    model: m
    rate: -1
)") << 6 << "clients[0].rate"
                                 << "must be in [0, 1e+08], got -1";
  QTest::newRow("sigma above 5") << QStringLiteral(R"(duration: 60s
models:
  - name: m
    instances: 2
    service:
      base: 100ms
      sigma: 6
clients: [{name: c, model: m, rate: 10}]
)") << 7 << "models[0].service.sigma"
                                 << "must be in [0, 5], got 6";
  QTest::newRow("queue_full not 503/429") << QStringLiteral(R"(duration: 60s
models:
  - name: m
    instances: 2
    queue_full: 500
clients: [{name: c, model: m, rate: 10}]
)") << 5 << "models[0].queue_full"
                                          << "expected 503 or 429";
  QTest::newRow("zero instances") << QStringLiteral(R"(duration: 60s
models:
  - name: m
    instances: 0
clients: [{name: c, model: m, rate: 10}]
)") << 4 << "models[0].instances"
                                  << "must be in [1, 10000], got 0";
  QTest::newRow("errors rate 0") << "duration: 60s\n" + tail +
                                        "faults:\n  - {type: errors, target: m, at: 1s, rate: 0}\n"
                                 << 5 << "faults[0].rate"
                                 << "must be in (0, 1], got 0";
  QTest::newRow("errors status 404") << "duration: 60s\n" + tail +
                                            "faults:\n  - {type: errors, target: m, at: 1s, "
                                            "rate: 1, status: 404}\n"
                                     << 5 << "faults[0].status"
                                     << "must be in [500, 599], got 404";
  QTest::newRow("capacity_loss remaining 1") << "duration: 60s\n" + tail +
                                                    "faults:\n  - {type: capacity_loss, target: m, "
                                                    "at: 1s, remaining: 1}\n"
                                             << 5 << "faults[0].remaining"
                                             << "must be in [0, 1), got 1";
  QTest::newRow("drift multiplier below 1") << "duration: 60s\n" + tail +
                                                   "faults:\n  - {type: latency_drift, target: m, "
                                                   "at: 1s, multiplier: 0.5}\n"
                                            << 5 << "faults[0].multiplier"
                                            << "must be in [1, 1e+06], got 0.5";
  QTest::newRow("fault after the end")
      << "duration: 60s\n" + tail + "faults:\n  - {type: outage, target: m, at: 60s}\n"
      << 5 << "faults[0].at"
      << "starts at or after the end of the scenario";
  QTest::newRow("ramp ends before it starts") << QStringLiteral(R"(duration: 60s
models: [{name: m, instances: 2}]
clients:
  - name: c
    model: m
    rate: 10
    profile: {type: ramp, start: 20s,
              end: 10s}
)") << 8 << "clients[0].profile.end"
                                              << "must be after start";
  QTest::newRow("steps out of order") << QStringLiteral(R"(duration: 60s
models: [{name: m, instances: 2}]
clients:
  - name: c
    model: m
    rate: 10
    profile:
      - type: step
        steps:
          - {at: 20s, factor: 2}
          - {at: 10s, factor: 3}
)") << 11 << "clients[0].profile[0].steps[1].at"
                                      << "steps must be in time order";
  QTest::newRow("no models") << "duration: 60s\nmodels: []\nclients: [{name: c, model: m, rate: "
                                "1}]\n"
                             << 2 << "models"
                             << "at least one model";
  QTest::newRow("version 2") << "version: 2\nduration: 60s\n" + tail << 1 << "version"
                             << "this Spillway reads scenario version 1";

  // YAML syntax: the parser's line, no key.
  QTest::newRow("bad YAML syntax") << "duration: 60s\nname: a: b\n" + tail << 2 << ""
                                   << "YAML syntax";

  // An inline policy reports lines of the scenario file itself.
  QTest::newRow("inline policy: out of range") << QStringLiteral(R"(duration: 60s
policy:
  name: p
  breaker:
    trip:
      error_rate: 2
models: [{name: m, instances: 2}]
clients: [{name: c, model: m, rate: 10}]
)") << 6 << "breaker.trip.error_rate"
                                               << "must be in (0, 1], got 2";
  QTest::newRow("inline policy: unknown key") << QStringLiteral(R"(duration: 60s
models: [{name: m, instances: 2}]
clients: [{name: c, model: m, rate: 10}]
policy:
  breaker:
    window: {length: 10s, buckets: 1s}
)") << 6 << "breaker.window.buckets"
                                              << "unknown key";
  QTest::newRow("inline policy: bad mode") << QStringLiteral(R"(duration: 60s
policy: {breaker: {mode: sometimes}}
models: [{name: m, instances: 2}]
clients: [{name: c, model: m, rate: 10}]
)") << 2 << "breaker.mode"
                                           << "expected one of normal, metrics_only";
  QTest::newRow("policy file missing")
      << "duration: 60s\npolicy: no-such-policy.yaml\n" + tail << 2 << "policy"
      << "cannot open policy file";
}

void TstSimScenario::errors() {
  QFETCH(QString, yaml);
  QFETCH(int, line);
  QFETCH(QString, field);
  QFETCH(QString, detail);
  const Caught c = parseError(yaml);
  QVERIFY2(c.thrown, "the scenario was accepted");
  const QString what = QString::fromStdString(c.what);
  QCOMPARE(QString::fromStdString(c.file), QString::fromLatin1(kSource));
  QVERIFY2(c.line == line,
           qPrintable(QStringLiteral("line %1, message: %2").arg(c.line).arg(what)));
  // An inline policy is parsed as a policy document of its own, so its key paths start at
  // `breaker` (see the report: no `policy.` prefix); accept exactly that suffix.
  if (field.startsWith(QLatin1String("breaker.")))
    QVERIFY2(QString::fromStdString(c.field).endsWith(field), qPrintable(what));
  else
    QCOMPARE(QString::fromStdString(c.field), field);
  QVERIFY2(QString::fromStdString(c.detail).contains(detail), qPrintable(what));
  // The message reads file:line: key: detail.
  const QString prefix = field.isEmpty() ? QStringLiteral("%1:%2: ").arg(kSource).arg(line)
                                         : QStringLiteral("%1:%2: %3: ")
                                               .arg(kSource)
                                               .arg(line)
                                               .arg(QString::fromStdString(c.field));
  QVERIFY2(what.startsWith(prefix), qPrintable(what));
}

void TstSimScenario::emptyDocument() {
  for (const char* text : {"", "\n", "# only a comment\n"}) {
    const Caught c = parseError(QString::fromLatin1(text));
    QVERIFY(c.thrown);
    // No line to point at: the message is `file: what`.
    QCOMPARE(c.line, 0L);
    QCOMPARE(c.field, std::string());
    QCOMPARE(QString::fromStdString(c.what), QStringLiteral("test.yaml: empty scenario"));
  }
}

void TstSimScenario::policyFileRelativeToBaseDir() {
  const std::string text =
      "duration: 60s\npolicy: policies/default.yaml\n"
      "models: [{name: m, instances: 2}]\n"
      "clients: [{name: c, model: m, rate: 10}]\n";
  const Scenario s = parseScenario(text, kSource, SPILLWAY_RESOURCES_DIR);
  // resources/policies/default.yaml names itself seed-000-default.
  QCOMPARE(s.policy.name, std::string("seed-000-default"));
  // Without a base directory the same relative path is looked up in the working directory,
  // where it does not exist.
  const Caught c = parseError(QString::fromStdString(text), "/nonexistent-dir");
  QVERIFY(c.thrown);
  QCOMPARE(c.field, std::string("policy"));
  QVERIFY2(c.detail.find("/nonexistent-dir/policies/default.yaml") != std::string::npos,
           c.what.c_str());
}

void TstSimScenario::policyFileRelativeToScenarioFile() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("p")));
  QVERIFY(writeFile(dir.filePath(QStringLiteral("p/strict.yaml")),
                    "name: strict\nbreaker: {min_calls: 3}\n"));
  const QString scenarioPath = dir.filePath(QStringLiteral("s.yaml"));
  QVERIFY(writeFile(scenarioPath,
                    "duration: 60s\npolicy: p/strict.yaml\n"
                    "models: [{name: m, instances: 2}]\n"
                    "clients: [{name: c, model: m, rate: 10}]\n"));
  const Scenario s = loadScenarioFile(scenarioPath.toStdString());
  QCOMPARE(s.source, scenarioPath.toStdString());
  QCOMPARE(s.policy.name, std::string("strict"));
  QCOMPARE(s.policy.breaker.minCalls, 3u);
}

void TstSimScenario::policyFileErrorNamesThePolicyFile() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString policyPath = dir.filePath(QStringLiteral("bad.yaml"));
  QVERIFY(writeFile(policyPath, "name: bad\nbreaker:\n  min_calls: 0\n"));
  const QString scenarioPath = dir.filePath(QStringLiteral("s.yaml"));
  QVERIFY(writeFile(scenarioPath,
                    "duration: 60s\npolicy: bad.yaml\n"
                    "models: [{name: m, instances: 2}]\n"
                    "clients: [{name: c, model: m, rate: 10}]\n"));
  try {
    loadScenarioFile(scenarioPath.toStdString());
    QFAIL("the bad policy was accepted");
  } catch (const InputError& e) {
    // The error is in the policy file, at its own line 3.
    QCOMPARE(QString::fromStdString(e.file()), policyPath);
    QCOMPARE(e.line(), 3L);
    QCOMPARE(e.field(), std::string("breaker.min_calls"));
  }
}

void TstSimScenario::missingScenarioFile() {
  try {
    loadScenarioFile("/nonexistent-dir/s.yaml");
    QFAIL("a missing file was accepted");
  } catch (const InputError& e) {
    QCOMPARE(e.file(), std::string("/nonexistent-dir/s.yaml"));
    QCOMPARE(e.line(), 0L);
    QVERIFY(std::string(e.what()).find("cannot open") != std::string::npos);
  }
}

void TstSimScenario::builtinScenariosParse_data() {
  QTest::addColumn<QString>("name");
  for (const char* n : {"seed-000", "seed-001", "seed-002", "seed-003"}) QTest::newRow(n) << n;
}

void TstSimScenario::builtinScenariosParse() {
  QFETCH(QString, name);
  const std::string path = SPILLWAY_RESOURCES_DIR "/scenarios/" + name.toStdString() + ".yaml";
  Scenario s;
  try {
    s = loadScenarioFile(path);
  } catch (const InputError& e) {
    QFAIL(e.what());
  }
  QVERIFY(s.name.rfind(name.toStdString(), 0) == 0);  // names start with their file name
  QVERIFY(!s.models.empty());
  QVERIFY(!s.clients.empty());
  if (name == QLatin1String("seed-000")) {
    // The incident as the file describes it: 4 instances, 12 callers and a bulk importer, 3
    // faults and a recover, then 3 benign events (normal jitter).
    QCOMPARE(s.duration, seconds(40 * 60));
    QCOMPARE(s.models[0].instances.size(), std::size_t{4});
    QCOMPARE(s.clients.size(), std::size_t{13});
    QCOMPARE(s.faults.size(), std::size_t{7});
    for (std::size_t f = 0; f < s.faults.size(); ++f) QCOMPARE(s.faults[f].benign, f >= 4);
    QCOMPARE(s.faults[0].kind, FaultKind::LatencyDrift);
    QCOMPARE(s.faults[0].target, std::string("chat-72b-3"));
    QCOMPARE(s.faults[1].kind, FaultKind::Recover);
    QCOMPARE(s.policy.name, std::string("seed-000-default"));
    QCOMPARE(s.routing, Routing::RoundRobin);
  }
}

QTEST_GUILESS_MAIN(TstSimScenario)
#include "tst_sim_scenario.moc"
