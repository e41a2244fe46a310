// Indexing family: ScatterND, ScatterElements, GatherElements and TopK — shape inference (ScatterND folds small
// integer payloads, as exporters write shape arithmetic with it) and cost.
#include "ops/family.hpp"

namespace ridge::ops {

namespace {

/// ScatterND: the output is `data` with slices replaced at `indices`; integer payloads fold (Swin's padding).
bool scatter_nd_infer(RuleContext& c) {
  const Shape* data = c.shape(0);
  if (!data) return false;
  c.out(0, *data);
  const Shape* idx = c.shape(1);
  const auto* d = c.ints(0);
  const auto* ix = c.ints(1);
  const auto* up = c.ints(2);
  if (!d || !ix || !up || !idx || !idx->known() || idx->rank() < 1 || !data->known()) return true;
  const int64_t k = idx->dims.back();
  if (k < 1 || k > data->rank()) return true;
  const int64_t slice = product(data->dims, static_cast<size_t>(k));
  const int64_t n = static_cast<int64_t>(ix->size()) / k;
  if (static_cast<int64_t>(d->size()) != product(data->dims) || static_cast<int64_t>(up->size()) != n * slice) return true;
  std::vector<int64_t> out = *d;
  for (int64_t u = 0; u < n; ++u) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = (*ix)[u * k + j];
      const int64_t dim = data->dims[j];
      if (i < 0) i += dim;
      if (i < 0 || i >= dim) throw RuleError("ScatterND: index out of range");
      offset = offset * dim + i;
    }
    for (int64_t e = 0; e < slice; ++e) out[offset * slice + e] = (*up)[u * slice + e];
  }
  c.out_ints(0, std::move(out));
  return true;
}

// Scatters replace (0 FLOPs); with reduction add/mul/max/min one FLOP per update element.
bool scatter_cost(const CostContext& c, Cost& cost, std::string&) {
  if (c.n.attrs.s("reduction", "none") != "none" && c.n.inputs.size() > 2 && is_float(c.g.value(c.n.inputs[0]).dtype))
    cost.flops = elements(c.g, c.n.inputs[2]).value_or(0);
  return true;
}

/// GatherElements: the output has the indices' shape.
bool gather_elements_infer(RuleContext& c) {
  const Shape* idx = c.shape(1);
  if (!idx) return false;
  c.out(0, *idx, c.dtype(0));
  return true;
}

/// TopK: values and int64 indices with the axis dim replaced by K (input 1, or the opset-1 attribute k).
bool topk_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  const int axis = c.axis(c.n.attrs.i("axis", -1), x->rank());
  int64_t k = c.n.attrs.i("k", -1);
  if (const auto* given = c.ints(1); given && given->size() == 1) k = (*given)[0];
  if (k < -1 || (k >= 0 && x->dims[axis] >= 0 && k > x->dims[axis])) throw RuleError("TopK: k out of range");
  Shape out = *x;
  out.dims[axis] = k;
  c.out(0, out);
  c.out(1, out, DType::I64);
  return true;
}

// One comparison per input element (a linear-time selection along the axis), as ArgMax counts len-1 per row;
// no FLOPs backward (the gradient is scattered to the selected positions).
bool topk_cost(const CostContext& c, Cost& cost, std::string&) {
  cost.flops = c.in_elems();
  return true;
}

/// NonZero: int64 indices [rank, number of non-zero elements]; the count folds when the input's values are known.
bool non_zero_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  const auto* d = c.ints(0);
  if (!d || !x->known() || static_cast<int64_t>(d->size()) != product(x->dims)) {
    c.out(0, Shape{{x->rank(), -1}}, DType::I64);
    return true;
  }
  std::vector<int64_t> flat;
  for (size_t e = 0; e < d->size(); ++e)
    if ((*d)[e] != 0) flat.push_back(static_cast<int64_t>(e));
  const int64_t count = static_cast<int64_t>(flat.size());
  c.out(0, Shape{{x->rank(), count}}, DType::I64);
  std::vector<int64_t> out(static_cast<size_t>(x->rank() * count));
  for (int64_t j = 0; j < count; ++j)
    for (int64_t i = x->rank() - 1, rest = flat[j]; i >= 0; --i) {
      out[static_cast<size_t>(i * count + j)] = rest % x->dims[i];
      rest /= x->dims[i];
    }
  c.out_ints(0, std::move(out));
  return true;
}

// One comparison with zero per input element on floats; 0 on integers (as the comparison ops).
bool non_zero_cost(const CostContext& c, Cost& cost, std::string&) {
  if (is_float(c.g.value(c.n.inputs[0]).dtype)) cost.flops = c.in_elems();
  return true;
}

/// Compress (input, condition [n]): along `axis` the slices whose condition is true (the first min(n, dim)),
/// without `axis` the flattened input's elements; the count folds when the condition's values are known.
bool compress_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  if (const Shape* cond = c.shape(1); cond && cond->rank() != 1)
    throw RuleError(fmt::format("Compress condition {} is not 1-D", to_string(*cond)));
  const bool has_axis = c.n.attrs.has("axis");
  const int axis = has_axis ? c.axis(c.n.attrs.i("axis", 0), x->rank()) : -1;
  const int64_t extent = has_axis ? x->dims[axis] : product(x->dims);
  int64_t count = -1;
  if (const auto* cond = c.ints(1); cond && extent >= 0) {
    count = 0;
    for (size_t i = 0; i < cond->size() && static_cast<int64_t>(i) < extent; ++i) count += (*cond)[i] != 0;
  }
  Shape out{{count}};
  if (has_axis) {
    out = *x;
    out.dims[axis] = count;
  }
  c.out(0, out);
  return true;
}

/// Unique (X): Y, indices, inverse_indices, counts. Y and the counts have as many entries as X has distinct
/// values (or slices along `axis`), which the values decide; inverse_indices has one per element (per slice).
bool unique_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  Shape y{{-1}};
  int64_t slices = product(x->dims);
  if (c.n.attrs.has("axis")) {
    const int axis = c.axis(c.n.attrs.i("axis", 0), x->rank());
    y = *x;
    y.dims[axis] = -1;
    slices = x->dims[axis];
  }
  c.out(0, y);
  c.out(1, Shape{{-1}}, DType::I64);
  c.out(2, Shape{{slices}}, DType::I64);
  c.out(3, Shape{{-1}}, DType::I64);
  return true;
}

/// NonMaxSuppression (boxes [B, S, 4], scores [B, C, S], ...): selected_indices [selected, 3], the count
/// decided by the scores and overlaps.
bool non_max_suppression_infer(RuleContext& c) {
  const Shape* boxes = c.shape(0);
  const Shape* scores = c.shape(1);
  if (boxes && (boxes->rank() != 3 || (boxes->dims[2] >= 0 && boxes->dims[2] != 4)))
    throw RuleError(fmt::format("NonMaxSuppression boxes {} are not [batch, boxes, 4]", to_string(*boxes)));
  if (scores && scores->rank() != 3)
    throw RuleError(fmt::format("NonMaxSuppression scores {} are not [batch, classes, boxes]", to_string(*scores)));
  if (boxes && scores)
    for (const auto& [b, s] : {std::pair{0, 0}, std::pair{1, 2}})
      if (boxes->dims[b] >= 0 && scores->dims[s] >= 0 && boxes->dims[b] != scores->dims[s])
        throw RuleError(fmt::format("NonMaxSuppression boxes {} and scores {} disagree", to_string(*boxes),
                                    to_string(*scores)));
  if (const int64_t center = c.n.attrs.i("center_point_box", 0); center != 0 && center != 1)
    throw RuleError(fmt::format("NonMaxSuppression center_point_box {} is neither 0 nor 1", center));
  c.out(0, Shape{{-1, 3}}, DType::I64);
  return true;
}

// Unique sorts and NonMaxSuppression compares overlaps of the boxes that survive: the work follows the values.
// Their outputs' extents are unknown anyway (the node is excluded as of unknown shape) unless a descriptor
// states them; even then the count is not costed.
bool data_dependent_cost(const CostContext& c, Cost&, std::string& reason) {
  reason = fmt::format("{}: the work depends on the tensor values (not costed)", op_name(c.n.op));
  return false;
}

}  // namespace

const OpRule rule_scatter_nd{scatter_nd_infer, scatter_cost};
const OpRule rule_scatter_elements{same_as_input, scatter_cost};
const OpRule rule_gather_elements{gather_elements_infer, no_cost};
const OpRule rule_topk{topk_infer, topk_cost};
const OpRule rule_non_zero{non_zero_infer, non_zero_cost};
const OpRule rule_compress{compress_infer, no_cost};
const OpRule rule_unique{unique_infer, data_dependent_cost};
const OpRule rule_non_max_suppression{non_max_suppression_infer, data_dependent_cost};

}  // namespace ridge::ops
