#include "spillway/calibration.hpp"

#include <algorithm>
#include <cstdio>

namespace spillway {
namespace {

std::string rateChange(const char* key, double& value, double step) {
  const double old = value;
  value = std::min(0.95, old + step);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s %.2f -> %.2f", key, old, value);
  return buf;
}

std::string durationChange(const char* key, Micros& value, Micros to) {
  const Micros old = value;
  value = to;
  return std::string(key) + " " + formatDuration(old) + " -> " + formatDuration(to);
}

// Less sensitive trip: the rule that tripped falsely more often, held longer.
std::string relaxTrip(BreakerConfig& b, const BlockTally& whole, const CalibrationConfig& cfg) {
  const bool slowRule = whole.falseTripsByRule[1] >= whole.falseTripsByRule[0];
  std::string c = slowRule ? rateChange("trip.slow_rate", b.trip.slowRate, cfg.rateStep)
                           : rateChange("trip.error_rate", b.trip.errorRate, cfg.rateStep);
  return c + ", " +
         durationChange("trip.sustain", b.trip.sustain, b.trip.sustain + cfg.sustainStep);
}

// Faster return once the fault is over: half the open time and half the ramp.
std::string hastenRecovery(BreakerConfig& b) {
  const Micros open =
      std::max(seconds(1), b.open.duration / 2 / kMicrosPerSecond * kMicrosPerSecond);
  std::string c = durationChange("open.duration", b.open.duration, open);
  const Micros maxOpen =
      std::max(open, b.open.maxDuration / 2 / kMicrosPerSecond * kMicrosPerSecond);
  c += ", " + durationChange("open.max_duration", b.open.maxDuration, maxOpen);
  if (b.ramp.duration > 0)
    c += ", " + durationChange("ramp.duration", b.ramp.duration,
                               b.ramp.duration / 2 / kMicrosPerSecond * kMicrosPerSecond);
  return c;
}

// "05:25:00 UTC" for epoch times (replay); recordings are rarely longer than a day.
std::string utcClock(Micros t) {
  const std::int64_t s = ((t / kMicrosPerSecond) % 86400 + 86400) % 86400;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld UTC", static_cast<long long>(s / 3600),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return buf;
}

std::string ttdText(const FaultScore& s) {
  return s.detected ? formatDuration((s.ttd + millis(50)) / millis(100) * millis(100))
                    : std::string("never");
}

std::string pct(std::optional<double> v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", v.value_or(0) * 100);
  return buf;
}

}  // namespace

std::optional<CalibrationProposal> proposeRecalibration(const std::vector<PeriodTally>& periods,
                                                        const BlockTally& whole,
                                                        const BreakerConfig& current,
                                                        const CalibrationConfig& cfg) {
  const PeriodTally* worst = nullptr;
  for (const PeriodTally& p : periods) {
    const auto fp = p.blocks.falsePositiveRate();
    if (p.blocks.total() < cfg.minBlocked || !fp || *fp <= cfg.fpTarget) continue;
    if (!worst || *fp > *worst->blocks.falsePositiveRate()) worst = &p;
  }
  if (!worst) return std::nullopt;
  CalibrationProposal p;
  p.period = *worst;
  const BlockTally& t = worst->blocks;
  p.part = t.part(BlockClass::FalseTrip) >= t.part(BlockClass::RecoveryLag)
               ? BlockClass::FalseTrip
               : BlockClass::RecoveryLag;
  p.proposed = current;
  p.change = p.part == BlockClass::FalseTrip ? relaxTrip(p.proposed, whole, cfg)
                                             : hastenRecovery(p.proposed);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "误伤 %s > target %s over %s from %s (%llu of %llu blocks avoidable: false trip "
                "%s, recovery lag %s; collateral %s, not acted on)",
                pct(t.falsePositiveRate()).c_str(), pct(cfg.fpTarget).c_str(),
                formatDuration(cfg.period).c_str(), utcClock(worst->start).c_str(),
                static_cast<unsigned long long>(t.avoidable()),
                static_cast<unsigned long long>(t.total()),
                pct(t.partRate(BlockClass::FalseTrip)).c_str(),
                pct(t.partRate(BlockClass::RecoveryLag)).c_str(), pct(t.collateralShare()).c_str());
  p.reason = buf;
  return p;
}

std::optional<CalibrationProposal> proposeRecalibration(const Replayer& replayer,
                                                        const ReplayKpis& kpis) {
  const Policy& policy = replayer.engine().policy();
  std::vector<PeriodTally> periods;
  replayer.truth().classify(kpis.realFaults, replayer.events(), policy.calibration.period,
                            &periods);
  return proposeRecalibration(periods, kpis.blocks, policy.breaker, policy.calibration);
}

ProposalCheck checkProposal(const ReplayKpis& before, const ReplayKpis& after) {
  ProposalCheck c;
  for (std::size_t i = 0; i < before.faults.size() && i < after.faults.size(); ++i) {
    const FaultKpis& b = before.faults[i];
    const FaultKpis& a = after.faults[i];
    if (!b.found) continue;
    std::string f = b.fault.instance + ": TTD " + ttdText(b.score) + " -> " + ttdText(a.score);
    if (b.score.detected && !a.score.detected) {
      c.withheld = true;
      f += " (missed)";
    } else if (b.score.detected && a.score.ttd * 10 > b.score.ttd * 11) {
      c.withheld = true;
      f += " (more than 10 % later)";
    }
    c.findings.push_back(f);
  }
  return c;
}

}  // namespace spillway
