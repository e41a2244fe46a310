// The LLM zoo: Hugging Face style config.json texts (the fields of the published configs that costs depend
// on), parsed by the same reader as user files, with their published parameter counts where one is exact.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "ridge/error.hpp"
#include "ridge/llm.hpp"

namespace ridge {

namespace {

struct ZooConfig {
  const char* name;
  const char* json;
  Count published;  ///< exact published parameter count, 0 when the source rounds it
};

// Llama/Mistral/Mixtral/Qwen2/Qwen3/Gemma/Phi-3: the HF hub config.json of each model (meta-llama/Llama-2-7b-hf,
// google/gemma-2-9b, google/gemma-3-1b-it, deepseek-ai/DeepSeek-V2-Lite, openai/gpt-oss-20b, openai/gpt-oss-120b,
// Qwen/Qwen3-8B, Qwen/Qwen3-30B-A3B, meta-llama/Llama-4-Scout-17B-16E's text_config, nvidia/NVIDIA-Nemotron-Nano-9B-v2
// (8,888,227,328 parameters: its safetensors hold 17,776,454,656 bf16 bytes), nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B
// (31,577,940,288: llama.cpp's n_params, with the 2,944 selection-bias elements the hub's total of 31,577,937,344
// leaves out), microsoft/Phi-3-mini-4k-instruct,
// ...).
// GPT-3: Brown et al. 2020, Table 2.1 (GPT-2 architecture, context 2048, vocab 50257; the 13B row's d_model
// 5140 is not divisible by its 40 heads: 5120 is used; the 1.3B row lists 24 heads of 128 for d_model 2048:
// 16 heads of 128 are used; parameters do not depend on the head count). Megatron-LM: Narayanan et al. 2021, Table 1 (GPT-2
// architecture, vocab 51200, sequence 2048).
const ZooConfig kConfigs[] = {
    {"llama-2-7b",
     R"({"model_type":"llama","vocab_size":32000,"hidden_size":4096,"intermediate_size":11008,"num_hidden_layers":32,
        "num_attention_heads":32,"num_key_value_heads":32,"max_position_embeddings":4096,"rms_norm_eps":1e-05})",
     6738415616},
    {"llama-2-13b",
     R"({"model_type":"llama","vocab_size":32000,"hidden_size":5120,"intermediate_size":13824,"num_hidden_layers":40,
        "num_attention_heads":40,"num_key_value_heads":40,"max_position_embeddings":4096})",
     13015864320},
    {"llama-2-70b",
     R"({"model_type":"llama","vocab_size":32000,"hidden_size":8192,"intermediate_size":28672,"num_hidden_layers":80,
        "num_attention_heads":64,"num_key_value_heads":8,"max_position_embeddings":4096})",
     68976648192},
    {"llama-3-8b",
     R"({"model_type":"llama","vocab_size":128256,"hidden_size":4096,"intermediate_size":14336,"num_hidden_layers":32,
        "num_attention_heads":32,"num_key_value_heads":8,"max_position_embeddings":8192,"rope_theta":500000.0})",
     8030261248},
    {"llama-3-70b",
     R"({"model_type":"llama","vocab_size":128256,"hidden_size":8192,"intermediate_size":28672,"num_hidden_layers":80,
        "num_attention_heads":64,"num_key_value_heads":8,"max_position_embeddings":8192})",
     70553706496},
    {"llama-3.1-405b",
     R"({"model_type":"llama","vocab_size":128256,"hidden_size":16384,"intermediate_size":53248,"num_hidden_layers":126,
        "num_attention_heads":128,"num_key_value_heads":8,"max_position_embeddings":131072,
        "rope_scaling":{"factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,"rope_type":"llama3"}})",
     0},
    {"mistral-7b",
     R"({"model_type":"mistral","vocab_size":32000,"hidden_size":4096,"intermediate_size":14336,"num_hidden_layers":32,
        "num_attention_heads":32,"num_key_value_heads":8,"max_position_embeddings":32768,"sliding_window":4096})",
     7241732096},
    {"mixtral-8x7b",
     R"({"model_type":"mixtral","vocab_size":32000,"hidden_size":4096,"intermediate_size":14336,"num_hidden_layers":32,
        "num_attention_heads":32,"num_key_value_heads":8,"max_position_embeddings":32768,"sliding_window":null,
        "num_local_experts":8,"num_experts_per_tok":2})",
     46702792704},
    {"qwen2-7b",
     R"({"model_type":"qwen2","vocab_size":152064,"hidden_size":3584,"intermediate_size":18944,"num_hidden_layers":28,
        "num_attention_heads":28,"num_key_value_heads":4,"max_position_embeddings":131072,"tie_word_embeddings":false,
        "use_sliding_window":false,"sliding_window":131072})",
     0},
    {"gemma-7b",
     R"({"model_type":"gemma","vocab_size":256000,"hidden_size":3072,"intermediate_size":24576,"num_hidden_layers":28,
        "num_attention_heads":16,"num_key_value_heads":16,"head_dim":256,"max_position_embeddings":8192,
        "hidden_act":"gelu_pytorch_tanh"})",
     8537680896},
    {"gemma-2-2b",
     R"({"model_type":"gemma2","vocab_size":256000,"hidden_size":2304,"intermediate_size":9216,"num_hidden_layers":26,
        "num_attention_heads":8,"num_key_value_heads":4,"head_dim":256,"max_position_embeddings":8192,
        "sliding_window":4096,"attn_logit_softcapping":50.0,"final_logit_softcapping":30.0,
        "hidden_activation":"gelu_pytorch_tanh","query_pre_attn_scalar":256})",
     2614341888},
    {"gemma-2-9b",
     R"({"model_type":"gemma2","vocab_size":256000,"hidden_size":3584,"intermediate_size":14336,"num_hidden_layers":42,
        "num_attention_heads":16,"num_key_value_heads":8,"head_dim":256,"max_position_embeddings":8192,
        "sliding_window":4096,"attn_logit_softcapping":50.0,"final_logit_softcapping":30.0,
        "hidden_activation":"gelu_pytorch_tanh","query_pre_attn_scalar":256})",
     9241705984},
    {"gemma-3-1b",
     R"({"model_type":"gemma3_text","vocab_size":262144,"hidden_size":1152,"intermediate_size":6912,
        "num_hidden_layers":26,"num_attention_heads":4,"num_key_value_heads":1,"head_dim":256,
        "max_position_embeddings":32768,"sliding_window":512,"sliding_window_pattern":6,
        "attn_logit_softcapping":null,"final_logit_softcapping":null,"hidden_activation":"gelu_pytorch_tanh",
        "query_pre_attn_scalar":256})",
     999885952},
    {"deepseek-v2-lite",
     R"({"model_type":"deepseek_v2","vocab_size":102400,"hidden_size":2048,"intermediate_size":10944,
        "moe_intermediate_size":1408,"num_hidden_layers":27,"num_attention_heads":16,"num_key_value_heads":16,
        "n_shared_experts":2,"n_routed_experts":64,"kv_lora_rank":512,"q_lora_rank":null,"qk_rope_head_dim":64,
        "v_head_dim":128,"qk_nope_head_dim":128,"num_experts_per_tok":6,"moe_layer_freq":1,"first_k_dense_replace":1,
        "max_position_embeddings":163840,"tie_word_embeddings":false})",
     15706484224},
    {"deepseek-v3.2",  // deepseek-ai/DeepSeek-V3.2's config.json (DeepSeek Sparse Attention; the MTP layer is not modelled)
     R"({"model_type":"deepseek_v32","vocab_size":129280,"hidden_size":7168,"intermediate_size":18432,
        "moe_intermediate_size":2048,"num_hidden_layers":61,"num_attention_heads":128,"num_key_value_heads":128,
        "n_shared_experts":1,"n_routed_experts":256,"kv_lora_rank":512,"q_lora_rank":1536,"qk_rope_head_dim":64,
        "v_head_dim":128,"qk_nope_head_dim":128,"num_experts_per_tok":8,"first_k_dense_replace":3,
        "max_position_embeddings":163840,"tie_word_embeddings":false,"index_n_heads":64,"index_head_dim":128,
        "index_topk":2048})",
     0},
    {"glm-5",  // zai-org/GLM-5's shapes (GlmMoeDsaConfig's defaults; DeepSeek Sparse Attention; MTP not modelled)
     R"({"model_type":"glm_moe_dsa","vocab_size":154880,"hidden_size":6144,"intermediate_size":12288,
        "moe_intermediate_size":2048,"num_hidden_layers":78,"num_attention_heads":64,"num_key_value_heads":64,
        "n_shared_experts":1,"n_routed_experts":256,"kv_lora_rank":512,"q_lora_rank":2048,"qk_rope_head_dim":64,
        "qk_nope_head_dim":192,"v_head_dim":256,"num_experts_per_tok":8,"max_position_embeddings":202752,
        "tie_word_embeddings":false,"index_n_heads":32,"index_head_dim":128,"index_topk":2048})",
     0},
    {"gpt-oss-20b",
     R"({"model_type":"gpt_oss","vocab_size":201088,"hidden_size":2880,"intermediate_size":2880,"num_hidden_layers":24,
        "num_attention_heads":64,"num_key_value_heads":8,"head_dim":64,"num_local_experts":32,"num_experts_per_tok":4,
        "max_position_embeddings":131072,"sliding_window":128,"attention_bias":true,"tie_word_embeddings":false})",
     20914757184},
    {"gpt-oss-120b",
     R"({"model_type":"gpt_oss","vocab_size":201088,"hidden_size":2880,"intermediate_size":2880,"num_hidden_layers":36,
        "num_attention_heads":64,"num_key_value_heads":8,"head_dim":64,"num_local_experts":128,"num_experts_per_tok":4,
        "max_position_embeddings":131072,"sliding_window":128,"attention_bias":true,"tie_word_embeddings":false})",
     116829156672},
    {"qwen3-8b",
     R"({"model_type":"qwen3","vocab_size":151936,"hidden_size":4096,"intermediate_size":12288,"num_hidden_layers":36,
        "num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"max_position_embeddings":40960,
        "attention_bias":false,"tie_word_embeddings":false,"use_sliding_window":false})",
     8190735360},
    {"qwen3-30b-a3b",
     R"({"model_type":"qwen3_moe","vocab_size":151936,"hidden_size":2048,"intermediate_size":6144,
        "moe_intermediate_size":768,"num_hidden_layers":48,"num_attention_heads":32,"num_key_value_heads":4,
        "head_dim":128,"max_position_embeddings":40960,"num_experts":128,"num_experts_per_tok":8,
        "decoder_sparse_step":1,"mlp_only_layers":[],"norm_topk_prob":true,"tie_word_embeddings":false})",
     30532122624},
    {"llama-4-scout",  // meta-llama/Llama-4-Scout-17B-16E: the text_config (the vision encoder is not modelled)
     R"({"model_type":"llama4_text","vocab_size":202048,"hidden_size":5120,"intermediate_size":8192,
        "intermediate_size_mlp":16384,"num_hidden_layers":48,"num_attention_heads":40,"num_key_value_heads":8,
        "head_dim":128,"num_local_experts":16,"num_experts_per_tok":1,"interleave_moe_layer_step":1,"use_qk_norm":true,
        "no_rope_layers":[],"attention_chunk_size":8192,"attn_temperature_tuning":true,"floor_scale":8192,
        "attn_scale":0.1,"max_position_embeddings":10485760,"tie_word_embeddings":false})",
     0},
    {"nemotron-nano-9b-v2",  // nvidia/NVIDIA-Nemotron-Nano-9B-v2: a hybrid of 27 Mamba-2, 4 attention and 25 MLP layers
     R"({"model_type":"nemotron_h","vocab_size":131072,"hidden_size":4480,"intermediate_size":15680,
        "num_hidden_layers":56,"max_position_embeddings":131072,"num_attention_heads":40,"num_key_value_heads":8,
        "head_dim":128,"hybrid_override_pattern":"M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
        "mamba_num_heads":128,"mamba_head_dim":80,"n_groups":8,"ssm_state_size":128,"conv_kernel":4,"chunk_size":128,
        "use_conv_bias":true,"use_bias":false,"mlp_hidden_act":"relu2","tie_word_embeddings":false})",
     8888227328},
    {"nemotron-3-nano-30b-a3b",  // nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B: 23 Mamba-2, 6 attention and 23 MoE layers
     R"({"model_type":"nemotron_h","vocab_size":131072,"hidden_size":2688,"num_hidden_layers":52,
        "hybrid_override_pattern":"MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME","num_attention_heads":32,
        "num_key_value_heads":2,"head_dim":128,"n_routed_experts":128,"n_shared_experts":1,"num_experts_per_tok":6,
        "moe_intermediate_size":1856,"moe_shared_expert_intermediate_size":3712,"mamba_num_heads":64,
        "mamba_head_dim":64,"ssm_state_size":128,"n_groups":8,"conv_kernel":4,"chunk_size":128,"intermediate_size":1856,
        "max_position_embeddings":262144,"tie_word_embeddings":false})",
     31577940288},
    {"qwen3-next-80b-a3b",  // Qwen/Qwen3-Next-80B-A3B-Instruct (= Qwen3-Coder-Next): 36 Gated DeltaNet, 12 attention
     R"({"model_type":"qwen3_next","vocab_size":151936,"hidden_size":2048,"intermediate_size":5120,
        "num_hidden_layers":48,"num_attention_heads":16,"num_key_value_heads":2,"head_dim":256,
        "partial_rotary_factor":0.25,"full_attention_interval":4,"linear_conv_kernel_dim":4,"linear_key_head_dim":128,
        "linear_value_head_dim":128,"linear_num_key_heads":16,"linear_num_value_heads":32,"num_experts":512,
        "num_experts_per_tok":10,"moe_intermediate_size":512,"shared_expert_intermediate_size":512,
        "decoder_sparse_step":1,"mlp_only_layers":[],"max_position_embeddings":262144,"tie_word_embeddings":false})",
     79674391296},
    {"qwen3.5-9b",  // Qwen/Qwen3.5-9B's text_config (the vision tower and the MTP layer are not modelled)
     R"({"model_type":"qwen3_5_text","vocab_size":248320,"hidden_size":4096,"intermediate_size":12288,
        "num_hidden_layers":32,"num_attention_heads":16,"num_key_value_heads":4,"head_dim":256,
        "full_attention_interval":4,"linear_conv_kernel_dim":4,"linear_key_head_dim":128,"linear_value_head_dim":128,
        "linear_num_key_heads":16,"linear_num_value_heads":32,"max_position_embeddings":262144,
        "rope_parameters":{"rope_type":"default","rope_theta":10000000,"partial_rotary_factor":0.25,
        "mrope_section":[11,11,10],"mrope_interleaved":true},"tie_word_embeddings":false})",
     8953803264},
    {"qwen3.5-35b-a3b",  // Qwen/Qwen3.5-35B-A3B's text_config (the vision tower and the MTP layer are not modelled)
     R"({"model_type":"qwen3_5_moe_text","vocab_size":248320,"hidden_size":2048,"num_hidden_layers":40,
        "num_attention_heads":16,"num_key_value_heads":2,"head_dim":256,"full_attention_interval":4,
        "linear_conv_kernel_dim":4,"linear_key_head_dim":128,"linear_value_head_dim":128,"linear_num_key_heads":16,
        "linear_num_value_heads":32,"num_experts":256,"num_experts_per_tok":8,"moe_intermediate_size":512,
        "shared_expert_intermediate_size":512,"max_position_embeddings":262144,
        "rope_parameters":{"rope_type":"default","rope_theta":10000000,"partial_rotary_factor":0.25,
        "mrope_section":[11,11,10],"mrope_interleaved":true},"tie_word_embeddings":false})",
     34660610688},
    {"mamba-2.8b",  // state-spaces/mamba-2.8b-hf: 64 Mamba-1 layers
     R"({"model_type":"mamba","vocab_size":50280,"hidden_size":2560,"num_hidden_layers":64,"state_size":16,"expand":2,
        "conv_kernel":4,"time_step_rank":160,"use_bias":false,"use_conv_bias":true})",
     2768345600},
    {"jamba-1.5-mini",  // ai21labs/AI21-Jamba-1.5-Mini (= Jamba-v0.1's shapes): 28 Mamba-1 and 4 attention layers
     R"({"model_type":"jamba","vocab_size":65536,"hidden_size":4096,"intermediate_size":14336,"num_hidden_layers":32,
        "num_attention_heads":32,"num_key_value_heads":8,"attn_layer_offset":4,"attn_layer_period":8,
        "expert_layer_offset":1,"expert_layer_period":2,"num_experts":16,"num_experts_per_tok":2,"mamba_d_state":16,
        "mamba_d_conv":4,"mamba_expand":2,"mamba_dt_rank":256,"mamba_conv_bias":true,"mamba_proj_bias":false,
        "max_position_embeddings":262144,"tie_word_embeddings":false})",
     51570323328},
    {"phi-3-mini",
     R"({"model_type":"phi3","vocab_size":32064,"hidden_size":3072,"intermediate_size":8192,"num_hidden_layers":32,
        "num_attention_heads":32,"num_key_value_heads":32,"max_position_embeddings":4096,"sliding_window":2047,
        "hidden_act":"silu","tie_word_embeddings":false})",
     3821079552},
    {"gpt3-125m", R"({"model_type":"gpt2","vocab_size":50257,"n_embd":768,"n_layer":12,"n_head":12,"n_positions":2048})", 0},
    {"gpt3-350m", R"({"model_type":"gpt2","vocab_size":50257,"n_embd":1024,"n_layer":24,"n_head":16,"n_positions":2048})", 0},
    {"gpt3-760m", R"({"model_type":"gpt2","vocab_size":50257,"n_embd":1536,"n_layer":24,"n_head":16,"n_positions":2048})", 0},
    {"gpt3-1.3b", R"({"model_type":"gpt2","vocab_size":50257,"n_embd":2048,"n_layer":24,"n_head":16,"n_positions":2048})", 0},
    {"gpt3-2.7b", R"({"model_type":"gpt2","vocab_size":50257,"n_embd":2560,"n_layer":32,"n_head":32,"n_positions":2048})", 0},
    {"gpt3-6.7b", R"({"model_type":"gpt2","vocab_size":50257,"n_embd":4096,"n_layer":32,"n_head":32,"n_positions":2048})", 0},
    {"gpt3-13b", R"({"model_type":"gpt2","vocab_size":50257,"n_embd":5120,"n_layer":40,"n_head":40,"n_positions":2048})", 0},
    {"gpt3-175b", R"({"model_type":"gpt2","vocab_size":50257,"n_embd":12288,"n_layer":96,"n_head":96,"n_positions":2048})", 0},
    {"megatron-1.7b", R"({"model_type":"gpt2","vocab_size":51200,"n_embd":2304,"n_layer":24,"n_head":24,"n_positions":2048})", 0},
    {"megatron-3.6b", R"({"model_type":"gpt2","vocab_size":51200,"n_embd":3072,"n_layer":30,"n_head":32,"n_positions":2048})", 0},
    {"megatron-7.5b", R"({"model_type":"gpt2","vocab_size":51200,"n_embd":4096,"n_layer":36,"n_head":32,"n_positions":2048})", 0},
    {"megatron-18b", R"({"model_type":"gpt2","vocab_size":51200,"n_embd":6144,"n_layer":40,"n_head":48,"n_positions":2048})", 0},
    {"megatron-39b", R"({"model_type":"gpt2","vocab_size":51200,"n_embd":8192,"n_layer":48,"n_head":64,"n_positions":2048})", 0},
    {"megatron-76b", R"({"model_type":"gpt2","vocab_size":51200,"n_embd":10240,"n_layer":60,"n_head":80,"n_positions":2048})", 0},
    {"megatron-145b", R"({"model_type":"gpt2","vocab_size":51200,"n_embd":12288,"n_layer":80,"n_head":96,"n_positions":2048})", 0},
    {"megatron-310b", R"({"model_type":"gpt2","vocab_size":51200,"n_embd":16384,"n_layer":96,"n_head":128,"n_positions":2048})", 0},
    {"megatron-530b", R"({"model_type":"gpt2","vocab_size":51200,"n_embd":20480,"n_layer":105,"n_head":128,"n_positions":2048})", 0},
    {"megatron-1t", R"({"model_type":"gpt2","vocab_size":51200,"n_embd":25600,"n_layer":128,"n_head":160,"n_positions":2048})", 0},
};

}  // namespace

const std::vector<LlmConfig>& llm_zoo_configs() {
  static const std::vector<LlmConfig> kAll = [] {
    std::vector<LlmConfig> out;
    for (const auto& z : kConfigs) {
      LlmConfig c = parse_llm_config(nlohmann::json::parse(z.json), fmt::format("zoo:{}", z.name));
      c.name = z.name;
      out.push_back(std::move(c));
    }
    return out;
  }();
  return kAll;
}

const LlmConfig* find_llm_config(const std::string& name) {
  for (const auto& c : llm_zoo_configs())
    if (c.name == name) return &c;
  return nullptr;
}

Count llm_published_params(const std::string& name) {
  for (const auto& z : kConfigs)
    if (name == z.name) return z.published;
  return 0;
}

namespace {

/// The parts every decoder layer is made of.
struct LayerParts {
  Count attention_and_norms = 0;  ///< attention + the layer's norms
  Count expert = 0;               ///< one expert (or a plain MLP of the intermediate width)
  Count dense_mlp = 0;            ///< a dense layer's MLP
  Count sparse_rest = 0;          ///< a sparse layer's router (+ selection bias) and shared expert (+ its gate)
  Count norm = 0;                 ///< one norm
  Count attention = 0;            ///< the attention alone (a hybrid layer's mixer)
  Count mamba = 0;                ///< a Mamba-2 mixer: in_proj, conv1d, A_log, D, dt_bias, gated norm, out_proj
  Count delta = 0;                ///< a Gated DeltaNet: in_proj_qkvz, in_proj_ba, conv1d, A_log, dt_bias, norm, out_proj
  Count mamba1 = 0;               ///< a Mamba-1 mixer: in_proj, conv1d, x_proj, dt_proj, A_log, D, out_proj
};

LayerParts layer_parts(const LlmConfig& c) {
  const Count h = c.hidden_size, hd = c.head_dim, H = c.num_heads, kv = c.num_kv_heads;
  LayerParts lp;
  lp.norm = c.norm == LlmNorm::LayerNorm ? h * ((c.norm_scale ? 1 : 0) + (c.norm_bias ? 1 : 0)) : h;
  auto mlp = [&](Count width) {
    return c.gated_mlp ? 3 * h * width + (c.mlp_bias ? 2 * width + h : 0) : 2 * h * width + (c.mlp_bias ? width + h : 0);
  };
  const Count qk_norm = c.qk_norm == LlmConfig::QkNorm::Whole     ? (H + kv) * hd
                        : c.qk_norm == LlmConfig::QkNorm::PerHead ? 2 * hd
                                                                  : 0;
  Count attn = h * (H + 2 * kv) * hd + (c.qkv_bias ? (H + 2 * kv) * hd : 0) + H * hd * h + (c.o_bias ? h : 0) + qk_norm;
  if (c.mla()) {  // q (low-rank with its norm, or one q_proj), the latent kv_a_proj + norm, kv_b_proj, o_proj
    const Count ql = c.q_lora_rank, kl = c.kv_lora_rank, rope = c.qk_rope_head_dim, vd = c.value_dim();
    const Count bias = c.qkv_bias ? 1 : 0;
    attn = (ql > 0 ? h * ql + bias * ql + ql + ql * H * hd : h * H * hd + bias * H * hd) +  // q
           h * (kl + rope) + bias * (kl + rope) + kl + kl * H * (hd - rope + vd) +           // kv_a, norm, kv_b
           H * vd * h + (c.o_bias ? h : 0);
    if (c.dsa()) {  // the indexer: wq_b from the query latent, wk, k_norm (LayerNorm: weight and bias), weights_proj
      const Count IH = c.index_heads, ID = c.index_head_dim;
      attn += ql * IH * ID + h * ID + 2 * ID + h * IH;
    }
  }
  if (c.attention_sinks) attn += H;  // one sink logit per head
  if (c.attn_output_gate) attn += h * H * hd + (c.qkv_bias ? H * hd : 0);  // q_proj's gate half
  lp.attention = attn;
  const Count I = c.ssm_inner(), CD = c.conv_dim(), SH = c.ssm_heads, proj = I + CD + SH;
  lp.mamba = h * proj + (c.ssm_proj_bias ? proj : 0) + CD * c.conv_kernel + (c.conv_bias ? CD : 0) + 3 * SH + I +
             I * h + (c.ssm_proj_bias ? h : 0);
  const Count GC = c.gdn_conv_dim(), GV = c.gdn_value_width(), GH = c.gdn_value_heads;
  lp.delta = h * (GC + GV) + h * 2 * GH + GC * c.conv_kernel + 2 * GH + c.gdn_value_dim + GV * h;
  const Count MI = c.mamba1_inner, MN = c.ssm_state, MR = c.dt_rank;
  lp.mamba1 = h * 2 * MI + (c.ssm_proj_bias ? 2 * MI : 0) + MI * c.conv_kernel + (c.conv_bias ? MI : 0) +
              MI * (MR + 2 * MN) + MR * MI + MI + MI * MN + MI + MI * h + (c.ssm_proj_bias ? h : 0) +
              (c.mamba1_norms == LlmConfig::Mamba1Norms::Weighted ? MR + 2 * MN : 0);  // jamba's dt, B, C norms
  const int norms = c.parallel_residual ? c.parallel_norms : c.sandwich_norms ? 4 : 2;
  lp.attention_and_norms = attn + norms * lp.norm;
  lp.expert = mlp(c.intermediate_size);
  lp.dense_mlp = mlp(c.dense_width());
  const bool expert_bias = c.router_sigmoid || c.router_bias || c.softmax_selection_bias;  // one per expert
  lp.sparse_rest = h * c.num_experts + (expert_bias ? c.num_experts : 0);
  if (c.shared_expert_intermediate_size > 0)
    lp.sparse_rest += mlp(c.shared_expert_intermediate_size) + (c.shared_expert_gate ? h : 0);
  return lp;
}

// An encoder's head (LlmConfig::head): pooler (h^2 + h) where the architecture has one; the MLM head's transform
// (dense h^2 + h, LayerNorm 2h) and decoder bias V (its weight tied to the word embedding unless untied: + V h);
// BertForPreTraining's next-sentence Linear(h, 2); classifiers Linear(h, labels), RoBERTa's and DistilBERT's
// sequence classifiers after a dense h x h (classifier.dense, pre_classifier); QA outputs Linear(h, 2).
Count encoder_head_params(const LlmConfig& c, Count norm) {
  const Count h = c.hidden_size, V = c.vocab_size, labels = c.num_labels;
  const Count dense = h * h + h;
  Count p = c.pooler ? dense : 0;
  if (c.head == LlmHead::MaskedLm || c.head == LlmHead::PreTraining)
    p += dense + norm + V + (c.tied_embeddings ? 0 : V * h);
  if (c.head == LlmHead::PreTraining) p += 2 * h + 2;
  if (c.head == LlmHead::SequenceClassification) p += (c.family == "bert" ? 0 : dense) + h * labels + labels;
  if (c.head == LlmHead::TokenClassification) p += h * labels + labels;
  if (c.head == LlmHead::QuestionAnswering) p += 2 * h + 2;
  return p;
}

}  // namespace

LayerParams llm_layer_params(const LlmConfig& c, int64_t layer) {
  const LayerParts lp = layer_parts(c);
  // one block of a hybrid layer: its mixer, or its MLP or MoE part (norms apart)
  auto block = [&](LlmBlock kind) -> LayerParams {
    switch (kind) {
      case LlmBlock::Mamba: return {lp.mamba, 0};
      case LlmBlock::Attention: return {lp.attention, 0};
      case LlmBlock::Mlp: return {lp.dense_mlp, 0};
      case LlmBlock::Moe: return {lp.sparse_rest, c.num_experts * lp.expert};
      case LlmBlock::DeltaNet: return {lp.delta, 0};
      case LlmBlock::Mamba1: return {lp.mamba1, 0};
    }
    return {};
  };
  if (c.hybrid_decoder) {  // a decoder layer: its mixer, then its MLP or MoE part, each behind a norm
    const LayerParams mixer = block(c.blocks[static_cast<size_t>(layer)]);
    const LayerParams ffn = block(c.sparse_layer(layer) ? LlmBlock::Moe : LlmBlock::Mlp);
    return {2 * lp.norm + mixer.dense + ffn.dense, mixer.experts + ffn.experts};
  }
  if (c.hybrid()) {  // one block behind one norm
    const LayerParams one = block(c.blocks[static_cast<size_t>(layer)]);
    return {lp.norm + one.dense, one.experts};
  }
  if (c.sparse_layer(layer)) return {lp.attention_and_norms + lp.sparse_rest, c.num_experts * lp.expert};
  return {lp.attention_and_norms + lp.dense_mlp, 0};
}

LlmParams llm_params(const LlmConfig& c) {
  const Count h = c.hidden_size, V = c.vocab_size;
  const Count e = c.embed_proj_dim > 0 ? c.embed_proj_dim : h;
  const LayerParts lp = layer_parts(c);
  LlmParams p;
  p.embedding = V * e + (c.position == LlmPosition::Learned ? (c.max_positions + c.position_offset) * h : 0) +
                Count{c.token_type_vocab} * h + (c.embedding_norm ? lp.norm : 0);
  p.per_layer_dense = lp.attention_and_norms;
  p.expert = lp.expert;
  Count layers = 0, inactive = 0;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const LayerParams layer = llm_layer_params(c, l);
    layers += layer.dense + layer.experts;
    if (c.sparse_layer(l)) inactive += (c.num_experts - c.experts_per_token) * p.expert;
  }
  const Count proj = c.embed_proj_dim > 0 ? 2 * h * e : 0;
  const Count head = c.head == LlmHead::CausalLm ? (c.tied_embeddings ? 0 : V * e) + (c.lm_head_bias ? V : 0)
                                                 : encoder_head_params(c, lp.norm);
  p.layers = layers;
  p.total = p.embedding + layers + (c.post_norm ? 0 : lp.norm) + proj + head;
  p.active_per_token = p.total - inactive;
  return p;
}

}  // namespace ridge
