#include "ridge/ops.hpp"

#include <array>

namespace ridge {
namespace {

constexpr std::array<std::string_view, kOpKindCount> kNames = {
#define RIDGE_OP(e, name, family) name,
#include "ridge/ops.def"
#undef RIDGE_OP
};

constexpr std::array<OpFamily, kOpKindCount> kFamilies = {
#define RIDGE_OP(e, name, family) OpFamily::family,
#include "ridge/ops.def"
#undef RIDGE_OP
};

static_assert(kNames.size() == static_cast<size_t>(OpKind::Unknown) + 1, "op table out of sync with OpKind");
static_assert(kNames.back() == "Unknown", "Unknown must be the last op in ops.def");

}  // namespace

std::string_view op_name(OpKind k) { return kNames.at(static_cast<size_t>(k)); }
OpFamily op_family(OpKind k) { return kFamilies.at(static_cast<size_t>(k)); }

std::string_view family_name(OpFamily f) {
  switch (f) {
    case OpFamily::Conv: return "Conv";
    case OpFamily::ConvTranspose: return "ConvTranspose";
    case OpFamily::Linear: return "Linear";
    case OpFamily::MatMul: return "MatMul";
    case OpFamily::Einsum: return "Einsum";
    case OpFamily::BatchNorm: return "BatchNorm";
    case OpFamily::LayerNorm: return "LayerNorm";
    case OpFamily::Unary: return "Unary";
    case OpFamily::Binary: return "Binary";
    case OpFamily::Select: return "Select";
    case OpFamily::MaxPool: return "MaxPool";
    case OpFamily::AvgPool: return "AvgPool";
    case OpFamily::AdaptiveAvgPool: return "AdaptiveAvgPool";
    case OpFamily::GlobalAvgPool: return "GlobalAvgPool";
    case OpFamily::Softmax: return "Softmax";
    case OpFamily::Reduce: return "Reduce";
    case OpFamily::Gather: return "Gather";
    case OpFamily::View: return "View";
    case OpFamily::Dropout: return "Dropout";
    case OpFamily::Move: return "Move";
    case OpFamily::Resize: return "Resize";
    case OpFamily::Source: return "Source";
    case OpFamily::Unknown: return "Unknown";
  }
  return "Unknown";
}

std::optional<OpKind> parse_op(std::string_view name) {
  for (size_t i = 0; i + 1 < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<OpKind>(i);
  return std::nullopt;
}

}  // namespace ridge
