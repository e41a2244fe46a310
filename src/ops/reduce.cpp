// Reduction family: Softmax/LogSoftmax and ReduceMean/Sum/Max/ArgMax — shape inference and cost.
#include <set>

#include "ops/family.hpp"

namespace ridge::ops {

namespace {

bool reduce_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  std::vector<int64_t> axes;
  if (c.n.op == OpKind::ArgMax) {
    axes = {c.n.attrs.i("axis", 0)};
  } else if (c.present(1)) {
    const auto* given = c.ints(1);
    if (!given) return false;
    axes = *given;
  } else {
    axes = c.n.attrs.ints("axes");
  }
  const bool keep = c.n.attrs.i("keepdims", 1) != 0;
  if (axes.empty() && c.n.op != OpKind::ArgMax && c.n.attrs.i("noop_with_empty_axes", 0) != 0) {
    c.out(0, *x);
    return true;
  }
  std::set<int> reduced;
  for (int64_t a : axes) reduced.insert(c.axis(a, x->rank()));
  if (axes.empty())
    for (int i = 0; i < x->rank(); ++i) reduced.insert(i);
  Shape out;
  for (int i = 0; i < x->rank(); ++i) {
    if (!reduced.count(i)) out.dims.push_back(x->dims[i]);
    else if (keep) out.dims.push_back(1);
  }
  c.out(0, out, c.n.op == OpKind::ArgMax ? DType::I64 : DType::Unknown);
  return true;
}

// Mean: one add per input element (n-1 per output) plus one divide per output = E(in); sum and max: E(in) -
// E(out). Backward of the mean spreads each gradient: 1 FLOP per output (the divide); of sum and max, none.
bool reduce_cost(const CostContext& c, Cost& cost, std::string&) {
  const Count in = c.in_elems(), out = c.out_elems();
  cost.flops = c.n.op == OpKind::ReduceMean ? in : in - out;
  if (c.n.op == OpKind::ReduceMean) c.add_grad(c.n.inputs[0], out, cost);
  return true;
}

/// Before opset 13 (attribute coerce_2d = 1, set by the importer) Softmax and LogSoftmax coerce their input to
/// 2-D at `axis` (default 1) and normalise over the flattened trailing dims; from opset 13 over `axis` alone.
bool coerced_2d(const Node& n) { return n.attrs.i("coerce_2d", 0) != 0; }
int64_t softmax_axis(const Node& n) { return n.attrs.i("axis", coerced_2d(n) ? 1 : -1); }

bool softmax_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  if (x->rank() > 0) c.axis(softmax_axis(c.n), x->rank());
  c.out(0, *x);
  return true;
}

// Softmax per row: max (n-1), subtract (n), exp (n), sum (n-1), divide (n) = 5n - 2; log-softmax: max,
// subtract, exp, sum, log (1), subtract (n) = 5n - 1. Backward: 4n - 1 per row.
bool softmax_cost(const CostContext& c, Cost& cost, std::string&) {
  const Shape& s = c.in_shape(0);
  int64_t axis = softmax_axis(c.n);
  if (axis < 0) axis += s.rank();
  const Count out = c.out_elems();
  Count len = 1;
  for (int i = static_cast<int>(axis); i < s.rank() && (i == axis || coerced_2d(c.n)); ++i) len *= s[i];
  const Count rows = len > 0 ? out / len : 0;
  cost.flops = rows * (c.n.op == OpKind::LogSoftmax ? 5 * len - 1 : 5 * len - 2);
  c.add_grad(c.n.inputs[0], rows * (4 * len - 1), cost);
  return true;
}

}  // namespace

const OpRule rule_reduce{reduce_infer, reduce_cost};
const OpRule rule_softmax{softmax_infer, softmax_cost};

}  // namespace ridge::ops
