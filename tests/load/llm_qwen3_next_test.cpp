// qwen3_next from a config.json: Gated DeltaNet and gated-attention decoder layers with qwen2_moe's sparse blocks,
// the published parameter count (Qwen3-Next-80B-A3B = Qwen3-Coder-Next), graph = formula, HF's node names, the
// layer pattern from full_attention_interval or layer_types, and one-line refusals.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/llm.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace qwen3_next_test {

using nlohmann::json;

// Four layers (three Gated DeltaNets, then gated attention), hidden 32, 2 key heads of 6 shared by 4 value heads of
// 5, conv 3; attention 4 heads, 2 KV heads of 8; 4 experts of 12, 2 per token, a shared expert of 20.
LlmConfig small(const std::string& extra = "") {
  return parse_llm_config(json::parse(R"({"model_type":"qwen3_next","vocab_size":64,"hidden_size":32,
      "num_hidden_layers":4,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":8,"intermediate_size":40,
      "linear_num_key_heads":2,"linear_num_value_heads":4,"linear_key_head_dim":6,"linear_value_head_dim":5,
      "linear_conv_kernel_dim":3,"num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":12,
      "shared_expert_intermediate_size":20,"max_position_embeddings":256)" + extra + "}"), "small");
}

Graph graph_of(const LlmConfig& c) {
  LlmShape s;
  s.batch = 2, s.tokens = 8;
  return build_llm(c, s);
}

TEST(LlmQwen3Next, Qwen3Next80bA3bHasItsPublishedParameterCount) {
  const LlmConfig* c = find_llm_config("qwen3-next-80b-a3b");
  ASSERT_NE(c, nullptr);
  // Worked by hand from modeling_qwen3_next.py. Gated DeltaNet: in_proj_qkvz 2048 x (2 x 2048 + 2 x 4096),
  // in_proj_ba 2048 x 64, conv1d 8192 x 4, A_log and dt_bias 32 each, norm 128, out_proj 4096 x 2048. Gated
  // attention: q_proj 2048 x (16 x 256 x 2), k_proj and v_proj 2048 x 512, o_proj 4096 x 2048, q_norm and k_norm
  // 256. Sparse block: router 2048 x 512, 512 experts of 3 x 2048 x 512, the shared expert and its gate 2048 x 1.
  const Count h = 2048, delta = h * 12288 + h * 64 + 8192 * 4 + 64 + 128 + 4096 * h;
  const Count attention = h * 8192 + 2 * h * 512 + 4096 * h + 512;
  const Count expert = 3 * h * 512, ffn = h * 512 + 512 * expert + expert + h;
  const Count total = 2 * Count{151936} * h + 36 * (2 * h + delta + ffn) + 12 * (2 * h + attention + ffn) + h;
  EXPECT_EQ(total, Count{79674391296});  // llama.cpp's n_params; HF's safetensors count for Qwen3-Coder-Next
  EXPECT_EQ(llm_params(*c).total, total);
  EXPECT_EQ(llm_params(*c).active_per_token, total - 48 * (512 - 10) * expert);  // "3B active"
  EXPECT_EQ(llm_params(*c).active_per_token, Count{3874929408});
  EXPECT_EQ(c->blocks_of(LlmBlock::DeltaNet), 36);
  EXPECT_EQ(c->attention_layer_count(), 12);
  EXPECT_TRUE(c->attends(3) && c->blocks[0] == LlmBlock::DeltaNet && c->blocks[2] == LlmBlock::DeltaNet &&
              !c->attends(4));
}

TEST(LlmQwen3Next, Qwen35LanguageModelsHaveTheirPublishedParameterCounts) {
  // Qwen3.5-9B's language model: 24 DeltaNets (hidden 4096: in_proj_qkv 4096 x 8192, in_proj_z 4096 x 4096, in_proj_b
  // and in_proj_a 4096 x 32, conv1d 8192 x 4, A_log, dt_bias, norm 128, out_proj 4096 x 4096), 8 gated attention
  // layers (q_proj 4096 x 8192, k_proj and v_proj 4096 x 1024, o_proj 4096 x 4096, q_norm and k_norm), a dense MLP of
  // 12288 in every layer, untied embeddings of 248320.
  const LlmConfig* dense = find_llm_config("qwen3.5-9b");
  ASSERT_NE(dense, nullptr);
  const Count h = 4096, mlp = 3 * h * 12288;
  const Count delta = h * 8192 + h * 4096 + 2 * h * 32 + 8192 * 4 + 64 + 128 + 4096 * h;
  const Count attention = h * 8192 + 2 * h * 1024 + 4096 * h + 512;
  const Count text = 2 * Count{248320} * h + 24 * (2 * h + delta + mlp) + 8 * (2 * h + attention + mlp) + h;
  EXPECT_EQ(text, Count{8953803264});  // llama.cpp's n_params for Qwen3.5-9B
  EXPECT_EQ(llm_params(*dense).total, text);
  // The checkpoint's 9,653,104,368 (its safetensors total) is this language model, the MTP layer (fc 2h -> h, its two
  // input norms, one gated-attention decoder layer, its norm: 243,290,624) and the vision tower (27 blocks of hidden
  // 1152 and MLP 4304, the 3-D patch embedding, 2304 position rows and the merger to 4096: 456,010,480).
  const Count mtp = 2 * h * h + 2 * h + (2 * h + attention + mlp) + h;
  EXPECT_EQ(mtp, Count{243290624});
  const Count vision = 27 * (1152 * 3456 + 3456 + 1152 * 1152 + 1152 + 4 * 1152 + 2 * 1152 * 4304 + 4304 + 1152) +
                       (3 * 2 * 16 * 16 * 1152 + 1152) + 2304 * 1152 + (2 * 1152 + 4608 * 4608 + 4608 + 4608 * 4096 + 4096);
  EXPECT_EQ(text + mtp + vision, Count{9653104368});
  // Qwen3.5-35B-A3B's: 30 DeltaNets and 10 gated attention layers of hidden 2048 (Qwen3-Next's shapes), a sparse
  // block of 256 experts (8 per token) and the gated shared expert in every layer.
  const LlmConfig* moe = find_llm_config("qwen3.5-35b-a3b");
  ASSERT_NE(moe, nullptr);
  const Count m = 2048, expert = 3 * m * 512, ffn = m * 256 + 256 * expert + expert + m;
  const Count m_delta = m * 8192 + m * 4096 + 2 * m * 32 + 8192 * 4 + 64 + 128 + 4096 * m;
  const Count m_attention = m * 8192 + 2 * m * 512 + 4096 * m + 512;
  const Count total = 2 * Count{248320} * m + 30 * (2 * m + m_delta + ffn) + 10 * (2 * m + m_attention + ffn) + m;
  EXPECT_EQ(total, Count{34660610688});  // llama.cpp's n_params for the qwen35moe architecture (35B-A3B shapes)
  EXPECT_EQ(llm_params(*moe).total, total);
  EXPECT_EQ(llm_params(*moe).active_per_token, total - 40 * (256 - 8) * expert);
}

TEST(LlmQwen3Next, Qwen35SplitsTheProjectionsAndKeepsItsFeedForwardKind) {
  const char* base = R"({"model_type":"%s","vocab_size":64,"hidden_size":32,"num_hidden_layers":4,
      "num_attention_heads":4,"num_key_value_heads":2,"head_dim":8,"intermediate_size":40,"linear_num_key_heads":2,
      "linear_num_value_heads":4,"linear_key_head_dim":6,"linear_value_head_dim":5,"linear_conv_kernel_dim":3,
      "num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":12,"shared_expert_intermediate_size":20,
      "decoder_sparse_step":2})";
  for (const std::string type : {"qwen3_5_text", "qwen3_5_moe_text"}) {
    std::string text = base;
    text.replace(text.find("%s"), 2, type);
    const LlmConfig c = parse_llm_config(json::parse(text), "small");
    const Graph g = graph_of(c);
    EXPECT_EQ(estimate(g).total.params, llm_params(c).total) << type;
    for (const char* node : {"model.layers.0.linear_attn.in_proj_qkv", "model.layers.0.linear_attn.in_proj_z",
                             "model.layers.0.linear_attn.in_proj_b", "model.layers.0.linear_attn.in_proj_a",
                             "model.layers.3.self_attn.mul_gate"})
      EXPECT_GE(g.find_node(node), 0) << type << " " << node;
    // qwen3_5_text: no experts whatever the keys say (transformers deletes them); qwen3_5_moe_text: every layer sparse
    const bool sparse = type == "qwen3_5_moe_text";
    EXPECT_EQ(c.num_experts, sparse ? 4 : 0) << type;
    EXPECT_EQ(g.find_node("model.layers.0.mlp.gate") >= 0, sparse) << type;
    EXPECT_EQ(g.find_node("model.layers.0.mlp.down_proj") >= 0, !sparse) << type;
  }
  EXPECT_THROW(parse_llm_config(json::parse(R"({"model_type":"qwen3_5_moe_text","num_experts":0})"), "moe"), Error);
}

TEST(LlmQwen3Next, GraphEqualsFormulaWithHfNames) {
  for (const char* extra : {"", R"(,"num_experts":0)", R"(,"decoder_sparse_step":2)", R"(,"attention_bias":true)"}) {
    const LlmConfig c = small(extra);
    const Graph g = graph_of(c);
    EXPECT_EQ(estimate(g).total.params, llm_params(c).total) << extra;
    for (const char* node : {"model.layers.0.linear_attn.in_proj_qkvz", "model.layers.0.linear_attn.in_proj_ba",
                             "model.layers.0.linear_attn.conv1d", "model.layers.0.linear_attn.chunk_gated_delta_rule",
                             "model.layers.0.linear_attn.norm.mul_gate", "model.layers.0.linear_attn.out_proj",
                             "model.layers.3.self_attn.q_proj", "model.layers.3.self_attn.q_norm.mul",
                             "model.layers.3.self_attn.mul_gate", "model.layers.3.self_attn.o_proj"})
      EXPECT_GE(g.find_node(node), 0) << extra << " " << node;
    const bool moe = c.num_experts > 0;
    EXPECT_EQ(g.find_node("model.layers.1.mlp.shared_expert_gate") >= 0, moe) << extra;
    EXPECT_EQ(g.find_node("model.layers.1.mlp.experts.3.down_proj") >= 0, moe) << extra;
    // decoder_sparse_step 2: layers 1 and 3 sparse, 0 and 2 a dense MLP of intermediate_size
    EXPECT_EQ(g.find_node("model.layers.0.mlp.gate") >= 0, moe && c.moe_every == 1) << extra;
    EXPECT_EQ(g.find_node("model.layers.0.mlp.down_proj") >= 0, !moe || c.moe_every == 2) << extra;
  }
  // The rule sees each key head's q and k (2 x 6) and the 4 value heads' v (4 x 5), normalised in the kernel.
  const Graph g = graph_of(small());
  const Node& rule = g.nodes[g.find_node("model.layers.0.linear_attn.chunk_gated_delta_rule")];
  EXPECT_EQ(to_string(g.value(rule.inputs[0]).shape), "2x8x2x6");
  EXPECT_EQ(to_string(g.value(rule.inputs[2]).shape), "2x8x4x5");
  EXPECT_EQ(rule.attrs.i("qk_l2norm", 0), 1);
  EXPECT_EQ(rule.attrs.i("chunk_size", 0), 64);
}

TEST(LlmQwen3Next, LayerPatternFromIntervalOrLayerTypes) {
  const LlmConfig every2 = small(R"(,"full_attention_interval":2)");
  EXPECT_TRUE(every2.blocks[0] == LlmBlock::DeltaNet && every2.attends(1) && every2.blocks[2] == LlmBlock::DeltaNet &&
              every2.attends(3));
  const LlmConfig listed =
      small(R"(,"layer_types":["full_attention","linear_attention","linear_attention","full_attention"])");
  EXPECT_TRUE(listed.attends(0) && listed.blocks[1] == LlmBlock::DeltaNet && listed.attends(3));
  // Qwen3NextConfig's defaults where keys are absent.
  const LlmConfig d = parse_llm_config(json::parse(R"({"model_type":"qwen3_next"})"), "default");
  EXPECT_EQ(d.num_layers, 48);
  EXPECT_EQ(d.gdn_value_heads, 32);
  EXPECT_EQ(d.num_experts, 512);
  EXPECT_EQ(d.rotary_dim(), 64);  // 0.25 of head_dim 256
  // partial_rotary_factor inside rope_parameters, as newer transformers writes it
  EXPECT_EQ(small(R"(,"rope_parameters":{"rope_type":"default","partial_rotary_factor":0.5})").rotary_dim(), 4);
}

TEST(LlmQwen3Next, BadConfigsAreOneLineErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {R"(,"layer_types":["linear_attention"])", "layer_types must list"},
      {R"(,"layer_types":["linear_attention","sliding_attention","full_attention","full_attention"])",
       "layer_types[1]"},
      {R"(,"full_attention_interval":0)", "full_attention_interval must be positive"},
      {R"(,"linear_num_value_heads":3)", "not a multiple of linear_num_key_heads 2"},
      {R"(,"linear_key_head_dim":0)", "linear_key_head_dim must be positive"},
      {R"(,"linear_conv_kernel_dim":100000)", "linear_conv_kernel_dim 100000 is beyond"},
      {R"(,"mlp_only_layers":[1])", "mlp_only_layers [1] is not supported"},
      {R"(,"hidden_act":"gelu")", "hidden_act 'gelu'"},
      {R"(,"num_experts":-1)", "num_experts -1"},
      {R"(,"num_experts_per_tok":5)", "num_experts_per_tok 5 is not in 1..4"},
  };
  for (const auto& [members, want] : cases) {
    test::expect_one_line_error([&] { small(members); }, "small", want, members);
  }
}

}  // namespace qwen3_next_test
}  // namespace ridge
