// The op rule table (one entry per record of ops.def), the contexts rules see, and the dispatch used by the
// importer, the zoo builder, descriptors (infer_shapes) and the costs stage (cost_node).
#include <array>
#include <cmath>

#include "ops/family.hpp"
#include "ridge/error.hpp"

namespace ridge::ops {

namespace {

const std::array<const OpRule*, kOpKindCount> kRules = {
#define RIDGE_OP(e, name, family, rule, roles, saves, module, fwd, bwd_a, bwd_b) &rule_##rule,
#include "ridge/ops.def"
#undef RIDGE_OP
};

}  // namespace

const OpRule& op_rule(OpKind k) { return *kRules.at(static_cast<size_t>(k)); }

// ---- shape environment and rule context -------------------------------------------------------------------

ShapeEnv::ShapeEnv(Graph& graph) : g(graph), rank_known(graph.values.size(), 1), float_data(graph.values.size()) {}

int ShapeEnv::add_value(Value v) {
  rank_known.push_back(0);
  float_data.emplace_back();
  return g.add_value(std::move(v));
}

void ShapeEnv::merge_shape(int v, const Shape& s) {
  Value& val = g.value(v);
  if (!rank_known[v]) {
    val.shape = s;
    rank_known[v] = 1;
    return;
  }
  bool agree = val.shape.rank() == s.rank();
  for (int i = 0; agree && i < s.rank(); ++i)
    agree = val.shape.dims[i] < 0 || s.dims[i] < 0 || val.shape.dims[i] == s.dims[i];
  if (!agree)  // a shape the file declares that the op cannot produce: costs and buffers would follow the wrong one
    throw RuleError(
        fmt::format("'{}' is declared {} but the op gives {}", val.name, to_string(val.shape), to_string(s)));
  for (int i = 0; i < s.rank(); ++i)
    if (val.shape.dims[i] < 0 && s.dims[i] >= 0) val.shape.dims[i] = s.dims[i];
}

const Shape* RuleContext::shape(int i) const {
  return present(i) && env.rank_known[n.inputs[i]] ? &in(i)->shape : nullptr;
}

const Shape* RuleContext::out_shape(int k) const {
  return k < outputs() && n.outputs[k] >= 0 && env.rank_known[n.outputs[k]] ? &env.g.value(n.outputs[k]).shape
                                                                              : nullptr;
}

const std::vector<int64_t>* RuleContext::ints(int i) const {
  return present(i) && in(i)->has_int_data ? &in(i)->int_data : nullptr;
}

std::optional<std::vector<int64_t>> RuleContext::integral(int i) const {
  if (const auto* d = ints(i)) return *d;
  if (!present(i) || !env.float_data[n.inputs[i]]) return std::nullopt;
  std::vector<int64_t> out;
  for (double r : *env.float_data[n.inputs[i]]) {
    if (!std::isfinite(r) || std::trunc(r) != r || std::fabs(r) > 9007199254740992.0) return std::nullopt;
    out.push_back(static_cast<int64_t>(r));
  }
  return out;
}

std::optional<std::vector<double>> RuleContext::reals(int i) const {
  if (!present(i)) return std::nullopt;
  if (const auto& f = env.float_data[n.inputs[i]]) return f;
  if (auto p = ints(i)) return std::vector<double>(p->begin(), p->end());
  return std::nullopt;
}

void RuleContext::out(int k, const Shape& s, DType t) const {
  if (k >= outputs()) return;
  env.merge_shape(n.outputs[k], s);
  Value& v = env.g.value(n.outputs[k]);
  if (v.dtype == DType::Unknown) v.dtype = t != DType::Unknown ? t : dtype(0);
}

void RuleContext::out_ints(int k, std::vector<int64_t> data) const {
  if (k >= outputs()) return;
  Value& v = env.g.value(n.outputs[k]);
  v.int_data = std::move(data);
  v.has_int_data = true;
}

int RuleContext::axis(int64_t a, int rank) const {
  if (a < -rank || a >= rank) throw RuleError(fmt::format("axis {} out of range for rank {}", a, rank));
  return static_cast<int>(a < 0 ? a + rank : a);
}

bool infer_shapes(ShapeEnv& env, int node) {
  Node& n = env.g.nodes.at(node);
  RuleContext c{env, n};
  const bool inferred = op_rule(n.op).infer(c);
  // A view keeps its input's elements; a declared output shape of another size (a rule that cannot know the
  // target, e.g. a Squeeze whose axes are computed) is not a shape the op can give.
  if (op_family(n.op) == OpFamily::View && !n.inputs.empty() && n.inputs[0] >= 0 && !n.outputs.empty() &&
      n.outputs[0] >= 0) {
    const Value& y = env.g.value(n.outputs[0]);
    const Shape &in = env.g.value(n.inputs[0]).shape, &out = y.shape;
    if (env.rank_known[n.inputs[0]] && env.rank_known[n.outputs[0]] && in.known() && out.known() &&
        in.elements() != out.elements())
      throw RuleError(fmt::format("'{}' is declared {} ({} elements) but its input {} has {}", y.name, to_string(out),
                                  out.elements(), to_string(in), in.elements()));
  }
  return inferred;
}

// ---- cost context -----------------------------------------------------------------------------------------

void CostContext::add_grad(int v, Count flops, Cost& c) const {
  if (!needs_grad(v)) return;
  if (g.value(v).kind == ValueKind::Param) c.bwd_weight_flops += flops;
  else c.bwd_input_flops += flops;
}

Count CostContext::out_elems() const { return ops::out_elems(g, n); }
Count CostContext::in_elems() const { return ops::in_elems(g, n); }

bool cost_node(const Graph& g, const Node& n, const std::vector<bool>& grad, Cost& cost, std::string& reason) {
  return op_rule(n.op).cost(CostContext{g, n, grad}, cost, reason);
}

bool dropout_active(const Graph& g, const Node& n) {
  if (n.op != OpKind::Dropout) return false;
  if (dropout_drops_nothing(n)) return false;
  if (n.attrs.i("training_mode", 0) != 0) return true;
  if (n.inputs.size() < 3 || n.inputs[2] < 0) return false;
  const Value& mode = g.value(n.inputs[2]);
  return mode.has_int_data && mode.int_data.size() == 1 && mode.int_data[0] != 0;
}

bool batchnorm_uses_batch_statistics(const Graph& g, const Node& n) {
  if (n.op != OpKind::BatchNormalization) return false;
  if (n.attrs.has("training_mode")) return n.attrs.i("training_mode", 0) != 0;
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0 && !g.value(n.outputs[i]).omitted) return true;
  return false;
}

bool dropout_drops_nothing(const Node& n) {
  return n.op == OpKind::Dropout && n.attrs.has("ratio") && n.attrs.f("ratio", 0.5) == 0.0;
}

bool is_view(const Graph& g, const Node& n) {
  const OpFamily f = op_family(n.op);
  return f == OpFamily::View || (f == OpFamily::Dropout && !dropout_active(g, n)) || f == OpFamily::Source;
}

bool folded_batchnorm(const Node& n) { return n.attrs.i("folded_batchnorm", 0) != 0; }

// ---- helpers shared by family files -----------------------------------------------------------------------

int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < std::min(to, dims.size()); ++i) {
    if (dims[i] < 0) return -1;
    if (dims[i] != 0 && p > kMaxDim * 1024 / dims[i]) throw RuleError("dims multiply beyond any real tensor");
    p *= dims[i];
  }
  return p;
}

bool same_as_input(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  c.out(0, *x);
  return true;
}

namespace {
/// Index of element `flat` of `out` in an operand of shape `in` broadcast to `out`.
int64_t broadcast_index(const Shape& out, const Shape& in, int64_t flat) {
  int64_t index = 0, stride = 1;
  for (int i = out.rank() - 1, j = in.rank() - 1; i >= 0; --i, --j) {
    const int64_t coord = flat % out.dims[i];
    flat /= out.dims[i];
    if (j >= 0) {
      if (in.dims[j] != 1) index += coord * stride;
      stride *= in.dims[j];
    }
  }
  return index;
}
}  // namespace

namespace {
// The elementwise fold both payload kinds share: operands [first, first+count) read by `payload(i)` (each with a
// known shape holding exactly its elements), broadcast to `out`, `f` per output element; nullopt when an operand is
// missing or `f` gives up on any element.
template <class T, class Payload, class F>
std::optional<std::vector<T>> fold_broadcast(const RuleContext& c, const Shape& out, int first, int count,
                                             Payload payload, const F& f) {
  if (!out.known() || product(out.dims) > kMaxFoldElements) return std::nullopt;
  std::vector<std::vector<T>> operands;
  for (int i = first; i < first + count; ++i) {
    auto v = payload(i);
    if (!v || !c.shape(i) || !c.shape(i)->known() || static_cast<int64_t>(v->size()) != product(c.shape(i)->dims))
      return std::nullopt;
    operands.push_back(std::move(*v));
  }
  std::vector<T> result;
  for (int64_t e = 0; e < product(out.dims); ++e) {
    std::vector<T> args;
    for (int i = first; i < first + count; ++i)
      args.push_back(operands[static_cast<size_t>(i - first)].at(broadcast_index(out, *c.shape(i), e)));
    auto r = f(args);
    if (!r) return std::nullopt;
    result.push_back(*r);
  }
  return result;
}
}  // namespace

bool fold_elementwise(RuleContext& c, const Shape& out, int first, int count,
                      const std::function<std::optional<int64_t>(const std::vector<int64_t>&)>& f) {
  auto result = fold_broadcast<int64_t>(c, out, first, count, [&](int i) { return c.integral(i); }, f);
  if (!result) return false;
  c.out_ints(0, std::move(*result));
  return true;
}

bool fold_reals(RuleContext& c, const Shape& out, int first, int count,
                const std::function<std::optional<double>(const std::vector<double>&)>& f) {
  if (c.outputs() == 0 || !is_float(c.env.g.value(c.n.outputs[0]).dtype)) return false;
  const bool fp32 = c.env.g.value(c.n.outputs[0]).dtype == DType::F32;
  auto result = fold_broadcast<double>(c, out, first, count, [&](int i) { return c.reals(i); },
                                       [&](const std::vector<double>& args) -> std::optional<double> {
                                         const auto r = f(args);
                                         if (!r || !std::isfinite(*r)) return std::nullopt;
                                         return fp32 ? static_cast<double>(static_cast<float>(*r)) : *r;
                                       });
  if (!result) return false;
  c.env.float_data[c.n.outputs[0]] = std::move(*result);
  return true;
}

// ---- the rule for ops ridge does not know -----------------------------------------------------------------

namespace {
bool unknown_infer(RuleContext&) { return false; }
bool unknown_cost(const CostContext& c, Cost&, std::string& reason) {
  reason = fmt::format("op {} has no cost rule", c.n.op_type.empty() ? "?" : c.n.op_type);
  return false;
}
}  // namespace

const OpRule rule_unknown{unknown_infer, unknown_cost};

}  // namespace ridge::ops
