// Micro-kernels of the empirical roofline and the table that declares, beside each kernel, how many FLOPs and
// bytes one unit of its work performs. Each ISA's kernels live in their own file compiled for that ISA
// (kernels_<isa>.cpp); only kernels whose ISA the CPU supports may be called.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "ridge/count.hpp"
#include "ridge/dtype.hpp"
#include "ridge/machine.hpp"

namespace ridge::measure::kernels {

/// What a kernel exercises.
enum class Kind : uint8_t {
  Peak,   ///< `chains` independent accumulators: acc = acc * x + y (FMA, or mul + add without FMA); no memory
  Read,   ///< sum of in1[0..n) (loads + adds)
  Triad,  ///< out[i] = in1[i] + x * in2[i] (two loads, one store, one FMA per element)
};
/// "peak", "read", "triad".
std::string_view kind_name(Kind k);

/// Operands of one call. Elements have the kernel's dtype.
struct Args {
  void* out = nullptr;        ///< Peak: chains * lanes accumulators (read and written); Triad: output array
  const void* in1 = nullptr;  ///< Read, Triad: first input array (aligned to 64 bytes)
  const void* in2 = nullptr;  ///< Triad: second input array (aligned to 64 bytes)
  int64_t n = 0;              ///< Read, Triad: elements per array, a multiple of block_elements
  double x = 0, y = 0;        ///< Peak: multiplier and addend; Triad: x is the scalar
};

/// Runs `iterations` repetitions (Peak: steps of every chain; Read/Triad: passes over the arrays) and returns a
/// checksum (Read: the sum over every pass; others 0) so the work cannot be optimised away.
using Fn = double (*)(const Args& args, int64_t iterations);

/// One kernel and the work it declares. A unit is one step of all chains (Peak) or one element (Read, Triad).
struct Desc {
  Kind kind;
  Isa isa;
  DType dtype;                 ///< F32 or F64
  int chains;                  ///< independent accumulators (Peak, Read) or unroll factor (Triad), in vectors
  int64_t flops_per_unit;      ///< FLOPs one unit performs
  int64_t bytes_per_unit;      ///< bytes one unit moves between core and memory (loads + stores)
  Fn fn;
};

/// Every kernel ridge has, for every ISA (callers check isa_supported before calling).
const std::vector<Desc>& table();
/// The kernel of this kind, ISA and dtype; nullptr when there is none.
const Desc* find(Kind kind, Isa isa, DType dtype);

/// Elements of one vector block (n of Read/Triad must be a multiple): lanes x chains.
int64_t block_elements(const Desc& d);
/// Units of work in one iteration: 1 for Peak, args.n for Read and Triad.
int64_t units_per_iteration(const Desc& d, const Args& args);
/// FLOPs of `iterations` iterations, exact.
Count flops(const Desc& d, const Args& args, int64_t iterations);
/// Bytes moved by `iterations` iterations, exact.
Count bytes(const Desc& d, const Args& args, int64_t iterations);

/// Independent accumulators of the Peak kernels per ISA: enough to cover FMA latency x FMA pipes (4 x 2) with
/// margin, within the register file (16 registers below AVX-512, 32 with it).
constexpr int peak_chains(Isa isa) { return isa == Isa::Avx512 ? 16 : isa == Isa::Scalar ? 10 : 12; }
/// Independent add chains (vectors per loop step) of the Read kernels.
constexpr int stream_chains(Isa isa) { return isa == Isa::Scalar ? 4 : 8; }
/// Vectors per loop step of the Triad kernels, every ISA: the loop shape of likwid-bench's stream kernels
/// (4 loads of b, 4 of c, 4 stores per step), so that the L1 point, where per-step and per-pass loop overhead
/// is a visible part of the time, measures the same loop likwid-bench does (an 8-vector step is ~10% faster).
constexpr int triad_unroll(Isa) { return 4; }

/// Bytes from the start of one Triad/Read array to the next inside a thread's buffer: the array rounded up to
/// whole 4 KiB pages, so that b[i], c[i] and out[i] share their address bits 11:0. A load never then matches
/// the low 12 bits of a store issued a few steps earlier (4K aliasing: the load waits for that store to
/// resolve), which any other offset below a page causes for some unroll (256 B cost the AVX-512 L1 triad 11%).
constexpr int64_t stream_array_stride_bytes(int64_t array_bytes) { return (array_bytes + 4095) / 4096 * 4096; }

/// Cycles-per-second probe: a chain of `adds_per_iteration` dependent integer adds per iteration (one cycle each).
int64_t clock_probe(int64_t iterations);
/// Dependent adds per clock_probe iteration.
inline constexpr int kClockProbeAdds = 64;

// Per-ISA entry points, defined in kernels_<isa>.cpp (compiled with that ISA enabled).
double peak_scalar_f32(const Args&, int64_t);
double peak_scalar_f64(const Args&, int64_t);
double read_scalar_f64(const Args&, int64_t);
double triad_scalar_f64(const Args&, int64_t);
double peak_sse_f32(const Args&, int64_t);
double peak_sse_f64(const Args&, int64_t);
double read_sse_f64(const Args&, int64_t);
double triad_sse_f64(const Args&, int64_t);
double peak_avx2_f32(const Args&, int64_t);
double peak_avx2_f64(const Args&, int64_t);
double read_avx2_f64(const Args&, int64_t);
double triad_avx2_f64(const Args&, int64_t);
double peak_avx512_f32(const Args&, int64_t);
double peak_avx512_f64(const Args&, int64_t);
double read_avx512_f64(const Args&, int64_t);
double triad_avx512_f64(const Args&, int64_t);

}  // namespace ridge::measure::kernels
