// Attention family: ONNX Attention (opset 23, grouped-query heads, past key/value) and RotaryEmbedding (ONNX
// opset 23 and com.microsoft) — shape inference and cost. See docs/counting.md ("Attention").
#include "ops/family.hpp"

namespace ridge::ops {

namespace {

/// Head layout of one Attention node: batch, query heads, key/value heads, query length, total key length
/// (past + new), head sizes of Q/K and of V. -1 where unknown.
struct AttentionGeom {
  int64_t batch = -1, q_heads = -1, kv_heads = -1, q_len = -1, kv_len = -1, past = 0, head = -1, v_head = -1;
  bool three_d = false;  ///< Q given as [B, L, heads*size] rather than [B, heads, L, size]
};

int64_t div_or_unknown(int64_t a, int64_t b) { return a >= 0 && b > 0 && a % b == 0 ? a / b : -1; }

/// Reads the geometry from the shapes of Q (0), K (1), V (2), past_key (4) and the head-count attributes.
std::optional<AttentionGeom> attention_geom(const Shape* q, const Shape* k, const Shape* v, const Shape* past,
                                            const Attrs& a) {
  if (!q || !k || !v) return std::nullopt;
  if (q->rank() != k->rank() || q->rank() != v->rank() || (q->rank() != 3 && q->rank() != 4))
    throw RuleError("Attention: Q, K and V must all be 3-D [B, L, heads*size] or all 4-D [B, heads, L, size]");
  AttentionGeom g;
  g.batch = q->dims[0];
  if (q->rank() == 3) {
    g.three_d = true;
    g.q_heads = a.i("q_num_heads", 0);
    g.kv_heads = a.i("kv_num_heads", 0);
    if (g.q_heads <= 0 || g.kv_heads <= 0)
      throw RuleError("Attention with 3-D inputs needs q_num_heads and kv_num_heads");
    g.q_len = q->dims[1];
    g.kv_len = k->dims[1];
    g.head = div_or_unknown(q->dims[2], g.q_heads);
    g.v_head = div_or_unknown(v->dims[2], g.kv_heads);
  } else {
    g.q_heads = q->dims[1];
    g.kv_heads = k->dims[1];
    g.q_len = q->dims[2];
    g.kv_len = k->dims[2];
    g.head = q->dims[3];
    g.v_head = v->dims[3];
  }
  if (g.q_heads > 0 && g.kv_heads > 0 && g.q_heads % g.kv_heads != 0)
    throw RuleError("Attention: q_num_heads must be a multiple of kv_num_heads");
  if (past) {
    if (past->rank() != 4) throw RuleError("Attention: past_key must be 4-D [B, kv_heads, past, size]");
    g.past = past->dims[2];
  }
  if (g.kv_len >= 0) g.kv_len = g.past >= 0 ? g.kv_len + g.past : -1;
  return g;
}

bool attention_infer(RuleContext& c) {
  const auto g = attention_geom(c.shape(0), c.shape(1), c.shape(2), c.shape(4), c.n.attrs);
  if (!g) return false;
  const int64_t v_hidden = g->v_head >= 0 ? g->q_heads * g->v_head : -1;
  c.out(0, g->three_d ? Shape{{g->batch, g->q_len, v_hidden}} : Shape{{g->batch, g->q_heads, g->q_len, g->v_head}});
  c.out(1, Shape{{g->batch, g->kv_heads, g->kv_len, g->head}});
  c.out(2, Shape{{g->batch, g->kv_heads, g->kv_len, g->v_head}});
  c.out(3, Shape{{g->batch, g->q_heads, g->q_len, g->kv_len}});
  return true;
}

// Per query head: S = Q K^T (L*T*E MACs), scale (L*T), optional softcap (3 per score: divide, tanh, multiply),
// an additive mask when given (L*T; a causal mask is a selection, 0 FLOPs), softmax over T (5T-2 per row, as the
// Softmax op), Y = P V (L*T*Ev MACs). GQA shares each K/V head among q_heads/kv_heads query heads: the work
// follows the query heads. Backward: dP = dY V^T and dV = P^T dY (2 L T Ev each), softmax backward (4T-1 per
// row), the scale (L*T), dQ = dS K and dK = dS^T Q (2 L T E each); dP, softmax, scale and dQ go to Q.
bool attention_cost(const CostContext& c, Cost& cost, std::string& reason) {
  if (c.n.inputs.size() < 3 || c.n.inputs[0] < 0 || c.n.inputs[1] < 0 || c.n.inputs[2] < 0) {
    reason = "Attention needs Q, K and V";
    return false;
  }
  const Shape* past = c.n.inputs.size() > 4 && c.n.inputs[4] >= 0 ? &c.in_shape(4) : nullptr;
  const auto g = attention_geom(&c.in_shape(0), &c.in_shape(1), &c.in_shape(2), past, c.n.attrs);
  if (!g || g->head < 0 || g->v_head < 0) {
    reason = "Attention: head sizes do not divide the hidden sizes";
    return false;
  }
  const Count rows = Count{g->batch} * g->q_heads * g->q_len, T = g->kv_len, scores = rows * T;
  const Count qk = scores * g->head, sv = scores * g->v_head;
  const bool mask = c.n.inputs.size() > 3 && c.n.inputs[3] >= 0;
  const bool softcap = c.n.attrs.f("softcap", 0.0) > 0;
  cost.macs = qk + sv;
  cost.flops = 2 * (qk + sv) + scores * (1 + (mask ? 1 : 0) + (softcap ? 3 : 0)) + (T > 0 ? rows * (5 * T - 2) : 0);
  c.add_grad(c.n.inputs[0], 2 * sv + (T > 0 ? rows * (4 * T - 1) : 0) + scores + 2 * qk, cost);
  c.add_grad(c.n.inputs[1], 2 * qk, cost);
  c.add_grad(c.n.inputs[2], 2 * sv, cost);
  return true;
}

/// Positions of X, cos_cache, sin_cache and position_ids: ONNX (X, cos, sin, ids) or com.microsoft (X, ids,
/// cos, sin).
struct RotaryInputs {
  int cos, sin, ids;
};
RotaryInputs rotary_inputs(const Node& n) {
  return n.op == OpKind::MsRotaryEmbedding ? RotaryInputs{2, 3, 1} : RotaryInputs{1, 2, 3};
}

bool rotary_infer(RuleContext& c) { return same_as_input(c); }

/// Head size and rotated dims of a RotaryEmbedding's input: the cache's last dim is half the rotated dims.
// Per rotated element: x * cos + rotate_half(x) * sin = 2 multiplies + 1 add = 3 FLOPs; dims beyond
// rotary_embedding_dim pass through. Backward to X: the same 3 FLOPs per rotated element.
bool rotary_cost(const CostContext& c, Cost& cost, std::string& reason) {
  const RotaryInputs r = rotary_inputs(c.n);
  const Shape& x = c.in_shape(0);
  int64_t head = 0;
  if (x.rank() == 4) head = x.dims[3];
  else if (const int64_t h = c.n.attrs.i("num_heads", 0); h > 0 && x.rank() == 3) head = div_or_unknown(x.dims[2], h);
  int64_t rotated = c.n.attrs.i("rotary_embedding_dim", 0);
  if (rotated <= 0 && static_cast<int>(c.n.inputs.size()) > r.cos && c.n.inputs[r.cos] >= 0) {
    const Shape& cache = c.in_shape(r.cos);
    if (cache.rank() >= 1) rotated = 2 * cache.dims.back();
  }
  if (head <= 0 || rotated <= 0 || rotated > head) {
    reason = "RotaryEmbedding: cannot tell the head size (3-D input without num_heads) or the rotated dims";
    return false;
  }
  const Count elems = c.out_elems() / head * rotated;
  cost.flops = 3 * elems;
  c.add_grad(c.n.inputs[0], 3 * elems, cost);
  return true;
}

}  // namespace

const OpRule rule_attention{attention_infer, attention_cost};
const OpRule rule_rotary{rotary_infer, rotary_cost};

}  // namespace ridge::ops
