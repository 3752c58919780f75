// The fake model instances over real loopback sockets: JSON and SSE answers, the queue, the
// fault timeline against the wall clock (a fast one: seconds, or --speed), seeded latencies,
// and malformed or oversized requests answered with 4xx while the server keeps serving.
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTest>

#include <memory>

#include "spillway/drill/instance_farm.hpp"
#include "spillway/sim/scenario_yaml.hpp"

using namespace spillway;

namespace {

// One model "m" with `instances` instances; `extra` is appended (faults: …).
sim::Scenario scenario(const QString& model, const QString& faults = {}, int instances = 1) {
  const QString yaml = QStringLiteral(
                           "version: 1\nname: live-test\nduration: 10m\nseed: 7\n"
                           "models:\n  - name: m\n    instances: %1\n%2\n"
                           "clients:\n  - {name: c, model: m, rate: 1}\n%3\n")
                           .arg(instances)
                           .arg(model, faults);
  return sim::parseScenario(yaml.toStdString(), "test.yaml");
}

struct Reply {
  int status = 0;
  QNetworkReply::NetworkError error = QNetworkReply::NoError;
  QByteArray body;
  QByteArray contentType;
  qint64 ms = 0;
  QByteArray serviceUs;
};

QByteArray chatBody(bool stream, int maxTokens = 8) {
  QJsonObject o{{"model", "m"},
                {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "hello there"}}}},
                {"max_tokens", maxTokens}};
  if (stream) o.insert("stream", true);
  return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

class Client {
 public:
  QNetworkReply* post(quint16 port, const QByteArray& body) {
    QNetworkRequest rq(QUrl(QString("http://127.0.0.1:%1/v1/chat/completions").arg(port)));
    rq.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    rq.setTransferTimeout(20000);
    return nam.post(rq, body);
  }
  Reply wait(QNetworkReply* r, QElapsedTimer t = {}) {
    if (!r->isFinished()) {
      QSignalSpy done(r, &QNetworkReply::finished);
      done.wait(20000);
    }
    Reply out;
    out.status = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    out.error = r->error();
    out.body = r->readAll();
    out.contentType = r->header(QNetworkRequest::ContentTypeHeader).toByteArray();
    out.serviceUs = r->rawHeader("x-spillway-service-us");
    if (t.isValid()) out.ms = t.elapsed();
    r->deleteLater();
    return out;
  }
  Reply chat(quint16 port, bool stream = false) {
    QElapsedTimer t;
    t.start();
    return wait(post(port, chatBody(stream)), t);
  }
  Reply get(quint16 port, const QString& path) {
    QNetworkRequest rq(QUrl(QString("http://127.0.0.1:%1%2").arg(port).arg(path)));
    return wait(nam.get(rq));
  }
  QNetworkAccessManager nam;
};

// Raw bytes in, raw bytes out, through the event loop (the server runs in this thread): until
// `expectResponses` status lines have arrived and the last body is complete, the server
// closes, or 5 s pass.
QByteArray raw(quint16 port, const QByteArray& bytes, int expectResponses = 1) {
  QTcpSocket s;
  s.connectToHost(QHostAddress::LocalHost, port);
  if (!QTest::qWaitFor([&] { return s.state() == QAbstractSocket::ConnectedState; }, 5000))
    return "no connection";
  s.write(bytes);
  QByteArray got;
  (void)QTest::qWaitFor(
      [&] {
        got += s.readAll();
        if (s.state() != QAbstractSocket::ConnectedState) return true;
        return got.count("HTTP/1.1 ") >= expectResponses && got.endsWith("}");
      },
      5000);
  return got + s.readAll();
}

}  // namespace

class TstFakeInstance : public QObject {
  Q_OBJECT
 private slots:
  void answersJson() {
    drill::InstanceFarm farm(scenario("    service: {base: 30ms, sigma: 0}"), {});
    QVERIFY2(farm.start(), qPrintable(farm.errorString()));
    Client c;
    const Reply r = c.chat(farm.instances()[0]->port());
    QCOMPARE(r.status, 200);
    QVERIFY(r.contentType.startsWith("application/json"));
    QVERIFY2(r.ms >= 25, qPrintable(QString::number(r.ms)));
    const QJsonObject o = QJsonDocument::fromJson(r.body).object();
    QCOMPARE(o.value("object").toString(), QString("chat.completion"));
    QCOMPARE(o.value("model").toString(), QString("m"));
    const QJsonObject choice = o.value("choices").toArray().at(0).toObject();
    QCOMPARE(choice.value("finish_reason").toString(), QString("stop"));
    QCOMPARE(choice.value("message").toObject().value("content").toString().split(' ').size(), 8);
    QCOMPARE(o.value("usage").toObject().value("completion_tokens").toInt(), 8);
    QCOMPARE(r.serviceUs, QByteArray("30000"));

    const Reply h = c.get(farm.instances()[0]->port(), "/health");
    QCOMPARE(h.status, 200);
    QCOMPARE(QJsonDocument::fromJson(h.body).object().value("instance").toString(), QString("m-1"));
    QCOMPARE(c.get(farm.instances()[0]->port(), "/nope").status, 404);
  }

  void streamsSse() {
    drill::InstanceFarm farm(scenario("    service: {base: 80ms, sigma: 0}"), {});
    QVERIFY(farm.start());
    Client c;
    const Reply r = c.chat(farm.instances()[0]->port(), true);
    QCOMPARE(r.status, 200);
    QVERIFY(r.contentType.startsWith("text/event-stream"));
    QVERIFY2(r.ms >= 75, qPrintable(QString::number(r.ms)));
    // data: {...}\n\n events, the last one [DONE].
    QStringList content;
    int events = 0;
    bool done = false;
    QString finish;
    for (const QByteArray& block : r.body.split('\n')) {
      if (block.isEmpty()) continue;
      QVERIFY2(block.startsWith("data: "), block.constData());
      QVERIFY2(!done, "data after [DONE]");
      const QByteArray data = block.mid(6);
      if (data == "[DONE]") {
        done = true;
        continue;
      }
      ++events;
      const QJsonObject o = QJsonDocument::fromJson(data).object();
      QCOMPARE(o.value("object").toString(), QString("chat.completion.chunk"));
      const QJsonObject ch = o.value("choices").toArray().at(0).toObject();
      content << ch.value("delta").toObject().value("content").toString();
      if (!ch.value("finish_reason").isNull()) finish = ch.value("finish_reason").toString();
    }
    QVERIFY(done);
    QCOMPARE(events, 8);  // one chunk per token up to 32
    QCOMPARE(finish, QString("stop"));
    QCOMPARE(content.join("").split(' ').size(), 8);
  }

  void seededLatencies() {
    // The same seed gives the same service-time sequence; another seed does not.
    auto sequence = [](std::uint64_t seed) {
      drill::FarmOptions opt;
      opt.seed = seed;
      drill::InstanceFarm farm(scenario("    service: {base: 5ms, sigma: 0.5}"), opt);
      if (!farm.start()) return QList<QByteArray>{};
      Client c;
      QList<QByteArray> seq;
      for (int i = 0; i < 5; ++i) seq << c.chat(farm.instances()[0]->port()).serviceUs;
      return seq;
    };
    const auto a = sequence(11), b = sequence(11), other = sequence(12);
    QCOMPARE(a.size(), 5);
    QCOMPARE(a, b);
    QVERIFY(a != other);
  }

  void queueFull_data() {
    QTest::addColumn<QString>("queueFull");
    QTest::addColumn<int>("status");
    QTest::newRow("503") << QString() << 503;
    QTest::newRow("429") << QString("    queue_full: 429\n") << 429;
  }
  void queueFull() {
    QFETCH(QString, queueFull);
    QFETCH(int, status);
    // One slot, one queue place: the third concurrent call finds the queue full.
    drill::InstanceFarm farm(scenario("    slots: 1\n    queue: 1\n" + queueFull +
                                      "    service: {base: 400ms, sigma: 0}"),
                             {});
    QVERIFY(farm.start());
    Client c;
    const quint16 port = farm.instances()[0]->port();
    QList<QNetworkReply*> replies;
    for (int i = 0; i < 3; ++i) {
      replies << c.post(port, chatBody(false));
      QTest::qWait(50);  // arrival order
    }
    QList<int> got;
    for (QNetworkReply* r : replies) got << c.wait(r).status;
    QCOMPARE(got, (QList<int>{200, 200, status}));
    QCOMPARE(farm.instances()[0]->stats().queueFull, 1u);
  }

  void faultWindow_data() {
    QTest::addColumn<QString>("fault");
    QTest::addColumn<double>("speed");
    QTest::addColumn<QString>("expect");  // what a call inside the window sees
    // Window [1 s, 2 s) of wall time, directly or at 10× from [10 s, 20 s).
    QTest::newRow("errors")
        << "{type: errors, target: m-1, at: 1s, duration: 1s, rate: 1, status: 502}" << 1.0
        << "502";
    QTest::newRow("errors at speed 10")
        << "{type: errors, target: m, at: 10s, duration: 10s, rate: 1}" << 10.0 << "503";
    QTest::newRow("throttle") << "{type: throttle, target: m-1, at: 1s, duration: 1s}" << 1.0
                              << "429";
    QTest::newRow("delay") << "{type: delay, target: m-1, at: 1s, duration: 1s, delay: 300ms}"
                           << 1.0 << "slow";
    QTest::newRow("drift")
        << "{type: latency_drift, target: m-1, at: 1s, duration: 1s, multiplier: 20}" << 1.0
        << "slow";
    QTest::newRow("reset") << "{type: reset, target: m-1, at: 1s, duration: 1s}" << 1.0 << "reset";
    QTest::newRow("outage") << "{type: outage, target: m-1, at: 1s, duration: 1s}" << 1.0
                            << "refused";
  }
  void faultWindow() {
    QFETCH(QString, fault);
    QFETCH(double, speed);
    QFETCH(QString, expect);
    drill::FarmOptions opt;
    opt.speed = speed;
    drill::InstanceFarm farm(
        scenario("    service: {base: 20ms, sigma: 0}", "faults:\n  - " + fault), opt);
    QStringList transitions;
    connect(&farm, &drill::InstanceFarm::faultTransition,
            [&](const QString& t) { transitions << t; });
    QVERIFY(farm.start());
    const quint16 port = farm.instances()[0]->port();
    Client c;
    QElapsedTimer wall;
    wall.start();
    int before = 0, inside = 0, after = 0;
    while (wall.elapsed() < 2600) {
      const qint64 at = wall.elapsed();
      const Reply r = c.chat(port);
      // Fast or slow by the service time the instance applied (its header), not by the wall
      // clock: the client's round trip stretches on a busy machine or under ASan.
      const qint64 serviceMs = r.serviceUs.toLongLong() / 1000;
      const bool ok = r.status == 200 && !r.serviceUs.isEmpty() && serviceMs < 200;
      // Margins of 150 ms around the edges for timer and scheduling jitter.
      if (at + r.ms < 850) {
        QVERIFY2(ok, qPrintable(QString("before the window at %1 ms: %2, service %3 ms")
                                    .arg(at)
                                    .arg(r.status)
                                    .arg(serviceMs)));
        ++before;
      } else if (at > 1150 && at < 1700) {  // a call that starts inside
        bool seen = false;
        if (expect == "slow")
          seen = r.status == 200 && serviceMs >= 280 && r.ms >= 280;
        else if (expect == "reset")
          seen = r.error == QNetworkReply::RemoteHostClosedError;
        else if (expect == "refused")
          seen = r.error == QNetworkReply::ConnectionRefusedError ||
                 r.error == QNetworkReply::RemoteHostClosedError;
        else
          seen = r.status == expect.toInt();
        QVERIFY2(seen, qPrintable(QString("inside the window at %1 ms: status %2, error %3, %4 ms")
                                      .arg(at)
                                      .arg(r.status)
                                      .arg(r.error)
                                      .arg(r.ms)));
        ++inside;
      } else if (at > 2150) {
        QVERIFY2(ok, qPrintable(QString("after the window at %1 ms: %2, service %3 ms")
                                    .arg(at)
                                    .arg(r.status)
                                    .arg(serviceMs)));
        ++after;
      }
      QTest::qWait(40);
    }
    QVERIFY(before >= 3);
    QVERIFY(inside >= (expect == "slow" ? 1 : 3));  // slow calls take 300+ ms each
    QVERIFY(after >= 2);
    QCOMPARE(transitions.size(), 2);
    QVERIFY2(transitions[0].contains("m-1 fault started"), qPrintable(transitions[0]));
    QVERIFY2(transitions[1].contains("m-1 fault ended"), qPrintable(transitions[1]));
  }

  void hangHoldsTheAnswer() {
    // A hang from 0 to 1 s: a call made at once is answered only when the fault ends.
    drill::InstanceFarm farm(
        scenario("    service: {base: 10ms, sigma: 0}",
                 "faults:\n  - {type: hang, target: m-1, at: 0s, duration: 1s}"),
        {});
    QVERIFY(farm.start());
    Client c;
    const Reply r = c.chat(farm.instances()[0]->port());
    QCOMPARE(r.status, 200);  // answered, not left to the client's 20 s timeout
    // Held until the fault's end: no earlier (a lower bound cannot be flaky); how much later
    // depends on the machine's load, so there is no upper bound.
    QVERIFY2(r.ms >= 900, qPrintable(QString::number(r.ms)));
    QCOMPARE(farm.instances()[0]->stats().hangs, 1u);
  }

  void badRequestsKeepServing_data() {
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<QByteArray>("statusLine");
    QTest::newRow("garbage") << QByteArray("GARBAGE\r\n\r\n") << QByteArray("HTTP/1.1 400 ");
    QTest::newRow("oversized body")
        << QByteArray("POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 5000000\r\n\r\n")
        << QByteArray("HTTP/1.1 413 ");
    QTest::newRow("oversized header")
        << QByteArray("GET /health HTTP/1.1\r\nX-Big: " + QByteArray(40000, 'x') + "\r\n\r\n")
        << QByteArray("HTTP/1.1 431 ");
    QTest::newRow("invalid json")
        << QByteArray("POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 5\r\n\r\n{nope")
        << QByteArray("HTTP/1.1 400 ");
    QTest::newRow("no messages")
        << QByteArray("POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}")
        << QByteArray("HTTP/1.1 400 ");
    QTest::newRow("wrong method") << QByteArray("DELETE /v1/chat/completions HTTP/1.1\r\n\r\n")
                                  << QByteArray("HTTP/1.1 405 ");
    // Read as 0 output tokens (an instant answer) before: a model server answers 400.
    for (const char* tokens : {"1e300", "1.5", "-1"}) {
      const QByteArray body =
          QByteArray("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":") +
          tokens + "}";
      QTest::newRow((QByteArray("max_tokens ") + tokens).constData())
          << QByteArray("POST /v1/chat/completions HTTP/1.1\r\nContent-Length: " +
                        QByteArray::number(body.size()) + "\r\n\r\n" + body)
          << QByteArray("HTTP/1.1 400 ");
    }
  }
  void badRequestsKeepServing() {
    QFETCH(QByteArray, request);
    QFETCH(QByteArray, statusLine);
    drill::InstanceFarm farm(scenario("    service: {base: 5ms, sigma: 0}"), {});
    QVERIFY(farm.start());
    const quint16 port = farm.instances()[0]->port();
    const QByteArray got = raw(port, request);
    QVERIFY2(got.startsWith(statusLine), got.left(200).constData());
    QVERIFY2(got.contains("\"error\""), got.left(300).constData());
    Client c;
    QCOMPARE(c.chat(port).status, 200);  // still serving
  }

  void keepAlivePipelined() {
    drill::InstanceFarm farm(scenario("    service: {base: 5ms, sigma: 0}"), {});
    QVERIFY(farm.start());
    const QByteArray body = chatBody(false);
    const QByteArray one =
        "POST /v1/chat/completions HTTP/1.1\r\nContent-Length: " + QByteArray::number(body.size()) +
        "\r\n\r\n" + body;
    const QByteArray got =
        raw(farm.instances()[0]->port(), one + one + "GET /health HTTP/1.1\r\n\r\n", 3);
    QCOMPARE(got.count("HTTP/1.1 200 OK"), 3);
  }
};

QTEST_GUILESS_MAIN(TstFakeInstance)
#include "tst_fake_instance.moc"
