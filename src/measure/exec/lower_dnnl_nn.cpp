// oneDNN lowerings of normalisation, elementwise, pooling, softmax, reductions and data movement.
#include <algorithm>
#include <cfloat>
#include <optional>

#include "lowerings.hpp"
#include "ridge/error.hpp"
#include "ridge/op_rules.hpp"

namespace ridge::exec {

using Args = std::unordered_map<int, memory>;
using dnnl::algorithm;
using dnnl::prop_kind;

namespace {

prop_kind forward_prop(Program& p) { return p.training() ? prop_kind::forward_training : prop_kind::forward_inference; }

/// The forward step of a one-input primitive writing a fresh `Y`, with the workspace its backward reads when it
/// has one: the step and its arguments (SRC, DST, WORKSPACE).
template <class Fwd>
std::pair<Step&, Args> add_forward(Program& p, int ni, int Y, const typename Fwd::primitive_desc& pd, const memory& src) {
  memory dst = p.alloc(pd.dst_desc());
  p.set_value(Y, dst);
  Args args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  if (pd.workspace_desc().get_size() > 0) args[DNNL_ARG_WORKSPACE] = p.alloc(pd.workspace_desc());
  Fwd prim(pd);
  Step& step = p.add_step(ni, impl_name(pd), [&p, prim, args] { prim.execute(p.stream(), args); });
  return {step, std::move(args)};
}

/// The backward of a one-input primitive on `step`: `bprim` runs with `bargs` plus Y's gradient (DIFF_DST) and a
/// fresh DIFF_SRC of `diff_src_desc`, which then accumulates into X's gradient.
void add_backward(Program& p, Step& step, int X, int Y, const dnnl::primitive& bprim,
                  const dnnl::memory::desc& diff_src_desc, Args bargs) {
  memory diff_src = p.alloc(diff_src_desc);
  bargs[DNNL_ARG_DIFF_DST] = p.grad(Y);
  bargs[DNNL_ARG_DIFF_SRC] = diff_src;
  auto acc = p.accumulate_into_grad(X, diff_src);
  step.info.has_backward = true;
  step.backward = [&p, bprim, bargs, acc] {
    bprim.execute(p.stream(), bargs);
    acc();
  };
}

/// Copies `src` into `dst` (any layouts, same dims) as a bound closure.
std::function<void()> bind_reorder(Program& p, const memory& src, const memory& dst) {
  dnnl::reorder r(src, dst);
  return [&p, r, src, dst] { r.execute(p.stream(), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}}); };
}

/// First input index and step of a Slice along every axis (sizes come from the output shape). ONNX clamps
/// starts to [0, dim] for positive steps and to [0, dim - 1] for negative ones.
struct SliceAxes {
  Dims start, step;
};
SliceAxes slice_axes(Program& p, const Node& n, const Shape& in) {
  auto starts = n.attrs.has("starts") ? std::optional(n.attrs.ints("starts")) : int_input(p, n, 1);
  auto axes = n.attrs.has("axes") ? std::optional(n.attrs.ints("axes")) : int_input(p, n, 3);
  auto steps = int_input(p, n, 4);
  if (!starts) throw NoKernel{"Slice starts are not known"};
  if (!steps && input_at(n, 4) >= 0) throw NoKernel{"Slice steps are not known"};
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<int64_t>(i));
  }
  SliceAxes s{Dims(in.rank(), 0), Dims(in.rank(), 1)};
  for (size_t i = 0; i < axes->size() && i < starts->size(); ++i) {
    const int64_t ax = normalize_axis((*axes)[i], in.rank(), n), dim = in[static_cast<int>(ax)];
    const int64_t step = steps && i < steps->size() ? (*steps)[i] : 1;
    if (step == 0) throw NoKernel{"Slice with step 0"};
    int64_t st = (*starts)[i];
    if (st < 0) st += dim;
    s.start[ax] = std::clamp<int64_t>(st, 0, step > 0 ? dim : std::max<int64_t>(dim - 1, 0));
    s.step[ax] = step;
  }
  return s;
}

}  // namespace

// ---- normalisation -----------------------------------------------------------------------------------------

namespace {

/// The extra outputs of a BatchNormalization in training mode, where the graph has them: running mean and variance
/// updated by momentum (ONNX: running * momentum + batch * (1 - momentum)), then (before opset 14) the batch's
/// saved mean and variance. `mean` and `var` hold the batch statistics once the primitive has run.
std::function<void()> running_stat_outputs(Program& p, int ni, const memory& mean, const memory& var) {
  const Node& n = node_of(p, ni);
  const float momentum = static_cast<float>(n.attrs.f("momentum", 0.9));
  std::vector<std::function<void()>> parts;
  for (size_t k = 1; k < n.outputs.size() && k <= 4; ++k) {
    const int out = n.outputs[k];
    if (out < 0 || p.graph().value(out).omitted) continue;
    const memory& batch = k % 2 == 1 ? mean : var;
    memory dst = p.alloc(batch.get_desc());
    p.set_value(out, dst);
    if (k >= 3) {  // saved statistics: the batch's own
      parts.push_back([batch, dst] { std::copy_n(data_of(batch), element_count(dst.get_desc()), data_of(dst)); });
      continue;
    }
    memory running = p.plain(input_at(n, k == 1 ? 3 : 4), ni);
    parts.push_back([batch, running, dst, momentum] {
      const float *b = data_of(batch), *r = data_of(running);
      float* y = data_of(dst);
      for (int64_t c = 0, count = element_count(dst.get_desc()); c < count; ++c)
        y[c] = r[c] * momentum + b[c] * (1.f - momentum);
    });
  }
  return sequence(std::move(parts));
}

}  // namespace

void lower_batchnorm(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), S = input_at(n, 1), B = input_at(n, 2), Y = n.outputs.at(0);
  const float eps = static_cast<float>(n.attrs.f("epsilon", 1e-5));
  auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  // batch statistics when the program trains, or when the node is in ONNX's training mode (an export of a model in
  // train(): ONNX Runtime normalises such a node with the batch's statistics too)
  const bool batch_stats = p.training() || ops::batchnorm_uses_batch_statistics(p.graph(), n);
  if (!batch_stats) flags |= dnnl::normalization_flags::use_global_stats;
  memory src = p.value(X);
  dnnl::batch_normalization_forward::primitive_desc pd(
      // oneDNN writes the batch statistics out only when training (at inference its mean_desc is empty)
      dnnl::batch_normalization_forward::desc(batch_stats ? prop_kind::forward_training : forward_prop(p),
                                              src.get_desc(), eps, flags),
      p.engine());
  memory dst = p.alloc(pd.dst_desc());
  memory scale = p.plain(S, ni), shift = p.plain(B, ni);
  memory mean = batch_stats ? p.alloc(pd.mean_desc()) : p.plain(input_at(n, 3), ni);
  memory var = batch_stats ? p.alloc(pd.variance_desc()) : p.plain(input_at(n, 4), ni);
  p.set_value(Y, dst);
  dnnl::batch_normalization_forward prim(pd);
  Args args{{DNNL_ARG_SRC, src},   {DNNL_ARG_DST, dst},       {DNNL_ARG_SCALE, scale},
            {DNNL_ARG_SHIFT, shift}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var}};
  if (pd.workspace_desc().get_size() > 0) args[DNNL_ARG_WORKSPACE] = p.alloc(pd.workspace_desc());
  std::function<void()> run = [&p, prim, args] { prim.execute(p.stream(), args); };
  if (batch_stats) run = sequence({run, running_stat_outputs(p, ni, mean, var)});
  Step& step = p.add_step(ni, impl_name(pd), run);
  if (!p.needs_grad(Y)) return;
  dnnl::batch_normalization_backward::primitive_desc bpd(
      dnnl::batch_normalization_backward::desc(prop_kind::backward, dst.get_desc(), src.get_desc(), eps, flags),
      p.engine(), pd);
  memory diff_src = p.alloc(bpd.diff_src_desc()), diff_scale = p.alloc(scale.get_desc()),
         diff_shift = p.alloc(shift.get_desc());
  Args bargs = args;
  bargs.erase(DNNL_ARG_DST);
  bargs[DNNL_ARG_DIFF_DST] = p.grad(Y);
  bargs[DNNL_ARG_DIFF_SRC] = diff_src;
  bargs[DNNL_ARG_DIFF_SCALE] = diff_scale;
  bargs[DNNL_ARG_DIFF_SHIFT] = diff_shift;
  dnnl::batch_normalization_backward bprim(bpd);
  std::vector<std::function<void()>> parts{[&p, bprim, bargs] { bprim.execute(p.stream(), bargs); }};
  if (p.needs_grad(X)) parts.push_back(p.accumulate_into_grad(X, diff_src));
  if (p.needs_grad(S)) parts.push_back(p.accumulate_into_grad(S, diff_scale));
  if (p.needs_grad(B)) parts.push_back(p.accumulate_into_grad(B, diff_shift));
  step.info.has_backward = true;
  step.backward = sequence(parts);
}

void lower_layernorm(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const Epilogue* e = p.epilogue(ni);  // a decomposed LayerNorm starting at this node
  const int X = e ? e->x : input_at(n, 0), S = e ? e->scale : input_at(n, 1), B = e ? e->shift : input_at(n, 2),
            Y = p.final_output(ni);
  const Shape& xs = shape_of(p, X);
  const int64_t axis = e ? xs.rank() - 1 : normalize_axis(n.attrs.i("axis", -1), xs.rank(), n);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < xs.rank(); ++i) (i < axis ? outer : inner) *= xs[i];
  auto flags = dnnl::normalization_flags::use_scale;
  if (B >= 0) flags |= dnnl::normalization_flags::use_shift;
  memory src = p.view(p.plain(X, ni), {outer, inner});
  const float eps = e ? e->epsilon : static_cast<float>(n.attrs.f("epsilon", 1e-5));
  dnnl::layer_normalization_forward::primitive_desc pd(
      dnnl::layer_normalization_forward::desc(forward_prop(p), src.get_desc(), eps, flags), p.engine());
  memory dst = p.alloc(pd.dst_desc());
  p.set_value(Y, p.view(dst, to_dims(shape_of(p, Y))));
  Args args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCALE, p.view(p.plain(S, ni), {inner})}};
  if (B >= 0) args[DNNL_ARG_SHIFT] = p.view(p.plain(B, ni), {inner});
  if (p.training()) {
    args[DNNL_ARG_MEAN] = p.alloc(pd.mean_desc());
    args[DNNL_ARG_VARIANCE] = p.alloc(pd.variance_desc());
  }
  dnnl::layer_normalization_forward prim(pd);
  Step& step = p.add_step(ni, impl_name(pd), [&p, prim, args] { prim.execute(p.stream(), args); });
  if (!p.needs_grad(Y)) return;
  dnnl::layer_normalization_backward::primitive_desc bpd(
      dnnl::layer_normalization_backward::desc(prop_kind::backward, dst.get_desc(), src.get_desc(), eps, flags),
      p.engine(), pd);
  Args bargs = args;
  bargs.erase(DNNL_ARG_DST);
  bargs[DNNL_ARG_DIFF_DST] = p.view(p.grad(Y), {outer, inner});
  memory diff_src = p.alloc(bpd.diff_src_desc()), diff_scale = p.alloc(plain_desc({inner}));
  bargs[DNNL_ARG_DIFF_SRC] = diff_src;
  bargs[DNNL_ARG_DIFF_SCALE] = diff_scale;
  memory diff_shift = B >= 0 ? p.alloc(plain_desc({inner})) : memory();
  if (B >= 0) bargs[DNNL_ARG_DIFF_SHIFT] = diff_shift;
  dnnl::layer_normalization_backward bprim(bpd);
  std::vector<std::function<void()>> parts{[&p, bprim, bargs] { bprim.execute(p.stream(), bargs); }};
  if (p.needs_grad(X)) parts.push_back(p.accumulate_into_grad(X, diff_src));
  if (p.needs_grad(S)) parts.push_back(p.accumulate_into_grad(S, diff_scale));
  if (B >= 0 && p.needs_grad(B)) parts.push_back(p.accumulate_into_grad(B, diff_shift));
  step.info.has_backward = true;
  step.backward = sequence(parts);
}

// ---- elementwise -------------------------------------------------------------------------------------------

namespace {

/// An ONNX unary op as a oneDNN eltwise algorithm with alpha/beta (from attributes when named).
struct EltwiseRow {
  OpKind op;
  algorithm alg;
  float alpha, beta;
  const char* alpha_attr;
  const char* beta_attr;
};
constexpr EltwiseRow kEltwise[] = {
    {OpKind::Relu, algorithm::eltwise_relu, 0.f, 0.f, nullptr, nullptr},
    {OpKind::LeakyRelu, algorithm::eltwise_relu, 0.01f, 0.f, "alpha", nullptr},
    {OpKind::Sigmoid, algorithm::eltwise_logistic, 0.f, 0.f, nullptr, nullptr},
    {OpKind::Tanh, algorithm::eltwise_tanh, 0.f, 0.f, nullptr, nullptr},
    {OpKind::Gelu, algorithm::eltwise_gelu_erf, 0.f, 0.f, nullptr, nullptr},
    {OpKind::HardSwish, algorithm::eltwise_hardswish, 0.f, 0.f, nullptr, nullptr},
    {OpKind::Sqrt, algorithm::eltwise_sqrt, 0.f, 0.f, nullptr, nullptr},
    {OpKind::Exp, algorithm::eltwise_exp, 0.f, 0.f, nullptr, nullptr},
    {OpKind::Log, algorithm::eltwise_log, 0.f, 0.f, nullptr, nullptr},
    {OpKind::Neg, algorithm::eltwise_linear, -1.f, 0.f, nullptr, nullptr},
    {OpKind::Reciprocal, algorithm::eltwise_pow, 1.f, -1.f, nullptr, nullptr},
    {OpKind::Clip, algorithm::eltwise_clip, -FLT_MAX, FLT_MAX, "min", "max"},
    {OpKind::Silu, algorithm::eltwise_swish, 1.f, 0.f, nullptr, nullptr},  // x sigmoid(alpha x), alpha 1
    {OpKind::Elu, algorithm::eltwise_elu, 1.f, 0.f, "alpha", nullptr},
    {OpKind::Abs, algorithm::eltwise_abs, 0.f, 0.f, nullptr, nullptr},
    {OpKind::Mish, algorithm::eltwise_mish, 0.f, 0.f, nullptr, nullptr},
    {OpKind::Softplus, algorithm::eltwise_soft_relu, 0.f, 0.f, nullptr, nullptr},  // log(1 + e^x)
};

/// The eltwise function of a node of the table; throws NoKernel when a Clip bound is not a known constant.
PostOp eltwise_of(Program& p, const Node& n, const EltwiseRow& row) {
  PostOp op{-1, row.alg, row.alpha, row.beta, -1};
  if (row.alpha_attr) op.alpha = static_cast<float>(n.attrs.f(row.alpha_attr, row.alpha));
  if (row.beta_attr) op.beta = static_cast<float>(n.attrs.f(row.beta_attr, row.beta));
  if (n.op == OpKind::Gelu && n.attrs.s("approximate", "none") == "tanh") op.alg = algorithm::eltwise_gelu_tanh;
  if (n.op == OpKind::Clip) {  // opset >= 11: bounds are inputs
    for (size_t i : {1, 2}) {
      if (input_at(n, i) < 0) continue;
      auto v = scalar_input(p, n, i);
      if (!v) throw NoKernel{std::string("Clip ") + (i == 1 ? "min" : "max") + " is not a known constant"};
      (i == 1 ? op.alpha : op.beta) = *v;
    }
  }
  return op;
}

const EltwiseRow* eltwise_row(OpKind op) {
  for (const auto& r : kEltwise)
    if (r.op == op) return &r;
  return nullptr;
}

}  // namespace

std::optional<PostOp> eltwise_post_op(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const EltwiseRow* row = eltwise_row(n.op);
  if (!row || n.inputs.empty() || n.outputs.size() != 1) return std::nullopt;
  try {
    PostOp op = eltwise_of(p, n, *row);
    op.node = ni;
    return op;
  } catch (const NoKernel&) {
    return std::nullopt;
  }
}

void lower_eltwise(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const Epilogue* e = p.epilogue(ni);  // a decomposed Gelu starting at this node
  const int X = e ? e->x : input_at(n, 0), Y = p.final_output(ni);
  const EltwiseRow* row = eltwise_row(n.op);
  RIDGE_ASSERT(e || row, "eltwise lowering without a table row");
  const PostOp op = e ? e->ops.at(0) : eltwise_of(p, n, *row);
  const algorithm alg = op.alg;
  const float alpha = op.alpha, beta = op.beta;
  memory src = p.value(X);
  dnnl::eltwise_forward::primitive_desc pd(
      dnnl::eltwise_forward::desc(forward_prop(p), alg, src.get_desc(), alpha, beta), p.engine());
  auto [step, args] = add_forward<dnnl::eltwise_forward>(p, ni, Y, pd, src);
  if (!p.needs_grad(Y) || !p.needs_grad(X)) return;
  dnnl::eltwise_backward::primitive_desc bpd(
      dnnl::eltwise_backward::desc(alg, args.at(DNNL_ARG_DST).get_desc(), src.get_desc(), alpha, beta), p.engine(), pd);
  add_backward(p, step, X, Y, dnnl::eltwise_backward(bpd), bpd.diff_src_desc(), {{DNNL_ARG_SRC, src}});
}

namespace {

/// A oneDNN binary primitive out = a op b (b may broadcast; out may be a), bound to those memories: a backward part.
std::function<void()> binary_step(Program& p, algorithm op, const memory& a, const memory& b, const memory& out) {
  dnnl::binary prim(
      dnnl::binary::primitive_desc(dnnl::binary::desc(op, a.get_desc(), b.get_desc(), out.get_desc()), p.engine()));
  return [&p, prim, a, b, out] {
    prim.execute(p.stream(), {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, out}});
  };
}

/// A oneDNN eltwise primitive out = scale * from (out may be from): a backward part.
std::function<void()> scale_step(Program& p, const memory& from, const memory& out, float scale) {
  dnnl::eltwise_forward lin(dnnl::eltwise_forward::primitive_desc(
      dnnl::eltwise_forward::desc(prop_kind::forward_inference, algorithm::eltwise_linear, from.get_desc(), scale, 0.f),
      p.engine()));
  return [&p, lin, from, out] { lin.execute(p.stream(), {{DNNL_ARG_SRC, from}, {DNNL_ARG_DST, out}}); };
}

/// oneDNN's channel-blocked tag (aBcd16b, aBcde8b, ...) that `d` is in, if it is one of them.
std::optional<memory::format_tag> channel_blocked_tag(const memory::desc& d) {
  using tag = memory::format_tag;
  const Dims dims = d.dims();
  for (tag t : {tag::aBc16b, tag::aBc8b, tag::aBcd16b, tag::aBcd8b, tag::aBcde16b, tag::aBcde8b})
    try {
      if (memory::desc(dims, memory::data_type::f32, t) == d) return t;
    } catch (const dnnl::error&) {  // the tag's rank differs from d's
    }
  return std::nullopt;
}

}  // namespace

void lower_binary(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  int a = input_at(n, 0), b = input_at(n, 1);
  const int Y = n.outputs.at(0);
  const Shape& ys = shape_of(p, Y);
  const int rank = std::max(1, ys.rank());
  const Dims ydims = padded_dims(ys, rank);
  const bool commutative = n.op == OpKind::Add || n.op == OpKind::Mul;
  if (padded_dims(shape_of(p, a), rank) != ydims && commutative) std::swap(a, b);
  if (padded_dims(shape_of(p, a), rank) != ydims) {  // oneDNN broadcasts only the second operand
    lower_reference_elementwise(p, ni);
    return;
  }
  const algorithm alg = n.op == OpKind::Add   ? algorithm::binary_add
                        : n.op == OpKind::Sub ? algorithm::binary_sub
                        : n.op == OpKind::Mul ? algorithm::binary_mul
                                              : algorithm::binary_div;
  // A plain operand is passed through the row-major descriptor. A layout that differs from it only in the strides
  // of unit dims (bac for a batch of 1, as a concat may choose) holds the same bytes, but oneDNN's binary kernels
  // take it for another format and fall back to the reference implementation (50x slower).
  memory src0 = p.value(a);
  if (src0.get_desc().dims() != ydims || is_plain(src0.get_desc())) src0 = p.view(p.plain(a, ni), ydims);
  const Dims bdims = padded_dims(shape_of(p, b), rank);
  // same elements as the output but of lower rank (GPT-2's [T, C] position embedding onto [1, T, C]): a view, as a
  // reorder cannot change the rank
  const bool b_has_output_dims = p.value(b).get_desc().dims() == ydims;
  memory src1 = b_has_output_dims ? p.in_layout(b, src0.get_desc(), ni) : p.view(p.plain(b, ni), bdims);
  if (is_plain(src1.get_desc())) src1 = p.view(src1, bdims);
  std::optional<dnnl::binary::primitive_desc> pd;
  try {
    pd.emplace(dnnl::binary::desc(alg, src0.get_desc(), src1.get_desc(), src0.get_desc()), p.engine());
  } catch (const dnnl::error&) {  // a blocked src0 with a broadcast src1: fall back to plain
    src0 = p.view(p.plain(a, ni), ydims);
    pd.emplace(dnnl::binary::desc(alg, src0.get_desc(), src1.get_desc(), src0.get_desc()), p.engine());
  }
  // A channel-blocked src0 (end to end, between convs) with a per-channel src1 (squeeze-excitation's x * scale):
  // oneDNN 2.6 runs that pair optimised only when src1 has the same blocking, else in its reference kernel
  // (the plain per-layer pair runs jit). The [N, C, 1, 1] operand is reordered, a step of N x C elements.
  if (bdims != ydims && reference_kernel(impl_name(*pd)) && !is_plain(src0.get_desc())) {
    if (const auto tag = channel_blocked_tag(src0.get_desc())) {
      try {
        const memory blocked_b = p.in_layout(b, memory::desc(bdims, memory::data_type::f32, *tag), ni);
        dnnl::binary::primitive_desc again(
            dnnl::binary::desc(alg, src0.get_desc(), blocked_b.get_desc(), src0.get_desc()), p.engine());
        if (!reference_kernel(impl_name(again))) src1 = blocked_b, pd.emplace(again);
      } catch (const dnnl::error&) {  // no kernel for it: the choices below
      }
    }
  }
  // A broadcast oneDNN's optimised kernels do not cover (Swin's [1, 9, 1, 49, 49] mask over [1, 9, 3, 49, 49]
  // scores) gets its reference kernel, 50x slower than ridge's row-by-row loop: at inference, that loop instead.
  if (bdims != ydims && !p.training() && reference_kernel(impl_name(*pd))) {
    lower_reference_elementwise(p, ni);
    return;
  }
  memory dst = p.alloc(pd->dst_desc());
  p.set_value(Y, src0.get_desc().dims() == to_dims(ys) ? dst : p.view(dst, to_dims(ys)));
  dnnl::binary prim(*pd);
  Step& step = p.add_step(ni, impl_name(*pd), [&p, prim, src0, src1, dst] {
    prim.execute(p.stream(), {{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst}});
  });
  if (!p.needs_grad(Y)) return;
  memory dy = p.grad(Y);
  if (dy.get_desc().dims() != ydims) dy = p.view(dy, ydims);
  std::vector<std::function<void()>> parts;
  // d(a op b)/da and /db: dY through a chain of binary ops (operands broadcast as in the forward), then scaled,
  // and reduced to the operand's shape. Div: da = dY / b, db = -(dY * y) / b.
  auto grad_chain = [&](int vid, std::vector<std::pair<algorithm, memory>> chain, float scale) {
    if (!p.needs_grad(vid)) return;
    memory d = p.alloc(dy.get_desc()), from = dy;
    for (const auto& [op, x] : chain) {
      parts.push_back(binary_step(p, op, from, x, d));
      from = d;
    }
    if (chain.empty() || scale != 1.f) parts.push_back(scale_step(p, from, d, scale));
    parts.push_back(reduce_into_grad(p, vid, d));
  };
  switch (n.op) {
    case OpKind::Add: grad_chain(a, {}, 1.f), grad_chain(b, {}, 1.f); break;
    case OpKind::Sub: grad_chain(a, {}, 1.f), grad_chain(b, {}, -1.f); break;
    case OpKind::Mul: grad_chain(a, {{algorithm::binary_mul, src1}}, 1.f), grad_chain(b, {{algorithm::binary_mul, src0}}, 1.f); break;
    default:  // Div
      grad_chain(a, {{algorithm::binary_div, src1}}, 1.f);
      grad_chain(b, {{algorithm::binary_mul, dst}, {algorithm::binary_div, src1}}, -1.f);  // dst: y, dims ydims
  }
  step.info.has_backward = !parts.empty();
  step.backward = sequence(parts);
}

// ---- pooling and softmax -------------------------------------------------------------------------------------

void lower_pool(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), Y = n.outputs.at(0);
  const Shape &xs = shape_of(p, X), &ys = shape_of(p, Y);
  if (xs.rank() < 3 || xs.rank() > 5) throw NoKernel{"pooling of rank " + std::to_string(xs.rank())};
  const int sp = xs.rank() - 2;
  Window w;
  if (n.op == OpKind::MaxPool || n.op == OpKind::AveragePool) {
    auto k = n.attrs.ints("kernel_shape");
    w = window_of(n, xs, ys, Dims(k.begin(), k.end()));
  } else {  // global and adaptive average pooling: equal windows when the sizes divide
    for (int i = 0; i < sp; ++i) {
      if (xs[i + 2] % ys[i + 2] != 0) throw NoKernel{"adaptive pooling with a non-dividing output size"};
      const int64_t k = xs[i + 2] / ys[i + 2];
      w.kernel.push_back(k), w.strides.push_back(k), w.dilation.push_back(0);
      w.pad_l.push_back(0), w.pad_r.push_back(0);
    }
  }
  if (n.op == OpKind::MaxPool && n.outputs.size() > 1 && n.outputs[1] >= 0)
    throw NoKernel{"MaxPool with an Indices output"};
  const algorithm alg = n.op == OpKind::MaxPool ? algorithm::pooling_max
                        : n.attrs.i("count_include_pad", 0) != 0 ? algorithm::pooling_avg_include_padding
                                                                  : algorithm::pooling_avg_exclude_padding;
  memory src = p.value(X);
  dnnl::pooling_v2_forward::primitive_desc pd(
      dnnl::pooling_v2_forward::desc(forward_prop(p), alg, src.get_desc(), any_desc(to_dims(ys)), w.strides,
                                     w.kernel, w.dilation, w.pad_l, w.pad_r),
      p.engine());
  auto [step, args] = add_forward<dnnl::pooling_v2_forward>(p, ni, Y, pd, src);
  if (!p.needs_grad(Y) || !p.needs_grad(X)) return;
  dnnl::pooling_v2_backward::primitive_desc bpd(
      dnnl::pooling_v2_backward::desc(alg, any_desc(to_dims(xs)), args.at(DNNL_ARG_DST).get_desc(), w.strides,
                                      w.kernel, w.dilation, w.pad_l, w.pad_r),
      p.engine(), pd);
  Args bargs;
  if (args.count(DNNL_ARG_WORKSPACE)) bargs[DNNL_ARG_WORKSPACE] = args[DNNL_ARG_WORKSPACE];
  add_backward(p, step, X, Y, dnnl::pooling_v2_backward(bpd), bpd.diff_src_desc(), std::move(bargs));
}

/// LRN: oneDNN's across-channel LRN computes ONNX's formula, x / (bias + alpha / size * sum x^2)^beta.
void lower_lrn(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), Y = n.outputs.at(0);
  const int64_t size = n.attrs.i("size", 0);
  if (size <= 0) throw NoKernel{"LRN without a positive size"};
  const float alpha = static_cast<float>(n.attrs.f("alpha", 1e-4)), beta = static_cast<float>(n.attrs.f("beta", 0.75)),
              bias = static_cast<float>(n.attrs.f("bias", 1.0));
  memory src = p.plain(X, ni);
  const algorithm alg = algorithm::lrn_across_channels;
  dnnl::lrn_forward::primitive_desc pd(
      dnnl::lrn_forward::desc(forward_prop(p), alg, src.get_desc(), size, alpha, beta, bias), p.engine());
  auto [step, args] = add_forward<dnnl::lrn_forward>(p, ni, Y, pd, src);
  if (!p.needs_grad(Y) || !p.needs_grad(X)) return;
  dnnl::lrn_backward::primitive_desc bpd(
      dnnl::lrn_backward::desc(alg, src.get_desc(), args.at(DNNL_ARG_DST).get_desc(), size, alpha, beta, bias),
      p.engine(), pd);
  Args bargs{{DNNL_ARG_SRC, src}};
  if (args.count(DNNL_ARG_WORKSPACE)) bargs[DNNL_ARG_WORKSPACE] = args[DNNL_ARG_WORKSPACE];
  add_backward(p, step, X, Y, dnnl::lrn_backward(bpd), bpd.diff_src_desc(), std::move(bargs));
}

void lower_softmax(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), Y = n.outputs.at(0);
  const int axis = static_cast<int>(normalize_axis(n.attrs.i("axis", -1), shape_of(p, X).rank(), n));
  if (n.attrs.i("coerce_2d", 0) != 0)  // before opset 13: over every dim from axis on
    for (int d = axis + 1; d < shape_of(p, X).rank(); ++d)
      if (shape_of(p, X)[d] != 1) throw NoKernel{"Softmax before opset 13 over more than its axis"};
  const algorithm alg = n.op == OpKind::LogSoftmax ? algorithm::softmax_log : algorithm::softmax_accurate;
  memory src = p.plain(X, ni);
  dnnl::softmax_v2_forward::primitive_desc pd(
      dnnl::softmax_v2_forward::desc(forward_prop(p), alg, src.get_desc(), src.get_desc(), axis), p.engine());
  // End-to-end program: in place when this node is the only reader of an activation it may overwrite.
  const Graph& g = p.graph();
  const int producer = g.value(X).producer;
  bool in_place = p.options().fuse && !p.training() && producer >= 0 && !is_view_op(g.nodes[producer].op) &&
                  p.step_written(X) && src.get_data_handle() == p.value(X).get_data_handle() &&
                  std::find(g.outputs.begin(), g.outputs.end(), X) == g.outputs.end();
  for (size_t c = 0; c < g.nodes.size() && in_place; ++c)
    if (static_cast<int>(c) != ni && std::find(g.nodes[c].inputs.begin(), g.nodes[c].inputs.end(), X) != g.nodes[c].inputs.end())
      in_place = false;
  memory dst = in_place ? src : p.alloc(pd.dst_desc());
  p.set_value(Y, dst);
  dnnl::softmax_v2_forward prim(pd);
  Step& step = p.add_step(ni, impl_name(pd), [&p, prim, src, dst] {
    prim.execute(p.stream(), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  });
  if (!p.needs_grad(Y) || !p.needs_grad(X)) return;
  dnnl::softmax_v2_backward::primitive_desc bpd(
      dnnl::softmax_v2_backward::desc(alg, src.get_desc(), dst.get_desc(), dst.get_desc(), axis), p.engine(), pd);
  add_backward(p, step, X, Y, dnnl::softmax_v2_backward(bpd), bpd.diff_src_desc(), {{DNNL_ARG_DST, dst}});
}

// ---- reductions ----------------------------------------------------------------------------------------------

void lower_reduce(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), Y = n.outputs.at(0);
  const Shape& xs = shape_of(p, X);
  auto axes = n.attrs.has("axes") ? std::optional(n.attrs.ints("axes")) : int_input(p, n, 1);
  if (!axes && input_at(n, 1) >= 0) throw NoKernel{"reduction axes are not known"};
  Dims reduced = to_dims(xs);
  if (!axes || axes->empty()) {
    if (n.attrs.i("noop_with_empty_axes", 0) != 0) throw NoKernel{"noop reduction"};
    std::fill(reduced.begin(), reduced.end(), 1);
  } else {
    for (auto a : *axes) reduced[normalize_axis(a, xs.rank(), n)] = 1;
  }
  const algorithm alg = n.op == OpKind::ReduceMean  ? algorithm::reduction_mean
                        : n.op == OpKind::ReduceSum ? algorithm::reduction_sum
                                                    : algorithm::reduction_max;
  memory src = p.plain(X, ni);
  if (src.get_desc().dims() != reduced && xs.rank() == 0) throw NoKernel{"reduction of a scalar"};
  memory dst = p.alloc(plain_desc(reduced));
  dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(alg, src.get_desc(), dst.get_desc(), 0.f, 0.f),
                                     p.engine());
  dnnl::reduction prim(pd);
  p.set_value(Y, p.view(dst, to_dims(shape_of(p, Y))));
  Step& step = p.add_step(ni, impl_name(pd), [&p, prim, src, dst] {
    prim.execute(p.stream(), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  });
  if (!p.needs_grad(Y) || !p.needs_grad(X)) return;
  // dX = dY broadcast over the reduced axes: / N for the mean; for the max, only where x equals the maximum.
  // dY is seen with the reduced dims kept (keepdims 0 drops them: the same bytes).
  memory dy = p.view(p.grad(Y), reduced), diff = p.alloc(src.get_desc());  // grad(Y): plain, as Y
  std::vector<std::function<void()>> parts;
  if (n.op == OpKind::ReduceMax) {
    parts.push_back(binary_step(p, algorithm::binary_eq, src, dst, diff));  // 1 where x is its slice's maximum
    parts.push_back(binary_step(p, algorithm::binary_mul, diff, dy, diff));  // (each tie gets dY)
  } else {
    const memory zeros = p.alloc(src.get_desc());  // never written: zeros
    parts.push_back(binary_step(p, algorithm::binary_add, zeros, dy, diff));
    if (n.op == OpKind::ReduceMean)
      parts.push_back(scale_step(p, diff, diff,
                                 static_cast<float>(element_count(dst.get_desc())) /
                                     static_cast<float>(element_count(src.get_desc()))));
  }
  parts.push_back(p.accumulate_into_grad(X, diff));
  step.info.has_backward = true;
  step.backward = sequence(std::move(parts));
}

// ---- data movement -------------------------------------------------------------------------------------------

void lower_concat(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int Y = n.outputs.at(0);
  const int axis = static_cast<int>(normalize_axis(n.attrs.i("axis", 0), shape_of(p, Y).rank(), n));
  std::vector<int> ins;
  for (int in : n.inputs)
    if (in >= 0 && shape_of(p, in).elements() > 0) ins.push_back(in);
  auto make = [&](bool plain) {
    std::vector<memory> srcs;
    std::vector<memory::desc> descs;
    for (int in : ins) {
      srcs.push_back(plain ? p.plain(in, ni) : p.value(in));
      descs.push_back(srcs.back().get_desc());
    }
    return std::make_pair(srcs, dnnl::concat::primitive_desc(axis, descs, p.engine()));
  };
  std::optional<std::pair<std::vector<memory>, dnnl::concat::primitive_desc>> made;
  if (!p.training()) {
    try {
      made.emplace(make(false));
    } catch (const dnnl::error&) {
    }
  }
  if (!made) made.emplace(make(true));
  auto& [srcs, pd] = *made;
  memory dst = p.alloc(pd.dst_desc());
  p.set_value(Y, dst);
  Args args{{DNNL_ARG_DST, dst}};
  for (size_t i = 0; i < srcs.size(); ++i) args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = srcs[i];
  dnnl::concat prim(pd);
  Step& step = p.add_step(ni, impl_name(pd), [&p, prim, args] { prim.execute(p.stream(), args); });
  if (!p.needs_grad(Y)) return;
  memory dy = p.grad(Y);
  if (!is_plain(dy.get_desc())) throw NoKernel{"concat backward on a blocked layout"};
  std::vector<std::function<void()>> parts;
  Dims offsets(dy.get_desc().dims().size(), 0);
  for (int in : ins) {
    const Dims d = to_dims(shape_of(p, in));
    if (p.needs_grad(in)) parts.push_back(p.accumulate_into_grad(in, alias(p, dy, dy.get_desc().submemory_desc(d, offsets))));
    offsets[axis] += d[axis];
  }
  step.info.has_backward = !parts.empty();
  step.backward = sequence(parts);
}

void lower_transpose(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), Y = n.outputs.at(0);
  const int rank = shape_of(p, X).rank();
  auto perm = n.attrs.ints("perm");
  if (perm.empty())
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int>(perm.size()) != rank) throw NoKernel{"Transpose perm has the wrong length"};
  std::vector<int> to_out(rank);  // input axis -> output position
  for (int j = 0; j < rank; ++j) to_out[normalize_axis(perm[j], rank, n)] = j;
  memory src = p.plain(X, ni);
  memory permuted = alias(p, src, src.get_desc().permute_axes(to_out));
  memory dst = p.alloc(plain_desc(to_dims(shape_of(p, Y))));
  p.set_value(Y, dst);
  Step& step = p.add_step(ni, "reorder", bind_reorder(p, permuted, dst));
  if (!p.needs_grad(Y) || !p.needs_grad(X)) return;
  memory diff_src = p.alloc(src.get_desc());
  step.info.has_backward = true;
  step.backward = sequence({bind_reorder(p, p.grad(Y), alias(p, diff_src, diff_src.get_desc().permute_axes(to_out))),
                            p.accumulate_into_grad(X, diff_src)});
}

void lower_slice(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0), Y = n.outputs.at(0);
  const Shape& xs = shape_of(p, X);
  const auto [offsets, steps] = slice_axes(p, n, xs);
  const Dims out = to_dims(shape_of(p, Y));
  if (std::any_of(steps.begin(), steps.end(), [](int64_t s) { return s != 1; })) {  // strided: a reference copy
    AxisMaps maps(xs.rank());
    for (int a = 0; a < xs.rank(); ++a)
      for (int64_t j = 0; j < out[a]; ++j) {
        const int64_t i = offsets[a] + j * steps[a];
        if (i < 0 || i >= xs[a]) throw NoKernel{"Slice output shape disagrees with its starts and steps"};
        maps[a].push_back(i);
      }
    return lower_index_copy(p, ni, std::move(maps), 0.f);
  }
  memory src = p.plain(X, ni);
  memory part = alias(p, src, src.get_desc().submemory_desc(out, offsets));
  memory dst = p.alloc(plain_desc(out));
  p.set_value(Y, dst);
  Step& step = p.add_step(ni, "reorder", bind_reorder(p, part, dst));
  if (!p.needs_grad(Y) || !p.needs_grad(X)) return;
  memory diff_src = p.alloc(src.get_desc());
  step.info.has_backward = true;
  step.backward = sequence({bind_reorder(p, p.grad(Y), alias(p, diff_src, diff_src.get_desc().submemory_desc(out, offsets))),
                            p.accumulate_into_grad(X, diff_src)});
}

void lower_split(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  const int X = input_at(n, 0);
  const int axis = static_cast<int>(normalize_axis(n.attrs.i("axis", 0), shape_of(p, X).rank(), n));
  memory src = p.plain(X, ni);
  Dims offsets(src.get_desc().dims().size(), 0);
  std::vector<std::function<void()>> parts, back;
  memory diff_src = p.needs_grad(X) ? p.alloc(src.get_desc()) : memory();
  for (int out : n.outputs) {
    if (out < 0) continue;
    const Dims d = to_dims(shape_of(p, out));
    memory dst = p.alloc(plain_desc(d));
    p.set_value(out, dst);
    parts.push_back(bind_reorder(p, alias(p, src, src.get_desc().submemory_desc(d, offsets)), dst));
    if (diff_src && p.needs_grad(out))
      back.push_back(bind_reorder(p, p.grad(out), alias(p, diff_src, diff_src.get_desc().submemory_desc(d, offsets))));
    offsets[axis] += d[axis];
  }
  Step& step = p.add_step(ni, "reorder", sequence(parts));
  if (back.empty()) return;
  back.push_back(p.accumulate_into_grad(X, diff_src));
  step.info.has_backward = true;
  step.backward = sequence(back);
}

}  // namespace ridge::exec
