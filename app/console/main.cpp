// spillway: the operations console. With no display, the headless run and its KPI table.
#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include <cstdio>

#include "cli_common.hpp"
#include "main_window.hpp"

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
    if (a == "--screenshot" || a == "--theme")
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
  if (!w.runScenario(scenario, &error)) {
    std::fprintf(stderr, "spillway: %s\n", qPrintable(error));
    return 2;
  }
  if (p.isSet("screenshot")) {
    const QString file = p.value("screenshot");
    QObject::connect(&w, &spillway::console::MainWindow::runShown, &w, [&w, file] {
      QTimer::singleShot(200, &w, [&w, file] {
        const bool ok = w.grab().save(file);
        std::fprintf(stderr, "spillway: %s %s\n", ok ? "wrote" : "could not write",
                     qPrintable(file));
        QApplication::exit(ok ? 0 : 1);
      });
    });
  }
  return app.exec();
}
