#include "cli_common.hpp"

#include <QFile>

#include <cstdio>

#include "spillway/input_error.hpp"
#include "spillway/policy_yaml.hpp"

namespace spillway::cli {

std::string readWhole(const std::string& path) {
  QFile f(QString::fromStdString(path));
  if (!f.open(QIODevice::ReadOnly))
    throw InputError(path, 0, "", "cannot open: " + f.errorString().toStdString());
  const QByteArray data = f.readAll();
  return std::string(data.constData(), static_cast<std::size_t>(data.size()));
}

Policy loadPolicy(const std::string& path) {
  const std::string p = path.empty() ? kDefaultPolicy : path;
  return parsePolicy(readWhole(p), path.empty() ? "default.yaml (built-in)" : p);
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
  else
    std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600,
                  (static_cast<int>(s) % 3600) / 60);
  return buf;
}

}  // namespace spillway::cli
