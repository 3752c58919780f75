// The Prometheus puller against a tiny fake Prometheus (a QTcpServer answering canned
// query_range JSON): the form it posts, the join of the roles per instance per step, step
// boundaries, each step handed on once, gaps asked for again after a failure; and every way a
// poll can fail (server down, HTTP errors, "status":"error", bad JSON, a wrong result type,
// no answer in time), reported with the URL and the role without losing a step. Then the
// presets and placeholders, the samples through the shadow monitor, and `listen`'s option
// errors.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QUrlQuery>

#include <cmath>
#include <functional>
#include <memory>
#include <set>

#include "fake_prometheus.hpp"
#include "spillway/live/http_request.hpp"
#include "spillway/live/prometheus_presets.hpp"
#include "spillway/live/prometheus_pull.hpp"
#include "spillway/live/shadow.hpp"
#include "spillway/policy_yaml.hpp"

using namespace spillway;
using formats::PromRole;
using namespace fake_prometheus;

namespace {

constexpr Micros kT0 = seconds(1764480000);  // a multiple of every step used here

QByteArray t3(Micros t) {
  return QByteArray::number(static_cast<double>(t) / 1e6, 'f', 3);
}

// The roles' PromQL is a word the fake recognises; what PromQL would compute is not the point.
live::PullerOptions options(quint16 port) {
  live::PullerOptions o;
  o.server = QUrl(QString("http://127.0.0.1:%1/prom/").arg(port));
  o.queries = {{PromRole::Calls, "CALLS"},
               {PromRole::Failures, "FAILS"},
               {PromRole::Slow, "SLOW"},
               {PromRole::P99, "P99"}};
  o.step = seconds(5);
  o.delay = seconds(2);
  o.timeoutMs = 2000;
  return o;
}

// Answers for times T0+5 … T0+25 whatever is asked: the puller must keep what it asked for.
Answer cannedRoles(const FakePrometheus::Request& r) {
  std::vector<Series> s;
  auto range = [](int from, int to, const std::function<QByteArray(int)>& v) {
    std::vector<std::pair<Micros, QByteArray>> p;
    for (int t = from; t <= to; t += 5) p.emplace_back(kT0 + seconds(t), v(t));
    return p;
  };
  if (r.query == "CALLS") {
    s.push_back({"\"instance\":\"a\",\"model\":\"m\"",
                 range(0, 25, [](int t) { return QByteArray::number(10 + t / 5 * 2 - 2); })});
    s.push_back({"\"instance\":\"b\",\"model\":\"m\"",
                 range(10, 25, [](int t) { return QByteArray::number(20 + t - 10); })});
  } else if (r.query == "FAILS") {
    s.push_back({"\"instance\":\"a\",\"model\":\"m\"", {{kT0 + seconds(10), "3"}}});
  } else if (r.query == "SLOW") {
    s.push_back({"\"instance\":\"a\",\"model\":\"m\"", range(5, 25, [](int t) {
                   return t == 15 ? QByteArray("NaN") : QByteArray::number(t / 5);
                 })});
    s.push_back({"\"instance\":\"b\",\"model\":\"m\"", range(10, 25, [](int) { return "0"; })});
  } else if (r.query == "P99") {
    s.push_back({"\"instance\":\"a\",\"model\":\"m\"", range(5, 25, [](int) { return "120.5"; })});
  }
  return {200, matrix(s)};
}

// A fake Prometheus and a puller on a test clock, with everything it says recorded.
struct Harness {
  FakePrometheus prom;
  std::unique_ptr<live::PrometheusPuller> puller;
  std::vector<live::PromSample> got;
  Micros now = 0;
  QStringList failures, warnings;
  int polls = 0;

  void make(live::PullerOptions o) {
    puller = std::make_unique<live::PrometheusPuller>(
        std::move(o), [this](const live::PromSample& s) { got.push_back(s); });
    puller->setClock([this] { return now; });
    QObject::connect(puller.get(), &live::PrometheusPuller::failed,
                     [this](const QString& m) { failures << m; });
    QObject::connect(puller.get(), &live::PrometheusPuller::warning,
                     [this](const QString& m) { warnings << m; });
    QObject::connect(puller.get(), &live::PrometheusPuller::polled, [this](int) { ++polls; });
  }
  // The fake up on any port, answering `handler`, and a puller asking it.
  bool up(std::function<Answer(const FakePrometheus::Request&)> handler,
          const std::function<void(live::PullerOptions&)>& tweak = {}) {
    prom.handler = std::move(handler);
    if (!prom.listen()) return false;
    live::PullerOptions o = options(prom.port());
    if (tweak) tweak(o);
    make(o);
    return true;
  }
  // One poll at `at`, waited for.
  bool poll(Micros at) {
    now = at;
    const int before = polls;
    puller->pollNow();
    return QTest::qWaitFor([&] { return polls > before; }, 5000);
  }
};

quint16 closedPort() {
  QTcpServer s;
  s.listen(QHostAddress::LocalHost, 0);
  const quint16 p = s.serverPort();
  s.close();
  return p;
}

}  // namespace

class TstPrometheusPull : public QObject {
  Q_OBJECT
 private slots:
  void joinsRolesPerStepOnce() {
    Harness h;
    QVERIFY(h.up(cannedRoles, [](live::PullerOptions& o) { o.backfill = seconds(10); }));
    auto& fake = h.prom;

    // 17.3 s after T0 with a 2 s delay: T0+15 is the newest complete step; 10 s of backfill.
    QVERIFY(h.poll(kT0 + millis(17300)));
    QCOMPARE(fake.requests.size(), std::size_t{4});
    for (const auto& r : fake.requests) {
      QCOMPARE(r.path, QString("/prom/api/v1/query_range"));
      QCOMPARE(r.contentType, QString("application/x-www-form-urlencoded"));
      QCOMPARE(r.start, QString(t3(kT0 + seconds(5))));
      QCOMPARE(r.end, QString(t3(kT0 + seconds(15))));
      QCOMPARE(r.step, QString("5.000"));
    }
    struct Want {
      int t;
      const char* inst;
      std::uint32_t calls, failures;
      std::int64_t slow;
      double p99;
    };
    const std::vector<Want> want = {{5, "a", 10, 0, 1, 120.5},
                                    {10, "a", 12, 3, 2, 120.5},
                                    {10, "b", 20, 0, 0, -1},
                                    {15, "a", 14, 0, -1, 120.5},
                                    {15, "b", 25, 0, 0, -1}};
    QCOMPARE(h.got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      const auto& g = h.got[i];
      QCOMPARE(g.end, kT0 + seconds(want[i].t));
      QCOMPARE(g.step, seconds(5));
      QCOMPARE(QString::fromStdString(g.instance), QString(want[i].inst));
      QCOMPARE(QString::fromStdString(g.model), QString("m"));
      QCOMPARE(g.calls, want[i].calls);
      QCOMPARE(g.failures, want[i].failures);
      QCOMPARE(g.slow, want[i].slow);
      QCOMPARE(g.p99Ms, want[i].p99);
    }
    // a has calls but no slow value at T0+15: said once.
    QCOMPARE(h.warnings.filter("role slow: no value for instance 'a'").size(), 1);
    QCOMPARE(h.puller->lastEnd(), kT0 + seconds(15));

    // The next poll asks only for what completed since: T0+20, once.
    QVERIFY(h.poll(kT0 + millis(23000)));
    QCOMPARE(fake.requests.size(), std::size_t{8});
    QCOMPARE(fake.requests.back().start, QString(t3(kT0 + seconds(20))));
    QCOMPARE(fake.requests.back().end, QString(t3(kT0 + seconds(20))));
    QCOMPARE(h.got.size(), std::size_t{7});
    QCOMPARE(h.got[5].end, kT0 + seconds(20));
    QCOMPARE(h.got[6].end, kT0 + seconds(20));
    // No step completed since: nothing is asked, nothing handed on.
    QVERIFY(h.poll(kT0 + millis(24900)));
    QCOMPARE(fake.requests.size(), std::size_t{8});
    QCOMPARE(h.got.size(), std::size_t{7});
    // Every (instance, step) once, in time order.
    std::set<std::pair<Micros, std::string>> seen;
    Micros prev = 0;
    for (const auto& g : h.got) {
      QVERIFY(seen.insert({g.end, g.instance}).second);
      QVERIFY(g.end >= prev);
      prev = g.end;
    }
  }

  void stepBoundaries_data() {
    QTest::addColumn<qint64>("nowMs");  // since T0
    QTest::addColumn<qint64>("delayMs");
    QTest::addColumn<qint64>("stepMs");
    QTest::addColumn<qint64>("backfillMs");
    QTest::addColumn<qint64>("startMs");  // -1: no query
    QTest::addColumn<qint64>("endMs");
    QTest::newRow("step just complete") << 12000LL << 2000LL << 5000LL << 0LL << 10000LL << 10000LL;
    QTest::newRow("a millisecond short") << 11999LL << 2000LL << 5000LL << 0LL << 5000LL << 5000LL;
    QTest::newRow("no delay") << 10000LL << 0LL << 5000LL << 0LL << 10000LL << 10000LL;
    QTest::newRow("backfill, whole steps")
        << 12000LL << 2000LL << 5000LL << 7000LL << 5000LL << 10000LL;
    QTest::newRow("1 s steps") << 3500LL << 1500LL << 1000LL << 0LL << 2000LL << 2000LL;
    QTest::newRow("15 s steps") << 47000LL << 2000LL << 15000LL << 30000LL << 15000LL << 45000LL;
  }
  void stepBoundaries() {
    QFETCH(qint64, nowMs);
    QFETCH(qint64, delayMs);
    QFETCH(qint64, stepMs);
    QFETCH(qint64, backfillMs);
    QFETCH(qint64, startMs);
    QFETCH(qint64, endMs);
    Harness h;
    QVERIFY(h.up(
        [](const FakePrometheus::Request&) {
          return Answer{200, matrix({})};
        },
        [&](live::PullerOptions& o) {
          o.delay = millis(delayMs);
          o.step = millis(stepMs);
          o.backfill = millis(backfillMs);
        }));
    auto& fake = h.prom;
    QVERIFY(h.poll(kT0 + millis(nowMs)));
    QCOMPARE(fake.requests.size(), std::size_t{4});
    QCOMPARE(fake.requests.front().start, QString(t3(kT0 + millis(startMs))));
    QCOMPARE(fake.requests.front().end, QString(t3(kT0 + millis(endMs))));
    QCOMPARE(h.puller->lastEnd(), kT0 + millis(endMs));
    QCOMPARE(h.puller->stats().steps, static_cast<std::uint64_t>((endMs - startMs) / stepMs + 1));
  }

  void serverDownThenGapFilled() {
    const quint16 port = closedPort();
    QVERIFY(port);
    Harness h;
    h.make(options(port));
    // Down from the start: reported with the URL and the role, nothing handed on.
    QVERIFY(h.poll(kT0 + seconds(12)));
    QCOMPARE(h.failures.size(), 1);
    QVERIFY2(
        h.failures[0].contains(QString("http://127.0.0.1:%1/prom/api/v1/query_range").arg(port)),
        qPrintable(h.failures[0]));
    QVERIFY2(h.failures[0].contains("(role "), qPrintable(h.failures[0]));
    QVERIFY2(h.failures[0].contains("refused", Qt::CaseInsensitive), qPrintable(h.failures[0]));
    QCOMPARE(h.puller->lastEnd(), kNever);
    // Still down: the same message is not repeated.
    QVERIFY(h.poll(kT0 + seconds(13)));
    QCOMPARE(h.failures.size(), 1);
    QCOMPARE(h.puller->stats().failedPolls, std::uint64_t{2});

    // Up: the steps come, and the recovery is said.
    QVERIFY(h.prom.listen(port));
    h.prom.handler = cannedRoles;
    QVERIFY(h.poll(kT0 + seconds(12)));
    QCOMPARE(h.puller->lastEnd(), kT0 + seconds(10));
    QCOMPARE(h.warnings.filter("answers again after 2 failed poll(s)").size(), 1);
    const std::size_t before = h.got.size();
    QCOMPARE(before, std::size_t{2});  // a and b at T0+10

    // Down again for two steps, then back: the missed steps are asked for, once each.
    h.prom.close();
    QVERIFY(h.poll(kT0 + seconds(17)));
    QCOMPARE(h.failures.size(), 2);
    QCOMPARE(h.got.size(), before);
    QVERIFY(h.prom.listen(port));
    const std::size_t asked = h.prom.requests.size();
    QVERIFY(h.poll(kT0 + seconds(22)));
    QCOMPARE(h.prom.requests.size(), asked + 4);
    QCOMPARE(h.prom.requests.back().start, QString(t3(kT0 + seconds(15))));
    QCOMPARE(h.prom.requests.back().end, QString(t3(kT0 + seconds(20))));
    QCOMPARE(h.got.size(), before + 4);
    std::set<std::pair<Micros, std::string>> seen;
    for (const auto& g : h.got) QVERIFY(seen.insert({g.end, g.instance}).second);
  }

  void failedPolls_data() {
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("message");
    QTest::newRow("400 bad_data") << 400
                                  << QByteArray(R"({"status":"error","errorType":"bad_data",)"
                                                R"("error":"1:5: parse error: unexpected <EOF>"})")
                                  << "(role slow): HTTP 400: the query failed: 1:5: parse error: "
                                     "unexpected <EOF> (query: SLOW)";
    QTest::newRow("422 execution") << 422
                                   << QByteArray(R"({"status":"error","errorType":"execution",)"
                                                 R"("error":"many-to-many matching not allowed"})")
                                   << "HTTP 422: the query failed: many-to-many matching not "
                                      "allowed (query: SLOW)";
    QTest::newRow("503 from a proxy")
        << 503 << QByteArray("<html><body>upstream down</body></html>")
        << "(role slow): HTTP 503: <html><body>upstream down";
    QTest::newRow("404 wrong prefix")
        << 404 << QByteArray("404 page not found") << "HTTP 404: 404 page not found";
    QTest::newRow("200 status error")
        << 200 << QByteArray(R"({"status":"error","error":"query timed out"})")
        << "(role slow): status: the query failed: query timed out";
    QTest::newRow("200 invalid JSON")
        << 200 << QByteArray("{\"status\":") << "(role slow): invalid JSON";
    QTest::newRow("200 vector")
        << 200 << QByteArray(R"({"status":"success","data":{"resultType":"vector","result":[]}})")
        << "data.resultType: expected \"matrix\"";
  }
  void failedPolls() {
    QFETCH(int, status);
    QFETCH(QByteArray, body);
    QFETCH(QString, message);
    Harness h;
    // Only the slow role fails: the whole poll fails, no step goes on without it.
    QVERIFY(h.up([&](const FakePrometheus::Request& r) {
      return r.query == "SLOW" ? Answer{status, body} : cannedRoles(r);
    }));
    QVERIFY(h.poll(kT0 + seconds(12)));
    QCOMPARE(h.failures.size(), 1);
    QVERIFY2(h.failures[0].contains(message), qPrintable(h.failures[0]));
    QVERIFY2(h.failures[0].contains(
                 QString("http://127.0.0.1:%1/prom/api/v1/query_range").arg(h.prom.port())),
             qPrintable(h.failures[0]));
    QVERIFY(h.got.empty());
    QCOMPARE(h.puller->lastEnd(), kNever);
    // Fixed: the same step comes through.
    h.prom.handler = cannedRoles;
    QVERIFY(h.poll(kT0 + seconds(12)));
    QCOMPARE(h.got.size(), std::size_t{2});
    QCOMPARE(h.got[0].end, kT0 + seconds(10));
  }

  // p99 is for display: a p99 query the server refuses is said once, and the counts go on.
  void p99FailureDoesNotStopCounts() {
    Harness h;
    QVERIFY(h.up([](const FakePrometheus::Request& r) {
      if (r.query == "P99")
        return Answer{422, R"({"status":"error","errorType":"execution","error":"bad bucket"})"};
      return cannedRoles(r);
    }));
    QVERIFY(h.poll(kT0 + seconds(12)));
    QVERIFY(h.poll(kT0 + seconds(17)));
    QVERIFY(h.failures.isEmpty());
    QCOMPARE(h.got.size(), std::size_t{4});
    for (const auto& g : h.got) QCOMPARE(g.p99Ms, -1.0);
    QCOMPARE(h.got[0].calls, std::uint32_t{12});
    QCOMPARE(h.warnings.filter("(role p99): HTTP 422: the query failed: bad bucket").size(), 1);
    QCOMPARE(h.puller->lastEnd(), kT0 + seconds(15));
  }

  void noAnswerInTime() {
    Harness h;
    QVERIFY(h.up(
        [](const FakePrometheus::Request& r) {
          return r.query == "FAILS" ? Answer{0, {}} : cannedRoles(r);
        },
        [](live::PullerOptions& o) { o.timeoutMs = 300; }));
    // The poll ends (with the failure) instead of waiting for the answer; how long it takes
    // past the 300 ms is measured by bench_prometheus_pull, not asserted here.
    QVERIFY(h.poll(kT0 + seconds(12)));
    QCOMPARE(h.failures.size(), 1);
    QVERIFY2(h.failures[0].contains("(role failures): no answer within 300 ms"),
             qPrintable(h.failures[0]));
    QCOMPARE(h.puller->lastEnd(), kNever);
    // A poll while one is out is not started twice.
    h.prom.handler = [](const FakePrometheus::Request&) { return Answer{0, {}}; };
    h.now = kT0 + seconds(12);
    h.puller->pollNow();
    h.puller->pollNow();
    QCOMPARE(h.puller->stats().busy, std::uint64_t{1});
  }

  void seriesWithoutInstanceLabel() {
    Harness h;
    // LiteLLM's latency histogram has no api_base: its series have no instance label.
    QVERIFY(h.up([](const FakePrometheus::Request& r) {
      if (r.query == "SLOW")
        return Answer{
            200,
            matrix({{"\"model\":\"gpt\"", {{kT0 + seconds(10), "4"}, {kT0 + seconds(15), "4"}}},
                    {"\"model\":\"gpt2\"", {{kT0 + seconds(10), "1"}, {kT0 + seconds(15), "1"}}}})};
      return cannedRoles(r);
    }));
    QVERIFY(h.poll(kT0 + seconds(12)));
    QVERIFY(h.poll(kT0 + seconds(17)));
    QCOMPARE(h.got.size(), std::size_t{4});
    for (const auto& g : h.got) QCOMPARE(g.slow, std::int64_t{-1});
    QCOMPARE(h.warnings.filter("role slow: 2 series without the instance label 'instance'").size(),
             1);
    QCOMPARE(h.puller->stats().badSeries, std::uint64_t{4});
  }

  // Samples of a failing instance through the engine's aggregate path: it, and only it, would
  // open; the verdict's time is the step's end.
  void samplesThroughShadowMonitor() {
    live::ShadowOptions opt;
    live::ShadowMonitor monitor(
        parsePolicy("version: 1\nname: t\nbreaker:\n  window: {type: time, length: 10s, "
                    "bucket: 1s}\n  min_calls: 10\n  trip: {error_rate: 0.5, slow_rate: 0.5, "
                    "sustain: 2s}\n",
                    "t.yaml"),
        opt);
    for (int s = 1; s <= 20; ++s) {
      for (const char* inst : {"a", "b"}) {
        live::PromSample p;
        p.end = kT0 + seconds(s);
        p.step = seconds(1);
        p.instance = inst;
        p.calls = 10;
        p.failures = std::string(inst) == "b" && s > 5 ? 8 : 0;
        p.slow = 0;
        p.p99Ms = 42;
        monitor.addAggregate(p.view(), p.p99Ms);
      }
    }
    QCOMPARE(monitor.verdicts().size(), std::size_t{1});
    QCOMPARE(QString::fromStdString(monitor.verdicts()[0].instance), QString("b"));
    // From 6 s, 8 of 10 calls fail: the 10 s window passes 0.5 at 12 s (56 of 100), then the
    // 2 s sustain.
    QCOMPARE(monitor.verdicts()[0].event.ts, kT0 + seconds(14));
    QCOMPARE(monitor.aggregates(), std::uint64_t{40});
    for (const auto& r : monitor.summary()) {
      QCOMPARE(r.calls, std::uint64_t{200});
      QCOMPARE(r.reportedP99Ms, 42.0);
    }
  }

  void leRegex_data() {
    QTest::addColumn<QString>("le");
    QTest::addColumn<QString>("regex");  // as written in PromQL (backslashes doubled)
    QTest::addColumn<QStringList>("matches");
    QTest::addColumn<QStringList>("misses");
    QTest::newRow("integer") << "5000"
                             << "0*5000(\\\\.0*)?"
                             << QStringList{"5000", "5000.0", "05000.0", "5000.000"}
                             << QStringList{"500", "50000", "5000.5", "15000"};
    QTest::newRow("fraction") << "0.5"
                              << "0*\\\\.50*" << QStringList{"0.5", "0.50", "00000.5"}
                              << QStringList{"5", "0.05", "1.5", "0.55"};
    QTest::newRow("trailing zeros")
        << "2.50"
        << "0*2\\\\.50*" << QStringList{"2.5", "002.50"} << QStringList{"2", "25"};
    QTest::newRow("leading zeros")
        << "01000.0"
        << "0*1000(\\\\.0*)?" << QStringList{"1000", "1000.0"} << QStringList{"100"};
  }
  void leRegex() {
    QFETCH(QString, le);
    QFETCH(QString, regex);
    QFETCH(QStringList, matches);
    QFETCH(QStringList, misses);
    std::string out;
    QVERIFY(live::leRegex(le.toStdString(), out));
    QCOMPARE(QString::fromStdString(out), regex);
    // What Prometheus's fully anchored RE2 sees once the PromQL string is unescaped.
    QString re = QString::fromStdString(out);
    re.replace("\\\\", "\\");
    const QRegularExpression rx(QRegularExpression::anchoredPattern(re));
    for (const QString& m : matches) QVERIFY2(rx.match(m).hasMatch(), qPrintable(m));
    for (const QString& m : misses) QVERIFY2(!rx.match(m).hasMatch(), qPrintable(m));
  }

  void leRegexRefuses() {
    std::string out;
    for (const char* bad : {"", "-1", "1e3", "5.", ".", "+Inf", "0x10", "5 "})
      QVERIFY2(!live::leRegex(bad, out), bad);
  }

  void expandPlaceholders_data() {
    QTest::addColumn<QString>("tmpl");
    QTest::addColumn<QString>("out");  // empty: an error containing `error`
    QTest::addColumn<QString>("error");
    QTest::newRow("braces") << "increase(x[${step}]) by (${by}) le=~\"${le}\""
                            << "increase(x[5s]) by (instance, model) le=~\"LE\""
                            << "";
    QTest::newRow("bare") << "x[$step] $by"
                          << "x[5s] instance, model"
                          << "";
    QTest::newRow("lone dollar kept") << "x{a=\"$\"} $ 1"
                                      << "x{a=\"$\"} $ 1"
                                      << "";
    QTest::newRow("unknown") << "x[$range]"
                             << ""
                             << "unknown placeholder $range";
    QTest::newRow("unterminated") << "x[${step]"
                                  << ""
                                  << "unterminated ${";
  }
  void expandPlaceholders() {
    QFETCH(QString, tmpl);
    QFETCH(QString, out);
    QFETCH(QString, error);
    std::string got, err;
    const bool ok =
        live::expandPromQuery(tmpl.toStdString(), {"5s", "LE", "instance, model"}, got, err);
    QCOMPARE(ok, !out.isEmpty());
    if (ok)
      QCOMPARE(QString::fromStdString(got), out);
    else
      QVERIFY2(QString::fromStdString(err).contains(error), err.c_str());
  }

  void presets() {
    for (const char* name : {"envoy", "litellm", "kong", "apisix", "spillway"}) {
      const live::PromPreset* p = live::findPromPreset(name);
      QVERIFY2(p, name);
      QVERIFY(p->queries.count(PromRole::Calls));
      QVERIFY(p->queries.count(PromRole::Failures));
      QVERIFY(p->queries.count(PromRole::Slow));
      std::string re;
      QVERIFY(live::leRegex(p->slowLe, re));
      for (const auto& [role, q] : p->queries) {
        std::string out, err;
        QVERIFY2(live::expandPromQuery(q, {"5s", re, p->instanceLabel}, out, err), err.c_str());
        QVERIFY(out.find('$') == std::string::npos || out.find("\"$") != std::string::npos);
      }
    }
    QVERIFY(!live::findPromPreset("istio"));
    QCOMPARE(QString::fromStdString(live::promDuration(seconds(15))), QString("15s"));
    QCOMPARE(QString::fromStdString(live::promDuration(millis(1500))), QString("1500ms"));
  }

  void listenPresetList() {
    QProcess p;
    p.start(SPILLWAY_CLI, {"listen", "--prom-preset", "list"});
    QVERIFY(p.waitForFinished(10000));
    QCOMPARE(p.exitCode(), 0);
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    for (const char* s :
         {"envoy:", "envoy_cluster_upstream_rq_total", "envoy_response_code_class=\"5\"",
          "envoy_cluster_upstream_rq_time_bucket", "litellm:", "litellm_deployment_total_requests",
          "litellm_llm_api_latency_metric_bucket",
          "kong:", "kong_http_requests_total{code=~\"5..\"}", "kong_upstream_latency_ms_bucket",
          "apisix:", "apisix_http_status", "apisix_http_latency_bucket{type=\"upstream\"",
          "spillway:", "spillway_sim_latency_seconds_bucket", "UNVERIFIED"})
      QVERIFY2(out.contains(s), s);
  }

  void listenOptionErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    const QString url = "http://127.0.0.1:9";
    QTest::newRow("no preset, no query")
        << QStringList{"--prometheus", url} << "--prometheus: needs --prom-preset NAME";
    QTest::newRow("unknown preset") << QStringList{"--prometheus", url, "--prom-preset", "istio"}
                                    << "--prom-preset: expected envoy, litellm";
    QTest::newRow("bad url") << QStringList{"--prometheus", "localhost:9090", "--prom-preset",
                                            "envoy"}
                             << "--prometheus: expected http://HOST:PORT";
    QTest::newRow("bad role") << QStringList{"--prometheus", url, "--prom-query", "errors=x"}
                              << "--prom-query: expected ROLE=PROMQL";
    QTest::newRow("unknown placeholder")
        << QStringList{"--prometheus", url, "--prom-query", "calls=x[$range]"}
        << "--prom-query: calls: unknown placeholder $range";
    QTest::newRow("le needed") << QStringList{"--prometheus", url,
                                              "--prom-query", "calls=x",
                                              "--prom-query", "slow=y{le=~\"${le}\"}"}
                               << "--prom-slow-le: required: the slow query uses ${le}";
    QTest::newRow("bad le") << QStringList{"--prometheus",   url, "--prom-preset", "envoy",
                                           "--prom-slow-le", "5s"}
                            << "--prom-slow-le: expected a bucket bound";
    QTest::newRow("bad step") << QStringList{"--prometheus", url,           "--prom-preset",
                                             "envoy",        "--prom-step", "500ms"}
                              << "--prom-step: expected a duration from 1s";
    QTest::newRow("bad label") << QStringList{"--prometheus",          url,
                                              "--prom-preset",         "envoy",
                                              "--prom-instance-label", "a-b"}
                               << "--prom-instance-label: expected a label name";
  }
  void listenOptionErrors() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    QProcess p;
    p.start(SPILLWAY_CLI, QStringList{"listen"} + args + QStringList{"--duration", "1s"});
    QVERIFY(p.waitForFinished(10000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(err.contains(message), qPrintable(err));
  }

  // listen --prometheus against the fake, end to end: the failing instance, and only it, would
  // open; the summary counts the samples; the expanded PromQL is shown on stderr.
  void listenEndToEnd() {
    FakePrometheus fake;
    QVERIFY(fake.listen());
    // Whatever range is asked: 20 calls per step for a and b, b failing 15 of them.
    fake.handler = [](const FakePrometheus::Request& r) {
      const Micros start = static_cast<Micros>(std::llround(r.start.toDouble() * 1e6));
      const Micros end = static_cast<Micros>(std::llround(r.end.toDouble() * 1e6));
      std::vector<Series> s;
      for (const char* inst : {"a", "b"}) {
        Series x{QByteArray("\"instance\":\"") + inst + "\"", {}};
        for (Micros t = start; t <= end; t += seconds(1))
          x.points.emplace_back(t, r.query == "CALLS"                     ? "20"
                                   : r.query == "FAILS" && inst[0] == 'b' ? "15"
                                                                          : "0");
        s.push_back(x);
      }
      return Answer{200, matrix(s)};
    };
    QTemporaryDir tmp;
    QFile pol(tmp.path() + "/p.yaml");
    QVERIFY(pol.open(QIODevice::WriteOnly));
    pol.write(
        "version: 1\nname: t\nbreaker:\n  window: {type: time, length: 5s, bucket: 1s}\n"
        "  min_calls: 10\n  trip: {error_rate: 0.5, slow_rate: 0.5, sustain: 2s}\n");
    pol.close();
    QProcess p;
    p.start(SPILLWAY_CLI, {"listen",
                           "--prometheus",
                           QString("http://127.0.0.1:%1").arg(fake.port()),
                           "--prom-query",
                           "calls=CALLS",
                           "--prom-query",
                           "failures=FAILS",
                           "--prom-step",
                           "1s",
                           "--prom-poll",
                           "200ms",
                           "--prom-delay",
                           "0s",
                           "--prom-backfill",
                           "10s",
                           "--policy",
                           tmp.path() + "/p.yaml",
                           "--duration",
                           "2500ms",
                           "--json"});
    // The fake answers from this process's event loop: wait with it running.
    QVERIFY(QTest::qWaitFor([&] { return p.state() == QProcess::NotRunning; }, 20000));
    const QByteArray out = p.readAllStandardOutput();
    const QByteArray err = p.readAllStandardError();
    QVERIFY2(p.exitCode() == 1, (out + err).constData());  // something would open
    const QList<QByteArray> lines = out.trimmed().split('\n');
    QVERIFY2(lines.size() >= 2, out.constData());
    for (int i = 0; i + 1 < lines.size(); ++i) {
      const QJsonObject v = QJsonDocument::fromJson(lines[i]).object();
      QCOMPARE(v["event"].toString(), QString("would_open"));
      QCOMPARE(v["instance"].toString(), QString("b"));
    }
    const QJsonObject sum = QJsonDocument::fromJson(lines.back()).object();
    QVERIFY(sum["summary"].toBool());
    const QJsonObject prom = sum["prometheus"].toObject();
    QVERIFY2(prom["samples"].toInt() >= 20, lines.back().constData());
    QCOMPARE(prom["failed_polls"].toInt(), 0);
    QVERIFY2(err.contains("calls: CALLS"), err.constData());
  }
};

QTEST_GUILESS_MAIN(TstPrometheusPull)
#include "tst_prometheus_pull.moc"
