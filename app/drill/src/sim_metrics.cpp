// The simulation's /metrics text: counters and a histogram per attempt, gauges per tick.
#include "spillway/drill/sim_metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace spillway::drill {
namespace {

constexpr BreakerState kStates[] = {BreakerState::Closed,   BreakerState::Open,
                                    BreakerState::HalfOpen, BreakerState::ForcedOpen,
                                    BreakerState::Disabled, BreakerState::MetricsOnly};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void sample(std::string& out, const char* name, const std::string& labels,
            const std::string& value) {
  out += name;
  if (!labels.empty()) out += "{" + labels + "}";
  out += ' ';
  out += value;
  out += '\n';
}

}  // namespace

std::string promLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string promNumber(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

const std::vector<double>& SimMetrics::defaultBuckets() {
  // From 5 ms to 2 min: model calls span fast errors to long generations.
  static const std::vector<double> b = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                        1,     2.5,  5,     10,   30,  60,   120};
  return b;
}

SimMetrics::SimMetrics(const sim::Scenario& sc, std::vector<double> buckets)
    : buckets_(std::move(buckets)) {
  std::sort(buckets_.begin(), buckets_.end());
  for (double b : buckets_) le_.push_back(promNumber(b));
  le_.push_back("+Inf");
  // In file order: the simulator's instance indices (InstanceTick::instance, onAttempt).
  for (const sim::ModelSpec& m : sc.models)
    for (const sim::InstanceSpec& is : m.instances) {
      Inst in;
      in.labels =
          "instance=\"" + promLabelValue(is.name) + "\",model=\"" + promLabelValue(m.name) + "\"";
      in.perBucket.assign(le_.size(), 0);
      inst_.push_back(std::move(in));
    }
}

void SimMetrics::onAttempt(std::uint32_t instance, Micros end, Micros latency, int status,
                           Outcome outcome) {
  if (instance >= inst_.size()) return;
  Inst& in = inst_[instance];
  now_ = std::max(now_, end);
  ++in.requests;
  // As the simulator's per-tick failures count them: no answer, an error, 5xx or 429.
  if (outcome != Outcome::Ok || status >= 500 || status == 429) ++in.failures;
  const double s = static_cast<double>(std::max<Micros>(latency, 0)) / 1e6;
  in.sumSeconds += s;
  // `le` is inclusive: an observation equal to a bound belongs to that bound's bucket.
  const auto at = std::lower_bound(buckets_.begin(), buckets_.end(), s) - buckets_.begin();
  ++in.perBucket[static_cast<std::size_t>(at)];
}

void SimMetrics::onInstance(const sim::InstanceTick& row) {
  if (row.instance >= inst_.size()) return;
  Inst& in = inst_[row.instance];
  now_ = std::max(now_, row.t);
  in.rejected += row.rejected;
  in.inflight = row.outstanding;
  in.queued = row.queued;
  in.busy = row.busy;
  in.faulted = row.faulted;
  in.state = row.state;
}

std::string SimMetrics::render() const {
  std::string out;
  out.reserve(512 + inst_.size() * (le_.size() + 16) * 96);
  family(out, "spillway_sim_requests_total", "counter",
         "Attempts the simulated gateway saw end at the instance (an answer or a timeout).");
  for (const Inst& in : inst_)
    sample(out, "spillway_sim_requests_total", in.labels, std::to_string(in.requests));
  family(out, "spillway_sim_failures_total", "counter",
         "Attempts that ended in a 5xx, a 429, a reset or a timeout.");
  for (const Inst& in : inst_)
    sample(out, "spillway_sim_failures_total", in.labels, std::to_string(in.failures));
  family(out, "spillway_sim_latency_seconds", "histogram",
         "Latency of the attempts the gateway saw end, from sending to the answer or timeout.");
  for (const Inst& in : inst_) {
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < le_.size(); ++b) {
      cumulative += in.perBucket[b];
      sample(out, "spillway_sim_latency_seconds_bucket", in.labels + ",le=\"" + le_[b] + "\"",
             std::to_string(cumulative));
    }
    sample(out, "spillway_sim_latency_seconds_sum", in.labels, promNumber(in.sumSeconds));
    sample(out, "spillway_sim_latency_seconds_count", in.labels, std::to_string(cumulative));
  }
  family(out, "spillway_sim_breaker_rejected_total", "counter",
         "Attempts the instance's breaker blocked (counted at the end of each tick).");
  for (const Inst& in : inst_)
    sample(out, "spillway_sim_breaker_rejected_total", in.labels, std::to_string(in.rejected));
  family(out, "spillway_sim_inflight", "gauge",
         "The gateway's attempts in flight to the instance.");
  for (const Inst& in : inst_)
    sample(out, "spillway_sim_inflight", in.labels, std::to_string(in.inflight));
  family(out, "spillway_sim_queue_depth", "gauge", "Calls waiting for a slot of the instance.");
  for (const Inst& in : inst_)
    sample(out, "spillway_sim_queue_depth", in.labels, std::to_string(in.queued));
  family(out, "spillway_sim_busy_slots", "gauge", "Slots of the instance serving a call.");
  for (const Inst& in : inst_)
    sample(out, "spillway_sim_busy_slots", in.labels, std::to_string(in.busy));
  family(out, "spillway_sim_fault_active", "gauge",
         "1 while an injected fault of the scenario is active on the instance.");
  for (const Inst& in : inst_)
    sample(out, "spillway_sim_fault_active", in.labels, in.faulted ? "1" : "0");
  family(out, "spillway_sim_breaker_state", "gauge",
         "The instance's breaker state: 1 for the current state, 0 for the others.");
  for (const Inst& in : inst_)
    for (BreakerState s : kStates)
      sample(out, "spillway_sim_breaker_state",
             in.labels + ",state=\"" + lower(stateName(s)) + "\"", in.state == s ? "1" : "0");
  family(out, "spillway_sim_time_seconds", "gauge", "Scenario time of the simulation.");
  sample(out, "spillway_sim_time_seconds", "", promNumber(static_cast<double>(now_) / 1e6));
  return out;
}

}  // namespace spillway::drill
