// Recurrent family: LSTM, GRU and RNN (ONNX layouts 0 and 1, forward/reverse/bidirectional, sequence lengths) —
// shape inference and cost per PyTorch's cuDNN-style gate math. See docs/counting.md ("Recurrent layers").
#include <algorithm>

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

}  // namespace

const OpRule rule_recurrent{recurrent_infer, recurrent_cost};

}  // namespace ridge::ops
