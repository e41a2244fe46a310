// DeepSeek Sparse Attention from a config.json (deepseek_v32: DeepSeek-V3.2; glm_moe_dsa: GLM-5): the lightning
// indexer's parameters worked by hand, graph = formula with the checkpoints' names, the dense/sparse layer pattern,
// and one-line refusals.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/llm.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace dsa_test {

using nlohmann::json;

// Four layers (the first dense), hidden 32, 4 heads of 12 + 4 (rope) query/key dims and 8 value dims from latents of
// 16 (queries) and 10 (keys and values); the indexer: 3 heads of 8; 4 experts of 12, 2 per token, one shared.
LlmConfig small(const std::string& family, const std::string& extra = "") {
  return parse_llm_config(json::parse(R"({"model_type":")" + family + R"(","vocab_size":64,"hidden_size":32,
      "num_hidden_layers":4,"num_attention_heads":4,"num_key_value_heads":4,"q_lora_rank":16,"kv_lora_rank":10,
      "qk_nope_head_dim":12,"qk_rope_head_dim":4,"v_head_dim":8,"intermediate_size":40,"moe_intermediate_size":12,
      "n_routed_experts":4,"num_experts_per_tok":2,"n_shared_experts":1,"first_k_dense_replace":1,
      "index_n_heads":3,"index_head_dim":8,"index_topk":5,"max_position_embeddings":256)" + extra + "}"), "small");
}

Graph graph_of(const LlmConfig& c, int64_t tokens = 8) {
  LlmShape s;
  s.batch = 2, s.tokens = tokens;
  return build_llm(c, s);
}

// One indexer: wq_b (q_lora_rank x heads x dim), wk (hidden x dim), k_norm (weight and bias), weights_proj.
Count indexer(Count q_lora, Count hidden, Count heads, Count dim) { return q_lora * heads * dim + hidden * dim + 2 * dim + hidden * heads; }

TEST(LlmDsa, DeepSeekV32IsV3PlusItsIndexers) {
  const LlmConfig* v32 = find_llm_config("deepseek-v3.2");
  ASSERT_NE(v32, nullptr);
  EXPECT_EQ(v32->index_heads, 64);
  EXPECT_EQ(v32->index_head_dim, 128);
  EXPECT_EQ(v32->index_topk, 2048);
  EXPECT_TRUE(v32->index_relu);
  LlmConfig v3 = *v32;
  v3.family = "deepseek_v3";
  v3.index_heads = v3.index_head_dim = v3.index_topk = 0;
  EXPECT_EQ(indexer(1536, 7168, 64, 128), Count{13959424});
  EXPECT_EQ(llm_params(*v32).total, llm_params(v3).total + 61 * Count{13959424});
  EXPECT_EQ(llm_params(*v32).total, Count{671877944064});  // DeepSeek-V3's 671,026,419,200 + 851,524,864
  EXPECT_EQ(llm_params(*v32).active_per_token - llm_params(v3).active_per_token, 61 * Count{13959424});
}

TEST(LlmDsa, Glm5HasItsPublishedSize) {
  const LlmConfig* c = find_llm_config("glm-5");
  ASSERT_NE(c, nullptr);
  // Worked by hand from modeling_glm_moe_dsa.py with GlmMoeDsaConfig's defaults (GLM-5's shapes): hidden 6144, 78
  // layers (3 dense), 64 heads of 192 + 64 query/key and 256 value dims, query latent 2048, key/value latent 512,
  // the indexer 32 heads of 128; a dense MLP of 12288; 256 experts of 2048 (8 per token) and one shared; vocabulary
  // 154880, untied.
  const Count h = 6144, H = 64, dq = 256, dv = 256;
  const Count attention = h * 2048 + 2048 + 2048 * H * dq + h * (512 + 64) + 512 + 512 * H * (192 + dv) + H * dv * h +
                          indexer(2048, h, 32, 128);
  const Count expert = 3 * h * 2048, dense = 3 * h * 12288;
  const Count sparse_rest = h * 256 + 256 + expert;  // router, its selection bias, the shared expert
  const Count total = 2 * Count{154880} * h + 78 * (attention + 2 * h) + 3 * dense + 75 * (sparse_rest + 256 * expert) + h;
  EXPECT_EQ(llm_params(*c).total, total);
  EXPECT_EQ(total, Count{743911218432});  // "744B" (Z.ai)
  EXPECT_EQ(llm_params(*c).active_per_token, total - 75 * Count{248} * expert);  // "40B active"
  EXPECT_EQ(c->index_heads, 32);
  EXPECT_FALSE(c->index_relu);
}

TEST(LlmDsa, GraphEqualsFormulaWithTheCheckpointsNames) {
  for (const char* family : {"deepseek_v32", "glm_moe_dsa"}) {
    const bool glm = std::string(family) == "glm_moe_dsa";
    for (const char* extra : {"", R"(,"n_routed_experts":0)", R"(,"attention_bias":true)"}) {
      const LlmConfig c = small(family, extra);
      const Graph g = graph_of(c);
      EXPECT_EQ(estimate(g).total.params, llm_params(c).total) << family << extra;
      const std::string at = "model.layers.1.self_attn.";
      for (const std::string& node : {at + "indexer." + (glm ? "wq_b" : "q_b_proj"), at + "indexer." + (glm ? "wk" : "k_proj"),
                                     at + "indexer.weights_proj", at + "indexer.matmul", at + "indexer.sum_heads",
                                     at + "indexer.topk", at + "index_mask", at + "add_index_mask", at + "o_proj"})
        EXPECT_GE(g.find_node(node), 0) << family << extra << " " << node;
      EXPECT_EQ(g.find_node(at + "indexer.relu") >= 0, !glm) << family;
      // The top-k is min(index_topk, positions): 5 of the 8 here, the 3 of a 3-token graph.
      const Node& topk = g.nodes[g.find_node(at + "indexer.topk")];
      EXPECT_EQ(to_string(g.value(topk.outputs[1]).shape), "2x1x8x5");
      const Graph g3 = graph_of(c, 3);
      EXPECT_EQ(to_string(g3.value(g3.nodes[g3.find_node(at + "indexer.topk")].outputs[1]).shape), "2x1x3x3");
    }
  }
}

TEST(LlmDsa, DenseLayersFromFirstKDenseReplaceOrMlpLayerTypes) {
  EXPECT_EQ(small("deepseek_v32").first_dense_layers, 1);
  const LlmConfig listed = small("glm_moe_dsa", R"(,"first_k_dense_replace":null,"mlp_layer_types":["dense","dense","sparse","sparse"])");
  EXPECT_EQ(listed.first_dense_layers, 2);
  EXPECT_FALSE(listed.sparse_layer(1));
  EXPECT_TRUE(listed.sparse_layer(2));
  // The config classes' defaults: 3 dense layers, 64 (DeepSeek) or 32 (GLM) indexer heads of 128, top 2048.
  const LlmConfig d = parse_llm_config(
      json::parse(R"({"model_type":"deepseek_v32","vocab_size":64,"hidden_size":32,"num_hidden_layers":4,
          "num_attention_heads":4,"q_lora_rank":16,"kv_lora_rank":10,"qk_nope_head_dim":12,"qk_rope_head_dim":4,
          "v_head_dim":8,"intermediate_size":40,"moe_intermediate_size":12,"n_routed_experts":4,"num_experts_per_tok":2})"),
      "defaults");
  EXPECT_EQ(d.first_dense_layers, 3);
  EXPECT_EQ(d.index_heads, 64);
  EXPECT_EQ(d.index_head_dim, 128);
  EXPECT_EQ(d.index_topk, 2048);
}

TEST(LlmDsa, BadConfigsAreOneLineErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {R"(,"q_lora_rank":null)", "q_lora_rank must be positive (the sparse-attention indexer"},
      {R"(,"index_head_dim":4)", "index_head_dim above qk_rope_head_dim 4"},
      {R"(,"index_n_heads":0)", "index_n_heads and index_topk must be positive"},
      {R"(,"index_topk":-1)", "index_n_heads and index_topk must be positive"},
      {R"(,"index_n_heads":100000)", "index_n_heads 100000 is beyond"},
      {R"(,"mlp_layer_types":["dense"])", "mlp_layer_types must list"},
      {R"(,"mlp_layer_types":["sparse","dense","sparse","sparse"])", "mlp_layer_types [\"sparse\",\"dense\""},
      {R"(,"mlp_layer_types":"dense")", "mlp_layer_types must list"},
      {R"(,"mlp_layer_types":["dense","dense","sparse","sparse"])", "has 2 dense layers but first_k_dense_replace is 1"},
  };
  for (const char* family : {"deepseek_v32", "glm_moe_dsa"})
    for (const auto& [members, want] : cases) {
      test::expect_one_line_error([&] { small(family, members); }, "small", want, members);
    }
}

}  // namespace dsa_test
}  // namespace ridge
