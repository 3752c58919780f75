#pragma once
// A console session in a file (File → Save session…, `spillway FILE.spillway`): what is on
// screen (a scenario, or a library incident), the policy being edited and the one it was loaded
// as, the pinned reference's policy, the cursor, the zoom, the focused instance and the headline
// targets — enough to reopen the exact view and go on tuning. JSON, versioned.
#include <QByteArray>
#include <QString>

#include <map>
#include <optional>
#include <string>
#include <utility>

namespace spillway::console {

struct Session {
  QString scenario;            // a built-in name or a scenario file (absolute path)
  QString library, incident;   // or a library incident (both set)
  std::string policy, loaded;  // the edited policy and the one loaded, as YAML
  QString policySource;        // where the loaded one came from ("scenario seed-000", …)
  std::optional<std::string> reference;  // the pinned reference's policy (YAML)
  double cursor = 0;                     // seconds on the run's axis
  std::optional<std::pair<double, double>> zoom;
  QString focus;  // the focused instance's name
  std::map<std::string, double> targets;
  int seeds = 1;
};

inline constexpr const char* kSessionSuffix = ".spillway";
inline constexpr qsizetype kMaxSessionBytes = 4 << 20;  // policies are a few KB

QByteArray writeSession(const Session& s);
// `path`'s session; an InputError naming path:line: field on anything else (not JSON, a
// missing or mistyped field, a policy that does not parse, over kMaxSessionBytes).
Session readSession(const QString& path);
// Reads `text` as a session from `path` (the file's name is only for messages).
Session parseSession(const QByteArray& text, const QString& path);

}  // namespace spillway::console
