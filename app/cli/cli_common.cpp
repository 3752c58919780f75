#include "cli_common.hpp"

#include <QFile>

#include <yaml-cpp/exceptions.h>

#include <csignal>
#include <cstdio>
#include <new>

#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/library/library.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/sim/policy_match.hpp"

namespace spillway::cli {

QCommandLineOption libraryOption() {
  return {"library",
          "The incident library: a file (default $XDG_DATA_HOME/spillway/library.db) or a "
          "postgresql://USER@HOST/DB URL (its password from ~/.pgpass or the libpq environment, "
          "never the URL).",
          "FILE|URL"};
}

std::string libraryPathOf(const QCommandLineParser& p) {
  return p.isSet("library") ? p.value("library").toStdString() : library::defaultLibraryPath();
}

namespace {

volatile std::sig_atomic_t gStopSignal = 0;
void onStopSignal(int) {
  gStopSignal = 1;
}

}  // namespace

StopOnSignal::StopOnSignal(std::function<void()> onStop, std::chrono::milliseconds every) {
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
  QObject::connect(&timer_, &QTimer::timeout, [onStop = std::move(onStop)] {
    if (gStopSignal) onStop();
  });
  timer_.start(every);
}

std::optional<int> parseCommandLine(QCommandLineParser& p, const QStringList& args,
                                    const QStringList& repeatable) {
  if (!p.parse(args)) {
    std::fprintf(stderr, "%s: %s\n", qPrintable(args.value(0)), qPrintable(p.errorText()));
    return kInputError;
  }
  if (p.isSet("help")) {
    std::fputs(qPrintable(p.helpText()), stdout);
    return kOk;
  }
  // `--target envoy --target nginx` exported nginx without a word.
  for (const QString& name : p.optionNames()) {
    const QStringList v = p.values(name);
    if (v.size() < 2 || repeatable.contains(name)) continue;
    std::fprintf(stderr, "%s: --%s: given %lld times ('%s'); it takes one value\n",
                 qPrintable(args.value(0)), qPrintable(name), static_cast<long long>(v.size()),
                 qPrintable(v.join("', '")));
    return kInputError;
  }
  return std::nullopt;
}

std::string faultsPathFor(const std::string& trace) {
  const std::string stem =
      trace.size() > 6 && trace.ends_with(".jsonl") ? trace.substr(0, trace.size() - 6) : trace;
  return stem + ".faults.jsonl";
}

void warnUnmatchedNames(const char* command, const sim::Scenario& scenario) {
  for (const std::string& w : sim::unmatchedPolicyNames(scenario))
    std::fprintf(stderr, "%s: warning: policy %s\n", command, printable(w).c_str());
}

int reportUncaught(const QString& command) {
  const std::string cmd = "spillway-cli " + command.toStdString();
  try {
    throw;
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
  } catch (const YAML::Exception& e) {
    // A reader let a yaml-cpp error through: still exit 2, with the line yaml-cpp knows.
    std::fprintf(stderr, "%s: %s%s\n", cmd.c_str(),
                 e.mark.is_null() ? "" : ("line " + std::to_string(e.mark.line + 1) + ": ").c_str(),
                 e.msg.c_str());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of memory (an input larger than docs/limits.md allows?)\n",
                 cmd.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", cmd.c_str(), e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: unexpected error\n", cmd.c_str());
  }
  return kInputError;
}

std::string humanDuration(Micros d) {
  if (d == kForever) return "inf";
  if (d < 0) return "n/a";
  char buf[32];
  const double s = static_cast<double>(d) / 1e6;
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else  // whole seconds in 64 bits: an int overflowed past 596523h ("-596523h")
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s) / 3600,
                  (static_cast<long long>(s) % 3600) / 60);
  return buf;
}

namespace {

nlohmann::json shareOrNull(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string pctOrNa(std::optional<double> v) {
  if (!v) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", *v * 100);
  return buf;
}

}  // namespace

void putBlockFigures(nlohmann::json& j, const BlockTally& b, std::optional<double> perHour) {
  j["false_positive_rate"] = shareOrNull(b.falsePositiveRate());
  j["false_positive_parts"] = {{"false_trip", shareOrNull(b.partRate(BlockClass::FalseTrip))},
                               {"recovery_lag", shareOrNull(b.partRate(BlockClass::RecoveryLag))}};
  j["collateral_share"] = shareOrNull(b.collateralShare());
  j["false_trips"] = b.falseTripEpisodes;
  j["false_trips_per_hour"] = shareOrNull(perHour);
  nlohmann::json bc;
  for (int c = 0; c < kBlockClassCount; ++c)
    bc[std::string(blockClassName(static_cast<BlockClass>(c)))] = {
        {"blocks", b.blocks[c]}, {"would_succeed", b.wouldSucceed[c]}};
  j["blocks_by_class"] = bc;
}

std::string fpSummary(const BlockTally& b) {
  if (b.total() == 0) return "n/a (nothing blocked)";
  return pctOrNa(b.falsePositiveRate()) + " (false trip " +
         pctOrNa(b.partRate(BlockClass::FalseTrip)) + ", recovery lag " +
         pctOrNa(b.partRate(BlockClass::RecoveryLag)) + "; collateral " +
         pctOrNa(b.collateralShare()) + "; " + std::to_string(b.total()) + " blocks)";
}

ReplayTruthOptions parseSlo(const QString& text) {
  ReplayTruthOptions t;
  parseSloSpec(text.toStdString(), "--slo", t);
  return t;
}

}  // namespace spillway::cli
