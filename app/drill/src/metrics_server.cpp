// The /metrics endpoint: one QTcpServer, requests parsed incrementally and answered at once
// (rendering is a few kilobytes per instance, on the event loop that runs the simulation, so
// the numbers are a consistent snapshot between two simulator steps).
#include "spillway/drill/metrics_server.hpp"

#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

namespace spillway::drill {

struct MetricsServer::Conn : QObject {
  Conn(QTcpSocket* s, const live::HttpLimits& l, QObject* parent)
      : QObject(parent), sock(s), parser(l), idle(this) {
    s->setParent(this);
    idle.setSingleShot(true);
  }
  QTcpSocket* sock;
  live::HttpRequestParser parser;
  QTimer idle;
  bool closing = false;
  bool keepAlive = true;
};

MetricsServer::MetricsServer(MetricsServerOptions opt, Provider provider, QObject* parent)
    : QObject(parent), opt_(std::move(opt)), provider_(std::move(provider)) {}

MetricsServer::~MetricsServer() = default;

bool MetricsServer::start() {
  server_ = new QTcpServer(this);
  if (!server_->listen(opt_.address, opt_.port)) {
    error_ = server_->errorString();
    return false;
  }
  port_ = server_->serverPort();
  connect(server_, &QTcpServer::newConnection, this, &MetricsServer::onNewConnection);
  return true;
}

void MetricsServer::onNewConnection() {
  while (QTcpSocket* s = server_->nextPendingConnection()) {
    s->setReadBufferSize(64 * 1024);
    auto* c = new Conn(s, opt_.limits, this);
    ++connections_;
    connect(s, &QTcpSocket::readyRead, c, [this, c] { onReadable(c); });
    connect(s, &QTcpSocket::disconnected, c, [this, c] {
      --connections_;
      c->closing = true;
      c->idle.stop();
      c->deleteLater();
    });
    connect(&c->idle, &QTimer::timeout, c, [c] {
      c->closing = true;
      c->sock->disconnectFromHost();
    });
    if (connections_ > opt_.maxConnections) {
      ++stats_.refused;
      c->keepAlive = false;
      respond(c, 503, "text/plain", "too many connections\n", false, "Retry-After: 1\r\n");
      continue;
    }
    c->idle.start(opt_.idleTimeoutMs);
  }
}

void MetricsServer::onReadable(Conn* c) {
  if (c->closing) return;
  const QByteArray data = c->sock->readAll();
  auto st = c->parser.feed(std::string_view(data.constData(), data.size()));
  while (st == live::HttpRequestParser::State::Ready && !c->closing) {
    const live::HttpRequest req = c->parser.take();
    c->keepAlive = req.keepAlive;
    c->idle.start(opt_.idleTimeoutMs);
    const bool head = req.method == "HEAD";
    if (req.path() != "/metrics") {
      ++stats_.rejected;
      respond(c, 404, "text/plain", "not found: scrape GET /metrics\n", head);
    } else if (req.method != "GET" && !head) {
      ++stats_.rejected;
      respond(c, 405, "text/plain", "use GET\n", false, "Allow: GET, HEAD\r\n");
    } else {
      ++stats_.scrapes;
      respond(c, 200, "text/plain; version=0.0.4; charset=utf-8", provider_(), head);
      emit scraped();
    }
    st = c->parser.state();
  }
  if (!c->closing && st == live::HttpRequestParser::State::Error) {
    ++stats_.rejected;
    c->keepAlive = false;
    respond(c, c->parser.errorStatus(), "text/plain", c->parser.errorMessage() + "\n");
  }
}

void MetricsServer::respond(Conn* c, int status, const QByteArray& contentType,
                            const std::string& body, bool head, const QByteArray& extraHeaders) {
  const bool keep = c->keepAlive && !c->closing;
  QByteArray out = "HTTP/1.1 " + QByteArray::number(status) + ' ' +
                   QByteArray::fromStdString(std::string(live::reasonPhrase(status))) +
                   "\r\nContent-Type: " + contentType +
                   "\r\nContent-Length: " + QByteArray::number(static_cast<qint64>(body.size())) +
                   "\r\nConnection: " + (keep ? "keep-alive" : "close") + "\r\n" + extraHeaders +
                   "\r\n";
  if (!head) out.append(body.data(), static_cast<qsizetype>(body.size()));
  c->sock->write(out);
  if (!keep) {
    c->closing = true;
    c->idle.stop();
    c->sock->disconnectFromHost();  // after the answer is written
  }
}

}  // namespace spillway::drill
