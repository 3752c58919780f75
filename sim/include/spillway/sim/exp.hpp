#pragma once
// e^x for the simulator's lognormal draws (service times, token counts), inline and without
// libm. Two reasons: a lognormal draw is on every request's path, and libm's exp() is an
// out-of-line call through the PLT plus an errno wrapper (about 10 % of the simulator's time);
// and libm's result may differ in the last bit between glibc versions and CPUs (its FMA path),
// while this one is the same on every x86-64 and AArch64 build — so a seed gives the same run
// on every machine, not only on the same one.
//
// Method (Tang, "Table-driven implementation of the exponential function in IEEE
// floating-point arithmetic", ACM TOMS 15(2), 1989): x = (64m + j)·ln2/64 + r with
// |r| ≤ ln2/128, e^x = 2^m · 2^(j/64) · e^r; 2^(j/64) from a table, e^r − 1 by its Taylor
// polynomial to degree 5 (truncation error < 4e-17 relative). Error below 1.5 ulp over the
// range the simulator uses; outside ±700 it defers to std::exp (overflow, subnormals).
//
// The table holds 2^(j/64) correctly rounded to double, generated with
//   python3 -c "from decimal import *; getcontext().prec=60;
//               print([float((Decimal(2).ln()*j/64).exp()).hex() for j in range(64)])"
#include <bit>
#include <cmath>
#include <cstdint>

namespace spillway::sim {

namespace exp_detail {
inline constexpr double kTwoPowJ64[64] = {
    0x1.0000000000000p+0, 0x1.02c9a3e778061p+0, 0x1.059b0d3158574p+0, 0x1.0874518759bc8p+0,
    0x1.0b5586cf9890fp+0, 0x1.0e3ec32d3d1a2p+0, 0x1.11301d0125b51p+0, 0x1.1429aaea92de0p+0,
    0x1.172b83c7d517bp+0, 0x1.1a35beb6fcb75p+0, 0x1.1d4873168b9aap+0, 0x1.2063b88628cd6p+0,
    0x1.2387a6e756238p+0, 0x1.26b4565e27cddp+0, 0x1.29e9df51fdee1p+0, 0x1.2d285a6e4030bp+0,
    0x1.306fe0a31b715p+0, 0x1.33c08b26416ffp+0, 0x1.371a7373aa9cbp+0, 0x1.3a7db34e59ff7p+0,
    0x1.3dea64c123422p+0, 0x1.4160a21f72e2ap+0, 0x1.44e086061892dp+0, 0x1.486a2b5c13cd0p+0,
    0x1.4bfdad5362a27p+0, 0x1.4f9b2769d2ca7p+0, 0x1.5342b569d4f82p+0, 0x1.56f4736b527dap+0,
    0x1.5ab07dd485429p+0, 0x1.5e76f15ad2148p+0, 0x1.6247eb03a5585p+0, 0x1.6623882552225p+0,
    0x1.6a09e667f3bcdp+0, 0x1.6dfb23c651a2fp+0, 0x1.71f75e8ec5f74p+0, 0x1.75feb564267c9p+0,
    0x1.7a11473eb0187p+0, 0x1.7e2f336cf4e62p+0, 0x1.82589994cce13p+0, 0x1.868d99b4492edp+0,
    0x1.8ace5422aa0dbp+0, 0x1.8f1ae99157736p+0, 0x1.93737b0cdc5e5p+0, 0x1.97d829fde4e50p+0,
    0x1.9c49182a3f090p+0, 0x1.a0c667b5de565p+0, 0x1.a5503b23e255dp+0, 0x1.a9e6b5579fdbfp+0,
    0x1.ae89f995ad3adp+0, 0x1.b33a2b84f15fbp+0, 0x1.b7f76f2fb5e47p+0, 0x1.bcc1e904bc1d2p+0,
    0x1.c199bdd85529cp+0, 0x1.c67f12e57d14bp+0, 0x1.cb720dcef9069p+0, 0x1.d072d4a07897cp+0,
    0x1.d5818dcfba487p+0, 0x1.da9e603db3285p+0, 0x1.dfc97337b9b5fp+0, 0x1.e502ee78b3ff6p+0,
    0x1.ea4afa2a490dap+0, 0x1.efa1bee615a27p+0, 0x1.f50765b6e4540p+0, 0x1.fa7c1819e90d8p+0,
};
inline constexpr double kInvLn2x64 = 0x1.71547652b82fep+6;  // 64 / ln 2
// ln2/64 split so that k·hi is exact for |k| < 2^17 (hi has 36 significant bits).
inline constexpr double kLn2x64Hi = 0x1.62e42fefa0000p-7;
inline constexpr double kLn2x64Lo = 0x1.cf79abc9e3b3ap-46;
// Adding this rounds to an integer in the low mantissa bits (1.5 · 2^52).
inline constexpr double kShifter = 0x1.8p52;
}  // namespace exp_detail

inline double exp(double x) {
  using namespace exp_detail;
  if (!(std::fabs(x) <= 700.0)) [[unlikely]]
    return std::exp(x);  // overflow, subnormal results, NaN
  const double shifted = x * kInvLn2x64 + kShifter;
  const double kd = shifted - kShifter;          // round(x · 64/ln2), exact
  const auto k = static_cast<std::int64_t>(kd);  // |k| < 2^16 here
  const double r = (x - kd * kLn2x64Hi) - kd * kLn2x64Lo;
  const double r2 = r * r;
  // e^r − 1 = r + r²/2 + r³/6 + r⁴/24 + r⁵/120 (Estrin's grouping: a shorter dependency chain)
  const double p = r + r2 * ((0.5 + r * (1.0 / 6)) + r2 * ((1.0 / 24) + r * (1.0 / 120)));
  const auto j = static_cast<std::uint32_t>(k & 63);
  const std::int64_t m = k >> 6;  // floor(k / 64): arithmetic shift (C++20)
  // 2^m · 2^(j/64): add m to the table entry's exponent (no overflow for |x| ≤ 700).
  const double t = std::bit_cast<double>(std::bit_cast<std::uint64_t>(kTwoPowJ64[j]) +
                                         (static_cast<std::uint64_t>(m) << 52));
  return t + t * p;
}

}  // namespace spillway::sim
