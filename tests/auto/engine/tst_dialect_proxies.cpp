// Proxy dialects at their documented boundaries (shared/reference/breakers.md §3, §4, §11,
// §12): Envoy ejection time base × count capped by max_ejection_time, backoff decay per sweep,
// max_ejection_percent, enforcing_*, failure_percentage `>=`, the panic threshold; Istio's
// translation; nginx max_fails within fail_timeout, one trial after it, the single server that
// is never down, what counts as unsuccessful; HAProxy error-limit / on-error, rise and fall on
// fast and down intervals, slowstart.
#include <QtTest>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "spillway/dialect.hpp"
#include "spillway/dialects/envoy.hpp"
#include "spillway/dialects/haproxy.hpp"
#include "spillway/dialects/istio.hpp"
#include "spillway/dialects/nginx.hpp"
#include "spillway/input_error.hpp"

using namespace spillway;
using namespace spillway::dialects;

namespace {

constexpr Micros kT0 = seconds(1'700'000'000);

struct Rig {
  Rig(DialectKind k, const std::string& cfg, int hosts) : d(makeDialect(k, cfg, "cfg", 7, &sink)) {
    for (int i = 0; i < hosts; ++i) ids.push_back(d->addInstance("h" + std::to_string(i), "c"));
  }
  Admission call(int h, Micros start, int status, Micros lat = millis(10),
                 Outcome o = Outcome::Ok) {
    d->observe(ids[h], start, status < 500 && o == Outcome::Ok);
    const DialectDecision dec = d->admit(ids[h], start);
    if (dec.admitted()) d->record(ids[h], dec, start + lat, lat, status, o);
    return dec.kind;
  }
  // "ts_ms:FROM>TO" of one host, relative to kT0.
  QStringList log(int h) const {
    QStringList out;
    for (const Event& e : sink.events)
      if (e.kind == EventKind::Transition && e.instance == ids[h])
        out << QStringLiteral("%1:%2>%3")
                   .arg((e.ts - kT0) / 1000)
                   .arg(QString::fromUtf8(stateName(e.from).data(), int(stateName(e.from).size())))
                   .arg(QString::fromUtf8(stateName(e.to).data(), int(stateName(e.to).size())));
    return out;
  }
  VectorSink sink;
  std::unique_ptr<DialectCluster> d;
  std::vector<InstanceId> ids;
};

const char* kEnvoy = R"(
outlier_detection:
  consecutive_5xx: 2
  interval: 1s
  base_ejection_time: 10s
  max_ejection_time: 25s
  max_ejection_percent: 100
)";

}  // namespace

class TestDialectProxies : public QObject {
  Q_OBJECT
 private slots:
  // Sweeps run at start + k × interval; ejection time = min(base × backoff, max).
  void envoyEjectionGrowsAndIsCapped() {
    Rig r(DialectKind::Envoy, kEnvoy, 2);
    r.call(1, kT0, 200);  // the detector starts: sweeps at kT0 + 1 s, 2 s, ...
    r.call(0, kT0 + millis(400), 503);
    r.call(0, kT0 + millis(490), 503);  // 2nd consecutive at 500 ms: out for 10 s
    QCOMPARE(r.call(0, kT0 + seconds(10), 200), Admission::Reject);
    // Back at the first sweep with 10 s served (11 s); fail again at once: 20 s, then 25 s.
    r.call(0, kT0 + seconds(11) + millis(100), 500);
    r.call(0, kT0 + seconds(11) + millis(190), 500);  // ejected at 11.2 s for 20 s
    r.call(0, kT0 + seconds(32) + millis(100), 500);
    r.call(0, kT0 + seconds(32) + millis(190), 500);  // ejected at 32.2 s for min(30, 25)
    r.d->advance(kT0 + seconds(60));
    QCOMPARE(r.log(0),
             QStringList({"500:CLOSED>OPEN", "11000:OPEN>CLOSED", "11200:CLOSED>OPEN",
                          "32000:OPEN>CLOSED", "32200:CLOSED>OPEN", "58000:OPEN>CLOSED"}));
    std::vector<Micros> outs;
    for (const Event& e : r.sink.events)
      if (e.kind == EventKind::Transition && e.to == BreakerState::Open) outs.push_back(e.openFor);
    QCOMPARE(outs, (std::vector<Micros>{seconds(10), seconds(20), seconds(25)}));
  }

  // The multiplier decays by one per sweep once the host has been back an interval.
  void envoyBackoffDecays_data() {
    QTest::addColumn<int>("quietSeconds");
    QTest::addColumn<int>("expectedOut");  // s, of the next ejection
    QTest::newRow("re-ejected right away: 2 × base") << 0 << 20;
    QTest::newRow("after 1 sweep back: decayed to 1") << 2 << 10;
  }
  void envoyBackoffDecays() {
    QFETCH(int, quietSeconds);
    QFETCH(int, expectedOut);
    Rig r(DialectKind::Envoy, kEnvoy, 2);
    r.call(1, kT0, 200);
    r.call(0, kT0 + millis(400), 500);
    r.call(0, kT0 + millis(490), 500);  // out 10 s, back at the 11 s sweep with backoff 1
    const Micros t = kT0 + seconds(11 + quietSeconds) + millis(100);
    r.call(0, t, 500);
    r.call(0, t + millis(90), 500);
    QCOMPARE(r.sink.events.back().openFor, seconds(expectedOut));
  }

  void envoyMaxEjectionPercent_data() {
    QTest::addColumn<int>("percent");
    QTest::addColumn<int>("ejected");  // of 4 failing hosts
    QTest::newRow("default 10 %: 1 of 4 is 25 %, none") << 10 << 0;
    QTest::newRow("25 %: one") << 25 << 1;
    QTest::newRow("50 %: two") << 50 << 2;
  }
  void envoyMaxEjectionPercent() {
    QFETCH(int, percent);
    QFETCH(int, ejected);
    Rig r(DialectKind::Envoy,
          "consecutive_5xx: 1\nmax_ejection_percent: " + std::to_string(percent) + "\n", 4);
    for (int h = 0; h < 4; ++h) r.call(h, kT0 + millis(h), 500);
    int n = 0;
    for (int h = 0; h < 4; ++h) n += r.d->state(r.ids[h]) == BreakerState::Open;
    QCOMPARE(n, ejected);
  }

  void envoyEnforcing_data() {
    QTest::addColumn<QString>("cfg");
    QTest::addColumn<bool>("ejected");
    QTest::newRow("gateway failure detected, enforcing default 0")
        << "consecutive_5xx: 100\nconsecutive_gateway_failure: 2\nmax_ejection_percent: 100\n"
        << false;
    QTest::newRow("gateway failure enforced at 100")
        << "consecutive_5xx: 100\nconsecutive_gateway_failure: 2\n"
           "enforcing_consecutive_gateway_failure: 100\nmax_ejection_percent: 100\n"
        << true;
    QTest::newRow("consecutive_5xx enforcing 0")
        << "consecutive_5xx: 2\nenforcing_consecutive_5xx: 0\nmax_ejection_percent: 100\n"
        << false;
  }
  void envoyEnforcing() {
    QFETCH(QString, cfg);
    QFETCH(bool, ejected);
    Rig r(DialectKind::Envoy, cfg.toStdString(), 2);
    r.call(0, kT0, 502);
    r.call(0, kT0 + millis(100), 504);
    QCOMPARE(r.d->state(r.ids[0]) == BreakerState::Open, ejected);
  }

  // failure_percentage over the previous interval: 100 - success rate >= threshold.
  void envoyFailurePercentage_data() {
    QTest::addColumn<int>("failuresOf10");
    QTest::addColumn<bool>("ejected");
    QTest::newRow("40 % < 50") << 4 << false;
    QTest::newRow("50 % >= 50") << 5 << true;
  }
  void envoyFailurePercentage() {
    QFETCH(int, failuresOf10);
    QFETCH(bool, ejected);
    Rig r(DialectKind::Envoy, R"(
consecutive_5xx: 1000
interval: 10s
failure_percentage_threshold: 50
enforcing_failure_percentage: 100
failure_percentage_minimum_hosts: 3
failure_percentage_request_volume: 10
max_ejection_percent: 100
)",
          3);
    for (int i = 0; i < 10; ++i)
      for (int h = 0; h < 3; ++h)
        r.call(h, kT0 + millis(100 * i + h), h == 0 && i < failuresOf10 ? 500 : 200);
    r.d->advance(kT0 + seconds(10));  // the sweep judges the interval that just ended
    QCOMPARE(r.d->state(r.ids[0]) == BreakerState::Open, ejected);
    if (ejected) QCOMPARE(r.log(0), QStringList({"10000:CLOSED>OPEN"}));
  }

  void envoyPanicThreshold_data() {
    QTest::addColumn<int>("panic");
    QTest::addColumn<int>("admission");
    QTest::newRow("50 % healthy is not below 50: ejection holds") << 50 << int(Admission::Reject);
    QTest::newRow("below 60: panic, all hosts used") << 60 << int(Admission::Admit);
  }
  void envoyPanicThreshold() {
    QFETCH(int, panic);
    QFETCH(int, admission);
    Rig r(DialectKind::Envoy,
          "outlier_detection: {consecutive_5xx: 1, max_ejection_percent: 100}\n"
          "common_lb_config: {healthy_panic_threshold: {value: " +
              std::to_string(panic) + "}}\n",
          2);
    r.call(0, kT0, 500);
    QCOMPARE(int(r.call(0, kT0 + seconds(1), 200)), admission);
  }

  void istioTranslation() {
    const EnvoyOutlierConfig c = parseIstioConfig(R"(apiVersion: networking.istio.io/v1
kind: DestinationRule
spec:
  host: reviews
  trafficPolicy:
    outlierDetection:
      consecutive5xxErrors: 3
      consecutiveGatewayErrors: 0
      interval: 5s
      baseEjectionTime: 15s
      maxEjectionPercent: 50
)",
                                                  "dr.yaml");
    QCOMPARE(c.consecutive5xx, 3u);
    QCOMPARE(c.enforcingConsecutive5xx, 100u);
    QCOMPARE(c.enforcingConsecutiveGatewayFailure, 0u);
    QCOMPARE(c.enforcingSuccessRate, 0u);  // pilot turns success rate off
    QCOMPARE(c.interval, seconds(5));
    QCOMPARE(c.baseEjectionTime, seconds(15));
    QCOMPARE(c.maxEjection(), seconds(300));  // not exposed: Envoy's default
    QCOMPARE(c.maxEjectionPercent, 50u);
    QCOMPARE(c.healthyPanicThreshold, 0.0);  // minHealthPercent default 0
    try {
      parseIstioConfig("outlierDetection:\n  consecutive5xxErrors: 3\n  baseEjection: 1s\n",
                       "dr.yaml");
      QFAIL("accepted");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).startsWith("dr.yaml:3: outlierDetection.baseEjection: unknown"),
               e.what());
    }
    // Manifests between ---, one DestinationRule per model as the export writes them: the one
    // --select names (metadata.name or spec.host), else the first; every document is read.
    const std::string two =
        "kind: DestinationRule\nmetadata: {name: a}\nspec:\n  host: a.svc\n  trafficPolicy:\n"
        "    outlierDetection: {consecutive5xxErrors: 11}\n---\n"
        "kind: DestinationRule\nmetadata: {name: b}\nspec:\n  host: b.svc\n  trafficPolicy:\n"
        "    outlierDetection: {consecutive5xxErrors: 7}\n";
    QCOMPARE(parseIstioConfig(two, "dr.yaml").consecutive5xx, 11u);
    QCOMPARE(parseIstioConfig(two, "dr.yaml", "b").consecutive5xx, 7u);
    QCOMPARE(parseIstioConfig(two, "dr.yaml", "b.svc").consecutive5xx, 7u);
    for (const auto& [text, select, error] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {two, "c", "dr.yaml:1: metadata.name: no DestinationRule named 'c'"},
             {two + "---\nkind: [\n", "", "dr.yaml:16: YAML syntax: "}}) {
      try {
        parseIstioConfig(text, "dr.yaml", select);
        QFAIL("accepted");
      } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).startsWith(QString::fromStdString(error)), e.what());
      }
    }
  }

  // ---- nginx ----------------------------------------------------------------------------

  void nginxMaxFailsBoundary_data() {
    QTest::addColumn<int>("failures");
    QTest::addColumn<int>("admission");
    QTest::newRow("2 of max_fails=3: still chosen") << 2 << int(Admission::Admit);
    QTest::newRow("3 of 3: down") << 3 << int(Admission::Reject);
  }
  void nginxMaxFailsBoundary() {
    QFETCH(int, failures);
    QFETCH(int, admission);
    Rig r(DialectKind::Nginx, "upstream api { server h0 max_fails=3 fail_timeout=10s; server h1; }",
          2);
    for (int i = 0; i < failures; ++i) r.call(0, kT0 + seconds(i), 0, millis(10), Outcome::Reset);
    QCOMPARE(int(r.call(0, kT0 + seconds(5), 200)), admission);
  }

  // nginx reads fail_timeout in whole seconds and `nginx -t` refuses "ms" (invalid parameter):
  // the emulation refuses what nginx refuses, so a validation never runs on a file nginx
  // would not load.
  void nginxFailTimeoutRefusesMillis() {
    try {
      Rig r(DialectKind::Nginx, "upstream api { server h0 max_fails=3 fail_timeout=1400ms; }", 1);
      QFAIL("accepted");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).contains("server.fail_timeout") &&
                   QString(e.what()).contains("nginx refuses ms"),
               e.what());
    }
    Rig ok(DialectKind::Nginx, "upstream api { server h0 max_fails=3 fail_timeout=2m; }", 1);
  }

  // Down while now - checked <= fail_timeout (whole seconds); then one trial at a time.
  void nginxFailTimeoutAndTrial() {
    Rig r(DialectKind::Nginx, "upstream api { server h0 max_fails=2 fail_timeout=10s; server h1; }",
          2);
    r.call(0, kT0, 0, millis(10), Outcome::Timeout);
    r.call(0, kT0 + seconds(2), 0, millis(10), Outcome::Timeout);  // down, checked = 2 s
    QCOMPARE(r.call(0, kT0 + seconds(12) + millis(999), 200), Admission::Reject);  // 12-2 <= 10
    const DialectDecision trial = r.d->admit(r.ids[0], kT0 + seconds(13));
    QCOMPARE(trial.kind, Admission::Probe);
    QCOMPARE(r.d->admit(r.ids[0], kT0 + seconds(14)).kind, Admission::Reject);  // checked = 13
    r.d->record(r.ids[0], trial, kT0 + seconds(15), seconds(2), 200, Outcome::Ok);
    QCOMPARE(r.log(0),
             QStringList({"2010:CLOSED>OPEN", "13000:OPEN>HALF_OPEN", "15000:HALF_OPEN>CLOSED"}));
    QCOMPARE(r.call(0, kT0 + seconds(16), 200), Admission::Admit);
  }

  void nginxSingleServerNeverDown() {
    Rig r(DialectKind::Nginx, "upstream api { server h0 max_fails=1 fail_timeout=30s; }", 1);
    for (int i = 0; i < 50; ++i)
      QCOMPARE(r.call(0, kT0 + seconds(i), 0, millis(10), Outcome::Reset), Admission::Admit);
    QVERIFY(r.log(0).isEmpty());
  }

  void nginxWhatCounts_data() {
    QTest::addColumn<QString>("conf");
    QTest::addColumn<int>("status");
    QTest::addColumn<bool>("down");
    QTest::newRow("a 502 does not count by default") << "" << 502 << false;
    QTest::newRow("listed in proxy_next_upstream")
        << "proxy_next_upstream error timeout http_502;" << 502 << true;
    QTest::newRow("404 never counts") << "proxy_next_upstream http_404;" << 404 << false;
  }
  void nginxWhatCounts() {
    QFETCH(QString, conf);
    QFETCH(int, status);
    QFETCH(bool, down);
    Rig r(DialectKind::Nginx,
          conf.toStdString() + "\nupstream api { server h0 max_fails=1; server h1; }", 2);
    r.call(0, kT0, status);
    QCOMPARE(r.d->state(r.ids[0]) == BreakerState::Open, down);
  }

  // Successes do not reset fails until `checked` has moved past the last failure.
  void nginxFailsAccumulateWithoutQuietPeriod() {
    Rig r(DialectKind::Nginx, "upstream api { server h0 max_fails=3 fail_timeout=10s; server h1; }",
          2);
    r.call(0, kT0, 0, millis(10), Outcome::Reset);
    r.call(0, kT0 + seconds(1), 200);
    r.call(0, kT0 + seconds(5), 0, millis(10), Outcome::Reset);
    r.call(0, kT0 + seconds(6), 200);
    r.call(0, kT0 + seconds(9), 0, millis(10), Outcome::Reset);
    QCOMPARE(r.d->state(r.ids[0]), BreakerState::Open);
  }

  // ---- HAProxy --------------------------------------------------------------------------

  void haproxyErrorLimit_data() {
    QTest::addColumn<QString>("onError");
    QTest::addColumn<int>("errors");
    QTest::addColumn<bool>("down");
    QTest::newRow("mark-down at the limit") << "mark-down" << 3 << true;
    QTest::newRow("one short of the limit") << "mark-down" << 2 << false;
    // fail-check: one failed check from full health (4 = rise+fall-1 → 3 > rise): still up.
    QTest::newRow("fail-check from full health") << "fail-check" << 3 << false;
    // sudden-death: pre-fatal (rise+1), then one failed check → rise: still up.
    QTest::newRow("sudden-death leaves one more check") << "sudden-death" << 3 << false;
  }
  void haproxyErrorLimit() {
    QFETCH(QString, onError);
    QFETCH(int, errors);
    QFETCH(bool, down);
    Rig r(DialectKind::Haproxy,
          "backend be\n  default-server check inter 2s fastinter 500ms downinter 5s rise 2 fall 3 "
          "observe layer7 error-limit 3 on-error " +
              onError.toStdString() + "\n  server h0 10.0.0.1:80\n  server h1 10.0.0.2:80\n",
          2);
    // Two good checks first: health climbs from rise (2) to rise+fall-1 (4).
    r.call(0, kT0, 200);
    r.d->advance(kT0 + seconds(2));
    r.call(0, kT0 + seconds(2) + millis(100), 200);
    QCOMPARE(static_cast<HaproxyDialect*>(r.d.get())->health(r.ids[0]), 4u);
    // The errors fall between the checks at 0.5 s and 2.5 s (fastinter from rise, then inter
    // at full health): no check reads them.
    for (int i = 0; i < errors; ++i)
      r.call(0, kT0 + seconds(2) + millis(200 + 10 * i), 500, millis(1));
    QCOMPARE(r.d->state(r.ids[0]) == BreakerState::Open, down);
  }

  // HAProxy's set_server_check_status: a passing check on an UP server restores full health
  // (rise+fall-1), not one step; so S S F F S F F never marks it down (rise 2, fall 3: health
  // 4 4 3 2 4 3 2), where a one-step rise would have reached 0 at the seventh check.
  void haproxyPassingCheckRestoresFullHealth() {
    Rig r(DialectKind::Haproxy,
          "backend be\n  server h0 a:1 check inter 1s fastinter 1s downinter 1s rise 2 fall 3\n"
          "  server h1 b:1\n",
          2);
    r.call(0, kT0, 200);  // first seen: checks every second from here
    auto* h = static_cast<HaproxyDialect*>(r.d.get());
    const bool checks[] = {true, true, false, false, true, false, false};
    const std::uint32_t health[] = {4, 4, 3, 2, 4, 3, 2};
    for (int i = 0; i < 7; ++i) {
      r.d->observe(r.ids[0], kT0 + seconds(i) + millis(500), checks[i]);
      r.d->advance(kT0 + seconds(i + 1));
      QCOMPARE(h->health(r.ids[0]), health[i]);
      QCOMPARE(r.d->state(r.ids[0]), BreakerState::Closed);
    }
  }

  // A passing check also clears observe layer7's consecutive errors: two errors, a good check,
  // two errors stay under error-limit 3.
  void haproxyPassingCheckClearsObservedErrors() {
    Rig r(DialectKind::Haproxy,
          "backend be\n  server h0 a:1 check inter 1s fastinter 1s rise 2 fall 3 observe layer7 "
          "error-limit 3 on-error mark-down\n  server h1 b:1\n",
          2);
    r.call(0, kT0, 200);
    r.call(0, kT0 + millis(100), 500, millis(1));
    r.call(0, kT0 + millis(200), 500, millis(1));
    r.d->observe(r.ids[0], kT0 + millis(300), true);
    r.d->advance(kT0 + seconds(1));  // the check at 1 s passes
    r.call(0, kT0 + seconds(1) + millis(100), 500, millis(1));
    r.call(0, kT0 + seconds(1) + millis(200), 500, millis(1));
    QCOMPARE(r.d->state(r.ids[0]), BreakerState::Closed);
    r.call(0, kT0 + seconds(1) + millis(300), 500, millis(1));  // the third in a row
    QCOMPARE(r.d->state(r.ids[0]), BreakerState::Open);
  }

  // Down by mark-down; checks at fastinter (forced) then fastinter while rising; `rise` good
  // checks bring it back; slowstart ramps and completes.
  void haproxyRiseAndSlowstart() {
    Rig r(DialectKind::Haproxy,
          "backend be\n  server h0 a:1 check inter 10s fastinter 1s downinter 5s rise 2 fall 3 "
          "observe layer7 error-limit 2 on-error mark-down slowstart 4s\n  server h1 b:1\n",
          2);
    r.call(0, kT0, 500, millis(1));
    r.call(0, kT0 + millis(10), 500, millis(1));     // down at 11 ms
    r.d->observe(r.ids[0], kT0 + millis(20), true);  // the server is fine again
    r.d->advance(kT0 + seconds(10));
    const auto log = r.log(0);
    // The check already due at 1 s (before 11 ms + fastinter) runs: health 0→1; the next one
    // at fastinter (2 s): 1→2 = rise: UP.
    QCOMPARE(log, QStringList({"11:CLOSED>OPEN", "2000:OPEN>CLOSED"}));
    int ramp = 0;
    for (const Event& e : r.sink.events)
      if (e.kind == EventKind::RampComplete && e.instance == r.ids[0]) {
        ++ramp;
        QCOMPARE(e.ts, kT0 + seconds(2) + seconds(4));
      }
    QCOMPARE(ramp, 1);
  }

  // HAProxy's first checks are spread by position from its start (start_checks: the shortest
  // interval over 1 s, at least the server's own — fastinter while health is `rise` — times
  // position / servers), and with recorded health the checks read it instead of the calls: a
  // server that failed calls but answers /health comes back after `rise` checks.
  void haproxyHealthRecordsAndStartPhase_data() {
    QTest::addColumn<bool>("withHealth");
    QTest::addColumn<QStringList>("log");
    QTest::newRow("health recorded: back after rise checks")
        << true << QStringList{"1011:CLOSED>OPEN", "3011:OPEN>CLOSED"};
    QTest::newRow("no health: the checks read the last failed call")
        << false << QStringList{"1011:CLOSED>OPEN"};
  }
  void haproxyHealthRecordsAndStartPhase() {
    QFETCH(bool, withHealth);
    QFETCH(QStringList, log);
    Rig r(DialectKind::Haproxy,
          "backend be\n  default-server check inter 2s fastinter 1s downinter 1s rise 2 fall 3 "
          "observe layer7 error-limit 2 on-error mark-down\n  server h0 a:1\n  server h1 b:1\n"
          "  server h2 c:1\n",
          3);
    r.d->setStartedAt(kT0);
    if (withHealth) r.d->recordHealth("h2", kT0, true);
    r.call(2, kT0 + millis(10), 200);
    r.d->advance(kT0 + millis(20));
    // h2 is third of three: its first check at 1000 ms × 2 / 3.
    QCOMPARE(static_cast<HaproxyDialect*>(r.d.get())->nextCheck(r.ids[2]), kT0 + millis(666));
    // Passes at 666 ms (full health, then every inter); two errors mark it down at 1011 ms and
    // force the next check to fastinter (2011 ms), then fastinter while rising (3011 ms).
    r.d->advance(kT0 + millis(990));  // Rig::call observes before it advances
    r.call(2, kT0 + millis(1000), 500, millis(1));
    r.call(2, kT0 + millis(1010), 500, millis(1));
    r.d->advance(kT0 + seconds(10));
    QCOMPARE(r.log(2), log);
  }

  void haproxyConfigErrors() {
    try {
      parseHaproxyConfig("backend be\n  server h0 a:1 check rise x\n", "haproxy.cfg");
      QFAIL("accepted");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).startsWith("haproxy.cfg:2: rise: expected a whole number"),
               e.what());
    }
    try {
      parseHaproxyConfig("backend be\n  server h0 a:1 observe layer7\n", "haproxy.cfg");
      QFAIL("accepted");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).startsWith("haproxy.cfg:2: observe: needs health checks"),
               e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestDialectProxies)
#include "tst_dialect_proxies.moc"
