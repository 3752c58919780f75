#pragma once
// Seeded randomness for the engine. The engine never draws from an unseeded source: every
// breaker gets its own stream derived from (seed, instance name), so adding an instance does
// not change the draws of another.
#include <cstdint>
#include <string_view>

namespace spillway {

constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a: stable across platforms and runs (std::hash is not).
constexpr std::uint64_t stableHash(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// A 64-bit draw as a double in [0, 1): the draw scaled by 2^-64, rounded to nearest, kept below
// 1. Written out because std::uniform_real_distribution's algorithm is the standard
// library's own (libstdc++ and libc++ give different values for the same engine state); this
// is what libstdc++ computes for std::mt19937_64, so earlier sweeps keep their samples.
inline double unitInterval(std::uint64_t bits) {
  const double u = static_cast<double>(bits) * 0x1.0p-64;
  return u < 1.0 ? u : 0x1.fffffffffffffp-1;
}

// xoshiro256** — small, fast, good enough for sampling probe shares and jitter.
class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0) { reseed(seed); }
  void reseed(std::uint64_t seed) {
    std::uint64_t sm = seed;
    for (auto& w : s_) w = splitmix64(sm);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace spillway
