// Encoders (LlmConfig::causal false) in the LLM analyses: training counts the whole score matrix, serving is refused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"

namespace ridge {
namespace {

Device encoder_test_device() {
  Device d;
  d.id = "test-gpu";
  d.peak_flops[Precision::BF16] = 312e12;
  d.peak_flops[Precision::FP16] = 312e12;
  d.bandwidth_bytes_per_s["dram"] = 2.039e12;
  d.memory_bytes = Count{80} << 30;
  d.interconnects.push_back({"nvlink", 3e11, 2e-6});
  return d;
}

// bert-base-uncased's config.json (BertForMaskedLM).
LlmConfig bert_base_config() {
  LlmConfig c = parse_llm_config(nlohmann::json::parse(R"({"architectures":["BertForMaskedLM"],"hidden_act":"gelu",
      "hidden_size":768,"intermediate_size":3072,"max_position_embeddings":512,"model_type":"bert",
      "num_attention_heads":12,"num_hidden_layers":12,"type_vocab_size":2,"vocab_size":30522})"), "bert.json");
  c.name = "bert-base-uncased";
  return c;
}

struct Executed {
  Count forward = 0, backward = 0;
};
Executed executed_flops(const TrainResult& r) {
  Executed e;
  for (const TrainOp& op : r.ops) e.forward += op.flops, e.backward += op.backward_flops;
  return e;
}

// A fused kernel executes the kept scores: T (T + 1) / 2 of each T x T tile under a causal mask, all T^2 in an
// encoder. QK^T and SV are 2 B h T^2 FLOPs each over the whole matrix, B h T (T + 1) causal: the encoder executes
// 2 B h T (T - 1) more forward FLOPs per layer than its causal twin (the same config with causal true), twice that
// backward. The graph's (model) FLOPs are the same: HF's eager attention computes every score either way.
TEST(LlmEncoderTrain, FusedAttentionExecutesTheWholeScoreMatrixOfAnEncoder) {
  const LlmConfig c = bert_base_config();
  LlmConfig twin = c;
  twin.causal = true;
  TrainOptions o;
  o.seq = 128, o.micro_batch = 4, o.fused_attention = true;
  const TrainResult enc = analyze_training(c, encoder_test_device(), o);
  const TrainResult dec = analyze_training(twin, encoder_test_device(), o);
  const Count B = 4, T = 128, h = 768, L = 12;
  const Executed e = executed_flops(enc), d = executed_flops(dec);
  EXPECT_EQ(e.forward - d.forward, L * 2 * B * h * T * (T - 1));
  EXPECT_EQ(e.backward - d.backward, 2 * (L * 2 * B * h * T * (T - 1)));
  EXPECT_EQ(enc.model_flops, dec.model_flops);
  // Without a fused kernel both execute the graph's FLOPs.
  o.fused_attention = false;
  EXPECT_EQ(executed_flops(analyze_training(c, encoder_test_device(), o)).forward, e.forward);
  // The encoder's core matmuls execute their graph FLOPs: 2 B h T^2 each.
  Count core = 0;
  for (const TrainOp& op : enc.ops)
    if (op.name.rfind("bert.encoder.layer.0.attention.self.matmul", 0) == 0) core += op.flops;
  EXPECT_EQ(core, 2 * (2 * B * h * T * T));
  // Every layer's ops are layer ops: recomputation reruns them (full: one more forward of each).
  o.recompute = Recompute::Full;
  const TrainResult full = analyze_training(c, encoder_test_device(), o);
  EXPECT_GT(full.hardware_flops, full.model_flops);
}

// Megatron-LM's formula halves QK^T and SV for the causal mask; an encoder's are whole: 6 B s^2 q per layer more.
TEST(LlmEncoderTrain, MegatronCodeFormulaDoesNotHalveAnEncodersAttention) {
  const LlmConfig c = bert_base_config();
  LlmConfig twin = c;
  twin.causal = true;
  const Count B = 8, s = 512, q = 768;
  EXPECT_EQ(megatron_code_iteration_flops(c, 8, 512) - megatron_code_iteration_flops(twin, 8, 512), 6 * B * s * s * q * 12);
}

TEST(LlmEncoderTrain, ServingAnEncoderIsRefusedInOneLine) {
  ServeOptions o;
  o.prompt = 128, o.generate = 1;
  try {
    analyze_serving(bert_base_config(), encoder_test_device(), o);
    ADD_FAILURE() << "an encoder was served";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("bert-base-uncased: bert is an encoder"), std::string::npos) << m;
    EXPECT_NE(m.find("summary, flops, predict or train"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace ridge
