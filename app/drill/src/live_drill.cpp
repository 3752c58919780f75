#include "spillway/drill/live_drill.hpp"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>

#include <algorithm>
#include <cmath>

#include "spillway/sim/restoration.hpp"

namespace spillway::drill {
namespace {

bool available(const sim::Scenario& sc, const LiveCall& c) {
  return c.status == 200 && c.latency >= 0 && c.latency <= sc.clients[c.client].effectiveSlo();
}

struct Window {
  Micros start, end;
};

// Real faults as scenario-time intervals: a `recover` of the same target ends them early.
std::vector<Window> faultWindows(const sim::Scenario& sc) {
  std::vector<Window> out;
  for (const sim::FaultSpec& f : sc.faults) {
    if (f.benign || f.kind == sim::FaultKind::Recover) continue;
    Micros end = f.duration == kForever ? sc.duration : std::min(sc.duration, f.at + f.duration);
    for (const sim::FaultSpec& r : sc.faults)
      if (r.kind == sim::FaultKind::Recover && r.target == f.target && r.at > f.at)
        end = std::min(end, r.at);
    if (end > f.at) out.push_back({f.at, end});
  }
  return out;
}

// kpis.md's service restoration (sim::serviceRestoredSince) on the callers' availability per
// second of scenario time. The recovery after the fault is what of it lies past the fault's end.
std::optional<Micros> recoveryAfter(const sim::Scenario& sc, const std::vector<LiveCall>& calls,
                                    const Window& w) {
  const Micros tick = seconds(1);
  const auto rows = static_cast<std::size_t>(sc.duration / tick + 1);
  std::vector<std::uint64_t> done(rows), ok(rows);
  for (const LiveCall& c : calls) {
    if (!c.done || c.start < 0 || c.start >= sc.duration) continue;
    const auto k = static_cast<std::size_t>(c.start / tick);
    ++done[k];
    ok[k] += available(sc, c);
  }
  const auto window =
      static_cast<std::size_t>(std::max<Micros>(1, sc.policy.breaker.window.length / tick));
  const auto goodSince =
      sim::serviceRestoredSince(done, ok, static_cast<std::size_t>(w.start / tick),
                                static_cast<std::size_t>(seconds(60) / tick), window,
                                static_cast<std::size_t>(w.end / tick) + window + 1);
  if (!goodSince) return std::nullopt;
  return std::max<Micros>(0, static_cast<Micros>(*goodSince + 1) * tick - w.end);
}

}  // namespace

std::vector<std::pair<std::string, std::optional<double>>> liveKpis(
    const sim::Scenario& sc, const std::vector<LiveCall>& calls) {
  const std::vector<Window> faults = faultWindows(sc);
  auto inFault = [&](Micros t) {
    return std::any_of(faults.begin(), faults.end(),
                       [t](const Window& w) { return t >= w.start && t < w.end; });
  };
  struct Share {
    std::uint64_t num = 0, den = 0;
    void add(bool yes) { num += yes, ++den; }
    std::optional<double> value() const {
      return den ? std::optional(static_cast<double>(num) / static_cast<double>(den))
                 : std::nullopt;
    }
  } all, core, during, coreDuring, inQuota;
  std::vector<double> latencies;
  for (const LiveCall& c : calls) {
    if (!c.done) continue;
    const bool av = available(sc, c);
    const bool isCore = sc.clients[c.client].criticality == sim::Criticality::Core;
    all.add(av);
    if (isCore) core.add(av);
    if (inFault(c.start)) {
      during.add(av);
      if (isCore) coreDuring.add(av);
    }
    if (c.status != 429) inQuota.add(av);
    if (c.status == 200 && c.latency >= 0) latencies.push_back(static_cast<double>(c.latency));
  }
  std::optional<double> p99;
  if (!latencies.empty()) {
    std::sort(latencies.begin(), latencies.end());
    const auto rank =
        static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(latencies.size())));
    p99 = latencies[std::clamp<std::size_t>(rank, 1, latencies.size()) - 1] / 1000.0;
  }
  std::optional<double> recovery;
  double sum = 0;
  int restored = 0;
  for (const Window& w : faults)
    if (const auto r = recoveryAfter(sc, calls, w))
      sum += static_cast<double>(*r) / 1e6, ++restored;
  if (restored) recovery = sum / restored;
  return {{"availability", all.value()},
          {"core_availability", core.value()},
          {"availability_during_faults", during.value()},
          {"core_availability_during_faults", coreDuring.value()},
          {"sla_attainment_in_quota", inQuota.value()},
          {"recovery_after_fault_s", recovery},
          {"p99_ms", p99}};
}

LiveDrill::LiveDrill(sim::Scenario sc, LiveDrillOptions opt, QObject* parent)
    : QObject(parent), opt_(std::move(opt)), ingressRng_(sc.seed ^ 0x696e67726573737ULL) {
  FarmOptions fo;
  fo.basePort = opt_.basePort;
  fo.speed = opt_.speed;
  farm_ = std::make_unique<InstanceFarm>(std::move(sc), fo, this);
  for (const sim::ClientSpec& cs : farm_->scenario().clients) {
    QJsonObject body{{"model", QString::fromStdString(cs.model)},
                     {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "drill"}}}},
                     {"max_tokens", static_cast<int>(std::lround(cs.outputTokens.median))}};
    bodies_.push_back(QJsonDocument(body).toJson(QJsonDocument::Compact).toStdString());
  }
  credit_.assign(bodies_.size(), 0.0);
  ticker_.setTimerType(Qt::PreciseTimer);
  connect(&ticker_, &QTimer::timeout, this, &LiveDrill::tick);
}

LiveDrill::~LiveDrill() = default;

bool LiveDrill::start() {
  if (!farm_->start()) {
    error_ = farm_->errorString();
    return false;
  }
  ticker_.start(5);  // the load starts with the farm's clock: scenario time 0
  return true;
}

LiveDrill::Ingress LiveDrill::ingressAt(Micros t, bool drill) const {
  Ingress in;
  for (const sim::FaultSpec& f : scenario().faults) {
    if (f.target != sim::kGatewayTarget || (f.drillOnly && !drill)) continue;
    if (t < f.at || (f.duration != kForever && t >= f.at + f.duration)) continue;
    if (f.kind == sim::FaultKind::Delay) in.delay += f.delay;
    if (f.kind == sim::FaultKind::Errors) in.errors = std::max(in.errors, f.value);
    if (f.kind == sim::FaultKind::Reset) in.reset = std::max(in.reset, f.value);
  }
  return in;
}

// Every 5 ms: each client's rate (its profile at the scenario time) accrues credit per
// wall-clock second; whole credits are sent.
void LiveDrill::tick() {
  const ScenarioClock& clock = farm_->clock();
  const Micros now = clock.now();
  const qint64 ns = static_cast<qint64>(static_cast<double>(now) * 1e3 / clock.speed());
  const double dt = static_cast<double>(ns - lastTickNs_) / 1e9;
  lastTickNs_ = ns;
  if (now >= scenario().duration) {
    ticker_.stop();
    loadOver_ = true;
    if (inFlight_ == 0) emit finished();
    return;
  }
  for (std::uint32_t c = 0; c < credit_.size(); ++c) {
    credit_[c] += sim::clientRateAt(scenario().clients[c], now) * opt_.rateScale * dt;
    for (; credit_[c] >= 1.0; credit_[c] -= 1.0) send(c);
  }
}

void LiveDrill::send(std::uint32_t client) {
  if (inFlight_ >= opt_.maxInFlight) {
    ++notSent_;
    return;
  }
  const sim::ClientSpec& cs = scenario().clients[client];
  LiveCall call;
  call.client = client;
  call.start = farm_->clock().now();
  const std::size_t i = calls_.size();
  calls_.push_back(call);
  ++inFlight_;
  const Ingress in = ingressAt(call.start, cs.drill);
  const bool error = in.errors > 0 && ingressRng_.uniform() < in.errors;
  const bool reset = !error && in.reset > 0 && ingressRng_.uniform() < in.reset;
  if (error || reset || in.delay > 0) calls_[i].gatewayFault = true;
  if (error) {
    // Answered 503 at the ingress after the saturation delay, if any: the gateway never saw it.
    QTimer::singleShot(static_cast<int>(in.delay / 1000), this,
                       [this, i] { complete(i, 503, false); });
    return;
  }
  QTimer::singleShot(static_cast<int>(in.delay / 1000), this,
                     [this, i, reset] { dispatch(i, reset); });
}

// One request on its own connection (`Connection: close`): no client-side pool to queue in,
// so the latency measured is the gateway's and its upstreams'.
void LiveDrill::dispatch(std::size_t i, bool reset) {
  const sim::ClientSpec& cs = scenario().clients[calls_[i].client];
  auto* sock = new QTcpSocket(this);
  auto* timer = new QTimer(sock);
  auto buf = std::make_shared<QByteArray>();
  auto started = std::make_shared<QElapsedTimer>();
  started->start();
  auto ended = std::make_shared<bool>(false);
  const std::string& body = bodies_[calls_[i].client];
  QString path = opt_.gateway.path();
  if (path.isEmpty() || path == "/") path = QString::fromStdString(cs.route);
  QByteArray req =
      "POST " + path.toUtf8() + " HTTP/1.1\r\nHost: " + opt_.gateway.host().toUtf8() +
      "\r\nContent-Type: application/json\r\n" +
      "Content-Length: " + QByteArray::number(static_cast<qint64>(body.size())) +
      "\r\nConnection: close\r\nx-spillway-client: " + QByteArray::fromStdString(cs.name) +
      "\r\nx-tenant: " + QByteArray::fromStdString(cs.tenant.empty() ? cs.name : cs.tenant) +
      "\r\n";
  if (cs.drill) req += "x-drill: 1\r\n";
  req += "\r\n" + QByteArray::fromStdString(body);
  auto finish = [this, i, sock, buf, started, ended, model = cs.model] {
    if (*ended) return;
    *ended = true;
    int status = 0;
    bool degraded = false;
    const qsizetype head = buf->indexOf("\r\n\r\n");
    if (buf->startsWith("HTTP/1.") && buf->size() >= 12 && head > 0) {
      status = buf->mid(9, 3).toInt();
      const QJsonObject o = QJsonDocument::fromJson(buf->mid(head + 4)).object();
      const QString answered = o.value("model").toString();
      degraded = status == 200 && !answered.isEmpty() && answered.toStdString() != model;
    }
    if (status != 0) calls_[i].latency = started->nsecsElapsed() / 1000;
    sock->abort();
    sock->deleteLater();
    complete(i, status, degraded);
  };
  connect(sock, &QTcpSocket::connected, sock, [sock, req] { sock->write(req); });
  connect(sock, &QTcpSocket::bytesWritten, sock, [sock, reset, finish] {
    // Connection interruption: the request is at the gateway, the caller goes away.
    if (reset && sock->bytesToWrite() == 0) finish();
  });
  connect(sock, &QTcpSocket::readyRead, sock, [this, sock, buf, finish] {
    *buf += sock->readAll();
    if (static_cast<std::size_t>(buf->size()) > opt_.maxResponseBytes) finish();
  });
  connect(sock, &QTcpSocket::disconnected, sock, finish);
  connect(sock, &QTcpSocket::errorOccurred, sock,
          [sock, buf, finish](QAbstractSocket::SocketError) {
            *buf += sock->readAll();
            finish();
          });
  connect(timer, &QTimer::timeout, sock, [buf, finish] {
    buf->clear();  // the caller gave up: no answer, whatever came
    finish();
  });
  timer->setSingleShot(true);
  timer->start(static_cast<int>(std::min<Micros>(cs.timeout / 1000, 3'600'000)));
  sock->connectToHost(opt_.gateway.host(), static_cast<quint16>(opt_.gateway.port(80)));
}

void LiveDrill::complete(std::size_t i, int status, bool degraded) {
  calls_[i].status = status;
  calls_[i].degraded = degraded;
  calls_[i].done = true;
  --inFlight_;
  if (loadOver_ && inFlight_ == 0) emit finished();
}

}  // namespace spillway::drill
