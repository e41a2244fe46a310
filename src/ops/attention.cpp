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
  const int64_t k_head = q->rank() == 3 ? div_or_unknown(k->dims[2], g.kv_heads) : k->dims[3];
  if (g.head >= 0 && k_head >= 0 && g.head != k_head)
    throw RuleError(fmt::format("Attention: Q {} and K {} differ in head size ({} and {})", to_string(*q),
                                to_string(*k), g.head, k_head));
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

/// Extra per-score work of an attention core: additive masks/biases (1 FLOP per score each; a causal mask is a
/// selection, 0 FLOPs) and a softcap (3: divide, tanh, multiply).
struct ScoreTerms {
  int additive = 0;
  bool softcap = false;
};

/// The work of one attention core: forward MACs and FLOPs, and the backward FLOPs that reach Q, K and V.
struct CoreWork {
  Count macs = 0, flops = 0, to_q = 0, to_k = 0, to_v = 0;
  Count backward() const { return to_q + to_k + to_v; }
};

// Per query head: S = Q K^T (L*T*E MACs), scale (L*T), the score terms, softmax over T (5T-2 per row, as the
// Softmax op), Y = P V (L*T*Ev MACs). GQA shares each K/V head among q_heads/kv_heads query heads: the work
// follows the query heads. Backward: dP = dY V^T and dV = P^T dY (2 L T Ev each), softmax backward (4T-1 per
// row), the scale (L*T), dQ = dS K and dK = dS^T Q (2 L T E each); dP, softmax, scale and dQ go to Q.
CoreWork core_work(const AttentionGeom& g, ScoreTerms terms) {
  const Count rows = Count{g.batch} * g.q_heads * g.q_len, T = g.kv_len, scores = rows * T;
  const Count qk = scores * g.head, sv = scores * g.v_head;
  CoreWork w;
  w.macs = qk + sv;
  w.flops = 2 * (qk + sv) + scores * (1 + terms.additive + (terms.softcap ? 3 : 0)) + (T > 0 ? rows * (5 * T - 2) : 0);
  w.to_q = 2 * sv + (T > 0 ? rows * (4 * T - 1) : 0) + scores + 2 * qk;
  w.to_k = 2 * qk;
  w.to_v = 2 * sv;
  return w;
}

/// Adds a core's work to `cost`, its backward to the values `q`, `k` and `v` (the same value for packed inputs).
void core_cost(const CostContext& c, const AttentionGeom& g, ScoreTerms terms, int q, int k, int v, Cost& cost) {
  const CoreWork w = core_work(g, terms);
  cost.macs += w.macs;
  cost.flops += w.flops;
  c.add_grad(q, w.to_q, cost);
  c.add_grad(k, w.to_k, cost);
  c.add_grad(v, w.to_v, cost);
}

int input_or_none(const Node& n, int i) { return i < static_cast<int>(n.inputs.size()) ? n.inputs[i] : -1; }
bool has_input(const Node& n, int i) { return input_or_none(n, i) >= 0; }

bool attention_cost(const CostContext& c, Cost& cost, std::string& reason) {
  if (!has_input(c.n, 0) || !has_input(c.n, 1) || !has_input(c.n, 2)) {
    reason = "Attention needs Q, K and V";
    return false;
  }
  const Shape* past = has_input(c.n, 4) ? &c.in_shape(4) : nullptr;
  const auto g = attention_geom(&c.in_shape(0), &c.in_shape(1), &c.in_shape(2), past, c.n.attrs);
  if (!g || g->head < 0 || g->v_head < 0) {
    reason = "Attention: head sizes do not divide the hidden sizes";
    return false;
  }
  core_cost(c, *g, {has_input(c.n, 3) ? 1 : 0, c.n.attrs.f("softcap", 0.0) > 0}, c.n.inputs[0], c.n.inputs[1],
            c.n.inputs[2], cost);
  return true;
}

// ---- com.microsoft Attention, MultiHeadAttention, GroupQueryAttention (ONNX Runtime contrib ops) -------------

int64_t num_heads(const Node& n) {
  const int64_t h = n.attrs.i("num_heads", 0);
  if (h <= 0) throw RuleError(fmt::format("{} needs a positive num_heads", n.op_type.empty() ? "attention" : n.op_type));
  return h;
}
int64_t dim_or_unknown(const Shape* s, int i) { return s && s->rank() > i ? s->dims[i] : -1; }

/// com.microsoft.Attention: input [B, S, D_in] times weights [D_in, Dq + Dk + Dv] (+ bias) gives Q, K, V; past
/// [2, B, heads, P, head] is prepended to K and V. Hidden sizes from qkv_hidden_sizes, else three equal thirds.
struct PackedAttention {
  AttentionGeom g;
  int64_t in = -1, dq = -1, dk = -1, dv = -1;
};
std::optional<PackedAttention> packed_attention(const Node& n, const Shape* x, const Shape* w, const Shape* past) {
  if (!x || !w) return std::nullopt;
  if (x->rank() != 3) throw RuleError("com.microsoft.Attention: input must be 3-D [batch, sequence, hidden]");
  if (w->rank() != 2) throw RuleError("com.microsoft.Attention: weights must be 2-D [input_hidden, 3 * hidden]");
  PackedAttention p;
  p.in = x->dims[2];
  const std::vector<int64_t> sizes = n.attrs.ints("qkv_hidden_sizes");
  if (sizes.size() == 3) {
    p.dq = sizes[0], p.dk = sizes[1], p.dv = sizes[2];
  } else if (!sizes.empty()) {
    throw RuleError("com.microsoft.Attention: qkv_hidden_sizes must have 3 values");
  } else {
    p.dq = p.dk = p.dv = div_or_unknown(w->dims[1], 3);
  }
  AttentionGeom& g = p.g;
  g.batch = x->dims[0];
  g.q_heads = g.kv_heads = num_heads(n);
  g.q_len = x->dims[1];
  g.head = div_or_unknown(p.dq, g.q_heads);
  g.v_head = div_or_unknown(p.dv, g.q_heads);
  g.past = past ? dim_or_unknown(past, 3) : 0;
  g.kv_len = g.q_len >= 0 && g.past >= 0 ? g.q_len + g.past : -1;
  g.three_d = true;
  return p;
}

bool ms_attention_infer(RuleContext& c) {
  const auto p = packed_attention(c.n, c.shape(0), c.shape(1), c.present(4) ? c.shape(4) : nullptr);
  if (!p) return false;
  const AttentionGeom& g = p->g;
  c.out(0, Shape{{g.batch, g.q_len, p->dv}});
  if (c.outputs() > 1) c.out(1, Shape{{2, g.batch, g.q_heads, g.kv_len, g.head}});
  return true;
}

// The Q/K/V projection (B·S·D_in·(Dq+Dk+Dv) MACs, plus the bias per output element) and the attention core with
// mask_index and attention_bias as additive terms. Backward: the projection like Gemm (2·MACs to the input and to
// the weights, B·S·(Dq+Dk+Dv) to the bias); the core's backward goes to the input (the projected Q/K/V are
// internal).
bool ms_attention_cost(const CostContext& c, Cost& cost, std::string& reason) {
  const auto p = packed_attention(c.n, &c.in_shape(0), &c.in_shape(1), has_input(c.n, 4) ? &c.in_shape(4) : nullptr);
  if (!p || p->g.head < 0 || p->g.v_head < 0 || p->dk != p->dq) {
    reason = "com.microsoft.Attention: hidden sizes do not split into num_heads heads (or Q and K sizes differ)";
    return false;
  }
  const Count tokens = Count{p->g.batch} * p->g.q_len, width = Count{p->dq} + p->dk + p->dv;
  const Count proj = tokens * p->in * width;
  const bool bias = has_input(c.n, 2);
  cost.macs = proj;
  cost.flops = 2 * proj + (bias ? tokens * width : 0);
  c.add_grad(c.n.inputs[0], 2 * proj, cost);
  c.add_grad(c.n.inputs[1], 2 * proj, cost);
  if (bias) c.add_grad(c.n.inputs[2], tokens * width, cost);
  const bool any_grad = c.needs_grad(c.n.inputs[0]) || c.needs_grad(c.n.inputs[1]) || (bias && c.needs_grad(c.n.inputs[2]));
  const CoreWork core = core_work(p->g, {int(has_input(c.n, 3)) + int(has_input(c.n, 5))});
  cost.macs += core.macs;
  cost.flops += core.flops;
  if (any_grad) cost.bwd_input_flops += core.backward();
  return true;
}

/// com.microsoft.MultiHeadAttention: query [B, S, D] with key/value [B, L, D] (or already split [B, heads, L,
/// head]), packed QKV query [B, S, heads, 3, head] or packed KV key [B, L, heads, 2, head]; past_key [B, heads, P,
/// head] is prepended to 3-D keys.
struct MhaLayout {
  AttentionGeom g;
  bool packed_qkv = false, packed_kv = false;
};
std::optional<MhaLayout> mha_layout(const Node& n, const Shape* q, const Shape* k, const Shape* v, const Shape* past) {
  if (!q) return std::nullopt;
  MhaLayout m;
  AttentionGeom& g = m.g;
  g.q_heads = g.kv_heads = num_heads(n);
  g.batch = q->dims[0];
  g.three_d = true;
  if (q->rank() == 5) {
    m.packed_qkv = true;
    g.q_len = g.kv_len = q->dims[1];
    g.head = g.v_head = q->dims[4];
    return m;
  }
  if (q->rank() != 3) throw RuleError("com.microsoft.MultiHeadAttention: query must be 3-D or packed 5-D");
  if (!k) return std::nullopt;
  g.q_len = q->dims[1];
  g.head = div_or_unknown(q->dims[2], g.q_heads);
  if (k->rank() == 5) {
    m.packed_kv = true;
    g.kv_len = k->dims[1];
    g.v_head = k->dims[4];
  } else if (k->rank() == 4) {
    if (!v) return std::nullopt;
    g.kv_len = k->dims[2];
    g.v_head = dim_or_unknown(v, 3);
  } else if (k->rank() == 3) {
    if (!v) return std::nullopt;
    g.kv_len = k->dims[1];
    g.v_head = div_or_unknown(dim_or_unknown(v, 2), g.q_heads);
    g.past = past ? dim_or_unknown(past, 2) : 0;
    if (g.kv_len >= 0) g.kv_len = g.past >= 0 ? g.kv_len + g.past : -1;
  } else {
    throw RuleError("com.microsoft.MultiHeadAttention: key must be 3-D, 4-D or packed 5-D");
  }
  return m;
}

bool mha_infer(RuleContext& c) {
  const auto m = mha_layout(c.n, c.shape(0), c.shape(1), c.shape(2), c.present(6) ? c.shape(6) : nullptr);
  if (!m) return false;
  const AttentionGeom& g = m->g;
  const int64_t v_hidden = g.v_head >= 0 ? g.q_heads * g.v_head : -1;
  c.out(0, Shape{{g.batch, g.q_len, v_hidden}});
  if (c.outputs() > 1) c.out(1, Shape{{g.batch, g.kv_heads, g.kv_len, g.head}});
  if (c.outputs() > 2) c.out(2, Shape{{g.batch, g.kv_heads, g.kv_len, g.v_head}});
  return true;
}

// The optional bias adds one FLOP per element of Q, K and V (B·S·D + B·L·(D + Dv); nothing is projected here),
// then the attention core with key_padding_mask and attention_bias as additive terms.
bool mha_cost(const CostContext& c, Cost& cost, std::string& reason) {
  const auto m = mha_layout(c.n, &c.in_shape(0), has_input(c.n, 1) ? &c.in_shape(1) : nullptr,
                            has_input(c.n, 2) ? &c.in_shape(2) : nullptr, has_input(c.n, 6) ? &c.in_shape(6) : nullptr);
  if (!m || m->g.head < 0 || m->g.v_head < 0 || m->g.kv_len < 0) {
    reason = "com.microsoft.MultiHeadAttention: cannot tell the heads, head sizes or key length from the shapes";
    return false;
  }
  const AttentionGeom& g = m->g;
  if (has_input(c.n, 3)) {
    const Count heads = g.q_heads, new_kv = c.in_shape(m->packed_qkv ? 0 : 1).dims[1];
    const Count bias = Count{g.batch} * (Count{g.q_len} * heads * g.head + new_kv * heads * (g.head + g.v_head));
    cost.flops += bias;
    c.add_grad(c.n.inputs[3], bias, cost);
  }
  const int q = c.n.inputs[0];
  const int k = m->packed_qkv ? q : c.n.inputs[1];
  const int v = m->packed_qkv ? q : m->packed_kv ? k : c.n.inputs[2];
  core_cost(c, g, {int(has_input(c.n, 4)) + int(has_input(c.n, 5))}, q, k, v, cost);
  return true;
}

/// com.microsoft.GroupQueryAttention: query [B, S, heads·head] with key/value [B, S, kv_heads·head] (or packed
/// QKV [B, S, (heads + 2·kv_heads)·head] with key absent), past_key [B, kv_heads, P, head]; the attention spans
/// total_sequence_length keys (when folded; else P + S).
struct GqaLayout {
  AttentionGeom g;
  int64_t present = -1;  ///< present_key's length: max(P, total) (a shared buffer keeps its size)
};
std::optional<GqaLayout> gqa_layout(const Node& n, const Shape* q, const Shape* k, const Shape* past,
                                    const std::vector<int64_t>* total) {
  if (!q) return std::nullopt;
  if (q->rank() != 3) throw RuleError("com.microsoft.GroupQueryAttention: query must be 3-D [batch, sequence, hidden]");
  GqaLayout l;
  AttentionGeom& g = l.g;
  g.q_heads = num_heads(n);
  g.kv_heads = n.attrs.i("kv_num_heads", 0);
  if (g.kv_heads <= 0 || g.q_heads % g.kv_heads != 0)
    throw RuleError("com.microsoft.GroupQueryAttention: kv_num_heads must be positive and divide num_heads");
  g.batch = q->dims[0];
  g.q_len = q->dims[1];
  g.three_d = true;
  g.head = g.v_head = div_or_unknown(q->dims[2], k ? g.q_heads : g.q_heads + 2 * g.kv_heads);
  g.past = past ? dim_or_unknown(past, 2) : 0;
  if (total && total->size() == 1) g.kv_len = (*total)[0];
  else g.kv_len = g.q_len >= 0 && g.past >= 0 ? g.q_len + g.past : -1;
  l.present = g.kv_len >= 0 && g.past >= 0 ? std::max(g.kv_len, g.past) : -1;
  return l;
}

const std::vector<int64_t>* int_payload(const Graph& g, const Node& n, int i) {
  return has_input(n, i) && g.value(n.inputs[i]).has_int_data ? &g.value(n.inputs[i]).int_data : nullptr;
}

bool gqa_infer(RuleContext& c) {
  const auto l = gqa_layout(c.n, c.shape(0), c.present(1) ? c.shape(1) : nullptr, c.present(3) ? c.shape(3) : nullptr,
                            c.ints(6));
  if (!l) return false;
  const AttentionGeom& g = l->g;
  c.out(0, Shape{{g.batch, g.q_len, g.head >= 0 ? g.q_heads * g.head : -1}});
  for (int k = 1; k < 3 && k < c.outputs(); ++k) c.out(k, Shape{{g.batch, g.kv_heads, l->present, g.head}});
  return true;
}

// do_rotary rotates Q and K first (3 FLOPs per rotated element, as RotaryEmbedding; the rotated dims are twice
// cos_cache's last dim), softcap adds 3 per score, attention_bias 1 per score; the causal and local-window masks
// are selections (0 FLOPs, every score counted, as for ONNX Attention).
bool gqa_cost(const CostContext& c, Cost& cost, std::string& reason) {
  const bool packed = !has_input(c.n, 1);
  const auto l = gqa_layout(c.n, &c.in_shape(0), packed ? nullptr : &c.in_shape(1),
                            has_input(c.n, 3) ? &c.in_shape(3) : nullptr, int_payload(c.g, c.n, 6));
  if (!l || l->g.head < 0 || l->g.kv_len < 0) {
    reason = "com.microsoft.GroupQueryAttention: head size or total sequence length unknown";
    return false;
  }
  const AttentionGeom& g = l->g;
  const int q = c.n.inputs[0], k = packed ? q : c.n.inputs[1], v = packed ? q : input_or_none(c.n, 2);
  if (c.n.attrs.i("do_rotary", 0) != 0) {
    const int64_t rotated = has_input(c.n, 7) && c.in_shape(7).rank() >= 1 ? 2 * c.in_shape(7).dims.back() : g.head;
    const Count tokens = Count{g.batch} * g.q_len;
    cost.flops += 3 * tokens * g.q_heads * rotated + 3 * tokens * g.kv_heads * rotated;
    c.add_grad(q, 3 * tokens * g.q_heads * rotated, cost);
    c.add_grad(k, 3 * tokens * g.kv_heads * rotated, cost);
  }
  core_cost(c, g, {int(has_input(c.n, 10)), c.n.attrs.f("softcap", 0.0) > 0}, q, k, v, cost);
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
const OpRule rule_ms_attention{ms_attention_infer, ms_attention_cost};
const OpRule rule_ms_multi_head_attention{mha_infer, mha_cost};
const OpRule rule_ms_group_query_attention{gqa_infer, gqa_cost};

}  // namespace ridge::ops
