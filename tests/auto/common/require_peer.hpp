// A test that needs a peer (nginx, haproxy, prometheus, node, ...) must not pass by skipping in CI:
// with CI=true a missing peer fails the test; on a developer's machine it skips with the reason.
#pragma once

#include <QTest>
#include <QtGlobal>

namespace spillway::testing {

inline bool inCi() {
  const QByteArray ci = qgetenv("CI").trimmed().toLower();
  return !ci.isEmpty() && ci != "0" && ci != "false";
}

}  // namespace spillway::testing

// Use at the top of a test function: SPW_REQUIRE_PEER(!nginx.isEmpty(), "nginx is missing: ...").
#define SPW_REQUIRE_PEER(present, why)                                \
  do {                                                                \
    if (!(present)) {                                                 \
      if (spillway::testing::inCi()) QFAIL(qPrintable(QString(why))); \
      QSKIP(qPrintable(QString(why)));                                \
    }                                                                 \
  } while (false)
