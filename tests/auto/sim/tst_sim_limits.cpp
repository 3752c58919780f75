// What one scenario may cost (issue 17, docs/limits.md): `duration: 2500000h` was accepted
// (and the progress line overflowed); the duration, the tick count and the requests a run
// would make are bounded, with errors at the line of what is too much. The built-in scenarios
// are well within every limit. Also: complex keys and oversized text are named errors.
#include <QDir>
#include <QFile>
#include <QTest>

#include "error_of.hpp"
#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/sim/scenario_yaml.hpp"

using namespace spillway;
using spillway::testing::errorOf;
using namespace spillway::sim;

namespace {

std::string scenario(const std::string& top, const std::string& clients) {
  return "version: 1\nname: t\n" + top + "models:\n  - {name: m, instances: 2}\nclients:\n" +
         clients;
}

}  // namespace

class TstSimLimits : public QObject {
  Q_OBJECT

 private slots:
  void limits_data() {
    QTest::addColumn<QString>("yaml");
    QTest::addColumn<QString>("expected");  // "" = reads
    const std::string one = "  - {name: c, model: m, rate: 10}\n";
    QTest::newRow("the issue's 2500000h")
        << QString::fromStdString(scenario("duration: 2500000h\n", one))
        << "s.yaml:3: duration: must be at most 168h (7 days) (docs/limits.md), got 2500000h";
    QTest::newRow("a week is fine")
        << QString::fromStdString(scenario("duration: 168h\n", one)) << "";
    QTest::newRow("a week and a second")
        << QString::fromStdString(scenario("duration: 604801s\n", one))
        << "s.yaml:3: duration: must be at most 168h (7 days) (docs/limits.md), got 604801s";
    QTest::newRow("drain over an hour")
        << QString::fromStdString(scenario("duration: 1m\ndrain: 2h\n", one))
        << "s.yaml:4: drain: must be at most 1h (docs/limits.md), got 2h";
    QTest::newRow("too many ticks")
        << QString::fromStdString(scenario("duration: 48h\ntick: 10ms\n", one))
        << "s.yaml:4: tick: (duration + drain) / tick is 1.73e+07 ticks, more than the limit of "
           "10000000 (docs/limits.md): a longer tick or a shorter duration";
    QTest::newRow("too many requests: the busiest client is named")
        << QString::fromStdString(scenario("duration: 24h\n",
                                           "  - {name: a, model: m, rate: 1}\n"
                                           "  - {name: b, model: m, rate: 20000}\n"))
        << "s.yaml:8: clients[1].rate: the clients would send about 1.73e+09 requests in 24h";
    QTest::newRow("a burst counts while it lasts")
        << QString::fromStdString(
               scenario("duration: 1h\n",
                        "  - name: c\n    model: m\n    rate: 1000\n"
                        "    profile: {type: burst, start: 1m, duration: 10m, multiplier: 2000}\n"))
        << "s.yaml:9: clients[0].rate: the clients would send about 1.2e+09";
    QTest::newRow("sessions count their turns")
        << QString::fromStdString(scenario(
               "duration: 24h\n", "  - {name: c, model: m, rate: 2000, sessions: {turns: 10}}\n"))
        << "s.yaml:7: clients[0].rate: the clients would send about 1.73e+09";
    QTest::newRow("complex key") << QString::fromStdString(
                                        scenario("duration: 1m\n? [x]\n: 1\n", one))
                                 << "s.yaml:4: [x]: a key must be a plain name, not a list";
    QTest::newRow("empty") << "# nothing yet\n"
                           << "s.yaml: empty scenario";
  }
  void limits() {
    QFETCH(QString, yaml);
    QFETCH(QString, expected);
    const QString err = errorOf([&] { parseScenario(yaml.toStdString(), "s.yaml"); });
    if (expected.isEmpty())
      QVERIFY2(err.isEmpty(), qPrintable(err));
    else
      QVERIFY2(err.startsWith(expected), qPrintable(err));
  }

  void oversizedText() {
    const std::string big(input_limits::kScenario + 1, '#');
    QCOMPARE(errorOf([&] { parseScenario(big, "big.yaml"); }),
             QString("big.yaml: larger than the 1 MiB limit for a scenario file (docs/limits.md)"));
    QCOMPARE(errorOf([&] { loadScenarioFile("/dev/zero"); }),
             QString("/dev/zero: larger than the 1 MiB limit for a scenario file "
                     "(docs/limits.md)"));
  }

  // A policy path in a scenario is read with the policy's limit; the error says where.
  void policyPathIsBounded() {
    const std::string yaml =
        scenario("duration: 1m\npolicy: /dev/zero\n", "  - {name: c, model: m, rate: 10}\n");
    QCOMPARE(errorOf([&] { parseScenario(yaml, "s.yaml"); }),
             QString("s.yaml:4: policy: policy file '/dev/zero': larger than the 256 KiB limit "
                     "for a policy file (docs/limits.md)"));
  }

  // Every built-in scenario reads, so every one is within the limits (the budget is checked
  // by parseScenario itself), and checkScenarioBudget agrees after the read.
  void builtinsAreWithinTheLimits() {
    const QDir dir(QStringLiteral(SPILLWAY_RESOURCES_DIR) + "/scenarios");
    const QStringList files = dir.entryList({"*.yaml"});
    QVERIFY(files.size() >= 4);
    for (const QString& f : files) {
      const Scenario s = loadScenarioFile(dir.filePath(f).toStdString());
      checkScenarioBudget(s);
      QVERIFY(s.duration <= kMaxDuration);
    }
  }
};

QTEST_GUILESS_MAIN(TstSimLimits)
#include "tst_sim_limits.moc"
