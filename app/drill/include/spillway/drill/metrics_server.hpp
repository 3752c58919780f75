#pragma once
// A Prometheus scrape endpoint: GET /metrics answers the text the provider renders at that
// moment (Content-Type: text/plain; version=0.0.4). Requests are parsed by live's hand-written
// HTTP parser (live/http_request.hpp); anything else is answered 404 / 405 / the parser's error
// status and never crashes. Connections are bounded, idle ones closed. Loopback unless the
// caller chose another address (live/listen_address.hpp).
#include <QHostAddress>
#include <QObject>
#include <QString>

#include <cstdint>
#include <functional>
#include <string>

#include "spillway/live/http_request.hpp"

class QTcpServer;

namespace spillway::drill {

struct MetricsServerOptions {
  QHostAddress address = QHostAddress::LocalHost;
  quint16 port = 0;  // 0: any free port
  live::HttpLimits limits{16 * 1024, 64 * 1024, 100, false};
  int maxConnections = 32;
  int idleTimeoutMs = 30'000;  // a connection without a complete request for this long closes
};

struct MetricsServerStats {
  std::uint64_t scrapes = 0;   // 200 answers to GET /metrics
  std::uint64_t rejected = 0;  // 4xx / 5xx answers
  std::uint64_t refused = 0;   // connections over the bound (503)
};

class MetricsServer : public QObject {
  Q_OBJECT
 public:
  using Provider = std::function<std::string()>;

  MetricsServer(MetricsServerOptions opt, Provider provider, QObject* parent = nullptr);
  ~MetricsServer() override;

  bool start();
  quint16 port() const { return port_; }
  QString errorString() const { return error_; }
  const MetricsServerStats& stats() const { return stats_; }

 signals:
  void scraped();

 private:
  struct Conn;
  void onNewConnection();
  void onReadable(Conn* c);
  void respond(Conn* c, int status, const QByteArray& contentType, const std::string& body,
               bool head = false, const QByteArray& extraHeaders = {});

  MetricsServerOptions opt_;
  Provider provider_;
  QTcpServer* server_ = nullptr;
  quint16 port_ = 0;
  QString error_;
  int connections_ = 0;
  MetricsServerStats stats_;
};

}  // namespace spillway::drill
