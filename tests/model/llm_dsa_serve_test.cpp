// Serving DeepSeek Sparse Attention (deepseek_v32, glm_moe_dsa): the indexer's key cache, a fused (sparse) kernel
// attending to min(positions, index_topk) keys while the indexer scores every position, HF's eager forward dense,
// and the indexer replicated under tensor parallelism.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/llm_attention.hpp"
#include "ridge/api.hpp"
#include "ridge/llm_analysis.hpp"
#include "llm_test_support.hpp"

namespace ridge {
namespace dsa_serve_test {

using llm_test::opts;
using llm_test::test_gpu;

// Four layers (the first dense), hidden 64, 4 heads of 24 + 8 query/key dims and 16 value dims, latents of 32 and 16;
// the indexer: 2 heads of 16, top 64; 4 experts of 24, 2 per token.
LlmConfig small(const std::string& extra = "") {
  return parse_llm_config(nlohmann::json::parse(R"({"model_type":"deepseek_v32","vocab_size":128,"hidden_size":64,
      "num_hidden_layers":4,"num_attention_heads":4,"q_lora_rank":32,"kv_lora_rank":16,"qk_nope_head_dim":24,
      "qk_rope_head_dim":8,"v_head_dim":16,"intermediate_size":96,"moe_intermediate_size":24,"n_routed_experts":4,
      "num_experts_per_tok":2,"n_shared_experts":1,"first_k_dense_replace":1,"index_n_heads":2,"index_head_dim":16,
      "index_topk":64,"max_position_embeddings":4096)" + extra + "}"), "small");
}

// The same model without the indexer (deepseek_v3).
LlmConfig dense_twin() {
  LlmConfig c = small();
  c.family = "deepseek_v3";
  c.index_heads = c.index_head_dim = c.index_topk = 0;
  return c;
}

// Summed FLOPs of a phase's ops whose name ends in `suffix`.
Count flops_of(const ServeResult& r, const std::string& phase, const std::string& suffix) {
  Count f = 0;
  for (const ServeOp& op : r.ops)
    if (op.phase == phase && op.name.size() >= suffix.size() &&
        op.name.compare(op.name.size() - suffix.size(), suffix.size(), suffix) == 0)
      f += op.flops;
  return f;
}

ServeResult serve(const LlmConfig& c, int64_t prompt, int64_t generate, bool fused, bool latent = false, int tp = 1) {
  ServeOptions o = opts(1, prompt, generate);
  o.fused_attention = fused;
  o.latent_kv = latent;
  o.tp = tp;
  return analyze_serving(c, test_gpu(), o);
}

TEST(LlmDsaServe, TheIndexerKeepsOneKeyPerPositionAndLayer) {
  const NumberFormat fp8 = *parse_number_format("fp8"), fp16 = *parse_number_format("fp16");
  const LlmConfig c = small(), twin = dense_twin();
  // 16 dims per position and layer beside the attention's cache: HF's keys and values, or the latent (16 + 8).
  EXPECT_EQ(kv_cache_bytes(c, 3, 1000, fp16) - kv_cache_bytes(twin, 3, 1000, fp16), Count{2} * 16 * 4 * 1000 * 3);
  EXPECT_EQ(latent_kv_cache_bytes(c, 3, 1000, fp8), Count{1} * (16 + 8 + 16) * 4 * 1000 * 3);
  // Replicated on every tensor-parallel GPU, where HF's keys and values split by head.
  const LlmConfig half = tensor_parallel_shard(c, 2);
  EXPECT_EQ(half.index_heads, 2);
  EXPECT_EQ(kv_cache_bytes(half, 1, 100, fp16), Count{2} * (2 * (32 + 16) + 16) * 4 * 100);
  const ServeResult r = serve(c, 100, 20, true);
  EXPECT_EQ(r.kv_cache_bytes, kv_cache_bytes(c, 1, 120, fp16));
}

TEST(LlmDsaServe, ASparseKernelAttendsToTheTopKWhileTheIndexerScoresEverything) {
  const LlmConfig c = small(), twin = dense_twin();
  // Prompts under the top-k: every position is kept, the core costs what the dense twin's does.
  const ServeResult short_dsa = serve(c, 40, 10, true), short_twin = serve(twin, 40, 10, true);
  EXPECT_EQ(flops_of(short_dsa, "prefill", "self_attn.matmul"), flops_of(short_twin, "prefill", "self_attn.matmul"));
  EXPECT_EQ(flops_of(short_dsa, "decode", "self_attn.matmul_1"), flops_of(short_twin, "decode", "self_attn.matmul_1"));
  // Past the top-k, each decode step's core reads 64 keys whatever the context; the indexer scores all of them.
  const ServeResult a = serve(c, 500, 8, true), b = serve(c, 1000, 8, true);
  EXPECT_EQ(flops_of(a, "decode", "self_attn.matmul"), flops_of(b, "decode", "self_attn.matmul"));
  EXPECT_EQ(flops_of(a, "decode", "self_attn.matmul_1"), flops_of(b, "decode", "self_attn.matmul_1"));
  // The indexer's q.k over 7 steps, 4 layers, 2 heads of 16 dims: 2 x 16 x 2 FLOPs per position and head pair.
  EXPECT_EQ(flops_of(b, "decode", "indexer.matmul") - flops_of(a, "decode", "indexer.matmul"),
            Count{7} * 4 * 2 * 16 * 2 * 500);
  // Prefill: query t's core sees min(t + 1, 64) keys (a window of 64), the indexer's scores every earlier one.
  const Count kept = llm::causal_scores(1000, 0, llm::AttendWindow{64, false}), causal = Count{1000} * 1001 / 2;
  EXPECT_EQ(flops_of(b, "prefill", "self_attn.matmul"), Count{4} * 4 * 2 * (24 + 8) * kept);
  EXPECT_EQ(flops_of(b, "prefill", "indexer.matmul"), Count{4} * 2 * 2 * 16 * causal);
}

TEST(LlmDsaServe, HfEagerComputesEveryScoreAndItsMasks) {
  const LlmConfig c = small(), twin = dense_twin();
  const ServeResult r = serve(c, 1000, 8, false), t = serve(twin, 1000, 8, false);
  EXPECT_EQ(flops_of(r, "prefill", "self_attn.matmul"), flops_of(t, "prefill", "self_attn.matmul"));
  EXPECT_EQ(flops_of(r, "decode", "self_attn.matmul"), flops_of(t, "decode", "self_attn.matmul"));
  // The indexer's per-head scores, their ReLU, weights and sum are tensors of their own, and the mask is added.
  for (const char* op : {"indexer.relu", "indexer.mul", "indexer.sum_heads", "self_attn.add_index_mask"})
    EXPECT_GT(flops_of(r, "prefill", op), 0) << op;
  EXPECT_GT(r.prefill_time_s, t.prefill_time_s);
}

TEST(LlmDsaServe, TheIndexerIsReplicatedUnderTensorParallelism) {
  const LlmConfig c = small();
  const ServeResult one = serve(c, 200, 4, true, true), two = serve(c, 200, 4, true, true, 2);
  EXPECT_EQ(flops_of(one, "prefill", "indexer.q_b_proj"), flops_of(two, "prefill", "indexer.q_b_proj"));
  EXPECT_EQ(flops_of(one, "prefill", "indexer.matmul"), flops_of(two, "prefill", "indexer.matmul"));
  EXPECT_EQ(2 * flops_of(two, "prefill", "self_attn.q_b_proj"), flops_of(one, "prefill", "self_attn.q_b_proj"));
}

TEST(LlmDsaServe, TheNotesSayHowTheSparseAttentionIsTimed) {
  ServeOptions o = opts(1, 200, 4);
  o.fused_attention = true;
  o.tp = 2;
  auto notes = [](const report::Document& d) {
    std::string all;
    for (const std::string& n : d.notes) all += n + "\n";
    return all;
  };
  const std::string fused = notes(report::serve_report(analyze_serving(small(), test_gpu(), o)));
  EXPECT_NE(fused.find("the sparse kernel attends to the indexer's top 64 positions"), std::string::npos) << fused;
  EXPECT_NE(fused.find("replicated on the 2 tensor-parallel GPUs"), std::string::npos) << fused;
  EXPECT_NE(fused.find("--dp runs it"), std::string::npos) << fused;
  o.fused_attention = false;
  o.tp = 1;
  const std::string eager = notes(report::serve_report(analyze_serving(small(), test_gpu(), o)));
  EXPECT_NE(eager.find("HF's eager forward computes every score"), std::string::npos) << eager;
  EXPECT_EQ(eager.find("replicated"), std::string::npos) << eager;
  EXPECT_EQ(notes(report::serve_report(analyze_serving(dense_twin(), test_gpu(), o))).find("Sparse Attention"), std::string::npos);
  // Training: the same choice, and the indexer's backward said to be costed in full.
  TrainOptions t;
  t.gpus = 2, t.tp = 2, t.dp = 1, t.seq = 256, t.global_batch = 2, t.micro_batch = 1;
  t.fused_attention = true;
  const std::string train = notes(report::train_report(analyze_training(small(), test_gpu(), t), small()));
  EXPECT_NE(train.find("top 64 positions"), std::string::npos) << train;
  EXPECT_NE(train.find("replicated on the 2 tensor-parallel GPUs"), std::string::npos) << train;
  EXPECT_NE(train.find("its backward is costed"), std::string::npos) << train;
  EXPECT_EQ(train.find("--dp runs it"), std::string::npos) << train;
}

}  // namespace dsa_serve_test
}  // namespace ridge
