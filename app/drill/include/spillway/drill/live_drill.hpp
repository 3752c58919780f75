#pragma once
// A drill against a real gateway (seed 003, docs/drills.md): the runbook's instances served as
// fake model servers (InstanceFarm, the gateway's upstreams), the runbook's clients sending
// real HTTP requests through the gateway, and the drill KPIs measured at the callers. Faults on
// `target: gateway` are applied at the gateway's ingress, the way a fault filter in front of it
// would: the request waits (`delay`, CPU saturation), is answered 503 there (`errors`), or its
// connection to the gateway is cut after the request was written (`reset`) — the gateway sees a
// real client disconnect. `drill_only` faults reach drill-tagged clients only, whose requests
// carry `x-drill: 1`.
#include <QObject>
#include <QString>
#include <QTimer>
#include <QUrl>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spillway/drill/instance_farm.hpp"
#include "spillway/rng.hpp"
#include "spillway/sim/scenario.hpp"

namespace spillway::drill {

struct LiveDrillOptions {
  QUrl gateway;  // http://127.0.0.1:PORT[/path]; the path defaults to the client's route
  quint16 basePort = 18000;  // the instances' ports (the gateway's upstreams); 0 = any free
  double speed = 1.0;        // the scenario clock: faults and load profiles X times faster
  double rateScale = 1.0;    // every client's rate × this (per wall-clock second)
  int maxInFlight = 256;     // requests in flight at most; beyond: not sent, counted
  std::size_t maxResponseBytes = 1 << 20;
};

// One original request of the drill.
struct LiveCall {
  std::uint32_t client = 0;
  Micros start = 0;           // scenario time it was sent
  Micros latency = -1;        // wall-clock µs to its answer; -1: no answer
  int status = 0;             // HTTP status; 0: no answer (reset, timeout, refused)
  bool gatewayFault = false;  // an ingress fault hit it
  bool degraded = false;      // answered by another model than it asked for
  bool done = false;
};

// The drill KPIs (sim::drillKpis keys) that callers can measure: availability (answered 200
// within the client's SLO), core, during faults, SLA attainment over in-quota traffic (a 429 is
// a quota refusal), p99, recovery after each fault (kpis.md's service restoration, on the
// callers' availability), degraded answers. Every other key is absent: not measured.
std::vector<std::pair<std::string, std::optional<double>>> liveKpis(
    const sim::Scenario& sc, const std::vector<LiveCall>& calls);

class LiveDrill : public QObject {
  Q_OBJECT
 public:
  LiveDrill(sim::Scenario sc, LiveDrillOptions opt, QObject* parent = nullptr);
  ~LiveDrill() override;

  // Starts the instances and the load (the gateway must already point at the instances'
  // ports). False with errorString().
  bool start();
  QString errorString() const { return error_; }
  const InstanceFarm& farm() const { return *farm_; }
  const sim::Scenario& scenario() const { return farm_->scenario(); }
  const std::vector<LiveCall>& calls() const { return calls_; }
  std::uint64_t notSent() const { return notSent_; }  // over the in-flight bound

 signals:
  void finished();  // the scenario's duration is over and every call has ended

 private:
  struct Call;
  void tick();
  void send(std::uint32_t client);
  void dispatch(std::size_t call, bool reset);
  void complete(std::size_t call, int status, bool degraded);
  struct Ingress {
    Micros delay = 0;
    double errors = 0, reset = 0;
  };
  Ingress ingressAt(Micros t, bool drill) const;

  LiveDrillOptions opt_;
  std::unique_ptr<InstanceFarm> farm_;
  QTimer ticker_;
  std::vector<double> credit_;
  qint64 lastTickNs_ = 0;
  std::vector<LiveCall> calls_;
  std::vector<std::string> bodies_;  // request body per client
  int inFlight_ = 0;
  std::uint64_t notSent_ = 0;
  bool loadOver_ = false;
  Rng ingressRng_;
  QString error_;
};

}  // namespace spillway::drill
