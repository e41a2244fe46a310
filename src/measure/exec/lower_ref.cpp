// Views (no copy) and reference kernels for ops oneDNN has no primitive for (Erf, Gather, ArgMax, Where, Pow,
// Equal, Expand, Cast, RMSNormalization, and binary ops that broadcast their first operand).
#include <cmath>

#include "lowerings.hpp"
#include "ridge/error.hpp"
#include "ridge/op_rules.hpp"

namespace ridge::exec {

namespace {

/// Strides of `in` (row-major) seen from an output of dims `out`: 0 along broadcast axes.
std::vector<int64_t> broadcast_strides(const Dims& in, const Dims& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t s = 1;
  for (int i = static_cast<int>(in.size()) - 1, o = static_cast<int>(out.size()) - 1; i >= 0; --i, --o) {
    if (o >= 0 && in[i] != 1) strides[o] = s;
    s *= in[i];
  }
  return strides;
}

/// Calls f(out_index, in_offsets) at the start of every row (last axis) of the output, in row-major order; along a
/// row, input k advances by strides[k].back() per element.
template <typename F>
void for_each_broadcast_row(const Dims& out, const std::vector<std::vector<int64_t>>& strides, F f) {
  const int rank = static_cast<int>(out.size());
  const int64_t inner = rank == 0 ? 1 : out.back();
  int64_t rows = 1;
  for (int ax = 0; ax + 1 < rank; ++ax) rows *= out[ax];
  if (inner == 0) return;
  std::vector<int64_t> idx(rank, 0), off(strides.size(), 0);
  for (int64_t r = 0; r < rows; ++r) {
    f(r * inner, off);
    for (int ax = rank - 2; ax >= 0; --ax) {
      ++idx[ax];
      for (size_t k = 0; k < strides.size(); ++k) off[k] += strides[k][ax];
      if (idx[ax] < out[ax]) break;
      for (size_t k = 0; k < strides.size(); ++k) off[k] -= strides[k][ax] * idx[ax];
      idx[ax] = 0;
    }
  }
}

/// Elements of a memory (builds its dims vector: call it once per loop, not per element).
int64_t elements(const memory& m) { return element_count(m.get_desc()); }

}  // namespace

void lower_view(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), Y = n.outputs.at(0);
  if (n.op == OpKind::Dropout && p.training()) p.note("Dropout runs as identity (no mask) when training");
  if (n.op == OpKind::Dropout && !ops::dropout_drops_nothing(n) && input_at(n, 2) >= 0 &&
      scalar_input(p, n, 2).value_or(1.f) != 0.f)
    throw NoKernel{"Dropout in training mode (random mask)"};
  memory src = p.plain(X, ni);
  p.set_value(Y, p.view(src, to_dims(shape_of(p, Y))));
  Step& step = p.add_step(ni, "view", [] {});
  if (p.needs_grad(Y) && p.needs_grad(X)) {
    step.info.has_backward = true;
    step.backward = p.accumulate_into_grad(X, p.grad(Y));
  }
}

void lower_cast(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const DType to = p.graph().value(n.outputs.at(0)).dtype, from = p.graph().value(input_at(n, 0)).dtype;
  for (DType t : {to, from})
    if (t == DType::F16 || t == DType::BF16) throw NoKernel{"Cast to or from fp16/bf16 (rounding is not modelled)"};
  if (is_float(to) || to == DType::Unknown) return lower_view(p, ni);
  memory src = p.plain(input_at(n, 0), ni);
  memory dst = p.alloc(plain_desc(to_dims(shape_of(p, n.outputs[0]))));
  p.set_value(n.outputs[0], dst);
  const bool to_bool = to == DType::Bool;
  p.add_step(ni, "reference", [src, dst, to_bool] {
    const float* x = data_of(src);
    float* y = data_of(dst);
    for (int64_t i = 0, count = elements(dst); i < count; ++i) y[i] = to_bool ? (x[i] != 0.f) : std::trunc(x[i]);
  });
}

void lower_reference_unary(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), Y = n.outputs.at(0);
  memory src = p.plain(X, ni);
  memory dst = p.alloc(src.get_desc());
  p.set_value(Y, dst);
  if (n.op == OpKind::HardSigmoid) {  // max(0, min(1, alpha x + beta))
    const float alpha = static_cast<float>(n.attrs.f("alpha", 0.2)), beta = static_cast<float>(n.attrs.f("beta", 0.5));
    p.add_step(ni, "reference", [src, dst, alpha, beta] {
      const float* x = data_of(src);
      float* y = data_of(dst);
      for (int64_t i = 0, count = elements(dst); i < count; ++i) y[i] = std::clamp(alpha * x[i] + beta, 0.f, 1.f);
    });
    if (p.needs_grad(Y)) p.note("HardSigmoid has no backward in the executor (its input gets no gradient)");
    return;
  }
  Step& step = p.add_step(ni, "reference", [src, dst] {
    const float* x = data_of(src);
    float* y = data_of(dst);
    for (int64_t i = 0, count = elements(dst); i < count; ++i) y[i] = std::erf(x[i]);
  });
  if (!p.needs_grad(Y) || !p.needs_grad(X)) return;
  memory diff = p.alloc(src.get_desc()), dy = p.grad(Y);
  step.info.has_backward = true;
  step.backward = sequence({[src, dy, diff] {
                              const float *x = data_of(src), *g = data_of(dy);
                              float* d = data_of(diff);
                              for (int64_t i = 0, count = elements(diff); i < count; ++i)
                                d[i] = g[i] * 1.1283791670955126f * std::exp(-x[i] * x[i]);
                            },
                            p.accumulate_into_grad(X, diff)});
}

void lower_reference_elementwise(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int Y = n.outputs.at(0);
  const Dims out = to_dims(shape_of(p, Y));
  const int arity = n.op == OpKind::Where ? 3 : n.op == OpKind::Expand ? 1 : 2;
  std::vector<memory> ins;
  std::vector<std::vector<int64_t>> strides;
  for (int k = 0; k < arity; ++k) {
    const int vid = input_at(n, k);
    if (vid < 0) throw NoKernel{"missing input " + std::to_string(k)};
    ins.push_back(p.plain(vid, ni));
    strides.push_back(broadcast_strides(to_dims(shape_of(p, vid)), out));
  }
  memory dst = p.alloc(plain_desc(out));
  p.set_value(Y, dst);
  const OpKind op = n.op;
  // One row (the output's last axis) at a time, the op chosen once per row: each input advances by 0 (broadcast)
  // or 1 along it, so the inner loops are plain strided loops (GPT-2's causal Where over 12 x 1024 x 1024 scores
  // took 10 ns per element through a per-element index walk and op switch).
  std::vector<int64_t> along(arity, 0);
  for (int k = 0; k < arity; ++k) along[k] = out.empty() ? 0 : strides[k].back();
  const int64_t inner = out.empty() ? 1 : out.back();
  p.add_step(ni, "reference", [ins, strides, along, dst, out, op, inner] {
    float* y = data_of(dst);
    std::vector<const float*> x;
    for (const auto& m : ins) x.push_back(data_of(m));
    const int64_t s0 = along[0], s1 = along.size() > 1 ? along[1] : 0, s2 = along.size() > 2 ? along[2] : 0;
    for_each_broadcast_row(out, strides, [&](int64_t i, const std::vector<int64_t>& o) {
      float* yr = y + i;
      const float* a = x[0] + o[0];
      const float* b = x.size() > 1 ? x[1] + o[1] : nullptr;
      const float* c = x.size() > 2 ? x[2] + o[2] : nullptr;
      switch (op) {
        case OpKind::Add: for (int64_t j = 0; j < inner; ++j) yr[j] = a[j * s0] + b[j * s1]; break;
        case OpKind::Sub: for (int64_t j = 0; j < inner; ++j) yr[j] = a[j * s0] - b[j * s1]; break;
        case OpKind::Mul: for (int64_t j = 0; j < inner; ++j) yr[j] = a[j * s0] * b[j * s1]; break;
        case OpKind::Div: for (int64_t j = 0; j < inner; ++j) yr[j] = a[j * s0] / b[j * s1]; break;
        case OpKind::Pow: for (int64_t j = 0; j < inner; ++j) yr[j] = std::pow(a[j * s0], b[j * s1]); break;
        case OpKind::Equal:
          for (int64_t j = 0; j < inner; ++j) yr[j] = a[j * s0] == b[j * s1] ? 1.f : 0.f;
          break;
        case OpKind::Where:
          for (int64_t j = 0; j < inner; ++j) yr[j] = a[j * s0] != 0.f ? b[j * s1] : c[j * s2];
          break;
        default: for (int64_t j = 0; j < inner; ++j) yr[j] = a[j * s0]; break;  // Expand
      }
    });
  });
  if (p.needs_grad(Y)) p.note(std::string(op_name(op)) + " (reference kernel) has no backward in the executor");
}

// RMSNormalization (opset 23): y = x / sqrt(mean(x^2) + epsilon) * scale over the axes from `axis` on; oneDNN 2.x
// has no RMS flag on its layer normalization. Accumulates in double, as stash_type 1 (float) asks at least.
void lower_rms_norm(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), S = input_at(n, 1), Y = n.outputs.at(0);
  if (S < 0) throw NoKernel{"RMSNormalization without a scale input"};
  const Shape& xs = shape_of(p, X);
  const int axis = static_cast<int>(normalize_axis(n.attrs.i("axis", -1), xs.rank(), n));
  int64_t rows = 1, inner = 1;
  for (int i = 0; i < xs.rank(); ++i) (i < axis ? rows : inner) *= xs[i];
  const int64_t scale_elems = static_cast<int64_t>(shape_of(p, S).elements());
  if (scale_elems != inner && scale_elems != 1)
    throw NoKernel{"RMSNormalization scale of " + std::to_string(scale_elems) + " elements over rows of " +
                   std::to_string(inner)};
  const float eps = static_cast<float>(n.attrs.f("epsilon", 1e-5));
  memory src = p.plain(X, ni), scale = p.plain(S, ni);
  memory dst = p.alloc(plain_desc(to_dims(xs)));
  p.set_value(Y, dst);
  const int64_t scale_step = scale_elems == 1 ? 0 : 1;
  p.add_step(ni, "reference", [src, scale, dst, rows, inner, eps, scale_step] {
    const float *x = data_of(src), *w = data_of(scale);
    float* y = data_of(dst);
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * inner;
      double sum = 0;
      for (int64_t j = 0; j < inner; ++j) sum += static_cast<double>(xr[j]) * xr[j];
      const float inv = static_cast<float>(1.0 / std::sqrt(sum / static_cast<double>(inner) + eps));
      for (int64_t j = 0; j < inner; ++j) y[r * inner + j] = xr[j] * inv * w[j * scale_step];
    }
  });
  if (p.needs_grad(Y)) p.note("RMSNormalization (reference kernel) has no backward in the executor");
}

void lower_gather(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int D = input_at(n, 0), I = input_at(n, 1), Y = n.outputs.at(0);
  const Shape& ds = shape_of(p, D);
  const int axis = static_cast<int>(normalize_axis(n.attrs.i("axis", 0), ds.rank(), n));
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < ds.rank(); ++i)
    if (i < axis) outer *= ds[i];
    else if (i > axis) inner *= ds[i];
  const int64_t extent = ds[axis];
  memory data = p.plain(D, ni), idx = p.plain(I, ni);
  const int64_t count = static_cast<int64_t>(shape_of(p, I).elements());
  memory dst = p.alloc(plain_desc(to_dims(shape_of(p, Y))));
  p.set_value(Y, dst);
  const std::string where = n.name;
  auto index = [extent, where](float f) {
    int64_t k = static_cast<int64_t>(f);
    if (k < 0) k += extent;
    if (k < 0 || k >= extent)
      throw Error("node '" + where + "': Gather index " + std::to_string(static_cast<int64_t>(f)) +
                  " out of range [0, " + std::to_string(extent) + ")");
    return k;
  };
  Step& step = p.add_step(ni, "reference", [=] {
    const float *x = data_of(data), *ix = data_of(idx);
    float* y = data_of(dst);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < count; ++j)
        std::copy_n(x + (o * extent + index(ix[j])) * inner, inner, y + (o * count + j) * inner);
  });
  if (!p.needs_grad(Y) || !p.needs_grad(D)) return;
  memory diff = p.alloc(data.get_desc()), dy = p.grad(Y);
  step.info.has_backward = true;
  step.backward = sequence({[=] {
                              const float *g = data_of(dy), *ix = data_of(idx);
                              float* d = data_of(diff);
                              std::fill(d, d + elements(diff), 0.f);
                              for (int64_t o = 0; o < outer; ++o)
                                for (int64_t j = 0; j < count; ++j)
                                  for (int64_t k = 0; k < inner; ++k)
                                    d[(o * extent + index(ix[j])) * inner + k] += g[(o * count + j) * inner + k];
                            },
                            p.accumulate_into_grad(D, diff)});
}

void lower_argmax(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), Y = n.outputs.at(0);
  const Shape& xs = shape_of(p, X);
  const int axis = static_cast<int>(normalize_axis(n.attrs.i("axis", 0), xs.rank(), n));
  const bool last = n.attrs.i("select_last_index", 0) != 0;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < xs.rank(); ++i)
    if (i < axis) outer *= xs[i];
    else if (i > axis) inner *= xs[i];
  const int64_t extent = xs[axis];
  memory src = p.plain(X, ni);
  memory dst = p.alloc(plain_desc(to_dims(shape_of(p, Y))));
  p.set_value(Y, dst);
  p.add_step(ni, "reference", [=] {
    const float* x = data_of(src);
    float* y = data_of(dst);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < inner; ++k) {
        int64_t best = 0;
        for (int64_t j = 1; j < extent; ++j) {
          const float v = x[(o * extent + j) * inner + k], b = x[(o * extent + best) * inner + k];
          if (v > b || (last && v == b)) best = j;
        }
        y[o * inner + k] = static_cast<float>(best);
      }
  });
}

}  // namespace ridge::exec
