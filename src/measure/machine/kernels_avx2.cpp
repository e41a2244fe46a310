// AVX2 kernels (256-bit registers, FMA3). Compiled for AVX2 + FMA whatever the build's -march.
#pragma GCC target("avx2,fma")
#include <immintrin.h>

#include "measure/machine/kernel_templates.hpp"

namespace ridge::measure::kernels {
namespace {

struct F32x8 {
  using T = float;
  using reg = __m256;
  static constexpr int lanes = 8;
  static reg zero() { return _mm256_setzero_ps(); }
  static reg set1(T v) { return _mm256_set1_ps(v); }
  static reg load(const T* p) { return _mm256_load_ps(p); }
  static void store(T* p, reg v) { _mm256_store_ps(p, v); }
  static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
  static reg madd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static double hsum(reg v) {
    alignas(32) T t[lanes];
    store(t, v);
    double s = 0;
    for (T e : t) s += e;
    return s;
  }
};

struct F64x4 {
  using T = double;
  using reg = __m256d;
  static constexpr int lanes = 4;
  static reg zero() { return _mm256_setzero_pd(); }
  static reg set1(T v) { return _mm256_set1_pd(v); }
  static reg load(const T* p) { return _mm256_load_pd(p); }
  static void store(T* p, reg v) { _mm256_store_pd(p, v); }
  static reg add(reg a, reg b) { return _mm256_add_pd(a, b); }
  static reg madd(reg a, reg b, reg c) { return _mm256_fmadd_pd(a, b, c); }
  static double hsum(reg v) {
    alignas(32) T t[lanes];
    store(t, v);
    return (t[0] + t[1]) + (t[2] + t[3]);
  }
};

constexpr int kPeak = peak_chains(Isa::Avx2);
constexpr int kStream = stream_chains(Isa::Avx2);
constexpr int kTriad = triad_unroll(Isa::Avx2);

}  // namespace

double peak_avx2_f32(const Args& a, int64_t n) { return peak_body<F32x8, kPeak>(a, n); }
double peak_avx2_f64(const Args& a, int64_t n) { return peak_body<F64x4, kPeak>(a, n); }
double read_avx2_f64(const Args& a, int64_t n) { return read_body<F64x4, kStream>(a, n); }
double triad_avx2_f64(const Args& a, int64_t n) { return triad_body<F64x4, kTriad>(a, n); }

}  // namespace ridge::measure::kernels
