// spillway-cli on hostile input files (issue 17, "Input files"), end to end: every bad input
// ends in exit 2 and one line `FILE:LINE: KEY: what` on stderr — never an abort (an uncaught
// YAML::TypedBadConversion or std::bad_alloc was SIGABRT), never unbounded memory. Each row
// names the command, the input and the message it must print (docs/limits.md has the limits).
// Also: `import` without --format tells nginx and Envoy logs from their keys, and names the
// --format to use when it cannot tell.
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.hpp"

namespace {

const QString kCli = QStringLiteral(SPILLWAY_CLI);
const QString kData = QStringLiteral(TEST_DATA_DIR);

QString data(const char* name) {
  return kData + "/" + QString::fromLatin1(name);
}

}  // namespace

class TstCliBadInput : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir tmp_;
  QString bigPolicy_, library_;
  QString addressesBad_, addressesTwice_, healthBad_, upstreams_;
  QString manyInstances_, instanceTicks_, cacheKeys_, twoDocs_, dupParams_, badUtf8Csv_,
      openQuoteCsv_, nineMiB_, twoStatus_;

  // The row's command exits 2 with one line on stderr, the named error its regex matches.
  void exitsTwoWithTheNamedError() {
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    const Run r = run(kCli, args);
    const QString err = QString::fromUtf8(r.err);
    QVERIFY2(r.code == 2, qPrintable(QString("exit %1, stderr: %2").arg(r.code).arg(err)));
    QVERIFY2(!err.contains("terminate called"), qPrintable(err));
    QCOMPARE(err.trimmed().count('\n'), 0);
    QVERIFY2(
        QRegularExpression(expected, QRegularExpression::MultilineOption).match(err).hasMatch(),
        qPrintable("stderr: " + err + "\nexpected: " + expected));
  }

  QString writeTmp(const char* name, const QByteArray& text) {
    QFile f(tmp_.filePath(name));
    if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size()) return {};
    return f.fileName();
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    // 300 KiB of a valid policy's comments: over the 256 KiB limit, and not a YAML error.
    bigPolicy_ = tmp_.filePath("big-policy.yaml");
    QFile f(bigPolicy_);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("version: 1\n");
    const QByteArray line = "# " + QByteArray(97, 'x') + "\n";
    for (int i = 0; i < 3 * 1024; ++i) f.write(line);
    f.close();
    library_ = tmp_.filePath("lib.db");
    addressesBad_ = writeTmp("addresses.txt", "# where\nchat-1 127.0.0.1:8000\nchat-2 nohost\n");
    addressesTwice_ = writeTmp("twice.txt", "chat-1 10.0.0.1:80\nchat-1 10.0.0.2:80\n");
    healthBad_ = writeTmp("health.jsonl", R"({"ts":1,"instance":"a","healthy":true}
{"ts":2,"instance":"a","healthy":"yes"}
)");
    upstreams_ =
        writeTmp("upstreams.conf",
                 "upstream m {\n  server 10.0.0.1:80 max_fails=2;\n  server 10.0.0.2:80;\n}\n");
    QVERIFY(!addressesBad_.isEmpty() && !addressesTwice_.isEmpty() && !healthBad_.isEmpty() &&
            !upstreams_.isEmpty());
    // A few hundred bytes of scenario that would take gigabytes or days (issue 22's review).
    QByteArray models;
    for (int m = 0; m < 11; ++m)
      models += "  - {name: m" + QByteArray::number(m) + ", instances: 10000, slots: 8}\n";
    manyInstances_ =
        writeTmp("many.yaml", "version: 1\nname: many\nduration: 1m\nmodels:\n" + models +
                                  "clients:\n  - {name: c0, model: m0, rate: 1}\n");
    instanceTicks_ = writeTmp("ticks.yaml",
                              "version: 1\nname: ticks\nduration: 27h\ntick: 10ms\ndrain: 0s\n"
                              "models:\n  - {name: m0, instances: 10000, slots: 8}\n"
                              "clients:\n  - {name: c0, model: m0, rate: 0.01}\n");
    cacheKeys_ = writeTmp("keys.yaml",
                          "version: 1\nname: keys\nduration: 1m\n"
                          "models:\n  - {name: m, instances: 1, slots: 8}\nclients:\n"
                          "  - {name: c0, model: m, rate: 0.01, cache: {keys: 10000000}}\n"
                          "  - {name: c1, model: m, rate: 0.01, cache: {keys: 10000000}}\n");
    // A second document after --- used to be dropped unread, errors and all.
    twoDocs_ = writeTmp("twodocs.yaml",
                        "version: 1\nbreaker:\n  min_calls: 20\n---\nbreaker:\n  min_calls: -5\n");
    dupParams_ =
        writeTmp("dup.yaml", "params:\n  trip.slow_rate: [0.2, 0.3]\n  trip.slow_rate: [0.5]\n");
    badUtf8Csv_ = writeTmp("bad-utf8.csv",
                           "ts,instance,latency_ms,status\n1764480000200,i\xff"
                           "1,5,200\n");
    // 100,000 lines inside an open quote: each one re-split the record so far (5 s per 100 KB).
    openQuoteCsv_ = writeTmp("open-quote.csv",
                             "ts,instance,latency_ms,status\n"
                             "1764480000200,i1,5,200\n\"x" +
                                 QByteArray(100000, '\n'));
    QVERIFY(!manyInstances_.isEmpty() && !instanceTicks_.isEmpty() && !cacheKeys_.isEmpty() &&
            !twoDocs_.isEmpty() && !dupParams_.isEmpty() && !badUtf8Csv_.isEmpty() &&
            !openQuoteCsv_.isEmpty());
    QVERIFY(QDir(tmp_.path()).mkpath("adir"));
    // One valid record 9 MiB long, then a short one: a line that ended in the read after the
    // limit was checked passed up to 12 MiB.
    const QByteArray head =
        "{\"ts\":1764480000000,\"instance\":\"a\",\"latency_ms\":5,\"status\":200";
    nineMiB_ = writeTmp("nine.jsonl",
                        head + ",\"note\":\"" + QByteArray(9 << 20, 'x') + "\"}\n" + head + "}\n");
    QVERIFY(!nineMiB_.isEmpty());
    twoStatus_ = writeTmp("two-status.csv",
                          "ts,instance,latency_ms,status,status\n1764480000000,a,1,200,503\n");
    QVERIFY(!twoStatus_.isEmpty());
  }

  void badInputExitsTwoWithANamedError_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");  // a regular expression over stderr
    const QString ck = data("complex-key-policy.yaml");
    const QString plainKey = R"(: \[a\]: a key must be a plain name, not a list)";
    // The 39-byte policy of the issue, through each command that reads a policy.
    QTest::newRow("replay: complex key") << QStringList{"replay", "--policy", ck}
                                         << "^" + QRegularExpression::escape(ck) + ":1" + plainKey;
    QTest::newRow("export: complex key")
        << QStringList{"export", "--target", "envoy", "--policy", ck}
        << "^" + QRegularExpression::escape(ck) + ":1" + plainKey;
    QTest::newRow("import-config: complex key")
        << QStringList{"import-config", "--from", "resilience4j", ck}
        << "^" + QRegularExpression::escape(ck) + ":1: ";
    QTest::newRow("sweep: complex key in the policy")
        << QStringList{"sweep", "--policy", ck, "--param", "breaker.trip.error_rate=0.3,0.5"}
        << "^" + QRegularExpression::escape(ck) + ":1" + plainKey;
    QTest::newRow("replay: complex key deep in a mapping")
        << QStringList{"replay", "--policy", data("nested-complex-key-policy.yaml")}
        << R"(nested-complex-key-policy\.yaml:6: breaker\.trip\.\{a: 1\}: a key must be a plain )"
           R"(name, not a mapping)";
    QTest::newRow("simulate: complex key in a scenario")
        << QStringList{"simulate", data("complex-key-scenario.yaml")}
        << R"(complex-key-scenario\.yaml:7: models\[0\]\.\[slots\]: a key must be a plain name)";
    QTest::newRow("sweep: complex key in a spec")
        << QStringList{"sweep", "--spec", data("complex-key-sweep.yaml")}
        << R"(complex-key-sweep\.yaml:3: params\.\[breaker\.trip\.error_rate\]: a key must be)";
    QTest::newRow("replay: empty policy")
        << QStringList{"replay", "--policy", data("empty-policy.yaml")}
        << R"(empty-policy\.yaml:1: empty policy\n?$)";
    // Read whole, with a cap: special files and big files end in the limit, not bad_alloc.
    const QString policyLimit = R"(: larger than the 256 KiB limit for a policy file)";
    QTest::newRow("replay: /dev/zero as the policy")
        << QStringList{"replay", "--policy", "/dev/zero"} << "^/dev/zero" + policyLimit;
    QTest::newRow("export: /dev/urandom as the policy")
        << QStringList{"export", "--target", "envoy", "--policy", "/dev/urandom"}
        << "^/dev/urandom" + policyLimit;
    QTest::newRow("replay: a 300 KiB policy")
        << QStringList{"replay", "--policy", bigPolicy_}
        << "^" + QRegularExpression::escape(bigPolicy_) + policyLimit;
    QTest::newRow("simulate --policy /dev/zero")
        << QStringList{"simulate", "--policy", "/dev/zero"} << "/dev/zero" + policyLimit;
    QTest::newRow("simulate: /dev/zero as the scenario")
        << QStringList{"simulate", "/dev/zero"}
        << R"(/dev/zero: larger than the 1 MiB limit for a scenario file)";
    QTest::newRow("sweep: /dev/zero as the spec")
        << QStringList{"sweep", "--spec", "/dev/zero"}
        << R"(^/dev/zero: larger than the 256 KiB limit for a sweep spec)";
    // Read line by line and checked only after the line was whole: 7.8 GB and 5.4 GB.
    QTest::newRow("sweep merge /dev/zero")
        << QStringList{"sweep", "merge", "/dev/zero"} << R"(^/dev/zero:1: line longer than 1 MiB)";
    QTest::newRow("listen --otlp-token-file /dev/zero")
        << QStringList{"listen", "--otlp", "127.0.0.1:0", "--otlp-token-file", "/dev/zero"}
        << R"(/dev/zero: larger than the 64 KiB limit for a token file)";
    QTest::newRow("import-config: /dev/zero")
        << QStringList{"import-config", "--from", "envoy", "/dev/zero"}
        << R"(^/dev/zero: larger than the 4 MiB limit for a gateway config file)";
    QTest::newRow("replay: /dev/zero as the faults")
        << QStringList{"replay", "--faults", "/dev/zero"}
        << R"(^/dev/zero: larger than the 16 MiB limit for a faults file)";
    // Streamed traces may be of any size, but one line is bounded.
    QTest::newRow("replay: /dev/zero as the trace")
        << QStringList{"replay", "--trace", "/dev/zero"}
        << R"(^/dev/zero:1: line longer than the 8 MiB limit for one record)";
    QTest::newRow("import: /dev/zero as an nginx log")
        << QStringList{"import", "--format", "nginx", "--library", library_, "/dev/zero"}
        << R"(^/dev/zero:1: line longer than the 8 MiB limit for one record)";
    // Exports to real servers and dialect replays (issue 19).
    QTest::newRow("export --addresses: not an address")
        << QStringList{"export", "--target", "nginx", "--addresses", addressesBad_}
        << "^" + QRegularExpression::escape(addressesBad_) +
               R"(:3: address: expected HOST:PORT \(port 1-65535\), got 'nohost')";
    QTest::newRow("export --addresses: an instance twice")
        << QStringList{"export", "--target", "haproxy", "--addresses", addressesTwice_}
        << "^" + QRegularExpression::escape(addressesTwice_) +
               R"(:2: instance: 'chat-1' is given twice)";
    QTest::newRow("replay --health: not a boolean")
        << QStringList{"replay",        "--trace",  data("tiny.jsonl"), "--dialect", "nginx",
                       "--from-export", upstreams_, "--health",         healthBad_}
        << "^" + QRegularExpression::escape(healthBad_) + R"(:2: healthy: expected true or false)";
    QTest::newRow("replay --dialect: /dev/zero as the config")
        << QStringList{"replay", "--dialect", "nginx", "--from-export", "/dev/zero"}
        << R"(^/dev/zero: larger than the 4 MiB limit for a native config)";
    QTest::newRow("replay --dialect without --from-export")
        << QStringList{"replay", "--dialect", "nginx"}
        << R"(^replay: --dialect needs --from-export FILE)";
    QTest::newRow("replay --dialect: unknown target")
        << QStringList{"replay", "--dialect", "traefik", "--from-export", upstreams_}
        << R"(^replay: --dialect: expected resilience4j, .*, got 'traefik')";
    QTest::newRow("replay --dialect and --policy")
        << QStringList{"replay",
                       "--dialect",
                       "nginx",
                       "--from-export",
                       upstreams_,
                       "--policy",
                       data("complex-key-policy.yaml")}
        << R"(^replay: give --policy or --dialect, not both)";
    QTest::newRow("replay --health without --dialect")
        << QStringList{"replay", "--health", healthBad_} << R"(^replay: --health needs --dialect)";
    QTest::newRow("replay --gateway-start: not a time")
        << QStringList{"replay",   "--dialect",       "haproxy",  "--from-export",
                       upstreams_, "--gateway-start", "yesterday"}
        << R"(^replay: --gateway-start: expected epoch milliseconds or an RFC 3339 time from )"
           R"(1970-01-01 to 9999-12-31, got 'yesterday')";
    QTest::newRow("replay --gateway-start: 1e300 ms")
        << QStringList{"replay",   "--dialect",       "haproxy", "--from-export",
                       upstreams_, "--gateway-start", "1e300"}
        << R"(^replay: --gateway-start: expected .* from 1970-01-01 to 9999-12-31, got '1e300')";
    // A file the runbook names is reported where the runbook names it.
    QTest::newRow("drill: the scenario file is missing")
        << QStringList{"drill", data("missing-scenario-runbook.yaml")}
        << R"(missing-scenario-runbook\.yaml:4: scenario: .*no-such-scenario\.yaml: cannot open)";
    // Was "no configs.b to inherit from", with configs.b right there.
    QTest::newRow("import-config: resilience4j baseConfig cycle")
        << QStringList{"import-config", data("r4j-cycle.yml"), "--from", "resilience4j"}
        << R"(r4j-cycle\.yml:8: configs\.b\.baseConfig: a cycle of baseConfigs: a -> b -> a$)";
    // YAML kept the first of two equal keys: the second instance's config was lost unseen.
    QTest::newRow("import-config: a resilience4j instance twice")
        << QStringList{"import-config", data("r4j-duplicate-instance.yml"), "--from",
                       "resilience4j"}
        << R"(r4j-duplicate-instance\.yml:9: resilience4j\.circuitbreaker\.instances\.chat: )"
           R"(duplicate key$)";
    // Envoy refuses two clusters of one name; the import kept the first one's values.
    QTest::newRow("import-config: two envoy clusters of one name")
        << QStringList{"import-config", data("envoy-duplicate-cluster.yaml"), "--from", "envoy"}
        << R"(envoy-duplicate-cluster\.yaml:5: clusters\[1\]\.name: duplicate cluster name )"
           R"('chat' \(also clusters\[0\]\)$)";
    // Was "imported policy:9: ...": a line of YAML the user never saw.
    QTest::newRow("import-config: a value no policy can hold")
        << QStringList{"import-config", data("r4j-min-calls-past-policy.yml"), "--from",
                       "resilience4j"}
        << R"(^[^ ]*r4j-min-calls-past-policy\.yml: breaker\.min_calls: must be in )"
           R"(\[1, 10000000\], got 1000000000 \(the value imported from this file; no policy )"
           R"(written\)$)";
    // An option given twice kept its last value unseen: this exported nginx.
    QTest::newRow("export: --target twice")
        << QStringList{"export", "--target", "envoy", "--target", "nginx"}
        << R"(^spillway-cli export: --target: given 2 times \('envoy', 'nginx'\); it takes one value$)";
    // A tenant's SLO twice: its lookup used the first, the banner showed both.
    QTest::newRow("replay --slo: a tenant twice")
        << QStringList{"replay", "--trace",
                       QStringLiteral(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.jsonl"),
                       "--slo", "code-assist=3s,code-assist=20s"}
        << R"(^replay: --slo: code-assist=20s: tenant 'code-assist' given twice$)";
    // "-1" and "abc" read as 0 rows: an empty table, exit 0.
    QTest::newRow("sweep --top -1")
        << QStringList{"sweep", "--top", "-1"}
        << R"(^--top: expected a whole number of rows from 0 to 1000000, got '-1'$)";
    // It changes nginx's output only; with envoy it was ignored.
    QTest::newRow("export envoy --idempotent-only")
        << QStringList{"export", "--target", "envoy", "--idempotent-only"}
        << R"(^export: --idempotent-only: applies to --target nginx only, not envoy$)";
    // Every request would get 413: a farm that serves nothing.
    QTest::newRow("serve-instances --max-body 0")
        << QStringList{"serve-instances", "seed-000", "--max-body", "0"}
        << R"(--max-body: expected a byte count from 1024 to 1073741824, got '0'$)";
    // A name written into a gateway's file stays one name there (nginx ran the directives).
    QTest::newRow("export nginx: a model name holding directives")
        << QStringList{"export", "--target", "nginx", "--policy", data("injected-name-policy.yaml")}
        << R"(injected-name-policy\.yaml: overrides\.models: 'm \{ \}\\nserver evil\.example:80;)"
           R"(\\n#' cannot be written into nginx configuration as one name \(it holds a blank\))";
    QTest::newRow("export envoy: a model name holding a newline")
        << QStringList{"export", "--target", "envoy", "--policy", data("injected-name-policy.yaml")}
        << R"(cannot be written into envoy configuration as one name \(it holds '\\n'\))";
    // A gate passed on nothing: 0 opens and 0 blocked on 0 calls.
    QTest::newRow("export --require on an empty incident")
        << QStringList{"export",           "--target",          "resilience4j",
                       "--validate",       data("empty.jsonl"), "--require",
                       "fp<=0.01,opens<=0"}
        << R"(^empty\.jsonl: holds no calls: an export cannot be validated on it)";
    // 99999999999 wrapped to a 32-bit count, and was called "not a positive number".
    QTest::newRow("sweep --random past the cap")
        << QStringList{"sweep", "--random", "99999999999"}
        << R"(^--random: expected a whole number of samples from 1 to 1000000, got '99999999999')";
    // Durations and the work of one run are bounded.
    QTest::newRow("simulate: duration 2500000h")
        << QStringList{"simulate", data("too-long-scenario.yaml")}
        << R"(too-long-scenario\.yaml:4: duration: must be at most 168h \(7 days\) )"
           R"(\(docs/limits\.md\), got 2500000h)";
    QTest::newRow("simulate --duration 2500000h")
        << QStringList{"simulate", "seed-000", "--duration", "2500000h"}
        << R"(^--duration: must be at most 168h \(7 days\))";
    QTest::newRow("simulate: 1e7 requests/s for a day")
        << QStringList{"simulate", data("too-busy-scenario.yaml")}
        << R"(too-busy-scenario\.yaml:9: clients\[1\]\.rate: the clients would send about )"
           R"(8\.64e\+11 requests in 24h)";
  }

  void sizeAndStructureAreBounded_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");
    const QString trace = QStringLiteral(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.jsonl");
    QTest::newRow("simulate: 110,000 instances")
        << QStringList{"simulate", manyInstances_}
        << R"(many\.yaml:4: models: 110000 instances over all models, more than the limit of )"
           R"(100000)";
    QTest::newRow("simulate: 10,000 instances at a 10 ms tick for 27 h")
        << QStringList{"simulate", instanceTicks_}
        << R"(ticks\.yaml:4: tick: 10000 instances x 9\.72e\+06 ticks is 9\.72e\+10 )"
           R"(instance-ticks, more than the limit of 1e\+09)";
    QTest::newRow("simulate: 2e7 cache keys")
        << QStringList{"simulate", cacheKeys_}
        << R"(keys\.yaml:8: clients\[1\]\.cache\.keys: the clients' cache keys add up to )"
           R"(20000000 here)";
    QTest::newRow("replay --threads 50000")
        << QStringList{"replay", "--threads", "50000"}
        << R"(^replay: --threads: expected 0 \(every core\) to 1024$)";
    QTest::newRow("sweep --threads 5000")
        << QStringList{"sweep", "--trace", trace, "--threads", "5000"}
        << R"(^--threads: 5000: expected 0 \(every core\) to 1024$)";
    QTest::newRow("replay: a second YAML document")
        << QStringList{"replay", "--policy", twoDocs_}
        << R"(twodocs\.yaml:4: a second YAML document \(after ---\): a file holds one$)";
    QTest::newRow("sweep: a parameter twice")
        << QStringList{"sweep", "--trace", trace, "--spec", dupParams_}
        << R"(dup\.yaml:3: params\.trip\.slow_rate: duplicate key$)";
    QTest::newRow("knee --to nan") << QStringList{"knee", "--to", "nan"}
                                   << R"(^--to: nan: expected a load factor in \(0, 100\]$)";
    QTest::newRow("knee: 2.7 million steps")
        << QStringList{"knee", "--step", "0.000001"}
        << R"(^--step: 0\.000001: gives 2700001 load steps from --from to --to, more than 1000)";
    QTest::newRow("listen --tail a directory")
        << QStringList{"listen", "--tail", tmp_.filePath("adir")}
        << R"(adir: --tail: is a directory: name the access log file$)";
    QTest::newRow("import: a CSV name not UTF-8")
        << QStringList{"import", badUtf8Csv_, "--library", library_}
        << R"(bad-utf8\.csv:2: instance: not valid UTF-8)";
    for (const char* command : {"import", "replay"})
      QTest::newRow(qPrintable(QString(command) + ": a 9 MiB line"))
          << (QString(command) == "import" ? QStringList{"import", nineMiB_, "--library", library_}
                                           : QStringList{"replay", "--trace", nineMiB_})
          << R"(nine\.jsonl:1: line longer than the 8 MiB limit for one record )"
             R"(\(docs/limits\.md\)$)";
    QTest::newRow("import: a CSV column named twice")
        << QStringList{"import", twoStatus_, "--library", library_}
        << R"(two-status\.csv:1: status: column 'status' appears twice in the header)";
    QTest::newRow("import: a CSV quote never closed")
        << QStringList{"import", openQuoteCsv_, "--library", library_}
        << R"(open-quote\.csv:3: unterminated quoted field)";
  }

  void sizeAndStructureAreBounded() { exitsTwoWithTheNamedError(); }
  void badInputExitsTwoWithANamedError() { exitsTwoWithTheNamedError(); }

  // issue 17: `import access.log` (nginx JSON) without --format failed with "status: expected
  // an integer HTTP status" and no hint.
  void importTellsTheFormatFromTheFirstLine_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("incident");
    QTest::addColumn<QString>("expected");  // stdout
    QTest::newRow("nginx") << data("access-nginx.log") << "n"
                           << "3 records into incident 'n', 1 without an upstream call ignored";
    QTest::newRow("envoy, after a blank line") << data("access-envoy.log") << "e"
                                               << "2 records into incident 'e'";
    QTest::newRow("canonical jsonl") << data("tiny.jsonl") << "t"
                                     << "27 records into incident 't'";
  }

  void importTellsTheFormatFromTheFirstLine() {
    QFETCH(QString, file);
    QFETCH(QString, incident);
    QFETCH(QString, expected);
    const QString lib = tmp_.filePath("sniff-" + incident + ".db");
    const Run r = run(kCli, {"import", "--library", lib, "--incident", incident, file});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(QString::fromUtf8(r.out).contains(expected), r.out.constData());
  }

  void importNamesTheFormatWhenItCannotTell() {
    const QString lib = tmp_.filePath("sniff-unknown.db");
    const Run r = run(kCli, {"import", "--library", lib, data("access-unknown.log")});
    const QString err = QString::fromUtf8(r.err);
    QCOMPARE(r.code, 2);
    QVERIFY2(err.startsWith(data("access-unknown.log") + ":1: "), qPrintable(err));
    QVERIFY2(err.contains("could not be told from line 1, keys code, host, took, when"),
             qPrintable(err));
    QVERIFY2(err.contains("give --format jsonl, csv, nginx, envoy, haproxy, otlp or prometheus"),
             qPrintable(err));
    // Nothing was stored: the library lists no incident.
    const Run l = run(kCli, {"library", "list", "--library", lib});
    QVERIFY2(!l.out.contains("access-unknown"), l.out.constData());
  }

  // A sniffed format that is wrong for a later line says what was decided and how to override.
  void importSaysWhatItSniffedWhenALineFails() {
    const QString f = tmp_.filePath("mixed.log");
    QFile out(f);
    QVERIFY(out.open(QIODevice::WriteOnly));
    QFile in(data("access-nginx.log"));
    QVERIFY(in.open(QIODevice::ReadOnly));
    out.write(in.readAll());
    out.write(
        "{\"msec\":\"x\",\"request_time\":\"0.1\",\"status\":\"200\","
        "\"upstream_addr\":\"a:1\"}\n");
    out.close();
    const Run r = run(kCli, {"import", "--library", tmp_.filePath("mixed.db"), f});
    const QString err = QString::fromUtf8(r.err);
    QCOMPARE(r.code, 2);
    QVERIFY2(err.startsWith(f + ":4: msec: "), qPrintable(err));
    QVERIFY2(err.contains("(read as nginx, told from line 1: keys msec, request_time, "
                          "upstream_addr, upstream_status, upstream_response_time; give "
                          "--format to choose another)"),
             qPrintable(err));
  }
};

QTEST_GUILESS_MAIN(TstCliBadInput)
#include "tst_cli_bad_input.moc"
