// The kernel table: declared FLOPs/bytes per unit, and every kernel this CPU can run against a scalar
// reference on tiny buffers (results and counts, never speed).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "measure/machine/kernels.hpp"

namespace ridge::measure::kernels {
namespace {

TEST(MachineKernels, TableCoversEveryIsaKindAndPrecision) {
  for (const IsaInfo& isa : isa_table()) {
    for (DType t : {DType::F32, DType::F64}) EXPECT_NE(find(Kind::Peak, isa.isa, t), nullptr) << isa.name;
    EXPECT_NE(find(Kind::Read, isa.isa, DType::F64), nullptr) << isa.name;
    EXPECT_NE(find(Kind::Triad, isa.isa, DType::F64), nullptr) << isa.name;
  }
}

TEST(MachineKernels, DeclaredWorkPerUnit) {
  const Desc* p = find(Kind::Peak, Isa::Avx512, DType::F32);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->flops_per_unit, int64_t{p->chains} * 16 * 2);  // chains x 16 lanes x (mul + add)
  EXPECT_EQ(p->bytes_per_unit, 0);
  const Desc* r = find(Kind::Read, Isa::Avx2, DType::F64);
  EXPECT_EQ(r->flops_per_unit, 1);
  EXPECT_EQ(r->bytes_per_unit, 8);
  const Desc* t = find(Kind::Triad, Isa::Sse, DType::F64);
  EXPECT_EQ(t->flops_per_unit, 2);
  EXPECT_EQ(t->bytes_per_unit, 24);
  Args a;
  a.n = 1000;
  EXPECT_EQ(flops(*t, a, 3), Count{6000});
  EXPECT_EQ(bytes(*t, a, 3), Count{72000});
  EXPECT_EQ(flops(*p, a, 5), Count{5} * p->flops_per_unit);  // Peak ignores n
  EXPECT_EQ(lanes(Isa::Avx512, DType::F64), 8);
  EXPECT_EQ(lanes(Isa::Sse, DType::F32), 4);
  EXPECT_EQ(lanes(Isa::Scalar, DType::F32), 1);
}

TEST(MachineKernels, TriadIsLikwidsStreamLoopWithOrdinaryStores) {
  for (const IsaInfo& isa : isa_table()) {
    const Desc* t = find(Kind::Triad, isa.isa, DType::F64);
    ASSERT_NE(t, nullptr) << isa.name;
    EXPECT_EQ(t->chains, 4) << isa.name;  // 4 vectors per step, as likwid-bench's stream_* kernels
    EXPECT_EQ(t->chains, triad_unroll(isa.isa)) << isa.name;
    // Two loads and one ordinary store of 8 bytes each; the store's write-allocate read is not counted.
    EXPECT_EQ(t->bytes_per_unit, 2 * 8 + 8) << isa.name;
    EXPECT_EQ(t->flops_per_unit, 2) << isa.name;
  }
  // AVX-512: 4 zmm of 8 doubles, likwid's "LOOP 32" of stream_avx512.
  EXPECT_EQ(block_elements(*find(Kind::Triad, Isa::Avx512, DType::F64)), 32);
  EXPECT_EQ(block_elements(*find(Kind::Read, Isa::Avx512, DType::F64)), 64);  // Read keeps 8 add chains
}

TEST(MachineKernels, StreamArraysStartOnWholePages) {
  EXPECT_EQ(stream_array_stride_bytes(1), 4096);
  EXPECT_EQ(stream_array_stride_bytes(4096), 4096);
  EXPECT_EQ(stream_array_stride_bytes(5120), 8192);  // the 16 KiB L1 point: 640 doubles per array
  for (int64_t bytes = 8; bytes <= (int64_t{1} << 24); bytes = bytes * 3 + 8) {
    const int64_t stride = stream_array_stride_bytes(bytes);
    EXPECT_EQ(stride % 4096, 0) << bytes;  // b[i], c[i], out[i] share address bits 11:0: no 4K aliasing
    EXPECT_GE(stride, bytes);
    EXPECT_LT(stride - bytes, 4096);
  }
}

/// 64-byte aligned storage for a few elements.
template <class T>
struct Aligned {
  explicit Aligned(size_t n) : storage(n + 64 / sizeof(T)) {}
  T* data() {
    auto p = reinterpret_cast<uintptr_t>(storage.data());
    return reinterpret_cast<T*>((p + 63) & ~uintptr_t{63});
  }
  std::vector<T> storage;
};

template <class T>
void check_peak(const Desc& d) {
  const int64_t n = int64_t{d.chains} * lanes(d.isa, d.dtype);
  Aligned<T> acc(n);
  std::vector<T> ref(n);
  for (int64_t i = 0; i < n; ++i) acc.data()[i] = ref[i] = static_cast<T>(1 + i % 7);
  const T x = static_cast<T>(0.5), y = static_cast<T>(0.25);
  Args a;
  a.out = acc.data();
  a.x = x;
  a.y = y;
  const int64_t iterations = 37;
  d.fn(a, iterations);
  const bool fused = isa_info(d.isa).fma;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < iterations; ++k) {
      if (fused) ref[i] = std::fma(ref[i], x, y);
      else {
        volatile T product = ref[i] * x;  // keep the reference unfused too
        ref[i] = product + y;
      }
    }
    EXPECT_EQ(acc.data()[i], ref[i]) << isa_info(d.isa).name << " lane " << i;
  }
  EXPECT_EQ(flops(d, a, iterations), Count{iterations} * d.chains * lanes(d.isa, d.dtype) * 2);
}

void check_read(const Desc& d) {
  const int64_t n = 4 * block_elements(d);
  Aligned<double> in(n);
  double expected = 0;
  for (int64_t i = 0; i < n; ++i) expected += (in.data()[i] = static_cast<double>(i % 13));
  Args a;
  a.in1 = in.data();
  a.n = n;
  EXPECT_EQ(d.fn(a, 3), 3 * expected) << isa_info(d.isa).name;  // small integers: exact in any order
  EXPECT_EQ(bytes(d, a, 3), Count{3} * n * 8);
}

void check_triad(const Desc& d) {
  const int64_t n = 3 * block_elements(d);
  Aligned<double> out(n), b(n), c(n);
  for (int64_t i = 0; i < n; ++i) {
    b.data()[i] = static_cast<double>(i);
    c.data()[i] = static_cast<double>(i % 5);
  }
  Args a;
  a.out = out.data();
  a.in1 = b.data();
  a.in2 = c.data();
  a.n = n;
  a.x = 3;
  d.fn(a, 2);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(out.data()[i], i + 3.0 * (i % 5)) << isa_info(d.isa).name;
  EXPECT_EQ(bytes(d, a, 2), Count{2} * n * 24);
  EXPECT_EQ(flops(d, a, 2), Count{2} * n * 2);
}

TEST(MachineKernels, SupportedKernelsMatchScalarReference) {
  int ran = 0;
  for (const Desc& d : table()) {
    if (!isa_supported(d.isa)) continue;
    ++ran;
    switch (d.kind) {
      case Kind::Peak:
        if (d.dtype == DType::F32) check_peak<float>(d);
        else check_peak<double>(d);
        break;
      case Kind::Read: check_read(d); break;
      case Kind::Triad: check_triad(d); break;
    }
  }
  EXPECT_GE(ran, 4);  // scalar kernels always run
}

TEST(MachineKernels, ClockProbeCountsItsAdds) {
  EXPECT_EQ(clock_probe(10), 10 * kClockProbeAdds);
}

}  // namespace
}  // namespace ridge::measure::kernels
