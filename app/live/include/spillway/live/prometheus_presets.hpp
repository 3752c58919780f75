#pragma once
// The PromQL that `listen --prometheus` asks, per gateway: one expression per role (calls,
// failures, slow calls over a step, and a p99 for display), written over the metric names each
// gateway exports. The table is code so that `listen --prom-preset list` prints exactly what
// runs. Placeholders, filled in by expandPromQuery:
//   ${step}  the query step as a PromQL duration ("5s", "1500ms")
//   ${le}    a regex for the slow bound's `le` label, whatever the exporter's spelling
//            (5000, 5000.0, 05000.0 all match 5000)
//   ${by}    the grouping labels: the instance label, then the model label if there is one
// `$step`, `$le` and `$by` work too. docs/live.md ("Prometheus pull") has the table.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/formats/prometheus.hpp"
#include "spillway/time.hpp"

namespace spillway::live {

struct PromPreset {
  std::string name;           // "envoy"
  std::string gateway;        // what it reads, for the listing
  std::string instanceLabel;  // the label that names a breaker's instance
  std::string modelLabel;     // empty: the metrics have none
  std::string slowLe;         // default --prom-slow-le, in the histogram's unit
  std::string latencyUnit;    // of the histogram: "s" or "ms" (p99 is always given in ms)
  std::map<formats::PromRole, std::string> queries;  // templates; Calls is always there
  std::string notes;                                 // caveats, unverified names
};

// envoy, litellm, kong, apisix, spillway.
const std::vector<PromPreset>& promPresets();
const PromPreset* findPromPreset(std::string_view name);

// "calls", "failures", "slow", "p99" → the role; false for anything else.
bool parsePromRole(std::string_view s, formats::PromRole& out);

// A step as a PromQL duration: whole seconds as "Ns", else "Nms" (PromQL has no fractions).
std::string promDuration(Micros d);

// "5000" → "0*5000(\\.0*)?", "0.5" → "0*\\.50*" (PromQL string escapes included: the text goes
// between the quotes of le=~"..."). False when `le` is not a plain non-negative decimal.
bool leRegex(std::string_view le, std::string& out);

struct PromPlaceholders {
  std::string step, le, by;
};

// Replaces ${step} / $step, ${le} / $le and ${by} / $by. Another $name is an error: false, with
// `error` naming it. A '$' not followed by a name is kept (PromQL has none, but a label value
// might).
bool expandPromQuery(std::string_view tmpl, const PromPlaceholders& p, std::string& out,
                     std::string& error);

// The listing `listen --prom-preset list` prints: every preset with its labels, default slow
// bound and queries.
std::string formatPromPresets();

}  // namespace spillway::live
