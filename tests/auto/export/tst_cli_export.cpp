// spillway-cli export / import-config end to end: exit codes (0 pass, 1 a --require term fails
// on the target, 2 usage or input errors), the gap report on the built-in sample, --out,
// --json, incidents with their *.faults.jsonl, and import-config back to a policy.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "cli_run.hpp"

namespace {
const QString kCli = QStringLiteral(SPILLWAY_CLI);
Run cli(const QStringList& args) {
  return run(kCli, args);
}
QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
}  // namespace

class TstCliExport : public QObject {
  Q_OBJECT

 private slots:
  void exportsToStdoutWithNotesOnStderr() {
    const Run r = cli({"export", "--target", "envoy"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("outlier_detection:"));
    QVERIFY(r.err.contains("Envoy has no slow-call ejection"));
  }

  void usageErrorsExitTwo() {
    QCOMPARE(cli({"export"}).code, 2);
    const Run bad = cli({"export", "--target", "opossum"});
    QCOMPARE(bad.code, 2);
    QVERIFY(bad.err.contains("--target"));
    const Run noValidate = cli({"export", "--target", "envoy", "--require", "fp<=0.03"});
    QCOMPARE(noValidate.code, 2);
    QVERIFY(noValidate.err.contains("--require needs --validate"));
    const Run term = cli({"export", "--target", "envoy", "--validate", "sample", "--require",
                          "fp<=0.03,latency<=1s"});
    QCOMPARE(term.code, 2);
    QVERIFY2(term.err.contains("--require: latency<=1s: unknown metric"), term.err.constData());
    const Run missing = cli({"export", "--target", "envoy", "--validate", "/nonexistent.jsonl"});
    QCOMPARE(missing.code, 2);
    QVERIFY(missing.err.contains("/nonexistent.jsonl"));
    const Run policy = cli({"export", "--target", "envoy", "--policy", "/nonexistent.yaml"});
    QCOMPARE(policy.code, 2);
  }

  // --validate reads an access log as import does: HAProxy's log in the export's log-format
  // validates exactly as the same calls in canonical JSONL (chat-2 answers 503 for 20 s).
  void validatesAnAccessLogAsItsCalls() {
    QTemporaryDir dir;
    QByteArray haproxy, canonical;
    for (int i = 0; i < 1800; ++i) {
      const QByteArray ts = QByteArray::number(1764480000000LL + 33LL * i);
      const QByteArray server = "chat-" + QByteArray::number(i % 3 + 1);
      const bool failing = i % 3 == 1 && i > 600 && i < 1200;
      const QByteArray status = failing ? "503" : "200", lat = failing ? "3" : "40";
      haproxy += "{\"accept_ms\":" + ts +
                 ",\"Th\":0,\"Ti\":0,\"TR\":0,\"Tw\":0,\"Tc\":1,\"Tr\":" + lat + ",\"Ta\":" + lat +
                 ",\"server\":\"" + server + "\",\"backend\":\"chat\",\"status\":" + status +
                 ",\"termination\":\"--\"}\n";
      canonical += "{\"ts\":" + ts + ",\"instance\":\"" + server +
                   "\",\"model\":\"chat\",\"latency_ms\":" + lat + ",\"status\":" + status +
                   ",\"ttfb_ms\":" + QByteArray::number(lat.toInt() + 1) + "}\n";
    }
    QVERIFY(QDir(dir.path()).mkpath("a") && QDir(dir.path()).mkpath("b"));
    for (const auto& [sub, text] : {std::pair{"a", haproxy}, std::pair{"b", canonical}}) {
      QFile f(dir.filePath(QString(sub) + "/incident.log"));
      QVERIFY(f.open(QIODevice::WriteOnly) && f.write(text) == text.size());
    }
    const Run a = cli(
        {"export", "--target", "haproxy", "--validate", dir.filePath("a/incident.log"), "--json"});
    const Run b = cli(
        {"export", "--target", "haproxy", "--validate", dir.filePath("b/incident.log"), "--json"});
    QCOMPARE(a.code, 0);
    QCOMPARE(b.code, 0);
    QCOMPARE(a.out, b.out);
    QVERIFY2(a.out.contains("chat-2 is marked down"), a.out.constData());  // the fault was seen
  }

  void requireGatesOnTheTarget() {
    QTemporaryDir dir;
    const QString out = dir.filePath("envoy.yaml");
    const Run fail = cli({"export", "--target", "envoy", "--validate", "sample", "--require",
                          "fp<=0.03,ttd<=30s", "--out", out});
    QCOMPARE(fail.code, 1);
    QVERIFY(QFile::exists(out));
    QVERIFY2(fail.out.contains("chat-72b-3 is never ejected: TTD inf vs"), fail.out.constData());
    QVERIFY(fail.out.contains("FAIL ttd<=30s"));
    QVERIFY(fail.out.contains("FAIL: the envoy export does not meet"));
    const Run pass = cli({"export", "--target", "resilience4j", "--validate", "sample", "--require",
                          "fp<=1,opens<=100", "--out", dir.filePath("app.yml")});
    QCOMPARE(pass.code, 0);
    QVERIFY(pass.out.contains("PASS"));
  }

  // The new terms gate on the block classes; --slo is the incidents' bar for "would have
  // succeeded": a tighter SLO leaves fewer avoidable blocks, never more.
  void blockTermsAndSlo() {
    const Run trips = cli({"export", "--target", "resilience4j", "--validate", "sample",
                           "--require", "false_trips<=0,collateral<=1", "--out", "/dev/null"});
    QCOMPARE(trips.code, 0);
    QVERIFY2(trips.out.contains("ok   false_trips<=0 0.00/h"), trips.out.constData());
    QVERIFY(trips.out.contains("ok   collateral<=1"));
    const auto fp = [&](const char* slo) {
      const Run r = cli(
          {"export", "--target", "resilience4j", "--json", "--validate", "sample", "--slo", slo});
      return QJsonDocument::fromJson(r.out)
          .object()["validation"]
          .toArray()
          .at(0)
          .toObject()["native"]
          .toObject()["false_positive_rate"]
          .toDouble();
    };
    QVERIFY(fp("1s") < fp("5s"));
    const Run bad = cli({"export", "--target", "envoy", "--validate", "sample", "--slo", "soon"});
    QCOMPARE(bad.code, 2);
    QVERIFY(bad.err.contains("--slo"));
  }

  void incidentFilesWithFaultAnnotations() {
    QTemporaryDir dir;
    QVERIFY(QFile::copy(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.jsonl",
                        dir.filePath("leak.jsonl")));
    QVERIFY(QFile::copy(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.faults.jsonl",
                        dir.filePath("leak.faults.jsonl")));
    const Run r =
        cli({"export", "--target", "sentinel", "--json", "--validate", dir.filePath("leak.jsonl")});
    QCOMPARE(r.code, 0);
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(j["target"].toString(), QString("sentinel"));
    QVERIFY(j["config"].toString().contains("\"grade\": 0"));  // the learned slow threshold
    QVERIFY(!j["notes"].toArray().isEmpty());
    const QJsonObject v = j["validation"].toArray().at(0).toObject();
    QCOMPARE(v["incident"].toString(), QString("leak.jsonl"));
    QCOMPARE(v["native"].toObject()["faults"].toArray().size(), 1);
    QVERIFY(v["native"].toObject()["faults"].toArray().at(0).toObject()["detected"].toBool());
  }

  // issue 19: --addresses names the servers; the validation's predicted out periods per
  // server are what `replay --dialect --from-export` of the same file shows, transition for
  // transition.
  void addressesAndPredictedOuts() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString addresses = dir.filePath("addresses.txt");
    QFile f(addresses);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(
        "chat-72b-1 10.0.0.1:8000\nchat-72b-3 10.0.0.3:8000  # the leaky one\nchat-9 10.9.9.9:1\n");
    f.close();
    const QString conf = dir.filePath("upstreams.conf");
    const Run r = cli({"export", "--target", "nginx", "--validate", "sample", "--addresses",
                       addresses, "--out", conf, "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    QFile c(conf);
    QVERIFY(c.open(QIODevice::ReadOnly));
    const QByteArray text = c.readAll();
    QVERIFY2(text.contains("server 10.0.0.1:8000 ") && text.contains("# chat-72b-1\n") &&
                 text.contains("server 10.0.0.3:8000 "),
             text.constData());
    QVERIFY2(text.contains("server 127.0.0.1:8001 "), text.constData());  // no address given
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    bool unusedNoted = false;
    for (const QJsonValue& n : j["notes"].toArray())
      unusedNoted = unusedNoted || n.toObject()["text"].toString().contains(
                                       "instances the export does not contain (not in the "
                                       "validation incidents): chat-9");
    QVERIFY(unusedNoted);

    // Every predicted out period, as (instance, down, up).
    QStringList outs;
    for (const QJsonValue& v :
         j["validation"].toArray()[0].toObject()["target"].toObject()["instances"].toArray())
      for (const QJsonValue& o : v.toObject()["outs"].toArray())
        outs << QString("%1 %2 %3")
                    .arg(v.toObject()["instance"].toString())
                    .arg(o.toObject()["down_ms"].toDouble(), 0, 'f', 3)
                    .arg(o.toObject()["up_ms"].toDouble(), 0, 'f', 3);
    QVERIFY(!outs.isEmpty());

    const QString transitions = dir.filePath("nginx.jsonl");
    const Run replay =
        cli({"replay", "--dialect", "nginx", "--from-export", conf, "--out", transitions});
    QVERIFY2(replay.code == 0, replay.err.constData());
    QVERIFY2(replay.out.contains("under the nginx emulation of"), replay.out.constData());
    QFile t(transitions);
    QVERIFY(t.open(QIODevice::ReadOnly));
    QStringList fromReplay;
    QMap<QString, double> down;
    for (const QByteArray& l : t.readAll().split('\n')) {
      const QJsonObject o = QJsonDocument::fromJson(l).object();
      if (o["event"].toString() != "transition") continue;
      const QString inst = o["instance"].toString();
      if (o["from"].toString() == "CLOSED" && o["to"].toString() == "OPEN")
        down[inst] = o["ts"].toDouble();
      if (o["to"].toString() == "CLOSED")
        fromReplay << QString("%1 %2 %3")
                          .arg(inst)
                          .arg(down.take(inst), 0, 'f', 3)
                          .arg(o["ts"].toDouble(), 0, 'f', 3);
    }
    QCOMPARE(fromReplay, outs);
  }

  void importConfigBackToAPolicy() {
    QTemporaryDir dir;
    const QString app = dir.filePath("application.yml");
    QCOMPARE(cli({"export", "--target", "resilience4j", "--out", app}).code, 0);
    const QString pol = dir.filePath("policy.yaml");
    const Run r = cli({"import-config", "--from", "resilience4j", app, "--out", pol});
    QCOMPARE(r.code, 0);
    QVERIFY(r.err.contains("mapping notes"));
    QFile f(pol);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().contains("breaker:"));
    // The imported policy exports again.
    QCOMPARE(cli({"export", "--target", "resilience4j", "--policy", pol}).code, 0);
    // Errors name file:line: field.
    QFile bad(dir.filePath("bad.yml"));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write(
        "resilience4j.circuitbreaker:\n  configs:\n    default:\n      failureRateThreshold: 0\n");
    bad.close();
    const Run e = cli({"import-config", "--from", "resilience4j", bad.fileName()});
    QCOMPARE(e.code, 2);
    QVERIFY2(e.err.contains("bad.yml:4: configs.default.failureRateThreshold"), e.err.constData());
    QCOMPARE(cli({"import-config", "--from", "haproxy", app}).code, 2);
    // A name from the file is printed, not obeyed: an escape sequence in an instance name
    // (here: retitle the terminal) reaches stderr as \x1b, not as a control byte.
    QFile esc(dir.filePath("esc.yml"));
    QVERIFY(esc.open(QIODevice::WriteOnly));
    esc.write(
        "resilience4j.circuitbreaker:\n  configs:\n    default:\n"
        "      failureRateThreshold: 50\n  instances:\n    \"chat\\e]0;owned\\a\":\n"
        "      failureRateThreshold: 20\n");
    esc.close();
    const Run n = cli({"import-config", "--from", "resilience4j", esc.fileName()});
    QCOMPARE(n.code, 0);
    QVERIFY2(n.err.contains("[chat\\x1b]0;owned\\x07]"), n.err.constData());
    QVERIFY(!n.err.contains('\x1b'));
  }

  // --bundle DIR: three files; validation.md's figures are the ones --json reports for the same
  // run (not typed here); the default targets judge it, and the exit code is the verdict.
  void bundleWritesThePullRequestFiles() {
    QTemporaryDir tmp;
    const QString dir = tmp.filePath("pr");
    QFile policy(tmp.filePath("tuned.yaml"));
    QVERIFY(policy.open(QIODevice::WriteOnly));
    policy.write("version: 1\nname: tuned\nbreaker:\n  trip: {slow_rate: 0.45}\n");
    policy.close();
    const Run r = cli({"export", "--target", "haproxy", "--policy", policy.fileName(), "--validate",
                       "sample", "--json", "--bundle", dir});
    QCOMPARE(r.code, 1);  // haproxy has no slow-call rule: ttd<=30s (a default target) fails
    const QJsonObject j = QJsonDocument::fromJson(r.out).object();
    QVERIFY2(!j.isEmpty(), r.out.constData());  // the bundle's lines went to stderr
    QVERIFY2(r.err.contains("bundle: " + (dir + "/validation.md").toUtf8() + " written"),
             r.err.constData());
    QCOMPARE(QDir(dir).entryList(QDir::Files),
             QStringList({"haproxy-backends.cfg", "policy.yaml", "validation.md"}));
    QCOMPARE(readAll(dir + "/haproxy-backends.cfg"), j["config"].toString().toUtf8());
    QVERIFY(readAll(dir + "/haproxy-backends.cfg").contains("# TODO: address"));

    const QString md = QString::fromUtf8(readAll(dir + "/validation.md"));
    QVERIFY2(md.startsWith("# Validation: policy 'tuned' exported to haproxy\n\n**FAIL**: the "
                           "haproxy export does not meet fp<=0.03,ttd<=30s on seed000-sample\n"),
             qPrintable(md));
    const QJsonObject v = j["validation"].toArray()[0].toObject();
    const QJsonObject native = v["native"].toObject(), target = v["target"].toObject();
    auto pct = [](const QJsonValue& x) {
      return x.isNull() ? QString("n/a") : QString::number(x.toDouble() * 100, 'f', 1) + "%";
    };
    auto blocked = [](const QJsonObject& k) {
      int n = 0;
      for (const QJsonValue& c : k["blocks_by_class"].toObject())
        n += c.toObject()["blocks"].toInt();
      return n;
    };
    const QString fpCells =
        pct(native["false_positive_rate"]) + QString(" (n=%1) | ").arg(blocked(native)) +
        pct(target["false_positive_rate"]) + QString(" (n=%1) |").arg(blocked(target));
    QVERIFY2(md.contains(fpCells), qPrintable(fpCells + "\n" + md));
    // "before" is the built-in default policy, natively: what a plain export reports for it.
    const QJsonObject before =
        QJsonDocument::fromJson(
            cli({"export", "--target", "haproxy", "--validate", "sample", "--json"}).out)
            .object()["validation"]
            .toArray()[0]
            .toObject()["native"]
            .toObject();
    const QString blockedRow = QString("| calls blocked | — | %1 | %2 | %3 |")
                                   .arg(before["rejected"].toInteger())
                                   .arg(native["rejected"].toInteger())
                                   .arg(target["rejected"].toInteger());
    QVERIFY2(md.contains(blockedRow), qPrintable(blockedRow + "\n" + md));
    QVERIFY(before["rejected"] != native["rejected"]);  // two runs, not one shown twice
    QVERIFY(md.contains(
        QString("| seed000-sample | %1 | 1 annotated |").arg(native["records"].toInteger())));
    for (const QJsonValue& g : v["gaps"].toArray())
      QVERIFY2(md.contains("- " + g.toString()), qPrintable(g.toString()));
    QVERIFY(md.contains("## Targets\n\nThe default targets `fp<=0.03,ttd<=30s`"));
    QVERIFY(md.contains("`spillway-cli export --target haproxy --policy"));

    const QString yaml = QString::fromUtf8(readAll(dir + "/policy.yaml"));
    QVERIFY2(yaml.startsWith("# Spillway breaker policy 'tuned'") &&
                 yaml.contains("# Source: " + policy.fileName() + "\n") &&
                 yaml.contains("#   breaker.trip.slow_rate: 0.4 \u2192 0.45\n") &&
                 yaml.contains("slow_rate: 0.45\n"),
             qPrintable(yaml));
    // The bundle's policy loads again: exported once more, it gives the same configuration.
    const Run again = cli({"export", "--target", "haproxy", "--policy", dir + "/policy.yaml",
                           "--validate", "sample", "--json"});
    QCOMPARE(QJsonDocument::fromJson(again.out).object()["config"], j["config"]);
  }

  void bundleUsageAndBadDir() {
    const Run noValidate = cli({"export", "--target", "nginx", "--bundle", "/tmp"});
    QCOMPARE(noValidate.code, 2);
    QVERIFY2(noValidate.err.contains("--bundle needs --validate"), noValidate.err.constData());
    const Run baseAlone = cli({"export", "--target", "nginx", "--base", "x.yaml"});
    QCOMPARE(baseAlone.code, 2);
    QVERIFY(baseAlone.err.contains("--base needs --bundle"));
    QTemporaryDir tmp;
    const QString bad = tmp.filePath("missing/parent");
    const Run r = cli({"export", "--target", "nginx", "--validate", "sample", "--require", "fp<=1",
                       "--out", tmp.filePath("u.conf"), "--bundle", bad});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains((bad + ": bundle: cannot create the directory").toUtf8()),
             r.err.constData());
    QFile file(tmp.filePath("a-file"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.close();
    const Run onFile = cli({"export", "--target", "nginx", "--validate", "sample", "--out",
                            "/dev/null", "--bundle", file.fileName()});
    QCOMPARE(onFile.code, 2);
    QVERIFY2(onFile.err.contains(file.fileName().toUtf8() + ": bundle: cannot create"),
             onFile.err.constData());
  }
};

QTEST_GUILESS_MAIN(TstCliExport)
#include "tst_cli_export.moc"
