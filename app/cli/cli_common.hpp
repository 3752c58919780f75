#pragma once
// Shared by spillway-cli subcommands: exit codes, built-in resources, policy loading.
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QStringList>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "spillway/app/resources.hpp"
#include "spillway/block_class.hpp"
#include "spillway/policy.hpp"
#include "spillway/replay_truth.hpp"
#include "spillway/sim/scenario.hpp"

namespace spillway::cli {

// --library: an SQLite file (the default under $XDG_DATA_HOME) or a postgresql:// URL
// (docs/library.md); the same words in every command.
QCommandLineOption libraryOption();
// What --library says, else the default library file.
std::string libraryPathOf(const QCommandLineParser& p);

// Exit codes, the same for every subcommand.
enum Exit : int { kOk = 0, kFindings = 1, kInputError = 2 };

// --threads: at most this many workers (a thread each costs stack and a copy of its scratch;
// 50,000 aborted the process where a refusal belongs).
inline constexpr unsigned kMaxThreads = 1024;

// Built-in resources compiled into the binary (resources/ in the source tree).
// The loaders both front ends share (app/core), under the names the commands use.
using app::kBuiltinScenarioDir;
using app::kDefaultPolicy;
using app::kSampleFaults;
using app::kSampleTrace;
using app::loadPolicy;
using app::loadScenario;
using app::readWhole;

// The top-level catch of every command (main.cpp): call inside `catch (...)`. Prints what
// escaped as `FILE:LINE: KEY: what` when it is an InputError, or names the exception
// (a YAML error, out of memory) with `command`, and returns kInputError.
int reportUncaught(const QString& command);

// The preamble of every command: parses ARGS into P; on an error prints it after ARGS[0]
// ("spillway-cli CMD: …") and returns kInputError, on --help prints the help and returns kOk.
// An option that takes one value given twice is an error (the parser keeps the last one
// unseen), unless it is named in `repeatable`. Returns nothing when the command should go on.
std::optional<int> parseCommandLine(QCommandLineParser& p, const QStringList& args,
                                    const QStringList& repeatable = {});

// TRACE.faults.jsonl beside TRACE (its .jsonl suffix replaced): the annotations sweep,
// export and replay read when present and none are named.
std::string faultsPathFor(const std::string& trace);

// The policy's names the scenario has no model or instance of (a typo drops a backup or an
// override unseen), as "COMMAND: warning: …" lines on stderr; the run goes on.
void warnUnmatchedNames(const char* command, const sim::Scenario& scenario);

// SIGINT and SIGTERM while the event loop runs: a timer polls for them every `every` and then
// calls `onStop` (by default, quits the loop). Keep it alive as long as the loop runs.
class StopOnSignal {
 public:
  explicit StopOnSignal(std::function<void()> onStop = &QCoreApplication::quit,
                        std::chrono::milliseconds every = std::chrono::milliseconds(100));

 private:
  QTimer timer_;
};

// Formats a duration for tables: "18.2s", "1m32s", "inf", "n/a".
std::string humanDuration(Micros d);

// A replay's 误伤 figures (docs/kpis.md) under simulate's JSON keys: false_positive_rate,
// false_positive_parts, collateral_share, false_trips, false_trips_per_hour, blocks_by_class.
void putBlockFigures(nlohmann::json& j, const BlockTally& b, std::optional<double> perHour);
// "4.2 % (false trip 1.0 %, recovery lag 3.2 %; collateral 60.0 %; 500 blocks)", or "n/a
// (nothing blocked)".
std::string fpSummary(const BlockTally& b);
// `--slo`: "5s", or per tenant "code-assist=3s,report-gen=20s,5s" (a bare duration is the
// default). Throws InputError naming --slo and the bad part.
ReplayTruthOptions parseSlo(const QString& text);

int runReplay(const QStringList& args);
int runSimulate(const QStringList& args);
int runKnee(const QStringList& args);
int runDrill(const QStringList& args);           // drill_command.cpp
int runImport(const QStringList& args);          // import_command.cpp
int runLibrary(const QStringList& args);         // library_command.cpp
int runSweepCommand(const QStringList& args);    // sweep_command.cpp
int runCalibrate(const QStringList& args);       // sweep_command.cpp
int runCompare(const QStringList& args);         // sweep_command.cpp
int runServeInstances(const QStringList& args);  // serve_instances_command.cpp
int runListen(const QStringList& args);          // listen_command.cpp
int runExport(const QStringList& args);          // export_command.cpp
int runImportConfig(const QStringList& args);    // import_config_command.cpp

}  // namespace spillway::cli
