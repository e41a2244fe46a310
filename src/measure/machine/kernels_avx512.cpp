// AVX-512 kernels (512-bit registers, FMA). Compiled for AVX-512F whatever the build's -march.
#pragma GCC target("avx512f,fma")
#include <immintrin.h>

#include "measure/machine/kernel_templates.hpp"

namespace ridge::measure::kernels {
namespace {

struct F32x16 {
  using T = float;
  using reg = __m512;
  static constexpr int lanes = 16;
  static reg zero() { return _mm512_setzero_ps(); }
  static reg set1(T v) { return _mm512_set1_ps(v); }
  static reg load(const T* p) { return _mm512_load_ps(p); }
  static void store(T* p, reg v) { _mm512_store_ps(p, v); }
  static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
  static reg madd(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static double hsum(reg v) {
    alignas(64) T t[lanes];
    store(t, v);
    double s = 0;
    for (T e : t) s += e;
    return s;
  }
};

struct F64x8 {
  using T = double;
  using reg = __m512d;
  static constexpr int lanes = 8;
  static reg zero() { return _mm512_setzero_pd(); }
  static reg set1(T v) { return _mm512_set1_pd(v); }
  static reg load(const T* p) { return _mm512_load_pd(p); }
  static void store(T* p, reg v) { _mm512_store_pd(p, v); }
  static reg add(reg a, reg b) { return _mm512_add_pd(a, b); }
  static reg madd(reg a, reg b, reg c) { return _mm512_fmadd_pd(a, b, c); }
  static double hsum(reg v) {
    alignas(64) T t[lanes];
    store(t, v);
    double s = 0;
    for (T e : t) s += e;
    return s;
  }
};

constexpr int kPeak = peak_chains(Isa::Avx512);
constexpr int kStream = stream_chains(Isa::Avx512);
constexpr int kTriad = triad_unroll(Isa::Avx512);

}  // namespace

double peak_avx512_f32(const Args& a, int64_t n) { return peak_body<F32x16, kPeak>(a, n); }
double peak_avx512_f64(const Args& a, int64_t n) { return peak_body<F64x8, kPeak>(a, n); }
double read_avx512_f64(const Args& a, int64_t n) { return read_body<F64x8, kStream>(a, n); }
double triad_avx512_f64(const Args& a, int64_t n) { return triad_body<F64x8, kTriad>(a, n); }

}  // namespace ridge::measure::kernels
