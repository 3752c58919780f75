#pragma once
// When calibration finds no candidate meeting every target, the grid to sweep next (issue 23):
// around the candidate closest to the targets, each swept parameter's range is extended past
// the edge that candidate sits on (the KPIs were still improving there) or, when it sits
// inside the range or on the parameter's hard limit, refined around it at half the spacing.
// The proposal is a starting point for the SRE's next `--param`s, not a promise it meets them.
#include <optional>
#include <string>
#include <vector>

#include "spillway/sweep.hpp"

namespace spillway {

struct NextGridAxis {
  std::string key;                    // a breakerParams() key
  double from = 0, to = 0, step = 0;  // step 0: one value (the parameter did not vary)
  // Added: not swept, but the closest candidate's 误伤 is mostly recovery lag, which only the
  // recovery parameters change (docs/kpis.md) — swept from its value toward a faster return.
  enum class Move { Kept, ExtendedDown, ExtendedUp, Refined, Added } move = Move::Kept;
};

struct NextGrid {
  std::size_t around = 0;          // the closest candidate's index
  std::vector<NextGridAxis> axes;  // in the sweep's parameter order, then any added
  std::string why;                 // why parameters were added ("" when none was)
};

// nullopt when a candidate meets every target (calibrate chose one) or the sweep varied
// nothing. "Closest": the least total shortfall over the targets (and the implied
// `missed<=0`), each as a share of its bound; a metric that is n/a counts a whole bound short.
std::optional<NextGrid> proposeNextGrid(const SweepResult& sweep,
                                        const std::vector<Target>& targets);

// An `fp` target the closest candidate misses while recovery lag outweighs false trips in its
// 误伤 adds open.duration (¼ of its value … its value), ramp.duration (0 … its value) and
// half_open.probe_share (its value … 1) when the sweep left them alone.
//
// "trip.slow_rate 0.05..0.25 step 0.05, slow.k 3"
std::string formatNextGrid(const NextGrid& grid);
// The same as CLI arguments: "--param trip.slow_rate=0.05:0.25:0.05 --param slow.k=3"
std::string nextGridArgs(const NextGrid& grid);

}  // namespace spillway
