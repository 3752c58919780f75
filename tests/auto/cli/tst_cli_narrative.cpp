// `spillway-cli simulate/replay --narrative` (issue 23): the table is printed exactly as without
// the flag, then the narrative — the very lines the console's panel lists for the same run
// (view::simulationNarrative / replayNarrative computed here, in process, on the same input).
#include <QTest>

#include "cli_run.hpp"
#include "spillway/fault_annotations.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/replay.hpp"
#include "spillway/sim/scenario_yaml.hpp"
#include "spillway/sim/simulator.hpp"
#include "spillway/telemetry.hpp"
#include "spillway/view/narrative.hpp"

#include <fstream>
#include <sstream>

using namespace spillway;

namespace {

const QString kCli = SPILLWAY_CLI;

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What follows the table: "\nNarrative (…):\n" and the lines.
QByteArray narrativeOf(const Run& withFlag, const Run& without) {
  if (!withFlag.out.startsWith(without.out)) return {};
  return withFlag.out.mid(without.out.size());
}

QByteArray afterHeader(const QByteArray& section) {
  const qsizetype nl = section.indexOf('\n', 1);
  return nl < 0 ? QByteArray() : section.mid(nl + 1);
}

std::string expectedSimulation(const std::string& scenario, bool protection) {
  const sim::Scenario sc =
      sim::loadScenarioFile(SPILLWAY_RESOURCES_DIR "/scenarios/" + scenario + ".yaml");
  VectorSink events;
  sim::SimOptions opt;
  opt.protection = protection;
  opt.events = &events;
  sim::Simulator s(sc, opt);
  s.run();
  return view::narrativeText(view::simulationNarrative(s.report(), events.events, &sc));
}

}  // namespace

class TstCliNarrative : public QObject {
  Q_OBJECT

 private slots:
  void simulate_data();
  void simulate();
  void replaySample();
  void notWithJson();
};

void TstCliNarrative::simulate_data() {
  QTest::addColumn<QString>("scenario");
  QTest::addColumn<bool>("protection");
  QTest::newRow("seed-000") << "seed-000" << true;
  QTest::newRow("seed-000 --no-protection") << "seed-000" << false;
  QTest::newRow("seed-003") << "seed-003" << true;
}

// The table unchanged, then the model's own lines for the same run.
void TstCliNarrative::simulate() {
  QFETCH(QString, scenario);
  QFETCH(bool, protection);
  QStringList args{"simulate", scenario};
  if (!protection) args << "--no-protection";
  const Run without = run(kCli, args);
  const Run with = run(kCli, args + QStringList{"--narrative"});
  QCOMPARE(without.code, 0);
  QCOMPARE(with.code, 0);
  const QByteArray section = narrativeOf(with, without);
  QVERIFY2(section.startsWith("\nNarrative ("), with.out.right(400).constData());
  const std::string expected = expectedSimulation(scenario.toStdString(), protection);
  QVERIFY(!expected.empty());
  QCOMPARE(afterHeader(section).toStdString(), expected);
  if (protection) QVERIFY(section.contains("tripped OPEN"));
  QVERIFY(section.contains("summary: availability"));
}

// The built-in recording: the replay's report unchanged, then its narrative in UTC.
void TstCliNarrative::replaySample() {
  const Run without = run(kCli, {"replay"});
  const Run with = run(kCli, {"replay", "--narrative"});
  QCOMPARE(without.code, 0);
  QCOMPARE(with.code, 0);
  const QByteArray section = narrativeOf(with, without);
  QVERIFY2(section.startsWith("\nNarrative (times UTC):\n"), with.out.right(400).constData());
  // The same replay in process, as the CLI runs it (default policy, seed 1, SLO 5 s).
  const auto faults =
      parseFaultAnnotations(readFile(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.faults.jsonl"),
                            "seed000-sample.faults.jsonl");
  Replayer replayer(loadPolicyFile(SPILLWAY_RESOURCES_DIR "/policies/default.yaml"),
                    ReplayOptions{});
  auto reader = JsonlReader::openFile(SPILLWAY_RESOURCES_DIR "/traces/seed000-sample.jsonl", false);
  CallRecord rec;
  while (reader->next(rec)) replayer.feed(rec);
  replayer.finish();
  const ReplayKpis k = nativeReplayKpis(replayer, faults);
  const Micros origin = k.first - k.first % kMicrosPerSecond;
  const std::string expected = view::narrativeText(
      view::replayNarrative(k, replayer.events(), origin), view::NarrativeClock{origin, true});
  QCOMPARE(afterHeader(section).toStdString(), expected);
  QVERIFY(section.contains("TTD "));
}

void TstCliNarrative::notWithJson() {
  const Run r = run(kCli, {"simulate", "seed-000", "--json", "--narrative"});
  QCOMPARE(r.code, 2);
  QVERIFY(r.err.contains("--narrative"));
}

QTEST_GUILESS_MAIN(TstCliNarrative)
#include "tst_cli_narrative.moc"
