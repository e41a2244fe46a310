// Shape facts shared by the op rules (src/ops) and the other tools' conventions (src/costs).
#pragma once
#include <optional>

#include "ridge/graph.hpp"

namespace ridge::ops {

/// Element count of a value, or nullopt when its shape is unknown or it is omitted.
std::optional<Count> elements(const Graph& g, int value);
/// Element count of the first output / first data input (0 when unknown).
Count out_elems(const Graph& g, const Node& n);
Count in_elems(const Graph& g, const Node& n);

/// Convolution geometry: MACs = out_elems * per_output_macs (direct) or in_elems * per_input_macs (transposed).
struct ConvGeom {
  Count macs = 0;             ///< multiply-accumulates over every kernel tap (padding included)
  Count out_elems = 0;        ///< N * Cout * prod(out spatial)
  Count in_elems = 0;
  Count kernel_taps = 0;      ///< prod(kernel)
  Count per_output = 0;       ///< Cin/g * prod(k)   (Kc in counting-conventions.md)
  Count effective_macs = 0;   ///< direct conv: MACs whose tap lands on the input, not on padding (benchdnn's count)
  bool bias = false;
  int64_t batch = 0, cin = 0, cout = 0, groups = 1;
};
ConvGeom conv_geometry(const Graph& g, const Node& n);
/// Along one axis: the number of (output position, kernel tap) pairs whose tap lands inside the input, for a
/// sliding window with `pad_begin` zeros before the input (closed form per output, no loop over taps).
Count valid_taps(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad_begin, int64_t dilation);

/// Linear / Gemm geometry: rows x in -> rows x out.
struct LinearGeom {
  Count rows = 0, in = 0, out = 0;
  Count macs = 0;
  bool bias = false;
  int64_t first_dim = 0;  ///< output.shape[0] (torchinfo's multiplier)
};
LinearGeom linear_geometry(const Graph& g, const Node& n);

/// MatMul geometry: batch x M x K @ K x N.
struct MatMulGeom {
  Count batch = 1, m = 0, k = 0, n = 0, macs = 0;
};
MatMulGeom matmul_geometry(const Graph& g, const Node& n);

/// Kernel taps of a pooling node (prod(kernel_shape)); adaptive pools: total window taps over all outputs.
Count pool_taps(const Graph& g, const Node& n);
/// AdaptiveAvgPool: sum over output positions of the window size (exact, PyTorch's start/end rule), per N*C.
Count adaptive_window_sum(int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w);

/// An Einsum equation split into its operands' terms and its output term, spaces removed. Without "->", the
/// output is implicit: "..." when any term has one, then the letters that appear once, in alphabetical order.
/// Terms keep their "..." (what it stands for depends on the operands' ranks).
struct EinsumEquation {
  std::vector<std::string> terms;  ///< one per operand
  std::string output;
};
EinsumEquation parse_einsum(const std::string& equation);

/// Einsum MACs: product of the extents of every distinct index; nullopt if the equation cannot be parsed.
std::optional<Count> einsum_macs(const Graph& g, const Node& n);

}  // namespace ridge::ops
