// Training analysis and the published formulas (Megatron-LM, PaLM, GPT-3, calflops) reproduced exactly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"

namespace ridge {
namespace {

Device synthetic_a100() {
  Device d;
  d.id = "test-a100";
  d.peak_flops[Precision::BF16] = 312e12;
  d.peak_flops[Precision::FP16] = 312e12;
  d.bandwidth_bytes_per_s["dram"] = 2.039e12;
  d.memory_bytes = Count{80} << 30;
  d.interconnects.push_back({"nvlink", 3e11, 2e-6});
  d.interconnects.push_back({"network", 2.5e10, 5e-6});
  return d;
}

// The slowest pipeline stage's time per micro-batch from the ops of one micro-batch through the whole shard: stage k
// runs layers[k] / L of the layers' ops, the first stage also the ops before the layers (the embedding), the last
// those after them (final norm, output layer).
double slowest_stage_s(const TrainResult& r, const std::vector<int64_t>& layers, int64_t L) {
  double part[3] = {0, 0, 0};
  bool after_a_layer = false;
  for (const TrainOp& op : r.ops) {
    const bool layer = op.name.find(".layers.") != std::string::npos || op.name.find(".h.") != std::string::npos;
    after_a_layer = after_a_layer || layer;
    part[layer ? 1 : after_a_layer ? 2 : 0] += op.time_s();
  }
  double slowest = 0;
  const size_t p = layers.size();
  for (size_t k = 0; k < p; ++k)
    slowest = std::max(slowest, static_cast<double>(layers[k]) / static_cast<double>(L) * part[1] +
                                    (k == 0 ? part[0] : 0) + (k == p - 1 ? part[2] : 0));
  return slowest;
}

// calflops README: Llama-2-7B at input (1, 128) prints "1700.06 GFLOPS" and "850.00 GMACs": F.linear and
// torch.matmul at 2 FLOPs per MAC, plus F.softmax and F.silu at one per input element.
TEST(LlmConventions, CalflopsLlama2_7bAt128Tokens) {
  LlmShape s{1, 128, 0, DType::F16};
  const Count f = calflops_forward_flops(build_llm(*find_llm_config("llama-2-7b"), s));
  EXPECT_EQ(f, Count{1700063608832});
  EXPECT_EQ((f + 5000000) / 10000000, Count{170006});  // prints 1700.06 G
}

// Megatron-LM paper eq. 3, checked against its own statement that the expression equals
// 96 B s l h^2 (1 + s/6h + V/16lh), and GPT-3 175B (B 1536, s 2048, l 96, h 12288, V 51200).
TEST(LlmConventions, MegatronIterationFlopsFormula) {
  const Count f = megatron_iteration_flops(1536, 2048, 96, 12288, 51200);
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  EXPECT_NEAR(to_double(f) / (96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))), 1.0, 1e-12);
  // Table 1 row "1T": 3072 GPUs at 163 TFLOP/s each = 502 PFLOP/s aggregate (printed 502.0).
  const Count one_t = megatron_iteration_flops(3072, 2048, 128, 25600, 51200);
  EXPECT_GT(one_t, 0);
  EXPECT_NEAR(3072 * 163e12 / 1e15, 500.7, 0.1);
  EXPECT_EQ(megatron_params(128, 25600, 51200, 2048), Count{12} * 128 * 25600 * 25600 + 13 * 128 * 25600 + 53248 * 25600);
}

// GPT-3 paper, Table D.1: 175B trained on 300B tokens = 3.14e23 FLOPs (6 N D with N the parameter count).
TEST(LlmConventions, Gpt3TrainingComputeIs6ND) {
  const Count n = llm_params(*find_llm_config("gpt3-175b")).total;
  EXPECT_NEAR(to_double(6 * n * Count{300000000000}) / 1e23, 3.14, 0.005);
}

// PaLM App. B: 6N + 12 L H Q T per token; for PaLM 540B (N 540.35e9, L 118, H 48, Q 256, T 2048) the attention
// term is 12 x 118 x 48 x 256 x 2048 = 35.6 GFLOPs per token.
TEST(LlmConventions, PalmFlopsPerToken) {
  EXPECT_EQ(palm_flops_per_token(0, 118, 48, 256, 2048), Count{12} * 118 * 48 * 256 * 2048);
  EXPECT_EQ(palm_flops_per_token(1000, 1, 1, 1, 1), Count{6012});
}

TEST(LlmTrain, LayoutMustMultiplyToGpus) {
  TrainOptions o;
  o.gpus = 8, o.tp = 2, o.pp = 2, o.dp = 4;
  EXPECT_THROW(analyze_training(*find_llm_config("llama-2-7b"), synthetic_a100(), o), Error);
  TrainOptions negative;
  negative.gpus = 8, negative.global_batch = -8;  // was accepted: a negative iteration time
  EXPECT_THROW(analyze_training(*find_llm_config("llama-2-7b"), synthetic_a100(), negative), Error);
  o.dp = 0, o.gpus = 6, o.pp = 4;
  EXPECT_THROW(analyze_training(*find_llm_config("llama-2-7b"), synthetic_a100(), o), Error);
}

TEST(LlmTrain, Fp32TrainingKeepsFourByteWeightsGradientsAndActivationsAndTwoMoments) {
  Device d = synthetic_a100();
  d.peak_flops[Precision::FP32] = 19.5e12;
  const LlmConfig& c = *find_llm_config("llama-2-7b");
  TrainOptions o;
  o.gpus = 8, o.zero = 0, o.seq = 1024;
  const TrainResult mixed = analyze_training(c, d, o);
  o.compute = Precision::FP32;
  const TrainResult fp32 = analyze_training(c, d, o);
  const Count p = llm_params(c).total;
  EXPECT_EQ(mixed.memory.weights, 2 * p);
  EXPECT_EQ(mixed.memory.optimizer, 12 * p);  // fp32 master + 2 moments
  EXPECT_EQ(fp32.memory.weights, 4 * p);
  EXPECT_EQ(fp32.memory.gradients, 4 * p);
  EXPECT_EQ(fp32.memory.optimizer, 8 * p);  // the weights are the master copy
  EXPECT_EQ(fp32.memory.activations, 2 * mixed.memory.activations);
}

TEST(LlmTrain, TheUncalibratedBoundChargesABackwardNoMoreThanItMustMove) {
  TrainOptions o;
  o.gpus = 8, o.seq = 1024;  // no calibration on the synthetic device: roofline bounds
  const TrainResult r = analyze_training(*find_llm_config("llama-2-7b"), synthetic_a100(), o);
  int residuals = 0, norms = 0;
  for (const TrainOp& op : r.ops) {
    if (op.backward_flops == 0 && op.op_class == "Binary") {  // a residual add: its gradient passes through
      EXPECT_EQ(op.backward_s, 0.0) << op.name;
      ++residuals;
    }
    if (op.backward_flops > 0 && (op.op_class == "Binary" || op.op_class == "Unary")) {
      // The backward reads dy and writes dx: the forward's bytes once (not twice), at the roofline.
      EXPECT_NEAR(op.backward_s, std::max(to_double(op.backward_flops) / 312e12, to_double(op.bytes) / 2.039e12),
                  1e-9 * op.backward_s) << op.name;
      ++norms;
    }
  }
  EXPECT_GT(residuals, 0);
  EXPECT_GT(norms, 0);
}

TEST(LlmTrain, ModelFlopsFromTheGraphAndMemoryFormulas) {
  const LlmConfig& c = *find_llm_config("gpt3-1.3b");
  TrainOptions o;
  o.gpus = 8, o.tp = 1, o.pp = 1, o.seq = 2048, o.micro_batch = 1, o.global_batch = 16;
  o.recompute = Recompute::Full;
  const TrainResult r = analyze_training(c, synthetic_a100(), o);
  EXPECT_EQ(r.micro_batches, 2);
  EXPECT_GT(r.hardware_flops, r.model_flops);
  // Model FLOPs are within 3% of 6 N D + the attention term (12 L h s per token, fwd+bwd).
  const double n = to_double(llm_params(c).total), tokens = 16.0 * 2048;
  EXPECT_NEAR(to_double(r.model_flops) / ((6 * n + 12.0 * 24 * 2048 * 2048) * tokens), 1.0, 0.03);
  // Mixed-precision Adam, no ZeRO: 2 + 2 + 12 bytes per parameter.
  const Count psi = llm_params(c).total;
  EXPECT_EQ(r.memory.weights, 2 * psi);
  EXPECT_EQ(r.memory.optimizer, 12 * psi);
  EXPECT_EQ(r.memory.activations, Count{2} * 2048 * 2048 * 24);  // full recompute: 2 s b h per layer
  EXPECT_GT(r.mfu, 0);
  EXPECT_LE(r.mfu, r.hfu);
  // ZeRO-3 shards all three over dp 8.
  o.zero = 3;
  const TrainResult z = analyze_training(c, synthetic_a100(), o);
  EXPECT_EQ(z.memory.optimizer, (12 * psi + 7) / 8);
  EXPECT_EQ(z.memory.weights, (2 * psi + 7) / 8);
}

// The config.json families GPT-J, CodeGen, GPTBigCode, StarCoder2 and StableLM train like the others: their
// parameters (lm_head biases, one-head KV projections, a shared ln_1) are what the memory formulas hold.
TEST(LlmTrain, ConfigFamiliesTrainWithTheirExactParameters) {
  const char* configs[] = {
      R"({"model_type":"gptj","vocab_size":512,"n_embd":128,"n_layer":4,"n_head":4,"n_positions":256,"rotary_dim":16})",
      R"({"model_type":"codegen","vocab_size":512,"n_embd":128,"n_layer":4,"n_head":4,"n_positions":256,"rotary_dim":16})",
      R"({"model_type":"gpt_bigcode","vocab_size":512,"n_embd":128,"n_layer":4,"n_head":4,"n_positions":256})",
      R"({"model_type":"starcoder2","vocab_size":512,"hidden_size":128,"num_hidden_layers":4,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":256,"max_position_embeddings":256})",
      R"({"model_type":"stablelm","vocab_size":512,"hidden_size":128,"num_hidden_layers":4,"num_attention_heads":4,
          "num_key_value_heads":4,"intermediate_size":256,"max_position_embeddings":256})",
  };
  for (const char* text : configs) {
    LlmConfig c = parse_llm_config(nlohmann::json::parse(text), "cfg.json");
    c.name = c.family;
    TrainOptions o;
    o.gpus = 1, o.seq = 128, o.micro_batch = 1, o.global_batch = 4;
    const TrainResult r = analyze_training(c, synthetic_a100(), o);
    EXPECT_GT(r.model_flops, 0) << c.family;
    EXPECT_GT(r.iteration_time_s, 0) << c.family;
    // Mixed-precision Adam on one GPU: 2 bytes of weights and 12 of optimizer states per parameter.
    const Count psi = llm_params(c).total;
    EXPECT_EQ(r.memory.weights, 2 * psi) << c.family;
    EXPECT_EQ(r.memory.optimizer, 12 * psi) << c.family;
    // Two pipeline stages (2 layers each) train too.
    o.gpus = 2, o.pp = 2;
    EXPECT_GT(analyze_training(c, synthetic_a100(), o).iteration_time_s, 0) << c.family;
  }
}

TEST(LlmTrain, KorthikantiActivationsAndBubble) {
  const LlmConfig& c = *find_llm_config("megatron-18b");  // h 6144, a 48, l 40
  TrainOptions o;
  o.gpus = 16, o.tp = 8, o.pp = 2, o.seq = 2048, o.micro_batch = 1, o.global_batch = 8;
  const TrainResult r = analyze_training(c, synthetic_a100(), o);
  EXPECT_EQ(r.micro_batches, 8);
  EXPECT_DOUBLE_EQ(r.bubble_fraction, 1.0 / 9);
  // sbh(10 + 24/t + 5as/(ht)) per layer, 20 layers per stage, 2 micro-batches in flight on the first stage.
  const Count per_layer = Count{2048} * (6144 * (10 * 8 + 24) + 5 * 48 * 2048) / 8;
  EXPECT_EQ(r.memory.activations, per_layer * 20 * 2);
  EXPECT_GT(r.tp_comm_s, 0);
  EXPECT_GT(r.pp_comm_s, 0);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// Interleaved 1F1B (Narayanan et al. 2021, sec. 2.2.2): v virtual stages per GPU cut the bubble from p - 1 to
// (p - 1) / v stage slots and multiply the stage-boundary crossings by v.
TEST(LlmTrain, InterleavedScheduleShrinksTheBubble) {
  const LlmConfig& c = *find_llm_config("gpt3-1.3b");  // 24 layers
  TrainOptions o;
  o.gpus = 8, o.tp = 1, o.pp = 4, o.seq = 2048, o.micro_batch = 1, o.global_batch = 16;  // dp 2, m 8
  const TrainResult plain = analyze_training(c, synthetic_a100(), o);
  o.interleave = 2;
  const TrainResult inter = analyze_training(c, synthetic_a100(), o);
  EXPECT_DOUBLE_EQ(plain.bubble_fraction, 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(inter.bubble_fraction, 1.5 / 9.5);
  EXPECT_NEAR(inter.compute_time_s / plain.compute_time_s, 9.5 / 11.0, 1e-12);
  // Plain 1F1B waits for its sends; interleaved, Megatron-LM overlaps them with the next chunk's compute, and a
  // 1.3B model's activations (4 MiB) cross NVLink well within a chunk. TP all-reduces run in every slot.
  EXPECT_GT(plain.pp_comm_s, 0.0);
  EXPECT_EQ(inter.pp_comm_s, 0.0);
  {  // Across nodes on a slow link (100 MB/s) the overlap only hides a chunk's worth of each send.
    Device slow_link = synthetic_a100();
    for (auto& l : slow_link.interconnects)
      if (l.name == "network") l.bandwidth_bytes_per_s = 1e8;
    TrainOptions slow = o;
    slow.gpus_per_node = 1, slow.interleave = 1;
    const TrainResult plain_slow = analyze_training(c, slow_link, slow);
    slow.interleave = 2;
    const TrainResult inter_slow = analyze_training(c, slow_link, slow);
    EXPECT_GT(inter_slow.pp_comm_s, 0.0);
    EXPECT_LT(inter_slow.pp_comm_s, 2.0 * 9.5 / 11.0 * plain_slow.pp_comm_s);  // v x slots x 2 sends, minus overlap
  }
  o.tp = 2, o.gpus = 16;
  const double tp_inter = analyze_training(c, synthetic_a100(), o).tp_comm_s;
  o.interleave = 1;
  const double tp_plain = analyze_training(c, synthetic_a100(), o).tp_comm_s;
  ASSERT_GT(tp_plain, 0.0);
  EXPECT_NEAR(tp_inter / tp_plain, 9.5 / 11.0, 1e-12);
  o.interleave = 7;  // 6 layers per stage cannot make 7 virtual stages
  EXPECT_THROW(analyze_training(c, synthetic_a100(), o), Error);
}

// Interleaved 1F1B keeps activations of more micro-batches on the first stage: Korthikanti et al. 2022 (sec. 4.2.3)
// multiply the memory by 1 + (p - 1) / (p v). Llama-2-7B, pp 4, 8 layers per stage, m 8: 4 micro-batches in
// flight of s b h (34 + 5 a s / h) = 2048 x 4096 x (34 + 80) bytes per layer; v 2 multiplies by 1 + 3/8.
TEST(LlmTrain, InterleavedScheduleHoldsMoreActivations) {
  const LlmConfig& c = *find_llm_config("llama-2-7b");
  TrainOptions o;
  o.gpus = 8, o.pp = 4, o.seq = 2048, o.micro_batch = 1, o.global_batch = 16;  // dp 2, m 8
  const Count plain = Count{2048} * 4096 * 114 * 8 * 4;
  EXPECT_EQ(plain, Count{30601641984});
  EXPECT_EQ(analyze_training(c, synthetic_a100(), o).memory.activations, plain);
  o.interleave = 2;
  EXPECT_EQ(analyze_training(c, synthetic_a100(), o).memory.activations, Count{42077257728});  // x 11/8
  o.interleave = 4;
  EXPECT_EQ(analyze_training(c, synthetic_a100(), o).memory.activations, plain * 19 / 16);  // x (1 + 3/16)
  // Megatron-LM runs the interleaved schedule on a number of micro-batches that pp divides: m 2 over pp 4 (and m 1,
  // whose one micro-batch could not hold the penalty's activations) is refused, not charged 1 + 3/8 of 4 in flight.
  o.global_batch = 4;  // dp 2, m 2
  o.interleave = 2;
  EXPECT_THROW(analyze_training(c, synthetic_a100(), o), Error);
}

// A stage holds its own layers' parameters, dense or sparse: DeepSeek-V2-Lite's dense layer 0 (81,007,104
// parameters) sits on the first stage with the embedding (102,400 x 2,048) and 13 of the 26 MoE layers
// (584,847,872 each); at pp 27 the largest stage is one MoE layer (the first holds the embedding and layer 0).
TEST(LlmTrain, StagesHoldTheirOwnDenseAndSparseLayers) {
  const LlmConfig& c = *find_llm_config("deepseek-v2-lite");
  TrainOptions o;
  o.gpus = 2, o.pp = 2, o.seq = 2048, o.micro_batch = 1, o.global_batch = 64;
  const Count stage0 = Count{102400} * 2048 + 81007104 + Count{13} * 584847872;
  EXPECT_EQ(analyze_training(c, synthetic_a100(), o).memory.weights, 2 * stage0);  // bf16
  o.gpus = 27, o.pp = 27, o.global_batch = 27;
  EXPECT_EQ(analyze_training(c, synthetic_a100(), o).memory.weights, Count{2} * 584847872);
}

// MoE layers store what their routed tokens do, not the GPT block's 4h MLP: Mixtral (h 4096, a 32, top-2 of 8 experts of
// I 14,336) at tp 2, seq 4096: the 16 s b h / t of the dense MLP give way to 2 copies of each token's expert input
// (2 s b k h), gate, up, activation and down-projection input per copy (8 s b k I / t) and the router logits
// (2 s b E). Selective: s b h (10 + 8/t) + 2 s b k h + 8 s b k I / t + 2 s b E = 4096 x (14 x 4096 + 4 x 4096 +
// 8 x 14336 + 16) = 771,817,472 B per layer (the dense formula: 369,098,752, what llama-2-7b prints).
TEST(LlmTrain, MoeActivationsCountTheRoutedTokens) {
  const LlmConfig& c = *find_llm_config("mixtral-8x7b");
  TrainOptions o;
  o.gpus = 64, o.tp = 2, o.seq = 4096, o.micro_batch = 1, o.zero = 3, o.recompute = Recompute::Selective;  // m 1
  EXPECT_EQ(analyze_training(c, synthetic_a100(), o).memory.activations, Count{771817472} * 32);
  o.recompute = Recompute::None;  // + the scores, 5 a s^2 b / t
  EXPECT_EQ(analyze_training(c, synthetic_a100(), o).memory.activations, (Count{771817472} + 1342177280) * 32);
  o.recompute = Recompute::Full;  // the layer input only, as a dense layer
  EXPECT_EQ(analyze_training(c, synthetic_a100(), o).memory.activations, Count{2} * 4096 * 4096 * 32);
  o.recompute = Recompute::Selective, o.sequence_parallel = true;  // every part split by t: (18 sbh + ...) / t
  EXPECT_EQ(analyze_training(c, synthetic_a100(), o).memory.activations,
            Count{4096} * (18 * 4096 + 8 * 2 * 14336 + 4 * 4096 + 16) / 2 * 32);
  // A dense model is unchanged.
  o.sequence_parallel = false;
  EXPECT_EQ(analyze_training(*find_llm_config("llama-2-7b"), synthetic_a100(), o).memory.activations,
            Count{4096} * 4096 * 22 * 32);
}

// Uneven pipeline stages (Llama 3 405B: 126 layers over 16 stages, the first and last one layer short): the middle
// stages take the extra layers first, then the first; the slowest stage sets the pace and the fullest the memory.
TEST(LlmTrain, UnevenPipelineStagesTakeTheLargestStage) {
  const LlmConfig& c = *find_llm_config("gpt3-1.3b");  // 24 layers, tied embeddings
  TrainOptions o;
  o.gpus = 10, o.tp = 1, o.pp = 5, o.seq = 2048, o.micro_batch = 1, o.global_batch = 16, o.zero = 0;  // dp 2, m 8
  const TrainResult five = analyze_training(c, synthetic_a100(), o);
  EXPECT_EQ(five.layers_per_stage, 5);  // 24 over 5 stages: 5, 5, 5, 5, 4
  o.gpus = 8, o.pp = 4;
  const TrainResult four = analyze_training(c, synthetic_a100(), o);
  EXPECT_EQ(four.layers_per_stage, 6);
  // Slots: m + p - 1.
  EXPECT_NEAR(five.compute_time_s, 12 * slowest_stage_s(five, {5, 5, 5, 5, 4}, 24), 1e-9 * five.compute_time_s);
  EXPECT_NEAR(four.compute_time_s, 11 * slowest_stage_s(four, {6, 6, 6, 6}, 24), 1e-9 * four.compute_time_s);
  // The first stage needs the most memory (its embedding and the most micro-batches in flight): 5 and 6 layers.
  const LlmParams params = llm_params(c);
  EXPECT_EQ(five.memory.weights, 2 * (params.layers / 24 * 5 + params.embedding));
  EXPECT_EQ(four.memory.weights, 2 * (params.layers / 24 * 6 + params.embedding));
  o.pp = 25, o.gpus = 50;
  EXPECT_THROW(analyze_training(c, synthetic_a100(), o), Error);  // more stages than layers
}

// Megatron-LM's placement: the embedding on the first stage, the final norm and output layer on the last. Llama-3-8B
// over 8 stages: 4 layers of 218,112,000 parameters each, + the 128,256 x 4096 embedding on stage 0 = 1,397,784,576
// (not Psi / 8 = 1,003,782,656); the last stage holds 4 layers + the norm + lm_head but one micro-batch's activations,
// so stage 0 needs the most memory. The last stage, with the output layer's GEMM, is the slowest.
TEST(LlmTrain, EmbeddingOnTheFirstStageHeadOnTheLast) {
  const LlmConfig& c = *find_llm_config("llama-3-8b");
  const LlmParams params = llm_params(c);
  EXPECT_EQ(params.layers, Count{218112000} * 32);
  EXPECT_EQ(params.embedding, Count{128256} * 4096);
  TrainOptions o;
  o.gpus = 8, o.pp = 8, o.seq = 4096, o.micro_batch = 1, o.global_batch = 8, o.recompute = Recompute::Full;
  const TrainResult r = analyze_training(c, synthetic_a100(), o);
  EXPECT_EQ(r.memory.weights, Count{2} * 1397784576);
  EXPECT_EQ(r.memory.activations, Count{2} * 4096 * 4096 * 4 * 8);  // 2 s b h x 4 layers x 8 micro-batches
  const double slowest = slowest_stage_s(r, std::vector<int64_t>(8, 4), 32);
  EXPECT_NEAR(r.compute_time_s, 15 * slowest, 1e-9 * r.compute_time_s);
  double all = 0;
  for (const TrainOp& op : r.ops) all += op.time_s();
  EXPECT_GT(slowest, all / 8 * 1.05);  // the head weighs more than an eighth of the model's time
  // A tied output layer keeps its own copy of the word embedding on the last stage (pp > 1): gpt3-1.3b over 2 stages,
  // one micro-batch (equal activations), the last stage holds 12 layers + ln_f + the copy, the first 12 layers + the
  // token and position embeddings.
  const LlmConfig& g = *find_llm_config("gpt3-1.3b");
  const LlmParams gp = llm_params(g);
  TrainOptions t;
  t.gpus = 2, t.pp = 2, t.seq = 2048, t.micro_batch = 1, t.global_batch = 1, t.recompute = Recompute::Full;
  const Count first = gp.layers / 2 + gp.embedding, last = gp.layers / 2 + 2 * 2048 + Count{50257} * 2048;
  EXPECT_EQ(analyze_training(g, synthetic_a100(), t).memory.weights, 2 * std::max(first, last));
}

TEST(LlmTrain, MemorySaversThatFitAreTheCheapestThatSuffice) {
  const LlmConfig& c = *find_llm_config("llama-2-7b");
  Device small = synthetic_a100();
  small.memory_bytes = Count{40} << 30;
  TrainOptions o;
  o.gpus = 8, o.seq = 2048, o.micro_batch = 1;
  ASSERT_FALSE(analyze_training(c, small, o).fits);
  const auto savers = memory_savers_that_fit(c, small, o);
  ASSERT_TRUE(savers.has_value());
  EXPECT_EQ(*savers, "--zero 2 --recompute selective");
  // The suggestion fits, and nothing cheaper on the list does.
  TrainOptions with = o;
  with.zero = 2, with.recompute = Recompute::Selective;
  EXPECT_TRUE(analyze_training(c, small, with).fits);
  for (int zero : {1, 2, 3}) {
    with = o;
    with.zero = zero;
    EXPECT_FALSE(analyze_training(c, small, with).fits) << zero;
  }
  // Only the changed flags are named; a layout that fits needs none; alone on one GPU nothing shards.
  o.recompute = Recompute::Selective;
  EXPECT_EQ(memory_savers_that_fit(c, small, o), "--zero 2");
  o.zero = 2;
  EXPECT_EQ(memory_savers_that_fit(c, small, o), std::nullopt);
  o.gpus = 1, o.zero = 0;
  EXPECT_EQ(memory_savers_that_fit(c, small, o), std::nullopt);
}

// Expert parallelism: each GPU keeps 1/ep of the experts; MoE layers add 4 all-to-alls per micro-batch.
TEST(LlmTrain, ExpertParallelismSplitsExpertsAndAddsAllToAlls) {
  const LlmConfig& c = *find_llm_config("mixtral-8x7b");
  TrainOptions o;
  o.gpus = 8, o.tp = 1, o.pp = 1, o.seq = 1024, o.micro_batch = 1, o.global_batch = 8, o.zero = 0;
  const TrainResult one = analyze_training(c, synthetic_a100(), o);
  o.ep = 8;
  const TrainResult eight = analyze_training(c, synthetic_a100(), o);
  const LlmParams p = llm_params(c);
  const Count experts = (p.total - p.active_per_token) / 6 * 8;  // E 8, k 2
  EXPECT_EQ(one.memory.weights, 2 * p.total);
  EXPECT_EQ(eight.memory.weights, 2 * (p.total - experts + experts / 8));
  EXPECT_EQ(one.ep_comm_s, 0.0);
  EXPECT_GT(eight.ep_comm_s, 0.0);
  EXPECT_DOUBLE_EQ(eight.compute_time_s, one.compute_time_s);  // the same tokens through k experts each
  EXPECT_LT(eight.dp_comm_exposed_s, one.dp_comm_exposed_s);    // fewer replicated gradients
  // Expert gradients are all-reduced only among the dp / ep ranks holding the same experts: on two nodes (dp 16,
  // the all-reduce not hidden by backward) the exposed time falls as ep grows and fewer ranks share each shard.
  {
    TrainOptions two_nodes = o;
    two_nodes.gpus = 16, two_nodes.global_batch = 16;
    double previous = INFINITY;
    for (int ep : {1, 2, 4, 8}) {
      two_nodes.ep = ep;
      const double exposed = analyze_training(c, synthetic_a100(), two_nodes).dp_comm_exposed_s;
      EXPECT_GT(exposed, 0.0) << ep;
      EXPECT_LT(exposed, previous) << ep;
      previous = exposed;
    }
  }
  // ZeRO shards an expert shard's states only over the dp / ep ranks that hold it: at ep = dp there is nothing to
  // shard them over, so stage 1 divides only the dense states (Mixtral's experts are 45 of its 47 B parameters).
  {
    TrainOptions full_ep = o;
    full_ep.ep = 8, full_ep.zero = 0;
    const TrainResult unsharded = analyze_training(c, synthetic_a100(), full_ep);
    full_ep.zero = 1;
    const TrainResult stage1 = analyze_training(c, synthetic_a100(), full_ep);
    const Count dense = p.total - experts, expert_shard = experts / 8;
    EXPECT_EQ(unsharded.memory.optimizer, 12 * (dense + expert_shard));
    EXPECT_EQ(stage1.memory.optimizer, (12 * dense + 7) / 8 + 12 * expert_shard);
    full_ep.zero = 3;
    const TrainResult stage3 = analyze_training(c, synthetic_a100(), full_ep);
    EXPECT_EQ(stage3.memory.weights, (2 * dense + 7) / 8 + 2 * expert_shard);
    full_ep.ep = 1;  // without expert parallelism every state is sharded over all 8 ranks
    EXPECT_EQ(analyze_training(c, synthetic_a100(), full_ep).memory.weights,
              (2 * (p.total - experts) + 7) / 8 + (2 * experts + 7) / 8);
  }
  // Per sparse layer and micro-batch: 4 all-to-alls of b s k h x 2 bytes (1 x 1024 x 2 x 4096 x 2), each 7 latencies
  // + 7/8 of the bytes over NVLink (300 GB/s); m = 1, 32 sparse layers. Full recomputation re-runs the MoE layer's
  // forward: its dispatch and combine again, 6 all-to-alls (as TP's 4 all-reduces become 6).
  {
    const double all_to_all = 7 * 2e-6 + 7.0 / 8.0 * 16777216.0 / 3e11;
    EXPECT_NEAR(eight.ep_comm_s, 32 * 4 * all_to_all, 1e-15);
    TrainOptions full = o;
    full.recompute = Recompute::Full;
    EXPECT_NEAR(analyze_training(c, synthetic_a100(), full).ep_comm_s, 32 * 6 * all_to_all, 1e-15);
    full.recompute = Recompute::Selective;  // the attention core only: no all-to-all again
    EXPECT_NEAR(analyze_training(c, synthetic_a100(), full).ep_comm_s, 32 * 4 * all_to_all, 1e-15);
  }
  o.ep = 3;
  EXPECT_THROW(analyze_training(c, synthetic_a100(), o), Error);
  o.ep = 2;
  EXPECT_THROW(analyze_training(*find_llm_config("llama-2-7b"), synthetic_a100(), o), Error);  // dense: no experts
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// Fused (Flash) attention keeps no T x T tensors for the backward: the activations are Korthikanti's selective
// ones, sbh(10 + 24/t), and its backward kernel recomputes QK^T and the softmax, so the hardware FLOPs gain one
// attention core forward (as selective recomputation's do; with both, once), full recomputation two.
TEST(LlmTrain, FusedAttentionStoresNoScoresAndRecomputesTheCore) {
  const LlmConfig& c = *find_llm_config("megatron-18b");  // h 6144, a 48, l 40
  TrainOptions o;
  o.gpus = 8, o.tp = 8, o.pp = 1, o.seq = 2048, o.micro_batch = 1, o.global_batch = 1;
  const TrainResult eager = analyze_training(c, synthetic_a100(), o);
  o.recompute = Recompute::Selective;
  const TrainResult selective = analyze_training(c, synthetic_a100(), o);
  o.fused_attention = true;
  const TrainResult fused_selective = analyze_training(c, synthetic_a100(), o);
  o.recompute = Recompute::None;
  const TrainResult fused = analyze_training(c, synthetic_a100(), o);
  EXPECT_EQ(fused.memory.activations, Count{2048} * 6144 * (10 + 24 / 8) * 40);
  EXPECT_EQ(fused.memory.activations, selective.memory.activations);
  EXPECT_LT(fused.memory.activations, eager.memory.activations);
  EXPECT_EQ(fused.model_flops, eager.model_flops);
  EXPECT_EQ(eager.hardware_flops, eager.model_flops);
  EXPECT_EQ(fused.hardware_flops, selective.hardware_flops);
  EXPECT_EQ(fused_selective.hardware_flops, selective.hardware_flops);
  EXPECT_GT(fused.hardware_flops, fused.model_flops);
  o.recompute = Recompute::Full;
  const TrainResult fused_full = analyze_training(c, synthetic_a100(), o);
  o.fused_attention = false;
  const TrainResult full = analyze_training(c, synthetic_a100(), o);
  EXPECT_EQ(fused_full.hardware_flops - full.hardware_flops, fused.hardware_flops - fused.model_flops);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// The data-parallel all-reduce runs on the cluster the group spans (allreduce_time's topology): a ring leaving a
// node of 8 GPUs crosses it on the node's 8 NICs at once (NCCL's channels), so with 8 NICs it is the fabric-bound
// min(nvlink, 8 x network) ring, with 1 NIC the network-bound one; a tp 8 replica per node leaves one GPU of the
// group per node and one NIC's share.
TEST(LlmTrain, DataParallelAllReduceUsesTheNodesNics) {
  const LlmConfig& c = *find_llm_config("megatron-1.7b");
  TrainOptions o;
  o.gpus = 16, o.tp = 1, o.pp = 1, o.seq = 128, o.micro_batch = 1, o.global_batch = 16;
  Device one = synthetic_a100(), eight = synthetic_a100();
  eight.node.nics_per_node = 8;
  const TrainResult r1 = analyze_training(c, one, o), r8 = analyze_training(c, eight, o);
  const Count grads = 2 * llm_params(c).total;
  ClusterTopology t;
  t.gpus_per_node = 8, t.nodes = 2, t.intra = {"nvlink", 3e11, 2e-6}, t.inter = {"network", 2.5e10, 5e-6};
  t.nics_per_node = 1;
  const double t1 = allreduce_time(AllReduce::Ring, grads, t).time_s;
  t.nics_per_node = 8;
  const double t8 = allreduce_time(AllReduce::Ring, grads, t).time_s;
  ASSERT_GT(r8.dp_comm_exposed_s, 0);
  EXPECT_NEAR(r1.dp_comm_exposed_s - r8.dp_comm_exposed_s, t1 - t8, 1e-9);
  EXPECT_NEAR(t1 / t8, 200.0 / 25.0, 0.1);  // network 25 GB/s vs min(nvlink 300, 8 x 25) GB/s
  o.tp = 8;  // dp 2: one member per node, one NIC each
  EXPECT_DOUBLE_EQ(analyze_training(c, eight, o).dp_comm_exposed_s, analyze_training(c, one, o).dp_comm_exposed_s);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// --attention: eager, fused (an ideal kernel at the GEMM factors), flash2 (FlashAttention-2 at its published
// utilization); the shipped figures carry their sources, and devices without one have none.
TEST(LlmAttentionKernel, ParsedAndShippedWithSources) {
  EXPECT_FALSE(parse_attention("eager")->fused);
  EXPECT_TRUE(parse_attention("fused")->fused);
  EXPECT_EQ(parse_attention("fused")->kernel, "");
  EXPECT_TRUE(parse_attention("flash2")->fused);
  EXPECT_EQ(parse_attention("flash2")->kernel, "flash-attention-2");
  EXPECT_EQ(parse_attention("flash1")->kernel, "flash-attention-1");
  const auto a100_v1 = builtin_attention_efficiency("flash-attention-1", "a100-sxm4-80gb");
  ASSERT_TRUE(a100_v1);
  EXPECT_DOUBLE_EQ(a100_v1->ppp, 0.325);
  EXPECT_NE(a100_v1->source.find("25-40%"), std::string::npos);
  const auto h100_v1 = builtin_attention_efficiency("flash-attention-1", "h100-sxm");
  ASSERT_TRUE(h100_v1);
  EXPECT_NE(h100_v1->source.find("derived"), std::string::npos);
  EXPECT_FALSE(parse_attention("flash"));
  const auto h100 = builtin_attention_efficiency("flash-attention-2", "h100-sxm");
  ASSERT_TRUE(h100);
  EXPECT_DOUBLE_EQ(h100->ppp, 0.35);
  EXPECT_NE(h100->source.find("arXiv:2407.08608"), std::string::npos);
  const auto a100 = builtin_attention_efficiency("flash-attention-2", "a100-sxm4-40gb");
  ASSERT_TRUE(a100);
  EXPECT_NE(a100->source.find("arXiv:2307.08691"), std::string::npos);
  EXPECT_FALSE(builtin_attention_efficiency("flash-attention-2", "b200"));
  EXPECT_FALSE(builtin_attention_efficiency("", "h100-sxm"));
  // Notes: the figure used, none published (calibrated elsewhere), or an upper bound; nothing for fused.
  EXPECT_EQ(attention_kernel_note("", h100, true, "h100-sxm"), "");
  EXPECT_NE(attention_kernel_note("flash-attention-2", h100, true, "h100-sxm").find("at 35.0 % of the tensor peak on h100"),
            std::string::npos);
  EXPECT_NE(attention_kernel_note("flash-attention-2", std::nullopt, true, "l40s").find("no published flash-attention-2 "
                                                                                         "utilization for l40s"),
            std::string::npos);
  EXPECT_NE(attention_kernel_note("flash-attention-2", std::nullopt, false, "l40s").find("uncalibrated upper bound"),
            std::string::npos);
}

Calibration flat_calibration(double gemm_ppp) {
  Calibration cal;
  Efficiency gemm;
  gemm.ppp = gemm_ppp;
  gemm.ppp_mem = 0.9;
  gemm.overhead_s = 4e-6;
  cal.by_class["gemm"] = gemm;
  cal.fallback = gemm;
  return cal;
}

// A fitted memory efficiency above 1 (Vidur's small elementwise operators, partly served from L2) cannot apply to
// traffic the L2 cannot hold: with the device's L2 the time is never below (bytes - L2) / DRAM bandwidth.
TEST(LlmOpTime, MemoryEfficiencyAboveOneStopsAtTheL2) {
  Calibration cal;
  Efficiency e;
  e.ppp = 1.0;
  e.ppp_mem = 2.0;  // twice the DRAM bandwidth
  cal.fallback = e;
  const Count bytes = 1000000000, l2 = 100000000;
  EXPECT_NEAR(llm_op_time(0, bytes, "elementwise", 1, 1e15, 1e12, &cal), 0.5e-3, 1e-9);
  Bound bound = Bound::None;
  EXPECT_NEAR(llm_op_time(0, bytes, "elementwise", 1, 1e15, 1e12, &cal, &bound, l2), 0.9e-3, 1e-12);
  EXPECT_EQ(bound, Bound::Memory);
  // A tensor that fits in the L2 keeps the fitted efficiency.
  EXPECT_NEAR(llm_op_time(0, l2 / 2, "elementwise", 1, 1e15, 1e12, &cal, nullptr, l2), 0.025e-3, 1e-12);
}

// `o` with the attention core as one fused kernel, calibrated at GEMM PPP 0.8; with `kernel_ppp`, timed as a
// kernel of that published utilization.
template <class Options>
Options fused_core(Options o, std::optional<double> kernel_ppp = std::nullopt) {
  o.fused_attention = true;
  o.calibration = flat_calibration(0.8);
  if (kernel_ppp) {
    o.attention_kernel = "flash-attention-2";
    o.attention_efficiency = AttentionKernelEfficiency{"flash-attention-2", "test", *kernel_ppp, "test"};
  }
  return o;
}

// The kernel's utilization times only the attention core's two matmuls: at the GEMM's own PPP nothing changes;
// below it, exactly their compute time grows, forward, backward and the recomputed forward alike.
TEST(LlmAttentionKernel, TimesOnlyTheCoreMatmulsAtTheKernelsUtilization) {
  const LlmConfig& c = *find_llm_config("megatron-18b");
  TrainOptions o;
  o.gpus = 8, o.tp = 8, o.pp = 1, o.seq = 2048, o.micro_batch = 1, o.global_batch = 1;
  const TrainResult fused = analyze_training(c, synthetic_a100(), fused_core(o));
  const TrainResult same = analyze_training(c, synthetic_a100(), fused_core(o, 0.8));
  EXPECT_NEAR(same.compute_time_s, fused.compute_time_s, 1e-12 * fused.compute_time_s);
  o = fused_core(o, 0.4);
  const TrainResult flash = analyze_training(c, synthetic_a100(), o);
  // Per layer and GPU (48 / 8 heads of 128): QK^T and SV forward over the s (s + 1) / 2 scores the causal mask
  // keeps, 2 x 2 x 6 x 128 FLOPs each; backward twice that; the core recomputed once in the backward: 4
  // forward-equivalents. Their time doubles at half the PPP.
  const double core_flops = 4.0 * 2 * 2 * (2048.0 * 2049 / 2) * 6 * 128 * c.num_layers;
  const double extra = core_flops / (0.4 * 312e12) - core_flops / (0.8 * 312e12);
  EXPECT_NEAR(flash.compute_time_s - fused.compute_time_s, extra, 1e-3 * extra);
  EXPECT_EQ(flash.hardware_flops, fused.hardware_flops);
  // Without a calibration the times stay the roofline upper bound: the kernel figure is not applied.
  o.calibration.reset();
  const TrainResult bound = analyze_training(c, synthetic_a100(), o);
  o.attention_efficiency.reset();
  EXPECT_DOUBLE_EQ(bound.compute_time_s, analyze_training(c, synthetic_a100(), o).compute_time_s);
}

TEST(LlmAttentionKernel, ServingPrefillTimesTheCoreAsTheAttentionClass) {
  const LlmConfig& c = *find_llm_config("llama-2-7b");
  ServeOptions o;
  o.batch = 1, o.prompt = 2048, o.generate = 2;
  const ServeResult fused = analyze_serving(c, synthetic_a100(), fused_core(o));
  const ServeResult flash = analyze_serving(c, synthetic_a100(), fused_core(o, 0.4));
  int core = 0;
  for (const ServeOp& op : flash.ops) core += op.op_class == "attention" ? 1 : 0;
  EXPECT_EQ(core, 2 * 2 * 32);  // QK^T and SV of 32 layers, prefill and decode
  EXPECT_GT(flash.ttft_s, fused.ttft_s);
  for (const ServeOp& op : fused.ops) EXPECT_NE(op.op_class, "attention") << op.name;
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// Context parallelism: cp GPUs split every sequence by token. Every op but the attention core runs on seq / cp
// tokens; the core runs as a ring of cp blocks of (seq / cp)^2 scores, so it costs cp times the core of seq / cp
// tokens. Checked without restating the cost model: t(cp 4, S) - t(1, S/4) = 3 core(S/4) and
// t(cp 2, S/2) - t(1, S/4) = core(S/4).
TEST(LlmTrain, ContextParallelismSplitsTokensAndRingsTheAttentionCore) {
  const LlmConfig& c = *find_llm_config("llama-2-7b");
  auto compute = [&](int cp, int64_t seq) {
    TrainOptions o;
    o.gpus = cp, o.cp = cp, o.seq = seq, o.micro_batch = 1, o.global_batch = 1;
    return analyze_training(c, synthetic_a100(), o).compute_time_s;
  };
  const double core_quarter = compute(2, 2048) - compute(1, 1024);
  EXPECT_GT(core_quarter, 0.0);
  EXPECT_NEAR(compute(4, 4096) - compute(1, 1024), 3 * core_quarter, 1e-9 * compute(4, 4096));
  // The same tokens and FLOPs per iteration whatever cp; the time per GPU falls with cp.
  TrainOptions o;
  o.gpus = 8, o.tp = 1, o.seq = 4096, o.micro_batch = 1, o.global_batch = 8, o.zero = 1;
  const TrainResult dp8 = analyze_training(c, synthetic_a100(), o);
  o.cp = 2;
  const TrainResult cp2 = analyze_training(c, synthetic_a100(), o);
  EXPECT_EQ(cp2.options.dp, 4);
  EXPECT_EQ(cp2.model_flops, dp8.model_flops);
  EXPECT_EQ(cp2.micro_batches, 2);  // 8 sequences over dp 4
  // Activations: every stored tensor split by token over cp (the scores are (seq / cp) x seq).
  const Count per_layer = korthikanti_activation_bytes_per_layer(4096, 1, c.hidden_size, c.num_heads, 1, Recompute::None);
  EXPECT_EQ(cp2.memory.activations, (per_layer + 1) / 2 * c.num_layers);
  EXPECT_EQ(dp8.memory.activations, per_layer * c.num_layers);
  // ZeRO shards over the data-parallel group with its context-parallel ranks: dp 4 x cp 2 = dp 8.
  EXPECT_EQ(cp2.memory.optimizer, dp8.memory.optimizer);
  // On NVLink the K, V chunk of a 4,096-token sequence hides behind its attention block; across nodes it does not.
  EXPECT_EQ(cp2.cp_comm_s, 0.0);
  o.gpus_per_node = 1;
  const TrainResult apart = analyze_training(c, synthetic_a100(), o);
  EXPECT_GT(apart.cp_comm_s, 0.0);
  EXPECT_DOUBLE_EQ(apart.iteration_time_s, apart.compute_time_s + apart.tp_comm_s + apart.pp_comm_s +
                                               apart.dp_comm_exposed_s + apart.ep_comm_s + apart.cp_comm_s);
  // Layouts that do not add up, and a cp that does not divide the sequence, are refused.
  o.gpus_per_node = 8;
  o.cp = 3;
  EXPECT_THROW(analyze_training(c, synthetic_a100(), o), Error);  // 8 GPUs are not a multiple of 3
  o.gpus = 6, o.global_batch = 2, o.seq = 4000;
  EXPECT_THROW(analyze_training(c, synthetic_a100(), o), Error);  // 4,000 tokens over cp 3
  o.seq = 3999;
  EXPECT_NO_THROW(analyze_training(c, synthetic_a100(), o));
  o.tp = 65536, o.cp = 65536;  // the product wraps to 0 in 32 bits: refused, not a division by zero
  EXPECT_THROW(analyze_training(c, synthetic_a100(), o), Error);
  o.tp = 46341, o.cp = 1, o.pp = 46341, o.dp = 2;
  EXPECT_THROW(analyze_training(c, synthetic_a100(), o), Error);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// The per-op breakdown is the compute time, not a second estimate: one micro-batch's op times, scaled by the
// pipeline slots and the stage's share, are compute_time_s; recomputation shows up only in recompute_s.
// --moe grouped in training: the experts' ops of a layer are one kernel forward and one backward each (Megatron-LM
// --moe-grouped-gemm), with the eager loop's summed FLOPs; launch overheads go, and the routing mul's traffic.
TEST(LlmTrain, GroupedExpertsAreOneKernelPerOpOfALayer) {
  // Qwen3-MoE-shaped: 16 experts of width 128, 2 per token, 4 layers.
  LlmConfig c = parse_llm_config(nlohmann::json::parse(R"({"model_type":"qwen3_moe","vocab_size":1024,"hidden_size":256,
      "num_hidden_layers":4,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":64,"moe_intermediate_size":128,
      "num_experts":16,"num_experts_per_tok":2,"max_position_embeddings":4096})"), "moe");
  c.name = "moe";
  TrainOptions o;
  o.gpus = 8, o.seq = 256, o.zero = 3;
  o.calibration = flat_calibration(0.6);
  const TrainResult eager = analyze_training(c, synthetic_a100(), o);
  o.grouped_experts = true;
  const TrainResult grouped = analyze_training(c, synthetic_a100(), o);
  EXPECT_EQ(grouped.model_flops, eager.model_flops);
  Count eager_flops = 0, grouped_flops = 0;
  size_t eager_expert_ops = 0, grouped_expert_ops = 0;
  for (const TrainOp& op : eager.ops) {
    eager_flops += op.flops + op.backward_flops;
    if (op.name.find(".experts.") != std::string::npos) ++eager_expert_ops;
  }
  for (const TrainOp& op : grouped.ops) {
    grouped_flops += op.flops + op.backward_flops;
    if (op.name.find(".experts.") != std::string::npos) ++grouped_expert_ops;
  }
  EXPECT_EQ(grouped_flops, eager_flops);
  // 256 tokens x 2 of 16 experts: every expert runs its 10 ops (token and routing-weight slices, 3 projections,
  // SiLU's 2, the gating and routing muls) in each of the 4 layers; grouped, 9 kernels per layer (the routing mul
  // is the down projection's epilogue).
  EXPECT_EQ(eager_expert_ops, size_t{4} * 16 * 10);
  EXPECT_EQ(grouped_expert_ops, size_t{4} * 9);
  EXPECT_LT(grouped.iteration_time_s, eager.iteration_time_s);
  const TrainOp* up = nullptr;
  for (const TrainOp& op : grouped.ops)
    if (op.name == "model.layers.0.mlp.experts.up_proj") up = &op;
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->flops, Count{2} * 256 * 2 * 256 * 128);  // every routed token through one expert's up_proj
}

TEST(LlmTrain, OpsAreWhereTheComputeTimeGoes) {
  const LlmConfig& c = *find_llm_config("llama-2-7b");
  TrainOptions o;
  o.gpus = 16, o.tp = 2, o.pp = 2, o.seq = 2048, o.micro_batch = 1, o.global_batch = 16, o.interleave = 2;
  for (Recompute rc : {Recompute::None, Recompute::Full}) {
    o.recompute = rc;
    const TrainResult r = analyze_training(c, synthetic_a100(), o);
    ASSERT_FALSE(r.ops.empty());
    double micro_batch_s = 0, recompute_s = 0, gemm_s = 0;
    Count flops = 0;
    for (const TrainOp& op : r.ops) {
      micro_batch_s += op.time_s();
      recompute_s += op.recompute_s;
      if (op.op_class == "Linear") gemm_s += op.time_s();
      flops += op.flops + op.backward_flops;
    }
    const double slots = static_cast<double>(r.micro_batches) + 1.0 / 2;  // m + (p - 1) / v
    EXPECT_NEAR(slowest_stage_s(r, {16, 16}, 32) * slots, r.compute_time_s, 1e-9 * r.compute_time_s);
    EXPECT_EQ(recompute_s > 0, rc == Recompute::Full);
    EXPECT_GT(gemm_s, 0.5 * micro_batch_s);  // a 7B model's time is in its projections
    // The shard's FLOPs x tp are the model's per micro-batch, but for the norms every TP rank repeats.
    EXPECT_NEAR(to_double(flops * o.tp * (o.global_batch / o.micro_batch)) / to_double(r.model_flops), 1.0, 0.01);
  }
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// A token budget that is negative or not a number is refused, not silently ignored; tokens/s of a batch whose
// tokens exceed 64 bits is computed in 128 bits, not wrapped to 0.
TEST(LlmTrain, BadTokenBudgetsAreRefusedAndHugeBatchesDoNotWrap) {
  const LlmConfig& c = *find_llm_config("llama-2-7b");
  TrainOptions o;
  o.gpus = 8, o.zero = 1;
  for (double bad : {-5.0, double{NAN}, double{INFINITY}}) {
    o.token_budget = bad;
    EXPECT_THROW(analyze_training(c, synthetic_a100(), o), Error) << bad;
  }
  o.token_budget = 0;
  o.global_batch = int64_t{1} << 62, o.micro_batch = 1;
  const TrainResult r = analyze_training(c, synthetic_a100(), o);
  EXPECT_NEAR(r.tokens_per_s * r.iteration_time_s / (std::ldexp(1.0, 62) * 2048), 1.0, 1e-9);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// ZeRO-3 gathers the parameters and reduce-scatters the gradients in every micro-batch, hidden behind that
// micro-batch's compute; ZeRO 0-2 all-reduce the gradients once per iteration, behind the last backward. Across
// nodes on a slow link (comm longer than compute) four micro-batches expose four times ZeRO-3's traffic and once
// ZeRO-2's.
TEST(LlmTrain, ZeroThreeRegathersEveryMicroBatch) {
  const LlmConfig& c = *find_llm_config("llama-2-7b");
  TrainOptions o;
  o.gpus = 16, o.gpus_per_node = 1, o.seq = 512, o.micro_batch = 1;  // every data-parallel rank on its own node
  auto exposed = [&](int zero, int64_t micro_batches) {
    o.zero = zero;
    o.global_batch = 16 * micro_batches;
    return analyze_training(c, synthetic_a100(), o).dp_comm_exposed_s;
  };
  const double z3 = exposed(3, 1), z2 = exposed(2, 1);
  ASSERT_GT(z3, 0.0);
  ASSERT_GT(z2, 0.0);
  EXPECT_NEAR(exposed(3, 4), 4 * z3, 1e-12 * z3);
  EXPECT_DOUBLE_EQ(exposed(2, 4), z2);
  // Inside one node (NVLink) the same model's gathers hide behind its compute.
  o.gpus = 8, o.gpus_per_node = 8;
  o.zero = 3, o.global_batch = 8 * 4, o.seq = 4096;
  EXPECT_EQ(analyze_training(c, synthetic_a100(), o).dp_comm_exposed_s, 0.0);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// --precision in train reads predict's table (PrecisionMode): what is kept per parameter and the activation type.
TEST(LlmTrainPrecision, EachModeKeepsItsRowPerParameterExactly) {
  Device d = synthetic_a100();
  d.peak_flops[Precision::FP32] = 19.5e12;
  d.peak_flops[Precision::TF32] = 156e12;
  const LlmConfig& c = *find_llm_config("llama-2-7b");
  const Count p = llm_params(c).total;
  TrainOptions base;
  base.gpus = 8, base.zero = 1, base.seq = 1024;  // ZeRO-1: the optimizer states shard over dp 8
  const TrainResult megatron = analyze_training(c, d, base);
  struct Row {
    const char* mode;
    Count weights, gradients, optimizer;  // bytes per parameter (optimizer before sharding)
    Precision compute;
    int activation_bytes;
  };
  for (const Row& row : {Row{"amp-bf16", 4, 4, 8, Precision::BF16, 2}, Row{"amp-fp16", 4, 4, 8, Precision::FP16, 2},
                         Row{"bf16", 2, 2, 4, Precision::BF16, 2}, Row{"fp16", 2, 2, 4, Precision::FP16, 2},
                         Row{"fp32", 4, 4, 8, Precision::FP32, 4}, Row{"tf32", 4, 4, 8, Precision::TF32, 4}}) {
    const TrainOptions o = with_training_precision(base, row.mode);
    EXPECT_EQ(o.compute, row.compute) << row.mode;
    const TrainResult r = analyze_training(c, d, o);
    EXPECT_EQ(r.memory.weights, row.weights * p) << row.mode;
    EXPECT_EQ(r.memory.gradients, row.gradients * p) << row.mode;
    EXPECT_EQ(r.memory.optimizer, (row.optimizer * p + 7) / 8) << row.mode;
    EXPECT_EQ(r.memory.activations, megatron.memory.activations * row.activation_bytes / 2) << row.mode;
    const TrainStateBytes b = train_state_bytes(o);
    EXPECT_EQ(b.allreduce, row.gradients) << row.mode;  // the gradients' type is what the all-reduce moves
  }
  // Without --precision: Megatron/DeepSpeed mixed precision at --compute (2 + 2 + 12; fp32: 4 + 4 + 8).
  EXPECT_EQ(megatron.memory.weights, 2 * p);
  EXPECT_EQ(megatron.memory.optimizer, (12 * p + 7) / 8);
  const TrainStateBytes mixed = train_state_bytes(base);
  EXPECT_EQ(mixed.optimizer_label, "Adam: fp32 master + 2 moments");
  EXPECT_EQ(train_state_bytes(with_training_precision(base, "amp-bf16")).optimizer_label,
            "Adam: 2 fp32 moments (the weights are the master)");
  // Same compute, same times: amp-bf16 differs from the default in memory only (one GPU: no all-reduce).
  TrainOptions one = base;
  one.gpus = 1, one.zero = 0;
  EXPECT_DOUBLE_EQ(analyze_training(c, d, with_training_precision(one, "amp-bf16")).iteration_time_s,
                   analyze_training(c, d, one).iteration_time_s);
  EXPECT_THROW(with_training_precision(base, "int8"), UsageError);  // an inference mode
  EXPECT_THROW(with_training_precision(base, "fp12"), UsageError);
}

TEST(LlmServePrecision, ModesSetComputeWeightsAndKvUnlessGiven) {
  ServeOptions o;
  const ServeOptions amp = with_serving_precision(o, "amp-bf16", false, false);
  EXPECT_EQ(amp.compute, Precision::BF16);
  EXPECT_EQ(amp.weights.name, "fp32");  // autocast keeps fp32 weights and casts them per op
  EXPECT_EQ(amp.kv.name, "bf16");
  const ServeOptions fp32 = with_serving_precision(o, "fp32", false, false);
  EXPECT_EQ(fp32.weights.name, "fp32");
  EXPECT_EQ(fp32.kv.name, "fp32");
  o.weights = *parse_number_format("int4");
  o.kv = *parse_number_format("fp8");
  const ServeOptions given = with_serving_precision(o, "bf16", true, true);
  EXPECT_EQ(given.compute, Precision::BF16);
  EXPECT_EQ(given.weights.name, "int4");
  EXPECT_EQ(given.kv.name, "fp8");
  EXPECT_EQ(with_serving_precision(o, "tf32", true, false).compute, Precision::TF32);
  for (const char* refused : {"int8", "fp64", "fp12"}) {
    std::string e;
    try {
      with_serving_precision(o, refused, false, false);
    } catch (const UsageError& x) {
      e = x.what();
    }
    EXPECT_NE(e.find("--precision"), std::string::npos) << refused << ": " << e;
  }
}

}  // namespace
}  // namespace ridge
