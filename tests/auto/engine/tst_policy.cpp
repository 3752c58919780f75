// Policy files: the shipped default, the YAML round trip, every error naming file:line: key,
// per-model / per-instance overrides, and the duration syntax every policy uses.
#include <QString>
#include <QTest>

#include <functional>
#include <string>

#include "spillway/engine.hpp"
#include "spillway/input_error.hpp"
#include "spillway/policy.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/time.hpp"

using namespace spillway;

using PolicyMutator = std::function<void(Policy&)>;
Q_DECLARE_METATYPE(PolicyMutator)

namespace {

// First difference between two breaker configs, or an empty string when equal. Compares every
// field of BreakerConfig (keep in sync with policy.hpp).
QString breakerDiff(const BreakerConfig& a, const BreakerConfig& b, const QString& at) {
#define SPW_CMP(field)                                                               \
  if (!(a.field == b.field))                                                         \
    return at + QStringLiteral("." #field ": ") + QString::number(double(a.field)) + \
           QStringLiteral(" != ") + QString::number(double(b.field));
  SPW_CMP(mode)
  SPW_CMP(window.type)
  SPW_CMP(window.length)
  SPW_CMP(window.bucket)
  SPW_CMP(window.calls)
  SPW_CMP(minCalls)
  SPW_CMP(trip.errorRate)
  SPW_CMP(trip.slowRate)
  SPW_CMP(trip.sustain)
  for (int s = 0; s < 1000; ++s) SPW_CMP(classify.failureStatus[s])
  SPW_CMP(classify.clientErrors)
  SPW_CMP(classify.timeoutIsFailure)
  SPW_CMP(classify.resetIsFailure)
  SPW_CMP(slow.k)
  SPW_CMP(slow.floor)
  SPW_CMP(slow.absolute)
  SPW_CMP(slow.initialBaseline)
  SPW_CMP(baseline.horizon)
  SPW_CMP(baseline.minCalls)
  SPW_CMP(baseline.freezeErrorRate)
  SPW_CMP(baseline.freezeSlowRate)
  SPW_CMP(baseline.freezeDriftRatio)
  SPW_CMP(open.duration)
  SPW_CMP(open.backoffMultiplier)
  SPW_CMP(open.maxDuration)
  SPW_CMP(open.jitter)
  SPW_CMP(open.decayAfter)
  SPW_CMP(halfOpen.probeShare)
  SPW_CMP(halfOpen.successStreak)
  SPW_CMP(ramp.duration)
  SPW_CMP(ramp.shape)
  SPW_CMP(ramp.steps)
  SPW_CMP(ramp.relapseReopens)
  return {};
}

QString calibrationDiff(const CalibrationConfig& a, const CalibrationConfig& b) {
  const QString at = QStringLiteral("calibration");
  SPW_CMP(fpTarget)
  SPW_CMP(period)
  SPW_CMP(minBlocked)
  SPW_CMP(rateStep)
  SPW_CMP(sustainStep)
  return {};
#undef SPW_CMP
}

// Overrides are compared by their key sets, their typed fields (set or not, and the values)
// and by what they resolve to.
QString overridesDiff(const Policy& a, const Policy& b, bool byModel) {
  const auto& ma = byModel ? a.modelOverrides : a.instanceOverrides;
  const auto& mb = byModel ? b.modelOverrides : b.instanceOverrides;
  const QString scope = byModel ? QStringLiteral("models") : QStringLiteral("instances");
  if (ma.size() != mb.size()) return scope + QStringLiteral(": different number of overrides");
  for (const auto& [key, o] : ma) {
    const auto it = mb.find(key);
    if (it == mb.end()) return scope + ": " + QString::fromStdString(key) + " missing";
    if (!(o == it->second)) return scope + "." + QString::fromStdString(key) + ": fields differ";
    const BreakerConfig ra = byModel ? resolveBreaker(a, key, "") : resolveBreaker(a, "", key);
    const BreakerConfig rb = byModel ? resolveBreaker(b, key, "") : resolveBreaker(b, "", key);
    const QString d = breakerDiff(ra, rb, scope + "." + QString::fromStdString(key));
    if (!d.isEmpty()) return d;
  }
  return {};
}

// Every field of a Policy; empty when equal.
QString policyDiff(const Policy& a, const Policy& b) {
  if (a.name != b.name)
    return "name: " + QString::fromStdString(a.name) + " != " + QString::fromStdString(b.name);
  QString d = breakerDiff(a.breaker, b.breaker, QStringLiteral("breaker"));
  if (d.isEmpty()) d = calibrationDiff(a.calibration, b.calibration);
  if (d.isEmpty()) d = overridesDiff(a, b, true);
  if (d.isEmpty()) d = overridesDiff(a, b, false);
  return d;
}

// A policy whose every field differs from the compiled defaults.
void mutateEverything(Policy& p) {
  p.name = "strict: core #1";
  BreakerConfig& b = p.breaker;
  b.mode = BreakerMode::MetricsOnly;
  b.window = {WindowType::Count, seconds(20), millis(250), 50};
  b.minCalls = 7;
  b.trip = {0.1, 1.0 / 3.0, millis(1500)};
  b.classify.failureStatus.fill(false);
  b.classify.failureStatus[0] = true;
  for (int s = 400; s < 500; ++s) b.classify.failureStatus[s] = true;
  b.classify.failureStatus[503] = true;
  b.classify.clientErrors = ClientErrors::Failure;
  b.classify.timeoutIsFailure = false;
  b.classify.resetIsFailure = false;
  b.slow = {2.5, 0, millis(750), millis(1200)};
  b.baseline = {seconds(90), 50, 0.3, 0.15, 1.05};
  b.open = {millis(2500), 2.0, 3600 * kMicrosPerSecond, 0.2, seconds(45)};
  b.halfOpen = {0.05, 3};
  b.ramp = {0, RampShape::Step, 8, false};
  p.calibration = {0.2, seconds(90), 5, 0.5, 0};
}

Policy parseInline(const char* yaml) {
  return parsePolicy(yaml, "<inline>");
}

}  // namespace

class TstPolicy : public QObject {
  Q_OBJECT

 private slots:
  void defaultFileMatchesCompiledDefaults();
  void zeroNeedsNoUnit();
  void roundTrip_data();
  void roundTrip();
  void errors_data();
  void errors();
  void missingFile();
  void overridesLayer();
  void overridesLayeredInconsistent();
  void engineUsesOverriddenConfig();
  void parseDuration_data();
  void parseDuration();
  void formatDuration_data();
  void formatDuration();
  void durationRoundTrip();
};

void TstPolicy::defaultFileMatchesCompiledDefaults() {
  const Policy p = loadPolicyFile(SPILLWAY_DEFAULT_POLICY);
  const Policy compiled;
  QCOMPARE(p.name, std::string("seed-000-default"));
  // The numbers the file's header promises (seed 000) ...
  QCOMPARE(p.breaker.mode, BreakerMode::Normal);
  QCOMPARE(p.breaker.window.type, WindowType::Time);
  QCOMPARE(p.breaker.window.length, seconds(10));
  QCOMPARE(p.breaker.window.bucket, seconds(1));
  QCOMPARE(p.breaker.minCalls, 20u);
  QCOMPARE(p.breaker.trip.errorRate, 0.5);
  QCOMPARE(p.breaker.trip.slowRate, 0.4);
  QCOMPARE(p.breaker.trip.sustain, seconds(3));
  QCOMPARE(p.breaker.slow.k, 3.0);
  QCOMPARE(p.breaker.halfOpen.probeShare, 0.1);
  QCOMPARE(p.breaker.halfOpen.successStreak, 5u);
  QCOMPARE(p.calibration.fpTarget, 0.05);
  // ... and each of them coincides with the compiled default.
  QCOMPARE(p.breaker.window.length, compiled.breaker.window.length);
  QCOMPARE(p.breaker.window.bucket, compiled.breaker.window.bucket);
  QCOMPARE(p.breaker.minCalls, compiled.breaker.minCalls);
  QCOMPARE(p.breaker.trip.errorRate, compiled.breaker.trip.errorRate);
  QCOMPARE(p.breaker.trip.slowRate, compiled.breaker.trip.slowRate);
  QCOMPARE(p.breaker.trip.sustain, compiled.breaker.trip.sustain);
  QCOMPARE(p.breaker.slow.k, compiled.breaker.slow.k);
  QCOMPARE(p.breaker.slow.floor, compiled.breaker.slow.floor);
  QCOMPARE(p.breaker.open.duration, compiled.breaker.open.duration);
  QCOMPARE(p.breaker.open.maxDuration, compiled.breaker.open.maxDuration);
  QCOMPARE(p.breaker.halfOpen.probeShare, compiled.breaker.halfOpen.probeShare);
  QCOMPARE(p.breaker.halfOpen.successStreak, compiled.breaker.halfOpen.successStreak);
  QCOMPARE(p.breaker.ramp.duration, compiled.breaker.ramp.duration);
  QCOMPARE(p.calibration.period, compiled.calibration.period);
  // failure_statuses: [5xx, 0, 429] is exactly the compiled classification.
  QVERIFY(p.breaker.classify.failureStatus == compiled.breaker.classify.failureStatus);
  QVERIFY(p.breaker.classify.failureStatus[0]);
  QVERIFY(p.breaker.classify.failureStatus[429]);
  QVERIFY(p.breaker.classify.failureStatus[503]);
  QVERIFY(!p.breaker.classify.failureStatus[404]);
  // The file states every breaker/calibration value explicitly or leaves the default: either
  // way the whole config equals the compiled one.
  const QString bd = breakerDiff(p.breaker, compiled.breaker, "breaker");
  QVERIFY2(bd.isEmpty(), qPrintable(bd));
  const QString cd = calibrationDiff(p.calibration, compiled.calibration);
  QVERIFY2(cd.isEmpty(), qPrintable(cd));
  QVERIFY(p.modelOverrides.empty());
  QVERIFY(p.instanceOverrides.empty());
}

void TstPolicy::roundTrip_data() {
  QTest::addColumn<PolicyMutator>("mutate");
  auto row = [](const char* name, PolicyMutator m) { QTest::newRow(name) << m; };
  // Each row changes one field from the default (so the equality helper must see it) and then
  // the YAML round trip must keep it.
  row("name", [](Policy& p) { p.name = "a: b # c"; });
  row("name null", [](Policy& p) { p.name = "null"; });
  row("name empty", [](Policy& p) { p.name = ""; });
  row("name two lines", [](Policy& p) { p.name = "first\nsecond"; });
  row("mode forced_open", [](Policy& p) { p.breaker.mode = BreakerMode::ForcedOpen; });
  row("mode disabled", [](Policy& p) { p.breaker.mode = BreakerMode::Disabled; });
  row("window count", [](Policy& p) {
    p.breaker.window.type = WindowType::Count;
    p.breaker.window.calls = 37;
  });
  row("window length", [](Policy& p) { p.breaker.window.length = millis(12500); });
  row("window bucket", [](Policy& p) { p.breaker.window.bucket = millis(250); });
  row("min_calls", [](Policy& p) { p.breaker.minCalls = 3; });
  row("error_rate inexact", [](Policy& p) { p.breaker.trip.errorRate = 0.1; });
  row("slow_rate third", [](Policy& p) { p.breaker.trip.slowRate = 1.0 / 3.0; });
  row("sustain zero", [](Policy& p) { p.breaker.trip.sustain = 0; });
  row("sustain fractional", [](Policy& p) { p.breaker.trip.sustain = 1500; });
  row("no failure statuses", [](Policy& p) { p.breaker.classify.failureStatus.fill(false); });
  row("single statuses", [](Policy& p) {
    p.breaker.classify.failureStatus.fill(false);
    p.breaker.classify.failureStatus[502] = true;
    p.breaker.classify.failureStatus[999] = true;
  });
  row("client errors", [](Policy& p) { p.breaker.classify.clientErrors = ClientErrors::Success; });
  row("timeout success", [](Policy& p) { p.breaker.classify.timeoutIsFailure = false; });
  row("reset success", [](Policy& p) { p.breaker.classify.resetIsFailure = false; });
  row("slow k", [](Policy& p) { p.breaker.slow.k = 2.25; });
  row("slow floor zero", [](Policy& p) { p.breaker.slow.floor = 0; });
  row("slow absolute", [](Policy& p) { p.breaker.slow.absolute = millis(800); });
  row("initial baseline", [](Policy& p) { p.breaker.slow.initialBaseline = 1234567; });
  row("baseline horizon", [](Policy& p) { p.breaker.baseline.horizon = seconds(61); });
  row("baseline min_calls", [](Policy& p) { p.breaker.baseline.minCalls = 1; });
  row("freeze error", [](Policy& p) { p.breaker.baseline.freezeErrorRate = 0.7; });
  row("freeze slow", [](Policy& p) { p.breaker.baseline.freezeSlowRate = 0.01; });
  row("freeze drift", [](Policy& p) { p.breaker.baseline.freezeDriftRatio = 1.0; });
  row("open duration", [](Policy& p) { p.breaker.open.duration = 250; });
  row("backoff", [](Policy& p) { p.breaker.open.backoffMultiplier = 2.0; });
  row("max duration", [](Policy& p) { p.breaker.open.maxDuration = 7200 * kMicrosPerSecond; });
  row("jitter", [](Policy& p) { p.breaker.open.jitter = 0.3; });
  row("decay after", [](Policy& p) { p.breaker.open.decayAfter = seconds(5); });
  row("probe share all", [](Policy& p) { p.breaker.halfOpen.probeShare = 1.0; });
  row("success streak", [](Policy& p) { p.breaker.halfOpen.successStreak = 1; });
  row("ramp off", [](Policy& p) { p.breaker.ramp.duration = 0; });
  row("ramp step", [](Policy& p) {
    p.breaker.ramp.shape = RampShape::Step;
    p.breaker.ramp.steps = 9;
  });
  row("no relapse", [](Policy& p) { p.breaker.ramp.relapseReopens = false; });
  row("fp target", [](Policy& p) { p.calibration.fpTarget = 0.01; });
  row("period", [](Policy& p) { p.calibration.period = seconds(30); });
  row("min blocked", [](Policy& p) { p.calibration.minBlocked = 1; });
  row("rate step", [](Policy& p) { p.calibration.rateStep = 0.5; });
  row("sustain step zero", [](Policy& p) { p.calibration.sustainStep = 0; });
  row("everything", mutateEverything);
  // Overrides built through the parser: their lines and every layer.
  row("model override", [](Policy& p) {
    p = parseInline(
        "overrides:\n"
        "  models:\n"
        "    chat-72b:\n"
        "      trip: { error_rate: 0.3, sustain: 1s }\n"
        "      open:\n"
        "        duration: 20s\n"
        "    \"gpt-4o:latest\":\n"
        "      mode: disabled\n");
  });
  row("instance override", [](Policy& p) {
    p = parseInline(
        "overrides:\n"
        "  instances:\n"
        "    chat-72b-3:\n"
        "      half_open: { success_streak: 10 }\n"
        "      classify: { failure_statuses: [0, 4xx], timeout: success }\n");
  });
  row("everything and overrides", [](Policy& p) {
    p = parseInline(
        "name: layered\n"
        "breaker:\n"
        "  min_calls: 4\n"
        "  window: { length: 20s, bucket: 2s }\n"
        "overrides:\n"
        "  models:\n"
        "    chat-72b: { window: { length: 5s } }\n"
        "    embed: { mode: metrics_only }\n"
        "  instances:\n"
        "    chat-72b-3: { window: { bucket: 500ms }, ramp: { duration: off } }\n");
    const auto models = p.modelOverrides;
    const auto instances = p.instanceOverrides;
    mutateEverything(p);
    p.modelOverrides = models;
    p.instanceOverrides = instances;
  });
}

void TstPolicy::roundTrip() {
  QFETCH(PolicyMutator, mutate);
  Policy p;
  mutate(p);
  // The helper must see the change (otherwise this row proves nothing).
  QVERIFY(!policyDiff(p, Policy{}).isEmpty());

  const std::string yaml = policyToYaml(p);
  Policy q;
  try {
    q = parsePolicy(yaml, "<roundtrip>");
  } catch (const InputError& e) {
    QFAIL(qPrintable(QString("policyToYaml wrote a policy parsePolicy rejects: %1\n%2")
                         .arg(e.what(), QString::fromStdString(yaml))));
  }
  const QString d = policyDiff(p, q);
  QVERIFY2(d.isEmpty(), qPrintable(d + "\n" + QString::fromStdString(yaml)));
  // Writing the read-back policy gives the same text: the format is a fixed point.
  QCOMPARE(policyToYaml(q), yaml);
}

void TstPolicy::errors_data() {
  QTest::addColumn<QByteArray>("yaml");
  QTest::addColumn<int>("line");
  QTest::addColumn<QString>("field");
  const auto row = [](const char* name, const char* yaml, int line, const char* field) {
    QTest::newRow(name) << QByteArray(yaml) << line << QString::fromUtf8(field);
  };

  // Lines are 1-based; comment and blank lines count.
  // Bytes that are not UTF-8 text do not survive being written back (found by fuzz_policy_yaml:
  // a model named so was emitted as a plain key that no longer read).
  row("name not UTF-8", "version: 1\nname: caf\xe9\n", 2, "name");
  row("model key not UTF-8",
      "version: 1\n"
      "models:\n"
      "  big\xff\xbd: {tier: 1, quality: 0.9}\n",
      3, "models");
  row("unknown key (typo)",
      "version: 1\n"
      "breaker:\n"
      "  trip:\n"
      "    eror_rate: 0.5\n",
      4, "breaker.trip.eror_rate");
  row("unknown top-level key",
      "# comment\n"
      "\n"
      "brekaer:\n"
      "  min_calls: 3\n",
      3, "brekaer");
  row("unknown section key",
      "breaker:\n"
      "  min_calls: 3\n"
      "  windw:\n"
      "    length: 10s\n",
      3, "breaker.windw");
  row("wrong type",
      "breaker:\n"
      "  trip:\n"
      "    slow_rate: 0.4\n"
      "    error_rate: high\n",
      4, "breaker.trip.error_rate");
  row("scalar instead of section",
      "breaker:\n"
      "  trip: 0.5\n",
      2, "breaker.trip");
  row("out of range error_rate",
      "version: 1\n"
      "name: x\n"
      "breaker:\n"
      "  trip:\n"
      "    error_rate: 1.5\n",
      5, "breaker.trip.error_rate");
  row("error_rate zero",
      "breaker:\n"
      "  trip: { error_rate: 0 }\n",
      2, "breaker.trip.error_rate");
  row("probe_share zero",
      "breaker:\n"
      "  half_open:\n"
      "    success_streak: 3\n"
      "    probe_share: 0\n",
      4, "breaker.half_open.probe_share");
  row("negative min_calls",
      "breaker:\n"
      "  min_calls: -3\n",
      2, "breaker.min_calls");
  row("fractional count",
      "breaker:\n"
      "  half_open:\n"
      "    success_streak: 2.5\n",
      3, "breaker.half_open.success_streak");
  row("duration without unit",
      "breaker:\n"
      "  window:\n"
      "    type: time\n"
      "    length: 10\n",
      4, "breaker.window.length");
  row("sustain without unit",
      "breaker:\n"
      "  trip:\n"
      "    sustain: 2\n",
      3, "breaker.trip.sustain");
  row("duplicate key",
      "breaker:\n"
      "  trip:\n"
      "    error_rate: 0.5\n"
      "    error_rate: 0.6\n",
      4, "breaker.trip.error_rate");
  row("duplicate override",
      "overrides:\n"
      "  models:\n"
      "    m1: {min_calls: 5}\n"
      "    m1: {min_calls: 6}\n",
      4, "overrides.models.m1");
  row("zero open duration",
      "breaker:\n"
      "  open:\n"
      "    duration: 0\n",
      3, "breaker.open.duration");
  row("bad enum",
      "breaker:\n"
      "  ramp:\n"
      "    duration: 30s\n"
      "    shape: zigzag\n",
      4, "breaker.ramp.shape");
  row("bad bool",
      "breaker:\n"
      "  ramp:\n"
      "    relapse_reopens: maybe\n",
      3, "breaker.ramp.relapse_reopens");
  row("bad status",
      "breaker:\n"
      "  classify:\n"
      "    client_errors: ignore\n"
      "    failure_statuses: [5xx, 1000]\n",
      4, "breaker.classify.failure_statuses");
  // Cross-key checks blame the key that was written, not the start of the section.
  row("bucket > length",
      "breaker:\n"
      "  window:\n"
      "    type: time\n"
      "    length: 2s\n"
      "    bucket: 5s\n",
      5, "breaker.window.bucket");
  row("bucket > length, bucket first",
      "breaker:\n"
      "  window:\n"
      "    bucket: 5s\n"
      "    length: 2s\n",
      3, "breaker.window.bucket");
  row("length < default bucket",
      "breaker:\n"
      "  window:\n"
      "    type: time\n"
      "    length: 500ms\n",
      4, "breaker.window.length");
  row("too many buckets",
      "breaker:\n"
      "  window:\n"
      "    length: 2h\n"
      "    bucket: 1s\n",
      4, "breaker.window.bucket");
  row("max_duration < duration",
      "breaker:\n"
      "  open:\n"
      "    duration: 30s\n"
      "    backoff_multiplier: 2\n"
      "    max_duration: 20s\n",
      5, "breaker.open.max_duration");
  row("duration > default max",
      "breaker:\n"
      "  open:\n"
      "    jitter: 0.1\n"
      "    duration: 90s\n",
      4, "breaker.open.duration");
  row("calibration out of range",
      "calibration:\n"
      "  period: 5m\n"
      "  rate_step: 0.6\n",
      3, "calibration.rate_step");
  row("override out of range",
      "version: 1\n"
      "overrides:\n"
      "  models:\n"
      "    chat-72b:\n"
      "      trip:\n"
      "        error_rate: 2\n",
      6, "overrides.models.chat-72b.trip.error_rate");
  row("override unknown key",
      "overrides:\n"
      "  instances:\n"
      "    chat-72b-3:\n"
      "      half_open: { probe_share: 0.5 }\n"
      "      rampp: { duration: 5s }\n",
      5, "overrides.instances.chat-72b-3.rampp");
  // Syntax errors carry no key; the line is where the bad token is.
  row("bad YAML: mismatched bracket",
      "version: 1\n"
      "breaker:\n"
      "  trip: {error_rate: 0.5]\n"
      "  min_calls: 3\n",
      3, "");
  row("bad YAML: nested plain mapping",
      "version: 1\n"
      "breaker:\n"
      "  min_calls: 3\n"
      "  trip: error_rate: 0.5\n"
      "name: x\n",
      4, "");
  row("bad YAML: list item in a mapping",
      "version: 1\n"
      "breaker:\n"
      "  min_calls: 3\n"
      "  - trip\n",
      4, "");
  row("bad YAML indentation",
      "breaker:\n"
      "  trip:\n"
      "    error_rate: 0.5\n"
      "   slow_rate: 0.4\n",
      4, "");
  row("wrong version",
      "# policy\n"
      "version: 2\n"
      "name: future\n",
      2, "version");
  row("version not a number", "version: one\n", 1, "version");
  row("not a mapping", "- a\n- b\n", 1, "(document)");
}

void TstPolicy::errors() {
  QFETCH(QByteArray, yaml);
  QFETCH(int, line);
  QFETCH(QString, field);
  try {
    parsePolicy(yaml.toStdString(), "test.yaml");
    QFAIL("parsePolicy accepted an invalid policy");
  } catch (const InputError& e) {
    QCOMPARE(QString::fromStdString(e.file()), QStringLiteral("test.yaml"));
    QCOMPARE(e.line(), long(line));
    QCOMPARE(QString::fromStdString(e.field()), field);
    QVERIFY(!e.detail().empty());
    // The message reads `file:line: key: what`.
    const QString prefix = QStringLiteral("test.yaml:%1: ").arg(line) +
                           (field.isEmpty() ? QString() : field + QStringLiteral(": "));
    const QString what = QString::fromStdString(e.what());
    QVERIFY2(what.startsWith(prefix), qPrintable(what));
    QVERIFY(what.endsWith(QString::fromStdString(e.detail())));
  }
}

void TstPolicy::missingFile() {
  try {
    loadPolicyFile("/nonexistent/dir/policy.yaml");
    QFAIL("loaded a file that does not exist");
  } catch (const InputError& e) {
    QCOMPARE(e.file(), std::string("/nonexistent/dir/policy.yaml"));
    QCOMPARE(e.line(), 0L);
    QVERIFY(QString(e.what()).startsWith("/nonexistent/dir/policy.yaml: "));
  }
}

namespace {

// Default ← model override ← instance override, on a non-default base so that inheriting
// from the base is visible too.
constexpr const char* kLayered =
    "name: layered\n"
    "breaker:\n"
    "  min_calls: 7\n"
    "  trip: { error_rate: 0.6, slow_rate: 0.45 }\n"
    "  open: { duration: 8s, max_duration: 2m }\n"
    "  window: { length: 20s, bucket: 2s }\n"
    "overrides:\n"
    "  models:\n"
    "    chat-72b:\n"
    "      trip: { error_rate: 0.3 }\n"
    "      open: { duration: 20s }\n"
    "      window: { length: 30s }\n"
    "  instances:\n"
    "    chat-72b-3:\n"
    "      trip: { slow_rate: 0.2 }\n"
    "      open: { duration: 40s }\n"
    "      window: { bucket: 5s }\n"
    "    lonely-1:\n"
    "      half_open: { success_streak: 9 }\n";

}  // namespace

void TstPolicy::overridesLayer() {
  const Policy p = parseInline(kLayered);
  QCOMPARE(p.modelOverrides.size(), std::size_t(1));
  QCOMPARE(p.instanceOverrides.size(), std::size_t(2));
  QCOMPARE(p.modelOverrides.at("chat-72b").line, 9);
  QCOMPARE(p.instanceOverrides.at("chat-72b-3").line, 14);

  // An instance of another model, no override: the policy's own breaker.
  const BreakerConfig other = resolveBreaker(p, "embed", "embed-1");
  QVERIFY2(breakerDiff(other, p.breaker, "other").isEmpty(),
           qPrintable(breakerDiff(other, p.breaker, "other")));
  QCOMPARE(other.trip.errorRate, 0.6);

  // Model override: what it names changes, the rest comes from the policy's breaker.
  const BreakerConfig m = resolveBreaker(p, "chat-72b", "chat-72b-1");
  QCOMPARE(m.trip.errorRate, 0.3);
  QCOMPARE(m.trip.slowRate, 0.45);
  QCOMPARE(m.open.duration, seconds(20));
  QCOMPARE(m.open.maxDuration, seconds(120));
  QCOMPARE(m.window.length, seconds(30));
  QCOMPARE(m.window.bucket, seconds(2));
  QCOMPARE(m.minCalls, 7u);

  // Instance override on top of the model override.
  const BreakerConfig i = resolveBreaker(p, "chat-72b", "chat-72b-3");
  QCOMPARE(i.trip.errorRate, 0.3);         // model
  QCOMPARE(i.trip.slowRate, 0.2);          // instance
  QCOMPARE(i.open.duration, seconds(40));  // instance beats model
  QCOMPARE(i.window.length, seconds(30));  // model
  QCOMPARE(i.window.bucket, seconds(5));   // instance
  QCOMPARE(i.minCalls, 7u);                // policy
  QCOMPARE(i.halfOpen.successStreak, p.breaker.halfOpen.successStreak);

  // The same instance name under another model gets only its own override.
  const BreakerConfig j = resolveBreaker(p, "embed", "chat-72b-3");
  QCOMPARE(j.trip.errorRate, 0.6);
  QCOMPARE(j.trip.slowRate, 0.2);
  QCOMPARE(j.window.length, seconds(20));
  QCOMPARE(j.window.bucket, seconds(5));

  // An instance override without a model.
  const BreakerConfig l = resolveBreaker(p, "", "lonely-1");
  QCOMPARE(l.halfOpen.successStreak, 9u);
  QCOMPARE(l.trip.errorRate, 0.6);
}

// Each override is checked on the policy's breaker when it is read; an instance override can
// still clash with its model's (bucket 8s fits the policy's 30s window, not the model's 5s).
// Resolving names the instance override's line and key, and the engine refuses the instance.
void TstPolicy::overridesLayeredInconsistent() {
  const Policy p = parseInline(
      "breaker:\n"
      "  window: { length: 30s, bucket: 1s }\n"
      "overrides:\n"
      "  models:\n"
      "    chat-72b: { window: { length: 5s } }\n"
      "  instances:\n"
      "    chat-72b-3: { window: { bucket: 8s } }\n");
  QCOMPARE(resolveBreaker(p, "embed", "chat-72b-3").window.bucket, seconds(8));  // alone: fine
  QCOMPARE(resolveBreaker(p, "chat-72b", "chat-72b-1").window.length, seconds(5));
  try {
    resolveBreaker(p, "chat-72b", "chat-72b-3");
    QFAIL("a bucket longer than the model's window was accepted");
  } catch (const InputError& e) {
    QCOMPARE(e.line(), 7L);
    QCOMPARE(QString::fromStdString(e.field()),
             QString("overrides.instances.chat-72b-3.window.bucket"));
  }
  Engine engine(p, 1);
  QVERIFY_THROWS_EXCEPTION(InputError, engine.addInstance("chat-72b-3", "chat-72b"));
}

void TstPolicy::engineUsesOverriddenConfig() {
  Engine e(parseInline(kLayered), 1);
  const InstanceId a = e.addInstance("chat-72b-1", "chat-72b");
  const InstanceId b = e.addInstance("chat-72b-3", "chat-72b");
  const InstanceId c = e.addInstance("chat-72b-2", "chat-72b");
  const InstanceId d = e.addInstance("embed-1", "embed");
  const InstanceId f = e.addInstance("lonely-1");
  QCOMPARE(e.size(), std::size_t(5));
  QCOMPARE(e.addInstance("chat-72b-1", "chat-72b"), a);  // idempotent

  QCOMPARE(e.breaker(a).config().trip.errorRate, 0.3);
  QCOMPARE(e.breaker(a).config().open.duration, seconds(20));
  QCOMPARE(e.breaker(a).config().trip.slowRate, 0.45);
  QCOMPARE(e.breaker(c).config().trip.errorRate, 0.3);
  QCOMPARE(e.breaker(b).config().trip.errorRate, 0.3);
  QCOMPARE(e.breaker(b).config().trip.slowRate, 0.2);
  QCOMPARE(e.breaker(b).config().open.duration, seconds(40));
  QCOMPARE(e.breaker(b).config().window.bucket, seconds(5));
  QCOMPARE(e.breaker(d).config().trip.errorRate, 0.6);
  QCOMPARE(e.breaker(d).config().open.duration, seconds(8));
  QCOMPARE(e.breaker(f).config().halfOpen.successStreak, 9u);
  // Every breaker's config is exactly what resolveBreaker says.
  for (InstanceId id = 0; id < e.size(); ++id) {
    const BreakerConfig want = resolveBreaker(e.policy(), e.model(id), e.name(id));
    const QString diff =
        breakerDiff(e.breaker(id).config(), want, QString::fromStdString(e.name(id)));
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
  }
}

void TstPolicy::parseDuration_data() {
  QTest::addColumn<QString>("text");
  QTest::addColumn<bool>("ok");
  QTest::addColumn<qlonglong>("micros");
  QTest::newRow("10s") << "10s" << true << qlonglong(10'000'000);
  QTest::newRow("800ms") << "800ms" << true << qlonglong(800'000);
  QTest::newRow("250us") << "250us" << true << qlonglong(250);
  QTest::newRow("1.5s") << "1.5s" << true << qlonglong(1'500'000);
  QTest::newRow("0.25ms") << "0.25ms" << true << qlonglong(250);
  QTest::newRow("5m") << "5m" << true << qlonglong(300'000'000);
  QTest::newRow("2min") << "2min" << true << qlonglong(120'000'000);
  QTest::newRow("1h") << "1h" << true << qlonglong(3'600'000'000);
  QTest::newRow("0s") << "0s" << true << qlonglong(0);
  QTest::newRow("padded") << " 10s " << true << qlonglong(10'000'000);
  QTest::newRow("bare number") << "10" << false << qlonglong(0);
  QTest::newRow("bare zero") << "0" << false << qlonglong(0);
  QTest::newRow("unit only") << "ms" << false << qlonglong(0);
  QTest::newRow("negative") << "-1s" << false << qlonglong(0);
  QTest::newRow("bad unit") << "1.5x" << false << qlonglong(0);
  QTest::newRow("two dots") << "1..5s" << false << qlonglong(0);
  QTest::newRow("inner space") << "10 s" << false << qlonglong(0);
  QTest::newRow("exponent") << "1e3ms" << false << qlonglong(0);
  QTest::newRow("empty") << "" << false << qlonglong(0);
  QTest::newRow("two units") << "1m30s" << false << qlonglong(0);
  QTest::newRow("overflow") << "99999999999999h" << false << qlonglong(0);
}

void TstPolicy::parseDuration() {
  QFETCH(QString, text);
  QFETCH(bool, ok);
  QFETCH(qlonglong, micros);
  const auto d = spillway::parseDuration(text.toStdString());
  QCOMPARE(d.has_value(), ok);
  if (ok) QCOMPARE(*d, Micros(micros));
}

void TstPolicy::formatDuration_data() {
  QTest::addColumn<qlonglong>("micros");
  QTest::addColumn<QString>("text");
  QTest::newRow("zero") << qlonglong(0) << "0s";
  QTest::newRow("10s") << qlonglong(10'000'000) << "10s";
  QTest::newRow("800ms") << qlonglong(800'000) << "800ms";
  QTest::newRow("1.5s") << qlonglong(1'500'000) << "1.5s";
  QTest::newRow("5m") << qlonglong(300'000'000) << "5m";
  QTest::newRow("1h") << qlonglong(3'600'000'000) << "1h";
  QTest::newRow("90s is not whole minutes") << qlonglong(90'000'000) << "90s";
  QTest::newRow("61m") << qlonglong(3'660'000'000) << "61m";
  QTest::newRow("250us") << qlonglong(250) << "250us";
  QTest::newRow("1.5ms") << qlonglong(1500) << "1.5ms";
  QTest::newRow("1.000001s") << qlonglong(1'000'001) << "1.000001s";
  QTest::newRow("1.234567s") << qlonglong(1'234'567) << "1.234567s";
  QTest::newRow("negative") << qlonglong(-2'000'000) << "-2s";
  QTest::newRow("forever") << qlonglong(kForever) << "inf";
}

void TstPolicy::formatDuration() {
  QFETCH(qlonglong, micros);
  QFETCH(QString, text);
  QCOMPARE(QString::fromStdString(spillway::formatDuration(micros)), text);
  // Every non-negative finite rendering reads back to the same value.
  if (micros >= 0 && micros != kForever)
    QCOMPARE(spillway::parseDuration(text.toStdString()), std::optional<Micros>(micros));
}

void TstPolicy::durationRoundTrip() {
  // formatDuration is exact: every rendering reads back to the same µs, across all units.
  int checked = 0;
  for (Micros v = 1; v < Micros(1e15); v = v * 3 + 7) {
    for (const Micros unit : {Micros(1), kMicrosPerMilli, kMicrosPerSecond, seconds(60)}) {
      if (v > Micros(9e15) / unit) continue;
      for (const Micros d : {v * unit - 1, v * unit, v * unit + 1}) {
        const std::string text = spillway::formatDuration(d);
        const auto back = spillway::parseDuration(text);
        QVERIFY2(back.has_value(), text.c_str());
        QVERIFY2(*back == d, qPrintable(QString::fromStdString(text) + " -> " +
                                        QString::number(*back) + " != " + QString::number(d)));
        ++checked;
      }
    }
  }
  QVERIFY(checked > 100);
}

// Zero is the one duration that needs no unit, where zero is allowed at all.
void TstPolicy::zeroNeedsNoUnit() {
  const Policy p =
      parsePolicy("breaker:\n  trip:\n    sustain: 0\n  ramp:\n    duration: 0\n", "zero.yaml");
  QCOMPARE(p.breaker.trip.sustain, Micros{0});
  QCOMPARE(p.breaker.ramp.duration, Micros{0});
}

QTEST_GUILESS_MAIN(TstPolicy)
#include "tst_policy.moc"
