#pragma once
// Seeded random streams for the simulator. Every component (client, instance, gateway, ground
// truth) draws from its own stream derived from (scenario seed, component name), so adding a
// client does not change another client's arrivals.
#include <cmath>
#include <cstdint>
#include <string_view>

#include "spillway/rng.hpp"

namespace spillway::sim {

class Stream {
 public:
  Stream() = default;
  Stream(std::uint64_t seed, std::string_view component, std::string_view purpose = {})
      : rng_(seed ^ stableHash(component) ^ (stableHash(purpose) * 0x9e3779b97f4a7c15ULL)) {}

  double uniform() { return rng_.uniform(); }
  // (0, 1]: safe to take the log of.
  double uniformPositive() { return 1.0 - rng_.uniform(); }
  bool bernoulli(double p) { return p > 0 && (p >= 1 || rng_.uniform() < p); }
  double exponential(double mean) { return -mean * std::log(uniformPositive()); }

  // Standard normal by Box–Muller; the second value of each pair is kept for the next call.
  double normal() {
    if (haveSpare_) {
      haveSpare_ = false;
      return spare_;
    }
    const double u1 = uniformPositive();
    const double u2 = rng_.uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = 6.283185307179586 * u2;
    spare_ = r * std::sin(a);
    haveSpare_ = true;
    return r * std::cos(a);
  }
  // Median × e^(σZ); σ = 0 gives the median without drawing.
  double lognormal(double median, double sigma) {
    if (sigma <= 0) return median;
    return median * std::exp(sigma * normal());
  }
  // Geometric count ≥ 1 with the given mean.
  std::uint32_t geometric(double mean) {
    if (mean <= 1) return 1;
    const double p = 1.0 / mean;
    return 1 + static_cast<std::uint32_t>(std::floor(std::log(uniformPositive()) /
                                                     std::log1p(-p)));
  }

 private:
  Rng rng_;
  double spare_ = 0;
  bool haveSpare_ = false;
};

}  // namespace spillway::sim
