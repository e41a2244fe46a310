// Data-movement family: views (Reshape, Flatten, Squeeze, Unsqueeze, Identity), moves (Transpose, Concat, Split,
// Slice, Expand, Pad, Cast), Gather, Resize and the shape sources (Shape, Constant, ConstantOfShape, Range) —
// shape inference with folding of small integer payloads, so that exporters' Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape chains resolve to concrete shapes; and cost (no arithmetic, except Gather's backward
// scatter and Resize's interpolation).
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <variant>

#include "ops/family.hpp"

namespace ridge::ops {

namespace {

bool unary_passthrough(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  const bool cast = c.n.op == OpKind::Cast || c.n.op == OpKind::CastLike;
  DType t = c.n.op == OpKind::Cast       ? dtype_from_onnx(static_cast<int>(c.n.attrs.i("to", 0)))
            : c.n.op == OpKind::CastLike ? c.dtype(1)  // the type of its second input
                                         : DType::Unknown;
  c.out(0, *x, t);
  if (const auto* d = c.ints(0)) {
    std::vector<int64_t> v = *d;
    if (cast && t == DType::Bool)
      for (auto& e : v) e = e != 0;
    c.out_ints(0, std::move(v));
  } else if (!cast || is_float(t)) {  // Identity, or float to float: the payload (at the new precision)
    fold_reals(c, *x, 0, 1, [](const std::vector<double>& v) -> std::optional<double> { return v[0]; });
  } else if (cast && is_integral(t)) {
    if (auto reals = c.reals(0)) {  // truncated toward zero; NaN, inf and values past int64 leave it unfolded
      std::vector<int64_t> v;
      for (double r : *reals) {
        if (!std::isfinite(r) || std::fabs(r) >= 9.2e18) return true;
        v.push_back(static_cast<int64_t>(r));
      }
      c.out_ints(0, std::move(v));
    }
  }
  return true;
}

bool shape_of(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  const int r = x->rank();
  int64_t start = c.n.attrs.i("start", 0), end = c.n.attrs.i("end", r);
  start = std::clamp<int64_t>(start < 0 ? start + r : start, 0, r);
  end = std::clamp<int64_t>(end < 0 ? end + r : end, 0, r);
  const std::vector<int64_t> dims(x->dims.begin() + start, x->dims.begin() + std::max(start, end));
  c.out(0, Shape{{static_cast<int64_t>(dims.size())}}, DType::I64);
  if (std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; })) c.out_ints(0, dims);
  return true;
}

bool constant_of_shape(RuleContext& c) {
  const auto* dims = c.ints(0);
  if (!dims) return false;
  for (int64_t d : *dims)
    if (d < 0 || d > kMaxDim) throw RuleError("ConstantOfShape with a negative or absurd dim");
  const auto& fill = c.n.attrs.items.find("value");
  const bool int_fill = fill != c.n.attrs.items.end() && std::holds_alternative<int64_t>(fill->second);
  c.out(0, Shape{*dims}, int_fill ? DType::I64 : DType::F32);
  if (int_fill && product(*dims) <= kMaxFoldElements)
    c.out_ints(0, std::vector<int64_t>(product(*dims), std::get<int64_t>(fill->second)));
  return true;
}

bool range(RuleContext& c) {
  auto start = c.reals(0), limit = c.reals(1), delta = c.reals(2);
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 || delta->size() != 1) {
    c.out(0, Shape{{-1}}, c.dtype(0));
    return false;
  }
  const double s = (*start)[0], l = (*limit)[0], d = (*delta)[0];
  if (d == 0) throw RuleError("Range with delta 0");
  const double count = std::max(std::ceil((l - s) / d), 0.0);
  if (count > static_cast<double>(kMaxDim)) throw RuleError("Range with an absurd number of elements");
  const int64_t n = static_cast<int64_t>(count);
  c.out(0, Shape{{n}}, c.dtype(0));
  if (c.ints(0) && c.ints(1) && c.ints(2) && n <= kMaxFoldElements) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(c.ints(0)->at(0) + i * c.ints(2)->at(0));
    c.out_ints(0, std::move(v));
  }
  return true;
}

bool gather(RuleContext& c) {
  const Shape* data = c.shape(0);
  const Shape* idx = c.shape(1);
  if (!data || !idx) return false;
  if (data->rank() == 0) throw RuleError("Gather from a scalar");
  const int axis = c.axis(c.n.attrs.i("axis", 0), data->rank());
  Shape out{{data->dims.begin(), data->dims.begin() + axis}};
  out.dims.insert(out.dims.end(), idx->dims.begin(), idx->dims.end());
  out.dims.insert(out.dims.end(), data->dims.begin() + axis + 1, data->dims.end());
  c.out(0, out, c.dtype(0));
  const auto* d = c.ints(0);
  const auto* i = c.ints(1);
  if (d && i && data->rank() == 1 && data->known()) {
    std::vector<int64_t> v;
    const int64_t n = data->dims[0];
    for (int64_t k : *i) {
      if (k < -n || k >= n) throw RuleError(fmt::format("index {} out of range for {} elements", k, n));
      v.push_back((*d)[k < 0 ? k + n : k]);
    }
    c.out_ints(0, std::move(v));
  }
  return true;
}

bool reshape(RuleContext& c) {
  const Shape* x = c.shape(0);
  const auto* target = c.ints(1);
  if (!target) {
    if (c.n.attrs.has("shape")) {  // opset < 5: the shape is an attribute
      static thread_local std::vector<int64_t> attr;
      attr = c.n.attrs.ints("shape");
      target = &attr;
    } else {
      if (const Shape* t = c.shape(1); t && t->rank() == 1 && t->dims[0] >= 0)
        c.out(0, Shape{std::vector<int64_t>(t->dims[0], -1)});
      return false;
    }
  }
  const bool allow_zero = c.n.attrs.i("allowzero", 0) != 0;
  Shape out;
  int infer = -1;
  for (size_t i = 0; i < target->size(); ++i) {
    int64_t d = (*target)[i];
    if (d == 0 && !allow_zero) d = x && i < static_cast<size_t>(x->rank()) ? x->dims[i] : -1;
    else if (d == -1) {
      if (infer >= 0) throw RuleError("Reshape with two -1 dims");
      infer = static_cast<int>(i);
      d = -1;
    } else if (d < -1) throw RuleError(fmt::format("Reshape to a negative dim {}", d));
    out.dims.push_back(d);
  }
  if (infer >= 0 && x && x->known()) {
    std::vector<int64_t> rest = out.dims;
    rest.erase(rest.begin() + infer);
    const int64_t total = product(x->dims), part = product(rest);
    if (part > 0) {
      if (total % part != 0) throw RuleError(fmt::format("cannot reshape {} into {}", to_string(*x), to_string(out)));
      out.dims[infer] = total / part;
    }
  }
  if (x && x->known() && out.known() && product(x->dims) != product(out.dims))
    throw RuleError(fmt::format("cannot reshape {} into {}", to_string(*x), to_string(out)));
  c.out(0, out);
  if (const auto* d = c.ints(0)) c.out_ints(0, *d);
  return true;
}

/// Axes of Squeeze/Unsqueeze: input 1 (opset 13+) or the attribute; nullopt when not known.
std::optional<std::vector<int64_t>> axes_of(RuleContext& c) {
  if (c.present(1)) {
    if (const auto* a = c.ints(1)) return *a;
    return std::nullopt;
  }
  return c.n.attrs.ints("axes");
}

bool squeeze(RuleContext& c) {
  const Shape* x = c.shape(0);
  auto axes = axes_of(c);
  if (!x || !axes) return false;
  std::vector<bool> drop(x->rank(), false);
  if (axes->empty()) {
    if (!x->known()) return false;
    for (int i = 0; i < x->rank(); ++i) drop[i] = x->dims[i] == 1;
  }
  for (int64_t a : *axes) {
    int i = c.axis(a, x->rank());
    if (x->dims[i] > 1) throw RuleError(fmt::format("cannot squeeze dim {} of size {}", i, x->dims[i]));
    drop[i] = true;
  }
  Shape out;
  for (int i = 0; i < x->rank(); ++i)
    if (!drop[i]) out.dims.push_back(x->dims[i]);
  c.out(0, out);
  if (const auto* d = c.ints(0)) c.out_ints(0, *d);
  return true;
}

bool unsqueeze(RuleContext& c) {
  const Shape* x = c.shape(0);
  auto axes = axes_of(c);
  if (!x || !axes) return false;
  const int rank = x->rank() + static_cast<int>(axes->size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    int i = c.axis(a, rank);
    if (inserted[i]) throw RuleError("Unsqueeze with a repeated axis");
    inserted[i] = true;
  }
  Shape out;
  for (int i = 0, j = 0; i < rank; ++i) out.dims.push_back(inserted[i] ? 1 : x->dims[j++]);
  c.out(0, out);
  if (const auto* d = c.ints(0)) c.out_ints(0, *d);
  return true;
}

bool concat(RuleContext& c) {
  const Shape* first = c.shape(0);
  if (!first) return false;
  const int axis = c.axis(c.n.attrs.i("axis", 0), first->rank());
  Shape out = *first;
  std::vector<int64_t> data;
  bool foldable = first->rank() == 1;
  for (int i = 0; i < c.inputs(); ++i) {
    const Shape* s = c.shape(i);
    if (!s) return false;
    if (s->rank() != first->rank()) throw RuleError("Concat inputs have different ranks");
    for (int d = 0; d < s->rank(); ++d)
      if (d != axis && out.dims[d] < 0) out.dims[d] = s->dims[d];
    if (i > 0) out.dims[axis] = out.dims[axis] < 0 || s->dims[axis] < 0 ? -1 : out.dims[axis] + s->dims[axis];
    if (const auto* d = c.ints(i)) data.insert(data.end(), d->begin(), d->end());
    else foldable = false;
  }
  c.out(0, out);
  if (foldable && out.known() && static_cast<int64_t>(data.size()) == out.dims[0]) c.out_ints(0, std::move(data));
  return true;
}

bool split(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  const int axis = c.axis(c.n.attrs.i("axis", 0), x->rank());
  std::vector<int64_t> sizes;
  if (c.present(1)) {
    const auto* s = c.ints(1);
    if (!s) return false;
    sizes = *s;
  } else {
    sizes = c.n.attrs.ints("split");
  }
  const int64_t d = x->dims[axis];
  if (sizes.empty()) {
    if (d < 0) return false;
    const int64_t parts = c.n.attrs.i("num_outputs", c.outputs());
    if (parts <= 0) throw RuleError("Split into no outputs");
    const int64_t each = (d + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::max<int64_t>(0, std::min(each, d - i * each)));
  }
  if (static_cast<int>(sizes.size()) != c.outputs()) throw RuleError("Split sizes do not match the outputs");
  if (int64_t sum = 0; d >= 0) {
    for (int64_t s : sizes) sum += std::max<int64_t>(s, 0);
    if (sum != d) throw RuleError(fmt::format("Split sizes [{}] do not add up to dim {} ({})", fmt::join(sizes, ", "),
                                              axis, d));
  }
  int64_t offset = 0;
  for (int k = 0; k < c.outputs(); ++k) {
    if (sizes[k] < 0) throw RuleError("negative split size");
    Shape out = *x;
    out.dims[axis] = sizes[k];
    c.out(k, out);
    if (const auto* data = c.ints(0); data && x->rank() == 1 && offset + sizes[k] <= static_cast<int64_t>(data->size()))
      c.out_ints(k, {data->begin() + offset, data->begin() + offset + sizes[k]});
    offset += sizes[k];
  }
  return true;
}

bool slice(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.inputs() >= 3) {
    const auto *s = c.ints(1), *e = c.ints(2);
    if (!s || !e) return false;
    starts = *s;
    ends = *e;
    if (c.present(3)) {
      if (!c.ints(3)) return false;
      axes = *c.ints(3);
    }
    if (c.present(4)) {
      if (!c.ints(4)) return false;
      steps = *c.ints(4);
    }
  } else {
    starts = c.n.attrs.ints("starts");
    ends = c.n.attrs.ints("ends");
    axes = c.n.attrs.ints("axes");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw RuleError("Slice starts/ends/axes/steps differ in length");
  Shape out = *x;
  std::vector<int64_t> first(x->rank(), 0), step(x->rank(), 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int a = c.axis(axes[i], x->rank());
    const int64_t d = x->dims[a], st = steps[i];
    if (st == 0) throw RuleError("Slice step 0");
    if (d < 0) {
      out.dims[a] = -1;
      continue;
    }
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b = b < -d ? (st > 0 ? 0 : -1) : b + d;
    if (e < 0) e = e < -d ? -1 : e + d;
    if (st > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      out.dims[a] = e > b ? (e - b + st - 1) / st : 0;
    } else {
      b = std::clamp<int64_t>(b, -1, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      out.dims[a] = b > e ? (b - e + (-st) - 1) / (-st) : 0;
    }
    first[a] = b;
    step[a] = st;
  }
  c.out(0, out);
  const auto* data = c.ints(0);
  const int64_t n = out.known() ? product(out.dims) : -1;
  if (!data || n < 0 || !x->known() || static_cast<int64_t>(data->size()) != product(x->dims)) return true;
  std::vector<int64_t> stride(x->rank(), 1), index(x->rank(), 0), v;
  for (int d = x->rank() - 2; d >= 0; --d) stride[d] = stride[d + 1] * x->dims[d + 1];
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (int d = 0; d < x->rank(); ++d) src += (first[d] + index[d] * step[d]) * stride[d];
    v.push_back(data->at(src));
    for (int d = x->rank() - 1; d >= 0 && ++index[d] == out.dims[d]; --d) index[d] = 0;
  }
  c.out_ints(0, std::move(v));
  return true;
}

bool expand(RuleContext& c) {
  const Shape* x = c.shape(0);
  const auto* target = c.ints(1);
  if (!x) return false;
  if (!target) {  // a computed target: an output shape the file declares must be one the input broadcasts to
    const Shape* declared = c.out_shape(0);
    if (declared && declared->known() && broadcast_shapes(*x, *declared, "Expand") != *declared)
      throw RuleError("Expand of " + to_string(*x) + " cannot give the declared " + to_string(*declared));
    return false;
  }
  for (int64_t d : *target)
    if (d < 0 || d > kMaxDim) throw RuleError("Expand to a negative or absurd dim");
  const Shape out = broadcast_shapes(*x, Shape{*target}, "Expand");
  c.out(0, out);
  fold_elementwise(c, out, 0, 1, [](const std::vector<int64_t>& v) -> std::optional<int64_t> { return v[0]; });
  return true;
}

bool pad(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  std::vector<int64_t> pads;
  if (c.present(1)) {
    if (!c.ints(1)) return false;
    pads = *c.ints(1);
  } else {
    pads = c.n.attrs.ints("pads");
  }
  std::vector<int64_t> axes;
  if (c.present(3)) {
    if (!c.ints(3)) return false;
    for (int64_t a : *c.ints(3)) axes.push_back(c.axis(a, x->rank()));
  } else {
    for (int i = 0; i < x->rank(); ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size()) throw RuleError("Pad pads do not match the input rank");
  Shape out = *x;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t& d = out.dims[axes[i]];
    if (d >= 0) d += pads[i] + pads[i + axes.size()];
    if (d < -1 || (x->dims[axes[i]] >= 0 && d < 0)) throw RuleError("Pad makes a dim negative");
  }
  c.out(0, out);
  return true;
}


bool flatten(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  const int64_t a = c.n.attrs.i("axis", 1);
  if (a < -x->rank() || a > x->rank()) throw RuleError("Flatten axis out of range");
  const size_t axis = static_cast<size_t>(a < 0 ? a + x->rank() : a);
  c.out(0, Shape{{product(x->dims, 0, axis), product(x->dims, axis)}});
  return true;
}

bool transpose(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  std::vector<int64_t> perm = c.n.attrs.ints("perm");
  if (perm.empty())
    for (int i = x->rank() - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int>(perm.size()) != x->rank()) throw RuleError("perm does not match the input rank");
  std::vector<char> seen(x->rank(), 0);
  for (int64_t p : perm)
    if (seen[c.axis(p, x->rank())]++)
      throw RuleError(fmt::format("perm [{}] is not a permutation", fmt::join(perm, ", ")));
  Shape out;
  for (int64_t p : perm) out.dims.push_back(x->dims[c.axis(p, x->rank())]);
  c.out(0, out);
  // Integer payloads (torch's pad lowering reverses [begin, end] pairs with Reshape, Slice, Transpose, Reshape).
  const std::vector<int64_t>* data = c.ints(0);
  const int64_t n = product(out.dims);
  if (!data || n < 0 || static_cast<int64_t>(data->size()) != n) return true;
  std::vector<int64_t> in_stride(x->rank(), 1);
  for (int d = x->rank() - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * x->dims[d + 1];
  std::vector<int64_t> folded(n), index(out.rank(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (int d = 0; d < out.rank(); ++d) src += index[d] * in_stride[c.axis(perm[d], x->rank())];
    folded[i] = (*data)[src];
    for (int d = out.rank() - 1; d >= 0 && ++index[d] == out.dims[d]; --d) index[d] = 0;
  }
  c.out_ints(0, std::move(folded));
  return true;
}

/// `x` with each of `axes` scaled by its factor (floored, as ONNX's Resize and Upsample); unknown dims stay unknown.
Shape scaled(const Shape& x, const std::vector<int>& axes, const std::vector<double>& scales) {
  Shape out = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t d = x.dims[axes[i]];
    out.dims[axes[i]] = d < 0 ? -1 : static_cast<int64_t>(static_cast<double>(d) * scales[i]);
  }
  return out;
}

bool resize(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  // opset 10: (X, scales); opset 11+: (X, roi, scales, sizes); opset 18: scales or sizes for `axes` only.
  const int scales_at = c.inputs() == 2 ? 1 : 2;
  std::vector<int> axes;
  const char* against = c.n.attrs.has("axes") ? "its axes" : "the input rank";
  for (int64_t a : c.n.attrs.ints("axes")) {
    axes.push_back(c.axis(a, x->rank()));
    if (std::count(axes.begin(), axes.end(), axes.back()) > 1) throw RuleError("Resize axes repeat an axis");
  }
  if (axes.empty())
    for (int i = 0; i < x->rank(); ++i) axes.push_back(i);
  if (const auto* sizes = c.ints(3); sizes && !sizes->empty()) {
    if (sizes->size() != axes.size()) throw RuleError(fmt::format("Resize sizes do not match {}", against));
    Shape out = *x;
    for (size_t i = 0; i < axes.size(); ++i) out.dims[axes[i]] = (*sizes)[i];
    c.out(0, out);
    return true;
  }
  auto scales = c.reals(scales_at);
  if (!scales || scales->empty()) return false;
  if (scales->size() != axes.size()) throw RuleError(fmt::format("Resize scales do not match {}", against));
  c.out(0, scaled(*x, axes, *scales));
  return true;
}

/// Upsample (opsets 7-9): scales as an attribute (opset 7) or input 1 (opset 9); then as Resize.
bool upsample(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  const auto it = c.n.attrs.items.find("scales");
  if (it == c.n.attrs.items.end()) return resize(c);
  std::vector<double> scales;
  if (const auto* d = std::get_if<std::vector<double>>(&it->second)) scales = *d;
  else if (const auto* i = std::get_if<std::vector<int64_t>>(&it->second)) scales.assign(i->begin(), i->end());
  if (static_cast<int>(scales.size()) != x->rank()) throw RuleError("Upsample scales do not match the input rank");
  std::vector<int> every(static_cast<size_t>(x->rank()));
  for (int i = 0; i < x->rank(); ++i) every[static_cast<size_t>(i)] = i;
  c.out(0, scaled(*x, every, scales));
  return true;
}

/// DepthToSpace [N, C, H, W] -> [N, C/b^2, H*b, W*b]; SpaceToDepth the inverse.
bool block_move(RuleContext& c, bool to_space) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  if (x->rank() != 4) throw RuleError("needs an input [N, C, H, W]");
  const int64_t b = c.n.attrs.i("blocksize", 0);
  if (b <= 0) throw RuleError("blocksize must be positive");
  Shape out = *x;
  auto scale = [&](int i, bool up, int64_t f) {
    if (x->dims[i] < 0) return;
    if (!up && x->dims[i] % f != 0)
      throw RuleError(fmt::format("dim {} ({}) is not a multiple of {}", i, x->dims[i], f));
    out.dims[i] = up ? x->dims[i] * f : x->dims[i] / f;
  };
  scale(1, !to_space, b * b);
  scale(2, to_space, b);
  scale(3, to_space, b);
  c.out(0, out);
  return true;
}
bool depth_to_space(RuleContext& c) { return block_move(c, true); }
bool space_to_depth(RuleContext& c) { return block_move(c, false); }

/// Tile: each dim times its repeat count (input 1).
bool tile(RuleContext& c) {
  const Shape* x = c.shape(0);
  const auto* repeats = c.ints(1);
  if (!x || !repeats) return false;
  if (static_cast<int>(repeats->size()) != x->rank()) throw RuleError("Tile repeats do not match the input rank");
  Shape out = *x;
  for (int i = 0; i < x->rank(); ++i) {
    if ((*repeats)[i] < 0) throw RuleError("Tile repeats must not be negative");
    out.dims[i] = x->dims[i] < 0 ? -1 : x->dims[i] * (*repeats)[i];
  }
  c.out(0, out);
  return true;
}

/// GatherND: indices [..., k] pick slices of data after `batch_dims`: indices.shape[:-1] + data.shape[b + k:].
bool gather_nd(RuleContext& c) {
  const Shape* data = c.shape(0);
  const Shape* idx = c.shape(1);
  if (!data || !idx) return false;
  const int64_t b = c.n.attrs.i("batch_dims", 0);
  if (idx->rank() < 1 || idx->dims.back() < 0) return false;
  const int64_t k = idx->dims.back();
  if (b < 0 || b >= idx->rank() || b + k > data->rank())
    throw RuleError(fmt::format("GatherND: {} index dims after {} batch dims exceed rank {}", k, b, data->rank()));
  Shape out{{idx->dims.begin(), idx->dims.end() - 1}};
  out.dims.insert(out.dims.end(), data->dims.begin() + b + k, data->dims.end());
  c.out(0, out, c.dtype(0));
  return true;
}

/// OneHot (indices, depth, values): the indices' shape with `depth` inserted at `axis`, of the values' type.
bool one_hot(RuleContext& c) {
  const Shape* idx = c.shape(0);
  const auto depth = c.reals(1);
  if (!idx || !depth || depth->size() != 1) return false;
  if ((*depth)[0] < 1) throw RuleError("OneHot depth must be positive");
  const int axis = c.axis(c.n.attrs.i("axis", -1), idx->rank() + 1);
  Shape out = *idx;
  out.dims.insert(out.dims.begin() + axis, static_cast<int64_t>((*depth)[0]));
  c.out(0, out, c.present(2) ? c.dtype(2) : DType::F32);
  return true;
}

/// Size: the element count, an int64 scalar (its value folds when the shape is known).
bool size_of(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  c.out(0, Shape{}, DType::I64);
  if (x->known()) c.out_ints(0, {product(x->dims)});
  return true;
}

/// EyeLike: a 2-D tensor of the input's shape, ones on diagonal k, of `dtype` (else the input's type).
bool eye_like(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  if (x->rank() != 2) throw RuleError(fmt::format("EyeLike needs a 2-D input, not {}", to_string(*x)));
  c.out(0, *x, attr_dtype(c, c.dtype(0)));
  return true;
}

/// RandomNormal, RandomUniform (attribute `shape`) and their -Like forms (the input's shape); `dtype` or fp32
/// (the -Like forms: the input's type).
bool random_infer(RuleContext& c) {
  const bool like = c.n.op == OpKind::RandomNormalLike || c.n.op == OpKind::RandomUniformLike;
  if (like) {
    const Shape* x = c.shape(0);
    if (!x) return false;
    c.out(0, *x, attr_dtype(c, c.dtype(0)));
    return true;
  }
  if (!c.n.attrs.has("shape")) throw RuleError("the shape attribute is required");
  const auto dims = c.n.attrs.ints("shape");
  for (int64_t d : dims)
    if (d < 0 || d > kMaxDim)
      throw RuleError(fmt::format("shape [{}] has a negative or absurd dim", fmt::join(dims, ", ")));
  c.out(0, Shape{std::vector<int64_t>(dims)}, attr_dtype(c, DType::F32));
  return true;
}

/// ReverseSequence (input, sequence_lens [batch]): the input's shape; time_axis and batch_axis are 0 and 1.
bool reverse_sequence(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  const int64_t time = c.n.attrs.i("time_axis", 0), batch = c.n.attrs.i("batch_axis", 1);
  if ((time != 0 && time != 1) || (batch != 0 && batch != 1) || time == batch)
    throw RuleError(fmt::format("ReverseSequence time_axis {} and batch_axis {} must be 0 and 1", time, batch));
  if (x->rank() < 2)
    throw RuleError(fmt::format("ReverseSequence needs an input of rank 2 or more, not {}", to_string(*x)));
  if (const Shape* lens = c.shape(1)) {
    if (lens->rank() != 1)
      throw RuleError(fmt::format("ReverseSequence sequence_lens {} is not 1-D", to_string(*lens)));
    if (lens->dims[0] >= 0 && x->dims[batch] >= 0 && lens->dims[0] != x->dims[batch])
      throw RuleError(fmt::format("ReverseSequence has {} sequence lengths for a batch of {}", lens->dims[0],
                                  x->dims[batch]));
  }
  c.out(0, *x);
  return true;
}

bool constant_infer(RuleContext&) { return true; }  // set from its value attribute when the graph was built

// Embedding lookup: no arithmetic; backward scatter-adds rows into the table's gradient.
bool gather_cost(const CostContext& c, Cost& cost, std::string&) {
  c.add_grad(c.n.inputs[0], c.out_elems(), cost);
  return true;
}

// Tile copies; backward sums the gradient over the repeats: E(out) - E(in) adds.
bool tile_cost(const CostContext& c, Cost& cost, std::string&) {
  c.add_grad(c.n.inputs[0], c.out_elems() - c.in_elems(), cost);
  return true;
}

// Nearest: a copy. Linear: 2^d - 1 lerps of 3 FLOPs each per output, d = number of resized dims; the backward
// pass distributes each gradient with the same weights.
bool resize_cost(const CostContext& c, Cost& cost, std::string& reason) {
  const std::string mode = c.n.attrs.s("mode", "nearest");
  if (mode == "nearest") return true;
  if (mode != "linear") {
    reason = fmt::format("Resize mode '{}' has no cost rule", mode);
    return false;
  }
  const Shape& s = c.in_shape(0);
  const Shape& y = c.out_shape(0);
  int resized = 0;
  for (int i = 0; i < s.rank() && i < y.rank(); ++i) resized += s[i] != y[i];
  cost.flops = c.out_elems() * 3 * ((Count{1} << resized) - 1);
  c.add_grad(c.n.inputs[0], cost.flops, cost);
  return true;
}

}  // namespace

/// The element type named by attribute `dtype` (an ONNX TensorProto type), else `fallback`.
DType attr_dtype(const RuleContext& c, DType fallback) {
  if (!c.n.attrs.has("dtype")) return fallback;
  const int64_t code = c.n.attrs.i("dtype", 0);
  if (code < 1 || code > 23) throw RuleError(fmt::format("dtype {} is not an ONNX tensor type", code));
  return dtype_from_onnx(static_cast<int>(code));  // Unknown for types ridge does not size (int16, ...)
}

const OpRule rule_gather{gather, gather_cost};
const OpRule rule_reshape{reshape, no_cost};
const OpRule rule_flatten{flatten, no_cost};
const OpRule rule_squeeze{squeeze, no_cost};
const OpRule rule_unsqueeze{unsqueeze, no_cost};
const OpRule rule_passthrough{unary_passthrough, no_cost};
const OpRule rule_transpose{transpose, no_cost};
const OpRule rule_concat{concat, no_cost};
const OpRule rule_split{split, no_cost};
const OpRule rule_slice{slice, no_cost};
const OpRule rule_expand{expand, no_cost};
const OpRule rule_pad{pad, no_cost};
const OpRule rule_resize{resize, resize_cost};
const OpRule rule_upsample{upsample, resize_cost};
const OpRule rule_depth_to_space{depth_to_space, no_cost};
const OpRule rule_space_to_depth{space_to_depth, no_cost};
const OpRule rule_tile{tile, tile_cost};
const OpRule rule_gather_nd{gather_nd, gather_cost};
const OpRule rule_one_hot{one_hot, no_cost};
// Trilu keeps the upper or lower triangle: a masked copy of its input.
const OpRule rule_trilu{same_as_input, no_cost};
const OpRule rule_shape_of{shape_of, no_cost};
const OpRule rule_constant{constant_infer, no_cost};
const OpRule rule_constant_of_shape{constant_of_shape, no_cost};
const OpRule rule_range{range, no_cost};
const OpRule rule_size_of{size_of, no_cost};
const OpRule rule_eye_like{eye_like, no_cost};
// The generators' draws are no arithmetic on data: as ConstantOfShape, 0 FLOPs.
const OpRule rule_random{random_infer, no_cost};
const OpRule rule_reverse_sequence{reverse_sequence, no_cost};

}  // namespace ridge::ops
