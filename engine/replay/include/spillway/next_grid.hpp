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
  enum class Move { Kept, ExtendedDown, ExtendedUp, Refined } move = Move::Kept;
};

struct NextGrid {
  std::size_t around = 0;          // the closest candidate's index
  std::vector<NextGridAxis> axes;  // in the sweep's parameter order
};

// nullopt when a candidate meets every target (calibrate chose one) or the sweep varied
// nothing. "Closest": the least total shortfall over the targets (and the implied
// `missed<=0`), each as a share of its bound; a metric that is n/a counts a whole bound short.
std::optional<NextGrid> proposeNextGrid(const SweepResult& sweep,
                                        const std::vector<Target>& targets);

// "trip.slow_rate 0.05..0.25 step 0.05, slow.k 3"
std::string formatNextGrid(const NextGrid& grid);
// The same as CLI arguments: "--param trip.slow_rate=0.05:0.25:0.05 --param slow.k=3"
std::string nextGridArgs(const NextGrid& grid);

}  // namespace spillway
