// The fake instances' HTTP/1.1 request parser: valid requests in any split, pipelining,
// keep-alive rules, and every malformed or oversized input as an error status, never a crash.
#include <QTest>

#include "spillway/live/http_request.hpp"

using spillway::live::HttpLimits;
using spillway::live::HttpRequestParser;
using State = HttpRequestParser::State;

class TstLiveHttp : public QObject {
  Q_OBJECT
 private slots:
  void parsesWholeAndSplit() {
    const std::string req =
        "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
        "Content-Length: 11\r\n\r\n{\"a\":\"bcd\"}";
    // Every split point gives the same request.
    for (std::size_t cut = 0; cut <= req.size(); ++cut) {
      HttpRequestParser p;
      State s = p.feed(std::string_view(req).substr(0, cut));
      if (cut < req.size()) {
        QCOMPARE(s, State::NeedMore);
        s = p.feed(std::string_view(req).substr(cut));
      }
      QCOMPARE(s, State::Ready);
      const auto r = p.take();
      QCOMPARE(r.method, std::string("POST"));
      QCOMPARE(std::string(r.path()), std::string("/v1/chat/completions"));
      QCOMPARE(r.body, std::string("{\"a\":\"bcd\"}"));
      QCOMPARE(std::string(*r.header("content-type")), std::string("application/json"));
      QVERIFY(r.keepAlive);
      QCOMPARE(p.state(), State::NeedMore);
    }
  }

  void pipelined() {
    HttpRequestParser p;
    QCOMPARE(
        p.feed("GET /health HTTP/1.1\r\n\r\nGET /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n"),
        State::Ready);
    QCOMPARE(p.take().target, std::string("/health"));
    QCOMPARE(p.state(), State::Ready);
    const auto second = p.take();
    QCOMPARE(second.target, std::string("/v1/models"));
    QVERIFY(!second.keepAlive);
    QCOMPARE(p.state(), State::NeedMore);
  }

  void keepAlive_data() {
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<bool>("keep");
    QTest::newRow("1.1 default") << QByteArray("GET / HTTP/1.1\r\n\r\n") << true;
    QTest::newRow("1.1 close") << QByteArray("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n")
                               << false;
    QTest::newRow("1.0 default") << QByteArray("GET / HTTP/1.0\r\n\r\n") << false;
    QTest::newRow("1.0 keep-alive")
        << QByteArray("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n") << true;
  }
  void keepAlive() {
    QFETCH(QByteArray, head);
    QFETCH(bool, keep);
    HttpRequestParser p;
    QCOMPARE(p.feed(head.toStdString()), State::Ready);
    QCOMPARE(p.take().keepAlive, keep);
  }

  void errors_data() {
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<int>("status");
    QTest::newRow("garbage") << QByteArray("GARBAGE\r\n\r\n") << 400;
    QTest::newRow("binary") << QByteArray("\x01\x02\x03 / HTTP/1.1\r\n\r\n") << 400;
    QTest::newRow("absolute target") << QByteArray("GET http://x/ HTTP/1.1\r\n\r\n") << 400;
    QTest::newRow("bad version") << QByteArray("GET / HTTP/x.y\r\n\r\n") << 400;
    QTest::newRow("http/2") << QByteArray("GET / HTTP/2.0\r\n\r\n") << 505;
    QTest::newRow("header without colon") << QByteArray("GET / HTTP/1.1\r\nfoo\r\n\r\n") << 400;
    QTest::newRow("space before colon") << QByteArray("GET / HTTP/1.1\r\nfoo : x\r\n\r\n") << 400;
    QTest::newRow("folding") << QByteArray("GET / HTTP/1.1\r\na: b\r\n c\r\n\r\n") << 400;
    QTest::newRow("bad length") << QByteArray("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n")
                                << 400;
    QTest::newRow("conflicting length")
        << QByteArray("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n") << 400;
    QTest::newRow("huge length")
        << QByteArray("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n") << 400;
    QTest::newRow("body too large")
        << QByteArray("POST / HTTP/1.1\r\nContent-Length: 2000\r\n\r\n") << 413;
    QTest::newRow("chunked") << QByteArray("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
                             << 501;
    QTest::newRow("header too large")
        << QByteArray("GET / HTTP/1.1\r\nX: " + QByteArray(5000, 'a') + "\r\n\r\n") << 431;
    QTest::newRow("endless header") << QByteArray(5000, 'a') << 431;
  }
  void errors() {
    QFETCH(QByteArray, input);
    QFETCH(int, status);
    HttpLimits lim;
    lim.maxHeaderBytes = 4096;
    lim.maxBodyBytes = 1000;
    HttpRequestParser p(lim);
    QCOMPARE(p.feed(std::string_view(input.constData(), input.size())), State::Error);
    QCOMPARE(p.errorStatus(), status);
    QVERIFY(!p.errorMessage().empty());
    QCOMPARE(p.feed("GET / HTTP/1.1\r\n\r\n"), State::Error);  // stays failed
  }
};

QTEST_GUILESS_MAIN(TstLiveHttp)
#include "tst_live_http.moc"
