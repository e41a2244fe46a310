// Convolution family: Conv and ConvTranspose — shape inference, cost (forward and backward) and the
// benchdnn-style descriptor ("conv:mb1ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3dh1dw1g1b0").
#include <algorithm>

#include "ops/family.hpp"
#include "ridge/error.hpp"

namespace ridge::ops {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/// Spatial output extent of a sliding window (Conv, pooling): ONNX's formula, with PyTorch's and ONNX
/// Runtime's ceil-mode rule that the last window must start inside the input or its left padding.
int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pad_begin, int64_t pad_sum,
                   const std::string& auto_pad, bool ceil_mode) {
  if (in < 0 || k < 0) return -1;
  if (stride <= 0 || dil <= 0) throw RuleError("strides and dilations must be positive");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return ceil_div(in, stride);
  const int64_t eff = dil * (k - 1) + 1;
  const int64_t span = in + (auto_pad == "VALID" ? 0 : pad_sum) - eff;
  if (span < 0)
    throw RuleError(fmt::format("the input is too small: a window of {} does not fit {} (padded: {})", eff, in,
                                in + (auto_pad == "VALID" ? 0 : pad_sum)));
  int64_t out = (ceil_mode ? ceil_div(span, stride) : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

/// Checks shared by Conv and ConvTranspose: input and weight ranks, a positive group, and kernel_shape (when
/// given) equal to the weight's spatial dims. Returns the kernel.
std::vector<int64_t> conv_kernel(const RuleContext& c, const Shape& x, const Shape& wt) {
  if (x.rank() < 3) throw RuleError(fmt::format("input {} is not [N, C, spatial...]", to_string(x)));
  if (wt.rank() != x.rank()) throw RuleError("weight rank does not match the input rank");
  if (const int64_t group = c.n.attrs.i("group", 1); group <= 0)
    throw RuleError(fmt::format("group {} must be positive", group));
  const std::vector<int64_t> from_weight(wt.dims.begin() + 2, wt.dims.end());
  const auto kernel = c.n.attrs.ints("kernel_shape", from_weight);
  bool same = kernel.size() == from_weight.size();
  for (size_t i = 0; same && i < kernel.size(); ++i) same = from_weight[i] < 0 || kernel[i] == from_weight[i];
  if (!same)
    throw RuleError(fmt::format("kernel_shape [{}] does not match the weight {}", fmt::join(kernel, ", "),
                                to_string(wt)));
  return kernel;
}

bool conv_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  const Shape* wt = c.shape(1);
  if (!x || !wt) return false;
  const auto kernel = conv_kernel(c, *x, *wt);  // first: it checks the weight's rank that dims[0] needs
  return windowed(c, wt->dims[0], kernel);
}

bool conv_transpose_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  const Shape* wt = c.shape(1);
  if (!x || !wt) return false;
  const auto kernel = conv_kernel(c, *x, *wt);
  const int spatial = x->rank() - 2;
  const int64_t group = c.n.attrs.i("group", 1);
  if (x->dims[1] >= 0 && wt->dims[0] >= 0 && x->dims[1] != wt->dims[0])
    throw RuleError(fmt::format("input has {} channels but weight {} expects {}", x->dims[1], to_string(*wt),
                                wt->dims[0]));
  if (wt->dims[0] >= 0 && wt->dims[0] % group != 0)
    throw RuleError(fmt::format("group {} does not divide the {} input channels", group, wt->dims[0]));
  const auto strides = c.n.attrs.ints("strides", std::vector<int64_t>(spatial, 1));
  const auto dil = c.n.attrs.ints("dilations", std::vector<int64_t>(spatial, 1));
  const auto pads = c.n.attrs.ints("pads", std::vector<int64_t>(2 * spatial, 0));
  const auto extra = c.n.attrs.ints("output_padding", std::vector<int64_t>(spatial, 0));
  const auto explicit_out = c.n.attrs.ints("output_shape");
  const std::string auto_pad = c.n.attrs.s("auto_pad", "NOTSET");
  if (!explicit_out.empty() && static_cast<int>(explicit_out.size()) < spatial)
    throw RuleError("ConvTranspose output_shape has fewer dims than the input's spatial dims");
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

// A MAC is 2 FLOPs. Backward: grad-input is the transposed convolution (2 MACs' worth), grad-weight the
// input x grad-output correlation (the same MAC set), grad-bias a sum over N and space.
bool conv_cost(const CostContext& c, Cost& cost, std::string&) {
  const ConvGeom cg = conv_geometry(c.g, c.n);
  cost.macs = cg.macs;
  const int x = c.n.inputs[0], w = c.n.inputs[1], b = cg.bias ? c.n.inputs[2] : -1;
  if (folded_batchnorm(c.n)) {
    // An eval-mode export folded a BatchNorm into this conv: cost it as conv (no bias) + BatchNorm, so that
    // the file and the original model agree; its bias is the BN shift.
    cost.flops = 2 * cg.macs + 2 * cg.out_elems;
    c.add_grad(x, 2 * cg.macs + 8 * cg.out_elems, cost);
    c.add_grad(w, 2 * cg.macs, cost);
    if (b >= 0) c.add_grad(b, 3 * cg.out_elems, cost);
    return true;
  }
  cost.flops = 2 * cg.macs + (cg.bias ? cg.out_elems : 0);
  c.add_grad(x, 2 * cg.macs, cost);
  c.add_grad(w, 2 * cg.macs, cost);
  if (b >= 0) c.add_grad(b, cg.out_elems, cost);
  return true;
}

// ---- quantized convolutions (QLinearConv, ConvInteger) ----------------------------------------------------

/// A convolution whose data is input 0 and whose weight is input `w`: Conv's checks and output extents, plus
/// the input channels (group x the weight's Cin/g), which Conv leaves to the weight's producer.
bool integer_conv_shape(RuleContext& c, int w, DType t) {
  const Shape* x = c.shape(0);
  const Shape* wt = c.shape(w);
  if (!x || !wt) return false;
  const auto kernel = conv_kernel(c, *x, *wt);
  const int64_t group = c.n.attrs.i("group", 1);
  if (group > kMaxDim) throw RuleError(fmt::format("group {} is absurd", group));
  if (x->dims[1] >= 0 && wt->dims[1] >= 0 && x->dims[1] != wt->dims[1] * group)
    throw RuleError(fmt::format("input has {} channels but weight {} with group {} expects {}", x->dims[1],
                                to_string(*wt), group, wt->dims[1] * group));
  if (wt->dims[0] >= 0 && wt->dims[0] % group != 0)
    throw RuleError(fmt::format("group {} does not divide the {} output channels", group, wt->dims[0]));
  return windowed(c, wt->dims[0], kernel, t);
}

/// QLinearConv (x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B): the output is
/// quantized to y_zero_point's type; w_scale and w_zero_point hold one value or one per output channel.
bool qlinear_conv_infer(RuleContext& c) {
  if (c.inputs() < 8) throw RuleError(fmt::format("QLinearConv needs 8 or 9 inputs, not {}", c.inputs()));
  const Shape* wt = c.shape(3);
  const int64_t cout = wt && wt->rank() > 0 ? wt->dims[0] : -1;
  auto per_channel = [&](const Shape& s) { return s.rank() == 1 && (s.dims[0] == 1 || s.dims[0] == cout); };
  for (int i : {4, 5})
    if (const Shape* s = c.shape(i); s && s->known() && cout >= 0 && s->rank() != 0 && !per_channel(*s))
      throw RuleError(fmt::format("QLinearConv input {} is {}: one value or one per output channel ({})", i,
                                  to_string(*s), cout));
  if (const Shape* b = c.shape(8); b && b->known() && cout >= 0 && (b->rank() != 1 || b->dims[0] != cout))
    throw RuleError(fmt::format("QLinearConv bias is {}, not one value per output channel ({})", to_string(*b), cout));
  const DType t = c.present(7) && c.dtype(7) != DType::Unknown ? c.dtype(7) : DType::U8;
  return integer_conv_shape(c, 3, t);
}

/// ConvInteger (x, w, x_zero_point, w_zero_point): int32 accumulators, no bias, no requantization.
bool conv_integer_infer(RuleContext& c) { return integer_conv_shape(c, 1, DType::I32); }

/// MACs of a convolution whose weight is input `w`: E(out) x Cin/g x prod(k), over every tap as Conv's.
Count integer_conv_macs(const CostContext& c, int w) {
  const Shape& wt = c.in_shape(w);
  Count per_output = 1;
  for (int i = 1; i < wt.rank(); ++i) per_output *= wt[i];
  return c.out_elems() * per_output;
}

// Integer MACs count as the float convolution's (2 FLOPs each; the zero points are folded into the
// accumulation, as gemmlowp and ONNX Runtime do). QLinearConv adds its int32 bias (E(out)) and requantizes each
// output: multiply by x_scale * w_scale / y_scale, round, add the zero point, clamp at both ends (5 per element,
// QuantizeLinear's). Inference ops: no gradient.
bool qlinear_conv_cost(const CostContext& c, Cost& cost, std::string&) {
  cost.macs = integer_conv_macs(c, 3);
  const bool bias = c.present(8);
  cost.flops = 2 * cost.macs + (bias ? 6 : 5) * c.out_elems();
  return true;
}

bool conv_integer_cost(const CostContext& c, Cost& cost, std::string&) {
  cost.macs = integer_conv_macs(c, 1);
  cost.flops = 2 * cost.macs;
  return true;
}

// ---- descriptor ------------------------------------------------------------------------------------------

std::string conv_print(const OpProblem& p) {
  if (p.inputs.size() < 2 || p.inputs[0].shape.rank() != 4 || p.inputs[1].kind != ValueKind::Param) return "";
  if (p.attrs.s("auto_pad", "NOTSET") != "NOTSET" || p.attrs.has("folded_batchnorm")) return "";
  for (const auto& [k, v] : p.attrs.items)
    if (k != "kernel_shape" && k != "strides" && k != "pads" && k != "dilations" && k != "group") return "";
  const auto pd = p.attrs.ints("pads", {0, 0, 0, 0});
  if (pd.size() != 4 || pd[0] != pd[2] || pd[1] != pd[3]) return "";  // asymmetric padding: generic form
  const Shape& x = p.inputs[0].shape;
  const Shape& w = p.inputs[1].shape;
  const auto st = p.attrs.ints("strides", {1, 1});
  const auto dl = p.attrs.ints("dilations", {1, 1});
  if (st.size() != 2 || dl.size() != 2) return "";
  const bool bias = p.inputs.size() > 2 && p.inputs[2].present;
  const int64_t oh = (x[2] + 2 * pd[0] - dl[0] * (w[2] - 1) - 1) / st[0] + 1;
  const int64_t ow = (x[3] + 2 * pd[1] - dl[1] * (w[3] - 1) - 1) / st[1] + 1;
  return fmt::format("mb{}ic{}ih{}iw{}oc{}oh{}ow{}kh{}kw{}sh{}sw{}ph{}pw{}dh{}dw{}g{}b{}{}", x[0], x[1], x[2], x[3],
                     w[0], oh, ow, w[2], w[3], st[0], st[1], pd[0], pd[1], dl[0], dl[1], p.attrs.i("group", 1),
                     bias ? 1 : 0, p.inputs[0].needs_grad ? "" : "gx0");
}

int64_t need(const std::map<std::string, int64_t>& f, const char* key, const std::string& desc) {
  auto it = f.find(key);
  if (it == f.end()) throw Error(fmt::format("descriptor '{}': missing field '{}'", desc, key));
  return it->second;
}

int64_t opt(const std::map<std::string, int64_t>& f, const char* key, int64_t def) {
  auto it = f.find(key);
  return it == f.end() ? def : it->second;
}

std::optional<OpProblem> conv_parse(const std::string& body, const std::string& desc) {
  if (body.rfind("mb", 0) != 0) return std::nullopt;
  auto f = short_form_fields(body, desc);
  const int64_t mb = need(f, "mb", desc), ic = need(f, "ic", desc), ih = need(f, "ih", desc),
                iw = need(f, "iw", desc), oc = need(f, "oc", desc), kh = need(f, "kh", desc), kw = need(f, "kw", desc),
                sh = opt(f, "sh", 1), sw = opt(f, "sw", 1), ph = opt(f, "ph", 0), pw = opt(f, "pw", 0),
                dh = opt(f, "dh", 1), dw = opt(f, "dw", 1), g = opt(f, "g", 1);
  if (g < 1 || ic % g || oc % g) throw Error(fmt::format("descriptor '{}': groups {} must divide ic and oc", desc, g));
  if (sh < 1 || sw < 1 || dh < 1 || dw < 1)
    throw Error(fmt::format("descriptor '{}': strides and dilations must be >= 1", desc));
  const int64_t oh = (ih + 2 * ph - dh * (kh - 1) - 1) / sh + 1, ow = (iw + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
  if (ih + 2 * ph - dh * (kh - 1) - 1 < 0 || iw + 2 * pw - dw * (kw - 1) - 1 < 0 || oh < 1 || ow < 1)
    throw Error(fmt::format("descriptor '{}': the kernel does not fit the input", desc));
  if (f.count("oh") && f["oh"] != oh)
    throw Error(fmt::format("descriptor '{}': oh{} disagrees with the computed {}", desc, f["oh"], oh));
  if (f.count("ow") && f["ow"] != ow)
    throw Error(fmt::format("descriptor '{}': ow{} disagrees with the computed {}", desc, f["ow"], ow));
  OpProblem p;
  p.op = OpKind::Conv;
  p.inputs.push_back(OpProblem::input(Shape{{mb, ic, ih, iw}}, ValueKind::Input, opt(f, "gx", 1) != 0));
  p.inputs.push_back(OpProblem::input(Shape{{oc, ic / g, kh, kw}}, ValueKind::Param));
  if (opt(f, "b", 0)) p.inputs.push_back(OpProblem::input(Shape{{oc}}, ValueKind::Param));
  p.attrs = conv2d_attrs({kh, kw, sh, sw, ph, pw, dh, dw, g});
  return p;
}

}  // namespace

bool windowed(RuleContext& c, int64_t channels, std::vector<int64_t> kernel, DType t) {
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
    out.dims.push_back(window_out(x->dims[2 + i], kernel[i], strides[i], dil[i], pads[i], pads[i] + pads[i + spatial],
                                  auto_pad, ceil_mode));
  c.out(0, out, t);
  if (c.n.op == OpKind::MaxPool) c.out(1, out, DType::I64);
  return true;
}

const OpRule rule_conv{conv_infer, conv_cost, conv_print, conv_parse};
const OpRule rule_conv_transpose{conv_transpose_infer, conv_cost};
const OpRule rule_qlinear_conv{qlinear_conv_infer, qlinear_conv_cost};
const OpRule rule_conv_integer{conv_integer_infer, conv_integer_cost};

}  // namespace ridge::ops
