// ridge's counting convention, op by op. THE one place these rules are written; docs/counting.md explains
// them and tests/costs check each against a brute-force count. Conventions of other tools are in
// conventions.cpp.
//
// Principles: a multiply-accumulate is 2 FLOPs; every other arithmetic operation (add, multiply, divide,
// compare, exp, log, sqrt, tanh, erf) is 1 FLOP; data movement and selection are 0 FLOPs (but move bytes).
// Backward: grad-input is counted only when the input needs a gradient; grad-weight only for parameters.
#include "costs/rules.hpp"

#include <fmt/format.h>

#include "costs/geometry.hpp"

namespace ridge::costs {

namespace {

bool needs_grad(const std::vector<bool>& grad, int v) { return v >= 0 && static_cast<size_t>(v) < grad.size() && grad[v]; }

/// Adds a gradient term to the weight bucket when `operand` is a parameter, else to the input bucket.
void add_grad(const Graph& g, const std::vector<bool>& grad, int operand, Count flops, Cost& c) {
  if (!needs_grad(grad, operand)) return;
  if (g.value(operand).kind == ValueKind::Param) c.bwd_weight_flops += flops;
  else c.bwd_input_flops += flops;
}

struct UnaryRule {
  OpKind op;
  int fwd;  ///< forward FLOPs per element
  int bwd;  ///< grad-input FLOPs per element (derivative times incoming gradient)
};
// Per-element costs. Transcendentals (exp, log, tanh, erf, sqrt) count 1.
constexpr UnaryRule kUnary[] = {
    {OpKind::Relu, 1, 1},         // max(x, 0); backward: select
    {OpKind::Clip, 2, 2},         // min(max(x, lo), hi); backward: two compares
    {OpKind::Sigmoid, 3, 3},      // 1 / (1 + exp(-x)); backward: dy * y * (1 - y)
    {OpKind::Tanh, 1, 3},         // tanh; backward: dy * (1 - y^2)
    {OpKind::Erf, 1, 4},          // erf; backward: dy * 2/sqrt(pi) * exp(-x^2)
    {OpKind::Gelu, 5, 9},         // x * 0.5 * (1 + erf(x / sqrt 2)); tanh form: see unary_flops_per_element
    {OpKind::LeakyRelu, 2, 2},    // compare + multiply
    {OpKind::HardSigmoid, 4, 3},  // max(0, min(1, a x + b))
    {OpKind::HardSwish, 5, 4},    // x * hardsigmoid(x)
    {OpKind::Sqrt, 1, 2},
    {OpKind::Exp, 1, 1},
    {OpKind::Log, 1, 1},
    {OpKind::Neg, 1, 1},
    {OpKind::Reciprocal, 1, 3},
};

const UnaryRule* unary_rule(OpKind op) {
  for (const auto& r : kUnary)
    if (r.op == op) return &r;
  return nullptr;
}

}  // namespace

int unary_flops_per_element(const Node& n) {
  // GPT-2's gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): pow, mul, add, mul, tanh, add, mul, mul.
  if (n.op == OpKind::Gelu && n.attrs.s("approximate", "none") == "tanh") return 8;
  const UnaryRule* r = unary_rule(n.op);
  return r ? r->fwd : 0;
}

int unary_bwd_flops_per_element(const Node& n) {
  if (n.op == OpKind::Gelu && n.attrs.s("approximate", "none") == "tanh") return 14;
  const UnaryRule* r = unary_rule(n.op);
  return r ? r->bwd : 0;
}

bool folded_batchnorm(const Node& n) { return n.attrs.i("folded_batchnorm", 0) != 0; }

bool is_view(const Node& n) {
  OpFamily f = op_family(n.op);
  return f == OpFamily::View || f == OpFamily::Dropout || f == OpFamily::Source;
}

bool apply_rule(const Graph& g, const Node& n, const std::vector<bool>& grad, Cost& c, std::string& reason) {
  const int x = n.inputs.empty() ? -1 : n.inputs[0];
  const Count out = out_elems(g, n);
  switch (op_family(n.op)) {
    case OpFamily::Conv:
    case OpFamily::ConvTranspose: {
      ConvGeom cg = conv_geometry(g, n);
      c.macs = cg.macs;
      if (folded_batchnorm(n)) {
        // An eval-mode export folded a BatchNorm into this conv: cost it as conv (no bias) + BatchNorm, so
        // that the file and the original model agree; its bias is the BN shift.
        c.flops = 2 * cg.macs + 2 * cg.out_elems;
        add_grad(g, grad, x, 2 * cg.macs + 8 * cg.out_elems, c);
        add_grad(g, grad, n.inputs[1], 2 * cg.macs, c);
        if (cg.bias) add_grad(g, grad, n.inputs[2], 3 * cg.out_elems, c);
        return true;
      }
      c.flops = 2 * cg.macs + (cg.bias ? cg.out_elems : 0);
      add_grad(g, grad, x, 2 * cg.macs, c);                 // grad-input: the transposed convolution
      add_grad(g, grad, n.inputs[1], 2 * cg.macs, c);       // grad-weight: input x grad-output correlation
      if (cg.bias) add_grad(g, grad, n.inputs[2], cg.out_elems, c);  // grad-bias: sum over N and space
      return true;
    }
    case OpFamily::Linear: {
      LinearGeom lg = linear_geometry(g, n);
      c.macs = lg.macs;
      c.flops = 2 * lg.macs + (lg.bias ? lg.rows * lg.out : 0);
      add_grad(g, grad, x, 2 * lg.macs, c);
      add_grad(g, grad, n.inputs[1], 2 * lg.macs, c);
      if (lg.bias) add_grad(g, grad, n.inputs[2], lg.rows * lg.out, c);
      return true;
    }
    case OpFamily::MatMul: {
      MatMulGeom mg = matmul_geometry(g, n);
      c.macs = mg.macs;
      c.flops = 2 * mg.macs;
      add_grad(g, grad, n.inputs[0], 2 * mg.macs, c);
      add_grad(g, grad, n.inputs[1], 2 * mg.macs, c);
      return true;
    }
    case OpFamily::Einsum: {
      auto macs = einsum_macs(g, n);
      if (!macs) {
        reason = fmt::format("einsum equation '{}' is not supported (ellipsis or malformed)",
                             n.attrs.s("equation", ""));
        return false;
      }
      c.macs = *macs;
      c.flops = 2 * *macs;
      for (int v : n.inputs) add_grad(g, grad, v, 2 * *macs, c);
      return true;
    }
    case OpFamily::BatchNorm: {
      // Inference: y = x * scale + shift with per-channel scale/shift folded from gamma, beta, mean, var.
      c.flops = 2 * out;
      add_grad(g, grad, x, 8 * out, c);  // dx from dy, x-hat, and the two per-channel reductions
      if (n.inputs.size() > 1) add_grad(g, grad, n.inputs[1], 2 * out, c);  // dgamma = sum(dy * x-hat)
      if (n.inputs.size() > 2) add_grad(g, grad, n.inputs[2], out, c);      // dbeta = sum(dy)
      return true;
    }
    case OpFamily::LayerNorm: {
      // mean (E), x - mean (E), square (E), variance mean (E), + eps and sqrt per row (2R), divide (E),
      // scale (E), shift (E): 7E + 2R, equal to the decomposed ONNX form (ReduceMean, Sub, Pow, ...).
      const Shape& s = g.value(x).shape;
      int64_t axis = n.attrs.i("axis", -1);
      if (axis < 0) axis += s.rank();
      Count rows = 1;
      for (int i = 0; i < axis; ++i) rows *= s[i];
      const bool affine = n.inputs.size() > 1 && n.inputs[1] >= 0;
      c.flops = (affine ? 7 : 5) * out + 2 * rows;
      add_grad(g, grad, x, 8 * out, c);
      if (affine) add_grad(g, grad, n.inputs[1], 2 * out, c);
      if (n.inputs.size() > 2) add_grad(g, grad, n.inputs[2], out, c);
      return true;
    }
    case OpFamily::Unary: {
      c.flops = out * unary_flops_per_element(n);
      add_grad(g, grad, x, out * unary_bwd_flops_per_element(n), c);
      return true;
    }
    case OpFamily::Binary: {
      // One FLOP per output element (Pow by a constant is one multiply for squares; counted 1 in general).
      // Integer arithmetic (shape computations, masks of token ids) is not floating-point work: 0 FLOPs.
      if (!is_float(g.value(x).dtype)) return true;
      c.flops = out;
      for (size_t i = 0; i < n.inputs.size() && i < 2; ++i) {
        int v = n.inputs[i];
        Count own = elements(g, v).value_or(out);
        Count reduce = out - own;  // summing the gradient over broadcast dims
        Count local = 0;
        switch (n.op) {
          case OpKind::Add: local = 0; break;
          case OpKind::Sub: local = i == 1 ? out : 0; break;
          case OpKind::Mul: local = out; break;
          case OpKind::Div: local = i == 0 ? out : 3 * out; break;
          case OpKind::Pow: local = 3 * out; break;
          default: break;  // Equal: no gradient
        }
        if (n.op != OpKind::Equal) add_grad(g, grad, v, local + reduce, c);
      }
      return true;
    }
    case OpFamily::Select:
      return true;  // Where: selection, no arithmetic either way
    case OpFamily::MaxPool:
      c.flops = out * (pool_taps(g, n) - 1);  // comparisons; backward scatters (0 FLOPs)
      return true;
    case OpFamily::AvgPool:
      c.flops = out * pool_taps(g, n);  // (taps - 1) adds + 1 divide per output
      add_grad(g, grad, x, in_elems(g, n), c);
      return true;
    case OpFamily::AdaptiveAvgPool: {
      const Shape& s = g.value(x).shape;
      c.flops = s[0] * s[1] * pool_taps(g, n);  // window sizes vary: exact sum of (adds + divide) per output
      add_grad(g, grad, x, in_elems(g, n), c);
      return true;
    }
    case OpFamily::GlobalAvgPool:
      c.flops = in_elems(g, n);
      add_grad(g, grad, x, in_elems(g, n), c);
      return true;
    case OpFamily::Softmax: {
      const Shape& s = g.value(x).shape;
      int64_t axis = n.attrs.i("axis", -1);
      if (axis < 0) axis += s.rank();
      const Count len = s[static_cast<int>(axis)];
      const Count rows = len > 0 ? out / len : 0;
      // softmax per row: max (n-1), subtract (n), exp (n), sum (n-1), divide (n) = 5n - 2;
      // log-softmax: max, subtract, exp, sum, log (1), subtract (n) = 5n - 1.
      c.flops = rows * (n.op == OpKind::LogSoftmax ? 5 * len - 1 : 5 * len - 2);
      add_grad(g, grad, x, rows * (4 * len - 1), c);
      return true;
    }
    case OpFamily::Reduce: {
      const Count in = in_elems(g, n);
      c.flops = n.op == OpKind::ReduceMean ? in : in - out;
      if (n.op == OpKind::ReduceMean) add_grad(g, grad, x, out, c);
      return true;
    }
    case OpFamily::Gather: {
      // Embedding lookup: no arithmetic; backward scatter-adds rows into the table's gradient.
      add_grad(g, grad, n.inputs[0], out, c);
      return true;
    }
    case OpFamily::Resize: {
      std::string mode = n.attrs.s("mode", "nearest");
      if (mode == "nearest") return true;
      if (mode != "linear") {
        reason = fmt::format("Resize mode '{}' has no cost rule", mode);
        return false;
      }
      const Shape& s = g.value(x).shape;
      const Shape& y = g.value(n.outputs[0]).shape;
      int resized = 0;
      for (int i = 0; i < s.rank() && i < y.rank(); ++i) resized += s[i] != y[i];
      c.flops = out * 3 * ((Count{1} << resized) - 1);  // 2^d - 1 lerps of 3 FLOPs each
      add_grad(g, grad, x, c.flops, c);
      return true;
    }
    case OpFamily::View:
    case OpFamily::Dropout:
    case OpFamily::Move:
    case OpFamily::Source:
      return true;  // no arithmetic; gradients pass through
    case OpFamily::Unknown:
      reason = fmt::format("op {} has no cost rule", n.op_type.empty() ? "?" : n.op_type);
      return false;
  }
  return false;
}

}  // namespace ridge::costs
