// spillway-cli simulate and knee, end to end: the real binary through QProcess. The built-in
// seed-000 runs 40 simulated minutes in well under a second, so it is used as is; the knee
// search runs on a one-instance scenario written into a temporary directory.
#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include "cli_run.hpp"

namespace {

Run cli(const QStringList& args) {
  return run(QStringLiteral(SPILLWAY_CLI), args);
}

QString diag(const Run& r) {
  return QStringLiteral("exit %1\n--- stdout\n%2\n--- stderr\n%3")
      .arg(r.code)
      .arg(QString::fromUtf8(r.out.left(3000)), QString::fromUtf8(r.err.left(3000)));
}

QByteArray readFile(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return f.readAll();
}

bool writeFile(const QString& path, const QByteArray& text) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(text) == text.size();
}

QJsonObject parseObject(const QByteArray& text, QString* error) {
  QJsonParseError perr;
  const QJsonDocument doc = QJsonDocument::fromJson(text, &perr);
  if (perr.error != QJsonParseError::NoError) {
    *error = perr.errorString();
    return {};
  }
  if (!doc.isObject()) *error = QStringLiteral("not an object");
  return doc.object();
}

QList<QByteArray> lines(const QByteArray& text) {
  QList<QByteArray> out;
  for (const QByteArray& l : text.split('\n'))
    if (!l.isEmpty()) out.push_back(l);
  return out;
}

// The documented CSV headers (docs/scenario.md, "Output directory").
const QByteArray kInstanceHeader =
    "t_s,instance,state,ramping,admit_share,error_rate,slow_rate,window_calls,p99_ms,"
    "baseline_p99_ms,responses,failures,rejected,queue_full,overflow,busy,queued,outstanding,"
    "fault_multiplier,faulted,unhealthy,blocked_judged,blocked_would_succeed";
const QByteArray kClientHeaderStart =
    "t_s,client,originals,finished,available,failed,attempts,retries,";

// A one-instance model: 4 slots of ~100 ms, at most ~40 req/s; 16 req/s × 1, 2, 3 puts the
// third step over capacity.
const QByteArray kTiny =
    "name: tiny\n"
    "duration: 1m\n"
    "seed: 3\n"
    "models: [{name: m, instances: 1, slots: 4, queue: 32, service: {base: 100ms, sigma: 0.1}}]\n"
    "clients: [{name: c, model: m, rate: 16, timeout: 30s}]\n";

}  // namespace

class TstCliSimulate : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void defaultIsSeed000();
  void jsonReport();
  void compareJson();
  void outDirectory();
  void compareOutDirectory();
  void seedOption();
  void durationOption();
  void policyAndProtectionOptions();
  void inputErrors_data();
  void inputErrors();
  void kneeTable();
  void saveIncident();
  void kneeJson();
  void faultRowsFollowTheDefinitions();

 private:
  QTemporaryDir tmp_;
};

void TstCliSimulate::initTestCase() {
  QVERIFY2(QFile::exists(QStringLiteral(SPILLWAY_CLI)), SPILLWAY_CLI);
  QVERIFY(tmp_.isValid());
  QVERIFY(writeFile(tmp_.filePath("tiny.yaml"), kTiny));
}

void TstCliSimulate::defaultIsSeed000() {
  const Run r = cli({"simulate"});
  QVERIFY2(r.code == 0, qPrintable(diag(r)));
  const QString out = QString::fromUtf8(r.out);
  QVERIFY2(out.contains("seed-000"), qPrintable(diag(r)));
  QVERIFY2(out.contains("protection on"), qPrintable(diag(r)));
  // The per-client rows of the table: the twelve business systems of the scenario.
  for (const char* c : {"customer-service [core]", "order-assistant [core]", "data-labeling"})
    QVERIFY2(out.contains(c), c);
}

void TstCliSimulate::jsonReport() {
  const Run r = cli({"simulate", "--json"});
  QVERIFY2(r.code == 0, qPrintable(diag(r)));
  QString err;
  const QJsonObject rep = parseObject(r.out, &err);
  QVERIFY2(err.isEmpty(), qPrintable(err));
  QVERIFY(rep["scenario"].toString().startsWith("seed-000"));
  QCOMPARE(rep["protection"].toBool(), true);
  // Originals = Σ ends + in flight at the end.
  double ended = 0;
  for (const QJsonValue& v : rep["ends"].toObject()) ended += v.toDouble();
  QCOMPARE(ended + rep["in_flight_at_end"].toDouble(), rep["originals"].toDouble());
  const QJsonObject k = rep["kpis"].toObject();
  for (const char* key : {"availability", "core_availability", "availability_during_faults",
                          "false_positive_rate", "cascade_rate"}) {
    const QJsonObject ratio = k[key].toObject();
    QVERIFY2(ratio.contains("num") && ratio.contains("den") && ratio.contains("value"), key);
    QVERIFY2(ratio["den"].toDouble() > 0, key);
    QCOMPARE(ratio["value"].toDouble(), ratio["num"].toDouble() / ratio["den"].toDouble());
  }
  // Interception is paired with a baseline run (kpis.md): one run alone has none to pair with,
  // so it is n/a — not the run's own share of faults that did not spread (1 − cascade_rate).
  const QJsonObject interception = k["fault_interception_rate"].toObject();
  QCOMPARE(interception["den"].toDouble(), 0.0);
  QVERIFY(interception["value"].isNull());
  QCOMPARE(rep["clients"].toArray().size(), 13);
  QCOMPARE(rep["instances"].toArray().size(), 6);  // 4 x chat-72b and the 2 x chat-32b backup
  const QJsonArray faults = rep["faults"].toArray();
  QCOMPARE(faults.size(), 6);  // 3 faults and 3 benign events, flagged
  for (qsizetype f = 0; f < faults.size(); ++f) {
    QCOMPARE(faults[f].toObject()["benign"].toBool(), f >= 3);
    // Whether it spread here; a per-row "intercepted" read as interception, which is paired.
    QVERIFY(faults[f].toObject()["spread"].isBool());
    QVERIFY(!faults[f].toObject().contains("intercepted"));
  }
  // 误伤 with its parts and the collateral share beside it (docs/kpis.md).
  const double fp = k["false_positive_rate"].toObject()["num"].toDouble();
  const QJsonObject parts = k["false_positive_parts"].toObject();
  QCOMPARE(parts["false_trip"].toObject()["num"].toDouble() +
               parts["recovery_lag"].toObject()["num"].toDouble(),
           fp);
  QCOMPARE(k["collateral_share"].toObject()["den"].toDouble(),
           k["false_positive_rate"].toObject()["den"].toDouble());
  QVERIFY(k.contains("false_trips_per_hour"));
}

void TstCliSimulate::compareJson() {
  const Run r = cli({"simulate", "--compare", "--json"});
  QVERIFY2(r.code == 0, qPrintable(diag(r)));
  QString err;
  const QJsonObject cmp = parseObject(r.out, &err);
  QVERIFY2(err.isEmpty(), qPrintable(err));
  const QJsonObject base = cmp["baseline"].toObject(), prot = cmp["protected"].toObject();
  QCOMPARE(base["protection"].toBool(), false);
  QCOMPARE(prot["protection"].toBool(), true);
  QVERIFY(base["kpis"].isObject() && prot["kpis"].isObject());
  // The baseline never blocks: its FP rate is n/a (null), not 0.
  QVERIFY(base["kpis"].toObject()["false_positive_rate"].toObject()["value"].isNull());
  QVERIFY(cmp["seed_figures"].toObject().contains("core_availability"));
  // The protected half is the same run as a plain protected simulate, except that it has a
  // baseline to pair interception with (the plain run's is n/a).
  const Run single = cli({"simulate", "--json"});
  QVERIFY2(single.code == 0, qPrintable(diag(single)));
  auto withoutInterception = [](QJsonObject run) {
    QJsonObject k = run["kpis"].toObject();
    k.remove("fault_interception_rate");
    run["kpis"] = k;
    return QJsonDocument(run).toJson();
  };
  QCOMPARE(withoutInterception(prot),
           withoutInterception(QJsonDocument::fromJson(single.out).object()));
  QCOMPARE(prot["kpis"].toObject()["fault_interception_rate"], cmp["fault_interception_rate"]);
  QVERIFY(cmp["fault_interception_rate"].toObject()["den"].toDouble() > 0);
}

void TstCliSimulate::outDirectory() {
  const QString a = tmp_.filePath("out-a"), b = tmp_.filePath("out-b");
  const Run ra = cli({"simulate", "--out", a, "--json"});
  QVERIFY2(ra.code == 0, qPrintable(diag(ra)));
  const Run rb = cli({"simulate", "--out", b});
  QVERIFY2(rb.code == 0, qPrintable(diag(rb)));

  const QStringList files{"report.json", "events.jsonl", "series-instances.csv",
                          "series-clients.csv"};
  for (const QString& f : files) {
    const QByteArray x = readFile(a + "/" + f), y = readFile(b + "/" + f);
    QVERIFY2(!x.isEmpty(), qPrintable(f));
    QVERIFY2(x == y, qPrintable(f + " differs between two identical runs"));
  }
  // report.json is what --json printed.
  QCOMPARE(QJsonDocument::fromJson(readFile(a + "/report.json")).toJson(),
           QJsonDocument::fromJson(ra.out).toJson());

  // events.jsonl: one JSON object per line; the protected run trips on the leak.
  const QList<QByteArray> ev = lines(readFile(a + "/events.jsonl"));
  QVERIFY(!ev.isEmpty());
  for (const QByteArray& l : ev) {
    QString err;
    parseObject(l, &err);
    QVERIFY2(err.isEmpty(), l.constData());
  }

  // The series: documented headers, one row per instance (client) per tick, rows of the
  // header's width, names from the scenario.
  const QList<QByteArray> inst = lines(readFile(a + "/series-instances.csv"));
  QCOMPARE(inst.front(), kInstanceHeader);
  const int instCols = inst.front().count(',');
  QSet<QString> names;
  for (int i = 1; i < inst.size(); ++i) {
    QCOMPARE(inst[i].count(','), instCols);
    names.insert(QString::fromUtf8(inst[i].split(',')[1]));
  }
  QCOMPARE(names, (QSet<QString>{"chat-72b-1", "chat-72b-2", "chat-72b-3", "chat-72b-4",
                                 "chat-32b-1", "chat-32b-2"}));
  QCOMPARE((inst.size() - 1) % 6, 0);
  const QList<QByteArray> cl = lines(readFile(a + "/series-clients.csv"));
  QVERIFY2(cl.front().startsWith(kClientHeaderStart), cl.front().constData());
  QVERIFY(cl.front().endsWith(",p50_ms,p99_ms"));
  QCOMPARE((cl.size() - 1) % 13, 0);
  QCOMPARE((cl.size() - 1) / 13, (inst.size() - 1) / 6);  // the same ticks
  // 40 min + at most the 3 min drain, at 1 s per tick.
  QVERIFY((inst.size() - 1) / 6 >= 40 * 60 && (inst.size() - 1) / 6 <= 43 * 60);
}

void TstCliSimulate::compareOutDirectory() {
  const QString d = tmp_.filePath("out-compare");
  const Run r = cli({"simulate", "--compare", "--out", d});
  QVERIFY2(r.code == 0, qPrintable(diag(r)));
  for (const char* sub : {"baseline", "protected"})
    for (const char* f :
         {"report.json", "events.jsonl", "series-instances.csv", "series-clients.csv"})
      QVERIFY2(QFile::exists(QStringLiteral("%1/%2/%3").arg(d, sub, f)), f);
  QString err;
  const QJsonObject cmp = parseObject(readFile(d + "/compare.json"), &err);
  QVERIFY2(err.isEmpty(), qPrintable(err));
  QCOMPARE(cmp["baseline"].toObject()["protection"].toBool(), false);
  // The table on stdout puts both runs side by side, every rate with its sample size.
  QVERIFY(r.out.contains("baseline (off)") && r.out.contains("protected (on)"));
  for (const QString& l : QString::fromUtf8(r.out).split('\n'))
    if (l.trimmed().startsWith("availability (within SLO)")) QCOMPARE(l.count("(n="), 2);
}

void TstCliSimulate::seedOption() {
  const Run a = cli({"simulate", "--json", "--seed", "5", "--duration", "3m"});
  const Run b = cli({"simulate", "--json", "--seed", "5", "--duration", "3m"});
  const Run c = cli({"simulate", "--json", "--seed", "6", "--duration", "3m"});
  QVERIFY2(a.code == 0 && b.code == 0 && c.code == 0, qPrintable(diag(c)));
  QCOMPARE(a.out, b.out);
  QVERIFY(a.out != c.out);
  QCOMPARE(QJsonDocument::fromJson(c.out).object()["seed"].toInteger(), 6);
}

void TstCliSimulate::durationOption() {
  const Run full = cli({"simulate", "--json"});
  const Run r = cli({"simulate", "--json", "--duration", "2m"});
  QVERIFY2(full.code == 0 && r.code == 0, qPrintable(diag(r)));
  const QJsonObject f = QJsonDocument::fromJson(full.out).object();
  const QJsonObject s = QJsonDocument::fromJson(r.out).object();
  // 2 min of arrivals, then at most the 3 min drain.
  QVERIFY(s["simulated_s"].toDouble() >= 120);
  QVERIFY(s["simulated_s"].toDouble() <= 120 + 180);
  // Every fault of seed-000 starts at 5 min or later: all dropped.
  QCOMPARE(s["faults"].toArray().size(), 0);
  // About 2/40 of the full run's requests (Poisson arrivals; 2× slack either way).
  const double ratio = s["originals"].toDouble() / f["originals"].toDouble();
  QVERIFY2(ratio > 0.025 && ratio < 0.1, qPrintable(QString::number(ratio)));
}

// --policy replaces the scenario's policy: a breaker forced open blocks every try, so every
// original ends rejected. --no-protection runs the baseline: nothing is ever blocked.
void TstCliSimulate::policyAndProtectionOptions() {
  QVERIFY(writeFile(tmp_.filePath("forced.yaml"), "name: forced\nbreaker: {mode: forced_open}\n"));
  const Run forced =
      cli({"simulate", "--json", "--duration", "2m", "--policy", tmp_.filePath("forced.yaml")});
  QVERIFY2(forced.code == 0, qPrintable(diag(forced)));
  const QJsonObject f = QJsonDocument::fromJson(forced.out).object();
  QVERIFY(f["originals"].toDouble() > 0);
  QCOMPARE(f["ends"].toObject()["rejected"].toDouble(), f["originals"].toDouble());
  QCOMPARE(f["attempts"].toDouble(), 0.0);

  const Run off = cli({"simulate", "--json", "--no-protection"});
  QVERIFY2(off.code == 0, qPrintable(diag(off)));
  const QJsonObject o = QJsonDocument::fromJson(off.out).object();
  QCOMPARE(o["protection"].toBool(), false);
  QCOMPARE(o["kpis"].toObject()["breaker_opens"].toDouble(), 0.0);
  QCOMPARE(o["ends"].toObject()["rejected"].toDouble(), 0.0);
}

void TstCliSimulate::inputErrors_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<QString>("stderrContains");  // {tmp} is the temporary directory
  QTest::addColumn<QByteArray>("file");         // written to {tmp}/bad.yaml first, if any
  QTest::newRow("one seed is an anecdote")
      << QStringList{"simulate", "--seeds", "1"} << "--seeds: expected 2" << QByteArray();
  QTest::newRow("seeds without a number")
      << QStringList{"simulate", "--seeds", "ten"} << "--seeds: expected 2" << QByteArray();
  QTest::newRow("seeds and out") << QStringList{"simulate", "--seeds", "3", "--out", "{tmp}/x"}
                                 << "--out: not with --seeds" << QByteArray();
  QTest::newRow("scenario error with line")
      << QStringList{"simulate", "{tmp}/bad.yaml"} << "{tmp}/bad.yaml:3: clients[0].rate: "
      << QByteArray(
             "duration: 1m\nmodels: [{name: m, instances: 1}]\n"
             "clients: [{name: c, model: m, rate: lots}]\n");
  QTest::newRow("scenario YAML syntax")
      << QStringList{"knee", "{tmp}/bad.yaml"} << "{tmp}/bad.yaml:2: YAML syntax"
      << QByteArray("duration: 1m\nname: a: b\n");
  QTest::newRow("unknown built-in")
      << QStringList{"simulate", "seed-999"} << "seed-999" << QByteArray();
  QTest::newRow("missing file") << QStringList{"simulate", "{tmp}/none.yaml"}
                                << "{tmp}/none.yaml: cannot open" << QByteArray();
  QTest::newRow("duration without unit")
      << QStringList{"simulate", "--duration", "5"} << "--duration" << QByteArray();
  QTest::newRow("two scenarios") << QStringList{"simulate", "seed-000", "seed-001"}
                                 << "one scenario at a time" << QByteArray();
  QTest::newRow("bad seed") << QStringList{"simulate", "--seed", "x"} << "--seed" << QByteArray();
  QTest::newRow("knee step too short")
      << QStringList{"knee", "{tmp}/tiny.yaml", "--step-duration", "30s"} << "--step-duration"
      << QByteArray();
  QTest::newRow("knee to below from")
      << QStringList{"knee", "{tmp}/tiny.yaml", "--from", "2", "--to", "1"} << "--to"
      << QByteArray();
  QTest::newRow("unknown option") << QStringList{"simulate", "--frobnicate"} << "frobnicate"
                                  << QByteArray();
}

void TstCliSimulate::inputErrors() {
  QFETCH(QStringList, args);
  QFETCH(QString, stderrContains);
  QFETCH(QByteArray, file);
  if (!file.isEmpty()) QVERIFY(writeFile(tmp_.filePath("bad.yaml"), file));
  for (QString& a : args) a.replace("{tmp}", tmp_.path());
  stderrContains.replace("{tmp}", tmp_.path());
  const Run r = cli(args);
  QVERIFY2(r.code == 2, qPrintable(diag(r)));
  QVERIFY2(QString::fromUtf8(r.err).contains(stderrContains), qPrintable(diag(r)));
  QVERIFY(r.out.isEmpty());
}

void TstCliSimulate::kneeTable() {
  const Run r = cli({"knee", tmp_.filePath("tiny.yaml"), "--from", "1", "--to", "3", "--step", "1",
                     "--step-duration", "2m"});
  QVERIFY2(r.code == 0, qPrintable(diag(r)));
  const QString out = QString::fromUtf8(r.out);
  QVERIFY2(out.contains("offered/s") && out.contains("p99"), qPrintable(out));
  QVERIFY2(out.contains(" % (n="), qPrintable(out));  // each step's error rate with its n
  // Three steps (100, 200, 300 %); the third, 48 req/s, is over the ~40 req/s capacity.
  static const QRegularExpression row(QStringLiteral(R"(^\s+(\d+)\s+(\d+\.\d)\s.*$)"),
                                      QRegularExpression::MultilineOption);
  QStringList loads;
  for (auto it = row.globalMatch(out); it.hasNext();) loads << it.next().captured(1);
  QCOMPARE(loads, (QStringList{"100", "200", "300"}));
  static const QRegularExpression kneeRow(QStringLiteral(R"(^\s+300\s.*<- knee$)"),
                                          QRegularExpression::MultilineOption);
  QVERIFY2(kneeRow.match(out).hasMatch(), qPrintable(out));
  QVERIFY2(out.contains("Knee at 300 %"), qPrintable(out));
  // Progress per step goes to stderr.
  QCOMPARE(QString::fromUtf8(r.err).count("load "), 3);
}

void TstCliSimulate::kneeJson() {
  const Run r = cli({"knee", tmp_.filePath("tiny.yaml"), "--from", "1", "--to", "3", "--step", "1",
                     "--step-duration", "2m", "--json"});
  QVERIFY2(r.code == 0, qPrintable(diag(r)));
  QString err;
  const QJsonObject k = parseObject(r.out, &err);
  QVERIFY2(err.isEmpty(), qPrintable(err));
  const QJsonArray steps = k["steps"].toArray();
  QCOMPARE(steps.size(), 3);
  QCOMPARE(steps[0].toObject()["offered_rps"].toDouble(), 16.0);
  QCOMPARE(steps[2].toObject()["offered_rps"].toDouble(), 48.0);
  QCOMPARE(k["knee_index"].toInt(), 2);
  QCOMPARE(k["knee_factor"].toDouble(), 3.0);
  QVERIFY(steps[2].toObject()["ran_s"].toDouble() <= 120);
}

// A simulated run saved into the library is an incident like an imported one: its samples per
// instance, the scenario's faults as annotations; saving the same run again stores nothing, and
// replaying it detects the leak.
void TstCliSimulate::saveIncident() {
  QTemporaryDir dir;
  const QString lib = dir.filePath("lib.db");
  const QStringList save{"simulate",        "seed-000", "--no-protection", "--duration", "25m",
                         "--save-incident", "leak",     "--library",       lib};
  Run r = cli(save);
  QVERIFY2(r.code == 0, r.err.constData());
  QVERIFY2(r.err.contains("saved"), r.err.constData());
  r = cli(save);
  QCOMPARE(r.code, 0);
  QVERIFY2(r.err.contains("already holds this run"), r.err.constData());
  r = cli({"library", "list", "--library", lib, "--json"});
  QCOMPARE(r.code, 0);
  const QJsonArray list = QJsonDocument::fromJson(r.out).array();
  QCOMPARE(list.size(), 1);
  r = cli({"library", "show", "leak", "--library", lib});
  QVERIFY2(r.out.contains("latency_drift") && r.out.contains("(simulator)"), r.out.constData());
  r = cli({"replay", "--incident", "leak", "--library", lib, "--report", dir.filePath("r.json")});
  QVERIFY2(r.code == 0 || r.code == 1, r.err.constData());
  QFile f(dir.filePath("r.json"));
  QVERIFY(f.open(QIODevice::ReadOnly));
  const QJsonArray faults = QJsonDocument::fromJson(f.readAll()).object()["faults"].toArray();
  bool leakDetected = false;
  for (const auto& v : faults)
    leakDetected = leakDetected || (v.toObject()["instance"].toString() == "chat-72b-3" &&
                                    v.toObject()["detected"].toBool());
  QVERIFY2(leakDetected, f.fileName().toUtf8().constData());
  // Only the unprotected run is an incident: a protected-only run is refused.
  r = cli({"simulate", "seed-000", "--save-incident", "x", "--library", lib});
  QCOMPARE(r.code, 2);
  QVERIFY(r.err.contains("--save-incident"));
}

QTEST_GUILESS_MAIN(TstCliSimulate)
// kpis.md: a fault never detected has TTD ∞ — a mean over the detected ones alone read 46 s
// with the leak missed; interception is paired with the baseline, n/a in a single run.
void TstCliSimulate::faultRowsFollowTheDefinitions() {
  QVERIFY(writeFile(tmp_.filePath("lax.yaml"),
                    "version: 1\nname: lax\nbreaker:\n  trip: {error_rate: 1, slow_rate: 1}\n"));
  const Run lax = cli({"simulate", "--policy", tmp_.filePath("lax.yaml"), "--duration", "25m"});
  QVERIFY2(lax.code == 0, qPrintable(diag(lax)));
  const QString out = QString::fromUtf8(lax.out);
  auto rowOf = [&](const QString& out, const char* name) {
    for (const QString& l : out.split('\n'))
      if (l.trimmed().startsWith(name))
        return l.mid(l.indexOf(name) + int(qstrlen(name))).trimmed();
    return QString("(no row)");
  };
  QCOMPARE(rowOf(out, "TTD (worst)"), QString("never (1 not detected)"));
  QCOMPARE(rowOf(out, "TTD (mean, detected faults)"), QString("n/a (n=0)"));
  QCOMPARE(rowOf(out, "fault interception rate"),
           QString("n/a (paired with the baseline: --compare)"));
  const Run own = cli({"simulate", "--duration", "25m"});
  const QString caught = QString::fromUtf8(own.out);
  QVERIFY2(!rowOf(caught, "TTD (worst)").startsWith("never"), qPrintable(caught));
  QVERIFY2(rowOf(caught, "recovery lag (fault end -> full)").contains("(n="), qPrintable(caught));
}

#include "tst_cli_simulate.moc"
