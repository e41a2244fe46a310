// Serving a hybrid model (nemotron_h): the KV cache of its attention layers only, the Mamba-2 layers' constant
// state cache, decode steps whose scan cost does not grow with the context, tensor parallelism over Mamba heads,
// and training's activation memory per block.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"
#include "llm_test_support.hpp"

namespace ridge {
namespace hybrid_serve_test {

// Mamba, attention, MLP, Mamba, attention, MLP: 2 Mamba-2 layers (8 heads of 16, 2 groups of state 32, conv 4),
// 2 attention layers (8 heads, 2 KV heads of 16), hidden 64.
LlmConfig hybrid() {
  LlmConfig c = parse_llm_config(nlohmann::json::parse(R"({"model_type":"nemotron_h","vocab_size":128,
      "hidden_size":64,"intermediate_size":96,"hybrid_override_pattern":"M*-M*-","num_attention_heads":8,
      "num_key_value_heads":2,"head_dim":16,"max_position_embeddings":4096,"mamba_num_heads":8,"mamba_head_dim":16,
      "n_groups":2,"ssm_state_size":32,"conv_kernel":4,"chunk_size":64})"), "hybrid");
  c.name = "hybrid";
  return c;
}

Device gpu() { return llm_test::test_gpu(); }
using llm_test::opts;

TEST(LlmHybridServe, KvCacheOfAttentionLayersAndAConstantStateCache) {
  const LlmConfig c = hybrid();
  const NumberFormat fp16 = *parse_number_format("fp16");
  // 2 attention layers x 2 KV heads x (16 + 16) x 2 bytes per position and sequence.
  EXPECT_EQ(kv_cache_bytes(c, 3, 1000, fp16), Count{2} * 2 * 32 * 2 * 1000 * 3);
  // Per Mamba-2 layer and sequence: conv state 256 channels (128 + 2 x 2 x 32) x 3 taps x 2 bytes, recurrent state
  // 8 x 16 x 32 float32; any context.
  const Count per_sequence = 2 * (Count{256} * 3 * 2 + Count{8} * 16 * 32 * 4);
  EXPECT_EQ(state_cache_bytes(c, 3, DType::F16), 3 * per_sequence);
  const ServeResult r = analyze_serving(c, gpu(), opts(3, 100, 20));
  EXPECT_EQ(r.kv_cache_bytes, Count{2} * 2 * 32 * 2 * 120 * 3);
  EXPECT_EQ(r.state_cache_bytes, 3 * per_sequence);
  EXPECT_EQ(r.memory_per_gpu_bytes, r.weights_bytes_per_gpu + r.kv_cache_bytes_per_gpu + r.state_cache_bytes_per_gpu);
  // A longer context grows the KV cache only.
  const ServeResult longer = analyze_serving(c, gpu(), opts(3, 1000, 20));
  EXPECT_EQ(longer.state_cache_bytes, r.state_cache_bytes);
  EXPECT_GT(longer.kv_cache_bytes, r.kv_cache_bytes);
}

TEST(LlmHybridServe, DecodeStepsReadAndWriteTheStateWhateverTheContext) {
  const LlmConfig c = hybrid();
  ServeOptions o = opts(2, 64, 11);  // 10 decode steps
  o.fused_attention = true;
  const ServeResult r = analyze_serving(c, gpu(), o);
  const Count state = Count{8} * 16 * 32 * 4 * 2;  // one layer's recurrent state, 2 sequences
  int scans = 0;
  for (const ServeOp& op : r.ops) {
    if (op.name.find("selective_scan") == std::string::npos) continue;
    ++scans;
    if (op.phase == "decode") {
      // Each step reads the state and writes it back, at float32; 5 FLOPs per state element and a little more.
      EXPECT_EQ(op.kv_read_bytes, 10 * state) << op.name;
      EXPECT_EQ(op.kv_written_bytes, 10 * state) << op.name;
      EXPECT_EQ(op.flops, Count{10} * 2 * (5 * 8 * 16 * 32 + 3 * 8 * 16 + 8 * 8)) << op.name;
    } else {
      EXPECT_EQ(op.kv_read_bytes, 0) << op.name;  // a prompt starts from no state
      EXPECT_EQ(op.kv_written_bytes, state) << op.name;
    }
  }
  EXPECT_EQ(scans, 4);  // 2 layers x prefill and decode
  // Decode FLOPs of the scan do not depend on the prompt: a 4x longer prompt adds attention work only.
  const ServeResult longer = analyze_serving(c, gpu(), [&] { ServeOptions l = o; l.prompt = 256; return l; }());
  for (size_t i = 0; i < r.ops.size(); ++i)
    if (r.ops[i].phase == "decode" && r.ops[i].name.find("selective_scan") != std::string::npos) {
      EXPECT_EQ(longer.ops[i].flops, r.ops[i].flops);
    }
}

TEST(LlmHybridServe, AMamba2ModelHasNoKvCacheAndAConstantDecodeStep) {
  const LlmConfig c = parse_llm_config(nlohmann::json::parse(R"({"model_type":"mamba2","hidden_size":32,
      "num_hidden_layers":3,"vocab_size":64,"state_size":16,"n_groups":2,"num_heads":8,"head_dim":8,"expand":2})"),
                                       "mamba2");
  ServeOptions o = opts(2, 100, 5);
  o.fused_attention = true;
  const ServeResult short_prompt = analyze_serving(c, gpu(), o);
  o.prompt = 3000;
  const ServeResult long_prompt = analyze_serving(c, gpu(), o);
  EXPECT_EQ(short_prompt.kv_cache_bytes, 0);
  EXPECT_EQ(short_prompt.attention_layers, 0);  // no attention core: the reports drop its kernel's note
  // 3 layers x 2 sequences x (conv 64 + 2 x 2 x 16 = 128 channels x 3 taps x 2 bytes + 8 x 8 x 16 float32).
  EXPECT_EQ(short_prompt.state_cache_bytes, Count{3} * 2 * (128 * 3 * 2 + 8 * 8 * 16 * 4));
  EXPECT_EQ(long_prompt.state_cache_bytes, short_prompt.state_cache_bytes);
  EXPECT_EQ(long_prompt.decode_flops, short_prompt.decode_flops);  // nothing in a step depends on the context
  EXPECT_GT(long_prompt.prefill_flops, short_prompt.prefill_flops);
  // Tensor parallelism splits its 8 Mamba heads and 2 groups (no attention heads or MLP to divide): 2 ways, not 4.
  o.tp = 2;
  EXPECT_EQ(analyze_serving(c, gpu(), o).state_cache_bytes, short_prompt.state_cache_bytes);
  llm_test::expect_error([&] { tensor_parallel_shard(c, 4); }, "degrees that fit: 1, 2", "tp 4 with 2 groups");
}

// granitemoehybrid: decoder layers whose mixer is Mamba-2 (layer 0) or attention (layer 1), then experts and a
// shared MLP: two all-reduces per layer under tensor parallelism, and both halves' activations in training.
TEST(LlmHybridServe, GraniteHybridLayersKeepTheirFeedForwardPart) {
  const LlmConfig c = parse_llm_config(nlohmann::json::parse(R"({"model_type":"granitemoehybrid","hidden_size":32,
      "num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"vocab_size":64,"num_local_experts":4,
      "num_experts_per_tok":2,"intermediate_size":12,"shared_intermediate_size":20,"mamba_n_heads":8,"mamba_n_groups":2,
      "mamba_d_state":4,"mamba_expand":2,"layer_types":["mamba","attention"],"max_position_embeddings":512})"),
                                       "granite");
  ServeOptions so = opts(1, 16, 3);
  so.tp = 2;
  EXPECT_EQ(analyze_serving(c, gpu(), so).allreduces_per_layer, 2);
  TrainOptions o;
  o.gpus = 1, o.seq = 64, o.global_batch = 1, o.micro_batch = 1, o.fused_attention = true;
  // s 64, h 32, 2-byte units. Layer 0: its norm and in_proj inputs 4 s h, z|x|B|C|dt 2 s (64 + 80 + 8), rstd 4 s 2;
  // layer 1: norm 2 s h, attention 3 s h + 2 s (2 x 4 x 8 + 2 x 2 x 8) (fused: no scores). Each layer's feed-forward
  // part: norm 2 s h, its input, mask, k copies and router logits 3 s h + 2 s 2 h + 2 s 4, gated experts and shared
  // MLP 8 s (2 x 12 + 20).
  const Count s = 64, h = 32;
  const Count ffn = 2 * s * h + 3 * s * h + 2 * s * 2 * h + 2 * s * 4 + 8 * s * (2 * 12 + 20);
  const Count mamba = 4 * s * h + 2 * s * (64 + 80 + 8) + 4 * s * 2;
  const Count attention = 2 * s * h + 3 * s * h + 2 * s * (2 * 4 * 8 + 2 * 2 * 8);
  EXPECT_EQ(analyze_training(c, gpu(), o).memory.activations, mamba + attention + 2 * ffn);
}

TEST(LlmHybridServe, TensorParallelSplitsMambaHeadsAndGroups) {
  const LlmConfig c = hybrid();
  const LlmConfig s = tensor_parallel_shard(c, 2);
  EXPECT_EQ(s.ssm_heads, 4);
  EXPECT_EQ(s.ssm_groups, 1);
  EXPECT_EQ(state_cache_bytes(s, 1, DType::F16) * 2, state_cache_bytes(c, 1, DType::F16));
  // One all-reduce per hybrid layer (its mixer's output), 6 layers.
  ServeOptions o = opts(1, 32, 4);
  o.tp = 2;
  const ServeResult r = analyze_serving(c, gpu(), o);
  EXPECT_EQ(r.allreduces_per_layer, 1);
  bool found = false;
  for (const ServeOp& op : r.ops)
    if (op.phase == "decode" && op.name == "allreduce (1 per layer)") {
      EXPECT_DOUBLE_EQ(op.time_s, 6 * 3 * r.allreduce_time_per_layer_decode_s);
      found = true;
    }
  EXPECT_TRUE(found);
  // 2 groups of B and C do not split 4 ways
  llm_test::expect_error([&] { tensor_parallel_shard(c, 4); }, "Mamba groups", "tp 4");
}

TEST(LlmHybridServe, TrainingStoresEachBlocksActivationsAndGptFormulasAreLeftOut) {
  const LlmConfig c = hybrid();
  TrainOptions o;
  o.gpus = 1, o.seq = 128, o.global_batch = 1, o.micro_batch = 1;
  // 2-byte units at s 128, b 1, h 64 (bf16: the figure is the bytes): each block's norm input 2 s b h; a Mamba-2
  // mixer's in_proj input 2 s b h, z|x|B|C|dt 2 s b (128 + 256 + 8) and rstd 4 s b G; attention 3 s b h + Q, K, V, out
  // input 2 s b (2 x 8 x 16 + 2 x 2 x 16) + scores 5 x 8 heads x s^2 b; an MLP 3 s b h + 4 s b 96.
  const Count s = 128, h = 64;
  const Count mamba = 4 * s * h + 2 * s * (128 + 256 + 8) + 4 * s * 2;
  const Count attention = 5 * s * h + 2 * s * (2 * 8 * 16 + 2 * 2 * 16) + 5 * 8 * s * s;
  const Count mlp = 5 * s * h + 4 * s * 96;
  EXPECT_EQ(analyze_training(c, gpu(), o).memory.activations, 2 * (mamba + attention + mlp));
  // A fused attention kernel stores no scores; full recomputation only each layer's input.
  o.fused_attention = true;
  EXPECT_EQ(analyze_training(c, gpu(), o).memory.activations, 2 * (mamba + attention - 5 * 8 * s * s + mlp));
  o.recompute = Recompute::Full;
  EXPECT_EQ(analyze_training(c, gpu(), o).memory.activations, 6 * 2 * s * h);
  // Ring attention does not cover Mamba layers: context parallelism is refused.
  o.gpus = 2, o.cp = 2;
  llm_test::expect_error([&] { analyze_training(c, gpu(), o); }, "--cp 2", "--cp 2 for a hybrid");
  LlmShape shape;
  shape.tokens = 16;
  for (const LlmConventionRow& row : llm_convention_rows(c, build_llm(c, shape), 1, 16))
    for (const char* gpt : {"megatron", "palm", "llm-analysis", "llm-viewer", "korthikanti"})
      EXPECT_NE(row.name.rfind(gpt, 0), 0u) << row.name;
}

}  // namespace hybrid_serve_test
}  // namespace ridge
