// Hybrid models from a config.json (nemotron_h): Mamba-2, attention, MLP and MoE layers, their exact parameter
// counts (published checkpoints, graph = formula), node names and one-line refusals.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/llm.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace hybrid_test {

using nlohmann::json;

// NVIDIA-Nemotron-Nano-9B-v2's config.json (the keys that shape it).
const char* kNano9b = R"({"model_type":"nemotron_h","vocab_size":131072,"hidden_size":4480,"intermediate_size":15680,
  "num_hidden_layers":56,"max_position_embeddings":131072,"num_attention_heads":40,"num_key_value_heads":8,
  "head_dim":128,"hybrid_override_pattern":"M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
  "mamba_num_heads":128,"mamba_head_dim":80,"n_groups":8,"ssm_state_size":128,"conv_kernel":4,"chunk_size":128,
  "use_conv_bias":true,"use_bias":false,"mlp_hidden_act":"relu2","tie_word_embeddings":false})";

// A small hybrid of every block type: Mamba-2, attention, MLP, MoE (vocabulary 64, hidden 32), `extra` members added.
LlmConfig small_hybrid(const char* extra = "") {
  LlmConfig c = parse_llm_config(json::parse(fmt::format(R"({{"model_type":"nemotron_h","vocab_size":64,
      "hidden_size":32,"intermediate_size":48,"hybrid_override_pattern":"M*-EM","num_attention_heads":4,
      "num_key_value_heads":2,"head_dim":8,"max_position_embeddings":64,"mamba_num_heads":4,"mamba_head_dim":6,
      "n_groups":2,"ssm_state_size":5,"conv_kernel":3,"chunk_size":4,"n_routed_experts":4,"num_experts_per_tok":2,
      "moe_intermediate_size":12,"moe_shared_expert_intermediate_size":20{}}})", extra)), "small");
  c.name = "small";
  return c;
}

Count graph_params(const LlmConfig& c) {
  LlmShape s;
  s.batch = 2, s.tokens = 8;
  return estimate(build_llm(c, s)).total.params;
}

std::string error_of(const std::string& members) {
  try {
    parse_llm_config(json::parse(R"({"model_type":"nemotron_h","hidden_size":32,"vocab_size":64,"num_attention_heads":4,
        "num_key_value_heads":2,"mamba_num_heads":4,"mamba_head_dim":8,"n_groups":2)" + members + "}"), "cfg.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LlmHybrid, NemotronNano9bV2HasItsPublishedParameterCount) {
  const LlmConfig c = parse_llm_config(json::parse(kNano9b), "nano9b");
  ASSERT_EQ(c.num_layers, 56);
  for (int64_t l = 0; l < c.num_layers; ++l) EXPECT_FALSE(c.sparse_layer(l));
  EXPECT_EQ(c.blocks_of(LlmBlock::Mamba), 27);
  EXPECT_EQ(c.blocks_of(LlmBlock::Attention), 4);
  EXPECT_EQ(c.blocks_of(LlmBlock::Mlp), 25);
  // Per Mamba-2 layer: in_proj 4480 x (10240 gate + 12288 x|B|C + 128 dt), conv1d 12288 x 4 + bias, A_log, D,
  // dt_bias (128 each), the gated norm's 10240, out_proj 10240 x 4480; attention q/k/v/o without biases; MLP up and
  // down of 15680; one RMSNorm per layer and a final one; untied embeddings and head.
  const Count h = 4480, mamba_layer = h * 22656 + 12288 * 5 + 3 * 128 + 10240 + 10240 * h,
              attention_layer = h * 56 * 128 + 40 * 128 * h, mlp_layer = 2 * h * 15680;
  const Count expected = 2 * Count{131072} * h + 27 * (h + mamba_layer) + 4 * (h + attention_layer) +
                         25 * (h + mlp_layer) + h;
  EXPECT_EQ(expected, Count{8888227328});  // the checkpoint's 17,776,454,656 bf16 bytes
  EXPECT_EQ(llm_params(c).total, expected);
  EXPECT_EQ(graph_params(c), expected);
}

// Nemotron 3 Nano (23 Mamba-2, 6 attention, 23 MoE layers of 128 experts, top 6): "31.6B total, 3.6B active
// including embeddings"; llama.cpp counts 31,577,940,288 elements (the hub's 31,577,937,344 leaves out the 23 x 128
// selection biases, which ridge counts as DeepSeek-V3's).
TEST(LlmHybrid, Nemotron3NanoCountsItsExpertsAndActiveParameters) {
  const LlmConfig& c = *find_llm_config("nemotron-3-nano-30b-a3b");
  const Count h = 2688, I = 64 * 64, conv = I + 2 * 8 * 128, proj = I + conv + 64;
  const Count mamba = h * proj + conv * 5 + 3 * 64 + I + I * h;
  const Count attention = h * (32 + 4) * 128 + 32 * 128 * h;
  const Count expert = 2 * h * 1856, moe_rest = h * 128 + 128 + 2 * h * 3712;
  const Count total = 2 * Count{131072} * h + 23 * (h + mamba) + 6 * (h + attention) + 23 * (h + moe_rest + 128 * expert) + h;
  EXPECT_EQ(total, Count{31577940288});
  EXPECT_EQ(llm_params(c).total, total);
  EXPECT_EQ(llm_params(c).active_per_token, total - 23 * (128 - 6) * expert);
  EXPECT_EQ(llm_published_params("nemotron-3-nano-30b-a3b"), total);
}

TEST(LlmHybrid, EveryBlockTypeBuildsWithHfNamesAndItsFormula) {
  for (const char* extra : {"", R"(,"use_bias":true,"use_conv_bias":false,"attention_bias":true,"mlp_bias":true)"}) {
    const LlmConfig c = small_hybrid(extra);
    EXPECT_EQ(graph_params(c), llm_params(c).total) << extra;
    // The MoE layer's experts are the only inactive parameters: (4 - 2) x (up 32 x 12 + down 12 x 32 (+ biases)).
    const Count expert = 2 * 32 * 12 + (c.mlp_bias ? 12 + 32 : 0);
    EXPECT_EQ(llm_params(c).total - llm_params(c).active_per_token, 2 * expert) << extra;
  }
  LlmShape s;
  s.batch = 2, s.tokens = 8;
  const Graph g = build_llm(small_hybrid(), s);
  for (const char* node : {"backbone.embeddings", "backbone.layers.0.norm.mul_1", "backbone.layers.0.mixer.in_proj",
                           "backbone.layers.0.mixer.conv1d", "backbone.layers.0.mixer.selective_scan",
                           "backbone.layers.0.mixer.out_proj", "backbone.layers.1.mixer.q_proj",
                           "backbone.layers.1.mixer.o_proj", "backbone.layers.2.mixer.up_proj",
                           "backbone.layers.2.mixer.down_proj", "backbone.layers.3.mixer.gate",
                           "backbone.layers.3.mixer.experts.0.up_proj", "backbone.layers.3.mixer.shared_experts.up_proj",
                           "backbone.norm_f.mul_1", "lm_head"})
    EXPECT_GE(g.find_node(node), 0) << node;
  // No rotary embedding anywhere (JambaAttention has none); no MoE in the attention layer.
  for (const Value& v : g.values) EXPECT_EQ(v.name.find("rotary"), std::string::npos) << v.name;
  // The scan: x [2, 8, 4, 6], chunks of 4, with the forward work of docs/counting.md's formula.
  const Node& scan = g.nodes[g.find_node("backbone.layers.0.mixer.selective_scan")];
  EXPECT_EQ(to_string(g.value(scan.outputs[0]).shape), "2x8x4x6");
  EXPECT_EQ(to_string(g.value(scan.outputs[1]).shape), "2x4x6x5");
  // Per sequence, 2 chunks of q = 4 (10 pairs): MACs 2 x (G 2 x 10 x N 5 + H 4 x 10 x P 6 + 2 x 4 x 120 + 4 x 24) =
  // 2 x 1396; 2 sequences.
  const ModelCost mc = estimate(g);
  int scans = 0;
  for (const auto& nc : mc.nodes)
    if (g.nodes[nc.node].name == scan.name) {
      EXPECT_EQ(nc.cost.macs, Count{2} * 2 * (100 + 240 + 960 + 96));
      ++scans;
    }
  EXPECT_EQ(scans, 1);
}

// Mamba-Codestral-7B (mamba2): 64 Mamba-2 layers, hidden 4096, 128 heads of 64 = 2 x 4096, 8 groups of state 128;
// "7.29B" on its model card.
TEST(LlmHybrid, Mamba2IsEveryLayerAMamba2Mixer) {
  const LlmConfig c = parse_llm_config(json::parse(R"({"model_type":"mamba2","hidden_size":4096,
      "num_hidden_layers":64,"vocab_size":32768,"state_size":128,"n_groups":8,"num_heads":128,"head_dim":64,"expand":2,
      "conv_kernel":4,"chunk_size":256,"use_bias":false,"use_conv_bias":true,"tie_word_embeddings":false})"), "codestral");
  const Count h = 4096, I = 8192, conv = I + 2 * 8 * 128;
  const Count layer = h + h * (I + conv + 128) + conv * 5 + 3 * 128 + I + I * h;
  const Count expected = 2 * Count{32768} * h + 64 * layer + h;
  EXPECT_EQ(expected, Count{7285403648});
  EXPECT_EQ(llm_params(c).total, expected);
  EXPECT_EQ(c.blocks_of(LlmBlock::Mamba), c.num_layers);
  // Small shapes: graph = formula, Mamba2Mixer's names, no attention anywhere.
  const LlmConfig small = parse_llm_config(json::parse(R"({"model_type":"mamba2","hidden_size":16,"num_hidden_layers":2,
      "vocab_size":64,"state_size":4,"n_groups":2,"num_heads":4,"head_dim":8,"expand":2,"use_bias":true,
      "tie_word_embeddings":true})"), "small");
  EXPECT_EQ(graph_params(small), llm_params(small).total);
  LlmShape s;
  s.tokens = 8;
  const Graph g = build_llm(small, s);
  for (const char* node : {"backbone.layers.1.mixer.in_proj", "backbone.layers.1.mixer.selective_scan",
                           "backbone.layers.1.mixer.norm.mul_weight", "backbone.norm_f.mul_1", "lm_head"})
    EXPECT_GE(g.find_node(node), 0) << node;
  for (const Node& n : g.nodes) EXPECT_EQ(n.name.find("q_proj"), std::string::npos) << n.name;
  for (const auto& [members, want] : std::vector<std::pair<std::string, std::string>>{
           {R"("num_heads":4,"head_dim":8,"hidden_size":32)", "num_heads 4 x head_dim 8 is not expand 2 x hidden_size 32 = 64"},
           {R"("hidden_act":"gelu")", "hidden_act 'gelu'"},
           {R"("num_hidden_layers":0)", "num_hidden_layers 0"}}) {
    test::expect_one_line_error(
        [&] { parse_llm_config(json::parse(R"({"model_type":"mamba2",)" + members + "}"), "cfg.json"); }, "cfg.json",
        want, members);
  }
}

// Granite-4.0-H-Small (granitemoehybrid): 40 decoder layers, 36 with a Mamba-2 mixer (128 heads of 64, 1 group of
// state 128) and 4 with attention (32 heads, 8 KV heads of 128), each then 72 experts of 768 (top 10) plus a shared MLP
// of 1536; tied embeddings of 100,352. "32B total, 9B active"; 32,207,337,984 counted from its checkpoint.
TEST(LlmHybrid, Granite4HybridLayersAreMambaOrAttentionThenExperts) {
  std::string types;
  for (int l = 0; l < 40; ++l) types += std::string(l ? "," : "") + (l % 10 == 5 ? "\"attention\"" : "\"mamba\"");
  const LlmConfig c = parse_llm_config(json::parse(R"({"model_type":"granitemoehybrid","hidden_size":4096,
      "num_hidden_layers":40,"num_attention_heads":32,"num_key_value_heads":8,"num_local_experts":72,
      "num_experts_per_tok":10,"shared_intermediate_size":1536,"intermediate_size":768,"mamba_d_state":128,
      "mamba_d_conv":4,"mamba_expand":2,"mamba_n_heads":128,"mamba_n_groups":1,"mamba_d_head":64,
      "tie_word_embeddings":true,"vocab_size":100352,"position_embedding_type":"nope","layer_types":[)" + types + "]}"),
                                       "granite-4.0-h-small");
  const Count h = 4096, I = 8192, conv = I + 2 * 128;
  const Count mamba = h * (I + conv + 128) + conv * 5 + 3 * 128 + I + I * h;
  const Count attention = h * (32 + 16) * 128 + 32 * 128 * h;
  const Count expert = 3 * h * 768, ffn = h * 72 + 72 * expert + 3 * h * 1536;
  const Count total = Count{100352} * h + 36 * (2 * h + mamba + ffn) + 4 * (2 * h + attention + ffn) + h;
  EXPECT_EQ(total, Count{32207337984});
  EXPECT_EQ(llm_params(c).total, total);
  EXPECT_EQ(llm_params(c).active_per_token, total - 40 * (72 - 10) * expert);  // "9B active": 8,803,121,664
  EXPECT_EQ(llm_params(c).active_per_token, Count{8803121664});
  // Small shapes, with and without experts, rotary or none: graph = formula, HF's module names.
  for (const char* extra : {R"("position_embedding_type":"nope")", R"("position_embedding_type":"rope")",
                            R"("num_local_experts":0)"}) {
    const LlmConfig small = parse_llm_config(json::parse(std::string(R"({"model_type":"granitemoehybrid",
        "hidden_size":32,"num_hidden_layers":3,"num_attention_heads":4,"num_key_value_heads":2,"vocab_size":64,
        "num_local_experts":4,"num_experts_per_tok":2,"intermediate_size":12,"shared_intermediate_size":20,
        "mamba_n_heads":8,"mamba_d_head":"auto","mamba_n_groups":2,"mamba_d_state":4,"mamba_expand":2,
        "layer_types":["mamba","attention","mamba"],)") + extra + "}"), "small");
    EXPECT_EQ(graph_params(small), llm_params(small).total) << extra;
    LlmShape s;
    s.tokens = 8;
    const Graph g = build_llm(small, s);
    for (const char* node : {"model.layers.0.mamba.in_proj", "model.layers.0.mamba.selective_scan",
                             "model.layers.1.self_attn.q_proj", "model.layers.2.shared_mlp.input_linear",
                             "model.layers.2.shared_mlp.output_linear", "model.layers.2.mul_residual_multiplier",
                             "div_logits_scaling"})
      EXPECT_GE(g.find_node(node), 0) << extra << " " << node;
    EXPECT_EQ(g.find_node("model.layers.0.block_sparse_moe.router") >= 0, small.num_experts > 0) << extra;
  }
  for (const auto& [members, want] : std::vector<std::pair<std::string, std::string>>{
           {R"("layer_types":["mamba","conv"],"num_hidden_layers":2)", "layer_types[1]"},
           {R"("layer_types":["mamba"],"num_hidden_layers":2)", "layer_types must list"},
           {R"("mamba_n_heads":3)", "mamba_n_heads 3 x mamba_d_head"},
           {R"("mamba_d_head":"half")", "mamba_d_head must be an integer or \"auto\""},
           {R"("position_embedding_type":"alibi")", "position_embedding_type 'alibi'"},
           {R"("num_local_experts":-2)", "num_local_experts -2"}}) {
    test::expect_one_line_error(
        [&] {
          parse_llm_config(json::parse(R"({"model_type":"granitemoehybrid","hidden_size":32,"num_attention_heads":4,
              "vocab_size":64,"num_hidden_layers":2,"mamba_n_heads":8,)" + members + "}"), "cfg.json");
        },
        "cfg.json", want, members);
  }
}

TEST(LlmHybrid, DefaultsAndLegacyKeysAreTransformers) {
  // NemotronHConfig's default block list (linear_attention, moe, full_attention, mlp) and its defaults.
  const LlmConfig d = parse_llm_config(json::parse(R"({"model_type":"nemotron_h"})"), "default");
  ASSERT_EQ(d.num_layers, 4);
  EXPECT_EQ(d.blocks[0], LlmBlock::Mamba);
  EXPECT_EQ(d.blocks[1], LlmBlock::Moe);
  EXPECT_EQ(d.ssm_heads, 128);
  EXPECT_EQ(d.ssm_head_dim, 64);
  EXPECT_EQ(d.ssm_state, 128);
  EXPECT_EQ(d.ssm_groups, 8);
  EXPECT_EQ(d.num_experts, 8);
  EXPECT_EQ(d.dense_width(), 21504);
  EXPECT_EQ(d.intermediate_size, 7688);
  // layers_block_type (and its legacy names) wins over hybrid_override_pattern; mamba_* spellings are read.
  const LlmConfig l = parse_llm_config(json::parse(R"({"model_type":"nemotron_h","hybrid_override_pattern":"MMMM",
      "layers_block_type":["mamba","attention","mlp"],"mamba_n_groups":4,"mamba_d_conv":2,"mamba_chunk_size":64,
      "mamba_ssm_cache_dtype":"bfloat16"})"), "legacy");
  ASSERT_EQ(l.num_layers, 3);
  EXPECT_EQ(l.blocks[1], LlmBlock::Attention);
  EXPECT_EQ(l.ssm_groups, 4);
  EXPECT_EQ(l.conv_kernel, 2);
  EXPECT_EQ(l.ssm_chunk, 64);
  EXPECT_FALSE(l.ssm_state_fp32);
  EXPECT_EQ(l.num_experts, 0);  // no MoE block: a dense model
}

TEST(LlmHybrid, BadHybridConfigsAreOneLineErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {R"(,"hybrid_override_pattern":"M*X")", "hybrid_override_pattern[2] is 'X'"},
      {R"(,"hybrid_override_pattern":7)", "hybrid_override_pattern must be a string"},
      {R"(,"hybrid_override_pattern":"")", "lists no layer"},
      {R"(,"layers_block_type":["mamba","conv"])", "layers_block_type[1]"},
      {R"(,"layers_block_type":"M*")", "layers_block_type must be a list"},
      {R"(,"hybrid_override_pattern":"ME","moe_latent_size":1024)", "moe_latent_size"},
      {R"(,"sliding_window":4096)", "sliding_window"},
      {R"(,"mamba_hidden_act":"gelu")", "mamba_hidden_act 'gelu'"},
      {R"(,"mamba_ssm_cache_dtype":"int8")", "mamba_ssm_cache_dtype 'int8'"},
      {R"(,"n_groups":3)", "not a multiple of n_groups 3"},
      {R"(,"ssm_state_size":0)", "ssm_state_size must be positive"},
      {R"(,"chunk_size":-1)", "chunk_size must be positive"},
      {R"(,"mamba_head_dim":1000000)", "mamba_head_dim 1000000 is beyond"},
      {R"(,"hybrid_override_pattern":"ME","n_routed_experts":0)", "at least one expert"},
  };
  for (const auto& [members, want] : cases) {
    const std::string e = error_of(members);
    EXPECT_NE(e.find("cfg.json"), std::string::npos) << members << ": " << e;
    EXPECT_NE(e.find(want), std::string::npos) << members << ": " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

}  // namespace hybrid_test
}  // namespace ridge
