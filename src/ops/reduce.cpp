// Reduction family: Softmax/LogSoftmax and ReduceMean/Sum/Max/ArgMax — shape inference and cost.
#include <set>

#include "ops/family.hpp"

namespace ridge::ops {

namespace {

bool reduce_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  std::vector<int64_t> axes;
  const bool arg = c.n.op == OpKind::ArgMax || c.n.op == OpKind::ArgMin;
  if (arg) {
    axes = {c.n.attrs.i("axis", 0)};
  } else if (c.present(1)) {
    const auto* given = c.ints(1);
    if (!given) return false;
    axes = *given;
  } else {
    axes = c.n.attrs.ints("axes");
  }
  const bool keep = c.n.attrs.i("keepdims", 1) != 0;
  if (axes.empty() && !arg && c.n.attrs.i("noop_with_empty_axes", 0) != 0) {
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
  c.out(0, out, arg ? DType::I64 : DType::Unknown);
  return true;
}

// Mean: one add per input element (n-1 per output) plus one divide per output = E(in); sum and max: E(in) -
// E(out). Backward of the mean spreads each gradient: 1 FLOP per output (the divide); of sum and max, none.
// Min and Prod as sum and max (E(in) - E(out)); L1 abs + adds (2E(in) - E(out)); SumSquare square + adds (the
// same); L2 square, adds, sqrt per output (2E(in)); LogSumExp exp, adds, log per output (2E(in)). Backward: Min
// scatters (0); Prod dy * y / x (2 per input); L1 dy * sign(x) (1 per input); L2 dy / y per output, times x per
// input; SumSquare 2 x dy (2 per input); LogSumExp dy * exp(x - y) (3 per input).
bool reduce_cost(const CostContext& c, Cost& cost, std::string&) {
  const Count in = c.in_elems(), out = c.out_elems();
  const int x = c.n.inputs[0];
  switch (c.n.op) {
    case OpKind::ReduceMean: cost.flops = in; c.add_grad(x, out, cost); break;
    case OpKind::ReduceProd: cost.flops = in - out; c.add_grad(x, 2 * in, cost); break;
    case OpKind::ReduceL1: cost.flops = 2 * in - out; c.add_grad(x, in, cost); break;
    case OpKind::ReduceSumSquare: cost.flops = 2 * in - out; c.add_grad(x, 2 * in, cost); break;
    case OpKind::ReduceL2: cost.flops = 2 * in; c.add_grad(x, in + out, cost); break;
    case OpKind::ReduceLogSumExp: cost.flops = 2 * in; c.add_grad(x, 3 * in, cost); break;
    case OpKind::ReduceLogSum: cost.flops = in; c.add_grad(x, out, cost); break;  // adds, log; dy / y per output
    default: cost.flops = in - out;  // ReduceSum, ReduceMax, ReduceMin, ArgMax, ArgMin
  }
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

/// Length of the rows Softmax, LogSoftmax and Hardmax normalise over: the axis dim, or (coerce_2d) every dim
/// from the axis on.
Count row_length(const CostContext& c) {
  const Shape& s = c.in_shape(0);
  int64_t axis = softmax_axis(c.n);
  if (axis < 0) axis += s.rank();
  Count len = 1;
  for (int i = static_cast<int>(axis); i < s.rank() && (i == axis || coerced_2d(c.n)); ++i) len *= s[i];
  return len;
}

// Softmax per row: max (n-1), subtract (n), exp (n), sum (n-1), divide (n) = 5n - 2; log-softmax: max,
// subtract, exp, sum, log (1), subtract (n) = 5n - 1. Backward: 4n - 1 per row.
bool softmax_cost(const CostContext& c, Cost& cost, std::string&) {
  const Count len = row_length(c), out = c.out_elems();
  const Count rows = len > 0 ? out / len : 0;
  cost.flops = rows * (c.n.op == OpKind::LogSoftmax ? 5 * len - 1 : 5 * len - 2);
  c.add_grad(c.n.inputs[0], rows * (4 * len - 1), cost);
  return true;
}

// Hardmax: a one-hot of each row's maximum: n - 1 comparisons per row of n (rows as Softmax's); no gradient.
bool hardmax_cost(const CostContext& c, Cost& cost, std::string&) {
  const Count len = row_length(c), out = c.out_elems();
  cost.flops = len > 0 ? out / len * (len - 1) : 0;
  return true;
}

}  // namespace

const OpRule rule_reduce{reduce_infer, reduce_cost};
const OpRule rule_hardmax{softmax_infer, hardmax_cost};
const OpRule rule_softmax{softmax_infer, softmax_cost};

}  // namespace ridge::ops
