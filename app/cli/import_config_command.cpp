// `spillway-cli import-config`: a gateway's native breaker configuration (Resilience4j
// application.yml, Envoy cluster / outlier_detection, Sentinel DegradeRule JSON) → a Spillway
// policy with the closest native values, and notes on what has no equivalent.
#include <QCommandLineParser>

#include <cstdio>
#include <fstream>

#include "cli_common.hpp"
#include "spillway/export/export.hpp"
#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/policy_yaml.hpp"

namespace spillway::cli {

int runImportConfig(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Import a gateway's breaker configuration as a Spillway policy (docs/export.md):\n"
      "--from resilience4j (application.yml), envoy (clusters / outlier_detection) or sentinel\n"
      "(DegradeRule JSON). The policy goes to stdout (or --out), the mapping notes to stderr.");
  p.addHelpOption();
  p.addOption({"from", "resilience4j | envoy | sentinel.", "TARGET"});
  p.addOption({"out", "Write the policy YAML here instead of stdout.", "policy.yaml"});
  p.addPositionalArgument("FILE", "The native configuration file.");
  if (const auto done = parseCommandLine(p, args)) return *done;
  const std::string from = p.value("from").toStdString();
  const auto kind = parseDialectKind(from);
  if (!kind || !exporter::importable(*kind)) {
    std::fprintf(stderr, "import-config: --from: expected resilience4j, envoy or sentinel%s\n",
                 from.empty() ? "" : (", got '" + from + "'").c_str());
    return kInputError;
  }
  if (p.positionalArguments().size() != 1) {
    std::fprintf(stderr, "import-config: expected exactly one FILE\n");
    return kInputError;
  }
  const std::string path = p.positionalArguments().first().toStdString();
  try {
    const exporter::ImportResult r = exporter::importConfig(
        *kind, readWhole(path, input_limits::kNativeConfig, "gateway config file"), path);
    const std::string yaml = policyToYaml(r.policy);
    // The written policy must read back (the same checks as every policy file). Its own line
    // numbers mean nothing to the reader: the error names the file the values came from.
    try {
      (void)parsePolicy(yaml, "imported policy");
    } catch (const InputError& e) {
      throw InputError(path, 0, e.field(),
                       e.detail() + " (the value imported from this file; no policy written)");
    }
    if (p.isSet("out")) {
      const std::string op = p.value("out").toStdString();
      std::ofstream f(op);
      if (!f) throw InputError(op, 0, "", "cannot write");
      f << yaml;
    } else {
      std::fputs(yaml.c_str(), stdout);
    }
    std::fprintf(stderr, "Imported %s from %s; mapping notes (~ approximated, x no equivalent):\n",
                 path.c_str(), from.c_str());
    for (const exporter::MappingNote& n : r.notes)
      std::fprintf(stderr, "  %s %s%s\n", n.gap ? "x" : "~",
                   n.scope.empty() ? "" : ("[" + printable(n.scope) + "] ").c_str(),
                   printable(n.text).c_str());
    return kOk;
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kInputError;
  }
}

}  // namespace spillway::cli
