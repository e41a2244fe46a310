// Views (no copy) and reference kernels for ops oneDNN has no primitive for (Erf, Not, Gather, ArgMax, Where, Pow,
// Equal, Expand, Cast, RMSNormalization, Einsum, and binary ops that broadcast their first operand).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

#include "lowerings.hpp"
#include "ridge/error.hpp"
#include "ridge/op_geometry.hpp"
#include "ridge/op_rules.hpp"

namespace ridge::exec {

namespace {

/// Strides of `in` (row-major) seen from an output of dims `out`: 0 along broadcast axes. Throws NoKernel when `in`
/// does not broadcast to `out` (a dim other than 1 and the output's, or a higher rank).
std::vector<int64_t> broadcast_strides(const Dims& in, const Dims& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t s = 1;
  for (int i = static_cast<int>(in.size()) - 1, o = static_cast<int>(out.size()) - 1; i >= 0; --i, --o) {
    if (in[i] != 1 && (o < 0 || in[i] != out[o]))
      throw NoKernel{"an input of dims " + to_string(Shape{in}) + " does not broadcast to " + to_string(Shape{out})};
    if (in[i] != 1) strides[o] = s;
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
  if (n.op == OpKind::Dropout && dropout_masks(p, n)) return lower_dropout(p, ni);
  memory src = p.plain(X, ni);
  p.set_value(Y, p.view(src, to_dims(shape_of(p, Y))));
  Step& step = p.add_step(ni, "view", [] {});
  if (p.needs_grad(Y) && p.needs_grad(X)) {
    step.info.has_backward = true;
    step.backward = p.accumulate_into_grad(X, p.grad(Y));
  }
}

bool dropout_masks(Program& p, const Node& n) {
  if (ops::dropout_drops_nothing(n)) return false;
  if (p.training() || ops::dropout_active(p.graph(), n)) return true;  // attribute, or an input folded true
  // a training_mode input not folded at import: its payload, or when not known (a graph input) taken as true
  return input_at(n, 2) >= 0 && scalar_input(p, n, 2).value_or(1.f) != 0.f;
}

void lower_dropout(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), Y = n.outputs.at(0);
  const int M = n.outputs.size() > 1 && n.outputs[1] >= 0 && !p.graph().value(n.outputs[1]).omitted ? n.outputs[1] : -1;
  float ratio = static_cast<float>(n.attrs.f("ratio", 0.5));  // opset < 12: an attribute; later input 1
  if (input_at(n, 1) >= 0) {
    if (const auto r = scalar_input(p, n, 1)) ratio = *r;
    else p.note("Dropout ratio of '" + n.name + "' not known: 0.5 taken");
  }
  if (!(ratio >= 0.f && ratio <= 1.f)) throw NoKernel{"Dropout ratio " + std::to_string(ratio) + " outside [0, 1]"};
  memory src = p.plain(X, ni);
  memory dst = p.alloc(src.get_desc()), mask = p.alloc(src.get_desc());
  p.set_value(Y, dst);
  if (M >= 0) p.set_value(M, mask);
  p.note("Dropout in training mode draws a new random mask every pass (seed " + std::to_string(p.options().seed) +
         "): outputs differ from another runtime's");
  // A new mask per pass, as training draws one per step: a 64-bit xorshift per element (its cost is part of
  // the step's time, as the RNG is of a framework's dropout kernel).
  auto state = std::make_shared<uint64_t>(p.options().seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(ni) + 1);
  const float keep = 1.f - ratio, scale = keep > 0.f ? 1.f / keep : 0.f;
  const uint64_t threshold =  // keep * 2^64, computed only below 1 (2^64 itself does not convert)
      keep >= 1.f ? UINT64_MAX : static_cast<uint64_t>(static_cast<double>(keep) * 18446744073709551616.0);
  Step& step = p.add_step(ni, "reference", [src, dst, mask, state, keep, scale, threshold] {
    const float* x = data_of(src);
    float *y = data_of(dst), *m = data_of(mask);
    uint64_t z = *state;
    for (int64_t i = 0, count = elements(dst); i < count; ++i) {
      z ^= z << 13, z ^= z >> 7, z ^= z << 17;
      const bool kept = keep >= 1.f || z < threshold;
      m[i] = kept ? 1.f : 0.f;
      y[i] = kept ? x[i] * scale : 0.f;
    }
    *state = z;
  });
  if (!p.needs_grad(Y) || !p.needs_grad(X)) return;
  memory diff = p.alloc(src.get_desc()), dy = p.grad(Y);
  step.info.has_backward = true;
  step.backward = sequence({[diff, dy, mask, scale] {
                              const float *g = data_of(dy), *m = data_of(mask);
                              float* d = data_of(diff);
                              for (int64_t i = 0, count = elements(diff); i < count; ++i) d[i] = g[i] * m[i] * scale;
                            },
                            p.accumulate_into_grad(X, diff)});
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
    Step& step = p.add_step(ni, "reference", [src, dst, alpha, beta] {
      const float* x = data_of(src);
      float* y = data_of(dst);
      for (int64_t i = 0, count = elements(dst); i < count; ++i) y[i] = std::clamp(alpha * x[i] + beta, 0.f, 1.f);
    });
    if (!p.needs_grad(Y) || !p.needs_grad(X)) return;
    memory diff = p.alloc(src.get_desc()), dy = p.grad(Y);  // alpha dY inside the ramp, 0 on the flat parts
    step.info.has_backward = true;
    step.backward = sequence({[src, dy, diff, alpha, beta] {
                                const float *x = data_of(src), *g = data_of(dy);
                                float* d = data_of(diff);
                                for (int64_t i = 0, count = elements(diff); i < count; ++i) {
                                  const float v = alpha * x[i] + beta;
                                  d[i] = v > 0.f && v < 1.f ? alpha * g[i] : 0.f;
                                }
                              },
                              p.accumulate_into_grad(X, diff)});
    return;
  }
  if (n.op == OpKind::Not) {  // booleans are carried as 0 / 1 floats
    p.add_step(ni, "reference", [src, dst] {
      const float* x = data_of(src);
      float* y = data_of(dst);
      for (int64_t i = 0, count = elements(dst); i < count; ++i) y[i] = x[i] == 0.f ? 1.f : 0.f;
    });
    return;  // logic has no gradient
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
  const DType dtype = p.graph().value(Y).dtype;
  // An integer result (index arithmetic) is exact in fp32 up to 2^24; past that, or past what its type holds (ONNX
  // wraps int8 and uint8 around), the step stops with an error.
  const bool integer = !is_float(dtype) && dtype != DType::Unknown && integer_arithmetic(op);
  constexpr float kExact = 16777216.f;  // 2^24: every integer up to it is a float
  const float lowest = dtype == DType::I8 ? -128.f : dtype == DType::U8 || dtype == DType::Bool ? 0.f : -kExact;
  const float highest = dtype == DType::I8 ? 127.f : dtype == DType::U8 ? 255.f : dtype == DType::Bool ? 1.f : kExact;
  const std::string what = fmt::format("node '{}' ({}, {})", n.name, op_name(op), dtype_name(dtype));
  // One row (the output's last axis) at a time, the op chosen once per row: each input advances by 0 (broadcast)
  // or 1 along it, so the inner loops are plain strided loops (GPT-2's causal Where over 12 x 1024 x 1024 scores
  // took 10 ns per element through a per-element index walk and op switch).
  std::vector<int64_t> along(arity, 0);
  for (int k = 0; k < arity; ++k) along[k] = out.empty() ? 0 : strides[k].back();
  const int64_t inner = out.empty() ? 1 : out.back();
  Step& step = p.add_step(ni, "reference", [ins, strides, along, dst, out, op, inner, integer, lowest, highest, what] {
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
    if (!integer) return;
    for (int64_t i = 0, count = elements(dst); i < count; ++i)
      if (!(y[i] >= lowest && y[i] <= highest))
        throw Error(fmt::format("{}: integer result {} is outside [{}, {}], what the fp32 executor holds exactly in "
                                "this type",
                                what, y[i], lowest, highest));
  });
  if (!p.needs_grad(Y) || op == OpKind::Equal) return;  // comparisons pass no gradient
  // Backward: per input, its local derivative times dY at every output element (the input read at its broadcast
  // position), summed down to the input's shape. Where's condition gets none.
  memory dy = p.grad(Y);
  std::vector<std::function<void()>> parts;
  for (int k = op == OpKind::Where ? 1 : 0; k < arity; ++k) {
    const int vid = input_at(n, k);
    if (!p.needs_grad(vid)) continue;
    memory diff = p.alloc(plain_desc(out));
    parts.push_back([ins, strides, along, dst, dy, diff, out, op, inner, k] {
      const float *y = data_of(dst), *g = data_of(dy);
      float* d = data_of(diff);
      std::vector<const float*> x;
      for (const auto& m : ins) x.push_back(data_of(m));
      for_each_broadcast_row(out, strides, [&](int64_t i, const std::vector<int64_t>& o) {
        for (int64_t j = 0; j < inner; ++j) {
          const float a = x[0][o[0] + j * along[0]], b = x.size() > 1 ? x[1][o[1] + j * along[1]] : 0.f;
          const float gj = g[i + j];
          float v = gj;  // Add, Expand; and input 0 of Sub
          switch (op) {
            case OpKind::Sub: v = k == 0 ? gj : -gj; break;
            case OpKind::Mul: v = gj * (k == 0 ? b : a); break;
            case OpKind::Div: v = k == 0 ? gj / b : -gj * a / (b * b); break;
            case OpKind::Pow:
              v = k == 0 ? gj * b * std::pow(a, b - 1.f) : (a > 0.f ? gj * y[i + j] * std::log(a) : 0.f);
              break;
            case OpKind::Where: v = (a != 0.f) == (k == 1) ? gj : 0.f; break;
            default: break;
          }
          d[i + j] = v;
        }
      });
    });
    parts.push_back(reduce_into_grad(p, vid, diff));
  }
  if (parts.empty()) return;
  step.info.has_backward = true;
  step.backward = sequence(std::move(parts));
}

// RMSNormalization (opset 23): y = x / sqrt(mean(x^2) + epsilon) * scale over the axes from `axis` on; oneDNN 2.x
// has no RMS flag on its layer normalization. Accumulates in double, as stash_type 1 (float) asks at least. With a
// backward (input and scale).
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
  auto inv_rms = [inner, eps](const float* xr) {
    double sum = 0;
    for (int64_t j = 0; j < inner; ++j) sum += static_cast<double>(xr[j]) * xr[j];
    return 1.0 / std::sqrt(sum / static_cast<double>(inner) + eps);
  };
  Step& step = p.add_step(ni, "reference", [src, scale, dst, rows, inner, scale_step, inv_rms] {
    const float *x = data_of(src), *w = data_of(scale);
    float* y = data_of(dst);
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * inner;
      const float inv = static_cast<float>(inv_rms(xr));
      for (int64_t j = 0; j < inner; ++j) y[r * inner + j] = xr[j] * inv * w[j * scale_step];
    }
  });
  if (!p.needs_grad(Y) || (!p.needs_grad(X) && !p.needs_grad(S))) return;
  // Per row, with g = dY * scale and inv = 1 / rms: dX = inv * g - x * inv^3 * mean(g * x); dScale += dY * x * inv.
  memory dy = p.grad(Y), dx = p.alloc(src.get_desc()), dw = p.alloc(scale.get_desc());
  std::vector<std::function<void()>> parts{[src, scale, dy, dx, dw, rows, inner, scale_step, inv_rms] {
    const float *x = data_of(src), *w = data_of(scale), *g = data_of(dy);
    float *d = data_of(dx), *ds = data_of(dw);
    std::fill(ds, ds + element_count(dw.get_desc()), 0.f);
    for (int64_t r = 0; r < rows; ++r) {
      const float *xr = x + r * inner, *gr = g + r * inner;
      const double inv = inv_rms(xr);
      double dot = 0;
      for (int64_t j = 0; j < inner; ++j) dot += static_cast<double>(gr[j]) * w[j * scale_step] * xr[j];
      const double k = inv * inv * inv * dot / static_cast<double>(inner);
      for (int64_t j = 0; j < inner; ++j) {
        d[r * inner + j] = static_cast<float>(inv * gr[j] * w[j * scale_step] - xr[j] * k);
        ds[j * scale_step] += static_cast<float>(gr[j] * xr[j] * inv);
      }
    }
  }};
  if (p.needs_grad(X)) parts.push_back(p.accumulate_into_grad(X, dx));
  if (p.needs_grad(S)) parts.push_back(p.accumulate_into_grad(S, dw));
  step.info.has_backward = true;
  step.backward = sequence(std::move(parts));
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
  const std::string what = "node '" + n.name + "': Gather index";
  auto index = [extent, what](float f) { return checked_index(f, extent, what); };
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

void lower_attention(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int Q = input_at(n, 0), K = input_at(n, 1), V = input_at(n, 2), M = input_at(n, 3), PK = input_at(n, 4),
            PV = input_at(n, 5);
  if (Q < 0 || K < 0 || V < 0) throw NoKernel{"Attention needs Q, K and V"};
  if (input_at(n, 6) >= 0) throw NoKernel{"Attention with nonpad_kv_seqlen (opset 24)"};
  if ((PK >= 0) != (PV >= 0)) throw NoKernel{"Attention with only one of past_key and past_value"};
  if (n.outputs.size() > 3 && n.outputs[3] >= 0) throw NoKernel{"Attention's qk_matmul_output"};
  const Shape &qs = shape_of(p, Q), &ks = shape_of(p, K), &vs = shape_of(p, V);
  const bool three_d = qs.rank() == 3;
  if (qs.rank() != ks.rank() || qs.rank() != vs.rank() || (qs.rank() != 3 && qs.rank() != 4))
    throw NoKernel{"Attention: Q, K and V must all be 3-D or all 4-D"};
  const int64_t B = qs[0];
  const int64_t Hq = three_d ? n.attrs.i("q_num_heads", 0) : qs[1], Hkv = three_d ? n.attrs.i("kv_num_heads", 0) : ks[1];
  if (Hq <= 0 || Hkv <= 0 || Hq % Hkv != 0) throw NoKernel{"Attention: head counts"};
  const int64_t L = three_d ? qs[1] : qs[2], Tn = three_d ? ks[1] : ks[2];
  const int64_t E = three_d ? qs[2] / Hq : qs[3], Ev = three_d ? vs[2] / Hkv : vs[3];
  const int64_t P = PK >= 0 && shape_of(p, PK).rank() == 4 ? shape_of(p, PK)[2] : 0, T = P + Tn;
  // Every operand's shape must agree with the heads read from Q (the loops index by them)
  auto agrees = [](const Shape& s, std::vector<int64_t> want) { return s.dims == want; };
  const bool shapes_agree =
      (three_d ? qs[2] == Hq * E && agrees(ks, {B, Tn, Hkv * E}) && agrees(vs, {B, Tn, Hkv * Ev})
               : agrees(ks, {B, Hkv, Tn, E}) && agrees(vs, {B, Hkv, Tn, Ev})) &&
      (PK < 0 || (agrees(shape_of(p, PK), {B, Hkv, P, E}) && agrees(shape_of(p, PV), {B, Hkv, P, Ev}))) &&
      shape_of(p, n.outputs.at(0)).elements() == static_cast<uint64_t>(B * Hq * L * Ev);
  if (!shapes_agree || E <= 0 || Ev <= 0) throw NoKernel{"Attention: Q, K, V and past shapes disagree on heads or sizes"};
  const float scale = static_cast<float>(n.attrs.f("scale", 1.0 / std::sqrt(static_cast<double>(E))));
  const float softcap = static_cast<float>(n.attrs.f("softcap", 0.0));
  const bool causal = n.attrs.i("is_causal", 0) != 0;
  const Dims full{B, Hq, L, T};
  std::vector<int64_t> mstride;
  int64_t mask_len = 0;
  bool mask_bool = false;
  if (M >= 0) {
    const Shape& ms = shape_of(p, M);
    if (ms.rank() < 1 || ms.rank() > 4) throw NoKernel{"Attention mask of rank " + std::to_string(ms.rank())};
    mask_len = ms[-1];
    if (mask_len > T) throw NoKernel{"Attention mask longer than the keys"};
    for (int i = 0; i + 1 < ms.rank(); ++i)
      if (ms[i] != 1 && ms[i] != full[4 - ms.rank() + i]) throw NoKernel{"Attention mask does not broadcast"};
    Dims to = full;
    to[3] = mask_len;
    mstride = broadcast_strides(to_dims(ms), to);
    mask_bool = p.graph().value(M).dtype == DType::Bool;
  }
  auto plain_or_none = [&](int v) { return v >= 0 ? p.plain(v, ni) : memory(); };
  memory q = p.plain(Q, ni), k = p.plain(K, ni), v = p.plain(V, ni), mask = plain_or_none(M), pk = plain_or_none(PK),
         pv = plain_or_none(PV);
  auto out_or_scratch = [&](size_t i, const Dims& d) {
    memory m = p.alloc(plain_desc(d));
    if (i < n.outputs.size() && n.outputs[i] >= 0) p.set_value(n.outputs[i], m);
    return m;
  };
  memory y = out_or_scratch(0, to_dims(shape_of(p, n.outputs.at(0))));
  memory kc = out_or_scratch(1, {B, Hkv, T, E}), vc = out_or_scratch(2, {B, Hkv, T, Ev});  // present K and V
  // Unnormalised probabilities of query row (b, h, i) over the T present keys kd (scale, softcap, mask, causal)
  // into s, and their sum; with `cap`, the softcap's derivative 1 - tanh^2 per key. A row with every key masked
  // gives zeros and sum 0.
  auto row_probabilities = [=](const float* qi, const float* kd, const float* md, int64_t b, int64_t h, int64_t i,
                               float* s, float* cap) {
    const int64_t hk = h / (Hq / Hkv);
    const float inf = std::numeric_limits<float>::infinity();
    float best = -inf;
    for (int64_t t = 0; t < T; ++t) {
      const float* kt = kd + ((b * Hkv + hk) * T + t) * E;
      double dot = 0;
      for (int64_t e = 0; e < E; ++e) dot += static_cast<double>(qi[e]) * kt[e];
      float x = static_cast<float>(dot) * scale;
      if (softcap > 0) {
        const float th = std::tanh(x / softcap);
        x = softcap * th;
        if (cap) cap[t] = 1.f - th * th;
      } else if (cap) {
        cap[t] = 1.f;
      }
      if (md) {
        if (t >= mask_len) {
          x = -inf;
        } else {
          const float m = md[b * mstride[0] + h * mstride[1] + i * mstride[2] + t * mstride[3]];
          x = mask_bool ? (m != 0 ? x : -inf) : x + m;
        }
      }
      if (causal && t > i + P) x = -inf;
      s[t] = x;
      best = std::max(best, x);
    }
    double sum = 0;
    for (int64_t t = 0; t < T; ++t) sum += s[t] = best == -inf ? 0.f : std::exp(s[t] - best);
    return sum;
  };
  Step& step = p.add_step(ni, "reference", [=] {
    // present = concat(past, new) along the sequence, [B, Hkv, T, size]; 3-D inputs are [B, Tn, Hkv * size]
    auto gather = [&](const memory& past, const memory& now, const memory& cache, int64_t size) {
      float* c = data_of(cache);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < Hkv; ++h)
          for (int64_t t = 0; t < T; ++t) {
            const float* src = t < P ? data_of(past) + ((b * Hkv + h) * P + t) * size
                               : three_d ? data_of(now) + ((b * Tn + t - P) * Hkv + h) * size
                                         : data_of(now) + ((b * Hkv + h) * Tn + t - P) * size;
            std::copy_n(src, size, c + ((b * Hkv + h) * T + t) * size);
          }
    };
    gather(pk, k, kc, E);
    gather(pv, v, vc, Ev);
    const float *qd = data_of(q), *kd = data_of(kc), *vd = data_of(vc), *md = mask ? data_of(mask) : nullptr;
    float* yd = data_of(y);
    std::vector<float> s(static_cast<size_t>(T));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t hk = h / (Hq / Hkv);
        for (int64_t i = 0; i < L; ++i) {
          const float* qi = three_d ? qd + ((b * L + i) * Hq + h) * E : qd + ((b * Hq + h) * L + i) * E;
          const double sum = row_probabilities(qi, kd, md, b, h, i, s.data(), nullptr);
          float* yi = three_d ? yd + ((b * L + i) * Hq + h) * Ev : yd + ((b * Hq + h) * L + i) * Ev;
          for (int64_t e = 0; e < Ev; ++e) {
            double acc = 0;
            for (int64_t t = 0; t < T; ++t) acc += static_cast<double>(s[t]) * vd[((b * Hkv + hk) * T + t) * Ev + e];
            yi[e] = sum > 0 ? static_cast<float>(acc / sum) : std::numeric_limits<float>::quiet_NaN();
          }
        }
      }
  });
  // Backward: the probabilities recomputed per query row; dV += p dY, dp = dY . v, dm = p (dp - sum p dp) (a
  // float mask's gradient, summed where it broadcasts), ds = dm (times 1 - tanh^2 under a softcap), dQ += scale ds
  // K, dK += scale ds q, on the present (past + new) K and V, which also take the present outputs' gradients; then
  // split into the new and the past parts.
  const int Y = n.outputs.at(0);
  auto wants = [&](int vid) { return vid >= 0 && p.needs_grad(vid); };
  const bool mask_grad = wants(M) && !mask_bool;
  if (!p.needs_grad(Y) || !(wants(Q) || wants(K) || wants(V) || wants(PK) || wants(PV) || mask_grad)) return;
  const memory dmask = mask_grad ? p.alloc(mask.get_desc()) : memory();
  memory dy = p.grad(Y), dq = p.alloc(q.get_desc()), dkc = p.alloc(kc.get_desc()), dvc = p.alloc(vc.get_desc());
  auto grad_of_output = [&](size_t i) {
    return i < n.outputs.size() && n.outputs[i] >= 0 && p.needs_grad(n.outputs[i]) ? p.grad(n.outputs[i]) : memory();
  };
  const memory dpresent_k = grad_of_output(1), dpresent_v = grad_of_output(2);
  memory dk = p.alloc(k.get_desc()), dv = p.alloc(v.get_desc());
  memory dpk = pk ? p.alloc(pk.get_desc()) : memory(), dpv = pv ? p.alloc(pv.get_desc()) : memory();
  std::vector<std::function<void()>> parts{[=] {
    const float *qd = data_of(q), *kd = data_of(kc), *vd = data_of(vc), *md = mask ? data_of(mask) : nullptr;
    const float* g = data_of(dy);
    float *gq = data_of(dq), *gk = data_of(dkc), *gv = data_of(dvc);
    std::fill(gq, gq + element_count(dq.get_desc()), 0.f);
    float* gm = dmask ? data_of(dmask) : nullptr;
    if (gm) std::fill(gm, gm + element_count(dmask.get_desc()), 0.f);
    auto start_from = [](float* to, const memory& from, const memory& like) {  // the present outputs' gradients
      const int64_t count = element_count(like.get_desc());
      if (from) std::copy_n(data_of(from), count, to);
      else std::fill(to, to + count, 0.f);
    };
    start_from(gk, dpresent_k, dkc);
    start_from(gv, dpresent_v, dvc);
    std::vector<float> prob(static_cast<size_t>(T)), cap(static_cast<size_t>(T)), dp(static_cast<size_t>(T));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t hk = h / (Hq / Hkv);
        for (int64_t i = 0; i < L; ++i) {
          const int64_t qoff = three_d ? ((b * L + i) * Hq + h) * E : ((b * Hq + h) * L + i) * E;
          const float* gi = g + (three_d ? ((b * L + i) * Hq + h) * Ev : ((b * Hq + h) * L + i) * Ev);
          const double sum = row_probabilities(qd + qoff, kd, md, b, h, i, prob.data(), cap.data());
          if (sum <= 0) continue;  // every key masked: the output is NaN, no gradient
          double pdp = 0;
          for (int64_t t = 0; t < T; ++t) {
            prob[t] = static_cast<float>(prob[t] / sum);
            const float* vt = vd + ((b * Hkv + hk) * T + t) * Ev;
            float* gvt = gv + ((b * Hkv + hk) * T + t) * Ev;
            double d = 0;
            for (int64_t e = 0; e < Ev; ++e) d += static_cast<double>(gi[e]) * vt[e], gvt[e] += prob[t] * gi[e];
            dp[t] = static_cast<float>(d);
            pdp += static_cast<double>(prob[t]) * d;
          }
          for (int64_t t = 0; t < T; ++t) {
            const float dm = prob[t] * (dp[t] - static_cast<float>(pdp)), ds = dm * cap[t] * scale;
            if (gm && t < mask_len) gm[b * mstride[0] + h * mstride[1] + i * mstride[2] + t * mstride[3]] += dm;
            if (ds == 0.f) continue;
            const float* kt = kd + ((b * Hkv + hk) * T + t) * E;
            float* gkt = gk + ((b * Hkv + hk) * T + t) * E;
            for (int64_t e = 0; e < E; ++e) gq[qoff + e] += ds * kt[e], gkt[e] += ds * qd[qoff + e];
          }
        }
      }
    // present [B, Hkv, T, size] -> past [B, Hkv, P, size] and new ([B, Hkv, Tn, size], or 3-D [B, Tn, Hkv * size])
    auto split = [&](const float* c, const memory& past, const memory& now, int64_t size) {
      for (int64_t b = 0; b < B; ++b)
        for (int64_t hh = 0; hh < Hkv; ++hh)
          for (int64_t t = 0; t < T; ++t) {
            float* to = t < P ? (past ? data_of(past) + ((b * Hkv + hh) * P + t) * size : nullptr)
                        : three_d ? data_of(now) + ((b * Tn + t - P) * Hkv + hh) * size
                                  : data_of(now) + ((b * Hkv + hh) * Tn + t - P) * size;
            if (to) std::copy_n(c + ((b * Hkv + hh) * T + t) * size, size, to);
          }
    };
    split(gk, dpk, dk, E);
    split(gv, dpv, dv, Ev);
  }};
  if (wants(Q)) parts.push_back(p.accumulate_into_grad(Q, dq));
  if (wants(K)) parts.push_back(p.accumulate_into_grad(K, dk));
  if (wants(V)) parts.push_back(p.accumulate_into_grad(V, dv));
  if (wants(PK)) parts.push_back(p.accumulate_into_grad(PK, dpk));
  if (wants(PV)) parts.push_back(p.accumulate_into_grad(PV, dpv));
  if (mask_grad) parts.push_back(p.accumulate_into_grad(M, dmask));
  step.info.has_backward = true;
  step.backward = sequence(std::move(parts));
}

namespace {

/// An Einsum equation resolved against its operands' shapes: every letter's extent and each operand's (and the
/// output's) stride per letter (a letter repeated in one term, a diagonal, sums its strides).
struct EinsumPlan {
  std::vector<int64_t> extent;                 ///< per letter, in order of first appearance
  std::vector<std::vector<int64_t>> strides;   ///< per operand, per letter (0 where the operand lacks it)
  std::vector<int64_t> out_strides;            ///< per letter (0 for summed letters)
};

EinsumPlan plan_einsum(Program& p, const Node& n) {
  const ops::EinsumEquation eq = ops::parse_einsum(n.attrs.s("equation", ""));
  std::vector<std::string> terms = eq.terms;
  if (terms.size() != n.inputs.size()) throw NoKernel{"Einsum equation does not match its inputs"};
  std::vector<Dims> dims;
  for (int vid : n.inputs) {
    const Shape& s = shape_of(p, vid);
    dims.emplace_back(s.dims.begin(), s.dims.end());
  }
  // An ellipsis stands for an operand's leading dims beyond its letters, right-aligned across operands (and
  // broadcast where they are 1): each of those dims becomes a letter of its own, below any printable one.
  constexpr char kEllipsisLetter = 1;
  constexpr const char* kEllipsis = "...";
  std::vector<size_t> ellipsis_dims(terms.size(), 0);
  size_t ellipsis_rank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    if (terms[k].find(kEllipsis) == std::string::npos) continue;
    const size_t named = terms[k].size() - 3;
    if (dims[k].size() < named) throw NoKernel{"Einsum term " + std::to_string(k) + " has more letters than dims"};
    ellipsis_dims[k] = dims[k].size() - named;
    ellipsis_rank = std::max(ellipsis_rank, ellipsis_dims[k]);
  }
  for (size_t k = 0; k < terms.size(); ++k) {
    const size_t at = terms[k].find(kEllipsis);
    if (at == std::string::npos) continue;
    std::string spelled;  // right-aligned: fewer dims take the last placeholder letters
    for (size_t i = ellipsis_rank - ellipsis_dims[k]; i < ellipsis_rank; ++i)
      spelled += static_cast<char>(kEllipsisLetter + i);
    terms[k].replace(at, 3, spelled);
  }
  std::string letters;
  for (const auto& t : terms)
    for (char c : t)
      if (letters.find(c) == std::string::npos) letters += c;
  std::string ellipsis_letters;
  for (size_t i = 0; i < ellipsis_rank; ++i) ellipsis_letters += static_cast<char>(kEllipsisLetter + i);
  std::string rhs = eq.output;  // an implicit output is spelled out by parse_einsum
  if (const size_t at = rhs.find(kEllipsis); at != std::string::npos) rhs.replace(at, 3, ellipsis_letters);
  EinsumPlan plan;
  plan.extent.assign(letters.size(), -1);
  auto letter = [&](char c) {
    const size_t l = letters.find(c);
    if (l == std::string::npos) throw NoKernel{std::string("Einsum output letter '") + c + "' is in no input"};
    return l;
  };
  // Extents: an input dim of 1 broadcasts against the letter's other extent, under an ellipsis or not (numpy's and
  // torch's einsum do the same).
  for (size_t k = 0; k < terms.size(); ++k) {
    if (terms[k].size() != dims[k].size())
      throw NoKernel{"Einsum term " + std::to_string(k) + " does not match its operand's rank"};
    for (size_t a = 0; a < dims[k].size(); ++a) {
      int64_t& e = plan.extent[letter(terms[k][a])];
      if (dims[k][a] == 1) continue;
      if (e >= 0 && e != dims[k][a]) throw NoKernel{"Einsum letter extents disagree"};
      e = dims[k][a];
    }
  }
  for (int64_t& e : plan.extent) e = std::max<int64_t>(e, 1);  // a letter of extent 1 everywhere
  auto strides_of = [&](const std::string& term, const Dims& d, bool broadcasts) {
    std::vector<int64_t> st(letters.size(), 0);
    int64_t s = 1;
    for (size_t a = term.size(); a-- > 0;) {
      const size_t l = letter(term[a]);
      if (d[a] == plan.extent[l]) st[l] += s;
      else if (d[a] != 1 || !broadcasts) throw NoKernel{"Einsum dims disagree with their letters' extents"};
      // else an input dim of 1 that broadcasts: stride 0
      s *= d[a];
    }
    return st;
  };
  for (size_t k = 0; k < terms.size(); ++k) plan.strides.push_back(strides_of(terms[k], dims[k], true));
  const Shape& ys = shape_of(p, n.outputs.at(0));
  const Dims out(ys.dims.begin(), ys.dims.end());
  if (rhs.size() != out.size()) throw NoKernel{"Einsum output does not match the output's rank"};
  plan.out_strides = strides_of(rhs, out, false);
  return plan;
}

/// Calls f(offsets) for every point of the index space of `plan` (all letters), offsets[k] into operand k and
/// offsets.back() into the output; an odometer over the letters, last letter fastest.
template <typename F>
void for_each_einsum_point(const EinsumPlan& plan, F f) {
  const size_t letters = plan.extent.size(), operands = plan.strides.size();
  for (int64_t e : plan.extent)
    if (e == 0) return;
  std::vector<int64_t> idx(letters, 0), off(operands + 1, 0);
  while (true) {
    f(off);
    size_t l = letters;
    while (l-- > 0) {
      for (size_t k = 0; k < operands; ++k) off[k] += plan.strides[k][l];
      off[operands] += plan.out_strides[l];
      if (++idx[l] < plan.extent[l]) break;
      for (size_t k = 0; k < operands; ++k) off[k] -= plan.strides[k][l] * plan.extent[l];
      off[operands] -= plan.out_strides[l] * plan.extent[l];
      idx[l] = 0;
    }
    if (l == static_cast<size_t>(-1)) return;
  }
}

}  // namespace

void lower_einsum(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  for (int vid : n.inputs)
    if (vid < 0) throw NoKernel{"Einsum with an omitted input"};
  const EinsumPlan plan = plan_einsum(p, n);
  const int Y = n.outputs.at(0);
  std::vector<memory> ins;
  for (int vid : n.inputs) ins.push_back(p.plain(vid, ni));
  memory dst = p.alloc(plain_desc(to_dims(shape_of(p, Y))));
  p.set_value(Y, dst);
  Step& step = p.add_step(ni, "reference", [plan, ins, dst] {
    std::vector<const float*> x;
    for (const memory& m : ins) x.push_back(data_of(m));
    float* y = data_of(dst);
    std::fill(y, y + elements(dst), 0.f);
    for_each_einsum_point(plan, [&](const std::vector<int64_t>& off) {
      float product = 1.f;
      for (size_t k = 0; k < x.size(); ++k) product *= x[k][off[k]];
      y[off.back()] += product;
    });
  });
  // The gradient of operand k: dY times every other operand, summed over the letters k lacks (the same loop).
  if (!p.needs_grad(Y)) return;
  std::vector<std::pair<size_t, memory>> diffs;
  for (size_t k = 0; k < ins.size(); ++k)
    if (p.needs_grad(n.inputs[k])) diffs.emplace_back(k, p.alloc(ins[k].get_desc()));
  if (diffs.empty()) return;
  memory dy = p.grad(Y);
  std::vector<std::function<void()>> parts{[plan, ins, dy, diffs] {
    std::vector<const float*> x;
    for (const memory& m : ins) x.push_back(data_of(m));
    const float* g = data_of(dy);
    for (const auto& [k, d] : diffs) std::fill(data_of(d), data_of(d) + elements(d), 0.f);
    for_each_einsum_point(plan, [&](const std::vector<int64_t>& off) {
      for (const auto& [k, d] : diffs) {
        float product = g[off.back()];
        for (size_t j = 0; j < x.size(); ++j)
          if (j != k) product *= x[j][off[j]];
        data_of(d)[off[k]] += product;
      }
    });
  }};
  for (const auto& [k, d] : diffs) parts.push_back(p.accumulate_into_grad(n.inputs[k], d));
  step.info.has_backward = true;
  step.backward = sequence(std::move(parts));
}

}  // namespace ridge::exec

