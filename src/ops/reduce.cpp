// Reduction family: Softmax/LogSoftmax and ReduceMean/Sum/Max/ArgMax — shape inference and cost.
#include <algorithm>
#include <set>

#include "ops/family.hpp"

namespace ridge::ops {

namespace {

// Shape arithmetic through a reduction: ReduceMax, ReduceMin, ReduceSum and ReduceProd of a small whole-number
// payload (torchvision's detection transform takes the max over its images' sizes, in float).
void fold_reduction(RuleContext& c, const Shape& x, const std::set<int>& reduced, const Shape& out) {
  const OpKind op = c.n.op;
  if (op != OpKind::ReduceMax && op != OpKind::ReduceMin && op != OpKind::ReduceSum && op != OpKind::ReduceProd) return;
  const auto v = c.integral(0);
  if (!v || !x.known() || !out.known() || static_cast<int64_t>(v->size()) != product(x.dims) || v->empty() ||
      static_cast<int64_t>(v->size()) > kMaxFoldElements)
    return;
  std::vector<int64_t> result(static_cast<size_t>(product(out.dims)));
  std::vector<char> seen(result.size(), 0);
  std::vector<int64_t> index(static_cast<size_t>(x.rank()), 0);
  for (int64_t value : *v) {
    int64_t at = 0;  // the output element this input element reduces into (reduced dims dropped or kept as 1)
    for (int d = 0; d < x.rank(); ++d)
      if (!reduced.count(d)) at = at * x.dims[static_cast<size_t>(d)] + index[static_cast<size_t>(d)];
    int64_t& r = result[static_cast<size_t>(at)];
    if (!seen[static_cast<size_t>(at)]) r = value;
    else if (op == OpKind::ReduceMax) r = std::max(r, value);
    else if (op == OpKind::ReduceMin) r = std::min(r, value);
    else if (op == OpKind::ReduceSum ? __builtin_add_overflow(r, value, &r) : __builtin_mul_overflow(r, value, &r))
      return;  // past int64: left unfolded
    seen[static_cast<size_t>(at)] = 1;
    for (int d = x.rank() - 1; d >= 0 && ++index[static_cast<size_t>(d)] == x.dims[static_cast<size_t>(d)]; --d)
      index[static_cast<size_t>(d)] = 0;
  }
  c.out_ints(0, std::move(result));
}

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
  fold_reduction(c, *x, reduced, out);
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

/// SoftmaxCrossEntropyLoss (scores [N, C, D...], labels [N, D...], weights [C]) and NegativeLogLikelihoodLoss
/// (input, target, weight: the same shapes): the loss per element ([N, D...]) with reduction none, else a
/// scalar; SoftmaxCrossEntropyLoss's optional log_prob has the scores' shape.
bool loss_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  const std::string reduction = c.n.attrs.s("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    throw RuleError(fmt::format("reduction '{}' is not none, sum or mean", reduction));
  if (x->rank() < 2) throw RuleError(fmt::format("the scores {} are not [N, C, ...]", to_string(*x)));
  Shape per_element = *x;
  per_element.dims.erase(per_element.dims.begin() + 1);
  if (const Shape* labels = c.shape(1)) {
    bool fits = labels->rank() == per_element.rank();
    for (int i = 0; fits && i < labels->rank(); ++i)
      fits = labels->dims[i] < 0 || per_element.dims[i] < 0 || labels->dims[i] == per_element.dims[i];
    if (!fits) throw RuleError(fmt::format("labels {} do not match the scores {}", to_string(*labels), to_string(*x)));
  }
  if (const Shape* w = c.shape(2);
      w && (w->rank() != 1 || (w->dims[0] >= 0 && x->dims[1] >= 0 && w->dims[0] != x->dims[1])))
    throw RuleError(fmt::format("weights {} are not one per class ({})", to_string(*w), x->dims[1]));
  c.out(0, reduction == "none" ? per_element : Shape{});
  c.out(1, *x);
  return true;
}

/// Rows (N x D...) of a loss over scores [N, C, D...], and the reduction's FLOPs over them: sum R - 1 adds; mean
/// R - 1 adds and a divide, weighted also the weights' sum (R - 1): 2R - 1; none 0.
Count loss_rows(const CostContext& c, Count& reduction_flops) {
  const Shape& s = c.in_shape(0);
  const Count classes = s.rank() > 1 ? s[1] : 0, rows = classes > 0 ? c.in_elems() / classes : 0;
  const std::string reduction = c.n.attrs.s("reduction", "mean");
  const bool weighted = c.present(2);
  if (rows == 0 || reduction == "none") reduction_flops = 0;
  else reduction_flops = reduction == "sum" ? rows - 1 : weighted ? 2 * rows - 1 : rows;
  return rows;
}

// SoftmaxCrossEntropyLoss: LogSoftmax over C per row (5C - 1), the label's log-probability picked (0), negated
// (1 per row), weighted (1 per row with weights), reduced (loss_rows). Every row counts (ignore_index drops rows
// by their label values). Backward to the scores: softmax from the log-probabilities (exp, E), times the row's
// scale (E), minus 1 at the label (R), the row's scale (R): 2E + 2R.
bool softmax_cross_entropy_cost(const CostContext& c, Cost& cost, std::string&) {
  Count reduce = 0;
  const Count rows = loss_rows(c, reduce), e = c.in_elems(), classes = rows > 0 ? e / rows : 0;
  const bool weighted = c.present(2);
  cost.flops = rows * (5 * classes - 1) + rows * (weighted ? 2 : 1) + reduce;
  c.add_grad(c.n.inputs[0], 2 * e + 2 * rows, cost);
  return true;
}

// NegativeLogLikelihoodLoss: the target's value picked (0), negated (1 per row), weighted (1 per row), reduced
// (loss_rows). Backward: the row's negated (and weighted) gradient scattered to the target: R (2R with weights).
bool nll_loss_cost(const CostContext& c, Cost& cost, std::string&) {
  Count reduce = 0;
  const Count rows = loss_rows(c, reduce);
  const bool weighted = c.present(2);
  cost.flops = rows * (weighted ? 2 : 1) + reduce;
  c.add_grad(c.n.inputs[0], rows * (weighted ? 2 : 1), cost);
  return true;
}

/// Det: [*, M, M] -> [*].
bool det_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  const int64_t rows = x->rank() >= 2 ? (*x)[-2] : -1, cols = x->rank() >= 2 ? (*x)[-1] : -1;
  if (x->rank() < 2 || (rows >= 0 && cols >= 0 && rows != cols))
    throw RuleError(fmt::format("Det needs square matrices [*, M, M], not {}", to_string(*x)));
  c.out(0, Shape{{x->dims.begin(), x->dims.end() - 2}});
  return true;
}

// Per M x M matrix, LU with partial pivoting: elimination step with n = M-1 .. 1 rows below the pivot takes n
// comparisons (the pivot), n divides (the multipliers) and n^2 multiply-adds (2 n^2): sum (M-1)M +
// (M-1)M(2M-1)/3; then the diagonal's product, M - 1 (the sign of the row swaps is selection). Backward
// dy * det * A^-T: the inverse from the LU factors (2M^3), det * dy (1), its product with the inverse (M^2).
bool det_cost(const CostContext& c, Cost& cost, std::string&) {
  const Shape& s = c.in_shape(0);
  const Count m = s[-1], matrices = m > 0 ? c.in_elems() / (m * m) : 0;
  const Count per = m > 0 ? (m - 1) * m + (m - 1) * m * (2 * m - 1) / 3 + (m - 1) : 0;
  cost.flops = matrices * per;
  c.add_grad(c.n.inputs[0], matrices * (2 * m * m * m + m * m + 1), cost);
  return true;
}

}  // namespace

const OpRule rule_reduce{reduce_infer, reduce_cost};
const OpRule rule_hardmax{softmax_infer, hardmax_cost};
const OpRule rule_softmax{softmax_infer, softmax_cost};
const OpRule rule_softmax_cross_entropy{loss_infer, softmax_cross_entropy_cost};
const OpRule rule_nll_loss{loss_infer, nll_loss_cost};
const OpRule rule_det{det_infer, det_cost};

}  // namespace ridge::ops
