#include "spillway/dialects/envoy.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "spillway/dialects/native_config.hpp"

namespace spillway::dialects {

namespace {
// What the router reports to the detector (non-split mode): the response code, or the code a
// local-origin failure maps to (timeout → 504, connect failure / reset → 503).
int reportedCode(int status, Outcome outcome) {
  if (outcome == Outcome::Timeout) return 504;
  if (outcome == Outcome::Reset || status <= 0) return 503;
  return status;
}
bool is5xx(int code) {
  return code >= 500 && code < 600;
}
bool isGateway(int code) {
  return code == 502 || code == 503 || code == 504;
}
}  // namespace

struct EnvoyDialect::Host {
  std::size_t detector = 0;
  bool ejected = false;
  std::uint32_t numEjections = 0;
  std::uint32_t backoff = 0;  // ejectTimeBackoff: multiplier of base_ejection_time
  Micros lastEjection = kNever, lastUneject = kNever, jitter = 0;
  std::uint32_t c5xx = 0, cGateway = 0;
  std::uint64_t curOk = 0, curTotal = 0;  // success-rate bucket being written
  std::uint64_t bakOk = 0, bakTotal = 0;  // the previous interval's, read by the sweep
};

struct EnvoyDialect::Detector {
  std::string group;
  std::vector<InstanceId> hosts;
  std::uint32_t active = 0;  // ejections in force
  Micros nextSweep = kNever;
  Rng rng;
};

EnvoyDialect::EnvoyDialect(EnvoyOutlierConfig cfg, std::uint64_t seed, EventSink* sink)
    : DialectCluster(seed, sink), cfg_(std::move(cfg)) {}
EnvoyDialect::~EnvoyDialect() = default;

std::uint32_t EnvoyDialect::ejectTimeBackoff(InstanceId id) const {
  return hosts_[id].backoff;
}
std::uint32_t EnvoyDialect::numEjections(InstanceId id) const {
  return hosts_[id].numEjections;
}
bool EnvoyDialect::ejected(InstanceId id) const {
  return hosts_[id].ejected;
}

bool EnvoyDialect::succeeded(int status, Outcome outcome, Micros) const {
  return !is5xx(reportedCode(status, outcome));
}

void EnvoyDialect::onAdded(InstanceId id) {
  Host h;
  auto it = std::find_if(detectors_.begin(), detectors_.end(),
                         [&](const Detector& d) { return d.group == group(id); });
  if (it == detectors_.end()) {
    Detector d;
    d.group = group(id);
    d.rng.reseed(seed() ^ stableHash("envoy-detector:" + d.group));
    detectors_.push_back(std::move(d));
    it = detectors_.end() - 1;
  }
  it->hosts.push_back(id);
  h.detector = static_cast<std::size_t>(it - detectors_.begin());
  hosts_.push_back(h);
}

EnvoyDialect::Detector& EnvoyDialect::detectorOf(InstanceId id) {
  Detector& d = detectors_[hosts_[id].detector];
  return d;
}

bool EnvoyDialect::enforce(Detector& d, std::uint32_t percent) {
  // runtime featureEnabled(key, percent): a uniform draw in [0, 100) below the percentage.
  return d.rng.next() % 100 < percent;
}

void EnvoyDialect::eject(InstanceId id, Type type, Micros at, double rate) {
  Host& h = hosts_[id];
  Detector& d = detectorOf(id);
  if (h.ejected) return;
  const double maxPct = std::min<std::uint32_t>(100, cfg_.maxEjectionPercent);
  const double pct = 100.0 * (d.active + 1) / static_cast<double>(d.hosts.size());
  bool should = pct <= maxPct;
  if (cfg_.alwaysEjectOneHost) should = d.active == 0 || should;
  if (!should) return;  // ejections_overflow
  std::uint32_t enforcing = 0;
  switch (type) {
    case Type::Consecutive5xx:
      enforcing = cfg_.enforcingConsecutive5xx;
      break;
    case Type::ConsecutiveGateway:
      enforcing = cfg_.enforcingConsecutiveGatewayFailure;
      break;
    case Type::SuccessRate:
      enforcing = cfg_.enforcingSuccessRate;
      break;
    case Type::FailurePct:
      enforcing = cfg_.enforcingFailurePercentage;
      break;
  }
  if (!enforce(d, enforcing)) return;  // detected, not enforced
  ++d.active;
  h.ejected = true;
  ++h.numEjections;
  h.lastEjection = at;
  const std::uint64_t jitterMs = static_cast<std::uint64_t>(cfg_.maxEjectionTimeJitter / 1000);
  h.jitter = millis(static_cast<std::int64_t>(d.rng.next() % (jitterMs + 1)));
  const Micros base = cfg_.baseEjectionTime, max = cfg_.maxEjection();
  if (static_cast<Micros>(h.backoff) * base < max + base) ++h.backoff;
  const Micros out = std::min(base * static_cast<Micros>(h.backoff), max) + h.jitter;
  transition(id, BreakerState::Open, Reason::ErrorRate, at, out, rate, 0,
             static_cast<std::uint32_t>(h.bakTotal));
}

void EnvoyDialect::sweep(Detector& d, Micros at) {
  const Micros base = cfg_.baseEjectionTime, max = cfg_.maxEjection();
  for (InstanceId id : d.hosts) {
    Host& h = hosts_[id];
    if (h.ejected &&
        std::min(base * static_cast<Micros>(h.backoff), max) + h.jitter <= at - h.lastEjection) {
      h.ejected = false;
      --d.active;
      h.c5xx = h.cGateway = 0;  // no re-ejection on a few errors near the old trigger
      h.lastUneject = at;
      transition(id, BreakerState::Closed, Reason::OpenElapsed, at);
      rampComplete(id, at);
    }
    h.bakOk = h.curOk;
    h.bakTotal = h.curTotal;
    h.curOk = h.curTotal = 0;
  }
  // Success rate and failure percentage over the interval that just ended.
  const std::size_t n = d.hosts.size();
  if (!(n < cfg_.successRateMinimumHosts && n < cfg_.failurePercentageMinimumHosts)) {
    struct Rate {
      InstanceId id;
      double sr;
    };
    std::vector<Rate> srHosts, fpHosts;
    double sum = 0;
    for (InstanceId id : d.hosts) {
      const Host& h = hosts_[id];
      if (h.ejected || h.bakTotal == 0) continue;
      const double sr = static_cast<double>(h.bakOk) * 100.0 / static_cast<double>(h.bakTotal);
      if (h.bakTotal >= cfg_.successRateRequestVolume) {
        srHosts.push_back({id, sr});
        sum += sr;
      }
      if (h.bakTotal >= cfg_.failurePercentageRequestVolume) fpHosts.push_back({id, sr});
    }
    if (!srHosts.empty() && srHosts.size() >= cfg_.successRateMinimumHosts) {
      const double mean = sum / static_cast<double>(srHosts.size());
      double var = 0;
      for (const Rate& r : srHosts) var += (r.sr - mean) * (r.sr - mean);
      var /= static_cast<double>(srHosts.size());
      const double threshold = mean - (cfg_.successRateStdevFactor / 1000.0) * std::sqrt(var);
      for (const Rate& r : srHosts)
        if (r.sr < threshold) eject(r.id, Type::SuccessRate, at, 1.0 - r.sr / 100.0);
    }
    if (!fpHosts.empty() && fpHosts.size() >= cfg_.failurePercentageMinimumHosts) {
      for (const Rate& r : fpHosts)
        if (100.0 - r.sr >= cfg_.failurePercentageThreshold)
          eject(r.id, Type::FailurePct, at, 1.0 - r.sr / 100.0);
    }
  }
  // The backoff decays by one per sweep for hosts back in service for at least an interval.
  for (InstanceId id : d.hosts) {
    Host& h = hosts_[id];
    if (!h.ejected && h.lastUneject != kNever && at - h.lastUneject >= cfg_.interval &&
        h.backoff > 0)
      --h.backoff;
  }
}

void EnvoyDialect::doAdvance(Micros now) {
  for (Detector& d : detectors_) {
    while (d.nextSweep != kNever && d.nextSweep <= now) {
      const Micros at = d.nextSweep;
      d.nextSweep += cfg_.interval;  // re-armed after each sweep
      sweep(d, at);
    }
  }
}

DialectDecision EnvoyDialect::doAdmit(InstanceId id, Micros now) {
  Detector& d = detectorOf(id);
  if (d.nextSweep == kNever) d.nextSweep = now + cfg_.interval;  // the detector starts here
  if (!hosts_[id].ejected) return {};
  // Panic: with too few available hosts the LB ignores health and uses them all.
  const double healthy =
      100.0 * static_cast<double>(d.hosts.size() - d.active) / static_cast<double>(d.hosts.size());
  if (healthy < cfg_.healthyPanicThreshold) return {};
  return {Admission::Reject, RejectReason::BreakerOpen};
}

void EnvoyDialect::doRecord(InstanceId id, const DialectDecision&, Micros end, Micros, int status,
                            Outcome outcome) {
  Detector& d = detectorOf(id);
  if (d.nextSweep == kNever) d.nextSweep = end + cfg_.interval;
  Host& h = hosts_[id];
  const int code = reportedCode(status, outcome);
  ++h.curTotal;
  if (!is5xx(code)) {
    ++h.curOk;
    h.c5xx = h.cGateway = 0;
    return;
  }
  bool gatewayFired = false, fiveFired = false;
  if (isGateway(code)) {
    gatewayFired = ++h.cGateway == cfg_.consecutiveGatewayFailure;
  } else {
    h.cGateway = 0;
  }
  fiveFired = ++h.c5xx == cfg_.consecutive5xx;
  // The worker posts reach the main thread in order; an already ejected host keeps its counter.
  if (gatewayFired && !h.ejected) {
    eject(id, Type::ConsecutiveGateway, end, 1.0);
    h.cGateway = 0;
  }
  if (fiveFired && !h.ejected) {
    eject(id, Type::Consecutive5xx, end, 1.0);
    h.c5xx = 0;
  }
}

// ---- configuration --------------------------------------------------------------------------

namespace {

void applyOutlier(const NativeReader& r, const YAML::Node& m, const std::string& path,
                  EnvoyOutlierConfig& c) {
  r.checkNative(
      m, path,
      {"consecutive_5xx", "consecutive_gateway_failure", "interval", "base_ejection_time",
       "max_ejection_time", "max_ejection_time_jitter", "max_ejection_percent",
       "always_eject_one_host", "enforcing_consecutive_5xx",
       "enforcing_consecutive_gateway_failure", "enforcing_success_rate",
       "success_rate_minimum_hosts", "success_rate_request_volume", "success_rate_stdev_factor",
       "failure_percentage_threshold", "enforcing_failure_percentage",
       "failure_percentage_minimum_hosts", "failure_percentage_request_volume"},
      {"split_external_local_origin_errors", "consecutive_local_origin_failure",
       "enforcing_consecutive_local_origin_failure", "enforcing_local_origin_success_rate",
       "enforcing_failure_percentage_local_origin", "successful_active_health_check_uneject_host",
       "monitors"},
      &c.ignoredKeys);
  auto k = [&](const char* f) { return NativeReader::join(path, f); };
  auto u32 = [&](const char* f, std::uint32_t& out, long hi) {
    if (auto n = NativeReader::get(m, f)) out = static_cast<std::uint32_t>(r.whole(n, k(f), 0, hi));
  };
  u32("consecutive_5xx", c.consecutive5xx, 4294967295L);
  u32("consecutive_gateway_failure", c.consecutiveGatewayFailure, 4294967295L);
  u32("max_ejection_percent", c.maxEjectionPercent, 100);
  u32("enforcing_consecutive_5xx", c.enforcingConsecutive5xx, 100);
  u32("enforcing_consecutive_gateway_failure", c.enforcingConsecutiveGatewayFailure, 100);
  u32("enforcing_success_rate", c.enforcingSuccessRate, 100);
  u32("success_rate_minimum_hosts", c.successRateMinimumHosts, 4294967295L);
  u32("success_rate_request_volume", c.successRateRequestVolume, 4294967295L);
  u32("success_rate_stdev_factor", c.successRateStdevFactor, 4294967295L);
  u32("failure_percentage_threshold", c.failurePercentageThreshold, 100);
  u32("enforcing_failure_percentage", c.enforcingFailurePercentage, 100);
  u32("failure_percentage_minimum_hosts", c.failurePercentageMinimumHosts, 4294967295L);
  u32("failure_percentage_request_volume", c.failurePercentageRequestVolume, 4294967295L);
  if (auto n = NativeReader::get(m, "always_eject_one_host"))
    c.alwaysEjectOneHost =
        r.boolean(n.IsMap() ? NativeReader::get(n, "value") : n, k("always_eject_one_host"));
  // Proto durations: "10s", "0.5s", or {seconds, nanos}; a bare number is not a Duration.
  if (auto n = NativeReader::get(m, "interval"))
    c.interval = r.dur(n, k("interval"), BareUnit::None, 1000);
  if (auto n = NativeReader::get(m, "base_ejection_time"))
    c.baseEjectionTime = r.dur(n, k("base_ejection_time"), BareUnit::None, 1000);
  if (auto n = NativeReader::get(m, "max_ejection_time"))
    c.maxEjectionTime = r.dur(n, k("max_ejection_time"), BareUnit::None, 1000);
  if (auto n = NativeReader::get(m, "max_ejection_time_jitter"))
    c.maxEjectionTimeJitter = r.dur(n, k("max_ejection_time_jitter"), BareUnit::None, 0);
  if (c.maxEjectionTime >= 0 && c.maxEjectionTime < c.baseEjectionTime)
    r.fail(YamlReader::keyMark(m, "max_ejection_time"), k("max_ejection_time"),
           "cannot be smaller than base_ejection_time");
}

}  // namespace

EnvoyOutlierConfig parseEnvoyConfig(std::string_view text, const std::string& source,
                                    std::string_view cluster) {
  const NativeReader r(source);
  const YAML::Node root = loadNative(text, source);
  EnvoyOutlierConfig c;
  if (!root.IsMap()) r.fail(root.Mark(), "", "expected a mapping of keys");
  // static_resources.clusters / clusters: [...] → one cluster. (YAML::Node assignment writes
  // through to the referenced node, so the choice is made once, not by re-assigning.)
  YAML::Node list = NativeReader::get(root, "clusters");
  if (!list) list = NativeReader::get(NativeReader::get(root, "static_resources"), "clusters");
  std::string path;
  std::size_t chosen = 0;
  if (list) {
    if (!list.IsSequence() || list.size() == 0) r.fail(list.Mark(), "clusters", "expected a list");
    chosen = list.size();
    std::map<std::string, std::size_t> named;  // Envoy refuses two clusters of one name
    for (std::size_t i = 0; i < list.size(); ++i) {
      const YAML::Node nm = NativeReader::get(list[i], "name");
      if (!nm || !nm.IsScalar()) continue;
      if (const auto [at, fresh] = named.emplace(nm.Scalar(), i); !fresh)
        r.fail(nm.Mark(), "clusters[" + std::to_string(i) + "].name",
               "duplicate cluster name '" + nm.Scalar() + "' (also clusters[" +
                   std::to_string(at->second) + "])");
    }
    for (std::size_t i = 0; i < list.size() && chosen == list.size(); ++i) {
      const YAML::Node nm = NativeReader::get(list[i], "name");
      if (cluster.empty() || (nm && nm.IsScalar() && nm.Scalar() == cluster)) chosen = i;
    }
    if (chosen == list.size())
      r.fail(list.Mark(), "clusters", "no cluster named '" + std::string(cluster) + "'");
    path = "clusters[" + std::to_string(chosen) + "]";
  }
  const YAML::Node cl = list ? list[chosen] : root;
  const YAML::Node od = NativeReader::get(cl, "outlier_detection");
  if (od) {
    applyOutlier(r, od, NativeReader::join(path, "outlier_detection"), c);
    // The rest of a cluster is not outlier detection; only the panic threshold matters here.
    const YAML::Node lb = NativeReader::get(cl, "common_lb_config");
    if (const YAML::Node p = NativeReader::get(lb, "healthy_panic_threshold"))
      c.healthyPanicThreshold =
          r.num(p, NativeReader::join(path, "common_lb_config.healthy_panic_threshold"), 0, 100);
  } else {
    applyOutlier(r, cl, path, c);  // a bare outlier_detection map
  }
  return c;
}

}  // namespace spillway::dialects
