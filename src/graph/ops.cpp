#include "ridge/ops.hpp"

#include <array>
#include <cctype>

#include "ridge/text.hpp"

namespace ridge {
namespace {

constexpr std::array<OpRecord, kOpKindCount> kRecords = {{
#define RIDGE_OP(e, name, family, rule, roles, saves, module, fwd, bwd_a, bwd_b) \
  {OpKind::e, name, OpFamily::family, roles, Saves::saves, module, fwd, bwd_a, bwd_b},
#include "ridge/ops.def"
#undef RIDGE_OP
}};

constexpr bool records_in_enum_order() {
  for (size_t i = 0; i < kRecords.size(); ++i)
    if (static_cast<size_t>(kRecords[i].kind) != i) return false;
  return true;
}
static_assert(records_in_enum_order(), "op records out of sync with OpKind");
static_assert(kRecords.back().kind == OpKind::Unknown, "Unknown must be the last op in ops.def");

constexpr bool roles_are_valid() {
  for (const auto& r : kRecords)
    for (size_t i = 0; i < r.roles.size(); ++i) {
      const char c = r.roles[i];
      const bool letter = c == 'x' || c == 'a' || c == 'w' || c == 's' || c == 'i' || c == 'b';
      const bool star = c == '*' && i > 0 && i + 1 == r.roles.size();
      if (!letter && !star) return false;
    }
  return true;
}
static_assert(roles_are_valid(), "ops.def: role letters are x a w b s i, with an optional trailing *");

constexpr bool elementwise_ops_have_flops() {
  for (const auto& r : kRecords)
    if ((r.family == OpFamily::Unary || r.family == OpFamily::Binary) && r.fwd_flops_per_element <= 0) return false;
  return true;
}
static_assert(elementwise_ops_have_flops(), "ops.def: every elementwise op needs its FLOPs per element");

}  // namespace

const OpRecord& op_record(OpKind k) { return kRecords.at(static_cast<size_t>(k)); }
std::string_view op_name(OpKind k) { return op_record(k).name; }
OpFamily op_family(OpKind k) { return op_record(k).family; }

std::string_view family_name(OpFamily f) {
  switch (f) {
    case OpFamily::Conv: return "Conv";
    case OpFamily::ConvTranspose: return "ConvTranspose";
    case OpFamily::Linear: return "Linear";
    case OpFamily::MatMul: return "MatMul";
    case OpFamily::Attention: return "Attention";
    case OpFamily::Recurrent: return "Recurrent";
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
    case OpFamily::IntegerProduct: return "IntegerProduct";
    case OpFamily::Sample: return "Sample";
    case OpFamily::Unknown: return "Unknown";
  }
  return "Unknown";
}

std::optional<OpKind> parse_op(std::string_view name) {
  for (size_t i = 0; i + 1 < kRecords.size(); ++i)
    if (kRecords[i].name == name) return static_cast<OpKind>(i);
  return std::nullopt;
}

InputRole input_role(OpKind k, int index) {
  std::string_view roles = op_record(k).roles;
  const bool repeats = !roles.empty() && roles.back() == '*';
  if (repeats) roles.remove_suffix(1);
  if (roles.empty() || index < 0) return InputRole::Activation;
  if (static_cast<size_t>(index) >= roles.size()) {
    if (!repeats) return InputRole::Activation;
    index = static_cast<int>(roles.size()) - 1;
  }
  switch (roles[index]) {
    case 'a': return InputRole::Either;
    case 'w': case 'b': return InputRole::Weight;
    case 's': return InputRole::Statistic;
    case 'i': return InputRole::Integer;
    default: return InputRole::Activation;
  }
}

std::string torch_module(OpKind k, int spatial_dims, bool has_param_input) {
  std::string_view m = op_record(k).module;
  if (!m.empty() && m.front() == '?') {
    if (!has_param_input) return "";
    m.remove_prefix(1);
  }
  std::string out;
  for (char c : m) out += c == '#' ? std::to_string(spatial_dims) : std::string(1, c);
  return out;
}

std::string descriptor_name(OpKind k) { return ascii_lower(op_name(k)); }

}  // namespace ridge
