// Reference kernels that move data through per-axis index tables: Pad, Slice with steps != 1, and Resize
// (nearest as an index copy, linear as one interpolation pass per resized axis). Tables are built once when the
// program is built; every kernel has a backward (the transposed gather). Also the fill of ConstantOfShape and
// ScatterND, whose indices are read when the step runs (exporters compute them: Swin's shifted-window mask).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string_view>

#include "lowerings.hpp"

namespace ridge::exec {

namespace {

/// Calls f(out_offset, in_offset) for every output element in row-major order; in_offset is -1 where a map
/// holds -1. `in` are the input dims (row-major strides), maps.size() == in.size() >= 1.
template <typename F>
void for_each_source(const Dims& in, const AxisMaps& maps, F f) {
  const int rank = static_cast<int>(maps.size());
  for (const auto& m : maps)
    if (m.empty()) return;
  std::vector<int64_t> stride(rank, 1), idx(rank, 0);
  for (int a = rank - 2; a >= 0; --a) stride[a] = stride[a + 1] * in[a + 1];
  int64_t o = 0;
  for (;;) {
    int64_t base = 0;
    for (int a = 0; a + 1 < rank && base >= 0; ++a)
      base = maps[a][idx[a]] < 0 ? -1 : base + maps[a][idx[a]] * stride[a];
    for (int64_t j : maps.back()) f(o++, base < 0 || j < 0 ? -1 : base + j);
    int a = rank - 2;
    for (; a >= 0; --a) {
      if (++idx[a] < static_cast<int64_t>(maps[a].size())) break;
      idx[a] = 0;
    }
    if (a < 0) return;
  }
}

/// Index of `i` (outside [0, n)) reflected at the borders without repeating them, as numpy's "reflect".
int64_t reflect(int64_t i, int64_t n) {
  if (n == 1) return 0;
  const int64_t period = 2 * (n - 1);
  i = ((i % period) + period) % period;
  return i < n ? i : period - i;
}

/// One linear interpolation along an axis: data seen as [outer, in, inner] -> [outer, out, inner], output j
/// being w0[j] x[i0[j]] + w1[j] x[i1[j]].
struct LinearPass {
  int64_t outer, in, out, inner;
  std::vector<int64_t> i0, i1;
  std::vector<float> w0, w1;
};

void linear_forward(const LinearPass& s, const float* x, float* y) {
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t j = 0; j < s.out; ++j) {
      const float *a = x + (o * s.in + s.i0[j]) * s.inner, *b = x + (o * s.in + s.i1[j]) * s.inner;
      float* d = y + (o * s.out + j) * s.inner;
      for (int64_t k = 0; k < s.inner; ++k) d[k] = s.w0[j] * a[k] + s.w1[j] * b[k];
    }
}

/// The transposed pass: adds each output gradient into the two inputs it was interpolated from.
void linear_backward(const LinearPass& s, const float* dy, float* dx) {
  std::fill(dx, dx + s.outer * s.in * s.inner, 0.f);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t j = 0; j < s.out; ++j) {
      float *a = dx + (o * s.in + s.i0[j]) * s.inner, *b = dx + (o * s.in + s.i1[j]) * s.inner;
      const float* g = dy + (o * s.out + j) * s.inner;
      for (int64_t k = 0; k < s.inner; ++k) a[k] += s.w0[j] * g[k], b[k] += s.w1[j] * g[k];
    }
}

/// Input coordinate of output index j along an axis of `in` -> `out` elements (ONNX Resize). As in ONNX's
/// reference, the resized length is scale * in (not the rounded output length).
double source_coord(const std::string& ctm, int64_t j, int64_t in, int64_t out, double scale) {
  const double resized = scale * static_cast<double>(in), x = static_cast<double>(j);
  if (ctm == "asymmetric") return x / scale;
  if (ctm == "align_corners") return resized == 1 ? 0 : x * static_cast<double>(in - 1) / (resized - 1);
  if (ctm == "pytorch_half_pixel") return resized > 1 ? (x + 0.5) / scale - 0.5 : 0;
  if (ctm == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (ctm == "half_pixel_symmetric")
    return static_cast<double>(in) / 2 * (1 - static_cast<double>(out) / resized) + (x + 0.5) / scale - 0.5;
  return (x + 0.5) / scale - 0.5;  // half_pixel
}

/// Nearest input index of coordinate x: ties and fractions resolved by ONNX's nearest_mode, then clamped.
int64_t nearest_index(double x, const std::string& mode, int64_t in) {
  const double f = std::floor(x), r = x - f;
  int64_t i = static_cast<int64_t>(f);
  const bool up =
      mode == "ceil" || (mode == "round_prefer_floor" && r > 0.5) || (mode == "round_prefer_ceil" && r >= 0.5);
  if (r > 0 && up) ++i;
  return std::clamp<int64_t>(i, 0, in - 1);
}

/// Resize with linear interpolation: one pass per axis whose size or sampling changes, through intermediate
/// buffers; the backward runs the transposed passes in reverse.
void lower_resize_linear(Program& p, int ni, const std::string& ctm, const std::vector<double>& scale) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), Y = n.outputs.at(0);
  memory src = p.plain(X, ni);
  Dims dims = src.get_desc().dims();
  const Dims out = to_dims(shape_of(p, Y));
  auto passes = std::make_shared<std::vector<LinearPass>>();
  std::vector<memory> bufs{src};
  for (size_t a = 0; a < dims.size(); ++a) {
    LinearPass s{1, dims[a], out[a], 1, {}, {}, {}, {}};
    for (size_t k = 0; k < a; ++k) s.outer *= dims[k];
    for (size_t k = a + 1; k < dims.size(); ++k) s.inner *= dims[k];
    bool identity = s.in == s.out;
    for (int64_t j = 0; j < s.out; ++j) {
      const double x = source_coord(ctm, j, s.in, s.out, scale[a]), f = std::floor(x);
      const int64_t i = static_cast<int64_t>(f);
      s.i0.push_back(std::clamp<int64_t>(i, 0, s.in - 1));
      s.i1.push_back(std::clamp<int64_t>(i + 1, 0, s.in - 1));
      s.w0.push_back(static_cast<float>(1 - (x - f)));
      s.w1.push_back(static_cast<float>(x - f));
      identity &= s.i0.back() == j && s.w0.back() == 1.f;
    }
    if (identity) continue;
    dims[a] = s.out;
    passes->push_back(std::move(s));
    bufs.push_back(p.alloc(plain_desc(dims)));
  }
  if (passes->empty()) bufs.push_back(p.alloc(src.get_desc()));  // nothing resized: a copy
  p.set_value(Y, bufs.back());
  Step& step = p.add_step(ni, "reference", [passes, bufs] {
    if (passes->empty()) std::copy_n(data_of(bufs[0]), element_count(bufs[0].get_desc()), data_of(bufs[1]));
    for (size_t k = 0; k < passes->size(); ++k) linear_forward((*passes)[k], data_of(bufs[k]), data_of(bufs[k + 1]));
  });
  if (!p.needs_grad(Y) || !p.needs_grad(X)) return;
  std::vector<memory> grads;  // grads[k]: gradient of bufs[k]; the last is Y's
  for (size_t k = 0; k + 1 < bufs.size(); ++k) grads.push_back(p.alloc(bufs[k].get_desc()));
  grads.push_back(p.grad(Y));
  step.info.has_backward = true;
  step.backward = sequence({[passes, grads] {
                              if (passes->empty())
                                std::copy_n(data_of(grads[1]), element_count(grads[0].get_desc()), data_of(grads[0]));
                              for (size_t k = passes->size(); k-- > 0;)
                                linear_backward((*passes)[k], data_of(grads[k + 1]), data_of(grads[k]));
                            },
                            p.accumulate_into_grad(X, grads[0])});
}

}  // namespace

void lower_index_copy(Program& p, int ni, AxisMaps maps, float fill, int fill_from) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), Y = n.outputs.at(0);
  memory src = p.plain(X, ni);
  const memory fill_mem = fill_from >= 0 ? p.plain(fill_from, ni) : memory();
  if (fill_mem && element_count(fill_mem.get_desc()) != 1)
    throw NoKernel{std::string(op_name(n.op)) + " fill value with more than one element"};
  const Dims in = src.get_desc().dims();
  Dims out;
  for (const auto& m : maps) out.push_back(static_cast<int64_t>(m.size()));
  if (maps.empty() || maps.size() != in.size() || out != to_dims(shape_of(p, Y)))
    throw NoKernel{std::string(op_name(n.op)) + " output shape " + to_string(shape_of(p, Y)) +
                   " disagrees with its attributes"};
  memory dst = p.alloc(plain_desc(out));
  p.set_value(Y, dst);
  auto m = std::make_shared<const AxisMaps>(std::move(maps));
  Step& step = p.add_step(ni, "reference", [src, dst, in, m, fill, fill_mem] {
    const float* x = data_of(src);
    float* y = data_of(dst);
    const float f = fill_mem ? *data_of(fill_mem) : fill;
    for_each_source(in, *m, [&](int64_t o, int64_t i) { y[o] = i < 0 ? f : x[i]; });
  });
  if (!p.needs_grad(Y) || !p.needs_grad(X)) return;
  memory diff = p.alloc(src.get_desc()), dy = p.grad(Y);
  step.info.has_backward = true;
  step.backward = sequence({[diff, dy, in, m] {
                              const float* g = data_of(dy);
                              float* d = data_of(diff);
                              std::fill(d, d + element_count(diff.get_desc()), 0.f);
                              for_each_source(in, *m, [&](int64_t o, int64_t i) {
                                if (i >= 0) d[i] += g[o];
                              });
                            },
                            p.accumulate_into_grad(X, diff)});
}

void lower_pad(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const Shape& xs = shape_of(p, input_at(n, 0));
  const int rank = xs.rank();
  const std::string mode = n.attrs.s("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") throw NoKernel{"Pad mode " + mode};
  if (rank == 0) throw NoKernel{"Pad of a scalar"};
  // opset < 11: pads and value are attributes; later inputs (data, pads, constant_value, axes since opset 18)
  auto pads = n.attrs.has("pads") ? std::optional(n.attrs.ints("pads")) : int_input(p, n, 1);
  if (!pads) throw NoKernel{"Pad pads are not known"};
  std::vector<int64_t> axes;
  if (input_at(n, 3) >= 0) {
    auto given = int_input(p, n, 3);
    if (!given) throw NoKernel{"Pad axes are not known"};
    for (int64_t a : *given) axes.push_back(normalize_axis(a, rank, n));
  } else {
    for (int a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (pads->size() != 2 * axes.size()) throw NoKernel{"Pad pads do not match its axes"};
  Dims begin(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) begin[axes[i]] = (*pads)[i];
  const Dims out = to_dims(shape_of(p, n.outputs.at(0)));
  AxisMaps maps(rank);
  for (int a = 0; a < rank; ++a) {
    const int64_t dim = xs[a];
    for (int64_t j = 0; j < out[a]; ++j) {  // negative pads crop: the same formula, never outside
      int64_t i = j - begin[a];
      if ((i < 0 || i >= dim) && mode != "constant" && dim > 0)
        i = mode == "edge"   ? std::clamp<int64_t>(i, 0, dim - 1)
            : mode == "wrap" ? ((i % dim) + dim) % dim
                             : reflect(i, dim);
      maps[a].push_back(i >= 0 && i < dim ? i : -1);
    }
  }
  // the constant is read when the step runs: it may be computed, or a random weight when none are given
  lower_index_copy(p, ni, std::move(maps), static_cast<float>(n.attrs.f("value", 0.0)), input_at(n, 2));
}

void lower_resize(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const Shape &xs = shape_of(p, input_at(n, 0)), &ys = shape_of(p, n.outputs.at(0));
  const int rank = xs.rank();
  const bool v10 = n.inputs.size() == 2;  // opset 10: (X, scales), asymmetric; later (X, roi, scales, sizes)
  const std::string mode = n.attrs.s("mode", "nearest");
  const std::string ctm = n.attrs.s("coordinate_transformation_mode", v10 ? "asymmetric" : "half_pixel");
  const std::string nearest = n.attrs.s("nearest_mode", v10 ? "floor" : "round_prefer_floor");
  if (mode != "nearest" && mode != "linear") throw NoKernel{"Resize mode " + mode};
  constexpr std::string_view kTransforms[] = {"half_pixel",           "asymmetric",          "align_corners",
                                              "pytorch_half_pixel",   "tf_half_pixel_for_nn", "half_pixel_symmetric"};
  if (std::find(std::begin(kTransforms), std::end(kTransforms), ctm) == std::end(kTransforms))
    throw NoKernel{"Resize coordinate_transformation_mode " + ctm};
  if (mode == "nearest" && nearest != "round_prefer_floor" && nearest != "round_prefer_ceil" && nearest != "floor" &&
      nearest != "ceil")
    throw NoKernel{"Resize nearest_mode " + nearest};
  if (n.attrs.i("antialias", 0) != 0) throw NoKernel{"Resize with antialias"};
  if (n.attrs.s("keep_aspect_ratio_policy", "stretch") != "stretch")
    throw NoKernel{"Resize keep_aspect_ratio_policy " + n.attrs.s("keep_aspect_ratio_policy", "")};
  if (rank == 0 || xs.elements() == 0) throw NoKernel{"Resize of an empty tensor"};
  if (ys.rank() != rank) throw NoKernel{"Resize output rank differs from its input's"};
  std::vector<int64_t> axes;  // opset 18: scales or sizes for these axes only
  for (int64_t a : n.attrs.ints("axes")) axes.push_back(normalize_axis(a, rank, n));
  if (axes.empty())
    for (int a = 0; a < rank; ++a) axes.push_back(a);
  std::vector<double> scale(rank, 1.0);
  const auto sizes = int_input(p, n, 3);
  const auto scales = float_input(p, n, v10 ? 1 : 2);
  if (sizes && !sizes->empty()) {
    if (sizes->size() != axes.size()) throw NoKernel{"Resize sizes do not match its axes"};
    for (size_t i = 0; i < axes.size(); ++i)
      scale[axes[i]] = static_cast<double>((*sizes)[i]) / xs[static_cast<int>(axes[i])];
  } else if (scales && !scales->empty()) {
    if (scales->size() != axes.size()) throw NoKernel{"Resize scales do not match its axes"};
    for (size_t i = 0; i < axes.size(); ++i) scale[axes[i]] = (*scales)[i];
  } else if (input_at(n, v10 ? 1 : 2) >= 0 || input_at(n, 3) >= 0) {  // e.g. `ridge measure` reads no weights
    for (int a = 0; a < rank; ++a) scale[a] = static_cast<double>(ys[a]) / xs[a];
    p.note("Resize scales or sizes not known: sampled at the graph's output/input size ratios (exact for integer "
           "scales)");
  } else {
    throw NoKernel{"Resize has neither scales nor sizes"};
  }
  for (double s : scale)
    if (!(s > 0)) throw NoKernel{"Resize with a scale <= 0"};
  if (mode == "linear") return lower_resize_linear(p, ni, ctm, scale);
  AxisMaps maps(rank);
  for (int a = 0; a < rank; ++a)
    for (int64_t j = 0; j < ys[a]; ++j)
      maps[a].push_back(nearest_index(source_coord(ctm, j, xs[a], ys[a], scale[a]), nearest, xs[a]));
  lower_index_copy(p, ni, std::move(maps), 0.f);
}

void lower_constant_of_shape(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int Y = n.outputs.at(0);
  float fill = 0.f;  // ONNX's default: a float 0
  if (const auto it = n.attrs.items.find("value"); it != n.attrs.items.end()) {
    if (const auto* i = std::get_if<int64_t>(&it->second)) fill = static_cast<float>(*i);
    else if (const auto* f = std::get_if<double>(&it->second)) fill = static_cast<float>(*f);
    else throw NoKernel{"ConstantOfShape value that is not one number"};
  }
  memory dst = p.alloc(plain_desc(to_dims(shape_of(p, Y))));
  p.set_value(Y, dst);
  p.add_step(ni, "reference", [dst, fill] {
    float* y = data_of(dst);
    std::fill(y, y + element_count(dst.get_desc()), fill);
  });
}

void lower_scatter_nd(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int D = input_at(n, 0), I = input_at(n, 1), U = input_at(n, 2), Y = n.outputs.at(0);
  if (D < 0 || I < 0 || U < 0) throw NoKernel{"ScatterND needs data, indices and updates"};
  const Shape &ds = shape_of(p, D), &is = shape_of(p, I), &us = shape_of(p, U);
  const std::string reduction = n.attrs.s("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min")
    throw NoKernel{"ScatterND reduction " + reduction};
  if (is.rank() < 1) throw NoKernel{"ScatterND indices of rank 0"};
  const int64_t k = is.dims.back();
  if (k < 1 || k > ds.rank()) throw NoKernel{"ScatterND index length " + std::to_string(k) + " for data of rank " +
                                             std::to_string(ds.rank())};
  const Dims data_dims = to_dims(ds);
  int64_t slice = 1;
  for (size_t a = static_cast<size_t>(k); a < data_dims.size(); ++a) slice *= data_dims[a];
  const int64_t count = static_cast<int64_t>(is.elements()) / k;
  if (static_cast<int64_t>(us.elements()) != count * slice)
    throw NoKernel{"ScatterND updates " + to_string(us) + " do not match indices " + to_string(is) + " and data " +
                   to_string(ds)};
  memory data = p.plain(D, ni), idx = p.plain(I, ni), upd = p.plain(U, ni);
  memory dst = p.alloc(data.get_desc());
  p.set_value(Y, dst);
  const std::string what = "node '" + n.name + "': ScatterND index";
  // Offset (in slices) of update u: indices are integers carried as floats (exact up to 2^24), read at run time.
  auto offset_of = [data_dims, k, what](const float* ix, int64_t u) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) offset = offset * data_dims[j] + checked_index(ix[u * k + j], data_dims[j], what, j);
    return offset;
  };
  const char op = reduction == "none" ? '=' : reduction == "add" ? '+' : reduction == "mul" ? '*'
                  : reduction == "max" ? '>' : '<';
  Step& step = p.add_step(ni, "reference", [=] {
    const float *x = data_of(data), *ix = data_of(idx), *up = data_of(upd);
    float* y = data_of(dst);
    std::copy_n(x, element_count(dst.get_desc()), y);
    for (int64_t u = 0; u < count; ++u) {
      float* to = y + offset_of(ix, u) * slice;
      const float* from = up + u * slice;
      for (int64_t e = 0; e < slice; ++e)
        switch (op) {
          case '+': to[e] += from[e]; break;
          case '*': to[e] *= from[e]; break;
          case '>': to[e] = std::max(to[e], from[e]); break;
          case '<': to[e] = std::min(to[e], from[e]); break;
          default: to[e] = from[e]; break;
        }
    }
  });
  if (!p.needs_grad(Y) || (!p.needs_grad(D) && !p.needs_grad(U))) return;
  // Each factor of an output element (the data element, then the updates that landed on it) gets dY times its
  // share: replace, 1 for the last update and 0 for the rest; add, 1; mul, the product of the other factors
  // (zeros counted, so a zero factor is exact); max and min, 1 for every factor equal to the result (each tie).
  memory dy = p.grad(Y);
  const memory ddata = p.needs_grad(D) ? p.alloc(data.get_desc()) : memory(),
               dupd = p.needs_grad(U) ? p.alloc(upd.get_desc()) : memory();
  std::vector<std::function<void()>> parts{[=] {
    const float *g = data_of(dy), *x = data_of(data), *y = data_of(dst), *ix = data_of(idx), *up = data_of(upd);
    const int64_t elements = element_count(data.get_desc());
    std::vector<int64_t> last(static_cast<size_t>(elements), -1);  // replace: the update that landed last
    std::vector<int32_t> zeros(op == '*' ? elements : 0);          // mul: zero factors per element
    std::vector<double> product(op == '*' ? elements : 0);         // mul: product of the non-zero factors
    for (int64_t o = 0; o < static_cast<int64_t>(product.size()); ++o) {
      zeros[o] = x[o] == 0;
      product[o] = x[o] == 0 ? 1.0 : x[o];
    }
    for (int64_t u = 0; u < count; ++u)
      for (int64_t e = 0, at = offset_of(ix, u) * slice; e < slice; ++e) {
        last[at + e] = u * slice + e;
        if (op != '*') continue;
        const float f = up[u * slice + e];
        if (f == 0) ++zeros[at + e];
        else product[at + e] *= f;
      }
    auto share = [&](int64_t o, float f, bool is_last) -> float {
      switch (op) {
        case '=': return is_last ? 1.f : 0.f;
        case '+': return 1.f;
        case '*': return f != 0 ? (zeros[o] > 0 ? 0.f : static_cast<float>(product[o] / f))
                                : (zeros[o] > 1 ? 0.f : static_cast<float>(product[o]));
        default: return f == y[o] ? 1.f : 0.f;
      }
    };
    if (ddata)
      for (int64_t o = 0; o < elements; ++o) data_of(ddata)[o] = g[o] * share(o, x[o], last[o] < 0);
    if (dupd)
      for (int64_t u = 0; u < count; ++u)
        for (int64_t e = 0, at = offset_of(ix, u) * slice; e < slice; ++e)
          data_of(dupd)[u * slice + e] = g[at + e] * share(at + e, up[u * slice + e], last[at + e] == u * slice + e);
  }};
  if (ddata) parts.push_back(p.accumulate_into_grad(D, ddata));
  if (dupd) parts.push_back(p.accumulate_into_grad(U, dupd));
  step.info.has_backward = true;
  step.backward = sequence(std::move(parts));
}

}  // namespace ridge::exec
