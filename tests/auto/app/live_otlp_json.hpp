#pragma once
// What the console's Live tests send: a policy that trips on half failures over 10 calls in a
// 5 s window (sustained 1 s), OTLP/JSON GenAI spans to one server, and a POST to the console's
// receiver on 127.0.0.1.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSignalSpy>

#include <chrono>
#include <memory>

namespace spillway::livetest {

inline const char* kLivePolicy = R"(version: 1
name: live-drill
breaker:
  window: { type: time, length: 5s, bucket: 1s }
  min_calls: 10
  trip: { error_rate: 0.5, slow_rate: 0.5, sustain: 1s }
  slow: { absolute: 500ms }
)";

inline qint64 nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline QJsonObject kv(const QString& k, const QJsonObject& v) {
  return {{"key", k}, {"value", v}};
}

// One OTLP/JSON request: `n` GenAI spans to `address`:8000 taking 80 ms each, ending 10 ms
// apart up to `endNs`, answered `status`, from `service` (none when empty).
inline QByteArray spans(const QString& address, int n, qint64 endNs, int status,
                        const QString& service = "support-bot") {
  QJsonArray arr;
  for (int i = 0; i < n; ++i) {
    const qint64 end = endNs - (n - 1 - i) * 10'000'000LL;
    QJsonArray attrs{kv("gen_ai.operation.name", {{"stringValue", "chat"}}),
                     kv("gen_ai.request.model", {{"stringValue", "chat-72b"}}),
                     kv("server.address", {{"stringValue", address}}),
                     kv("server.port", {{"intValue", "8000"}}),
                     kv("http.response.status_code", {{"intValue", QString::number(status)}})};
    arr.append(QJsonObject{{"traceId", "0102030405060708090a0b0c0d0e0f10"},
                           {"spanId", "0102030405060708"},
                           {"name", "chat chat-72b"},
                           {"kind", 3},
                           {"startTimeUnixNano", QString::number(end - 80'000'000LL)},
                           {"endTimeUnixNano", QString::number(end)},
                           {"attributes", attrs}});
  }
  QJsonObject rs{{"scopeSpans", QJsonArray{QJsonObject{{"spans", arr}}}}};
  if (!service.isEmpty())
    rs["resource"] =
        QJsonObject{{"attributes", QJsonArray{kv("service.name", {{"stringValue", service}})}}};
  return QJsonDocument(QJsonObject{{"resourceSpans", QJsonArray{rs}}})
      .toJson(QJsonDocument::Compact);
}

// The HTTP status of a POST of `body` to /v1/traces (0 when nothing answered within 5 s).
inline int post(QNetworkAccessManager& nam, quint16 port, const QByteArray& body) {
  QNetworkRequest req(QUrl(QString("http://127.0.0.1:%1/v1/traces").arg(port)));
  req.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
  std::unique_ptr<QNetworkReply> reply(nam.post(req, body));
  QSignalSpy done(reply.get(), &QNetworkReply::finished);
  if (!done.wait(5000)) return 0;
  return reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
}

}  // namespace spillway::livetest
