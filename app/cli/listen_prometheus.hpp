#pragma once
// The --prometheus / --prom-* options of `spillway-cli listen`: a preset or explicit PromQL
// per role, placeholders expanded, checked, as the puller's options (docs/live.md).
#include <QCommandLineParser>

#include <string>

#include "spillway/live/prometheus_pull.hpp"

namespace spillway::cli {

void addPrometheusOptions(QCommandLineParser& p);

// From the parsed options; throws InputError naming the option (and the role) at fault.
live::PullerOptions prometheusOptions(const QCommandLineParser& p);

// What the puller will ask, one line per role, for stderr at start.
std::string describePuller(const live::PullerOptions& o);

}  // namespace spillway::cli
