// SSE2 kernels (128-bit registers, no FMA: a multiply then an add, still 2 FLOPs per lane).
#pragma GCC target("sse2")
#include <immintrin.h>

#include "measure/machine/kernel_templates.hpp"

namespace ridge::measure::kernels {
namespace {

struct F32x4 {
  using T = float;
  using reg = __m128;
  static constexpr int lanes = 4;
  static reg zero() { return _mm_setzero_ps(); }
  static reg set1(T v) { return _mm_set1_ps(v); }
  static reg load(const T* p) { return _mm_load_ps(p); }
  static void store(T* p, reg v) { _mm_store_ps(p, v); }
  static reg add(reg a, reg b) { return _mm_add_ps(a, b); }
  static reg madd(reg a, reg b, reg c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
  static double hsum(reg v) {
    alignas(16) T t[lanes];
    store(t, v);
    return (t[0] + t[1]) + (t[2] + t[3]);
  }
};

struct F64x2 {
  using T = double;
  using reg = __m128d;
  static constexpr int lanes = 2;
  static reg zero() { return _mm_setzero_pd(); }
  static reg set1(T v) { return _mm_set1_pd(v); }
  static reg load(const T* p) { return _mm_load_pd(p); }
  static void store(T* p, reg v) { _mm_store_pd(p, v); }
  static reg add(reg a, reg b) { return _mm_add_pd(a, b); }
  static reg madd(reg a, reg b, reg c) { return _mm_add_pd(_mm_mul_pd(a, b), c); }
  static double hsum(reg v) {
    alignas(16) T t[lanes];
    store(t, v);
    return t[0] + t[1];
  }
};

constexpr int kPeak = peak_chains(Isa::Sse);
constexpr int kStream = stream_chains(Isa::Sse);
constexpr int kTriad = triad_unroll(Isa::Sse);

}  // namespace

double peak_sse_f32(const Args& a, int64_t n) { return peak_body<F32x4, kPeak>(a, n); }
double peak_sse_f64(const Args& a, int64_t n) { return peak_body<F64x2, kPeak>(a, n); }
double read_sse_f64(const Args& a, int64_t n) { return read_body<F64x2, kStream>(a, n); }
double triad_sse_f64(const Args& a, int64_t n) { return triad_body<F64x2, kTriad>(a, n); }

}  // namespace ridge::measure::kernels
