// The OTLP/HTTP receiver over real loopback sockets: JSON, protobuf (built here by a tiny
// encoder) and gzip requests mapped to calls; partialSuccess; every error status; truncated
// bodies, a slow-drip client, a connection cap and a flood against a small intake queue, with
// every acknowledged call counted into the sink; chunked bodies in the HTTP parser; and the
// real OpenTelemetry JS SDK (tests/peers/otel) exporting JSON and protobuf.
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <map>
#include <memory>
#include <set>

#include <zlib.h>

#include "raw_http_client.hpp"
#include "require_peer.hpp"
#include "spillway/formats/otlp_protobuf.hpp"
#include "spillway/live/otlp_receiver.hpp"

using namespace spillway;
using live::OtlpReceiver;
using live::OtlpReceiverOptions;

namespace {

// ---- a tiny protobuf encoder (the test's own, independent of the decoder) ----
std::string varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string fieldLen(int f, const std::string& bytes) {
  return varint(static_cast<std::uint64_t>(f) << 3 | 2) + varint(bytes.size()) + bytes;
}
std::string fieldVarint(int f, std::uint64_t v) {
  return varint(static_cast<std::uint64_t>(f) << 3) + varint(v);
}
std::string fieldFixed64(int f, std::uint64_t v) {
  std::string out = varint(static_cast<std::uint64_t>(f) << 3 | 1);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  return out;
}
std::string kvString(const std::string& k, const std::string& v) {
  return fieldLen(1, k) + fieldLen(2, fieldLen(1, v));
}
std::string kvInt(const std::string& k, std::int64_t v) {
  return fieldLen(1, k) + fieldLen(2, fieldVarint(3, static_cast<std::uint64_t>(v)));
}

// A GenAI span as the tests describe it.
struct TestSpan {
  std::string model = "chat-72b";
  std::string address = "10.0.0.5";
  int port = 8000;
  std::uint64_t startNs = 1'700'000'000'000'000'000ULL;
  std::uint64_t durNs = 250'000'000;
  int httpStatus = 0;     // 0: none
  std::string errorType;  // "" : none
  int statusCode = 0;
  std::int64_t in = 12, out = 34;
  bool genai = true;
};

std::string protoSpan(const TestSpan& s) {
  std::string attrs;
  if (s.genai) {
    attrs += fieldLen(9, kvString("gen_ai.operation.name", "chat"));
    attrs += fieldLen(9, kvString("gen_ai.request.model", s.model));
    attrs += fieldLen(9, kvString("server.address", s.address));
    // Value before key, as any field order is legal on the wire.
    attrs += fieldLen(9, fieldLen(2, fieldVarint(3, static_cast<std::uint64_t>(s.port))) +
                             fieldLen(1, "server.port"));
    attrs += fieldLen(9, kvInt("gen_ai.usage.input_tokens", s.in));
    attrs += fieldLen(9, kvInt("gen_ai.usage.output_tokens", s.out));
    if (s.httpStatus) attrs += fieldLen(9, kvInt("http.response.status_code", s.httpStatus));
    if (!s.errorType.empty()) attrs += fieldLen(9, kvString("error.type", s.errorType));
    // An attribute the mapping does not read, with an array value: skipped.
    attrs += fieldLen(9, fieldLen(1, "gen_ai.response.finish_reasons") +
                             fieldLen(2, fieldLen(5, fieldLen(1, fieldLen(1, "stop")))));
  } else {
    attrs += fieldLen(9, kvString("http.route", "/health"));
  }
  std::string span = fieldLen(1, std::string(16, '\x01')) + fieldLen(2, std::string(8, '\x02')) +
                     fieldLen(5, "chat " + s.model) + fieldVarint(6, 3) +
                     fieldFixed64(7, s.startNs) + fieldFixed64(8, s.startNs + s.durNs) + attrs;
  if (s.statusCode) span += fieldLen(15, fieldLen(2, "failed") + fieldVarint(3, s.statusCode));
  span += fieldLen(11, fieldFixed64(1, 5) + fieldLen(2, "event"));  // an event: unknown, skipped
  return span;
}

// ExportTraceServiceRequest with one resource (service.name) and one scope; the resource is
// written after the spans (legal, and the decoder must still see it).
std::string protoRequest(const std::vector<TestSpan>& spans, const std::string& service = "svc") {
  std::string scope = fieldLen(1, fieldLen(1, "lib"));
  for (const auto& s : spans) scope += fieldLen(2, protoSpan(s));
  const std::string rs =
      fieldLen(2, scope) + fieldLen(1, fieldLen(1, kvString("service.name", service)));
  return fieldLen(1, rs);
}

QJsonObject jsonKv(const QString& k, const QJsonObject& v) {
  return QJsonObject{{"key", k}, {"value", v}};
}

std::string jsonRequest(const std::vector<TestSpan>& spans, const std::string& service = "svc") {
  QJsonArray arr;
  for (const auto& s : spans) {
    QJsonArray attrs;
    if (s.genai) {
      attrs.append(jsonKv("gen_ai.operation.name", {{"stringValue", "chat"}}));
      attrs.append(
          jsonKv("gen_ai.request.model", {{"stringValue", QString::fromStdString(s.model)}}));
      attrs.append(jsonKv("server.address", {{"stringValue", QString::fromStdString(s.address)}}));
      attrs.append(jsonKv("server.port", {{"intValue", QString::number(s.port)}}));
      attrs.append(jsonKv("gen_ai.usage.input_tokens", {{"intValue", QString::number(s.in)}}));
      attrs.append(jsonKv("gen_ai.usage.output_tokens", {{"intValue", QString::number(s.out)}}));
      if (s.httpStatus)
        attrs.append(
            jsonKv("http.response.status_code", {{"intValue", QString::number(s.httpStatus)}}));
      if (!s.errorType.empty())
        attrs.append(jsonKv("error.type", {{"stringValue", QString::fromStdString(s.errorType)}}));
    } else {
      attrs.append(jsonKv("http.route", {{"stringValue", "/health"}}));
    }
    QJsonObject sp{{"traceId", "0102030405060708090a0b0c0d0e0f10"},
                   {"spanId", "0102030405060708"},
                   {"name", QString::fromStdString("chat " + s.model)},
                   {"kind", 3},
                   {"startTimeUnixNano", QString::number(s.startNs)},
                   {"endTimeUnixNano", QString::number(s.startNs + s.durNs)},
                   {"attributes", attrs}};
    if (s.statusCode) sp.insert("status", QJsonObject{{"code", s.statusCode}});
    arr.append(sp);
  }
  QJsonObject res{
      {"attributes",
       QJsonArray{jsonKv("service.name", {{"stringValue", QString::fromStdString(service)}})}}};
  QJsonObject rs{{"resource", res},
                 {"scopeSpans", QJsonArray{QJsonObject{{"scope", QJsonObject{{"name", "lib"}}},
                                                       {"spans", arr}}}}};
  return QJsonDocument(QJsonObject{{"resourceSpans", QJsonArray{rs}}})
      .toJson(QJsonDocument::Compact)
      .toStdString();
}

std::string gzip(const std::string& in) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, in.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

QByteArray httpPost(const std::string& body, const QByteArray& contentType,
                    const QByteArray& extra = {}, const QByteArray& path = "/v1/traces") {
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " + contentType +
         "\r\nContent-Length: " + QByteArray::number(static_cast<qint64>(body.size())) + "\r\n" +
         extra + "\r\n" + QByteArray::fromStdString(body);
}

using Answer = spillway::testing::HttpAnswer;
using RawClient = spillway::testing::RawHttpClient;

// A receiver on a free loopback port whose sink keeps every call.
struct Rig {
  explicit Rig(OtlpReceiverOptions o = {}) {
    o.port = 0;
    rx = std::make_unique<OtlpReceiver>(o,
                                        [this](const formats::SpanCall& c) { calls.push_back(c); });
    ok = rx->start();
  }
  quint16 port() const { return rx->port(); }
  std::vector<formats::SpanCall> calls;
  std::unique_ptr<OtlpReceiver> rx;
  bool ok = false;
};

// The partialSuccess of a protobuf ExportTraceServiceResponse, read by hand.
std::pair<std::uint64_t, std::string> protoPartial(const QByteArray& b) {
  std::pair<std::uint64_t, std::string> out{0, ""};
  if (b.size() < 2 || b[0] != 0x0A) return out;
  qsizetype i = 2;  // short messages: one-byte length
  while (i < b.size()) {
    const int tag = static_cast<unsigned char>(b[i++]);
    if (tag == 0x08) {
      std::uint64_t v = 0;
      int shift = 0;
      while (i < b.size()) {
        const auto c = static_cast<unsigned char>(b[i++]);
        v |= static_cast<std::uint64_t>(c & 0x7F) << shift;
        shift += 7;
        if (!(c & 0x80)) break;
      }
      out.first = v;
    } else if (tag == 0x12) {
      std::uint64_t len = 0;
      int shift = 0;
      while (i < b.size()) {
        const auto c = static_cast<unsigned char>(b[i++]);
        len |= static_cast<std::uint64_t>(c & 0x7F) << shift;
        shift += 7;
        if (!(c & 0x80)) break;
      }
      out.second = b.mid(i, static_cast<qsizetype>(len)).toStdString();
      i += static_cast<qsizetype>(len);
    } else {
      break;
    }
  }
  return out;
}

TestSpan badUtf8Span() {
  TestSpan s;
  s.model = "\xff\xfe";
  return s;
}

std::vector<TestSpan> mixedSpans() {
  std::vector<TestSpan> v(4);
  v[1].httpStatus = 503;
  v[1].statusCode = 2;
  v[1].port = 8001;
  v[2].errorType = "TimeoutError";
  v[2].statusCode = 2;
  v[2].startNs += 1'000'000;
  v[3].genai = false;  // not a call
  return v;
}

// Every field of a call, for comparing two runs call by call.
std::string describe(const formats::SpanCall& c) {
  return c.instance + "|" + c.model + "|" + c.tenant + "|" + c.session + "|" +
         std::to_string(c.ts) + "|" + std::to_string(c.latency) + "|" + std::to_string(c.status) +
         "|" + std::to_string(static_cast<int>(c.outcome)) + "|" + std::to_string(c.hasOutcome) +
         "|" + std::to_string(c.tokensIn) + "|" + std::to_string(c.tokensOut);
}

// `n` spans of one client, 1 ms apart from `fromNs`.
std::vector<TestSpan> spanRun(std::size_t n, std::uint64_t fromNs) {
  std::vector<TestSpan> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i].startNs = fromNs + i * 1'000'000;
    v[i].address = "10.0.0." + std::to_string(i % 4);
    v[i].httpStatus = i % 9 == 0 ? 503 : 200;
  }
  return v;
}

// Twelve pipelined requests whose answers all differ: protobuf, JSON, gzip, shed by a full
// queue of 1000 calls (the sink paused), partial (an invalid span, spans that are not calls,
// an instance the bound refuses), bad bodies and a wrong path. Decoding them on other threads
// must change nothing the client or the sink can see.
QByteArray orderScript() {
  const std::uint64_t t = 1'700'000'000'000'000'000ULL;
  auto invalid = spanRun(50, t + 4'000'000'000ULL);
  invalid[7].port = 70000;
  auto refused = spanRun(50, t + 5'000'000'000ULL);
  for (std::size_t i = 0; i < refused.size(); i += 5) refused[i].address = "10.0.0.9";
  std::vector<TestSpan> notCalls(3);
  for (auto& s : notCalls) s.genai = false;
  const QByteArray proto = "application/x-protobuf", json = "application/json";
  const QByteArray gz = "Content-Encoding: gzip\r\n";
  return httpPost(protoRequest(spanRun(300, t), "a"), proto) +
         httpPost(jsonRequest(spanRun(300, t + 1'000'000'000ULL), "b"), json) +
         httpPost(gzip(protoRequest(spanRun(300, t + 2'000'000'000ULL), "c")), proto, gz) +
         httpPost(protoRequest(spanRun(300, t + 3'000'000'000ULL), "d"), proto) +  // 429
         httpPost(protoRequest(invalid, "e"), proto) + httpPost("\xff\xff\xff", proto) +
         httpPost(protoRequest(spanRun(5, t), "f"), proto, {}, "/v1/metrics") +
         httpPost("not gzip", json, gz) + httpPost(protoRequest(refused, "g"), proto) +
         httpPost(jsonRequest(notCalls, "h"), json) +
         httpPost(protoRequest(spanRun(20, t + 6'000'000'000ULL), "i"), proto) +  // 429
         httpPost("", proto);
}
constexpr int kScriptRequests = 12;

struct ScriptRun {
  std::vector<std::pair<int, QByteArray>> answers;
  std::vector<std::string> calls;
};

}  // namespace

class TstOtlpReceiver : public QObject {
  Q_OBJECT

 private:
  void checkMixed(const std::vector<formats::SpanCall>& calls) {
    QCOMPARE(calls.size(), std::size_t{3});
    QCOMPARE(calls[0].instance, std::string("10.0.0.5:8000"));
    QCOMPARE(calls[0].model, std::string("chat-72b"));
    QCOMPARE(calls[0].status, 200);
    QCOMPARE(calls[0].outcome, Outcome::Ok);
    QCOMPARE(calls[0].tokensIn, std::int64_t{12});
    QCOMPARE(calls[0].tokensOut, std::int64_t{34});
    QCOMPARE(calls[0].tenant, std::string("svc"));
    QCOMPARE(calls[0].ts, Micros{1'700'000'000'000'000LL});
    QCOMPARE(calls[0].latency, Micros{250'000});
    QCOMPARE(calls[1].instance, std::string("10.0.0.5:8001"));
    QCOMPARE(calls[1].status, 503);
    QCOMPARE(calls[2].status, 0);  // failed, no HTTP status
    QCOMPARE(calls[2].outcome, Outcome::Timeout);
  }

  // orderScript() on one connection, with bodies decoded on `threads` threads.
  void runScript(int threads, ScriptRun& out) {
    OtlpReceiverOptions o;
    o.decodeThreads = threads;
    o.maxQueuedCalls = 1000;
    Rig rig(o);
    QVERIFY(rig.ok);
    rig.rx->admit = [](const formats::SpanCall& c) { return c.instance != "10.0.0.9:8000"; };
    rig.rx->setPaused(true);
    RawClient c(rig.port());
    QVERIFY(c.connected());
    c.send(orderScript());
    for (int k = 0; k < kScriptRequests; ++k) {
      const Answer a = c.next();
      QVERIFY2(a.status, qPrintable(QString("answer %1 of %2").arg(k + 1).arg(kScriptRequests)));
      out.answers.emplace_back(a.status, a.body);
    }
    rig.rx->setPaused(false);
    QTRY_COMPARE(rig.rx->queued(), std::size_t{0});
    QCOMPARE(rig.rx->stats().callsApplied, rig.rx->stats().callsAcked);
    for (const auto& call : rig.calls) out.calls.push_back(describe(call));
  }

 private slots:
  void jsonMapped() {
    Rig rig;
    QVERIFY(rig.ok);
    RawClient c(rig.port());
    QVERIFY(c.connected());
    const Answer a = c.exchange(httpPost(jsonRequest(mixedSpans()), "application/json"));
    QCOMPARE(a.status, 200);
    QCOMPARE(a.headers.at("content-type"), QByteArray("application/json"));
    const QJsonObject ps =
        QJsonDocument::fromJson(a.body).object().value("partialSuccess").toObject();
    QCOMPARE(ps.value("rejectedSpans").toString(), QString("1"));
    QVERIFY2(ps.value("errorMessage").toString().contains("not GenAI calls"), a.body.constData());
    QTRY_COMPARE(rig.calls.size(), std::size_t{3});
    checkMixed(rig.calls);
    QCOMPARE(rig.rx->stats().callsAcked, rig.rx->stats().callsApplied);
  }

  void protobufMapped() {
    Rig rig;
    QVERIFY(rig.ok);
    RawClient c(rig.port());
    QVERIFY(c.connected());
    const Answer a = c.exchange(httpPost(protoRequest(mixedSpans()), "application/x-protobuf"));
    QCOMPARE(a.status, 200);
    QCOMPARE(a.headers.at("content-type"), QByteArray("application/x-protobuf"));
    const auto [rejected, msg] = protoPartial(a.body);
    QCOMPARE(rejected, std::uint64_t{1});
    QVERIFY(QString::fromStdString(msg).contains("not GenAI calls"));
    QTRY_COMPARE(rig.calls.size(), std::size_t{3});
    checkMixed(rig.calls);
    // A fully mapped request: an empty response (no partialSuccess).
    std::vector<TestSpan> good(2);
    const Answer b = c.exchange(httpPost(protoRequest(good), "application/x-protobuf"));
    QCOMPARE(b.status, 200);
    QCOMPARE(b.body.size(), 0);
    QTRY_COMPARE(rig.calls.size(), std::size_t{5});
  }

  void invalidSpanIsPartial() {
    Rig rig;
    QVERIFY(rig.ok);
    std::vector<TestSpan> spans(3);
    spans[1].port = 70000;  // server.port out of range: the span is invalid, the others count
    RawClient c(rig.port());
    QVERIFY(c.connected());
    for (const bool proto : {false, true}) {
      const Answer a =
          c.exchange(proto ? httpPost(protoRequest(spans), "application/x-protobuf")
                           : httpPost(jsonRequest(spans), "application/json; charset=utf-8"));
      QCOMPARE(a.status, 200);
      const std::string msg =
          proto ? protoPartial(a.body).second
                : QJsonDocument::fromJson(a.body)["partialSuccess"]["errorMessage"]
                      .toString()
                      .toStdString();
      QVERIFY2(msg.find("1 invalid span(s), first: resourceSpans[0].scopeSpans[0].spans[1]."
                        "server.port: expected a port") != std::string::npos,
               msg.c_str());
    }
    QTRY_COMPARE(rig.calls.size(), std::size_t{4});
  }

  void gzipBodies() {
    OtlpReceiverOptions o;
    o.maxInflatedBytes = 64 * 1024;
    Rig rig(o);
    QVERIFY(rig.ok);
    RawClient c(rig.port());
    QVERIFY(c.connected());
    const Answer a = c.exchange(httpPost(gzip(jsonRequest(mixedSpans())), "application/json",
                                         "Content-Encoding: gzip\r\n"));
    QCOMPARE(a.status, 200);
    const Answer b = c.exchange(httpPost(gzip(protoRequest(mixedSpans())), "application/x-protobuf",
                                         "Content-Encoding: gzip\r\n"));
    QCOMPARE(b.status, 200);
    QTRY_COMPARE(rig.calls.size(), std::size_t{6});
    // Two gzip members (RFC 1952): both inflated. Only the first was read, the second's spans
    // acknowledged with 200 and dropped. Bytes after a member that are not one: 400.
    const std::string member = gzip(protoRequest(mixedSpans()));
    QCOMPARE(c.exchange(
                  httpPost(member + member, "application/x-protobuf", "Content-Encoding: gzip\r\n"))
                 .status,
             200);
    QTRY_COMPARE(rig.calls.size(), std::size_t{12});
    QCOMPARE(c.exchange(
                  httpPost(member + "junk", "application/x-protobuf", "Content-Encoding: gzip\r\n"))
                 .status,
             400);
    QCOMPARE(rig.calls.size(), std::size_t{12});
    // A bomb: 1 MiB of zeros inflates past the 64 KiB bound → 413, and the server goes on.
    const Answer bomb = c.exchange(httpPost(
        gzip(std::string(1 << 20, '\0')), "application/x-protobuf", "Content-Encoding: gzip\r\n"));
    QCOMPARE(bomb.status, 413);
    std::string cut = gzip(jsonRequest(mixedSpans()));
    cut.resize(cut.size() / 2);
    QCOMPARE(c.exchange(httpPost(cut, "application/json", "Content-Encoding: gzip\r\n")).status,
             400);
    QCOMPARE(c.exchange(httpPost("xx", "application/json", "Content-Encoding: br\r\n")).status,
             415);
    QCOMPARE(c.exchange(httpPost(jsonRequest(mixedSpans()), "application/json")).status, 200);
  }

  void errorStatuses_data() {
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("header");  // must be present in the answer
    const std::string json = jsonRequest(mixedSpans());
    QTest::newRow("GET") << QByteArray("GET /v1/traces HTTP/1.1\r\nHost: x\r\n\r\n") << 405
                         << QByteArray("allow");
    QTest::newRow("other path") << httpPost(json, "application/json", {}, "/v1/metrics") << 404
                                << QByteArray();
    QTest::newRow("text/plain") << httpPost(json, "text/plain") << 415 << QByteArray();
    QTest::newRow("no content type")
        << QByteArray("POST /v1/traces HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}") << 415
        << QByteArray();
    QTest::newRow("invalid JSON") << httpPost("{\"resourceSpans\":[", "application/json") << 400
                                  << QByteArray();
    QTest::newRow("JSON not a request")
        << httpPost("[1,2]", "application/json") << 400 << QByteArray();
    QTest::newRow("resourceSpans not an array")
        << httpPost("{\"resourceSpans\":{}}", "application/json") << 400 << QByteArray();
    QTest::newRow("protobuf truncated varint")
        << httpPost("\x0a\x80", "application/x-protobuf") << 400 << QByteArray();
    QTest::newRow("protobuf length past the end")
        << httpPost(std::string("\x0a\x7f\x12\x00", 4), "application/x-protobuf") << 400
        << QByteArray();
    QTest::newRow("protobuf group wire type")
        << httpPost("\x0b", "application/x-protobuf") << 400 << QByteArray();
    QTest::newRow("protobuf bad UTF-8")
        << httpPost(protoRequest({badUtf8Span()}), "application/x-protobuf") << 400 << QByteArray();
    QTest::newRow("too large")
        << QByteArray(
               "POST /v1/traces HTTP/1.1\r\nContent-Type: application/json\r\n"
               "Content-Length: 999999999\r\n\r\n")
        << 413 << QByteArray();
    QTest::newRow("chunked too large")
        << QByteArray(
               "POST /v1/traces HTTP/1.1\r\nContent-Type: application/json\r\n"
               "Transfer-Encoding: chunked\r\n\r\nfffffff\r\n")
        << 413 << QByteArray();
    QTest::newRow("chunked and length")
        << QByteArray(
               "POST /v1/traces HTTP/1.1\r\nContent-Type: application/json\r\n"
               "Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n")
        << 400 << QByteArray();
  }
  void errorStatuses() {
    QFETCH(QByteArray, request);
    QFETCH(int, status);
    QFETCH(QByteArray, header);
    OtlpReceiverOptions o;
    o.limits.maxBodyBytes = 1024 * 1024;
    Rig rig(o);
    QVERIFY(rig.ok);
    RawClient c(rig.port());
    QVERIFY(c.connected());
    const Answer a = c.exchange(request);
    QCOMPARE(a.status, status);
    if (!header.isEmpty()) QVERIFY(a.headers.count(header));
    QVERIFY(a.headers.at("content-type").startsWith("application/"));
    // The server keeps serving, on a new connection.
    RawClient d(rig.port());
    QVERIFY(d.connected());
    QCOMPARE(d.exchange(httpPost(jsonRequest(mixedSpans()), "application/json")).status, 200);
    QTRY_COMPARE(rig.calls.size(), std::size_t{3});
  }

  void bearerToken() {
    OtlpReceiverOptions o;
    o.bearerToken = "s3cret";
    Rig rig(o);
    QVERIFY(rig.ok);
    const std::string body = jsonRequest(mixedSpans());
    RawClient c(rig.port());
    QVERIFY(c.connected());
    Answer a = c.exchange(httpPost(body, "application/json"));
    QCOMPARE(a.status, 401);
    QVERIFY(a.headers.count("www-authenticate"));
    QCOMPARE(
        c.exchange(httpPost(body, "application/json", "Authorization: Bearer s3cre\r\n")).status,
        401);
    QCOMPARE(
        c.exchange(httpPost(body, "application/json", "Authorization: Bearer s3cret\r\n")).status,
        200);
    QTRY_COMPARE(rig.calls.size(), std::size_t{3});
  }

  void chunkedAtEverySplit() {
    // Node's exporter streams chunked bodies: the parser must decode them at any split point.
    const std::string body = jsonRequest(mixedSpans());
    QByteArray raw =
        "POST /v1/traces HTTP/1.1\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n";
    const std::size_t half = body.size() / 2;
    raw += QByteArray::number(static_cast<qint64>(half), 16) + ";ext=1\r\n" +
           QByteArray::fromStdString(body.substr(0, half)) + "\r\n";
    raw += QByteArray::number(static_cast<qint64>(body.size() - half), 16) + "\r\n" +
           QByteArray::fromStdString(body.substr(half)) + "\r\n0\r\nX-Trailer: 1\r\n\r\n";
    live::HttpLimits lim;
    lim.chunkedBodies = true;
    for (qsizetype split = 0; split <= raw.size(); ++split) {
      live::HttpRequestParser p(lim);
      auto st = p.feed(std::string_view(raw.constData(), split));
      if (st != live::HttpRequestParser::State::Ready)
        st = p.feed(std::string_view(raw.constData() + split, raw.size() - split));
      QCOMPARE(st, live::HttpRequestParser::State::Ready);
      QCOMPARE(p.take().body, body);
    }
    // Off (the fake instances): 501 as before.
    live::HttpRequestParser off;
    QCOMPARE(off.feed(std::string_view(raw.constData(), raw.size())),
             live::HttpRequestParser::State::Error);
    QCOMPARE(off.errorStatus(), 501);
    // Over the wire, pipelined behind a Content-Length request on the same connection.
    Rig rig;
    QVERIFY(rig.ok);
    RawClient c(rig.port());
    QVERIFY(c.connected());
    c.send(httpPost(body, "application/json") + raw);
    QCOMPARE(c.next().status, 200);
    QCOMPARE(c.next().status, 200);
    QTRY_COMPARE(rig.calls.size(), std::size_t{6});
  }

  void protobufDecodesAsJsonSpanBySpan() {
    // The protobuf decoder reuses one span and its attributes from span to span; a span must
    // never see what the one before it had. 300 spans whose attribute sets change from one to
    // the next (status, error type, span status, long and short strings, invalid ports, spans
    // that are not calls) decode to exactly what the independent JSON decoder gives.
    std::vector<TestSpan> spans(300);
    for (std::size_t i = 0; i < spans.size(); ++i) {
      TestSpan& s = spans[i];
      s.startNs += i * 1'000'000;
      s.durNs = 1'000'000 * (1 + i % 13);
      s.model = i % 4 == 0 ? "a-model-name-longer-than-fifteen-bytes" : "m" + std::to_string(i % 3);
      s.address = i % 5 == 0 ? "gateway-upstream-" + std::to_string(i) + ".example" : "10.0.0.7";
      s.port = i % 17 == 3 ? 70000 : 8000 + static_cast<int>(i % 3);  // 70000: invalid span
      s.httpStatus = i % 3 == 0 ? (i % 2 ? 503 : 200) : 0;
      s.errorType = i % 7 == 0 ? "timeout" : i % 7 == 1 ? "429" : "";
      s.statusCode = i % 11 == 0 ? 2 : 0;
      s.in = static_cast<std::int64_t>(i);
      s.out = static_cast<std::int64_t>(i * 2);
      s.genai = i % 9 != 4;
    }
    formats::OtlpBatch proto, json;
    std::string err;
    QVERIFY2(formats::decodeOtlpProtobuf(protoRequest(spans), proto, err), err.c_str());
    formats::decodeOtlpJson(jsonRequest(spans), json, "body");
    QCOMPARE(proto.spans, json.spans);
    QCOMPARE(proto.notCalls, json.notCalls);
    QCOMPARE(proto.invalid, json.invalid);
    QVERIFY(proto.notCalls > 0 && proto.invalid > 0);
    QCOMPARE(proto.firstError, json.firstError);
    QCOMPARE(proto.calls.size(), json.calls.size());
    for (std::size_t i = 0; i < proto.calls.size(); ++i) {
      const formats::SpanCall &a = proto.calls[i], &b = json.calls[i];
      QCOMPARE(a.ts, b.ts);
      QCOMPARE(a.latency, b.latency);
      QCOMPARE(a.status, b.status);
      QCOMPARE(a.outcome, b.outcome);
      QCOMPARE(a.hasOutcome, b.hasOutcome);
      QCOMPARE(a.instance, b.instance);
      QCOMPARE(a.model, b.model);
      QCOMPARE(a.tenant, b.tenant);
      QCOMPARE(a.tokensIn, b.tokensIn);
      QCOMPARE(a.tokensOut, b.tokensOut);
    }
  }

  void truncatedProtobufNeverCrashes() {
    // Every prefix of a valid request, and every single-byte corruption of it, either decodes
    // to a consistent batch (each span a call, not a call, or invalid with its error named) or
    // fails with a named error; never a crash, never a silent half-result.
    const std::string full = protoRequest(mixedSpans());
    auto check = [](std::string_view input, const QString& what, bool& ok) {
      formats::OtlpBatch b;
      std::string err;
      ok = formats::decodeOtlpProtobuf(input, b, err);
      if (!ok) {
        QVERIFY2(!err.empty(), qPrintable(what + ": failed without naming why"));
        return;
      }
      QVERIFY2(err.empty(),
               qPrintable(what + ": succeeded with an error: " + QString::fromStdString(err)));
      QVERIFY2(b.calls.size() + b.notCalls + b.invalid == b.spans,
               qPrintable(what + ": spans not accounted for"));
      QVERIFY2(b.invalid == 0 || !b.firstError.empty(),
               qPrintable(what + ": an invalid span without its error"));
    };
    std::size_t errors = 0;
    for (std::size_t n = 0; n < full.size(); ++n) {
      bool ok = false;
      check(std::string_view(full).substr(0, n), QString("prefix %1").arg(n), ok);
      if (QTest::currentTestFailed()) return;
      errors += !ok;
    }
    QVERIFY(errors > full.size() / 2);
    bool wholeOk = false;
    check(full, "the whole request", wholeOk);
    QVERIFY(wholeOk);
    for (std::size_t i = 0; i < full.size(); ++i) {
      std::string bad = full;
      bad[i] = static_cast<char>(bad[i] ^ 0xA5);
      bool ok = false;
      check(bad, QString("byte %1 corrupted").arg(i), ok);
      if (QTest::currentTestFailed()) return;
    }
  }

  void truncatedBody() {
    // The client promises 1000 bytes, sends 10 and goes away: nothing is acknowledged, nothing
    // reaches the sink, and the server keeps serving.
    Rig rig;
    QVERIFY(rig.ok);
    {
      RawClient c(rig.port());
      QVERIFY(c.connected());
      c.send(
          "POST /v1/traces HTTP/1.1\r\nContent-Type: application/json\r\n"
          "Content-Length: 1000\r\n\r\n{\"resource");
      QTest::qWait(100);
      c.sock.disconnectFromHost();
      QTRY_VERIFY(c.closed || c.sock.state() == QAbstractSocket::UnconnectedState);
    }
    RawClient d(rig.port());
    QVERIFY(d.connected());
    QCOMPARE(d.exchange(httpPost(jsonRequest(mixedSpans()), "application/json")).status, 200);
    QTRY_COMPARE(rig.calls.size(), std::size_t{3});
    QCOMPARE(rig.rx->stats().accepted, std::uint64_t{1});
  }

  void slowDripTimesOut() {
    // A head dripped a byte every 200 ms is cut off by the header timeout (408, named), while
    // another client is served; the timing itself is bench/'s business, not asserted here.
    OtlpReceiverOptions o;
    o.headerTimeoutMs = 1000;
    Rig rig(o);
    QVERIFY(rig.ok);
    RawClient slow(rig.port());
    QVERIFY(slow.connected());
    const QByteArray drip = httpPost(jsonRequest(mixedSpans()), "application/json");
    qsizetype sent = 0;
    QTimer t;
    QObject::connect(&t, &QTimer::timeout, [&] {
      if (sent < drip.size() && slow.sock.state() == QAbstractSocket::ConnectedState)
        slow.send(drip.mid(sent++, 1));  // a byte every 200 ms
    });
    t.start(200);
    // Others are served meanwhile.
    RawClient other(rig.port());
    QVERIFY(other.connected());
    for (int i = 0; i < 3; ++i) {
      QCOMPARE(other.exchange(httpPost(jsonRequest(mixedSpans()), "application/json")).status, 200);
      QTest::qWait(150);
    }
    const Answer a = slow.next(10000);
    QCOMPARE(a.status, 408);
    QVERIFY2(a.body.contains("header"), a.body.constData());
    QVERIFY(sent < drip.size());  // cut off before the request was whole
    QTRY_VERIFY(slow.closed);
    t.stop();
    QCOMPARE(rig.rx->stats().timeouts, std::uint64_t{1});
    QCOMPARE(rig.rx->stats().accepted, std::uint64_t{3});
    QCOMPARE(other.exchange(httpPost(jsonRequest(mixedSpans()), "application/json")).status, 200);
  }

  void idleConnectionClosed() {
    OtlpReceiverOptions o;
    o.idleTimeoutMs = 300;
    Rig rig(o);
    QVERIFY(rig.ok);
    RawClient c(rig.port());
    QVERIFY(c.connected());
    QCOMPARE(c.exchange(httpPost(jsonRequest(mixedSpans()), "application/json")).status, 200);
    QTRY_VERIFY_WITH_TIMEOUT(c.closed, 3000);
    QCOMPARE(rig.rx->stats().timeouts, std::uint64_t{0});
  }

  void connectionCap() {
    OtlpReceiverOptions o;
    o.maxConnections = 2;
    Rig rig(o);
    QVERIFY(rig.ok);
    RawClient a(rig.port()), b(rig.port());
    QVERIFY(a.connected() && b.connected());
    QTest::qWait(50);
    RawClient c(rig.port());
    const Answer refused = c.next(5000);
    QCOMPARE(refused.status, 503);
    QCOMPARE(refused.headers.at("retry-after"), QByteArray("1"));
    QCOMPARE(a.exchange(httpPost(jsonRequest(mixedSpans()), "application/json")).status, 200);
  }

  void queueFullSheds() {
    // A paused sink: the queue fills, the next request is shed with 429 + Retry-After before
    // anything of it is acknowledged; once drained, everything acknowledged is there.
    OtlpReceiverOptions o;
    o.maxQueuedCalls = 1000;
    Rig rig(o);
    QVERIFY(rig.ok);
    rig.rx->setPaused(true);
    std::vector<TestSpan> batch(512);
    for (std::size_t i = 0; i < batch.size(); ++i) batch[i].startNs += i * 1000;
    RawClient c(rig.port());
    QVERIFY(c.connected());
    QCOMPARE(c.exchange(httpPost(protoRequest(batch), "application/x-protobuf")).status, 200);
    const Answer shed = c.exchange(httpPost(protoRequest(batch), "application/x-protobuf"));
    QCOMPARE(shed.status, 429);
    QCOMPARE(shed.headers.at("retry-after"), QByteArray("1"));
    QCOMPARE(rig.rx->queued(), std::size_t{512});
    rig.rx->setPaused(false);
    QTRY_COMPARE(rig.calls.size(), std::size_t{512});
    QCOMPARE(c.exchange(httpPost(protoRequest(batch), "application/x-protobuf")).status, 200);
    QTRY_COMPARE(rig.calls.size(), std::size_t{1024});
  }

  void floodNothingAcknowledgedIsLost() {
    // 16 keep-alive clients send 512-call batches back to back against a 4096-call queue
    // drained 256 calls per turn: some requests are shed, and exactly the calls of the 200s
    // reach the sink.
    OtlpReceiverOptions o;
    o.maxQueuedCalls = 4096;
    o.drainPerTurn = 256;
    Rig rig(o);
    QVERIFY(rig.ok);
    std::vector<TestSpan> batch(512);
    const QByteArray req = httpPost(protoRequest(batch), "application/x-protobuf");
    constexpr int kClients = 16, kPerClient = 12;
    std::vector<std::unique_ptr<RawClient>> clients;
    for (int i = 0; i < kClients; ++i) {
      clients.push_back(std::make_unique<RawClient>(rig.port()));
      QVERIFY(clients.back()->connected());
    }
    std::map<int, int> statuses;
    std::uint64_t ackedCalls = 0;
    // Each client pipelines its requests in one write: a true flood.
    for (auto& c : clients) {
      QByteArray all;
      for (int k = 0; k < kPerClient; ++k) all += req;
      c->send(all);
    }
    for (auto& c : clients)
      for (int k = 0; k < kPerClient; ++k) {
        const Answer a = c->next(20000);
        ++statuses[a.status];
        if (a.status == 200) ackedCalls += 512;
        if (a.status == 429) QVERIFY(a.headers.count("retry-after"));
      }
    QCOMPARE(statuses[200] + statuses[429], kClients * kPerClient);
    QVERIFY2(statuses[429] > 0, "the flood should overrun a 4096-call queue");
    QVERIFY(statuses[200] > 0);
    QTRY_COMPARE(rig.calls.size(), ackedCalls);
    QCOMPARE(rig.rx->stats().callsAcked, ackedCalls);
    QCOMPARE(rig.rx->stats().callsApplied, ackedCalls);
    QVERIFY(rig.rx->stats().maxQueued <= 4096);
    qInfo("flood: %d answered 200, %d shed with 429; %llu calls acknowledged, all applied",
          statuses[200], statuses[429], static_cast<unsigned long long>(ackedCalls));
  }

  void decodeThreadsEqualSerial_data() {
    QTest::addColumn<int>("threads");
    QTest::newRow("1 thread") << 1;
    QTest::newRow("2 threads") << 2;
    QTest::newRow("3 threads") << 3;
  }
  void decodeThreadsEqualSerial() {
    // The same answers in the same order, and the same calls in the same order, as when the
    // receiver's own thread decodes.
    QFETCH(int, threads);
    ScriptRun serial, threaded;
    runScript(0, serial);
    if (QTest::currentTestFailed()) return;
    runScript(threads, threaded);
    if (QTest::currentTestFailed()) return;
    std::vector<int> statuses;
    for (const auto& a : serial.answers) statuses.push_back(a.first);
    QCOMPARE(statuses,
             (std::vector<int>{200, 200, 200, 429, 200, 400, 404, 400, 200, 200, 429, 200}));
    QCOMPARE(serial.calls.size(), std::size_t{300 + 300 + 300 + 49 + 40});
    QCOMPARE(threaded.answers.size(), serial.answers.size());
    for (std::size_t k = 0; k < serial.answers.size(); ++k) {
      QCOMPARE(threaded.answers[k].first, serial.answers[k].first);
      QCOMPARE(threaded.answers[k].second, serial.answers[k].second);
    }
    QCOMPARE(threaded.calls, serial.calls);
  }

  void connectionsKeepTheirOrder() {
    // Six clients pipeline eight requests each at once: every call of every acknowledged
    // request reaches the sink, and each client's calls in the order it sent them.
    OtlpReceiverOptions o;
    o.decodeThreads = 2;
    Rig rig(o);
    QVERIFY(rig.ok);
    constexpr int kClients = 6, kRequests = 8, kSpans = 64;
    std::vector<std::unique_ptr<RawClient>> clients;
    for (int i = 0; i < kClients; ++i) {
      clients.push_back(std::make_unique<RawClient>(rig.port()));
      QVERIFY(clients.back()->connected());
      QByteArray all;
      for (int k = 0; k < kRequests; ++k)
        all += httpPost(
            protoRequest(spanRun(kSpans, 1'700'000'000'000'000'000ULL + k * kSpans * 1'000'000ULL),
                         "client-" + std::to_string(i)),
            "application/x-protobuf");
      clients.back()->send(all);
    }
    for (auto& c : clients)
      for (int k = 0; k < kRequests; ++k) QCOMPARE(c->next().status, 200);
    constexpr std::size_t kAll = std::size_t{kClients} * kRequests * kSpans;
    QTRY_COMPARE(rig.calls.size(), kAll);
    QCOMPARE(rig.rx->stats().callsAcked, std::uint64_t{kAll});
    std::map<std::string, std::vector<Micros>> byClient;
    for (const auto& call : rig.calls) byClient[call.tenant].push_back(call.ts);
    QCOMPARE(byClient.size(), std::size_t{kClients});
    for (const auto& [client, ts] : byClient) {
      QCOMPARE(ts.size(), std::size_t{kRequests} * kSpans);
      for (std::size_t k = 0; k < ts.size(); ++k)
        QCOMPARE(ts[k], Micros{1'700'000'000'000'000LL} + static_cast<Micros>(k) * 1000);
    }
  }

  void decodingHoldsItsBytesAndConnection() {
    // A request with the decoders still counts in the buffer budget (another request that
    // would go past it is refused), and its connection is answered in order once it is back.
    OtlpReceiverOptions o;
    o.decodeThreads = 1;
    o.maxBufferedBytes = 200 * 1024;
    Rig rig(o);
    QVERIFY(rig.ok);
    rig.rx->setDecodersHeld(true);
    const QByteArray first = httpPost(protoRequest(spanRun(400, 1'700'000'000'000'000'000ULL)),
                                      "application/x-protobuf");
    const QByteArray second =
        httpPost(protoRequest(spanRun(10, 1'700'000'001'000'000'000ULL)), "application/json");
    QVERIFY(first.size() > 100 * 1024 && first.size() < 150 * 1024);
    RawClient a(rig.port());
    QVERIFY(a.connected());
    a.send(first + second);
    QTRY_COMPARE(rig.rx->decoding(), std::size_t{1});
    QVERIFY(rig.rx->bufferedBytes() >= static_cast<std::size_t>(first.size()) - 200);
    RawClient b(rig.port());
    QVERIFY(b.connected());
    const Answer refused =
        b.exchange(httpPost(std::string(100 * 1024, 'x'), "application/x-protobuf"));
    QCOMPARE(refused.status, 503);
    QCOMPARE(a.buf.size(), 0);  // nothing answered while its request is being decoded
    rig.rx->setDecodersHeld(false);
    QCOMPARE(a.next().status, 200);
    QCOMPARE(a.next().status, 400);  // the second: a protobuf body sent as JSON
    QTRY_COMPARE(rig.calls.size(), std::size_t{400});
    QTRY_COMPARE(rig.rx->bufferedBytes(), std::size_t{0});
    RawClient c(rig.port());
    QVERIFY(c.connected());
    QCOMPARE(c.exchange(first).status, 200);
    QTRY_COMPARE(rig.calls.size(), std::size_t{800});
  }

  void disconnectWhileDecoding() {
    // The client goes away while its request is being decoded: it is never answered, so none
    // of its calls are kept, and the receiver serves the next client as before.
    OtlpReceiverOptions o;
    o.decodeThreads = 1;
    Rig rig(o);
    QVERIFY(rig.ok);
    rig.rx->setDecodersHeld(true);
    {
      RawClient a(rig.port());
      QVERIFY(a.connected());
      a.send(httpPost(protoRequest(spanRun(50, 1'700'000'000'000'000'000ULL)),
                      "application/x-protobuf"));
      QTRY_COMPARE(rig.rx->decoding(), std::size_t{1});
      a.sock.abort();
    }
    QTRY_COMPARE(rig.rx->connections(), 0);
    rig.rx->setDecodersHeld(false);
    QTRY_COMPARE(rig.rx->decoding(), std::size_t{0});
    QCOMPARE(rig.rx->stats().accepted, std::uint64_t{0});
    QCOMPARE(rig.rx->stats().callsAcked, std::uint64_t{0});
    RawClient b(rig.port());
    QVERIFY(b.connected());
    QCOMPARE(b.exchange(httpPost(protoRequest(spanRun(50, 1'700'000'000'000'000'000ULL)),
                                 "application/x-protobuf"))
                 .status,
             200);
    QTRY_COMPARE(rig.calls.size(), std::size_t{50});
    QCOMPARE(rig.rx->stats().callsApplied, std::uint64_t{50});
  }

  void shutdownAnswersWhatIsBeingDecoded() {
    // Stopping while a request is with the decoders: it is answered (Connection: close) before
    // the receiver reports stopped, and its calls reach the sink with the final drain.
    OtlpReceiverOptions o;
    o.decodeThreads = 1;
    Rig rig(o);
    QVERIFY(rig.ok);
    QSignalSpy stopped(rig.rx.get(), &OtlpReceiver::stopped);
    rig.rx->setDecodersHeld(true);
    RawClient a(rig.port());
    QVERIFY(a.connected());
    a.send(httpPost(protoRequest(spanRun(30, 1'700'000'000'000'000'000ULL)),
                    "application/x-protobuf"));
    QTRY_COMPARE(rig.rx->decoding(), std::size_t{1});
    rig.rx->shutdown();
    QCOMPARE(stopped.count(), 0);
    rig.rx->setDecodersHeld(false);
    const Answer ans = a.next();
    QCOMPARE(ans.status, 200);
    QCOMPARE(ans.headers.at("connection"), QByteArray("close"));
    QTRY_COMPARE(stopped.count(), 1);
    rig.rx->drain();
    QCOMPARE(rig.calls.size(), std::size_t{30});
    QCOMPARE(rig.rx->stats().callsApplied, rig.rx->stats().callsAcked);
  }

  void listenCliTwoSources() {
    // `spillway-cli listen --tail LOG --otlp ADDR`: one engine fed by an nginx log (a healthy
    // upstream) and by OTLP spans (an instance that starts answering 503): only the latter
    // would open, and the summary counts both sources.
    QTemporaryDir dir;
    QFile log(dir.filePath("access.log")), pol(dir.filePath("p.yaml"));
    QVERIFY(log.open(QIODevice::WriteOnly) && pol.open(QIODevice::WriteOnly));
    constexpr double kT0 = 1764480000.0;
    for (int i = 0; i < 100; ++i)
      log.write(QString("{\"msec\":\"%1\",\"upstream_addr\":\"127.0.0.1:9001\","
                        "\"upstream_status\":\"200\",\"upstream_response_time\":\"0.050\","
                        "\"request_time\":\"0.050\",\"status\":\"200\"}\n")
                    .arg(kT0 + i * 0.1, 0, 'f', 3)
                    .toUtf8());
    pol.write(
        "version: 1\nname: drill\nbreaker:\n"
        "  window: {type: time, length: 5s, bucket: 1s}\n  min_calls: 10\n"
        "  trip: {error_rate: 0.5, slow_rate: 0.4, sustain: 2s}\n"
        "  slow: {absolute: 300ms}\n");
    log.close();
    pol.close();
    quint16 port = 0;
    {
      QTcpServer probe;  // a free port, released for the CLI
      QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
      port = probe.serverPort();
    }
    QProcess cli;
    cli.start(SPILLWAY_CLI,
              {"listen", "--tail", log.fileName(), "--from-start", "--policy", pol.fileName(),
               "--otlp", QString("127.0.0.1:%1").arg(port), "--duration", "4s", "--json",
               // Decoded on the event loop here; tst_otlp_hardening runs the default threads.
               "--otlp-decode-threads", "0"});
    QVERIFY(cli.waitForStarted());
    QByteArray err;
    QTRY_VERIFY_WITH_TIMEOUT((err += cli.readAllStandardError()).contains("OTLP/HTTP on"), 10000);
    // 20 s of span time, 10 calls/s, failing with 503 from 10 s on.
    std::vector<TestSpan> spans(200);
    for (int i = 0; i < 200; ++i) {
      spans[i].address = "10.0.0.9";
      spans[i].startNs = static_cast<std::uint64_t>(kT0 * 1e9) + i * 100'000'000ULL;
      spans[i].durNs = 20'000'000;
      if (i >= 100) spans[i].httpStatus = 503;
    }
    RawClient c(port);
    QVERIFY(c.connected());
    QCOMPARE(c.exchange(httpPost(protoRequest(spans), "application/x-protobuf")).status, 200);
    QVERIFY(cli.waitForFinished(20000));
    QCOMPARE(cli.exitCode(), 1);  // findings
    const QList<QByteArray> lines = cli.readAllStandardOutput().trimmed().split('\n');
    QCOMPARE(lines.size(), 2);
    QCOMPARE(QJsonDocument::fromJson(lines[0]).object().value("instance").toString(),
             QString("10.0.0.9:8000"));
    const QJsonObject sum = QJsonDocument::fromJson(lines[1]).object();
    QCOMPARE(sum.value("records").toInt(), 300);
    QCOMPARE(sum.value("would_opens").toInt(), 1);
    QCOMPARE(sum.value("otlp").toObject().value("calls").toInt(), 200);
    // Binding beyond loopback needs the explicit option.
    QProcess remote;
    remote.start(SPILLWAY_CLI, {"listen", "--otlp", "0.0.0.0:4318"});
    QVERIFY(remote.waitForFinished(20000));
    QCOMPARE(remote.exitCode(), 2);
    QVERIFY(remote.readAllStandardError().contains("--otlp-allow-remote"));
  }

  void openTelemetryJsSdk_data() {
    QTest::addColumn<QString>("protocol");
    QTest::newRow("http/json") << "json";
    QTest::newRow("http/protobuf") << "proto";
  }
  void openTelemetryJsSdk() {
    QFETCH(QString, protocol);
    const QString peer = QStringLiteral(SPILLWAY_PEER_OTEL);
    SPW_REQUIRE_PEER(QFileInfo::exists(peer + "/node_modules/@opentelemetry/sdk-trace-base"),
                     "tests/peers/otel/node_modules missing: run `npm ci` in tests/peers/otel "
                     "(Node 20)");
    const QString node = QStandardPaths::findExecutable("node");
    SPW_REQUIRE_PEER(!node.isEmpty(), "node is not installed");
    OtlpReceiverOptions o;
    o.bearerToken = "peer-token";
    Rig rig(o);
    QVERIFY(rig.ok);
    constexpr int kSpans = 1000;
    QProcess proc;
    proc.setWorkingDirectory(peer);
    proc.start(node,
               {peer + "/send-spans.js", QString("http://127.0.0.1:%1/v1/traces").arg(rig.port()),
                protocol, QString::number(kSpans), "peer-token"});
    QVERIFY(proc.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(proc.state() == QProcess::NotRunning, 60000);
    const QByteArray out = proc.readAllStandardOutput();
    QVERIFY2(proc.exitCode() == 0, (out + proc.readAllStandardError()).constData());
    const QJsonObject tally = QJsonDocument::fromJson(out.trimmed()).object();
    QCOMPARE(tally.value("exportedSpans").toInt(), kSpans + 1);
    QTRY_COMPARE(rig.calls.size(), std::size_t{kSpans});
    QCOMPARE(rig.rx->stats().spans, std::uint64_t{kSpans + 1});
    QCOMPARE(rig.rx->stats().spansRejected, std::uint64_t{1});  // GET /health
    // Exporters batch in completion order: index the calls by conversation id.
    std::set<std::string> seen;
    for (const auto& c : rig.calls) {
      const int i = std::stoi(c.session.substr(5));
      QVERIFY(seen.insert(c.session).second);
      QCOMPARE(c.model, std::string("chat-72b"));
      QCOMPARE(c.instance, "127.0.0.1:" + std::to_string(18000 + i % 3));
      QCOMPARE(c.tenant, std::string("peer-otel"));
      QCOMPARE(c.tokensIn, std::int64_t{i});
      QCOMPARE(c.tokensOut, std::int64_t{2 * i});
      QCOMPARE(c.ts, Micros{1'700'000'000'000'000LL + i * 1000LL});
      QCOMPARE(c.latency, Micros{(100 + i) * 1000LL});
      if (i % 10 == 0) {
        QCOMPARE(c.outcome, Outcome::Timeout);
        QCOMPARE(c.status, i % 7 == 0 ? 503 : 0);
      } else {
        QCOMPARE(c.status, i % 7 == 0 ? 503 : 200);
        QCOMPARE(c.outcome, Outcome::Ok);  // a 503 is a failure by its status
      }
    }
    QCOMPARE(seen.size(), std::size_t{kSpans});
  }
};

QTEST_GUILESS_MAIN(TstOtlpReceiver)
#include "tst_otlp_receiver.moc"
