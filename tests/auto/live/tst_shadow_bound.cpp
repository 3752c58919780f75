// The shadow monitor with one shared engine (the console's Live mode, issue 17): instances are
// never evicted, so ShadowOptions::maxInstances is a hard cap. The (N+1)-th name's calls, log
// lines and samples are refused and counted as in the per-instance mode, for good (no idle
// eviction however much data time passes), while the first N keep being served — counted,
// judged, and still given "would open" verdicts after a flood of new names. The live timeline
// over that engine has no lane beyond the cap, and the OTLP receiver answers the spans over it
// in partialSuccess.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSignalSpy>
#include <QTest>

#include <map>
#include <memory>
#include <string>

#include "spillway/live/otlp_receiver.hpp"
#include "spillway/live/shadow.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/view/live_timeline.hpp"

using namespace spillway;

namespace {

// Window 5 s, 10 calls, trips on half failures held 1 s.
const char* const kPolicy =
    "version: 1\nname: bound\nbreaker:\n"
    "  window: {type: time, length: 5s, bucket: 1s}\n"
    "  min_calls: 10\n"
    "  trip: {error_rate: 0.5, slow_rate: 0.5, sustain: 1s}\n"
    "  slow: {absolute: 500ms}\n";

constexpr Micros kT0 = 1764480000000000;  // a whole second, epoch µs

live::ShadowOptions shared(std::size_t cap) {
  live::ShadowOptions o;
  o.sharedEngine = true;
  o.maxInstances = cap;
  o.format = formats::Format::Jsonl;
  return o;
}

bool call(live::ShadowMonitor& m, const std::string& instance, Micros end, int status = 200) {
  CallRecord r;
  r.instance = instance;
  r.model = "m";
  r.latency = millis(40);
  r.ts = end - r.latency;
  r.status = status;
  return m.addCall(r);
}

std::map<std::string, std::uint64_t> callsByInstance(const live::ShadowMonitor& m) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& s : m.summary()) out[s.instance] = s.calls;
  return out;
}

QJsonObject kv(const QString& k, const QJsonObject& v) {
  return {{"key", k}, {"value", v}};
}

// One OTLP/JSON request: span i to `name(i)`, ending at endUs + i ms.
QByteArray spans(int n, Micros endUs, const std::function<QString(int)>& name) {
  QJsonArray arr;
  for (int i = 0; i < n; ++i) {
    const qint64 end = (endUs + i * 1000) * 1000, start = end - 40'000'000;
    arr.append(QJsonObject{
        {"traceId", "0102030405060708090a0b0c0d0e0f10"},
        {"spanId", "0102030405060708"},
        {"name", "chat"},
        {"kind", 3},
        {"startTimeUnixNano", QString::number(start)},
        {"endTimeUnixNano", QString::number(end)},
        {"attributes", QJsonArray{kv("gen_ai.operation.name", {{"stringValue", "chat"}}),
                                  kv("gen_ai.request.model", {{"stringValue", "m"}}),
                                  kv("server.address", {{"stringValue", name(i)}}),
                                  kv("server.port", {{"intValue", "8000"}})}}});
  }
  const QJsonObject rs{{"scopeSpans", QJsonArray{QJsonObject{{"spans", arr}}}}};
  return QJsonDocument(QJsonObject{{"resourceSpans", QJsonArray{rs}}})
      .toJson(QJsonDocument::Compact);
}

struct Reply {
  int status = 0;
  QJsonObject body;
};

Reply post(QNetworkAccessManager& nam, quint16 port, const QByteArray& body) {
  QNetworkRequest req(QUrl(QString("http://127.0.0.1:%1/v1/traces").arg(port)));
  req.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
  std::unique_ptr<QNetworkReply> reply(nam.post(req, body));
  QSignalSpy done(reply.get(), &QNetworkReply::finished);
  if (!done.wait(10000)) return {};
  return {reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(),
          QJsonDocument::fromJson(reply->readAll()).object()};
}

}  // namespace

class TstShadowBound : public QObject {
  Q_OBJECT
 private slots:
  void capRefusesTheNextNameForGood() {
    live::ShadowOptions o = shared(3);
    o.idleHorizon = seconds(10);  // would evict in the per-instance mode; not here
    live::ShadowMonitor m(parsePolicy(kPolicy, "bound.yaml"), o);
    QVERIFY(call(m, "a", kT0));
    QVERIFY(call(m, "b", kT0));
    QVERIFY(call(m, "c", kT0));
    QVERIFY(!call(m, "d", kT0 + millis(1)));
    QCOMPARE(m.bound().instancesRejected, std::uint64_t{1});
    QCOMPARE(m.bound().callsRejected, std::uint64_t{1});
    QCOMPARE(m.engine().size(), std::size_t{3});
    // An hour of data time later "b" and "c" have been idle far past idleHorizon: a shared
    // engine cannot drop them, so "d" is still refused, and they are still served.
    QVERIFY(call(m, "a", kT0 + seconds(3600)));
    QVERIFY(!call(m, "d", kT0 + seconds(3600)));
    QVERIFY(call(m, "b", kT0 + seconds(3601)));
    m.evictIdle();
    QCOMPARE(m.bound().evicted, std::uint64_t{0});
    QCOMPARE(m.bound().tracked, std::size_t{3});
    QCOMPARE(m.bound().highWater, std::size_t{3});
    QCOMPARE(m.bound().callsRejected, std::uint64_t{2});
    const auto calls = callsByInstance(m);
    QCOMPARE(calls.size(), std::size_t{3});
    QCOMPARE(calls.at("a"), std::uint64_t{2});
    QCOMPARE(calls.at("b"), std::uint64_t{2});
    QCOMPARE(calls.at("c"), std::uint64_t{1});
    // The engine's names are the first three, by dense id.
    QCOMPARE(m.engine().name(0), std::string("a"));
    QCOMPARE(m.engine().name(2), std::string("c"));
  }

  void everySourceIsBounded() {
    live::ShadowMonitor m(parsePolicy(kPolicy, "bound.yaml"), shared(2));
    std::uint64_t aggregated = 0;
    m.onAggregated = [&](InstanceId, const formats::AggregateSample&) { ++aggregated; };
    // Log lines: the third name's line is refused and counted as a call.
    for (const char* name : {"a", "b", "c"})
      m.addLine(std::string("{\"ts\":1764480000000,\"instance\":\"") + name +
                "\",\"latency_ms\":5,\"status\":200}");
    m.flush();
    QCOMPARE(m.records(), std::uint64_t{3});
    QCOMPARE(m.bound().callsRejected, std::uint64_t{1});
    // Prometheus samples: a tracked name's goes in, a new name's is refused.
    formats::AggregateSample s;
    s.end = kT0 + seconds(15);
    s.step = seconds(15);
    s.model = "m";
    s.calls = 100;
    s.instance = "b";
    m.addAggregate(s);
    s.instance = "e";
    m.addAggregate(s);
    QCOMPARE(aggregated, std::uint64_t{1});
    QCOMPARE(m.bound().samplesRejected, std::uint64_t{1});
    QCOMPARE(m.bound().instancesRejected, std::uint64_t{2});
    QCOMPARE(m.engine().size(), std::size_t{2});
    QCOMPARE(callsByInstance(m).at("b"), std::uint64_t{101});
  }

  // A name's length is bounded as well as their number: a 4 MB server.address would cost the
  // monitor four times that. Over maxNameBytes an instance's (or model's) calls and samples
  // are refused and counted, and never take a place in the table.
  void longNamesAreRefused() {
    live::ShadowMonitor m(parsePolicy(kPolicy, "bound.yaml"), shared(3));
    const std::string longest(256, 'x'), over(257, 'x');
    QVERIFY(call(m, longest, kT0));
    QVERIFY(!call(m, over, kT0));
    CallRecord r;
    r.instance = "a";
    r.model = over;
    r.latency = millis(40);
    r.ts = kT0;
    QVERIFY(!m.addCall(r));
    formats::AggregateSample s;
    s.end = kT0 + seconds(15);
    s.step = seconds(15);
    s.calls = 10;
    s.instance = over;
    m.addAggregate(s);
    QCOMPARE(m.bound().namesTooLong, std::uint64_t{3});
    QCOMPARE(m.bound().callsRejected, std::uint64_t{2});
    QCOMPARE(m.bound().samplesRejected, std::uint64_t{1});
    QCOMPARE(m.bound().instancesRejected, std::uint64_t{0});
    QCOMPARE(m.engine().size(), std::size_t{1});
    QVERIFY(call(m, "b", kT0) && call(m, "c", kT0));  // the table still has its room
  }

  // Data time follows the newest end seen: one span dated an hour ahead of the clock would
  // make every instance an hour idle. With a wall clock, what ends more than maxAhead after it
  // is refused and counted, and data time stays put.
  void callsFromTheFutureAreRefused() {
    live::ShadowOptions o;  // per-instance engines: evicted when idle
    o.maxInstances = 2;
    o.idleHorizon = seconds(600);
    o.format = formats::Format::Jsonl;
    Micros clock = kT0;
    o.wallClock = [&clock] { return clock; };
    live::ShadowMonitor m(parsePolicy(kPolicy, "bound.yaml"), o);
    QVERIFY(call(m, "a", kT0) && call(m, "b", kT0));
    QVERIFY(!call(m, "c", kT0 + seconds(3600)));
    QVERIFY(!call(m, "a", kT0 + seconds(301)));
    QVERIFY(call(m, "a", kT0 + seconds(299)));  // within maxAhead
    QCOMPARE(m.bound().fromTheFuture, std::uint64_t{2});
    QCOMPARE(m.bound().evicted, std::uint64_t{0});
    QCOMPARE(callsByInstance(m).at("b"), std::uint64_t{1});
    clock = kT0 + seconds(3600);  // an hour on, the same span is in time (and b is idle)
    QVERIFY(call(m, "c", kT0 + seconds(3600)));
    QCOMPARE(m.bound().evicted, std::uint64_t{2});
  }

  void floodKeepsServingTheFirstN() {
    // The console's wiring: the live timeline reads the shared engine. 20,000 new names never
    // add an engine instance or a lane; the tracked ones keep their verdicts.
    live::ShadowMonitor m(parsePolicy(kPolicy, "bound.yaml"), shared(4));
    view::LiveTimeline tl(m.engine(), {.span = seconds(60)});
    std::vector<std::string> verdicts;
    m.onRecorded = [&](const live::RecordedCall& c) {
      tl.onCall(c.id, c.rec->end(), c.rec->latency, c.failure, c.slow);
    };
    m.onWouldOpen = [&](const live::WouldOpenVerdict& v) {
      tl.onEvent(v.event, "would open");
      verdicts.push_back(v.instance);
    };
    for (int i = 0; i < 4; ++i) QVERIFY(call(m, "keep-" + std::to_string(i), kT0));
    for (int i = 0; i < 20'000; ++i)
      QVERIFY(!call(m, "flood-" + std::to_string(i), kT0 + i * 100));  // 2 s of data
    QCOMPARE(m.bound().callsRejected, std::uint64_t{20'000});
    QCOMPARE(m.bound().instancesRejected, std::uint64_t{20'000});
    QCOMPARE(m.engine().size(), std::size_t{4});
    // keep-1 fails from now on for 10 s, 20 calls a second; keep-0 stays healthy.
    for (int k = 0; k < 200; ++k) {
      const Micros t = kT0 + seconds(3) + k * millis(50);
      QVERIFY(call(m, "keep-0", t));
      QVERIFY(call(m, "keep-1", t + 1, 503));
    }
    QCOMPARE(verdicts, std::vector<std::string>{"keep-1"});
    const view::RunTimeline v = tl.snapshot();
    QCOMPARE(v.instances().size(), std::size_t{4});
    for (const auto& it : v.instances())
      QVERIFY2(QString::fromStdString(it.name).startsWith("keep-"), it.name.c_str());
    QCOMPARE(tl.calls(), std::uint64_t{4 + 400});
  }

  void otlpAnswersOverTheCapInPartialSuccess() {
    // The receiver admits through reserve() in the shared mode as in listen's: spans of 5
    // names against a cap of 3, the 2 over it answered in partialSuccess and never queued.
    live::ShadowMonitor m(parsePolicy(kPolicy, "bound.yaml"), shared(3));
    live::OtlpReceiverOptions o;
    o.port = 0;
    live::OtlpReceiver rx(o, [&](const formats::SpanCall& c) { m.addReservedCall(c.view()); });
    rx.admit = [&](const formats::SpanCall& c) {
      return m.reserve(c.instance, c.model, c.ts + c.latency);
    };
    QVERIFY(rx.start());
    QNetworkAccessManager nam;
    const Reply first =
        post(nam, rx.port(), spans(50, kT0, [](int i) { return QString("10.0.1.%1").arg(i % 5); }));
    QCOMPARE(first.status, 200);
    const QJsonObject partial = first.body.value("partialSuccess").toObject();
    QCOMPARE(partial.value("rejectedSpans").toString(), QString("20"));
    QVERIFY(partial.value("errorMessage").toString().contains("instance bound"));
    QTRY_COMPARE_WITH_TIMEOUT(rx.stats().callsApplied, std::uint64_t{30}, 10000);
    QCOMPARE(rx.stats().spansOverBound, std::uint64_t{20});
    QCOMPARE(m.bound().callsRejected, std::uint64_t{20});
    QCOMPARE(m.engine().size(), std::size_t{3});
    // Later, the three admitted names are answered in full; a new one is still refused.
    const Reply known =
        post(nam, rx.port(),
             spans(9, kT0 + seconds(900), [](int i) { return QString("10.0.1.%1").arg(i % 3); }));
    QCOMPARE(known.status, 200);
    QVERIFY(!known.body.contains("partialSuccess"));
    const Reply fresh =
        post(nam, rx.port(), spans(1, kT0 + seconds(901), [](int) { return QString("10.0.9.9"); }));
    QCOMPARE(fresh.body.value("partialSuccess").toObject().value("rejectedSpans").toString(),
             QString("1"));
    QTRY_COMPARE_WITH_TIMEOUT(rx.stats().callsApplied, std::uint64_t{39}, 10000);
    std::uint64_t recorded = 0;
    for (const auto& r : m.summary()) recorded += r.calls;
    QCOMPARE(recorded, std::uint64_t{39});
    QCOMPARE(m.bound().callsRejected, std::uint64_t{21});
  }
};

QTEST_GUILESS_MAIN(TstShadowBound)
#include "tst_shadow_bound.moc"
