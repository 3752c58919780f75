#pragma once
// Compiler- and CPU-specific code, in one place, each piece with a portable fallback: Spillway
// builds on any C++20 compiler; GCC and Clang (and x86-64) get the faster paths. Outputs are
// the same either way: these change speed, never results.
#include <cstddef>
#include <cstdint>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <x86intrin.h>
#define SPILLWAY_X86_64_GNU 1
#endif

namespace spillway::platform {

// The line size of the CPUs Spillway runs on (x86-64, most ARM64): what hot fields are packed
// into and aligned to.
inline constexpr std::size_t kCacheLine = 64;

// A hint that `p` will be read soon.
inline void prefetch(const void* p) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

// Some libraries in the host process (seen with Qt) leave the upper halves of the AVX
// registers dirty; every later call into libm's VEX-encoded exp() then pays an SSE/AVX
// transition penalty — it made the whole simulator 3x slower inside spillway-cli. Clearing
// the state on entry to the event loop is one instruction.
inline void clearUpperVectorState() {
#if defined(SPILLWAY_X86_64_GNU)
  static const bool hasAvx = __builtin_cpu_supports("avx");
  // Clobbers: the compiler must not keep anything in vector registers across it.
  if (hasAvx)
    asm volatile("vzeroupper" ::
                     : "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                       "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
#endif
}

// An unsigned 128-bit key (high word first): the compiler's integer where it has one.
#if defined(__SIZEOF_INT128__)
__extension__ using Uint128 = unsigned __int128;  // GCC/Clang builtin; -Wpedantic-clean
inline Uint128 uint128(std::uint64_t high, std::uint64_t low) {
  return (static_cast<Uint128>(high) << 64) | low;
}
// a < b as the borrow of a - b: a flag, where `<` on 128 bits compiles to branches.
inline bool lessWithoutBranch(Uint128 a, Uint128 b) {
#if defined(SPILLWAY_X86_64_GNU)
  unsigned long long d;
  const unsigned char borrow =
      _subborrow_u64(0, static_cast<std::uint64_t>(a), static_cast<std::uint64_t>(b), &d);
  return _subborrow_u64(borrow, static_cast<std::uint64_t>(a >> 64),
                        static_cast<std::uint64_t>(b >> 64), &d);
#else
  return a < b;
#endif
}
#else
struct Uint128 {
  std::uint64_t high, low;
  friend bool operator<(const Uint128& a, const Uint128& b) {
    return a.high < b.high || (a.high == b.high && a.low < b.low);
  }
};
inline Uint128 uint128(std::uint64_t high, std::uint64_t low) {
  return {high, low};
}
inline bool lessWithoutBranch(Uint128 a, Uint128 b) {
  return a < b;
}
#endif

}  // namespace spillway::platform
