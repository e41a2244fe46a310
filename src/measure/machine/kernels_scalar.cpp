// Scalar kernels (one element per instruction, no FMA) and the clock probe. Compiled for baseline x86-64, not
// vectorised, FP contraction off so that a * b + c stays a multiply and an add.
#pragma GCC optimize("fp-contract=off", "no-tree-vectorize", "no-tree-slp-vectorize")
#include "measure/machine/kernel_templates.hpp"

namespace ridge::measure::kernels {
namespace {

template <class Elem>
struct Scalar {
  using T = Elem;
  using reg = Elem;
  static constexpr int lanes = 1;
  static reg zero() { return 0; }
  static reg set1(T v) { return v; }
  static reg load(const T* p) { return *p; }
  static void store(T* p, reg v) { *p = v; }
  static reg add(reg a, reg b) { return a + b; }
  static reg madd(reg a, reg b, reg c) { return a * b + c; }
  static double hsum(reg v) { return v; }
};

constexpr int kPeak = peak_chains(Isa::Scalar);
constexpr int kStream = stream_chains(Isa::Scalar);
constexpr int kTriad = triad_unroll(Isa::Scalar);

}  // namespace

double peak_scalar_f32(const Args& a, int64_t n) { return peak_body<Scalar<float>, kPeak>(a, n); }
double peak_scalar_f64(const Args& a, int64_t n) { return peak_body<Scalar<double>, kPeak>(a, n); }
double read_scalar_f64(const Args& a, int64_t n) { return read_body<Scalar<double>, kStream>(a, n); }
double triad_scalar_f64(const Args& a, int64_t n) { return triad_body<Scalar<double>, kTriad>(a, n); }

static_assert(kClockProbeAdds == 64, "the .rept count below must match");

int64_t clock_probe(int64_t iterations) {
  int64_t x = 0;
  const int64_t one = 1;  // a register operand: adds of an immediate may be folded by the renamer (Golden Cove)
  for (int64_t i = 0; i < iterations; ++i) {
#if defined(__x86_64__)
    // 64 dependent adds: each waits for the previous one, so one iteration takes 64 cycles.
    asm volatile(
        ".rept 64\n\t"
        "addq %1, %0\n\t"
        ".endr"
        : "+r"(x)
        : "r"(one));
#else
    for (int k = 0; k < kClockProbeAdds; ++k) asm volatile("" : "+r"(x));  // approximate off x86-64
    x += kClockProbeAdds;
#endif
  }
  return x;
}

}  // namespace ridge::measure::kernels
