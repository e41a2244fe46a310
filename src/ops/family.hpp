// Shared by the family rule files of the ops stage (not a public API): the rule objects named in ops.def and
// small helpers for shape arithmetic.
#pragma once
#include <fmt/format.h>

#include <functional>
#include <map>

#include "ridge/op_geometry.hpp"
#include "ridge/op_rules.hpp"

namespace ridge::ops {

// Every rule named in ops.def, declared here and defined in exactly one family file: a record whose rule is
// missing fails to link.
#define RIDGE_OP(e, name, family, rule, roles, saves, module, fwd, bwd_a, bwd_b) extern const OpRule rule_##rule;
#include "ridge/ops.def"
#undef RIDGE_OP

/// Product of dims[from, to), -1 when any is unknown; throws RuleError beyond any real tensor.
int64_t product(const std::vector<int64_t>& dims, size_t from = 0, size_t to = SIZE_MAX);
/// Output shape of a node whose only output has the first input's shape.
bool same_as_input(RuleContext& c);
/// Elementwise fold of integer payloads over broadcast operands [first, first+count); false when any is missing.
bool fold_elementwise(RuleContext& c, const Shape& out, int first, int count,
                      const std::function<std::optional<int64_t>(const std::vector<int64_t>&)>& f);
/// As fold_elementwise, on float payloads of a float output (values rounded to float32 when the output is fp32,
/// as the exporter's arithmetic was): the scale factors of torchvision's detection transform
/// (min(320 / min(h, w), 640 / max(h, w))), whose floor becomes a Resize size. Returns false when not folded.
bool fold_reals(RuleContext& c, const Shape& out, int first, int count,
                const std::function<std::optional<double>(const std::vector<double>&)>& f);
/// The element type named by attribute `dtype` (an ONNX TensorProto type; RuleError beyond 1..23), else `fallback`
/// (move.cpp).
DType attr_dtype(const RuleContext& c, DType fallback);

}  // namespace ridge::ops

namespace ridge::ops {
/// Conv and pooling outputs: N, `channels`, then one sliding-window extent per spatial dim (conv.cpp), of element
/// type `t` (Unknown: the input's).
bool windowed(RuleContext& c, int64_t channels, std::vector<int64_t> kernel, DType t = DType::Unknown);
}  // namespace ridge::ops

namespace ridge::ops {
/// The cost rule of ops that do no arithmetic (selection, data movement, views, sources): always costed, 0 FLOPs.
bool no_cost(const CostContext& c, Cost& cost, std::string& reason);
}  // namespace ridge::ops

namespace ridge::ops {
/// The fields of a benchdnn-style short descriptor body: "mb1ic3ih224" -> {mb:1, ic:3, ih:224}. Throws
/// ridge::Error naming `desc` when the body is not letters followed by numbers (descriptor.cpp).
std::map<std::string, int64_t> short_form_fields(const std::string& body, const std::string& desc);
}  // namespace ridge::ops
