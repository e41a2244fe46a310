// Serving and training a Gated DeltaNet hybrid (qwen3_next): the KV cache of its attention layers only, the
// DeltaNets' constant state cache, decode steps whose delta-rule cost does not grow with the context, tensor
// parallelism over key and value heads, and training's activation memory per block.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"
#include "llm_test_support.hpp"

namespace ridge {
namespace qwen3_next_serve_test {

// Three Gated DeltaNets (2 key heads of 16 shared by 4 value heads of 16, conv 4), then gated attention (8 heads,
// 2 KV heads of 16); dense MLPs of 96 (no experts); hidden 64.
LlmConfig delta_hybrid() {
  LlmConfig c = parse_llm_config(nlohmann::json::parse(R"({"model_type":"qwen3_next","vocab_size":128,
      "hidden_size":64,"intermediate_size":96,"num_hidden_layers":4,"num_attention_heads":8,"num_key_value_heads":2,
      "head_dim":16,"max_position_embeddings":4096,"linear_num_key_heads":2,"linear_num_value_heads":4,
      "linear_key_head_dim":16,"linear_value_head_dim":16,"linear_conv_kernel_dim":4,"num_experts":0})"), "delta");
  c.name = "delta";
  return c;
}

using llm_test::opts;
using llm_test::test_gpu;

TEST(LlmQwen3NextServe, KvCacheOfAttentionLayersAndAConstantStateCache) {
  const LlmConfig c = delta_hybrid();
  const NumberFormat fp16 = *parse_number_format("fp16");
  // 1 attention layer x 2 KV heads x (16 + 16) x 2 bytes per position and sequence.
  EXPECT_EQ(kv_cache_bytes(c, 3, 1000, fp16), Count{1} * 2 * 32 * 2 * 1000 * 3);
  // Per DeltaNet and sequence: conv state 128 channels (2 x 32 + 64) x 3 taps x 2 bytes, recurrent state 4 value
  // heads x 16 x 16 float32; any context.
  const Count per_sequence = 3 * (Count{128} * 3 * 2 + Count{4} * 16 * 16 * 4);
  EXPECT_EQ(state_cache_bytes(c, 3, DType::F16), 3 * per_sequence);
  const ServeResult r = analyze_serving(c, test_gpu(), opts(3, 100, 20));
  EXPECT_EQ(r.kv_cache_bytes, Count{1} * 2 * 32 * 2 * 120 * 3);
  EXPECT_EQ(r.state_cache_bytes, 3 * per_sequence);
  EXPECT_EQ(r.attention_layers, 1);
  const ServeResult longer = analyze_serving(c, test_gpu(), opts(3, 1000, 20));
  EXPECT_EQ(longer.state_cache_bytes, r.state_cache_bytes);
  EXPECT_GT(longer.kv_cache_bytes, r.kv_cache_bytes);
}

TEST(LlmQwen3NextServe, DecodeStepsRunTheRecurrenceWhateverTheContext) {
  const LlmConfig c = delta_hybrid();
  const ServeResult r = analyze_serving(c, test_gpu(), opts(2, 64, 8));
  const ServeResult longer = analyze_serving(c, test_gpu(), opts(2, 512, 8));
  int rules = 0;
  for (size_t i = 0; i < r.ops.size(); ++i) {
    if (r.ops[i].name.find("chunk_gated_delta_rule") == std::string::npos) continue;
    ++rules;
    if (r.ops[i].phase == "decode") {
      // 7 steps of 2 sequences: per value head 3 x 16 x 16 MACs and the elementwise terms, L2 norms of q and k
      const Count per_step = 2 * (4 * (2 * 3 * 256 + 256 + 2 * 16 + 16 + 10) + 2 * 2 * (3 * 16 + 2));
      EXPECT_EQ(r.ops[i].flops, 7 * per_step);
      EXPECT_EQ(longer.ops[i].flops, r.ops[i].flops);
    }
  }
  EXPECT_EQ(rules, 6);  // 3 layers x prefill and decode
}

TEST(LlmQwen3NextServe, TensorParallelSplitsKeyAndValueHeads) {
  const LlmConfig c = delta_hybrid();
  const LlmConfig s = tensor_parallel_shard(c, 2);
  EXPECT_EQ(s.gdn_key_heads, 1);
  EXPECT_EQ(s.gdn_value_heads, 2);
  EXPECT_EQ(state_cache_bytes(s, 1, DType::F16) * 2, state_cache_bytes(c, 1, DType::F16));
  ServeOptions o = opts(1, 32, 4);
  o.tp = 2;
  EXPECT_EQ(analyze_serving(c, test_gpu(), o).allreduces_per_layer, 2);  // mixer and MLP, as a decoder layer
  // 2 key heads do not split 4 ways
  llm_test::expect_error([&] { tensor_parallel_shard(c, 4); }, "Gated DeltaNet key heads", "tp 4");
}

TEST(LlmQwen3NextServe, TrainingStoresEachBlocksActivations) {
  const LlmConfig c = delta_hybrid();
  TrainOptions o;
  o.gpus = 1, o.seq = 128, o.global_batch = 1, o.micro_batch = 1;
  // 2-byte units at s 128, b 1, h 64. A DeltaNet: its norm and in_proj inputs 4 s b h; q|k|v|z and b|a 2 s (128 + 64
  // + 8), the conv output 2 s 128, g and beta float32 8 s 4, the chunks' inverse 2 s 4 x 64, the rule's output and
  // out_proj's input 4 s 64, rstd 4 s 4. Gated attention: 5 s h, Q, K, V, out input 2 s (2 x 8 x 16 + 2 x 2 x 16),
  // the gate and the ungated output 4 s 8 x 16, scores 5 x 8 s^2. Each layer's MLP: 5 s h + 8 s 96.
  const Count s = 128, h = 64;
  const Count delta = 4 * s * h + 2 * s * 200 + 2 * s * 128 + 8 * s * 4 + 2 * s * 4 * 64 + 4 * s * 64 + 4 * s * 4;
  const Count attention = 5 * s * h + 2 * s * (2 * 8 * 16 + 2 * 2 * 16) + 4 * s * 8 * 16 + 5 * 8 * s * s;
  const Count mlp = 5 * s * h + 8 * s * 96;
  EXPECT_EQ(analyze_training(c, test_gpu(), o).memory.activations, 3 * (delta + mlp) + attention + mlp);
  o.gpus = 2, o.cp = 2;
  llm_test::expect_error([&] { analyze_training(c, test_gpu(), o); }, "Gated DeltaNet", "--cp 2 for a DeltaNet hybrid");
}

}  // namespace qwen3_next_serve_test
}  // namespace ridge
