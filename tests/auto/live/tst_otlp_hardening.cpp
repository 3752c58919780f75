// The OTLP receiver against a hostile network (issue 17): idle and dripping connections from
// other addresses of 127/8 while a legitimate exporter on 127.0.0.1 is served; timeouts that
// free the slots; a minimum body rate; Expect: 100-continue; the Bearer scheme in any case;
// the global buffer budget; the instance bound answered with partialSuccess and idle instances
// evicted; graceful shutdown in process and `spillway-cli listen` on SIGTERM (nothing counted
// unanswered, nothing acknowledged lost); the token file; bounded memory over 20,000 distinct
// instance names. Timeouts are configured small and the behaviour is waited for; no test
// asserts a duration. Everything listens on 127.0.0.1.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <algorithm>
#include <csignal>
#include <map>
#include <memory>
#include <set>

#include "raw_http_client.hpp"
#include "spillway/input_error.hpp"
#include "spillway/live/bearer_token.hpp"
#include "spillway/live/otlp_receiver.hpp"
#include "spillway/live/shadow.hpp"

using namespace spillway;
using live::OtlpReceiver;
using live::OtlpReceiverOptions;

namespace {

constexpr std::uint64_t kT0Ns = 1'764'480'000'000'000'000ULL;

// OTLP/JSON with `n` GenAI spans; span i calls instance address(i):8000 at t0 + i ms.
std::string spansJson(int n, const std::function<std::string(int)>& address,
                      std::uint64_t t0Ns = kT0Ns) {
  std::string spans;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t start = t0Ns + static_cast<std::uint64_t>(i) * 1'000'000ULL;
    if (i) spans += ',';
    spans += R"({"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708",)"
             R"("name":"chat m","kind":3,"startTimeUnixNano":")" +
             std::to_string(start) + R"(","endTimeUnixNano":")" +
             std::to_string(start + 50'000'000ULL) +
             R"(","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},)"
             R"({"key":"gen_ai.request.model","value":{"stringValue":"chat-72b"}},)"
             R"({"key":"server.address","value":{"stringValue":")" +
             address(i) + R"("}},{"key":"server.port","value":{"intValue":"8000"}}]})";
  }
  return R"({"resourceSpans":[{"scopeSpans":[{"spans":[)" + spans + "]}]}]}";
}

std::string sameInstance(int n) {
  return spansJson(n, [](int) { return std::string("10.0.0.5"); });
}

QByteArray post(const std::string& body, const QByteArray& extra = {}) {
  return "POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
         "Content-Length: " +
         QByteArray::number(static_cast<qint64>(body.size())) + "\r\n" + extra + "\r\n" +
         QByteArray::fromStdString(body);
}

using Answer = spillway::testing::HttpAnswer;
using Client = spillway::testing::RawHttpClient;

struct Rig {
  explicit Rig(OtlpReceiverOptions o = {}) {
    o.port = 0;
    rx = std::make_unique<OtlpReceiver>(o, [this](const formats::SpanCall&) { ++calls; });
    ok = rx->start();
  }
  quint16 port() const { return rx->port(); }
  std::size_t calls = 0;
  std::unique_ptr<OtlpReceiver> rx;
  bool ok = false;
};

quint16 freePort() {
  QTcpServer probe;
  if (!probe.listen(QHostAddress::LocalHost, 0)) return 0;
  return probe.serverPort();
}

// The last line of a JSON-lines stdout: the summary object.
QJsonObject summaryOf(const QByteArray& out) {
  const QList<QByteArray> lines = out.trimmed().split('\n');
  return QJsonDocument::fromJson(lines.back()).object();
}

// kB from /proc/PID/status ("VmHWM", "VmRSS").
qint64 procStatusKb(qint64 pid, const QByteArray& field) {
  QFile f(QString("/proc/%1/status").arg(pid));
  if (!f.open(QIODevice::ReadOnly)) return -1;
  for (const QByteArray& line : f.readAll().split('\n'))
    if (line.startsWith(field + ":"))
      return line.mid(field.size() + 1).trimmed().split(' ')[0].toLongLong();
  return -1;
}

// `spillway-cli listen --otlp` on a free port, started and waited for; stopped by the test.
struct Listener {
  QProcess proc;
  quint16 port = 0;
  QByteArray err;
  bool start(QStringList args) {
    port = freePort();
    args = QStringList{"listen", "--otlp", QString("127.0.0.1:%1").arg(port), "--json"} + args;
    proc.start(SPILLWAY_CLI, args);
    if (!proc.waitForStarted()) return false;
    return QTest::qWaitFor(
               [this] {
                 err += proc.readAllStandardError();
                 return err.contains("OTLP/HTTP on") || proc.state() == QProcess::NotRunning;
               },
               15000) &&
           proc.state() == QProcess::Running;
  }
  // SIGTERM, then the exit; the process is killed if it does not stop.
  bool stop() {
    proc.terminate();
    if (proc.waitForFinished(30000)) return true;
    proc.kill();
    proc.waitForFinished();
    return false;
  }
  ~Listener() {
    if (proc.state() != QProcess::NotRunning) {
      proc.kill();
      proc.waitForFinished();
    }
  }
};

}  // namespace

class TstOtlpHardening : public QObject {
  Q_OBJECT

 private slots:
  void perPeerLimitKeepsALegitimateExporterServed() {
    // 24 idle and head-dripping connections from 127.0.0.2: 4 get a slot, the rest 503; the
    // exporter on 127.0.0.1 is answered 200 throughout; the header timeout then frees the
    // attacker's slots, and a new connection from 127.0.0.2 is served again.
    OtlpReceiverOptions o;
    o.maxConnections = 8;
    o.maxConnectionsPerPeer = 4;
    o.headerTimeoutMs = 300;
    Rig rig(o);
    QVERIFY(rig.ok);
    std::vector<std::unique_ptr<Client>> attack;
    for (int i = 0; i < 24; ++i) {
      attack.push_back(std::make_unique<Client>(rig.port(), "127.0.0.2"));
      if (i % 2) attack.back()->send("POST /v1/traces HTTP/1.1\r\nHost: x\r\n");  // drips no more
    }
    QTRY_VERIFY_WITH_TIMEOUT(rig.rx->stats().refusedConnections == 20, 5000);
    auto answered = [&attack] {
      return std::count_if(attack.begin(), attack.end(),
                           [](const auto& a) { return a->buf.contains("\r\n\r\n"); });
    };
    QTRY_VERIFY_WITH_TIMEOUT(answered() == 20, 5000);
    int refused = 0;
    for (auto& a : attack) {
      Answer ans;
      if (a->take(ans)) {
        QCOMPARE(ans.status, 503);
        QVERIFY(ans.headers.count("retry-after"));
        QVERIFY(ans.body.contains("127.0.0.2"));
        ++refused;
      }
    }
    QCOMPARE(refused, 20);
    Client legit(rig.port());  // 127.0.0.1
    QVERIFY(legit.connected());
    QCOMPARE(legit.exchange(post(sameInstance(10))).status, 200);
    QCOMPARE(legit.exchange(post(sameInstance(10))).status, 200);
    // The timeouts free the slots: idle ones closed, dripping ones answered 408.
    QTRY_VERIFY_WITH_TIMEOUT(rig.rx->connections() == 1, 5000);
    QCOMPARE(rig.rx->stats().idleClosed + rig.rx->stats().timeouts, std::uint64_t{4});
    QVERIFY(rig.rx->stats().timeouts >= 1);
    Client again(rig.port(), "127.0.0.2");
    QVERIFY(again.connected());
    QCOMPARE(again.exchange(post(sameInstance(1))).status, 200);
    QTRY_COMPARE(rig.calls, std::size_t{21});
  }

  void distributedSlowlorisIsCutOffByTimeouts() {
    // Idle and dripping connections from 8 addresses fill every slot: a newcomer is refused
    // 503 while they last, and served once the header timeout has closed them.
    OtlpReceiverOptions o;
    o.maxConnections = 8;
    o.maxConnectionsPerPeer = 1;
    o.headerTimeoutMs = 300;
    Rig rig(o);
    QVERIFY(rig.ok);
    std::vector<std::unique_ptr<Client>> attack;
    for (int i = 2; i <= 9; ++i) {
      attack.push_back(std::make_unique<Client>(rig.port(), QString("127.0.0.%1").arg(i)));
      QVERIFY(attack.back()->connected());
      attack.back()->send("POST /v1/tr");
    }
    QTRY_VERIFY_WITH_TIMEOUT(rig.rx->connections() == 8, 5000);
    {
      Client early(rig.port());
      const Answer a = early.next();
      if (a.status) QCOMPARE(a.status, 503);  // unless the timeouts already struck
    }
    QTRY_VERIFY_WITH_TIMEOUT(rig.rx->stats().timeouts == 8, 5000);
    for (auto& a : attack) {
      const Answer ans = a->next();
      QCOMPARE(ans.status, 408);
      QVERIFY2(ans.body.contains("header"), ans.body.constData());
    }
    Client legit(rig.port());
    QVERIFY(legit.connected());
    QCOMPARE(legit.exchange(post(sameInstance(5))).status, 200);
  }

  void bodyBelowTheMinimumRateIsCutOff() {
    OtlpReceiverOptions o;
    o.minBodyBytesPerSecond = 2000;
    o.bodyGraceMs = 200;
    Rig rig(o);
    QVERIFY(rig.ok);
    const QByteArray req = post(sameInstance(3));
    const qsizetype head = req.indexOf("\r\n\r\n") + 4;
    Client drip(rig.port());
    QVERIFY(drip.connected());
    drip.send(req.left(head + 10));  // the head and 10 body bytes, then one byte per 100 ms
    qsizetype sent = head + 10;
    QTimer t;
    QObject::connect(&t, &QTimer::timeout, [&] {
      if (sent < req.size() && !drip.closed) drip.send(req.mid(sent++, 1));
    });
    t.start(100);
    const Answer a = drip.next();
    t.stop();
    QCOMPARE(a.status, 408);
    QVERIFY2(a.body.contains("bytes/s"), a.body.constData());
    QVERIFY(sent < req.size());
    QCOMPARE(rig.calls, std::size_t{0});
    // At an honest rate the same request is fine.
    Client fine(rig.port());
    QVERIFY(fine.connected());
    QCOMPARE(fine.exchange(req).status, 200);
  }

  void expectContinue() {
    OtlpReceiverOptions o;
    o.bearerToken = "s3cret";
    o.limits.maxBodyBytes = 64 * 1024;
    Rig rig(o);
    QVERIFY(rig.ok);
    const std::string body = sameInstance(4);
    auto head = [&](const QByteArray& auth, qint64 length) {
      return "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Expect: 100-continue\r\n" +
             auth + "Content-Length: " + QByteArray::number(length) + "\r\n\r\n";
    };
    // Acceptable head: 100 Continue before any body byte is sent, then the answer.
    Client ok(rig.port());
    QVERIFY(ok.connected());
    ok.send(head("Authorization: Bearer s3cret\r\n", static_cast<qint64>(body.size())));
    QCOMPARE(ok.next().status, 100);
    QCOMPARE(ok.exchange(QByteArray::fromStdString(body)).status, 200);
    QCOMPARE(rig.rx->stats().continues, std::uint64_t{1});
    // Wrong token, or a body over the limit: the final status at once, the body never sent.
    Client bad(rig.port());
    QVERIFY(bad.connected());
    bad.send(head("Authorization: Bearer nope\r\n", static_cast<qint64>(body.size())));
    const Answer unauthorized = bad.next();
    QCOMPARE(unauthorized.status, 401);
    QTRY_VERIFY(bad.closed);
    Client big(rig.port());
    QVERIFY(big.connected());
    big.send(head("Authorization: Bearer s3cret\r\n", 10 * 1024 * 1024));
    QCOMPARE(big.next().status, 413);
    Client odd(rig.port());
    QVERIFY(odd.connected());
    odd.send("POST /v1/traces HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 5\r\n\r\n");
    QCOMPARE(odd.next().status, 417);
    QTRY_COMPARE(rig.calls, std::size_t{4});
  }

  void bearerSchemeIsCaseInsensitive() {
    OtlpReceiverOptions o;
    o.bearerToken = "s3cret";
    Rig rig(o);
    QVERIFY(rig.ok);
    Client c(rig.port());
    QVERIFY(c.connected());
    for (const QByteArray scheme : {"Bearer", "bearer", "BEARER", "bEaReR"})
      QCOMPARE(c.exchange(post(sameInstance(1), "Authorization: " + scheme + " s3cret\r\n")).status,
               200);
    for (const QByteArray wrong :
         {"Basic s3cret", "Bearers3cret", "Bearer s3cret2", "Bearer", "Bearer S3CRET"})
      QCOMPARE(c.exchange(post(sameInstance(1), "Authorization: " + wrong + "\r\n")).status, 401);
    QVERIFY(live::bearerMatches("Bearer   s3cret", "s3cret"));
    QVERIFY(!live::bearerMatches("Bearer ", ""));
  }

  void globalBufferBudget() {
    // Two 40 KiB bodies against a 64 KiB budget: while the first is held half-sent, the second
    // is refused 503 + Retry-After before its body is read; afterwards it goes through.
    OtlpReceiverOptions o;
    o.maxBufferedBytes = 64 * 1024;
    o.limits.maxBodyBytes = 48 * 1024;
    Rig rig(o);
    QVERIFY(rig.ok);
    auto spans = [](int n) { return spansJson(n, [](int) { return std::string("10.0.0.7"); }); };
    int n = 1;
    while (spans(n + 1).size() < 40 * 1024) ++n;
    const std::string body = spans(n);
    QVERIFY(body.size() > 32 * 1024 && body.size() < 48 * 1024);
    const QByteArray req = post(body);
    Client first(rig.port());
    QVERIFY(first.connected());
    first.send(req.left(req.size() / 2));
    QTRY_VERIFY_WITH_TIMEOUT(rig.rx->stats().maxBuffered >= body.size(), 5000);
    Client second(rig.port());
    QVERIFY(second.connected());
    const Answer refused = second.exchange(req);
    QCOMPARE(refused.status, 503);
    QCOMPARE(refused.headers.at("retry-after"), QByteArray("1"));
    QVERIFY(refused.body.contains("buffer budget"));
    first.send(req.mid(req.size() / 2));
    QCOMPARE(first.next().status, 200);
    Client third(rig.port());
    QVERIFY(third.connected());
    QCOMPARE(third.exchange(req).status, 200);
    QCOMPARE(rig.rx->stats().overBudget, std::uint64_t{1});
    QVERIFY(rig.rx->stats().maxBuffered <= o.maxBufferedBytes);
  }

  void instanceBoundAnswersPartialSuccess() {
    // A shadow monitor bound to 3 instances behind the receiver: spans of 5 instances, those
    // of the 2 over the bound reported in partialSuccess, never queued, counted as rejected.
    live::ShadowOptions so;
    so.maxInstances = 3;
    live::ShadowMonitor monitor(Policy{}, so);
    OtlpReceiverOptions o;
    o.port = 0;
    OtlpReceiver rx(o, [&](const formats::SpanCall& c) { monitor.addReservedCall(c.view()); });
    rx.admit = [&](const formats::SpanCall& c) {
      return monitor.reserve(c.instance, c.model, c.ts + c.latency);
    };
    QVERIFY(rx.start());
    Client c(rx.port());
    QVERIFY(c.connected());
    const std::string body = spansJson(50, [](int i) { return "10.0.1." + std::to_string(i % 5); });
    const Answer a = c.exchange(post(body));
    QCOMPARE(a.status, 200);
    const QJsonObject partial =
        QJsonDocument::fromJson(a.body).object().value("partialSuccess").toObject();
    QCOMPARE(partial.value("rejectedSpans").toString(), QString("20"));
    QVERIFY(partial.value("errorMessage").toString().contains("instance bound"));
    QTRY_COMPARE(rx.stats().callsApplied, std::uint64_t{30});
    QCOMPARE(rx.stats().spansOverBound, std::uint64_t{20});
    QCOMPARE(monitor.summary().size(), std::size_t{3});
    QCOMPARE(monitor.bound().callsRejected, std::uint64_t{20});
    std::uint64_t recorded = 0;
    for (const auto& r : monitor.summary()) recorded += r.calls;
    QCOMPARE(recorded, std::uint64_t{30});
  }

  void idleInstancesAreEvicted() {
    // Bound 2, idle after 10 s of data time: a third instance is refused while both are
    // active, and takes the idle one's place later; the active one keeps its counts.
    live::ShadowOptions so;
    so.maxInstances = 2;
    so.idleHorizon = seconds(10);
    live::ShadowMonitor m(Policy{}, so);
    const Micros t0 = seconds(1'764'480'000);
    auto call = [&](const char* instance, Micros t) {
      CallRecord r;
      r.instance = instance;
      r.ts = t;
      r.latency = millis(50);
      r.status = 200;
      return m.addCall(r);
    };
    QVERIFY(call("a", t0));
    QVERIFY(call("b", t0));
    QVERIFY(!call("c", t0 + seconds(5)));
    QCOMPARE(m.bound().instancesRejected, std::uint64_t{1});
    for (int i = 1; i <= 20; ++i) QVERIFY(call("a", t0 + seconds(i)));
    QVERIFY(call("c", t0 + seconds(21)));  // b idle for 21 s: evicted
    QCOMPARE(m.bound().evicted, std::uint64_t{1});
    QCOMPARE(m.bound().tracked, std::size_t{2});
    QCOMPARE(m.bound().highWater, std::size_t{2});
    std::map<std::string, std::uint64_t> calls;
    for (const auto& r : m.summary()) calls[r.instance] = r.calls;
    QCOMPARE(calls.size(), std::size_t{2});
    QCOMPARE(calls["a"], std::uint64_t{21});
    QCOMPARE(calls["c"], std::uint64_t{1});
    // A flood of distinct names never grows the table past the bound.
    for (int i = 0; i < 5000; ++i) call(("x" + std::to_string(i)).c_str(), t0 + seconds(22));
    QVERIFY(m.bound().tracked <= 2);
    QCOMPARE(m.bound().callsRejected, std::uint64_t{1 + 5000});
  }

  void shutdownAnswersWhatItReadAndRefusesThePartial() {
    OtlpReceiverOptions o;
    o.shutdownGraceMs = 300;
    Rig rig(o);
    QVERIFY(rig.ok);
    Client idle(rig.port()), whole(rig.port()), partial(rig.port());
    QVERIFY(idle.connected() && whole.connected() && partial.connected());
    QCOMPARE(whole.exchange(post(sameInstance(2))).status, 200);
    const QByteArray req = post(sameInstance(3));
    partial.send(req.left(req.size() - 5));
    QTRY_VERIFY(rig.rx->bufferedBytes() > 0);  // the partial request is read
    QSignalSpy stopped(rig.rx.get(), &OtlpReceiver::stopped);
    rig.rx->shutdown();
    QTRY_VERIFY(idle.closed);               // nothing sent: closed at once
    const Answer refused = partial.next();  // never whole: refused after the grace
    QCOMPARE(refused.status, 503);
    QVERIFY(refused.headers.count("retry-after"));
    QTRY_VERIFY_WITH_TIMEOUT(stopped.count() == 1, 5000);
    QCOMPARE(rig.rx->connections(), 0);
    rig.rx->drain();
    QCOMPARE(rig.calls, std::size_t{2});
    QCOMPARE(rig.rx->stats().accepted, std::uint64_t{1});
    Client late(rig.port());  // no longer listening
    QTRY_VERIFY(late.closed);
  }

  void tokenFile() {
    QTemporaryDir dir;
    auto write = [&](const QString& name, const QByteArray& text) {
      QFile f(dir.filePath(name));
      f.open(QIODevice::WriteOnly);
      f.write(text);
      return f.fileName().toStdString();
    };
    QCOMPARE(live::readBearerTokenFile(write("a", "\n\n# comment\n  s3cret \r\nnext\n")),
             std::string("s3cret"));
    QCOMPARE(live::readBearerTokenFile(write("b", "tok")), std::string("tok"));
    for (const QByteArray& empty : {QByteArray(), QByteArray("\n\n"), QByteArray("# only\n  \n")}) {
      const std::string f = write("empty", empty);
      try {
        live::readBearerTokenFile(f);
        QFAIL("an empty token file was accepted");
      } catch (const InputError& e) {
        QCOMPARE(e.file(), f);
        QVERIFY(e.detail().find("no token") != std::string::npos);
      }
    }
    QVERIFY_THROWS_EXCEPTION(InputError, live::readBearerTokenFile(write("c", "to ken\n")));
    QVERIFY_THROWS_EXCEPTION(InputError,
                             live::readBearerTokenFile(dir.filePath("missing").toStdString()));
  }

  void listenTokenFileAndRemoteRefusal() {
    QTemporaryDir dir;
    const QString blankFirst = dir.filePath("blank-first");
    const QString empty = dir.filePath("empty");
    {
      QFile f(blankFirst);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("\n# the receiver's token\ns3cret\n");
      QFile g(empty);
      QVERIFY(g.open(QIODevice::WriteOnly));
      g.write("\n\n");
    }
    // A blank first line no longer turns authentication off.
    {
      Listener l;
      QVERIFY2(l.start({"--otlp-token-file", blankFirst}), l.err.constData());
      Client c(l.port);
      QVERIFY(c.connected());
      QCOMPARE(c.exchange(post(sameInstance(2))).status, 401);
      QCOMPARE(c.exchange(post(sameInstance(2), "Authorization: bearer s3cret\r\n")).status, 200);
      QVERIFY(l.stop());
      QCOMPARE(
          summaryOf(l.proc.readAllStandardOutput()).value("otlp").toObject().value("calls").toInt(),
          2);
    }
    auto run = [](const QStringList& args, QByteArray& err) {
      QProcess p;
      p.start(SPILLWAY_CLI, QStringList{"listen"} + args);
      if (!p.waitForFinished(20000)) {
        p.kill();
        p.waitForFinished();
        return -1;
      }
      err = p.readAllStandardError();
      return p.exitCode();
    };
    QByteArray err;
    QCOMPARE(
        run({"--otlp", QString("127.0.0.1:%1").arg(freePort()), "--otlp-token-file", empty}, err),
        2);
    QVERIFY2(err.contains(empty.toUtf8()) && err.contains("no token"), err.constData());
    // Beyond loopback without a token: refused unless --insecure (nothing binds here: the
    // refusal comes first, and 192.0.2.1 (TEST-NET-1) is not an address of this machine).
    QCOMPARE(run({"--otlp", "192.0.2.1:4318", "--otlp-allow-remote"}, err), 2);
    QVERIFY2(err.contains("--insecure"), err.constData());
    QCOMPARE(run({"--otlp", "192.0.2.1:4318", "--otlp-allow-remote", "--insecure"}, err), 2);
    QVERIFY2(err.contains("warning") && err.contains("without authentication"), err.constData());
  }

  void listenSigtermAnswersEverythingItCounted() {
    // 4 keep-alive exporters, 2 requests of 20 spans in flight each, refilled on every answer;
    // SIGTERM mid-stream. Every request either got its answer or its connection closed before
    // the receiver counted it: the receiver's counts equal the answers, and the acknowledged
    // spans equal what the summary and the recording say.
    QTemporaryDir dir;
    const QString lib = dir.filePath("lib.db");
    Listener l;
    QVERIFY2(l.start({"--otlp-shutdown-grace", "1s", "--record", lib}), l.err.constData());
    constexpr int kClients = 4, kSpans = 20;
    const QByteArray req = post(sameInstance(kSpans));
    struct Exporter {
      std::unique_ptr<Client> c;
      int sent = 0, answered = 0;
      std::map<int, int> statuses;
    };
    std::vector<Exporter> ex(kClients);
    int acked = 0;
    bool terminated = false;
    for (auto& e : ex) {
      e.c = std::make_unique<Client>(l.port);
      QVERIFY(e.c->connected());
      e.c->send(req + req);
      e.sent = 2;
    }
    QTimer pump;
    QObject::connect(&pump, &QTimer::timeout, [&] {
      for (auto& e : ex) {
        Answer a;
        while (e.c->take(a)) {
          ++e.answered;
          ++e.statuses[a.status];
          if (a.status == 200) ++acked;
          if (!e.c->closed && e.c->sock.state() == QAbstractSocket::ConnectedState &&
              a.headers["connection"] != "close") {
            e.c->send(req);
            ++e.sent;
          }
        }
      }
      if (!terminated && acked >= 60) {
        terminated = true;
        ::kill(static_cast<pid_t>(l.proc.processId()), SIGTERM);
      }
    });
    pump.start(1);
    QTRY_VERIFY_WITH_TIMEOUT(terminated, 20000);
    // It may have exited while the event loop above ran (waitForFinished is then false).
    QVERIFY(l.proc.state() == QProcess::NotRunning || l.proc.waitForFinished(30000));
    QTRY_VERIFY_WITH_TIMEOUT(
        std::all_of(ex.begin(), ex.end(), [](const Exporter& e) { return e.c->closed; }), 10000);
    pump.stop();
    for (auto& e : ex) {  // what arrived with the close
      Answer a;
      while (e.c->take(a)) {
        ++e.answered;
        ++e.statuses[a.status];
        if (a.status == 200) ++acked;
      }
    }
    QCOMPARE(l.proc.exitStatus(), QProcess::NormalExit);
    QCOMPARE(l.proc.exitCode(), 0);
    const QJsonObject sum = summaryOf(l.proc.readAllStandardOutput());
    const QJsonObject otlp = sum.value("otlp").toObject();
    int answered = 0, sent = 0, ok = 0;
    for (const auto& e : ex) {
      answered += e.answered;
      sent += e.sent;
      ok += e.statuses.count(200) ? e.statuses.at(200) : 0;
      QVERIFY(e.answered <= e.sent);
    }
    qInfo("SIGTERM: %d requests sent, %d answered (%d with 200), %d closed unread", sent, answered,
          ok, sent - answered);
    // Nothing counted is unanswered, nothing answered 200 is missing from the counts.
    QCOMPARE(otlp.value("requests").toInt(), answered);
    QCOMPARE(otlp.value("accepted").toInt(), ok);
    QCOMPARE(otlp.value("calls").toInt(), ok * kSpans);
    QCOMPARE(sum.value("instances").toArray().at(0).toObject().value("calls").toInt(), ok * kSpans);
    const QByteArray err = l.err + l.proc.readAllStandardError();
    const QRegularExpressionMatch m =
        QRegularExpression("recorded (\\d+) records").match(QString::fromUtf8(err));
    QVERIFY2(m.hasMatch(), err.constData());
    QCOMPARE(m.captured(1).toInt(), ok * kSpans);
  }

  void listenMemoryStaysBoundedOverDistinctInstances() {
    // 20,000 distinct server.address values against --max-instances 256: 256 tracked, the rest
    // answered as rejected in partialSuccess, and the peak RSS stays under 200 MiB (unbounded,
    // 20,000 instances would take their ~6 KiB each and more).
    Listener l;
    QVERIFY2(l.start({"--max-instances", "256"}), l.err.constData());
    Client c(l.port);
    QVERIFY(c.connected());
    constexpr int kRequests = 20, kPer = 1000;
    std::uint64_t rejected = 0;
    for (int r = 0; r < kRequests; ++r) {
      const std::string body = spansJson(kPer, [r](int i) {
        const int n = r * kPer + i;
        return "10." + std::to_string(n / 65536) + "." + std::to_string(n / 256 % 256) + "." +
               std::to_string(n % 256);
      });
      const Answer a = c.exchange(post(body));
      QCOMPARE(a.status, 200);
      rejected += QJsonDocument::fromJson(a.body)
                      .object()
                      .value("partialSuccess")
                      .toObject()
                      .value("rejectedSpans")
                      .toString()
                      .toULongLong();
    }
    const qint64 hwmKb = procStatusKb(l.proc.processId(), "VmHWM");
    QVERIFY(hwmKb > 0);
    qInfo("peak RSS after %d distinct instances (bound 256): %lld KiB", kRequests * kPer,
          static_cast<long long>(hwmKb));
    QVERIFY2(hwmKb < 200 * 1024, qPrintable(QString::number(hwmKb)));
    QCOMPARE(rejected, std::uint64_t{kRequests * kPer - 256});
    QVERIFY(l.stop());
    const QJsonObject bound =
        summaryOf(l.proc.readAllStandardOutput()).value("instance_bound").toObject();
    QCOMPARE(bound.value("tracked").toInt(), 256);
    QCOMPARE(bound.value("calls_rejected").toInt(), kRequests * kPer - 256);
  }
};

QTEST_GUILESS_MAIN(TstOtlpHardening)
#include "tst_otlp_hardening.moc"
