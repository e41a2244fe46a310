// The kernel table: every micro-kernel with the FLOPs and bytes one unit of its work performs.
#include "measure/machine/kernels.hpp"

namespace ridge::measure::kernels {
namespace {

/// Peak: one unit steps every chain once; each step is a*b+c on every lane (2 FLOPs), no memory traffic.
Desc peak(Isa isa, DType t, Fn fn) {
  const int chains = peak_chains(isa);
  return {Kind::Peak, isa, t, chains, int64_t{chains} * lanes(isa, t) * 2, 0, fn};
}
/// Read: one unit loads one element and adds it (1 FLOP).
Desc read(Isa isa, DType t, Fn fn) { return {Kind::Read, isa, t, stream_chains(isa), 1, dtype_bytes(t), fn}; }
/// Triad: one unit loads two elements, stores one (3 elements moved) and does one multiply-add (2 FLOPs).
/// The store is an ordinary one (not non-temporal), and its write-allocate read is not counted: the STREAM and
/// likwid-bench stream_* convention, and the one ridge's costs use for a layer's bytes.
Desc triad(Isa isa, DType t, Fn fn) { return {Kind::Triad, isa, t, triad_unroll(isa), 2, 3 * dtype_bytes(t), fn}; }

}  // namespace

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::Peak: return "peak";
    case Kind::Read: return "read";
    case Kind::Triad: return "triad";
  }
  return "?";
}

const std::vector<Desc>& table() {
  static const std::vector<Desc> kTable = {
      peak(Isa::Scalar, DType::F32, peak_scalar_f32),   peak(Isa::Scalar, DType::F64, peak_scalar_f64),
      read(Isa::Scalar, DType::F64, read_scalar_f64),   triad(Isa::Scalar, DType::F64, triad_scalar_f64),
      peak(Isa::Sse, DType::F32, peak_sse_f32),         peak(Isa::Sse, DType::F64, peak_sse_f64),
      read(Isa::Sse, DType::F64, read_sse_f64),         triad(Isa::Sse, DType::F64, triad_sse_f64),
      peak(Isa::Avx2, DType::F32, peak_avx2_f32),       peak(Isa::Avx2, DType::F64, peak_avx2_f64),
      read(Isa::Avx2, DType::F64, read_avx2_f64),       triad(Isa::Avx2, DType::F64, triad_avx2_f64),
      peak(Isa::Avx512, DType::F32, peak_avx512_f32),   peak(Isa::Avx512, DType::F64, peak_avx512_f64),
      read(Isa::Avx512, DType::F64, read_avx512_f64),   triad(Isa::Avx512, DType::F64, triad_avx512_f64),
  };
  return kTable;
}

const Desc* find(Kind kind, Isa isa, DType dtype) {
  for (const Desc& d : table())
    if (d.kind == kind && d.isa == isa && d.dtype == dtype) return &d;
  return nullptr;
}

int64_t block_elements(const Desc& d) { return int64_t{lanes(d.isa, d.dtype)} * d.chains; }

int64_t units_per_iteration(const Desc& d, const Args& args) { return d.kind == Kind::Peak ? 1 : args.n; }

Count flops(const Desc& d, const Args& args, int64_t iterations) {
  return checked_mul(checked_mul(units_per_iteration(d, args), iterations, "kernel FLOPs"), d.flops_per_unit,
                     "kernel FLOPs");
}

Count bytes(const Desc& d, const Args& args, int64_t iterations) {
  return checked_mul(checked_mul(units_per_iteration(d, args), iterations, "kernel bytes"), d.bytes_per_unit,
                     "kernel bytes");
}

}  // namespace ridge::measure::kernels
