#pragma once
// A Prometheus source as the user gives it — URL, preset, per-role PromQL overrides, step,
// slow bound, labels — turned into the puller's options: placeholders expanded, every part
// checked. One function for `listen --prometheus` and the console's Live dock, so both ask the
// same queries and give the same errors.
#include <string>
#include <utility>
#include <vector>

#include "spillway/live/prometheus_pull.hpp"

namespace spillway::live {

struct PromSourceSpec {
  std::string url;     // http://HOST:PORT[/PREFIX]
  std::string preset;  // envoy, litellm, kong, apisix, spillway; empty: queries only
  std::vector<std::pair<std::string, std::string>> queries;  // role name → PromQL template
  Micros step = seconds(5), poll = seconds(1), delay = seconds(2), backfill = 0;
  Micros timeout = seconds(10);
  std::string slowLe;         // empty: the preset's
  std::string instanceLabel;  // empty: the preset's (else "instance")
  std::string modelLabel;     // empty: the preset's (else "model"); "none": no model label
};

// Throws InputError whose origin is `prefix` + the option at fault ("--prom-slow-le" with
// prefix "--"; the console passes "Prometheus: ").
PullerOptions pullerOptions(const PromSourceSpec& spec, const std::string& prefix = "--");

}  // namespace spillway::live
