#pragma once
// Exporting a Spillway policy to other gateways' native configuration (docs/export.md), and
// importing three of them back. Each exporter writes the target's real format with documented
// keys and units only, picks the closest target values, and says in MappingNotes what it
// approximated and what the target cannot express. The text it writes is what the target's
// dialect (spillway/dialect.hpp) parses, so an export can be replayed under the target's own
// semantics before it ships (spillway/export/validate.hpp).
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spillway/dialect.hpp"
#include "spillway/policy.hpp"

namespace spillway::exporter {

// What a note is about: validation cites the note behind a KPI gap by its topic.
enum class Topic : std::uint8_t {
  Window,     // window shape, length, buckets
  Threshold,  // rates, min calls, comparison operators
  Sustain,    // trip.sustain
  Slow,       // slow-call detection
  Open,       // open duration
  Backoff,    // growth of the open duration, jitter, decay
  HalfOpen,   // probes, success streak
  Ramp,       // traffic ramp after recovery
  Classify,   // what counts as a failure
  Mode,       // normal / metrics_only / disabled / forced_open
  Scope,      // per-model / per-instance overrides, entries, addresses
  Degrade,    // fallbacks, retries
  Limits,     // concurrency limits
};
std::string_view topicName(Topic t);

struct MappingNote {
  Topic topic = Topic::Window;
  bool gap = false;   // true: the target cannot express it; false: a chosen approximation
  std::string scope;  // "" for the default entry, else the model or instance it concerns
  std::string text;
  bool exact = false;  // (not a gap) the target holds the value as it is: listed for review
};

// What the exporter knows beyond the policy, usually learned by replaying validation incidents.
struct ExportContext {
  // Learned P99 baseline per model (µs), for "slow = k × P99" targets with a fixed threshold.
  std::map<std::string, Micros> baselineP99;
  std::string baselineSource;  // where they were learned, for the notes ("seed000-sample.jsonl")
  // Instances seen, (instance, model) in first-seen order: server lines and per-model entries.
  std::vector<std::pair<std::string, std::string>> instances;
  // Where each instance is served (instance → HOST:PORT, `export --addresses FILE`): server
  // lines get these; an instance without one is its own address when its name is one, else
  // a placeholder.
  std::map<std::string, std::string> addresses;
  // nginx: leave `non_idempotent` out of proxy_next_upstream (POST is then neither retried nor
  // counted against max_fails).
  bool idempotentOnly = false;
  // Where the policy came from (its file), for errors about what it names.
  std::string policySource = "policy";
};

struct ExportResult {
  DialectKind target = DialectKind::Resilience4j;
  std::string text;      // the configuration file, ready to write
  std::string fileName;  // suggested name (application.yml, envoy-clusters.yaml, ...)
  std::string select;    // the entry a validation replay emulates ("" = the dialect's default)
  std::vector<MappingNote> notes;
};

// The targets that can be exported to: resilience4j, envoy, istio, sentinel, haproxy, nginx,
// litellm (opossum and cockatiel are emulated, not exported).
bool exportable(DialectKind k);
// An HAProxy log-format of JSON lines with HAProxy's own names (the haproxy import format,
// docs/formats.md): accept date, the timers that place the request after a kept-alive
// connection's idle time, server, backend, status and termination state. The HAProxy export
// carries it in its header.
std::string_view haproxyLogFormat();

// HOST:PORT with a host of letters, digits, '.', '-' and a port 1–65535 (what a server line
// takes).
bool isServerAddress(std::string_view s);
ExportResult exportPolicy(const Policy& policy, DialectKind target, const ExportContext& ctx = {});

// ---- import ----------------------------------------------------------------------------------

struct ImportResult {
  Policy policy;
  std::vector<MappingNote> notes;
};

// resilience4j (application.yml), envoy (cluster YAML / outlier_detection), sentinel (DegradeRule
// JSON). Parsing is the dialect's own (same errors, `file:line: field: what`, InputError).
bool importable(DialectKind k);
ImportResult importConfig(DialectKind from, std::string_view text, const std::string& source);

}  // namespace spillway::exporter
