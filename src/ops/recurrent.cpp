// Recurrent family: LSTM, GRU and RNN (ONNX layouts 0 and 1, forward/reverse/bidirectional, sequence lengths) —
// shape inference and cost per PyTorch's cuDNN-style gate math —; Mamba-2's selective scan (SelectiveScan, the
// chunked state-space dual of mamba_ssm's kernels), Gated DeltaNet's delta rule (GatedDeltaRule, the chunked WY
// form of flash-linear-attention's kernels) and Mamba-1's scan (MambaScan, mamba_ssm's selective_scan_fn). See
// docs/counting.md ("Recurrent layers", "Selective scan", "GatedDeltaRule", "MambaScan").
#include <algorithm>
#include <initializer_list>

#include "ops/family.hpp"

namespace ridge::ops {

namespace {

int gates(OpKind op) { return op == OpKind::LSTM ? 4 : op == OpKind::GRU ? 3 : 1; }

int directions(const Node& n) {
  const std::string d = n.attrs.s("direction", "forward");
  if (d != "forward" && d != "reverse" && d != "bidirectional")
    throw RuleError(fmt::format("direction '{}' is not forward, reverse or bidirectional", d));
  return d == "bidirectional" ? 2 : 1;
}

/// Hidden size: the attribute, else R's last dim.
int64_t hidden_size(const Node& n, const Shape* r) {
  const int64_t h = n.attrs.i("hidden_size", -1);
  return h > 0 ? h : (r && r->rank() == 3 ? r->dims[2] : -1);
}

bool recurrent_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  if (x->rank() != 3) throw RuleError("input X must be 3-D (layout 0: [seq, batch, input]; 1: [batch, seq, input])");
  const bool batch_first = c.n.attrs.i("layout", 0) == 1;
  const int64_t seq = x->dims[batch_first ? 1 : 0], batch = x->dims[batch_first ? 0 : 1];
  const int64_t dirs = directions(c.n), h = hidden_size(c.n, c.shape(2));
  // W [dirs, G·H, input], R [dirs, G·H, H], B [dirs, 2·G·H]: each must agree with hidden_size and X.
  const int64_t gh = h < 0 ? -1 : gates(c.n.op) * h;
  const std::vector<std::pair<int, Shape>> expected = {
      {1, Shape{{dirs, gh, x->dims[2]}}}, {2, Shape{{dirs, gh, h}}}, {3, Shape{{dirs, gh < 0 ? -1 : 2 * gh}}}};
  for (const auto& [i, want] : expected) {
    const Shape* s = c.shape(i);
    bool fits = s && s->rank() == want.rank();
    for (int d = 0; fits && d < want.rank(); ++d) fits = s->dims[d] < 0 || want.dims[d] < 0 || s->dims[d] == want.dims[d];
    if (s && !fits)
      throw RuleError(fmt::format("{} is {}, but hidden_size {} and input {} make it {}", i == 1 ? "W" : i == 2 ? "R" : "B",
                                  to_string(*s), h, to_string(*x), to_string(want)));
  }
  c.out(0, batch_first ? Shape{{batch, seq, dirs, h}} : Shape{{seq, dirs, batch, h}});
  const Shape state = batch_first ? Shape{{batch, dirs, h}} : Shape{{dirs, batch, h}};
  c.out(1, state);
  c.out(2, state);
  return true;
}

// Per step, batch row and direction, with G gates (LSTM 4, GRU 3, RNN 1), input size I and hidden size H:
// MACs = G·H·(I + H) (x·Wᵀ and h·Rᵀ); the two products summed: G·H; biases (b_ih and b_hh): 2·G·H when B is given;
// gate math with sigmoid 3 and tanh 1 FLOP per element: LSTM 15H (3 sigmoids 9H, tanh H, c = f·c + i·g 3H,
// h = o·tanh(c) 2H), GRU 15H (r and z sums 2H, r·(h·R_n + b_hn) and its add 2H, 2 sigmoids 6H, tanh H,
// (1 − z)·n + z·h 4H), RNN H (tanh or relu). Steps: Σ sequence_lens when known, else seq · batch.
// Backward: X gets 2·G·H·I + 2·G·H·H (through the recurrence) + the gate math again per step; W 2·G·H·I, R 2·G·H·H,
// B 2·G·H.
bool recurrent_cost(const CostContext& c, Cost& cost, std::string&) {
  const Shape& x = c.in_shape(0);
  const bool batch_first = c.n.attrs.i("layout", 0) == 1;
  const Count G = gates(c.n.op), dirs = directions(c.n), I = x[2];
  const Count H = hidden_size(c.n, c.n.inputs.size() > 2 ? &c.in_shape(2) : nullptr);
  Count steps = Count{x[0]} * x[1];
  if (c.present(4) && c.g.value(c.n.inputs[4]).has_int_data) {
    steps = 0;
    for (int64_t len : c.g.value(c.n.inputs[4]).int_data) steps += std::clamp<int64_t>(len, 0, x[batch_first ? 1 : 0]);
  }
  steps *= dirs;
  const bool bias = c.present(3);
  const Count gate_math = c.n.op == OpKind::RNN ? H : 15 * H;
  const Count per_step_flops = G * H + (bias ? 2 * G * H : 0) + gate_math;
  cost.macs = steps * G * H * (I + H);
  cost.flops = 2 * cost.macs + steps * per_step_flops;
  c.add_grad(c.n.inputs[0], steps * (2 * G * H * (I + H) + gate_math), cost);
  c.add_grad(c.n.inputs[1], steps * 2 * G * H * I, cost);
  c.add_grad(c.n.inputs[2], steps * 2 * G * H * H, cost);
  if (bias) c.add_grad(c.n.inputs[3], steps * 2 * G * H, cost);
  return true;
}

// Two dims agree when either is unknown (negative) or they are equal.
bool agree(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }

// The scans' shared tail: the inputs holding one value per head (`per_head`), the optional initial state (input
// `state_input`)
// against `final_state` (named as made from `from`), and the outputs: `out`, then the final state at the initial
// state's type, else float32 as the kernels return it.
bool scan_outputs(RuleContext& c, const char* op, std::initializer_list<int> per_head, int64_t heads,
                  const Shape& final_state, const char* from, const Shape& out, int state_input = 7) {
  for (int i : per_head)
    if (const Shape* s = c.shape(i); s && (s->rank() != 1 || !agree(s->dims[0], heads)))
      throw RuleError(fmt::format("{}: input {} must be [{}] (one value per head), not {}", op, i, heads,
                                  to_string(*s)));
  if (const Shape* s = c.shape(state_input)) {
    bool fits = s->rank() == final_state.rank();
    for (int d = 0; fits && d < final_state.rank(); ++d) fits = agree(s->dims[d], final_state.dims[d]);
    if (!fits)
      throw RuleError(fmt::format("{}: the initial state is {}, {} make it {}", op, to_string(*s), from,
                                  to_string(final_state)));
  }
  c.out(0, out);
  if (c.outputs() > 1) c.out(1, final_state, c.present(state_input) ? c.dtype(state_input) : DType::F32);
  return true;
}

// The scans' cost rules need their first five inputs (a file may declare a node without them): false with `why`.
bool first_five_present(const CostContext& c, const char* why, std::string& reason) {
  for (size_t i = 0; i < 5; ++i)
    if (!c.present(i)) {
      reason = why;
      return false;
    }
  return true;
}

// SelectiveScan: x [B, L, H, P], dt [B, L, H] (before dt_bias and softplus), A [H] (negative), B and C
// [B, L, G, N] (G groups of heads share them), D [H], dt_bias [H], optional initial state [B, H, P, N] -> y
// [B, L, H, P] and the final state [B, H, P, N] (the initial state's type, else float32 as mamba_ssm returns it).
bool selective_scan_infer(RuleContext& c) {
  for (int i = 0; i < 5; ++i)
    if (!c.present(i)) throw RuleError("SelectiveScan needs its first five inputs: x, dt, A, B and C");
  const Shape *x = c.shape(0), *dt = c.shape(1), *bm = c.shape(3), *cm = c.shape(4);
  if (!x || !dt || !bm || !cm) return false;
  if (x->rank() != 4 || dt->rank() != 3 || bm->rank() != 4 || cm->rank() != 4)
    throw RuleError("SelectiveScan: x must be [B, L, heads, head_dim], dt [B, L, heads], B and C [B, L, groups, state]");
  const int64_t batch = x->dims[0], len = x->dims[1], heads = x->dims[2], hd = x->dims[3];
  const int64_t groups = bm->dims[2], state = bm->dims[3];
  if (!agree(dt->dims[0], batch) || !agree(dt->dims[1], len) || !agree(dt->dims[2], heads))
    throw RuleError(fmt::format("SelectiveScan: dt {} does not match x {}", to_string(*dt), to_string(*x)));
  for (int d = 0; d < 4; ++d)
    if (!agree(bm->dims[d], cm->dims[d]))
      throw RuleError(fmt::format("SelectiveScan: B {} and C {} differ", to_string(*bm), to_string(*cm)));
  if (!agree(bm->dims[0], batch) || !agree(bm->dims[1], len))
    throw RuleError(fmt::format("SelectiveScan: B {} does not match x {}", to_string(*bm), to_string(*x)));
  if (heads > 0 && groups > 0 && heads % groups != 0)
    throw RuleError(fmt::format("SelectiveScan: {} heads do not split into {} groups", heads, groups));
  return scan_outputs(c, "SelectiveScan", {2, 5, 6}, heads, Shape{{batch, heads, hd, state}}, "x and B", *x);
}

// Per sequence, with H heads of width P, G groups, state size N and chunk length Q (the last chunk q = L mod Q when
// shorter), per chunk of q tokens and its q(q + 1) / 2 causal pairs T:
//   MACs: C Bᵀ on the kept pairs G·T·N, the pairs times x H·T·P, the chunk's state Bᵀ x H·q·N·P, the queries on the
//   state carried in C h H·q·N·P, the skip D x H·q·P;
//   elementwise: dt + dt_bias, softplus (3) and dt·A and its running sum, 6 per token and head; per kept pair and
//   head, the decay exp(segment sum) (a subtraction, an exp) and its product with the score, 3; per token, head and
//   channel, x·dt and the decay on the carried state's output, 2; per chunk the carried state's decay and add, 2 per
//   state element.
// One token with an initial state (a decode step) is the recurrence: h = exp(dt A) h + dt x Bᵀ, y = h C + D x:
//   MACs H·P·N + H·P; FLOPs 2·MACs + 3·H·P·N (decay, outer product, add) + H·P (dt x) + 8·H (dt prep, exp(dt A)).
// Backward: every product's two operands get their gradients (2 FLOPs per MAC each), the elementwise terms once
// more: x (the pairs, the chunk state, the skip, its dt scaling), B and C (their pair scores and state products),
// dt (the scores' gradient, the carried state's gradient, the elementwise terms), A (dt·A's sum), D.
struct ScanWork {
  Count macs = 0, flops = 0, grad_x = 0, grad_dt = 0, grad_a = 0, grad_b = 0, grad_c = 0, grad_d = 0;
};

ScanWork scan_work(Count batch, Count len, Count heads, Count hd, Count groups, Count state, Count chunk, bool step) {
  ScanWork w;
  const Count HPN = heads * hd * state, HP = heads * hd;
  if (step && len == 1) {
    w.macs = batch * (HPN + HP);
    w.flops = 2 * w.macs + batch * (3 * HPN + HP + 8 * heads);
    w.grad_x = batch * (2 * HPN + 2 * HP + HP);
    w.grad_b = w.grad_c = batch * 2 * HPN;
    w.grad_dt = batch * (2 * HPN + 8 * heads);
    w.grad_a = batch * 2 * heads;
    w.grad_d = batch * 2 * HP;
    return w;
  }
  auto add_chunk = [&](Count q, Count times) {
    if (q <= 0 || times <= 0) return;
    const Count pairs = q * (q + 1) / 2;
    const Count macs = groups * pairs * state + heads * pairs * hd + 2 * q * HPN + q * HP;
    const Count elementwise = 6 * heads * q + 3 * heads * pairs + 2 * q * HP + 2 * HPN;
    w.macs += times * macs;
    w.flops += times * (2 * macs + elementwise);
    w.grad_x += times * (2 * (heads * pairs * hd + q * HPN + q * HP) + q * HP);
    w.grad_b += times * 2 * (groups * pairs * state + q * HPN);
    w.grad_c += times * 2 * (groups * pairs * state + q * HPN);
    w.grad_dt += times * (2 * heads * pairs * hd + 2 * q * HPN + elementwise);
    w.grad_a += times * 2 * heads * q;
    w.grad_d += times * 2 * q * HP;
  };
  add_chunk(chunk, batch * (len / chunk));
  add_chunk(len % chunk, batch);
  return w;
}

bool selective_scan_cost(const CostContext& c, Cost& cost, std::string& reason) {
  if (!first_five_present(c, "SelectiveScan needs its first five inputs: x, dt, A, B and C", reason)) return false;
  const Shape &x = c.in_shape(0), &bm = c.in_shape(3);
  if (x.rank() != 4 || bm.rank() != 4) {  // shapes a file declared without the rule's checks
    reason = "x and B must be 4-D [B, L, heads, head_dim] and [B, L, groups, state]";
    return false;
  }
  const int64_t chunk = c.n.attrs.i("chunk_size", 256);
  if (chunk < 1 || chunk > ops::kMaxDim) {
    reason = fmt::format("chunk_size {} is not a positive length", chunk);
    return false;
  }
  const ScanWork w = scan_work(x[0], x[1], x[2], x[3], bm[2], bm[3], chunk, c.present(7));
  cost.macs = w.macs;
  cost.flops = w.flops;
  c.add_grad(c.n.inputs[0], w.grad_x, cost);
  c.add_grad(c.n.inputs[1], w.grad_dt, cost);
  c.add_grad(c.n.inputs[2], w.grad_a, cost);
  c.add_grad(c.n.inputs[3], w.grad_b, cost);
  c.add_grad(c.n.inputs[4], w.grad_c, cost);
  if (c.present(5)) c.add_grad(c.n.inputs[5], w.grad_d, cost);
  if (c.present(6)) c.add_grad(c.n.inputs[6], w.grad_a, cost);
  return true;
}


// GatedDeltaRule: q and k [B, L, Hk, K] (Hk key heads, each shared by H / Hk value heads), v [B, L, H, V], the raw
// gate inputs a and b [B, L, H] (g = -exp(A_log) softplus(a + dt_bias), beta = sigmoid(b), fused as vLLM's
// fused_gdn_gating does), A_log [H], dt_bias [H], optional initial state [B, H, K, V] -> o [B, L, H, V] and the final
// state [B, H, K, V] (the initial state's type, else float32 as the kernels return it).
bool gated_delta_rule_infer(RuleContext& c) {
  for (int i = 0; i < 5; ++i)
    if (!c.present(i)) throw RuleError("GatedDeltaRule needs its first five inputs: q, k, v, a and b");
  const Shape *q = c.shape(0), *k = c.shape(1), *v = c.shape(2), *a = c.shape(3), *b = c.shape(4);
  if (!q || !k || !v || !a || !b) return false;
  if (q->rank() != 4 || k->rank() != 4 || v->rank() != 4 || a->rank() != 3 || b->rank() != 3)
    throw RuleError("GatedDeltaRule: q and k must be [B, L, key_heads, key_dim], v [B, L, heads, value_dim], a and b "
                    "[B, L, heads]");
  for (int d = 0; d < 4; ++d)
    if (!agree(q->dims[d], k->dims[d]))
      throw RuleError(fmt::format("GatedDeltaRule: q {} and k {} differ", to_string(*q), to_string(*k)));
  const int64_t batch = v->dims[0], len = v->dims[1], heads = v->dims[2], vd = v->dims[3];
  const int64_t key_heads = q->dims[2], kd = q->dims[3];
  if (!agree(q->dims[0], batch) || !agree(q->dims[1], len))
    throw RuleError(fmt::format("GatedDeltaRule: q {} does not match v {}", to_string(*q), to_string(*v)));
  if (heads > 0 && key_heads > 0 && heads % key_heads != 0)
    throw RuleError(fmt::format("GatedDeltaRule: {} value heads do not share {} key heads evenly", heads, key_heads));
  for (const Shape* s : {a, b})
    if (!agree(s->dims[0], batch) || !agree(s->dims[1], len) || !agree(s->dims[2], heads))
      throw RuleError(fmt::format("GatedDeltaRule: the gate input {} does not match v {}", to_string(*s), to_string(*v)));
  return scan_outputs(c, "GatedDeltaRule", {5, 6}, heads, Shape{{batch, heads, kd, vd}}, "q and v", *v);
}

// Per sequence and value head, with key width K, value width V and chunk length Q (the last chunk q = L mod Q when
// shorter), per chunk of q tokens, S = q(q - 1) / 2 strict pairs, P = q(q + 1) / 2 kept pairs, q(q - 1)(q - 2) / 6
// triples (docs/counting.md, "Gated delta rule"):
//   MACs: the keys' Gram matrix on the strict pairs S·K; the unit lower-triangular inverse (I + A)⁻¹ by forward
//   substitution, one MAC per triple; w and u (the inverse times beta k e^g and beta v) S·(K + V); the state's three
//   products (v - w h, the state update kᵀ v_new, the queries on the carried state) 3·q·K·V; the chunk's own
//   scores and their product with v_new P·(K + V);
//   elementwise, per token: the gate (a + dt_bias, softplus 3, times -exp(A_log) 2, its running sum, sigmoid(b) 3:
//   10), e^g 1, beta k e^g 2K, beta v V, v - w h V, the decay to the chunk's end (a subtraction, an exp) 2 and its
//   product with k K, the query's scale and e^g 2K, the two outputs' sum V; per strict pair the decay and beta
//   (subtraction, exp, two products) 4; per kept pair the decay (subtraction, exp, product) 3; per chunk the carried
//   state's decay and add 2·K·V. qk_l2norm: per token and key head, q and k normalised, 3K + 2 each.
// One token with an initial state (a decode step) is the recurrence: h = e^g h, h += k ((v - hᵀk) beta), o = hᵀ q:
//   MACs 3·K·V; FLOPs 2·MACs + K·V (the decay) + 2V + K (the query's scale) + 10 (the gate, e^g).
// Backward: each product's two operands get their gradients (2 FLOPs per MAC each; the attribution is in
// docs/counting.md), the elementwise terms once more, A_log and dt_bias 2 per token and head, the initial state
// its decay 2·K·V.
struct DeltaWork {
  Count macs = 0, flops = 0, grad_q = 0, grad_k = 0, grad_v = 0, grad_a = 0, grad_b = 0, grad_per_head = 0,
        grad_state = 0;
};

DeltaWork delta_work(Count batch, Count len, Count key_heads, Count heads, Count kd, Count vd, Count chunk, bool step,
                     bool l2norm) {
  DeltaWork w;
  const Count KV = kd * vd, norm = l2norm ? key_heads * (3 * kd + 2) : 0;  // per token, for q and for k each
  w.grad_state = batch * heads * 2 * KV;  // the initial state's decay into the first chunk
  if (step && len == 1) {
    // hᵀk (h, k), k (v - hᵀk) beta (k, v), hᵀq (h, q); h's operand gradients go to the initial state
    w.macs = batch * heads * 3 * KV;
    w.flops = 2 * w.macs + batch * (heads * (KV + 2 * vd + kd + 10) + 2 * norm);
    w.grad_q = batch * (heads * (2 * KV + kd) + norm);
    w.grad_k = batch * (heads * 4 * KV + norm);
    w.grad_v = batch * heads * (2 * KV + vd);
    w.grad_a = batch * heads * (KV + 7);
    w.grad_b = batch * heads * (vd + 3);
    w.grad_per_head = batch * heads * 2;
    w.grad_state = batch * heads * 4 * KV;
    return w;
  }
  auto add_chunk = [&](Count q, Count times) {
    if (q <= 0 || times <= 0) return;
    const Count S = q * (q - 1) / 2, P = q * (q + 1) / 2, triples = q * (q - 1) * (q - 2) / 6;
    const Count macs = heads * (S * kd + triples + S * (kd + vd) + 3 * q * KV + P * (kd + vd));
    const Count elementwise = heads * (q * (13 + 5 * kd + 3 * vd) + 4 * S + 3 * P + 2 * KV) + 2 * q * norm;
    w.macs += times * macs;
    w.flops += times * (2 * macs + elementwise);
    // Operand gradients, 2 FLOPs per MAC each: Gram (k, k), inverse (a, b), w (b, k), u (b, v), v - w h (k, v),
    // state update (k, v), carried-state output (q, v), scores (q, k), their product with v_new (k, v).
    w.grad_q += times * (heads * (2 * (q * KV + P * kd) + 2 * q * kd) + q * norm);
    w.grad_k += times * (heads * (2 * (2 * S * kd + S * kd + 2 * q * KV + P * kd + P * vd) + 3 * q * kd) + q * norm);
    w.grad_v += times * heads * (2 * (S * vd + 3 * q * KV + P * vd) + 3 * q * vd + 2 * KV);
    w.grad_a += times * heads * (2 * triples + 10 * q + 4 * S + 3 * P);
    w.grad_b += times * heads * (2 * (triples + S * kd + S * vd) + 3 * q);
    w.grad_per_head += times * heads * 2 * q;
  };
  add_chunk(chunk, batch * (len / chunk));
  add_chunk(len % chunk, batch);
  return w;
}

bool gated_delta_rule_cost(const CostContext& c, Cost& cost, std::string& reason) {
  if (!first_five_present(c, "GatedDeltaRule needs its first five inputs: q, k, v, a and b", reason)) return false;
  const Shape &q = c.in_shape(0), &v = c.in_shape(2);
  if (q.rank() != 4 || v.rank() != 4) {  // shapes a file declared without the rule's checks
    reason = "q and v must be 4-D [B, L, key_heads, key_dim] and [B, L, heads, value_dim]";
    return false;
  }
  const int64_t chunk = c.n.attrs.i("chunk_size", 64);
  if (chunk < 1 || chunk > ops::kMaxDim) {
    reason = fmt::format("chunk_size {} is not a positive length", chunk);
    return false;
  }
  const DeltaWork w = delta_work(v[0], v[1], q[2], v[2], q[3], v[3], chunk, c.present(7),
                                 c.n.attrs.i("qk_l2norm", 0) != 0);
  cost.macs = w.macs;
  cost.flops = w.flops;
  c.add_grad(c.n.inputs[0], w.grad_q, cost);
  c.add_grad(c.n.inputs[1], w.grad_k, cost);
  c.add_grad(c.n.inputs[2], w.grad_v, cost);
  c.add_grad(c.n.inputs[3], w.grad_a, cost);
  c.add_grad(c.n.inputs[4], w.grad_b, cost);
  if (c.present(5)) c.add_grad(c.n.inputs[5], w.grad_per_head, cost);
  if (c.present(6)) c.add_grad(c.n.inputs[6], w.grad_per_head, cost);
  if (c.present(7)) c.add_grad(c.n.inputs[7], w.grad_state, cost);
  return true;
}

// MambaScan: x [B, L, I] (I channels), dt [B, L, I] (before dt_bias and softplus), A [I, N] (negative), B and C
// [B, L, N], optional D [I], z [B, L, I] (the gate), dt_bias [I] and initial state [B, I, N] -> y [B, L, I] and the
// final state [B, I, N] (the initial state's type, else float32).
bool mamba_scan_infer(RuleContext& c) {
  for (int i = 0; i < 5; ++i)
    if (!c.present(i)) throw RuleError("MambaScan needs its first five inputs: x, dt, A, B and C");
  const Shape *x = c.shape(0), *dt = c.shape(1), *a = c.shape(2), *bm = c.shape(3), *cm = c.shape(4);
  if (!x || !dt || !a || !bm || !cm) return false;
  if (x->rank() != 3 || dt->rank() != 3 || a->rank() != 2 || bm->rank() != 3 || cm->rank() != 3)
    throw RuleError("MambaScan: x and dt must be [B, L, channels], A [channels, state], B and C [B, L, state]");
  const int64_t batch = x->dims[0], len = x->dims[1], channels = x->dims[2], state = a->dims[1];
  for (const Shape* s : {dt, c.shape(6)})
    if (s)
      for (int d = 0; d < 3; ++d)
        if (!agree(s->dims[d], x->dims[d]))
          throw RuleError(fmt::format("MambaScan: {} does not match x {}", to_string(*s), to_string(*x)));
  if (!agree(a->dims[0], channels))
    throw RuleError(fmt::format("MambaScan: A {} does not match x's {} channels", to_string(*a), channels));
  for (const Shape* s : {bm, cm})
    if (!agree(s->dims[0], batch) || !agree(s->dims[1], len) || !agree(s->dims[2], state))
      throw RuleError(fmt::format("MambaScan: B and C must be [{}, {}, {}], not {}", batch, len, state, to_string(*s)));
  return scan_outputs(c, "MambaScan", {5, 7}, channels, Shape{{batch, channels, state}}, "x and A", *x, 8);
}

// Per token and channel with N states (selective_scan_fn's recurrence, the same at every length: no chunks):
//   MACs: per state the update h = exp(dt A) h + (dt x) B and the readout y += C h, 2; the skip D x, 1;
//   elementwise per state: dt A, its exp, (dt x) B, 3; per channel softplus 3, dt x 1, with dt_bias its add 1, with a
//   gate silu(z) 4 and its product 1.
// Backward: twice the forward, to the inputs that enter each term (per state x 4, dt 4, A, B and C 2 each; per
// channel dt 7 (9 with dt_bias), x 3 (1 without D), D 2, z 10), plus dt_bias 2 per channel and token and the initial
// state 2 per state element.
bool mamba_scan_cost(const CostContext& c, Cost& cost, std::string& reason) {
  if (!first_five_present(c, "MambaScan needs its first five inputs: x, dt, A, B and C", reason)) return false;
  const Shape &x = c.in_shape(0), &a = c.in_shape(2);
  if (x.rank() != 3 || a.rank() != 2) {
    reason = "x must be 3-D [B, L, channels] and A 2-D [channels, state]";
    return false;
  }
  const bool skip = c.present(5), gate = c.present(6), bias = c.present(7);
  const Count tc = x[0] * x[1] * x[2], n = a[1];
  cost.macs = tc * (2 * n + (skip ? 1 : 0));
  cost.flops = 2 * cost.macs + tc * (3 * n + 4 + (bias ? 1 : 0) + (gate ? 5 : 0));
  c.add_grad(c.n.inputs[0], tc * (4 * n + (skip ? 3 : 1)), cost);
  c.add_grad(c.n.inputs[1], tc * (4 * n + (bias ? 9 : 7)), cost);
  c.add_grad(c.n.inputs[2], tc * 2 * n, cost);
  c.add_grad(c.n.inputs[3], tc * 2 * n, cost);
  c.add_grad(c.n.inputs[4], tc * 2 * n, cost);
  if (skip) c.add_grad(c.n.inputs[5], tc * 2, cost);
  if (gate) c.add_grad(c.n.inputs[6], tc * 10, cost);
  if (c.present(7)) c.add_grad(c.n.inputs[7], tc * 2, cost);
  if (c.present(8)) c.add_grad(c.n.inputs[8], Count{x[0]} * x[2] * n * 2, cost);
  return true;
}

}  // namespace

const OpRule rule_recurrent{recurrent_infer, recurrent_cost};
const OpRule rule_selective_scan{selective_scan_infer, selective_scan_cost};
const OpRule rule_gated_delta_rule{gated_delta_rule_infer, gated_delta_rule_cost};
const OpRule rule_mamba_scan{mamba_scan_infer, mamba_scan_cost};

}  // namespace ridge::ops
