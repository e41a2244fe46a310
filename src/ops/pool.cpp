// Pooling family: MaxPool, AveragePool, AdaptiveAvgPool (torch's, with an output size) and GlobalAveragePool
// — shape inference and cost.
#include <fmt/ranges.h>

#include <algorithm>

#include "ops/family.hpp"

namespace ridge::ops {

namespace {

bool pool_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  const auto kernel = c.n.attrs.ints("kernel_shape");
  if (kernel.empty()) throw RuleError("pooling needs kernel_shape");
  for (int64_t k : kernel)
    if (k <= 0) throw RuleError(fmt::format("kernel_shape [{}] must be positive", fmt::join(kernel, ", ")));
  return windowed(c, x->rank() > 1 ? x->dims[1] : -1, kernel);
}

bool global_pool_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x || x->rank() < 2) return false;
  Shape out = *x;
  std::fill(out.dims.begin() + 2, out.dims.end(), 1);
  c.out(0, out);
  return true;
}

bool adaptive_pool_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  const auto size = c.n.attrs.ints("output_size");
  if (!x || x->rank() < 2 || static_cast<int>(size.size()) != x->rank() - 2) return false;
  Shape out{{x->dims[0], x->dims[1]}};
  out.dims.insert(out.dims.end(), size.begin(), size.end());
  c.out(0, out);
  return true;
}

// Comparisons: taps - 1 per output; backward scatters the gradient to the maxima (0 FLOPs).
bool max_pool_cost(const CostContext& c, Cost& cost, std::string&) {
  cost.flops = c.out_elems() * (pool_taps(c.g, c.n) - 1);
  return true;
}

// (taps - 1) adds + 1 divide per output; backward spreads each gradient over its window: 1 FLOP per input.
bool avg_pool_cost(const CostContext& c, Cost& cost, std::string&) {
  cost.flops = c.out_elems() * pool_taps(c.g, c.n);
  c.add_grad(c.n.inputs[0], c.in_elems(), cost);
  return true;
}

// Window sizes vary: the exact sum of (adds + divide) over every output, per N*C.
bool adaptive_pool_cost(const CostContext& c, Cost& cost, std::string&) {
  const Shape& s = c.in_shape(0);
  cost.flops = Count{s[0]} * s[1] * pool_taps(c.g, c.n);
  c.add_grad(c.n.inputs[0], c.in_elems(), cost);
  return true;
}

bool global_pool_cost(const CostContext& c, Cost& cost, std::string&) {
  cost.flops = c.in_elems();
  c.add_grad(c.n.inputs[0], c.in_elems(), cost);
  return true;
}

// GlobalMaxPool: E(in) - E(out) comparisons; backward scatters the gradient to the maxima (0 FLOPs).
bool global_max_pool_cost(const CostContext& c, Cost& cost, std::string&) {
  cost.flops = c.in_elems() - c.out_elems();
  return true;
}

bool lp_pool_infer(RuleContext& c) {
  if (const int64_t p = c.n.attrs.i("p", 2); p < 1) throw RuleError(fmt::format("LpPool p {} must be positive", p));
  return c.n.op == OpKind::GlobalLpPool ? global_pool_infer(c) : pool_infer(c);
}

// (sum over the window of |x|^p)^(1/p): a power and an add per tap, less one add, plus the root per output =
// 2 taps E(out). Backward dy * (|x| / y)^(p-1) * sign(x) scattered: divide, power, multiply, accumulate per tap =
// 4 taps E(out). GlobalLpPool: the window is the whole plane, 2 E(in) and 4 E(in).
bool lp_pool_cost(const CostContext& c, Cost& cost, std::string&) {
  const Count pairs = c.n.op == OpKind::GlobalLpPool ? c.in_elems() : c.out_elems() * pool_taps(c.g, c.n);
  cost.flops = 2 * pairs;
  c.add_grad(c.n.inputs[0], 4 * pairs, cost);
  return true;
}

/// MaxUnpool (X, I, output_shape): output_shape when given (its values, else only its rank is known); otherwise
/// N, C, then (in - 1) * stride + kernel - pads per spatial dim, the inverse of MaxPool's extent.
bool max_unpool_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  if (x->rank() < 3)
    throw RuleError(fmt::format("MaxUnpool needs an input [N, C, spatial...], not {}", to_string(*x)));
  if (const Shape* i = c.shape(1); i && i->known() && x->known() && !(*i == *x))
    throw RuleError(fmt::format("MaxUnpool indices {} differ from the input {}", to_string(*i), to_string(*x)));
  const int spatial = x->rank() - 2;
  const auto kernel = c.n.attrs.ints("kernel_shape");
  const auto strides = c.n.attrs.ints("strides", std::vector<int64_t>(spatial, 1));
  const auto pads = c.n.attrs.ints("pads", std::vector<int64_t>(2 * spatial, 0));
  if (static_cast<int>(kernel.size()) != spatial || static_cast<int>(strides.size()) != spatial ||
      static_cast<int>(pads.size()) != 2 * spatial)
    throw RuleError("MaxUnpool kernel_shape/strides/pads do not match the input rank");
  for (int k = 0; k < spatial; ++k)
    if (kernel[k] <= 0 || strides[k] <= 0 || pads[k] < 0 || pads[k + spatial] < 0)
      throw RuleError("MaxUnpool kernel_shape and strides must be positive, pads not negative");
  Shape out{{x->dims[0], x->dims[1]}};
  for (int k = 0; k < spatial; ++k) {
    const int64_t in = x->dims[2 + k];
    const int64_t d = in < 0 ? -1 : (in - 1) * strides[k] + kernel[k] - pads[k] - pads[k + spatial];
    if (in >= 0 && (d < 1 || d > kMaxDim))
      throw RuleError(fmt::format("MaxUnpool output extent {} is not positive", d));
    out.dims.push_back(d);
  }
  if (c.present(2)) {
    const Shape* s = c.shape(2);
    if (s && s->known() && (s->rank() != 1 || s->dims[0] != x->rank()))
      throw RuleError(fmt::format("MaxUnpool output_shape {} does not hold {} dims", to_string(*s), x->rank()));
    const auto* given = c.ints(2);
    if (!given) {
      std::fill(out.dims.begin() + 2, out.dims.end(), -1);
      c.out(0, out);
      return true;
    }
    if (static_cast<int>(given->size()) != x->rank())
      throw RuleError(fmt::format("MaxUnpool output_shape has {} values for rank {}", given->size(), x->rank()));
    for (int k = 0; k < x->rank(); ++k) {
      const int64_t g = (*given)[k];
      if (g < 1 || g > kMaxDim || (k < 2 && out.dims[k] >= 0 && g != out.dims[k]))
        throw RuleError(fmt::format("MaxUnpool output_shape [{}] does not hold the unpooled {}",
                                    fmt::join(*given, ", "), to_string(out)));
    }
    out.dims = *given;
  }
  c.out(0, out);
  return true;
}

}  // namespace

const OpRule rule_global_max_pool{global_pool_infer, global_max_pool_cost};
const OpRule rule_max_pool{pool_infer, max_pool_cost};
const OpRule rule_avg_pool{pool_infer, avg_pool_cost};
const OpRule rule_adaptive_avg_pool{adaptive_pool_infer, adaptive_pool_cost};
const OpRule rule_global_avg_pool{global_pool_infer, global_pool_cost};
const OpRule rule_lp_pool{lp_pool_infer, lp_pool_cost};
// MaxUnpool scatters each value to its index: no arithmetic either way.
const OpRule rule_max_unpool{max_unpool_infer, no_cost};

}  // namespace ridge::ops
