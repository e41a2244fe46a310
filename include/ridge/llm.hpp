// Large language models from a Hugging Face config.json: the configuration as a plain struct, its reader,
// the graph builder (src/load/zoo/llm.cpp) and the exact parameter counts. Serving and training analyses are
// in llm_analysis.hpp. Formulas and sources: docs/llm.md.
#pragma once
#include <algorithm>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "ridge/graph.hpp"
#include "ridge/load.hpp"

namespace ridge {

/// Normalisation layer of a decoder block.
enum class LlmNorm : uint8_t { RMSNorm, LayerNorm };
/// How positions enter the model (None: no positional encoding at all, as in nemotron_h's attention layers, whose
/// Mamba-2 layers carry the order).
enum class LlmPosition : uint8_t { Rotary, Learned, Alibi, None };
/// What one layer of a hybrid model is (nemotron_h's layers_block_type): a Mamba-2 mixer, self-attention, an MLP or
/// a mixture-of-experts block, each behind its own norm and residual add; in hybrid decoder layers (granitemoehybrid,
/// qwen3_next) the layer's mixer: Mamba-2, self-attention or a Gated DeltaNet (qwen3_next's linear attention).
enum class LlmBlock : uint8_t { Mamba, Attention, Mlp, Moe, DeltaNet, Mamba1 };
/// What sits on top of the transformer body, from the config's `architectures[0]`: a decoder's lm_head, or one of
/// the BERT family's heads (*Model, *ForMaskedLM, BertForPreTraining, *ForSequenceClassification,
/// *ForTokenClassification, *ForQuestionAnswering).
enum class LlmHead : uint8_t { CausalLm, Base, MaskedLm, PreTraining, SequenceClassification, TokenClassification,
                               QuestionAnswering };

/// A transformer as its Hugging Face config describes it, reduced to what costs depend on: a decoder-only LLM, or
/// a BERT-style encoder (bert, roberta, xlm-roberta, distilbert: causal false, post_norm).
struct LlmConfig {
  std::string name;                  ///< zoo name or the config file's parent directory name
  /// HF model_type: llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gemma3_text,
  /// deepseek_v2, deepseek_v3, gpt_oss, phi, phi3, gpt2, gpt_neox, falcon, opt, bloom, gptj, codegen, gpt_bigcode,
  /// starcoder2, stablelm, granite, cohere, olmo, olmo2, olmo3, olmoe, glm, glm4, glm4_moe, minimax_m2, llama4_text,
  /// exaone4, ernie4_5, ernie4_5_moe, seed_oss, smollm3, arcee, nemotron_h (hybrid: Mamba-2, attention, MLP, MoE
  /// layers), granitemoehybrid (Granite 4.0: Mamba-2 or attention, then MoE + shared MLP), qwen3_next, qwen3_5_text,
  /// qwen3_5_moe_text (Gated DeltaNet or gated attention, then MoE or MLP), jamba (Mamba-1 or attention, then MoE or
  /// MLP), mamba2, mamba and falcon_mamba (Mamba-1);
  /// encoders bert, roberta, xlm-roberta, distilbert
  std::string family;
  std::string module_prefix;         ///< HF class prefix for module types ("Llama" -> LlamaRMSNorm, LlamaAttention)
  int64_t vocab_size = 0;            ///< vocab_size
  int64_t hidden_size = 0;           ///< hidden_size / n_embd / d_model
  int64_t num_layers = 0;            ///< num_hidden_layers / n_layer
  int64_t num_heads = 0;             ///< num_attention_heads / n_head
  int64_t num_kv_heads = 0;          ///< num_key_value_heads (MHA: = heads, MQA: 1)
  int64_t head_dim = 0;              ///< head_dim (default hidden / heads)
  int64_t intermediate_size = 0;     ///< MLP width (per expert for MoE blocks)
  int64_t max_positions = 0;         ///< max_position_embeddings / n_positions
  LlmNorm norm = LlmNorm::RMSNorm;   ///< RMSNorm (llama-like) or LayerNorm (gpt2, neox, falcon, opt, phi)
  bool norm_bias = false;            ///< LayerNorm has a bias
  bool gated_mlp = true;             ///< gate * act(up) (SwiGLU/GeGLU) instead of fc -> act -> fc
  std::string activation = "silu";   ///< silu, gelu, gelu_tanh, relu, relu2 (relu(x)^2)
  bool qkv_bias = false;             ///< q/k/v projections have biases (qwen2, gpt2, neox, phi, opt)
  bool o_bias = false;               ///< output projection has a bias
  bool mlp_bias = false;             ///< MLP projections have biases
  bool fused_qkv = false;            ///< one qkv projection (gpt2 c_attn, neox/falcon query_key_value, phi3 qkv_proj)
  bool fused_gate_up = false;        ///< gated MLP with one gate_up_proj, chunked in two (phi3, glm, glm4)
  /// RMSNorms on the queries and keys: none; over head_dim on every head (qwen3, gemma3 q_norm, k_norm); one over
  /// the whole q and k projections, heads x head_dim wide (olmo2, olmo3, olmoe, minimax_m2); or a weightless one
  /// over head_dim on every head after the rotary embedding, in the rotary layers only (llama4_text's L2 qk_norm).
  enum class QkNorm { None, PerHead, Whole, L2PerHead } qk_norm = QkNorm::None;
  bool tied_embeddings = false;      ///< lm_head reuses the token embedding
  bool lm_head_bias = false;         ///< phi's lm_head has a bias
  LlmPosition position = LlmPosition::Rotary;
  double rotary_fraction = 1.0;      ///< partial_rotary_factor / rotary_pct
  std::vector<int64_t> nope_layers;  ///< layers (0-based, ascending) that skip the rotary embedding (smollm3's NoPE)
  int64_t position_offset = 0;       ///< learned table rows beyond max_positions (OPT: 2)
  bool parallel_residual = false;    ///< attention and MLP read the same input (neox, falcon, phi)
  int parallel_norms = 1;            ///< parallel blocks: one shared input norm, or two (neox, falcon new arch)
  int64_t sliding_window = 0;        ///< 0: full attention; else the KV cache holds at most this many tokens
  bool chunked_attention = false;    ///< the window is a chunk (llama4_text attention_chunk_size): a query sees the
                                     ///< positions of its own chunk of sliding_window positions, up to itself
  bool attn_temperature_tuning = false;  ///< NoPE layers scale each query by a per-position temperature (llama4_text)
  int64_t global_every = 0;          ///< with a window: 0, every layer slides; k, every k-th layer ((l + 1) % k == 0)
                                     ///< attends to all positions (gemma2: 2, gemma3: sliding_window_pattern 6)
  int64_t full_first_layers = 0;     ///< with a window: layers l < this attend to all positions (qwen2, qwen3:
                                     ///< max_window_layers; the window slides in layers l >= it)
  bool sandwich_norms = false;       ///< norms before and after attention and MLP (gemma2, gemma3, glm4: 4 per layer)
  bool output_norms = false;         ///< norms after attention and MLP only, none before: x + norm(attn(x)), then
                                     ///< + norm(mlp(.)) (olmo2, olmo3, exaone4: 2 per layer)
  double attn_softcap = 0;           ///< scores -> cap x tanh(scores / cap) before the mask (gemma2); 0: none
  double final_softcap = 0;          ///< the same on the logits (gemma2 final_logit_softcapping); 0: none
  bool scale_embeddings = false;     ///< gemma multiplies embeddings by sqrt(hidden)
  bool embedding_norm = false;       ///< a LayerNorm right after the token embedding (bloom's word_embeddings_layernorm)
  int64_t embed_proj_dim = 0;        ///< OPT word_embed_proj_dim when != hidden (project_in/out)
  int64_t rotary_dims = 0;           ///< rotated dims per head as an integer (gptj, codegen rotary_dim); 0: from
                                     ///< rotary_fraction
  bool norm_scale = true;            ///< the LayerNorms have a weight (OLMo's non-parametric LayerNorm: none)
  double logit_scale = 0;            ///< logits x logit_scale (cohere), a graph op; 0: none
  double clip_qkv = 0;               ///< q, k, v clamped to [-clip_qkv, clip_qkv] after their projections (olmo, olmoe); 0: none
  // Multi-head latent attention (deepseek_v2, deepseek_v3; kv_lora_rank == 0: none): queries through an optional
  // low-rank q_a_proj / q_b_proj, keys and values decompressed from a kv_lora_rank latent, qk heads of
  // qk_nope_head_dim + qk_rope_head_dim (head_dim) and value heads of v_head_dim.
  int64_t q_lora_rank = 0;                        ///< 0: one q_proj
  int64_t kv_lora_rank = 0;
  int64_t qk_rope_head_dim = 0;                   ///< rotated dims per query/key head (MLA)
  int64_t v_head_dim = 0;                         ///< value head width (0: head_dim)
  // DeepSeek Sparse Attention (deepseek_v32, glm_moe_dsa; index_topk == 0: none): an MLA layer's lightning indexer
  // (`self_attn.indexer`: index_heads query heads of index_head_dim from the q_lora_rank latent, one key head from
  // the hidden state, LayerNorm-ed, rotary on the qk_rope_head_dim first dims, a per-head weight from the hidden
  // state) scores every cached position; each query then attends to its index_topk best (min(topk, positions)).
  int64_t index_heads = 0;                        ///< index_n_heads
  int64_t index_head_dim = 0;                     ///< index_head_dim: the indexer's key cache holds this per position
  int64_t index_topk = 0;                         ///< index_topk: positions each query attends to
  bool index_relu = false;                        ///< the scores pass a ReLU before the head weights (DeepSeek's
                                                  ///< reference and deepseek_v32; transformers' glm_moe_dsa: none)
  // Mixture of experts (num_experts == 0: dense MLP).
  int64_t num_experts = 0;                        ///< num_local_experts / num_experts / n_routed_experts
  int64_t experts_per_token = 0;                  ///< num_experts_per_tok (top-k)
  int64_t shared_expert_intermediate_size = 0;    ///< shared expert width (qwen2_moe; deepseek: n_shared x width; 0: none)
  bool shared_expert_gate = true;                 ///< qwen2_moe's sigmoid gate on the shared expert (deepseek: none)
  bool router_sigmoid = false;                    ///< sigmoid router scores with a selection bias (deepseek_v3,
                                                  ///< glm4_moe, minimax_m2)
  bool router_bias = false;                       ///< the router Linear has a bias (gpt_oss)
  bool router_topk_softmax = false;               ///< softmax over the top-k logits only (gpt_oss), not all experts
  bool softmax_selection_bias = false;            ///< softmax router scores plus a per-expert bias for the top-k
                                                  ///< choice only (ernie4_5_moe's moe_statics)
  bool router_topk_sigmoid = false;               ///< a sigmoid of each token's top-k logits, which scale the chosen
                                                  ///< experts' inputs, not their outputs (llama4_text)
  bool clamped_swiglu = false;                    ///< gpt_oss experts: (clamp(up) + 1) x g sigmoid(alpha g), g clamped
  bool attention_sinks = false;                   ///< one learned logit per head joins every softmax (gpt_oss sinks)
  int64_t moe_every = 1;                          ///< every k-th layer is sparse (decoder_sparse_step,
                                                  ///< interleave_moe_layer_step)
  int64_t expert_parallel = 1;                    ///< GPUs the routed experts are split over (serve --dp): a graph
                                                  ///< holds num_experts / expert_parallel of them, fed by every
                                                  ///< rank's tokens (the all-to-all's output); the router sees all
  int64_t first_dense_layers = 0;                 ///< first_k_dense_replace: the first k layers are dense
  int64_t dense_intermediate_size = 0;            ///< MLP width of an MoE model's dense layers (0: intermediate_size)
  int64_t last_sparse_layer = -1;                 ///< layers after it are dense (ernie4_5_moe moe_layer_end_index);
                                                  ///< -1: none
  // Encoders (the BERT family). Decoders keep the defaults.
  bool causal = true;                 ///< false: every query attends to every position (no causal mask, no KV cache)
  bool post_norm = false;             ///< LayerNorm after each residual add (BERT), no final norm; the embeddings'
                                      ///< sum is normed (embedding_norm)
  int64_t token_type_vocab = 0;       ///< rows of the token_type embedding (type_vocab_size; 0: none)
  LlmHead head = LlmHead::CausalLm;   ///< the head architectures[0] names
  std::string architecture;           ///< architectures[0] as the config gives it (or the default one)
  bool pooler = false;                ///< BertPooler: dense (h x h) + tanh on the first token
  int64_t num_labels = 2;             ///< classifier outputs (len(id2label) or num_labels)
  // Hybrid models (nemotron_h, granitemoehybrid, mamba2). Empty `blocks`: every layer is a decoder layer (attention,
  // then an MLP or MoE).
  std::vector<LlmBlock> blocks;      ///< one per layer (layers_block_type / hybrid_override_pattern)
  /// Hybrid decoder layers (granitemoehybrid, qwen3_next): `blocks` says Mamba, DeltaNet or Attention per layer, and
  /// every layer is a decoder layer, its mixer then a feed-forward part after a second norm (granitemoehybrid: MoE +
  /// shared MLP, or the shared MLP; qwen3_next: qwen2_moe's sparse block or an MLP).
  bool hybrid_decoder = false;
  // Mamba-2 mixers (ssm_heads == 0: none): in_proj to the gate, the conv input (x, B, C) and dt; a causal depthwise
  // conv1d of conv_kernel taps; the selective scan (SelectiveScan) in chunks of ssm_chunk; a gated RMSNorm over
  // ssm_groups groups; out_proj.
  int64_t ssm_heads = 0;             ///< mamba_num_heads
  int64_t ssm_head_dim = 0;          ///< mamba_head_dim
  int64_t ssm_state = 0;             ///< ssm_state_size (N)
  int64_t ssm_groups = 1;            ///< n_groups: heads sharing one B and C
  int64_t conv_kernel = 4;           ///< conv_kernel
  bool conv_bias = true;             ///< use_conv_bias
  bool ssm_proj_bias = false;        ///< in_proj and out_proj have biases (use_bias)
  int64_t ssm_chunk = 128;           ///< chunk_size of the scan
  bool ssm_state_fp32 = true;        ///< the recurrent state is cached in float32 (mamba_ssm_cache_dtype)
  // Gated DeltaNet mixers (qwen3_next's linear_attention layers; gdn_value_heads == 0: none): in_proj_qkvz to q and
  // k (key heads x key width each), v and the output gate z (value heads x value width each), in_proj_ba to beta's
  // and the decay's inputs (one per value head); a causal depthwise conv1d of conv_kernel taps (no bias) and SiLU
  // over q|k|v; the gated delta rule (GatedDeltaRule) in chunks of gdn_chunk; a gated RMSNorm per value head;
  // out_proj.
  int64_t gdn_key_heads = 0;         ///< linear_num_key_heads
  int64_t gdn_value_heads = 0;       ///< linear_num_value_heads
  int64_t gdn_key_dim = 0;           ///< linear_key_head_dim
  int64_t gdn_value_dim = 0;         ///< linear_value_head_dim
  int64_t gdn_chunk = 64;            ///< chunk length of flash-linear-attention's chunk_gated_delta_rule
  /// Widths of a Gated DeltaNet's queries (= keys) and values, and of its conv1d (q|k|v).
  int64_t gdn_key_width() const { return gdn_key_heads * gdn_key_dim; }
  int64_t gdn_value_width() const { return gdn_value_heads * gdn_value_dim; }
  int64_t gdn_conv_dim() const { return 2 * gdn_key_width() + gdn_value_width(); }
  /// Self-attention's q_proj also yields a gate per output channel: o x sigmoid(gate) before o_proj (qwen3_next).
  bool attn_output_gate = false;
  // Mamba-1 mixers (mamba, falcon_mamba; mamba1_inner == 0: none): in_proj to x and the gate (inner width each), a
  // causal depthwise conv1d of conv_kernel taps (conv_bias) and SiLU on x, x_proj to dt (dt_rank), B and C (ssm_state
  // each), dt_proj (dt_rank -> inner; its bias in the scan), the scan (MambaScan), out_proj; in_proj and out_proj
  // have biases with ssm_proj_bias.
  int64_t mamba1_inner = 0;          ///< intermediate_size = int(expand x hidden_size)
  int64_t dt_rank = 0;               ///< time_step_rank ("auto": ceil(hidden_size / 16))
  /// dt, B and C normalised after x_proj: not (mamba), by an RMS without weight (falcon_mamba), or by RMSNorms with
  /// weights dt_layernorm, b_layernorm, c_layernorm (jamba).
  enum class Mamba1Norms : uint8_t { None, Weightless, Weighted } mamba1_norms = Mamba1Norms::None;
  /// Width of a Mamba-2 mixer's inner stream (heads x head_dim).
  int64_t ssm_inner() const { return ssm_heads * ssm_head_dim; }
  /// Channels of its conv1d: x, B and C (inner + 2 x groups x state).
  int64_t conv_dim() const { return ssm_inner() + 2 * ssm_groups * ssm_state; }
  /// True for hybrid configurations (blocks listed per layer).
  bool hybrid() const { return !blocks.empty(); }
  /// True when each layer is one block behind one norm (nemotron_h, mamba2, mamba, falcon_mamba), not a decoder
  /// layer of a mixer and a feed-forward part: one tensor-parallel all-reduce per layer, the module `mixer`.
  bool single_block_layers() const { return hybrid() && !hybrid_decoder; }
  /// Number of layers whose block (a hybrid's mixer) is `kind`; 0 for models without a block list.
  int64_t blocks_of(LlmBlock kind) const { return static_cast<int64_t>(std::count(blocks.begin(), blocks.end(), kind)); }
  /// True when layer `l` has self-attention (and so a KV cache).
  bool attends(int64_t l) const { return blocks.empty() || blocks[static_cast<size_t>(l)] == LlmBlock::Attention; }
  /// Number of layers with self-attention (all of them but in hybrids; none in mamba2).
  int64_t attention_layer_count() const { return blocks.empty() ? num_layers : blocks_of(LlmBlock::Attention); }
  /// Number of query heads per key/value head.
  int64_t group_size() const { return num_heads / num_kv_heads; }
  /// Rotated dims per head: qk_rope_head_dim (MLA), rotary_dims, or int(head_dim x rotary fraction) as transformers
  /// computes it.
  int64_t rotary_dim() const {
    return qk_rope_head_dim > 0 ? qk_rope_head_dim
           : rotary_dims > 0    ? rotary_dims
                                : static_cast<int64_t>(static_cast<double>(head_dim) * rotary_fraction);
  }
  /// Width of a value head: v_head_dim (MLA) or head_dim.
  int64_t value_dim() const { return v_head_dim > 0 ? v_head_dim : head_dim; }
  /// True for multi-head latent attention (deepseek).
  bool mla() const { return kv_lora_rank > 0; }
  /// True for DeepSeek Sparse Attention (an MLA layer with a lightning indexer and top-k attention).
  bool dsa() const { return index_topk > 0; }
  /// MLP width of the dense layers.
  int64_t dense_width() const { return dense_intermediate_size > 0 ? dense_intermediate_size : intermediate_size; }
  /// True for mixture-of-experts configurations.
  bool moe() const { return num_experts > 0; }
  /// The sliding window of layer `l` (0-based); 0 when it attends to every position.
  int64_t window_of(int64_t l) const {
    return sliding_window > 0 && l >= full_first_layers && !(global_every > 0 && (l + 1) % global_every == 0)
               ? sliding_window
               : 0;
  }
  /// True when layer `l` (0-based) applies the rotary embedding to its queries and keys.
  bool rotary_in(int64_t l) const {
    return position == LlmPosition::Rotary && !std::binary_search(nope_layers.begin(), nope_layers.end(), l);
  }
  /// True when layer `l` (0-based) has a sparse MoE block.
  bool sparse_layer(int64_t l) const {
    if (single_block_layers()) return blocks[static_cast<size_t>(l)] == LlmBlock::Moe;
    return moe() && l >= first_dense_layers && (last_sparse_layer < 0 || l <= last_sparse_layer) &&
           (l + 1) % moe_every == 0;
  }
  /// Layers with a sparse MoE block.
  int64_t sparse_layer_count() const {
    int64_t n = 0;
    for (int64_t l = 0; l < num_layers; ++l) n += sparse_layer(l) ? 1 : 0;
    return n;
  }
};

/// Parses a Hugging Face config.json document. Unknown keys are ignored; a missing required key or a value
/// of the wrong type is a ridge::Error "ORIGIN: KEY ..." naming the key.
LlmConfig parse_llm_config(const nlohmann::json& j, const std::string& origin);
/// Reads a config.json file, or DIR/config.json when `path` is a directory. Throws ridge::Error naming the file.
LlmConfig read_llm_config(const std::string& path);
/// True when MODEL names a Hugging Face config: a path ending in .json, or a directory holding config.json.
bool is_llm_config_path(const std::string& model);
/// The built-in LLM configurations (zoo entries llama-2-7b, ...), in `ridge list` order.
const std::vector<LlmConfig>& llm_zoo_configs();
/// The built-in configuration named `name`, or nullptr.
const LlmConfig* find_llm_config(const std::string& name);
/// The LLM configuration behind a MODEL argument: a built-in name or a config.json path; nullopt otherwise.
std::optional<LlmConfig> llm_config_of(const std::string& model);
/// The LLM configuration of `model`: its config text (hf_config), a config.json path or a built-in name. Throws
/// ridge::Error naming the model (with the closest zoo names) when it is none of them.
LlmConfig require_llm_config(const ModelSource& model);
/// The LLM configuration behind `model` when it has one: its config text (hf_config), else llm_config_of(name);
/// nullopt for ONNX bytes and names that are no LLM. Throws ridge::Error for config text that is not an LLM's.
std::optional<LlmConfig> llm_config_of_source(const ModelSource& model);
/// Published parameter count of a built-in configuration (0 when none is published exactly).
Count llm_published_params(const std::string& name);

/// How to instantiate an LLM graph.
struct LlmShape {
  int64_t batch = 1;     ///< sequences
  int64_t tokens = 1;    ///< new tokens per sequence (prompt in prefill, 1 in decode)
  int64_t past = 0;      ///< tokens already in the KV cache (serving graphs)
  DType dtype = DType::F32;
  /// false: Hugging Face eager forward (repeat_kv copies, full causal mask, no cache input);
  /// true: a serving step over a KV cache input of past + tokens positions (capped by the sliding window),
  /// with grouped heads broadcast in the attention matmuls instead of copied.
  bool serving = false;
  bool training = false;  ///< Dropout active (LLM configs here have zero dropout; kept for symmetry)
  /// Multi-head latent attention (serving graphs): the cache holds the latent (kv_lora_rank + qk_rope_head_dim per
  /// position, shared by the heads) and one-token steps attend in it with kv_b_proj absorbed into the query and the
  /// output (vLLM, SGLang); prompts decompress it as in HF. false: HF's cache of decompressed keys and values.
  bool latent_kv = false;
  /// Serving graphs: the copies Hugging Face's eager forward materialises, each an op of its own (what `serve
  /// --attention eager` costs; docs/llm.md): the KV cache grown by torch.cat (DynamicCache.update: the cache input
  /// holds the past positions, `cat_key_cache` / `cat_value_cache` read them and the new ones and write past + new),
  /// repeat_kv's copy of every key/value head for each query head sharing it (an Expand `repeat_kv` of the cache;
  /// the attention matmuls then read the copies), RMSNorm's float32 upcast (Casts `to_float32` / `to_input_dtype`
  /// around the norm, its intermediates in float32; not Gemma's norm) and rotate_half's torch.cat (its Concat is a
  /// copy). false: fused kernels that read the cache in place (vLLM-like), none of these.
  bool eager_copies = false;
};

/// Builds the graph of `c` (see docs/llm.md for the op sequence of each block). Throws ridge::Error on
/// inconsistent sizes (heads not dividing, window < 1, ...).
Graph build_llm(const LlmConfig& c, const LlmShape& s);
/// About how many nodes build_llm's graph of `c` has (within about a third; views included): 55 per layer and 12
/// per routed expert of a sparse layer. For telling users when building will take seconds.
int64_t llm_graph_nodes_estimate(const LlmConfig& c);
/// load_model() path for configs and LLM zoo names: batch from opts.batch, tokens from opts.seq_len
/// (default min(max_positions, 2048)).
Graph build_llm(const LlmConfig& c, const LoadOptions& opts);

/// Exact parameter counts from the configuration alone (cross-checked against the graph in tests).
struct LlmParams {
  Count total = 0;              ///< every trainable parameter (tied weights once)
  Count active_per_token = 0;   ///< total minus the experts a token does not use (= total for dense models)
  Count embedding = 0;          ///< token (+ learned position) embeddings
  Count per_layer_dense = 0;    ///< attention + norms of one layer (no MLP)
  Count expert = 0;             ///< one expert's (or the dense MLP's) parameters
  Count layers = 0;             ///< all decoder layers' parameters (total - embedding - final norm - head)
};
LlmParams llm_params(const LlmConfig& c);

/// One decoder layer's parameters: everything but its routed experts (attention, norms, a dense MLP or a sparse
/// layer's router and shared expert), and its routed experts (0 in a dense layer).
struct LayerParams {
  Count dense = 0;
  Count experts = 0;
};
LayerParams llm_layer_params(const LlmConfig& c, int64_t layer);

/// Checks that the sizes are consistent; throws ridge::Error naming `origin` and the key.
void validate_llm_config(const LlmConfig& c, const std::string& origin);

}  // namespace ridge
