// Hugging Face config.json -> LlmConfig: one reader per model_type over a small typed-key helper. Unknown keys
// are ignored; defaults are the transformers library's (configuration_*.py) where a key may be absent.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cmath>
#include <algorithm>
#include <filesystem>
#include <limits>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "ridge/error.hpp"
#include "ridge/llm.hpp"

namespace ridge {

namespace {

using nlohmann::json;

/// Typed access to a config's keys; every error names the origin and the key.
class Keys {
 public:
  Keys(const json& j, std::string origin) : j_(j), origin_(std::move(origin)) {}

  const json* find(const std::string& k) const {
    auto it = j_.find(k);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  /// True when the config states `k` as null (transformers' None, which may differ from the default; find() reads
  /// it as absent).
  bool null(const std::string& k) const {
    auto it = j_.find(k);
    return it != j_.end() && it->is_null();
  }
  int64_t req_int(const std::string& k) const {
    if (!find(k)) throw Error(fmt::format("{}: missing required key '{}'", origin_, k));
    return as_int(k);
  }
  int64_t opt_int(const std::string& k, int64_t def) const { return find(k) ? as_int(k) : def; }
  double opt_double(const std::string& k, double def) const {
    const json* v = find(k);
    if (!v) return def;
    if (!v->is_number()) throw type_error(k, "a number");
    return v->get<double>();
  }
  bool opt_bool(const std::string& k, bool def) const {
    const json* v = find(k);
    if (!v) return def;
    if (!v->is_boolean()) throw type_error(k, "true or false");
    return v->get<bool>();
  }
  std::string opt_string(const std::string& k, const std::string& def) const {
    const json* v = find(k);
    if (!v) return def;
    if (!v->is_string()) throw type_error(k, "a string");
    return v->get<std::string>();
  }
  /// The first present key of `names` as an integer (required).
  int64_t req_int_any(std::initializer_list<const char*> names) const {
    for (const char* n : names)
      if (find(n)) return as_int(n);
    std::string others;
    for (auto it = names.begin() + 1; it != names.end(); ++it) others += fmt::format(" or '{}'", *it);
    throw Error(fmt::format("{}: missing required key '{}'{}", origin_, *names.begin(), others));
  }
  const std::string& origin() const { return origin_; }

 private:
  int64_t as_int(const std::string& k) const {
    const json& v = *find(k);
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw Error(fmt::format("{}: key '{}' is {}, beyond what ridge reads (at most 2^63 - 1)", origin_, k, v.dump()));
    if (v.is_number_integer()) return v.get<int64_t>();
    // An integral float in int64's range (3.0, 4096.0); converting anything else would be undefined.
    if (const double d = v.is_number_float() ? v.get<double>() : NAN; std::isfinite(d) && std::fabs(d) < 9.2e18 && d == std::trunc(d))
      return static_cast<int64_t>(d);
    throw type_error(k, "an integer");
  }
  Error type_error(const std::string& k, const char* want) const {
    return Error(fmt::format("{}: key '{}' must be {}, not {}", origin_, k, want, j_.at(k).dump()));
  }
  const json& j_;
  std::string origin_;
};

// The activation key `key` names (`fallback` when absent), in ridge's names; an unknown one is an error naming
// the file and the key.
std::string activation_of(const Keys& k, const std::string& key, const std::string& fallback) {
  const std::string hf = k.opt_string(key, fallback);
  if (hf == "silu" || hf == "swish") return "silu";
  if (hf == "gelu_new" || hf == "gelu_pytorch_tanh" || hf == "gelu_fast" || hf == "gelu_tanh") return "gelu_tanh";
  if (hf == "gelu") return "gelu";
  if (hf == "relu") return "relu";
  if (hf == "relu2") return "relu2";
  throw Error(fmt::format("{}: {} '{}' is not supported (silu, gelu, gelu_new, gelu_pytorch_tanh, relu, relu2)",
                          k.origin(), k.find(key) ? key : "the default activation", hf));
}

// The four keys every transformers config with HF's standard names has; num_kv_heads starts equal to num_heads.
void read_hf_shape(const Keys& k, LlmConfig& c) {
  c.vocab_size = k.req_int("vocab_size");
  c.hidden_size = k.req_int("hidden_size");
  c.num_layers = k.req_int("num_hidden_layers");
  c.num_heads = c.num_kv_heads = k.req_int("num_attention_heads");
}

// The attention pattern transformers' layer_types (one "sliding_attention" or "full_attention" per layer) lists:
// every_k 0 when every layer slides, k when exactly every k-th layer is full, -1 when none slides; full_first n
// when the first n layers are full and the rest slide (qwen2's max_window_layers written out).
struct LayerTypes {
  int64_t every_k = 0;
  int64_t full_first = 0;
};

LayerTypes layer_types_pattern(const json& types, const LlmConfig& c, const std::string& origin, const char* windowed) {
  const auto n = static_cast<size_t>(c.num_layers);
  if (!types.is_array() || types.size() != n)
    throw Error(fmt::format("{}: layer_types must list one attention type per layer ({}), not {}", origin, n,
                            types.dump().substr(0, 80)));
  std::vector<bool> full(n);
  for (size_t l = 0; l < n; ++l) {
    const std::string t = types[l].is_string() ? types[l].get<std::string>() : "";
    if (t != "full_attention" && t != windowed)
      throw Error(fmt::format("{}: layer_types[{}] must be \"full_attention\" or \"{}\", not {}", origin, l, windowed,
                              types[l].dump()));
    full[l] = t == "full_attention";
  }
  if (std::none_of(full.begin(), full.end(), [](bool f) { return f; })) return {0, 0};
  if (std::all_of(full.begin(), full.end(), [](bool f) { return f; })) return {-1, 0};
  for (size_t k = 1; k <= n; ++k) {
    bool every_kth = true;
    for (size_t l = 0; l < n && every_kth; ++l) every_kth = full[l] == ((l + 1) % k == 0);
    if (every_kth) return {static_cast<int64_t>(k), 0};
  }
  const auto first_sliding = static_cast<size_t>(std::find(full.begin(), full.end(), false) - full.begin());
  if (std::none_of(full.begin() + static_cast<std::ptrdiff_t>(first_sliding), full.end(), [](bool f) { return f; }))
    return {0, static_cast<int64_t>(first_sliding)};
  throw Error(fmt::format("{}: layer_types: only patterns with every k-th layer full_attention, or the first layers "
                          "full_attention and the rest {}, are supported", origin, windowed));
}

// A config's layer_types, when it has them, over the family's default pattern: every k-th layer global, the first
// n layers global, or no window at all when every layer is full_attention.
void read_layer_types(const Keys& k, LlmConfig& c, const char* windowed = "sliding_attention") {
  const json* types = k.find("layer_types");
  if (!types) return;
  const LayerTypes p = layer_types_pattern(*types, c, k.origin(), windowed);
  if (p.every_k < 0) {
    c.sliding_window = 0;
    return;
  }
  c.global_every = p.every_k;
  c.full_first_layers = p.full_first;
}

// llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gemma3_text, granite: RMSNorm, rotary,
// gated MLP, separate q/k/v (granite's scalar multipliers are graph ops: src/load/zoo/llm.cpp).
void read_llama_like(const Keys& k, LlmConfig& c) {
  const bool gemma = c.family.rfind("gemma", 0) == 0;
  read_hf_shape(k, c);
  c.num_kv_heads = k.opt_int("num_key_value_heads", c.num_heads);
  c.head_dim = k.opt_int("head_dim", 0);  // absent or null: hidden_size / num_attention_heads
  if (k.find("head_dim") && c.head_dim < 1)
    throw Error(fmt::format("{}: head_dim must be positive, not {}", k.origin(), c.head_dim));
  c.max_positions = k.opt_int("max_position_embeddings", 2048);
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", gemma);
  c.qkv_bias = c.o_bias = k.opt_bool("attention_bias", false);
  c.mlp_bias = k.opt_bool("mlp_bias", false);
  // Gemma's MLP uses hidden_activation, falling back to gelu_pytorch_tanh (not hidden_act) when it is unset.
  c.activation = gemma                         ? activation_of(k, "hidden_activation", "gelu_pytorch_tanh")
                 : k.find("hidden_activation") ? activation_of(k, "hidden_activation", "silu")
                                               : activation_of(k, "hidden_act", "silu");
  if (c.family == "mistral" || c.family == "mixtral") c.sliding_window = k.opt_int("sliding_window", 0);
  // Qwen2/Qwen3 (and their MoE variants): with use_sliding_window, layer i slides iff i >= max_window_layers
  // (transformers' default 28); newer configs list the pattern in layer_types, which takes precedence.
  if (c.family.rfind("qwen", 0) == 0 && k.opt_bool("use_sliding_window", false)) {
    c.sliding_window = k.opt_int("sliding_window", 0);
    c.full_first_layers = k.opt_int("max_window_layers", 28);
    if (c.full_first_layers < 0)
      throw Error(fmt::format("{}: max_window_layers must not be negative, not {}", k.origin(), c.full_first_layers));
    read_layer_types(k, c);
    if (c.full_first_layers >= c.num_layers) c.sliding_window = c.full_first_layers = 0;  // no layer slides
  }
  if (c.family == "qwen2" || c.family == "qwen2_moe") {
    c.qkv_bias = true;
    c.o_bias = false;
  }
  // Qwen3Attention: q_norm and k_norm over head_dim; q/k/v/o biases follow attention_bias
  if (c.family == "qwen3" || c.family == "qwen3_moe") c.qk_norm = LlmConfig::QkNorm::PerHead;
  if (gemma) {
    c.scale_embeddings = true;
    c.tied_embeddings = true;  // Gemma*ForCausalLM always ties lm_head to embed_tokens
  }
  if (c.family == "gemma2" || c.family == "gemma3_text") {
    // Gemma 2 and 3: 4 norms per layer, local (sliding) and global layers; Gemma 2 soft-caps the attention
    // scores and the logits, Gemma 3 normalizes each query and key head instead.
    c.sandwich_norms = true;
    c.sliding_window = k.opt_int("sliding_window", 4096);
    c.global_every = c.family == "gemma2" ? 2 : k.opt_int("sliding_window_pattern", 6);
    if (k.find("sliding_window_pattern") && c.family == "gemma3_text" && c.global_every < 1)
      throw Error(fmt::format("{}: sliding_window_pattern must be positive, not {} (every k-th layer is global)",
                              k.origin(), c.global_every));
    c.attn_softcap = k.opt_double("attn_logit_softcapping", c.family == "gemma2" ? 50.0 : 0.0);
    c.final_softcap = k.opt_double("final_logit_softcapping", c.family == "gemma2" ? 30.0 : 0.0);
    c.qk_norm = c.family == "gemma3_text" ? LlmConfig::QkNorm::PerHead : LlmConfig::QkNorm::None;
    read_layer_types(k, c);
    if (c.global_every < 0 || c.attn_softcap < 0 || c.final_softcap < 0)
      throw Error(fmt::format("{}: sliding_window_pattern and the soft-caps must not be negative", k.origin()));
  }
  if (c.family == "mixtral") {
    c.intermediate_size = k.req_int("intermediate_size");
    c.num_experts = k.req_int("num_local_experts");
    c.experts_per_token = k.req_int("num_experts_per_tok");
  } else if (c.family == "qwen2_moe" || c.family == "qwen3_moe") {
    c.intermediate_size = k.req_int("moe_intermediate_size");
    c.num_experts = k.req_int("num_experts");
    c.experts_per_token = k.req_int("num_experts_per_tok");
    if (c.family == "qwen2_moe") c.shared_expert_intermediate_size = k.opt_int("shared_expert_intermediate_size", 0);
    c.moe_every = k.opt_int("decoder_sparse_step", 1);
    if (c.moe_every != 1)
      throw Error(fmt::format("{}: decoder_sparse_step {} is not supported (only 1: every layer sparse)", k.origin(),
                              c.moe_every));
    if (const json* dense = k.find("mlp_only_layers"); dense && !(dense->is_array() && dense->empty()))
      throw Error(fmt::format("{}: mlp_only_layers {} is not supported (only []: every layer sparse)", k.origin(),
                              dense->dump()));
  } else {
    c.intermediate_size = k.req_int("intermediate_size");
  }
}

void read_gpt2(const Keys& k, LlmConfig& c) {
  c.vocab_size = k.req_int("vocab_size");
  c.hidden_size = k.req_int("n_embd");
  c.num_layers = k.req_int("n_layer");
  c.num_heads = c.num_kv_heads = k.req_int("n_head");
  c.max_positions = k.req_int("n_positions");
  c.intermediate_size = k.opt_int("n_inner", 4 * c.hidden_size);
  c.activation = activation_of(k, "activation_function", "gelu_new");
  c.norm = LlmNorm::LayerNorm;
  c.norm_bias = c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.gated_mlp = false;
  c.fused_qkv = true;
  c.tied_embeddings = true;
  c.position = LlmPosition::Learned;
}

void read_neox(const Keys& k, LlmConfig& c) {
  read_hf_shape(k, c);
  c.intermediate_size = k.req_int("intermediate_size");
  c.max_positions = k.opt_int("max_position_embeddings", 2048);
  c.rotary_fraction = k.opt_double("rotary_pct", 0.25);
  c.activation = activation_of(k, "hidden_act", "gelu");
  c.norm = LlmNorm::LayerNorm;
  c.norm_bias = c.mlp_bias = true;
  c.qkv_bias = c.o_bias = k.opt_bool("attention_bias", true);
  c.gated_mlp = false;
  c.fused_qkv = true;
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", false);
  c.parallel_residual = k.opt_bool("use_parallel_residual", true);
  c.parallel_norms = 2;  // input_layernorm and post_attention_layernorm exist either way
}

void read_falcon(const Keys& k, LlmConfig& c) {
  read_hf_shape(k, c);
  const bool new_arch = k.opt_bool("new_decoder_architecture", false);
  if (new_arch) c.num_kv_heads = k.opt_int("num_kv_heads", c.num_heads);
  else c.num_kv_heads = k.opt_bool("multi_query", true) ? 1 : c.num_heads;
  c.intermediate_size = k.opt_int("ffn_hidden_size", 4 * c.hidden_size);
  c.max_positions = k.opt_int("max_position_embeddings", 2048);
  if (k.opt_bool("alibi", false)) c.position = LlmPosition::Alibi;
  c.activation = activation_of(k, "activation", "gelu");
  c.norm = LlmNorm::LayerNorm;
  c.norm_bias = true;
  c.qkv_bias = c.o_bias = c.mlp_bias = k.opt_bool("bias", false);
  c.gated_mlp = false;
  c.fused_qkv = true;
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", true);
  c.parallel_residual = new_arch || k.opt_bool("parallel_attn", true);
  c.parallel_norms = new_arch ? static_cast<int>(k.opt_int("num_ln_in_parallel_attn", 2)) : 1;
}

void read_opt(const Keys& k, LlmConfig& c) {
  read_hf_shape(k, c);
  c.intermediate_size = k.req_int("ffn_dim");
  c.max_positions = k.opt_int("max_position_embeddings", 2048);
  c.position = LlmPosition::Learned;
  c.position_offset = 2;
  c.activation = activation_of(k, "activation_function", "relu");
  c.norm = LlmNorm::LayerNorm;
  c.norm_bias = true;  // elementwise_affine LayerNorm always has a bias in OPT
  c.qkv_bias = c.o_bias = c.mlp_bias = k.opt_bool("enable_bias", true);
  c.gated_mlp = false;
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", true);
  const int64_t proj = k.opt_int("word_embed_proj_dim", c.hidden_size);
  if (proj != c.hidden_size) c.embed_proj_dim = proj;
  if (!k.opt_bool("do_layer_norm_before", true))
    throw Error(fmt::format("{}: do_layer_norm_before false (OPT-350m post-norm) is not supported", k.origin()));
}

void read_phi(const Keys& k, LlmConfig& c) {
  read_hf_shape(k, c);
  c.num_kv_heads = k.opt_int("num_key_value_heads", c.num_heads);
  c.intermediate_size = k.req_int("intermediate_size");
  c.max_positions = k.opt_int("max_position_embeddings", 2048);
  c.rotary_fraction = k.opt_double("partial_rotary_factor", 0.5);
  c.activation = activation_of(k, "hidden_act", "gelu_new");
  c.norm = LlmNorm::LayerNorm;
  c.norm_bias = c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.gated_mlp = false;
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", false);
  c.lm_head_bias = true;
  c.parallel_residual = true;  // PhiDecoderLayer: attn and mlp both read input_layernorm's output
  c.parallel_norms = 1;
}

// phi3 (Phi3Config; Phi-3, Phi-3.5, Phi-4): llama-like (RMSNorm, rotary, SiLU-gated MLP, no biases) with one fused
// qkv_proj and one gate_up_proj, partial rotary (partial_rotary_factor, 1.0 unless set) and a sliding window
// when the config has one.
void read_phi3(const Keys& k, LlmConfig& c) {
  read_hf_shape(k, c);
  c.num_kv_heads = k.opt_int("num_key_value_heads", c.num_heads);
  c.intermediate_size = k.req_int("intermediate_size");
  c.max_positions = k.opt_int("max_position_embeddings", 4096);
  c.rotary_fraction = k.opt_double("partial_rotary_factor", 1.0);
  c.activation = activation_of(k, "hidden_act", "silu");
  c.fused_qkv = c.fused_gate_up = true;
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", false);
  c.sliding_window = k.opt_int("sliding_window", 0);
}

// Shared experts after `c.intermediate_size` became the routed experts' width: `key` (0..4096, `shared_default`)
// always-on experts of that width in one `shared_experts` MLP without a gate (deepseek, glm4_moe, ernie4_5_moe).
void read_shared_experts(const Keys& k, LlmConfig& c, const char* key, int64_t shared_default) {
  const int64_t shared = k.opt_int(key, shared_default);
  if (shared < 0 || shared > 4096)
    throw Error(fmt::format("{}: {} must be in 0..4096, not {}", k.origin(), key, shared));
  c.shared_expert_intermediate_size = shared * c.intermediate_size;
  c.shared_expert_gate = false;
}

// DeepSeek's MoE layout: n_shared_experts shared experts (read_shared_experts) and the first first_k_dense_replace
// layers dense (defaults as the family's config class has them).
void read_deepseek_experts(const Keys& k, LlmConfig& c, int64_t shared_default, int64_t dense_default) {
  read_shared_experts(k, c, "n_shared_experts", shared_default);
  c.first_dense_layers = k.opt_int("first_k_dense_replace", dense_default);
  if (c.first_dense_layers < 0)
    throw Error(fmt::format("{}: first_k_dense_replace must not be negative", k.origin()));
}

// deepseek_v2, deepseek_v3 (DeepseekV2Config, DeepseekV3Config): multi-head latent attention (q_lora_rank,
// kv_lora_rank, qk_nope_head_dim + qk_rope_head_dim query/key heads, v_head_dim value heads), RMSNorm, SiLU-gated
// MLPs; the first first_k_dense_replace layers dense (intermediate_size), the rest n_routed_experts of
// moe_intermediate_size (top num_experts_per_tok) plus n_shared_experts always on; v3 routes by sigmoid scores with a
// selection bias (e_score_correction_bias), v2 by softmax.
// deepseek_v32 (DeepseekV32Config, DeepSeek-V3.2) and glm_moe_dsa (GlmMoeDsaConfig, GLM-5) are deepseek_v3 with
// DeepSeek Sparse Attention: index_n_heads, index_head_dim, index_topk (their classes' defaults 64 / 32, 128, 2048),
// 3 dense layers by default, and mlp_layer_types ("dense" layers, then "sparse" ones) where given.
void read_deepseek_sparse_attention(const Keys& k, LlmConfig& c) {
  const bool glm = c.family == "glm_moe_dsa";
  c.index_heads = k.opt_int("index_n_heads", glm ? 32 : 64);
  c.index_head_dim = k.opt_int("index_head_dim", 128);
  c.index_topk = k.opt_int("index_topk", 2048);
  c.index_relu = !glm;
  if (c.q_lora_rank < 1)
    throw Error(fmt::format("{}: q_lora_rank must be positive (the sparse-attention indexer reads the query latent)",
                            k.origin()));
  if (c.index_heads < 1 || c.index_topk < 1 || c.index_head_dim <= c.qk_rope_head_dim)
    throw Error(fmt::format("{}: index_n_heads and index_topk must be positive and index_head_dim above "
                            "qk_rope_head_dim {} (the indexer rotates that many of its dims)", k.origin(),
                            c.qk_rope_head_dim));
  if (const json* types = k.find("mlp_layer_types"); types && !types->is_null()) {
    if (!types->is_array() || static_cast<int64_t>(types->size()) != c.num_layers)
      throw Error(fmt::format("{}: mlp_layer_types must list \"dense\" or \"sparse\" for each of the {} layers",
                              k.origin(), c.num_layers));
    int64_t dense = 0;
    bool sparse_seen = false;
    for (const json& t : *types) {
      const std::string kind = t.is_string() ? t.get<std::string>() : "";
      if (kind == "dense" && !sparse_seen) ++dense;
      else if (kind == "sparse") sparse_seen = true;
      else
        throw Error(fmt::format("{}: mlp_layer_types {} is not supported (dense layers first, then sparse ones)",
                                k.origin(), types->dump().substr(0, 80)));
    }
    if (k.find("first_k_dense_replace") && c.first_dense_layers != dense)
      throw Error(fmt::format("{}: mlp_layer_types has {} dense layers but first_k_dense_replace is {}", k.origin(),
                              dense, c.first_dense_layers));
    c.first_dense_layers = dense;
  }
}

void read_deepseek(const Keys& k, LlmConfig& c) {
  read_hf_shape(k, c);
  const bool sparse_attention = c.family == "deepseek_v32" || c.family == "glm_moe_dsa";
  c.num_kv_heads = c.num_heads;  // every head gets its own key and value from the latent (kv_b_proj)
  c.q_lora_rank = k.opt_int("q_lora_rank", 0);
  c.kv_lora_rank = k.req_int("kv_lora_rank");
  c.qk_rope_head_dim = k.req_int("qk_rope_head_dim");
  c.head_dim = k.req_int("qk_nope_head_dim") + c.qk_rope_head_dim;
  c.v_head_dim = k.req_int("v_head_dim");
  c.max_positions = k.opt_int("max_position_embeddings", 4096);
  c.activation = activation_of(k, "hidden_act", "silu");
  c.qkv_bias = c.o_bias = k.opt_bool("attention_bias", false);
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", false);
  c.intermediate_size = k.req_int("intermediate_size");
  c.num_experts = k.opt_int("n_routed_experts", 0);
  if (c.num_experts > 0) {
    c.dense_intermediate_size = c.intermediate_size;
    c.intermediate_size = k.req_int("moe_intermediate_size");
    c.experts_per_token = k.req_int("num_experts_per_tok");
    read_deepseek_experts(k, c, 0, sparse_attention ? 3 : 0);
    c.router_sigmoid = c.family == "deepseek_v3" || sparse_attention;
    c.moe_every = k.opt_int("moe_layer_freq", 1);
    if (c.moe_every != 1)
      throw Error(fmt::format("{}: moe_layer_freq {} is not supported (only 1)", k.origin(), c.moe_every));
  }
  if (c.q_lora_rank < 0 || c.kv_lora_rank < 1 || c.qk_rope_head_dim < 1 || c.v_head_dim < 1 || c.head_dim <= c.qk_rope_head_dim)
    throw Error(fmt::format("{}: kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim must be positive "
                            "(q_lora_rank 0 or more)", k.origin()));
  if (sparse_attention) read_deepseek_sparse_attention(k, c);
}

// gpt_oss (GptOssConfig; gpt-oss-20b, gpt-oss-120b): biased q/k/v/o projections with a learned sink logit per head,
// sliding-window layers alternating with full ones (layer_types), every layer an MoE of num_local_experts biased
// experts (fused gate_up_proj, clamped SwiGLU) behind a biased router whose top-k logits are softmaxed.
void read_gpt_oss(const Keys& k, LlmConfig& c) {
  read_hf_shape(k, c);
  c.num_kv_heads = k.opt_int("num_key_value_heads", c.num_heads);
  c.head_dim = k.opt_int("head_dim", 64);
  c.max_positions = k.opt_int("max_position_embeddings", 131072);
  c.qkv_bias = c.o_bias = k.opt_bool("attention_bias", true);
  c.attention_sinks = true;
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", false);
  c.intermediate_size = k.req_int("intermediate_size");
  c.num_experts = k.req_int("num_local_experts");
  c.experts_per_token = k.opt_int("num_experts_per_tok", k.opt_int("experts_per_token", 4));
  c.mlp_bias = c.router_bias = c.router_topk_softmax = c.clamped_swiglu = true;
  c.fused_gate_up = true;
  c.sliding_window = k.opt_int("sliding_window", 128);
  c.global_every = 2;  // even layers slide, odd ones attend to everything (GptOssConfig's default layer_types)
  read_layer_types(k, c);
}

// bloom (BloomConfig): ALiBi (no position table, so no length limit of its own), LayerNorm on the embeddings,
// fused qkv, biases everywhere, 4h GELU MLP, tied head. hidden_size may be written n_embed, layers n_layer, heads
// n_head (the published 176B config uses n_embed, n_layer and num_attention_heads).
void read_bloom(const Keys& k, LlmConfig& c) {
  c.vocab_size = k.req_int("vocab_size");
  c.hidden_size = k.req_int_any({"hidden_size", "n_embed"});
  c.num_layers = k.req_int_any({"n_layer", "num_hidden_layers"});
  c.num_heads = c.num_kv_heads = k.req_int_any({"n_head", "num_attention_heads"});
  c.intermediate_size = 4 * c.hidden_size;
  c.max_positions = k.opt_int("seq_length", int64_t{1} << 20);  // ALiBi extrapolates: no table bounds it
  c.position = LlmPosition::Alibi;
  c.activation = "gelu_tanh";  // bloom_gelu_forward: the tanh approximation
  c.norm = LlmNorm::LayerNorm;
  c.norm_bias = c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.gated_mlp = false;
  c.fused_qkv = true;
  c.embedding_norm = true;
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", true);
  if (k.opt_bool("apply_residual_connection_post_layernorm", false))
    throw Error(fmt::format("{}: apply_residual_connection_post_layernorm true is not supported", k.origin()));
}

// The head of an encoder, from architectures[0] (absent: the base model, as AutoModel loads it): the class must be
// the family's prefix plus a supported suffix; anything else is a one-line error naming the architecture.
void read_encoder_head(const Keys& k, LlmConfig& c) {
  c.architecture = c.module_prefix + "Model";
  if (const json* arch = k.find("architectures")) {
    if (!arch->is_array() || arch->empty() || !(*arch)[0].is_string())
      throw Error(fmt::format("{}: key 'architectures' must be a list of class names, not {}", k.origin(),
                              arch->dump().substr(0, 80)));
    c.architecture = (*arch)[0].get<std::string>();
  }
  const std::string& a = c.architecture;
  const bool bert = c.family == "bert", distil = c.family == "distilbert";
  struct Suffix {
    const char* name;
    LlmHead head;
  };
  const Suffix suffixes[] = {{"Model", LlmHead::Base},
                             {"ForMaskedLM", LlmHead::MaskedLm},
                             {"ForPreTraining", LlmHead::PreTraining},
                             {"ForSequenceClassification", LlmHead::SequenceClassification},
                             {"ForTokenClassification", LlmHead::TokenClassification},
                             {"ForQuestionAnswering", LlmHead::QuestionAnswering}};
  const Suffix* found = nullptr;
  if (a.rfind(c.module_prefix, 0) == 0)
    for (const auto& s : suffixes)
      if (a.compare(c.module_prefix.size(), std::string::npos, s.name) == 0 && (s.head != LlmHead::PreTraining || bert))
        found = &s;
  if (!found)
    throw Error(fmt::format("{}: architectures[0] '{}' is not supported for model_type '{}' (supported: {}Model, "
                            "{}ForMaskedLM, {}{}ForSequenceClassification, {}ForTokenClassification, "
                            "{}ForQuestionAnswering)",
                            k.origin(), a, c.family, c.module_prefix, c.module_prefix,
                            bert ? "BertForPreTraining, " : "", c.module_prefix, c.module_prefix, c.module_prefix));
  c.head = found->head;
  // BertModel and RobertaModel have a pooler (add_pooling_layer=True), BertForPreTraining and
  // BertForSequenceClassification use it; RobertaForSequenceClassification has its own dense + tanh instead.
  c.pooler = !distil && (c.head == LlmHead::Base || c.head == LlmHead::PreTraining ||
                         (bert && c.head == LlmHead::SequenceClassification));
  if (const json* labels = k.find("id2label"); labels && labels->is_object() && !labels->empty())
    c.num_labels = static_cast<int64_t>(labels->size());
  else
    c.num_labels = k.opt_int("num_labels", 2);  // positive and bounded: validate_llm_config
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", true);  // the MLM decoder reuses the word embeddings
}

// The settings every BERT-family encoder shares: LayerNorm with bias after each residual (post-norm), separate
// biased q/k/v, biased output and MLP projections, learned absolute positions, a normed sum of embeddings,
// bidirectional attention, no final norm.
void encoder_layout(LlmConfig& c) {
  c.causal = false;
  c.post_norm = true;
  c.embedding_norm = true;
  c.norm = LlmNorm::LayerNorm;
  c.norm_bias = c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.gated_mlp = false;
  c.position = LlmPosition::Learned;
}

// bert, roberta, xlm-roberta (BertConfig, RobertaConfig, XLMRobertaConfig): word + position + token_type
// embeddings. RoBERTa numbers positions from pad_token_id + 1 (default 1 + 1): its max_position_embeddings rows
// (514 in roberta-base) hold 512 usable positions.
void read_bert(const Keys& k, LlmConfig& c) {
  read_hf_shape(k, c);
  encoder_layout(c);
  c.intermediate_size = k.req_int("intermediate_size");
  c.max_positions = k.opt_int("max_position_embeddings", 512);
  c.token_type_vocab = k.opt_int("type_vocab_size", 2);  // 0..2^20: validate_llm_config
  if (c.family != "bert") {
    const int64_t pad = k.opt_int("pad_token_id", 1);
    if (pad < 0 || pad >= c.max_positions)
      throw Error(fmt::format("{}: pad_token_id {} leaves no position of max_position_embeddings {} (RoBERTa numbers "
                              "positions from pad_token_id + 1)", k.origin(), pad, c.max_positions));
    c.position_offset = pad + 1;
    c.max_positions -= c.position_offset;
  }
  c.activation = activation_of(k, "hidden_act", "gelu");
  // relative_key(_query) adds a distance embedding per layer; is_decoder makes BERT a causal decoder with a cache.
  if (const std::string pe = k.opt_string("position_embedding_type", "absolute"); pe != "absolute")
    throw Error(fmt::format("{}: position_embedding_type '{}' is not supported (only absolute)", k.origin(), pe));
  if (k.opt_bool("is_decoder", false) || k.opt_bool("add_cross_attention", false))
    throw Error(fmt::format("{}: is_decoder / add_cross_attention true (a {} decoder) is not supported; ridge models "
                            "{} as an encoder", k.origin(), c.family, c.family));
  read_encoder_head(k, c);
}

// distilbert (DistilBertConfig): dim, n_layers, n_heads, hidden_dim; word + position embeddings (sinusoidal_pos_embds
// fills the position table with fixed values; it stays a parameter of the module), no token types.
void read_distilbert(const Keys& k, LlmConfig& c) {
  c.vocab_size = k.req_int("vocab_size");
  c.hidden_size = k.req_int("dim");
  c.num_layers = k.req_int("n_layers");
  c.num_heads = c.num_kv_heads = k.req_int("n_heads");
  c.intermediate_size = k.req_int("hidden_dim");
  encoder_layout(c);
  c.max_positions = k.opt_int("max_position_embeddings", 512);
  k.opt_bool("sinusoidal_pos_embds", false);  // checked for its type: it changes no count
  c.activation = activation_of(k, "activation", "gelu");
  read_encoder_head(k, c);
}

// gptj, codegen (GPTJConfig, CodeGenConfig): gpt2's key names; LayerNorm; one shared ln_1 feeding attention and the
// MLP in parallel; q/k/v/out_proj (codegen: one qkv_proj) without biases; fc_in/fc_out with biases; rotary_dim
// rotated dims per head (an integer; null: all of them); an untied lm_head with a bias.
void read_gptj(const Keys& k, LlmConfig& c) {
  c.vocab_size = k.req_int("vocab_size");
  c.hidden_size = k.req_int("n_embd");
  c.num_layers = k.req_int("n_layer");
  c.num_heads = c.num_kv_heads = k.req_int("n_head");
  c.max_positions = k.opt_int("n_positions", 2048);
  c.intermediate_size = k.opt_int("n_inner", 4 * c.hidden_size);
  c.activation = activation_of(k, "activation_function", "gelu_new");
  if (k.find("rotary_dim")) {
    c.rotary_dims = k.opt_int("rotary_dim", 64);
    if (c.rotary_dims < 2 || c.rotary_dims % 2 != 0)
      throw Error(fmt::format("{}: rotary_dim must be positive and even, not {}", k.origin(), c.rotary_dims));
  } else if (!k.null("rotary_dim")) {
    c.rotary_dims = 64;  // absent: the config class's default; null: every dim of the head rotates
  }
  c.norm = LlmNorm::LayerNorm;
  c.norm_bias = c.mlp_bias = true;
  c.gated_mlp = false;
  c.fused_qkv = c.family == "codegen";
  c.lm_head_bias = true;
  c.parallel_residual = true;
  c.parallel_norms = 1;
  if (k.opt_bool("tie_word_embeddings", false))
    throw Error(fmt::format("{}: tie_word_embeddings true is not supported (the lm_head has a bias)", k.origin()));
  // CodeGenAttention splits qkv_proj's output in mp_num = 4 shards of whole heads.
  if (c.family == "codegen" && c.num_heads % 4 != 0)
    throw Error(fmt::format("{}: n_head {} is not a multiple of 4 (CodeGen splits qkv_proj in 4 groups of heads)",
                            k.origin(), c.num_heads));
}

// gpt_bigcode (GPTBigCodeConfig; SantaCoder, StarCoder): gpt2's keys and module names with nn.Linear layers, learned
// positions, tied head; multi_query (default true): one key/value head, c_attn of hidden + 2 head_dim outputs.
void read_gpt_bigcode(const Keys& k, LlmConfig& c) {
  c.vocab_size = k.req_int("vocab_size");
  c.hidden_size = k.req_int("n_embd");
  c.num_layers = k.req_int("n_layer");
  c.num_heads = k.req_int("n_head");
  c.num_kv_heads = k.opt_bool("multi_query", true) ? 1 : c.num_heads;
  c.max_positions = k.req_int("n_positions");
  c.intermediate_size = k.opt_int("n_inner", 4 * c.hidden_size);
  c.activation = activation_of(k, "activation_function", "gelu_pytorch_tanh");
  c.norm = LlmNorm::LayerNorm;
  c.norm_bias = c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.gated_mlp = false;
  c.fused_qkv = true;
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", true);
  c.position = LlmPosition::Learned;
  if (k.opt_bool("add_cross_attention", false))
    throw Error(fmt::format("{}: add_cross_attention true is not supported (decoder-only models)", k.origin()));
}

// starcoder2 (Starcoder2Config): mistral's attention (GQA, rotary, sliding_window) with use_bias on q/k/v/o and on
// the plain c_fc -> act -> c_proj MLP, LayerNorms with biases, and a head tied by default.
void read_starcoder2(const Keys& k, LlmConfig& c) {
  read_hf_shape(k, c);
  c.num_kv_heads = k.opt_int("num_key_value_heads", 2);
  c.head_dim = k.opt_int("head_dim", 0);  // absent: hidden_size / num_attention_heads
  if (k.find("head_dim") && c.head_dim < 1)
    throw Error(fmt::format("{}: head_dim must be positive, not {}", k.origin(), c.head_dim));
  c.intermediate_size = k.req_int("intermediate_size");
  c.max_positions = k.opt_int("max_position_embeddings", 4096);
  c.activation = activation_of(k, "hidden_act", "gelu_pytorch_tanh");
  c.norm = LlmNorm::LayerNorm;
  c.norm_bias = true;
  c.qkv_bias = c.o_bias = c.mlp_bias = k.opt_bool("use_bias", true);
  c.gated_mlp = false;
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", true);
  c.sliding_window = k.opt_int("sliding_window", 0);
}

// stablelm (StableLmConfig; StableLM-3B-4E1T, StableLM 2): LayerNorms with biases, partial rotary
// (partial_rotary_factor 0.25), q/k/v biases with use_qkv_bias, o_proj without, a SiLU-gated MLP without biases,
// untied; use_parallel_residual: attention and MLP read one input_layernorm. qk_layernorm (per-head LayerNorms
// without biases) is refused.
void read_stablelm(const Keys& k, LlmConfig& c) {
  read_hf_shape(k, c);
  c.num_kv_heads = k.opt_int("num_key_value_heads", 32);
  c.intermediate_size = k.req_int("intermediate_size");
  c.max_positions = k.opt_int("max_position_embeddings", 4096);
  c.rotary_fraction = k.opt_double("partial_rotary_factor", 0.25);
  c.activation = activation_of(k, "hidden_act", "silu");
  c.norm = LlmNorm::LayerNorm;
  c.norm_bias = true;
  c.qkv_bias = k.opt_bool("use_qkv_bias", false);
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", false);
  c.parallel_residual = k.opt_bool("use_parallel_residual", false);
  c.parallel_norms = 1;  // StableLmDecoderLayer has no post_attention_layernorm then
  if (k.opt_bool("qk_layernorm", false))
    throw Error(fmt::format("{}: qk_layernorm true is not supported (per-head LayerNorms without bias)", k.origin()));
}

// cohere (CohereConfig; Command R): llama's keys, modules and SiLU-gated MLP (read_llama_like, with CohereConfig's
// defaults of 8192 positions and a tied head), but LayerNorms with a weight and no bias (CohereLayerNorm), one
// input_layernorm feeding attention and the MLP in parallel (x + attn(ln(x)) + mlp(ln(x))), and logits multiplied by
// logit_scale (a graph op). Its rotary embedding rotates interleaved pairs, which costs what rotate_half costs.
// use_qk_norm (per-head LayerNorms of a [heads, head_dim] weight) is refused.
void read_cohere(const Keys& k, LlmConfig& c) {
  read_llama_like(k, c);
  c.max_positions = k.opt_int("max_position_embeddings", 8192);
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", true);
  c.norm = LlmNorm::LayerNorm;
  c.norm_bias = false;
  c.parallel_residual = true;
  c.parallel_norms = 1;
  c.logit_scale = k.opt_double("logit_scale", 0.0625);
  if (c.logit_scale == 0) c.logit_scale = 1;  // a multiply by 0 is still a multiply: keep the op
  if (k.opt_bool("use_qk_norm", false))
    throw Error(fmt::format("{}: use_qk_norm true is not supported (per-head LayerNorms of q and k)", k.origin()));
}

// olmo (OlmoConfig; OLMo 1): llama's keys, modules and SiLU-gated MLP (read_llama_like) with non-parametric
// LayerNorms (OlmoLayerNorm: no weight, no bias) and, with clip_qkv, q, k and v clamped after their projections.
void read_olmo(const Keys& k, LlmConfig& c) {
  read_llama_like(k, c);
  c.norm = LlmNorm::LayerNorm;
  c.norm_scale = c.norm_bias = false;
  c.clip_qkv = k.opt_double("clip_qkv", 0);
  if (c.clip_qkv < 0) throw Error(fmt::format("{}: clip_qkv must not be negative, not {}", k.origin(), c.clip_qkv));
}

// olmo2, olmo3 (Olmo2Config, Olmo3Config; OLMo 2 and 3): llama's keys, modules and SiLU-gated MLP
// (read_llama_like) with RMSNorms after attention and after the MLP instead of before them (Olmo2DecoderLayer:
// x + post_attention_layernorm(attn(x)), then + post_feedforward_layernorm(mlp(.))) and q_norm / k_norm over the
// whole q and k projections (heads x head_dim wide). olmo3: every layer but every fourth slides a window of
// sliding_window (4096) tokens, or as layer_types lists them.
void read_olmo2(const Keys& k, LlmConfig& c) {
  read_llama_like(k, c);
  c.qk_norm = LlmConfig::QkNorm::Whole;
  c.output_norms = true;
  if (c.family == "olmo3") {
    c.sliding_window = k.null("sliding_window") ? 0 : k.opt_int("sliding_window", 4096);  // null: no window
    c.global_every = 4;
    read_layer_types(k, c);
  }
}

// olmoe (OlmoeConfig; OLMoE): llama's pre-norm layers (read_llama_like) with OLMo 2's q_norm / k_norm over the whole
// q and k projections, OLMo's clip_qkv, and an MoE block in every layer: a bias-free `gate` router softmaxed over
// all num_experts (64), num_experts_per_tok (8) experts of intermediate_size with a gated MLP each, no shared expert.
// norm_topk_prob renormalizes the k weights only (k values per token: not counted, as for qwen2_moe).
void read_olmoe(const Keys& k, LlmConfig& c) {
  read_llama_like(k, c);
  c.max_positions = k.opt_int("max_position_embeddings", 4096);
  c.qk_norm = LlmConfig::QkNorm::Whole;
  c.num_experts = k.opt_int("num_experts", 64);
  c.experts_per_token = k.opt_int("num_experts_per_tok", 8);
  c.clip_qkv = k.opt_double("clip_qkv", 0);
  if (c.clip_qkv < 0) throw Error(fmt::format("{}: clip_qkv must not be negative, not {}", k.origin(), c.clip_qkv));
}

// glm, glm4 (GlmConfig, Glm4Config; GLM-4, GLM-4-0414): llama's keys and attention with GlmConfig's defaults (head_dim
// 128, 131,072 positions, q/k/v biases with attention_bias true, o_proj without), half of each head rotated
// (partial_rotary_factor 0.5; the interleaved rotation costs what rotate_half costs) and Phi-3's MLP (one gate_up_proj
// chunked in two). glm4 adds a norm after attention and after the MLP (post_self_attn_layernorm,
// post_mlp_layernorm: 4 per layer).
void read_glm(const Keys& k, LlmConfig& c) {
  read_llama_like(k, c);
  c.head_dim = k.opt_int("head_dim", 128);
  if (c.head_dim < 1) throw Error(fmt::format("{}: head_dim must be positive, not {}", k.origin(), c.head_dim));
  c.max_positions = k.opt_int("max_position_embeddings", 131072);
  c.qkv_bias = k.opt_bool("attention_bias", true);
  c.o_bias = false;
  c.rotary_fraction = k.opt_double("partial_rotary_factor", 0.5);
  c.fused_gate_up = true;
  c.sandwich_norms = c.family == "glm4";
}

// num_key_value_heads and head_dim with a config class's defaults (`kv_heads`, `head_dim`); null, as transformers
// reads None: every head its own key and value, and head_dim = hidden_size / num_attention_heads.
void read_head_defaults(const Keys& k, LlmConfig& c, int64_t kv_heads, int64_t head_dim) {
  c.num_kv_heads = k.null("num_key_value_heads") ? c.num_heads : k.opt_int("num_key_value_heads", kv_heads);
  c.head_dim = k.null("head_dim") ? 0 : k.opt_int("head_dim", head_dim);
  if (k.find("head_dim") && c.head_dim < 1)
    throw Error(fmt::format("{}: head_dim must be positive, not {}", k.origin(), c.head_dim));
}

// glm4_moe (Glm4MoeConfig; GLM-4.5, GLM-4.5-Air, GLM-4.6): llama's pre-norm layers (two norms) with GLM's attention
// (q/k/v biases with attention_bias, default false here; o_proj never has one; half of each head rotated) and,
// with use_qk_norm, per-head q_norm / k_norm; separate gate/up/down MLPs. The first first_k_dense_replace (1) layers
// are dense (intermediate_size), the rest DeepSeek-V3's MoE: n_routed_experts (128) of moe_intermediate_size (1408),
// num_experts_per_tok (8) chosen by sigmoid scores plus the selection bias e_score_correction_bias, and
// n_shared_experts (1) always on. routed_scaling_factor, norm_topk_prob and the group selection (n_group,
// topk_group) weigh each token's k scores and change no shape. The multi-token-prediction layer
// (num_nextn_predict_layers) is not part of the model transformers builds and is not counted.
void read_glm4_moe(const Keys& k, LlmConfig& c) {
  read_llama_like(k, c);
  c.num_kv_heads = k.opt_int("num_key_value_heads", 8);
  c.max_positions = k.opt_int("max_position_embeddings", 131072);
  c.qkv_bias = k.opt_bool("attention_bias", false);
  c.o_bias = c.mlp_bias = false;
  c.rotary_fraction = k.opt_double("partial_rotary_factor", 0.5);
  if (k.opt_bool("use_qk_norm", false)) c.qk_norm = LlmConfig::QkNorm::PerHead;
  c.dense_intermediate_size = c.intermediate_size;
  c.intermediate_size = k.opt_int("moe_intermediate_size", 1408);
  c.num_experts = k.opt_int("n_routed_experts", 128);
  c.experts_per_token = k.opt_int("num_experts_per_tok", 8);
  c.router_sigmoid = true;
  read_deepseek_experts(k, c, 1, 1);
}

// minimax_m2 (MiniMaxM2Config; MiniMax-M2): llama's pre-norm layers, bias-free q/k/v/o with RMSNorms over the whole q
// and k projections (FlexOlmo's attention, always present: the checkpoint's qk_norm_type "per_layer"), head_dim 128,
// rotary_dim rotated dims per head (or partial_rotary_factor; neither: all), and a Mixtral-layout MoE in every layer
// (`block_sparse_moe`: `gate`, experts w1/w2/w3) of num_local_experts (256) experts of intermediate_size, the top
// num_experts_per_tok (8) chosen by sigmoid scores plus e_score_correction_bias; no shared expert. The
// multi-token-prediction modules (num_mtp_modules) are not part of the model transformers builds.
void read_minimax_m2(const Keys& k, LlmConfig& c) {
  read_hf_shape(k, c);
  read_head_defaults(k, c, 8, 128);
  c.intermediate_size = k.req_int("intermediate_size");
  c.max_positions = k.opt_int("max_position_embeddings", 196608);
  c.activation = activation_of(k, "hidden_act", "silu");
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", false);
  c.qk_norm = LlmConfig::QkNorm::Whole;
  if (k.find("rotary_dim")) {
    c.rotary_dims = k.req_int("rotary_dim");
    if (c.rotary_dims < 2 || c.rotary_dims % 2 != 0)
      throw Error(fmt::format("{}: rotary_dim must be positive and even, not {}", k.origin(), c.rotary_dims));
  } else {
    c.rotary_fraction = k.opt_double("partial_rotary_factor", 1.0);
  }
  c.num_experts = k.opt_int("num_local_experts", 256);
  c.experts_per_token = k.opt_int("num_experts_per_tok", 8);
  c.router_sigmoid = true;
}

// NoPE layers (smollm3, llama4_text): no_rope_layers lists 1 (rotary) or 0 (none) per layer; without it (or, where
// the config class reads an empty list so, `empty_is_absent`) every no_rope_layer_interval-th (4) layer has none.
void read_nope_layers(const Keys& k, LlmConfig& c, bool empty_is_absent) {
  if (c.num_layers < 1) return;  // validate_llm_config names the key
  const json* flags = k.find("no_rope_layers");
  if (flags && !(empty_is_absent && flags->is_array() && flags->empty())) {
    if (!flags->is_array() || flags->size() < static_cast<size_t>(c.num_layers))
      throw Error(fmt::format("{}: no_rope_layers must list 1 (rotary) or 0 (NoPE) for each of the {} layers, not {}",
                              k.origin(), c.num_layers, flags->dump().substr(0, 80)));
    for (int64_t l = 0; l < c.num_layers; ++l) {
      const json& f = (*flags)[static_cast<size_t>(l)];
      if (!f.is_number_integer() || (f.get<int64_t>() != 0 && f.get<int64_t>() != 1))
        throw Error(fmt::format("{}: no_rope_layers[{}] must be 1 (rotary) or 0 (NoPE), not {}", k.origin(), l,
                                f.dump().substr(0, 40)));
      if (f.get<int64_t>() == 0) c.nope_layers.push_back(l);
    }
    return;
  }
  const int64_t every = k.opt_int("no_rope_layer_interval", 4);
  if (every < 1)
    throw Error(fmt::format("{}: no_rope_layer_interval must be positive, not {}", k.origin(), every));
  for (int64_t l = every - 1; l < c.num_layers && l < 4096; l += every) c.nope_layers.push_back(l);
}

// llama4_text (Llama4TextConfig: the language model of Llama 4 Scout and Maverick, a llama4 config's text_config):
// llama's pre-norm layers without biases (attention_bias), NoPE layers (read_nope_layers), and in the rotary layers
// a weightless L2 norm of each query and key head after the rotation (use_qk_norm) and chunked attention: a query
// sees the positions of its own attention_chunk_size (8,192) chunk up to itself; the NoPE layers attend to every
// position, their queries scaled by a per-position temperature (attn_temperature_tuning). Every
// interleave_moe_layer_step-th layer is an MoE (`feed_forward`): num_local_experts (16) experts of
// intermediate_size, a `router` whose top num_experts_per_tok (1) logits go through a sigmoid and scale the
// chosen experts' inputs, and an always-on `shared_expert` of the same width; the other layers a dense MLP of
// intermediate_size_mlp (16,384).
void read_llama4_text(const Keys& k, LlmConfig& c) {
  read_hf_shape(k, c);
  read_head_defaults(k, c, 8, 128);
  c.max_positions = k.opt_int("max_position_embeddings", 131072);
  c.activation = activation_of(k, "hidden_act", "silu");
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", false);
  c.qkv_bias = c.o_bias = k.opt_bool("attention_bias", false);
  c.intermediate_size = k.req_int("intermediate_size");
  c.dense_intermediate_size = k.opt_int("intermediate_size_mlp", 16384);
  c.num_experts = k.opt_int("num_local_experts", 16);
  c.experts_per_token = k.opt_int("num_experts_per_tok", 1);
  c.shared_expert_intermediate_size = c.intermediate_size;
  c.shared_expert_gate = false;
  c.router_topk_sigmoid = true;
  c.moe_every = k.opt_int("interleave_moe_layer_step", 1);
  if (c.moe_every < 1)
    throw Error(fmt::format("{}: interleave_moe_layer_step must be positive, not {}", k.origin(), c.moe_every));
  if (const json* listed = k.find("moe_layers")) {  // must be the step's own pattern
    json expected = json::array();
    for (int64_t l = c.moe_every - 1; l < c.num_layers && l < 4096; l += c.moe_every) expected.push_back(l);
    if (*listed != expected)
      throw Error(fmt::format("{}: moe_layers {} is not supported (only every interleave_moe_layer_step-th layer: {})",
                              k.origin(), listed->dump().substr(0, 80), expected.dump().substr(0, 80)));
  }
  read_nope_layers(k, c, true);  // Llama4TextConfig: `no_rope_layers if no_rope_layers else default`
  if (k.opt_bool("use_qk_norm", true)) c.qk_norm = LlmConfig::QkNorm::L2PerHead;
  c.attn_temperature_tuning = k.opt_bool("attn_temperature_tuning", true);
  c.sliding_window = k.opt_int("attention_chunk_size", 8192);  // null: no chunking
  c.chunked_attention = c.sliding_window > 0;
  if (!c.chunked_attention || c.num_layers < 1) return;
  // The chunked layers are the rotary ones (or as layer_types lists them): the NoPE layers must be every k-th.
  if (k.find("layer_types")) {
    read_layer_types(k, c, "chunked_attention");
    c.chunked_attention = c.sliding_window > 0;
    return;
  }
  const std::vector<int64_t>& nope = c.nope_layers;
  const int64_t every = nope.empty() ? 0 : nope.front() + 1;
  for (size_t i = 0; i < nope.size(); ++i)
    if (nope[i] != every * static_cast<int64_t>(i + 1) - 1 || (i + 1 == nope.size() && nope[i] + every < c.num_layers))
      throw Error(fmt::format("{}: attention_chunk_size with NoPE layers other than every k-th layer is not supported "
                              "(no_rope_layers)", k.origin()));
  c.global_every = every;
}

// exaone4 (Exaone4Config; EXAONE 4.0): OLMo 2's layers (norms after attention and after the MLP, none before) with
// per-head q_norm / k_norm and llama's bias-free projections; with a sliding_window (4096; null: none) every
// sliding_window_pattern-th layer (4, or a string such as "LLLG": local layers, then one global) attends to every
// position without a rotary embedding (NoPE), the others slide and rotate. layer_types, when listed, decide.
void read_exaone4(const Keys& k, LlmConfig& c) {
  read_llama_like(k, c);
  c.qkv_bias = c.o_bias = c.mlp_bias = false;
  c.output_norms = true;
  c.qk_norm = LlmConfig::QkNorm::PerHead;
  c.sliding_window = k.null("sliding_window") ? 0 : k.opt_int("sliding_window", 4096);
  if (c.sliding_window <= 0 || c.num_layers < 1) return;  // validate_llm_config names a negative window
  if (k.find("layer_types")) {
    read_layer_types(k, c);
  } else if (const json* p = k.find("sliding_window_pattern"); p && p->is_string()) {
    const std::string pattern = p->get<std::string>();  // "LLLG": every len-th layer global
    const bool one_global_last = !pattern.empty() && pattern.back() == 'G' &&
                                 pattern.find_first_not_of('L') == pattern.size() - 1;
    if (!one_global_last)
      throw Error(fmt::format("{}: sliding_window_pattern \"{}\" is not supported (only local layers then one global: "
                              "\"LLLG\")", k.origin(), pattern.substr(0, 40)));
    c.global_every = static_cast<int64_t>(pattern.size());
  } else {
    c.global_every = k.opt_int("sliding_window_pattern", 4);
    if (c.global_every < 1)
      throw Error(fmt::format("{}: sliding_window_pattern must be positive, not {}", k.origin(), c.global_every));
  }
  // Exaone4Attention rotates q and k only in the sliding layers once a window is configured: the others are NoPE.
  for (int64_t l = 0; l < c.num_layers && l < 4096; ++l)
    if (c.window_of(l) == 0) c.nope_layers.push_back(l);
}

// ernie4_5, ernie4_5_moe (Ernie4_5Config, Ernie4_5_MoeConfig; ERNIE 4.5): llama's layers with use_bias on every
// projection (q/k/v/o, MLPs, lm_head), a tied head by default, and (moe) every moe_layer_interval-th layer from
// moe_layer_start_index (1) to moe_layer_end_index (-1: the last) an MoE: moe_num_experts (64) experts of
// moe_intermediate_size (1536), the top moe_k (6) of the softmax scores plus a selection bias (moe_statics), and
// moe_num_shared_experts (2) always on in one `shared_experts` MLP. The multi-token-prediction layers are not
// part of the model transformers builds.
void read_ernie4_5(const Keys& k, LlmConfig& c) {
  read_llama_like(k, c);
  c.max_positions = k.opt_int("max_position_embeddings", 131072);
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", true);
  c.qkv_bias = c.o_bias = c.mlp_bias = c.lm_head_bias = k.opt_bool("use_bias", false);
  if (c.family != "ernie4_5_moe" || c.num_layers < 1) return;  // validate_llm_config names the layer count
  c.num_kv_heads = k.null("num_key_value_heads") ? c.num_heads : k.opt_int("num_key_value_heads", 4);
  c.dense_intermediate_size = c.intermediate_size;
  c.intermediate_size = k.opt_int("moe_intermediate_size", 1536);
  c.num_experts = k.opt_int("moe_num_experts", 64);
  c.experts_per_token = k.opt_int("moe_k", 6);
  read_shared_experts(k, c, "moe_num_shared_experts", 2);
  c.softmax_selection_bias = true;
  c.first_dense_layers = k.opt_int("moe_layer_start_index", 1);
  c.last_sparse_layer = k.opt_int("moe_layer_end_index", -1);
  if (c.last_sparse_layer == -1) c.last_sparse_layer = c.num_layers - 1;
  c.moe_every = k.opt_int("moe_layer_interval", 1);
  if (c.first_dense_layers < 0 || c.last_sparse_layer < 0 || c.moe_every < 1)
    throw Error(fmt::format("{}: moe_layer_start_index {}, moe_layer_end_index {} and moe_layer_interval {} do not "
                            "describe MoE layers (start and end 0 or more, end -1 for the last, interval positive)",
                            k.origin(), c.first_dense_layers, c.last_sparse_layer, c.moe_every));
}

// seed_oss (SeedOssConfig; Seed-OSS-36B): llama's layers with SeedOssConfig's defaults (8 key/value heads, head_dim
// 128, 524,288 positions), q/k/v biases (attention_bias, true) and an o_proj bias only with attention_out_bias.
// Its attention and residual dropouts are not ops (as for every model).
void read_seed_oss(const Keys& k, LlmConfig& c) {
  read_llama_like(k, c);
  read_head_defaults(k, c, 8, 128);
  c.max_positions = k.opt_int("max_position_embeddings", 524288);
  c.qkv_bias = k.opt_bool("attention_bias", true);
  c.o_bias = k.opt_bool("attention_out_bias", false);
}

// smollm3 (SmolLM3Config): llama's modules (read_llama_like) with SmolLM3Config's defaults (4 key/value heads, 32,768
// positions, a tied head) and NoPE layers that skip the rotary embedding: no_rope_layers lists 1 (rotary) or 0 (none)
// per layer, or, without it, every no_rope_layer_interval-th (4) layer has none. use_sliding_window (windows on the
// NoPE layers only) is refused.
void read_smollm3(const Keys& k, LlmConfig& c) {
  read_llama_like(k, c);
  c.num_kv_heads = k.null("num_key_value_heads") ? c.num_heads : k.opt_int("num_key_value_heads", 4);
  c.max_positions = k.opt_int("max_position_embeddings", 32768);
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", true);
  if (k.opt_bool("use_sliding_window", false))
    throw Error(fmt::format("{}: use_sliding_window true is not supported (a window on the NoPE layers only)",
                            k.origin()));
  read_nope_layers(k, c, false);
}

// arcee (ArceeConfig; AFM): llama's attention and norms (read_llama_like) with a plain MLP, up_proj -> relu2
// (relu(x)^2, hidden_act's default) -> down_proj, and 4,096 positions by default.
void read_arcee(const Keys& k, LlmConfig& c) {
  read_llama_like(k, c);
  c.activation = activation_of(k, "hidden_act", "relu2");
  c.gated_mlp = false;
  c.max_positions = k.opt_int("max_position_embeddings", 4096);
}

// Where a family's config states its Mamba-2 mixers' sizes: each key (a legacy spelling read first when the config
// has it, as transformers reads it) and its config class's default.
struct MambaKeys {
  const char *state, *groups, *groups_legacy, *conv, *conv_legacy, *chunk, *chunk_legacy, *conv_bias, *conv_bias_legacy,
      *proj_bias;
  int64_t state_def, groups_def, chunk_def;
};
void read_mamba_keys(const Keys& k, LlmConfig& c, const MambaKeys& m) {
  auto either = [&](const char* key, const char* legacy, int64_t def) {
    return legacy && k.find(legacy) ? k.opt_int(legacy, def) : k.opt_int(key, def);
  };
  c.ssm_state = k.opt_int(m.state, m.state_def);
  c.ssm_groups = either(m.groups, m.groups_legacy, m.groups_def);
  c.conv_kernel = either(m.conv, m.conv_legacy, 4);
  c.ssm_chunk = either(m.chunk, m.chunk_legacy, m.chunk_def);
  c.conv_bias = m.conv_bias_legacy && k.find(m.conv_bias_legacy) ? k.opt_bool(m.conv_bias_legacy, true)
                                                                  : k.opt_bool(m.conv_bias, true);
  c.ssm_proj_bias = k.opt_bool(m.proj_bias, false);
}

// nemotron_h (NemotronHConfig; Nemotron-H, NVIDIA-Nemotron-Nano-v2, Nemotron 3): one mixer per layer behind an
// RMSNorm and a residual add, listed by layers_block_type ("linear_attention" or "mamba", "full_attention" or
// "attention", "mlp", "moe") or hybrid_override_pattern (M, *, -, E): Mamba-2 mixers (mamba_num_heads x
// mamba_head_dim inner width, n_groups groups of B and C of ssm_state_size, a conv1d of conv_kernel taps, chunk_size),
// attention without positional encoding (JambaAttention; q/k/v/o biases with attention_bias), MLPs up_proj -> relu2
// (mlp_hidden_act) -> down_proj of intermediate_size, and DeepSeek-V3-style MoE blocks: n_routed_experts non-gated
// experts of moe_intermediate_size, num_experts_per_tok chosen by sigmoid scores with a selection bias, and one
// shared MLP of moe_shared_expert_intermediate_size. NemotronHConfig's defaults where keys are absent; the legacy
// mamba_* spellings of the Mamba keys are read as transformers reads them. Refused: moe_latent_size (latent expert
// projections), sliding_window, a mamba_hidden_act other than silu. The multi-token-prediction layers
// (num_nextn_predict_layers) are not built by transformers and not counted.
void read_nemotron_h(const Keys& k, LlmConfig& c) {
  c.vocab_size = k.opt_int("vocab_size", 131072);
  c.hidden_size = k.opt_int("hidden_size", 4096);
  const json* list = k.find("layers_block_type");
  const json* pattern = k.find("hybrid_override_pattern");
  if (list && !list->is_array())
    throw Error(fmt::format("{}: layers_block_type must be a list of block types, not {}", k.origin(),
                            list->dump().substr(0, 80)));
  if (pattern && !pattern->is_string())
    throw Error(fmt::format("{}: hybrid_override_pattern must be a string of M, *, - and E, not {}", k.origin(),
                            pattern->dump().substr(0, 80)));
  if (list) {
    for (size_t l = 0; l < list->size(); ++l) {
      const std::string t = (*list)[l].is_string() ? (*list)[l].get<std::string>() : "";
      if (t == "linear_attention" || t == "mamba") c.blocks.push_back(LlmBlock::Mamba);
      else if (t == "full_attention" || t == "attention") c.blocks.push_back(LlmBlock::Attention);
      else if (t == "mlp") c.blocks.push_back(LlmBlock::Mlp);
      else if (t == "moe") c.blocks.push_back(LlmBlock::Moe);
      else
        throw Error(fmt::format("{}: layers_block_type[{}] must be \"linear_attention\", \"full_attention\", \"mlp\" "
                                "or \"moe\", not {}", k.origin(), l, (*list)[l].dump().substr(0, 40)));
    }
  } else if (pattern) {
    const std::string p = pattern->get<std::string>();
    for (size_t l = 0; l < p.size(); ++l) {
      const char ch = p[l];
      if (ch == 'M') c.blocks.push_back(LlmBlock::Mamba);
      else if (ch == '*') c.blocks.push_back(LlmBlock::Attention);
      else if (ch == '-') c.blocks.push_back(LlmBlock::Mlp);
      else if (ch == 'E') c.blocks.push_back(LlmBlock::Moe);
      else
        throw Error(fmt::format("{}: hybrid_override_pattern[{}] is '{}', not one of M (Mamba-2), * (attention), "
                                "- (MLP), E (MoE)", k.origin(), l, std::string(1, ch)));
    }
  } else {
    c.blocks = {LlmBlock::Mamba, LlmBlock::Moe, LlmBlock::Attention, LlmBlock::Mlp};  // NemotronHConfig's default
  }
  if (c.blocks.empty())
    throw Error(fmt::format("{}: {} lists no layer", k.origin(), list ? "layers_block_type" : "hybrid_override_pattern"));
  if (c.blocks.size() > 4096)
    throw Error(fmt::format("{}: {} layers are beyond what ridge builds (at most 4096)", k.origin(), c.blocks.size()));
  c.num_layers = static_cast<int64_t>(c.blocks.size());  // transformers counts the list (num_hidden_layers is not read)
  c.num_heads = k.opt_int("num_attention_heads", 32);
  read_head_defaults(k, c, 8, 128);
  c.max_positions = k.opt_int("max_position_embeddings", 4096);
  c.qkv_bias = c.o_bias = k.opt_bool("attention_bias", false);
  c.position = LlmPosition::None;
  c.norm = LlmNorm::RMSNorm;
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", false);
  if (k.find("sliding_window"))
    throw Error(fmt::format("{}: sliding_window {} is not supported for nemotron_h", k.origin(),
                            k.find("sliding_window")->dump()));
  c.gated_mlp = false;
  c.activation = activation_of(k, "mlp_hidden_act", "relu2");
  c.mlp_bias = k.opt_bool("mlp_bias", false);
  c.intermediate_size = k.opt_int("intermediate_size", 21504);
  c.ssm_heads = k.opt_int("mamba_num_heads", 128);
  c.ssm_head_dim = k.opt_int("mamba_head_dim", 64);
  read_mamba_keys(k, c, {"ssm_state_size", "n_groups", "mamba_n_groups", "conv_kernel", "mamba_d_conv", "chunk_size",
                         "mamba_chunk_size", "use_conv_bias", "mamba_conv_bias", "use_bias", 128, 8, 128});
  if (const std::string act = k.opt_string("mamba_hidden_act", "silu"); act != "silu" && act != "swish")
    throw Error(fmt::format("{}: mamba_hidden_act '{}' is not supported (silu)", k.origin(), act));
  const std::string cache = k.opt_string("mamba_ssm_cache_dtype", "float32");
  if (cache != "float32" && cache != "bfloat16" && cache != "float16")
    throw Error(fmt::format("{}: mamba_ssm_cache_dtype '{}' is not float32, bfloat16 or float16", k.origin(), cache));
  c.ssm_state_fp32 = cache == "float32";
  if (c.blocks_of(LlmBlock::Moe) > 0) {
    if (k.find("moe_latent_size"))
      throw Error(fmt::format("{}: moe_latent_size {} (latent expert projections) is not supported", k.origin(),
                              k.find("moe_latent_size")->dump()));
    c.dense_intermediate_size = c.intermediate_size;
    c.intermediate_size = k.opt_int("moe_intermediate_size", 7688);
    c.num_experts = k.opt_int("n_routed_experts", 8);
    c.experts_per_token = k.opt_int("num_experts_per_tok", 2);
    c.shared_expert_intermediate_size = k.opt_int("moe_shared_expert_intermediate_size", 7688);
    c.shared_expert_gate = false;
    c.router_sigmoid = true;
  }
}

// A hybrid decoder's layer_types: one entry per layer, `mixer` (that block) or `attention` (LlmBlock::Attention).
std::vector<LlmBlock> read_layer_types_list(const Keys& k, const LlmConfig& c, const char* mixer, LlmBlock block,
                                            const char* attention = "attention") {
  const json* types = k.find("layer_types");
  if (!types->is_array() || types->size() != static_cast<size_t>(c.num_layers))
    throw Error(fmt::format("{}: layer_types must list \"{}\" or \"{}\" for each of the {} layers, not {}", k.origin(),
                            mixer, attention, c.num_layers, types->dump().substr(0, 80)));
  std::vector<LlmBlock> blocks;
  for (size_t l = 0; l < types->size(); ++l) {
    const std::string t = (*types)[l].is_string() ? (*types)[l].get<std::string>() : "";
    if (t != mixer && t != attention)
      throw Error(fmt::format("{}: layer_types[{}] must be \"{}\" or \"{}\", not {}", k.origin(), l, mixer, attention,
                              (*types)[l].dump().substr(0, 40)));
    blocks.push_back(t == mixer ? block : LlmBlock::Attention);
  }
  return blocks;
}

// num_hidden_layers (`def` when absent) for the readers that size a per-layer list from it: 1..4096.
int64_t read_layer_count(const Keys& k, int64_t def) {
  const int64_t n = k.opt_int("num_hidden_layers", def);
  if (n < 1 || n > 4096) throw Error(fmt::format("{}: num_hidden_layers {} is not in 1..4096", k.origin(), n));
  return n;
}

// A Mamba-2 mixer's inner width, int(expand x hidden_size) as transformers computes it (`expand_key`, default 2).
int64_t mamba_inner_width(const Keys& k, const LlmConfig& c, const char* expand_key) {
  const double expand = k.opt_double(expand_key, 2), inner = std::floor(expand * static_cast<double>(c.hidden_size));
  if (!(inner >= 1 && inner <= double(int64_t{1} << 26)))
    throw Error(fmt::format("{}: {} {} x hidden_size {} is not a width ridge builds", k.origin(), expand_key, expand,
                            c.hidden_size));
  return static_cast<int64_t>(inner);
}

// The mixer's heads x head_dim must be its inner width (the checkpoints' in_proj and out_proj have that width).
void check_mamba_width(const Keys& k, const LlmConfig& c, int64_t inner, const char* heads_key, const char* dim_key,
                       const char* expand_key) {
  if (c.ssm_heads < 1 || c.ssm_head_dim < 1 || c.ssm_heads * c.ssm_head_dim != inner)
    throw Error(fmt::format("{}: {} {} x {} {} is not {} {} x hidden_size {} = {}", k.origin(), heads_key, c.ssm_heads,
                            dim_key, c.ssm_head_dim, expand_key, k.opt_double(expand_key, 2), c.hidden_size, inner));
}

// The keys of a model made of state-space layers only (mamba2, mamba, falcon_mamba): hidden_act (only silu),
// tie_word_embeddings (`tied` when absent) and max_position_embeddings (absent: 2^20, no attention limits it).
void read_ssm_only_keys(const Keys& k, LlmConfig& c, bool tied) {
  if (const std::string act = k.opt_string("hidden_act", "silu"); act != "silu" && act != "swish")
    throw Error(fmt::format("{}: hidden_act '{}' is not supported (silu)", k.origin(), act));
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", tied);
  c.max_positions = k.opt_int("max_position_embeddings", int64_t{1} << 20);
  c.position = LlmPosition::None;
  c.norm = LlmNorm::RMSNorm;
  // No attention or MLP layer: their sizes are never used (set to 1 so that the shared checks hold).
  c.num_heads = c.num_kv_heads = c.head_dim = 1;
  c.intermediate_size = 1;
}

// A Mamba-1 mixer's dt rank from `key`: an integer, or "auto" (absent too): ceil(hidden_size / 16).
int64_t read_dt_rank(const Keys& k, const LlmConfig& c, const char* key) {
  const int64_t auto_rank = (c.hidden_size + 15) / 16;
  const json* r = k.find(key);
  if (!r || !r->is_string()) return k.opt_int(key, auto_rank);
  if (r->get<std::string>() != "auto")
    throw Error(fmt::format("{}: {} must be an integer or \"auto\", not {}", k.origin(), key, r->dump()));
  return auto_rank;
}

// mamba2 (Mamba2Config; Mamba-Codestral-7B, state-spaces/mamba2-*): every layer a Mamba-2 mixer (the nemotron_h
// mixer above, Mamba2Mixer's names) behind an RMSNorm; num_heads (128) x head_dim (64) must equal expand (2) x
// hidden_size, as the checkpoints have it; state_size (128), n_groups (8), conv_kernel (4), chunk_size (256), use_bias,
// use_conv_bias, tie_word_embeddings (false). No attention, so no positional limit: max_position_embeddings, when
// absent, is taken as 2^20. hidden_act other than silu is refused; rms_norm and residual_in_fp32 change no cost.
void read_mamba2(const Keys& k, LlmConfig& c) {
  c.vocab_size = k.opt_int("vocab_size", 32768);
  c.hidden_size = k.opt_int("hidden_size", 4096);
  c.num_layers = read_layer_count(k, 64);
  c.blocks.assign(static_cast<size_t>(c.num_layers), LlmBlock::Mamba);
  c.ssm_heads = k.opt_int("num_heads", 128);
  c.ssm_head_dim = k.opt_int("head_dim", 64);
  read_mamba_keys(k, c, {"state_size", "n_groups", nullptr, "conv_kernel", nullptr, "chunk_size", nullptr,
                         "use_conv_bias", nullptr, "use_bias", 128, 8, 256});
  check_mamba_width(k, c, mamba_inner_width(k, c, "expand"), "num_heads", "head_dim", "expand");
  read_ssm_only_keys(k, c, false);
}

// granitemoehybrid (GraniteMoeHybridConfig; Granite 4.0-H): Granite's decoder layers (embedding_multiplier,
// residual_multiplier, logits_scaling, attention_multiplier; RMSNorm before the mixer and before the feed-forward
// part) whose mixer is a Mamba-2 mixer (BambaMixer: mamba_expand x hidden_size inner width in mamba_n_heads heads of
// mamba_d_head, "auto": inner / heads; mamba_n_groups, mamba_d_state, mamba_d_conv, mamba_chunk_size, mamba_conv_bias,
// mamba_proj_bias) or attention (GQA; rotary only with position_embedding_type "rope"), as layer_types lists ("mamba",
// "attention"; absent: every layer Mamba-2). The feed-forward part: num_local_experts gated experts of
// intermediate_size (GraniteMoe's router: a softmax over each token's top num_experts_per_tok logits) plus the shared
// MLP of shared_intermediate_size (input_linear to gate and up, output_linear); with no experts the shared MLP alone.
void read_granitemoehybrid(const Keys& k, LlmConfig& c) {
  c.vocab_size = k.opt_int("vocab_size", 32000);
  c.hidden_size = k.opt_int("hidden_size", 4096);
  c.num_layers = read_layer_count(k, 32);
  c.num_heads = k.opt_int("num_attention_heads", 32);
  c.num_kv_heads = k.null("num_key_value_heads") ? c.num_heads : k.opt_int("num_key_value_heads", c.num_heads);
  c.max_positions = k.opt_int("max_position_embeddings", 2048);
  c.qkv_bias = c.o_bias = k.opt_bool("attention_bias", false);
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", false);
  c.activation = activation_of(k, "hidden_act", "silu");
  const std::string position = k.opt_string("position_embedding_type", "nope");
  if (position != "nope" && position != "rope")
    throw Error(fmt::format("{}: position_embedding_type '{}' is not \"nope\" or \"rope\"", k.origin(), position));
  c.position = position == "rope" ? LlmPosition::Rotary : LlmPosition::None;
  c.hybrid_decoder = true;
  if (k.find("layer_types"))
    c.blocks = read_layer_types_list(k, c, "mamba", LlmBlock::Mamba);
  else
    c.blocks.assign(static_cast<size_t>(c.num_layers), LlmBlock::Mamba);
  c.ssm_heads = k.opt_int("mamba_n_heads", 128);
  const int64_t inner = mamba_inner_width(k, c, "mamba_expand");
  const int64_t auto_head_dim = inner / std::max<int64_t>(1, c.ssm_heads);
  if (const json* d = k.find("mamba_d_head"); d && d->is_string()) {
    if (d->get<std::string>() != "auto")
      throw Error(fmt::format("{}: mamba_d_head must be an integer or \"auto\", not {}", k.origin(), d->dump()));
    c.ssm_head_dim = auto_head_dim;
  } else {
    c.ssm_head_dim = k.opt_int("mamba_d_head", auto_head_dim);
  }
  check_mamba_width(k, c, inner, "mamba_n_heads", "mamba_d_head", "mamba_expand");
  read_mamba_keys(k, c, {"mamba_d_state", "mamba_n_groups", nullptr, "mamba_d_conv", nullptr, "mamba_chunk_size",
                         nullptr, "mamba_conv_bias", nullptr, "mamba_proj_bias", 256, 1, 256});
  c.num_experts = k.opt_int("num_local_experts", 8);
  if (c.num_experts < 0)
    throw Error(fmt::format("{}: num_local_experts {} is negative (0: the shared MLP alone)", k.origin(), c.num_experts));
  c.experts_per_token = k.opt_int("num_experts_per_tok", 2);
  c.router_topk_softmax = true;
  const int64_t shared = k.opt_int("shared_intermediate_size", 1024);
  if (c.num_experts > 0) {
    c.intermediate_size = k.opt_int("intermediate_size", 11008);
    c.shared_expert_intermediate_size = shared;
    c.shared_expert_gate = false;
  } else {
    c.num_experts = 0;
    c.intermediate_size = shared;  // the shared MLP is the layer's only feed-forward part
  }
}

// qwen3_next (Qwen3NextConfig; Qwen3-Next-80B-A3B, Qwen3-Coder-Next): decoder layers (two RMSNorms) whose mixer is a
// Gated DeltaNet (linear_attention: linear_num_key_heads (16) x linear_key_head_dim (128) queries and keys,
// linear_num_value_heads (32) x linear_value_head_dim (128) values, a conv1d of linear_conv_kernel_dim (4) taps) or
// gated attention (full_attention: q_proj twice as wide, the second half a sigmoid gate on the output; per-head
// q_norm and k_norm; partial_rotary_factor 0.25 of head_dim 256 rotated), as layer_types lists them, else every
// full_attention_interval-th (4) layer attends. The feed-forward part: qwen2_moe's sparse block (num_experts 512 of
// moe_intermediate_size 512, num_experts_per_tok 10, a shared expert of shared_expert_intermediate_size 512 behind a
// sigmoid gate) in every decoder_sparse_step-th layer, else an MLP of intermediate_size; num_experts 0: every layer
// an MLP. Qwen3NextConfig's defaults where keys are absent. The norms are Gemma-style (1 + weight): the same
// parameters. The checkpoints' multi-token-prediction weights (mtp.*) are not loaded by transformers, nor counted.
// qwen3_5_text (Qwen3.5's dense language models) and qwen3_5_moe_text (its MoE ones) are the same layers with the
// DeltaNet's projections as four Linears (in_proj_qkv, in_proj_z, in_proj_b, in_proj_a) and their own defaults: a
// dense MLP of intermediate_size (12288) in every qwen3_5_text layer, the sparse block (256 experts, 8 per token) in
// every qwen3_5_moe_text layer (their configs have no decoder_sparse_step, mlp_only_layers or, for the dense ones,
// expert keys: transformers deletes them).
void read_qwen3_next(const Keys& k, LlmConfig& c) {
  const bool dense35 = c.family == "qwen3_5_text", moe35 = c.family == "qwen3_5_moe_text";
  c.vocab_size = k.opt_int("vocab_size", dense35 || moe35 ? 248320 : 151936);
  c.hidden_size = k.opt_int("hidden_size", dense35 ? 4096 : 2048);
  c.num_layers = read_layer_count(k, dense35 ? 32 : moe35 ? 40 : 48);
  c.num_heads = k.opt_int("num_attention_heads", 16);
  read_head_defaults(k, c, dense35 ? 4 : 2, 256);
  c.max_positions = k.opt_int("max_position_embeddings", 32768);
  c.qkv_bias = c.o_bias = k.opt_bool("attention_bias", false);
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", false);
  c.activation = activation_of(k, "hidden_act", "silu");
  c.qk_norm = LlmConfig::QkNorm::PerHead;
  c.attn_output_gate = true;
  // partial_rotary_factor at the top level, or inside rope_parameters as newer transformers writes it
  c.rotary_fraction = k.opt_double("partial_rotary_factor", 0.25);
  if (const json* rope = k.find("rope_parameters"); rope && rope->is_object() && !k.find("partial_rotary_factor")) {
    const Keys r(*rope, k.origin() + ": rope_parameters");
    c.rotary_fraction = r.opt_double("partial_rotary_factor", 0.25);
  }
  c.hybrid_decoder = true;
  if (k.find("layer_types")) {
    c.blocks = read_layer_types_list(k, c, "linear_attention", LlmBlock::DeltaNet, "full_attention");
  } else {
    const int64_t every = k.opt_int("full_attention_interval", 4);
    if (every < 1)
      throw Error(fmt::format("{}: full_attention_interval must be positive, not {}", k.origin(), every));
    for (int64_t l = 0; l < c.num_layers; ++l)
      c.blocks.push_back((l + 1) % every != 0 ? LlmBlock::DeltaNet : LlmBlock::Attention);
  }
  c.gdn_key_heads = k.opt_int("linear_num_key_heads", 16);
  c.gdn_value_heads = k.opt_int("linear_num_value_heads", 32);
  c.gdn_key_dim = k.opt_int("linear_key_head_dim", 128);
  c.gdn_value_dim = k.opt_int("linear_value_head_dim", 128);
  c.conv_kernel = k.opt_int("linear_conv_kernel_dim", 4);
  if (c.activation != "silu")
    throw Error(fmt::format("{}: hidden_act '{}' is not supported (silu: the Gated DeltaNet's conv1d activation)",
                            k.origin(), c.activation));
  c.num_experts = dense35 ? 0 : k.opt_int("num_experts", moe35 ? 256 : 512);
  if (c.num_experts < 0)
    throw Error(fmt::format("{}: num_experts {} is negative (0: every layer an MLP)", k.origin(), c.num_experts));
  if (c.num_experts > 0) {
    if (!moe35) c.dense_intermediate_size = k.opt_int("intermediate_size", 5632);
    c.intermediate_size = k.opt_int("moe_intermediate_size", 512);
    c.experts_per_token = k.opt_int("num_experts_per_tok", moe35 ? 8 : 10);
    c.shared_expert_intermediate_size = k.opt_int("shared_expert_intermediate_size", 512);
    if (moe35) return;  // every layer sparse
    c.moe_every = k.opt_int("decoder_sparse_step", 1);
    if (const json* dense = k.find("mlp_only_layers"); dense && !(dense->is_array() && dense->empty()))
      throw Error(fmt::format("{}: mlp_only_layers {} is not supported (only []: every decoder_sparse_step-th layer "
                              "sparse)", k.origin(), dense->dump().substr(0, 80)));
  } else {
    c.intermediate_size = k.opt_int("intermediate_size", dense35 ? 12288 : 5632);
  }
}

// mamba (MambaConfig; state-spaces/mamba-*-hf) and falcon_mamba (FalconMambaConfig; FalconMamba-7B): every layer a
// Mamba-1 mixer behind an RMSNorm (MambaMixer's module names): intermediate_size = int(expand (2) x hidden_size),
// state_size (16), conv_kernel (4), time_step_rank ("auto": ceil(hidden_size / 16)), use_bias (false), use_conv_bias
// (true); vocab_size (50280), hidden_size (768), num_hidden_layers (32), tie_word_embeddings (true: PretrainedConfig's
// default). falcon_mamba normalises B, C and dt after x_proj (RMS without a weight). No attention, so no positional
// limit: max_position_embeddings, when absent, is 2^20. hidden_act other than silu is refused; residual_in_fp32 and
// the time-step initialisation change no cost.
void read_mamba(const Keys& k, LlmConfig& c) {
  c.vocab_size = k.opt_int("vocab_size", 50280);
  c.hidden_size = k.opt_int("hidden_size", 768);
  c.num_layers = read_layer_count(k, 32);
  c.blocks.assign(static_cast<size_t>(c.num_layers), LlmBlock::Mamba1);
  c.mamba1_inner = mamba_inner_width(k, c, "expand");
  c.ssm_state = k.opt_int("state_size", 16);
  c.conv_kernel = k.opt_int("conv_kernel", 4);
  c.conv_bias = k.opt_bool("use_conv_bias", true);
  c.ssm_proj_bias = k.opt_bool("use_bias", false);
  c.dt_rank = read_dt_rank(k, c, "time_step_rank");
  if (c.family == "falcon_mamba") c.mamba1_norms = LlmConfig::Mamba1Norms::Weightless;
  read_ssm_only_keys(k, c, true);
}

// jamba (JambaConfig; Jamba-v0.1, AI21-Jamba-1.5/1.6/1.7-Mini and -Large): decoder layers (input_layernorm,
// pre_ff_layernorm) whose mixer is attention (layer l with l % attn_layer_period (8) == attn_layer_offset (4): GQA,
// no positional encoding) or a Mamba-1 mixer (`mamba`: mamba_expand (2) x hidden_size channels, mamba_d_state (16),
// mamba_d_conv (4), mamba_dt_rank ("auto": ceil(hidden_size / 16)), mamba_conv_bias (true), mamba_proj_bias (false),
// and RMSNorms with weights on dt, B and C), then the feed-forward part: a sparse block (a router Linear, softmax,
// num_experts (16) gated experts of intermediate_size (14336), num_experts_per_tok (2)) in the layers l with
// l % expert_layer_period (2) == expert_layer_offset (1), else a gated MLP of intermediate_size. vocab_size (65536),
// hidden_size (4096), num_hidden_layers (32), num_attention_heads (32), num_key_value_heads (8),
// tie_word_embeddings (false). Refused: a sliding_window, an expert_layer_offset other than period - 1.
void read_jamba(const Keys& k, LlmConfig& c) {
  c.vocab_size = k.opt_int("vocab_size", 65536);
  c.hidden_size = k.opt_int("hidden_size", 4096);
  c.num_layers = read_layer_count(k, 32);
  c.num_heads = k.opt_int("num_attention_heads", 32);
  c.num_kv_heads = k.null("num_key_value_heads") ? c.num_heads : k.opt_int("num_key_value_heads", 8);
  c.max_positions = k.opt_int("max_position_embeddings", 262144);
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", false);
  c.activation = activation_of(k, "hidden_act", "silu");
  if (c.activation != "silu")
    throw Error(fmt::format("{}: hidden_act '{}' is not supported (silu: the Mamba mixers' activation)", k.origin(),
                            c.activation));
  c.position = LlmPosition::None;
  if (const json* w = k.find("sliding_window"); w && !w->is_null())
    throw Error(fmt::format("{}: sliding_window {} is not supported for jamba", k.origin(), w->dump().substr(0, 40)));
  c.hybrid_decoder = true;
  const int64_t attn_period = k.opt_int("attn_layer_period", 8), attn_offset = k.opt_int("attn_layer_offset", 4);
  if (attn_period < 1 || attn_offset < 0 || attn_offset >= attn_period)
    throw Error(fmt::format("{}: attn_layer_offset {} is not in 0..attn_layer_period {} - 1", k.origin(), attn_offset,
                            attn_period));
  for (int64_t l = 0; l < c.num_layers; ++l)
    c.blocks.push_back(l % attn_period == attn_offset ? LlmBlock::Attention : LlmBlock::Mamba1);
  c.mamba1_inner = mamba_inner_width(k, c, "mamba_expand");
  c.ssm_state = k.opt_int("mamba_d_state", 16);
  c.conv_kernel = k.opt_int("mamba_d_conv", 4);
  c.conv_bias = k.opt_bool("mamba_conv_bias", true);
  c.ssm_proj_bias = k.opt_bool("mamba_proj_bias", false);
  c.dt_rank = read_dt_rank(k, c, "mamba_dt_rank");
  c.mamba1_norms = LlmConfig::Mamba1Norms::Weighted;
  c.intermediate_size = k.opt_int("intermediate_size", 14336);
  c.num_experts = k.opt_int("num_experts", 16);
  if (c.num_experts < 1)
    throw Error(fmt::format("{}: num_experts {} must be positive (1: every layer a dense MLP)", k.origin(),
                            c.num_experts));
  if (c.num_experts == 1) {
    c.num_experts = 0;  // JambaConfig: a layer with one expert is a dense MLP
    return;
  }
  c.experts_per_token = k.opt_int("num_experts_per_tok", 2);
  c.moe_every = k.opt_int("expert_layer_period", 2);
  if (const int64_t offset = k.opt_int("expert_layer_offset", 1); c.moe_every < 1 || offset != c.moe_every - 1)
    throw Error(fmt::format("{}: expert_layer_offset {} with expert_layer_period {} is not supported (only period - 1: "
                            "every period-th layer sparse)", k.origin(), offset, c.moe_every));
}

struct Family {
  const char* model_type;
  const char* prefix;
  void (*read)(const Keys&, LlmConfig&);
};

constexpr Family kFamilies[] = {
    {"llama", "Llama", &read_llama_like},     {"mistral", "Mistral", &read_llama_like},
    {"mixtral", "Mixtral", &read_llama_like}, {"qwen2", "Qwen2", &read_llama_like},
    {"qwen2_moe", "Qwen2Moe", &read_llama_like}, {"qwen3", "Qwen3", &read_llama_like},
    {"qwen3_moe", "Qwen3Moe", &read_llama_like}, {"gemma", "Gemma", &read_llama_like},
    {"gemma2", "Gemma2", &read_llama_like},   {"gemma3_text", "Gemma3", &read_llama_like},
    {"deepseek_v2", "DeepseekV2", &read_deepseek}, {"deepseek_v3", "DeepseekV3", &read_deepseek},
    {"deepseek_v32", "DeepseekV32", &read_deepseek}, {"glm_moe_dsa", "GlmMoeDsa", &read_deepseek},
    {"gpt_oss", "GptOss", &read_gpt_oss},
    {"phi", "Phi", &read_phi},                {"phi3", "Phi3", &read_phi3},
    {"gpt2", "GPT2", &read_gpt2},
    {"gpt_neox", "GPTNeoX", &read_neox},      {"falcon", "Falcon", &read_falcon},
    {"opt", "OPT", &read_opt},                {"bloom", "Bloom", &read_bloom},
    {"bert", "Bert", &read_bert},             {"roberta", "Roberta", &read_bert},
    {"xlm-roberta", "XLMRoberta", &read_bert}, {"distilbert", "DistilBert", &read_distilbert},
    {"gptj", "GPTJ", &read_gptj},             {"codegen", "CodeGen", &read_gptj},
    {"gpt_bigcode", "GPTBigCode", &read_gpt_bigcode},
    {"starcoder2", "Starcoder2", &read_starcoder2}, {"stablelm", "StableLm", &read_stablelm},
    {"granite", "Granite", &read_llama_like},
    {"cohere", "Cohere", &read_cohere},       {"olmo", "Olmo", &read_olmo},
    {"olmo2", "Olmo2", &read_olmo2},          {"olmo3", "Olmo3", &read_olmo2},
    {"olmoe", "Olmoe", &read_olmoe},
    {"glm", "Glm", &read_glm},                {"glm4", "Glm4", &read_glm},
    {"glm4_moe", "Glm4Moe", &read_glm4_moe}, {"minimax_m2", "MiniMaxM2", &read_minimax_m2},
    {"llama4_text", "Llama4Text", &read_llama4_text}, {"exaone4", "Exaone4", &read_exaone4},
    {"ernie4_5", "Ernie4_5", &read_ernie4_5},       {"ernie4_5_moe", "Ernie4_5_Moe", &read_ernie4_5},
    {"seed_oss", "SeedOss", &read_seed_oss},
    {"smollm3", "SmolLM3", &read_smollm3},    {"arcee", "Arcee", &read_arcee},
    {"nemotron_h", "NemotronH", &read_nemotron_h}, {"mamba2", "Mamba2", &read_mamba2},
    {"granitemoehybrid", "GraniteMoeHybrid", &read_granitemoehybrid},
    {"qwen3_next", "Qwen3Next", &read_qwen3_next},
    {"qwen3_5_text", "Qwen3_5", &read_qwen3_next}, {"qwen3_5_moe_text", "Qwen3_5Moe", &read_qwen3_next},
    {"mamba", "Mamba", &read_mamba},          {"falcon_mamba", "FalconMamba", &read_mamba},
    {"jamba", "Jamba", &read_jamba},
};

// The config key a family states its routed-expert count in.
const char* experts_key(const LlmConfig& c) {
  return c.family == "mixtral" || c.family == "gpt_oss" || c.family == "minimax_m2" || c.family == "llama4_text"
             ? "num_local_experts"
         : c.family.rfind("deepseek", 0) == 0 || c.family == "glm4_moe" ? "n_routed_experts"
         : c.family == "ernie4_5_moe"                                    ? "moe_num_experts"
                                                        : "num_experts";
}

}  // namespace

void validate_llm_config(const LlmConfig& c, const std::string& origin) {
  // DistilBERT names its sizes dim, n_layers, n_heads and hidden_dim: errors name the key its config has.
  const bool distil = c.family == "distilbert";
  auto key = [&](const char* k) -> const char* {
    if (!distil) return k;
    const std::string_view s = k;
    return s == "hidden_size" ? "dim" : s == "num_hidden_layers" ? "n_layers" : s == "num_attention_heads" ? "n_heads"
           : s == "intermediate_size" ? "hidden_dim" : k;
  };
  auto positive = [&](int64_t v, const char* name) {
    if (v < 1) throw Error(fmt::format("{}: {} must be positive, not {}", origin, key(name), v));
  };
  positive(c.vocab_size, "vocab_size");
  positive(c.hidden_size, "hidden_size");
  positive(c.num_layers, "num_hidden_layers");
  positive(c.num_heads, "num_attention_heads");
  positive(c.num_kv_heads, "num_key_value_heads");
  positive(c.head_dim, "head_dim");
  positive(c.intermediate_size, "intermediate_size");
  positive(c.max_positions, "max_position_embeddings");
  // Graphs have one node group per layer, head and expert: absurd sizes are refused before building.
  auto at_most = [&](int64_t v, int64_t cap, const char* name) {
    if (v > cap) throw Error(fmt::format("{}: {} {} is beyond what ridge builds (at most {})", origin, key(name), v, cap));
  };
  at_most(c.num_layers, 4096, "num_hidden_layers");
  at_most(c.num_experts, 4096, experts_key(c));
  at_most(c.hidden_size, int64_t{1} << 24, "hidden_size");
  at_most(c.vocab_size, int64_t{1} << 30, "vocab_size");
  at_most(c.intermediate_size, int64_t{1} << 26, "intermediate_size");
  at_most(c.num_heads, int64_t{1} << 16, "num_attention_heads");
  at_most(c.head_dim, int64_t{1} << 16, "head_dim");
  at_most(c.max_positions, int64_t{1} << 26, "max_position_embeddings");
  if (c.num_heads % c.num_kv_heads != 0)
    throw Error(fmt::format("{}: num_attention_heads {} is not a multiple of num_key_value_heads {}", origin,
                            c.num_heads, c.num_kv_heads));
  if (c.sliding_window < 0) throw Error(fmt::format("{}: sliding_window {} is negative", origin, c.sliding_window));
  if (c.rotary_fraction <= 0 || c.rotary_fraction > 1)
    throw Error(fmt::format("{}: rotary fraction {} is not in (0, 1]", origin, c.rotary_fraction));
  at_most(c.q_lora_rank, int64_t{1} << 20, "q_lora_rank");
  at_most(c.kv_lora_rank, int64_t{1} << 20, "kv_lora_rank");
  at_most(c.index_heads, int64_t{1} << 16, "index_n_heads");
  at_most(c.index_head_dim, int64_t{1} << 16, "index_head_dim");
  at_most(c.v_head_dim, int64_t{1} << 16, "v_head_dim");
  at_most(c.dense_intermediate_size, int64_t{1} << 26, "intermediate_size");
  at_most(c.shared_expert_intermediate_size, int64_t{1} << 26, "shared expert width");
  at_most(c.num_labels, int64_t{1} << 20, "num_labels");
  at_most(c.token_type_vocab, int64_t{1} << 20, "type_vocab_size");
  if (c.token_type_vocab < 0)
    throw Error(fmt::format("{}: type_vocab_size must not be negative, not {}", origin, c.token_type_vocab));
  if (c.num_labels < 1) throw Error(fmt::format("{}: num_labels must be positive, not {}", origin, c.num_labels));
  const int64_t rot = c.rotary_dim();
  if (c.position == LlmPosition::Rotary && (rot < 2 || rot % 2 != 0 || rot > c.head_dim))
    throw Error(fmt::format("{}: rotary dimension {} (head_dim x rotary fraction, or qk_rope_head_dim) must be even "
                            "and at most head_dim", origin, rot));
  // A mixture-of-experts model type has experts: 0 or fewer would silently become a dense model.
  const bool moe_type = c.family == "mixtral" || c.family == "qwen2_moe" || c.family == "qwen3_moe" ||
                        c.family == "gpt_oss" || c.family == "olmoe" || c.family == "glm4_moe" ||
                        c.family == "minimax_m2" || c.family == "llama4_text" || c.family == "ernie4_5_moe" ||
                        c.family == "qwen3_5_moe_text";
  if (c.num_experts < 0 || (moe_type && c.num_experts < 1))
    throw Error(fmt::format("{}: {} {}: a {} model needs at least one expert", origin, experts_key(c), c.num_experts,
                            c.family));
  if (c.moe_every < 1) throw Error(fmt::format("{}: every {}-th layer sparse is not a pattern", origin, c.moe_every));
  if (c.hybrid()) {
    if (static_cast<int64_t>(c.blocks.size()) != c.num_layers)
      throw Error(fmt::format("{}: {} block types for {} layers", origin, c.blocks.size(), c.num_layers));
    const bool mamba = c.blocks_of(LlmBlock::Mamba) > 0, moe_block = c.blocks_of(LlmBlock::Moe) > 0;
    if (moe_block && c.num_experts < 1)
      throw Error(fmt::format("{}: n_routed_experts {}: MoE blocks need at least one expert", origin, c.num_experts));
    if (mamba) {
      // The keys each family states the sizes in: heads, head_dim, state, groups, conv, chunk.
      const std::array<const char*, 6> n = c.family == "mamba2"
                                               ? std::array<const char*, 6>{"num_heads", "head_dim", "state_size",
                                                                            "n_groups", "conv_kernel", "chunk_size"}
                                           : c.family == "granitemoehybrid"
                                               ? std::array<const char*, 6>{"mamba_n_heads", "mamba_d_head",
                                                                            "mamba_d_state", "mamba_n_groups",
                                                                            "mamba_d_conv", "mamba_chunk_size"}
                                               : std::array<const char*, 6>{"mamba_num_heads", "mamba_head_dim",
                                                                            "ssm_state_size", "n_groups", "conv_kernel",
                                                                            "chunk_size"};
      positive(c.ssm_heads, n[0]);
      positive(c.ssm_head_dim, n[1]);
      positive(c.ssm_state, n[2]);
      positive(c.ssm_groups, n[3]);
      positive(c.conv_kernel, n[4]);
      positive(c.ssm_chunk, n[5]);
      at_most(c.ssm_heads, int64_t{1} << 16, n[0]);
      at_most(c.ssm_head_dim, int64_t{1} << 16, n[1]);
      at_most(c.ssm_state, int64_t{1} << 16, n[2]);
      at_most(c.conv_kernel, int64_t{1} << 10, n[4]);
      at_most(c.ssm_chunk, int64_t{1} << 20, n[5]);
      at_most(c.ssm_inner(), int64_t{1} << 26, fmt::format("{} x {}", n[0], n[1]).c_str());
      if (c.ssm_heads % c.ssm_groups != 0)
        throw Error(fmt::format("{}: {} {} is not a multiple of {} {}", origin, n[0], c.ssm_heads, n[3], c.ssm_groups));
    }
    if (c.blocks_of(LlmBlock::Mamba1) > 0) {
      positive(c.mamba1_inner, "expand x hidden_size");
      positive(c.ssm_state, "state_size");
      positive(c.conv_kernel, "conv_kernel");
      positive(c.dt_rank, "time_step_rank");
      at_most(c.mamba1_inner, int64_t{1} << 26, "expand x hidden_size");
      at_most(c.ssm_state, int64_t{1} << 16, "state_size");
      at_most(c.conv_kernel, int64_t{1} << 10, "conv_kernel");
      at_most(c.dt_rank, int64_t{1} << 20, "time_step_rank");
    }
    if (c.blocks_of(LlmBlock::DeltaNet) > 0) {
      positive(c.gdn_key_heads, "linear_num_key_heads");
      positive(c.gdn_value_heads, "linear_num_value_heads");
      positive(c.gdn_key_dim, "linear_key_head_dim");
      positive(c.gdn_value_dim, "linear_value_head_dim");
      positive(c.conv_kernel, "linear_conv_kernel_dim");
      at_most(c.gdn_key_heads, int64_t{1} << 16, "linear_num_key_heads");
      at_most(c.gdn_value_heads, int64_t{1} << 16, "linear_num_value_heads");
      at_most(c.gdn_key_dim, int64_t{1} << 16, "linear_key_head_dim");
      at_most(c.gdn_value_dim, int64_t{1} << 16, "linear_value_head_dim");
      at_most(c.conv_kernel, int64_t{1} << 10, "linear_conv_kernel_dim");
      at_most(c.gdn_conv_dim() + c.gdn_value_width(), int64_t{1} << 26, "the Gated DeltaNet's projection width");
      if (c.gdn_value_heads % c.gdn_key_heads != 0)
        throw Error(fmt::format("{}: linear_num_value_heads {} is not a multiple of linear_num_key_heads {}", origin,
                                c.gdn_value_heads, c.gdn_key_heads));
    }
  }
  if (c.moe() && (c.experts_per_token < 1 || c.experts_per_token > c.num_experts))
    throw Error(fmt::format("{}: {} {} is not in 1..{}", origin, c.family == "ernie4_5_moe" ? "moe_k" : "num_experts_per_tok",
                            c.experts_per_token, c.num_experts));
}

LlmConfig parse_llm_config(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw Error(fmt::format("{}: a config.json must be a JSON object", origin));
  Keys k(j, origin);
  if (!k.find("model_type")) throw Error(fmt::format("{}: missing required key 'model_type'", origin));
  LlmConfig c;
  c.family = k.opt_string("model_type", "");
  const Family* fam = nullptr;
  for (const auto& f : kFamilies)
    if (c.family == f.model_type) fam = &f;
  if (!fam) {
    std::string known;
    for (const auto& f : kFamilies) known += (known.empty() ? "" : ", ") + std::string(f.model_type);
    // A multimodal wrapper (Gemma3ForConditionalGeneration, Llava, ...) holds the language model in text_config.
    if (const json* text = k.find("text_config"); text && text->is_object())
      throw Error(fmt::format("{}: model_type '{}' is a multimodal model; its language model is the config in "
                              "\"text_config\" (save that object as a config.json; the vision tower is not modelled)",
                              origin, c.family));
    throw Error(fmt::format("{}: model_type '{}' is not supported ({})", origin, c.family, known));
  }
  c.module_prefix = fam->prefix;
  fam->read(k, c);
  if (c.head_dim == 0 && c.num_heads > 0) {
    if (c.hidden_size % c.num_heads != 0)
      throw Error(fmt::format("{}: hidden size {} is not a multiple of {} heads (and no head_dim is given)", origin,
                              c.hidden_size, c.num_heads));
    c.head_dim = c.hidden_size / c.num_heads;
  }
  validate_llm_config(c, origin);
  return c;
}

bool is_llm_config_path(const std::string& model) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (model.size() >= 5 && model.compare(model.size() - 5, 5, ".json") == 0) return true;
  return fs::is_directory(model, ec) && fs::is_regular_file(fs::path(model) / "config.json", ec);
}

LlmConfig read_llm_config(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path file = fs::is_directory(path, ec) ? fs::path(path) / "config.json" : fs::path(path);
  std::ifstream in(file);
  if (!in) throw Error(fmt::format("{}: cannot read", file.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(fmt::format("{}: not valid JSON", file.string()));
  LlmConfig c = parse_llm_config(j, file.string());
  fs::path dir = file.parent_path();
  c.name = file.filename() == "config.json" && !dir.filename().empty() ? dir.filename().string() : file.stem().string();
  return c;
}

std::optional<LlmConfig> llm_config_of(const std::string& model) {
  if (const LlmConfig* built_in = find_llm_config(model)) return *built_in;
  if (is_llm_config_path(model)) return read_llm_config(model);
  return std::nullopt;
}

LlmConfig require_llm_config(const ModelSource& model) {
  if (!model.hf_config.empty()) {
    const nlohmann::json j = nlohmann::json::parse(model.hf_config, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw Error(fmt::format("{}: the config is not a JSON object", model.name));
    LlmConfig c = parse_llm_config(j, model.name);
    if (c.name.empty()) c.name = model.name;  // the label titles every output ("Serving gpt2 on ...")
    return c;
  }
  if (auto c = llm_config_of(model.name)) return *c;
  std::vector<std::string> names;
  for (const auto& c : llm_zoo_configs()) names.push_back(c.name);
  throw Error(fmt::format("{}: not an LLM zoo entry nor a config.json{}", model.name, did_you_mean(model.name, names)));
}

std::optional<LlmConfig> llm_config_of_source(const ModelSource& model) {
  if (!model.hf_config.empty()) return require_llm_config(model);
  if (!model.onnx_bytes.empty()) return std::nullopt;
  return llm_config_of(model.name);
}

}  // namespace ridge
