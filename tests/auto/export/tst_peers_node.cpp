// Differential tests against the real npm libraries: tests/peers/drive.js runs opossum and
// cockatiel with fake timers over call sequences (hand-picked and seeded random ones) and prints
// their state transitions; Spillway's emulations (makeDialect, docs/dialects.md) replay the same
// sequences; the transition sequences must agree exactly. When node or tests/peers/node_modules is
// missing it fails under CI=true and skips, saying why, elsewhere (SPW_REQUIRE_PEER; .ci/run
// installs them with `npm ci --prefix tests/peers`).
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QtTest>

#include <random>

#include "require_peer.hpp"
#include "spillway/dialect_replay.hpp"

using namespace spillway;

namespace {

struct Call {
  int t, latency;
  bool fail;
};
struct Case {
  QString name, lib, options;
  std::vector<Call> calls;
};

std::vector<Call> fromPattern(const QString& p, int every = 100, int latency = 10, int from = 0) {
  std::vector<Call> v;
  for (int i = 0; i < p.size(); ++i)
    if (p[i] != '.') v.push_back({from + every * i, latency, p[i] == 'f'});
  return v;
}

std::vector<Call> randomCalls(std::uint32_t seed, int n, double failShare) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> gap(0, 400), lat(1, 300);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Call> v;
  int t = 0;
  for (int i = 0; i < n; ++i) {
    t += gap(g);
    // Failure bursts and healthy stretches, so the breakers actually move.
    const double p = (i / 20) % 2 ? failShare : failShare / 4;
    v.push_back({t, lat(g), u(g) < p});
  }
  return v;
}

std::vector<Case> cases() {
  std::vector<Case> c;
  const QString op = R"({"timeout": false, "resetTimeout": 1000, "errorThresholdPercentage": 50,
    "volumeThreshold": 3, "rollingCountTimeout": 10000, "rollingCountBuckets": 10})";
  const QString opWarm = R"({"timeout": false, "resetTimeout": 500, "errorThresholdPercentage": 30,
    "rollingCountTimeout": 2000, "rollingCountBuckets": 4, "allowWarmUp": true})";
  // The timeout path (issue 19): a call slower than `timeout` fails at start + timeout, and
  // its late settlement is ignored.
  const QString opTimeout = R"({"timeout": 150, "resetTimeout": 800, "errorThresholdPercentage": 50,
    "volumeThreshold": 3, "rollingCountTimeout": 10000, "rollingCountBuckets": 10})";
  const QString ckCons = R"({"halfOpenAfter": 1000, "breaker": {"ConsecutiveBreaker": 3}})";
  const QString ckCount = R"({"halfOpenAfter": 600,
    "breaker": {"CountBreaker": {"threshold": 0.5, "size": 6, "minimumNumberOfCalls": 4}}})";
  const QString ckCountFull = R"({"halfOpenAfter": 900,
    "breaker": {"CountBreaker": {"threshold": 0.3, "size": 5}}})";
  const QString ckSamp = R"({"halfOpenAfter": 700,
    "breaker": {"SamplingBreaker": {"threshold": 0.5, "duration": 3000, "minimumRps": 2}}})";
  c.push_back({"opossum trip, half-open, close", "opossum", op, fromPattern("fff.........ss")});
  c.push_back({"opossum reopen on trial failure", "opossum", op,
               fromPattern("ffff..........f..........ss")});
  c.push_back({"opossum below volume", "opossum", op, fromPattern("ffssssss")});
  c.push_back({"opossum warm-up", "opossum", opWarm, fromPattern("ffffffffffffffffffffffffff")});
  c.push_back(
      {"opossum timeouts trip it", "opossum", opTimeout, fromPattern("ssss.........ss", 100, 400)});
  c.push_back({"opossum half-open trial times out",
               "opossum",
               opTimeout,
               {{0, 300, false},
                {100, 300, false},
                {200, 300, false},
                {1300, 300, false},
                {2400, 20, false},
                {2500, 20, false}}});
  c.push_back(
      {"opossum just under the timeout", "opossum", opTimeout, fromPattern("ssssssss", 100, 149)});
  c.push_back({"cockatiel consecutive", "cockatiel", ckCons, fromPattern("fff..........s.s")});
  c.push_back({"cockatiel reset by success", "cockatiel", ckCons, fromPattern("ffsffsfff")});
  c.push_back({"cockatiel waiters",
               "cockatiel",
               ckCons,
               {{0, 10, true},
                {100, 10, true},
                {200, 10, true},
                {1300, 200, false},
                {1350, 10, false},
                {1400, 10, true}}});
  c.push_back({"cockatiel sampling", "cockatiel", ckSamp, fromPattern("sfsfffsfffff.......sss")});
  // CountBreaker (issue 19): the last `size` results, judged from minimumNumberOfCalls on.
  c.push_back({"cockatiel count: under the minimum", "cockatiel", ckCount, fromPattern("fff")});
  c.push_back({"cockatiel count: trip, trial, close", "cockatiel", ckCount,
               fromPattern("sfsff.........sfss")});
  c.push_back({"cockatiel count: failures that left the ring", "cockatiel", ckCountFull,
               fromPattern("fssssssfssssfss")});
  c.push_back({"cockatiel count: judged once the ring is full", "cockatiel", ckCountFull,
               fromPattern("ffsss.........f.........s")});
  for (std::uint32_t s = 1; s <= 40; ++s) {
    c.push_back({QString("opossum random %1").arg(s), "opossum",
                 s % 3 == 0 ? opTimeout : (s % 2 ? op : opWarm), randomCalls(s, 120, 0.7)});
    c.push_back({QString("cockatiel random %1").arg(s), "cockatiel",
                 s % 3 == 0 ? (s % 2 ? ckCount : ckCountFull) : (s % 2 ? ckCons : ckSamp),
                 randomCalls(100 + s, 120, 0.7)});
  }
  return c;
}

QStringList emulate(const Case& c) {
  const DialectKind kind = c.lib == "opossum" ? DialectKind::Opossum : DialectKind::Cockatiel;
  auto d = makeDialect(kind, c.options.toStdString(), "options.json", 1);
  DialectReplayOptions opt;
  opt.reorderWindow = 0;
  DialectReplayer r(*d, opt);
  const std::string inst = "fn", model = "g";
  Micros end = 0;
  for (const Call& call : c.calls) {
    CallRecord rec;
    rec.ts = millis(call.t);
    rec.latency = millis(call.latency);
    rec.status = call.fail ? 500 : 200;
    rec.outcome = Outcome::Ok;
    rec.hasOutcome = true;
    rec.instance = inst;
    rec.model = model;
    r.feed(rec);
    end = std::max(end, rec.end());
  }
  r.finish();
  // The library's run ends with its clock at the last settlement: timers due by then (opossum's
  // reset timer) have fired there too.
  r.dialect().advance(end);
  QStringList out;
  for (const Event& e : r.events())
    if (e.kind == EventKind::Transition && e.ts <= end)
      out << QString("%1:%2").arg(e.ts / 1000).arg(QString::fromUtf8(stateName(e.to).data()));
  return out;
}

}  // namespace

class TstPeersNode : public QObject {
  Q_OBJECT

 private slots:
  void transitionsAgreeWithTheRealLibraries() {
    const QString node = QStandardPaths::findExecutable("node");
    SPW_REQUIRE_PEER(!node.isEmpty(),
                     "node not found: the differential tests need Node 20 and npm");
    const QString peers = QStringLiteral(SPILLWAY_PEERS_DIR);
    for (const char* pkg : {"opossum", "cockatiel", "@sinonjs/fake-timers"})
      SPW_REQUIRE_PEER(
          QDir(peers + "/node_modules/" + pkg).exists(),
          QString("%1/node_modules/%2 missing: run `npm ci --prefix %1` (.ci/run does)")
              .arg(peers, pkg));
    const std::vector<Case> cs = cases();
    QJsonArray in;
    for (const Case& c : cs) {
      QJsonArray calls;
      for (const Call& k : c.calls)
        calls.append(QJsonObject{{"t", k.t}, {"latency", k.latency}, {"fail", k.fail}});
      in.append(QJsonObject{{"lib", c.lib},
                            {"options", QJsonDocument::fromJson(c.options.toUtf8()).object()},
                            {"calls", calls}});
    }
    QProcess p;
    p.start(node, {peers + "/drive.js"});
    QVERIFY(p.waitForStarted());
    p.write(QJsonDocument(in).toJson(QJsonDocument::Compact));
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(120000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    const QJsonArray res = QJsonDocument::fromJson(p.readAllStandardOutput()).array();
    QCOMPARE(res.size(), qsizetype(cs.size()));
    int moved = 0;
    for (std::size_t i = 0; i < cs.size(); ++i) {
      QStringList lib;
      for (const auto& v : res[static_cast<qsizetype>(i)].toArray())
        lib << QString("%1:%2")
                   .arg(v.toObject()["t"].toInt())
                   .arg(v.toObject()["state"].toString());
      const QStringList emu = emulate(cs[i]);
      moved += !lib.isEmpty();
      QVERIFY2(emu == lib, qPrintable(cs[i].name + "\n  library:   " + lib.join(' ') +
                                      "\n  emulation: " + emu.join(' ')));
    }
    QVERIFY2(moved >= static_cast<int>(cs.size()) / 2, "too few sequences move the breakers");
  }
};

QTEST_GUILESS_MAIN(TstPeersNode)
#include "tst_peers_node.moc"
