// Mamba-1 models from a config.json (mamba, falcon_mamba): every layer a MambaMixer behind an RMSNorm, the published
// parameter counts of state-spaces/mamba-*-hf, graph = formula, HF's node names, and one-line refusals.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/llm.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace mamba1_test {

using nlohmann::json;

LlmConfig parse(const std::string& text) { return parse_llm_config(json::parse(text), "cfg.json"); }

TEST(LlmMamba1, PublishedParameterCountsOfTheMambaCheckpoints) {
  // (hidden, layers, published): state-spaces/mamba-{130m,370m,1.4b,2.8b}-hf, vocabulary 50280, tied embeddings.
  // Per layer: in_proj h x 2I, conv1d I x 4 + I, x_proj I x (R + 32), dt_proj R x I + I, A_log I x 16, D I,
  // out_proj I x h, the norm h; I = 2h, R = ceil(h / 16).
  for (const auto& [h, layers, published] : std::vector<std::tuple<Count, int, Count>>{
           {768, 24, 129135360}, {1024, 48, 371516416}, {2048, 48, 1372178432}, {2560, 64, 2768345600}}) {
    const Count I = 2 * h, R = (h + 15) / 16;
    const Count layer = h * 2 * I + I * 4 + I + I * (R + 32) + R * I + I + I * 16 + I + I * h + h;
    const Count total = Count{50280} * h + layers * layer + h;
    EXPECT_EQ(total, published) << static_cast<int64_t>(h);
    const LlmConfig c = parse(fmt::format(R"({{"model_type":"mamba","hidden_size":{},"num_hidden_layers":{}}})",
                                          static_cast<int64_t>(h), layers));
    EXPECT_EQ(llm_params(c).total, published) << static_cast<int64_t>(h);
  }
  const LlmConfig* zoo = find_llm_config("mamba-2.8b");
  ASSERT_NE(zoo, nullptr);
  EXPECT_EQ(llm_params(*zoo).total, Count{2768345600});
  EXPECT_EQ(zoo->attention_layer_count(), 0);
}

TEST(LlmMamba1, GraphEqualsFormulaWithHfNames) {
  for (const char* extra : {"", R"(,"use_bias":true,"use_conv_bias":false)", R"(,"time_step_rank":3,"expand":3)"})
    for (const char* type : {"mamba", "falcon_mamba"}) {
      const LlmConfig c = parse(fmt::format(R"({{"model_type":"{}","vocab_size":64,"hidden_size":16,
          "num_hidden_layers":2,"state_size":4,"conv_kernel":3,"tie_word_embeddings":false{}}})", type, extra));
      LlmShape s;
      s.batch = 2, s.tokens = 8;
      const Graph g = build_llm(c, s);
      EXPECT_EQ(estimate(g).total.params, llm_params(c).total) << type << extra;
      for (const char* node : {"backbone.embeddings", "backbone.layers.0.norm.mul", "backbone.layers.0.mixer.in_proj",
                               "backbone.layers.0.mixer.conv1d", "backbone.layers.0.mixer.x_proj",
                               "backbone.layers.0.mixer.dt_proj", "backbone.layers.1.mixer.selective_scan",
                               "backbone.layers.1.mixer.out_proj", "lm_head"})
        EXPECT_GE(g.find_node(node), 0) << type << extra << " " << node;
      // FalconMamba normalises B, C and dt after x_proj; Mamba does not
      EXPECT_EQ(g.find_node("backbone.layers.0.mixer.b_rms.mul") >= 0, std::string(type) == "falcon_mamba") << type;
    }
}

TEST(LlmMamba1, JambaLayersAreMambaOrAttentionThenExpertsOrAnMlp) {
  // Jamba-v0.1 / AI21-Jamba-1.5-Mini: 28 Mamba-1 mixers (inner 8192, dt_rank 256, state 16, with dt/B/C RMSNorms)
  // and 4 attention layers (32 heads, 8 KV heads of 128, no rotary); 16 sparse layers (router 4096 x 16, 16 experts
  // of 3 x 4096 x 14336) and 16 dense MLPs; two norms per layer; untied embeddings of 65536.
  const LlmConfig* c = find_llm_config("jamba-1.5-mini");
  ASSERT_NE(c, nullptr);
  const Count h = 4096, I = 8192, mlp = 3 * h * 14336;
  const Count mamba = h * 2 * I + I * 4 + I + I * (256 + 32) + 256 * I + I + I * 16 + I + I * h + (256 + 32);
  const Count attention = h * h + 2 * h * 1024 + h * h;
  const Count total = 2 * Count{65536} * h + 28 * mamba + 4 * attention + 16 * (h * 16 + 16 * mlp) + 16 * mlp +
                      32 * 2 * h + h;
  EXPECT_EQ(total, Count{51570323328});  // "51.6B"
  EXPECT_EQ(llm_params(*c).total, total);
  EXPECT_EQ(llm_params(*c).active_per_token, total - 16 * 14 * mlp);  // "12B active": 2 of 16 experts
  EXPECT_EQ(c->attention_layer_count(), 4);
  EXPECT_TRUE(c->attends(4) && c->attends(12) && c->blocks[0] == LlmBlock::Mamba1 && c->sparse_layer(1) &&
              !c->sparse_layer(0));
  // Small shapes: graph = formula, HF's names.
  const LlmConfig small = parse(R"({"model_type":"jamba","vocab_size":64,"hidden_size":32,"intermediate_size":24,
      "num_hidden_layers":4,"num_attention_heads":4,"num_key_value_heads":2,"attn_layer_period":2,
      "attn_layer_offset":1,"num_experts":4,"num_experts_per_tok":2,"mamba_d_state":4,"mamba_dt_rank":"auto"})");
  LlmShape s;
  s.batch = 2, s.tokens = 8;
  const Graph g = build_llm(small, s);
  EXPECT_EQ(estimate(g).total.params, llm_params(small).total);
  for (const char* node : {"model.embed_tokens", "model.layers.0.input_layernorm.mul", "model.layers.0.mamba.in_proj",
                           "model.layers.0.mamba.dt_layernorm.mul_1", "model.layers.0.mamba.selective_scan",
                           "model.layers.0.pre_ff_layernorm.mul", "model.layers.0.feed_forward.down_proj",
                           "model.layers.1.self_attn.q_proj", "model.layers.1.feed_forward.router",
                           "model.layers.1.feed_forward.experts.3.up_proj", "model.final_layernorm.mul", "lm_head"})
    EXPECT_GE(g.find_node(node), 0) << node;
}

TEST(LlmMamba1, BadConfigsAreOneLineErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {R"("time_step_rank":"half")", "time_step_rank must be an integer or \"auto\""},
      {R"("time_step_rank":0)", "time_step_rank must be positive"},
      {R"("state_size":0)", "state_size must be positive"},
      {R"("expand":0)", "expand 0 x hidden_size"},
      {R"("hidden_act":"gelu")", "hidden_act 'gelu'"},
      {R"("conv_kernel":100000)", "conv_kernel 100000 is beyond"},
      {R"("model_type":"jamba","sliding_window":4096)", "sliding_window 4096"},
      {R"("model_type":"jamba","expert_layer_offset":0)", "expert_layer_offset 0"},
      {R"("model_type":"jamba","attn_layer_offset":9)", "attn_layer_offset 9"},
      {R"("model_type":"jamba","mamba_dt_rank":"x")", "mamba_dt_rank must be an integer"},
      {R"("model_type":"jamba","num_experts":0)", "num_experts 0"},
  };
  for (const auto& [members, want] : cases) {
    const std::string type = std::string(members).find("jamba") != std::string::npos ? "" : R"("model_type":"mamba",)";
    test::expect_one_line_error(
        [&] { parse("{" + type + R"("hidden_size":16,"num_hidden_layers":2,"num_attention_heads":4,)" + members + "}"); },
        "cfg.json", want, members);
  }
}

}  // namespace mamba1_test
}  // namespace ridge
