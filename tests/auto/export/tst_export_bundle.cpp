// Review-ready files (issue 23): policy numbers in their shortest exact spelling, the policy
// header (source, what changed, headline KPIs) that still loads, `TODO: address` beside every
// placeholder in each dialect's comment syntax (and the text still parses under the dialect),
// and the review bundle whose figures are the validation's own.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <sstream>

#include "spillway/dialect.hpp"
#include "spillway/export/bundle.hpp"
#include "spillway/input_error.hpp"
#include "spillway/policy_yaml.hpp"

using namespace spillway;
using namespace spillway::exporter;

namespace {

std::string readFile(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

Policy defaultPolicy() {
  return parsePolicy(readFile(SPILLWAY_DEFAULT_POLICY), "default.yaml");
}

Incident sample() {
  Incident inc;
  inc.name = "seed000-sample";
  inc.text = readFile(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.jsonl");
  inc.faults = {{"chat-72b-3", millis(1764480240000), millis(1764480600000), "latency_drift"}};
  return inc;
}

// The line of `yaml` that holds `key:` (first match), trimmed.
std::string lineWith(const std::string& yaml, const std::string& key) {
  std::istringstream in(yaml);
  for (std::string line; std::getline(in, line);)
    if (const auto at = line.find(key + ":"); at != std::string::npos) return line.substr(at);
  return {};
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

class TstExportBundle : public QObject {
  Q_OBJECT

 private slots:
  void numbersAreShortestAndExact_data() {
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("text");
    QTest::newRow("0.45") << 0.45 << "0.45";
    QTest::newRow("1e-3") << 1e-3 << "0.001";
    QTest::newRow("0.1+0.2") << 0.1 + 0.2 << "0.30000000000000004";
    QTest::newRow("1/3") << 1.0 / 3 << "0.3333333333333333";
  }

  // The trip rate (written by the breaker emitter) and the retry budget (by the sections
  // emitter) both come out in the shortest spelling that reads back to the same double.
  void numbersAreShortestAndExact() {
    QFETCH(double, value);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(yamlNumber(value)), text);
    Policy p = defaultPolicy();
    p.breaker.trip.slowRate = value;
    p.degrade.enabled = true;
    p.degrade.retryBudget = value;
    const std::string yaml = policyToYaml(p);
    QCOMPARE(QString::fromStdString(lineWith(yaml, "slow_rate")), "slow_rate: " + text);
    QCOMPARE(QString::fromStdString(lineWith(yaml, "retry_budget")), "retry_budget: " + text);
    const Policy back = parsePolicy(yaml, "<back>");
    QCOMPARE(back.breaker.trip.slowRate, value);  // exactly, not approximately
    QCOMPARE(back.degrade.retryBudget, value);
    QCOMPARE(policyToYaml(back), yaml);
  }

  void changesAreKeyOldNew() {
    const Policy base = defaultPolicy();
    Policy p = base;
    p.name = "tuned";
    p.breaker.trip.slowRate = 0.45;
    p.modelOverrides["chat-72b"].minCalls = 30;
    const std::vector<std::string> c = policyChanges(base, p);
    QCOMPARE(c.size(), std::size_t(3));
    QCOMPARE(QString::fromStdString(c[0]),
             "name: " + QString::fromStdString(base.name) + " \u2192 tuned");
    QVERIFY2(contains(c[1], "breaker.trip.slow_rate: ") && contains(c[1], " \u2192 0.45"),
             c[1].c_str());
    QCOMPARE(QString::fromStdString(c[2]),
             QString("overrides.models.chat-72b.min_calls: (unset) \u2192 30"));
    QVERIFY(policyChanges(p, p).empty());
  }

  // The header is comments only: the file loads to the same policy, and a name with a newline
  // cannot break out of the comment.
  void headerCommentStillLoads() {
    const Policy base = defaultPolicy();
    Policy p = base;
    p.name = "tuned\nbreaker: oops";
    p.breaker.trip.errorRate = 0.35;
    PolicyHeader h;
    h.source = "scenario seed-000 (console)";
    h.base = &base;
    h.kpis = {"seed000-sample native: 误伤 12.0% (n=10)"};
    h.notes = {"Written by Spillway test"};
    const std::string text = policyToYamlWithHeader(p, h);
    QVERIFY2(text.rfind("# Spillway breaker policy 'tuned breaker: oops'", 0) == 0, text.c_str());
    QVERIFY(contains(text, "# Source: scenario seed-000 (console)\n"));
    QVERIFY2(contains(text, "#   breaker.trip.error_rate: ") && contains(text, " \u2192 0.35\n"),
             text.c_str());
    QVERIFY(contains(text, "# Headline KPIs:\n#   seed000-sample native: 误伤 12.0% (n=10)\n"));
    const Policy back = parsePolicy(text, "<header>");
    QCOMPARE(back.name, p.name);
    QCOMPARE(policyToYaml(back), policyToYaml(p));
  }

  void placeholdersAreMarked_data() {
    QTest::addColumn<int>("target");
    QTest::addColumn<QString>("marked");  // the text a marked line holds
    QTest::newRow("nginx") << int(DialectKind::Nginx) << "server 127.0.0.1:8001 ";
    QTest::newRow("haproxy") << int(DialectKind::Haproxy) << "server chat-72b-1 127.0.0.1:8001";
    QTest::newRow("envoy") << int(DialectKind::Envoy) << "address: 127.0.0.1";
    QTest::newRow("istio") << int(DialectKind::Istio) << "host: \"chat-72b\"";
  }

  // Every placeholder line carries "# … TODO: address"; an address given is not marked; the
  // text still reads back under the target's own parser.
  void placeholdersAreMarked() {
    QFETCH(int, target);
    QFETCH(QString, marked);
    const auto kind = static_cast<DialectKind>(target);
    ExportContext ctx;
    ctx.instances = {{"chat-72b-1", "chat-72b"}, {"chat-72b-2", "chat-72b"}};
    ctx.addresses = {{"chat-72b-2", "10.0.0.2:9000"}};
    const ExportResult x = exportPolicy(defaultPolicy(), kind, ctx);
    std::istringstream in(x.text);
    int markedLines = 0;
    for (std::string line; std::getline(in, line);) {
      if (!contains(line, "TODO: address")) continue;
      ++markedLines;
      QVERIFY2(contains(line, marked.toStdString()), line.c_str());
      QVERIFY2(line.find('#') < line.find("TODO: address"), line.c_str());
      QVERIFY2(!contains(line, "10.0.0.2"), line.c_str());
    }
    QCOMPARE(markedLines, 1);
    (void)makeDialect(x.target, x.text, x.fileName, 1, nullptr, x.select);
  }

  // The report's figures are the validation's: formatted from the ValidatedExport, not typed
  // here. Envoy cannot see the leak, so the verdict is FAIL and says which term and why.
  void bundleFilesHoldTheValidation() {
    const Policy base = defaultPolicy();
    Policy tuned = base;
    tuned.name = "tuned";
    tuned.breaker.trip.slowRate = 0.45;
    const ValidatedExport v =
        validateExport(tuned, DialectKind::Envoy, {sample()}, {}, kDefaultRequirements, base);
    QVERIFY(!v.passed);
    QCOMPARE(v.before.size(), std::size_t(1));
    BundleInfo info{"tuned.yaml", "", "9.9.9", "spillway-cli export --bundle x", true};
    const std::vector<BundleFile> files = makeBundle(v, info);
    QCOMPARE(files.size(), std::size_t(3));
    QCOMPARE(QString::fromStdString(files[1].name), QString("envoy-clusters.yaml"));
    QCOMPARE(files[1].text, v.exported.text);
    const std::string& md = files[2].text;
    QVERIFY2(md.find("**FAIL**: the envoy export does not meet fp<=0.03,ttd<=30s") <
                 md.find("## KPIs on seed000-sample"),
             md.c_str());
    QVERIFY(contains(md, "- ttd<=30s: inf (chat-72b-3 on seed000-sample (never detected))"));
    const ReplayKpis& before = v.before[0];
    const ReplayKpis& native = v.native[0].kpis;
    const ReplayKpis& target = v.target[0];
    const std::string fpRow = "| 误伤 (false-positive rate) | `fp<=0.03` | " +
                              formatMetric(Metric::Fp, *before.fpRate()) +
                              " (n=" + std::to_string(before.blocked()) + ") | " +
                              formatMetric(Metric::Fp, *native.fpRate()) +
                              " (n=" + std::to_string(native.blocked()) + ") | n/a (n=0) |";
    QVERIFY2(contains(md, fpRow), (fpRow + "\n" + md).c_str());
    const std::string ttdRow =
        "| TTD chat-72b-3 | `ttd<=30s` | " +
        formatMetric(Metric::Ttd, static_cast<double>(before.faults[0].score.ttd)) + " | " +
        formatMetric(Metric::Ttd, static_cast<double>(native.faults[0].score.ttd)) + " | inf |";
    QVERIFY2(contains(md, ttdRow), (ttdRow + "\n" + md).c_str());
    QVERIFY(contains(md, "| opens | — | " + std::to_string(before.opens) + " | " +
                             std::to_string(native.opens) + " | " + std::to_string(target.opens) +
                             " |"));
    for (const std::string& gap : v.gaps[0]) QVERIFY2(contains(md, "- " + gap), gap.c_str());
    QVERIFY(
        contains(md, "| seed000-sample | " + std::to_string(native.records) + " | 1 annotated |"));
    QVERIFY(contains(md, "**Dropped — the target cannot express it**"));
    QVERIFY(md.find("**Dropped") < md.find("**Approximated") &&
            md.find("**Approximated") < md.find("**Exact"));
    QVERIFY(contains(md, "placeholder address(es) marked `TODO: address`"));
    QVERIFY(contains(md, "- Spillway 9.9.9\n"));
    QVERIFY(contains(md, "`spillway-cli export --bundle x`"));
    // policy.yaml: header with the change and the headline, and it loads back to `tuned`.
    const std::string& yaml = files[0].text;
    QVERIFY2(contains(yaml, "#   breaker.trip.slow_rate: ") && contains(yaml, " \u2192 0.45\n"),
             yaml.c_str());
    QVERIFY(
        contains(yaml, "#   seed000-sample after on envoy: 误伤 n/a (n=0), TTD chat-72b-3 inf"));
    QCOMPARE(policyToYaml(parsePolicy(yaml, "policy.yaml")), policyToYaml(tuned));
  }

  void writeBundleMakesTheDirectoryOrNamesIt() {
    QTemporaryDir tmp;
    const std::string dir = tmp.filePath("pr-123").toStdString();
    const auto paths = writeBundle(dir, {{"a.txt", "A"}, {"b.md", "B"}});
    QCOMPARE(paths.size(), std::size_t(2));
    QCOMPARE(readFile(dir + "/b.md"), std::string("B"));
    const std::string bad = tmp.filePath("missing/parent").toStdString();
    try {
      writeBundle(bad, {{"a.txt", "A"}});
      QFAIL("a directory under a missing parent was accepted");
    } catch (const InputError& e) {
      QCOMPARE(e.file(), bad);
      QVERIFY2(contains(e.what(), "cannot create the directory"), e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TstExportBundle)
#include "tst_export_bundle.moc"
