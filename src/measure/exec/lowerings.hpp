// Lowerings: one function per op group, turning a node into executor steps (oneDNN primitives or reference
// kernels). Internal to src/measure/exec; the op -> lowering table is in lower.cpp.
#pragma once
#include <optional>

#include "program.hpp"

namespace ridge::exec {

/// Turns node `ni` of the program's graph into steps; throws NoKernel when it cannot.
using Lowering = void (*)(Program& p, int ni);

// oneDNN primitives (lower_dnnl.cpp, lower_dnnl_nn.cpp)
void lower_conv(Program& p, int ni);
void lower_conv_transpose(Program& p, int ni);
void lower_gemm(Program& p, int ni);
void lower_matmul(Program& p, int ni);
void lower_batchnorm(Program& p, int ni);
void lower_layernorm(Program& p, int ni);
void lower_eltwise(Program& p, int ni);
void lower_binary(Program& p, int ni);
void lower_pool(Program& p, int ni);
void lower_softmax(Program& p, int ni);
void lower_lrn(Program& p, int ni);
void lower_concat(Program& p, int ni);
void lower_reduce(Program& p, int ni);
void lower_transpose(Program& p, int ni);
void lower_slice(Program& p, int ni);
void lower_split(Program& p, int ni);
// recurrent cells (lower_dnnl_rnn.cpp)
void lower_rnn(Program& p, int ni);  ///< RNN, GRU, LSTM: forward, and backward when training

// views and reference kernels (lower_ref.cpp)
void lower_view(Program& p, int ni);
void lower_gather(Program& p, int ni);
void lower_reference_unary(Program& p, int ni);  ///< Erf, HardSigmoid, Not
void lower_reference_elementwise(Program& p, int ni);  ///< Pow/Equal/Where/Expand with broadcasting
void lower_argmax(Program& p, int ni);
/// Einsum without an ellipsis (diagonals and implicit outputs included): one loop over every index of the
/// equation; backward to every operand that needs it.
void lower_einsum(Program& p, int ni);
void lower_rms_norm(Program& p, int ni);  ///< RMSNormalization (opset 23), forward and backward
/// Attention (opset 23): 3-D or 4-D heads, grouped-query K/V, past key/value (present outputs), float or bool
/// mask (broadcast, shorter than the keys: padded as masked), is_causal (offset by the past), scale, softcap.
/// Backward to Q, K, V, a float mask and the past (the present outputs' gradients included); qk_matmul_output and
/// nonpad_kv_seqlen are refused.
void lower_attention(Program& p, int ni);
void lower_cast(Program& p, int ni);
/// True for a Dropout that masks in this program: when training, or in ONNX's training mode (attribute, or a
/// training_mode input that is true or not known), unless its ratio is 0.
bool dropout_masks(Program& p, const Node& n);
/// Dropout that masks: a new random mask each pass (seeded), kept elements scaled by 1 / (1 - ratio), the mask
/// output when asked for; backward dX = dY * mask / (1 - ratio). Other Dropouts are views (lower_view).
void lower_dropout(Program& p, int ni);

// reference data movement (lower_ref_move.cpp)
void lower_pad(Program& p, int ni);  ///< constant / reflect / edge / wrap
void lower_resize(Program& p, int ni);  ///< nearest and linear
void lower_constant_of_shape(Program& p, int ni);  ///< the fill, once per run (a number as the value attribute)
/// ScatterND (reduction none/add/mul/max/min), indices read at run time and checked; backward for each reduction.
void lower_scatter_nd(Program& p, int ni);

// ---- helpers shared by the lowerings -------------------------------------------------------------------

/// Integer arithmetic the executor runs in fp32 (Add, Sub, Mul: index arithmetic, MViT-v2's relative positions),
/// exact while every value stays within 2^24; lower_reference_elementwise refuses a result past that at run time.
bool integer_arithmetic(OpKind op);
/// True for ops the executor runs as views of their input's buffer (Reshape, Flatten, ...).
bool is_view_op(OpKind op);
inline const Node& node_of(Program& p, int ni) { return p.graph().nodes.at(ni); }
inline const Shape& shape_of(Program& p, int vid) { return p.graph().value(vid).shape; }
/// Input `i` of a node, or -1 when omitted.
inline int input_at(const Node& n, size_t i) { return i < n.inputs.size() ? n.inputs[i] : -1; }
/// A descriptor letting oneDNN choose the layout.
inline memory::desc any_desc(const Dims& d) {
  return memory::desc(d, memory::data_type::f32, memory::format_tag::any);
}
/// Axis in [0, rank) from a possibly negative ONNX axis; throws NoKernel when out of range.
int64_t normalize_axis(int64_t axis, int rank, const Node& n);
/// Integer payload of input `i` (shape-arithmetic constants), if the graph knows it.
std::optional<std::vector<int64_t>> int_input(Program& p, const Node& n, size_t i);
/// A scalar float from input `i` when its value is known (given payload or integer data), else nullopt.
std::optional<float> scalar_input(Program& p, const Node& n, size_t i);
/// Float payload of input `i` (e.g. Resize scales) when its value is known, else nullopt.
std::optional<std::vector<float>> float_input(Program& p, const Node& n, size_t i);
/// Index `f` (an integer carried as a float, read when a step runs) into an axis of `extent`, negatives counted from
/// the end. Throws ridge::Error "<what> F is not an integer in range" for NaN or beyond int64 (never converted:
/// that is undefined) and "<what> I out of range [0, extent)" otherwise, each followed by " on axis N" when
/// `axis` >= 0. `what` names the node and the op: "node 'g': Gather index".
int64_t checked_index(float f, int64_t extent, const std::string& what, int64_t axis = -1);
/// Shape `s` left-padded with 1s to `rank` dims.
Dims padded_dims(const Shape& s, int rank);
/// Spatial window of a conv or pool: kernel, strides, oneDNN dilation (ONNX dilation - 1) and paddings chosen
/// so that oneDNN's output size equals the graph's (ceil_mode and auto_pad included).
struct Window {
  Dims kernel, strides, dilation, pad_l, pad_r;
};
Window window_of(const Node& n, const Shape& x, const Shape& y, const Dims& kernel);
/// Source index along each axis for every output coordinate: maps[a][j] is the input index that output index j
/// of axis a reads, -1 where it reads the fill value instead (Pad's constant).
using AxisMaps = std::vector<std::vector<int64_t>>;
/// Reference step Y = X gathered through `maps` (Pad, strided Slice, nearest Resize); its backward scatter-adds
/// dY into dX. Where a map holds -1 it writes `fill`, or the value of `fill_from` read at run time when >= 0.
/// Defined in lower_ref_move.cpp.
void lower_index_copy(Program& p, int ni, AxisMaps maps, float fill, int fill_from = -1);
/// Memory over the same buffer as `m` with descriptor `d`.
memory alias(Program& p, const memory& m, const memory::desc& d);
/// Sums `diff` down to `reduced` (its broadcast axes summed; by default value `vid`'s dims left-padded to diff's
/// rank) and adds it into vid's gradient (same element count as `reduced`).
std::function<void()> reduce_into_grad(Program& p, int vid, const memory& diff,
                                       std::optional<Dims> reduced = std::nullopt);
/// Runs closures in order (a step's backward made of parts).
inline std::function<void()> sequence(std::vector<std::function<void()>> parts) {
  return [parts = std::move(parts)] {
    for (const auto& f : parts) f();
  };
}
/// oneDNN implementation name of a primitive descriptor.
template <typename PD>
std::string impl_name(const PD& pd) {
  return pd.impl_info_str();
}
/// Channels per block of the blocked conv layouts this CPU's optimised kernels take: 16 with AVX-512 (nChw16c),
/// else 8 (nChw8c: AVX2's and SSE4.1's kernels; nChw16c there runs only in the reference kernel).
int64_t conv_channel_block();

}  // namespace ridge::exec
