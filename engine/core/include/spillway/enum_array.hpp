#pragma once
// Counters indexed by an enum (rejections by reason, false positives by trip cause): the enum
// is the index, so a number cannot pick the wrong slot and the size follows the enum's count.
#include <array>
#include <cstddef>
#include <cstdint>

namespace spillway {

template <class E, std::size_t N, class T = std::uint64_t>
struct EnumArray : std::array<T, N> {
  T& operator[](E e) { return std::array<T, N>::operator[](static_cast<std::size_t>(e)); }
  const T& operator[](E e) const {
    return std::array<T, N>::operator[](static_cast<std::size_t>(e));
  }
  // Every slot, with the enum each one stands for.
  template <class F>
  void forEach(F&& f) const {
    for (std::size_t i = 0; i < N; ++i) f(static_cast<E>(i), std::array<T, N>::operator[](i));
  }
};

}  // namespace spillway
