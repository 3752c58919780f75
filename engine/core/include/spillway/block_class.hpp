#pragma once
// Block classes (docs/kpis.md): every breaker block is a false trip, recovery lag or
// collateral, judged against the instance's *real* faults — never against the policy under
// test. The headline false-positive rate (误伤) counts the blocks a better policy could have
// avoided (false trips, slow recovery) that would have succeeded; collateral is reported beside
// it. The simulator feeds it the scenario's fault timeline, replay the fault annotations or the
// faults read from the recording itself.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "spillway/events.hpp"

namespace spillway {

enum class BlockClass : std::uint8_t { FalseTrip, RecoveryLag, Collateral };
inline constexpr int kBlockClassCount = 3;
std::string_view blockClassName(BlockClass c);

// What makes a fault real, the same for every candidate policy.
struct GroundTruthRules {
  // Shorter than this (the default breaker window) is jitter, a blip, not a real fault.
  Micros minFault = seconds(10);
  // An open this soon after a real fault ended is that fault's late detection, not a false trip
  // (its window still held the fault's calls).
  Micros lateTrip = seconds(10);
};

struct BlockTally {
  std::array<std::uint64_t, kBlockClassCount> blocks{};        // by class
  std::array<std::uint64_t, kBlockClassCount> wouldSucceed{};  // of which would have succeeded
  std::uint64_t episodes = 0;                                  // OPENs from full traffic
  std::uint64_t falseTripEpisodes = 0;                         // ... of which without a real fault
  // False-trip episodes by the rule that tripped: [error rate, slow rate] (both for a trip on
  // both), so recalibration relaxes the rule that misfired.
  std::array<std::uint64_t, 2> falseTripsByRule{};
  std::uint64_t total() const { return blocks[0] + blocks[1] + blocks[2]; }
  std::uint64_t avoidable() const {
    return wouldSucceed[static_cast<int>(BlockClass::FalseTrip)] +
           wouldSucceed[static_cast<int>(BlockClass::RecoveryLag)];
  }
  std::uint64_t part(BlockClass c) const { return wouldSucceed[static_cast<int>(c)]; }
  // (would-succeed false-trip + recovery-lag blocks) ÷ all blocks; nullopt when none.
  std::optional<double> falsePositiveRate() const { return share(avoidable()); }
  std::optional<double> partRate(BlockClass c) const { return share(part(c)); }
  std::optional<double> collateralShare() const { return partRate(BlockClass::Collateral); }
  // False-trip episodes per hour of `traffic`.
  std::optional<double> falseTripsPerHour(Micros traffic) const;
  BlockTally& operator+=(const BlockTally& o);

 private:
  std::optional<double> share(std::uint64_t n) const {
    const std::uint64_t d = total();
    if (d == 0) return std::nullopt;
    return static_cast<double>(n) / static_cast<double>(d);
  }
};

class BlockClassifier {
 public:
  explicit BlockClassifier(GroundTruthRules rules = {}) : rules_(rules) {}

  // A fault of instance `id`, [start, end) (end = kForever: not over). Benign faults are left
  // out by the caller; faults shorter than rules.minFault are dropped here.
  void addFault(InstanceId id, Micros start, Micros end);
  // Episodes: an OPEN (or FORCED_OPEN) from full traffic starts one, RAMP_COMPLETE ends it.
  void onEvent(const Event& e);
  BlockClass classify(InstanceId id, Micros at) const;
  void noteBlock(InstanceId id, Micros at, bool wouldSucceed);

  bool realFaultAt(InstanceId id, Micros at) const;
  const BlockTally& tally() const { return total_; }
  // One instance's blocks and episodes.
  BlockTally tallyOf(InstanceId id) const;
  const GroundTruthRules& rules() const { return rules_; }

 private:
  struct Interval {
    Micros start, end;
  };
  struct PerInstance {
    std::vector<Interval> faults;  // sorted by start, disjoint
    bool inEpisode = false;
    Micros episodeStart = 0;
    BlockTally blocks;
  };
  PerInstance& at(InstanceId id);
  const PerInstance* find(InstanceId id) const;
  // The last fault that started at or before `t`, or nullptr.
  static const Interval* lastStarted(const PerInstance& p, Micros t);

  GroundTruthRules rules_;
  std::vector<PerInstance> inst_;
  BlockTally total_;
};

}  // namespace spillway
