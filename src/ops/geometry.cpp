#include "ridge/op_geometry.hpp"

#include <algorithm>

#include <map>

namespace ridge::ops {

std::optional<Count> elements(const Graph& g, int value) {
  if (value < 0) return std::nullopt;
  const Shape& s = g.value(value).shape;
  if (!s.known()) return std::nullopt;
  return s.elements();
}

Count out_elems(const Graph& g, const Node& n) {
  if (n.outputs.empty()) return 0;
  return elements(g, n.outputs[0]).value_or(0);
}

Count in_elems(const Graph& g, const Node& n) {
  for (int v : n.inputs)
    if (v >= 0) return elements(g, v).value_or(0);
  return 0;
}

ConvGeom conv_geometry(const Graph& g, const Node& n) {
  ConvGeom c;
  const Shape& x = g.value(n.inputs.at(0)).shape;
  const Shape& w = g.value(n.inputs.at(1)).shape;
  const Shape& y = g.value(n.outputs.at(0)).shape;
  c.groups = n.attrs.i("group", 1);
  c.batch = x[0];
  c.cin = x[1];
  c.cout = y[1];
  c.kernel_taps = 1;
  for (int i = 2; i < w.rank(); ++i) c.kernel_taps *= w[i];
  c.out_elems = y.elements();
  c.in_elems = x.elements();
  c.bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  if (n.op == OpKind::ConvTranspose) {
    // Weight is [Cin, Cout/g, k...]: every input element scatters into Cout/g * prod(k) outputs.
    c.per_output = w[1] * c.kernel_taps;
    c.macs = c.in_elems * c.per_output;
  } else {
    c.per_output = w[1] * c.kernel_taps;  // weight [Cout, Cin/g, k...]
    c.macs = c.out_elems * c.per_output;
    const int spatial = x.rank() - 2;
    const auto strides = n.attrs.ints("strides", std::vector<int64_t>(spatial, 1));
    const auto dil = n.attrs.ints("dilations", std::vector<int64_t>(spatial, 1));
    auto pads = n.attrs.ints("pads", std::vector<int64_t>(2 * spatial, 0));
    const std::string auto_pad = n.attrs.s("auto_pad", "NOTSET");
    Count taps = Count{y[0]} * y[1] * w[1];
    for (int i = 0; i < spatial && static_cast<int>(strides.size()) == spatial && static_cast<int>(pads.size()) == 2 * spatial &&
                    static_cast<int>(dil.size()) == spatial; ++i) {
      int64_t begin = pads[i];
      if (auto_pad == "VALID") begin = 0;
      if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        const int64_t total = std::max<int64_t>(0, (y[2 + i] - 1) * strides[i] + dil[i] * (w[2 + i] - 1) + 1 - x[2 + i]);
        begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      }
      taps *= valid_taps(x[2 + i], y[2 + i], w[2 + i], strides[i], begin, dil[i]);
    }
    c.effective_macs = taps;
  }
  return c;
}

Count valid_taps(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad_begin, int64_t dilation) {
  Count total = 0;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * stride - pad_begin;  // input index of tap 0
    // taps t in [0, k) with 0 <= start + t*d < in
    const int64_t lo = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
    const int64_t hi = start >= in ? -1 : std::min<int64_t>(k - 1, (in - 1 - start) / dilation);
    if (hi >= lo) total += hi - lo + 1;
  }
  return total;
}

LinearGeom linear_geometry(const Graph& g, const Node& n) {
  LinearGeom l;
  const Shape& a = g.value(n.inputs.at(0)).shape;
  const Shape& b = g.value(n.inputs.at(1)).shape;
  const Shape& y = g.value(n.outputs.at(0)).shape;
  const bool trans_a = n.attrs.i("transA", 0) != 0, trans_b = n.attrs.i("transB", 0) != 0;
  l.in = trans_a ? a[0] : a[-1];
  l.out = trans_b ? b[0] : b[1];
  l.rows = a.elements() / l.in;
  l.macs = l.rows * l.in * l.out;
  l.bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  l.first_dim = y.rank() ? y[0] : 1;
  return l;
}

MatMulGeom matmul_geometry(const Graph& g, const Node& n) {
  MatMulGeom m;
  const Shape& a = g.value(n.inputs.at(0)).shape;
  const Shape& b = g.value(n.inputs.at(1)).shape;
  const Shape& y = g.value(n.outputs.at(0)).shape;
  m.k = a[-1];
  m.m = a.rank() >= 2 ? a[-2] : 1;
  m.n = b.rank() >= 2 ? b[-1] : 1;
  Count out = y.elements();
  m.batch = (m.m * m.n) > 0 ? out / (m.m * m.n) : 0;
  m.macs = out * m.k;
  return m;
}

Count adaptive_window_sum(int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w) {
  auto axis = [](int64_t in, int64_t out) {
    Count total = 0;
    for (int64_t i = 0; i < out; ++i) {
      int64_t start = (i * in) / out;
      int64_t end = ((i + 1) * in + out - 1) / out;
      total += end - start;
    }
    return total;
  };
  return axis(in_h, out_h) * axis(in_w, out_w);
}

Count pool_taps(const Graph& g, const Node& n) {
  if (n.op == OpKind::AdaptiveAvgPool) {
    const Shape& x = g.value(n.inputs.at(0)).shape;
    const Shape& y = g.value(n.outputs.at(0)).shape;
    return adaptive_window_sum(x[2], x[3], y[2], y[3]);
  }
  Count taps = 1;
  for (int64_t k : n.attrs.ints("kernel_shape")) taps *= k;
  return taps;
}

EinsumEquation parse_einsum(const std::string& equation) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  EinsumEquation e;
  e.terms.emplace_back();
  for (char c : eq.substr(0, arrow)) {
    if (c == ',') e.terms.emplace_back();
    else e.terms.back() += c;
  }
  if (arrow != std::string::npos) {
    e.output = eq.substr(arrow + 2);
    return e;
  }
  std::map<char, int> count;  // ordered: the implicit output's letters come out alphabetical
  bool ellipsis = false;
  for (const auto& t : e.terms) {
    const size_t dots = t.find("...");
    ellipsis |= dots != std::string::npos;
    for (size_t i = 0; i < t.size(); ++i) {
      if (i == dots) i += 2;
      else ++count[t[i]];
    }
  }
  if (ellipsis) e.output = "...";
  for (auto [c, n] : count)
    if (n == 1) e.output += c;
  return e;
}

std::optional<Count> einsum_macs(const Graph& g, const Node& n) {
  const std::string equation = n.attrs.s("equation", "");
  if (equation.substr(0, equation.find("->")).empty()) return std::nullopt;
  const EinsumEquation e = parse_einsum(equation);
  std::map<char, int64_t> extent;
  for (size_t operand = 0; operand < e.terms.size(); ++operand) {
    const std::string& term = e.terms[operand];
    if (term.find("...") != std::string::npos) return std::nullopt;
    for (size_t pos = 0; pos < term.size(); ++pos) {
      if (operand >= n.inputs.size() || n.inputs[operand] < 0) return std::nullopt;
      const Shape& s = g.value(n.inputs[operand]).shape;
      if (static_cast<int>(pos) >= s.rank()) return std::nullopt;
      extent[term[pos]] = s.dims[pos];
    }
  }
  Count macs = 1;
  for (auto& [c, e] : extent) macs *= e;
  return macs;
}

}  // namespace ridge::ops
