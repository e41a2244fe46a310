// Kernel bodies shared by every ISA. Included by kernels_<isa>.cpp after its `#pragma GCC target`, with a
// vector-operations struct V declared in that file's anonymous namespace, so every instantiation is private
// to one translation unit and compiled for that ISA only. V provides: T, reg, lanes, zero(), set1(T),
// load(const T*), store(T*, reg), add(reg, reg), madd(a, b, c) = a * b + c, hsum(reg) -> double.
#pragma once
#include <cstdint>

#include "measure/machine/kernels.hpp"

namespace ridge::measure::kernels {
namespace {

/// Keeps the compiler from merging or dropping repeated passes over the same memory.
inline void clobber_memory() { asm volatile("" ::: "memory"); }

template <class V, int Chains>
double peak_body(const Args& a, int64_t iterations) {
  using T = typename V::T;
  T* acc_mem = static_cast<T*>(a.out);
  typename V::reg acc[Chains];
  for (int c = 0; c < Chains; ++c) acc[c] = V::load(acc_mem + c * V::lanes);
  const auto x = V::set1(static_cast<T>(a.x));
  const auto y = V::set1(static_cast<T>(a.y));
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 32
    for (int c = 0; c < Chains; ++c) acc[c] = V::madd(acc[c], x, y);
  }
  for (int c = 0; c < Chains; ++c) V::store(acc_mem + c * V::lanes, acc[c]);
  return 0;
}

template <class V, int Chains>
double read_body(const Args& a, int64_t iterations) {
  using T = typename V::T;
  const T* in = static_cast<const T*>(a.in1);
  constexpr int64_t kStep = int64_t{V::lanes} * Chains;
  const int64_t n = a.n;  // a local: the stores of a pass must not make the compiler reload it (see triad_body)
  typename V::reg acc[Chains];
  for (int c = 0; c < Chains; ++c) acc[c] = V::zero();
  for (int64_t it = 0; it < iterations; ++it) {
    for (int64_t i = 0; i < n; i += kStep) {
#pragma GCC unroll 32
      for (int c = 0; c < Chains; ++c) acc[c] = V::add(acc[c], V::load(in + i + c * V::lanes));
    }
    clobber_memory();
  }
  double checksum = 0;
  for (int c = 0; c < Chains; ++c) checksum += V::hsum(acc[c]);
  return checksum;
}

template <class V, int Chains>
double triad_body(const Args& a, int64_t iterations) {
  using T = typename V::T;
  T* out = static_cast<T*>(a.out);
  const T* b = static_cast<const T*>(a.in1);
  const T* c = static_cast<const T*>(a.in2);
  constexpr int64_t kStep = int64_t{V::lanes} * Chains;
  const auto x = V::set1(static_cast<T>(a.x));
  // A local copy: read through `a` in the loop condition, n was reloaded from memory after every step's stores
  // (they might alias it), one load more per four vectors, which at L1 speed cost ~6 % on Zen 4 (268 vs likwid's
  // 285 GB/s).
  const int64_t n = a.n;
  for (int64_t it = 0; it < iterations; ++it) {
    for (int64_t i = 0; i < n; i += kStep) {
#pragma GCC unroll 32
      for (int k = 0; k < Chains; ++k) {
        const int64_t j = i + k * V::lanes;
        V::store(out + j, V::madd(V::load(c + j), x, V::load(b + j)));
      }
    }
    clobber_memory();
  }
  return 0;
}

}  // namespace
}  // namespace ridge::measure::kernels
