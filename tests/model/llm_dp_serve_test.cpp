// Serving a mixture-of-experts model with data-parallel attention and expert-parallel MoE layers (serve --dp): each
// GPU's share of the sequences, weights with 1/dp of the experts, the experts' work per GPU, the all-to-alls, the
// largest batch, and the refusals.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ridge/llm_analysis.hpp"
#include "llm_test_support.hpp"

namespace ridge {
namespace dp_serve_test {

using llm_test::expect_error;
using llm_test::opts;
using llm_test::test_gpu;

// Four layers (the first dense), hidden 64, 4 heads of 16, 8 experts of 32 (2 per token) and a shared one.
LlmConfig moe(const std::string& extra = "") {
  return parse_llm_config(nlohmann::json::parse(R"({"model_type":"qwen2_moe","vocab_size":128,"hidden_size":64,
      "num_hidden_layers":4,"num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":96,
      "moe_intermediate_size":32,"shared_expert_intermediate_size":48,"num_experts":8,"num_experts_per_tok":2,
      "decoder_sparse_step":1,"mlp_only_layers":[],"max_position_embeddings":4096)" + extra + "}"), "moe");
}

ServeResult serve(const LlmConfig& c, int64_t batch, int dp, int64_t prompt = 100, int64_t generate = 10) {
  ServeOptions o = opts(batch, prompt, generate);
  o.dp = dp;
  return analyze_serving(c, test_gpu(), o);
}

Count flops_of(const ServeResult& r, const std::string& phase, const std::string& part) {
  Count f = 0;
  for (const ServeOp& op : r.ops)
    if (op.phase == phase && op.name.find(part) != std::string::npos) f += op.flops;
  return f;
}

TEST(LlmDpServe, EachGpuHoldsItsShareOfTheExpertsAndOfTheSequences) {
  const LlmConfig c = moe();
  const ServeResult one = serve(c, 8, 1), four = serve(c, 8, 4);
  // 4 sparse layers x (8 - 2) experts of 3 x 64 x 32 fp16 weights fewer; the rest replicated.
  EXPECT_EQ(one.weights_bytes_per_gpu - four.weights_bytes_per_gpu, Count{4} * 6 * 3 * 64 * 32 * 2);
  EXPECT_EQ(four.weights_bytes, 4 * four.weights_bytes_per_gpu);
  EXPECT_EQ(four.experts_per_gpu, 2);
  // Two of the 8 sequences per GPU, every head: a quarter of the KV cache of one GPU holding all 8.
  EXPECT_EQ(four.kv_cache_bytes_per_gpu, kv_cache_bytes(c, 2, 110, *parse_number_format("fp16")));
  EXPECT_EQ(4 * four.kv_cache_bytes_per_gpu, one.kv_cache_bytes);
  // The experts' work per GPU: its 2 sequences' tokens x 2 experts each, wherever those experts are.
  const ServeResult local = serve(c, 2, 1);
  EXPECT_EQ(flops_of(four, "prefill", "mlp.experts."), flops_of(local, "prefill", "mlp.experts."));
  EXPECT_EQ(flops_of(four, "decode", "mlp.experts."), flops_of(local, "decode", "mlp.experts."));
  EXPECT_EQ(flops_of(four, "prefill", "self_attn."), flops_of(local, "prefill", "self_attn."));
  // An uneven batch: the busiest rank (3 of 9 sequences at --dp 4) sets the pace.
  EXPECT_EQ(serve(c, 9, 4).kv_cache_bytes_per_gpu, kv_cache_bytes(c, 3, 110, *parse_number_format("fp16")));
  // The largest batch is every GPU's.
  EXPECT_EQ(four.max_batch % 4, 0);
  EXPECT_GT(four.max_batch, one.max_batch);
}

TEST(LlmDpServe, TwoAllToAllsPerMoeLayerOnTheNodeLink) {
  const LlmConfig c = moe();
  const ServeResult r = serve(c, 8, 4, 100, 10);
  // 2 sequences x tokens x 2 experts x 64 fp16 values leave for 3 of 4 GPUs over NVLink (400 GB/s, 2 us per step).
  auto a2a = [](double tokens) { return 3 * 2e-6 + 0.75 * (2 * tokens * 2 * 64 * 2) / 4e11; };
  EXPECT_NEAR(r.alltoall_time_per_layer_prefill_s, 2 * a2a(100), 1e-15);
  EXPECT_NEAR(r.alltoall_time_per_layer_decode_s, 2 * a2a(1), 1e-15);
  double prefill = 0, decode = 0;
  for (const ServeOp& op : r.ops)
    if (op.name.rfind("all-to-all", 0) == 0) (op.phase == "prefill" ? prefill : decode) += op.time_s;
  EXPECT_NEAR(prefill, 4 * 2 * a2a(100), 1e-15);      // 4 sparse layers
  EXPECT_NEAR(decode, 9 * 4 * 2 * a2a(1), 1e-15);     // 9 decode steps
  EXPECT_EQ(serve(c, 8, 1).alltoall_time_per_layer_decode_s, 0.0);
  // A dense layer has no all-to-all: DeepSeek-style, the first of 4 layers dense (first_k_dense_replace 1).
  const LlmConfig mixed_config = parse_llm_config(nlohmann::json::parse(R"({"model_type":"deepseek_v3",
      "vocab_size":128,"hidden_size":64,"num_hidden_layers":4,"num_attention_heads":4,"q_lora_rank":32,
      "kv_lora_rank":16,"qk_nope_head_dim":24,"qk_rope_head_dim":8,"v_head_dim":16,"intermediate_size":96,
      "moe_intermediate_size":24,"n_routed_experts":8,"num_experts_per_tok":2,"n_shared_experts":1,
      "first_k_dense_replace":1,"max_position_embeddings":4096})"), "mixed");
  const ServeResult mixed = serve(mixed_config, 8, 4, 100, 10);
  double mixed_prefill = 0;
  for (const ServeOp& op : mixed.ops)
    if (op.name.rfind("all-to-all", 0) == 0 && op.phase == "prefill") mixed_prefill += op.time_s;
  EXPECT_NEAR(mixed_prefill, 3 * 2 * a2a(100), 1e-15);  // layers 1, 2 and 3
}

TEST(LlmDpServe, RefusesWhatItDoesNotModel) {
  ServeOptions o = opts(8, 100, 10);
  o.dp = 3;
  expect_error([&] { analyze_serving(moe(), test_gpu(), o); }, "has 8 experts, which 3 GPUs do not divide", "--dp 3");
  o.dp = 2;
  o.tp = 2;
  expect_error([&] { analyze_serving(moe(), test_gpu(), o); }, "--dp 2 with --tp 2", "--dp with --tp");
  o.tp = 1;
  const LlmConfig dense = parse_llm_config(nlohmann::json::parse(R"({"model_type":"llama","vocab_size":128,
      "hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":96})"), "dense");
  expect_error([&] { analyze_serving(dense, test_gpu(), o); }, "has no experts", "a dense model");
  o.dp = 0;
  expect_error([&] { analyze_serving(moe(), test_gpu(), o); }, "--dp: 0 is not a positive", "--dp 0");
  // Too little memory for one sequence per GPU: the smallest larger --dp that fits is named, where one exists.
  o.dp = 2;
  const ServeResult fits_at_8 = serve(moe(), 8, 8);
  const Count one_seq = fits_at_8.kv_cache_bytes_per_gpu;  // 1 of 8 sequences per GPU
  const Device tight = test_gpu(fits_at_8.weights_bytes_per_gpu + one_seq);
  expect_error([&] { analyze_serving(moe(), tight, o); }, "--dp 8 fits", "a GPU that holds the --dp 8 share");
  expect_error([&] { analyze_serving(moe(), test_gpu(1000), o); }, "nor at any larger --dp that divides the 8 experts",
               "a GPU too small for any --dp");
}

}  // namespace dp_serve_test
}  // namespace ridge
