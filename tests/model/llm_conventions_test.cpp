// LLM presets of `ridge flops --all-conventions`: ZeRO's model-state memory, Korthikanti et al.'s activation
// memory, Transformer Math 101's 2PD/6PD, each against its source's worked example or stated formula.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "ridge/llm_analysis.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

// ZeRO (Rajbhandari et al. 2020, Fig. 1 and sec. 5.1): a 7.5B-parameter model with mixed-precision Adam (K = 12)
// on Nd = 64 GPUs needs 120 GB of model states per GPU without ZeRO, 31.4 GB with P_os, 16.6 GB with P_os+g and
// 1.9 GB with P_os+g+p.
TEST(LlmConventions, ZeroFigure1WorkedExample) {
  const Count psi = 7500000000;
  const char* const printed[] = {"120.0", "31.4", "16.6", "1.9"};
  for (int stage = 0; stage <= 3; ++stage) {
    const ZeroMemory m = zero_model_state_bytes(psi, stage, 64);
    EXPECT_EQ(fmt::format("{:.1f}", to_double(m.total()) / 1e9), printed[stage]) << stage;
  }
  EXPECT_EQ(zero_model_state_bytes(psi, 0, 64).total(), Count{120000000000});
  EXPECT_EQ(zero_model_state_bytes(psi, 1, 64).total(), Count{30000000000} + Count{90000000000} / 64);
  EXPECT_EQ(zero_model_state_bytes(psi, 3, 64).total(), Count{1875000000});
}

// Korthikanti et al. 2022, eqs. 2-4 (also quoted by EleutherAI's Transformer Math 101): per layer
// s b h (10 + 24/t + 5as/(ht)) without recomputation, s b h (10 + 24/t) selective, 2 s b h full. GPT-3 175B's
// layer (s 2048, h 12288, a 96) at t = 8: 34 + ... -> s b h x (10 + 3 + 10) bytes.
TEST(LlmConventions, KorthikantiActivationMemory) {
  const Count sbh = Count{2048} * 12288;
  EXPECT_EQ(korthikanti_activation_bytes_per_layer(2048, 1, 12288, 96, 8, Recompute::None), sbh * 23);
  EXPECT_EQ(korthikanti_activation_bytes_per_layer(2048, 1, 12288, 96, 8, Recompute::Selective), sbh * 13);
  EXPECT_EQ(korthikanti_activation_bytes_per_layer(2048, 1, 12288, 96, 8, Recompute::Full), sbh * 2);
  // t = 1: the paper's unparallelised 34 s b h + 5 a s^2 b.
  EXPECT_EQ(korthikanti_activation_bytes_per_layer(2048, 1, 12288, 96, 1, Recompute::None),
            sbh * 34 + Count{5} * 96 * 2048 * 2048);
}

// Sequence parallelism (Korthikanti et al. 2022, eqs. 5-6) splits the rest over t: sbh (34/t + 5as/(ht)),
// 34 sbh / t selective, 2 sbh / t full.
TEST(LlmConventions, KorthikantiWithSequenceParallelism) {
  const Count sbh = Count{2048} * 12288;
  EXPECT_EQ(korthikanti_activation_bytes_per_layer(2048, 1, 12288, 96, 8, Recompute::None, true),
            (sbh * 34 + Count{5} * 96 * 2048 * 2048) / 8);
  EXPECT_EQ(korthikanti_activation_bytes_per_layer(2048, 1, 12288, 96, 8, Recompute::Selective, true), sbh * 34 / 8);
  EXPECT_EQ(korthikanti_activation_bytes_per_layer(2048, 1, 12288, 96, 8, Recompute::Full, true), sbh * 2 / 8);
  EXPECT_EQ(parse_zero_stage("fsdp"), 3);
  EXPECT_EQ(parse_zero_stage("2"), 2);
  EXPECT_FALSE(parse_zero_stage("4").has_value());
  auto r = test::run_ridge("train llama-2-7b --device a100-sxm4-80gb --gpus 8 --tp 8 --sp --zero fsdp --seq 2048 "
                           "--format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(+sp)"), std::string::npos);
  r = test::run_ridge("train llama-2-7b --device a100-sxm4-80gb --gpus 8 --zero 5");
  EXPECT_EQ(r.exit_code, 2);
}

// The presets side by side: calflops' 1700.06 GFLOPS for Llama-2-7B at (1, 128) (calflops README), Transformer
// Math 101's C_forward = 2PD and C = 6PD (EleutherAI 2023, "Compute Requirements"), ZeRO at Nd = 64.
TEST(LlmConventions, FlopsAllConventionsShowsTheLlmPresets) {
  auto r = test::run_ridge("flops llama-2-7b --seq-len 128 --all-conventions --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("llm_conventions"));
  std::map<std::string, nlohmann::json> rows;
  for (const auto& row : j["llm_conventions"]) rows[row["convention"]] = row;
  EXPECT_EQ(rows.at("calflops")["as_printed"], "1700.06 GFLOPS");
  EXPECT_EQ(rows.at("calflops")["headline"], 1700063608832);
  const Count p = 6738415616;
  EXPECT_EQ(rows.at("transformer-math-101 (2PD)")["headline"], nlohmann::json(static_cast<long long>(2 * p * 128)));
  EXPECT_EQ(rows.at("transformer-math-101 (6PD)")["headline"], nlohmann::json(static_cast<long long>(6 * p * 128)));
  EXPECT_EQ(rows.at("zero-3 (Nd 64)")["headline"], nlohmann::json(static_cast<long long>((16 * p + 63) / 64)));
  EXPECT_TRUE(rows.count("megatron-paper") && rows.count("palm"));
  // An MoE model's P (and PaLM's N) are the parameters a token uses: Mixtral's 12,879,925,248 active, not its
  // 46,702,792,704; ZeRO's model state keeps every parameter.
  r = test::run_ridge("flops mixtral-8x7b --seq-len 128 --all-conventions --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rows.clear();
  const auto moe = nlohmann::json::parse(r.out);
  for (const auto& row : moe["llm_conventions"]) rows[row["convention"]] = row;
  const Count active = 12879925248, total = 46702792704;
  EXPECT_EQ(rows.at("transformer-math-101 (6PD)")["headline"], nlohmann::json(static_cast<long long>(6 * active * 128)));
  EXPECT_EQ(rows.at("zero-3 (Nd 64)")["headline"], nlohmann::json(static_cast<long long>((16 * total + 63) / 64)));
  // Models that are not LLM configs have no such table.
  r = test::run_ridge("flops resnet18 --all-conventions --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out).contains("llm_conventions"));
}

}  // namespace
}  // namespace ridge
