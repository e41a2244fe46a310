// oneDNN lowerings of the compute-heavy ops: convolution, Gemm and MatMul, with their backward passes.
#include "lowerings.hpp"

namespace ridge::exec {

using Args = std::unordered_map<int, memory>;

namespace {

/// A per-axis integer attribute (strides, pads, ...) of `count` values, `def` each when absent.
Dims axis_attr(const Node& n, const char* key, int64_t def, size_t count) {
  auto v = n.attrs.ints(key);
  if (v.empty()) v.assign(count, def);
  if (v.size() != count) throw NoKernel{std::string("attribute ") + key + " has the wrong length"};
  return Dims(v.begin(), v.end());
}

}  // namespace

Window window_of(const Node& n, const Shape& x, const Shape& y, const Dims& kernel) {
  const int sp = x.rank() - 2;
  Window w;
  w.kernel = kernel;
  w.strides = axis_attr(n, "strides", 1, sp);
  Dims dil = axis_attr(n, "dilations", 1, sp);
  Dims pads = axis_attr(n, "pads", 0, 2 * sp);
  const std::string auto_pad = n.attrs.s("auto_pad", "NOTSET");
  for (int i = 0; i < sp; ++i) {
    const int64_t in = x[i + 2], out = y[i + 2], extent = (kernel[i] - 1) * dil[i] + 1;
    int64_t pl = pads[i], pr = pads[i + sp];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + extent - in);
      pl = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pr = total - pl;
    } else if (auto_pad == "VALID") {
      pl = pr = 0;
    }
    if ((in + pl + pr - extent) / w.strides[i] + 1 != out) pr = (out - 1) * w.strides[i] + extent - in - pl;
    w.dilation.push_back(dil[i] - 1);
    w.pad_l.push_back(pl);
    w.pad_r.push_back(pr);
  }
  return w;
}

memory alias(Program& p, const memory& m, const memory::desc& d) { return memory(d, p.engine(), m.get_data_handle()); }

std::function<void()> reduce_into_grad(Program& p, int vid, const memory& diff, std::optional<Dims> reduced) {
  const Dims from = diff.get_desc().dims();
  const Dims to = reduced ? *reduced : padded_dims(shape_of(p, vid), static_cast<int>(from.size()));
  if (to == from) return p.accumulate_into_grad(vid, diff);
  memory sum = p.alloc(plain_desc(to));
  dnnl::reduction::primitive_desc pd(
      dnnl::reduction::desc(dnnl::algorithm::reduction_sum, diff.get_desc(), sum.get_desc(), 0.f, 0.f), p.engine());
  dnnl::reduction prim(pd);
  auto acc = p.accumulate_into_grad(vid, sum);
  return [&p, prim, diff, sum, acc] {
    prim.execute(p.stream(), {{DNNL_ARG_SRC, diff}, {DNNL_ARG_DST, sum}});
    acc();
  };
}

// ---- convolution ------------------------------------------------------------------------------------------

namespace {

/// A forward kernel to try for a convolution-like node: its algorithm and source/destination layouts.
struct ConvChoice {
  dnnl::algorithm alg;
  memory::format_tag src, dst;
};

/// Binds the weights (packed once into the fused kernel's layout) and bias (zeros when absent) of the 3x3
/// depthwise conv that 1x1 conv `ni` runs as a post-op.
template <typename PD>
void bind_fused_dw(Program& p, int ni, const Epilogue& e, const PD& pd, Args& args) {
  const Node& d = node_of(p, e.dw);
  const int64_t c = shape_of(p, input_at(d, 1))[0];
  const memory::desc packed = pd.query_md(dnnl::query::exec_arg_md, DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS);
  args[DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS] = p.weight_as(input_at(d, 1), plain_desc({c, 1, 1, 3, 3}), packed);
  args[DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS] = input_at(d, 2) >= 0 ? p.plain(input_at(d, 2), ni) : p.alloc(plain_desc({c}));
}

/// Forward step of a convolution-like node (X, W, optional B -> Y) and, when training, its backward. Conv and
/// ConvTranspose share it through oneDNN's convolution and deconvolution primitives, whose descriptors have the
/// same signatures. `wei_as` is the weight's plain buffer seen with oneDNN's weight dims. `preferred` kernels
/// (end-to-end program) are tried first, each with its post-ops (all but the last only when building those adds
/// no step: eltwise ops and an in-place sum); a choice oneDNN runs only in a reference kernel is passed over. The
/// last resort is `alg` with layouts of oneDNN's choice.
template <typename Fwd, typename BwdData, typename BwdWeights>
void lower_windowed(Program& p, int ni, dnnl::algorithm alg, const Window& w, const memory::desc& wei_as,
                    const std::vector<ConvChoice>& preferred = {}) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), W = input_at(n, 1), B = input_at(n, 2), Y = p.final_output(ni);
  const Epilogue* ep = p.epilogue(ni);  // end-to-end program: folded BatchNorm and post-ops
  const bool folds = ep && ep->batchnorm >= 0;
  const bool dw = ep && ep->dw >= 0;  // a fused depthwise conv: Y is its output, yd the 1x1's
  const Dims xd = to_dims(shape_of(p, X)), yd = to_dims(shape_of(p, n.outputs.at(0))), wdims = wei_as.dims();
  const auto prop = p.training() ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
  const memory::desc bias_md = B >= 0 || folds ? plain_desc({yd[1]}) : memory::desc();
  auto desc = [&](const ConvChoice& c) {
    return typename Fwd::desc(prop, c.alg, memory::desc(xd, memory::data_type::f32, c.src), any_desc(wdims), bias_md,
                              memory::desc(yd, memory::data_type::f32, c.dst), w.strides, w.dilation, w.pad_l,
                              w.pad_r);
  };
  Args args;
  std::optional<typename Fwd::primitive_desc> pd;
  for (size_t k = 0; k < preferred.size() && !pd; ++k) {
    try {
      typename Fwd::primitive_desc plain_pd(desc(preferred[k]), p.engine());
      if (reference_kernel(impl_name(plain_pd))) continue;  // the last resort below does better
      bool pure = true;
      if (ep)
        for (size_t i = 0; i < ep->ops.size(); ++i)
          pure &= ep->ops[i].operand < 0 || (i == 0 && in_place_operand(p, *ep, plain_pd.dst_desc()));
      if (!pure && k + 1 < preferred.size()) continue;
      pd.emplace(desc(preferred[k]), post_op_attr(p, ni, ep, plain_pd.dst_desc(), args), p.engine());
      const memory::desc want =
          dw ? memory::desc(to_dims(shape_of(p, Y)), memory::data_type::f32, preferred[k].dst) : plain_pd.dst_desc();
      if (pd->dst_desc() != want || reference_kernel(impl_name(*pd))) pd.reset();
    } catch (const dnnl::error&) {  // no kernel for this choice: try the next
      pd.reset();
    }
  }
  // oneDNN 2.6's fused kernel on nhwc computes wrong results: only the blocked layouts above are taken.
  if (!pd && dw) throw NoKernel{"oneDNN has no fused 1x1 + depthwise kernel in the blocked layout"};
  if (!pd) {
    const ConvChoice any{alg, memory::format_tag::any, memory::format_tag::any};
    pd.emplace(desc(any), p.engine());
    const memory::desc chosen = pd->dst_desc();  // a sum post-op relies on epilogue_dst() seeing this layout
    if (ep) pd.emplace(desc(any), post_op_attr(p, ni, ep, chosen, args), p.engine());
    if (pd->dst_desc() != chosen && in_place_operand(p, *ep, chosen))
      throw NoKernel{"the fused kernel chose another output layout than its in-place sum operand's"};
  }
  memory src = p.in_layout(X, pd->src_desc(), ni);
  const FoldedConv folded = folds ? fold_batchnorm(p, ni, *ep, wei_as, pd->weights_desc()) : FoldedConv{};
  memory wei = folds ? folded.weights : p.weight_as(W, wei_as, pd->weights_desc());
  memory bias = folds ? folded.bias : B >= 0 ? p.plain(B, ni) : memory();
  memory dst = epilogue_dst(p, ni, ep, pd->dst_desc());
  p.set_value(Y, dst);
  Fwd conv(*pd);
  args.insert({{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
  if (bias) args[DNNL_ARG_BIAS] = bias;
  if (dw) bind_fused_dw(p, ni, *ep, *pd, args);
  Step& step = p.add_step(ni, impl_name(*pd), [&p, conv, args] { conv.execute(p.stream(), args); });
  if (!p.needs_grad(Y)) return;

  // Backward primitives choose their own layouts (forcing the forward ones can select slow reference
  // kernels); operands are reordered into them inside the backward step when they differ.
  std::vector<std::function<void()>> parts;
  auto conform = [&](const memory& m, const memory::desc& want) {
    if (m.get_desc() == want) return m;
    memory c = p.alloc(want);
    dnnl::reorder r(m, c);
    parts.push_back([&p, r, m, c] { r.execute(p.stream(), {{DNNL_ARG_FROM, m}, {DNNL_ARG_TO, c}}); });
    return c;
  };
  memory diff_dst = p.grad(Y);
  if (p.needs_grad(X)) {
    typename BwdData::desc bd(alg, any_desc(xd), any_desc(wdims), any_desc(yd), w.strides, w.dilation, w.pad_l,
                              w.pad_r);
    typename BwdData::primitive_desc bpd(bd, p.engine(), *pd);
    memory diff_src = p.alloc(bpd.diff_src_desc());
    memory dd = conform(diff_dst, bpd.diff_dst_desc()), wb = conform(wei, bpd.weights_desc());
    BwdData prim(bpd);
    auto acc = p.accumulate_into_grad(X, diff_src);
    parts.push_back([&p, prim, dd, wb, diff_src, acc] {
      prim.execute(p.stream(), {{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_WEIGHTS, wb}, {DNNL_ARG_DIFF_SRC, diff_src}});
      acc();
    });
  }
  if (p.needs_grad(W)) {
    typename BwdWeights::desc wd(alg, any_desc(xd), any_desc(wdims), bias_md, any_desc(yd), w.strides, w.dilation,
                                 w.pad_l, w.pad_r);
    typename BwdWeights::primitive_desc wpd(wd, p.engine(), *pd);
    memory diff_w = p.alloc(wpd.diff_weights_desc());
    memory diff_b = B >= 0 ? p.alloc(bias_md) : memory();
    memory sw = conform(src, wpd.src_desc()), dd = conform(diff_dst, wpd.diff_dst_desc());
    BwdWeights prim(wpd);
    Args wargs{{DNNL_ARG_SRC, sw}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_WEIGHTS, diff_w}};
    if (B >= 0) wargs[DNNL_ARG_DIFF_BIAS] = diff_b;
    auto acc_w = p.accumulate_into_grad(W, diff_w);
    std::function<void()> acc_b = B >= 0 && p.needs_grad(B) ? p.accumulate_into_grad(B, diff_b) : nullptr;
    parts.push_back([&p, prim, wargs, acc_w, acc_b] {
      prim.execute(p.stream(), wargs);
      acc_w();
      if (acc_b) acc_b();
    });
  }
  step.info.has_backward = true;
  step.backward = sequence(parts);
}

/// Window of a ConvTranspose in oneDNN's deconvolution terms (output = (in - 1) * stride + extent - pad_l - pad_r).
/// The graph's output size fixes pad_r, so ONNX's output_padding, and an output_shape beyond the full output,
/// become negative right padding (rows that only get the bias). With auto_pad SAME_* or output_shape, pads come
/// from ONNX's total_padding: the odd one at the end for SAME_UPPER, at the start otherwise.
Window transposed_window(const Node& n, const Shape& x, const Shape& y, const Dims& kernel) {
  const int sp = x.rank() - 2;
  Window w;
  w.kernel = kernel;
  w.strides = axis_attr(n, "strides", 1, sp);
  const Dims dil = axis_attr(n, "dilations", 1, sp), pads = axis_attr(n, "pads", 0, 2 * sp),
             extra = axis_attr(n, "output_padding", 0, sp);
  const std::string auto_pad = n.attrs.s("auto_pad", "NOTSET");
  const bool derived = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" || !n.attrs.ints("output_shape").empty();
  for (int i = 0; i < sp; ++i) {
    const int64_t full = (x[i + 2] - 1) * w.strides[i] + (kernel[i] - 1) * dil[i] + 1, out = y[i + 2];
    int64_t pl = auto_pad == "VALID" ? 0 : pads[i];
    if (derived) {
      const int64_t total = std::max<int64_t>(0, full + extra[i] - out);
      pl = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    }
    if (full - out - pl <= -w.strides[i])  // oneDNN needs pad_r > -stride; output_padding < stride always fits
      throw NoKernel{"ConvTranspose output reaching a stride or more past the full output"};
    w.dilation.push_back(dil[i] - 1);
    w.pad_l.push_back(pl);
    w.pad_r.push_back(full - out - pl);
  }
  return w;
}

}  // namespace

void lower_conv(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const Shape &xs = shape_of(p, input_at(n, 0)), &ws = shape_of(p, input_at(n, 1));
  if (xs.rank() < 3 || xs.rank() > 5) throw NoKernel{"Conv of rank " + std::to_string(xs.rank())};
  const int64_t groups = n.attrs.i("group", 1);
  Dims wdims = to_dims(ws);
  if (groups > 1) {
    wdims.insert(wdims.begin(), groups);
    wdims[1] /= groups;
  }
  const Window w = window_of(n, xs, shape_of(p, n.outputs.at(0)), Dims(ws.dims.begin() + 2, ws.dims.end()));
  // End-to-end program of a graph with Winograd convs or fused depthwise pairs: every conv in the blocked
  // layout of the CPU's vector width (no reorder between convs). Only optimised kernels are taken in it.
  std::vector<ConvChoice> preferred;
  if (p.blocked_convs() && xs.rank() == 4) {
    using tag = memory::format_tag;
    const int64_t block = conv_channel_block();
    const tag blocked = block == 16 ? tag::nChw16c : tag::nChw8c;
    // A block of channels or more: blocked (24 channels are padded to 32, still faster than nhwc on mobilenet_v2)
    const tag src = xs[1] >= block ? blocked : tag::any, dst = ws[0] >= block ? blocked : tag::any;
    if (winograd_conv(p.graph(), n)) preferred.push_back({dnnl::algorithm::convolution_winograd, src, dst});
    preferred.push_back({dnnl::algorithm::convolution_direct, src, dst});
  }
  lower_windowed<dnnl::convolution_forward, dnnl::convolution_backward_data, dnnl::convolution_backward_weights>(
      p, ni, dnnl::algorithm::convolution_direct, w, plain_desc(wdims), preferred);
}

int64_t conv_channel_block() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_mic:
    case dnnl::cpu_isa::avx512_mic_4ops:
    case dnnl::cpu_isa::avx512_core:
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx: return 16;
    default: return 8;
  }
}

bool winograd_conv(const Graph& g, const Node& n) {
  if (n.op != OpKind::Conv || n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return false;
  const Shape &xs = g.value(n.inputs[0]).shape, &ws = g.value(n.inputs[1]).shape;
  auto all = [&](const char* key, int64_t v) {
    for (int64_t x : n.attrs.ints(key))
      if (x != v) return false;
    return true;
  };
  return xs.rank() == 4 && ws.rank() == 4 && ws[2] == 3 && ws[3] == 3 && n.attrs.i("group", 1) == 1 &&
         xs[1] % 16 == 0 && ws[0] % 16 == 0 && all("strides", 1) && all("dilations", 1);
}

void lower_conv_transpose(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const Shape &xs = shape_of(p, input_at(n, 0)), &ws = shape_of(p, input_at(n, 1)), &ys = shape_of(p, n.outputs.at(0));
  if (xs.rank() < 3 || xs.rank() > 5) throw NoKernel{"ConvTranspose of rank " + std::to_string(xs.rank())};
  const int64_t g = n.attrs.i("group", 1);
  if (g < 1 || ws.rank() != xs.rank() || ws[0] != xs[1] || xs[1] % g != 0 || ws[1] * g != ys[1])
    throw NoKernel{"ConvTranspose weights " + to_string(ws) + " do not match its channels and group " +
                   std::to_string(g)};
  // ONNX weights are [in, out/g, k...], i.e. [g, in/g, out/g, k...]; oneDNN reads [(g,) out/g, in/g, k...].
  Dims stored = to_dims(ws);
  if (g > 1) {
    stored.insert(stored.begin(), g);
    stored[1] /= g;
  }
  std::vector<int> swap_io(stored.size());
  for (size_t i = 0; i < swap_io.size(); ++i) swap_io[i] = static_cast<int>(i);
  const int io = g > 1 ? 1 : 0;
  std::swap(swap_io[io], swap_io[io + 1]);
  const Window w = transposed_window(n, xs, ys, Dims(ws.dims.begin() + 2, ws.dims.end()));
  lower_windowed<dnnl::deconvolution_forward, dnnl::deconvolution_backward_data,
                 dnnl::deconvolution_backward_weights>(p, ni, dnnl::algorithm::deconvolution_direct, w,
                                                       plain_desc(stored).permute_axes(swap_io));
}

// ---- matrix products ----------------------------------------------------------------------------------------

namespace {

/// Descriptor of a dense tensor stored row-major with `stored` dims but seen with its last two axes swapped
/// when `transposed` (a free transpose through strides).
memory::desc matrix_desc(const Dims& stored, bool transposed) {
  memory::desc d = plain_desc(stored);
  if (!transposed) return d;
  std::vector<int> perm(stored.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return d.permute_axes(perm);
}

/// The same bytes as a [rows, cols] matrix descriptor `d` (any strides), seen as a 1-D convolution's tensor
/// {1, cols, rows}: rows as its spatial axis, cols as its channels (row-major [rows, cols] is `nwc`).
memory::desc as_conv_activation(const memory::desc& d) {
  const Dims dims = d.dims();
  return d.reshape({1, dims[0], dims[1]}).permute_axes({0, 2, 1});
}

/// Constant [K, N] matmul weights `b` (any strides) seen as a 1x1 convolution's weights {N, K, 1}.
memory::desc as_conv_weights(const memory::desc& b) {
  const Dims dims = b.dims();
  return b.reshape({dims[0], dims[1], 1}).permute_axes({1, 0, 2});
}

/// dst = a x b (+ bias) as oneDNN's 1x1 convolution over M positions, K channels in and N out, with its
/// weights packed now; empty when oneDNN has no optimised kernel for it. On AVX2, oneDNN's `jit_1x1` runs such
/// products 5-45 % faster than its matmul's `gemm:jit` (M >= 2, N >= 8; measured in docs/measure.md); at M = 1
/// (a matrix-vector product) and N < 8 it is slower. `args` gets the post-op operands re-seen the same way.
std::function<void()> bind_matmul_as_conv(Program& p, const memory& a, const memory& b, const memory& bias,
                                          const memory& dst, const dnnl::primitive_attr& matmul_attr,
                                          const Args& matmul_args, std::string* impl) {
  const Dims ad = a.get_desc().dims(), bd = b.get_desc().dims();
  if (ad.size() != 2 || bd.size() != 2 || !is_plain(a.get_desc()) || !is_plain(dst.get_desc()) || ad[0] < 2 ||
      bd[1] < conv_channel_block())
    return {};
  if (bias && element_count(bias.get_desc()) != bd[1]) return {};  // a Gemm's C of [M, N] is no conv bias
  // The matmul's post-ops, their binary operands' [M, N] descriptors re-seen as the conv's {1, N, M}
  dnnl::post_ops ops;
  Args args;
  const dnnl::post_ops mm_ops = matmul_attr.get_post_ops();
  for (int i = 0; i < mm_ops.len(); ++i) {
    switch (mm_ops.kind(i)) {
      case dnnl::primitive::kind::eltwise: {
        float scale, alpha, beta;
        dnnl::algorithm alg;
        mm_ops.get_params_eltwise(i, scale, alg, alpha, beta);
        ops.append_eltwise(scale, alg, alpha, beta);
        break;
      }
      case dnnl::primitive::kind::sum: {
        float scale;
        mm_ops.get_params_sum(i, scale);
        ops.append_sum(scale);
        break;
      }
      case dnnl::primitive::kind::binary: {
        dnnl::algorithm alg;
        memory::desc src1;
        mm_ops.get_params_binary(i, alg, src1);
        const int key = DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | DNNL_ARG_SRC_1;
        const memory::desc seen = as_conv_activation(src1);
        ops.append_binary(alg, seen);
        args[key] = memory(seen, p.engine(), matmul_args.at(key).get_data_handle());
        break;
      }
      default: return {};
    }
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const memory::desc x = as_conv_activation(a.get_desc()), y = as_conv_activation(dst.get_desc());
  const memory::desc b1 = bias ? plain_desc({bd[1]}) : memory::desc();
  const dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, x,
                                      any_desc({bd[1], bd[0], 1}), b1, y, {1}, {0}, {0}),
      attr, p.engine(), /*allow_empty=*/true);
  if (!pd || reference_kernel(impl_name(pd)) || pd.src_desc() != x || pd.dst_desc() != y) return {};
  const memory wei(as_conv_weights(b.get_desc()), p.engine(), b.get_data_handle());
  memory packed = p.alloc(pd.weights_desc());
  p.run_now(dnnl::reorder(wei, packed), {{DNNL_ARG_FROM, wei}, {DNNL_ARG_TO, packed}});
  args[DNNL_ARG_SRC] = memory(x, p.engine(), a.get_data_handle());
  args[DNNL_ARG_DST] = memory(y, p.engine(), dst.get_data_handle());
  args[DNNL_ARG_WEIGHTS] = packed;
  if (bias) args[DNNL_ARG_BIAS] = memory(b1, p.engine(), bias.get_data_handle());
  if (impl) *impl = impl_name(pd);
  dnnl::convolution_forward prim(pd);
  return [&p, prim, args] { prim.execute(p.stream(), args); };
}

/// A matmul primitive dst = a x b (+ bias) bound to existing memories (descs may be strided views).
/// With an epilogue (end-to-end program), its post-ops run on dst; with `pack_b` (constant weights), b is
/// reordered once, now, into the layout the kernel prefers.
std::function<void()> bind_matmul(Program& p, const memory& a, memory b, const memory& bias, const memory& dst,
                                  std::string* impl = nullptr, int ni = -1, const Epilogue* ep = nullptr,
                                  bool pack_b = false) {
  auto desc = [&](const memory::desc& b_md) {
    return bias ? dnnl::matmul::desc(a.get_desc(), b_md, bias.get_desc(), dst.get_desc())
                : dnnl::matmul::desc(a.get_desc(), b_md, dst.get_desc());
  };
  Args args{{DNNL_ARG_SRC, a}, {DNNL_ARG_DST, dst}};
  const dnnl::primitive_attr attr = post_op_attr(p, ni, ep, dst.get_desc(), args);
  dnnl::matmul::primitive_desc pd(desc(pack_b ? any_desc(b.get_desc().dims()) : b.get_desc()), attr, p.engine());
  const bool gemm = impl_name(pd).rfind("gemm", 0) == 0;
  if (pack_b && gemm) {  // see bind_matmul_as_conv
    try {
      if (auto conv = bind_matmul_as_conv(p, a, b, bias, dst, attr, args, impl)) return conv;
    } catch (const dnnl::error&) {  // a descriptor oneDNN cannot re-see as a conv's: the matmul runs
    }
  }
  // oneDNN's gemm kernel asks for row-major weights (K x N), and on AVX2 runs 1.7x faster on them transposed at
  // K = 768, N = 3,072, M = 128 and 197 (distilbert's and ViT-B's first MLP matmul), and no slower at the other
  // shapes measured (docs/measure.md). Weights stored transposed (Gemm transB, as PyTorch's Linear exports them)
  // stay as they are: no copy. Row-major ones are given to it transposed when wide (N > K).
  const Dims bd = b.get_desc().dims();
  if (pack_b && bd.size() >= 2 && pd.weights_desc() == plain_desc(bd) && gemm) {
    Dims stored = bd;
    std::swap(stored[stored.size() - 1], stored[stored.size() - 2]);
    const memory::desc bt = matrix_desc(stored, true);
    if (b.get_desc() == bt || bd[bd.size() - 1] > bd[bd.size() - 2]) {
      const dnnl::matmul::primitive_desc tpd(desc(bt), attr, p.engine(), /*allow_empty=*/true);
      if (tpd && !reference_kernel(impl_name(tpd))) pd = tpd;
    }
  }
  if (pd.weights_desc() != b.get_desc()) {
    memory packed = p.alloc(pd.weights_desc());
    p.run_now(dnnl::reorder(b, packed), {{DNNL_ARG_FROM, b}, {DNNL_ARG_TO, packed}});
    b = packed;
  }
  args[DNNL_ARG_WEIGHTS] = b;
  if (impl) *impl = impl_name(pd);
  dnnl::matmul prim(pd);
  if (bias) args[DNNL_ARG_BIAS] = bias;
  return [&p, prim, args] { prim.execute(p.stream(), args); };
}

/// Shared by Gemm and MatMul: y = op(A) x op(B) (+ C), operands already in `a`/`b` (possibly strided views of
/// plain storage). Adds the step and, when training, backward closures.
void matmul_step(Program& p, int ni, int A, int Bv, int C, const memory& a, const memory& b, memory bias) {
  const Dims adims = a.get_desc().dims(), bdims = b.get_desc().dims();
  Dims out = adims;
  for (size_t i = 0; i + 2 < out.size(); ++i) out[i] = std::max(adims[i], bdims[i]);
  out.back() = bdims.back();
  const int Y = p.final_output(ni);
  const Epilogue* ep = p.epilogue(ni);
  if (ep && ep->bias >= 0) {  // end-to-end program: a bias Add as the matmul's bias
    Dims bd(out.size(), 1);
    bd.back() = out.back();
    bias = p.view(p.plain(ep->bias, ni), bd);
  }
  memory dst = epilogue_dst(p, ni, ep, plain_desc(out));
  std::string impl;
  const Value& bv = p.graph().value(Bv);  // the end-to-end program packs constant weights once
  const bool pack = p.options().fuse && !p.training() && bv.producer < 0 && bv.kind != ValueKind::Input;
  auto fwd = bind_matmul(p, a, b, bias, dst, &impl, ni, ep, pack);
  p.set_value(Y, p.view(dst, to_dims(shape_of(p, Y))));
  Step& step = p.add_step(ni, impl, fwd);
  if (!p.needs_grad(Y)) return;
  memory dy = p.view(p.grad(Y), out);
  const int r = static_cast<int>(adims.size());
  std::vector<int> swap_last(r);
  for (int i = 0; i < r; ++i) swap_last[i] = i;
  std::swap(swap_last[r - 1], swap_last[r - 2]);
  std::vector<std::function<void()>> parts;
  // Gradients are written dense in each operand's stored order (a strided dst would select slow kernels):
  // dA = dY B^T, or (dA)^T = B dY^T when A is stored transposed; dB = A^T dY, or (dB)^T = dY^T A. Each product
  // has the output's batch dims; an operand broadcast over some of them gets the sum over those.
  auto t = [&](const memory& m) { return alias(p, m, m.get_desc().permute_axes(swap_last)); };
  auto grad_into = [&](int vid, const memory& lhs, const memory& rhs, const Dims& operand) {
    Dims d = out;
    d[r - 2] = lhs.get_desc().dims()[r - 2];
    d[r - 1] = rhs.get_desc().dims()[r - 1];
    Dims reduced = d;
    std::copy(operand.begin(), operand.end() - 2, reduced.begin());
    memory g = p.alloc(plain_desc(d));
    parts.push_back(bind_matmul(p, lhs, rhs, memory(), g));
    parts.push_back(reduce_into_grad(p, vid, g, reduced));
  };
  if (A >= 0 && p.needs_grad(A)) {
    if (is_plain(a.get_desc())) grad_into(A, dy, t(b), adims);
    else grad_into(A, b, t(dy), adims);
  }
  if (Bv >= 0 && p.needs_grad(Bv)) {
    if (is_plain(b.get_desc())) grad_into(Bv, t(a), dy, bdims);
    else grad_into(Bv, t(dy), a, bdims);
  }
  if (C >= 0 && p.needs_grad(C)) parts.push_back(reduce_into_grad(p, C, dy));
  step.info.has_backward = !parts.empty();
  step.backward = sequence(parts);
}

}  // namespace

void lower_gemm(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int A = input_at(n, 0), Bv = input_at(n, 1), C = input_at(n, 2);
  const bool ta = n.attrs.i("transA", 0) != 0, tb = n.attrs.i("transB", 0) != 0;
  const float alpha = static_cast<float>(n.attrs.f("alpha", 1.0)), beta = static_cast<float>(n.attrs.f("beta", 1.0));
  const Shape& as = shape_of(p, A);
  // A Linear on [..., K] rows (the importer's MatMul + bias Add) runs as one [rows, K] product
  if (as.rank() < 2 || (as.rank() > 2 && ta) || shape_of(p, Bv).rank() != 2)
    throw NoKernel{"Gemm operands must be matrices"};
  const Dims a2{static_cast<int64_t>(as.elements()) / as[-1], as[-1]};
  memory a = alias(p, p.plain(A, ni), matrix_desc(a2, ta));
  memory b = alias(p, p.plain(Bv, ni), matrix_desc(to_dims(shape_of(p, Bv)), tb));
  auto scaled_copy = [&p](const memory& m, float s) {
    memory c = p.alloc(m.get_desc());
    const float* src = data_of(m);
    float* dst = data_of(c);
    for (size_t i = 0; i < m.get_desc().get_size() / sizeof(float); ++i) dst[i] = s * src[i];
    return c;
  };
  const bool b_const = p.graph().value(Bv).producer < 0 && p.graph().value(Bv).kind != ValueKind::Input;
  if (alpha != 1.0f) {
    if (!b_const || p.training()) throw NoKernel{"Gemm with alpha != 1 on an activation operand"};
    b = scaled_copy(b, alpha);
  }
  memory bias;
  if (C >= 0) {
    bias = p.view(p.plain(C, ni), padded_dims(shape_of(p, C), 2));
    if (beta != 1.0f) {
      const Value& cv = p.graph().value(C);
      if (cv.producer >= 0 || cv.kind == ValueKind::Input || p.training())
        throw NoKernel{"Gemm with beta != 1 on an activation C"};
      bias = scaled_copy(bias, beta);
    }
  }
  matmul_step(p, ni, A, Bv, C, a, b, bias);
}

void lower_matmul(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const Epilogue* ep = p.epilogue(ni);  // x: the operand before an absorbed Div (the attention scale)
  const int A = ep && ep->x >= 0 ? ep->x : input_at(n, 0), Bv = input_at(n, 1);
  Shape as = shape_of(p, A), bs = shape_of(p, Bv);
  if (as.rank() == 0 || bs.rank() == 0) throw NoKernel{"MatMul of a scalar"};
  if (as.rank() == 1) as.dims.insert(as.dims.begin(), 1);
  if (bs.rank() == 1) bs.dims.push_back(1);
  memory a_plain = p.plain(A, ni), b_plain = p.plain(Bv, ni);
  if (bs.rank() == 2 && as.rank() > 2) {  // [..., M, K] x [K, N]: one big 2-D product
    Dims a2{static_cast<int64_t>(as.elements()) / as[-1], as[-1]};
    matmul_step(p, ni, A, Bv, -1, p.view(a_plain, a2), p.view(b_plain, to_dims(bs)), memory());
    return;
  }
  const int rank = std::max(as.rank(), bs.rank());
  if (rank > 12) throw NoKernel{"MatMul of rank > 12"};
  matmul_step(p, ni, A, Bv, -1, p.view(a_plain, padded_dims(as, rank)), p.view(b_plain, padded_dims(bs, rank)),
              memory());
}

}  // namespace ridge::exec
