// The seeds' systems in full (issue 24), on hand-built scenarios: the layers of defence run
// alone or together (seed 001's modes), SLA attainment over in-quota traffic, resource waste,
// the limiter's mis-kills only when capacity was free (seed 003), cost routing that sends
// non-core traffic to the cheaper model (seed 002), the knee per degrade level, and drill
// runbooks whose broken expectation fails the drill.
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "error_of.hpp"
#include "sim_run.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/sim/knee.hpp"
#include "spillway/sim/modes.hpp"
#include "spillway/sim/runbook.hpp"

using namespace spillway;
using namespace spillway::sim;
using spillway::testing::errorOf;

namespace {

std::string readResource(const std::string& rel) {
  QFile f(QString(SPILLWAY_RESOURCES_DIR) + "/" + QString::fromStdString(rel));
  if (!f.open(QIODevice::ReadOnly)) return {};
  return f.readAll().toStdString();
}

// One tenant with a quota of `quota` req/s sending 40 req/s at a group of `instances` × `slots`
// slots whose calls take ~`service`.
std::string quotaScenario(int instances, int slotCount, const char* service, int quota) {
  return "version: 1\nname: quota\nduration: 3m\ndrain: 1m\nseed: 5\n"
         "policy:\n  name: p\n  limits:\n    tenants:\n      t: {rate: " +
         std::to_string(quota) + ", burst: " + std::to_string(quota) +
         "}\n"
         "models:\n  - {name: m, instances: " +
         std::to_string(instances) + ", slots: " + std::to_string(slotCount) +
         ", queue: 1000, service: {base: " + service +
         ", sigma: 0.1}, error_rate: 0}\n"
         "clients:\n  - {name: c, model: m, tenant: t, rate: 40, timeout: 30s, slo: 30s,"
         " retries: {max: 0}}\n";
}

// A runbook over a scenario given as YAML: every layer on, the given seeds and expectations.
Runbook scenarioRunbook(const std::string& yaml, std::uint32_t seeds,
                        std::vector<Expectation> expectations) {
  Runbook rb;
  rb.name = "t";
  rb.source = "rb.yaml";
  rb.scenario = parseScenario(yaml, "s.yaml");
  rb.mode = parseModes("all").front();
  rb.seeds = seeds;
  rb.expectations = std::move(expectations);
  return rb;
}

// Two models that both can chat: a dear primary and a cheap light one.
std::string costScenario(bool preferCheaper) {
  return std::string(
             "version: 1\nname: cost\nduration: 3m\ndrain: 1m\nseed: 9\n"
             "policy:\n  name: p\n  models:\n"
             "    big: {tier: 1, quality: 0.9, tags: [chat], cost: 10}\n"
             "    small: {tier: 2, quality: 0.7, tags: [chat], cost: 1}\n"
             "  degrade:\n    max_quality_drop: 0.3\n") +
         (preferCheaper ? "    prefer_cheaper_for: [non_core]\n" : "") +
         "models:\n"
         "  - {name: big, instances: 4, slots: 16, service: {base: 200ms, sigma: 0.1}}\n"
         "  - {name: small, instances: 4, slots: 16, service: {base: 50ms, sigma: 0.1}}\n"
         "clients:\n"
         "  - {name: core, model: big, criticality: core, tags: [chat], rate: 20, timeout: 10s,"
         " tokens: {input: {median: 500}, output: {median: 100}}}\n"
         "  - {name: batch, model: big, tags: [chat], rate: 20, timeout: 10s,"
         " tokens: {input: {median: 500}, output: {median: 100}}}\n";
}

RunReport run(const Scenario& sc, const SimOptions& o = {}) {
  return simulate(sc, o);
}

}  // namespace

class TstSimLayers : public QObject {
  Q_OBJECT

 private slots:
  void parseModes_data() {
    QTest::addColumn<QString>("list");
    QTest::addColumn<QString>("names");  // "" = error
    QTest::newRow("the seed's three") << "limits,breaker+degrade,all"
                                      << "limits,breaker+degrade,all";
    QTest::newRow("order of layers does not matter") << "degrade+breaker"
                                                     << "breaker+degrade";
    QTest::newRow("every layer is all") << "limits+breaker+degrade"
                                        << "all";
    QTest::newRow("off") << "off"
                         << "off";
    QTest::newRow("unknown layer") << "limits,cache"
                                   << "";
    QTest::newRow("twice") << "all,limits+breaker+degrade"
                           << "";
    QTest::newRow("empty word") << "limits,,all"
                                << "";
  }
  void parseModes() {
    QFETCH(QString, list);
    QFETCH(QString, names);
    QStringList got;
    QString err;
    try {
      for (const Mode& m : sim::parseModes(list.toStdString()))
        got << QString::fromStdString(m.name);
    } catch (const std::invalid_argument& e) {
      err = e.what();
    }
    if (names.isEmpty()) {
      QVERIFY(!err.isEmpty());
    } else {
      QVERIFY2(err.isEmpty(), qPrintable(err));
      QCOMPARE(got.join(','), names);
    }
  }

  // Seed 001 by mode: a layer that is off does nothing; quota refusals leave the SLA figure.
  void modesRunOnlyTheirLayers() {
    const Scenario sc = parseScenario(readResource("scenarios/seed-001.yaml"), "seed-001.yaml");
    const ModeRuns r = runModes(sc, sim::parseModes("limits,breaker+degrade,all"), 1, 2);
    const RunReport& limits = r.runs[0][0];
    const RunReport& bd = r.runs[1][0];
    const RunReport& all = r.runs[2][0];
    QCOMPARE(limits.mode, std::string("limits"));
    QCOMPARE(limits.opens, std::uint64_t{0});
    QVERIFY(limits.wouldOpens > 0);  // the breakers still watch
    QVERIFY(limits.quotaRefused > 0);
    QCOMPARE(limits.degradeSwitch.den, std::uint64_t{0});
    QCOMPARE(bd.quotaRefused, std::uint64_t{0});
    QVERIFY(bd.opens > 0);
    QVERIFY(bd.degradeSwitch.den > 0);
    QVERIFY(all.opens > 0 && all.quotaRefused > 0);
    for (const RunReport* x : {&limits, &bd, &all}) {
      QCOMPARE(x->slaInQuota.den + x->quotaRefused, x->originals - x->inFlightAtEnd);
      QVERIFY(x->slaInQuota.value() >= x->availability.value());
    }
    // Same seed, same bytes.
    const ModeRuns again = runModes(sc, sim::parseModes("limits,breaker+degrade,all"), 1, 1);
    QCOMPARE(reportJson(again.runs[2][0]), reportJson(all));
  }

  void misKillOnlyWhenCapacityWasFree_data() {
    QTest::addColumn<int>("instances");
    QTest::addColumn<int>("slotCount");
    QTest::addColumn<QString>("service");
    QTest::addColumn<bool>("spare");
    QTest::newRow("idle group: every refusal a mis-kill") << 4 << 32 << "100ms" << true;
    QTest::newRow("saturated group: none") << 1 << 2 << "2s" << false;
  }
  void misKillOnlyWhenCapacityWasFree() {
    QFETCH(int, instances);
    QFETCH(int, slotCount);
    QFETCH(QString, service);
    QFETCH(bool, spare);
    const Scenario sc = parseScenario(
        quotaScenario(instances, slotCount, service.toStdString().c_str(), 10), "quota.yaml");
    const RunReport r = run(sc);
    QVERIFY(r.limiterMisKill.den > 1000);            // 40 req/s against a quota of 10
    QCOMPARE(r.misKillBy[0], r.limiterMisKill.num);  // all by the tenant quota
    const double k = r.limiterMisKill.value().value();
    if (spare)
      QVERIFY2(k > 0.95, qPrintable(QString::number(k)));
    else
      QVERIFY2(k < 0.05, qPrintable(QString::number(k)));
    // Refusals by the quota leave the SLA figure and are reported beside it.
    QVERIFY(r.quotaRefused > 0);
    QCOMPARE(r.slaInQuota.den + r.quotaRefused, r.originals);
  }

  void costRoutingSendsNonCoreToTheCheaperModel() {
    const Scenario plain = parseScenario(costScenario(false), "cost.yaml");
    const Scenario cheap = parseScenario(costScenario(true), "cost.yaml");
    const RunReport a = run(plain), b = run(cheap);
    QCOMPARE(a.costRouted, std::uint64_t{0});
    QVERIFY(b.costRouted > 0);
    // Non-core ("batch") answered by the light model, core still by the primary.
    QCOMPARE(b.clients[0].answeredBy[1], std::uint64_t{0});
    QVERIFY(b.costRouted >= b.clients[1].ends[0] * 95 / 100);
    QVERIFY(a.costPer1k && b.costPer1k);
    // Half the traffic at a tenth of the price: ~45 % cheaper.
    const double saving = 1.0 - *b.costPer1k / *a.costPer1k;
    QVERIFY2(saving > 0.35 && saving < 0.55, qPrintable(QString::number(saving)));
    // Cost routing is not degradation.
    QCOMPARE(b.degradeSuccess.den, std::uint64_t{0});
  }

  void wasteCountsAbandonedSlotTime() {
    std::string yaml = quotaScenario(2, 8, "100ms", 1000);
    const Scenario calm = parseScenario(yaml, "calm.yaml");
    yaml += "faults:\n  - {type: hang, target: m-1, at: 30s, duration: 1m, rate: 0.5}\n";
    Scenario hung = parseScenario(yaml, "hung.yaml");
    const RunReport a = run(calm), b = run(hung);
    QVERIFY(a.waste.den > 0 && b.waste.den > 0);
    QVERIFY2(a.waste.value() < 0.01, qPrintable(QString::number(*a.waste.value())));
    QVERIFY2(b.waste.value() > 0.2, qPrintable(QString::number(*b.waste.value())));
  }

  // An answer that comes after the caller's SLO is waste too: the same calls, a tighter SLO.
  void wasteCountsAnswersAfterTheSlo() {
    auto waste = [](const char* slo) {
      const std::string yaml =
          "version: 1\nname: w\nduration: 2m\ndrain: 1m\nseed: 4\n"
          "models:\n  - {name: m, instances: 2, slots: 8, service: {base: 300ms, sigma: 0.2}}\n"
          "clients:\n  - {name: c, model: m, rate: 10, timeout: 10s, retries: {max: 0}, slo: " +
          std::string(slo) + "}\n";
      return *run(parseScenario(yaml, "w.yaml")).waste.value();
    };
    QVERIFY(waste("5s") < 0.01);
    QVERIFY2(waste("300ms") > 0.3, qPrintable(QString::number(waste("300ms"))));
  }

  // A degraded request that finds no route (no backup covers it, no cache, no static answer)
  // did not switch: the switch rate falls below 100 %.
  void degradeSwitchFailsWithoutARoute() {
    const std::string yaml =
        "version: 1\nname: sw\nduration: 3m\ndrain: 1m\nseed: 6\n"
        "policy:\n  name: p\n  breaker: {trip: {error_rate: 0.3, sustain: 0s}}\n"
        "  models:\n    m: {tier: 1, quality: 0.9, tags: [chat]}\n"
        "    b: {tier: 2, quality: 0.8, tags: [chat]}\n"
        "  degrade: {static_answer: false, fast_fail_non_critical: false}\n"
        "models:\n  - {name: m, instances: 2, slots: 16, service: {base: 100ms, sigma: 0.1}}\n"
        "  - {name: b, instances: 1, slots: 16, service: {base: 100ms, sigma: 0.1}}\n"
        "clients:\n"
        "  - {name: chat, model: m, criticality: core, tags: [chat], rate: 10, timeout: 5s}\n"
        "  - {name: vision, model: m, criticality: core, tags: [vision], rate: 10, timeout: 5s}\n"
        "faults:\n  - {type: outage, target: m, at: 1m, duration: 1m}\n";
    const RunReport r = run(parseScenario(yaml, "sw.yaml"));
    const ClientReport& chat = r.clients[0];
    const ClientReport& vision = r.clients[1];
    QVERIFY(chat.degradeSwitch.den > 100 && vision.degradeSwitch.den > 100);
    QVERIFY(chat.degradeSwitch.value() > 0.95);            // b covers chat
    QCOMPARE(vision.degradeSwitch.num, std::uint64_t{0});  // nothing covers vision
    QVERIFY(r.degradeSwitch.value() < 0.7);
  }

  void kneePerDegradeLevel() {
    // A small primary and a backup with room: the backups level has the later knee.
    const std::string yaml =
        "version: 1\nname: levels\nduration: 5m\nseed: 3\n"
        "policy:\n  name: p\n  models:\n"
        "    m: {tier: 1, quality: 0.9, tags: [chat]}\n"
        "    b: {tier: 2, quality: 0.8, tags: [chat]}\n"
        "  degrade: {max_quality_drop: 0.3}\n"
        "models:\n"
        "  - {name: m, instances: 2, slots: 4, queue: 16, max_requests: 40,"
        " service: {base: 200ms, sigma: 0.1}}\n"
        "  - {name: b, instances: 2, slots: 8, queue: 8, service: {base: 200ms, sigma: 0.1}}\n"
        "clients:\n  - {name: c, model: m, tags: [chat], rate: 20, timeout: 5s,"
        " retries: {max: 0}}\n";
    const Scenario sc = parseScenario(yaml, "levels.yaml");
    KneeOptions o;
    o.from = 0.5;
    o.to = 4;
    o.step = 0.5;
    o.maxStep = seconds(120);
    o.minStep = seconds(60);
    o.level = 0;
    const KneeResult primary = findKnee(sc, o);
    o.level = 1;
    const KneeResult backups = findKnee(sc, o);
    QVERIFY(primary.knee.has_value());
    const double kp = primary.steps[*primary.knee].factor;
    const double kb = backups.knee ? backups.steps[*backups.knee].factor : 99;
    QVERIFY2(kb > kp, qPrintable(QString("%1 vs %2").arg(kb).arg(kp)));
    // A level above 0 needs a degrade section.
    Scenario none = sc;
    none.policy.degrade.enabled = false;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, applyDegradeLevel(none, 1));
  }

  void gatewayFaultsStayInTheirBlastRadius_data() {
    QTest::addColumn<bool>("drillOnly");
    QTest::newRow("drill traffic only") << true;
    QTest::newRow("everyone") << false;
  }
  void gatewayFaultsStayInTheirBlastRadius() {
    QFETCH(bool, drillOnly);
    const std::string yaml =
        "version: 1\nname: gw\nduration: 3m\ndrain: 1m\nseed: 11\n"
        "models:\n  - {name: m, instances: 4, slots: 32, service: {base: 100ms, sigma: 0.1}}\n"
        "clients:\n"
        "  - {name: shop, model: m, rate: 20, timeout: 5s, retries: {max: 0}}\n"
        "  - {name: drill, model: m, rate: 5, timeout: 5s, retries: {max: 0}, drill: true}\n"
        "faults:\n  - {type: errors, target: gateway, at: 30s, duration: 1m, rate: 0.5" +
        std::string(drillOnly ? ", drill_only: true" : "") + "}\n";
    const RunReport r = run(parseScenario(yaml, "gw.yaml"));
    const ClientReport& shop = r.clients[0];
    const ClientReport& drill = r.clients[1];
    QVERIFY(drill.drill && !shop.drill);
    QVERIFY(drill.gatewayFaultHits > 100);  // ~5/s × 60 s × 0.5
    QCOMPARE(shop.gatewayFaultHits == 0, drillOnly);
    QCOMPARE(shop.availability.value().value() > 0.99, drillOnly);
    QVERIFY(drill.availability.value().value() < 0.9);
    // The gateway's own errors never reach an instance: the breakers saw none of them.
    QCOMPARE(r.instances[0].failures + r.instances[1].failures + r.instances[2].failures +
                 r.instances[3].failures,
             std::uint64_t{0});
  }

  void gatewayCpuSaturationDelaysEveryCall() {
    auto p50 = [](const char* fault) {
      const std::string yaml =
          "version: 1\nname: gw\nduration: 2m\ndrain: 1m\nseed: 12\n"
          "models:\n  - {name: m, instances: 2, slots: 32, service: {base: 100ms, sigma: 0.05}}\n"
          "clients:\n  - {name: c, model: m, rate: 10, timeout: 5s, retries: {max: 0}}\n" +
          std::string(fault);
      return run(parseScenario(yaml, "gw.yaml")).p50Ms;
    };
    const double calm = p50("");
    const double busy = p50("faults:\n  - {type: delay, target: gateway, at: 0s, delay: 300ms}\n");
    QVERIFY2(std::abs(busy - calm - 300) < 30, qPrintable(QString("%1 vs %2").arg(busy).arg(calm)));
  }

  void gatewayFaultErrors_data() {
    QTest::addColumn<QString>("yaml");
    QTest::addColumn<QString>("expected");
    const QString head =
        "version: 1\nname: gw\nduration: 1m\nmodels:\n  - {name: m, instances: 2}\n"
        "clients:\n  - {name: c, model: m, rate: 1}\nfaults:\n";
    QTest::newRow("a gateway does not hang")
        << head + "  - {type: hang, target: gateway, at: 1s, rate: 0.5}\n"
        << "s.yaml:9: faults[0].type: a fault on the gateway is delay, errors or reset";
    QTest::newRow("drill_only on an instance")
        << head + "  - {type: errors, target: m-1, at: 1s, rate: 0.5, drill_only: true}\n"
        << "s.yaml:9: faults[0].drill_only: only a fault on the gateway";
    QTest::newRow("a model named gateway")
        << "version: 1\nname: gw\nduration: 1m\nmodels:\n  - {name: gateway, instances: 1}\n"
           "clients:\n  - {name: c, model: gateway, rate: 1}\n"
        << "s.yaml:5: models[0].name: 'gateway' is reserved";
  }
  void gatewayFaultErrors() {
    QFETCH(QString, yaml);
    QFETCH(QString, expected);
    const QString err = errorOf([&] { parseScenario(yaml.toStdString(), "s.yaml"); });
    QVERIFY2(err.startsWith(expected), qPrintable(err));
  }

  void runbookExpectations_data() {
    QTest::addColumn<QString>("expect");
    QTest::addColumn<bool>("passed");
    QTest::newRow("met") << "  - {kpi: availability, min: 0.5}\n" << true;
    QTest::newRow("broken") << "  - {kpi: availability, min: 0.9999}\n" << false;
    QTest::newRow("not measured is broken") << "  - {kpi: degrade_switch_rate, min: 0.97}\n"
                                            << false;
  }
  void runbookExpectations() {
    QFETCH(QString, expect);
    QFETCH(bool, passed);
    RunbookLoaders loaders;
    loaders.scenario = [](const std::string&, const std::string&) {
      return parseScenario(quotaScenario(2, 8, "100ms", 1000), "q.yaml");
    };
    loaders.policy = [](const std::string& p) { return loadPolicyFile(p); };
    const std::string text =
        "version: 1\nname: t\nrevision: 2\nscenario: q\nseeds: 2\n"
        "faults:\n  - {type: errors, target: m-1, at: 30s, duration: 30s, rate: 0.5}\n"
        "expect:\n" +
        expect.toStdString();
    const Runbook rb = parseRunbook(text, "rb.yaml", "", loaders);
    QCOMPARE(rb.revision, 2u);
    QCOMPARE(rb.scenario.faults.size(), std::size_t{1});
    const DrillResult d = runDrill(rb, 1);
    QCOMPARE(d.passed, passed);
    QCOMPARE(d.checks.size(), std::size_t{1});
    // Two seeds: the check carries their interval, around the mean it judged.
    if (d.checks[0].measured) {
      QVERIFY(d.checks[0].interval);
      QCOMPARE(d.checks[0].interval->n, 2u);
      QCOMPARE(d.checks[0].interval->mean, *d.checks[0].measured);
    }
  }

  // Over several seeds the interval decides (kpis.md): a check passes when all of the seeds'
  // 95 % interval meets its bounds, fails when none of it does, and is UNSURE — which breaks
  // the drill — when it straddles one, whatever the mean.
  void runbookJudgesTheInterval_data() {
    QTest::addColumn<double>("lo");
    QTest::addColumn<double>("hi");
    QTest::addColumn<int>("verdict");  // CheckVerdict
    QTest::newRow("all within the bounds") << 0.991 << 0.994 << int(CheckVerdict::Pass);
    QTest::newRow("mean meets, interval straddles") << 0.988 << 0.994 << int(CheckVerdict::Unsure);
    QTest::newRow("mean breaks, interval straddles") << 0.975 << 0.991 << int(CheckVerdict::Unsure);
    QTest::newRow("all below the floor") << 0.95 << 0.98 << int(CheckVerdict::Fail);
    QTest::newRow("all above the ceiling") << 0.996 << 0.999 << int(CheckVerdict::Fail);
    QTest::newRow("straddles the ceiling") << 0.992 << 0.998 << int(CheckVerdict::Unsure);
  }
  void runbookJudgesTheInterval() {
    QFETCH(double, lo);
    QFETCH(double, hi);
    QFETCH(int, verdict);
    Runbook rb;
    rb.name = "t";
    rb.source = "rb.yaml";
    rb.seeds = 5;
    rb.expectations = {{"availability", 0.99, 0.995, 7}, {"ttd_s", std::nullopt, 30, 8}};
    const double mean = (lo + hi) / 2;
    const std::map<std::string, SeedInterval> intervals = {{"availability", {mean, lo, hi, 5}},
                                                           {"ttd_s", {20, 18, 22, 5}}};
    const DrillResult d = judgeDrill(rb, {{"availability", mean}, {"ttd_s", 20.0}}, intervals);
    QCOMPARE(int(d.checks[0].verdict), verdict);
    QCOMPARE(d.checks[1].verdict, CheckVerdict::Pass);
    QCOMPARE(d.passed, verdict == int(CheckVerdict::Pass));
    const QString table = QString::fromStdString(drillTable(rb, d));
    const auto j = nlohmann::json::parse(drillJson(rb, d));
    QCOMPARE(j["checks"][0]["straddles"].get<bool>(), verdict == int(CheckVerdict::Unsure));
    QCOMPARE(j["checks"][0]["interval"]["lo"].get<double>(), lo);
    if (verdict == int(CheckVerdict::Unsure)) {
      QCOMPARE(j["checks"][0]["verdict"].get<std::string>(), std::string("unsure"));
      QVERIFY2(table.contains(QString("[%1, %2]").arg(lo).arg(hi)) &&
                   table.contains("UNSURE (the interval crosses the bound)") &&
                   table.contains("more seeds (the\nrunbook's `seeds:`, now 5) narrow it"),
               qPrintable(table));
    }
    // One seed is judged on its value: no interval to straddle.
    rb.seeds = 1;
    const DrillResult one = judgeDrill(rb, {{"availability", mean}, {"ttd_s", 20.0}},
                                       {{"availability", {mean, mean, mean, 1}}});
    QCOMPARE(one.checks[0].verdict,
             mean >= 0.99 && mean <= 0.995 ? CheckVerdict::Pass : CheckVerdict::Fail);
  }

  // A runbook's breaker-only policy replaces the breaker alone, as simulate --policy does: the
  // scenario's degrade chain and limits stay (they were dropped, so degrade KPIs read n/a).
  void runbookBreakerOnlyPolicyKeepsTheScenarios() {
    RunbookLoaders loaders;
    loaders.scenario = [](const std::string&, const std::string&) {
      return parseScenario(quotaScenario(2, 8, "100ms", 1000), "q.yaml");
    };
    loaders.policy = [](const std::string&) {
      return parsePolicy("version: 1\nname: b\nbreaker:\n  trip: {error_rate: 0.2}\n", "b.yaml");
    };
    const Scenario alone = loaders.scenario("", "");
    QVERIFY(alone.policy.limits.any());
    const Runbook rb = parseRunbook(
        "version: 1\nname: t\nscenario: q\npolicy: b.yaml\nexpect:\n"
        "  - {kpi: availability, min: 0.5}\n",
        "rb.yaml", "", loaders);
    QCOMPARE(rb.scenario.policy.breaker.trip.errorRate, 0.2);
    QVERIFY(rb.scenario.policy.limits.any());
    QCOMPARE(rb.scenario.policy.limits.tenants.size(), alone.policy.limits.tenants.size());
  }

  // The worst is ∞ when a fault is never detected or its service never back (kpis.md), not the
  // worst of the rest: the whole group goes down at 40 s for good, and a breaker that needs
  // 100,000 calls never opens. The table says "never", the JSON has null and the count, and a
  // drill's ceiling on either worst fails — as does the mean TTD, measured over nothing.
  void worstIsNeverWhenAFaultIsMissed() {
    const std::string yaml =
        "version: 1\nname: down\nduration: 3m\nseed: 3\n"
        "policy: {breaker: {min_calls: 100000}}\n"
        "models:\n  - {name: m, instances: 2, service: {base: 100ms, sigma: 0.1}}\n"
        "clients:\n  - {name: c, model: m, rate: 20, timeout: 2s, criticality: core}\n"
        "faults:\n  - {type: outage, target: m, at: 40s}\n";
    const Runbook rb = scenarioRunbook(yaml, 2,
                                       {{"ttd_worst_s", std::nullopt, 60, 7},
                                        {"service_restoration_worst_s", std::nullopt, 600, 8},
                                        {"ttd_s", std::nullopt, 60, 9}});
    const RunReport r = simulate(rb.scenario, SimOptions{});
    QVERIFY(r.serviceNotRestored > 0);
    QVERIFY(std::isinf(*worstTtdSeconds(r)) && std::isinf(*worstRestorationSeconds(r)));
    const auto k = nlohmann::json::parse(reportJson(r))["kpis"];
    QVERIFY(k["service_restoration_worst_s"].is_null() && k["ttd_worst_s"].is_null());
    QCOMPARE(k["service_not_restored"].get<std::uint64_t>(), r.serviceNotRestored);
    QVERIFY2(QString::fromStdString(reportTable(r)).contains("not back by the end"),
             reportTable(r).c_str());
    const DrillResult d = runDrill(rb, 1);
    QCOMPARE(d.checks[0].verdict, CheckVerdict::Fail);
    QCOMPARE(d.checks[1].verdict, CheckVerdict::Fail);
    QCOMPARE(d.checks[2].verdict, CheckVerdict::NotMeasured);
    const QString table = QString::fromStdString(drillTable(rb, d));
    QVERIFY2(table.contains("never"), qPrintable(table));
    // JSON numbers cannot hold ∞: the drill's JSON says "never", not null (not measured).
    const auto j = nlohmann::json::parse(drillJson(rb, d));
    QCOMPARE(j["checks"][0]["measured"].get<std::string>(), std::string("never"));
    QCOMPARE(j["kpis"]["ttd_worst_s"].get<std::string>(), std::string("never"));
    QVERIFY(j["checks"][2]["measured"].is_null());
    QCOMPARE(k["faults_missed"].get<std::uint64_t>(), std::uint64_t{2});  // a row per instance
    // --modes: the MTTR row is a mean over the faults the service came back from; the faults
    // it never came back from are counted in a row of their own.
    const std::vector<ModesRow> rows =
        modesRows(runModes(rb.scenario, sim::parseModes("all"), 1, 1), rb.scenario);
    const auto never = std::find_if(rows.begin(), rows.end(), [](const ModesRow& row) {
      return row.kpi == "service never back (faults)";
    });
    QVERIFY(never != rows.end());
    QCOMPARE(never->cells[0], std::to_string(r.serviceNotRestored));
  }

  // A KPI defined in fewer seeds than ran says how many it rests on: "n=1/3". Resting on one
  // seed of several it cannot pass (one seed is an anecdote): UNSURE when it meets the bound,
  // FAIL when it breaks it.
  void drillSaysOnHowManySeeds() {
    Runbook rb;
    rb.name = "t";
    rb.source = "rb.yaml";
    rb.seeds = 3;
    rb.expectations = {{"ttd_s", std::nullopt, 60, 7}};
    const DrillResult d =
        judgeDrill(rb, {{"ttd_s", 48.7}}, {{"ttd_s", SeedInterval{48.7, 48.7, 48.7, 1}}});
    QVERIFY2(QString::fromStdString(drillTable(rb, d)).contains("48.7 n=1/3"),
             drillTable(rb, d).c_str());
    QCOMPARE(d.checks[0].verdict, CheckVerdict::Unsure);
    const DrillResult broke =
        judgeDrill(rb, {{"ttd_s", 70.0}}, {{"ttd_s", SeedInterval{70, 70, 70, 1}}});
    QCOMPARE(broke.checks[0].verdict, CheckVerdict::Fail);
  }

  // A drill on fault_interception_rate runs each seed's baseline beside it (kpis.md: among the
  // faults that spread without protection, the share that did not with it). m-1 drifts to 50×
  // slow: with a shared gateway budget its calls starve m-2 (spread), without one they do not.
  // Without spread the rate is n/a — the run's own "did not spread" share would read 100 %.
  void runbookInterceptionIsPaired_data() {
    QTest::addColumn<QString>("budget");
    QTest::addColumn<int>("verdict");
    QTest::newRow("spreads without protection") << ", max_requests: 16" << int(CheckVerdict::Pass);
    QTest::newRow("spreads nowhere: n/a") << "" << int(CheckVerdict::NotMeasured);
  }
  void runbookInterceptionIsPaired() {
    QFETCH(QString, budget);
    QFETCH(int, verdict);
    const std::string yaml =
        "version: 1\nname: cascade\nduration: 180s\nseed: 46\nrouting: round_robin\n"
        "policy: {breaker: {slow: {absolute: 500ms}, min_calls: 5}}\n"
        "models: [{name: m, instances: 2, slots: 4, queue: 64" +
        budget.toStdString() +
        ", service: {base: 100ms, sigma: 0.1}}]\n"
        "clients: [{name: c, model: m, rate: 20, timeout: 5s}]\nfaults:\n"
        "  - {type: latency_drift, target: m-1, at: 30s, duration: 100s, ramp: 60s, "
        "multiplier: 50}\n";
    const Runbook rb =
        scenarioRunbook(yaml, 1, {{"fault_interception_rate", 0.9, std::nullopt, 7}});
    QVERIFY(rb.needsBaseline());
    const DrillResult d = runDrill(rb, 1);
    QCOMPARE(int(d.checks[0].verdict), verdict);
    if (verdict == int(CheckVerdict::Pass)) QCOMPARE(*d.checks[0].measured, 1.0);
  }

  void runbookErrorsNameTheLine_data() {
    QTest::addColumn<QString>("body");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown kpi") << "expect:\n  - {kpi: uptime, min: 1}\n"
                                 << "rb.yaml:6: expect[0].kpi: unknown KPI 'uptime'";
    QTest::newRow("no bound") << "expect:\n  - {kpi: availability}\n"
                              << "rb.yaml:6: expect[0]: expected min, max or both";
    QTest::newRow("fault target")
        << "faults:\n  - {type: hang, target: nope, at: 1s, duration: 10s, rate: 0.5}\n"
           "expect:\n  - {kpi: availability, min: 0}\n"
        << "rb.yaml:6: faults[0].target: no instance or model named";
    QTest::newRow("two modes") << "mode: limits,all\nexpect:\n  - {kpi: availability, min: 0}\n"
                               << "rb.yaml:5: mode: one mode per runbook";
    // Bounds no run can meet failed the drill (exit 1) instead of the runbook (exit 2).
    QTest::newRow("availability at least 5") << "expect:\n  - {kpi: availability, min: 5}\n"
                                             << "rb.yaml:6: expect[0].min: availability is a share "
                                                "from 0 to 1";
    QTest::newRow("TTD at most -5 s") << "expect:\n  - {kpi: ttd_s, max: -5}\n"
                                      << "rb.yaml:6: expect[0].max: ttd_s is never below 0";
    QTest::newRow("policy file missing")
        << "policy: /nonexistent/p.yaml\nexpect:\n  - {kpi: availability, min: 0}\n"
        << "rb.yaml:5: policy: /nonexistent/p.yaml: cannot open";
  }
  void runbookErrorsNameTheLine() {
    QFETCH(QString, body);
    QFETCH(QString, expected);
    RunbookLoaders loaders;
    loaders.scenario = [](const std::string&, const std::string&) {
      return parseScenario(quotaScenario(2, 8, "100ms", 1000), "q.yaml");
    };
    loaders.policy = [](const std::string& p) { return loadPolicyFile(p); };
    const std::string text = "version: 1\nname: t\nscenario: q\nseeds: 1\n" + body.toStdString();
    const QString err = errorOf([&] { parseRunbook(text, "rb.yaml", "", loaders); });
    QVERIFY2(err.startsWith(expected), qPrintable(err));
  }
};

QTEST_GUILESS_MAIN(TstSimLayers)
#include "tst_sim_layers.moc"
