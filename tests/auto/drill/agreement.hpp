#pragma once
// What the agreement drills share: running spillway-cli, reading a replay's transitions, and
// pairing a real gateway's decisions with the emulation's, server by server, in order.
#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStringList>

#include <algorithm>
#include <map>
#include <vector>

#include "live_testing.hpp"

namespace agreement {

// A drill's ports on 127.0.0.1: three instances from `base`, the gateway on `gateway`.
struct Ports {
  quint16 base = 0, gateway = 0;
  bool overlaps(const Ports& o) const {
    auto inInstances = [](quint16 p, quint16 base) { return p >= base && p < base + 3; };
    return (base < o.base + 3 && o.base < base + 3) || gateway == o.gateway ||
           inInstances(gateway, o.base) || inInstances(o.gateway, base);
  }
};

// Ports free now and apart from those of the drills running beside it (free when taken, not
// reserved); zeros when none are found.
inline Ports freshPorts(const std::vector<Ports>& taken) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    Ports p{live_testing::freePorts(3), live_testing::freePort()};
    bool clash = !p.base || !p.gateway || (p.gateway >= p.base && p.gateway < p.base + 3);
    for (const Ports& o : taken) clash = clash || p.overlaps(o);
    if (!clash) return p;
  }
  return {};
}

// Runs spillway-cli to the end; its exit code, or -1 when it hung (then stopped).
inline int cli(const QStringList& args, QByteArray* out, QByteArray* err, int timeoutMs = 60000) {
  QProcess p;
  p.start(SPILLWAY_CLI, args);
  const bool ended = p.waitForFinished(timeoutMs);
  if (!ended) live_testing::stop(p);
  *out = p.readAllStandardOutput();
  *err = p.readAllStandardError();
  return ended ? p.exitCode() : -1;
}

// A fault timeline's drill scenario: chat-1..3 (16 slots, 20 ms service), one core client
// sending `rate` POST calls/s, `fault` (a YAML flow mapping) on the scenario's clock.
inline QByteArray scenario(const QString& name, int durationS, int rate, const QString& fault,
                           int seed) {
  return QString(R"(version: 1
name: %1
duration: %2s
seed: %3
models:
  - {name: chat, instances: 3, slots: 16, queue: 64, service: {base: 20ms, sigma: 0.2}}
clients:
  - {name: app, model: chat, criticality: core, rate: %4, timeout: 2s, slo: 1s}
faults:
  - %5
)")
      .arg(name)
      .arg(durationS)
      .arg(seed)
      .arg(rate)
      .arg(fault)
      .toUtf8();
}

// Writes the drill's files into `dir` — scenario.yaml, drill.yaml (a runbook with no bar: the
// gateway's decisions are judged, not the callers'), policy.yaml, a healthy three-instance
// trace and addresses.txt (chat-N at ports.base + N - 1) — and exports the policy to `target`
// at those addresses into dir/`out`; empty, or why not.
inline QString writeAndExport(const QString& dir, const QByteArray& scenarioText,
                              const QByteArray& policy, const Ports& ports, const QString& target,
                              const QString& out, const QStringList& extra = {}) {
  QByteArray addresses;
  for (int i = 0; i < 3; ++i)
    addresses += "chat-" + QByteArray::number(i + 1) +
                 " 127.0.0.1:" + QByteArray::number(ports.base + i) + "\n";
  using live_testing::writeFile;
  if (!writeFile(dir + "/scenario.yaml", scenarioText) ||
      !writeFile(dir + "/drill.yaml",
                 "version: 1\nname: agreement\nscenario: scenario.yaml\nexpect:\n"
                 "  - {kpi: availability, min: 0}\n") ||
      !writeFile(dir + "/policy.yaml", policy) ||
      !writeFile(dir + "/trace.jsonl", live_testing::threeInstanceTrace()) ||
      !writeFile(dir + "/addresses.txt", addresses))
    return "cannot write the drill's files";
  QByteArray o, err;
  if (cli(QStringList{"export", "--target", target, "--policy", dir + "/policy.yaml", "--validate",
                      dir + "/trace.jsonl", "--addresses", dir + "/addresses.txt", "--out",
                      dir + "/" + out} +
              extra,
          &o, &err) != 0)
    return "export: " + QString::fromUtf8(err);
  return {};
}

// The replay's transitions into `to` (OPEN: a mark-down, CLOSED: a mark-up), per instance, in
// epoch ms.
inline std::map<QString, std::vector<double>> transitionsTo(const QByteArray& jsonl,
                                                            const QString& to) {
  std::map<QString, std::vector<double>> out;
  for (const QByteArray& l : jsonl.split('\n')) {
    if (l.isEmpty()) continue;
    const QJsonObject o = QJsonDocument::fromJson(l).object();
    // A state change only: ramp_complete and the like carry from == to.
    if (o.value("event").toString() == "transition" && o.value("to").toString() == to &&
        o.value("from").toString() != to)
      out[o.value("instance").toString()].push_back(o.value("ts").toDouble());
  }
  return out;
}

// When the gateway made a decision, as closely as it tells (epoch ms): nginx's whole-second
// log stamp is [S, S + 1000), a line read as HAProxy writes it is one instant.
struct Interval {
  double lo = 0, hi = 0;
};

struct Agreement {
  std::size_t pairs = 0;
  double worstMs = 0;   // the farthest prediction from its real decision's interval
  QString failure;      // empty when every decision pairs within the bound
  QStringList servers;  // "server: [real | predicted] ..." for the log
};

inline QString clock(double ms) {
  return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(ms)).toString("HH:mm:ss.zzz");
}

// Pairs the i-th real decision of each server with its i-th prediction: the counts must be
// equal, no server may have predictions only, and each prediction must lie within `boundMs` of
// its real interval.
inline Agreement compare(const std::map<QString, std::vector<Interval>>& real,
                         const std::map<QString, std::vector<double>>& predicted, double boundMs,
                         const QString& what) {
  Agreement a;
  for (const auto& [server, r] : real) {
    const auto it = predicted.find(server);
    const std::vector<double> p = it == predicted.end() ? std::vector<double>{} : it->second;
    QString list;
    for (std::size_t i = 0; i < std::max(r.size(), p.size()); ++i)
      list += QString(" [%1 | %2]")
                  .arg(i < r.size() ? clock(r[i].lo) : "-", i < p.size() ? clock(p[i]) : "-");
    a.servers << server + ": real | predicted " + what + ":" + list;
    if (p.size() != r.size() && a.failure.isEmpty())
      a.failure = server + ": " + QString::number(r.size()) + " real " + what + ", " +
                  QString::number(p.size()) + " predicted:" + list;
    for (std::size_t i = 0; i < std::min(r.size(), p.size()); ++i) {
      const double off = p[i] < r[i].lo ? r[i].lo - p[i] : std::max(0.0, p[i] - r[i].hi);
      a.worstMs = std::max(a.worstMs, off);
      ++a.pairs;
      if (off > boundMs && a.failure.isEmpty())
        a.failure = server + ": " + what + " " + QString::number(i + 1) + " predicted " +
                    QString::number(off, 'f', 0) + " ms away:" + list;
    }
  }
  for (const auto& [server, p] : predicted)
    if (!real.count(server) && a.failure.isEmpty())
      a.failure = server + ": " + QString::number(p.size()) + " predicted " + what +
                  ", none real (first at " + clock(p.front()) + ")";
  return a;
}

}  // namespace agreement
