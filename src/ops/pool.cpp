// Pooling family: MaxPool, AveragePool, AdaptiveAvgPool (torch's, with an output size) and GlobalAveragePool
// — shape inference and cost.
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

}  // namespace

const OpRule rule_global_max_pool{global_pool_infer, global_max_pool_cost};
const OpRule rule_max_pool{pool_infer, max_pool_cost};
const OpRule rule_avg_pool{pool_infer, avg_pool_cost};
const OpRule rule_adaptive_avg_pool{adaptive_pool_infer, adaptive_pool_cost};
const OpRule rule_global_avg_pool{global_pool_infer, global_pool_cost};

}  // namespace ridge::ops
