#include "spillway/sim/series.hpp"

#include <cstdio>

namespace spillway::sim {
namespace {

// Fixed, locale-independent number formatting keeps the files byte-identical across runs.
void put(std::ostream& os, double v, const char* fmt = "%.4g") {
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  os << buf;
}

}  // namespace

void CsvSeriesWriter::begin(const std::vector<std::string>& instances,
                            const std::vector<std::string>& clients) {
  instances_ = instances;
  clients_ = clients;
  inst_
      << "t_s,instance,state,ramping,admit_share,error_rate,slow_rate,window_calls,p99_ms,"
         "baseline_p99_ms,responses,failures,rejected,queue_full,overflow,busy,queued,outstanding,"
         "fault_multiplier,faulted,unhealthy,blocked_judged,blocked_would_succeed\n";
  cli_ << "t_s,client,originals,finished,available,failed,attempts,retries,blocked,p50_ms,"
          "p99_ms\n";
}

void CsvSeriesWriter::onInstance(const InstanceTick& r) {
  put(inst_, static_cast<double>(r.t) / 1e6, "%.3f");
  inst_ << ',' << instances_[r.instance] << ',' << stateName(r.state) << ',' << int(r.ramping)
        << ',';
  put(inst_, r.admitShare);
  inst_ << ',';
  put(inst_, r.errorRate);
  inst_ << ',';
  put(inst_, r.slowRate);
  inst_ << ',' << r.windowCalls << ',';
  put(inst_, r.p99Ms, "%.1f");
  inst_ << ',';
  put(inst_, r.baselineP99Ms, "%.1f");
  inst_ << ',' << r.responses << ',' << r.failures << ',' << r.rejected << ',' << r.queueFull << ','
        << r.overflow << ',' << r.busy << ',' << r.queued << ',' << r.outstanding << ',';
  put(inst_, r.faultMultiplier);
  inst_ << ',' << int(r.faulted) << ',' << int(r.unhealthy) << ',' << r.blockedJudged << ','
        << r.blockedWouldSucceed << '\n';
}

void CsvSeriesWriter::onClient(const ClientTick& r) {
  put(cli_, static_cast<double>(r.t) / 1e6, "%.3f");
  cli_ << ',' << clients_[r.client] << ',' << r.originals << ',' << r.finished << ',' << r.available
       << ',' << r.failed << ',' << r.attempts << ',' << r.retries << ',' << r.blocked << ',';
  put(cli_, r.p50Ms, "%.1f");
  cli_ << ',';
  put(cli_, r.p99Ms, "%.1f");
  cli_ << '\n';
}

void CsvSeriesWriter::end() {
  inst_.flush();
  cli_.flush();
}

}  // namespace spillway::sim
