#pragma once
// Seeded random streams for the simulator. Every component (client, instance, gateway, ground
// truth) draws from its own stream derived from (scenario seed, component name), so adding a
// client does not change another client's arrivals.
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/normal_distribution.hpp>

#include <cmath>
#include <cstdint>
#include <string_view>

#include "spillway/rng.hpp"
#include "spillway/sim/exp.hpp"

namespace spillway::sim {

class Stream {
 public:
  Stream() = default;
  Stream(std::uint64_t seed, std::string_view component, std::string_view purpose = {})
      : rng_(seed ^ stableHash(component) ^ (stableHash(purpose) * 0x9e3779b97f4a7c15ULL)) {}

  // UniformRandomBitGenerator, so Boost.Random's ziggurat samplers can draw from the stream.
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() { return rng_.next(); }

  double uniform() { return rng_.uniform(); }
  // (0, 1]: safe to take the log of.
  double uniformPositive() { return 1.0 - rng_.uniform(); }
  bool bernoulli(double p) { return p > 0 && (p >= 1 || rng_.uniform() < p); }
  // Ziggurat samplers (Boost.Random): a few multiplications per draw instead of a log, a
  // square root and a sine per Box–Muller pair — these draws are most of a request's cost.
  double exponential(double mean) {
    return mean * boost::random::exponential_distribution<double>()(*this);
  }
  double normal() { return boost::random::normal_distribution<double>()(*this); }
  // Median × e^(σZ); σ = 0 gives the median without drawing. The inline exp (exp.hpp):
  // the same draws on every machine.
  double lognormal(double median, double sigma) {
    if (sigma <= 0) return median;
    return median * sim::exp(sigma * normal());
  }
  // Geometric count ≥ 1 with the given mean.
  std::uint32_t geometric(double mean) {
    if (mean <= 1) return 1;
    const double p = 1.0 / mean;
    return 1 + static_cast<std::uint32_t>(std::floor(std::log(uniformPositive()) / std::log1p(-p)));
  }

 private:
  Rng rng_;
};

}  // namespace spillway::sim
