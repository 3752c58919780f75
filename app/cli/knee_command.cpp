// `spillway-cli knee`: stepped load from 30 % to 300 % of a scenario's base load (seed 003);
// per step P99, error rate and throughput, and the knee.
#include <QCommandLineParser>

#include <cstdio>

#include "cli_common.hpp"
#include "spillway/input_error.hpp"
#include "spillway/sim/knee.hpp"

namespace spillway::cli {

int runKnee(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Find the capacity knee of a scenario: fresh runs without faults at stepped load, each\n"
      "run until P99 and error rate settle. Knee = first step with P99 > 1.8 x the first\n"
      "step's P99 and error rate > 1 % (seed 003). SCENARIO: a file or a built-in name.");
  p.addHelpOption();
  p.addPositionalArgument("SCENARIO", "scenario file or built-in name", "[SCENARIO]");
  p.addOption({"from", "first load factor (default 0.3)", "F"});
  p.addOption({"to", "last load factor (default 3.0)", "F"});
  p.addOption({"step", "load factor increment (default 0.3)", "F"});
  p.addOption({"step-duration", "longest simulated time per step (default 10m)", "D"});
  p.addOption({"no-protection", "breakers watch only"});
  p.addOption({"degrade",
               "keep the scenario's degrade chain: the capacity with backups, not of the "
               "primary path alone"});
  p.addOption({"json", "print JSON instead of the table"});
  if (!p.parse(args)) {
    std::fprintf(stderr, "spillway-cli knee: %s\n", qPrintable(p.errorText()));
    return kInputError;
  }
  if (p.isSet("help")) {
    std::fputs(qPrintable(p.helpText()), stdout);
    return kOk;
  }
  try {
    const std::string name = p.positionalArguments().isEmpty()
                                 ? "seed-003"
                                 : p.positionalArguments().front().toStdString();
    const sim::Scenario sc = loadScenario(name);
    sim::KneeOptions o;
    auto factor = [&](const char* opt, double& out) {
      if (!p.isSet(opt)) return;
      bool ok = false;
      out = p.value(opt).toDouble(&ok);
      if (!ok || out <= 0 || out > 100)
        throw InputError(std::string("--") + opt, 0, "", "expected a load factor in (0, 100]");
    };
    factor("from", o.from);
    factor("to", o.to);
    factor("step", o.step);
    if (o.to < o.from) throw InputError("--to", 0, "", "must not be below --from");
    if (p.isSet("step-duration")) {
      const auto d = parseDuration(p.value("step-duration").toStdString());
      if (!d || *d < seconds(60)) throw InputError("--step-duration", 0, "", "expected >= 1m");
      o.maxStep = *d;
      o.minStep = std::min(o.minStep, *d);
    }
    o.protection = !p.isSet("no-protection");
    o.degrade = p.isSet("degrade");
    const sim::KneeResult r = sim::findKnee(sc, o, [](const sim::KneeStep& s) {
      std::fprintf(stderr, "load %3.0f %%: p99 %.0f ms, %s\n", s.factor * 100, s.p99Ms,
                   s.stable ? "settled" : "did not settle");
    });
    std::fputs((p.isSet("json") ? sim::kneeJson(r, o) + "\n" : sim::kneeTable(r, o)).c_str(),
               stdout);
    return kOk;
  } catch (const InputError& e) {
    // FILE:LINE: KEY: what, as every command prints an input error (it names the file).
    std::fprintf(stderr, "%s\n", e.what());
    return kInputError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spillway-cli knee: %s\n", e.what());
    return kInputError;
  }
}

}  // namespace spillway::cli
