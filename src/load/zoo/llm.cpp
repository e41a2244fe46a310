// Decoder-only LLMs from an LlmConfig, op for op as the Hugging Face PyTorch modules compute them (eager
// attention): RMSNorm, rotary embedding, grouped-query attention, SwiGLU/GeGLU or plain MLP, MoE blocks.
// docs/llm.md lists each block's op sequence and the choices made where HF's ops have no ridge op.
#include <fmt/format.h>

#include <optional>

#include "load/zoo/builder.hpp"
#include "load/zoo/models.hpp"
#include "ridge/error.hpp"
#include "ridge/llm.hpp"

namespace ridge::zoo {

namespace {

struct Ctx {
  Builder& b;
  const LlmConfig& c;
  const LlmShape& s;
  int64_t kv_len;       ///< positions attended to (cache length in serving graphs)
  int cos = -1, sin = -1, mask = -1;
  std::vector<int> present;  ///< new key/value states (graph outputs of serving graphs)
  /// Values HF computes in float32 (RMSNorm's upcast intermediates with LlmShape::eager_copies): the builder gives an
  /// op its input's type, so build() sets theirs on the finished graph.
  std::vector<int> fp32 = {};
  std::string type(const char* suffix) const { return c.module_prefix + suffix; }
};

// HF module names of families the older families' conditionals below do not cover (gptj, codegen, gpt_bigcode,
// starcoder2); module_names() is nullptr for the others.
struct ModuleNames {
  const char* family;
  const char *attn, *qkv, *out, *up, *down, *norm1, *norm2, *block;
};
constexpr ModuleNames kModuleNames[] = {
    {"gptj", "attn", "qkv_proj", "out_proj", "fc_in", "fc_out", "ln_1", "ln_2", "Block"},
    {"codegen", "attn", "qkv_proj", "out_proj", "fc_in", "fc_out", "ln_1", "ln_2", "Block"},
    {"gpt_bigcode", "attn", "c_attn", "c_proj", "c_fc", "c_proj", "ln_1", "ln_2", "Block"},
    {"starcoder2", "self_attn", "qkv_proj", "o_proj", "c_fc", "c_proj", "input_layernorm", "post_attention_layernorm",
     "DecoderLayer"},
    {"arcee", "self_attn", "qkv_proj", "o_proj", "up_proj", "down_proj", "input_layernorm", "post_attention_layernorm",
     "DecoderLayer"},
    {"nemotron_h", "mixer", "qkv_proj", "o_proj", "up_proj", "down_proj", "norm", "norm", "Block"},
    {"jamba", "self_attn", "qkv_proj", "o_proj", "up_proj", "down_proj", "input_layernorm", "pre_ff_layernorm",
     "DecoderLayer"},
};
const ModuleNames* module_names(const std::string& family) {
  for (const auto& m : kModuleNames)
    if (family == m.family) return &m;
  return nullptr;
}

// GPTBigCode's multi-query attention multiplies the queries of all heads by the one shared key (a view of
// [B, T x H, hd]): no repeat_kv copies, in the eager forward as in serving graphs.
bool broadcast_kv(const LlmConfig& c) { return c.family == "gpt_bigcode"; }

// Granite's scalar multipliers as GraniteModel applies them (each a Mul, or the logits' Div, even at 1.0):
// embeddings x embedding_multiplier, each residual branch x residual_multiplier, logits / logits_scaling
// (attention_multiplier is the attention's scaling: no op of its own).
bool granite(const LlmConfig& c) { return c.family == "granite" || c.family == "granitemoehybrid"; }
int residual_branch(Ctx& x, int t) {
  if (!granite(x.c)) return t;
  return x.b.binary(OpKind::Mul, t, x.b.constant("residual_multiplier", Shape{}, x.s.dtype), "mul_residual_multiplier");
}

// LlamaRMSNorm.forward: x.pow(2).mean(-1, keepdim) + eps -> rsqrt -> x * r -> weight * x (Gemma: (1 + weight));
// without `weight`, Llama4TextL2Norm: the same up to x * r.
// LayerNorm configs use the LayerNorm module. With LlmShape::eager_copies (and 16-bit activations) the float32 upcast
// is two ops of its own, as HF runs it: x.to(float32) (`to_float32`), pow, mean, add, rsqrt and x * r in float32, then
// .to(input_dtype) (`to_input_dtype`) before the weight (Gemma's norm, which multiplies in float32, stays as it is).
int norm(Ctx& x, int h, const std::string& name, bool weight = true) {
  Builder& b = x.b;
  if (x.c.norm == LlmNorm::LayerNorm) {
    if (!x.c.norm_scale && x.c.norm_bias) throw Error(fmt::format("{}: a LayerNorm with a bias but no weight is not supported", name));
    // OLMo's LayerNorm has neither weight nor bias; Cohere's a weight only (6E + 2R: docs/counting.md)
    return b.layernorm(h, name, x.c.norm_scale, x.c.norm_bias);
  }
  auto scope = b.module(name, x.type(weight ? "RMSNorm" : "L2Norm"));
  const DType dt = DType::F32;  // HF upcasts to float32 here; the casts are ops only with eager_copies
  const bool gemma = x.c.family.rfind("gemma", 0) == 0;
  const bool upcast = x.s.eager_copies && !gemma && x.s.dtype != DType::F32;
  const int in = h;
  if (upcast) h = b.unary(OpKind::Cast, h, "to_float32", Attrs{}.set("to", onnx_type_of(DType::F32)));
  int sq = b.binary(OpKind::Pow, h, b.constant("two", Shape{}, dt), "pow");
  const int mean = b.reduce_mean(sq, {-1}, true, "mean");
  const int var = b.binary(OpKind::Add, mean, b.constant("variance_epsilon", Shape{}, dt), "add");
  const int sd = b.unary(OpKind::Sqrt, var, "sqrt");
  int r = b.unary(OpKind::Reciprocal, sd, "rsqrt");
  int y = b.binary(OpKind::Mul, h, r, "mul");
  // Olmo2RMSNorm multiplies by the weight in float32 and casts after; the others cast, then multiply.
  const bool weight_in_fp32 = x.c.family == "olmo2" || x.c.family == "olmo3";
  if (upcast && !weight_in_fp32) {
    for (int v : {h, sq, mean, var, sd, r, y}) x.fp32.push_back(v);
    y = b.unary(OpKind::Cast, y, "to_input_dtype", Attrs{}.set("to", onnx_type_of(x.s.dtype)));
  }
  if (!weight) return y;
  int w = b.param("weight", Shape{{b.shape(in)[-1]}});
  if (gemma) w = b.binary(OpKind::Add, b.constant("one", Shape{}, dt), w, "add");
  int out = b.binary(OpKind::Mul, y, w, "mul");
  if (upcast && weight_in_fp32) {
    for (int v : {h, sq, mean, var, sd, r, y, out}) x.fp32.push_back(v);
    out = b.unary(OpKind::Cast, out, "to_input_dtype", Attrs{}.set("to", onnx_type_of(x.s.dtype)));
  }
  return out;
}

// apply_rotary_pos_emb on [B, heads, T, hd]: x * cos + rotate_half(x) * sin, rotate_half = cat(-x2, x1);
// partial rotary (phi, neox) rotates the first `rot` dims and concatenates the rest back.
int rotary(Ctx& x, int t) {
  Builder& b = x.b;
  const int64_t hd = b.shape(t)[-1], rot = x.c.rotary_dim();
  int r = rot < hd ? b.slice(t, 3, 0, rot, "slice_rot") : t;
  int x1 = b.slice(r, 3, 0, rot / 2, "slice_x1");
  int x2 = b.slice(r, 3, rot / 2, rot, "slice_x2");
  int half = b.concat({b.unary(OpKind::Neg, x2, "neg"), x1}, 3, "cat_rotate_half");
  int out = b.binary(OpKind::Add, b.binary(OpKind::Mul, r, x.cos, "mul_cos"),
                     b.binary(OpKind::Mul, half, x.sin, "mul_sin"), "add");
  if (rot < hd) out = b.concat({out, b.slice(t, 3, rot, hd, "slice_pass")}, 3, "cat_pass");
  return out;
}

// [B, T, heads*hd] -> [B, heads, T, hd]
int heads_first(Builder& b, int t, int64_t heads, int64_t hd) {
  const Shape s = b.shape(t);
  return b.transpose(b.reshape(t, Shape{{s[0], s[1], heads, hd}}), {0, 2, 1, 3});
}

// Gemma 2's soft-cap: cap x tanh(t / cap), three elementwise ops named `name`_div, _tanh, _mul.
int softcap(Builder& b, int t, double cap, const std::string& name, DType dt) {
  if (cap <= 0) return t;
  const int c = b.constant(name + "_cap", Shape{}, dt);
  return b.binary(OpKind::Mul, b.unary(OpKind::Tanh, b.binary(OpKind::Div, t, c, name + "_div"), name + "_tanh"), c,
                  name + "_mul");
}

// Softmax over the scores' last axis; with attention sinks (gpt_oss) as transformers computes it: each head's learned
// sink logit joins the row (expand + cat), the row's max is subtracted, and the sink's column is dropped after.
int attention_softmax(Ctx& x, int scores) {
  Builder& b = x.b;
  if (!x.c.attention_sinks) return b.softmax(scores, -1);
  const Shape s = b.shape(scores);  // [B, H, T, S]
  int sinks = b.reshape(b.param("sinks", Shape{{x.c.num_heads}}), Shape{{1, s[1], 1, 1}}, "view_sinks");
  int all = b.concat({scores, b.expand(sinks, Shape{{s[0], s[1], s[2], 1}}, "sinks_expand")}, 3, "sinks_cat");
  all = b.binary(OpKind::Sub, all, b.reduce_max(all, {-1}, true, "sinks_max"), "sinks_sub");
  return b.slice(b.softmax(all, -1), 3, 0, s[3], "sinks_slice");
}

// Eager attention: QK^T * scaling (-> soft-cap) + causal mask -> softmax -> SV. HF's repeat_kv (expand + reshape, a copy of
// the key/value states per query group) is a Concat of the group's copies; serving graphs attend grouped
// heads to the shared cache directly ([B, kv, group*T, hd] x [B, kv, hd, S]), unless they hold HF's eager copies
// (LlmShape::eager_copies): then repeat_kv is HF's expand of the cache to every query head ([B, kv, group, S, d], an
// Expand `repeat_kv` that serve costs as the copy reshape makes of it) and the matmuls read the copies.
int attend(Ctx& x, int q, int k, int v) {
  Builder& b = x.b;
  const int64_t B = x.s.batch, T = x.s.tokens, H = x.c.num_heads, kv = x.c.num_kv_heads, hd = x.c.head_dim;
  const int64_t S = x.kv_len, rep = H / kv, vd = b.shape(v)[-1];  // value heads may be narrower (MLA)
  int scaling = b.constant("scaling", Shape{}, x.s.dtype);
  // ALiBi (bloom, falcon-rw): a per-head linear bias over the key positions, added to the scores.
  const bool alibi = x.c.position == LlmPosition::Alibi;
  auto biased = [&](int scores) {
    scores = softcap(b, scores, x.c.attn_softcap, "softcap", x.s.dtype);
    if (!alibi) return scores;
    return b.binary(OpKind::Add, scores, b.constant("alibi", Shape{{B, H, 1, S}}, x.s.dtype), "add_alibi");
  };
  if ((x.s.serving && !x.s.eager_copies) || broadcast_kv(x.c)) {
    q = b.reshape(q, Shape{{B, kv, rep * T, hd}});
    int sc = b.matmul(q, b.transpose(k, {0, 1, 3, 2}), "matmul");
    sc = biased(b.reshape(b.binary(OpKind::Mul, sc, scaling, "mul"), Shape{{B, H, T, S}}));
    sc = attention_softmax(x, b.binary(OpKind::Add, sc, x.mask, "add_mask"));
    int o = b.matmul(b.reshape(sc, Shape{{B, kv, rep * T, S}}), v, "matmul");
    return b.reshape(o, Shape{{B, H, T, vd}});
  }
  if (rep > 1) {
    for (int* t : {&k, &v}) {
      const int64_t d = b.shape(*t)[-1];
      int t5 = b.reshape(*t, Shape{{B, kv, 1, S, d}});
      t5 = x.s.serving ? b.expand(t5, Shape{{B, kv, rep, S, d}}, "repeat_kv")
                       : b.concat(std::vector<int>(static_cast<size_t>(rep), t5), 2, "repeat_kv");
      *t = b.reshape(t5, Shape{{B, H, S, d}});
    }
  }
  int sc = biased(b.binary(OpKind::Mul, b.matmul(q, b.transpose(k, {0, 1, 3, 2}), "matmul"), scaling, "mul"));
  sc = attention_softmax(x, b.binary(OpKind::Add, sc, x.mask, "add_mask"));
  return b.matmul(sc, v, "matmul");
}

// In a serving graph the attended keys/values are the cache (an input holding past and new positions); the
// new states are written to it (graph outputs, "present"). With HF's eager copies (LlmShape::eager_copies, `grow`) the
// cache grows as DynamicCache.update grows it: torch.cat of the past positions (the input, kv_len - T of them) and
// the new ones (`cat_key_cache` / `cat_value_cache`), whose output, the whole cache, is attended to and written.
int cached(Ctx& x, int fresh, const std::string& name, const char* what, bool grow = true) {
  if (!x.s.serving) return fresh;
  const Shape f = x.b.shape(fresh);  // [B, heads, T, d]: key/value heads, or 1 for an MLA latent
  if (x.s.eager_copies && grow) {
    const int past = x.b.input(name, Shape{{x.s.batch, f[1], x.kv_len - f[2], f[-1]}}, x.s.dtype);
    const int all = x.b.concat({past, fresh}, 2, fmt::format("cat_{}_cache", what));
    x.present.push_back(all);
    return all;
  }
  x.present.push_back(fresh);
  return x.b.input(name, Shape{{x.s.batch, f[1], x.kv_len, f[-1]}}, x.s.dtype);
}

// MLA over a latent cache (LlmShape::latent_kv), from the queries' nope/rope parts and the new positions' latent and
// rotary key part: the cache input holds kv_lora_rank + qk_rope_head_dim values per position (the new ones written).
// One-token steps attend in the latent with kv_b_proj split per head into W_UK (absorbed into the query) and W_UV
// (applied to the latent output), as vLLM's and SGLang's MLA decode kernels do; longer steps (prompts, from an empty
// cache) decompress the new latent through kv_b_proj as HF does. Named like attend()'s ops so fused attention applies.
int latent_cache_attention(Ctx& x, const std::vector<int>& q_parts, const std::vector<int>& latent, int64_t layer) {
  Builder& b = x.b;
  const LlmConfig& c = x.c;
  const int64_t B = x.s.batch, T = x.s.tokens, H = c.num_heads, dq = c.head_dim, dr = c.qk_rope_head_dim;
  const int64_t dn = dq - dr, dv = c.value_dim(), L = c.kv_lora_rank, S = x.kv_len;
  if (T > 1 && x.s.past > 0)
    throw Error(fmt::format("{}: a latent KV cache is modelled for one-token steps and prompts from an empty cache, "
                            "not {} tokens after {}", c.name, T, x.s.past));
  int c_kv = norm(x, latent[0], "kv_a_layernorm");                                  // [B, T, L]
  int k_rot = rotary(x, b.reshape(latent[1], Shape{{B, 1, T, dr}}));                // [B, 1, T, dr]
  int entry = b.concat({b.reshape(c_kv, Shape{{B, 1, T, L}}), k_rot}, 3, "cat_latent");  // [B, 1, T, L + dr]
  int q_rot = rotary(x, q_parts[1]);                                                 // [B, H, T, dr]
  if (T > 1) {  // a prompt: its latent is written; keys and values decompressed from it (S == T)
    x.present.push_back(entry);
    int kv = b.linear(c_kv, "kv_b_proj", H * (dn + dv), false);
    const auto kv_parts = b.split(heads_first(b, kv, H, dn + dv), 3, {dn, dv});
    int key = b.concat({kv_parts[0], b.expand(k_rot, Shape{{B, H, T, dr}})}, 3);
    int query = b.concat({q_parts[0], q_rot}, 3);
    return attend(x, query, key, kv_parts[1]);
  }
  // One token: q_nope (per head) x W_UK -> the latent query; scores against the whole cache entry; the output in the
  // latent, then x W_UV per head. W_UK and W_UV together are kv_b_proj's weight.
  int cache = cached(x, entry, fmt::format("past_key_values.{}.latent", layer), "latent", false);  // [B, 1, S, L + dr]
  int scaling = b.constant("scaling", Shape{}, x.s.dtype);
  int w_uk = b.reshape(b.param("kv_b_proj.w_uk", Shape{{H * dn, L}}), Shape{{H, dn, L}});
  int w_uv = b.reshape(b.param("kv_b_proj.w_uv", Shape{{H * L, dv}}), Shape{{H, L, dv}});
  int q_latent = b.matmul(q_parts[0], w_uk, "absorb_uk");                           // [B, H, 1, L]
  int query = b.concat({q_latent, q_rot}, 3);                                        // [B, H, 1, L + dr]
  int sc = b.binary(OpKind::Mul, b.matmul(query, b.transpose(cache, {0, 1, 3, 2}), "matmul"), scaling, "mul");
  sc = b.softmax(b.binary(OpKind::Add, sc, x.mask, "add_mask"), -1);                // [B, H, 1, S]
  int o_latent = b.matmul(sc, b.slice(cache, 3, 0, L, "slice_latent"), "matmul");   // [B, H, 1, L]
  RIDGE_ASSERT(b.shape(sc)[-1] == S, "latent scores span the cache");
  return b.matmul(o_latent, w_uv, "absorb_uv");                                      // [B, H, 1, dv]
}

// DeepSeek Sparse Attention's lightning indexer (transformers' GlmMoeDsaIndexer; DeepSeek-V3.2's Indexer): index_heads
// queries of index_head_dim from the query latent `q_resid` (wq_b), one key from the hidden state (wk, then a
// LayerNorm), rotary on the first qk_rope_head_dim dims of both, the key cached per position (`index_key`); each
// head's scores q.k (through a ReLU for DeepSeek) weighted by weights_proj(h) and summed over the heads, masked, and
// the top min(index_topk, positions) kept. Returns the attention mask with every other position at -inf (HF's
// index_mask scattered, added to the causal mask): what a sparse kernel (FlashMLA's) reads as indices instead.
int sparse_attention_mask(Ctx& x, int h, int q_resid, int64_t layer) {
  Builder& b = x.b;
  const LlmConfig& c = x.c;
  const int64_t B = x.s.batch, T = x.s.tokens, IH = c.index_heads, ID = c.index_head_dim, S = x.kv_len;
  const bool glm = c.family == "glm_moe_dsa";  // the checkpoint's names; transformers' deepseek_v32 renames them
  const int64_t kept = std::min(c.index_topk, S);
  int indices;
  {
    auto scope = b.module("indexer", x.type("Indexer"));
    int q = rotary(x, heads_first(b, b.linear(q_resid, glm ? "wq_b" : "q_b_proj", IH * ID, false), IH, ID));
    int k = b.layernorm(b.linear(h, glm ? "wk" : "k_proj", ID, false), glm ? "k_norm" : "k_layernorm");
    k = cached(x, rotary(x, b.reshape(k, Shape{{B, 1, T, ID}})), fmt::format("past_key_values.{}.index_key", layer),
               "index_key");                                                              // [B, 1, S, ID]
    int w = b.binary(OpKind::Mul, b.linear(h, "weights_proj", IH, false), b.constant("weights_scale", Shape{}, x.s.dtype),
                     "mul_scale");                                                        // n_heads^-0.5 softmax_scale
    w = b.reshape(b.transpose(w, {0, 2, 1}), Shape{{B, IH, T, 1}});
    int sc = b.matmul(q, b.transpose(k, {0, 1, 3, 2}), "matmul");                         // [B, IH, T, S]
    if (c.index_relu) sc = b.unary(OpKind::Relu, sc, "relu");
    sc = b.call(OpKind::ReduceSum, {b.binary(OpKind::Mul, sc, w, "mul")}, 1, "sum_heads",
                Attrs{}.set("axes", std::vector<int64_t>{1}).set("keepdims", int64_t{1}))[0];  // [B, 1, T, S]
    sc = b.binary(OpKind::Add, sc, x.mask, "add_mask");
    indices = b.call(OpKind::TopK, {sc}, 2, "topk", Attrs{}.set("axis", int64_t{-1}).set("k", kept))[1];
  }
  const int keep = b.call(OpKind::ScatterElements,
                          {b.constant("index_mask_fill", Shape{{B, 1, T, S}}, x.s.dtype), indices,
                           b.constant("index_mask_kept", Shape{{B, 1, T, kept}}, x.s.dtype)},
                          1, "index_mask", Attrs{}.set("axis", int64_t{-1}))[0];
  return b.binary(OpKind::Add, x.mask, keep, "add_index_mask");
}

// Multi-head latent attention as transformers' DeepseekV3Attention computes it (eager): queries through q_a_proj ->
// q_a_layernorm -> q_b_proj (or one q_proj), keys and values decompressed from the latent (kv_a_proj_with_mqa ->
// kv_a_layernorm -> kv_b_proj), the rotary part of the key shared by all heads (expand), and the cache holding the
// decompressed keys (head_dim) and values (v_head_dim) of every head.
int latent_attention(Ctx& x, int h, int64_t layer) {
  Builder& b = x.b;
  const LlmConfig& c = x.c;
  const int64_t B = x.s.batch, T = x.s.tokens, H = c.num_heads, dq = c.head_dim, dr = c.qk_rope_head_dim;
  const int64_t dn = dq - dr, dv = c.value_dim();
  auto scope = b.module("self_attn", x.type("Attention"));
  const int q_resid = c.q_lora_rank > 0 ? norm(x, b.linear(h, "q_a_proj", c.q_lora_rank, c.qkv_bias), "q_a_layernorm") : -1;
  int q = q_resid >= 0 ? b.linear(q_resid, "q_b_proj", H * dq, false) : b.linear(h, "q_proj", H * dq, c.qkv_bias);
  const auto q_parts = b.split(heads_first(b, q, H, dq), 3, {dn, dr});
  const auto latent = b.split(b.linear(h, "kv_a_proj_with_mqa", c.kv_lora_rank + dr, c.qkv_bias), 2, {c.kv_lora_rank, dr});
  // Sparse attention: this layer attends under the indexer's mask (the causal one, restored after).
  const int causal_mask = x.mask;
  if (c.dsa()) x.mask = sparse_attention_mask(x, h, q_resid, layer);
  int o;
  if (x.s.serving && x.s.latent_kv) {
    o = latent_cache_attention(x, q_parts, latent, layer);
  } else {
    int kv = b.linear(norm(x, latent[0], "kv_a_layernorm"), "kv_b_proj", H * (dn + dv), false);
    const auto kv_parts = b.split(heads_first(b, kv, H, dn + dv), 3, {dn, dv});
    int k_rot = rotary(x, b.reshape(latent[1], Shape{{B, 1, T, dr}}));
    k_rot = b.expand(k_rot, Shape{{B, H, T, dr}});
    int query = b.concat({q_parts[0], rotary(x, q_parts[1])}, 3);
    int key = b.concat({kv_parts[0], k_rot}, 3);
    const std::string cache = fmt::format("past_key_values.{}", layer);
    key = cached(x, key, cache + ".key", "key");
    int value = cached(x, kv_parts[1], cache + ".value", "value");
    o = attend(x, query, key, value);
  }
  x.mask = causal_mask;
  o = b.reshape(b.transpose(o, {0, 2, 1, 3}), Shape{{B, T, H * dv}});
  return b.linear(o, "o_proj", c.hidden_size, c.o_bias);
}

int self_attention(Ctx& x, int h, int64_t layer) {
  if (x.c.mla()) return latent_attention(x, h, layer);
  Builder& b = x.b;
  const LlmConfig& c = x.c;
  const int64_t H = c.num_heads, kv = c.num_kv_heads, hd = c.head_dim;
  const std::string& f = c.family;
  const ModuleNames* mn = module_names(f);
  auto scope = b.module(mn ? mn->attn : f == "gpt2"                      ? "attn"
                       : f == "gpt_neox"                 ? "attention"
                       : f == "falcon" || f == "bloom" ? "self_attention"
                                                         : "self_attn",
                        x.type("Attention"));
  int q, k, v, gate = -1;
  if (c.fused_qkv) {
    const char* nm = mn ? mn->qkv : c.family == "gpt2" ? "c_attn" : c.family == "phi3" ? "qkv_proj" : "query_key_value";
    int qkv = b.linear(h, nm, (H + 2 * kv) * hd, c.qkv_bias, c.family == "gpt2" ? "Conv1D" : "Linear");
    auto parts = b.split(qkv, 2, {H * hd, kv * hd, kv * hd});
    q = parts[0], k = parts[1], v = parts[2];
  } else {
    q = b.linear(h, "q_proj", (c.attn_output_gate ? 2 : 1) * H * hd, c.qkv_bias);
    if (c.attn_output_gate) {  // Qwen3NextAttention: each head's query and its gate, chunked from one q_proj row
      const int64_t B = x.s.batch, T = x.s.tokens;
      const auto parts = b.split(b.reshape(q, Shape{{B, T, H, 2 * hd}}), 3, {hd, hd}, "chunk");
      q = b.reshape(parts[0], Shape{{B, T, H * hd}});
      gate = b.reshape(parts[1], Shape{{B, T, H * hd}});
    }
    k = b.linear(h, "k_proj", kv * hd, c.qkv_bias);
    v = b.linear(h, "v_proj", kv * hd, c.qkv_bias);
    if (c.clip_qkv > 0) {  // OlmoAttention: q, k, v .clamp_(-clip_qkv, clip_qkv), one op each
      const Attrs clip = Attrs{}.set("min", -c.clip_qkv).set("max", c.clip_qkv);
      q = b.unary(OpKind::Clip, q, "clamp_q", clip), k = b.unary(OpKind::Clip, k, "clamp_k", clip);
      v = b.unary(OpKind::Clip, v, "clamp_v", clip);
    }
  }
  if (c.qk_norm == LlmConfig::QkNorm::Whole) {
    // OLMo 2, 3, OLMoE: q_norm / k_norm over the whole [B, T, heads x hd] projections
    q = norm(x, q, "q_norm");
    k = norm(x, k, "k_norm");
  } else if (c.qk_norm == LlmConfig::QkNorm::PerHead) {
    // Qwen3, Gemma 3: q_norm / k_norm on the [B, T, heads, hd] view, before the transpose
    const Shape s = b.shape(q);
    q = norm(x, b.reshape(q, Shape{{s[0], s[1], H, hd}}), "q_norm");
    k = norm(x, b.reshape(k, Shape{{s[0], s[1], kv, hd}}), "k_norm");
  }
  q = heads_first(b, q, H, hd), k = heads_first(b, k, kv, hd), v = heads_first(b, v, kv, hd);
  if (c.rotary_in(layer)) {
    q = rotary(x, q), k = rotary(x, k);
    if (c.qk_norm == LlmConfig::QkNorm::L2PerHead) q = norm(x, q, "qk_norm", false), k = norm(x, k, "qk_norm", false);
  } else if (c.attn_temperature_tuning) {
    // Llama4TextAttention on NoPE layers: q x (log1p(floor((position + 1) / floor_scale)) x attn_scale + 1), one
    // multiply per query element (the T scales themselves are not counted)
    q = b.binary(OpKind::Mul, q, b.constant("attn_scales", Shape{{1, 1, x.s.tokens, 1}}, x.s.dtype), "mul_attn_scales");
  }
  const std::string cache = fmt::format("past_key_values.{}", layer);
  k = cached(x, k, cache + ".key", "key");
  v = cached(x, v, cache + ".value", "value");
  int o = attend(x, q, k, v);
  o = b.reshape(b.transpose(o, {0, 2, 1, 3}), Shape{{x.s.batch, x.s.tokens, H * hd}});
  if (gate >= 0) o = b.binary(OpKind::Mul, o, b.unary(OpKind::Sigmoid, gate, "sigmoid"), "mul_gate");
  const char* out_name = mn ? mn->out : f == "gpt2"                                        ? "c_proj"
                         : f == "gpt_neox" || f == "falcon" || f == "phi" || f == "bloom" ? "dense"
                         : f == "opt"                                     ? "out_proj"
                                                                          : "o_proj";
  return b.linear(o, out_name, c.hidden_size, c.o_bias, c.family == "gpt2" ? "Conv1D" : "Linear");
}

int activation(Ctx& x, int t, const std::string& name) {
  const std::string& a = x.c.activation;
  if (a == "silu") {  // nn.SiLU: x * sigmoid(x)
    auto scope = x.b.module(name, "SiLU");
    return x.b.binary(OpKind::Mul, t, x.b.unary(OpKind::Sigmoid, t, "sigmoid"), "mul");
  }
  if (a == "relu") return x.b.act(OpKind::Relu, t, name, "ReLU");
  if (a == "relu2") {  // ReLUSquaredActivation: torch.square(relu(x))
    auto scope = x.b.module(name, "ReLUSquaredActivation");
    const int r = x.b.unary(OpKind::Relu, t, "relu");
    return x.b.binary(OpKind::Pow, r, x.b.constant("two", Shape{}, x.s.dtype), "square");
  }
  Attrs at;
  if (a == "gelu_tanh") at.set("approximate", std::string("tanh"));
  return x.b.act(OpKind::Gelu, t, name, a == "gelu_tanh" ? "NewGELUActivation" : "GELUActivation", at);
}

// Gated (down(act(gate(x)) * up(x))) or plain (fc2(act(fc1(x)))) MLP of width `width` in module `name`.
int mlp(Ctx& x, int h, const std::string& name, int64_t width, const std::string& type) {
  Builder& b = x.b;
  const LlmConfig& c = x.c;
  auto scope = b.module(name, type);
  if (c.fused_gate_up) {  // Phi3MLP: gate, up = gate_up_proj(x).chunk(2); down(up * act(gate))
    auto gate_up = b.split(b.linear(h, "gate_up_proj", 2 * width, c.mlp_bias), 2, {width, width}, "chunk");
    int y = b.binary(OpKind::Mul, gate_up[1], activation(x, gate_up[0], "activation_fn"), "mul");
    return b.linear(y, "down_proj", c.hidden_size, c.mlp_bias);
  }
  if (c.gated_mlp) {
    int g = activation(x, b.linear(h, "gate_proj", width, c.mlp_bias), "act_fn");
    int u = b.linear(h, "up_proj", width, c.mlp_bias);
    return b.linear(b.binary(OpKind::Mul, g, u, "mul"), "down_proj", c.hidden_size, c.mlp_bias);
  }
  const bool neox = c.family == "gpt_neox" || c.family == "falcon" || c.family == "bloom";
  const ModuleNames* mn = module_names(c.family);
  const char* up = mn ? mn->up : c.family == "gpt2" ? "c_fc" : neox ? "dense_h_to_4h" : "fc1";
  const char* down = mn ? mn->down : c.family == "gpt2" ? "c_proj" : neox ? "dense_4h_to_h" : "fc2";
  const std::string lt = c.family == "gpt2" ? "Conv1D" : "Linear";
  int t = activation(x, b.linear(h, up, width, c.mlp_bias, lt), "act");
  return b.linear(t, down, c.hidden_size, c.mlp_bias, lt);
}

// One gpt_oss expert (GptOssExperts' loop body) on its tokens: gate_up = x W + b, gate and up taken from it
// (interleaved columns, a view), gate clamped above at 7 and up to [-7, 7], (up + 1) x gate x sigmoid(1.702 gate),
// then down_proj with its bias.
int clamped_swiglu_expert(Ctx& x, int tokens) {
  Builder& b = x.b;
  const int64_t I = x.c.intermediate_size;
  const auto gate_up = b.split(b.linear(tokens, "gate_up_proj", 2 * I, true), 1, {I, I}, "gate_up");
  const DType dt = x.s.dtype;
  int gate = b.unary(OpKind::Clip, gate_up[0], "clamp", Attrs{}.set("max", 7.0));
  int up = b.unary(OpKind::Clip, gate_up[1], "clamp", Attrs{}.set("min", -7.0).set("max", 7.0));
  int glu = b.binary(OpKind::Mul, gate,
                     b.unary(OpKind::Sigmoid, b.binary(OpKind::Mul, gate, b.constant("alpha", Shape{}, dt), "mul"), "sigmoid"),
                     "mul");
  int y = b.binary(OpKind::Mul, b.binary(OpKind::Add, up, b.constant("one", Shape{}, dt), "add"), glu, "mul");
  return b.linear(y, "down_proj", x.c.hidden_size, true);
}

// The module of a decoder layer's MLP or MoE block: Llama4TextDecoderLayer's and Jamba's `feed_forward`, a
// nemotron_h layer's `mixer`, the others' `mlp`.
const char* feed_forward_name(const LlmConfig& c) {
  return c.family == "llama4_text" || c.family == "jamba" ? "feed_forward"
         : c.single_block_layers()                       ? "mixer"
                                                         : "mlp";
}

// Sparse MoE block: router Linear -> softmax; the top-k selection itself is not an op here. The N*k
// (token, expert) assignments are spread evenly over the experts (expert e gets floor(N k / E) tokens, one
// more for e < N k mod E), so the experts' FLOPs are exactly top_k experts' worth per token; each expert's
// output is scaled by its routing weight and the k contributions per token are summed (index_add_).
int moe(Ctx& x, int h) {
  Builder& b = x.b;
  const LlmConfig& c = x.c;
  const int64_t N = x.s.batch * x.s.tokens, d = c.hidden_size, E = c.num_experts, K = c.experts_per_token;
  // Mixtral's layout (`block_sparse_moe`, experts w1/w2/w3), which MiniMax-M2's checkpoint keeps; DeepSeek's (`MoE`
  // with `shared_experts`), which GLM-4.5's Glm4MoeMoE copies.
  const bool mixtral = c.family == "mixtral" || c.family == "minimax_m2";
  const bool deepseek = c.family.rfind("deepseek", 0) == 0 || c.family == "glm4_moe" || c.family == "nemotron_h";
  const bool granite = c.family == "granitemoehybrid";
  const char* type = deepseek || granite ? "MoE"  // GraniteMoeHybridMoE
                     : c.family == "gpt_oss"   ? "MLP"
                     : c.router_topk_sigmoid   ? "Moe"  // Llama4TextMoe
                                               : "SparseMoeBlock";
  auto scope = b.module(mixtral || granite ? "block_sparse_moe" : feed_forward_name(c), x.type(type));
  int flat = b.reshape(h, Shape{{N, d}});
  int weights;
  if (c.router_topk_softmax) {  // GptOssTopKRouter: a biased Linear; softmax over each token's top-k logits
    int logits = b.linear(flat, "router", E, c.router_bias, x.type("TopKRouter"));
    weights = b.softmax(b.slice(logits, 1, 0, K, "topk"), 1);
  } else if (c.router_topk_sigmoid) {  // Llama4Router: a sigmoid of each token's top-k logits
    int logits = b.linear(flat, "router", E, false, "Llama4Router");
    weights = b.unary(OpKind::Sigmoid, b.slice(logits, 1, 0, K, "topk"), "sigmoid");
  } else if (c.router_sigmoid) {
    // DeepseekV3TopkRouter, Glm4MoeTopkRouter: sigmoid scores; the selection adds e_score_correction_bias
    int logits = b.linear(flat, "gate", E, false, x.type("TopkRouter"));
    weights = b.unary(OpKind::Sigmoid, logits, "sigmoid");
    auto gate = b.module("gate", x.type("TopkRouter"));
    b.binary(OpKind::Add, weights, b.param("e_score_correction_bias", Shape{{E}}), "add_correction_bias");
  } else {
    weights = b.softmax(b.linear(flat, c.family == "jamba" ? "router" : "gate", E, false), 1);
    if (c.softmax_selection_bias) {  // Ernie4_5_MoeStatics: the top-k choice adds e_score_correction_bias
      auto statics = b.module("moe_statics", x.type("Statics"));
      b.binary(OpKind::Add, weights, b.param("e_score_correction_bias", Shape{{E}}), "add_correction_bias");
    }
  }
  // Expert parallelism (LlmConfig::expert_parallel, serve --dp): this GPU holds E / ep experts and receives, from the
  // all-to-all, as many (token, expert) rows as its own tokens send (N k, balanced ranks), each with its weight.
  const int64_t ep = c.expert_parallel, held = E / ep;
  int rows = flat, row_weights = weights;
  if (ep > 1) {
    rows = b.concat(std::vector<int>(static_cast<size_t>(K), flat), 0, "dispatch");                    // [N k, d]
    row_weights = b.reshape(b.slice(weights, 1, 0, K, "topk_weights"), Shape{{N * K, 1}}, "view_weights");  // [N k, 1]
  }
  std::vector<int> outs;
  {
    auto experts = b.module("experts", "ModuleList");
    for (int64_t e = 0; e < held; ++e) {
      const int64_t n = N * K / held + (e < N * K % held ? 1 : 0);
      auto ex = b.module(std::to_string(e), x.type(mixtral ? "BlockSparseTop2MLP" : "MLP"));
      int tokens = b.slice(rows, 0, 0, n, "index_select");
      const int w = ep > 1 ? b.slice(row_weights, 0, 0, n, "routing_weight")
                           : b.slice(b.slice(weights, 0, 0, n, "routing_rows"), 1, 0, 1, "routing_weight");
      // Llama4TextMoe scales each chosen expert's input by its score; the others its output
      if (c.router_topk_sigmoid) tokens = b.binary(OpKind::Mul, tokens, w, "mul_routing");
      int y;
      if (c.clamped_swiglu) {
        y = clamped_swiglu_expert(x, tokens);
      } else if (!c.gated_mlp) {  // NemotronHExperts: up_proj -> act -> down_proj
        y = b.linear(activation(x, b.linear(tokens, "up_proj", c.intermediate_size, c.mlp_bias), "act_fn"), "down_proj",
                     d, c.mlp_bias);
      } else {
        // mlp_bias: the experts' projections have biases as the dense MLP's do (ernie4_5_moe's use_bias)
        int g = activation(x, b.linear(tokens, mixtral ? "w1" : "gate_proj", c.intermediate_size, c.mlp_bias), "act_fn");
        int u = b.linear(tokens, mixtral ? "w3" : "up_proj", c.intermediate_size, c.mlp_bias);
        y = b.linear(b.binary(OpKind::Mul, g, u, "mul"), mixtral ? "w2" : "down_proj", d, c.mlp_bias);
      }
      const int routed = c.router_topk_sigmoid ? y : b.binary(OpKind::Mul, y, w, "mul_routing");
      if (n > 0) outs.push_back(routed);  // an expert with no token adds nothing to index_add_
    }
  }
  // index_add_ of the k contributions per token: k - 1 additions per output element.
  int all = b.reshape(b.concat(outs, 0, "index_add"), Shape{{N, K, d}});
  int y = b.slice(all, 1, 0, 1, "contribution");
  for (int64_t i = 1; i < K; ++i) y = b.binary(OpKind::Add, y, b.slice(all, 1, i, i + 1, "contribution"), "index_add");
  y = b.reshape(y, Shape{{x.s.batch, x.s.tokens, d}});
  if (c.shared_expert_intermediate_size > 0 && !granite) {  // granitemoehybrid's is the layer's shared_mlp
    const bool plural = deepseek || c.family == "ernie4_5_moe";  // DeepseekV3MoE, Ernie4_5_MoeSparseMoeBlock
    int sh = mlp(x, h, plural ? "shared_experts" : "shared_expert", c.shared_expert_intermediate_size, x.type("MLP"));
    if (c.shared_expert_gate) {
      int gate = b.unary(OpKind::Sigmoid, b.linear(h, "shared_expert_gate", 1, false), "sigmoid");
      sh = b.binary(OpKind::Mul, sh, gate, "mul");
    }
    y = b.binary(OpKind::Add, y, sh, "add");
  }
  return y;
}

// GraniteMoeSharedMLP: input_linear to gate and up (one Linear, chunked), act(gate) x up, output_linear.
int shared_mlp(Ctx& x, int h, int64_t width) {
  Builder& b = x.b;
  auto scope = b.module("shared_mlp", x.type("MLP"));
  const auto gate_up = b.split(b.linear(h, "input_linear", 2 * width, false), 2, {width, width}, "chunk");
  return b.linear(b.binary(OpKind::Mul, activation(x, gate_up[0], "activation"), gate_up[1], "mul"), "output_linear",
                  x.c.hidden_size, false);
}

int feed_forward(Ctx& x, int h, int64_t layer) {
  if (x.c.family == "granitemoehybrid") {  // the routed experts plus the shared MLP, or the shared MLP alone
    if (!x.c.sparse_layer(layer)) return shared_mlp(x, h, x.c.intermediate_size);
    const int routed = moe(x, h);
    return x.b.binary(OpKind::Add, routed, shared_mlp(x, h, x.c.shared_expert_intermediate_size), "add_shared_mlp");
  }
  if (x.c.sparse_layer(layer)) return moe(x, h);
  return mlp(x, h, feed_forward_name(x.c), x.c.dense_width(), x.type("MLP"));
}

int hybrid_mixer(Ctx& x, int in, int64_t l);  // below, beside the hybrid layers' mixers

// One decoder layer: pre-norm sequential (llama, gpt2, opt, sequential neox), parallel residual
// (x + attn(ln1(x)) + mlp(ln2(x) or ln1(x)): neox, falcon, phi), with norms around both blocks (gemma2, gemma3, glm4:
// x + post_attn(attn(in(x))), then + post_ff(mlp(pre_ff(.)))) or after them only (olmo2, olmo3:
// x + post_attn(attn(x)), then + post_ff(mlp(.))).
int decoder_layer(Ctx& x, int h, int64_t l) {
  Builder& b = x.b;
  const LlmConfig& c = x.c;
  if (c.output_norms) {
    auto scope = b.module(std::to_string(l), x.type("DecoderLayer"));
    h = b.binary(OpKind::Add, h, norm(x, self_attention(x, h, l), "post_attention_layernorm"), "add");
    return b.binary(OpKind::Add, h, norm(x, feed_forward(x, h, l), "post_feedforward_layernorm"), "add");
  }
  if (c.sandwich_norms) {  // Glm4DecoderLayer names the same four norms differently
    const bool glm4 = c.family == "glm4";
    auto scope = b.module(std::to_string(l), x.type("DecoderLayer"));
    int a = norm(x, self_attention(x, norm(x, h, "input_layernorm"), l),
                 glm4 ? "post_self_attn_layernorm" : "post_attention_layernorm");
    h = b.binary(OpKind::Add, h, a, "add");
    int m = norm(x, feed_forward(x, norm(x, h, glm4 ? "post_attention_layernorm" : "pre_feedforward_layernorm"), l),
                 glm4 ? "post_mlp_layernorm" : "post_feedforward_layernorm");
    return b.binary(OpKind::Add, h, m, "add");
  }
  const bool gpt2 = c.family == "gpt2", opt = c.family == "opt", falcon = c.family == "falcon";
  const ModuleNames* mn = module_names(c.family);
  const std::string n1 = mn ? mn->norm1 : gpt2 ? "ln_1" : opt ? "self_attn_layer_norm" : falcon && c.parallel_norms == 2 ? "ln_attn" : "input_layernorm";
  const std::string n2 = mn ? mn->norm2 : gpt2 ? "ln_2" : opt ? "final_layer_norm" : falcon ? "ln_mlp" : "post_attention_layernorm";
  auto scope = b.module(std::to_string(l), x.type(mn ? mn->block : gpt2 || c.family == "bloom" ? "Block" : "DecoderLayer"));
  int a_in = norm(x, h, n1);
  int a = residual_branch(x, c.hybrid_decoder ? hybrid_mixer(x, a_in, l) : self_attention(x, a_in, l));
  if (c.parallel_residual) {
    int m_in = c.parallel_norms == 2 ? norm(x, h, n2) : a_in;
    int m = feed_forward(x, m_in, l);
    return b.binary(OpKind::Add, b.binary(OpKind::Add, h, a, "add"), m, "add");
  }
  h = b.binary(OpKind::Add, h, a, "add");
  return b.binary(OpKind::Add, h, residual_branch(x, feed_forward(x, norm(x, h, n2), l)), "add");
}

// The conv1d both recurrent mixers run over their conv input [B, T, channels] (transposed to channels first): a
// serving graph prepends the cached last conv_kernel - 1 inputs when it continues a sequence and writes the new ones
// back (`.conv_state`); the causal depthwise conv and SiLU. Returns [B, T, channels].
int causal_conv_with_state(Ctx& x, int conv_in, int64_t channels, const std::string& cache, bool bias) {
  Builder& b = x.b;
  const int64_t B = x.s.batch, K = x.c.conv_kernel;
  const bool from_cache = x.s.serving && (x.s.past > 0 || x.s.tokens == 1);
  conv_in = b.transpose(conv_in, {0, 2, 1});  // [B, channels, T]
  int64_t pad = K - 1;
  if (from_cache) {
    const int past = b.input(cache + ".conv_state", Shape{{B, channels, K - 1}}, x.s.dtype);
    conv_in = b.concat({past, conv_in}, 2, "cat_conv_state");
    pad = 0;
  }
  if (x.s.serving) {
    const int64_t len = b.shape(conv_in)[2];
    x.present.push_back(b.slice(conv_in, 2, std::max<int64_t>(0, len - (K - 1)), len, "conv_state"));
  }
  const int conv = b.act(OpKind::Silu, b.causal_conv1d(conv_in, "conv1d", K, pad, bias), "act", "SiLU");
  return b.transpose(conv, {0, 2, 1});
}

// NemotronHMamba2Mixer as mamba_ssm's kernels run it (docs/llm.md, "Hybrid models"): in_proj to the gate (inner
// width I), the conv input x|B|C (conv_dim) and dt (one per head); the causal depthwise conv1d and SiLU; x, B and C
// split; one SelectiveScan (A = -exp(A_log), D, dt_bias; chunks of chunk_size); the gated RMSNorm (y x silu(gate),
// normalised per group of I / n_groups channels, times its weight); out_proj. A serving graph reads the layer's
// conv state (the last conv_kernel - 1 inputs) and recurrent state from the cache when it continues a sequence
// (a decode step: one token) and writes both back (graph outputs).
int mamba_mixer(Ctx& x, int h, int64_t layer) {
  Builder& b = x.b;
  const LlmConfig& c = x.c;
  const int64_t B = x.s.batch, T = x.s.tokens, I = c.ssm_inner(), H = c.ssm_heads, P = c.ssm_head_dim,
                G = c.ssm_groups, N = c.ssm_state, CD = c.conv_dim();
  const bool from_cache = x.s.serving && (x.s.past > 0 || T == 1);
  const std::string cache = fmt::format("past_key_values.{}", layer);
  // Mamba2Mixer; nemotron_h's NemotronHMamba2Mixer; granitemoehybrid's GraniteMoeHybridMambaLayer (module `mamba`)
  const bool mamba2 = c.family == "mamba2";
  auto scope = b.module(c.hybrid_decoder ? "mamba" : "mixer",
                        mamba2 ? "Mamba2Mixer" : x.type(c.hybrid_decoder ? "MambaLayer" : "Mamba2Mixer"));
  const auto proj = b.split(b.linear(h, "in_proj", I + CD + H, c.ssm_proj_bias), 2, {I, CD, H});
  const auto xbc = b.split(causal_conv_with_state(x, proj[1], CD, cache, c.conv_bias), 2, {I, G * N, G * N});
  std::vector<int> in = {b.reshape(xbc[0], Shape{{B, T, H, P}}), proj[2],
                         b.unary(OpKind::Neg, b.unary(OpKind::Exp, b.param("A_log", Shape{{H}}), "exp"), "neg"),
                         b.reshape(xbc[1], Shape{{B, T, G, N}}), b.reshape(xbc[2], Shape{{B, T, G, N}}),
                         b.param("D", Shape{{H}}), b.param("dt_bias", Shape{{H}})};
  if (from_cache)
    in.push_back(b.input(cache + ".ssm_state", Shape{{B, H, P, N}}, c.ssm_state_fp32 ? DType::F32 : x.s.dtype));
  const auto scan = b.call(OpKind::SelectiveScan, std::move(in), 2, "selective_scan",
                           Attrs{}.set("chunk_size", c.ssm_chunk));
  if (x.s.serving) x.present.push_back(scan[1]);
  int y = b.reshape(scan[0], Shape{{B, T, I}});
  {
    auto nscope = b.module("norm", mamba2             ? "MambaRMSNormGated"
                                   : c.hybrid_decoder ? x.type("RMSNormGated")
                                                      : "Zamba2RMSNormGated");
    const DType dt = DType::F32;
    y = b.binary(OpKind::Mul, y, b.unary(OpKind::Silu, proj[0], "silu"), "mul_gate");
    y = b.reshape(y, Shape{{B, T, G, I / G}});
    const int mean = b.reduce_mean(b.binary(OpKind::Pow, y, b.constant("two", Shape{}, dt), "pow"), {-1}, true);
    const int var = b.binary(OpKind::Add, mean, b.constant("variance_epsilon", Shape{}, dt), "add");
    y = b.binary(OpKind::Mul, y, b.unary(OpKind::Reciprocal, b.unary(OpKind::Sqrt, var, "sqrt"), "rsqrt"), "mul");
    y = b.binary(OpKind::Mul, b.param("weight", Shape{{I}}), b.reshape(y, Shape{{B, T, I}}), "mul_weight");
  }
  return b.linear(y, "out_proj", c.hidden_size, c.ssm_proj_bias);
}

// Qwen3NextGatedDeltaNet as flash-linear-attention's and causal-conv1d's kernels run it (docs/llm.md, "Gated
// DeltaNet"): in_proj_qkvz to q, k (key heads x key width each), v and z (value heads x value width each; the
// checkpoint interleaves them per key head, a view); in_proj_ba to b and a (one each per value head); Qwen3.5's
// Qwen3_5GatedDeltaNet has the same as four Linears (in_proj_qkv, in_proj_z, in_proj_b, in_proj_a); the causal
// depthwise conv1d (no bias) and SiLU over q|k|v; one GatedDeltaRule (g = -exp(A_log) softplus(a + dt_bias), beta =
// sigmoid(b), q and k L2-normalised in the kernel, each key head shared by its value heads, chunks of 64); the gated
// RMSNorm per value head (normalised, times its weight, times silu(z)); out_proj. A serving graph reads and writes the
// conv state and the float32 recurrent state (`.recurrent_state`) as the Mamba-2 mixer does.
int gated_delta_net(Ctx& x, int h, int64_t layer) {
  Builder& b = x.b;
  const LlmConfig& c = x.c;
  const int64_t B = x.s.batch, T = x.s.tokens, Hk = c.gdn_key_heads, H = c.gdn_value_heads, Kd = c.gdn_key_dim,
                Vd = c.gdn_value_dim, KW = c.gdn_key_width(), VW = c.gdn_value_width(), CD = c.gdn_conv_dim();
  const bool from_cache = x.s.serving && (x.s.past > 0 || T == 1);
  const std::string cache = fmt::format("past_key_values.{}", layer);
  auto scope = b.module("linear_attn", x.type("GatedDeltaNet"));
  int mixed_qkv, z, beta_in, decay_in;
  if (c.family.rfind("qwen3_5", 0) == 0) {  // Qwen3_5GatedDeltaNet: four Linears
    mixed_qkv = b.linear(h, "in_proj_qkv", CD, false);
    z = b.linear(h, "in_proj_z", VW, false);
    beta_in = b.linear(h, "in_proj_b", H, false);
    decay_in = b.linear(h, "in_proj_a", H, false);
  } else {
    const auto qkvz = b.split(b.linear(h, "in_proj_qkvz", CD + VW, false), 2, {CD, VW});
    const auto ba = b.split(b.linear(h, "in_proj_ba", 2 * H, false), 2, {H, H});
    mixed_qkv = qkvz[0], z = qkvz[1], beta_in = ba[0], decay_in = ba[1];
  }
  const auto qkv = b.split(causal_conv_with_state(x, mixed_qkv, CD, cache, false), 2, {KW, KW, VW});
  std::vector<int> in = {b.reshape(qkv[0], Shape{{B, T, Hk, Kd}}), b.reshape(qkv[1], Shape{{B, T, Hk, Kd}}),
                         b.reshape(qkv[2], Shape{{B, T, H, Vd}}),  decay_in, beta_in,
                         b.param("A_log", Shape{{H}}),             b.param("dt_bias", Shape{{H}})};
  if (from_cache) in.push_back(b.input(cache + ".recurrent_state", Shape{{B, H, Kd, Vd}}, DType::F32));
  const auto rule = b.call(OpKind::GatedDeltaRule, std::move(in), 2, "chunk_gated_delta_rule",
                           Attrs{}.set("chunk_size", c.gdn_chunk).set("qk_l2norm", int64_t{1}));
  if (x.s.serving) x.present.push_back(rule[1]);
  int y = rule[0];  // [B, T, H, Vd]
  {
    auto nscope = b.module("norm", x.type("RMSNormGated"));
    const DType dt = DType::F32;
    const int mean = b.reduce_mean(b.binary(OpKind::Pow, y, b.constant("two", Shape{}, dt), "pow"), {-1}, true);
    const int var = b.binary(OpKind::Add, mean, b.constant("variance_epsilon", Shape{}, dt), "add");
    y = b.binary(OpKind::Mul, y, b.unary(OpKind::Reciprocal, b.unary(OpKind::Sqrt, var, "sqrt"), "rsqrt"), "mul");
    y = b.binary(OpKind::Mul, b.param("weight", Shape{{Vd}}), y, "mul_weight");
    y = b.binary(OpKind::Mul, y, b.unary(OpKind::Silu, b.reshape(z, Shape{{B, T, H, Vd}}), "silu"), "mul_gate");
  }
  return b.linear(b.reshape(y, Shape{{B, T, VW}}), "out_proj", c.hidden_size, false);
}

// MambaMixer (Mamba-1) as mamba_ssm's kernels run it (docs/llm.md, "Mamba-1"): in_proj to x and the gate (inner width
// I each); the causal depthwise conv1d and SiLU on x; x_proj to dt (dt_rank), B and C (state N each; falcon_mamba
// normalises the three, RMS without a weight, jamba with RMSNorms); dt_proj (dt_rank -> I, its bias added in the scan); one MambaScan (A
// = -exp(A_log) [I, N], D, the gate's silu product and softplus(dt + dt_bias) inside, as selective_scan_fn takes
// them); out_proj. A serving graph reads and writes the conv state and the recurrent state [B, I, N] (`.ssm_state`,
// at the activation type as HF's MambaCache keeps it).
int mamba1_mixer(Ctx& x, int h, int64_t layer) {
  Builder& b = x.b;
  const LlmConfig& c = x.c;
  const int64_t B = x.s.batch, I = c.mamba1_inner, N = c.ssm_state, R = c.dt_rank;
  const bool from_cache = x.s.serving && (x.s.past > 0 || x.s.tokens == 1);
  const std::string cache = fmt::format("past_key_values.{}", layer);
  // MambaMixer, FalconMambaMixer; jamba's JambaMambaMixer (module `mamba` of a decoder layer)
  auto scope = b.module(c.hybrid_decoder ? "mamba" : "mixer", x.type(c.hybrid_decoder ? "MambaMixer" : "Mixer"));
  const auto proj = b.split(b.linear(h, "in_proj", 2 * I, c.ssm_proj_bias), 2, {I, I}, "chunk");
  const int xc = causal_conv_with_state(x, proj[0], I, cache, c.conv_bias);
  auto ssm = b.split(b.linear(xc, "x_proj", R + 2 * N, false), 2, {R, N, N});
  using Norms = LlmConfig::Mamba1Norms;
  if (c.mamba1_norms == Norms::Weightless)  // FalconMambaMixer's rms_forward on B, C and dt
    for (auto [i, name] : {std::pair{1, "b_rms"}, std::pair{2, "c_rms"}, std::pair{0, "dt_rms"}})
      ssm[static_cast<size_t>(i)] = norm(x, ssm[static_cast<size_t>(i)], name, false);
  if (c.mamba1_norms == Norms::Weighted)  // JambaMambaMixer's RMSNorms
    for (auto [i, name] : {std::pair{0, "dt_layernorm"}, std::pair{1, "b_layernorm"}, std::pair{2, "c_layernorm"}})
      ssm[static_cast<size_t>(i)] = norm(x, ssm[static_cast<size_t>(i)], name);
  const int dt = b.linear(ssm[0], "dt_proj", I, false);  // dt_proj.weight @ dt; the bias goes into the scan
  std::vector<int> in = {xc, dt,
                         b.unary(OpKind::Neg, b.unary(OpKind::Exp, b.param("A_log", Shape{{I, N}}), "exp"), "neg"),
                         ssm[1], ssm[2], b.param("D", Shape{{I}}), proj[1], b.param("dt_proj.bias", Shape{{I}})};
  if (from_cache) in.push_back(b.input(cache + ".ssm_state", Shape{{B, I, N}}, x.s.dtype));
  const auto scan = b.call(OpKind::MambaScan, std::move(in), 2, "selective_scan");
  if (x.s.serving) x.present.push_back(scan[1]);
  return b.linear(scan[0], "out_proj", c.hidden_size, c.ssm_proj_bias);
}

// Layer `l`'s block of a hybrid (its LlmBlock) on `in`: a Mamba-2 or Mamba-1 mixer, a Gated DeltaNet, self-attention,
// or, in a single-block layer, an MLP or MoE block (the module `mixer`).
int hybrid_mixer(Ctx& x, int in, int64_t l) {
  switch (x.c.blocks[static_cast<size_t>(l)]) {
    case LlmBlock::Mamba: return mamba_mixer(x, in, l);
    case LlmBlock::Attention: return self_attention(x, in, l);
    case LlmBlock::Mlp: return mlp(x, in, "mixer", x.c.dense_width(), x.type("MLP"));
    case LlmBlock::Moe: return moe(x, in);
    case LlmBlock::DeltaNet: return gated_delta_net(x, in, l);
    case LlmBlock::Mamba1: return mamba1_mixer(x, in, l);
  }
  return -1;
}

// A hybrid layer (NemotronHBlock): h + mixer(norm(h)), the mixer the layer's block (hybrid_mixer).
int hybrid_block(Ctx& x, int h, int64_t l) {
  auto scope = x.b.module(std::to_string(l), x.type("Block"));
  return x.b.binary(OpKind::Add, h, hybrid_mixer(x, norm(x, h, "norm"), l), "add");
}

// HF module names of the model body: (body attribute, layers list, embeddings, final norm, lm_head).
struct Names {
  const char *body, *layers, *embed, *final_norm, *head;
};
Names names_of(const std::string& f) {
  if (f == "gpt2") return {"transformer", "h", "wte", "ln_f", "lm_head"};
  if (f == "gptj" || f == "codegen" || f == "gpt_bigcode") return {"transformer", "h", "wte", "ln_f", "lm_head"};
  if (f == "gpt_neox") return {"gpt_neox", "layers", "embed_in", "final_layer_norm", "embed_out"};
  if (f == "falcon" || f == "bloom") return {"transformer", "h", "word_embeddings", "ln_f", "lm_head"};
  if (f == "opt") return {"model.decoder", "layers", "embed_tokens", "final_layer_norm", "lm_head"};
  if (f == "phi") return {"model", "layers", "embed_tokens", "final_layernorm", "lm_head"};
  if (f == "nemotron_h" || f == "mamba2" || f == "mamba" || f == "falcon_mamba")
    return {"backbone", "layers", "embeddings", "norm_f", "lm_head"};
  if (f == "jamba") return {"model", "layers", "embed_tokens", "final_layernorm", "lm_head"};
  return {"model", "layers", "embed_tokens", "norm", "lm_head"};
}

// One post-norm encoder layer (BertLayer, RobertaLayer, DistilBERT's TransformerBlock): attention (q/k/v, eager core
// without a causal mask, out dense), + residual, LayerNorm; MLP (dense, act, dense), + residual, LayerNorm.
int encoder_layer(Ctx& x, int h, int64_t l) {
  Builder& b = x.b;
  const LlmConfig& c = x.c;
  const bool distil = c.family == "distilbert";
  const int64_t B = x.s.batch, T = x.s.tokens, H = c.num_heads, hd = c.head_dim;
  auto scope = b.module(std::to_string(l), x.type(distil ? "TransformerBlock" : "Layer"));
  auto self_attention = [&](int in) {
    int q = heads_first(b, b.linear(in, distil ? "q_lin" : "query", H * hd, true), H, hd);
    int k = heads_first(b, b.linear(in, distil ? "k_lin" : "key", H * hd, true), H, hd);
    int v = heads_first(b, b.linear(in, distil ? "v_lin" : "value", H * hd, true), H, hd);
    return b.reshape(b.transpose(attend(x, q, k, v), {0, 2, 1, 3}), Shape{{B, T, H * hd}});
  };
  if (distil) {
    int a;
    {
      auto attn = b.module("attention", "MultiHeadSelfAttention");
      a = b.linear(self_attention(h), "out_lin", c.hidden_size, true);
    }
    h = norm(x, b.binary(OpKind::Add, a, h, "add"), "sa_layer_norm");
    int m;
    {
      auto ffn = b.module("ffn", "FFN");
      m = b.linear(activation(x, b.linear(h, "lin1", c.intermediate_size, true), "activation"), "lin2", c.hidden_size, true);
    }
    return norm(x, b.binary(OpKind::Add, m, h, "add"), "output_layer_norm");
  }
  {
    auto attn = b.module("attention", x.type("Attention"));
    int a;
    {
      auto self = b.module("self", x.type("SelfAttention"));
      a = self_attention(h);
    }
    auto out = b.module("output", x.type("SelfOutput"));
    h = norm(x, b.binary(OpKind::Add, b.linear(a, "dense", c.hidden_size, true), h, "add"), "LayerNorm");
  }
  int m;
  {
    auto inter = b.module("intermediate", x.type("Intermediate"));
    m = activation(x, b.linear(h, "dense", c.intermediate_size, true), "intermediate_act_fn");
  }
  auto out = b.module("output", x.type("Output"));
  return norm(x, b.binary(OpKind::Add, b.linear(m, "dense", c.hidden_size, true), h, "add"), "LayerNorm");
}

// hidden_states[:, 0]: the first token of every sequence, [B, T, h] -> [B, h].
int first_token(Builder& b, int h) {
  const Shape s = b.shape(h);
  return b.reshape(b.slice(h, 1, 0, 1, "select_first"), Shape{{s[0], s[2]}});
}

// Linear (h -> h) + activation module `act` of type `type` (BertPooler's tanh, RoBERTa's classifier dense + tanh,
// DistilBERT's pre_classifier + ReLU).
int dense_act(Builder& b, int t, const std::string& dense, OpKind op, const std::string& act, const std::string& type) {
  return b.act(op, b.linear(t, dense, b.shape(t)[-1], true), act, type);
}

// The BERT family (bert, roberta, xlm-roberta, distilbert) as transformers' eager modules compute them: embeddings
// (word + learned position (+ token type)) -> LayerNorm, post-norm layers, no final norm, and the head
// architectures[0] names. Attention is bidirectional (a padding mask [B, 1, 1, S] added to the scores) unless the
// config says causal (then a causal mask, as the decoders'). Dropout is not an op here (as in the decoders).
Graph build_encoder(const LlmConfig& c, const LlmShape& s) {
  const int64_t B = s.batch, T = s.tokens, d = c.hidden_size;
  if (s.serving)
    throw Error(fmt::format("{}: {} is an encoder: it has no KV cache to serve from (summary, predict and train "
                            "model it)", c.name, c.family));
  const bool distil = c.family == "distilbert", bert = c.family == "bert";
  const std::string body = distil ? "distilbert" : bert ? "bert" : "roberta";
  Builder b(c.name, s.dtype);
  Ctx x{b, c, s, T, -1, -1, -1, {}};
  int ids = b.input("input_ids", Shape{{B, T}}, DType::I64);
  int h, pooled = -1, embed_w;
  {
    auto model = b.module(body, c.module_prefix + "Model");
    {
      auto emb = b.module("embeddings", distil ? std::string("Embeddings") : c.module_prefix + "Embeddings");
      h = b.embedding(ids, "word_embeddings", c.vocab_size, d);
      embed_w = b.value_id(body + ".embeddings.word_embeddings.weight");
      int pos = b.constant("position_ids", Shape{{1, T}}, DType::I64);
      h = b.binary(OpKind::Add, h, b.embedding(pos, "position_embeddings", c.max_positions + c.position_offset, d), "add");
      if (c.token_type_vocab > 0) {
        int types = b.input("token_type_ids", Shape{{B, T}}, DType::I64);
        h = b.binary(OpKind::Add, h, b.embedding(types, "token_type_embeddings", c.token_type_vocab, d), "add");
      }
      h = norm(x, h, "LayerNorm");
    }
    x.mask = c.causal ? b.constant("causal_mask", Shape{{B, 1, T, T}}, s.dtype)
                      : b.constant("attention_mask", Shape{{B, 1, 1, T}}, s.dtype);
    {
      auto encoder = b.module(distil ? "transformer" : "encoder", distil ? "Transformer" : c.module_prefix + "Encoder");
      auto layers = b.module("layer", "ModuleList");
      for (int64_t l = 0; l < c.num_layers; ++l) h = encoder_layer(x, h, l);
    }
    if (c.pooler) {
      auto pool = b.module("pooler", c.module_prefix + "Pooler");
      pooled = dense_act(b, first_token(b, h), "dense", OpKind::Tanh, "activation", "Tanh");
    }
  }
  // The MLM head: dense -> act -> LayerNorm (BERT's in cls.predictions.transform) -> decoder (tied to the word
  // embedding, or its own weight) + bias.
  auto masked_lm = [&](int t) {
    const std::string dense = distil ? "vocab_transform" : "dense", ln = distil ? "vocab_layer_norm" : bert ? "LayerNorm" : "layer_norm";
    const std::string dec = distil ? "vocab_projector" : "decoder";
    {
      std::optional<Builder::Scope> transform;
      if (bert) transform.emplace(b, "transform", "BertPredictionHeadTransform");
      t = norm(x, activation(x, b.linear(t, dense, d, true), bert ? "transform_act_fn" : "activation"), ln);
    }
    if (!c.tied_embeddings) return b.linear(t, dec, c.vocab_size, true);
    return b.linear_tied(t, dec, embed_w, b.param(distil ? dec + ".bias" : "bias", Shape{{c.vocab_size}}));
  };
  std::vector<int> outputs;
  switch (c.head) {
    case LlmHead::CausalLm:
      throw Error(fmt::format("{}: an encoder config needs an encoder head, not a causal LM head", c.name));
    case LlmHead::Base:
      outputs.push_back(h);
      if (pooled >= 0) outputs.push_back(pooled);
      break;
    case LlmHead::MaskedLm:
    case LlmHead::PreTraining:
      if (bert) {
        auto cls = b.module("cls", c.head == LlmHead::MaskedLm ? "BertOnlyMLMHead" : "BertPreTrainingHeads");
        {
          auto pred = b.module("predictions", "BertLMPredictionHead");
          outputs.push_back(masked_lm(h));
        }
        if (c.head == LlmHead::PreTraining) outputs.push_back(b.linear(pooled, "seq_relationship", 2, true));
      } else if (distil) {
        outputs.push_back(masked_lm(h));
      } else {
        auto head = b.module("lm_head", c.module_prefix + "LMHead");
        outputs.push_back(masked_lm(h));
      }
      break;
    case LlmHead::SequenceClassification:
      if (bert) {
        outputs.push_back(b.linear(pooled, "classifier", c.num_labels, true));
      } else if (distil) {
        int t = dense_act(b, first_token(b, h), "pre_classifier", OpKind::Relu, "relu", "ReLU");
        outputs.push_back(b.linear(t, "classifier", c.num_labels, true));
      } else {
        auto head = b.module("classifier", c.module_prefix + "ClassificationHead");
        int t = dense_act(b, first_token(b, h), "dense", OpKind::Tanh, "tanh", "Tanh");
        outputs.push_back(b.linear(t, "out_proj", c.num_labels, true));
      }
      break;
    case LlmHead::TokenClassification: outputs.push_back(b.linear(h, "classifier", c.num_labels, true)); break;
    case LlmHead::QuestionAnswering: outputs.push_back(b.linear(h, "qa_outputs", 2, true)); break;
  }
  return b.finish(outputs);
}

Graph build(const LlmConfig& c, const LlmShape& s) {
  validate_llm_config(c, c.name);
  const int64_t B = s.batch, T = s.tokens, d = c.hidden_size;
  if (B < 1 || T < 1 || s.past < 0) throw Error(fmt::format("{}: batch {} x tokens {} (past {}) is not a valid shape", c.name, B, T, s.past));
  if (c.post_norm) return build_encoder(c, s);
  const int64_t full_len = s.past + T;
  // With a window W, the T new queries attend to the union of their windows: at most W + T - 1 positions
  // (one decode token: the W cached ones). Models with global layers (gemma2, gemma3) attend to all of them there.
  const int64_t window_len = c.sliding_window > 0 && s.serving ? std::min(full_len, c.sliding_window + T - 1) : full_len;
  bool any_global = false, any_window = false;
  for (int64_t l = 0; l < c.num_layers; ++l) (c.window_of(l) > 0 ? any_window : any_global) = true;
  Builder b(c.name, s.dtype);
  Ctx x{b, c, s, full_len, -1, -1, -1, {}};
  const Names nm = names_of(c.family);
  int ids = b.input("input_ids", Shape{{B, T}}, DType::I64);
  int h, embed_w;
  std::vector<int> outputs;
  {
    auto body = b.module(nm.body, c.module_prefix + (c.family == "gpt2" ? "Model" : "Model"));
    const int64_t e = c.embed_proj_dim > 0 ? c.embed_proj_dim : d;
    h = b.embedding(ids, nm.embed, c.vocab_size, e);
    embed_w = b.value_id(std::string(nm.body) + "." + nm.embed + ".weight");
    if (c.scale_embeddings) h = b.binary(OpKind::Mul, h, b.constant("normalizer", Shape{}, s.dtype), "mul");
    if (granite(c)) h = b.binary(OpKind::Mul, h, b.constant("embedding_multiplier", Shape{}, s.dtype), "mul");
    if (c.embedding_norm) h = norm(x, h, "word_embeddings_layernorm");
    if (c.embed_proj_dim > 0) h = b.linear(h, "project_in", d, false);
    if (c.position == LlmPosition::Learned) {
      int pos = b.constant("position_ids", Shape{{1, T}}, DType::I64);
      const char* pname = c.family == "gpt2" || c.family == "gpt_bigcode" ? "wpe" : "embed_positions";
      h = b.binary(OpKind::Add, h, b.embedding(pos, pname, c.max_positions + c.position_offset, d), "add");
    }
    if (c.position == LlmPosition::Rotary) {
      // cos/sin tables of the positions (LlamaRotaryEmbedding): computed once per forward, O(T x head_dim).
      auto rot = b.module("rotary_emb", c.module_prefix + "RotaryEmbedding");
      const int64_t r = c.rotary_dim();
      x.cos = b.constant("cos", Shape{{B, 1, T, r}}, s.dtype);
      x.sin = b.constant("sin", Shape{{B, 1, T, r}}, s.dtype);
    }
    const int full_mask = any_global ? b.constant("causal_mask", Shape{{B, 1, T, full_len}}, s.dtype) : -1;
    const int window_mask =
        any_window ? b.constant(!any_global        ? "causal_mask"
                                : c.chunked_attention ? "chunked_attention_mask"
                                                      : "sliding_window_mask",
                                Shape{{B, 1, T, window_len}}, s.dtype)
                   : -1;
    {
      auto layers = b.module(nm.layers, "ModuleList");
      for (int64_t l = 0; l < c.num_layers; ++l) {
        const bool window = c.window_of(l) > 0;
        x.kv_len = window ? window_len : full_len;
        x.mask = window ? window_mask : full_mask;
        h = c.single_block_layers() ? hybrid_block(x, h, l) : decoder_layer(x, h, l);
      }
    }
    h = norm(x, h, nm.final_norm);
    if (c.embed_proj_dim > 0) h = b.linear(h, "project_out", c.embed_proj_dim, false);
  }
  int logits = c.tied_embeddings ? b.linear_tied(h, nm.head, embed_w) : b.linear(h, nm.head, c.vocab_size, c.lm_head_bias);
  logits = softcap(b, logits, c.final_softcap, "final_logit_softcap", s.dtype);
  if (granite(c)) logits = b.binary(OpKind::Div, logits, b.constant("logits_scaling", Shape{}, s.dtype), "div_logits_scaling");
  if (c.logit_scale != 0)  // CohereForCausalLM: logits * logit_scale
    logits = b.binary(OpKind::Mul, logits, b.constant("logit_scale", Shape{}, s.dtype), "mul_logit_scale");
  if (c.tied_embeddings && c.lm_head_bias)
    throw Error(fmt::format("{}: a tied lm_head with a bias is not supported", c.name));
  outputs.push_back(logits);
  for (int p : x.present) outputs.push_back(p);
  Graph g = b.finish(outputs);
  for (int v : x.fp32) g.values[v].dtype = DType::F32;
  return g;
}

}  // namespace

Graph llm_zoo(const BuildArgs& a) {
  const LlmConfig* c = find_llm_config(a.name);
  RIDGE_ASSERT(c != nullptr, "llm_zoo: the zoo table names an LLM that llm_zoo_configs() lacks");
  LoadOptions o;
  o.batch = a.batch;
  o.seq_len = a.sample[0];
  o.dtype = a.dtype;
  o.training = a.training;
  return build_llm(*c, o);
}

}  // namespace ridge::zoo

namespace ridge {

Graph build_llm(const LlmConfig& c, const LlmShape& s) { return zoo::build(c, s); }

int64_t llm_graph_nodes_estimate(const LlmConfig& c) {
  int64_t nodes = 0;
  for (int64_t l = 0; l < c.num_layers; ++l) nodes += 55 + (c.sparse_layer(l) ? 12 * c.num_experts : 0);
  return nodes;
}

Graph build_llm(const LlmConfig& c, const LoadOptions& opts) {
  LlmShape s;
  s.batch = opts.batch;
  s.tokens = opts.seq_len.value_or(std::min<int64_t>(c.max_positions, 2048));
  if (s.tokens < 1 || s.tokens > c.max_positions)
    throw Error(fmt::format("--seq-len: {} is out of range for {} (1..{})", s.tokens, c.name, c.max_positions));
  s.dtype = opts.dtype;
  s.training = opts.training;
  return zoo::build(c, s);
}

}  // namespace ridge
