#include "spillway/app/resources.hpp"

#include <QFile>

#include "spillway/input_error.hpp"
#include "spillway/input_limits.hpp"
#include "spillway/policy_yaml.hpp"
#include "spillway/sim/scenario_yaml.hpp"

namespace spillway::app {

std::string readWhole(const std::string& path, std::size_t limit, std::string_view what) {
  if (path.rfind(":/", 0) != 0) return readInputFile(path, limit, what);
  // A built-in resource (only Qt can read those); the same cap.
  QFile f(QString::fromStdString(path));
  if (!f.open(QIODevice::ReadOnly))
    throw InputError(path, 0, "", "cannot open: " + f.errorString().toStdString());
  const QByteArray data = f.read(static_cast<qint64>(limit) + 1);
  checkInputSize(std::string_view(data.constData(), static_cast<std::size_t>(data.size())), path,
                 limit, what);
  return std::string(data.constData(), static_cast<std::size_t>(data.size()));
}

Policy loadPolicy(const std::string& path) {
  const std::string p = path.empty() ? kDefaultPolicy : path;
  return parsePolicy(readWhole(p, input_limits::kPolicy, "policy file"),
                     path.empty() ? "default.yaml (built-in)" : p);
}

sim::Scenario loadScenario(const std::string& nameOrPath) {
  // Built-in scenarios by name (seed-000 …) or a file.
  const std::string builtin = std::string(kBuiltinScenarioDir) + nameOrPath + ".yaml";
  if (nameOrPath.find('/') == std::string::npos && QFile::exists(QString::fromStdString(builtin)))
    return sim::parseScenario(readWhole(builtin, input_limits::kScenario, "scenario file"),
                              "builtin:" + nameOrPath);
  return sim::loadScenarioFile(nameOrPath);
}

}  // namespace spillway::app
