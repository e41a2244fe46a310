// `ridge summary|serve|train` on LLM zoo entries and config files, end to end through the binary.
#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace ridge {
namespace {

using test::run_ridge;

TEST(LlmCli, SummaryOfLlama2_7bRunsWithExactParams) {
  auto r = run_ridge("summary llama-2-7b --seq-len 128 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("6738415616"), std::string::npos);
}

TEST(LlmCli, ServeJsonHasTheIssueFieldsAndLabelsEveryTime) {
  auto r = run_ridge("serve mistral-7b --device h100 --batch 4 --prompt 256 --generate 16 --kv fp8 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"prefill_time_s", "decode_time_per_token_s", "ttft_s", "tokens_per_s", "kv_cache_bytes",
                        "weights_bytes", "max_batch", "ops"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["ttft_s_label"], "calibrated (h100-fp16.json)");  // the shipped H100 fit applies by default
  EXPECT_EQ(j["calibrated"], true);  // as predict's JSON, in machine form
  EXPECT_EQ(j["time_kind"], "calibrated");
  // 4 sequences x 272 tokens x 32 layers x 2 x 8 KV heads x 128 x 1 byte (fp8).
  EXPECT_EQ(j["kv_cache_bytes"], 4 * 272 * 32 * 2 * 8 * 128);
  for (const char* k : {"phase", "name", "flops", "bytes", "time_s", "bound"}) EXPECT_TRUE(j["ops"][0].contains(k)) << k;
  EXPECT_TRUE(j.contains("op_groups"));  // JSON holds both op tables
  auto t = run_ridge("serve mistral-7b --device h100 --calibration none");
  EXPECT_NE(t.out.find("[upper bound (uncalibrated)]"), std::string::npos);
  // A terminal table shows each op summed over the layers; --all-ops every layer's instead.
  EXPECT_NE(t.out.find("model.layers.*.mlp.down_proj"), std::string::npos);
  EXPECT_EQ(t.out.find("model.layers.31.mlp.down_proj"), std::string::npos);
  t = run_ridge("serve mistral-7b --device h100 --calibration none --all-ops");
  EXPECT_EQ(t.out.find("model.layers.*.mlp.down_proj"), std::string::npos);
  EXPECT_NE(t.out.find("model.layers.31.mlp.down_proj"), std::string::npos);
}

// train shows where the compute time goes: each op summed over the layers, forward, backward and recompute apart.
TEST(LlmCli, TrainShowsWhereTheComputeTimeGoes) {
  auto r = run_ridge("train llama-2-7b --device h100 --gpus 8 --recompute full --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("op_groups"));
  double share = 0;
  bool down_proj = false;
  for (const auto& g : j["op_groups"]) {
    for (const char* k : {"name", "op_class", "count", "flops", "bytes", "forward_s", "backward_s", "recompute_s"})
      EXPECT_TRUE(g.contains(k)) << k;
    share += g["share_of_compute_percent"].get<double>();
    if (g["name"] == "model.layers.*.mlp.down_proj") {
      down_proj = true;
      EXPECT_EQ(g["count"], 32);
      EXPECT_GT(g["recompute_s"].get<double>(), 0.0);  // --recompute full runs every layer's forward again
    }
  }
  EXPECT_TRUE(down_proj);
  EXPECT_NEAR(share, 100.0, 1e-6);
}

// --attention flash2: the note says which published figure timed the attention core, or that none applies.
TEST(LlmCli, AttentionFlash2SaysWhichFigureTimedTheCore) {
  auto r = run_ridge("train llama-2-7b --device h100 --gpus 8 --attention flash2 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::string notes = j["notes"].dump();
  EXPECT_NE(notes.find("flash-attention-2 at 35.0 % of the tensor peak on h100"), std::string::npos) << notes;
  auto fused = run_ridge("train llama-2-7b --device h100 --gpus 8 --attention fused --format json");
  ASSERT_EQ(fused.exit_code, 0) << fused.err;
  EXPECT_GT(j["iteration_time_s"].get<double>(), nlohmann::json::parse(fused.out)["iteration_time_s"].get<double>());
  auto b200 = run_ridge("serve llama-2-7b --device b200 --attention flash2 --format json");
  ASSERT_EQ(b200.exit_code, 0) << b200.err;
  EXPECT_NE(b200.out.find("flash-attention-2 timed at the peak like every op (uncalibrated upper bound)"),
            std::string::npos) << b200.out;
  // The A40 is calibrated (Vidur's A40 profile) but FlashAttention-2 has no published A40 figure: GEMM factors.
  auto a40 = run_ridge("serve llama-2-7b --device a40 --attention flash2 --format json");
  ASSERT_EQ(a40.exit_code, 0) << a40.err;
  EXPECT_NE(a40.out.find("no published flash-attention-2 utilization for a40"), std::string::npos) << a40.out;
  auto bad = run_ridge("serve llama-2-7b --device h100 --attention flash3");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--attention flash3: use eager, fused, flash2 or flash1"), std::string::npos) << bad.err;
}

TEST(LlmCli, ServeErrorsAreOneLine) {
  auto r = run_ridge("serve llama-2-70b --device h100");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("does not fit: needs"), std::string::npos) << r.err;
  r = run_ridge("serve llama-2-7b --device h100 --tp 3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--tp: 3 does not divide"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(degrees that fit: 1, 2, 4, 8, 16, 32)"), std::string::npos) << r.err;
  for (const char* bad : {"--moe fused", "--mla compressed"}) {
    r = run_ridge(std::string("serve deepseek-v2-lite --device h100 ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find(std::string(bad).substr(0, 5)), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// --dp: data-parallel attention with expert-parallel MoE layers, in the JSON and the HTML report; refusals one line.
TEST(LlmCli, ServeDataParallelAttention) {
  auto r = run_ridge("serve deepseek-v2-lite --device h100 --dp 8 --batch 64 --prompt 256 --generate 8 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["serve"]["alltoall_time_per_layer_prefill_s"].get<double>(), 0);
  EXPECT_NE(j["title"].get<std::string>().find("x8 (data-parallel attention, expert-parallel MoE)"), std::string::npos);
  bool row = false;
  for (const auto& op : j["ops"]) row = row || op["name"].get<std::string>().rfind("all-to-all", 0) == 0;
  EXPECT_TRUE(row);
  const std::string html = test::temp_dir() + "/dp.html";
  r = run_ridge("report deepseek-v2-lite --serve -d h100 --dp 8 --batch 64 --prompt 256 --generate 8 -o " + html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(test::slurp(html).find("--dp 8"), std::string::npos);
  for (const char* bad : {"serve llama-2-7b --device h100 --dp 2", "serve deepseek-v2-lite --device h100 --dp 2 --tp 2",
                          "serve deepseek-v2-lite --device h100 --dp 5"}) {
    r = run_ridge(bad);
    EXPECT_EQ(r.exit_code, 1) << bad;
    EXPECT_NE(r.err.find("--dp"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  r = run_ridge("report deepseek-v2-lite -o " + html + " --dp 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--dp needs --serve"), std::string::npos) << r.err;
}

// What serve, train and report --serve cannot honour is refused, not silently changed or ignored.
TEST(LlmCli, UnsupportedComputeCalibrationsAndOptionsAreRefused) {
  for (const std::string cmd : {"serve llama-2-7b --device h100 --compute int8",
                                "train llama-2-7b --device h100 --gpus 8 --compute tf32"}) {
    const auto r = run_ridge(cmd);
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_NE(r.err.find("fp16, bf16") == std::string::npos ? r.err.find("bf16, fp16") : 0, std::string::npos) << r.err;
  }
  // No --force in serve and train: the refusal names the way that works.
  auto r = run_ridge("serve llama-2-7b --device h100 --calibration " + std::string(RIDGE_SOURCE_DIR) +
                     "/data/calibrations/llm/a100-fp16.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.find("--force"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fit one with `ridge calibrate`"), std::string::npos) << r.err;
  r = run_ridge("train llama-2-7b --device h100 --gpus 8 --tokens 0");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--tokens 0: must be a positive"), std::string::npos) << r.err;
  // report --serve computes at the --precision given (fp16 by default), and refuses the model report's options.
  const std::string out = test::temp_dir() + "/r.html";
  auto fp32 = run_ridge("report llama-2-7b --serve -d h100 --precision fp32 --format json -o " + out);
  ASSERT_EQ(fp32.exit_code, 0) << fp32.err;
  EXPECT_EQ(nlohmann::json::parse(fp32.out)["scenario"]["compute"], "fp32");
  auto fp16 = run_ridge("report llama-2-7b --serve -d h100 --format json -o " + out);
  ASSERT_EQ(fp16.exit_code, 0) << fp16.err;
  EXPECT_EQ(nlohmann::json::parse(fp16.out)["scenario"]["compute"], "fp16");
  for (const char* flag : {"--profile x.json", "--train", "--seq-len 64", "--measure"}) {
    r = run_ridge(std::string("report llama-2-7b --serve -d h100 -o ") + out + " " + flag);
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_NE(r.err.find("does not apply to --serve"), std::string::npos) << r.err;
  }
  EXPECT_EQ(run_ridge("report llama-2-7b --serve -d h100 --precision int8 -o " + out).exit_code, 2);
}

TEST(LlmCli, ServeReadsAConfigJson) {
  const std::string path = test::temp_dir() + "/config.json";
  std::ofstream(path) << R"({"model_type":"qwen2","vocab_size":151936,"hidden_size":896,"intermediate_size":4864,
    "num_hidden_layers":24,"num_attention_heads":14,"num_key_value_heads":2,"max_position_embeddings":32768,
    "tie_word_embeddings":true,"torch_dtype":"bfloat16"})";
  auto r = run_ridge("serve " + path + " --device a100-sxm4-80gb --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Qwen2-0.5B: 494,032,768 parameters (HF), fp16 weights.
  EXPECT_EQ(nlohmann::json::parse(r.out)["weights_bytes"], 2 * 494032768);
}

// The zoo's gpt2 is a graph of its own; serve and train read its Hugging Face config (ZooEntry::hf_config), whose
// parameters equal the zoo graph's and GPT2LMHeadModel's 124,439,808, and whose name titles the output.
TEST(LlmCli, ZooGraphsWithAHuggingFaceTwinServeAndTrain) {
  auto r = run_ridge("serve gpt2 --device a100 --batch 4 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["weights_bytes"], 2 * 124439808);
  EXPECT_EQ(j["title"].get<std::string>().rfind("Serving gpt2 on", 0), 0u) << j["title"];
  r = run_ridge("train gpt2 --device a100 --gpus 1 --micro-batch 8 --seq 1024");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Training gpt2 on"), std::string::npos);
  // distilbert's twin (DistilBertModel, 66,362,880 parameters as the zoo graph) trains; serving an encoder is refused.
  r = run_ridge("train distilbert --device a100 --gpus 1 --micro-batch 32 --seq 128 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["memory_per_gpu_bytes"]["weights"], 2 * 66362880);  // bf16 weights
  r = run_ridge("serve distilbert --device a100");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("encoder"), std::string::npos) << r.err;
  // A zoo graph without a twin is refused, naming the ones that have one.
  r = run_ridge("serve transformer-lm --device a100");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("and gpt2, distilbert"), std::string::npos) << r.err;
}

TEST(LlmCli, TrainJsonAndLayoutErrors) {
  auto r = run_ridge("train llama-2-7b --device a100-sxm4-80gb --gpus 16 --tp 2 --pp 2 --seq 4096 --global-batch 64 "
                     "--recompute selective --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"iteration_time_s", "mfu", "hfu", "tokens_per_s", "memory_per_gpu_bytes", "fits"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_TRUE(j["memory_per_gpu_bytes"].contains("optimizer"));
  EXPECT_EQ(j["time_kind"], "calibrated");  // the shipped A100 fit
  const auto bound = nlohmann::json::parse(
      run_ridge("train llama-2-7b --device a100-sxm4-80gb --gpus 8 --calibration none --format json").out);
  EXPECT_EQ(bound["calibrated"], false);
  EXPECT_EQ(bound["time_kind"], "upper_bound");
  r = run_ridge("train llama-2-7b --device h100 --gpus 8 --tp 2 --pp 2 --dp 4");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not --gpus 8"), std::string::npos) << r.err;
}

// A layout that does not fit still prints its times (for comparing layouts), but its first line says so and
// names the cheapest memory saver that fits.
TEST(LlmCli, TrainLayoutThatDoesNotFitSaysSoFirst) {
  const auto r = run_ridge("train llama-2-7b --device a100-sxm4-40gb --gpus 8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("DOES NOT FIT: 129 GiB per GPU with this layout, a100-sxm4-40gb has 40.0 GiB; fits with "
                        "--zero 2 --recompute selective",
                        0),
            0u)
      << r.out.substr(0, 300);
  const auto j = nlohmann::json::parse(run_ridge("train llama-2-7b --device a100-sxm4-40gb --gpus 8 -f json").out);
  EXPECT_EQ(j["fits"], false);
  EXPECT_EQ(j["fits_with"], "--zero 2 --recompute selective");
  EXPECT_EQ(run_ridge("train llama-2-7b --device a100-sxm4-80gb --gpus 8 --zero 3").out.find("DOES NOT FIT"),
            std::string::npos);
}

// An encoder config (bert-base-uncased's config.json) through the commands: summary, flops, predict, train and
// sweep work; serve refuses it in one line, naming what applies.
TEST(LlmCli, EncoderConfigRunsEverywhereButServe) {
  const std::string dir = test::temp_dir() + "/bert-base-uncased";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/config.json";
  std::ofstream(path) << R"({"architectures":["BertForMaskedLM"],"hidden_act":"gelu","hidden_size":768,
    "intermediate_size":3072,"max_position_embeddings":512,"model_type":"bert","num_attention_heads":12,
    "num_hidden_layers":12,"pad_token_id":0,"type_vocab_size":2,"vocab_size":30522})";
  auto r = run_ridge("summary " + path + " --seq-len 128 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("109514298"), std::string::npos);  // BertForMaskedLM, as transformers counts it
  for (const std::string& cmd : {"flops " + path + " --seq-len 128", "predict " + path + " --device h100 --seq-len 128",
                                "train " + path + " --device h100 --gpus 8 --seq 512 --micro-batch 8 --attention fused",
                                "sweep " + path + " --batch 1,8 --seq-len 64"}) {
    r = run_ridge(cmd);
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
  }
  r = run_ridge("serve " + path + " --device h100");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bert-base-uncased: bert is an encoder"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("use summary, flops, predict or train"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(LlmCli, ACalibrationScaledToTheDevicesMeasuredCeilingSaysSo) {
  const std::string train = "train llama-2-7b --gpus 8 --zero 3 --seq 2048 --global-batch 64 --micro-batch 1 --format json";
  auto h100 = run_ridge(train + " --device h100");
  ASSERT_EQ(h100.exit_code, 0) << h100.err;
  const auto notes = nlohmann::json::parse(h100.out)["notes"].dump();
  EXPECT_NE(notes.find("scaled by 0.916"), std::string::npos) << notes;
  EXPECT_NE(notes.find("794.5 TFLOP/s"), std::string::npos) << notes;
  auto a100 = run_ridge(train + " --device a100-sxm4-80gb");
  ASSERT_EQ(a100.exit_code, 0) << a100.err;
  EXPECT_EQ(a100.out.find("scaled by"), std::string::npos);
  // The CNN prediction says it beside the calibration, and not for an uncalibrated bound.
  auto predict = run_ridge("predict resnet50 --device h100 --batch 64 --train --precision amp-bf16 --format json");
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  EXPECT_NE(predict.out.find("\"calibration_ceiling\""), std::string::npos);
  auto bound = run_ridge("predict resnet50 --device h100 --batch 64 --precision amp-bf16 --calibration none --format json");
  ASSERT_EQ(bound.exit_code, 0) << bound.err;
  EXPECT_EQ(bound.out.find("calibration_ceiling"), std::string::npos);
  // An uncalibrated bound on a GPU with a measured ceiling says how far below the peak that ceiling is.
  auto mi300x = run_ridge("predict resnet50 --device mi300x --batch 8 --precision bf16 --format json");
  ASSERT_EQ(mi300x.exit_code, 0) << mi300x.err;
  EXPECT_NE(mi300x.out.find("sustains 51.1 % of that"), std::string::npos);
  auto b200 = run_ridge("serve llama-2-7b --device b200 --format json");
  ASSERT_EQ(b200.exit_code, 0) << b200.err;
  EXPECT_NE(b200.out.find("sustains 77.6 % of that"), std::string::npos);
}

TEST(LlmCli, PrecisionMeansWhatPredictReadsInTrainServeAndTheServingReport) {
  auto serve = run_ridge("serve llama-2-7b --device a100 --precision amp-bf16 --format json");
  ASSERT_EQ(serve.exit_code, 0) << serve.err;
  EXPECT_NE(serve.out.find("weights fp32, KV bf16, compute bf16"), std::string::npos);
  auto train = run_ridge("train llama-2-7b --device a100 --gpus 8 --zero 3 --precision bf16");
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_NE(train.out.find("Adam: 2 bf16 moments (the weights are the master)"), std::string::npos);
  const std::string dir = test::temp_dir();
  auto page = run_ridge("report llama-2-7b --serve -d a100 --precision fp32 --weights int4 -o " + dir + "/s.html");
  ASSERT_EQ(page.exit_code, 0) << page.err;
  EXPECT_NE(test::slurp(dir + "/s.html").find("weights int4, KV fp32, compute fp32"), std::string::npos);
  for (const char* bad : {"train llama-2-7b --device a100 --gpus 8 --precision amp-bf16 --compute bf16",
                          "train llama-2-7b --device a100 --gpus 8 --precision int8",
                          "serve llama-2-7b --device a100 --precision fp64"}) {
    auto r = run_ridge(bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--precision"), std::string::npos) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << bad << ": " << r.err;
  }
}

}  // namespace
}  // namespace ridge
