// Serving and training a Mamba-1 model (mamba): no KV cache, a constant state cache, decode steps whose scan does not
// grow with the context, serving's tensor parallelism by channel, and training's activation memory per mixer.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"
#include "llm_test_support.hpp"

namespace ridge {
namespace mamba1_serve_test {

// Two Mamba-1 layers, hidden 32: inner 64, state 8, conv 4, dt_rank ceil(32 / 16) = 2.
LlmConfig mamba1() {
  LlmConfig c = parse_llm_config(nlohmann::json::parse(R"({"model_type":"mamba","vocab_size":128,"hidden_size":32,
      "num_hidden_layers":2,"state_size":8,"conv_kernel":4})"), "m1");
  c.name = "m1";
  return c;
}

using llm_test::opts;
using llm_test::test_gpu;

TEST(LlmMamba1Serve, NoKvCacheAConstantStateCacheAndAConstantDecodeStep) {
  const LlmConfig c = mamba1();
  // Per layer and sequence: the conv state 64 x 3 and the recurrent state 64 x 8, fp16.
  EXPECT_EQ(state_cache_bytes(c, 3, DType::F16), Count{2} * 3 * 64 * (3 + 8) * 2);
  const ServeResult r = analyze_serving(c, test_gpu(), opts(2, 64, 8));
  const ServeResult longer = analyze_serving(c, test_gpu(), opts(2, 512, 8));
  EXPECT_EQ(r.kv_cache_bytes, 0);
  EXPECT_EQ(r.state_cache_bytes, Count{2} * 2 * 64 * 11 * 2);
  EXPECT_EQ(longer.state_cache_bytes, r.state_cache_bytes);
  int scans = 0;
  for (size_t i = 0; i < r.ops.size(); ++i) {
    if (r.ops[i].name.find("selective_scan") == std::string::npos) continue;
    ++scans;
    if (r.ops[i].phase != "decode") continue;
    // 7 steps of 2 tokens x 64 channels: MACs 2 x 8 + 1, elementwise 3 x 8 + 4 + 1 + 5 per channel and token
    EXPECT_EQ(r.ops[i].flops, 7 * 2 * 64 * (2 * 17 + 34)) << r.ops[i].name;
    EXPECT_EQ(longer.ops[i].flops, r.ops[i].flops);
  }
  EXPECT_EQ(scans, 4);  // 2 layers x prefill and decode
}

// --tp splits a Mamba-1 mixer by channel, as vLLM does: half the channels (and state cache) per GPU, the layer's
// all-reduce of its output, and one more of x_proj's partial sums (dt_rank + 2 x state per token, 10 here).
TEST(LlmMamba1Serve, TensorParallelSplitsChannelsAndAllReducesXProj) {
  const LlmConfig c = mamba1();
  EXPECT_EQ(tensor_parallel_shard(c, 2).mamba1_inner, 32);
  EXPECT_EQ(state_cache_bytes(tensor_parallel_shard(c, 2), 1, DType::F16) * 2, state_cache_bytes(c, 1, DType::F16));
  ServeOptions o = opts(1, 32, 4);
  o.tp = 2;
  const ServeResult r = analyze_serving(c, test_gpu(), o);
  EXPECT_EQ(r.state_cache_bytes_per_gpu * 2, r.state_cache_bytes);
  const ServeOp *layer = nullptr, *x_proj = nullptr;
  for (const ServeOp& op : r.ops) {
    if (op.phase != "prefill") continue;
    if (op.name == "allreduce (1 per layer)") layer = &op;
    if (op.name == "allreduce x_proj (1 per Mamba-1 layer)") x_proj = &op;
  }
  ASSERT_TRUE(layer && x_proj);
  EXPECT_GT(x_proj->time_s, 0);
  EXPECT_LT(x_proj->time_s, layer->time_s);  // 10 values per token against the hidden size's 32
  llm_test::expect_error([&] { tensor_parallel_shard(c, 3); }, "Mamba-1 channels", "--tp 3 for 64 channels");
  // the degrees that fit are those dividing the 64 channels (the model's attention sizes are placeholders of 1)
  llm_test::expect_error([&] { tensor_parallel_shard(c, 3); }, "(degrees that fit: 1, 2, 4, 8, 16, 32, 64)", "--tp 3");
}

TEST(LlmMamba1Serve, TrainingStoresWhatMambaInnerFnSaves) {
  const LlmConfig c = mamba1();
  TrainOptions o;
  o.gpus = 1, o.seq = 128, o.global_batch = 1, o.micro_batch = 1;
  // 2-byte units at s 128, b 1, h 32: the norm's and in_proj's inputs 4 s b h; x|z, the conv output, x_proj's
  // output, dt, out_proj's input 2 s b (2 x 64 + 64 + (2 + 2 x 8) + 64 + 64).
  const Count s = 128, h = 32;
  const Count layer = 4 * s * h + 2 * s * (128 + 64 + 18 + 64 + 64);
  EXPECT_EQ(analyze_training(c, test_gpu(), o).memory.activations, 2 * layer);
  o.gpus = 2, o.cp = 2;
  llm_test::expect_error([&] { analyze_training(c, test_gpu(), o); }, "Mamba-1", "--cp 2 for Mamba-1");
  o.cp = 1, o.tp = 2;  // training's tensor parallelism of Mamba-1 mixers is not modelled
  llm_test::expect_error([&] { analyze_training(c, test_gpu(), o); }, "--tp 2", "--tp 2 for training Mamba-1");
}

TEST(LlmMamba1Serve, JambaCachesKeysInItsAttentionLayersAndStatesInItsMambaLayers) {
  // 4 layers, attention at 1 and 3 (4 heads, 2 KV heads of 8), Mamba-1 at 0 and 2 (inner 64, state 4, conv 4).
  LlmConfig c = parse_llm_config(nlohmann::json::parse(R"({"model_type":"jamba","vocab_size":64,"hidden_size":32,
      "intermediate_size":24,"num_hidden_layers":4,"num_attention_heads":4,"num_key_value_heads":2,
      "attn_layer_period":2,"attn_layer_offset":1,"num_experts":4,"num_experts_per_tok":2,"mamba_d_state":4})"), "j");
  c.name = "j";
  const NumberFormat fp16 = *parse_number_format("fp16");
  EXPECT_EQ(kv_cache_bytes(c, 1, 100, fp16), Count{2} * 2 * 16 * 2 * 100);
  EXPECT_EQ(state_cache_bytes(c, 1, DType::F16), Count{2} * 64 * (3 + 4) * 2);
  const ServeResult r = analyze_serving(c, test_gpu(), opts(1, 32, 4));
  EXPECT_EQ(r.attention_layers, 2);
  EXPECT_EQ(r.state_cache_bytes, Count{2} * 64 * 7 * 2);
  EXPECT_EQ(r.kv_cache_bytes, Count{2} * 2 * 16 * 2 * 36);
}

}  // namespace mamba1_serve_test
}  // namespace ridge
