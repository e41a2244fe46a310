// ONNX RNN, GRU and LSTM through oneDNN's recurrent primitives (vanilla_rnn, gru / lbr_gru, lstm), forward and,
// when training, backward (gradients to the input, the initial states, the weights and the biases).
// ONNX and oneDNN order the gates and lay out the weights differently: the weights and biases are rearranged once
// while the program is built (not timed), as other weights are reordered; when training, at the start of every
// forward step (timed), since the SGD update changes the graph's copy.
#include <cstring>
#include <vector>

#include "lowerings.hpp"
#include "ridge/error.hpp"

namespace ridge::exec {

namespace {

enum class RnnCell { Rnn, Gru, LbrGru, Lstm };

/// Sizes of one recurrent node: sequence T, batch N, input I, hidden H, directions D, gates G.
struct RnnSizes {
  int64_t T, N, I, H, D, G;
};

/// The ONNX gate stored where oneDNN expects gate g. LSTM: ONNX i, o, f, c; oneDNN i, f, c, o. GRU: both z (u), r,
/// h (o). RNN: one gate.
int64_t rnn_onnx_gate(RnnCell cell, int64_t g) {
  static constexpr int64_t kLstm[4] = {0, 2, 3, 1};
  return cell == RnnCell::Lstm ? kLstm[g] : g;
}

/// Calls f(onnx, ldigo) for every element of one weight tensor: its index in ONNX's [D, G*H, C] (C: input or
/// hidden width) and in oneDNN's ldigo [1, D, C, G, H].
template <typename F>
void for_each_weight(const RnnSizes& s, int64_t C, RnnCell cell, F f) {
  for (int64_t d = 0; d < s.D; ++d)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t g = 0; g < s.G; ++g)
        for (int64_t h = 0; h < s.H; ++h)
          f((d * s.G * s.H + rnn_onnx_gate(cell, g) * s.H + h) * C + c, ((d * C + c) * s.G + g) * s.H + h);
}

/// Gates of oneDNN's bias: linear-before-reset GRU has a fourth, the candidate gate's recurrent bias (applied before
/// the reset gate multiplies).
int64_t bias_gates(RnnCell cell, const RnnSizes& s) { return cell == RnnCell::LbrGru ? 4 : s.G; }

/// Calls f(input_bias, recurrent_bias, ldgo_input, ldgo_recurrent) for every (direction, gate, hidden unit): the
/// indices of ONNX's two biases in B [D, 2*G*H] (input biases, then recurrent ones) and where oneDNN's ldgo
/// [1, D, G', H] holds them: the same element (their sum) except linear-before-reset GRU's candidate gate.
template <typename F>
void for_each_bias(const RnnSizes& s, RnnCell cell, F f) {
  const int64_t gates = bias_gates(cell, s);
  for (int64_t d = 0; d < s.D; ++d)
    for (int64_t g = 0; g < s.G; ++g)
      for (int64_t h = 0; h < s.H; ++h) {
        const int64_t wb = d * 2 * s.G * s.H + rnn_onnx_gate(cell, g) * s.H + h, at = (d * gates + g) * s.H + h;
        const bool own = cell == RnnCell::LbrGru && g == 2;
        f(wb, wb + s.G * s.H, at, own ? (d * gates + 3) * s.H + h : at);
      }
}

/// ONNX B (absent: zeros) into oneDNN's ldgo bias.
void rnn_bias_to_ldgo(const float* b, float* out, const RnnSizes& s, RnnCell cell) {
  std::memset(out, 0, sizeof(float) * static_cast<size_t>(s.D * bias_gates(cell, s) * s.H));
  if (b) for_each_bias(s, cell, [&](int64_t wb, int64_t rb, int64_t at_w, int64_t at_r) {
      out[at_w] += b[wb];
      out[at_r] += b[rb];
    });
}

/// Refuses what oneDNN's cells do not compute: other activations, clipping, peepholes, coupled gates, batch-first
/// layout, and sequence lengths that are not all T.
void rnn_check_supported(Program& p, const Node& n, RnnCell cell, const RnnSizes& s) {
  if (n.attrs.i("layout", 0) != 0) throw NoKernel{"RNN layout 1 (batch first)"};
  if (n.attrs.has("clip")) throw NoKernel{"RNN clip"};
  if (n.attrs.i("input_forget", 0) != 0) throw NoKernel{"LSTM input_forget"};
  if (cell == RnnCell::Lstm && input_at(n, 7) >= 0) throw NoKernel{"LSTM peepholes"};
  if (n.attrs.has("activations")) {  // the importer joins the list with commas; each direction lists its own
    const std::string one = cell == RnnCell::Lstm  ? "Sigmoid,Tanh,Tanh"
                            : cell == RnnCell::Rnn ? "Tanh"
                                                   : "Sigmoid,Tanh";
    const std::string acts = n.attrs.s("activations", "");
    if (acts != one && acts != one + "," + one) throw NoKernel{"RNN activations " + acts};
  }
  if (input_at(n, 4) >= 0) {
    auto lens = int_input(p, n, 4);
    if (!lens) throw NoKernel{"RNN sequence_lens not known when the program is built"};
    for (int64_t len : *lens)
      if (len != s.T) throw NoKernel{"RNN sequence_lens shorter than the sequence"};
  }
  for (int k : {1, 2})
    if (p.graph().value(input_at(n, k)).producer >= 0) throw NoKernel{"RNN weights computed in the graph"};
}

/// The descriptors one recurrent node's primitives share: weights in the layout oneDNN picks (`any`), the rest
/// plain (tnc, ldnc, ldgo).
struct RnnDescs {
  memory::desc src_layer, state, w_layer, w_iter, bias, dst_layer;
};

/// The forward primitive of a cell and, when training, its backward, with the layouts they chose.
struct RnnPrims {
  dnnl::primitive forward, backward;
  memory::desc w_layer, w_iter;            ///< forward weights
  memory::desc bwd_w_layer, bwd_w_iter;    ///< backward weights (oneDNN's backward reads them transposed)
  memory::desc diff_w_layer, diff_w_iter;  ///< weight gradients
  memory::desc workspace;                  ///< written by the training forward, read by the backward
  std::string kernel;
};

RnnPrims rnn_primitives(Program& p, RnnCell cell, dnnl::rnn_direction dir, const RnnDescs& d) {
  using dnnl::prop_kind;
  const auto prop = p.training() ? prop_kind::forward_training : prop_kind::forward_inference;
  const auto& st = d.state;
  RnnPrims r;
  auto keep = [&](const auto& fpd, const auto& bpd) {
    r.w_layer = fpd.weights_layer_desc(), r.w_iter = fpd.weights_iter_desc(), r.kernel = impl_name(fpd);
    r.workspace = fpd.workspace_desc();
    if (!p.training()) return;
    r.bwd_w_layer = bpd.weights_layer_desc(), r.bwd_w_iter = bpd.weights_iter_desc();
    r.diff_w_layer = bpd.diff_weights_layer_desc(), r.diff_w_iter = bpd.diff_weights_iter_desc();
  };
  if (cell == RnnCell::Lstm) {
    using F = dnnl::lstm_forward;
    using B = dnnl::lstm_backward;
    F::primitive_desc fpd(
        F::desc(prop, dir, d.src_layer, st, st, d.w_layer, d.w_iter, d.bias, d.dst_layer, st, st), p.engine());
    r.forward = F(fpd);
    if (!p.training()) return keep(fpd, fpd), r;
    B::primitive_desc bpd(B::desc(prop_kind::backward, dir, d.src_layer, st, st, d.w_layer, d.w_iter, d.bias,
                                  d.dst_layer, st, st, d.src_layer, st, st, d.w_layer, d.w_iter, d.bias,
                                  d.dst_layer, st, st),
                          p.engine(), fpd);
    r.backward = B(bpd);
    keep(fpd, bpd);
  } else if (cell == RnnCell::Rnn) {
    using F = dnnl::vanilla_rnn_forward;
    using B = dnnl::vanilla_rnn_backward;
    const auto tanh = dnnl::algorithm::eltwise_tanh;
    F::primitive_desc fpd(
        F::desc(prop, tanh, dir, d.src_layer, st, d.w_layer, d.w_iter, d.bias, d.dst_layer, st), p.engine());
    r.forward = F(fpd);
    if (!p.training()) return keep(fpd, fpd), r;
    B::primitive_desc bpd(B::desc(prop_kind::backward, tanh, dir, d.src_layer, st, d.w_layer, d.w_iter, d.bias,
                                  d.dst_layer, st, d.src_layer, st, d.w_layer, d.w_iter, d.bias, d.dst_layer, st),
                          p.engine(), fpd);
    r.backward = B(bpd);
    keep(fpd, bpd);
  } else {
    // GRU and linear-before-reset GRU take the same arguments.
    auto gru = [&](auto fwd_tag, auto bwd_tag) {
      using F = decltype(fwd_tag);
      using B = decltype(bwd_tag);
      typename F::primitive_desc fpd(
          typename F::desc(prop, dir, d.src_layer, st, d.w_layer, d.w_iter, d.bias, d.dst_layer, st), p.engine());
      r.forward = F(fpd);
      if (!p.training()) return keep(fpd, fpd);
      typename B::primitive_desc bpd(
          typename B::desc(prop_kind::backward, dir, d.src_layer, st, d.w_layer, d.w_iter, d.bias, d.dst_layer, st,
                           d.src_layer, st, d.w_layer, d.w_iter, d.bias, d.dst_layer, st),
          p.engine(), fpd);
      r.backward = B(bpd);
      keep(fpd, bpd);
    };
    if (cell == RnnCell::Gru) gru(dnnl::gru_forward(), dnnl::gru_backward());
    else gru(dnnl::lbr_gru_forward(), dnnl::lbr_gru_backward());
  }
  return r;
}

}  // namespace

void lower_rnn(Program& p, int ni) {
  const Node& n = node_of(p, ni);
  using tag = memory::format_tag;
  const RnnCell cell = n.op == OpKind::LSTM  ? RnnCell::Lstm
                       : n.op == OpKind::RNN ? RnnCell::Rnn
                       : n.attrs.i("linear_before_reset", 0) != 0 ? RnnCell::LbrGru
                                                                  : RnnCell::Gru;
  const int X = input_at(n, 0), W = input_at(n, 1), R = input_at(n, 2), B = input_at(n, 3);
  const int H0 = input_at(n, 5), C0 = cell == RnnCell::Lstm ? input_at(n, 6) : -1;
  const Shape &xs = shape_of(p, X), &ws = shape_of(p, W);
  if (xs.rank() != 3 || ws.rank() != 3) throw NoKernel{"RNN input or weights not 3-D"};
  const int64_t G = cell == RnnCell::Lstm ? 4 : cell == RnnCell::Rnn ? 1 : 3;
  const RnnSizes s{xs[0], xs[1], xs[2], ws[1] / G, ws[0], G};
  if (s.H * G != ws[1] || ws[2] != s.I || s.D < 1 || s.D > 2)
    throw NoKernel{"RNN weights " + to_string(ws) + " do not match the input " + to_string(xs)};
  // The other inputs are read as these shapes (the host copies below index them directly).
  auto expect = [&](int vid, const Shape& want, const char* what) {
    if (vid >= 0 && shape_of(p, vid) != want)
      throw NoKernel{std::string("RNN ") + what + " " + to_string(shape_of(p, vid)) + ", expected " + to_string(want)};
  };
  expect(R, Shape{{s.D, G * s.H, s.H}}, "recurrence weights");
  expect(B, Shape{{s.D, 2 * G * s.H}}, "bias");
  expect(H0, Shape{{s.D, s.N, s.H}}, "initial_h");
  expect(C0, Shape{{s.D, s.N, s.H}}, "initial_c");
  rnn_check_supported(p, n, cell, s);
  const std::string direction = n.attrs.s("direction", "forward");
  const auto dir = direction == "reverse"         ? dnnl::rnn_direction::unidirectional_right2left
                   : direction == "bidirectional" ? dnnl::rnn_direction::bidirectional_concat
                                                  : dnnl::rnn_direction::unidirectional_left2right;
  if ((direction == "bidirectional") != (s.D == 2)) throw NoKernel{"RNN direction and weights disagree"};

  const memory::desc ldigo_layer({1, s.D, s.I, G, s.H}, memory::data_type::f32, tag::ldigo),
      ldigo_iter({1, s.D, s.H, G, s.H}, memory::data_type::f32, tag::ldigo);
  const RnnDescs descs{memory::desc({s.T, s.N, s.I}, memory::data_type::f32, tag::tnc),
                       memory::desc({1, s.D, s.N, s.H}, memory::data_type::f32, tag::ldnc),
                       any_desc(ldigo_layer.dims()),
                       any_desc(ldigo_iter.dims()),
                       memory::desc({1, s.D, bias_gates(cell, s), s.H}, memory::data_type::f32, tag::ldgo),
                       memory::desc({s.T, s.N, s.D * s.H}, memory::data_type::f32, tag::tnc)};
  const RnnPrims prims = rnn_primitives(p, cell, dir, descs);
  const bool train = p.training();

  // Weights and bias in oneDNN's gate order (host ldigo copies), then in the layouts the primitives chose: once
  // at build time for inference; when training, before every forward, since the SGD update changes the graph's
  // weights (ONNX layout) after each step.
  struct Packing {
    memory from, host, fwd, bwd;  // graph weight, ldigo copy, forward layout, backward layout
    int64_t C;
  };
  std::vector<Packing> packs;
  for (auto [vid, C, ldigo, want, bwd_want] : {std::tuple{W, s.I, ldigo_layer, prims.w_layer, prims.bwd_w_layer},
                                                std::tuple{R, s.H, ldigo_iter, prims.w_iter, prims.bwd_w_iter}}) {
    Packing k{p.plain(vid, ni), train ? p.alloc(ldigo) : memory(ldigo, p.engine()), p.alloc(want), memory(), C};
    if (train) k.bwd = want == bwd_want ? k.fwd : p.alloc(bwd_want);
    packs.push_back(k);
  }
  const memory bias = p.alloc(descs.bias), graph_bias = B >= 0 ? p.plain(B, ni) : memory();
  auto pack = [&p, packs, bias, graph_bias, s, cell] {
    for (const Packing& k : packs) {
      const float* from = data_of(k.from);
      float* to = data_of(k.host);
      for_each_weight(s, k.C, cell, [&](int64_t onnx, int64_t ldigo) { to[ldigo] = from[onnx]; });
      dnnl::reorder(k.host, k.fwd).execute(p.stream(), {{DNNL_ARG_FROM, k.host}, {DNNL_ARG_TO, k.fwd}});
      if (k.bwd && k.bwd != k.fwd)
        dnnl::reorder(k.host, k.bwd).execute(p.stream(), {{DNNL_ARG_FROM, k.host}, {DNNL_ARG_TO, k.bwd}});
    }
    rnn_bias_to_ldgo(graph_bias ? data_of(graph_bias) : nullptr, data_of(bias), s, cell);
  };
  pack();

  auto initial = [&](int vid) {  // absent: a buffer never written, zeros (alloc zero-fills)
    return vid >= 0 ? p.view(p.plain(vid, ni), {1, s.D, s.N, s.H}) : p.alloc(descs.state);
  };
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC_LAYER, p.plain(X, ni)},
                                       {DNNL_ARG_SRC_ITER, initial(H0)},
                                       {DNNL_ARG_WEIGHTS_LAYER, packs[0].fwd},
                                       {DNNL_ARG_WEIGHTS_ITER, packs[1].fwd},
                                       {DNNL_ARG_BIAS, bias},
                                       {DNNL_ARG_DST_LAYER, p.alloc(descs.dst_layer)},
                                       {DNNL_ARG_DST_ITER, p.alloc(descs.state)}};
  if (cell == RnnCell::Lstm) {
    args[DNNL_ARG_SRC_ITER_C] = initial(C0);
    args[DNNL_ARG_DST_ITER_C] = p.alloc(descs.state);
  }
  if (prims.workspace.get_size() > 0) args[DNNL_ARG_WORKSPACE] = p.alloc(prims.workspace);

  // Outputs: Y [T, D, N, H] (oneDNN writes [T, N, D*H]: a view when D = 1, else one reorder), Y_h and Y_c
  // [D, N, H] (views of the final states).
  const memory::desc tndh({s.T, s.N, s.D, s.H}, memory::data_type::f32, tag::abcd);
  const memory::desc y_as_dst = tndh.permute_axes({0, 2, 1, 3});  // Y's [T, D, N, H] order over [T, N, D*H]
  auto output = [&](size_t i) {
    return i < n.outputs.size() && !p.graph().value(n.outputs[i]).omitted ? n.outputs[i] : -1;
  };
  const int Y = output(0), Yh = output(1), Yc = cell == RnnCell::Lstm ? output(2) : -1;
  std::function<void()> to_y;
  if (Y >= 0) {
    const memory& dl = args.at(DNNL_ARG_DST_LAYER);
    if (s.D == 1) {
      p.set_value(Y, p.view(dl, {s.T, 1, s.N, s.H}));
    } else {
      const memory seen = alias(p, dl, y_as_dst);
      const memory y = p.alloc(memory::desc({s.T, s.D, s.N, s.H}, memory::data_type::f32, tag::abcd));
      p.set_value(Y, y);
      dnnl::reorder r(seen, y);
      to_y = [&p, r, seen, y] { r.execute(p.stream(), {{DNNL_ARG_FROM, seen}, {DNNL_ARG_TO, y}}); };
    }
  }
  if (Yh >= 0) p.set_value(Yh, p.view(args.at(DNNL_ARG_DST_ITER), {s.D, s.N, s.H}));
  if (Yc >= 0) p.set_value(Yc, p.view(args.at(DNNL_ARG_DST_ITER_C), {s.D, s.N, s.H}));
  const dnnl::primitive prim = prims.forward;
  const std::function<void()> repack = train ? std::function<void()>(pack) : nullptr;
  Step& step = p.add_step(ni, prims.kernel, [&p, prim, args, to_y, repack] {
    if (repack) repack();
    prim.execute(p.stream(), args);
    if (to_y) to_y();
  });
  auto wants = [&](int vid) { return vid >= 0 && p.needs_grad(vid); };
  if (!wants(Y) && !wants(Yh) && !wants(Yc)) return;

  // Backward: the outputs' gradients in oneDNN's layouts (zeros for an output nobody differentiates), oneDNN's
  // backward (which adds into its weight gradients: they are zeroed first), then each gradient back in the
  // graph's layout, added into the input's.
  std::vector<std::function<void()>> parts;
  std::unordered_map<int, memory> bargs = args;
  bargs[DNNL_ARG_WEIGHTS_LAYER] = packs[0].bwd;
  bargs[DNNL_ARG_WEIGHTS_ITER] = packs[1].bwd;
  memory& diff_dst = bargs[DNNL_ARG_DIFF_DST_LAYER];
  if (!wants(Y)) {
    diff_dst = p.alloc(descs.dst_layer);  // never written: zeros
  } else if (s.D == 1) {
    diff_dst = p.view(p.grad(Y), {s.T, s.N, s.H});
  } else {
    diff_dst = p.alloc(descs.dst_layer);
    const memory gy = p.grad(Y), seen = alias(p, diff_dst, y_as_dst);
    dnnl::reorder r(gy, seen);
    parts.push_back([&p, r, gy, seen] { r.execute(p.stream(), {{DNNL_ARG_FROM, gy}, {DNNL_ARG_TO, seen}}); });
  }
  auto state_grad = [&](int vid) {  // no gradient: a buffer never written, zeros
    return wants(vid) ? p.view(p.grad(vid), {1, s.D, s.N, s.H}) : p.alloc(descs.state);
  };
  bargs[DNNL_ARG_DIFF_DST_ITER] = state_grad(Yh);
  bargs[DNNL_ARG_DIFF_SRC_LAYER] = p.alloc(descs.src_layer);
  bargs[DNNL_ARG_DIFF_SRC_ITER] = p.alloc(descs.state);
  if (cell == RnnCell::Lstm) {
    bargs[DNNL_ARG_DIFF_DST_ITER_C] = state_grad(Yc);
    bargs[DNNL_ARG_DIFF_SRC_ITER_C] = p.alloc(descs.state);
  }
  const memory diff_wl = p.alloc(prims.diff_w_layer), diff_wi = p.alloc(prims.diff_w_iter),
               diff_bias = p.alloc(descs.bias);
  bargs[DNNL_ARG_DIFF_WEIGHTS_LAYER] = diff_wl;
  bargs[DNNL_ARG_DIFF_WEIGHTS_ITER] = diff_wi;
  bargs[DNNL_ARG_DIFF_BIAS] = diff_bias;
  const dnnl::primitive bprim = prims.backward;
  parts.push_back([&p, bprim, bargs, diff_wl, diff_wi, diff_bias] {
    for (const memory& m : {diff_wl, diff_wi, diff_bias}) std::memset(m.get_data_handle(), 0, m.get_desc().get_size());
    bprim.execute(p.stream(), bargs);
  });
  if (wants(X)) parts.push_back(p.accumulate_into_grad(X, bargs.at(DNNL_ARG_DIFF_SRC_LAYER)));
  if (wants(H0)) parts.push_back(p.accumulate_into_grad(H0, bargs.at(DNNL_ARG_DIFF_SRC_ITER)));
  if (wants(C0)) parts.push_back(p.accumulate_into_grad(C0, bargs.at(DNNL_ARG_DIFF_SRC_ITER_C)));
  // Weight gradients: oneDNN's layout -> ldigo (a reorder when it chose another) -> ONNX's gate order.
  auto weight_grad = [&](int vid, const memory& diff, const memory::desc& ldigo, int64_t C) {
    if (!wants(vid)) return;
    memory in_ldigo = diff;
    if (diff.get_desc() != ldigo) {
      in_ldigo = p.alloc(ldigo);
      dnnl::reorder r(diff, in_ldigo);
      parts.push_back(
          [&p, r, diff, in_ldigo] { r.execute(p.stream(), {{DNNL_ARG_FROM, diff}, {DNNL_ARG_TO, in_ldigo}}); });
    }
    const memory onnx = p.alloc(p.value(vid).get_desc());
    parts.push_back([in_ldigo, onnx, s, C, cell] {
      const float* from = data_of(in_ldigo);
      float* to = data_of(onnx);
      for_each_weight(s, C, cell, [&](int64_t o, int64_t l) { to[o] = from[l]; });
    });
    parts.push_back(p.accumulate_into_grad(vid, onnx));
  };
  weight_grad(W, diff_wl, ldigo_layer, s.I);
  weight_grad(R, diff_wi, ldigo_iter, s.H);
  if (wants(B)) {
    const memory onnx = p.alloc(p.value(B).get_desc());
    parts.push_back([diff_bias, onnx, s, cell] {
      const float* from = data_of(diff_bias);
      float* to = data_of(onnx);
      for_each_bias(s, cell, [&](int64_t wb, int64_t rb, int64_t at_w, int64_t at_r) {
        to[wb] = from[at_w];
        to[rb] = from[at_r];
      });
    });
    parts.push_back(p.accumulate_into_grad(B, onnx));
  }
  step.info.has_backward = true;
  step.backward = sequence(parts);
}

}  // namespace ridge::exec
