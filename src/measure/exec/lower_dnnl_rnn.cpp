// ONNX RNN, GRU and LSTM through oneDNN's recurrent primitives (vanilla_rnn, gru / lbr_gru, lstm), forward only.
// ONNX and oneDNN order the gates and lay out the weights differently: the weights and biases are rearranged once
// while the program is built (not timed), as other weights are reordered.
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

/// ONNX weights [D, G*H, C] (C: input or hidden width) into oneDNN's ldigo [1, D, C, G, H].
void rnn_weights_to_ldigo(const float* w, float* out, const RnnSizes& s, int64_t C, RnnCell cell) {
  for (int64_t d = 0; d < s.D; ++d)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t g = 0; g < s.G; ++g)
        for (int64_t h = 0; h < s.H; ++h)
          out[((d * C + c) * s.G + g) * s.H + h] = w[(d * s.G * s.H + rnn_onnx_gate(cell, g) * s.H + h) * C + c];
}

/// ONNX B [D, 2*G*H] (input biases, then recurrent ones; absent: zeros) into oneDNN's ldgo [1, D, G', H]: their sum
/// per gate, except linear-before-reset GRU, whose candidate gate keeps the input bias and whose fourth gate is the
/// recurrent one (applied before the reset gate multiplies).
void rnn_bias_to_ldgo(const float* b, float* out, const RnnSizes& s, RnnCell cell) {
  const int64_t gates_out = cell == RnnCell::LbrGru ? 4 : s.G;
  std::memset(out, 0, sizeof(float) * static_cast<size_t>(s.D * gates_out * s.H));
  if (!b) return;
  for (int64_t d = 0; d < s.D; ++d)
    for (int64_t g = 0; g < s.G; ++g)
      for (int64_t h = 0; h < s.H; ++h) {
        const int64_t k = rnn_onnx_gate(cell, g);
        const float wb = b[d * 2 * s.G * s.H + k * s.H + h], rb = b[d * 2 * s.G * s.H + (s.G + k) * s.H + h];
        float* o = out + d * gates_out * s.H;
        if (cell == RnnCell::LbrGru && g == 2) {
          o[2 * s.H + h] = wb;
          o[3 * s.H + h] = rb;
        } else {
          o[g * s.H + h] = wb + rb;
        }
      }
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

  const int64_t bias_gates = cell == RnnCell::LbrGru ? 4 : G;
  const memory::desc src_layer({s.T, s.N, s.I}, memory::data_type::f32, tag::tnc),
      state({1, s.D, s.N, s.H}, memory::data_type::f32, tag::ldnc),
      w_layer = any_desc({1, s.D, s.I, G, s.H}), w_iter = any_desc({1, s.D, s.H, G, s.H}),
      bias({1, s.D, bias_gates, s.H}, memory::data_type::f32, tag::ldgo),
      dst_layer({s.T, s.N, s.D * s.H}, memory::data_type::f32, tag::tnc);
  const auto prop = dnnl::prop_kind::forward_inference;
  dnnl::primitive prim;
  memory::desc w_layer_want, w_iter_want;
  std::string kernel;
  auto use = [&](const auto& pd, dnnl::primitive made) {
    prim = std::move(made);
    w_layer_want = pd.weights_layer_desc(), w_iter_want = pd.weights_iter_desc(), kernel = impl_name(pd);
  };
  if (cell == RnnCell::Lstm) {
    dnnl::lstm_forward::primitive_desc pd(
        dnnl::lstm_forward::desc(prop, dir, src_layer, state, state, w_layer, w_iter, bias, dst_layer, state, state),
        p.engine());
    use(pd, dnnl::lstm_forward(pd));
  } else if (cell == RnnCell::Rnn) {
    dnnl::vanilla_rnn_forward::primitive_desc pd(
        dnnl::vanilla_rnn_forward::desc(prop, dnnl::algorithm::eltwise_tanh, dir, src_layer, state, w_layer, w_iter,
                                        bias, dst_layer, state),
        p.engine());
    use(pd, dnnl::vanilla_rnn_forward(pd));
  } else if (cell == RnnCell::Gru) {
    dnnl::gru_forward::primitive_desc pd(
        dnnl::gru_forward::desc(prop, dir, src_layer, state, w_layer, w_iter, bias, dst_layer, state), p.engine());
    use(pd, dnnl::gru_forward(pd));
  } else {
    dnnl::lbr_gru_forward::primitive_desc pd(
        dnnl::lbr_gru_forward::desc(prop, dir, src_layer, state, w_layer, w_iter, bias, dst_layer, state), p.engine());
    use(pd, dnnl::lbr_gru_forward(pd));
  }

  // Weights and bias in oneDNN's gate order, then in the layout the primitive chose (once, not timed).
  // The ldigo copy is a host buffer of this call: the program keeps only the primitive's layout.
  auto packed = [&](int vid, int64_t C, const memory::desc& want) {
    const memory::desc ldigo_desc({1, s.D, C, G, s.H}, memory::data_type::f32, tag::ldigo);
    std::vector<float> host(ldigo_desc.get_size() / sizeof(float));
    rnn_weights_to_ldigo(data_of(p.plain(vid, ni)), host.data(), s, C, cell);
    const memory ldigo(ldigo_desc, p.engine(), host.data());
    memory out = p.alloc(want);
    p.run_now(dnnl::reorder(ldigo, out), {{DNNL_ARG_FROM, ldigo}, {DNNL_ARG_TO, out}});
    return out;
  };
  const memory wl = packed(W, s.I, w_layer_want), wi = packed(R, s.H, w_iter_want);
  const memory b = p.alloc(bias);
  rnn_bias_to_ldgo(B >= 0 ? data_of(p.plain(B, ni)) : nullptr, data_of(b), s, cell);
  auto initial = [&](int vid) {
    if (vid >= 0) return p.view(p.plain(vid, ni), {1, s.D, s.N, s.H});
    memory zeros = p.alloc(state);
    std::memset(data_of(zeros), 0, state.get_size());
    return zeros;
  };
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC_LAYER, p.plain(X, ni)}, {DNNL_ARG_SRC_ITER, initial(H0)},
                                       {DNNL_ARG_WEIGHTS_LAYER, wl},         {DNNL_ARG_WEIGHTS_ITER, wi},
                                       {DNNL_ARG_BIAS, b},                    {DNNL_ARG_DST_LAYER, p.alloc(dst_layer)},
                                       {DNNL_ARG_DST_ITER, p.alloc(state)}};
  if (cell == RnnCell::Lstm) {
    args[DNNL_ARG_SRC_ITER_C] = initial(C0);
    args[DNNL_ARG_DST_ITER_C] = p.alloc(state);
  }

  // Outputs: Y [T, D, N, H] (oneDNN writes [T, N, D*H]: a view when D = 1, else one reorder), Y_h and Y_c
  // [D, N, H] (views of the final states).
  std::function<void()> to_y;
  auto output = [&](size_t i) {
    return i < n.outputs.size() && !p.graph().value(n.outputs[i]).omitted ? n.outputs[i] : -1;
  };
  if (const int Y = output(0); Y >= 0) {
    const memory& dl = args.at(DNNL_ARG_DST_LAYER);
    if (s.D == 1) {
      p.set_value(Y, p.view(dl, {s.T, 1, s.N, s.H}));
    } else {
      const memory::desc tndh({s.T, s.N, s.D, s.H}, memory::data_type::f32, tag::abcd);
      const memory seen = alias(p, dl, tndh.permute_axes({0, 2, 1, 3}));
      const memory y = p.alloc(memory::desc({s.T, s.D, s.N, s.H}, memory::data_type::f32, tag::abcd));
      p.set_value(Y, y);
      dnnl::reorder r(seen, y);
      to_y = [&p, r, seen, y] { r.execute(p.stream(), {{DNNL_ARG_FROM, seen}, {DNNL_ARG_TO, y}}); };
    }
  }
  if (const int Yh = output(1); Yh >= 0) p.set_value(Yh, p.view(args.at(DNNL_ARG_DST_ITER), {s.D, s.N, s.H}));
  if (const int Yc = output(2); Yc >= 0 && cell == RnnCell::Lstm)
    p.set_value(Yc, p.view(args.at(DNNL_ARG_DST_ITER_C), {s.D, s.N, s.H}));
  p.add_step(ni, kernel, [&p, prim, args, to_y] {
    prim.execute(p.stream(), args);
    if (to_y) to_y();
  });
  if (p.training()) p.note(std::string(op_name(n.op)) + " runs forward only in the executor (no backward)");
}

}  // namespace ridge::exec
