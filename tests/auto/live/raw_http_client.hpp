// A raw HTTP/1.1 client for the receiver suites: one keep-alive connection, event-loop driven
// (the server runs on the same thread, so nothing here may block), optionally from another
// loopback address (127.0.0.2, …: the whole 127/8 is loopback on Linux) so that it is another
// peer.
#pragma once

#include <QHostAddress>
#include <QTcpSocket>
#include <QTest>

#include <map>

namespace spillway::testing {

struct HttpAnswer {
  int status = 0;  // 0: no (complete) answer
  std::map<QByteArray, QByteArray> headers;
  QByteArray body;
  bool closed = false;  // the connection was closed when the answer was taken
};

class RawHttpClient {
 public:
  explicit RawHttpClient(quint16 port, const QString& from = {}) {
    QObject::connect(&sock, &QTcpSocket::readyRead, [this] { buf += sock.readAll(); });
    QObject::connect(&sock, &QTcpSocket::disconnected, [this] { closed = true; });
    QObject::connect(&sock, &QTcpSocket::errorOccurred, [this] { closed = true; });
    if (!from.isEmpty()) sock.bind(QHostAddress(from), 0);
    sock.connectToHost(QHostAddress::LocalHost, port);
  }
  bool connected(int ms = 5000) {
    return QTest::qWaitFor([this] { return sock.state() == QAbstractSocket::ConnectedState; }, ms);
  }
  void send(const QByteArray& raw) { sock.write(raw); }
  // The next complete answer (a 100 Continue included), or status 0 after `ms`.
  HttpAnswer next(int ms = 10000) {
    HttpAnswer a;
    (void)QTest::qWaitFor([&] { return take(a) || closed; }, ms);
    if (!a.status) take(a);
    a.closed = closed;
    return a;
  }
  HttpAnswer exchange(const QByteArray& raw, int ms = 10000) {
    send(raw);
    return next(ms);
  }

  // Takes a complete answer off the buffer, if there is one (no waiting).
  bool take(HttpAnswer& a) {
    const qsizetype end = buf.indexOf("\r\n\r\n");
    if (end < 0) return false;
    const QList<QByteArray> lines = buf.left(end).split('\n');
    HttpAnswer out;
    out.status = lines.front().split(' ').value(1).toInt();
    for (qsizetype i = 1; i < lines.size(); ++i) {
      const QByteArray l = lines[i].trimmed();
      const qsizetype c = l.indexOf(':');
      if (c > 0) out.headers[l.left(c).toLower()] = l.mid(c + 1).trimmed();
    }
    const qsizetype len = out.headers["content-length"].toLongLong();
    if (buf.size() < end + 4 + len) return false;
    out.body = buf.mid(end + 4, len);
    buf.remove(0, end + 4 + len);
    a = out;
    return true;
  }

  QTcpSocket sock;
  QByteArray buf;
  bool closed = false;
};

}  // namespace spillway::testing
