// spillway: the operations console. With no display, the headless run and its KPI table.
#include <QApplication>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QSettings>
#include <QTemporaryDir>
#include <QTimer>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include <QStringList>

#include "cli_common.hpp"
#include "export_dialog.hpp"
#include "library_panel.hpp"
#include "live_panel.hpp"
#include "main_window.hpp"
#include "sensitivity_panel.hpp"
#include "session.hpp"
#include "spillway/library/library.hpp"
#include "spillway/live/bearer_token.hpp"
#include "sweep_dialog.hpp"

namespace {

bool haveDisplay() {
  return !qEnvironmentVariableIsEmpty("DISPLAY") ||
         !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
         !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

// The console's options: one table for the parser, the value-skipping scan that finds SCENARIO
// before a QApplication exists, and --help (which help2man turns into spillway(1)).
struct ConsoleOption {
  const char* name;   // long name, without the dashes
  const char* value;  // the value's name, or nullptr for a flag
  const char* help;   // lines after the first are continuation lines
};

constexpr ConsoleOption kOptions[] = {
    {"screenshot", "FILE", "render the window to FILE (PNG) after the run and\nexit"},
    {"theme", "THEME", "desktop, light or dark (remembered)"},
    {"size", "WxH",
     "with --screenshot or --export-screenshot: the\nwindow's size (default 1500x950)"},
    {"panel", "NAME",
     "the bottom panel shown first: kpis, narrative,\n"
     "sensitivity or comparison"},
    {"seeds", "N",
     "run the scenario under N seeds too (1-20) and show\n"
     "each KPI with its 95 % interval"},
    {"library", "FILE",
     "the incident library (default: the last one\n"
     "opened, else $XDG_DATA_HOME/spillway/library.db)"},
    {"incident", "NAME", "replay this library incident instead of\nsimulating SCENARIO"},
    {"sweep-screenshot", "FILE",
     "with --incident: run the Tools > Sweep default\n"
     "grid on it, calibrate to fp<=0.03,ttd<=30s (else\n"
     "load the first Pareto candidate) and render the\n"
     "dialog to FILE"},
    {"export-screenshot", "FILE",
     "export the policy to nginx (Tools > Export\n"
     "policy…), validate it on the seed-000 sample and\n"
     "render the dialog with its review report to FILE"},
    {"live-otlp", "ADDR", "go live: receive OTLP/HTTP traces on [HOST:]PORT"},
    {"live-otlp-token-file", "FILE",
     "with --live-otlp: require 'Authorization:\n"
     "Bearer TOKEN', TOKEN being FILE's first line\n"
     "that is neither empty nor a # comment, read as\n"
     "listen --otlp-token-file reads it"},
    {"live-tail", "FILE", "go live: follow this access log"},
    {"live-format", "FORMAT", "the log's format: nginx (default), envoy,\nhaproxy or jsonl"},
    {"live-from-start", nullptr, "with --live-tail: read the log's existing lines\ntoo"},
    {"live-prometheus", "URL", "go live: pull per-step counts from this Prometheus"},
    {"live-prom-preset", "NAME",
     "the gateway's metric names: envoy, litellm, kong,\n"
     "apisix or spillway (default)"},
    {"live-record", nullptr,
     "live: record into the library (--library, else\n"
     "the default) for cutting"},
    {"live-span", "D", "live: the rolling span kept (default 10m)"},
    {"live-max-instances", "N",
     "live: keep at most N instance names (1 to\n"
     "1000000, default 1024); the spans, log lines and\n"
     "samples of any other name are refused and counted\n"
     "until Live mode restarts"},
};

// The console's command line from the one option table; parse() needs no QApplication, so
// --help, --version and the headless run are decided before one exists.
void addOptions(QCommandLineParser& p) {
  p.setApplicationDescription("Spillway resilience console: tune breakers, replay incidents.");
  p.addPositionalArgument("SCENARIO",
                          "built-in name (seed-000 …), scenario file, or a saved session "
                          "(FILE.spillway)",
                          "[SCENARIO]");
  for (const ConsoleOption& o : kOptions)
    p.addOption(o.value ? QCommandLineOption(o.name, QString(o.help).replace('\n', ' '), o.value)
                        : QCommandLineOption(o.name, QString(o.help).replace('\n', ' ')));
  p.addOption({{"h", "help"}, "display this help and exit"});
  p.addOption({{"v", "version"}, "output version information and exit"});
}

void printOption(std::string_view flags, std::string_view help) {
  // GNU layout: flags from column 2, descriptions from column 30 (at most 50 wide: 80
  // columns), continuation lines aligned.
  constexpr std::size_t kColumn = 30;
  std::string line = "  " + std::string(flags);
  line += line.size() + 2 <= kColumn ? std::string(kColumn - line.size(), ' ') : "  ";
  for (std::size_t start = 0;;) {
    const std::size_t nl = help.find('\n', start);
    line += help.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    line += '\n';
    if (nl == std::string_view::npos) break;
    start = nl + 1;
    line += std::string(kColumn, ' ');
  }
  std::fputs(line.c_str(), stdout);
}

void printHelp() {
  std::fputs(
      "Usage: spillway [OPTION]... [SCENARIO]\n"
      "The Spillway operations console: tune the circuit breakers and degradation of an\n"
      "AI gateway on simulated and recorded incidents.\n"
      "\n"
      "SCENARIO is a built-in scenario (seed-000, seed-001, seed-002 or seed-003;\n"
      "the default is seed-000), a scenario YAML file, or a session saved with\n"
      "File > Save session (FILE.spillway), which reopens that exact view. The\n"
      "console simulates it twice, with protection off and on, and shows instance\n"
      "tiles, synchronized timelines of breaker states, rates and latencies, the\n"
      "headline KPIs against their targets, the KPI table, the incident narrative,\n"
      "replay controls, and a policy editor whose every change re-runs the\n"
      "protected side.\n"
      "\n"
      "With no display (none of DISPLAY, WAYLAND_DISPLAY or QT_QPA_PLATFORM set),\n"
      "it runs the same comparison headless, prints the KPI table as\n"
      "'spillway-cli simulate SCENARIO --compare' does, and exits; spillway-cli\n"
      "runs the engine's other commands (replay, sweep, listen ...) headless too.\n"
      "\n"
      "Options:\n",
      stdout);
  for (const ConsoleOption& o : kOptions)
    printOption(std::string("    --") + o.name + (o.value ? std::string(" ") + o.value : ""),
                o.help);
  printOption("-h, --help", "display this help and exit");
  printOption("-v, --version", "output version information and exit");
  std::fputs(
      "\n"
      "Exit status:\n"
      "  0  success\n"
      "  1  a screenshot could not be written\n"
      "  2  usage or input error (an unknown scenario, a bad policy or option value)\n"
      "\n"
      "Environment:\n"
      "  QT_QPA_PLATFORM             the Qt platform plugin; 'offscreen' renders\n"
      "                              without a display (with --screenshot)\n"
      "  XDG_DATA_HOME               where the default incident library is kept\n",
      stdout);
}

void printVersion() {
  std::fputs("spillway " SPILLWAY_VERSION
             "\n"
             "Copyright (C) 2026 The Spillway Authors.\n"
             "Licensed under the Apache License, Version 2.0\n"
             "<https://www.apache.org/licenses/LICENSE-2.0>.\n",
             stdout);
}

// With no display, the KPI table of the baseline-vs-protected run instead of the window.
int runHeadless(int& argc, char** argv, const QCommandLineParser& pre, bool parsed,
                const QString& scenario) {
  if (!parsed) {
    std::fprintf(stderr, "spillway: %s\nTry 'spillway --help' for more information.\n",
                 qPrintable(pre.errorText()));
    return 2;
  }
  // A server or CI: the same comparison, printed (README's first command works anywhere).
  QCoreApplication app(argc, argv);
  QString what = scenario;
  if (scenario.endsWith(spillway::console::kSessionSuffix)) {
    try {  // a session's scenario (its policy edits need the window)
      const spillway::console::Session s = spillway::console::readSession(scenario);
      if (s.scenario.isEmpty()) {
        std::fprintf(stderr, "spillway: %s: a session on a library incident needs a display\n",
                     qPrintable(scenario));
        return 2;
      }
      what = s.scenario;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "spillway: %s\n", e.what());
      return 2;
    }
  }
  std::fprintf(stderr, "spillway: no display; running %s headless (baseline vs protected)\n",
               qPrintable(what));
  return spillway::cli::runSimulate({"spillway", what, "--compare"});
}

// --theme and --seeds onto the window; false once an error is printed.
bool applyLook(const QCommandLineParser& p, spillway::console::MainWindow& w) {
  if (p.isSet("theme")) {
    using Theme = spillway::console::MainWindow::Theme;
    const QString t = p.value("theme");
    if (t != "desktop" && t != "light" && t != "dark") {
      std::fprintf(stderr, "spillway: --theme: expected desktop, light or dark, got '%s'\n",
                   qPrintable(t));
      return false;
    }
    w.setTheme(t == "dark" ? Theme::Dark : t == "light" ? Theme::Light : Theme::System);
  }
  if (p.isSet("seeds")) {
    bool ok = false;
    const int n = p.value("seeds").toInt(&ok);
    if (!ok || n < 1 || n > 20) {
      std::fprintf(stderr, "spillway: --seeds: expected a whole number from 1 to 20, got '%s'\n",
                   qPrintable(p.value("seeds")));
      return false;
    }
    w.setSeeds(n);
  }
  return true;
}

// The --live-* options as a Live mode config, checked in option-table order; false once an
// error is printed.
bool readLiveConfig(const QCommandLineParser& p, spillway::console::LiveConfig& cfg) {
  cfg.otlp = p.value("live-otlp");
  cfg.tailFile = p.value("live-tail");
  cfg.tailFromStart = p.isSet("live-from-start");
  if (p.isSet("live-otlp-token-file")) {
    if (!p.isSet("live-otlp")) {
      std::fprintf(stderr, "spillway: --live-otlp-token-file needs --live-otlp\n");
      return false;
    }
    cfg.otlpTokenFile = p.value("live-otlp-token-file");
    try {
      // The same reader as listen: a file without a token is an error, never no token.
      spillway::live::readBearerTokenFile(cfg.otlpTokenFile.toStdString());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "spillway: --live-otlp-token-file: %s\n", e.what());
      return false;
    }
  }
  if (p.isSet("live-max-instances")) {
    bool ok = false;
    const qulonglong n = p.value("live-max-instances").toULongLong(&ok);
    if (!ok || n < 1 || n > 1'000'000) {
      std::fprintf(stderr,
                   "spillway: --live-max-instances: expected a count from 1 to 1000000, "
                   "got '%s'\n",
                   qPrintable(p.value("live-max-instances")));
      return false;
    }
    cfg.maxInstances = static_cast<std::size_t>(n);
  }
  if (p.isSet("live-record"))
    cfg.recordLibrary = p.isSet("library")
                            ? p.value("library")
                            : QString::fromStdString(spillway::library::defaultLibraryPath());
  if (p.isSet("live-prometheus")) {
    spillway::live::PromSourceSpec spec;
    spec.url = p.value("live-prometheus").toStdString();
    spec.preset = p.isSet("live-prom-preset") ? p.value("live-prom-preset").toStdString()
                                              : std::string("spillway");
    try {
      spillway::live::pullerOptions(spec, "--live-");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "spillway: %s\n", e.what());
      return false;
    }
    cfg.prometheus = spec;
  }
  if (p.isSet("live-format") &&
      (!spillway::formats::parseFormat(p.value("live-format").toStdString(), cfg.tailFormat) ||
       !spillway::formats::isTailFormat(cfg.tailFormat))) {
    std::fprintf(stderr, "spillway: --live-format: expected %s, got '%s'\n",
                 spillway::formats::formatChoices(spillway::formats::kTailFormats).c_str(),
                 qPrintable(p.value("live-format")));
    return false;
  }
  if (p.isSet("live-span")) {
    const auto d = spillway::parseDuration(p.value("live-span").toStdString());
    if (!d || *d < spillway::seconds(10) || *d > spillway::seconds(7200)) {
      std::fprintf(stderr, "spillway: --live-span: expected a duration from 10s to 2h\n");
      return false;
    }
    cfg.span = *d;
  }
  return true;
}

// What the window shows first: Live mode, a library incident, or SCENARIO simulated; false once
// an error is printed.
bool showFirst(const QCommandLineParser& p, spillway::console::MainWindow& w, bool live,
               bool replay, const QString& shown, QString& error) {
  if (live) {
    spillway::console::LiveConfig cfg;
    if (!readLiveConfig(p, cfg)) return false;
    if (auto* dock = qobject_cast<QDockWidget*>(w.livePanel()->parentWidget())) dock->raise();
    if (!w.startLive(cfg, &error)) {
      std::fprintf(stderr, "spillway: %s\n", qPrintable(error));
      return false;
    }
  } else if (replay) {
    // The incident's tab in front: what was replayed, its tags, notes and annotations.
    if (auto* dock = qobject_cast<QDockWidget*>(w.libraryPanel()->parentWidget())) dock->raise();
    if (!w.libraryPanel()->selectIncident(p.value("incident")) &&
        !w.replayIncident(p.value("incident"), &error)) {
      std::fprintf(stderr, "spillway: %s\n", qPrintable(error));
      return false;
    }
  } else if (shown.endsWith(spillway::console::kSessionSuffix)) {
    if (!w.openSession(shown, &error)) {
      std::fprintf(stderr, "spillway: %s\n", qPrintable(error));
      return false;
    }
  } else if (!w.runScenario(shown, &error)) {
    std::fprintf(stderr, "spillway: %s\n", qPrintable(error));
    return false;
  }
  return true;
}

bool saveShot(QWidget* what, const QString& file) {
  const bool ok = what->grab().save(file);
  std::fprintf(stderr, "spillway: %s %s\n", ok ? "wrote" : "could not write", qPrintable(file));
  return ok;
}

// --sweep-screenshot: the sweep dialog over the replayed incident, default grid, first front
// candidate loaded.
void scheduleSweepShot(spillway::console::MainWindow& w, const QString& file, const QString& shot) {
  QObject::connect(&w, &spillway::console::MainWindow::runShown, &w, [&w, file, shot] {
    static bool once = false;
    if (once) return;
    once = true;
    spillway::console::SweepDialog* d = w.openSweep();
    QObject::connect(d, &spillway::console::SweepDialog::finished, d, [&w, d, file, shot] {
      // Exit once the dialog and (with --screenshot) the candidate's what-if are saved.
      auto pending = std::make_shared<int>(shot.isEmpty() ? 1 : 2);
      auto done = [pending](bool ok) {
        if (!ok) QApplication::exit(1);
        if (--*pending == 0) QApplication::exit(0);
      };
      if (!shot.isEmpty())
        QObject::connect(&w, &spillway::console::MainWindow::runShown, &w, [&w, shot, done] {
          QTimer::singleShot(200, &w, [&w, shot, done] { done(saveShot(&w, shot)); });
        });
      // Calibrate against the dialog's default targets; without a winner, load the first
      // candidate of the Pareto front.
      if (!d->calibrateTargets("fp<=0.03,ttd<=30s")) {
        const auto& front = d->result()->pareto;
        for (std::size_t i = 0; i < front.size(); ++i)
          if (front[i]) {
            d->chooseCandidate(i);
            break;
          }
      }
      QTimer::singleShot(300, d, [d, file, done] { done(saveShot(d, file)); });
    });
    d->start();
  });
}

// --export-screenshot: the export dialog at the window's size, validated, its review report on
// top.
void scheduleExportShot(spillway::console::MainWindow& w, const QString& file) {
  QObject::connect(
      &w, &spillway::console::MainWindow::runShown, &w,
      [&w, file] {
        spillway::console::ExportDialog* d = w.openExport();
        d->resize(w.size());
        d->setTarget("nginx");
        QObject::connect(d, &spillway::console::ExportDialog::validated, d, [d, file] {
          QTimer::singleShot(200, d, [d, file] { QApplication::exit(saveShot(d, file) ? 0 : 1); });
        });
        QObject::connect(d, &spillway::console::ExportDialog::failed, d,
                         [] { QApplication::exit(1); });
        d->validate();
      },
      Qt::SingleShotConnection);
}

// The screenshot options: each saves once its picture is complete, then exits (1 when the
// file could not be written).
void scheduleScreenshots(const QCommandLineParser& p, spillway::console::MainWindow& w, bool live,
                         bool replay) {
  if (p.isSet("sweep-screenshot") && replay) {
    scheduleSweepShot(w, p.value("sweep-screenshot"), p.value("screenshot"));
  } else if (p.isSet("export-screenshot")) {
    scheduleExportShot(w, p.value("export-screenshot"));
  } else if (p.isSet("screenshot") && live) {
    // Live: once the data has settled (no new snapshot for a second), or after 30 s.
    const QString file = p.value("screenshot");
    auto* quiet = new QTimer(&w);
    quiet->setSingleShot(true);
    quiet->setInterval(1000);
    QObject::connect(&w, &spillway::console::MainWindow::liveShown, quiet,
                     [quiet] { quiet->start(); });
    QObject::connect(quiet, &QTimer::timeout, &w,
                     [&w, file] { QApplication::exit(saveShot(&w, file) ? 0 : 1); });
    QTimer::singleShot(30000, &w, [&w, file] { QApplication::exit(saveShot(&w, file) ? 0 : 1); });
  } else if (p.isSet("screenshot")) {
    const QString file = p.value("screenshot");
    // With --seeds the picture waits for the intervals, a session for its whole view.
    const bool session =
        !p.positionalArguments().isEmpty() &&
        p.positionalArguments().first().endsWith(spillway::console::kSessionSuffix);
    const auto shown = session            ? &spillway::console::MainWindow::sessionRestored
                       : p.isSet("seeds") ? &spillway::console::MainWindow::intervalsShown
                                          : &spillway::console::MainWindow::runShown;
    // The Sensitivity tab: once its runs for the view shown are in.
    const bool sensitivity = p.value("panel").toLower() == "sensitivity";
    QObject::connect(&w, shown, &w, [&w, file, sensitivity] {
      auto save = [&w, file] {
        QTimer::singleShot(200, &w, [&w, file] { QApplication::exit(saveShot(&w, file) ? 0 : 1); });
      };
      if (!sensitivity) return save();
      QObject::connect(w.sensitivity(), &spillway::console::SensitivityPanel::computed, &w, save);
    });
  }
}

}  // namespace

int main(int argc, char** argv) {
  QStringList args;
  for (int i = 0; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
  // --help and --version first: no QApplication, no display, no run. An option the table does
  // not know may be Qt's own (-platform …): the GUI's parse below judges it.
  QCommandLineParser pre;
  addOptions(pre);
  const bool parsed = pre.parse(args);
  if (parsed && (pre.isSet("help") || pre.isSet("version"))) {
    pre.isSet("help") ? printHelp() : printVersion();
    return std::fflush(stdout) == 0 ? 0 : 2;
  }
  const QString scenario = parsed && !pre.positionalArguments().isEmpty()
                               ? pre.positionalArguments().first()
                               : QString("seed-000");
  if (!haveDisplay()) return runHeadless(argc, argv, pre, parsed, scenario);
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Spillway");
  QApplication::setApplicationName("spillway");
  QApplication::setApplicationVersion(SPILLWAY_VERSION);
  QCommandLineParser p;
  addOptions(p);
  if (!p.parse(QApplication::arguments())) {
    std::fprintf(stderr, "spillway: %s\nTry 'spillway --help' for more information.\n",
                 qPrintable(p.errorText()));
    return 2;
  }
  const QString shown =
      p.positionalArguments().isEmpty() ? QString("seed-000") : p.positionalArguments().first();
  // A screenshot neither reads nor changes the user's settings (window state, docks, theme):
  // the same command gives the same picture, and a picture taken at 1280x720 leaves the next
  // session's layout alone.
  QTemporaryDir shotSettings;
  if (p.isSet("screenshot") || p.isSet("export-screenshot") || p.isSet("sweep-screenshot")) {
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, shotSettings.path());
  }
  spillway::console::MainWindow w;
  if (!applyLook(p, w)) return 2;
  // Screenshots (docs, tests) are taken at one known size, whatever the last session left.
  if (p.isSet("screenshot") || p.isSet("export-screenshot")) w.resize(1500, 950);
  if (p.isSet("size")) {
    const QStringList wh = p.value("size").split('x');
    const int width = wh.size() == 2 ? wh[0].toInt() : 0,
              height = wh.size() == 2 ? wh[1].toInt() : 0;
    if (width < 640 || height < 480 || width > 7680 || height > 4320) {
      std::fprintf(stderr, "spillway: --size: expected WxH from 640x480 to 7680x4320, got '%s'\n",
                   qPrintable(p.value("size")));
      return 2;
    }
    w.resize(width, height);
  }
  if (p.isSet("panel") && !w.showPanel(p.value("panel"))) {
    std::fprintf(stderr,
                 "spillway: --panel: expected kpis, narrative, sensitivity or comparison, got "
                 "'%s'\n",
                 qPrintable(p.value("panel")));
    return 2;
  }
  w.show();
  QString error;
  if (p.isSet("library") && !w.openLibrary(p.value("library"), &error)) {
    std::fprintf(stderr, "spillway: %s\n", qPrintable(error));
    return 2;
  }
  const bool replay = p.isSet("incident");
  const bool live = p.isSet("live-otlp") || p.isSet("live-tail") || p.isSet("live-prometheus");
  if (!showFirst(p, w, live, replay, shown, error)) return 2;
  scheduleScreenshots(p, w, live, replay);
  return app.exec();
}
