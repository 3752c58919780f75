// The simulation as Prometheus metrics: the text exposition parsed back (format 0.0.4: HELP and
// TYPE before each family, label escapes, numbers), counters that only grow between scrapes,
// cumulative histogram buckets whose +Inf equals _count and requests_total, totals that match
// the simulator's own per-tick series, slow calls visible in the buckets of a delayed instance;
// the /metrics endpoint over a socket (GET, HEAD, 404, 405, 400, keep-alive); and
// `simulate --serve-metrics` end to end plus its option errors.
#include <QElapsedTimer>
#include <QFile>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <map>

#include "spillway/drill/metrics_server.hpp"
#include "spillway/drill/sim_metrics.hpp"
#include "spillway/sim/report.hpp"
#include "spillway/sim/scenario_yaml.hpp"

using namespace spillway;

namespace {

// Three instances at ~40 ms; chat-2 gets 60 % 503s from 4 s, chat-3 +800 ms from 6 s.
const char* const kScenario = R"(version: 1
name: metrics-test
duration: 30s
seed: 7
models:
  - name: chat
    instances: 3
    slots: 16
    queue: 64
    service: {base: 40ms, sigma: 0.2}
clients:
  - {name: app, model: chat, rate: 30, timeout: 5s}
faults:
  - {type: errors, target: chat-2, at: 4s, duration: 20s, rate: 0.6, status: 503}
  - {type: delay, target: chat-3, at: 6s, duration: 20s, delay: 800ms}
)";

struct Sample {
  QString name;
  std::map<QString, QString> labels;
  double value = 0;
};

struct Exposition {
  std::vector<Sample> samples;
  std::map<QString, QString> types;  // family → type
  QStringList errors;

  // The samples of `name` whose labels include `match`.
  std::vector<const Sample*> find(const QString& name,
                                  const std::map<QString, QString>& match = {}) const {
    std::vector<const Sample*> out;
    for (const Sample& s : samples) {
      if (s.name != name) continue;
      bool ok = true;
      for (const auto& [k, v] : match) {
        auto it = s.labels.find(k);
        ok = ok && it != s.labels.end() && it->second == v;
      }
      if (ok) out.push_back(&s);
    }
    return out;
  }
  double value(const QString& name, const std::map<QString, QString>& match) const {
    const auto f = find(name, match);
    return f.size() == 1 ? f.front()->value : std::nan("");
  }
};

// A strict reader of the text format: anything it does not understand is an error.
Exposition parse(const QByteArray& text) {
  Exposition e;
  if (!text.endsWith('\n')) e.errors << "no final newline";
  static const QRegularExpression nameRx("^[a-zA-Z_:][a-zA-Z0-9_:]*$");
  static const QRegularExpression labelRx("^[a-zA-Z_][a-zA-Z0-9_]*$");
  std::map<QString, bool> helped;
  int lineNo = 0;
  for (const QByteArray& raw : text.split('\n')) {
    ++lineNo;
    const QString line = QString::fromUtf8(raw);
    if (line.isEmpty()) continue;
    if (line.startsWith("# HELP ") || line.startsWith("# TYPE ")) {
      const QStringList parts = line.mid(7).split(' ');
      if (parts.size() < 2 || !nameRx.match(parts[0]).hasMatch()) {
        e.errors << QString("%1: bad comment: %2").arg(lineNo).arg(line);
        continue;
      }
      if (line.startsWith("# HELP ")) {
        helped[parts[0]] = true;
      } else {
        if (e.types.count(parts[0])) e.errors << QString("%1: TYPE twice").arg(lineNo);
        if (!QStringList{"counter", "gauge", "histogram", "summary", "untyped"}.contains(parts[1]))
          e.errors << QString("%1: bad type %2").arg(lineNo).arg(parts[1]);
        e.types[parts[0]] = parts[1];
      }
      continue;
    }
    Sample s;
    int i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = line.left(i);
    if (!nameRx.match(s.name).hasMatch()) e.errors << QString("%1: bad name").arg(lineNo);
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        int eq = line.indexOf('=', i);
        const QString key = line.mid(i, eq - i);
        if (eq < 0 || !labelRx.match(key).hasMatch() || eq + 1 >= line.size() ||
            line[eq + 1] != '"') {
          e.errors << QString("%1: bad label at %2").arg(lineNo).arg(i);
          break;
        }
        QString value;
        int j = eq + 2;
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\' && j + 1 < line.size()) {
            const QChar n = line[++j];
            value += n == 'n' ? QChar('\n') : n;
          } else {
            value += line[j];
          }
        }
        if (s.labels.count(key)) e.errors << QString("%1: label twice").arg(lineNo);
        s.labels[key] = value;
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      ++i;  // '}'
    }
    if (i >= line.size() || line[i] != ' ') {
      e.errors << QString("%1: no value: %2").arg(lineNo).arg(line);
      continue;
    }
    const QString v = line.mid(i + 1);
    bool ok = true;
    if (v == "+Inf")
      s.value = INFINITY;
    else if (v == "-Inf")
      s.value = -INFINITY;
    else if (v == "NaN")
      s.value = NAN;
    else
      s.value = v.toDouble(&ok);
    if (!ok) e.errors << QString("%1: bad value %2").arg(lineNo).arg(v);
    QString family = s.name;
    for (const char* suffix : {"_bucket", "_sum", "_count"})
      if (family.endsWith(suffix) && !e.types.count(family)) {
        const QString base = family.left(family.size() - static_cast<int>(strlen(suffix)));
        if (e.types.count(base) && e.types[base] == "histogram") family = base;
      }
    if (!e.types.count(family) || !helped.count(family))
      e.errors << QString("%1: %2 before its HELP/TYPE").arg(lineNo).arg(s.name);
    e.samples.push_back(std::move(s));
  }
  return e;
}

class Tee final : public sim::SeriesSink {
 public:
  Tee(sim::SeriesSink& a, sim::SeriesSink& b) : a_(a), b_(b) {}
  void begin(const std::vector<std::string>& i, const std::vector<std::string>& c) override {
    a_.begin(i, c);
    b_.begin(i, c);
  }
  void onInstance(const sim::InstanceTick& r) override {
    a_.onInstance(r);
    b_.onInstance(r);
  }
  void onClient(const sim::ClientTick& r) override {
    a_.onClient(r);
    b_.onClient(r);
  }

 private:
  sim::SeriesSink& a_;
  sim::SeriesSink& b_;
};

const QStringList kInstances = {"chat-1", "chat-2", "chat-3"};

// Checks one scrape; returns what must only grow, keyed by sample name + labels.
std::map<QString, double> checkScrape(const Exposition& e) {
  std::map<QString, double> grow;
  [&] {
    QVERIFY2(e.errors.isEmpty(), qPrintable(e.errors.join("; ")));
    QCOMPARE(e.types.at("spillway_sim_requests_total"), QString("counter"));
    QCOMPARE(e.types.at("spillway_sim_latency_seconds"), QString("histogram"));
    QCOMPARE(e.types.at("spillway_sim_inflight"), QString("gauge"));
    for (const QString& in : kInstances) {
      const std::map<QString, QString> l = {{"instance", in}, {"model", "chat"}};
      const double requests = e.value("spillway_sim_requests_total", l);
      const double failures = e.value("spillway_sim_failures_total", l);
      const double count = e.value("spillway_sim_latency_seconds_count", l);
      QVERIFY(requests >= 0);
      QVERIFY(failures <= requests);
      QCOMPARE(count, requests);
      // Buckets: ascending bounds, cumulative counts, +Inf last and equal to _count.
      const auto buckets = e.find("spillway_sim_latency_seconds_bucket", l);
      QCOMPARE(buckets.size(), drill::SimMetrics::defaultBuckets().size() + 1);
      double prevLe = -1, prevCount = 0;
      for (const Sample* b : buckets) {
        const QString le = b->labels.at("le");
        const double bound = le == "+Inf" ? INFINITY : le.toDouble();
        QVERIFY2(bound > prevLe, qPrintable(le));
        QVERIFY2(b->value >= prevCount, qPrintable(le));
        prevLe = bound;
        prevCount = b->value;
        grow["bucket " + in + " " + le] = b->value;
      }
      QCOMPARE(buckets.back()->labels.at("le"), QString("+Inf"));
      QCOMPARE(buckets.back()->value, count);
      double ones = 0;
      for (const Sample* s : e.find("spillway_sim_breaker_state", l)) ones += s->value;
      QCOMPARE(ones, 1.0);
      grow["requests " + in] = requests;
      grow["failures " + in] = failures;
      grow["sum " + in] = e.value("spillway_sim_latency_seconds_sum", l);
      grow["rejected " + in] = e.value("spillway_sim_breaker_rejected_total", l);
    }
    grow["time"] = e.value("spillway_sim_time_seconds", {});
  }();
  return grow;
}

quint16 portFrom(const QByteArray& err) {
  const QRegularExpression rx("serving metrics on http://127\\.0\\.0\\.1:(\\d+)/metrics");
  const auto m = rx.match(QString::fromUtf8(err));
  return m.hasMatch() ? static_cast<quint16>(m.captured(1).toUInt()) : 0;
}

// A raw HTTP exchange with a server of this process: sends `request`, reads (with the event
// loop running, so that the server can answer) until the peer closes or `until` is seen.
QByteArray exchange(quint16 port, const QByteArray& request, const QByteArray& until = {}) {
  QTcpSocket s;
  s.connectToHost(QHostAddress::LocalHost, port);
  if (!QTest::qWaitFor([&] { return s.state() == QAbstractSocket::ConnectedState; }, 2000))
    return {};
  s.write(request);
  QByteArray got;
  (void)QTest::qWaitFor(
      [&] {
        got += s.readAll();
        return (!until.isEmpty() && got.contains(until)) ||
               s.state() != QAbstractSocket::ConnectedState;
      },
      3000);
  return got + s.readAll();
}

}  // namespace

class TstSimMetrics : public QObject {
  Q_OBJECT
 private slots:
  void exposition_data() {
    QTest::addColumn<bool>("protection");
    QTest::newRow("protection on") << true;
    QTest::newRow("protection off") << false;
  }
  void exposition() {
    QFETCH(bool, protection);
    const sim::Scenario sc = sim::parseScenario(kScenario, "metrics-test.yaml");
    drill::SimMetrics metrics(sc);
    sim::VectorSeries rows;
    Tee tee(metrics, rows);
    sim::SimOptions opt;
    opt.protection = protection;
    opt.series = &tee;
    opt.attempts = &metrics;
    sim::Simulator s(sc, opt);
    std::map<QString, double> prev;
    int scrapes = 0;
    for (Micros t = millis(2500); s.runUntil(t); t += millis(2500)) {
      metrics.setTime(s.now());
      const std::map<QString, double> cur =
          checkScrape(parse(QByteArray::fromStdString(metrics.render())));
      if (QTest::currentTestFailed()) return;
      for (const auto& [k, v] : prev) QVERIFY2(cur.at(k) >= v, qPrintable(k));
      prev = cur;
      ++scrapes;
    }
    QVERIFY(scrapes >= 10);
    const Exposition e = parse(QByteArray::fromStdString(metrics.render()));
    checkScrape(e);
    // The totals are the simulator's own per-tick counts.
    for (std::size_t i = 0; i < 3; ++i) {
      std::uint64_t responses = 0, failures = 0;
      for (const auto& r : rows.instances)
        if (r.instance == i) {
          responses += r.responses;
          failures += r.failures;
        }
      QCOMPARE(metrics.requests(i), responses);
      QCOMPARE(metrics.failures(i), failures);
    }
    const auto l = [](const char* in) {
      return std::map<QString, QString>{{"instance", in}, {"model", "chat"}};
    };
    auto atOrUnder = [&](const char* in, const char* le) {
      auto m = l(in);
      m["le"] = le;
      return e.value("spillway_sim_latency_seconds_bucket", m);
    };
    const double healthy = e.value("spillway_sim_latency_seconds_count", l("chat-1"));
    QVERIFY(healthy > 100);
    // chat-1: everything fast. chat-3: the delayed calls are over 0.5 s.
    QCOMPARE(atOrUnder("chat-1", "0.5"), healthy);
    const double delayed = e.value("spillway_sim_latency_seconds_count", l("chat-3"));
    QVERIFY2(delayed - atOrUnder("chat-3", "0.5") > 20,
             qPrintable(QString("%1 of %2").arg(atOrUnder("chat-3", "0.5")).arg(delayed)));
    QVERIFY(e.value("spillway_sim_failures_total", l("chat-2")) > 20);
    QCOMPARE(e.value("spillway_sim_failures_total", l("chat-1")), 0.0);
    const double sumSecs = e.value("spillway_sim_latency_seconds_sum", l("chat-3"));
    QVERIFY(sumSecs > 0.8 * (delayed - atOrUnder("chat-3", "0.5")));
    // Without protection nothing is blocked; with it, the failing instance is.
    const double blocked = e.value("spillway_sim_breaker_rejected_total", l("chat-2"));
    if (protection)
      QVERIFY(blocked > 0);
    else
      QCOMPARE(blocked, 0.0);
    QVERIFY(e.value("spillway_sim_time_seconds", {}) >= 30);
  }

  // The observer hook only watches: a run with it gives the same report as a run without.
  void observerChangesNothing() {
    const sim::Scenario sc = sim::parseScenario(kScenario, "m.yaml");
    drill::SimMetrics metrics(sc);
    sim::SimOptions with;
    with.attempts = &metrics;
    const std::string a = sim::reportJson(sim::simulate(sc, {}));
    const std::string b = sim::reportJson(sim::simulate(sc, with));
    QCOMPARE(QString::fromStdString(b), QString::fromStdString(a));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < metrics.instances(); ++i) seen += metrics.requests(i);
    QVERIFY(seen > 500);
  }

  void labelEscapes_data() {
    QTest::addColumn<QString>("in");
    QTest::addColumn<QString>("out");
    QTest::newRow("plain") << "chat-1"
                           << "chat-1";
    QTest::newRow("quote") << "a\"b"
                           << "a\\\"b";
    QTest::newRow("backslash") << "a\\b"
                               << "a\\\\b";
    QTest::newRow("newline") << "a\nb"
                             << "a\\nb";
    QTest::newRow("utf-8") << "modèle"
                           << "modèle";
  }
  void labelEscapes() {
    QFETCH(QString, in);
    QFETCH(QString, out);
    QCOMPARE(QString::fromStdString(drill::promLabelValue(in.toStdString())), out);
    // And it reads back through the parser as written.
    sim::Scenario sc = sim::parseScenario(kScenario, "m.yaml");
    sc.models[0].instances[0].name = in.toStdString();
    drill::SimMetrics m(sc);
    const Exposition e = parse(QByteArray::fromStdString(m.render()));
    QVERIFY2(e.errors.isEmpty(), qPrintable(e.errors.join("; ")));
    QCOMPARE(e.find("spillway_sim_requests_total", {{"instance", in}}).size(), std::size_t{1});
  }

  void numbers() {
    QCOMPARE(QString::fromStdString(drill::promNumber(0.005)), QString("0.005"));
    QCOMPARE(QString::fromStdString(drill::promNumber(1)), QString("1"));
    QCOMPARE(QString::fromStdString(drill::promNumber(2.5)), QString("2.5"));
    QCOMPARE(QString::fromStdString(drill::promNumber(INFINITY)), QString("+Inf"));
    QCOMPARE(QString::fromStdString(drill::promNumber(NAN)), QString("NaN"));
    // An observation on a bound is in that bound's bucket (le is "less or equal").
    const sim::Scenario sc = sim::parseScenario(kScenario, "m.yaml");
    drill::SimMetrics m(sc);
    m.onAttempt(0, seconds(1), millis(500), 200, Outcome::Ok);
    m.onAttempt(0, seconds(1), millis(501), 200, Outcome::Ok);
    m.onAttempt(0, seconds(1), seconds(200), 0, Outcome::Timeout);
    const Exposition e = parse(QByteArray::fromStdString(m.render()));
    const std::map<QString, QString> l = {{"instance", "chat-1"}, {"le", "0.5"}};
    QCOMPARE(e.value("spillway_sim_latency_seconds_bucket", l), 1.0);
    QCOMPARE(
        e.value("spillway_sim_latency_seconds_bucket", {{"instance", "chat-1"}, {"le", "120"}}),
        2.0);
    QCOMPARE(
        e.value("spillway_sim_latency_seconds_bucket", {{"instance", "chat-1"}, {"le", "+Inf"}}),
        3.0);
    QCOMPARE(e.value("spillway_sim_failures_total", {{"instance", "chat-1"}}), 1.0);
    QCOMPARE(e.value("spillway_sim_latency_seconds_sum", {{"instance", "chat-1"}}), 201.001);
  }

  void server_data() {
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");    // 0: any error status
    QTest::addColumn<QString>("body");  // "metrics", "none" or text the body contains
    QTest::newRow("GET /metrics") << QByteArray("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n") << 200
                                  << "metrics";
    QTest::newRow("with a query") << QByteArray("GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n")
                                  << 200 << "metrics";
    QTest::newRow("HEAD") << QByteArray("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n") << 200
                          << "none";
    QTest::newRow("other path") << QByteArray("GET / HTTP/1.1\r\nHost: x\r\n\r\n") << 404
                                << "scrape GET /metrics";
    QTest::newRow("POST") << QByteArray("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
                          << 405 << "use GET";
    QTest::newRow("garbage") << QByteArray("\x01\x02 nonsense\r\n\r\n") << 400 << "";
    QTest::newRow("HTTP/2 preface") << QByteArray("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") << 0 << "";
  }
  void server() {
    QFETCH(QByteArray, request);
    QFETCH(int, status);
    QFETCH(QString, body);
    const sim::Scenario sc = sim::parseScenario(kScenario, "m.yaml");
    drill::SimMetrics m(sc);
    drill::MetricsServer srv({}, [&] { return m.render(); });
    QVERIFY(srv.start());
    const QByteArray until =
        body == "metrics" ? QByteArray("spillway_sim_time_seconds ") : QByteArray("\r\n\r\n");
    const QByteArray got = exchange(srv.port(), request, until);
    const qsizetype head = got.indexOf("\r\n\r\n");
    QVERIFY2(head > 0, got.constData());
    const QList<QByteArray> statusLine = got.left(got.indexOf("\r\n")).split(' ');
    QVERIFY(statusLine.size() >= 3);
    QCOMPARE(statusLine[0], QByteArray("HTTP/1.1"));
    if (status)
      QCOMPARE(statusLine[1].toInt(), status);
    else
      QVERIFY(statusLine[1].toInt() >= 400);
    if (status == 200) {
      QVERIFY(got.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
      const QByteArray len = QByteArray::number(static_cast<qint64>(m.render().size()));
      QVERIFY2(got.contains("Content-Length: " + len + "\r\n"), got.left(300).constData());
    }
    if (body == "metrics")
      QVERIFY(got.contains("# TYPE spillway_sim_latency_seconds histogram"));
    else if (body == "none")
      QCOMPARE(got.size(), head + 4);
    else
      QVERIFY2(got.mid(head + 4).contains(body.toUtf8()), got.constData());
    if (status != 200) QVERIFY(!got.contains("spillway_sim_requests_total{"));
    QCOMPARE(srv.stats().scrapes + srv.stats().rejected, std::uint64_t{1});
  }

  void keepAliveAndPipelining() {
    const sim::Scenario sc = sim::parseScenario(kScenario, "m.yaml");
    drill::SimMetrics m(sc);
    drill::MetricsServer srv({}, [&] { return m.render(); });
    QVERIFY(srv.start());
    const QByteArray two = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\n\r\n";
    const QByteArray got = exchange(srv.port(), two, "HTTP/1.1 404");
    QVERIFY(got.startsWith("HTTP/1.1 200 OK"));
    QVERIFY(got.contains("HTTP/1.1 404 Not Found"));
    QCOMPARE(srv.stats().scrapes, std::uint64_t{1});
  }

  void serveMetricsCli() {
    QTemporaryDir tmp;
    QFile f(tmp.path() + "/s.yaml");
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(kScenario);
    f.close();
    QProcess p;
    p.start(SPILLWAY_CLI,
            {"simulate", tmp.path() + "/s.yaml", "--serve-metrics", "127.0.0.1:0", "--speed", "4"});
    QVERIFY(p.waitForStarted(5000));
    QByteArray err;
    quint16 port = 0;
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                   err += p.readAllStandardError();
                   port = portFrom(err);
                   // The scrape hint is a second write; the port line alone may arrive first.
                   const bool hint = err.contains("scrape with:");
                   return (port != 0 && hint) || p.state() == QProcess::NotRunning;
                 },
                 10000) &&
                 port,
             err.constData());
    QVERIFY2(err.contains("honor_labels: true"), err.constData());
    QNetworkAccessManager nam;
    auto scrape = [&]() -> QByteArray {
      QNetworkReply* r =
          nam.get(QNetworkRequest(QUrl(QString("http://127.0.0.1:%1/metrics").arg(port))));
      (void)QTest::qWaitFor([&] { return r->isFinished(); }, 5000);
      r->deleteLater();
      return r->error() == QNetworkReply::NoError ? r->readAll() : QByteArray();
    };
    QTest::qWait(1500);
    const Exposition a = parse(scrape());
    QTest::qWait(1500);
    const Exposition b = parse(scrape());
    const auto ga = checkScrape(a);
    const auto gb = checkScrape(b);
    if (QTest::currentTestFailed()) return;
    // Real time x 4: 1.5 s of wall clock is about 6 s of scenario time.
    const double dt = gb.at("time") - ga.at("time");
    QVERIFY2(dt > 3 && dt < 12, qPrintable(QString::number(dt)));
    for (const auto& [k, v] : ga) QVERIFY2(gb.at(k) >= v, qPrintable(k));
    QVERIFY(gb.at("requests chat-1") > ga.at("requests chat-1"));
    p.terminate();
    QVERIFY(p.waitForFinished(10000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 0);
    err += p.readAllStandardError();
    QVERIFY2(err.contains("stopped at scenario time"), err.constData());
    QVERIFY(p.readAllStandardOutput().contains("availability"));
  }

  void serveMetricsErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("remote without consent") << QStringList{"--serve-metrics", "0.0.0.0:0"}
                                            << "--serve-metrics: 0.0.0.0 is not a loopback address";
    QTest::newRow("bad port") << QStringList{"--serve-metrics", "127.0.0.1:99999"}
                              << "--serve-metrics: expected [HOST:]PORT";
    QTest::newRow("bad speed") << QStringList{"--serve-metrics", "0", "--speed", "0"}
                               << "--speed: expected a number in (0, 1000000]";
    QTest::newRow("speed alone") << QStringList{"--speed", "2"}
                                 << "--speed: only with --serve-metrics";
    QTest::newRow("with compare") << QStringList{"--serve-metrics", "0", "--compare"}
                                  << "--serve-metrics: cannot be combined with --compare";
    QTest::newRow("port in use") << QStringList{"--serve-metrics", "BUSY"} << "cannot listen on";
  }
  void serveMetricsErrors() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    QTcpServer busy;
    QVERIFY(busy.listen(QHostAddress::LocalHost, 0));
    for (QString& a : args)
      if (a == "BUSY") a = QString("127.0.0.1:%1").arg(busy.serverPort());
    QProcess p;
    p.start(SPILLWAY_CLI, QStringList{"simulate", "seed-003"} + args);
    QVERIFY(p.waitForFinished(15000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(err.contains(message), qPrintable(err));
  }
};

QTEST_GUILESS_MAIN(TstSimMetrics)
#include "tst_sim_metrics.moc"
