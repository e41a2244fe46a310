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

}  // namespace

const OpRule rule_scatter_nd{scatter_nd_infer, scatter_cost};
const OpRule rule_scatter_elements{same_as_input, scatter_cost};
const OpRule rule_gather_elements{gather_elements_infer, no_cost};
const OpRule rule_topk{topk_infer, topk_cost};

}  // namespace ridge::ops
