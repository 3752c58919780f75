// The fake instance: an event-driven HTTP/1.1 server on one QTcpServer, with timers standing in
// for GPU work. Every decision follows docs/scenario.md ("An attempt at an instance"), drawn
// from the instance's seeded stream in arrival order, so one seed gives one latency sequence.
#include "spillway/drill/fake_instance.hpp"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include <algorithm>
#include <cmath>

namespace spillway::drill {

qint64 ScenarioClock::wallMsUntil(Micros t) const {
  const Micros left = t - now();
  if (left <= 0) return 0;
  return static_cast<qint64>(std::ceil(static_cast<double>(left) / speed_ / 1e3));
}

// One client connection: its parser and whether a request is in progress (one at a time;
// pipelined requests wait in the parser and the socket's bounded read buffer).
struct FakeInstance::Conn : QObject {
  Conn(QTcpSocket* s, const live::HttpLimits& l, QObject* parent)
      : QObject(parent), sock(s), parser(l) {
    s->setParent(this);
  }
  QTcpSocket* sock;
  live::HttpRequestParser parser;
  bool inRequest = false;
  bool keepAlive = true;
  bool http10 = false;
  bool closing = false;
};

// One chat completion from arrival to its last byte.
struct FakeInstance::Job {
  std::uint64_t id = 0;
  QPointer<Conn> conn;
  bool stream = false;
  std::int64_t inTokens = 0, outTokens = 0;
  double work = 0;  // µs before batching and faults
  Micros arrived = 0, started = 0, service = 0;
  bool hasSlot = false;
};

namespace {

constexpr qint64 kSocketBuffer = 64 * 1024;  // backpressure: Qt stops reading past this

const char* const kWords[] = {"the",  "gateway",  "breaker", "opens", "when",    "a",
                              "slow", "instance", "keeps",   "its",   "callers", "waiting",
                              "and",  "closes",   "after",   "probes"};

QByteArray words(std::int64_t from, std::int64_t count) {
  QByteArray out;
  for (std::int64_t i = 0; i < count; ++i) {
    if (from + i > 0) out += ' ';
    out += kWords[(from + i) % 16];
  }
  return out;
}

qint64 toMs(Micros us) {
  return us <= 0 ? 0 : static_cast<qint64>(std::ceil(static_cast<double>(us) / 1e3));
}

QByteArray json(const QJsonObject& o) {
  return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

// Characters of the prompt: string contents, or the text parts of a content array.
qint64 promptChars(const QJsonArray& messages) {
  qint64 n = 0;
  for (const QJsonValue& m : messages) {
    const QJsonValue c = m.toObject().value("content");
    if (c.isString()) {
      n += c.toString().size();
    } else if (c.isArray()) {
      for (const QJsonValue& part : c.toArray())
        n += part.toObject().value("text").toString().size();
    }
  }
  return n;
}

}  // namespace

FakeInstance::FakeInstance(Config cfg, const ScenarioClock* clock, QObject* parent)
    : QObject(parent),
      cfg_(std::move(cfg)),
      clock_(clock),
      rng_(cfg_.seed, cfg_.name, "instance") {}

FakeInstance::~FakeInstance() = default;

bool FakeInstance::start(quint16 port) {
  server_ = new QTcpServer(this);
  if (!server_->listen(QHostAddress::LocalHost, port)) {
    error_ = server_->errorString();
    return false;
  }
  port_ = server_->serverPort();
  connect(server_, &QTcpServer::newConnection, this, &FakeInstance::onNewConnection);
  for (Micros e : cfg_.faults.edges())
    QTimer::singleShot(clock_->wallMsUntil(e), Qt::PreciseTimer, this, [this, e] { onEdge(e); });
  return true;
}

void FakeInstance::later(Micros delay, std::function<void()> fn) {
  QTimer::singleShot(toMs(delay), Qt::PreciseTimer, this, std::move(fn));
}

void FakeInstance::onNewConnection() {
  while (QTcpSocket* s = server_->nextPendingConnection()) {
    if (outage_) {
      s->abort();
      s->deleteLater();
      continue;
    }
    s->setReadBufferSize(kSocketBuffer);
    auto* c = new Conn(s, cfg_.limits, this);
    std::erase_if(conns_, [](const QPointer<Conn>& p) { return p.isNull(); });
    conns_.emplace_back(c);
    connect(s, &QTcpSocket::readyRead, c, [this, c] { onReadable(c); });
    connect(s, &QTcpSocket::disconnected, c, &QObject::deleteLater);
  }
}

void FakeInstance::onReadable(Conn* c) {
  if (c->inRequest || c->closing) return;  // read again when the answer is out
  const QByteArray data = c->sock->readAll();
  const auto st = c->parser.feed(std::string_view(data.constData(), data.size()));
  if (st == live::HttpRequestParser::State::Error) {
    ++stats_.badRequests;
    c->inRequest = true;
    c->keepAlive = false;
    sendError(c, c->parser.errorStatus(), QString::fromStdString(c->parser.errorMessage()),
              "invalid_request_error");
    return;
  }
  if (st == live::HttpRequestParser::State::Ready) dispatch(c, c->parser.take());
}

void FakeInstance::dispatch(Conn* c, live::HttpRequest req) {
  c->inRequest = true;
  c->keepAlive = req.keepAlive;
  c->http10 = req.minorVersion == 0;
  const std::string_view path = req.path();
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (path == "/health") {
    if (!get) return sendError(c, 405, "use GET", "invalid_request_error");
    QJsonObject o{{"status", "ok"},
                  {"instance", QString::fromStdString(cfg_.name)},
                  {"model", QString::fromStdString(cfg_.model->name)},
                  {"busy", static_cast<int>(stats_.busy)},
                  {"queued", static_cast<int>(queue_.size())}};
    return sendSimple(c, 200, "application/json", json(o));
  }
  if (path == "/v1/models") {
    if (!get) return sendError(c, 405, "use GET", "invalid_request_error");
    QJsonObject m{{"id", QString::fromStdString(cfg_.model->name)},
                  {"object", "model"},
                  {"owned_by", "spillway"}};
    return sendSimple(c, 200, "application/json",
                      json(QJsonObject{{"object", "list"}, {"data", QJsonArray{m}}}));
  }
  if (path == "/v1/chat/completions") {
    // GET is a chat with the defaults: idempotent traffic for gateway drills (nginx retries
    // and counts a failed GET without `non_idempotent`).
    if (req.method != "POST" && req.method != "GET")
      return sendError(c, 405, "use POST", "invalid_request_error");
    return handleChat(c, req);
  }
  sendError(c, 404, "no route " + QString::fromStdString(std::string(path)),
            "invalid_request_error");
}

void FakeInstance::handleChat(Conn* c, const live::HttpRequest& req) {
  QJsonParseError perr;
  const QJsonDocument doc =
      req.method == "GET" ? QJsonDocument(QJsonObject{{"messages", QJsonArray{}}})
                          : QJsonDocument::fromJson(
                                QByteArray::fromRawData(req.body.data(), req.body.size()), &perr);
  if (perr.error != QJsonParseError::NoError || !doc.isObject()) {
    ++stats_.badRequests;
    return sendError(c, 400,
                     perr.error != QJsonParseError::NoError
                         ? "body: invalid JSON at offset " + QString::number(perr.offset) + ": " +
                               perr.errorString()
                         : QStringLiteral("body: expected a JSON object"),
                     "invalid_request_error");
  }
  const QJsonObject o = doc.object();
  if (!o.value("messages").isArray()) {
    ++stats_.badRequests;
    return sendError(c, 400, "messages: expected an array", "invalid_request_error");
  }
  QJsonValue maxTok = o.value("max_tokens");
  if (maxTok.isUndefined()) maxTok = o.value("max_completion_tokens");
  // A whole count: 1e300 or 1.5 read as 0 output tokens (toInteger's default), a silent
  // instant answer instead of the 400 a model server gives.
  const double wanted = maxTok.toDouble(-1);
  if (!maxTok.isUndefined() && !maxTok.isNull() &&
      (!maxTok.isDouble() || !(wanted >= 0) || wanted > 1e9 || wanted != std::floor(wanted))) {
    ++stats_.badRequests;
    return sendError(c, 400, "max_tokens: expected a whole number from 0 to 1000000000",
                     "invalid_request_error");
  }
  ++stats_.requests;
  auto job = std::make_shared<Job>();
  job->id = nextId_++;
  job->conn = c;
  job->stream = o.value("stream").toBool(false);
  job->inTokens = (promptChars(o.value("messages").toArray()) + 3) / 4;
  job->outTokens = maxTok.isDouble() ? std::min<std::int64_t>(maxTok.toInteger(), 100000) : 16;
  job->arrived = clock_->now();
  admit(job);
}

std::uint32_t FakeInstance::slotsNow(Micros t) const {
  const FaultEffect fx = cfg_.faults.effectAt(t);
  if (!fx.capacityLoss) return cfg_.model->slotCount;
  if (fx.remaining <= 0) return 0;
  return std::max<std::uint32_t>(
      1, static_cast<std::uint32_t>(std::floor(cfg_.model->slotCount * fx.remaining)));
}

// docs/scenario.md, "An attempt at an instance", step 2 and 3, in that order.
void FakeInstance::admit(const std::shared_ptr<Job>& job) {
  const sim::ModelSpec& ms = *cfg_.model;
  const Micros t = job->arrived;
  const FaultEffect fx = cfg_.faults.effectAt(t);
  auto replyLater = [this, job](Micros after, int status, QString msg, const char* type) {
    later(after, [this, job, status, msg, type] {
      if (job->conn) sendError(job->conn, status, msg, type);
    });
  };
  if (fx.outage || rng_.bernoulli(fx.resetP)) {
    ++stats_.resets;
    later(millis(1), [this, job] {
      if (job->conn) abortConn(job->conn);
    });
    return;
  }
  if (rng_.bernoulli(fx.throttleP)) {
    ++stats_.throttled;
    return replyLater(ms.errorLatency, 429, "throttled (fault)", "rate_limit_error");
  }
  if (rng_.bernoulli(fx.errorP)) {
    ++stats_.errors;
    return replyLater(ms.errorLatency, fx.errorStatus, "injected error (fault)", "server_error");
  }
  if (rng_.bernoulli(fx.hangP)) {
    // No answer until the hang ends (or the caller gives up); it holds a slot if one is free.
    ++stats_.hangs;
    if (stats_.busy < slotsNow(t)) {
      ++stats_.busy;
      job->hasSlot = true;
    }
    if (fx.hangUntil != kForever)
      QTimer::singleShot(clock_->wallMsUntil(fx.hangUntil), Qt::PreciseTimer, this, [this, job] {
        job->service = clock_->now() - job->arrived;
        answer(job);
        finishJob(job);
      });
    return;
  }
  if (rng_.bernoulli(ms.errorRate)) {
    ++stats_.errors;
    return replyLater(ms.errorLatency, 500, "background error", "server_error");
  }
  job->work = rng_.lognormal(static_cast<double>(ms.baseTime) +
                                 ms.perInputToken * static_cast<double>(job->inTokens) +
                                 ms.perOutputToken * static_cast<double>(job->outTokens),
                             ms.sigma);
  if (stats_.busy < slotsNow(t) && queue_.empty()) {
    startJob(job);
  } else if (queue_.size() < ms.queue) {
    queue_.push_back(job);
    stats_.queued = static_cast<std::uint32_t>(queue_.size());
  } else {
    ++stats_.queueFull;
    replyLater(millis(1), ms.queueFullStatus, "queue full",
               ms.queueFullStatus == 429 ? "rate_limit_error" : "server_error");
  }
}

void FakeInstance::startJob(const std::shared_ptr<Job>& job) {
  const sim::ModelSpec& ms = *cfg_.model;
  ++stats_.busy;
  job->hasSlot = true;
  job->started = clock_->now();
  // service = max(1us, W × B(n) × D(t) + Δ(t)), fixed when the call takes its slot.
  double b = 1.0;
  if (ms.batching.knee > 0 && stats_.busy > ms.batching.knee)
    b = 1.0 + ms.batching.slope * static_cast<double>(stats_.busy - ms.batching.knee);
  const FaultEffect fx = cfg_.faults.effectAt(job->started);
  job->service = std::max<Micros>(1, static_cast<Micros>(job->work * b * fx.multiplier) + fx.delay);
  if (job->stream) {
    const int n = static_cast<int>(std::clamp<std::int64_t>(job->outTokens, 1, 32));
    later(job->service / n, [this, job, n] { streamChunk(job, 0, n); });
  } else {
    later(job->service, [this, job] {
      answer(job);
      finishJob(job);
    });
  }
}

void FakeInstance::finishJob(const std::shared_ptr<Job>& job) {
  if (job->hasSlot) {
    job->hasSlot = false;
    if (stats_.busy) --stats_.busy;
  }
  pump();
}

void FakeInstance::pump() {
  const Micros t = clock_->now();
  while (!queue_.empty() && stats_.busy < slotsNow(t)) {
    auto job = queue_.front();
    queue_.pop_front();
    // A queued call whose caller gave up is dropped at the head (or computed for nobody).
    if (!job->conn && !cfg_.model->serveAbandoned) continue;
    startJob(job);
  }
  stats_.queued = static_cast<std::uint32_t>(queue_.size());
}

void FakeInstance::answer(const std::shared_ptr<Job>& job) {
  ++stats_.answered;
  if (!job->conn) return;
  const std::int64_t out = std::min<std::int64_t>(job->outTokens, 2048);
  QJsonObject msg{{"role", "assistant"}, {"content", QString::fromLatin1(words(0, out))}};
  QJsonObject choice{{"index", 0}, {"message", msg}, {"finish_reason", "stop"}};
  QJsonObject usage{{"prompt_tokens", static_cast<qint64>(job->inTokens)},
                    {"completion_tokens", static_cast<qint64>(job->outTokens)},
                    {"total_tokens", static_cast<qint64>(job->inTokens + job->outTokens)}};
  QJsonObject o{
      {"id", QString("chatcmpl-%1-%2").arg(QString::fromStdString(cfg_.name)).arg(job->id)},
      {"object", "chat.completion"},
      {"created", QDateTime::currentSecsSinceEpoch()},
      {"model", QString::fromStdString(cfg_.model->name)},
      {"choices", QJsonArray{choice}},
      {"usage", usage}};
  // The drawn service time, so tests can check that one seed gives one latency sequence.
  sendSimple(
      job->conn, 200, "application/json", json(o),
      "x-spillway-service-us: " + QByteArray::number(static_cast<qint64>(job->service)) + "\r\n");
}

// Chunk `index` of `count`: chunk i is due at service × (i + 1) / count after the start, so
// the first token comes after service / count and the last with the service time.
void FakeInstance::streamChunk(const std::shared_ptr<Job>& job, int index, int count) {
  const bool last = index == count - 1;
  if (Conn* c = job->conn) {
    auto write = [c](const QByteArray& data) {
      if (c->http10) {
        c->sock->write(data);  // HTTP/1.0: no chunked coding, the close ends the body
      } else {
        c->sock->write(QByteArray::number(data.size(), 16) + "\r\n" + data + "\r\n");
      }
    };
    if (index == 0) {
      QByteArray head =
          "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
          "Cache-Control: no-cache\r\nx-spillway-instance: " +
          QByteArray::fromStdString(cfg_.name) +
          "\r\nx-spillway-service-us: " + QByteArray::number(static_cast<qint64>(job->service)) +
          "\r\n";
      if (c->http10) {
        head += "Connection: close\r\n\r\n";
        c->keepAlive = false;
      } else {
        head += QByteArray("Transfer-Encoding: chunked\r\nConnection: ") +
                (c->keepAlive ? "keep-alive" : "close") + "\r\n\r\n";
      }
      c->sock->write(head);
    }
    const std::int64_t out = std::min<std::int64_t>(job->outTokens, 2048);
    const std::int64_t from = out * index / count, to = out * (index + 1) / count;
    QJsonObject delta{{"content", QString::fromLatin1(words(from, to - from))}};
    if (index == 0) delta.insert("role", "assistant");
    QJsonObject choice{{"index", 0},
                       {"delta", delta},
                       {"finish_reason", last ? QJsonValue("stop") : QJsonValue()}};
    QJsonObject chunk{
        {"id", QString("chatcmpl-%1-%2").arg(QString::fromStdString(cfg_.name)).arg(job->id)},
        {"object", "chat.completion.chunk"},
        {"created", QDateTime::currentSecsSinceEpoch()},
        {"model", QString::fromStdString(cfg_.model->name)},
        {"choices", QJsonArray{choice}}};
    write("data: " + json(chunk) + "\n\n");
    if (last) {
      write("data: [DONE]\n\n");
      if (!c->http10) c->sock->write("0\r\n\r\n");
      responseDone(c, !c->keepAlive);
    }
  }
  if (last) {
    ++stats_.answered;
    finishJob(job);
    return;
  }
  const Micros due = job->started + job->service * (index + 2) / count;
  later(due - clock_->now(), [this, job, index, count] { streamChunk(job, index + 1, count); });
}

void FakeInstance::sendSimple(Conn* c, int status, const QByteArray& contentType,
                              const QByteArray& body, const QByteArray& extraHeaders) {
  const bool keep = c->keepAlive;
  QByteArray head = "HTTP/1.1 " + QByteArray::number(status) + ' ' +
                    QByteArray::fromStdString(std::string(live::reasonPhrase(status))) +
                    "\r\nContent-Type: " + contentType +
                    "\r\nContent-Length: " + QByteArray::number(body.size()) +
                    "\r\nx-spillway-instance: " + QByteArray::fromStdString(cfg_.name) +
                    "\r\nConnection: " + (keep ? "keep-alive" : "close") + "\r\n" + extraHeaders +
                    "\r\n";
  c->sock->write(head + body);
  responseDone(c, !keep);
}

void FakeInstance::sendError(Conn* c, int status, const QString& message, const char* type) {
  QJsonObject err{{"message", message},
                  {"type", QString::fromLatin1(type)},
                  {"param", QJsonValue()},
                  {"code", status}};
  sendSimple(c, status, "application/json", json(QJsonObject{{"error", err}}));
}

void FakeInstance::abortConn(Conn* c) {
  c->closing = true;
  c->sock->abort();
  c->deleteLater();
}

void FakeInstance::responseDone(Conn* c, bool close) {
  c->inRequest = false;
  if (close) {
    c->closing = true;
    c->sock->disconnectFromHost();
    return;
  }
  // The next pipelined request, from the event loop (no recursion through many of them).
  QPointer<Conn> p(c);
  QTimer::singleShot(0, this, [this, p] {
    if (!p || p->inRequest || p->closing) return;
    if (p->parser.state() == live::HttpRequestParser::State::Ready)
      dispatch(p, p->parser.take());
    else if (p->sock->bytesAvailable() > 0)
      onReadable(p);
  });
}

void FakeInstance::onEdge(Micros edge) {
  char when[32];
  std::snprintf(when, sizeof when, "[t=%.1fs]", static_cast<double>(edge) / 1e6);
  for (const InstanceFault& f : cfg_.faults.faults()) {
    if (f.start == edge)
      emit faultTransition(QString("%1 %2 fault started: %3")
                               .arg(when, QString::fromStdString(cfg_.name),
                                    QString::fromStdString(describeFault(*f.spec))));
    if (f.end == edge)
      emit faultTransition(QString("%1 %2 fault ended: %3")
                               .arg(when, QString::fromStdString(cfg_.name),
                                    QString::fromStdString(describeFault(*f.spec))));
  }
  setOutage(cfg_.faults.effectAt(edge).outage);
  pump();  // capacity may have come back
}

void FakeInstance::setOutage(bool on) {
  if (on == outage_) return;
  outage_ = on;
  if (on) {
    // Refuse: stop listening and drop every open connection.
    server_->close();
    for (const QPointer<Conn>& c : conns_)
      if (c) abortConn(c);
    conns_.clear();
  } else if (!server_->listen(QHostAddress::LocalHost, port_)) {
    emit faultTransition(QString("%1: cannot listen again on port %2 after the outage: %3")
                             .arg(QString::fromStdString(cfg_.name))
                             .arg(port_)
                             .arg(server_->errorString()));
  }
}

}  // namespace spillway::drill
