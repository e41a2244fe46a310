// Normalisation family: BatchNormalization, LayerNormalization, RMSNormalization — shape inference and cost.
#include <algorithm>

#include "ops/family.hpp"

namespace ridge::ops {

namespace {

bool batch_norm_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  c.out(0, *x);
  const int64_t channels = x->rank() > 1 ? x->dims[1] : -1;
  // scale, bias, mean and var hold one value per channel (opsets before 9 with spatial = 0: per activation).
  for (int i = 1; i < 5 && channels >= 0 && c.n.attrs.i("spatial", 1) != 0; ++i)
    if (const Shape* s = c.shape(i); s && s->known() && (s->rank() != 1 || s->dims[0] != channels))
      throw RuleError(fmt::format("input {} is {}, not one value per channel ({})", i, to_string(*s), channels));
  for (int k = 1; k < c.outputs(); ++k) c.out(k, Shape{{channels}});
  return true;
}

/// LayerNorm and RMSNorm: the output has the input's shape; optional statistics outputs are per row (fp32).
bool row_norm_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  c.out(0, *x);
  Shape stat = *x;
  for (int i = c.axis(c.n.attrs.i("axis", -1), x->rank()); i < x->rank(); ++i) stat.dims[i] = 1;
  for (int k = 1; k < c.outputs(); ++k) c.out(k, stat, DType::F32);
  return true;
}

/// Rows (normalised groups) of a LayerNorm/RMSNorm input: the product of the dims before `axis`.
Count norm_rows(const CostContext& c) {
  const Shape& s = c.in_shape(0);
  int64_t axis = c.n.attrs.i("axis", -1);
  if (axis < 0) axis += s.rank();
  Count rows = 1;
  for (int i = 0; i < axis && i < s.rank(); ++i) rows *= s[i];
  return rows;
}

// Inference: y = x * scale + shift with per-channel scale/shift folded from gamma, beta, mean, var.
bool batch_norm_cost(const CostContext& c, Cost& cost, std::string&) {
  const Count out = c.out_elems();
  cost.flops = 2 * out;
  c.add_grad(c.n.inputs[0], 8 * out, cost);             // dx from dy, x-hat and the two per-channel reductions
  if (c.present(1)) c.add_grad(c.n.inputs[1], 2 * out, cost);  // dgamma = sum(dy * x-hat)
  if (c.present(2)) c.add_grad(c.n.inputs[2], out, cost);      // dbeta = sum(dy)
  return true;
}

/// LayerNorm's count over `rows` rows of E elements in all, with the scale and shift at inputs `scale` and
/// `shift`: mean (E), x - mean (E), square (E), variance mean (E), + eps and sqrt per row (2R), divide (E),
/// scale (E) if there is one, shift (E) if there is one: 7E + 2R, 6E + 2R without the shift (nn.LayerNorm(bias=False),
/// ONNX's optional B absent), 5E + 2R with neither; equal to the decomposed ONNX form (ReduceMean, Sub, Pow, ...).
/// Backward: 8E for the input, 2E for the scale, E for the shift.
Count layer_norm_terms(const CostContext& c, Count rows, size_t scale, size_t shift, Cost& cost) {
  const Count out = c.out_elems();
  const bool scaled = c.present(scale), shifted = c.present(shift);
  c.add_grad(c.n.inputs[0], 8 * out, cost);
  if (scaled) c.add_grad(c.n.inputs[scale], 2 * out, cost);
  if (shifted) c.add_grad(c.n.inputs[shift], out, cost);
  return (5 + (scaled ? 1 : 0) + (shifted ? 1 : 0)) * out + 2 * rows;
}

/// RMSNorm's count: square (E), mean of squares (E), + eps and sqrt per row (2R), divide (E), scale (E): 4E + 2R.
/// Backward: g = dy * scale (E), g * x (E), its row mean (E), x * that * rstd^2 (E), subtract (E), * rstd (E): 6E;
/// dscale = sum(dy * x-hat): 2E.
Count rms_norm_terms(const CostContext& c, Count rows, size_t scale, Cost& cost) {
  const Count out = c.out_elems();
  const bool affine = c.present(scale);
  c.add_grad(c.n.inputs[0], 6 * out, cost);
  if (affine) c.add_grad(c.n.inputs[scale], 2 * out, cost);
  return (affine ? 4 : 3) * out + 2 * rows;
}

bool layer_norm_cost(const CostContext& c, Cost& cost, std::string&) {
  cost.flops = layer_norm_terms(c, norm_rows(c), 1, 2, cost);
  return true;
}

bool rms_norm_cost(const CostContext& c, Cost& cost, std::string&) {
  cost.flops = rms_norm_terms(c, norm_rows(c), 1, cost);
  return true;
}

bool group_norm_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  if (x->rank() < 2) throw RuleError("GroupNormalization needs an input [N, C, ...]");
  const int64_t groups = c.n.attrs.i("num_groups", 0), channels = x->dims[1];
  if (groups <= 0 || (channels >= 0 && channels % groups != 0))
    throw RuleError(fmt::format("GroupNormalization: num_groups {} does not divide {} channels", groups, channels));
  c.out(0, *x);
  return true;
}

// The LayerNorm count over N * num_groups rows of C/num_groups * spatial elements: 7E + 2R (scale and bias per
// channel, as torch.nn.GroupNorm), backward as LayerNorm's.
bool group_norm_cost(const CostContext& c, Cost& cost, std::string&) {
  cost.flops = layer_norm_terms(c, Count{c.in_shape(0)[0]} * c.n.attrs.i("num_groups", 1), 1, 2, cost);
  return true;
}

bool instance_norm_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  if (x->rank() < 2) throw RuleError("InstanceNormalization needs an input [N, C, ...]");
  c.out(0, *x);
  return true;
}

// GroupNorm with one group per channel: the LayerNorm count over N * C rows of the spatial elements, 7E + 2R
// (scale and bias per channel), backward as LayerNorm's.
bool instance_norm_cost(const CostContext& c, Cost& cost, std::string&) {
  const Shape& s = c.in_shape(0);
  cost.flops = layer_norm_terms(c, Count{s[0]} * s[1], 1, 2, cost);
  return true;
}

/// com.microsoft Skip(Simplified)LayerNormalization: output, mean, inv_std (per row), input + skip + bias.
bool skip_norm_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  c.out(0, *x);
  Shape stat = *x;
  if (stat.rank()) stat.dims.back() = 1;
  for (int k = 1; k < 3 && k < c.outputs(); ++k) c.out(k, stat, DType::F32);
  c.out(3, *x);
  return true;
}

/// The fused residual: input + skip (+ bias): one FLOP per element each; the bias gradient is its reduction.
Count skip_add(const CostContext& c, size_t bias_input, Cost& cost) {
  const Count out = c.out_elems();
  const bool bias = c.present(bias_input);
  if (bias) c.add_grad(c.n.inputs[bias_input], out - elements(c.g, c.n.inputs[bias_input]).value_or(out), cost);
  return (bias ? 2 : 1) * out;
}

// SkipLayerNormalization (input, skip, gamma, beta, bias): the residual adds, then LayerNorm's 7E + 2R (5E + 2R
// without gamma); the gradient of input and skip is the same tensor (counted once, on input).
bool skip_layer_norm_cost(const CostContext& c, Cost& cost, std::string&) {
  cost.flops = skip_add(c, 4, cost) + layer_norm_terms(c, norm_rows(c), 2, 3, cost);
  return true;
}

// SkipSimplifiedLayerNormalization (input, skip, gamma, bias): the residual adds, then RMSNorm's 4E + 2R.
bool skip_rms_norm_cost(const CostContext& c, Cost& cost, std::string&) {
  cost.flops = skip_add(c, 3, cost) + rms_norm_terms(c, norm_rows(c), 2, cost);
  return true;
}

/// LRN: the input's shape, [N, C, ...]; `size` (the channel window) is required and positive.
bool lrn_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  if (x->rank() < 2) throw RuleError(fmt::format("LRN needs an input [N, C, ...], not {}", to_string(*x)));
  if (const int64_t size = c.n.attrs.i("size", 0); size <= 0)
    throw RuleError(fmt::format("LRN size {} must be positive (the attribute is required)", size));
  c.out(0, *x);
  return true;
}

// y = x / (bias + alpha / size * sum of x^2 over `size` channels)^beta. Per output: the window's squares and sum
// as `size` multiply-adds (2 size; the window counts every tap at the channel edges too, as padding taps of a
// convolution), times alpha / size, + bias, pow, divide: (2 size + 4) E. Backward: the window sum again
// (2 size + 2), dy * y / s (2), its window sum (size), times x and 2 alpha beta / size (2), dy * s^-beta (pow,
// multiply: 2), subtract (1): (3 size + 9) E.
bool lrn_cost(const CostContext& c, Cost& cost, std::string&) {
  const Count out = c.out_elems(), size = c.n.attrs.i("size", 1);
  cost.flops = out * (2 * size + 4);
  c.add_grad(c.n.inputs[0], out * (3 * size + 9), cost);
  return true;
}

/// LpNormalization: the input's shape; p is 1 or 2 (ONNX supports no other).
bool lp_norm_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  if (x->rank() == 0) throw RuleError("LpNormalization of a scalar");
  c.axis(c.n.attrs.i("axis", -1), x->rank());
  if (const int64_t p = c.n.attrs.i("p", 2); p != 1 && p != 2)
    throw RuleError(fmt::format("LpNormalization p {} is neither 1 nor 2", p));
  c.out(0, *x);
  return true;
}

// x / ||x||_p along `axis`, R rows: p = 2 squares (E), sums (E - R), sqrt (R), divides (E) = 3E; p = 1 abs
// (E), sums (E - R), divides (E) = 3E - R. Backward (dy - y * sum(dy * y)) / norm: dy * y (E), sum (E - R),
// y * it (E), subtract (E), divide (E) = 5E - R; p = 1 multiplies by sign(x) too: 6E - R.
bool lp_norm_cost(const CostContext& c, Cost& cost, std::string&) {
  const Shape& s = c.in_shape(0);
  int64_t axis = c.n.attrs.i("axis", -1);
  if (axis < 0) axis += s.rank();
  if (axis < 0 || axis >= s.rank())
    throw RuleError(fmt::format("axis {} out of range for rank {}", c.n.attrs.i("axis", -1), s.rank()));
  const Count e = c.out_elems(), len = s[static_cast<int>(axis)], rows = len > 0 ? e / len : 0;
  const bool l1 = c.n.attrs.i("p", 2) == 1;
  cost.flops = 3 * e - (l1 ? rows : 0);
  c.add_grad(c.n.inputs[0], (l1 ? 6 : 5) * e - rows, cost);
  return true;
}

/// MeanVarianceNormalization's normalised axes (default [0, 2, 3]) as indices of a rank-`rank` input.
std::vector<int> mvn_axes(const Node& n, int rank) {
  std::vector<int> axes;
  for (int64_t a : n.attrs.ints("axes", {0, 2, 3})) {
    if (a < -rank || a >= rank)
      throw RuleError(fmt::format("MeanVarianceNormalization axis {} out of range for rank {}", a, rank));
    const int i = static_cast<int>(a < 0 ? a + rank : a);
    if (std::find(axes.begin(), axes.end(), i) != axes.end())
      throw RuleError(fmt::format("MeanVarianceNormalization axis {} given twice", a));
    axes.push_back(i);
  }
  return axes;
}

bool mvn_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  mvn_axes(c.n, x->rank());
  c.out(0, *x);
  return true;
}

// The ONNX function: mean (E), mean^2 (R), x^2 (E), its mean (E), variance = E[x^2] - mean^2 (R), sqrt (R),
// x - mean (E), std + 1e-9 (R), divide (E) = 5E + 4R, R = groups (the product of the dims not normalised).
// Backward as LayerNorm's without affine: 8E.
bool mvn_cost(const CostContext& c, Cost& cost, std::string&) {
  const Shape& s = c.in_shape(0);
  Count len = 1;
  for (int i : mvn_axes(c.n, s.rank())) len *= s[i];
  const Count e = c.out_elems(), rows = len > 0 ? e / len : 0;
  cost.flops = 5 * e + 4 * rows;
  c.add_grad(c.n.inputs[0], 8 * e, cost);
  return true;
}

}  // namespace

const OpRule rule_group_norm{group_norm_infer, group_norm_cost};
const OpRule rule_instance_norm{instance_norm_infer, instance_norm_cost};
const OpRule rule_skip_layer_norm{skip_norm_infer, skip_layer_norm_cost};
const OpRule rule_skip_rms_norm{skip_norm_infer, skip_rms_norm_cost};
const OpRule rule_batch_norm{batch_norm_infer, batch_norm_cost};
const OpRule rule_layer_norm{row_norm_infer, layer_norm_cost};
const OpRule rule_rms_norm{row_norm_infer, rms_norm_cost};
const OpRule rule_lrn{lrn_infer, lrn_cost};
const OpRule rule_lp_norm{lp_norm_infer, lp_norm_cost};
const OpRule rule_mvn{mvn_infer, mvn_cost};

}  // namespace ridge::ops
