// ridge's own shape rules for geometric ops: convolution, pooling, matrix products, normalisation,
// reductions and views. Unknown dims (-1) propagate; a missing input rank means the rule cannot run.
#include <algorithm>
#include <map>
#include <set>

#include "load/onnx/rule_context.hpp"
#include "ridge/error.hpp"

namespace ridge::onnx_in {

int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < std::min(to, dims.size()); ++i) {
    if (dims[i] < 0) return -1;
    if (dims[i] != 0 && p > kMaxDim * 1024 / dims[i]) throw RuleError("dims multiply beyond any real tensor");
    p *= dims[i];
  }
  return p;
}

void merge_shape(Work& w, int v, const Shape& s) {
  Value& val = w.g.value(v);
  ShapeSlot& slot = w.slots[v];
  if (!slot.rank_known) {
    val.shape = s;
    slot.rank_known = true;
    return;
  }
  if (val.shape.rank() != s.rank()) return;  // first source wins on a rank conflict
  for (int i = 0; i < s.rank(); ++i)
    if (val.shape.dims[i] < 0 && s.dims[i] >= 0) val.shape.dims[i] = s.dims[i];
}

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/// Spatial output extent of a sliding window (Conv, pooling), ONNX's formula.
int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pad_sum, const std::string& auto_pad,
                   bool ceil_mode) {
  if (in < 0 || k < 0) return -1;
  if (stride <= 0 || dil <= 0) throw RuleError("strides and dilations must be positive");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return ceil_div(in, stride);
  const int64_t eff = dil * (k - 1) + 1;
  const int64_t span = in + (auto_pad == "VALID" ? 0 : pad_sum) - eff;
  if (span < 0) throw RuleError(fmt::format("window {} is larger than the padded input {}", eff, in + pad_sum));
  return (ceil_mode ? ceil_div(span, stride) : span / stride) + 1;
}

/// Conv and pooling: N, C (from `channels`), then one window_out per spatial dim.
bool windowed(RuleContext& c, int64_t channels, std::vector<int64_t> kernel) {
  const Shape* x = c.shape(0);
  if (!x || x->rank() < 3) return false;
  const int spatial = x->rank() - 2;
  if (static_cast<int>(kernel.size()) != spatial) throw RuleError("kernel_shape rank does not match the input");
  const auto strides = c.n.attrs.ints("strides", std::vector<int64_t>(spatial, 1));
  const auto dil = c.n.attrs.ints("dilations", std::vector<int64_t>(spatial, 1));
  const auto pads = c.n.attrs.ints("pads", std::vector<int64_t>(2 * spatial, 0));
  if (static_cast<int>(strides.size()) != spatial || static_cast<int>(dil.size()) != spatial ||
      static_cast<int>(pads.size()) != 2 * spatial)
    throw RuleError("strides/dilations/pads do not match the input rank");
  const std::string auto_pad = c.n.attrs.s("auto_pad", "NOTSET");
  const bool ceil_mode = c.n.attrs.i("ceil_mode", 0) != 0;
  Shape out{{x->dims[0], channels}};
  for (int i = 0; i < spatial; ++i)
    out.dims.push_back(window_out(x->dims[2 + i], kernel[i], strides[i], dil[i], pads[i] + pads[i + spatial], auto_pad,
                                  ceil_mode));
  c.out(0, out);
  if (c.n.op == OpKind::MaxPool) c.out(1, out, DType::I64);
  return true;
}

bool conv(RuleContext& c) {
  const Shape* x = c.shape(0);
  const Shape* wt = c.shape(1);
  if (!x || !wt) return false;
  if (wt->rank() != x->rank()) throw RuleError("weight rank does not match the input rank");
  std::vector<int64_t> kernel = c.n.attrs.ints("kernel_shape", {wt->dims.begin() + 2, wt->dims.end()});
  return windowed(c, wt->dims[0], kernel);
}

bool conv_transpose(RuleContext& c) {
  const Shape* x = c.shape(0);
  const Shape* wt = c.shape(1);
  if (!x || !wt || x->rank() < 3) return false;
  if (wt->rank() != x->rank()) throw RuleError("weight rank does not match the input rank");
  const int spatial = x->rank() - 2;
  const int64_t group = c.n.attrs.i("group", 1);
  const auto kernel = c.n.attrs.ints("kernel_shape", {wt->dims.begin() + 2, wt->dims.end()});
  const auto strides = c.n.attrs.ints("strides", std::vector<int64_t>(spatial, 1));
  const auto dil = c.n.attrs.ints("dilations", std::vector<int64_t>(spatial, 1));
  const auto pads = c.n.attrs.ints("pads", std::vector<int64_t>(2 * spatial, 0));
  const auto extra = c.n.attrs.ints("output_padding", std::vector<int64_t>(spatial, 0));
  const auto explicit_out = c.n.attrs.ints("output_shape");
  const std::string auto_pad = c.n.attrs.s("auto_pad", "NOTSET");
  if (static_cast<int>(kernel.size()) != spatial || static_cast<int>(strides.size()) != spatial ||
      static_cast<int>(dil.size()) != spatial || static_cast<int>(pads.size()) != 2 * spatial ||
      static_cast<int>(extra.size()) != spatial)
    throw RuleError("ConvTranspose attributes do not match the input rank");
  Shape out{{x->dims[0], wt->dims[1] < 0 ? -1 : wt->dims[1] * group}};
  for (int i = 0; i < spatial; ++i) {
    const int64_t in = x->dims[2 + i];
    if (!explicit_out.empty()) {
      out.dims.push_back(explicit_out.at(explicit_out.size() - spatial + i));
    } else if (in < 0) {
      out.dims.push_back(-1);
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out.dims.push_back(in * strides[i]);
    } else {
      const int64_t pad_sum = auto_pad == "VALID" ? 0 : pads[i] + pads[i + spatial];
      out.dims.push_back(strides[i] * (in - 1) + extra[i] + (kernel[i] - 1) * dil[i] + 1 - pad_sum);
    }
  }
  c.out(0, out);
  return true;
}

bool pool(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  const auto kernel = c.n.attrs.ints("kernel_shape");
  if (kernel.empty()) throw RuleError("pooling needs kernel_shape");
  return windowed(c, x->rank() > 1 ? x->dims[1] : -1, kernel);
}

bool global_pool(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x || x->rank() < 2) return false;
  Shape out = *x;
  std::fill(out.dims.begin() + 2, out.dims.end(), 1);
  c.out(0, out);
  return true;
}

bool adaptive_pool(RuleContext& c) {
  const Shape* x = c.shape(0);
  const auto size = c.n.attrs.ints("output_size");
  if (!x || x->rank() < 2 || static_cast<int>(size.size()) != x->rank() - 2) return false;
  Shape out{{x->dims[0], x->dims[1]}};
  out.dims.insert(out.dims.end(), size.begin(), size.end());
  c.out(0, out);
  return true;
}

bool gemm(RuleContext& c) {
  const Shape* a = c.shape(0);
  const Shape* b = c.shape(1);
  if (!a || !b) return false;
  if (a->rank() != 2 || b->rank() != 2) throw RuleError("Gemm needs 2-D A and B");
  const bool ta = c.n.attrs.i("transA", 0) != 0, tb = c.n.attrs.i("transB", 0) != 0;
  c.out(0, Shape{{a->dims[ta ? 1 : 0], b->dims[tb ? 0 : 1]}});
  return true;
}

bool matmul(RuleContext& c) {
  const Shape* pa = c.shape(0);
  const Shape* pb = c.shape(1);
  if (!pa || !pb) return false;
  if (pa->rank() == 0 || pb->rank() == 0) throw RuleError("MatMul of a scalar");
  Shape a = *pa, b = *pb;
  const bool a_vec = a.rank() == 1, b_vec = b.rank() == 1;
  if (a_vec) a.dims.insert(a.dims.begin(), 1);
  if (b_vec) b.dims.push_back(1);
  Shape ba{{a.dims.begin(), a.dims.end() - 2}}, bb{{b.dims.begin(), b.dims.end() - 2}};
  Shape out = broadcast_shapes(ba, bb, "MatMul batch dims");
  if (!a_vec) out.dims.push_back(a.dims[a.rank() - 2]);
  if (!b_vec) out.dims.push_back(b.dims[b.rank() - 1]);
  c.out(0, out);
  return true;
}

/// Einsum: every letter's extent from the operands, output from the explicit or implicit right-hand side.
bool einsum(RuleContext& c) {
  std::string eq;
  for (char ch : c.n.attrs.s("equation", ""))
    if (ch != ' ') eq += ch;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(terms.size()) != c.inputs()) throw RuleError("Einsum equation does not match the inputs");
  std::map<char, int64_t> extent;
  std::map<char, int> count;
  Shape ellipsis;
  for (size_t t = 0; t < terms.size(); ++t) {
    const Shape* s = c.shape(static_cast<int>(t));
    if (!s) return false;
    std::string term = terms[t];
    const size_t dots = term.find("...");
    const int letters = static_cast<int>(term.size()) - (dots == std::string::npos ? 0 : 3);
    const int ell_rank = s->rank() - letters;
    if (ell_rank < 0 || (dots == std::string::npos && ell_rank != 0))
      throw RuleError("Einsum term '" + term + "' does not match its operand's rank");
    int dim = 0;
    for (size_t i = 0; i < term.size(); ++i) {
      if (term.compare(i, 3, "...") == 0) {
        ellipsis = broadcast_shapes(ellipsis, Shape{{s->dims.begin() + dim, s->dims.begin() + dim + ell_rank}}, "Einsum");
        dim += ell_rank;
        i += 2;
        continue;
      }
      const char ch = term[i];
      const int64_t d = s->dims[dim++];
      ++count[ch];
      auto [it, fresh] = extent.emplace(ch, d);
      if (!fresh && (it->second < 0 || it->second == 1)) it->second = d;
    }
  }
  std::string rhs;
  if (arrow != std::string::npos) {
    rhs = eq.substr(arrow + 2);
  } else {
    if (lhs.find("...") != std::string::npos) rhs = "...";
    for (auto [ch, n] : count)
      if (n == 1) rhs += ch;
  }
  Shape out;
  for (size_t i = 0; i < rhs.size(); ++i) {
    if (rhs.compare(i, 3, "...") == 0) {
      out.dims.insert(out.dims.end(), ellipsis.dims.begin(), ellipsis.dims.end());
      i += 2;
    } else if (auto it = extent.find(rhs[i]); it != extent.end()) {
      out.dims.push_back(it->second);
    } else {
      throw RuleError(std::string("Einsum output letter '") + rhs[i] + "' is not in any input");
    }
  }
  c.out(0, out);
  return true;
}

bool same_as_input(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  c.out(0, *x);
  return true;
}

bool batch_norm(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  c.out(0, *x);
  const int64_t channels = x->rank() > 1 ? x->dims[1] : -1;
  for (int k = 1; k < c.outputs(); ++k) c.out(k, Shape{{channels}});
  return true;
}

bool layer_norm(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  c.out(0, *x);
  Shape stat = *x;
  for (int i = c.axis(c.n.attrs.i("axis", -1), x->rank()); i < x->rank(); ++i) stat.dims[i] = 1;
  for (int k = 1; k < c.outputs(); ++k) c.out(k, stat, DType::F32);
  return true;
}

bool dropout(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  c.out(0, *x);
  c.out(1, *x, DType::Bool);
  if (const auto* d = c.ints(0)) c.out_ints(0, *d);
  return true;
}

bool reduce(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  std::vector<int64_t> axes;
  if (c.n.op == OpKind::ArgMax) {
    axes = {c.n.attrs.i("axis", 0)};
  } else if (c.present(1)) {
    const auto* given = c.ints(1);
    if (!given) return false;
    axes = *given;
  } else {
    axes = c.n.attrs.ints("axes");
  }
  const bool keep = c.n.attrs.i("keepdims", 1) != 0;
  if (axes.empty() && c.n.op != OpKind::ArgMax && c.n.attrs.i("noop_with_empty_axes", 0) != 0) {
    c.out(0, *x);
    return true;
  }
  std::set<int> reduced;
  for (int64_t a : axes) reduced.insert(c.axis(a, x->rank()));
  if (axes.empty())
    for (int i = 0; i < x->rank(); ++i) reduced.insert(i);
  Shape out;
  for (int i = 0; i < x->rank(); ++i) {
    if (!reduced.count(i)) out.dims.push_back(x->dims[i]);
    else if (keep) out.dims.push_back(1);
  }
  c.out(0, out, c.n.op == OpKind::ArgMax ? DType::I64 : DType::Unknown);
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
  Shape out;
  for (int64_t p : perm) out.dims.push_back(x->dims[c.axis(p, x->rank())]);
  c.out(0, out);
  return true;
}

bool resize(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  // opset 10: (X, scales); opset 11+: (X, roi, scales, sizes).
  const int scales_at = c.inputs() == 2 ? 1 : 2;
  if (const auto* sizes = c.ints(3); sizes && !sizes->empty()) {
    if (static_cast<int>(sizes->size()) != x->rank()) throw RuleError("Resize sizes do not match the input rank");
    c.out(0, Shape{*sizes});
    return true;
  }
  auto scales = c.reals(scales_at);
  if (!scales || scales->empty()) return false;
  if (static_cast<int>(scales->size()) != x->rank()) throw RuleError("Resize scales do not match the input rank");
  Shape out;
  for (int i = 0; i < x->rank(); ++i)
    out.dims.push_back(x->dims[i] < 0 ? -1 : static_cast<int64_t>(static_cast<double>(x->dims[i]) * (*scales)[i]));
  c.out(0, out);
  return true;
}

}  // namespace

bool geometry_rule(RuleContext& c, bool& handled) {
  handled = true;
  switch (c.n.op) {
    case OpKind::Conv: return conv(c);
    case OpKind::ConvTranspose: return conv_transpose(c);
    case OpKind::MaxPool: case OpKind::AveragePool: return pool(c);
    case OpKind::GlobalAveragePool: return global_pool(c);
    case OpKind::AdaptiveAvgPool: return adaptive_pool(c);
    case OpKind::Gemm: return gemm(c);
    case OpKind::MatMul: return matmul(c);
    case OpKind::Einsum: return einsum(c);
    case OpKind::BatchNormalization: return batch_norm(c);
    case OpKind::LayerNormalization: return layer_norm(c);
    case OpKind::Dropout: return dropout(c);
    case OpKind::ReduceMean: case OpKind::ReduceSum: case OpKind::ReduceMax: case OpKind::ArgMax: return reduce(c);
    case OpKind::Flatten: return flatten(c);
    case OpKind::Transpose: return transpose(c);
    case OpKind::Resize: return resize(c);
    case OpKind::Relu: case OpKind::Clip: case OpKind::Sigmoid: case OpKind::Tanh: case OpKind::Erf:
    case OpKind::Gelu: case OpKind::LeakyRelu: case OpKind::HardSigmoid: case OpKind::HardSwish: case OpKind::Sqrt:
    case OpKind::Exp: case OpKind::Log: case OpKind::Reciprocal: case OpKind::Softmax: case OpKind::LogSoftmax:
      return same_as_input(c);
    default: handled = false; return false;
  }
}

bool apply_shape_rule(Work& w, int node) {
  Node& n = w.g.nodes[node];
  if (n.op == OpKind::Unknown) return false;
  RuleContext c{w, n};
  try {
    bool handled = false;
    bool ok = geometry_rule(c, handled);
    if (!handled) ok = data_rule(c, handled);
    return ok;
  } catch (const RuleError& e) {
    throw Error(fmt::format("{}: node '{}' ({}): {}", w.label, w.onnx_names[node], n.op_type, e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("{}: node '{}' ({}): {}", w.label, w.onnx_names[node], n.op_type, e.what()));
  }
}

}  // namespace ridge::onnx_in
