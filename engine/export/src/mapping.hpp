#pragma once
// Shared by the exporters: which entries a file holds (default, per model, per instance), the
// value choices every target faces (a fixed slow threshold for "k × P99", a failure count for a
// rate), number and duration spelling, and the note list. Internal to engine/src/export.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spillway/export/export.hpp"

namespace spillway::exporter::detail {

// One block of the target's file (a Resilience4j instance, an Envoy cluster, an HAProxy
// backend, ...) with the effective breaker config it carries.
struct Entry {
  std::string name;  // model name, or "default"
  BreakerConfig cfg;
  std::vector<std::string> instances;  // known members, in first-seen order
};

struct InstanceOverride {
  std::string instance, model;
  BreakerConfig cfg;  // default ← model ← instance
};

struct Plan {
  BreakerConfig base;                       // the policy's `breaker`
  std::vector<Entry> models;                // models from the context, then overridden ones
  std::vector<InstanceOverride> instances;  // overrides.instances
  // The entries a per-entry target writes: one per model when models are known, else one
  // entry "default" carrying the policy's own values.
  std::vector<Entry> entries() const;
};
Plan makePlan(const Policy& policy, const ExportContext& ctx);

// A fixed slow threshold for the native rule slow = max(floor, k × P99 baseline).
struct SlowChoice {
  Micros threshold = 0;  // 0: no threshold (native calls nothing slow until it learns one)
  std::string how;       // "3 × 800 ms (baseline P99 learned on X)", for the notes
};
SlowChoice chooseSlow(const BreakerConfig& cfg, const std::string& model, const ExportContext& ctx);
// "<key> = <how> = 2400 ms", or why there is none.
std::string slowNote(const std::string& key, const SlowChoice& s, const BreakerConfig& cfg);

// The fewest failures that can trip the native rule: floor(error_rate × min_calls) + 1 (a
// window of min_calls calls with more than error_rate failing) — what consecutive-error targets
// (HAProxy error-limit, nginx max_fails, Istio consecutive5xxErrors) get.
std::uint32_t failuresToTrip(const BreakerConfig& cfg);
std::uint32_t effectiveMinCalls(const BreakerConfig& cfg);

// Spellings.
std::string dur(Micros d);       // Spring / HAProxy / nginx: 10s, 2400ms, 5m
std::string protoDur(Micros d);  // protobuf Duration (Envoy, Istio): 10s, 2.4s
std::string num(double v);
// The policy's window as it is written: "window.length 10s" or, count-based, "window.calls 40".
std::string windowText(
    const BreakerConfig& c);               // shortest decimal that reads back equal (%.15g trimmed)
std::string pct(double share);             // 0.5 → "50"
std::string quoted(const std::string& s);  // a YAML/JSON double-quoted string
std::string placeholderAddress(std::size_t i);  // 127.0.0.1:8001, :8002, ...
// The comment beside every placeholder (nginx, HAProxy, Envoy, Istio): what a reviewer greps
// for before the file ships.
inline constexpr std::string_view kTodoAddress = "TODO: address";
// The instance's address from ctx.addresses, else its own name when that is an address
// (HOST:PORT, as a plain access-log import records $upstream_addr), else the next placeholder;
// `placeholders` counts those used.
std::string serverAddress(const ExportContext& ctx, const std::string& instance,
                          std::size_t& placeholders);

class Notes {
 public:
  void add(Topic t, bool gap, const std::string& scope, const std::string& text);
  void approx(Topic t, const std::string& text, const std::string& scope = {}) {
    add(t, false, scope, text);
  }
  void gap(Topic t, const std::string& text, const std::string& scope = {}) {
    add(t, true, scope, text);
  }
  // A value the target holds as it is ("min_calls 20 → minimumNumberOfCalls 20").
  void exact(Topic t, const std::string& text, const std::string& scope = {}) {
    const std::size_t before = v_.size();
    add(t, false, scope, text);
    if (v_.size() > before) v_.back().exact = true;
  }
  std::vector<MappingNote> take() { return std::move(v_); }

 private:
  std::vector<MappingNote> v_;
};

// Notes every breaker-less or simpler target shares; each returns nothing when the policy does
// not use the feature.
void noteSustain(Notes& n, const std::string& target, const BreakerConfig& cfg);
void noteRamp(Notes& n, const std::string& target, const BreakerConfig& cfg);
void noteClassify(Notes& n, const std::string& target, const BreakerConfig& cfg);
void noteJitterDecay(Notes& n, const std::string& target, const BreakerConfig& cfg);
// Envoy and Istio return an ejected host only at their sweeps, every interval (written as
// window.length): open.duration → `key` is exact only when it is a whole number of intervals.
void noteOpenAtSweeps(Notes& n, const std::string& target, const std::string& key,
                      const BreakerConfig& cfg);
// The statuses the policy counts as failures and the target never does (Envoy and Istio count
// 5xx only; HAProxy's observe layer7 takes 100–499, 501 and 505 as valid): one gap note.
void noteUncountedStatuses(Notes& n, const std::string& target, const BreakerConfig& cfg,
                           bool (*targetCounts)(int status), const std::string& scope = {});

// One exporter per target (engine/src/export/<target>.cpp).
ExportResult exportResilience4j(const Policy& p, const ExportContext& ctx);
ExportResult exportEnvoy(const Policy& p, const ExportContext& ctx);
ExportResult exportIstio(const Policy& p, const ExportContext& ctx);
ExportResult exportSentinel(const Policy& p, const ExportContext& ctx);
ExportResult exportHaproxy(const Policy& p, const ExportContext& ctx);
ExportResult exportNginx(const Policy& p, const ExportContext& ctx);
ExportResult exportLitellm(const Policy& p, const ExportContext& ctx);

ImportResult importResilience4j(std::string_view text, const std::string& source);
ImportResult importEnvoy(std::string_view text, const std::string& source);
ImportResult importSentinel(std::string_view text, const std::string& source);

}  // namespace spillway::exporter::detail
