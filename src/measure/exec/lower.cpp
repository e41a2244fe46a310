// The op -> lowering table and helpers shared by the lowerings.
#include <array>
#include <cmath>

#include "lowerings.hpp"
#include "ridge/error.hpp"

namespace ridge::exec {

namespace {

/// Ops the executor can run. Ops missing here are reported "not executed: no kernel".
struct LoweringRow {
  OpKind op;
  Lowering lower;
};
constexpr LoweringRow kLowerings[] = {
    {OpKind::Conv, lower_conv},
    {OpKind::ConvTranspose, lower_conv_transpose},
    {OpKind::Gemm, lower_gemm},
    {OpKind::MatMul, lower_matmul},
    {OpKind::BatchNormalization, lower_batchnorm},
    {OpKind::LayerNormalization, lower_layernorm},
    {OpKind::Relu, lower_eltwise},
    {OpKind::Clip, lower_eltwise},
    {OpKind::Sigmoid, lower_eltwise},
    {OpKind::Tanh, lower_eltwise},
    {OpKind::Gelu, lower_eltwise},
    {OpKind::LeakyRelu, lower_eltwise},
    {OpKind::HardSigmoid, lower_reference_unary},
    {OpKind::HardSwish, lower_eltwise},
    {OpKind::Sqrt, lower_eltwise},
    {OpKind::Exp, lower_eltwise},
    {OpKind::Log, lower_eltwise},
    {OpKind::Neg, lower_eltwise},
    {OpKind::Reciprocal, lower_eltwise},
    {OpKind::Silu, lower_eltwise},
    {OpKind::Elu, lower_eltwise},
    {OpKind::Abs, lower_eltwise},
    {OpKind::Mish, lower_eltwise},
    {OpKind::Softplus, lower_eltwise},
    {OpKind::RMSNormalization, lower_rms_norm},
    {OpKind::Attention, lower_attention},
    {OpKind::RNN, lower_rnn},
    {OpKind::GRU, lower_rnn},
    {OpKind::LSTM, lower_rnn},
    {OpKind::Erf, lower_reference_unary},
    {OpKind::Not, lower_reference_unary},
    {OpKind::Add, lower_binary},
    {OpKind::Sub, lower_binary},
    {OpKind::Mul, lower_binary},
    {OpKind::Div, lower_binary},
    {OpKind::Pow, lower_reference_elementwise},
    {OpKind::Equal, lower_reference_elementwise},
    {OpKind::Where, lower_reference_elementwise},
    {OpKind::Expand, lower_reference_elementwise},
    {OpKind::MaxPool, lower_pool},
    {OpKind::AveragePool, lower_pool},
    {OpKind::AdaptiveAvgPool, lower_pool},
    {OpKind::GlobalAveragePool, lower_pool},
    {OpKind::Softmax, lower_softmax},
    {OpKind::LRN, lower_lrn},
    {OpKind::LogSoftmax, lower_softmax},
    {OpKind::ReduceMean, lower_reduce},
    {OpKind::ReduceSum, lower_reduce},
    {OpKind::ReduceMax, lower_reduce},
    {OpKind::ArgMax, lower_argmax},
    {OpKind::Einsum, lower_einsum},
    {OpKind::Gather, lower_gather},
    {OpKind::Reshape, lower_view},
    {OpKind::Flatten, lower_view},
    {OpKind::Squeeze, lower_view},
    {OpKind::Unsqueeze, lower_view},
    {OpKind::Identity, lower_view},
    {OpKind::Dropout, lower_view},
    {OpKind::Cast, lower_cast},
    {OpKind::Transpose, lower_transpose},
    {OpKind::Concat, lower_concat},
    {OpKind::Slice, lower_slice},
    {OpKind::Split, lower_split},
    {OpKind::Pad, lower_pad},
    {OpKind::Resize, lower_resize},
    {OpKind::ConstantOfShape, lower_constant_of_shape},
    {OpKind::ScatterND, lower_scatter_nd},
};

Lowering find_lowering(OpKind op) {
  for (const auto& row : kLowerings)
    if (row.op == op) return row.lower;
  return nullptr;
}

/// Ops that only fill, move, index or compare values: integer tensors pass through them exactly (as floats, up
/// to 2^24).
bool exact_for_integers(OpKind op) {
  return op == OpKind::Cast || op == OpKind::ArgMax || op == OpKind::Equal || op == OpKind::Not ||
         op == OpKind::Gather || op == OpKind::Pad || op == OpKind::Slice || op == OpKind::Concat ||
         op == OpKind::Expand || op == OpKind::Where || op == OpKind::ConstantOfShape || op == OpKind::ScatterND ||
         op == OpKind::Transpose || op == OpKind::Split || find_lowering(op) == lower_view;
}

}  // namespace

bool integer_arithmetic(OpKind op) { return op == OpKind::Add || op == OpKind::Sub || op == OpKind::Mul; }

bool is_view_op(OpKind op) { return find_lowering(op) == lower_view; }

void lower_node(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const Epilogue* e = p.epilogue(ni);
  Lowering lower = find_lowering(e && e->composite != OpKind::Unknown ? e->composite : n.op);
  if (!lower)
    throw NoKernel{"no kernel for op " + (n.op == OpKind::Unknown ? n.op_type : std::string(op_name(n.op)))};
  bool integer = false;
  for (int out : n.outputs) {
    if (out < 0) continue;
    const Value& v = p.graph().value(out);
    if (is_float(v.dtype) || v.dtype == DType::Unknown || v.has_int_data || exact_for_integers(n.op)) continue;
    if (!integer_arithmetic(n.op))
      throw NoKernel{"integer-valued " + std::string(op_name(n.op)) + " is not executed (fp32 executor)"};
    integer = true;
  }
  if (integer) lower_reference_elementwise(p, ni);  // checks that every result is an integer fp32 holds exactly
  else lower(p, ni);
}

int64_t normalize_axis(int64_t axis, int rank, const Node& n) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max(rank, 1))
    throw NoKernel{"axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank) + " in " + n.name};
  return a;
}

std::optional<std::vector<int64_t>> int_input(Program& p, const Node& n, size_t i) {
  int vid = input_at(n, i);
  if (vid < 0) return std::nullopt;
  const Value& v = p.graph().value(vid);
  if (v.has_int_data) return v.int_data;
  if (const HostTensor* t = p.payload(vid)) {
    std::vector<int64_t> out;
    for (float f : t->data) out.push_back(static_cast<int64_t>(f));
    return out;
  }
  return std::nullopt;
}

std::optional<float> scalar_input(Program& p, const Node& n, size_t i) {
  int vid = input_at(n, i);
  if (vid < 0) return std::nullopt;
  const Value& v = p.graph().value(vid);
  if (v.has_int_data && v.int_data.size() == 1) return static_cast<float>(v.int_data[0]);
  if (const HostTensor* t = p.payload(vid))
    if (t->data.size() == 1) return t->data[0];
  return std::nullopt;
}

std::optional<std::vector<float>> float_input(Program& p, const Node& n, size_t i) {
  int vid = input_at(n, i);
  if (vid < 0) return std::nullopt;
  const Value& v = p.graph().value(vid);
  if (v.has_int_data) return std::vector<float>(v.int_data.begin(), v.int_data.end());
  if (const HostTensor* t = p.payload(vid)) return t->data;
  return std::nullopt;
}

int64_t checked_index(float f, int64_t extent, const std::string& what, int64_t axis) {
  auto fail = [&](const std::string& why) {
    throw Error(what + " " + why + (axis >= 0 ? " on axis " + std::to_string(axis) : std::string()));
  };
  if (!(std::abs(f) < 9.2e18f)) fail(std::to_string(f) + " is not an integer in range");
  int64_t i = static_cast<int64_t>(f);
  const int64_t given = i;
  if (i < 0) i += extent;
  if (i < 0 || i >= extent) fail(std::to_string(given) + " out of range [0, " + std::to_string(extent) + ")");
  return i;
}

Dims padded_dims(const Shape& s, int rank) {
  Dims d(rank, 1);
  for (int i = 0; i < s.rank(); ++i) d[rank - s.rank() + i] = s.dims[i];
  return d;
}

}  // namespace ridge::exec
