#pragma once
// The call-script notation of the rows taken from upstream test suites (Resilience4j,
// Sentinel): space-separated tokens, "T*3" repeating one, "+2s" / "+500ms" letting time pass.
#include <QString>
#include <QStringList>

#include <optional>

#include "spillway/time.hpp"

namespace spillway::test {

// "A B*3" -> A B B B: the repetition shorthand of the scripts and the expected traces.
inline QStringList expandTokens(const QString& s) {
  QStringList out;
  for (const QString& t : s.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
    const qsizetype star = t.lastIndexOf(QLatin1Char('*'));
    const int n = star < 0 ? 1 : t.mid(star + 1).toInt();
    for (int i = 0; i < n; ++i) out << (star < 0 ? t : t.left(star));
  }
  return out;
}

// "2s" or "500ms"; nothing for anything else.
inline std::optional<Micros> scriptDuration(const QString& s) {
  bool ok = false;
  if (s.endsWith(QLatin1String("ms"))) {
    const qint64 v = s.chopped(2).toLongLong(&ok);
    if (ok) return millis(v);
  } else if (s.endsWith(QLatin1Char('s'))) {
    const qint64 v = s.chopped(1).toLongLong(&ok);
    if (ok) return seconds(v);
  }
  return std::nullopt;
}

}  // namespace spillway::test
