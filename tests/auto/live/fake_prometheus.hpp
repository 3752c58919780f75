#pragma once
// A fake Prometheus for tests (tst_prometheus_pull, tst_console_live): a loopback QTcpServer on
// the live HTTP parser that answers /api/v1/query_range posts with what a handler says, and
// the "matrix" answer built from series.
#include <QObject>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QUrlQuery>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "spillway/live/http_request.hpp"
#include "spillway/time.hpp"

namespace fake_prometheus {

using spillway::Micros;
namespace live = spillway::live;

// A fake Prometheus: parses each request and answers what the handler says; a status of 0
// means "never answer" (a hung server).
struct Answer {
  int status = 200;
  QByteArray body;
};

class FakePrometheus : public QObject {
 public:
  struct Request {
    QString path, query, start, end, step, contentType;
  };
  std::function<Answer(const Request&)> handler;
  std::vector<Request> requests;

  FakePrometheus() {
    connect(&server_, &QTcpServer::newConnection, this, [this] {
      while (QTcpSocket* s = server_.nextPendingConnection()) {
        sockets_.push_back(s);
        auto parser = std::make_shared<live::HttpRequestParser>();
        connect(s, &QTcpSocket::readyRead, s, [this, s, parser] {
          const QByteArray data = s->readAll();
          auto st = parser->feed(std::string_view(data.constData(), data.size()));
          while (st == live::HttpRequestParser::State::Ready) {
            const live::HttpRequest rq = parser->take();
            const QUrlQuery form(QString::fromStdString(rq.body));
            Request r{QString::fromStdString(std::string(rq.path())),
                      form.queryItemValue("query", QUrl::FullyDecoded),
                      form.queryItemValue("start"),
                      form.queryItemValue("end"),
                      form.queryItemValue("step"),
                      QString::fromStdString(std::string(rq.header("content-type").value_or("")))};
            requests.push_back(r);
            const Answer a = handler ? handler(r) : Answer{};
            if (a.status == 0) return;  // hang
            s->write("HTTP/1.1 " + QByteArray::number(a.status) +
                     " X\r\nContent-Type: application/json\r\nContent-Length: " +
                     QByteArray::number(a.body.size()) + "\r\n\r\n" + a.body);
            st = parser->state();
          }
        });
      }
    });
  }
  bool listen(quint16 port = 0) { return server_.listen(QHostAddress::LocalHost, port); }
  // Down: no listener, and the client's keep-alive connections cut too.
  void close() {
    server_.close();
    for (auto& s : sockets_)
      if (s) s->abort();
    sockets_.clear();
  }
  quint16 port() const { return server_.serverPort(); }

 private:
  QTcpServer server_;
  std::vector<QPointer<QTcpSocket>> sockets_;
};

// {"status":"success","data":{"resultType":"matrix","result":[...]}} from (labels, points).
struct Series {
  QByteArray labels;                                  // "\"instance\":\"a\""
  std::vector<std::pair<Micros, QByteArray>> points;  // time, value text
};
inline QByteArray matrix(const std::vector<Series>& series) {
  QByteArray out = R"({"status":"success","data":{"resultType":"matrix","result":[)";
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (i) out += ',';
    out += "{\"metric\":{" + series[i].labels + "},\"values\":[";
    for (std::size_t j = 0; j < series[i].points.size(); ++j) {
      if (j) out += ',';
      out += "[" +
             QByteArray::number(static_cast<double>(series[i].points[j].first) / 1e6, 'f', 3) +
             ",\"" + series[i].points[j].second + "\"]";
    }
    out += "]}";
  }
  return out + "]}}";
}

}  // namespace fake_prometheus
