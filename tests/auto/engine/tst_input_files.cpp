// The engine's guards on input files (issue 17, docs/limits.md): the bounded reader (special
// files end at the limit, not in bad_alloc), plain keys everywhere in a policy (a complex key
// `? [a]` is a named error, not a YAML::TypedBadConversion), the empty policy, the streamed
// readers' line limit, and telling a telemetry file's format from its first line.
#include <QTemporaryFile>
#include <QTest>

#include <string>

#include "error_of.hpp"
#include "spillway/formats/sniff.hpp"
#include "spillway/formats/source.hpp"
#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/sweep.hpp"
#include "spillway/telemetry.hpp"

using namespace spillway;
using spillway::testing::errorOf;

class TstInputFiles : public QObject {
  Q_OBJECT

 private slots:
  void boundedReadOfSpecialFiles_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("zero") << "/dev/zero";
    QTest::newRow("urandom") << "/dev/urandom";
  }
  // What an input says is echoed into its error as text: a control character becomes \xNN
  // (an escape sequence in a policy value retitled and recoloured the terminal).
  void errorsEchoInputAsText() {
    const InputError e("p\x1b.yaml", 3, "breaker.min_calls",
                       "expected a count, got '\x1b[31mRED\x1b]0;title\x07\rX\x7f' \tok\nnext");
    QCOMPARE(std::string(e.what()),
             std::string("p\\x1b.yaml:3: breaker.min_calls: expected a count, got "
                         "'\\x1b[31mRED\\x1b]0;title\\x07\\x0dX\\x7f' \tok\nnext"));
    QCOMPARE(e.detail().substr(0, 5), std::string("expec"));  // the parts stay as given
  }

  // One document per Spillway file, told by its markers without loading what follows (yaml-cpp's
  // LoadAll ran for minutes on a 674-byte input): explicit start and end markers, a comment
  // after ---, and an empty document after the first are fine; content after --- is not.
  void oneDocumentPerFile() {
    for (const char* ok : {"---\nversion: 1\n...\n", "--- # the policy\nversion: 1\n",
                           "version: 1\n---\n# nothing here\n", "version: 1\n...\n\n"})
      QCOMPARE(parsePolicy(ok, "p.yaml").breaker.minCalls, Policy{}.breaker.minCalls);
    QCOMPARE(errorOf([] { parsePolicy("version: 1\n---\nname: x\n", "p.yaml"); }),
             QString("p.yaml:2: a second YAML document (after ---): a file holds one"));
    QCOMPARE(errorOf([] { parsePolicy("version: 1\n...\nname: x\n", "p.yaml"); }),
             QString("p.yaml:3: a second YAML document (after ---): a file holds one"));
  }

  void boundedReadOfSpecialFiles() {
    QFETCH(QString, path);
    QCOMPARE(errorOf([&] { readInputFile(path.toStdString(), 4096, "policy file"); }),
             path + ": larger than the 4 KiB limit for a policy file (docs/limits.md)");
  }

  void readsUpToTheLimit() {
    // /dev/null: empty; a small file: whole; one byte over: refused.
    QCOMPARE(readInputFile("/dev/null", 10, "x"), std::string());
    const std::string text = "version: 1\n";
    QTemporaryFile f;
    QVERIFY(f.open());
    f.write(text.data(), static_cast<qint64>(text.size()));
    f.close();
    const std::string path = f.fileName().toStdString();
    QCOMPARE(readInputFile(path, text.size(), "x"), text);
    QVERIFY(errorOf([&] {
              readInputFile(path, text.size() - 1, "policy file");
            }).endsWith("limit for a policy file (docs/limits.md)"));
    QVERIFY(errorOf([&] {
              readInputFile("/nonexistent/p.yaml", 10, "x");
            }).startsWith("/nonexistent/p.yaml: cannot open: "));
  }

  void policyTextOverTheLimit() {
    const std::string big(input_limits::kPolicy + 1, '#');
    QCOMPARE(errorOf([&] { parsePolicy(big, "big.yaml"); }),
             QString("big.yaml: larger than the 256 KiB limit for a policy file (docs/limits.md)"));
  }

  void emptyPolicy_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("nothing") << "";
    QTest::newRow("blank lines") << "\n\n  \n";
    QTest::newRow("comments") << "# a policy\n# to come\n";
    QTest::newRow("null") << "~\n";
  }
  void emptyPolicy() {
    QFETCH(QString, text);
    QCOMPARE(errorOf([&] { parsePolicy(text.toStdString(), "p.yaml"); }),
             QString("p.yaml:1: empty policy"));
  }

  // A key that is a list or a mapping, at every level a policy has mappings.
  void complexKeysAreNamed_data() {
    QTest::addColumn<QString>("yaml");
    QTest::addColumn<QString>("expected");
    QTest::newRow("top") << "? [a]\n: 1\n"
                         << "p.yaml:1: [a]: a key must be a plain name, not a list";
    QTest::newRow("breaker") << "breaker:\n  ? {x: 1}\n  : 2\n"
                             << "p.yaml:2: breaker.{x: 1}: a key must be a plain name, not a "
                                "mapping";
    QTest::newRow("breaker.window") << "breaker:\n  window: {? [a, b] : 1}\n"
                                    << "p.yaml:2: breaker.window.[a, b]: a key must be";
    QTest::newRow("overrides.models") << "overrides:\n  models:\n    ? [m]\n    : {}\n"
                                      << "p.yaml:3: overrides.models.[m]: a key must be";
    QTest::newRow("models") << "models:\n  ? [m]\n  : {tier: 1}\n"
                            << "p.yaml:2: models.[m]: a key must be";
    QTest::newRow("degrade.chains")
        << "models: {a: {}}\ndegrade:\n  chains:\n    ? [a]\n    : [b]\n"
        << "p.yaml:4: degrade.chains.[a]: a key must be";
    QTest::newRow("limits.tenants") << "limits:\n  tenants:\n    ? [t]\n    : {rate: 1}\n"
                                    << "p.yaml:3: limits.tenants.[t]: a key must be";
    QTest::newRow("long key is cut")
        << "? [" + QString("k,").repeated(40) + "k]\n: 1\n"
        << "p.yaml:1: [k, k, k, k, k, k, k, k, k, k, k, k, ...: a key must be";
  }
  void complexKeysAreNamed() {
    QFETCH(QString, yaml);
    QFETCH(QString, expected);
    const QString err = errorOf([&] { parsePolicy(yaml.toStdString(), "p.yaml"); });
    QVERIFY2(err.startsWith(expected), qPrintable(err));
  }

  void sweepSpecKeysAndValues_data() {
    QTest::addColumn<QString>("yaml");
    QTest::addColumn<QString>("expected");
    QTest::newRow("complex key") << "params:\n  ? [a]\n  : [1]\n"
                                 << "s.yaml:2: params.[a]: a key must be a plain name";
    QTest::newRow("mode is a list") << "mode: [grid]\nparams: {}\n"
                                    << "s.yaml:1: mode: expected a single value";
    QTest::newRow("seed is text") << "seed: abc\nparams: {}\n"
                                  << "s.yaml:1: seed: expected a whole number, got 'abc'";
    QTest::newRow("samples is a map") << "samples: {a: 1}\nparams: {}\n"
                                      << "s.yaml:1: samples: expected a single value";
    QTest::newRow("empty") << "# nothing\n"
                           << "s.yaml:1: empty sweep spec";
  }
  void sweepSpecKeysAndValues() {
    QFETCH(QString, yaml);
    QFETCH(QString, expected);
    const QString err = errorOf([&] { parseSweepSpec(yaml.toStdString(), "s.yaml"); });
    QVERIFY2(err.startsWith(expected), qPrintable(err));
  }

  // A stream of any length is fine; one line without end is not.
  void lineLimitOfStreamedReaders_data() {
    QTest::addColumn<int>("format");
    QTest::newRow("jsonl") << static_cast<int>(formats::Format::Jsonl);
    QTest::newRow("csv") << static_cast<int>(formats::Format::Csv);
    QTest::newRow("nginx") << static_cast<int>(formats::Format::Nginx);
    QTest::newRow("envoy") << static_cast<int>(formats::Format::Envoy);
    QTest::newRow("haproxy") << static_cast<int>(formats::Format::Haproxy);
  }
  void lineLimitOfStreamedReaders() {
    QFETCH(int, format);
    const std::string header =
        format == static_cast<int>(formats::Format::Csv) ? "ts,instance,latency_ms,status\n" : "";
    const std::string text = header + std::string(input_limits::kLine + 100, 'x');
    auto src = formats::sourceFromMemory(static_cast<formats::Format>(format), "t.log", text, {});
    CallRecord rec;
    const QString err = errorOf([&] {
      while (src->next(rec)) {
      }
    });
    const QString line = header.empty() ? "1" : "2";
    QCOMPARE(err, "t.log:" + line +
                      ": line longer than the 8 MiB limit for one record (docs/limits.md)");
  }

  void sniff_data() {
    QTest::addColumn<QString>("head");
    QTest::addColumn<QString>("format");  // "" = cannot tell
    QTest::addColumn<QString>("why");
    QTest::newRow("nginx") << R"({"msec":"1.5","status":"200","upstream_addr":"a:1"})"
                           << "nginx"
                           << "keys msec, upstream_addr";
    QTest::newRow("envoy after blank lines")
        << "\n  \n{\"start_time\":\"x\",\"response_code\":200,\"upstream_host\":\"h\"}\n"
        << "envoy"
        << "keys start_time, upstream_host, response_code";
    QTest::newRow("haproxy (the export's log-format)")
        << R"({"accept_ms":1,"Th":0,"Ti":0,"Ta":3,"server":"s1","backend":"b","status":200})"
        << "haproxy"
        << "keys Ta, Ti, Th, accept_ms";
    QTest::newRow("canonical jsonl") << R"({"ts":1,"instance":"a","latency_ms":3,"status":200})"
                                        "\n"
                                     << "jsonl"
                                     << "keys instance, latency_ms";
    QTest::newRow("otlp on one line") << R"({"resourceSpans":[]})"
                                      << "otlp"
                                      << "keys resourceSpans";
    QTest::newRow("prometheus on one line")
        << R"({"status":"success","data":{"resultType":"matrix","result":[]}})"
        << "prometheus"
        << "keys data";
    QTest::newRow("otlp over lines") << "{\n  \"resourceSpans\": [\n"
                                     << "otlp"
                                     << "a JSON document with resourceSpans";
    QTest::newRow("csv header") << "ts,instance,latency_ms,status\n1,a,2,200\n"
                                << "csv"
                                << "a header with instance, status, latency_ms";
    QTest::newRow("unknown keys") << R"({"when":1,"host":"h"})"
                                  << ""
                                  << "keys host, when";
    QTest::newRow("nginx and envoy keys at once")
        << R"({"msec":"1","upstream_host":"h"})"
        << ""
        << "keys msec, upstream_host (keys of several formats)";
    QTest::newRow("empty") << "\n\n"
                           << ""
                           << "no line to look at";
    QTest::newRow("plain text") << "hello world\n"
                                << ""
                                << "a line that is neither JSON nor a CSV header";
    QTest::newRow("csv without canonical columns")
        << "a,b,c\n"
        << ""
        << "a comma-separated line without a canonical column (instance, status, latency_ms)";
  }
  // A file's first line longer than the first read (an nginx line with thousands of upstream
  // attempts) is read to its end and judged by its keys, not as a JSON document cut short.
  void sniffReadsTheWholeFirstLine() {
    std::string attempts;
    for (int i = 0; i < 10000; ++i) attempts += (i ? ", " : "") + std::string("10.0.0.1:80");
    QTemporaryFile f;
    QVERIFY(f.open());
    const std::string line = "{\"msec\":\"1764480000.2\",\"upstream_addr\":\"" + attempts + "\"}\n";
    QVERIFY(line.size() > 100 * 1024);
    f.write(line.data(), static_cast<qint64>(line.size()));
    f.close();
    const formats::Sniffed s = formats::sniffFile(f.fileName().toStdString());
    QVERIFY(s.format == formats::Format::Nginx);
    QCOMPARE(s.line, 1L);
  }

  void sniff() {
    QFETCH(QString, head);
    QFETCH(QString, format);
    QFETCH(QString, why);
    const std::string text = head.toStdString();
    const formats::Sniffed s = formats::sniffFormat(text);
    QCOMPARE(s.format ? QString::fromLatin1(formats::formatName(*s.format).data(),
                                            formats::formatName(*s.format).size())
                      : QString(),
             format);
    QCOMPARE(QString::fromStdString(s.why), why);
  }
};

QTEST_GUILESS_MAIN(TstInputFiles)
#include "tst_input_files.moc"
