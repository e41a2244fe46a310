// Op kinds and everything recorded about them, derived from the single list in ops.def (one record per op).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ridge {

/// How an op is costed. Every op kind belongs to exactly one family.
enum class OpFamily : uint8_t {
  Conv,             ///< direct convolution: MACs = E(out) * Cin/g * prod(k)
  ConvTranspose,    ///< transposed convolution: MACs = E(in) * Cout/g * prod(k)
  Linear,           ///< Gemm / nn.Linear: MACs = rows * in * out
  MatMul,           ///< batched matrix product of two activations (or activation x weight)
  Einsum,           ///< einsum: MACs = product of all distinct index extents
  Recurrent,        ///< LSTM, GRU, RNN: gate products and gate math per step (recurrent.cpp)
  Attention,        ///< fused attention: Q K^T and P V products, scale, mask, softmax (attention.cpp)
  BatchNorm,        ///< per-channel scale and shift
  LayerNorm,        ///< per-row normalisation (LayerNorm, RMSNorm)
  Unary,            ///< elementwise f(x); per-element FLOPs in the op's record
  Binary,           ///< elementwise f(a, b) with broadcasting; 1 FLOP per output element
  Select,           ///< Where: selection, no arithmetic
  MaxPool,
  AvgPool,
  AdaptiveAvgPool,  ///< torch AdaptiveAvgPool2d with an output size
  GlobalAvgPool,
  Softmax,          ///< Softmax and LogSoftmax
  Reduce,           ///< ReduceMean/Sum/Max, ArgMax
  Gather,           ///< index lookup (embeddings)
  View,             ///< metadata-only: no FLOPs, no bytes moved
  Dropout,          ///< identity at inference; a mask in training
  Move,             ///< data movement: no FLOPs, bytes moved
  Resize,           ///< interpolation
  Source,           ///< produces shapes/constants: no cost
  IntegerProduct,   ///< convolution or matrix product on integer data (QLinearConv, MatMulInteger, ...)
  Sample,           ///< samples an input at computed positions (GridSample, RoiAlign, MaxRoiPool)
  Unknown,          ///< an op ridge cannot cost: always reported, never silently zero
};

/// What an input position of an op holds (one letter per position in ops.def).
enum class InputRole : uint8_t {
  Activation,  ///< 'x': data; an initializer here is a constant or a buffer
  Either,      ///< 'a': data or weight; an initializer here is a trainable parameter
  Weight,      ///< 'w': a trainable parameter (weight, bias, scale)
  Statistic,   ///< 's': a non-trainable buffer (running mean / variance)
  Integer,     ///< 'i': integer or shape data (axes, pads, target shapes, indices)
};

/// What the backward pass keeps of a node (activations only; weights are counted as parameters).
enum class Saves : uint8_t {
  None,          ///< nothing (the gradient does not depend on the values)
  Input,         ///< the first input
  Output,        ///< the first output (its derivative is a function of the output)
  Inputs,        ///< every activation input (products)
  ChannelStats,  ///< the input plus mean and inverse std per channel (fp32)
  RowStats,      ///< the input plus mean and inverse std per normalised row (fp32)
  RowRms,        ///< the input plus the inverse RMS per normalised row (fp32)
  InputArgmax,   ///< the input plus int64 indices of the maxima
  Mask,          ///< a bool mask of the output's size
  Index,         ///< the indices (input 1)
  Condition,     ///< the condition (input 0)
};

enum class OpKind : uint16_t {
#define RIDGE_OP(e, name, family, rule, roles, saves, module, fwd, bwd_a, bwd_b) e,
#include "ridge/ops.def"
#undef RIDGE_OP
};

/// Number of op kinds in ops.def (checked at compile time against the derived tables).
inline constexpr int kOpKindCount = 0
#define RIDGE_OP(e, name, family, rule, roles, saves, module, fwd, bwd_a, bwd_b) +1
#include "ridge/ops.def"
#undef RIDGE_OP
    ;

/// The record of one op kind, as written in ops.def.
struct OpRecord {
  OpKind kind;
  std::string_view name;      ///< "Conv", "Gemm", ...
  OpFamily family;
  std::string_view roles;     ///< role letters per input position ("xwb", "x*")
  Saves saves;
  std::string_view module;    ///< torch.nn class pattern ("Conv#d", "?Linear", "")
  int fwd_flops_per_element;  ///< elementwise ops: forward FLOPs per output element
  int bwd_flops_a;            ///< elementwise ops: grad FLOPs per element for input 0 (-1: no gradient)
  int bwd_flops_b;            ///< binary ops: the same for input 1
};

/// The record of an op kind.
const OpRecord& op_record(OpKind k);
/// Display name ("Conv", "Gemm", ...).
std::string_view op_name(OpKind k);
/// Costing family of an op kind.
OpFamily op_family(OpKind k);
/// Name of a family ("Conv", "Unary", ...).
std::string_view family_name(OpFamily f);
/// Looks an op kind up by its display / ONNX name; nullopt if ridge does not know it.
std::optional<OpKind> parse_op(std::string_view name);
/// Role of input position `index` of op `k` (the last letter repeats after a '*'; Activation past the end).
InputRole input_role(OpKind k, int index);
/// The torch.nn class a user sees for op `k` over `spatial_dims` spatial dims, given whether one of its inputs
/// is a parameter; "" when the op is functional only.
std::string torch_module(OpKind k, int spatial_dims, bool has_param_input);
/// Lower-case name used by layer descriptors ("conv", "relu", "layernormalization").
std::string descriptor_name(OpKind k);

}  // namespace ridge
