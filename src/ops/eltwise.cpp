// Elementwise family: unary ops (per-element FLOPs from the op's record), binary arithmetic with broadcasting,
// Where and Dropout — shape inference (folding integer payloads of shape arithmetic) and cost.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "ops/family.hpp"

namespace ridge::ops {

int unary_flops_per_element(const Node& n) {
  // GPT-2's gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): pow, mul, add, mul, tanh, add, mul, mul.
  if (n.op == OpKind::Gelu && n.attrs.s("approximate", "none") == "tanh") return 8;
  return op_record(n.op).fwd_flops_per_element;
}

int unary_bwd_flops_per_element(const Node& n) {
  if (n.op == OpKind::Gelu && n.attrs.s("approximate", "none") == "tanh") return 14;
  return std::max(0, op_record(n.op).bwd_flops_a);
}

namespace {

bool unary_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  c.out(0, *x);
  const OpKind op = c.n.op;
  // Shape arithmetic: Neg and Not of integers; Ceil, Floor, Round and Abs of whole numbers (torchvision's
  // detection transform pads to ceil(h / 32.0) * 32 in float).
  const bool whole = op == OpKind::Ceil || op == OpKind::Floor || op == OpKind::Round || op == OpKind::Abs;
  if (whole || op == OpKind::Neg || op == OpKind::Not) {
    auto v = whole ? c.integral(0) : (c.ints(0) ? std::optional(*c.ints(0)) : std::nullopt);
    // -INT64_MIN does not exist: such a payload is left unfolded.
    if (v && (op == OpKind::Not || std::find(v->begin(), v->end(), INT64_MIN) == v->end())) {
      for (auto& e : *v) {
        if (op == OpKind::Neg) e = -e;
        else if (op == OpKind::Not) e = e == 0;
        else if (op == OpKind::Abs) e = std::abs(e);
      }
      c.out_ints(0, std::move(*v));
      return true;
    }
  }
  // Float scale arithmetic (a detection transform's min(320 / min(h, w), ...)): Reciprocal and Neg of floats,
  // and Floor, Ceil and Round of them, whose whole results fold on as integers (a Resize's sizes).
  if (op == OpKind::Floor || op == OpKind::Ceil || op == OpKind::Round) {
    auto r = c.reals(0);
    if (!r || static_cast<int64_t>(r->size()) > kMaxFoldElements) return true;
    std::vector<int64_t> v;
    for (double e : *r) {
      const double w = op == OpKind::Floor ? std::floor(e) : op == OpKind::Ceil ? std::ceil(e) : std::nearbyint(e);
      if (!std::isfinite(w) || std::fabs(w) > 9007199254740992.0) return true;
      v.push_back(static_cast<int64_t>(w));
    }
    c.out_ints(0, std::move(v));
  } else if (op == OpKind::Reciprocal || op == OpKind::Neg) {
    fold_reals(c, *x, 0, 1, [&](const std::vector<double>& v) -> std::optional<double> {
      if (op == OpKind::Neg) return -v[0];
      return v[0] != 0 ? std::optional(1 / v[0]) : std::nullopt;
    });
  }
  return true;
}

bool unary_cost(const CostContext& c, Cost& cost, std::string&) {
  const Count out = c.out_elems();
  cost.flops = out * unary_flops_per_element(c.n);
  c.add_grad(c.n.inputs[0], out * unary_bwd_flops_per_element(c.n), cost);
  return true;
}

bool binary_infer(RuleContext& c) {
  const Shape* a = c.shape(0);
  const Shape* b = c.shape(1);
  if (!a || !b) return false;
  const Shape out = broadcast_shapes(*a, *b, "operands");
  const OpKind op = c.n.op;
  if (op == OpKind::BitShift && c.n.attrs.s("direction", "") != "LEFT" && c.n.attrs.s("direction", "") != "RIGHT")
    throw RuleError(fmt::format("BitShift direction '{}' is neither LEFT nor RIGHT", c.n.attrs.s("direction", "")));
  c.out(0, out, op_record(op).bwd_flops_a < 0 ? DType::Bool : DType::Unknown);  // comparisons and logic
  const bool integral = is_integral(c.dtype(0));
  if (!fold_elementwise(c, out, 0, 2, [&](const std::vector<int64_t>& v) -> std::optional<int64_t> {
    const int64_t x = v[0], y = v[1];
    // A result past int64 (folded shape arithmetic on a hostile file) is left unfolded, never wrapped.
    int64_t r = 0;
    switch (op) {
      case OpKind::Add:
        if (__builtin_add_overflow(x, y, &r)) return std::nullopt;
        return r;
      case OpKind::Sub:
        if (__builtin_sub_overflow(x, y, &r)) return std::nullopt;
        return r;
      case OpKind::Mul:
        if (__builtin_mul_overflow(x, y, &r)) return std::nullopt;
        return r;
      case OpKind::Equal: return x == y;
      case OpKind::Greater: return x > y;
      case OpKind::Less: return x < y;
      case OpKind::GreaterOrEqual: return x >= y;
      case OpKind::LessOrEqual: return x <= y;
      case OpKind::And: return x && y;
      case OpKind::Or: return x || y;
      case OpKind::Xor: return (x != 0) != (y != 0);
      case OpKind::Mod: {  // fmod=0: the sign of the divisor (Python's %); fmod=1: the dividend's (C's %)
        if (y == 0 || y == -1) return y == 0 ? std::nullopt : std::optional<int64_t>(0);  // INT64_MIN % -1 traps
        r = x % y;
        return c.n.attrs.i("fmod", 0) == 0 && r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
      }
      case OpKind::BitShift: {
        if (y < 0 || y > 63) return std::nullopt;
        const auto u = static_cast<uint64_t>(x);
        return static_cast<int64_t>(c.n.attrs.s("direction", "") == "LEFT" ? u << y : u >> y);
      }
      case OpKind::Div:
        if (y == 0 || (y == -1 && x == INT64_MIN) || (!integral && x % y != 0)) return std::nullopt;
        return x / y;
      case OpKind::Pow: {
        if (y < 0 || y > 62) return std::nullopt;
        r = 1;
        for (int64_t i = 0; i < y; ++i)
          if (__builtin_mul_overflow(r, x, &r)) return std::nullopt;
        return r;
      }
      default: return std::nullopt;
    }
  }))
    fold_reals(c, out, 0, 2, [&](const std::vector<double>& v) -> std::optional<double> {
      switch (op) {
        case OpKind::Add: return v[0] + v[1];
        case OpKind::Sub: return v[0] - v[1];
        case OpKind::Mul: return v[0] * v[1];
        case OpKind::Div: return v[1] != 0 ? std::optional(v[0] / v[1]) : std::nullopt;
        default: return std::nullopt;
      }
    });
  return true;
}

// One FLOP per output element. Integer arithmetic (shape computations, masks of token ids) is not
// floating-point work: 0 FLOPs. Backward per operand: the record's local FLOPs per element, plus the sum over
// the dims it was broadcast along.
bool binary_cost(const CostContext& c, Cost& cost, std::string&) {
  if (!is_float(c.g.value(c.n.inputs[0]).dtype)) return true;
  const Count out = c.out_elems();
  const OpRecord& r = op_record(c.n.op);
  cost.flops = out * r.fwd_flops_per_element;
  for (size_t i = 0; i < c.n.inputs.size() && i < 2; ++i) {
    const int local = i == 0 ? r.bwd_flops_a : r.bwd_flops_b;
    if (local < 0) continue;  // no gradient (comparisons)
    const int v = c.n.inputs[i];
    const Count own = elements(c.g, v).value_or(out);
    c.add_grad(v, local * out + (out - own), cost);
  }
  return true;
}

/// Sum, Mean, Max, Min: any number of operands, broadcast together; integer payloads fold (shape arithmetic).
bool variadic_infer(RuleContext& c) {
  if (c.inputs() == 0) throw RuleError("needs at least one operand");
  Shape out;
  for (int i = 0; i < c.inputs(); ++i) {
    const Shape* s = c.shape(i);
    if (!s) return false;
    out = i == 0 ? *s : broadcast_shapes(out, *s, "operands");
  }
  c.out(0, out);
  const OpKind op = c.n.op;
  if (!fold_elementwise(c, out, 0, c.inputs(), [&](const std::vector<int64_t>& v) -> std::optional<int64_t> {
    int64_t r = v[0];
    for (size_t i = 1; i < v.size(); ++i) {
      if (op == OpKind::Max) r = std::max(r, v[i]);
      else if (op == OpKind::Min) r = std::min(r, v[i]);
      else r += v[i];
    }
    if (op == OpKind::Mean) {
      if (r % static_cast<int64_t>(v.size()) != 0) return std::nullopt;
      r /= static_cast<int64_t>(v.size());
    }
    return r;
  }))
    fold_reals(c, out, 0, c.inputs(), [&](const std::vector<double>& v) -> std::optional<double> {
      if (op == OpKind::Max) return *std::max_element(v.begin(), v.end());
      if (op == OpKind::Min) return *std::min_element(v.begin(), v.end());
      return std::nullopt;
    });
  return true;
}

// n operands: n - 1 adds / comparisons per output element; Mean also divides (n per element; one operand is a copy).
// Backward per operand: Sum passes the gradient through, Max and Min route it to the selected operand (0), Mean
// divides (1 per element); each plus the sum over the dims the operand was broadcast along.
bool variadic_cost(const CostContext& c, Cost& cost, std::string&) {
  if (!is_float(c.g.value(c.n.inputs[0]).dtype)) return true;
  const Count out = c.out_elems();
  const int n = static_cast<int>(c.n.inputs.size());
  cost.flops = out * (n - 1 + (c.n.op == OpKind::Mean && n > 1 ? 1 : 0));
  const int local = n > 1 ? op_record(c.n.op).bwd_flops_a : 0;
  for (int v : c.n.inputs)
    if (v >= 0) c.add_grad(v, local * out + (out - elements(c.g, v).value_or(out)), cost);
  return true;
}

bool where_infer(RuleContext& c) {
  const Shape* cond = c.shape(0);
  const Shape* x = c.shape(1);
  const Shape* y = c.shape(2);
  if (!cond || !x || !y) return false;
  const Shape out = broadcast_shapes(broadcast_shapes(*cond, *x, "operands"), *y, "operands");
  c.out(0, out, c.dtype(1));
  fold_elementwise(c, out, 0, 3, [](const std::vector<int64_t>& v) -> std::optional<int64_t> { return v[0] ? v[1] : v[2]; });
  return true;
}

bool dropout_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  c.out(0, *x);
  c.out(1, *x, DType::Bool);
  if (const auto* d = c.ints(0)) c.out_ints(0, *d);
  return true;
}

// com.microsoft FastGelu / BiasGelu / BiasAdd: f(x + bias [+ skip]). The record's FLOPs per element count every
// input present; an absent optional bias or skip takes 1 off. Gradients: input 0 the record's per-element FLOPs;
// a broadcast bias the sum over the broadcast dims; a full-size skip passes through.
bool biased_cost(const CostContext& c, Cost& cost, std::string&) {
  const Count out = c.out_elems();
  const OpRecord& r = op_record(c.n.op);
  const int absent = static_cast<int>(r.roles.size()) - static_cast<int>(std::count_if(
      c.n.inputs.begin(), c.n.inputs.end(), [](int v) { return v >= 0; }));
  cost.flops = out * (r.fwd_flops_per_element - std::max(0, absent));
  c.add_grad(c.n.inputs[0], out * r.bwd_flops_a, cost);
  for (size_t i = 1; i < c.n.inputs.size(); ++i)
    if (c.n.inputs[i] >= 0) c.add_grad(c.n.inputs[i], out - elements(c.g, c.n.inputs[i]).value_or(out), cost);
  return true;
}

/// QuantizeLinear / DequantizeLinear: the output has x's shape; DequantizeLinear's element type is the scale's
/// (fp32), QuantizeLinear's the zero point's (uint8 without one). A per-axis scale has one value per `axis` slice.
bool quantize_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  if (const Shape* s = c.shape(1); s && s->rank() == 1 && s->dims[0] > 1 && x->rank() > 0) {
    const int axis = c.axis(c.n.attrs.i("axis", 1), x->rank());
    if (x->dims[axis] >= 0 && s->dims[0] >= 0 && x->dims[axis] != s->dims[0] && !c.n.attrs.has("block_size"))
      throw RuleError(fmt::format("{} scales per axis {}, which has {}", s->dims[0], axis, x->dims[axis]));
  }
  DType t = DType::U8;
  if (c.n.op == OpKind::DequantizeLinear) t = c.present(1) && is_float(c.dtype(1)) ? c.dtype(1) : DType::F32;
  else if (c.present(2) && c.dtype(2) != DType::Unknown) t = c.dtype(2);
  c.out(0, *x, t);
  return true;
}

// DequantizeLinear: (x - zero_point) * scale, 2 FLOPs per element (1 without a zero point). QuantizeLinear:
// saturate(round(x / scale) + zero_point): divide, round, add, clamp at both ends = 5 (4 without a zero point).
// No gradient: one side of each is integer.
bool quantize_cost(const CostContext& c, Cost& cost, std::string&) {
  const bool zero_point = c.present(2);
  cost.flops = c.out_elems() * (op_record(c.n.op).fwd_flops_per_element - (zero_point ? 0 : 1));
  return true;
}

/// DynamicQuantizeLinear: y (uint8, x's shape), y_scale (fp32 scalar) and y_zero_point (uint8 scalar).
bool dynamic_quantize_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  c.out(0, *x, DType::U8);
  c.out(1, Shape{}, DType::F32);
  c.out(2, Shape{}, DType::U8);
  return true;
}

// The input's min and max (2 (E - 1) comparisons), the scale and zero point (9 scalar operations: the range
// widened to hold 0 (2), (max - min) / 255 (2), saturate(round(0 - min / scale)) (5)), then QuantizeLinear's 5
// per element: 7E + 7. No gradient.
bool dynamic_quantize_cost(const CostContext& c, Cost& cost, std::string&) {
  const Count e = c.in_elems();
  cost.flops = e > 0 ? 7 * e + 7 : 0;
  return true;
}

/// IsNaN, IsInf: a boolean of the input's shape.
bool classify_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  c.out(0, *x, DType::Bool);
  return true;
}

/// Bernoulli: a draw per element of the input's shape, of the type its `dtype` attribute names (else the input's).
bool bernoulli_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  c.out(0, *x, attr_dtype(c, DType::Unknown));
  return true;
}

// Dropout while training: y = x * mask * 1 / (1 - p), 1 FLOP per element (the random draw is not arithmetic on the
// data); its gradient the same mask and scale. At inference a view: nothing.
bool dropout_cost(const CostContext& c, Cost& cost, std::string&) {
  if (!dropout_active(c.g, c.n)) return true;
  const Count out = c.out_elems();
  cost.flops = out;
  c.add_grad(c.n.inputs[0], out, cost);
  return true;
}

}  // namespace

/// Selection and data movement: no arithmetic either way (gradients pass through or are scattered).
bool no_cost(const CostContext&, Cost&, std::string&) { return true; }

const OpRule rule_unary{unary_infer, unary_cost};
const OpRule rule_binary{binary_infer, binary_cost};
const OpRule rule_where{where_infer, no_cost};
// Not: logic on bools is no floating-point work (binary_cost charges float inputs only; no gradient).
const OpRule rule_logical_not{unary_infer, binary_cost};
const OpRule rule_biased{unary_infer, biased_cost};
const OpRule rule_dropout{dropout_infer, dropout_cost};
const OpRule rule_quantize{quantize_infer, quantize_cost};
const OpRule rule_variadic{variadic_infer, variadic_cost};
const OpRule rule_dynamic_quantize{dynamic_quantize_infer, dynamic_quantize_cost};
// IsNaN, IsInf: one classification per element (its record's FLOPs), no gradient.
const OpRule rule_classify{classify_infer, unary_cost};
// Bernoulli: one comparison of a uniform draw with the probability per element (the draw is no arithmetic on the
// data, as Dropout's mask); no gradient.
const OpRule rule_bernoulli{bernoulli_infer, unary_cost};

}  // namespace ridge::ops
