// The message of the InputError a call throws, for the bad-input suites: "" when it throws none
// (any other exception escapes and fails the test).
#pragma once

#include <QString>

#include "spillway/input_error.hpp"

namespace spillway::testing {

template <typename F>
QString errorOf(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace spillway::testing
