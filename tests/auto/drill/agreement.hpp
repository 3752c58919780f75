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
