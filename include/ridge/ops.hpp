// Op kinds and families, derived from the single list in ops.def.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace ridge {

/// How an op is costed. Every op kind belongs to exactly one family.
enum class OpFamily : uint8_t {
  Conv,             ///< direct convolution: MACs = E(out) * Cin/g * prod(k)
  ConvTranspose,    ///< transposed convolution: MACs = E(in) * Cout/g * prod(k)
  Linear,           ///< Gemm / nn.Linear: MACs = rows * in * out
  MatMul,           ///< batched matrix product of two activations (or activation x weight)
  Einsum,           ///< einsum: MACs = product of all distinct index extents
  BatchNorm,        ///< per-channel scale and shift
  LayerNorm,        ///< per-row mean/variance normalisation
  Unary,            ///< elementwise f(x); per-element FLOPs in rules.cpp
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
  Unknown,          ///< an op ridge cannot cost: always reported, never silently zero
};

enum class OpKind : uint16_t {
#define RIDGE_OP(e, name, family) e,
#include "ridge/ops.def"
#undef RIDGE_OP
};

/// Number of op kinds in ops.def (checked at compile time against the derived tables).
inline constexpr int kOpKindCount = 0
#define RIDGE_OP(e, name, family) +1
#include "ridge/ops.def"
#undef RIDGE_OP
    ;

/// Display name ("Conv", "Gemm", ...).
std::string_view op_name(OpKind k);
/// Costing family of an op kind.
OpFamily op_family(OpKind k);
/// Name of a family ("Conv", "Unary", ...).
std::string_view family_name(OpFamily f);
/// Looks an op kind up by its display / ONNX name; nullopt if ridge does not know it.
std::optional<OpKind> parse_op(std::string_view name);

}  // namespace ridge
