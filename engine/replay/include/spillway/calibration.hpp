#pragma once
// Seed 000's closed loop ("误伤过高就回调阈值"), acting on the parts of 误伤 (docs/kpis.md):
// false trips → the trip rule that misfired and its sustain; recovery lag → open duration and
// ramp; collateral → nothing (relaxing the rule would only delay detection). A proposal is
// replayed before it is shown (checkProposal) and withheld when it would delay the detection
// of a real fault by more than 10 % or miss one.
#include <optional>
#include <string>
#include <vector>

#include "spillway/dialect_replay.hpp"
#include "spillway/policy.hpp"
#include "spillway/replay.hpp"
#include "spillway/replay_truth.hpp"

namespace spillway {

struct CalibrationProposal {
  PeriodTally period;  // the review period judged: the worst one above the target
  BlockClass part = BlockClass::FalseTrip;  // the part acted on
  BreakerConfig proposed;
  std::string change;  // "trip.slow_rate 0.40 -> 0.45, trip.sustain 3s -> 5s"
  std::string reason;  // why, with the period's figures
};

// The review period with the highest 误伤 above cfg.fpTarget among those with at least
// cfg.minBlocked blocks, and the change its larger avoidable part calls for; nullopt when no
// period is over the target. `whole` names the trip rule behind the false trips.
std::optional<CalibrationProposal> proposeRecalibration(const std::vector<PeriodTally>& periods,
                                                        const BlockTally& whole,
                                                        const BreakerConfig& current,
                                                        const CalibrationConfig& cfg);

// The same over a finished native replay (`kpis` = nativeReplayKpis of it): its review periods
// of the policy's calibration.period judged against the replay's real faults.
std::optional<CalibrationProposal> proposeRecalibration(const Replayer& replayer,
                                                        const ReplayKpis& kpis);

struct ProposalCheck {
  bool withheld = false;
  std::vector<std::string> findings;  // per real fault: "chat-72b-3: TTD 2m34s -> 2m40s (+4 %)"
};

// The guard: the same recording replayed under the current policy (`before`) and the proposal
// (`after`); withheld when a real fault detected before is missed after, or detected more than
// 10 % later.
ProposalCheck checkProposal(const ReplayKpis& before, const ReplayKpis& after);

}  // namespace spillway
