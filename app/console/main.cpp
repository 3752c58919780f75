// spillway: the operations console. With no display, the headless run and its KPI table.
#include <QApplication>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QTimer>

#include <cstdio>
#include <memory>

#include "cli_common.hpp"
#include "library_panel.hpp"
#include "live_panel.hpp"
#include "main_window.hpp"
#include "spillway/library/library.hpp"
#include "sweep_dialog.hpp"

namespace {

bool haveDisplay() {
  return !qEnvironmentVariableIsEmpty("DISPLAY") ||
         !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
         !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

}  // namespace

int main(int argc, char** argv) {
  QString scenario = "seed-000";
  for (int i = 1; i < argc; ++i) {
    const QString a = argv[i];
    if (a == "--screenshot" || a == "--theme" || a == "--library" || a == "--incident" ||
        a == "--sweep-screenshot" || a == "--live-otlp" || a == "--live-tail" ||
        a == "--live-format" || a == "--live-span" || a == "--live-prometheus" ||
        a == "--live-prom-preset")
      ++i;  // skip the option's value
    else if (!a.startsWith('-'))
      scenario = a;
  }
  if (!haveDisplay()) {
    // A server or CI: the same comparison, printed (README's first command works anywhere).
    QCoreApplication app(argc, argv);
    std::fprintf(stderr, "spillway: no display; running %s headless (baseline vs protected)\n",
                 qPrintable(scenario));
    return spillway::cli::runSimulate({"spillway", scenario, "--compare"});
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Spillway");
  QApplication::setApplicationName("spillway");
  QApplication::setApplicationVersion(SPILLWAY_VERSION);
  QCommandLineParser p;
  p.setApplicationDescription("Spillway resilience console: tune breakers, replay incidents.");
  p.addHelpOption();
  p.addVersionOption();
  p.addPositionalArgument("SCENARIO", "built-in name (seed-000 …) or scenario file", "[SCENARIO]");
  p.addOption({"screenshot", "render the window after the default run to FILE and exit", "FILE"});
  p.addOption({"theme", "desktop, light or dark (remembered)", "THEME"});
  p.addOption({"library",
               "the incident library (default: the last one, else "
               "$XDG_DATA_HOME/spillway/library.db)",
               "FILE"});
  p.addOption({"incident", "replay this library incident instead of simulating SCENARIO", "NAME"});
  p.addOption({"sweep-screenshot",
               "with --incident: run the Tools → Sweep… default grid on it, calibrate to "
               "fp<=0.03,ttd<=30s (else load its first Pareto candidate) and render the "
               "dialog to FILE",
               "FILE"});
  p.addOption({"live-otlp", "go live: receive OTLP/HTTP traces on [HOST:]PORT", "ADDR"});
  p.addOption({"live-tail", "go live: follow this access log", "FILE"});
  p.addOption({"live-format", "the log's format: nginx (default), envoy or jsonl", "FORMAT"});
  p.addOption({"live-from-start", "with --live-tail: read the log's existing lines too"});
  p.addOption({"live-prometheus", "go live: pull per-step counts from this Prometheus", "URL"});
  p.addOption({"live-prom-preset",
               "the gateway's metric names: envoy, litellm, kong, apisix, spillway (default)",
               "NAME"});
  p.addOption(
      {"live-record", "live: record into the library (--library, else the default) for cutting"});
  p.addOption({"live-span", "live: the rolling span kept, e.g. 10m (default)", "D"});
  p.process(app);
  spillway::console::MainWindow w;
  if (p.isSet("theme")) {
    using Theme = spillway::console::MainWindow::Theme;
    const QString t = p.value("theme");
    if (t != "desktop" && t != "light" && t != "dark") {
      std::fprintf(stderr, "spillway: --theme: expected desktop, light or dark, got '%s'\n",
                   qPrintable(t));
      return 2;
    }
    w.setTheme(t == "dark" ? Theme::Dark : t == "light" ? Theme::Light : Theme::System);
  }
  // Screenshots (docs, tests) are taken at one known size, whatever the last session left.
  if (p.isSet("screenshot")) w.resize(1500, 950);
  w.show();
  QString error;
  if (p.isSet("library") && !w.openLibrary(p.value("library"), &error)) {
    std::fprintf(stderr, "spillway: %s\n", qPrintable(error));
    return 2;
  }
  const bool replay = p.isSet("incident");
  const bool live = p.isSet("live-otlp") || p.isSet("live-tail") || p.isSet("live-prometheus");
  if (live) {
    spillway::console::LiveConfig cfg;
    cfg.otlp = p.value("live-otlp");
    cfg.tailFile = p.value("live-tail");
    cfg.tailFromStart = p.isSet("live-from-start");
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
        return 2;
      }
      cfg.prometheus = spec;
    }
    if (p.isSet("live-format") &&
        (!spillway::formats::parseFormat(p.value("live-format").toStdString(), cfg.tailFormat) ||
         (cfg.tailFormat != spillway::formats::Format::Nginx &&
          cfg.tailFormat != spillway::formats::Format::Envoy &&
          cfg.tailFormat != spillway::formats::Format::Jsonl))) {
      std::fprintf(stderr, "spillway: --live-format: expected nginx, envoy or jsonl, got '%s'\n",
                   qPrintable(p.value("live-format")));
      return 2;
    }
    if (p.isSet("live-span")) {
      const auto d = spillway::parseDuration(p.value("live-span").toStdString());
      if (!d || *d < spillway::seconds(10) || *d > spillway::seconds(7200)) {
        std::fprintf(stderr, "spillway: --live-span: expected a duration from 10s to 2h\n");
        return 2;
      }
      cfg.span = *d;
    }
    if (auto* dock = qobject_cast<QDockWidget*>(w.livePanel()->parentWidget())) dock->raise();
    if (!w.startLive(cfg, &error)) {
      std::fprintf(stderr, "spillway: %s\n", qPrintable(error));
      return 2;
    }
  } else if (replay) {
    // The incident's tab in front: what was replayed, its tags, notes and annotations.
    if (auto* dock = qobject_cast<QDockWidget*>(w.libraryPanel()->parentWidget())) dock->raise();
    if (!w.libraryPanel()->selectIncident(p.value("incident")) &&
        !w.replayIncident(p.value("incident"), &error)) {
      std::fprintf(stderr, "spillway: %s\n", qPrintable(error));
      return 2;
    }
  } else if (!w.runScenario(scenario, &error)) {
    std::fprintf(stderr, "spillway: %s\n", qPrintable(error));
    return 2;
  }
  auto save = [](QWidget* what, const QString& file) {
    const bool ok = what->grab().save(file);
    std::fprintf(stderr, "spillway: %s %s\n", ok ? "wrote" : "could not write", qPrintable(file));
    return ok;
  };
  if (p.isSet("sweep-screenshot") && replay) {
    // The sweep dialog over the replayed incident: default grid, first front candidate loaded.
    const QString file = p.value("sweep-screenshot"), shot = p.value("screenshot");
    QObject::connect(&w, &spillway::console::MainWindow::runShown, &w, [&w, file, shot, save] {
      static bool once = false;
      if (once) return;
      once = true;
      spillway::console::SweepDialog* d = w.openSweep();
      QObject::connect(d, &spillway::console::SweepDialog::finished, d, [&w, d, file, shot, save] {
        // Exit once the dialog and (with --screenshot) the candidate's what-if are saved.
        auto pending = std::make_shared<int>(shot.isEmpty() ? 1 : 2);
        auto done = [pending](bool ok) {
          if (!ok) QApplication::exit(1);
          if (--*pending == 0) QApplication::exit(0);
        };
        if (!shot.isEmpty())
          QObject::connect(
              &w, &spillway::console::MainWindow::runShown, &w, [&w, shot, save, done] {
                QTimer::singleShot(200, &w, [&w, shot, save, done] { done(save(&w, shot)); });
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
        QTimer::singleShot(300, d, [d, file, save, done] { done(save(d, file)); });
      });
      d->start();
    });
  } else if (p.isSet("screenshot") && live) {
    // Live: once the data has settled (no new snapshot for a second), or after 30 s.
    const QString file = p.value("screenshot");
    auto* quiet = new QTimer(&w);
    quiet->setSingleShot(true);
    quiet->setInterval(1000);
    QObject::connect(&w, &spillway::console::MainWindow::liveShown, quiet,
                     [quiet] { quiet->start(); });
    QObject::connect(quiet, &QTimer::timeout, &w,
                     [&w, file, save] { QApplication::exit(save(&w, file) ? 0 : 1); });
    QTimer::singleShot(30000, &w, [&w, file, save] { QApplication::exit(save(&w, file) ? 0 : 1); });
  } else if (p.isSet("screenshot")) {
    const QString file = p.value("screenshot");
    QObject::connect(&w, &spillway::console::MainWindow::runShown, &w, [&w, file, save] {
      QTimer::singleShot(200, &w, [&w, file, save] { QApplication::exit(save(&w, file) ? 0 : 1); });
    });
  }
  return app.exec();
}
