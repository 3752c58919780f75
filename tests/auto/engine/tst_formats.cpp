// Telemetry importers (engine/include/spillway/formats): each format on input written the way
// the real producer writes it, compared as canonical JSONL; bad records → file:line: field.
#include <QTest>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "spillway/formats/canonical.hpp"
#include "spillway/formats/envoy.hpp"
#include "spillway/formats/nginx.hpp"
#include "spillway/formats/source.hpp"
#include "tst_formats_samples.hpp"

using namespace spillway;
using namespace spillway::formats;

namespace {

struct Parsed {
  std::string canonical;
  std::uint64_t skipped = 0, ignored = 0;
};

Parsed parse(Format f, const std::string& name, const std::string& text, const QString& map,
             bool skip) {
  ImportOptions opt;
  opt.skipBadLines = skip;
  if (!map.isEmpty()) opt.map = parseFieldMap(map.toStdString(), f);
  auto src = sourceFromMemory(f, name, text, opt);
  Parsed p;
  if (src->aggregates()) {
    AggregateSample s;
    while (src->nextAggregate(s)) appendSampleJson(p.canonical, s);
  } else {
    CallRecord r;
    while (src->next(r)) appendCallJson(p.canonical, r);
  }
  p.skipped = src->skipped();
  p.ignored = src->ignored();
  return p;
}

Format fmt(const QString& s) {
  Format f{};
  if (!parseFormat(s.toStdString(), f)) qFatal("bad format in test table");
  return f;
}

}  // namespace

class TstFormats : public QObject {
  Q_OBJECT
 private slots:
  void splitUpstream_data() {
    QTest::addColumn<QString>("in");
    QTest::addColumn<QStringList>("out");
    QTest::newRow("one") << "10.0.0.1:80" << QStringList{"10.0.0.1:80"};
    QTest::newRow("retry") << "10.0.0.1:80, 10.0.0.2:80"
                           << QStringList{"10.0.0.1:80", "10.0.0.2:80"};
    QTest::newRow("redirect") << "502, 504 : 200" << QStringList{"502", "504", "200"};
    QTest::newRow("unix socket") << "unix:/run/a.sock, 10.0.0.2:80"
                                 << QStringList{"unix:/run/a.sock", "10.0.0.2:80"};
    QTest::newRow("dash") << "-, 0.100" << QStringList{"-", "0.100"};
  }
  void splitUpstream() {
    QFETCH(QString, in);
    QFETCH(QStringList, out);
    const std::string s = in.toStdString();
    QStringList got;
    for (auto v : splitUpstreamList(s)) got << QString::fromStdString(std::string(v));
    QCOMPARE(got, out);
  }

  // A long list with a redirect only near its end: each separator kind is searched for again
  // only once passed, and the items come out whole and in order.
  void splitLongUpstreamList() {
    std::string s;
    for (int i = 0; i < 40000; ++i) s += (i ? ", " : "") + std::to_string(i);
    s += " : last";
    const auto items = splitUpstreamList(s);
    QCOMPARE(items.size(), std::size_t{40001});
    QCOMPARE(std::string(items[0]), std::string("0"));
    QCOMPARE(std::string(items[39999]), std::string("39999"));
    QCOMPARE(std::string(items[40000]), std::string("last"));
  }

  void envoyFlags_data() {
    QTest::addColumn<QString>("flags");
    QTest::addColumn<int>("status");
    QTest::addColumn<int>("outcome");
    QTest::newRow("none") << "-" << 200 << int(Outcome::Ok);
    QTest::newRow("timeout") << "UT" << 504 << int(Outcome::Timeout);
    QTest::newRow("reset") << "UC" << 0 << int(Outcome::Reset);
    QTest::newRow("retry limit") << "UF,URX" << 503 << int(Outcome::Error);
    QTest::newRow("no response") << "-" << 0 << int(Outcome::Error);
  }
  void envoyFlags() {
    QFETCH(QString, flags);
    QFETCH(int, status);
    QFETCH(int, outcome);
    QCOMPARE(int(envoyOutcome(flags.toStdString(), status)), outcome);
  }

  void importers_data() {
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("map");
    QTest::addColumn<QString>("canonical");
    QTest::addColumn<int>("ignored");
    for (const auto& c : importerCases())
      QTest::newRow(c.name.c_str())
          << QString::fromStdString(c.format) << QString::fromStdString(c.input)
          << QString::fromStdString(c.map) << QString::fromStdString(c.canonical) << c.ignored;
  }
  void importers() {
    QFETCH(QString, format);
    QFETCH(QString, input);
    QFETCH(QString, map);
    QFETCH(QString, canonical);
    QFETCH(int, ignored);
    const Parsed p = parse(fmt(format), "in", input.toStdString(), map, false);
    QCOMPARE(QString::fromStdString(p.canonical), canonical);
    QCOMPARE(p.ignored, std::uint64_t(ignored));
    QCOMPARE(p.skipped, std::uint64_t(0));
  }

  void badRecords_data() {
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("map");
    QTest::addColumn<QString>("error");
    QTest::addColumn<int>("good");
    QTest::addColumn<int>("skipped");
    for (const auto& c : badCases())
      QTest::newRow(c.name.c_str())
          << QString::fromStdString(c.format) << QString::fromStdString(c.input)
          << QString::fromStdString(c.map) << QString::fromStdString(c.error) << c.good
          << c.skipped;
  }
  void badRecords() {
    QFETCH(QString, format);
    QFETCH(QString, input);
    QFETCH(QString, map);
    QFETCH(QString, error);
    QFETCH(int, good);
    QFETCH(int, skipped);
    const std::string text = input.toStdString();
    try {
      parse(fmt(format), "f.log", text, map, false);
      QFAIL("no error");
    } catch (const InputError& e) {
      QCOMPARE(QString::fromUtf8(e.what()), error);
    }
    if (format == "prometheus" && skipped == 0) return;  // a failed query is not a line
    const Parsed p = parse(fmt(format), "f.log", text, map, true);
    QCOMPARE(p.skipped, std::uint64_t(skipped));
    QCOMPARE(std::uint64_t(std::count(p.canonical.begin(), p.canonical.end(), '\n')),
             std::uint64_t(good));
  }

  void fieldMap_data() {
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("map");
    QTest::addColumn<QString>("error");
    QTest::newRow("unknown field") << "csv"
                                   << "latency=lat"
                                   << "--map: latency: not a field of the csv format (critical, "
                                      "instance, latency_ms, model, outcome, route, session, "
                                      "status, tenant, tokens_in, tokens_out, ts, ttfb_ms)";
    QTest::newRow("no equals") << "nginx"
                               << "time"
                               << "--map: time: expected field=name";
    QTest::newRow("otlp takes none")
        << "otlp"
        << "instance=x"
        << "--map: instance: not a field of the otlp format (it takes no mapping)";
  }
  void fieldMap() {
    QFETCH(QString, format);
    QFETCH(QString, map);
    QFETCH(QString, error);
    try {
      parseFieldMap(map.toStdString(), fmt(format));
      QFAIL("no error");
    } catch (const InputError& e) {
      QCOMPARE(QString::fromUtf8(e.what()), error);
    }
  }

  // A Prometheus dump of short points ([k,"1"], 8 bytes each) took 29 times its size (a
  // simdjson tree, then a map node, a joined point and an output row per point): 1.8 GB for
  // 64 MB. Now it is read as a stream of events and a kept point costs 16 bytes. Measured as
  // the peak resident size a child process adds while importing 24 MB (no time involved).
  void prometheusMemoryIsBounded() {
    const std::size_t points = 3'000'000;
    const std::string text = denseProm(points, 4);
    const auto peakKb = [] {
      rusage u{};
      ::getrusage(RUSAGE_SELF, &u);
      return static_cast<long>(u.ru_maxrss);
    };
    const pid_t child = ::fork();
    QVERIFY(child >= 0);
    if (child == 0) {
      const long before = peakKb();
      std::size_t n = 0;
      try {
        auto src = sourceFromMemory(Format::Prometheus, "dump", text, {});
        AggregateSample s;
        while (src->nextAggregate(s)) ++n;
      } catch (...) {
        ::_exit(255);
      }
      // The added peak in tenths of the text's size, up to 25×.
      const long added = (peakKb() - before) * 1024;
      ::_exit(n == points ? static_cast<int>(std::min<long>(250, 10 * added / long(text.size())))
                          : 254);
    }
    int status = 0;
    QCOMPARE(::waitpid(child, &status, 0), child);
    QVERIFY(WIFEXITED(status));
    const int tenths = WEXITSTATUS(status);
    QVERIFY2(tenths != 254 && tenths != 255, "every point read, nothing thrown");
    // A copy of the text and 16 bytes a point (twice the text) come to ~3×; 6× is the bound.
    QVERIFY2(tenths <= 60, qPrintable(QString("added %1 × the text").arg(tenths / 10.0)));
    qInfo("import added %.1f × the text's %zu bytes", tenths / 10.0, text.size());
  }
};

QTEST_GUILESS_MAIN(TstFormats)
#include "tst_formats.moc"
